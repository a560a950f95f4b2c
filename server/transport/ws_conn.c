/*
 * A WebSocket connection on libev. Rules it keeps:
 *  - The upgrade request has handshake_timeout seconds and a size ceiling in all (a slowloris
 *    client holds one fd for that long, no more); anything but a 101 closes after the answer.
 *  - wslay does the framing (masking required of the client, control frames, fragmentation,
 *    close handshake, max_message: a frame header announcing more closes with 1009 before a
 *    payload byte is buffered). Messages are buffered whole, one JSON-RPC message each.
 *  - Output: the owner's lines go into an outq whose sink (ws_conn_sink) queues each line as one
 *    text message in wslay, at most WS_WSLAY_BOUND bytes of them; past that the sink says
 *    EAGAIN, the outq fills, goes congested, and reading stops (the owner's producers pause);
 *    past out_limit the queue breaks and the connection is dropped with a logged reason.
 *  - The owner hears `closed` once, from an idle watcher (never from inside a producer's
 *    commit or a wslay callback), and frees the connection afterwards.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <wslay/wslay.h>

#include "io/log.h"
#include "io/outq.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "ws_conn.h"
#include "ws_http.h"

#define WS_HANDSHAKE_MAX (16 * 1024)   /* request line and headers */
#define WS_WSLAY_BOUND	 (1024 * 1024) /* bytes of messages handed to wslay, unsent */
#define WS_CLOSE_WAIT	 5.0	       /* seconds the peer has to answer our close frame */
#define WS_READ_CHUNK	 16384
#define WS_GATHER	 (64 * 1024) /* frames gathered for one send(2) */

enum ws_state { WS_HANDSHAKE, WS_OPEN, WS_DEAD };

struct ws_conn {
	LIST_ENTRY(ws_conn) entry; /* while unopened: ws_conn_reap_unopened frees these */
	struct ev_loop *loop;
	int fd;
	enum ws_state state;
	unsigned id;
	char name[16];
	ev_io io;
	ev_timer timer; /* the handshake's deadline, then the close's */
	ev_idle end;	/* tells the owner `closed`, outside any other callback */
	struct ws_conn_limits lim;
	const struct ws_conn_ops *ops;
	void *lctx, *arg;
	int opened, told, paused, eof;
	const char *why;
	struct ws_http *http;
	struct buf pre;	  /* bytes read past the upgrade request: the first frames */
	struct buf carry; /* a line the outq handed over in pieces */
	struct buf out;	  /* frames wslay handed over, not written yet (ws_conn_send_cb) */
	wslay_event_context_ptr ws;
	struct outq *q;
};

static LIST_HEAD(, ws_conn) ws_unopened = LIST_HEAD_INITIALIZER(ws_unopened);
static unsigned ws_next_id;

static void ws_conn_io_cb(struct ev_loop *, ev_io *, int);
static void ws_conn_timer_cb(struct ev_loop *, ev_timer *, int);
static void ws_conn_end_cb(struct ev_loop *, ev_idle *, int);
static void ws_conn_update(struct ws_conn *c);

/* The connection is over: stop its fd now, tell the owner from the idle watcher. */
static void
ws_conn_die(struct ws_conn *c, const char *why)
{
	if (c->state == WS_DEAD)
		return;
	c->state = WS_DEAD;
	c->why = why;
	ev_io_stop(c->loop, &c->io);
	ev_timer_stop(c->loop, &c->timer);
	if (c->fd >= 0) {
		close(c->fd);
		c->fd = -1;
	}
	if (c->opened)
		ev_idle_start(c->loop, &c->end);
}

struct ws_conn *
ws_conn_new(struct ev_loop *loop, int fd, const struct ws_conn_limits *lim,
	const struct ws_conn_ops *ops, void *lctx)
{
	struct ws_conn *c = xcalloc(1, sizeof *c);

	c->loop = loop;
	c->fd = fd;
	c->lim = *lim;
	c->ops = ops;
	c->lctx = lctx;
	c->id = ++ws_next_id;
	snprintf(c->name, sizeof c->name, "#%u", c->id);
	c->http = ws_http_new(WS_HANDSHAKE_MAX);
	buf_init(&c->pre, WS_HANDSHAKE_MAX);
	buf_init(&c->carry, lim->max_message + 1);
	buf_init(&c->out, WS_GATHER);
	ev_io_init(&c->io, ws_conn_io_cb, fd, EV_READ);
	ev_io_start(loop, &c->io);
	ev_timer_init(&c->timer, ws_conn_timer_cb, lim->handshake_timeout, 0.);
	ev_timer_start(loop, &c->timer);
	ev_idle_init(&c->end, ws_conn_end_cb);
	LIST_INSERT_HEAD(&ws_unopened, c, entry);
	return c;
}

