/*
 * The JSON-RPC connection over stdio: classifies each input line, validates requests against
 * the compiled protocol schema, dispatches them through the method tables it was given, and
 * writes every response, error, notification and server request through the one ordered
 * writer (outq). It knows nothing of what the methods do: the per-connection state is the
 * caller's `struct session`, handed back to every handler.
 *
 * Rules:
 *  - Every request gets exactly one answer. A handler receives a struct rpc_req and must
 *    eventually pass it to exactly one of rpc_reply / rpc_reply_raw / rpc_reply_error, which
 *    free it. Requests still unanswered when the connection closes are answered with an
 *    error by rpc_free.
 *  - Every server request (rpc_call) is resolved exactly once: its callback runs with the
 *    client's result or error, or with RPC_CALL_CANCELLED (rpc_call_cancel, rpc_free). A
 *    response with an unknown id is logged and ignored.
 */
#ifndef RPC_H
#define RPC_H

#include <stddef.h>

#include <ev.h>
#include <jansson.h>

#define RPC_PARSE_ERROR	     -32700
#define RPC_INVALID_REQUEST  -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS   -32602
#define RPC_INTERNAL_ERROR   -32603
#define RPC_OVERLOADED	     -32001

struct outq;
struct rpc;
struct rpc_req;
struct session; /* the caller's per-connection state, opaque here */

#define RPC_BEFORE_INIT 0x1 /* the method may run before initialize */

/* One method of a table (each api/ file exports a table ending with a NULL name). */
struct rpc_method {
	const char *name;
	void (*fn)(struct session *s, struct rpc_req *req, json_t *params);
	unsigned flags;
};

struct rpc_opts {
	size_t max_inflight; /* requests awaiting an answer before -32001 */
};

/* A connection dispatching to tables (a NULL-terminated list of method tables, borrowed). */
struct rpc *rpc_new(struct ev_loop *loop, struct outq *q, const struct rpc_opts *opts,
	const struct rpc_method *const *tables, char **cause);
/* The state handed to every handler. */
void rpc_set_session(struct rpc *r, struct session *s);
/* Answer what is still pending with an error, cancel every server request, then free. */
void rpc_free(struct rpc *r);
/* The method of these tables, or NULL. */
const struct rpc_method *rpc_method_find(const struct rpc_method *const *tables, const char *name);

/* Handle one input line (see linebuf_cb). */
void rpc_line(struct rpc *r, const char *line, size_t len, int oversized);

/* Answer a request with a result (stolen); frees req. */
void rpc_reply(struct rpc_req *req, json_t *result);
/* Answer a request with a result given as JSON text (a compact object); frees req. */
void rpc_reply_raw(struct rpc_req *req, const char *result, size_t len);
/* Answer a request with an error; data (stolen) may be NULL; frees req. */
void rpc_reply_error(struct rpc_req *req, int code, const char *message, json_t *data);
void rpc_reply_errorf(struct rpc_req *req, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Send a notification (params stolen, may be NULL) unless the client opted out of it. */
void rpc_notify(struct rpc *r, const char *method, json_t *params);
/*
 * A notification's whole line (JSON text and its '\n', as rpc_notify_text made it), written as
 * it is unless the client opted out of method: one serialization for many connections.
 */
void rpc_notify_line(struct rpc *r, const char *method, const char *line, size_t len);
/* The line rpc_notify would write (params stolen, may be NULL), for rpc_notify_line (heap). */
char *rpc_notify_text(const char *method, json_t *params, size_t *len);
/* True unless the client opted out of this notification method. */
int rpc_notify_wanted(const struct rpc *r, const char *method);
/* Milliseconds since the epoch, for emittedAtMs. */
long long rpc_now_ms(void);

/* How a server request ended. */
enum rpc_call_status {
	RPC_CALL_RESULT,    /* value: the client's result */
	RPC_CALL_ERROR,	    /* value: the client's error object */
	RPC_CALL_CANCELLED, /* value: NULL (rpc_call_cancel, connection closed) */
};
typedef void (*rpc_call_cb)(void *arg, enum rpc_call_status st, const json_t *value);
/*
 * Send a request to the client (params stolen, may be NULL); ids count from 0 per
 * connection, as upstream's. cb runs exactly once (see the rules above). Returns the id.
 */
long long rpc_call(struct rpc *r, const char *method, json_t *params, rpc_call_cb cb, void *arg);
/* Cancel a pending server request: its callback runs now; a later answer is ignored. 0 or -1. */
int rpc_call_cancel(struct rpc *r, long long id);
/* Server requests awaiting the client. */
size_t rpc_calls_pending(const struct rpc *r);

/* Requests received but not yet answered. */
size_t rpc_inflight(const struct rpc *r);
int rpc_experimental(const struct rpc *r);

/* Handshake state, kept by the initialize handler. */
int rpc_initialized(const struct rpc *r);
void rpc_set_initialized(struct rpc *r, int experimental, json_t *optouts);

#endif
