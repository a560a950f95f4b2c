/*
 * The JSON-RPC side of app-client's connection (see conn.h): requests with completion
 * callbacks, -32001 retried with backoff and jitter, notifications and server requests to the
 * hooks, one JSON message per line in both directions (per text message over --connect's
 * WebSocket, conn_ws.c).
 *
 * Loop rules: every message enters the output queue (server/io/outq) as one whole line, so
 * nothing interleaves; stdout is read until EAGAIN (at most CONN_READS reads per callback) and
 * every complete line is dispatched in arrival order; a line over CONN_MAX_LINE ends the
 * connection (it cannot resynchronise without losing a message). Callbacks run from the loop and
 * must not free the connection: the caller breaks the loop and frees it afterwards.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn_int.h"
#include "io/linebuf.h"
#include "io/outq.h"
#include "protocol/xmalloc.h"

#define CONN_MAX_LINE	(256u << 20) /* the longest line accepted from the daemon */
#define CONN_READS	16	     /* reads per stdout callback before yielding */
#define CONN_RETRIES	8	     /* -32001 retries of one request */
#define CONN_RETRY_BASE 0.025	     /* seconds before the first retry; doubles */
#define CONN_RETRY_MAX	2.0	     /* ceiling of one retry delay */
#define CONN_OVERLOADED -32001
#define CONN_NOT_FOUND	-32601
#define CONN_QUEUE_HIGH (4u << 20)
#define CONN_QUEUE_LOW	(1u << 20)

static void conn_out_cb(struct ev_loop *loop, ev_io *w, int revents);
static void conn_retry_cb(struct ev_loop *loop, ev_timer *w, int revents);

/* Where conn_spawn connects instead of spawning (conn_set_target), or NULL. */
static const char *conn_target_url, *conn_target_token;

/* Connect to a listening daemon from now on (url borrowed, token too); NULL: spawn. */
void
conn_set_target(const char *url, const char *token)
{
	conn_target_url = url;
	conn_target_token = token;
}

/* True while messages can still be sent. */
static int
conn_open(const struct conn *c)
{
	return !c->finished && (c->ws != NULL ? !c->out_eof : c->in_fd >= 0);
}

/* Queue one message as one line. */
static void
conn_write(struct conn *c, json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT);
	size_t len;
	char *dst;

	if (text == NULL || !conn_open(c)) {
		free(text);
		return;
	}
	len = strlen(text);
	if (c->ws != NULL) {
		(void)conn_ws_send(
			c, text, len); /* a failure ends the connection: `closed` says why */
		free(text);
		return;
	}
	if (c->q == NULL) {
		free(text);
		return;
	}
	dst = outq_reserve(c->q, len + 1);
	memcpy(dst, text, len);
	dst[len] = '\n';
	outq_commit(c->q, len + 1);
	free(text);
}

/* Start the daemon and the watchers of its stdout and stdin. */
struct conn *
conn_spawn(struct ev_loop *loop, const struct conn_hooks *hooks, char **cause)
{
	struct conn *c = xcalloc(1, sizeof *c);

	c->loop = loop;
	c->hooks = *hooks;
	c->in_fd = c->out_fd = c->err_fd = -1;
	c->next_id = 1;
	buf_init(&c->err_tail, CONN_STDERR_KEEP);
	if (conn_target_url != NULL) {
		if (conn_ws_start(c, conn_target_url, conn_target_token, cause) != 0) {
			conn_free(c);
			return NULL;
		}
		return c;
	}
	if (conn_proc_start(c, cause) != 0) {
		conn_free(c);
		return NULL;
	}
	c->lb = linebuf_new(CONN_MAX_LINE);
	c->q = outq_new(loop, c->in_fd, CONN_QUEUE_HIGH, CONN_QUEUE_LOW);
	ev_io_init(&c->out_io, conn_out_cb, c->out_fd, EV_READ);
	ev_io_start(loop, &c->out_io);
	return c;
}

/* Send (or resend) a request under a new id. */
static void
conn_send(struct conn *c, struct conn_req *r)
{
	json_t *msg;

	r->id = c->next_id++;
	msg = json_pack("{s:I, s:s, s:O}", "id", (json_int_t)r->id, "method", r->method, "params",
		r->params);
	conn_write(c, msg);
	json_decref(msg);
}

