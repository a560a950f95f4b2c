/*
 * Tests for server/outq.c, over a real pipe whose buffer is shrunk to one page so that almost
 * every writev is partial. Rules under test: bytes come out exactly in commit order and whole;
 * the congested flag rises above the high watermark and the drain callback fires once per
 * episode when the queue falls below the low one; after EPIPE the broken callback fires once
 * and everything later is discarded; a stream of frame-sized lines reuses the queue's blocks
 * (no fresh pages, so no page faults, once warm) and gives them back soon after it ends.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <ev.h>

#include "io/outq.h"
#include "protocol/xmalloc.h"

#define PIPE_SIZE 4096

#ifdef __SANITIZE_ADDRESS__
/* ASan's runtime (its header is not installed by Debian's gcc). */
size_t __sanitizer_get_current_allocated_bytes(void);
#endif

/* Queue a whole line (reserve, copy, commit: what every producer does). */
static void
push(struct outq *q, const void *data, size_t n)
{
	memcpy(outq_reserve(q, n), data, n);
	outq_commit(q, n);
}

/* The reading side: drains the pipe into a growing buffer from an ev_io watcher. */
struct reader {
	ev_io io;
	int fd;
	char *buf;
	size_t len, cap;
	size_t want;	 /* break the loop once this much has arrived */
	size_t per_read; /* bytes taken per callback (small: the writer stays ahead) */
};

/* Counts of the queue's callbacks, and the pending size seen by the drain callback. */
struct events {
	struct outq *q;
	int drains;
	int brokens;
	size_t pending_at_drain;
	int congested_at_drain;
};

/* Take up to per_read bytes from the pipe; stop the loop once `want` bytes arrived. */
static void
reader_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct reader *r = container_of(w, struct reader, io);
	size_t take = r->per_read != 0 ? r->per_read : 65536;
	ssize_t n;

	if (r->cap - r->len < take) {
		r->cap = (r->cap + take) * 2;
		r->buf = xrealloc(r->buf, r->cap);
	}
	n = read(r->fd, r->buf + r->len, take);
	if (n < 0 && errno == EAGAIN)
		return;
	assert_true(n > 0);
	r->len += (size_t)n;
	if (r->len >= r->want)
		ev_break(loop, EVBREAK_ONE);
}

/* Count drains and note the queue state at the moment of the callback. */
static void
drain_cb(void *arg)
{
	struct events *e = arg;

	e->drains++;
	e->pending_at_drain = outq_pending(e->q);
	e->congested_at_drain = outq_congested(e->q);
}

/* Count broken-pipe callbacks. */
static void
broken_cb(void *arg)
{
	struct events *e = arg;

	e->brokens++;
}

/* A pipe with a one-page buffer; both ends non-blocking. */
static void
small_pipe(int fds[2])
{
	assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
	assert_true(fcntl(fds[1], F_SETPIPE_SZ, PIPE_SIZE) >= PIPE_SIZE);
}

/* Append a line to the expected stream and to the queue, by one of four routes. */
static void
put_line(struct outq *q, char **exp, size_t *explen, size_t i)
{
	char small[64], *line, *p;
	size_t n, pad, cap, done, part;

	/* Every 97th line is long (past one queue block), the rest short. */
	pad = i % 97 == 0 ? 70000 + i % 13 : i % 7;
	line = xmalloc(pad + 64);
	n = (size_t)snprintf(small, sizeof small, "{\"n\":%zu,\"pad\":\"", i);
	memcpy(line, small, n);
	memset(line + n, 'a' + (char)(i % 26), pad);
	n += pad;
	memcpy(line + n, "\"}\n", 3);
	n += 3;
	*exp = xrealloc(*exp, *explen + n);
	memcpy(*exp + *explen, line, n);
	*explen += n;
	switch (i % 4) {
	case 0:
		memcpy(outq_reserve(q, n), line, n);
		outq_commit(q, n);
		break;
	case 1:
		/* Reserve more than needed, commit exactly the line. */
		p = outq_reserve(q, n + 100);
		memcpy(p, line, n);
		outq_commit(q, n);
		break;
	case 3:
		/* Written into a reservation grown as it goes (outq_regrow), committed whole. */
		cap = 16;
		p = outq_reserve(q, cap);
		for (done = 0; done < n; done += part) {
			part = n - done < 1000 ? n - done : 1000;
			if (done + part > cap) {
				while (done + part > cap)
					cap *= 2;
				p = outq_regrow(q, done, cap);
			}
			memcpy(p + done, line + done, part);
		}
		outq_commit(q, n);
		break;
	default:
		/* A line committed in two parts, the second in a new reservation. */
		p = outq_reserve(q, 8);
		memcpy(p, line, 5);
		outq_commit(q, 5);
		memcpy(outq_reserve(q, n - 5), line + 5, n - 5);
		outq_commit(q, n - 5);
		break;
	}
	free(line);
}

