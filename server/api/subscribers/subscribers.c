/*
 * Who hears a thread (subscribers.h). A daemon holds few connections and few loaded threads,
 * so plain arrays and lists do: a subscriber set is a small array in subscription order (the
 * first other subscriber is who a thread's engine moves to when its connection goes).
 */
#include <stdlib.h>
#include <string.h>

#include "api/session.h"
#include "protocol/xmalloc.h"
#include "subscribers.h"

struct subs_thread {
	struct subs_thread *next;
	char id[40];
	struct session **s;
	size_t n, cap;
};

/* One connection's copy of a server request: the rpc layer's callback argument. */
struct subs_copy {
	struct subs_call *call;
	struct session *s; /* NULL once the connection went */
	long long id;
	int live; /* its answer is still awaited */
};

/*
 * A server request of a thread: its method and params are kept while it waits, for a
 * connection that subscribes meanwhile (subs_replay). Copies are allocated one by one: each
 * is a callback argument in some rpc, so a growing array must not move them.
 */
struct subs_call {
	struct subs_call *next, **prevp;
	rpc_call_cb cb;
	void *arg;
	int done;	 /* cb ran */
	int withdrawing; /* our own cancels: their callbacks are not answers */
	int dead;	 /* the owner let go while a walk over the calls was running */
	char thread[40];
	char *method;
	json_t *params;
	struct subs_copy **copies;
	size_t n, cap;
};

static struct session **subs_live;
static size_t subs_nlive, subs_caplive;
static struct subs_thread *subs_threads;
static struct subs_call *subs_calls;
static int subs_walking; /* a walk over subs_calls runs: frees wait for its end */

static void subs_call_unlink(struct subs_call *c);
static void subs_call_reap(void);

void
subs_session_add(struct session *s)
{
	if (subs_nlive == subs_caplive) {
		subs_caplive = subs_caplive != 0 ? subs_caplive * 2 : 16;
		subs_live = xrealloc(subs_live, subs_caplive * sizeof *subs_live);
	}
	subs_live[subs_nlive++] = s;
}

/* Take s out of an array of sessions (order kept); whether it was there. */
static int
subs_take(struct session **a, size_t *n, const struct session *s)
{
	for (size_t i = 0; i < *n; i++)
		if (a[i] == s) {
			memmove(a + i, a + i + 1, (*n - i - 1) * sizeof *a);
			(*n)--;
			return 1;
		}
	return 0;
}

static void
subs_copy_withdraw(struct subs_copy *cp)
{
	struct subs_call *c = cp->call;
	int was = c->withdrawing;

	if (!cp->live || cp->s == NULL)
		return;
	c->withdrawing = 1;
	rpc_call_cancel(cp->s->rpc, cp->id); /* its callback runs now */
	c->withdrawing = was;
}

void
subs_session_remove(struct session *s)
{
	struct subs_thread *t;
	struct subs_call *c;

	subs_take(subs_live, &subs_nlive, s);
	for (t = subs_threads; t != NULL; t = t->next)
		subs_take(t->s, &t->n, s);
	/*
	 * Its copies end now, as the connection's would: the others may still answer. An owner
	 * may free its call from the callback: the walk keeps every call until it is over.
	 */
	subs_walking++;
	for (c = subs_calls; c != NULL; c = c->next)
		for (size_t i = 0; i < c->n && !c->dead; i++) {
			if (c->copies[i]->s != s)
				continue;
			c->copies[i]->s = NULL;
			if (c->copies[i]->live)
				rpc_call_cancel(
					s->rpc, c->copies[i]->id); /* as gone, not withdrawn */
		}
	subs_walking--;
	subs_call_reap();
}

/*
 * Serialized once for every connection: 100 connections each hearing 1,000 threads' status
 * changes made this a fifth of bench_ws's run when each copy was dumped on its own.
 */
static void
subs_send_all(struct session **to, size_t n, int initialized, const char *method, json_t *params)
{
	char *line;
	size_t len;

	if (n == 1) {
		if (!initialized || rpc_initialized(to[0]->rpc))
			rpc_notify(to[0]->rpc, method, params);
		else
			json_decref(params);
		return;
	}
	line = rpc_notify_text(method, params, &len);
	for (size_t i = 0; i < n && line != NULL; i++)
		if (!initialized || rpc_initialized(to[i]->rpc))
			rpc_notify_line(to[i]->rpc, method, line, len);
	free(line);
}

