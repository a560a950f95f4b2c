/*
 * The index worker (store_int.h): every SQLite call of the store's own connection runs on one
 * worker thread, in posting order, never on the loop (issue 21: a sandboxed reader's lock on
 * the -shm held every index write, and so every request, for the 5 s busy timeout). Rules:
 *   - the loop posts writes (a row, a delete, a name, git info) and reads (a list page, the
 *     git snapshot) and never waits for them. The queue is FIFO, so a list posted after a
 *     write sees it: a connection sees its own writes at once;
 *   - the connection waits at most STORE_IX_BUSY_MS for another connection's lock (a reader's
 *     lock on the -shm, another process's BEGIN EXCLUSIVE, our own scan's batch). A write that
 *     meets a lock is kept in `pending`, in order, and retried every STORE_IX_RETRY seconds and
 *     before the next job: the index degrades (lists answer from what it held; WAL readers are
 *     not blocked by a writer's lock) and recovers, in one transaction, once the lock goes;
 *   - past STORE_IX_PENDING_MAX kept writes, rows and deletes are dropped (the rollouts stay
 *     the truth: a rescan after recovery rewrites those rows); names and git info are kept.
 * `struct store_ix` belongs to the worker thread; the loop learns its state from each job's
 * copy of it (degraded, lost), read in done().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include "store_int.h"
#include "thread/rollout/rollout.h"
#include "io/log.h"
#include "protocol/xmalloc.h"

#define STORE_IX_BUSY_MS     100   /* one statement's wait for another connection's lock */
#define STORE_IX_RETRY	     0.25  /* seconds between retries of kept writes */
#define STORE_IX_PENDING_MAX 10000 /* kept writes; rows and deletes past it are dropped */

enum store_ix_kind {
	STORE_IX_OPEN,
	STORE_IX_PUT,
	STORE_IX_DELETE,
	STORE_IX_NAME,
	STORE_IX_GIT,
	STORE_IX_FLUSH,
	STORE_IX_LIST,
	STORE_IX_GITS,
	STORE_IX_CALL,
};

/* One write, posted or kept. */
struct store_ixw {
	STAILQ_ENTRY(store_ixw) entry;
	enum store_ix_kind kind;
	char id[37];
	struct thread_meta m; /* PUT */
	int64_t at_ms;	      /* PUT: when it was posted (the row's indexed_ms, see below) */
	int if_absent;	      /* PUT: a lookup's repair: an existing row is left as it is */
	char *text;	      /* NAME: the name; GIT: JSON text or NULL (none) */
};

STAILQ_HEAD(store_ixws, store_ixw);

/* The worker thread's side. */
struct store_ix {
	char *home;
	struct tindex *x; /* NULL until opened */
	struct store_ixws pending;
	size_t npending;
	int lost;	 /* writes dropped past the ceiling: a rescan restores them */
	double last_try; /* monotonic: the last retry of pending writes or of the open */
};

/* One job; results are read by its done() on the loop. */
struct store_ixjob {
	struct store *s;
	enum store_ix_kind kind;
	struct store_ixw *w;	      /* writes (NULL once kept in pending) */
	struct store_pending_list *l; /* LIST: params and callback */
	struct tindex_page page;
	json_t *gits;		 /* GITS: {id: git} */
	uint64_t seq;		 /* GITS: git_seq when posted */
	store_ix_call_fn call;	 /* CALL: run on the worker, */
	store_done_fn call_done; /* then this on the loop */
	void *call_arg;
	int r, fresh, degraded, lost;
	char *cause;
};

static void store_ix_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);

static void
store_ixw_free(struct store_ixw *w)
{
	if (w == NULL)
		return;
	thread_meta_clear(&w->m);
	free(w->text);
	free(w);
}

/* Open the connection (worker thread); 0 or -errno with *cause. */
static int
store_ix_connect(struct store_ix *ix, int *fresh, char **cause)
{
	int r;

	ix->last_try = store_now();
	if ((r = tindex_open(ix->home, &ix->x, fresh, cause)) != 0)
		return r;
	/* Checkpoints fsync: a worker of the scan does them (store_count_write). */
	tindex_manual_checkpoints(ix->x);
	tindex_busy_timeout(ix->x, STORE_IX_BUSY_MS);
	return 0;
}