/* Send a request (params stolen, NULL for {}); 0, or -EPIPE when the connection is closed. */
int
conn_request(struct conn *c, const char *method, json_t *params, conn_cb cb, void *arg)
{
	struct conn_req *r;

	if (!conn_open(c)) {
		json_decref(params);
		return -EPIPE;
	}
	r = xcalloc(1, sizeof *r);
	r->conn = c;
	r->method = xstrdup(method);
	r->params = params != NULL ? params : json_object();
	r->cb = cb;
	r->arg = arg;
	ev_timer_init(&r->retry, conn_retry_cb, 0, 0);
	r->next = c->reqs;
	c->reqs = r;
	conn_send(c, r);
	return 0;
}

/* Send a notification (params stolen, may be NULL). */
void
conn_notify(struct conn *c, const char *method, json_t *params)
{
	json_t *msg = json_pack("{s:s}", "method", method);

	if (params != NULL)
		json_object_set_new(msg, "params", params);
	conn_write(c, msg);
	json_decref(msg);
}

/* Answer a server request with a result (stolen). */
void
conn_reply(struct conn *c, const json_t *id, json_t *result)
{
	json_t *msg = json_pack("{s:O, s:o}", "id", id, "result", result);

	conn_write(c, msg);
	json_decref(msg);
}

/* Answer a server request with an error. */
void
conn_reply_error(struct conn *c, const json_t *id, int code, const char *message)
{
	json_t *msg = json_pack(
		"{s:O, s:{s:i, s:s}}", "id", id, "error", "code", code, "message", message);

	conn_write(c, msg);
	json_decref(msg);
}

/* The safe answer to a server request nobody handles: decline what asks for consent. */
json_t *
conn_default_answer(const char *method)
{
	if (strcmp(method, "item/commandExecution/requestApproval") == 0 ||
		strcmp(method, "item/fileChange/requestApproval") == 0)
		return json_pack("{s:s}", "decision", "decline");
	if (strcmp(method, "execCommandApproval") == 0 || strcmp(method, "applyPatchApproval") == 0)
		return json_pack("{s:s}", "decision", "denied");
	if (strcmp(method, "mcpServer/elicitation/request") == 0)
		return json_pack("{s:s}", "action", "decline");
	if (strcmp(method, "item/permissions/requestApproval") == 0)
		return json_pack("{s:{}, s:s}", "permissions", "scope", "turn");
	return NULL;
}

/* Unlink a request; the caller frees it. */
static void
conn_req_unlink(struct conn *c, struct conn_req *r)
{
	struct conn_req **p;

	for (p = &c->reqs; *p != NULL; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			return;
		}
}

/* Free a request that is no longer listed (its retry timer stopped). */
static void
conn_req_free(struct conn_req *r)
{
	ev_timer_stop(r->conn->loop, &r->retry);
	free(r->method);
	json_decref(r->params);
	free(r);
}

/* The backoff of an overloaded request is over: send it again under a new id. */
static void
conn_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct conn_req *r = (struct conn_req *)((char *)w - offsetof(struct conn_req, retry));

	if (r->conn->finished)
		return;
	conn_send(r->conn, r);
}

/* A response: retry -32001 later, else complete the request. */
static void
conn_on_response(struct conn *c, json_t *msg)
{
	json_t *error = json_object_get(msg, "error");
	json_int_t id = json_integer_value(json_object_get(msg, "id"));
	struct conn_req *r;
	double ceiling;

	for (r = c->reqs; r != NULL && r->id != id; r = r->next)
		;
	if (r == NULL || ev_is_active(&r->retry))
		return; /* not ours, or already waiting to be resent */
	if (error != NULL &&
		json_integer_value(json_object_get(error, "code")) == CONN_OVERLOADED &&
		r->attempts < CONN_RETRIES) {
		ceiling = CONN_RETRY_BASE * (double)(1 << r->attempts);
		ceiling = ceiling < CONN_RETRY_MAX ? ceiling : CONN_RETRY_MAX;
		r->attempts++;
		/* Half fixed, half random ("equal jitter"). */
		ev_timer_set(
			&r->retry, ceiling / 2 + ceiling / 2 * (random() / (double)RAND_MAX), 0);
		ev_timer_start(c->loop, &r->retry);
		return;
	}
	conn_req_unlink(c, r);
	if (r->cb != NULL)
		r->cb(r->arg, error != NULL ? NULL : json_object_get(msg, "result"), error);
	conn_req_free(r);
}