void
subs_broadcast(const char *method, json_t *params)
{
	subs_send_all(subs_live, subs_nlive, 1, method, params);
}

static struct subs_thread *
subs_thread(const char *id, int make)
{
	struct subs_thread *t;

	for (t = subs_threads; t != NULL; t = t->next)
		if (strcmp(t->id, id) == 0)
			return t;
	if (!make)
		return NULL;
	t = xcalloc(1, sizeof *t);
	snprintf(t->id, sizeof t->id, "%s", id);
	t->next = subs_threads;
	subs_threads = t;
	return t;
}

int
subs_set(const char *thread_id, struct session *s, int on)
{
	struct subs_thread *t = subs_thread(thread_id, 1);
	int was = subs_take(t->s, &t->n, s);

	if (on) {
		if (t->n == t->cap) {
			t->cap = t->cap != 0 ? t->cap * 2 : 4;
			t->s = xrealloc(t->s, t->cap * sizeof *t->s);
		}
		t->s[t->n++] = s;
	}
	return was;
}

int
subs_is(const char *thread_id, const struct session *s)
{
	struct subs_thread *t = subs_thread(thread_id, 0);

	if (t == NULL)
		return -1;
	for (size_t i = 0; i < t->n; i++)
		if (t->s[i] == s)
			return 1;
	return 0;
}

size_t
subs_count(const char *thread_id)
{
	struct subs_thread *t = subs_thread(thread_id, 0);

	return t != NULL ? t->n : 0;
}

struct session *
subs_other(const char *thread_id, const struct session * not )
{
	struct subs_thread *t = subs_thread(thread_id, 0);

	for (size_t i = 0; t != NULL && i < t->n; i++)
		if (t->s[i] != not )
			return t->s[i];
	return NULL;
}

int
subs_thread_of(const struct session *s, size_t i, char id[40])
{
	for (struct subs_thread *t = subs_threads; t != NULL; t = t->next)
		if (subs_is(t->id, s) == 1 && i-- == 0) {
			snprintf(id, 40, "%s", t->id);
			return 0;
		}
	return -1;
}

void
subs_forget(const char *thread_id)
{
	struct subs_thread **tp, *t;

	for (tp = &subs_threads; (t = *tp) != NULL; tp = &t->next)
		if (strcmp(t->id, thread_id) == 0) {
			*tp = t->next;
			free(t->s);
			free(t);
			return;
		}
}

void
subs_notify(const char *thread_id, const char *method, json_t *params)
{
	struct subs_thread *t = subs_thread(thread_id, 0);

	if (t == NULL || t->n == 0)
		json_decref(params);
	else
		subs_send_all(t->s, t->n, 0, method, params);
}

static void
subs_call_unlink(struct subs_call *c)
{
	if (c->next != NULL)
		c->next->prevp = c->prevp;
	*c->prevp = c->next;
	for (size_t i = 0; i < c->n; i++)
		free(c->copies[i]);
	free(c->copies);
	free(c->method);
	json_decref(c->params);
	free(c);
}

/* The calls their owners let go of during a walk, freed once no walk runs. */
static void
subs_call_reap(void)
{
	struct subs_call *c, *next;

	for (c = subs_calls; c != NULL && subs_walking == 0; c = next) {
		next = c->next;
		if (c->dead)
			subs_call_unlink(c);
	}
}

/* A copy's answer, its withdrawal, or its connection's end. */
static void
subs_copy_cb(void *arg, enum rpc_call_status st, const json_t *value)
{
	struct subs_copy *cp = arg;
	struct subs_call *c = cp->call;
	size_t live = 0;

	cp->live = 0;
	if (c->withdrawing)
		return;
	if (st != RPC_CALL_CANCELLED && !c->done) {
		/* the first answer: every other copy is withdrawn, then the owner hears it */
		c->done = 1;
		for (size_t i = 0; i < c->n; i++)
			subs_copy_withdraw(c->copies[i]);
		c->cb(c->arg, st, value);
		return;
	}
	for (size_t i = 0; i < c->n; i++)
		live += c->copies[i]->live;
	if (live == 0 && !c->done) {
		c->done = 1; /* every connection that could answer went */
		c->cb(c->arg, RPC_CALL_CANCELLED, NULL);
	}
}

