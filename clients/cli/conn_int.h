/*
 * Between conn.c (the protocol), conn_proc.c (the daemon process) and conn_ws.c with
 * conn_ws_http.c (a listening daemon, --connect): the connection's state. The connection is over
 * only when the daemon was reaped AND its stdout reached EOF, in either order, so no line written
 * before it exited is lost; over a socket there is no process (reaped from the start) and the
 * socket's end is the EOF.
 */
#ifndef CONN_INT_H
#define CONN_INT_H

#include <sys/types.h>

#include <ev.h>
#include <jansson.h>

#include "conn.h"
#include "protocol/buf.h"

struct outq;
struct linebuf;
struct conn_ws;

#define CONN_STDERR_KEEP 4096 /* the end of the daemon's stderr kept for error messages */

struct conn_req {
	struct conn_req *next;
	struct conn *conn;
	long long id;
	char *method;
	json_t *params; /* kept for a retry after -32001 */
	int attempts;
	conn_cb cb;
	void *arg;
	ev_timer retry;
};

struct conn {
	struct ev_loop *loop;
	struct conn_hooks hooks;
	pid_t pid;
	int in_fd;  /* the daemon's stdin (we write), -1 once closed */
	int out_fd; /* its stdout */
	int err_fd; /* its stderr, -1 at EOF */
	ev_io out_io, err_io;
	ev_child child;
	struct outq *q;
	struct linebuf *lb;
	struct buf err_tail;
	struct conn_req *reqs;
	long long next_id;
	int reaped, out_eof, finished, status;
	char *why; /* set early when the reason is known before the end (a line too long) */
	char *binary;
	struct conn_ws *ws; /* --connect: the WebSocket (no process, no pipes), else NULL */
};

/* Where app-client --connect points. */
struct conn_ws_target {
	char *url;
	char *path;	   /* unix:///PATH, or NULL */
	char *host, *port; /* ws://HOST:PORT, or NULL */
	char *host_header; /* the request's Host */
	char *resource;	   /* the request's path */
	const char *token; /* the bearer token (borrowed), or NULL */
};

/* conn_proc.c: start the daemon with pipes and its watchers; 0 or -1 with *cause. */
int conn_proc_start(struct conn *c, char **cause);
/* conn_proc.c: why the daemon is gone, one line with the end of its stderr (heap). */
char *conn_proc_why(struct conn *c);
/* conn_proc.c: stop the watchers and close the pipes. */
void conn_proc_stop(struct conn *c);
/* conn.c: the daemon was reaped or its stdout ended: finish once both happened. */
void conn_check_finished(struct conn *c);
/* conn.c: one message from the daemon (a line without its newline), routed by its shape. */
void conn_dispatch(struct conn *c, const char *msg, size_t len);

/* conn_ws_http.c: parse ws://HOST:PORT[/PATH] or unix:///PATH; 0, or -1 with *cause. */
int conn_ws_target_parse(struct conn_ws_target *t, const char *url, char **cause);
/* conn_ws_http.c: free what conn_ws_target_parse allocated (the token is not ours). */
void conn_ws_target_clear(struct conn_ws_target *t);
/*
 * conn_ws_http.c: connect and upgrade (blocking, bounded by a deadline): the socket (non-blocking,
 * close-on-exec), any frame bytes that came with the 101 added to early; -1 with *cause.
 */
int conn_ws_open(const struct conn_ws_target *t, struct buf *early, char **cause);
/* conn_ws.c: connect to the daemon at url and start framing on the loop; 0 or -1 with *cause. */
int conn_ws_start(struct conn *c, const char *url, const char *token, char **cause);
/* conn_ws.c: queue one message as a text frame; 0, or -1 once closing. */
int conn_ws_send(struct conn *c, const char *p, size_t n);
/* conn_ws.c: start the close handshake (1000); `closed` fires when the socket is gone. */
void conn_ws_close(struct conn *c);
/* conn_ws.c: why the connection ended, one line (heap). */
char *conn_ws_why(struct conn *c);
/* conn_ws.c: stop the watchers, close the socket, free the framing. */
void conn_ws_free(struct conn *c);

#endif