/* A server request: the subcommand's hook, or the safe default. */
static void
conn_on_server_request(struct conn *c, json_t *id, const char *method, json_t *params)
{
	json_t *answer;

	if (c->hooks.request != NULL) {
		c->hooks.request(c->hooks.arg, id, method, params);
		return;
	}
	if ((answer = conn_default_answer(method)) != NULL)
		conn_reply(c, id, answer);
	else
		conn_reply_error(
			c, id, CONN_NOT_FOUND, "app-client has no handler for this request");
}

/* One line from the daemon, routed by its shape. */
static int
conn_line_cb(void *arg, const char *line, size_t len, int oversized)
{
	struct conn *c = arg;

	if (oversized) {
		free(c->why);
		c->why = xasprintf("a line from app-server exceeds %u bytes", CONN_MAX_LINE);
		if (c->pid > 0)
			kill(c->pid, SIGKILL);
		return 1;
	}
	conn_dispatch(c, line, len);
	return 0;
}

/* conn.c: one message from the daemon (a line without its newline), routed by its shape. */
void
conn_dispatch(struct conn *c, const char *line, size_t len)
{
	json_t *msg, *id;
	const char *method;

	if ((msg = json_loadb(line, len, 0, NULL)) == NULL || !json_is_object(msg)) {
		json_decref(msg);
		return; /* not a message: nothing to route */
	}
	method = json_string_value(json_object_get(msg, "method"));
	id = json_object_get(msg, "id");
	if (method != NULL && id != NULL && !json_is_null(id))
		conn_on_server_request(c, id, method, json_object_get(msg, "params"));
	else if (method != NULL && c->hooks.notification != NULL)
		c->hooks.notification(c->hooks.arg, method, json_object_get(msg, "params"));
	else if (method == NULL && json_is_integer(id))
		conn_on_response(c, msg);
	json_decref(msg);
}

/* The daemon's stdout: read until EAGAIN (or CONN_READS reads), dispatch whole lines. */
static void
conn_out_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct conn *c = (struct conn *)((char *)w - offsetof(struct conn, out_io));
	size_t avail;
	ssize_t n;
	char *space;

	for (int i = 0; i < CONN_READS; i++) {
		space = linebuf_space(c->lb, &avail);
		n = read(c->out_fd, space, avail);
		if (n > 0) {
			if (linebuf_fill(c->lb, (size_t)n, conn_line_cb, c) != 0)
				break;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		/* EOF (or a read error): the last line, then wait for the reaping. */
		linebuf_finish(c->lb, conn_line_cb, c);
		ev_io_stop(loop, w);
		c->out_eof = 1;
		conn_check_finished(c);
		return;
	}
}

/* conn.c: the daemon was reaped or its stdout ended: finish once both happened. */
void
conn_check_finished(struct conn *c)
{
	struct conn_req *r;
	char *why;

	if (!c->reaped || !c->out_eof || c->finished)
		return;
	c->finished = 1;
	why = c->ws != NULL ? conn_ws_why(c) : conn_proc_why(c);
	while ((r = c->reqs) != NULL) {
		c->reqs = r->next;
		if (r->cb != NULL)
			r->cb(r->arg, NULL, NULL);
		conn_req_free(r);
	}
	if (c->hooks.closed != NULL)
		c->hooks.closed(c->hooks.arg, why);
	free(why);
}

/* Close the daemon's stdin after what is queued (waiting at most 1 s for a full pipe). */
void
conn_close(struct conn *c)
{
	if (c->ws != NULL) {
		conn_ws_close(c);
		return;
	}
	if (c->in_fd < 0)
		return;
	if (c->q != NULL) {
		outq_flush_wait(c->q, 1000);
		outq_free(c->q);
		c->q = NULL;
	}
	close(c->in_fd);
	c->in_fd = -1;
}

/* True until the daemon is gone. */
int
conn_alive(const struct conn *c)
{
	return c != NULL && !c->finished;
}

/* Stop the daemon if still running and free everything. Accepts NULL. */
void
conn_free(struct conn *c)
{
	struct conn_req *r;

	if (c == NULL)
		return;
	if (c->ws == NULL)
		conn_close(c);
	conn_ws_free(c);
	conn_proc_stop(c);
	if (c->out_fd >= 0) {
		ev_io_stop(c->loop, &c->out_io);
		close(c->out_fd);
	}
	while ((r = c->reqs) != NULL) {
		c->reqs = r->next;
		conn_req_free(r);
	}
	linebuf_free(c->lb);
	buf_free(&c->err_tail);
	free(c->why);
	free(c->binary);
	free(c);
}
