/*
 * The output queue: a list of blocks written with writev. Ordering rule: bytes leave in the
 * order they were committed, and only whole committed bytes are written; a message is always
 * committed whole before control returns to the loop, so a line is never split between
 * writers or interleaved with another.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "outq.h"
#include "protocol/xmalloc.h"

#define OUTQ_BLOCK	 (128 * 1024)  /* holds one full outputDelta line (~88 KB) */
#define OUTQ_SPARE	 (512 * 1024)  /* largest block kept for reuse */
#define OUTQ_SPARE_BYTES (1280 * 1024) /* blocks kept for reuse, in all */
#define OUTQ_TRIM	 1.0	       /* seconds between returns of unused spares */
#define OUTQ_IOV	 32
#define OUTQ_EAGER	 (256 * 1024) /* flush inside a long callback past this much */

struct outq_block {
	struct outq_block *next;
	size_t cap;
	size_t start; /* first unwritten byte */
	size_t end;   /* end of committed bytes */
	char data[];
};

struct outq {
	struct ev_loop *loop;
	int fd;
	ev_io io;
	ev_io hup; /* EV_READ on a pipe's write end: fires only when the reader is gone */
	ev_prepare prepare;
	ev_timer trim;
	struct outq_block *head, *tail;
	/*
	 * Finished blocks kept for reuse: a stream in flight (up to the high watermark) then
	 * never calls malloc, whose fresh pages cost a fault each (16-18k per 400 MiB with a
	 * single spare). Those the queue did not need for OUTQ_TRIM seconds go back (trim).
	 */
	struct outq_block *spare;
	size_t spare_bytes, spare_idle; /* idle: the fewest bytes spare since the last trim */
	size_t pending;
	size_t high, low;
	int congested;
	int broken;
	void (*drain_cb)(void *);
	void *drain_arg;
	void (*broken_cb)(void *);
	void *broken_arg;
	/* A sink instead of fd (a WebSocket connection): it frames what it takes. */
	ssize_t (*sink)(void *, const struct iovec *, int);
	void *sink_arg;
	int sink_blocked; /* the sink said EAGAIN: it calls outq_flush when it has room */
	size_t limit;	  /* pending past this breaks the queue (ENOBUFS); 0: none */
};

static void outq_io_cb(struct ev_loop *, ev_io *, int);
static void outq_hup_cb(struct ev_loop *, ev_io *, int);
static void outq_prepare_cb(struct ev_loop *, ev_prepare *, int);
static void outq_trim_cb(struct ev_loop *, ev_timer *, int);

/* A queue writing to fd (non-blocking, owned by the caller). */
struct outq *
outq_new(struct ev_loop *loop, int fd, size_t high, size_t low)
{
	struct outq *q = xcalloc(1, sizeof *q);
	struct stat st;

	q->loop = loop;
	q->fd = fd;
	q->high = high;
	q->low = low < high ? low : high / 2;
	ev_io_init(&q->io, outq_io_cb, fd, EV_WRITE);
	ev_prepare_init(&q->prepare, outq_prepare_cb);
	ev_prepare_start(loop, &q->prepare);
	ev_unref(loop); /* the prepare watcher alone must not keep the loop alive */
	ev_timer_init(&q->trim, outq_trim_cb, OUTQ_TRIM, 0.);
	/*
	 * A client that closes our output while we have nothing to write would go unnoticed
	 * (a buffered command can read for minutes): on a pipe, the write end polls readable
	 * never, and in error once the reader is gone.
	 */
	ev_io_init(&q->hup, outq_hup_cb, fd, EV_READ);
	if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
		ev_io_start(loop, &q->hup);
		ev_unref(loop);
	}
	return q;
}

/*
 * A queue handing its bytes to sink instead of writing an fd: sink takes what it can of the
 * iovecs (whole lines or not) and returns how much, or -1 with errno (EAGAIN: it calls
 * outq_flush once it has room again; anything else breaks the queue).
 */
struct outq *
outq_new_sink(struct ev_loop *loop, ssize_t (*sink)(void *, const struct iovec *, int), void *arg,
	size_t high, size_t low)
{
	struct outq *q = xcalloc(1, sizeof *q);

	q->loop = loop;
	q->fd = -1;
	q->high = high;
	q->low = low < high ? low : high / 2;
	q->sink = sink;
	q->sink_arg = arg;
	ev_io_init(&q->io, outq_io_cb, -1, EV_WRITE);
	ev_io_init(&q->hup, outq_hup_cb, -1, EV_READ);
	ev_prepare_init(&q->prepare, outq_prepare_cb);
	ev_prepare_start(loop, &q->prepare);
	ev_unref(loop);
	ev_timer_init(&q->trim, outq_trim_cb, OUTQ_TRIM, 0.);
	return q;
}

/* Past limit pending bytes the queue breaks (a client that stopped reading); 0: no limit. */
void
outq_set_limit(struct outq *q, size_t limit)
{
	q->limit = limit;
}

static void
outq_block_free_list(struct outq_block *b)
{
	struct outq_block *next;

	for (; b != NULL; b = next) {
		next = b->next;
		free(b);
	}
}

