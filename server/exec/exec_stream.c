/*
 * A process's output streams and its stdin. Output is either captured (bounded by the cap,
 * EXEC_ANSWER_MAX and the owner's budget) or streamed as frames of at most EXEC_FRAME decoded
 * bytes: each read callback drains its fd until EAGAIN or a full frame and sends what it
 * has, so fast output makes big frames and slow output goes out at once.
 * Backpressure: a streaming read stops while the output queue is congested and resumes when
 * it drains; the child then blocks in write(2) and memory stays bounded.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exec_int.h"
#include "io/log.h"
#include "io/outq.h"
#include "protocol/base64.h"
#include "protocol/xmalloc.h"

static void exec_stream_cb(struct ev_loop *, ev_io *, int);

/* Bytes read, before they are encoded: one loop thread, so one scratch buffer for all. */
static char exec_scratch[EXEC_FRAME];

/*
 * One frame line, built in the output queue while its bytes are read: each read's bytes are
 * base64-encoded at once (whole 3-byte groups; the 0-2 left over wait at the start of the
 * scratch buffer for the next read). Encoding between reads lets the kernel refill a PTY's
 * small read buffer meanwhile, instead of stalling it for a whole frame's encoding.
 */
struct exec_frame {
	char *start, *w, *end; /* the reservation, where the next base64 goes; start NULL: none */
	size_t have;	       /* decoded bytes in the frame, carried ones included */
	size_t carry;	       /* bytes at the start of the scratch buffer not yet encoded */
};

#define EXEC_FRAME_TAIL 96 /* room for the line's end: capReached, the timestamp */

/*
 * Room for n more decoded bytes and the line's end. The first reservation fits the first
 * read, so small outputs stay small in the queue; a frame that grows asks once for the rest
 * of a full frame (the same memory when the queue's block has room, else a copy).
 */
static void
exec_stream_frame_room(struct exec_proc *p, struct exec_frame *f, size_t n)
{
	size_t used = (size_t)(f->w - f->start), want;
	char *at;

	if ((size_t)(f->end - f->w) >= base64_encoded_len(n + 2) + EXEC_FRAME_TAIL)
		return;
	want = used + base64_encoded_len(EXEC_FRAME - f->have + 2) + EXEC_FRAME_TAIL;
	at = outq_reserve(p->o.q, want);
	if (at != f->start)
		memcpy(at, f->start, used);
	f->start = at;
	f->w = at + used;
	f->end = at + want;
}

/* Start a frame of stream s in the output queue, with room for n bytes. */
static void
exec_stream_frame_open(struct exec_proc *p, struct exec_stream *s, struct exec_frame *f, size_t n)
{
	const char *head = p->o.head[s->which];
	size_t hl = strlen(head), want = hl + base64_encoded_len(n + 2) + EXEC_FRAME_TAIL;

	f->start = f->w = outq_reserve(p->o.q, want);
	f->end = f->start + want;
	memcpy(f->w, head, hl);
	f->w += hl;
	f->have = f->carry = 0;
}

/* Add n bytes read into buf + f->carry (buf is the scratch buffer). */
static void
exec_stream_frame_add(struct exec_frame *f, char *buf, size_t n)
{
	size_t all = f->carry + n, whole = all - all % 3;

	base64_encode(buf, whole, f->w);
	f->w += base64_encoded_len(whole);
	f->carry = all - whole;
	memmove(buf, buf + whole, f->carry);
	f->have += n;
}

/* Finish the line (the carried bytes, then the owner's tail) and queue it. */
static void
exec_stream_frame_send(struct exec_proc *p, struct exec_frame *f, const char *buf, int cap)
{
	base64_encode(buf, f->carry, f->w);
	f->w += base64_encoded_len(f->carry);
	f->w += p->o.frame_tail(f->w, EXEC_FRAME_TAIL, cap);
	outq_commit(p->o.q, (size_t)(f->w - f->start));
	f->start = NULL;
	f->have = f->carry = 0;
}

/* Keep what fits under the cap; remember that bytes were dropped. */
static size_t
exec_stream_cap(struct exec_proc *p, struct exec_stream *s, size_t n)
{
	size_t room = p->o.cap - s->total;

	if (n > room) {
		s->dropped = 1;
		n = room;
	}
	s->total += n;
	return n;
}

/*
 * Append to the buffered capture (not streaming), within the capture ceiling and the owner's
 * budget; what does not fit is dropped and the process says so (exec_clipped).
 */