/* The connection, opened again when an earlier try failed (at most every STORE_IX_RETRY). */
static int
store_ix_ready(struct store_ix *ix)
{
	char *cause = NULL;
	int fresh;

	if (ix->x != NULL)
		return 0;
	if (store_now() - ix->last_try < STORE_IX_RETRY)
		return -EBUSY;
	if (store_ix_connect(ix, &fresh, &cause) != 0) {
		free(cause);
		return -EBUSY;
	}
	return 0;
}

/* Apply one write: 0, -EBUSY (another connection's lock) or -EIO. */
static int
store_ix_apply(struct tindex *x, struct store_ixw *w)
{
	json_t *git;
	int r = 0;

	switch (w->kind) {
	case STORE_IX_PUT:
		/* only_if_older_than 1: no row is older than 1 ms, so only a missing one is written
		 */
		r = tindex_put(x, &w->m, w->if_absent ? 1 : 0, w->at_ms);
		if (r == 0 && w->m.name != NULL)
			r = tindex_set_name(x, w->id, w->m.name);
		break;
	case STORE_IX_DELETE:
		r = tindex_delete(x, w->id);
		break;
	case STORE_IX_NAME:
		r = tindex_set_name(x, w->id, w->text);
		break;
	case STORE_IX_GIT:
		git = w->text != NULL ? json_loads(w->text, 0, NULL) : NULL;
		r = tindex_set_git(x, w->id, git);
		json_decref(git);
		break;
	default:
		break;
	}
	if (r != 0)
		return tindex_busy(x) ? -EBUSY : -EIO;
	return 0;
}

/* Keep a write that met a lock; a newer row replaces an older one of the same thread. */
static void
store_ix_keep(struct store_ix *ix, struct store_ixw *w)
{
	struct store_ixw *o;

	if (w->kind == STORE_IX_PUT) {
		STAILQ_FOREACH(o, &ix->pending, entry)
		{
			if (o->kind == STORE_IX_PUT && strcmp(o->id, w->id) == 0) {
				thread_meta_clear(&o->m);
				o->m = w->m;
				memset(&w->m, 0, sizeof w->m);
				store_ixw_free(w);
				return;
			}
		}
	}
	if (ix->npending >= STORE_IX_PENDING_MAX &&
		(w->kind == STORE_IX_PUT || w->kind == STORE_IX_DELETE)) {
		ix->lost = 1;
		store_ixw_free(w);
		return;
	}
	STAILQ_INSERT_TAIL(&ix->pending, w, entry);
	ix->npending++;
}

/*
 * Retry the kept writes in one transaction (force: now, else at most every STORE_IX_RETRY);
 * 0 when none is left, -EBUSY while the lock holds.
 */
static int
store_ix_flush(struct store_ix *ix, int force)
{
	struct store_ixw *w;
	int r = 0;

	if (STAILQ_EMPTY(&ix->pending))
		return 0;
	if (!force && store_now() - ix->last_try < STORE_IX_RETRY)
		return -EBUSY;
	ix->last_try = store_now();
	if (ix->x == NULL || tindex_begin(ix->x) != 0)
		return -EBUSY;
	STAILQ_FOREACH(w, &ix->pending, entry)
	{
		if ((r = store_ix_apply(ix->x, w)) == -EBUSY)
			break;
		r = 0; /* a write SQLite refuses otherwise is dropped: a rescan mends the row */
	}
	if (r == 0 && tindex_commit(ix->x) != 0)
		r = -EBUSY;
	if (r != 0) {
		tindex_rollback(ix->x);
		return r;
	}
	while ((w = STAILQ_FIRST(&ix->pending)) != NULL) {
		STAILQ_REMOVE_HEAD(&ix->pending, entry);
		store_ixw_free(w);
	}
	ix->npending = 0;
	return 0;
}

