/*
 * The JSON-RPC connection (see rpc.h). Order of checks for an input line, each failure
 * answered with the request's id when it has a usable one, else null:
 *   oversized line (-32600), not JSON (-32700), not an object (-32600),
 *   then by shape: request {method, id} / notification {method} / response {id, result|error};
 *   for a request: bad id (-32600), unknown method (-32601), before initialize (-32600
 *   "Not initialized"), too many unanswered requests (-32001), params failing the schema
 *   (-32602 with data {path, keyword, message}), NUL in strings (-32602), an experimental
 *   method or member without experimentalApi (-32600, rpc_gate.c), then the handler.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "protocol/buf.h"
#include "io/log.h"
#include "io/outq.h"
#include "protocol/gen/validator.h"
#include "protocol/jscan.h"
#include "protocol/utf8.h"
#include "rpc_int.h"
#include "protocol/xmalloc.h"

#define RPC_DUMP_GUESS 4096
#define RPC_ERROR_MAX  (1024 * 1024) /* an error answer written as text, at most */

struct rpc_req {
	struct rpc *conn;
	json_t *id;
	struct rpc_req *prev, *next; /* the connection's unanswered requests */
};

struct rpc *
rpc_new(struct ev_loop *loop, struct outq *q, const struct rpc_opts *opts,
	const struct rpc_method *const *tables, char **cause)
{
	struct rpc *r = xcalloc(1, sizeof *r);

	r->loop = loop;
	r->q = q;
	r->opts = *opts;
	r->tables = tables;
	buf_init(&r->line, RPC_ERROR_MAX);
	if ((r->validator = validator_new(cause)) == NULL) {
		free(r);
		return NULL;
	}
	return r;
}

static void
rpc_req_unlink(struct rpc_req *req)
{
	struct rpc *r = req->conn;

	if (req->prev != NULL)
		req->prev->next = req->next;
	else
		r->pending = req->next;
	if (req->next != NULL)
		req->next->prev = req->prev;
	r->inflight--;
	json_decref(req->id);
	free(req);
}

void
rpc_set_session(struct rpc *r, struct session *s)
{
	r->session = s;
}

/* The method of these tables, or NULL. */
const struct rpc_method *
rpc_method_find(const struct rpc_method *const *tables, const char *name)
{
	const struct rpc_method *m;

	for (; *tables != NULL; tables++)
		for (m = *tables; m->name != NULL; m++)
			if (strcmp(m->name, name) == 0)
				return m;
	return NULL;
}

/* Answer what is still pending with an error (connection closing), then free. */
void
rpc_free(struct rpc *r)
{
	if (r == NULL)
		return;
	rpc_call_cancel_all(r);
	while (r->pending != NULL)
		rpc_reply_error(r->pending, RPC_INTERNAL_ERROR, "server is shutting down", NULL);
	for (size_t i = 0; i < r->noptouts; i++)
		free(r->optouts[i]);
	free(r->optouts);
	validator_free(r->validator);
	buf_free(&r->line);
	free(r);
}

/* Milliseconds since the epoch. */
long long
rpc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A message being serialized into the queue's last reservation (rpc_send). */
struct rpc_dump {
	struct outq *q;
	char *p;
	size_t len, cap;
};

static int
rpc_dump_cb(const char *buf, size_t size, void *arg)
{
	struct rpc_dump *d = arg;

	if (d->len + size + 1 > d->cap) {
		while (d->len + size + 1 > d->cap)
			d->cap *= 2;
		d->p = outq_regrow(d->q, d->len, d->cap);
	}
	memcpy(d->p + d->len, buf, size);
	d->len += size;
	return 0;
}

/*
 * Serialize one message as a line straight into the output queue, in one pass (a long
 * history answer used to be serialized twice: once to learn its size). Committed whole, or
 * not at all when it cannot be serialized.
 */