/* Free the queue; unwritten data is lost (flush first). */
void
outq_free(struct outq *q)
{
	if (q == NULL)
		return;
	ev_io_stop(q->loop, &q->io);
	ev_ref(q->loop);
	ev_prepare_stop(q->loop, &q->prepare);
	if (ev_is_active(&q->hup)) {
		ev_ref(q->loop);
		ev_io_stop(q->loop, &q->hup);
	}
	if (ev_is_active(&q->trim)) {
		ev_ref(q->loop);
		ev_timer_stop(q->loop, &q->trim);
	}
	outq_block_free_list(q->head);
	outq_block_free_list(q->spare);
	free(q);
}

/* A spare block of at least cap bytes, or NULL. */
static struct outq_block *
outq_spare_take(struct outq *q, size_t cap)
{
	struct outq_block **pp, *b;

	for (pp = &q->spare; (b = *pp) != NULL; pp = &b->next)
		if (b->cap >= cap) {
			*pp = b->next;
			q->spare_bytes -= b->cap;
			if (q->spare_bytes < q->spare_idle)
				q->spare_idle = q->spare_bytes;
			return b;
		}
	return NULL;
}

/* Keep a finished block for reuse when there is room for it, else free it. */
static void
outq_spare_put(struct outq *q, struct outq_block *b)
{
	if (b->cap > OUTQ_SPARE || q->spare_bytes + b->cap > OUTQ_SPARE_BYTES) {
		free(b);
		return;
	}
	b->next = q->spare;
	q->spare = b;
	q->spare_bytes += b->cap;
	if (!ev_is_active(&q->trim)) {
		q->spare_idle = q->spare_bytes;
		ev_timer_set(&q->trim, OUTQ_TRIM, 0.);
		ev_timer_start(q->loop, &q->trim);
		ev_unref(q->loop); /* spares alone must not keep the loop alive */
	}
}

/*
 * Every OUTQ_TRIM seconds while there are spares: free those the queue did not need since
 * the last time (spare_idle bytes stayed unused throughout), keeping one block, so memory
 * taken by a stream goes back soon after it ends.
 */
static void
outq_trim_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct outq *q = container_of(w, struct outq, trim);
	struct outq_block *b;

	ev_ref(loop); /* the timer stopped itself: balance outq_spare_put's unref */
	while ((b = q->spare) != NULL && b->next != NULL && q->spare_idle >= b->cap) {
		q->spare = b->next;
		q->spare_bytes -= b->cap;
		q->spare_idle -= b->cap;
		free(b);
	}
	if (q->spare != NULL && q->spare->next != NULL) {
		q->spare_idle = q->spare_bytes;
		ev_timer_set(&q->trim, OUTQ_TRIM, 0.);
		ev_timer_start(loop, &q->trim);
		ev_unref(loop);
	}
}

/* Contiguous room for n bytes at the tail; write into it, then outq_commit. */
char *
outq_reserve(struct outq *q, size_t n)
{
	struct outq_block *b = q->tail;
	size_t cap;

	if (b != NULL && b->cap - b->end >= n)
		return b->data + b->end;
	cap = n > OUTQ_BLOCK ? n : OUTQ_BLOCK;
	if ((b = outq_spare_take(q, cap)) == NULL) {
		b = xmalloc(sizeof *b + cap);
		b->cap = cap;
	}
	b->next = NULL;
	b->start = b->end = 0;
	if (q->tail != NULL)
		q->tail->next = b;
	else
		q->head = b;
	q->tail = b;
	return b->data;
}

char *
outq_regrow(struct outq *q, size_t keep, size_t n)
{
	struct outq_block *b = q->tail, *nb;
	size_t cap;

	if (b != NULL && b->cap - b->end >= n)
		return b->data + b->end;
	/* A tail holding nothing committed is ours alone: grow it in place. */
	if (b != NULL && b->start == b->end && b->end == 0) {
		nb = xrealloc(b, sizeof *b + n);
		nb->cap = n;
		if (q->head == b)
			q->head = nb;
		else {
			struct outq_block *p = q->head;

			while (p->next != b)
				p = p->next;
			p->next = nb;
		}
		q->tail = nb;
		return nb->data;
	}
	cap = n > OUTQ_BLOCK ? n : OUTQ_BLOCK;
	nb = xmalloc(sizeof *nb + cap);
	nb->cap = cap;
	nb->next = NULL;
	nb->start = nb->end = 0;
	if (b != NULL) {
		memcpy(nb->data, b->data + b->end, keep);
		b->next = nb;
	} else
		q->head = nb;
	q->tail = nb;
	return nb->data;
}

static void outq_set_broken(struct outq *q, int err);

static void
outq_update(struct outq *q)
{
	if (!q->congested && q->pending > q->high)
		q->congested = 1;
	if (q->limit > 0 && q->pending > q->limit) {
		outq_set_broken(q, ENOBUFS);
		return;
	}
	if (q->pending >= OUTQ_EAGER && !ev_is_active(&q->io) && !q->sink_blocked)
		outq_flush(q);
}

