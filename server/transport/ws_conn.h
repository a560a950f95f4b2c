/*
 * One WebSocket connection on the loop: the HTTP upgrade (ws_http.c), then RFC 6455 framing
 * by wslay. Each text message in is one JSON-RPC message for the owner; each line the owner
 * commits to the connection's output queue goes out as one text message. The owner is told
 * once when the connection is open and once when it is over, and frees it later.
 */
#ifndef WS_CONN_H
#define WS_CONN_H

#include <stddef.h>

#include <ev.h>

#include "ws_http.h"

struct outq;
struct ws_conn;

struct ws_conn_ops {
	/* The upgrade succeeded: the owner's arg for the calls below (never NULL). */
	void *(*open)(void *lctx, struct ws_conn *c);
	/* One text message (a JSON-RPC message), not NUL-terminated. */
	void (*message)(void *arg, const char *text, size_t len);
	/* The connection is over (closed, failed, or overflowed): once, after open. */
	void (*closed)(void *arg, const char *why);
};

struct ws_conn_limits {
	size_t max_message; /* longest message in; a frame header beyond it closes with 1009 */
	size_t out_high;    /* the output queue's watermarks */
	size_t out_low;	    /* ... */
	size_t out_limit;   /* queued output past this disconnects (a client that never reads) */
	double handshake_timeout; /* seconds for the whole upgrade request (slowloris) */
	ws_sha1_fn sha1;
	const struct ws_auth *auth; /* --ws-auth, borrowed; NULL: none */
};

/* Take over fd (non-blocking, close-on-exec): read its upgrade request. */
struct ws_conn *ws_conn_new(struct ev_loop *loop, int fd, const struct ws_conn_limits *lim,
	const struct ws_conn_ops *ops, void *lctx);
/* Close the fd and free; what is queued is lost. Never from inside one of its own calls. */
void ws_conn_free(struct ws_conn *c);

/* Free every connection still in its upgrade request (daemon exit). */
void ws_conn_reap_unopened(void);

/* The queue lines for this client go into (valid from open until ws_conn_free). */
struct outq *ws_conn_outq(struct ws_conn *c);
/* Read again after ws_conn_message returned while congested (the queue drained). */
void ws_conn_resume(struct ws_conn *c);
/* Send a close frame (code, reason) after what is queued; the peer's answer ends it. */
void ws_conn_close(struct ws_conn *c, int code, const char *reason);
/* Whether the connection is over (closed was called, or is about to be). */
int ws_conn_dead(const struct ws_conn *c);
/* A label for logs ("#12"). */
const char *ws_conn_name(const struct ws_conn *c);

#endif
