/*
 * The background worker (worker.h). Locking rule: `mu` guards both queues and the counters; a
 * job's run() and done() are called with no lock held. Jobs leave `todo` in FIFO order and enter
 * `finished` in the same order, so done() callbacks run in posting order too.
 */
#include <sys/prctl.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/queue.h>

#include "worker.h"
#include "protocol/xmalloc.h"

struct worker_job {
	STAILQ_ENTRY(worker_job) entry;
	worker_fn run, done;
	void *arg;
};

STAILQ_HEAD(worker_jobs, worker_job);

struct worker {
	struct ev_loop *loop;
	ev_async async; /* wakes the loop when `finished` gains a job */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cond;	 /* the thread waits for work */
	pthread_cond_t idle;	 /* drainers wait for `running` and `todo` to empty */
	struct worker_jobs todo; /* posted, not run yet */
	struct worker_jobs finished;
	unsigned queued, running;
	int started; /* the thread exists: it starts with the first job posted */
	int stopping;
	char name[16]; /* the thread's name (set by the thread itself), or "" */
};

static void worker_async_cb(struct ev_loop *loop, ev_async *a, int revents);

/* The thread: take the oldest job, run it, hand it to the loop. */
static void *
worker_main(void *arg)
{
	struct worker *w = arg;

	/* Named from inside: from the loop it is an open and a write of /proc/.../comm. */
	if (w->name[0] != '\0')
		prctl(PR_SET_NAME, w->name);
	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct worker_job *j = STAILQ_FIRST(&w->todo);

		if (j == NULL) {
			if (w->stopping)
				break;
			pthread_cond_wait(&w->cond, &w->mu);
			continue;
		}
		STAILQ_REMOVE_HEAD(&w->todo, entry);
		w->queued--;
		w->running++;
		pthread_mutex_unlock(&w->mu);
		if (j->run != NULL)
			j->run(j->arg);
		pthread_mutex_lock(&w->mu);
		STAILQ_INSERT_TAIL(&w->finished, j, entry);
		if (w->loop != NULL)
			ev_async_send(w->loop, &w->async);
		w->running--;
		if (w->running == 0 && STAILQ_EMPTY(&w->todo))
			pthread_cond_broadcast(&w->idle);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/*
 * Start the thread (under mu, at the first job: a store opens four workers and a thread's
 * start costs ~50 us of the loop); its signals stay blocked so the loop thread gets them all.
 */
static void
worker_start(struct worker *w)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
		abort(); /* no thread: nothing sensible to fall back on */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	w->started = 1;
}

struct worker *
worker_new(struct ev_loop *loop, const char *name)
{
	struct worker *w = xcalloc(1, sizeof *w);

	w->loop = loop;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cond, NULL);
	pthread_cond_init(&w->idle, NULL);
	STAILQ_INIT(&w->todo);
	STAILQ_INIT(&w->finished);
	if (loop != NULL) {
		ev_async_init(&w->async, worker_async_cb);
		ev_async_start(loop, &w->async);
		ev_unref(loop); /* an idle worker does not keep the loop alive */
	}
	if (name != NULL)
		snprintf(w->name, sizeof w->name, "%s", name);
	return w;
}

/* Queue, or run inline past the ceiling. */
void
worker_post(struct worker *w, worker_fn run, worker_fn done, void *arg)
{
	struct worker_job *j;

	pthread_mutex_lock(&w->mu);
	if (w->queued >= WORKER_MAX_JOBS) {
		pthread_mutex_unlock(&w->mu);
		if (run != NULL)
			run(arg);
		if (done != NULL)
			done(arg);
		return;
	}
	j = xcalloc(1, sizeof *j);
	j->run = run;
	j->done = done;
	j->arg = arg;
	STAILQ_INSERT_TAIL(&w->todo, j, entry);
	w->queued++;
	if (!w->started)
		worker_start(w);
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->mu);
}

/* Wait until the thread has nothing queued or running. */
void
worker_drain(struct worker *w)
{
	pthread_mutex_lock(&w->mu);
	while (w->running != 0 || !STAILQ_EMPTY(&w->todo))
		pthread_cond_wait(&w->idle, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

/* Take the finished jobs and call their done() on this thread. */
void
worker_complete(struct worker *w)
{
	struct worker_jobs batch = STAILQ_HEAD_INITIALIZER(batch);
	struct worker_job *j;

	pthread_mutex_lock(&w->mu);
	STAILQ_CONCAT(&batch, &w->finished);
	pthread_mutex_unlock(&w->mu);
	while ((j = STAILQ_FIRST(&batch)) != NULL) {
		STAILQ_REMOVE_HEAD(&batch, entry);
		if (j->done != NULL)
			j->done(j->arg);
		free(j);
	}
}

/* Jobs not finished yet. */
unsigned
worker_pending(struct worker *w)
{
	unsigned n;

	pthread_mutex_lock(&w->mu);
	n = w->queued + w->running;
	pthread_mutex_unlock(&w->mu);
	return n;
}

/* The loop side of the async: finished jobs are waiting. */
static void
worker_async_cb(struct ev_loop *loop, ev_async *a, int revents)
{
	struct worker *w = container_of(a, struct worker, async);

	worker_complete(w);
}

/* Finish everything, then stop. */
void
worker_free(struct worker *w)
{
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->mu);
	w->stopping = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->mu);
	if (w->started)
		pthread_join(w->thread, NULL);
	worker_complete(w);
	if (w->loop != NULL) {
		ev_ref(w->loop);
		ev_async_stop(w->loop, &w->async);
	}
	pthread_cond_destroy(&w->idle);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
