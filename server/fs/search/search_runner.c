/*
 * The search runner (search.h): walks and scoring run on one worker thread (fs_worker), results
 * come back on the loop thread. Every search goes through a live index (search_live.h): one per
 * set of roots, shared by the sessions over those roots and by one-shot searches, which keep up
 * to SEARCH_CACHE_IDLE indexes nobody holds (least recently used dropped first), so a repeated
 * one-shot search scores an index that inotify kept fresh instead of walking again.
 *
 * Rules kept here:
 *   - the loop thread never walks or scores; the worker never calls back (fs_worker posts);
 *   - a live index is only refreshed and scored by the worker; the loop thread drains its
 *     events when a query is queued (the staleness bound of search_live.h);
 *   - a query is reported only if it is still its session's latest (a newer one supersedes it
 *     and cancels its scoring; the walk of a session goes on, the next query needs it);
 *     one-shot searches are always answered, cancelled or not;
 *   - sessions, jobs and cached indexes are reference counted; the last reference frees, on
 *     the loop thread;
 *   - one budget for every index (search_budget: bytes and inotify watches): before a job
 *     that must walk, and after a walk the budget cut short, the least recently used indexes
 *     no job is using are evicted (dropped, or freed when nobody holds them); an evicted
 *     session's index is walked again at its next query.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "search.h"
#include "search_live.h"
#include "fs/fs.h"
#include "fs/fs_worker.h"
#include "io/log.h"
#include "protocol/xmalloc.h"

#define SEARCH_CACHE_IDLE 4 /* live indexes kept for one-shot searches */

/* A live index and who holds it. */
struct search_cached {
	struct search_live *live;
	int refs;			 /* sessions and jobs in flight */
	int busy;			 /* jobs in flight: the worker may be using it */
	int warm;			 /* it had an index after its last job */
	size_t held_bytes, held_watches; /* after its last job (the budget's count then) */
	size_t want_bytes, want_watches; /* what it needed when last complete, 0: unknown */
	double last_used;
	struct search_cached *next;
};

struct search_session {
	struct search_runner *r;
	char *id;
	struct search_cached *c; /* NULL: a root is missing, every query answers nothing */
	char **roots;
	struct search_session_cbs cbs;
	int refs;
	int dead;
	atomic_uint gen;	    /* bumped by every update */
	atomic_int stopped;	    /* stops a walk in progress */
	struct search_job *current; /* loop side: the query in flight, to cancel */
	struct search_session *next;
};

struct search_job {
	struct search_runner *r;
	struct search_session *s; /* NULL for a one-shot search */
	struct search_cached *c;  /* NULL: nothing to search */
	unsigned gen;
	int warm; /* a session's first walk, nothing reported */
	char *query;
	char **roots; /* one-shot: the roots of the answer */
	char *token;
	atomic_int cancel;
	struct search_result res;
	int skipped;		     /* superseded before it scored */
	struct search_live_stats st; /* the index after the refresh (worker) */
	search_done_fn done;
	void *arg;
	struct search_job *next; /* one-shot jobs in flight */
};

struct search_runner {
	struct ev_loop *loop;
	struct fs_worker *w;
	struct search_cached *cache;
	struct search_session *sessions;
	size_t nsessions;
	struct search_job *running; /* one-shot jobs, for tokens */
	struct search_budget budget;
};

/* Monotonic seconds. */
static double
search_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Free a NULL-terminated string vector. */
static void
search_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Normalized copies of the roots; -1 when one is relative or not a folder (no files then). */
static int
search_roots_copy(const char *const *in, size_t n, char ***outp)
{
	char **out = xcalloc(n + 1, sizeof(char *));
	int ok = 1;

	for (size_t i = 0; i < n; i++) {
		struct fs_err err = {0};
		struct stat st;
		if (fs_path_normalize(in[i], &out[i], &err) < 0 || stat(out[i], &st) < 0 ||
			!S_ISDIR(st.st_mode)) {
			ok = 0;
			if (out[i] == NULL)
				out[i] = xstrdup(in[i]);
		}
		fs_err_clear(&err);
	}
	*outp = out;
	return ok ? 0 : -1;
}

/* The cached live index over exactly these roots, made if needed; a reference is taken. */
static struct search_cached *
search_cache_get(struct search_runner *r, char *const *roots, size_t n)
{
	struct search_cached *c;
	size_t cn;

	for (c = r->cache; c != NULL; c = c->next) {
		const char *const *cr = search_live_roots(c->live, &cn);
		size_t i = 0;
		while (cn == n && i < n && strcmp(cr[i], roots[i]) == 0)
			i++;
		if (cn == n && i == n)
			break;
	}
	if (c == NULL) {
		c = xcalloc(1, sizeof(*c));
		c->live = search_live_new(r->loop, (const char *const *)roots, n);
		search_live_set_budget(c->live, &r->budget);
		c->next = r->cache;
		r->cache = c;
	}
	c->refs++;
	c->last_used = search_now();
	return c;
}