void
rpc_send(struct rpc *r, json_t *msg)
{
	struct rpc_dump d = {r->q, outq_reserve(r->q, RPC_DUMP_GUESS), 0, RPC_DUMP_GUESS};

	if (json_dump_callback(msg, rpc_dump_cb, &d, JSON_COMPACT) != 0 || d.len == 0) {
		log_error("cannot serialize a message");
		return;
	}
	d.p[d.len] = '\n';
	outq_commit(r->q, d.len + 1);
}

/*
 * An error answer without data as text, the bytes jansson's compact dump gives: packing and
 * dumping it cost a third of answering a pipelined request (bench_rpc). 0, or -1 when it does
 * not fit (the caller falls back to jansson).
 */
static int
rpc_error_text(struct rpc *r, json_t *id, int code, const char *message, size_t mlen)
{
	struct buf *b = &r->line;
	int bad = 0;

	buf_reset(b);
	bad |= buf_adds(b, "{\"error\":{\"code\":");
	bad |= jscan_put_int(b, code);
	bad |= buf_adds(b, ",\"message\":");
	bad |= jscan_put_str(b, message, mlen);
	bad |= buf_adds(b, "},\"id\":");
	if (json_is_integer(id))
		bad |= jscan_put_int(b, json_integer_value(id));
	else if (json_is_string(id))
		bad |= jscan_put_str(b, json_string_value(id), json_string_length(id));
	else
		bad |= buf_adds(b, "null");
	bad |= buf_adds(b, "}\n");
	if (bad != 0)
		return -1;
	memcpy(outq_reserve(r->q, b->len), b->ptr, b->len);
	outq_commit(r->q, b->len);
	return 0;
}

/*
 * An error answer with a given id (null when unknown); the message may hold NULs. A message
 * that is not UTF-8 (a path named in it) is repaired: jansson refuses it, and the request
 * went unanswered.
 */
void
rpc_send_error_n(
	struct rpc *r, json_t *id, int code, const char *message, size_t mlen, json_t *data)
{
	char *fixed = NULL;
	json_t *err, *msg;

	if (utf8_valid_prefix(message, mlen) != mlen)
		message = fixed = utf8_lossy(message, mlen, &mlen);
	if (data == NULL && (id == NULL || json_is_integer(id) || json_is_string(id)) &&
		rpc_error_text(r, id, code, message, mlen) == 0)
		goto out;
	err = json_pack("{s:i, s:s%}", "code", code, "message", message, mlen);
	if (data != NULL)
		json_object_set_new(err, "data", data);
	msg = json_pack("{s:o, s:O}", "error", err, "id", id != NULL ? id : json_null());
	rpc_send(r, msg);
	json_decref(msg);
out:
	free(fixed);
}

/* An error answer with a given id (null when unknown). */
void
rpc_send_error(struct rpc *r, json_t *id, int code, const char *message, json_t *data)
{
	rpc_send_error_n(r, id, code, message, strlen(message), data);
}

void
rpc_reply(struct rpc_req *req, json_t *result)
{
	json_t *msg = json_pack("{s:O, s:o}", "id", req->id, "result", result);

	rpc_send(req->conn, msg);
	json_decref(msg);
	rpc_req_unlink(req);
}

void
rpc_reply_raw(struct rpc_req *req, const char *result, size_t len)
{
	char *id = json_dumps(req->id, JSON_ENCODE_ANY | JSON_COMPACT), *p;
	size_t idlen = strlen(id), n = 0;

	p = outq_reserve(req->conn->q, idlen + len + 24);
	memcpy(p, "{\"id\":", 6);
	n = 6;
	memcpy(p + n, id, idlen);
	n += idlen;
	memcpy(p + n, ",\"result\":", 10);
	n += 10;
	memcpy(p + n, result, len);
	n += len;
	memcpy(p + n, "}\n", 2);
	n += 2;
	outq_commit(req->conn->q, n);
	free(id);
	rpc_req_unlink(req);
}