static void
test_order_and_partial_writes(void **state)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct reader r = {.per_read = 1000};
	char *exp = NULL;
	size_t explen = 0, i;
	struct outq *q;
	int fds[2];

	small_pipe(fds);
	r.fd = fds[0];
	q = outq_new(loop, fds[1], 1 << 20, 256 << 10);
	ev_io_init(&r.io, reader_cb, fds[0], EV_READ);
	ev_io_start(loop, &r.io);
	/* Several rounds, so writes happen both from the loop and eagerly during commits. */
	for (i = 0; i < 3000; i++) {
		put_line(q, &exp, &explen, i);
		if (i % 500 == 499) {
			r.want = explen - 4096;
			ev_run(loop, 0);
		}
	}
	r.want = explen;
	ev_run(loop, 0);
	assert_int_equal(r.len, explen);
	assert_int_equal(outq_pending(q), 0);
	assert_memory_equal(r.buf, exp, explen);
	assert_int_equal(outq_broken(q), 0);
	ev_io_stop(loop, &r.io);
	outq_free(q);
	close(fds[0]);
	close(fds[1]);
	ev_loop_destroy(loop);
	free(r.buf);
	free(exp);
}

static void
test_watermarks_via_loop(void **state)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct reader r = {.per_read = 512};
	struct events e = {0};
	char line[100];
	size_t total = 0;
	struct outq *q;
	int fds[2];

	small_pipe(fds);
	r.fd = fds[0];
	q = outq_new(loop, fds[1], 16384, 4096);
	e.q = q;
	outq_set_drain_cb(q, drain_cb, &e);
	outq_set_broken_cb(q, broken_cb, &e);
	memset(line, 'x', sizeof line - 1);
	line[sizeof line - 1] = '\n';
	/* Up to the high watermark: not congested; one more line: congested. */
	while (total + sizeof line <= 16384) {
		push(q, line, sizeof line);
		total += sizeof line;
	}
	assert_int_equal(outq_congested(q), 0);
	push(q, line, sizeof line);
	total += sizeof line;
	assert_int_equal(outq_congested(q), 1);
	assert_int_equal(e.drains, 0);
	ev_io_init(&r.io, reader_cb, fds[0], EV_READ);
	ev_io_start(loop, &r.io);
	r.want = total;
	ev_run(loop, 0);
	assert_int_equal(r.len, total);
	assert_int_equal(e.drains, 1);
	assert_true(e.pending_at_drain < 4096);
	assert_int_equal(e.congested_at_drain, 0);
	assert_int_equal(outq_congested(q), 0);
	/* A second episode gives a second callback, exactly one. */
	for (int i = 0; i < 200; i++) {
		push(q, line, sizeof line);
		total += sizeof line;
	}
	assert_int_equal(outq_congested(q), 1);
	r.want = total;
	ev_run(loop, 0);
	assert_int_equal(e.drains, 2);
	assert_int_equal(e.brokens, 0);
	ev_io_stop(loop, &r.io);
	outq_free(q);
	close(fds[0]);
	close(fds[1]);
	ev_loop_destroy(loop);
	free(r.buf);
}

