/*
 * wsclient: a WebSocket client small enough to be no part of what a bench measures
 * (wsclient.c): a non-blocking TCP connection to ws://IP:PORT, the upgrade, masked text frames
 * out, the server's frames in (joined when fragmented, pings answered), one JSON-RPC message
 * per text message. The caller polls the fd: read when readable, flush when it has output.
 */
#ifndef WSCLIENT_H
#define WSCLIENT_H

#include <stddef.h>

#include "protocol/buf.h"

struct bench_ws {
	int fd;
	int open;      /* the 101 was read */
	struct buf in; /* bytes read; those before at are parsed */
	size_t at;
	struct buf out; /* bytes to write */
	struct buf msg; /* the message being joined from fragments */
};

/* Connect to url (ws://IP:PORT) and queue the upgrade request; 0 or -1. */
int bench_ws_connect(struct bench_ws *c, const char *url);
/* Queue a text message. */
void bench_ws_text(struct bench_ws *c, const char *text, size_t len);
/* Write what is queued, as far as the socket takes it; 0 or -1 (the connection broke). */
int bench_ws_flush(struct bench_ws *c);
/* Read what is there; 0, or -1 on EOF or an error. */
int bench_ws_read(struct bench_ws *c);
/*
 * The next whole text message read (borrowed until the next call) in *text: 1; 0 when more
 * bytes are needed; -1 on a close frame, a refused upgrade or a bad frame.
 */
int bench_ws_next(struct bench_ws *c, const char **text, size_t *len);
/* Whether output waits to be written. */
int bench_ws_pending(const struct bench_ws *c);
void bench_ws_close(struct bench_ws *c);

#endif
