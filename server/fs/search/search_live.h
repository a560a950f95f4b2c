/*
 * A search index kept fresh by inotify (search_live.c): the walk puts a watch on every folder it
 * reads (before reading it, so nothing slips between), the loop thread moves the kernel's events
 * into a bounded queue, and the worker applies them to the index in place before each query:
 * a created or moved-in name is walked as the full walk would see it (ignore rules applied,
 * new folders walked and watched), a deleted or moved-out one is removed with everything
 * under it. Only an overflow (the kernel's IN_Q_OVERFLOW or our queue's ceiling), a change to
 * an ignore file, or the loss of a root re-walks the whole tree.
 *
 * Staleness: search_live_drain (loop thread) is called when a query is queued, so the index a
 * query scores reflects every change whose system call returned before the request was
 * dispatched. When the watches cannot cover every folder (the inotify limits, or more than
 * SEARCH_LIVE_WATCH_MAX folders), the index is re-walked when older than SEARCH_LIVE_TTL.
 *
 * Threads: new/drain/free on the loop thread; refresh/index on the worker thread only (one
 * job at a time). The queue between them is under a mutex.
 */
#ifndef SEARCH_LIVE_H
#define SEARCH_LIVE_H

#include <ev.h>
#include <stdatomic.h>
#include <stddef.h>

#define SEARCH_LIVE_WATCH_MAX 65536	    /* folders one index watches */
#define SEARCH_LIVE_QUEUE_MAX (1024 * 1024) /* bytes of events waiting for the worker */
#define SEARCH_LIVE_TTL	      2.0	    /* seconds an unwatched index is trusted */

struct search_live;
struct search_index;

/*
 * What the live indexes of a runner may hold together (search_runner.c): bytes (index, watch
 * table) and inotify watches. Each index adds what it holds; a refresh may only grow an index
 * into what the others leave, so the sums never pass the maxima.
 */
struct search_budget {
	size_t max_bytes, max_watches;
	atomic_size_t bytes, watches;
};

/* A live index over roots (copied; absolute, normalized); nothing is walked yet. */
struct search_live *search_live_new(struct ev_loop *loop, const char *const *roots, size_t n);
/* Stop watching and free (no job may be using it). Accepts NULL. */
void search_live_free(struct search_live *l);
/* Count it in a budget (before its first refresh; the budget outlives it). */
void search_live_set_budget(struct search_live *l, struct search_budget *b);
/*
 * Loop thread, no job using it: drop the index and every watch (their bytes and watches go
 * back to the budget); the next refresh walks again.
 */
void search_live_drop(struct search_live *l);
/* Loop thread: the next refresh walks everything again. */
void search_live_rewalk(struct search_live *l);
/* Move the events the kernel holds into the queue (loop thread). */
void search_live_drain(struct search_live *l);
/* The roots it was made with. */
const char *const *search_live_roots(const struct search_live *l, size_t *n);

/*
 * Worker: walk if there is no index yet (or it must be re-walked), else apply the queued
 * events. 0, or -ECANCELED when cancel stopped a walk (the index is then dropped).
 */
int search_live_refresh(struct search_live *l, const atomic_int *cancel);
/* Worker: the index (NULL before the first successful refresh). */
const struct search_index *search_live_index(const struct search_live *l);

/* Counters for tests and logs (worker thread, or when idle). */
struct search_live_stats {
	size_t walks;	/* full walks */
	size_t applied; /* events applied in place */
	size_t watches; /* folders under inotify */
	int watched;	/* every folder is */
	size_t bytes;	/* what it holds (index and watch table), as the budget counts it */
	int squeezed;	/* the budget left out entries or watches at the last refresh */
	int indexed;	/* it has an index */
};
void search_live_stats(const struct search_live *l, struct search_live_stats *st);

#endif
