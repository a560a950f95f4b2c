/*
 * One background thread with a FIFO of jobs, for disk work that must not run on the event loop
 * (fdatasync, directory fsync, index rebuilds). A job's run() executes on the worker thread; its
 * done() runs afterwards on the loop thread (posted back with ev_async); a worker without a
 * loop (unit tests, tools) keeps finished jobs until its owner calls worker_complete().
 *
 * The queue has a ceiling (WORKER_MAX_JOBS): a job posted beyond it runs inline on the caller's
 * thread, which slows the producer down instead of growing the queue (backpressure).
 */
#ifndef WORKER_H
#define WORKER_H

#include <ev.h>

#define WORKER_MAX_JOBS 65536

struct worker;

/* run(arg) on the worker thread, then done(arg) on the loop thread; either may be NULL. */
typedef void (*worker_fn)(void *arg);

/*
 * A worker whose completions go to loop (NULL: to whoever calls worker_complete); its thread
 * starts with the first job posted.
 */
struct worker *worker_new(struct ev_loop *loop, const char *name);
/* Queue a job; never fails (past the ceiling it runs inline). */
void worker_post(struct worker *w, worker_fn run, worker_fn done, void *arg);
/* Block until every job posted so far has run (done() callbacks may still be pending). */
void worker_drain(struct worker *w);
/* Run the done() callbacks that are ready, on the calling (loop) thread. */
void worker_complete(struct worker *w);
/* Jobs queued or running. */
unsigned worker_pending(struct worker *w);
/* Finish every queued job, run their done() callbacks, stop the thread. Accepts NULL. */
void worker_free(struct worker *w);

#endif