static void
exec_stream_capture(struct exec_proc *p, struct exec_stream *s, const char *data, size_t n)
{
	size_t room = s->cap.max - s->cap.len;

	if (n > EXEC_CAPTURE_BUDGET - *p->o.budget)
		room = 0; /* the budget is spent: keep nothing more */
	if (n > room) {
		p->flags |= EXEC_CLIPPED;
		n = room;
	}
	if (n == 0 || buf_add(&s->cap, data, n) != 0)
		return;
	*p->o.budget += n;
}

/*
 * Stop watching a stream at EOF. A PTY master stays open until the child is reaped: the slave
 * can reach EIO while the child still runs its exit handlers, and closing the master then
 * would send it SIGHUP.
 */
void
exec_stream_close(struct exec_proc *p, struct exec_stream *s)
{
	if (s->fd < 0)
		return;
	ev_io_stop(p->o.loop, &s->io);
	s->eof = 1;
	if (s == &p->out && (p->flags & EXEC_PTY)) {
		p->flags &= ~(unsigned)EXEC_STDIN_OPEN;
		if (p->state == EXEC_RUNNING)
			return;
	}
	close(s->fd);
	s->fd = -1;
}

/* The events a stream's watcher wants: reads unless paused; a PTY also writes queued stdin. */
void
exec_stream_update(struct exec_proc *p, struct exec_stream *s)
{
	int want = 0;

	if (s->fd < 0 || s->eof)
		return;
	if (!s->paused && !s->held)
		want |= EV_READ;
	if ((p->flags & EXEC_PTY) && s == &p->out && p->in_off < p->in.len)
		want |= EV_WRITE;
	if (ev_is_active(&s->io) && (s->io.events & (EV_READ | EV_WRITE)) == want)
		return;
	ev_io_stop(p->o.loop, &s->io);
	if (want != 0) {
		ev_io_set(&s->io, s->fd, want);
		ev_io_start(p->o.loop, &s->io);
	}
}

/* Read what the stream has (bounded), capture or stream it. Returns 1 at EOF. */
int
exec_stream_read(struct exec_proc *p, struct exec_stream *s)
{
	char *buf = exec_scratch;
	struct exec_frame f = {0};
	int eof = 0, frames = 0, reads = 0, deltas = p->o.streaming && p->o.frames;
	size_t keep;
	ssize_t n;

	while (reads++ < 16) { /* bounded: let the other fds have a turn */
		if (s->held)
			break; /* the owner's output callback asked for a pause */
		if (p->o.streaming && outq_congested(p->o.q)) {
			s->paused = 1;
			break;
		}
		n = read(s->fd, buf + f.carry, EXEC_FRAME - f.have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN)
			eof = 1; /* EIO: the PTY's last slave closed */
		if (n <= 0) {
			eof |= n == 0;
			break;
		}
		if (p->flags & EXEC_MUTED)
			continue;
		keep = exec_stream_cap(p, s, (size_t)n);
		if (!p->o.streaming) {
			exec_stream_capture(p, s, buf, keep);
			continue;
		}
		if (p->o.output != NULL) {
			if (keep > 0)
				p->o.output(p->o.arg, s->which, buf, keep);
			continue;
		}
		if (!deltas || (keep == 0 && (s->cap_sent || !s->dropped)))
			continue; /* nothing to add, and no capReached to tell */
		if (f.start == NULL)
			exec_stream_frame_open(p, s, &f, keep);
		exec_stream_frame_room(p, &f, keep);
		exec_stream_frame_add(&f, buf, keep);
		if (s->dropped && !s->cap_sent) {
			exec_stream_frame_send(p, &f, buf, 1);
			s->cap_sent = 1;
		} else if (f.have == EXEC_FRAME) {
			exec_stream_frame_send(p, &f, buf, 0);
			if (++frames == 4)
				break;
		}
	}
	if (f.start != NULL)
		exec_stream_frame_send(p, &f, buf, 0);
	return eof;
}

static void
exec_stream_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct exec_stream *s = container_of(w, struct exec_stream, io);
	struct exec_proc *p = s->proc;

	if ((revents & EV_WRITE) != 0)
		exec_stdin_flush(p);
	if ((revents & EV_READ) != 0 && s->fd >= 0 && !s->eof && exec_stream_read(p, s))
		exec_stream_close(p, s);
	exec_stream_update(p, s);
	exec_check(p);
}

/* Start watching a stream (fd -1: none). */
void
exec_stream_init(struct exec_proc *p, struct exec_stream *s, int fd, int which)
{
	s->proc = p;
	s->fd = fd;
	s->which = which;
	buf_init(&s->cap, EXEC_ANSWER_MAX);
	ev_io_init(&s->io, exec_stream_cb, fd < 0 ? 0 : fd, EV_READ);
	exec_stream_update(p, s);
}
