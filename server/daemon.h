/* The stdio daemon: owns the protocol fds, the loop, shutdown. */
#ifndef DAEMON_H
#define DAEMON_H

#include <stddef.h>

struct ws_auth;

struct daemon_opts {
	size_t max_line;	       /* longest accepted input line, bytes */
	size_t out_high;	       /* output queue high watermark, bytes */
	size_t out_low;		       /* and low watermark */
	size_t max_inflight;	       /* unanswered requests before -32001 */
	double grace;		       /* seconds to finish in-flight work at shutdown */
	const char *listen;	       /* --listen ws:// or unix:// (daemon_ws.c); NULL: stdio */
	const struct ws_auth *ws_auth; /* --ws-auth (transport/ws_auth.h), or NULL */
};

/* Serve JSON-RPC on stdin/stdout until EOF or a signal; returns the exit status. */
int daemon_run(const struct daemon_opts *opts);

/* The loop of a WebSocket listener (daemon_ws.c), set up by daemon_run; the exit status. */
struct ev_loop;
int daemon_ws_run(struct ev_loop *loop, const struct daemon_opts *opts);

/*
 * At exit, once every connection and thread is freed: run the loop (within grace seconds)
 * while freed sandboxes finish their teardown (their inits remove the placeholders they made
 * in workspaces) and detached SessionEnd hooks run (daemon.c).
 */
void daemon_wait_orphans(struct ev_loop *loop, double grace);

#endif
