/*
 * app-client --connect: the connection to a daemon listening on ws:// or unix:// (its --listen),
 * framed by Debian's libwslay on the loop; conn_ws_http.c reached it and did the upgrade.
 *
 * Rules: one JSON-RPC message per text message, both ways (binary messages are not the
 * protocol: dropped); a message longer than CONN_WS_MAX is refused by wslay from its header
 * (close 1009); wslay answers ping with pong and the daemon's close with ours. Our close is
 * conn_close: a close frame 1000, then the socket's end once the daemon answered, or after
 * CONN_WS_CLOSE_SECS. What wslay holds unsent is bounded by CONN_WS_QUEUE_MAX: past it the
 * daemon does not read and the connection is dropped rather than grown without end.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <wslay/wslay.h>

#include "conn_int.h"
#include "protocol/xmalloc.h"

#define CONN_WS_MAX	   (256u << 20) /* the longest message accepted (as a line on stdio) */
#define CONN_WS_QUEUE_MAX  (512u << 20) /* unsent bytes held for a daemon that does not read */
#define CONN_WS_CLOSE_SECS 5.0

struct conn_ws {
	struct conn *conn;
	struct conn_ws_target target;
	wslay_event_context_ptr ctx;
	int fd;
	ev_io io;
	ev_timer close_timer;
	struct buf early; /* frame bytes that came with the 101, read first */
	int eof, failed;
	char *error; /* why it failed, when we know better than the close status */
};

static void conn_ws_io_cb(struct ev_loop *loop, ev_io *w, int revents);
static void conn_ws_close_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);

/* wslay wants bytes: those that came with the 101 first, then the socket's. */
static ssize_t
conn_ws_recv_cb(wslay_event_context_ptr ctx, uint8_t *p, size_t len, int flags, void *arg)
{
	struct conn_ws *w = arg;
	ssize_t n;

	(void)flags;
	if (w->early.len > 0) {
		n = (ssize_t)(w->early.len < len ? w->early.len : len);
		memcpy(p, w->early.ptr, (size_t)n);
		buf_consume(&w->early, (size_t)n);
		return n;
	}
	do
		n = recv(w->fd, p, len, 0);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		return n;
	if (n < 0 && errno == EAGAIN) {
		wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
		return -1;
	}
	w->eof = 1;
	wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
	return -1;
}

static ssize_t
conn_ws_send_cb(wslay_event_context_ptr ctx, const uint8_t *p, size_t len, int flags, void *arg)
{
	struct conn_ws *w = arg;
	ssize_t n;

	do
		n = send(w->fd, p, len, MSG_NOSIGNAL | (flags & WSLAY_MSG_MORE ? MSG_MORE : 0));
	while (n < 0 && errno == EINTR);
	if (n >= 0)
		return n;
	wslay_event_set_error(
		ctx, errno == EAGAIN ? WSLAY_ERR_WOULDBLOCK : WSLAY_ERR_CALLBACK_FAILURE);
	return -1;
}

/* Client frames are masked with fresh random keys (RFC 6455 5.3). */
static int
conn_ws_mask_cb(wslay_event_context_ptr ctx, uint8_t *p, size_t len, void *arg)
{
	(void)arg;
	if (getrandom(p, len, 0) != (ssize_t)len) {
		wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
		return -1;
	}
	return 0;
}

/* One whole message: text is the protocol's. */
static void
conn_ws_msg_cb(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *m, void *arg)
{
	struct conn_ws *w = arg;

	(void)ctx;
	if (m->opcode == WSLAY_TEXT_FRAME)
		conn_dispatch(w->conn, (const char *)m->msg, m->msg_length);
}

/* The socket is done (both close frames went, the daemon left, or an error): the end. */
static void
conn_ws_end(struct conn_ws *w)
{
	struct conn *c = w->conn;

	if (c->out_eof)
		return;
	ev_io_stop(c->loop, &w->io);
	ev_timer_stop(c->loop, &w->close_timer);
	shutdown(w->fd, SHUT_RDWR);
	c->out_eof = 1;
	conn_check_finished(c);
}

/* Recompute what the socket waits for, from what wslay wants. */
static void
conn_ws_update(struct conn_ws *w)
{
	struct conn *c = w->conn;
	int want = 0;

	if (c->out_eof)
		return;
	if (wslay_event_want_read(w->ctx))
		want |= EV_READ;
	if (wslay_event_want_write(w->ctx))
		want |= EV_WRITE;
	if (want == 0 || w->failed) {
		conn_ws_end(w);
		return;
	}
	if (wslay_event_get_close_sent(w->ctx) && !ev_is_active(&w->close_timer)) {
		ev_timer_set(&w->close_timer, CONN_WS_CLOSE_SECS, 0);
		ev_timer_start(c->loop, &w->close_timer);
	}
	if (w->io.events != want) {
		ev_io_stop(c->loop, &w->io);
		ev_io_set(&w->io, w->fd, want);
	}
	ev_io_start(c->loop, &w->io);
}