/* The worker side of every job. */
static void
store_ix_run(void *arg)
{
	struct store_ixjob *j = arg;
	struct store_ix *ix = j->s->ix;
	int ready;

	if (j->kind == STORE_IX_OPEN) {
		j->r = store_ix_connect(ix, &j->fresh, &j->cause);
		return;
	}
	if (j->kind == STORE_IX_FLUSH)
		ix->last_try = 0; /* the loop's timer paces these */
	ready = store_ix_ready(ix) == 0;
	/* A list tries the kept writes first, whatever the pace: a connection sees its own
	 * writes as soon as the lock is gone, not at the next retry. */
	if (ready)
		store_ix_flush(ix, j->kind == STORE_IX_LIST);
	switch (j->kind) {
	case STORE_IX_PUT:
	case STORE_IX_DELETE:
	case STORE_IX_NAME:
	case STORE_IX_GIT:
		/* Behind kept writes, or meeting the lock itself: kept, in order. */
		if (!ready || !STAILQ_EMPTY(&ix->pending) ||
			store_ix_apply(ix->x, j->w) == -EBUSY) {
			store_ix_keep(ix, j->w);
			j->w = NULL; /* transferred */
		}
		break;
	case STORE_IX_LIST:
		if (!ready) {
			j->r = -EIO;
			j->cause = xstrdup("thread index unavailable");
		} else {
			j->r = tindex_list(ix->x, &j->l->q, &j->page, &j->cause);
		}
		break;
	case STORE_IX_GITS:
		j->gits = ready ? tindex_gits(ix->x) : NULL;
		break;
	case STORE_IX_CALL:
		j->r = j->call(ready ? ix->x : NULL, j->call_arg);
		break;
	default:
		break;
	}
	j->degraded = !ready || !STAILQ_EMPTY(&ix->pending);
	j->lost = ix->lost;
	if (!j->degraded)
		ix->lost = 0; /* reported once, with the recovery */
}

/* Degraded / recovered, as the last job saw it: the retry timer, a log line, a rescan. */
static void
store_ix_state(struct store *s, int degraded, int lost)
{
	if (degraded && !s->ix_degraded) {
		log_warn("thread index: locked by another connection; index writes are kept "
			 "until it is free (lists may lag, the rollouts are complete)");
		if (s->loop != NULL && !s->closing) {
			ev_timer_set(&s->ix_timer, STORE_IX_RETRY, STORE_IX_RETRY);
			ev_timer_start(s->loop, &s->ix_timer);
		}
	} else if (!degraded && s->ix_degraded) {
		log_info("thread index: free again; kept writes applied");
		if (s->loop != NULL)
			ev_timer_stop(s->loop, &s->ix_timer);
		if (lost && !s->closing)
			store_rescan(s, 0, NULL, NULL);
	}
	s->ix_degraded = degraded;
}

/* Free a list job's copy of the params. */
void
store_ix_list_free(struct store_pending_list *l)
{
	if (l == NULL)
		return;
	free((char *)l->p.cursor);
	free((char *)l->p.sort_key);
	free((char *)l->p.sort_direction);
	free((char *)l->p.search_term);
	free((char *)l->p.section_id);
	json_decref(l->p.model_providers);
	json_decref(l->p.source_kinds);
	json_decref(l->p.cwd);
	json_decref(l->p.excluded_ids);
	json_decref(l->cwds);
	free(l);
}