void
rpc_reply_error(struct rpc_req *req, int code, const char *message, json_t *data)
{
	rpc_send_error(req->conn, req->id, code, message, data);
	rpc_req_unlink(req);
}

void
rpc_reply_errorf(struct rpc_req *req, int code, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	rpc_reply_error(req, code, s != NULL ? s : "error", NULL);
	free(s);
}

int
rpc_notify_wanted(const struct rpc *r, const char *method)
{
	for (size_t i = 0; i < r->noptouts; i++)
		if (strcmp(r->optouts[i], method) == 0)
			return 0;
	return 1;
}

void
rpc_notify(struct rpc *r, const char *method, json_t *params)
{
	json_t *msg;

	if (!rpc_notify_wanted(r, method)) {
		json_decref(params);
		return;
	}
	msg = json_pack("{s:s}", "method", method);
	if (params != NULL)
		json_object_set_new(msg, "params", params);
	json_object_set_new(msg, "emittedAtMs", json_integer(rpc_now_ms()));
	rpc_send(r, msg);
	json_decref(msg);
}

char *
rpc_notify_text(const char *method, json_t *params, size_t *len)
{
	json_t *msg = json_pack("{s:s}", "method", method);
	char *text, *line;
	size_t n;

	if (params != NULL)
		json_object_set_new(msg, "params", params);
	json_object_set_new(msg, "emittedAtMs", json_integer(rpc_now_ms()));
	text = json_dumps(msg, JSON_COMPACT);
	json_decref(msg);
	if (text == NULL) {
		*len = 0;
		return NULL;
	}
	n = strlen(text);
	line = xrealloc(text, n + 2);
	line[n] = '\n';
	line[n + 1] = '\0';
	*len = n + 1;
	return line;
}

void
rpc_notify_line(struct rpc *r, const char *method, const char *line, size_t len)
{
	if (line == NULL || len == 0 || !rpc_notify_wanted(r, method))
		return;
	memcpy(outq_reserve(r->q, len), line, len);
	outq_commit(r->q, len);
}

size_t
rpc_inflight(const struct rpc *r)
{
	return r->inflight;
}

int
rpc_experimental(const struct rpc *r)
{
	return r->experimental;
}

int
rpc_initialized(const struct rpc *r)
{
	return r->initialized;
}

/* Record the handshake: capabilities and the notification opt-outs (an array of strings). */
void
rpc_set_initialized(struct rpc *r, int experimental, json_t *optouts)
{
	size_t i;
	json_t *v;

	r->initialized = 1;
	r->experimental = experimental;
	r->noptouts = 0;
	if (!json_is_array(optouts) || json_array_size(optouts) == 0)
		return;
	r->optouts = xcalloc(json_array_size(optouts), sizeof *r->optouts);
	json_array_foreach(optouts, i, v)
	{
		if (json_is_string(v))
			r->optouts[r->noptouts++] = xstrdup(json_string_value(v));
	}
}

