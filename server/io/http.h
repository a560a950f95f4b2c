/*
 * HTTP client on the event loop: libcurl's multi interface driven by libev (one ev_io per
 * curl socket, one ev_timer for curl's timeout). Any number of transfers run at once and the
 * loop never blocks. Each transfer ends with exactly one `done` callback, unless the owner
 * cancelled it first; after `done` returns the transfer is freed.
 *
 * Backpressure: while the congestion predicate says so (the protocol writer is above its high
 * watermark), body bytes are refused with CURL_WRITEFUNC_PAUSE; http_resume (called when the
 * writer drains below its low watermark) lets them flow again. A paused transfer's idle timer
 * is stopped: waiting for our own writer is not the server being idle.
 *
 * Callbacks run inside curl (data) or right after it (done). From `data` a caller may cancel
 * transfers (they are released once curl returns) but must not start new ones; from `done`
 * it may start and cancel freely, except the transfer being finished.
 */
#ifndef HTTP_H
#define HTTP_H

#include <stddef.h>

#include <ev.h>

struct http;
struct http_req;

/* How a transfer ended. */
struct http_result {
	int curl_code;	     /* CURLcode; 0 when the whole body arrived */
	long status;	     /* HTTP status, 0 when none was received */
	int connect_failed;  /* no connection could be made (resolve, refuse, connect timeout) */
	int timed_out;	     /* the total timeout expired */
	int idle_timeout;    /* no byte arrived for idle_timeout_ms */
	int aborted;	     /* a callback asked to stop */
	long retry_after_ms; /* Retry-After (or retry-after-ms) of the response, -1 when none */
	const char *error;   /* a sentence (curl's error buffer or ours) when curl_code != 0 */
	const char *url;
};

struct http_cbs {
	/* Body bytes (status and headers are known by then); nonzero aborts the transfer. */
	int (*data)(void *arg, long status, const char *buf, size_t len);
	/* The end, successful or not; called once. */
	void (*done)(void *arg, const struct http_result *res);
};

struct http_req_opts {
	const char *method;	    /* "POST" (with body), "GET" or "DELETE" */
	const char *url;	    /* http:// or https:// */
	const char *const *headers; /* "Name: value", NULL-terminated; may be NULL */
	const char *body;	    /* copied */
	size_t body_len;
	long connect_timeout_ms; /* 0: curl's default */
	long idle_timeout_ms;	 /* no byte for this long ends the transfer; 0: never */
	long total_timeout_ms;	 /* 0: no limit */
};

/* A client on loop; curl is initialised on first use, not here. */
struct http *http_new(struct ev_loop *loop);
/* Cancel every transfer (no callbacks) and free. Not from inside a callback. */
void http_free(struct http *h);
/* The congestion predicate consulted before delivering body bytes. */
void http_set_congested(struct http *h, int (*fn)(void *), void *arg);
/* Resume every transfer paused by congestion. */
void http_resume(struct http *h);
/* Transfers running, and those among them paused. */
size_t http_active(const struct http *h);
size_t http_paused(const struct http *h);

/*
 * The daemon's client (one per process: the loop is single-threaded), set by daemon.c at
 * start-up, so request handlers can reach it; NULL outside the daemon.
 */
struct http *http_default(void);
void http_set_default(struct http *h);

/* Start a transfer; NULL with *cause when it cannot be set up. */
struct http_req *http_start(struct http *h, const struct http_req_opts *o,
	const struct http_cbs *cbs, void *arg, char **cause);
/* A status's reason phrase ("Not Found"), as upstream's messages show it; "" when unknown. */
const char *http_reason(long status);

/*
 * The response headers of a transfer whose name starts with prefix (case-insensitive), each
 * given to fn (name as sent, value trimmed); from the data callback on. -1 when this libcurl
 * cannot list headers (before 7.84).
 */
int http_req_headers(struct http_req *r, const char *prefix,
	void (*fn)(void *arg, const char *name, const char *value), void *arg);
/* Stop a transfer: no callback after this, resources released (now or once curl returns). */
void http_cancel(struct http_req *r);

#endif