/* A list page as the wire wants it: loaded threads as they are here. */
static void
store_ix_list_done(struct store_ixjob *j)
{
	struct store *s = j->s;
	struct tindex_page *page = &j->page;
	json_t *result, *data;

	if (j->r != 0) {
		j->l->cb(j->l->arg, j->r, NULL, j->cause ? j->cause : "thread index unavailable");
		return;
	}
	data = json_array();
	for (size_t i = 0; i < page->n; i++) {
		struct store_thread *t = store_loaded(s, page->rows[i].id);

		if (t != NULL)
			json_array_append_new(data, store_thread_json(t, NULL));
		else
			json_array_append_new(
				data, store_meta_json(s, &page->rows[i], NULL, NULL, 0));
	}
	result = json_pack("{s:o,s:o,s:o}", "data", data, "nextCursor",
		page->next_cursor ? json_string(page->next_cursor) : json_null(), "backwardsCursor",
		page->backwards_cursor ? json_string(page->backwards_cursor) : json_null());
	tindex_page_free(page);
	j->l->cb(j->l->arg, 0, result, NULL);
}

/*
 * The git snapshot replaces the loop's map, except for ids set here after it was posted (their
 * writes may still be on their way to the file).
 */
static void
store_ix_gits_done(struct store_ixjob *j)
{
	struct store *s = j->s;
	json_t *v, *mine = j->gits;
	const char *id;
	void *tmp;

	if (mine == NULL)
		return;
	json_object_foreach_safe(s->git_touched, tmp, id, v)
	{
		if ((uint64_t)json_integer_value(v) <= j->seq) {
			json_object_del(s->git_touched, id);
			continue;
		}
		if (json_object_get(s->gits, id) != NULL)
			json_object_set(mine, id, json_object_get(s->gits, id));
		else
			json_object_del(mine, id);
	}
	json_decref(s->gits);
	s->gits = mine;
	j->gits = NULL; /* transferred */
}

static void
store_ix_done(void *arg)
{
	struct store_ixjob *j = arg;
	struct store *s = j->s;

	if (j->kind != STORE_IX_OPEN)
		store_ix_state(s, j->degraded, j->lost);
	switch (j->kind) {
	case STORE_IX_OPEN:
		store_ix_opened(s, j->r, j->fresh, j->cause);
		break;
	case STORE_IX_FLUSH:
		s->ix_flushing = 0;
		break;
	case STORE_IX_LIST:
		store_ix_list_done(j);
		break;
	case STORE_IX_GITS:
		store_ix_gits_done(j);
		break;
	case STORE_IX_CALL:
		j->call_done(j->call_arg, j->r);
		break;
	default:
		break;
	}
	store_ixw_free(j->w);
	store_ix_list_free(j->l);
	json_decref(j->gits);
	free(j->cause);
	free(j);
}

/* Post a job; a store without a loop has it done before this returns. */
static void
store_ix_post(struct store *s, struct store_ixjob *j)
{
	if (s->ix_stopped) {
		/* a completion run by worker_free, whose thread has ended: here and now */
		store_ix_run(j);
		store_ix_done(j);
		return;
	}
	worker_post(s->index, store_ix_run, store_ix_done, j);
	if (s->loop == NULL) {
		worker_drain(s->index);
		worker_complete(s->index);
	}
}

static struct store_ixjob *
store_ix_job(struct store *s, enum store_ix_kind kind)
{
	struct store_ixjob *j = xcalloc(1, sizeof *j);

	j->s = s;
	j->kind = kind;
	return j;
}

/* A write job for id. */
static struct store_ixjob *
store_ix_write(struct store *s, enum store_ix_kind kind, const char *id)
{
	struct store_ixjob *j = store_ix_job(s, kind);

	j->w = xcalloc(1, sizeof *j->w);
	j->w->kind = kind;
	/*
	 * Stamped now, on the loop, not when the worker applies it: a rescan spares rows indexed
	 * after it started (new threads it could not list), and a put posted before the scan
	 * but applied during it must not pass for one of those.
	 */
	j->w->at_ms = rollout_now_ms();
	snprintf(j->w->id, sizeof j->w->id, "%s", id);
	return j;
}

void
store_ix_start(struct store *s)
{
	s->ix = xcalloc(1, sizeof *s->ix);
	s->ix->home = xstrdup(s->home);
	STAILQ_INIT(&s->ix->pending);
	s->gits = json_object();
	s->git_touched = json_object();
	s->index = worker_new(s->loop, "store-index");
	if (s->loop != NULL)
		ev_init(&s->ix_timer, store_ix_timer_cb);
	store_ix_post(s, store_ix_job(s, STORE_IX_OPEN));
	store_sections_start(s); /* the sections' copy, read right after the open */
}