/* A request id must be a string or an integer (JSON-RPC allows null, upstream does not). */
static int
rpc_id_ok(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

static void
rpc_request(struct rpc *r, json_t *msg, const char *method, json_t *id)
{
	const struct rpc_method *h = rpc_method_find(r->tables, method);
	json_t *params = json_object_get(msg, "params"), *data = NULL;
	struct rpc_req *req;
	char *why = NULL;

	if (h == NULL || strlen(method) != json_string_length(json_object_get(msg, "method"))) {
		if (h == NULL && rpc_gate_unknown(r, id, method))
			goto out;
		why = xasprintf("Method not found: %s", method);
		rpc_send_error(r, id, RPC_METHOD_NOT_FOUND, why, NULL);
		goto out;
	}
	if (!r->initialized && !(h->flags & RPC_BEFORE_INIT)) {
		rpc_send_error(r, id, RPC_INVALID_REQUEST, "Not initialized", NULL);
		goto out;
	}
	if (r->inflight >= r->opts.max_inflight) {
		rpc_send_error(r, id, RPC_OVERLOADED, "Server overloaded; retry later.",
			json_pack("{s:s}", "codex_error_info", "server_overloaded"));
		goto out;
	}
	if (validator_params(r->validator, method, params, &why, &data) != 0) {
		rpc_send_error(r, id, RPC_INVALID_PARAMS, why, data);
		goto out;
	}
	if (rpc_nul_refuse(r, id, params) || rpc_gate_refuse(r, id, method, params))
		goto out;
	req = xcalloc(1, sizeof *req);
	req->conn = r;
	req->id = json_incref(id);
	req->next = r->pending;
	if (r->pending != NULL)
		r->pending->prev = req;
	r->pending = req;
	r->inflight++;
	log_debug("request %s", method);
	h->fn(r->session, req, params);
out:
	free(why);
}

static void
rpc_client_notification(struct rpc *r, const char *method)
{
	if (strcmp(method, "initialized") == 0)
		log_debug("client sent initialized");
	else
		log_debug("ignoring client notification %s", method);
}

/* True when the line holds only white space. */
static int
rpc_blank(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			return 0;
	return 1;
}

/* Handle one input line. */
void
rpc_line(struct rpc *r, const char *line, size_t len, int oversized)
{
	json_t *msg, *method, *id;
	json_error_t je;
	char *why, *marked;

	if (oversized) {
		why = xasprintf("Invalid request: line longer than the limit (%zu bytes)", len);
		rpc_send_error(r, NULL, RPC_INVALID_REQUEST, why, NULL);
		free(why);
		return;
	}
	if (rpc_blank(line, len))
		return;
	r->nul_marked = 0;
	r->nul_escape = memmem(line, len, "\\u0000", 6) != NULL;
	msg = json_loadb(line, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (msg == NULL && strstr(je.text, "NUL byte in object key") != NULL) {
		marked = rpc_nul_mark(line, len);
		msg = json_loadb(marked, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
		free(marked);
		r->nul_marked = 1;
	}
	if (msg == NULL) {
		if (strstr(je.text, "too big") != NULL)
			why = xasprintf(
				"Invalid request: %s (integers must fit in 64 bits)", je.text);
		else
			why = xasprintf("Parse error: %s at column %d", je.text, je.column);
		rpc_send_error(r, NULL,
			strstr(je.text, "too big") != NULL ? RPC_INVALID_REQUEST : RPC_PARSE_ERROR,
			why, NULL);
		free(why);
		return;
	}
	if (!json_is_object(msg)) {
		rpc_send_error(r, NULL, RPC_INVALID_REQUEST,
			json_is_array(msg) ? "Invalid request: batches are not supported"
					   : "Invalid request: expected a JSON object",
			NULL);
		goto out;
	}
	method = json_object_get(msg, "method");
	id = json_object_get(msg, "id");
	if (method != NULL) {
		if (!json_is_string(method))
			rpc_send_error(r, rpc_id_ok(id) ? id : NULL, RPC_INVALID_REQUEST,
				"Invalid request: method must be a string", NULL);
		else if (id == NULL)
			rpc_client_notification(r, json_string_value(method));
		else if (!rpc_id_ok(id))
			rpc_send_error(r, NULL, RPC_INVALID_REQUEST,
				"Invalid request: id must be a string or an integer", NULL);
		else
			rpc_request(r, msg, json_string_value(method), id);
	} else if (json_object_get(msg, "result") != NULL ||
		json_object_get(msg, "error") != NULL) {
		/* A response is never answered; one without a usable id cannot be matched. */
		if (rpc_id_ok(id))
			rpc_call_response(r, msg, id);
		else
			log_warn("response without a usable id ignored");
	} else
		rpc_send_error(r, rpc_id_ok(id) ? id : NULL, RPC_INVALID_REQUEST,
			"Invalid request: missing field `method`", NULL);
out:
	json_decref(msg);
}
