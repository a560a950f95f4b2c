/*
 * A loopback HTTP server for OAuth callbacks (the ChatGPT sign-in's, the MCP servers'): a
 * listener on 127.0.0.1 driven by the loop, one request per connection, answered when its
 * owner says so (a callback may wait for a token exchange first), then closed.
 *
 * Binding is upstream's for each user: when the port is taken, optionally a `GET /cancel` is
 * sent to it once (another sign-in, ours or upstream's, gives the port up), then up to
 * `attempts` attempts 200 ms apart, then once more on `fallback_port`; then "Port
 * 127.0.0.1:N is already in use". The attempts run on a timer, never blocking.
 */
#ifndef IO_LOOPBACK_H
#define IO_LOOPBACK_H

#include <stddef.h>

#include <ev.h>

struct loopback_srv;
struct loopback_conn;

struct loopback_opts {
	int port;	    /* 0: any free port */
	int fallback_port;  /* tried after `attempts` on port; 0: none */
	int attempts;	    /* bind attempts per port (at least 1) */
	int send_cancel;    /* ask the port's holder to give it up (`GET /cancel`) */
	const char *refuse; /* not NULL: fail with this sentence at once (from the loop) */
};

struct loopback_cbs {
	/* bound (port) or given up (error, a sentence); once */
	void (*ready)(void *arg, int port, const char *error);
	/* a request's target ("/auth/callback?..."), or NULL for one that could not be read;
	 * answer it with loopback_conn_respond, now or later */
	void (*request)(void *arg, struct loopback_conn *c, const char *target);
};

struct loopback_srv *loopback_srv_start(struct ev_loop *loop, const struct loopback_opts *o,
	const struct loopback_cbs *cbs, void *arg);
/*
 * Answer and close (Connection: close). status 302 takes location; body may be NULL. A
 * connection whose server was freed meanwhile still gets its answer.
 */
void loopback_conn_respond(struct loopback_conn *c, int status, const char *ctype,
	const char *location, const char *body, size_t len);
/* Close the listener now (the port is free when this returns); answers being written finish
 * on their own, connections still waiting for one are closed. No callback after this. */
void loopback_srv_free(struct loopback_srv *s);

#endif