void
store_ix_call(struct store *s, store_ix_call_fn fn, store_done_fn done, void *arg)
{
	struct store_ixjob *j = store_ix_job(s, STORE_IX_CALL);

	j->call = fn;
	j->call_done = done;
	j->call_arg = arg;
	store_ix_post(s, j);
}

void
store_ix_stop(struct store *s)
{
	struct store_ixw *w;

	if (s->index == NULL)
		return;
	/* One last try for kept writes; what still meets the lock is left to the next scan. */
	store_ix_post(s, store_ix_job(s, STORE_IX_FLUSH));
	s->ix_stopped = 1; /* worker_free joins the thread before it runs the completions */
	worker_free(s->index);
	s->index = NULL;
	if (s->loop != NULL)
		ev_timer_stop(s->loop, &s->ix_timer);
	if (s->ix->npending > 0)
		log_warn("thread index: %zu writes not applied (locked); the next start rescans",
			s->ix->npending);
	while ((w = STAILQ_FIRST(&s->ix->pending)) != NULL) {
		STAILQ_REMOVE_HEAD(&s->ix->pending, entry);
		store_ixw_free(w);
	}
	tindex_close(s->ix->x);
	free(s->ix->home);
	free(s->ix);
	s->ix = NULL;
	json_decref(s->gits);
	json_decref(s->git_touched);
	store_sections_free(s);
}

/* While degraded: retry the kept writes (one flush job in flight at most). */
static void
store_ix_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct store *s = container_of(w, struct store, ix_timer);

	(void)loop;
	(void)revents;
	if (s->ix_flushing)
		return;
	s->ix_flushing = 1;
	store_ix_post(s, store_ix_job(s, STORE_IX_FLUSH));
}

void
store_ix_put(struct store *s, const struct thread_meta *m)
{
	struct store_ixjob *j = store_ix_write(s, STORE_IX_PUT, m->id);

	thread_meta_copy(&j->w->m, m);
	store_ix_post(s, j);
	store_count_write(s);
}

void
store_ix_put_missing(struct store *s, const struct thread_meta *m)
{
	struct store_ixjob *j = store_ix_write(s, STORE_IX_PUT, m->id);

	thread_meta_copy(&j->w->m, m);
	j->w->if_absent = 1;
	store_ix_post(s, j);
	store_count_write(s);
}

void
store_ix_delete(struct store *s, const char *id)
{
	store_ix_post(s, store_ix_write(s, STORE_IX_DELETE, id));
	store_count_write(s);
}

void
store_ix_name(struct store *s, const char *id, const char *name)
{
	struct store_ixjob *j = store_ix_write(s, STORE_IX_NAME, id);

	j->w->text = xstrdup(name);
	store_ix_post(s, j);
	store_count_write(s);
}

void
store_ix_git(struct store *s, const char *id, json_t *git)
{
	struct store_ixjob *j = store_ix_write(s, STORE_IX_GIT, id);

	if (git != NULL) {
		json_object_set(s->gits, id, git);
		j->w->text = json_dumps(git, JSON_COMPACT);
	} else {
		json_object_del(s->gits, id);
	}
	json_object_set_new(s->git_touched, id, json_integer((json_int_t)++s->git_seq));
	store_ix_post(s, j);
	store_count_write(s);
}

json_t *
store_ix_git_get(struct store *s, const char *id)
{
	return json_object_get(s->gits, id);
}

void
store_ix_gits(struct store *s)
{
	struct store_ixjob *j = store_ix_job(s, STORE_IX_GITS);

	j->seq = s->git_seq;
	store_ix_post(s, j);
}

void
store_ix_list(struct store *s, struct store_pending_list *l)
{
	struct store_ixjob *j = store_ix_job(s, STORE_IX_LIST);

	j->l = l;
	store_ix_post(s, j);
}