void
ws_conn_free(struct ws_conn *c)
{
	if (c == NULL)
		return;
	if (!c->opened)
		LIST_REMOVE(c, entry);
	ev_io_stop(c->loop, &c->io);
	ev_timer_stop(c->loop, &c->timer);
	ev_idle_stop(c->loop, &c->end);
	if (c->fd >= 0)
		close(c->fd);
	if (c->ws != NULL)
		wslay_event_context_free(c->ws);
	outq_free(c->q);
	ws_http_free(c->http);
	buf_free(&c->pre);
	buf_free(&c->carry);
	buf_free(&c->out);
	free(c);
}

/* Free every connection still in its upgrade (daemon exit). */
void
ws_conn_reap_unopened(void)
{
	while (!LIST_EMPTY(&ws_unopened))
		ws_conn_free(LIST_FIRST(&ws_unopened));
}

struct outq *
ws_conn_outq(struct ws_conn *c)
{
	return c->q;
}

int
ws_conn_dead(const struct ws_conn *c)
{
	return c->state == WS_DEAD;
}

const char *
ws_conn_name(const struct ws_conn *c)
{
	return c->name;
}

static void
ws_conn_end_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct ws_conn *c = container_of(w, struct ws_conn, end);

	ev_idle_stop(loop, w);
	if (c->told)
		return;
	c->told = 1;
	c->ops->closed(c->arg, c->why);
}

static void
ws_conn_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct ws_conn *c = container_of(w, struct ws_conn, timer);

	if (c->state == WS_HANDSHAKE) {
		log_info("ws %s: no complete upgrade request within %.0f s: closed", c->name,
			c->lim.handshake_timeout);
		ws_conn_die(c, "handshake timeout");
		ws_conn_free(c);
		return;
	}
	log_info("ws %s: no answer to our close frame within %.0f s", c->name, WS_CLOSE_WAIT);
	ws_conn_die(c, "close timeout");
}

/* wslay wants bytes: first those read with the upgrade request, then the socket's. */
static ssize_t
ws_conn_recv_cb(wslay_event_context_ptr ctx, uint8_t *p, size_t len, int flags, void *arg)
{
	struct ws_conn *c = arg;
	ssize_t n;

	if (c->pre.len > 0) {
		n = (ssize_t)(c->pre.len < len ? c->pre.len : len);
		memcpy(p, c->pre.ptr, (size_t)n);
		buf_consume(&c->pre, (size_t)n);
		return n;
	}
	if (c->paused) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	do
		n = read(c->fd, p, len);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		return n;
	if (n < 0 && errno == EAGAIN) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	c->eof = 1;
	wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
	return -1;
}

