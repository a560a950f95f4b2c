/*
 * The browser sign-in's loopback server (login_http.c), used by the flow (login_flow.c): a
 * listener on 127.0.0.1 driven by the loop, one request per connection, answered when the
 * flow says so (a callback may wait for the issuer first), then closed.
 *
 * Binding is upstream's: when the port is taken, a `GET /cancel` is sent to it once (another
 * sign-in, ours or upstream's, gives the port up), then up to 10 attempts 200 ms apart; when
 * the port was the default 1455 the same again on 1457 (the issuer's other allowed redirect);
 * then "Port 127.0.0.1:N is already in use". The attempts run on a timer, never blocking.
 */
#ifndef LOGIN_INT_H
#define LOGIN_INT_H

#include <stddef.h>

#include <ev.h>

#define LOGIN_DEFAULT_PORT  1455
#define LOGIN_FALLBACK_PORT 1457

struct login_srv;
struct login_conn;

struct login_srv_cbs {
	/* bound (port) or given up (error, a sentence); once */
	void (*ready)(void *arg, int port, const char *error);
	/* a request's target ("/auth/callback?..."), or NULL for one that could not be read;
	 * answer it with login_conn_respond, now or later */
	void (*request)(void *arg, struct login_conn *c, const char *target);
};

/* port 0: any free port; -1: fail at once (the flow could not prepare its secrets) */
struct login_srv *login_srv_start(
	struct ev_loop *loop, int port, const struct login_srv_cbs *cbs, void *arg);
/*
 * Answer and close (Connection: close). status 302 takes location; body may be NULL. A
 * connection whose server was freed meanwhile still gets its answer.
 */
void login_conn_respond(struct login_conn *c, int status, const char *ctype, const char *location,
	const char *body, size_t len);
/* Close the listener now (the port is free when this returns); answers being written finish
 * on their own, connections still waiting for one are closed. No callback after this. */
void login_srv_free(struct login_srv *s);

/* The issuer's refusal of a code exchange as upstream shows it: error_description,
 * error.message, the error code, or the body itself; heap. */
char *login_token_refusal(const char *body, size_t len);

/* The pages the browser sees (login_page.c), in upstream 0.169's words; heap. */
char *login_page_success(void);
/* message: what failed; code: the error code shown (NULL: unknown_error); description:
 * the details (NULL: the message). */
char *login_page_error(const char *message, const char *code, const char *description);
/* The sentence for an OAuth error the issuer sent back to the callback. */
char *login_callback_error(const char *code, const char *description);

#endif
