/*
 * Sign in with ChatGPT in a browser, as upstream 0.169's login server does: PKCE (S256), a
 * loopback callback server on 127.0.0.1:1455 (1457 when 1455 stays taken), the authorize URL
 * the user opens, the code exchanged at {issuer}/oauth/token, the id_token exchanged for an
 * API key (best effort), auth.json written, then the browser sent to the success page.
 *
 * Everything runs on the loop; the flow never blocks. Secrets (the code, the verifier, the
 * tokens) are never logged and never put in an error; the buffers that held them are wiped.
 */
#ifndef LOGIN_FLOW_H
#define LOGIN_FLOW_H

#include <ev.h>

struct http;
struct login_flow;

#define LOGIN_ISSUER	 "https://auth.openai.com"
#define LOGIN_ISSUER_ENV "CODEX_APP_SERVER_LOGIN_ISSUER" /* upstream's app-server override */
#define LOGIN_PORT_ENV	 "APP_SERVER_LOGIN_PORT" /* ours: the callback port (0: any), tests */

struct login_flow_opts {
	const char *issuer;	/* NULL: $CODEX_APP_SERVER_LOGIN_ISSUER, else upstream's */
	const char *originator; /* the authorize URL's originator (the client's name) */
	int port;		/* -1: $APP_SERVER_LOGIN_PORT, else 1455 */
};

struct login_flow_cbs {
	/* the callback server listens (auth_url) or could not (error); once */
	void (*started)(void *arg, const char *auth_url, const char *error);
	/* the flow ended: error NULL when signed in (auth.json written), else upstream's
	 * sentence; once, only after started without error */
	void (*done)(void *arg, const char *error);
};

struct login_flow *login_flow_start(struct ev_loop *loop, struct http *h,
	const struct login_flow_opts *o, const struct login_flow_cbs *cbs, void *arg);
/* Stop at once: the port is free when this returns; no callback after. */
void login_flow_free(struct login_flow *f);

/* Percent-encode as a form (application/x-www-form-urlencoded): heap. */
char *login_form_encode(const char *s);

#endif