/* A copy for s, registered (live) but not sent yet. */
static struct subs_copy *
subs_copy_add(struct subs_call *c, struct session *s)
{
	struct subs_copy *cp = xcalloc(1, sizeof *cp);

	if (c->n == c->cap) {
		c->cap = c->cap != 0 ? c->cap * 2 : 4;
		c->copies = xrealloc(c->copies, c->cap * sizeof *c->copies);
	}
	cp->call = c;
	cp->s = s;
	cp->live = 1;
	c->copies[c->n++] = cp;
	return cp;
}

/* Nothing writes into a request's params once made: every copy shares them. */
static void
subs_copy_send(struct subs_copy *cp)
{
	struct subs_call *c = cp->call;

	cp->id = rpc_call(cp->s->rpc, c->method, json_incref(c->params), subs_copy_cb, cp);
}

struct subs_call *
subs_call(const char *thread_id, struct session *fallback, const char *method, json_t *params,
	rpc_call_cb cb, void *arg)
{
	struct subs_thread *t = subs_thread(thread_id, 0);
	struct session **to = t != NULL && t->n > 0 ? t->s : &fallback;
	struct subs_call *c;
	size_t n = t != NULL && t->n > 0 ? t->n : 1;

	c = xcalloc(1, sizeof *c);
	c->cb = cb;
	c->arg = arg;
	snprintf(c->thread, sizeof c->thread, "%s", thread_id);
	c->method = xstrdup(method);
	c->params = params;
	c->next = subs_calls;
	if (subs_calls != NULL)
		subs_calls->prevp = &c->next;
	c->prevp = &subs_calls;
	subs_calls = c;
	/* every copy is registered before the first goes out: rpc_call may answer at once */
	for (size_t i = 0; i < n; i++)
		subs_copy_add(c, to[i]);
	for (size_t i = 0; i < n; i++)
		subs_copy_send(c->copies[i]);
	return c;
}

void
subs_replay(const char *thread_id, struct session *s)
{
	struct subs_call *c, **todo = NULL;
	size_t i, n = 0;

	if (subs_is(thread_id, s) != 1)
		return;
	for (c = subs_calls; c != NULL; c = c->next) {
		if (c->done || c->dead || strcmp(c->thread, thread_id) != 0)
			continue;
		for (i = 0; i < c->n && !(c->copies[i]->s == s && c->copies[i]->live); i++)
			;
		if (i < c->n) /* a request made after s subscribed reached it already */
			continue;
		todo = xrealloc(todo, (n + 1) * sizeof *todo);
		todo[n++] = c;
	}
	/* the list is newest first: the oldest goes out first, as they were asked */
	while (n-- > 0)
		subs_copy_send(subs_copy_add(todo[n], s));
	free(todo);
}

void
subs_call_cancel(struct subs_call *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n; i++)
		subs_copy_withdraw(c->copies[i]);
	if (!c->done) {
		c->done = 1;
		c->cb(c->arg, RPC_CALL_CANCELLED, NULL);
	}
}

void
subs_call_resolved(struct subs_call *c, const char *thread_id)
{
	for (size_t i = 0; c != NULL && i < c->n; i++)
		if (c->copies[i]->s != NULL && subs_is(thread_id, c->copies[i]->s) == 1)
			rpc_notify(c->copies[i]->s->rpc, "serverRequest/resolved",
				json_pack("{s:s, s:I}", "threadId", thread_id, "requestId",
					(json_int_t)c->copies[i]->id));
}

long long
subs_call_id(const struct subs_call *c)
{
	long long id = -1;

	for (size_t i = 0; c != NULL && i < c->n; i++)
		if (id < 0 || c->copies[i]->id < id)
			id = c->copies[i]->id;
	return id;
}

void
subs_call_free(struct subs_call *c)
{
	if (c == NULL)
		return;
	c->done = 1; /* no callback any more */
	for (size_t i = 0; i < c->n; i++)
		subs_copy_withdraw(c->copies[i]);
	c->dead = 1;
	if (subs_walking == 0)
		subs_call_unlink(c);
}
