/*
 * `app-server proxy [--sock PATH]`: stdio bytes to a running daemon's Unix socket and back, as
 * upstream's (the client on stdio speaks WebSocket through it: `ssh host app-server proxy`).
 */
#ifndef WS_PROXY_H
#define WS_PROXY_H

/* Relay until either side ends; the exit status (1 when the socket cannot be reached). */
int ws_proxy_main(const char *path);

#endif
