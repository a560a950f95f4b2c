/*
 * The HTTP side of a WebSocket listener: one request read with http-parser (the upgrade, or
 * upstream's /readyz and /healthz probes), and the answer upstream gives it. Pure: no fds.
 */
#ifndef WS_HTTP_H
#define WS_HTTP_H

#include <stddef.h>

#include "ws_auth.h"

#define WS_HTTP_MORE 0 /* the request is not complete yet */
#define WS_HTTP_DONE 1 /* complete: ask ws_http_answer */

/* RFC 6455's SHA-1 (config/digest.c has it; passed in since transport/ is below config/). */
typedef int (*ws_sha1_fn)(const void *data, size_t len, unsigned char out[20]);

struct ws_http;

/* A request of at most max bytes of request line and headers. */
struct ws_http *ws_http_new(size_t max);
void ws_http_free(struct ws_http *h);

/*
 * Feed n bytes: WS_HTTP_MORE, WS_HTTP_DONE with *used the bytes that belonged to the request
 * (what follows is the first WebSocket bytes), or -1 for a malformed or oversized request.
 */
int ws_http_feed(struct ws_http *h, const char *p, size_t n, size_t *used);

/*
 * The answer to a complete request (malloc'd, its length in *len): 101 with the accept key,
 * 200 for a probe, 403 when an Origin header came (browsers), 400/405 for a bad upgrade as
 * upstream words them, 401 when auth (may be NULL) refuses the bearer token. *status is the
 * HTTP status. NULL when sha1 fails. now: Unix seconds (a JWT's exp and nbf).
 */
char *ws_http_answer(struct ws_http *h, ws_sha1_fn sha1, const struct ws_auth *auth, long long now,
	size_t *len, int *status);

/* The answer to a request that ws_http_feed refused (400, connection closed). */
char *ws_http_bad_request(size_t *len);

/* RFC 6455 §4.2.2: base64(SHA-1(key + GUID)) into out (29 bytes with the NUL); 0 or -1. */
int ws_http_accept_key(const char *key, ws_sha1_fn sha1, char out[29]);

#endif