/* Append the first n bytes of the last reservation. */
void
outq_commit(struct outq *q, size_t n)
{
	if (q->broken) {
		q->tail->end = q->tail->start; /* discard */
		return;
	}
	q->tail->end += n;
	q->pending += n;
	outq_update(q);
}

size_t
outq_pending(const struct outq *q)
{
	return q->pending;
}

int
outq_congested(const struct outq *q)
{
	return q != NULL && q->congested; /* NULL: an owner that never pauses */
}

int
outq_broken(const struct outq *q)
{
	return q->broken;
}

void
outq_set_drain_cb(struct outq *q, void (*cb)(void *), void *arg)
{
	q->drain_cb = cb;
	q->drain_arg = arg;
}

void
outq_set_broken_cb(struct outq *q, void (*cb)(void *), void *arg)
{
	q->broken_cb = cb;
	q->broken_arg = arg;
}

/* Account n written bytes: drop finished blocks from the head, kept as spares for reuse. */
static void
outq_consume(struct outq *q, size_t n)
{
	struct outq_block *b;
	size_t take;

	q->pending -= n;
	while ((b = q->head) != NULL) {
		take = b->end - b->start < n ? b->end - b->start : n;
		b->start += take;
		n -= take;
		if (b->start < b->end)
			break;
		if (b == q->tail) {
			b->start = b->end = 0; /* empty: reuse from its beginning */
			break;
		}
		q->head = b->next;
		outq_spare_put(q, b);
	}
}

static void
outq_set_broken(struct outq *q, int err)
{
	if (q->broken)
		return;
	q->broken = 1;
	log_info("protocol output closed: %s", strerror(err));
	ev_io_stop(q->loop, &q->io);
	if (ev_is_active(&q->hup)) {
		ev_ref(q->loop);
		ev_io_stop(q->loop, &q->hup);
	}
	outq_block_free_list(q->head);
	q->head = q->tail = NULL;
	q->pending = 0;
	if (q->broken_cb != NULL)
		q->broken_cb(q->broken_arg);
}

/* Leaving congestion below the low watermark tells the producers to resume. */
static void
outq_check_low(struct outq *q)
{
	if (q->congested && q->pending < q->low) {
		q->congested = 0;
		if (q->drain_cb != NULL)
			q->drain_cb(q->drain_arg);
	}
}

/* Write what can be written now without blocking; 0, or -1 when broken. */
int
outq_flush(struct outq *q)
{
	struct iovec iov[OUTQ_IOV];
	struct outq_block *b;
	ssize_t n;
	int cnt;

	q->sink_blocked = 0;
	while (q->pending > 0 && !q->broken) {
		cnt = 0;
		for (b = q->head; b != NULL && cnt < OUTQ_IOV; b = b->next) {
			if (b->end == b->start)
				continue;
			iov[cnt].iov_base = b->data + b->start;
			iov[cnt].iov_len = b->end - b->start;
			cnt++;
		}
		n = q->sink != NULL ? q->sink(q->sink_arg, iov, cnt) : writev(q->fd, iov, cnt);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN && q->sink != NULL) {
				q->sink_blocked = 1;
				outq_check_low(q);
				return 0;
			}
			if (errno == EAGAIN) {
				if (!ev_is_active(&q->io))
					ev_io_start(q->loop, &q->io);
				outq_check_low(q);
				return 0;
			}
			outq_set_broken(q, errno);
			return -1;
		}
		outq_consume(q, (size_t)n);
	}
	if (ev_is_active(&q->io))
		ev_io_stop(q->loop, &q->io);
	outq_check_low(q);
	return q->broken ? -1 : 0;
}

static void
outq_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct outq *q = container_of(w, struct outq, io);

	outq_flush(q);
}

/* The pipe's reader may be gone: make sure, then treat it as a failed write. */
static void
outq_hup_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct outq *q = container_of(w, struct outq, hup);
	struct pollfd pfd = {.fd = q->fd, .events = POLLOUT};

	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLERR | POLLHUP)) != 0)
		outq_set_broken(q, EPIPE);
}

static void
outq_prepare_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct outq *q = container_of(w, struct outq, prepare);

	if (q->pending > 0 && !ev_is_active(&q->io) && !q->sink_blocked)
		outq_flush(q);
}

/*
 * Block (poll) to write everything, giving up only after idle_ms in which the client took
 * nothing: a slow reader still gets every line whole. 0 when empty, -1 otherwise.
 */
int
outq_flush_wait(struct outq *q, int idle_ms)
{
	struct timespec last, now;
	struct pollfd pfd = {.fd = q->fd, .events = POLLOUT};
	size_t before;
	long left;

	clock_gettime(CLOCK_MONOTONIC, &last);
	for (;;) {
		before = q->pending;
		if (outq_flush(q) != 0)
			return -1;
		if (q->pending == 0)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (q->pending < before)
			last = now;
		left = idle_ms -
			((now.tv_sec - last.tv_sec) * 1000 +
				(now.tv_nsec - last.tv_nsec) / 1000000);
		if (left <= 0)
			return -1;
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -1;
	}
}