/* Drop a reference; keep at most SEARCH_CACHE_IDLE unheld indexes (LRU out). */
static void
search_cache_put(struct search_runner *r, struct search_cached *c)
{
	if (c == NULL)
		return;
	c->refs--;
	c->last_used = search_now();
	for (;;) {
		struct search_cached **oldest = NULL;
		size_t idle = 0;
		for (struct search_cached **pp = &r->cache; *pp != NULL; pp = &(*pp)->next) {
			if ((*pp)->refs > 0)
				continue;
			idle++;
			if (oldest == NULL || (*pp)->last_used < (*oldest)->last_used)
				oldest = pp;
		}
		if (idle <= SEARCH_CACHE_IDLE)
			return;
		struct search_cached *o = *oldest;
		*oldest = o->next;
		search_live_free(o->live);
		free(o);
	}
}

/* Make a runner with its own worker thread. */
struct search_runner *
search_runner_new(struct ev_loop *loop)
{
	struct search_runner *r = xcalloc(1, sizeof(*r));

	r->loop = loop;
	r->w = fs_worker_new(loop, 1);
	r->budget.max_bytes = SEARCH_BUDGET_BYTES;
	r->budget.max_watches = SEARCH_BUDGET_WATCHES;
	return r;
}

void
search_runner_set_budget(struct search_runner *r, size_t bytes, size_t watches)
{
	r->budget.max_bytes = bytes;
	r->budget.max_watches = watches;
}

void
search_runner_usage(const struct search_runner *r, size_t *bytes, size_t *watches)
{
	*bytes = atomic_load(&r->budget.bytes);
	*watches = atomic_load(&r->budget.watches);
}

/* The least recently used index other than keep that no job uses and that holds something. */
static struct search_cached **
search_budget_victim(struct search_runner *r, const struct search_cached *keep)
{
	struct search_cached **best = NULL;

	for (struct search_cached **pp = &r->cache; *pp != NULL; pp = &(*pp)->next) {
		const struct search_cached *c = *pp;
		if (c == keep || c->busy > 0 || (c->held_bytes == 0 && c->held_watches == 0))
			continue;
		if (best == NULL || c->last_used < (*best)->last_used)
			best = pp;
	}
	return best;
}

/*
 * Evict least recently used indexes until c (holding what it held after its last job) can
 * grow to need bytes and watches, or nothing more can go. How many went.
 */
static int
search_budget_room(struct search_runner *r, struct search_cached *c, size_t need_b, size_t need_w)
{
	struct search_budget *b = &r->budget;
	struct search_cached **pp;
	int n = 0;

	for (;;) {
		size_t others_b = atomic_load(&b->bytes) - c->held_bytes;
		size_t others_w = atomic_load(&b->watches) - c->held_watches;
		if (others_b + need_b <= b->max_bytes && others_w + need_w <= b->max_watches)
			break;
		if ((pp = search_budget_victim(r, c)) == NULL)
			break;
		struct search_cached *v = *pp;
		size_t nr;
		const char *const *roots = search_live_roots(v->live, &nr);
		log_info("search: index over %s%s evicted (%zu bytes, %zu watches): the budget is "
			 "%zu bytes, %zu watches",
			roots[0], nr > 1 ? " ..." : "", v->held_bytes, v->held_watches,
			b->max_bytes, b->max_watches);
		if (v->refs == 0) {
			*pp = v->next;
			search_live_free(v->live);
			free(v);
		} else {
			search_live_drop(v->live);
			v->held_bytes = v->held_watches = 0;
			v->warm = 0;
		}
		n++;
	}
	if (n > 0)
		malloc_trim(0); /* give the freed pages back: RSS is what the budget is about */
	return n;
}

/* Loop: a job on c is about to be queued; one that will walk gets room first. */
static void
search_budget_before(struct search_runner *r, struct search_cached *c)
{
	/* with a job already queued on it, room was made then (and held_* are stale now) */
	if (c->busy++ > 0 || c->warm)
		return;
	search_budget_room(r, c, c->want_bytes ? c->want_bytes : r->budget.max_bytes / 2,
		c->want_watches ? c->want_watches : r->budget.max_watches / 2);
}

