/*
 * Requests tried again a little later (thread.h: thread_retry_later). The one use: a
 * thread/resume right after a daemon was killed can find the thread's rollout lock still held
 * by a child the dead daemon had forked and that had not exec'd yet (a sandbox's set-up holds
 * the daemon's fds until its exec or its end: rollout_lock.h), a matter of milliseconds. The
 * request waits on a timer, never on the loop, and is answered with the error after two
 * seconds.
 */
#include <sys/queue.h>

#include <stdlib.h>

#include <ev.h>

#include "thread.h"
#include "session.h"
#include "protocol/xmalloc.h"

#define THREAD_RETRY_DELAY 0.025 /* seconds between tries */
#define THREAD_RETRY_TRIES 80

struct thread_retry {
	TAILQ_ENTRY(thread_retry) entry;
	struct session *s;
	struct rpc_req *req;
	json_t *params;
	void (*fn)(struct session *, struct rpc_req *, json_t *);
	int tries;
	int again; /* the run asked to be tried again */
	ev_timer timer;
};

static TAILQ_HEAD(, thread_retry) thread_retries = TAILQ_HEAD_INITIALIZER(thread_retries);
static struct thread_retry *thread_retrying; /* the retry whose run is on now */

static void
thread_retry_free(struct thread_retry *x)
{
	TAILQ_REMOVE(&thread_retries, x, entry);
	ev_timer_stop(x->s->loop, &x->timer);
	json_decref(x->params);
	free(x);
}

void
thread_retries_drop(struct session *s)
{
	struct thread_retry *x, *next;

	for (x = TAILQ_FIRST(&thread_retries); x != NULL; x = next) {
		next = TAILQ_NEXT(x, entry);
		if (s == NULL || x->s == s)
			thread_retry_free(x);
	}
}

static void
thread_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct thread_retry *x = container_of(w, struct thread_retry, timer);

	(void)loop;
	(void)revents;
	x->again = 0;
	thread_retrying = x;
	x->fn(x->s, x->req, x->params);
	thread_retrying = NULL;
	if (!x->again) /* answered, or handed on (an MCP gate holds it now) */
		thread_retry_free(x);
}

int
thread_retry_later(struct session *s, struct rpc_req *req, json_t *params,
	void (*fn)(struct session *, struct rpc_req *, json_t *))
{
	struct thread_retry *x = thread_retrying;

	if (x == NULL || x->req != req) {
		x = xcalloc(1, sizeof *x);
		x->s = s;
		x->req = req;
		x->params = json_incref(params);
		x->fn = fn;
		ev_init(&x->timer, thread_retry_cb);
		TAILQ_INSERT_TAIL(&thread_retries, x, entry);
	} else if (++x->tries >= THREAD_RETRY_TRIES) {
		return -1;
	}
	x->again = 1;
	ev_timer_set(&x->timer, THREAD_RETRY_DELAY, 0.);
	ev_timer_start(s->loop, &x->timer);
	return 0;
}