static void
test_drain_below_low_before_empty(void **state)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct events e = {0};
	char line[1000], sink[PIPE_SIZE];
	struct outq *q;
	int fds[2], rounds = 0;

	/*
	 * 20 KB queued, high 16 KB, low 8 KB, one page of pipe. Each round the reader empties
	 * the pipe and the loop writes one page more. The drain callback is due in the first
	 * round that leaves fewer than 8 KB queued, not only when the queue is empty.
	 */
	small_pipe(fds);
	q = outq_new(loop, fds[1], 16000, 8000);
	e.q = q;
	outq_set_drain_cb(q, drain_cb, &e);
	memset(line, 'z', sizeof line - 1);
	line[sizeof line - 1] = '\n';
	for (int i = 0; i < 20; i++)
		push(q, line, sizeof line);
	assert_int_equal(outq_congested(q), 1);
	while (outq_pending(q) >= 8000 && rounds++ < 100) {
		ev_run(loop, EVRUN_NOWAIT);
		while (read(fds[0], sink, sizeof sink) > 0)
			;
	}
	assert_true(outq_pending(q) < 8000);
	assert_true(outq_pending(q) > 0);
	if (e.drains != 1)
		fail_msg("drain callback not called with %zu bytes queued (low watermark 8000)",
			outq_pending(q));
	assert_int_equal(outq_congested(q), 0);
	outq_free(q);
	close(fds[0]);
	close(fds[1]);
	ev_loop_destroy(loop);
}

static void
test_epipe_broken_once(void **state)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct events e = {0};
	char line[200];
	struct outq *q;
	int fds[2];
	char *p;

	signal(SIGPIPE, SIG_IGN);
	small_pipe(fds);
	q = outq_new(loop, fds[1], 1 << 20, 1 << 18);
	e.q = q;
	outq_set_drain_cb(q, drain_cb, &e);
	outq_set_broken_cb(q, broken_cb, &e);
	memset(line, 'b', sizeof line - 1);
	line[sizeof line - 1] = '\n';
	push(q, line, sizeof line);
	close(fds[0]);
	ev_run(loop, EVRUN_NOWAIT);
	assert_int_equal(e.brokens, 1);
	assert_int_equal(outq_broken(q), 1);
	assert_int_equal(outq_pending(q), 0);
	/* Everything later is discarded without another callback, by every route. */
	for (int i = 0; i < 5000; i++) {
		push(q, line, sizeof line);
		p = outq_reserve(q, sizeof line);
		memcpy(p, line, sizeof line);
		outq_commit(q, sizeof line);
	}
	assert_int_equal(outq_pending(q), 0);
	assert_int_equal(outq_congested(q), 0);
	assert_int_equal(outq_flush(q), -1);
	assert_int_equal(outq_flush_wait(q, 100), -1);
	ev_run(loop, EVRUN_NOWAIT);
	assert_int_equal(e.brokens, 1);
	assert_int_equal(e.drains, 0);
	outq_free(q);
	close(fds[1]);
	ev_loop_destroy(loop);
}

static void
test_epipe_with_queue_backed_up(void **state)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct events e = {0};
	char line[1000];
	struct outq *q;
	int fds[2];

	/* The queue is congested and EV_WRITE armed when the reader goes away. */
	signal(SIGPIPE, SIG_IGN);
	small_pipe(fds);
	q = outq_new(loop, fds[1], 8000, 2000);
	e.q = q;
	outq_set_drain_cb(q, drain_cb, &e);
	outq_set_broken_cb(q, broken_cb, &e);
	memset(line, 'c', sizeof line - 1);
	line[sizeof line - 1] = '\n';
	for (int i = 0; i < 20; i++)
		push(q, line, sizeof line);
	ev_run(loop, EVRUN_NOWAIT);
	assert_true(outq_pending(q) > 0);
	close(fds[0]);
	ev_run(loop, EVRUN_NOWAIT);
	assert_int_equal(e.brokens, 1);
	assert_int_equal(outq_pending(q), 0);
	push(q, line, sizeof line);
	ev_run(loop, EVRUN_NOWAIT);
	assert_int_equal(e.brokens, 1);
	assert_int_equal(outq_pending(q), 0);
	outq_free(q);
	close(fds[1]);
	ev_loop_destroy(loop);
}