/* Write the gathered frames, as far as the socket takes them; 0, or -1 on an error. */
static int
ws_conn_flush_out(struct ws_conn *c)
{
	while (c->out.len > 0) {
		ssize_t n = send(c->fd, c->out.ptr, c->out.len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		buf_consume(&c->out, (size_t)n);
	}
	return 0;
}

/*
 * wslay hands over each frame's bytes on their own: gathered here (WS_GATHER at most) and
 * written by ws_conn_update in one send(2), since a send per frame was a sixth of bench_ws's
 * CPU with many small notifications. Full and the socket full too: wslay waits (WOULDBLOCK).
 */
static ssize_t
ws_conn_send_cb(wslay_event_context_ptr ctx, const uint8_t *p, size_t len, int flags, void *arg)
{
	struct ws_conn *c = arg;
	ssize_t n;

	(void)flags;
	if (c->out.len + len > WS_GATHER) {
		if (ws_conn_flush_out(c) != 0) {
			wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
			return -1;
		}
		if (c->out.len > 0) {
			wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
			return -1;
		}
		if (len > WS_GATHER) { /* a large frame goes straight out */
			do
				n = send(c->fd, p, len, MSG_NOSIGNAL);
			while (n < 0 && errno == EINTR);
			if (n >= 0)
				return n;
			wslay_event_set_error(ctx,
				errno == EAGAIN ? WSLAY_ERR_WOULDBLOCK
						: WSLAY_ERR_CALLBACK_FAILURE);
			return -1;
		}
	}
	if (buf_add(&c->out, p, len) != 0) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return (ssize_t)len;
}

/* One whole message: text is the owner's; binary is not the protocol (logged, dropped). */
static void
ws_conn_msg_cb(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *m, void *arg)
{
	struct ws_conn *c = arg;

	if (c->state != WS_OPEN)
		return;
	if (m->opcode == WSLAY_TEXT_FRAME) {
		c->ops->message(c->arg, (const char *)m->msg, m->msg_length);
		if (outq_congested(c->q))
			c->paused = 1;
	} else if (m->opcode == WSLAY_BINARY_FRAME)
		log_warn(
			"ws %s: a binary message (%zu bytes) ignored: JSON-RPC comes in text frames",
			c->name, m->msg_length);
}

/* Queue one line (without its '\n') as a text message. */
static int
ws_conn_queue(struct ws_conn *c, const char *p, size_t n)
{
	struct wslay_event_msg m = {WSLAY_TEXT_FRAME, (const uint8_t *)p, n};
	int r = wslay_event_queue_msg(c->ws, &m);

	/*
	 * A close frame is queued (shutdown, the client's close): nothing may follow it, and what
	 * the connection's threads still report is dropped quietly, not taken for an overflow.
	 */
	return r == 0 || r == WSLAY_ERR_NO_MORE_MSG ? 0 : -1;
}

/*
 * The outq's sink: cut its bytes into lines and queue each as a message, while wslay holds
 * less than WS_WSLAY_BOUND; the bytes taken, or -1 (EAGAIN: full; EPIPE: gone).
 */
static ssize_t
ws_conn_sink(void *arg, const struct iovec *iov, int cnt)
{
	struct ws_conn *c = arg;
	size_t taken = 0, len, n;
	const char *p, *nl;

	if (c->state != WS_OPEN) {
		errno = EPIPE;
		return -1;
	}
	for (int i = 0; i < cnt; i++) {
		p = iov[i].iov_base;
		len = iov[i].iov_len;
		while (len > 0) {
			if (wslay_event_get_queued_msg_length(c->ws) >= WS_WSLAY_BOUND)
				goto out;
			if ((nl = memchr(p, '\n', len)) == NULL) {
				if (buf_add(&c->carry, p, len) != 0)
					goto broken;
				taken += len;
				break;
			}
			n = (size_t)(nl - p);
			if (c->carry.len > 0) {
				if (buf_add(&c->carry, p, n) != 0 ||
					ws_conn_queue(c, c->carry.ptr, c->carry.len) != 0)
					goto broken;
				buf_reset(&c->carry);
			} else if (ws_conn_queue(c, p, n) != 0)
				goto broken;
			taken += n + 1;
			p += n + 1;
			len -= n + 1;
		}
	}
out:
	ws_conn_update(c);
	if (taken == 0) {
		errno = c->state == WS_OPEN ? EAGAIN : EPIPE;
		return -1;
	}
	return (ssize_t)taken;
broken:
	errno = EPIPE;
	return -1;
}

static void
ws_conn_broken_cb(void *arg)
{
	struct ws_conn *c = arg;

	if (c->state == WS_DEAD)
		return;
	log_warn("ws %s: disconnected: more than %zu bytes of output queued for a client that "
		 "does not read",
		c->name, c->lim.out_limit);
	ws_conn_die(c, "output queue overflow");
}

/*
 * After reading or writing: send what wslay holds, refill it from the outq, and watch the fd
 * for what wslay still wants; once it wants nothing (both close frames went), it is over.
 */
static void
ws_conn_update(struct ws_conn *c)
{
	int ev = 0;

	if (c->state != WS_OPEN)
		return;
	if ((wslay_event_want_write(c->ws) && wslay_event_send(c->ws) != 0) ||
		ws_conn_flush_out(c) != 0) {
		ws_conn_die(c, "write error");
		return;
	}
	if (wslay_event_want_read(c->ws) && !c->paused)
		ev |= EV_READ;
	if (wslay_event_want_write(c->ws) || c->out.len > 0)
		ev |= EV_WRITE;
	if (!wslay_event_want_read(c->ws) && !wslay_event_want_write(c->ws) && c->out.len == 0) {
		ws_conn_die(c, "closed");
		return;
	}
	if (wslay_event_get_close_sent(c->ws) && !ev_is_active(&c->timer)) {
		ev_timer_set(&c->timer, WS_CLOSE_WAIT, 0.);
		ev_timer_start(c->loop, &c->timer);
	}
	if ((c->io.events & (EV_READ | EV_WRITE)) != ev) {
		ev_io_stop(c->loop, &c->io);
		ev_io_set(&c->io, c->fd, ev);
		if (ev != 0)
			ev_io_start(c->loop, &c->io);
	}
}

/* The upgrade went through: frames from now on. */
static int
ws_conn_open(struct ws_conn *c)
{
	static const struct wslay_event_callbacks cbs = {
		.recv_callback = ws_conn_recv_cb,
		.send_callback = ws_conn_send_cb,
		.on_msg_recv_callback = ws_conn_msg_cb,
	};

	if (wslay_event_context_server_init(&c->ws, &cbs, c) != 0)
		return -1;
	wslay_event_config_set_max_recv_msg_length(c->ws, c->lim.max_message);
	c->q = outq_new_sink(c->loop, ws_conn_sink, c, c->lim.out_high, c->lim.out_low);
	outq_set_limit(c->q, c->lim.out_limit);
	c->state = WS_OPEN;
	c->opened = 1;
	LIST_REMOVE(c, entry);
	ev_timer_stop(c->loop, &c->timer);
	if ((c->arg = c->ops->open(c->lctx, c)) == NULL)
		return -1;
	/* After open: the owner may have set its own drain callback; ours is the break. */
	outq_set_broken_cb(c->q, ws_conn_broken_cb, c);
	return 0;
}

/* Write a small answer whole (a fresh socket's buffer holds it), or fail. */
static int
ws_conn_write_all(int fd, const char *p, size_t n)
{
	ssize_t k;

	while (n > 0) {
		k = send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Read the upgrade request; answer it once complete. 1 while it goes on, 0 open, -1 over. */
static int
ws_conn_handshake(struct ws_conn *c)
{
	char b[4096], *ans;
	size_t used = 0, len = 0;
	ssize_t n;
	int r, status = 0;

	for (;;) {
		n = read(c->fd, b, sizeof b);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 1;
		if (n <= 0)
			return -1;
		r = ws_http_feed(c->http, b, (size_t)n, &used);
		if (r == WS_HTTP_MORE)
			continue;
		if (r < 0) {
			log_info("ws %s: malformed or oversized upgrade request: 400", c->name);
			ans = ws_http_bad_request(&len);
		} else
			ans = ws_http_answer(c->http, c->lim.sha1, c->lim.auth,
				(long long)time(NULL), &len, &status);
		if (ans == NULL || ws_conn_write_all(c->fd, ans, len) != 0 || status != 101) {
			if (status != 101 && status != 200)
				log_info("ws %s: HTTP %d", c->name, status); /* never the token */
			free(ans);
			return -1;
		}
		free(ans);
		if (buf_add(&c->pre, b + used, (size_t)n - used) != 0)
			return -1;
		ws_http_free(c->http);
		c->http = NULL;
		return ws_conn_open(c) == 0 ? 0 : -1;
	}
}

static void
ws_conn_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct ws_conn *c = container_of(w, struct ws_conn, io);
	int r;

	if (c->state == WS_HANDSHAKE) {
		if ((r = ws_conn_handshake(c)) > 0)
			return;
		if (r < 0) {
			if (!c->opened) {
				ws_conn_die(c, "handshake");
				ws_conn_free(c); /* nothing refers to it yet */
				return;
			}
			ws_conn_die(c, "refused");
			return;
		}
		revents = EV_READ; /* frames may have come with the request */
	}
	if (c->state != WS_OPEN)
		return;
	if ((revents & EV_READ) && (r = wslay_event_recv(c->ws)) != 0) {
		/* A frame wslay's framing refused: the close it queued goes out, best effort. */
		if (!c->eof && wslay_event_want_write(c->ws)) {
			(void)wslay_event_send(c->ws);
			(void)ws_conn_flush_out(c);
		}
		log_debug("ws %s: wslay_event_recv: %d", c->name, r);
		ws_conn_die(c, c->eof ? "connection closed by the client" : "protocol error");
		return;
	}
	ws_conn_update(c);
	if (c->state == WS_OPEN && outq_pending(c->q) > 0 &&
		wslay_event_get_queued_msg_length(c->ws) < WS_WSLAY_BOUND / 2)
		outq_flush(c->q);
}

void
ws_conn_resume(struct ws_conn *c)
{
	if (c->state != WS_OPEN || !c->paused)
		return;
	c->paused = 0;
	/* wslay may hold frames it read already: let it deliver them now. */
	ev_feed_event(c->loop, &c->io, EV_READ);
	ws_conn_update(c);
}

void
ws_conn_close(struct ws_conn *c, int code, const char *reason)
{
	if (c->state != WS_OPEN)
		return;
	wslay_event_queue_close(c->ws, (uint16_t)code, (const uint8_t *)reason,
		reason != NULL ? strlen(reason) : 0);
	ws_conn_update(c);
}