/* Loop: a job on c is done; a walk the budget cut short gets the room and is done again. */
static void
search_budget_after(struct search_runner *r, struct search_cached *c, const struct search_job *j)
{
	c->busy--;
	if (c->busy > 0)
		return; /* the last one's figures count */
	c->warm = j->st.indexed;
	c->held_bytes = j->st.bytes;
	c->held_watches = j->st.watches;
	if (!j->st.indexed)
		return;
	if (!j->st.squeezed) {
		c->want_bytes = j->st.bytes;
		c->want_watches = j->st.watches;
		return;
	}
	c->want_bytes = r->budget.max_bytes;
	c->want_watches = r->budget.max_watches;
	if (search_budget_room(r, c, c->want_bytes, c->want_watches) > 0)
		search_live_rewalk(c->live);
}

/* Drop one reference to a session; the last frees (loop thread). */
static void
search_session_unref(struct search_session *s)
{
	if (--s->refs > 0)
		return;
	search_cache_put(s->r, s->c);
	search_strv_free(s->roots);
	free(s->id);
	free(s);
}

/* Worker: refresh the live index, then score it unless superseded or cancelled. */
static void
search_job_run_cb(void *p)
{
	struct search_job *j = p;
	struct search_session *s = j->s;

	if (j->c == NULL)
		return;
	/* a session's walk is stopped only by its end; a one-shot's by its cancellation */
	int rc = search_live_refresh(j->c->live, s != NULL ? &s->stopped : &j->cancel);
	search_live_stats(j->c->live, &j->st);
	if (rc < 0) {
		j->res.cancelled = 1;
		return;
	}
	if (j->warm)
		return;
	if (s != NULL && atomic_load(&s->gen) != j->gen) {
		j->skipped = 1;
		return;
	}
	if (j->query[0] != '\0')
		search_index_query(search_live_index(j->c->live), j->query, &j->cancel, &j->res);
	j->res.cancelled |= atomic_load(&j->cancel) != 0;
}

/* Free a job and what it holds (loop thread). */
static void
search_job_free(struct search_job *j)
{
	search_cache_put(j->r, j->c);
	search_result_free(&j->res);
	search_strv_free(j->roots);
	free(j->query);
	free(j->token);
	free(j);
}

/* Loop: deliver a finished job. */
static void
search_job_done_cb(void *p, int cancelled)
{
	struct search_job *j = p;
	struct search_session *s = j->s;

	if (j->c != NULL)
		search_budget_after(j->r, j->c, j);
	if (s == NULL) {
		struct search_job **pp = &j->r->running;
		while (*pp && *pp != j)
			pp = &(*pp)->next;
		if (*pp)
			*pp = j->next;
		j->res.cancelled |= cancelled;
		j->done(j->arg, &j->res, (const char *const *)j->roots);
	} else {
		if (s->current == j)
			s->current = NULL;
		if (!j->warm && !s->dead && !j->skipped && !cancelled &&
			atomic_load(&s->gen) == j->gen) {
			s->cbs.updated(s->cbs.arg, s->id, j->query, &j->res,
				(const char *const *)s->roots);
			s->cbs.completed(s->cbs.arg, s->id);
		}
		search_session_unref(s);
	}
	search_job_free(j);
}

/* Queue a job: its index's pending events are drained first (the staleness bound). */
static int
search_job_submit(struct search_runner *r, struct search_job *j)
{
	int rc;

	if (j->c != NULL) {
		search_budget_before(r, j->c);
		search_live_drain(j->c->live);
	}
	if ((rc = fs_worker_submit(r->w, search_job_run_cb, search_job_done_cb, j)) < 0 &&
		j->c != NULL)
		j->c->busy--;
	return rc;
}

/* A one-shot search (search.h). */
int
search_run(struct search_runner *r, const char *query, const char *const *roots, size_t nroots,
	const char *token, search_done_fn done, void *arg)
{
	struct search_job *j = xcalloc(1, sizeof(*j));
	int rc;

	j->r = r;
	if (nroots > SEARCH_ROOTS_MAX)
		nroots = SEARCH_ROOTS_MAX;
	if (search_roots_copy(roots, nroots, &j->roots) == 0 && nroots > 0 && query[0] != '\0')
		j->c = search_cache_get(r, j->roots, nroots);
	j->query = xstrdup(j->c != NULL ? query : "");
	j->token = token ? xstrdup(token) : NULL;
	j->done = done;
	j->arg = arg;
	if (token != NULL) {
		for (struct search_job *o = r->running; o; o = o->next) {
			if (o->token && strcmp(o->token, token) == 0)
				atomic_store(&o->cancel, 1);
		}
	}
	if ((rc = search_job_submit(r, j)) < 0) {
		search_job_free(j);
		return rc;
	}
	j->next = r->running;
	r->running = j;
	return 0;
}

