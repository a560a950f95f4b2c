/*
 * The listeners of `--listen ws://IP:PORT` and `--listen unix://PATH`: a socket on the loop
 * whose accepted connections become WebSocket connections (ws_conn.h).
 */
#ifndef WS_LISTEN_H
#define WS_LISTEN_H

#include <ev.h>

#include "ws_conn.h"

struct ws_listen;

/*
 * Check a ws:// or unix:// URL as upstream does (ws://IP:PORT with a literal IP; port 0 picks
 * one); 0, or -1 with upstream's words in *cause (malloc'd). *loopback tells whether a ws://
 * address is a loopback one (non-loopback listeners need auth, which the caller checks).
 */
int ws_listen_check(const char *url, int *loopback, char **cause);

/*
 * Listen on url; every upgraded connection is handed to ops (lctx passed to ops->open).
 * NULL with *cause on failure (address in use, a live daemon on the socket, ...).
 */
struct ws_listen *ws_listen_new(struct ev_loop *loop, const char *url,
	const struct ws_conn_limits *lim, const struct ws_conn_ops *ops, void *lctx, char **cause);
/* What it listens on, the port resolved ("ws://127.0.0.1:40123", "unix:///run/x.sock"). */
const char *ws_listen_url(const struct ws_listen *l);
/* Stop listening (a Unix socket's file is removed); connections already made go on. */
void ws_listen_free(struct ws_listen *l);

#endif