static void
conn_ws_io_cb(struct ev_loop *loop, ev_io *io, int revents)
{
	struct conn_ws *w = (struct conn_ws *)((char *)io - offsetof(struct conn_ws, io));

	(void)loop;
	if ((revents & EV_READ) && wslay_event_recv(w->ctx) != 0)
		w->failed = 1;
	if (!w->failed && (revents & EV_WRITE) && wslay_event_send(w->ctx) != 0)
		w->failed = 1;
	if (w->failed && !w->eof && wslay_event_want_write(w->ctx))
		(void)wslay_event_send(w->ctx); /* wslay's own close (1002, 1009) on a bad frame */
	conn_ws_update(w);
}

/* The daemon never answered our close frame: drop the socket. */
static void
conn_ws_close_timer_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct conn_ws *w = (struct conn_ws *)((char *)t - offsetof(struct conn_ws, close_timer));

	(void)loop;
	(void)revents;
	if (w->error == NULL)
		w->error = xasprintf("%s did not answer the close frame", w->target.url);
	conn_ws_end(w);
}

/* conn_ws.c: connect to the daemon at url and start framing on the loop; 0 or -1 with *cause. */
int
conn_ws_start(struct conn *c, const char *url, const char *token, char **cause)
{
	static const struct wslay_event_callbacks cbs = {
		.recv_callback = conn_ws_recv_cb,
		.send_callback = conn_ws_send_cb,
		.genmask_callback = conn_ws_mask_cb,
		.on_msg_recv_callback = conn_ws_msg_cb,
	};
	struct conn_ws *w = xcalloc(1, sizeof *w);

	w->conn = c;
	w->fd = -1;
	c->ws = w;
	c->reaped = 1; /* no process: the socket's end alone ends the connection */
	buf_init(&w->early, 1u << 20);
	ev_timer_init(&w->close_timer, conn_ws_close_timer_cb, 0, 0);
	if (conn_ws_target_parse(&w->target, url, cause) != 0)
		return -1;
	w->target.token = token;
	if ((w->fd = conn_ws_open(&w->target, &w->early, cause)) < 0)
		return -1;
	if (wslay_event_context_client_init(&w->ctx, &cbs, w) != 0) {
		*cause = xstrdup("wslay: out of memory");
		return -1;
	}
	wslay_event_config_set_max_recv_msg_length(w->ctx, CONN_WS_MAX);
	ev_io_init(&w->io, conn_ws_io_cb, w->fd, EV_READ);
	ev_io_start(c->loop, &w->io);
	if (w->early.len > 0)
		ev_feed_event(c->loop, &w->io, EV_READ); /* frames that came with the 101 */
	return 0;
}

/* conn_ws.c: queue one message as a text frame; 0, or -1 once closing. */
int
conn_ws_send(struct conn *c, const char *p, size_t n)
{
	struct conn_ws *w = c->ws;
	struct wslay_event_msg m = {WSLAY_TEXT_FRAME, (const uint8_t *)p, n};

	if (c->out_eof || wslay_event_get_close_sent(w->ctx))
		return -1;
	if (wslay_event_get_queued_msg_length(w->ctx) + n > CONN_WS_QUEUE_MAX) {
		free(w->error);
		w->error = xasprintf("%s does not read: more than %u bytes queued", w->target.url,
			CONN_WS_QUEUE_MAX);
		w->failed = 1;
		conn_ws_update(w);
		return -1;
	}
	if (wslay_event_queue_msg(w->ctx, &m) != 0)
		return -1;
	conn_ws_update(w);
	return 0;
}

/* conn_ws.c: start the close handshake (1000); `closed` fires when the socket is gone. */
void
conn_ws_close(struct conn *c)
{
	struct conn_ws *w = c->ws;

	if (c->out_eof || wslay_event_get_close_sent(w->ctx))
		return;
	wslay_event_queue_close(w->ctx, 1000, NULL, 0);
	conn_ws_update(w);
}

/* conn_ws.c: why the connection ended, one line (heap). */
char *
conn_ws_why(struct conn *c)
{
	struct conn_ws *w = c->ws;
	const char *url = w->target.url;
	uint16_t code;

	if (w->error != NULL)
		return xstrdup(w->error);
	if (w->ctx == NULL || !wslay_event_get_close_received(w->ctx))
		return xasprintf("the connection to %s ended without a close frame", url);
	code = wslay_event_get_status_code_received(w->ctx);
	return xasprintf("%s closed the connection (%u%s)", url, code,
		code == 1001 ? ": the daemon is going away" : "");
}

/* conn_ws.c: stop the watchers, close the socket, free the framing. */
void
conn_ws_free(struct conn *c)
{
	struct conn_ws *w = c->ws;

	if (w == NULL)
		return;
	ev_io_stop(c->loop, &w->io);
	ev_timer_stop(c->loop, &w->close_timer);
	if (w->ctx != NULL)
		wslay_event_context_free(w->ctx);
	if (w->fd >= 0)
		close(w->fd);
	buf_free(&w->early);
	conn_ws_target_clear(&w->target);
	free(w->error);
	free(w);
	c->ws = NULL;
}