static void
test_flush_wait(void **state)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	char line[3000], sink[PIPE_SIZE];
	struct outq *q;
	int fds[2];

	/* Nobody reads: flush_wait gives up after its timeout; with room it empties the queue. */
	small_pipe(fds);
	q = outq_new(loop, fds[1], 1 << 20, 1 << 18);
	memset(line, 'd', sizeof line - 1);
	line[sizeof line - 1] = '\n';
	push(q, line, sizeof line);
	push(q, line, sizeof line);
	assert_int_equal(outq_flush_wait(q, 50), -1);
	assert_true(outq_pending(q) > 0);
	while (read(fds[0], sink, sizeof sink) > 0)
		;
	assert_int_equal(outq_flush_wait(q, 1000), 0);
	assert_int_equal(outq_pending(q), 0);
	outq_free(q);
	close(fds[0]);
	close(fds[1]);
	ev_loop_destroy(loop);
}

/* Minor page faults of this process so far. */
static long
minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Bytes malloc handed out (ASan's allocator keeps its own count). */
static size_t
malloced(void)
{
#ifdef __SANITIZE_ADDRESS__
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
#endif
}

/* Stop the loop (a timer standing in for time passing). */
static void
stop_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	ev_break(loop, EVBREAK_ALL);
}

static void
test_stream_reuses_blocks(void **state)
{
	enum { FRAME = 87400, BURST = 20, WARM = 5, ROUNDS = 40 };
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	static char frame[FRAME], sink[1 << 20];
	struct outq *q;
	ev_timer later;
	long before = 0, faults;
	size_t held;
	int fds[2];

	/*
	 * What a command's stream does to a client that reads in bursts: ~88 KB deltas fill the
	 * 1 MiB pipe and then the queue (8 blocks here), which the next read drains at once.
	 */
	assert_int_equal(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
	assert_true(fcntl(fds[1], F_SETPIPE_SZ, 1 << 20) >= 1 << 20);
	q = outq_new(loop, fds[1], 2 << 20, 1 << 20);
	memset(frame, 'z', sizeof frame);
	frame[FRAME - 1] = '\n';
	for (int r = 0; r < ROUNDS; r++) {
		if (r == WARM)
			before = minor_faults();
		for (int i = 0; i < BURST; i++) {
			memcpy(outq_reserve(q, FRAME + 96), frame, FRAME);
			outq_commit(q, FRAME);
		}
		while (outq_pending(q) > 0) {
			assert_int_equal(outq_flush(q), 0);
			while (read(fds[0], sink, sizeof sink) > 0)
				;
		}
	}
	faults = minor_faults() - before;
	print_message(
		"%ld minor faults for %d frames once warm\n", faults, (ROUNDS - WARM) * BURST);
	/* A fresh 128 KiB block costs ~22 faults as it is written: < 1 per 10 frames here. */
	assert_true(faults < (ROUNDS - WARM) * BURST / 10);
	/* Idle afterwards: spare blocks but one go back to malloc within two trim periods. */
	held = malloced();
	ev_timer_init(&later, stop_cb, 2.5, 0.);
	ev_timer_start(loop, &later);
	ev_run(loop, 0);
	print_message("malloc'd bytes %zu -> %zu after 2.5 s idle\n", held, malloced());
	assert_true(malloced() + 4 * 128 * 1024 <= held);
	outq_free(q);
	close(fds[0]);
	close(fds[1]);
	ev_loop_destroy(loop);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_partial_writes),
		cmocka_unit_test(test_watermarks_via_loop),
		cmocka_unit_test(test_drain_below_low_before_empty),
		cmocka_unit_test(test_epipe_broken_once),
		cmocka_unit_test(test_epipe_with_queue_backed_up),
		cmocka_unit_test(test_flush_wait),
		cmocka_unit_test(test_stream_reuses_blocks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