/* Find a live session. */
static struct search_session **
search_session_find(struct search_runner *r, const char *id)
{
	struct search_session **pp = &r->sessions;

	while (*pp && strcmp((*pp)->id, id) != 0)
		pp = &(*pp)->next;
	return pp;
}

/* Queue a session job (a query, or the first walk); 0 or -EAGAIN. */
static int
search_session_submit(struct search_session *s, const char *query, int warm)
{
	struct search_job *j = xcalloc(1, sizeof(*j));
	int rc;

	j->r = s->r;
	j->s = s;
	j->warm = warm;
	if (s->c != NULL) {
		j->c = s->c;
		j->c->refs++;
	}
	j->gen = warm ? atomic_load(&s->gen) : atomic_fetch_add(&s->gen, 1) + 1;
	j->query = xstrdup(s->c != NULL ? query : "");
	if ((rc = search_job_submit(s->r, j)) < 0) {
		search_job_free(j);
		return rc;
	}
	if (!warm) {
		if (s->current != NULL)
			atomic_store(&s->current->cancel, 1);
		s->current = j;
	}
	s->refs++;
	return 0;
}

/* Start a session; a session with the same id is replaced (as upstream). */
int
search_session_start(struct search_runner *r, const char *id, const char *const *roots,
	size_t nroots, const struct search_session_cbs *cbs, char **cause)
{
	struct search_session *s;

	if (nroots == 0) {
		*cause = xstrdup("failed to start fuzzy file search session: at least one search "
				 "directory is required");
		return -EINVAL;
	}
	search_session_stop(r, id);
	if (r->nsessions >= SEARCH_SESSIONS_MAX) {
		*cause = xasprintf(
			"too many fuzzy file search sessions (at most %d)", SEARCH_SESSIONS_MAX);
		return -EAGAIN;
	}
	s = xcalloc(1, sizeof(*s));
	s->r = r;
	s->id = xstrdup(id);
	if (nroots > SEARCH_ROOTS_MAX)
		nroots = SEARCH_ROOTS_MAX;
	if (search_roots_copy(roots, nroots, &s->roots) == 0)
		s->c = search_cache_get(r, s->roots, nroots);
	s->cbs = *cbs;
	s->refs = 1;
	s->next = r->sessions;
	r->sessions = s;
	r->nsessions++;
	search_session_submit(s, "", 1); /* walk now: the first keystroke only scores */
	return 0;
}

/* A new query for a session: supersede and cancel the previous one, queue this one. */
int
search_session_update(struct search_runner *r, const char *id, const char *query, char **cause)
{
	struct search_session *s = *search_session_find(r, id);

	if (s == NULL) {
		*cause = xasprintf("fuzzy file search session not found: %s", id);
		return -ENOENT;
	}
	if (search_session_submit(s, query, 0) < 0) {
		*cause = xstrdup("fuzzy file search is overloaded; retry later");
		return -EAGAIN;
	}
	return 0;
}

/* Stop and forget a session. */
void
search_session_stop(struct search_runner *r, const char *id)
{
	struct search_session **pp = search_session_find(r, id), *s = *pp;

	if (s == NULL)
		return;
	*pp = s->next;
	r->nsessions--;
	s->dead = 1;
	atomic_fetch_add(&s->gen, 1);
	atomic_store(&s->stopped, 1);
	if (s->current != NULL)
		atomic_store(&s->current->cancel, 1);
	search_session_unref(s);
}

/* One-shot searches in flight (search.h). */
size_t
search_runner_pending(const struct search_runner *r)
{
	size_t n = 0;

	for (const struct search_job *j = r != NULL ? r->running : NULL; j != NULL; j = j->next)
		n++;
	return n;
}

/* Cancel every one-shot search and stop every session (search.h). */
void
search_runner_cancel(struct search_runner *r)
{
	for (struct search_job *j = r->running; j; j = j->next)
		atomic_store(&j->cancel, 1);
	while (r->sessions)
		search_session_stop(r, r->sessions->id);
}

/* Cancel all, join the worker (pending jobs are answered cancelled), free. */
void
search_runner_free(struct search_runner *r)
{
	if (r == NULL)
		return;
	search_runner_cancel(r);
	fs_worker_free(r->w);
	while (r->cache != NULL) {
		struct search_cached *c = r->cache;
		r->cache = c->next;
		search_live_free(c->live);
		free(c);
	}
	free(r);
}
