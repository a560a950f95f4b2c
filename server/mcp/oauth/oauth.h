/*
 * OAuth for streamable-HTTP MCP servers, as upstream 0.169 does it (its rmcp-client's oauth
 * and perform_oauth_login): discovery of the authorization server (RFC 9728 then RFC 8414 /
 * OpenID), dynamic client registration (RFC 7591), PKCE S256, a loopback callback, the code
 * exchanged for tokens, the tokens kept in CODEX_HOME/.credentials.json (upstream's file
 * store: keyring is not available here), then used as `Authorization: Bearer`, refreshed
 * (oauth_refresh.c) when expired or refused.
 *
 * Everything runs on the loop. Secrets (codes, verifiers, tokens, client secrets) are never
 * logged nor put in an error; the buffers that held them are wiped.
 */
#ifndef MCP_OAUTH_H
#define MCP_OAUTH_H

#include <jansson.h>

#include <ev.h>

/* The stored tokens of one server (heap strings; NULL when absent). */
struct oauth_tokens {
	char *server_name, *server_url, *client_id, *access_token, *refresh_token;
	char *issuer; /* the authorization server discovery found (upstream 0.169 keeps it) */
	long long expires_at; /* ms since the epoch; 0: unknown */
	json_t *scopes;	      /* array of strings */
};

void oauth_tokens_free(struct oauth_tokens *t);
/* The tokens stored for (name, url) in dir/.credentials.json: 1 found, 0 none, -1 *cause. */
int oauth_store_load(
	const char *dir, const char *name, const char *url, struct oauth_tokens *out, char **cause);
/* Store (replacing the same server's entry); 0, or -1 with *cause. */
int oauth_store_save(const char *dir, const struct oauth_tokens *t, char **cause);
/* Remove (name, url): 1 removed, 0 none, -1 *cause. The file goes when it becomes empty. */
int oauth_store_delete(const char *dir, const char *name, const char *url, char **cause);
/* Upstream's key of an entry: "<name>|<16 hex of sha256 of {"type":"http","url":..,"headers":{}}>"
 * (heap), or NULL without libcrypto. */
char *oauth_store_key(const char *name, const char *url);
/* Milliseconds since the epoch (expires_at's clock). */
long long oauth_now_ms(void);
/* Whether the token expires within upstream's 30 s skew (expires_at known). */
int oauth_tokens_stale(const struct oauth_tokens *t, long long now_ms);

/* ---- the refresh (oauth_refresh.c) ---- */

struct oauth_refresh;
/* access_token (borrowed for the call) when refreshed and stored, else error; once. */
typedef void (*oauth_refresh_cb)(void *arg, const char *access_token, const char *error);
/* Refresh (name, url)'s stored tokens; NULL with *cause when there is nothing to refresh
 * with (no tokens, no refresh token, an unreadable store). cb runs from the loop, later. */
struct oauth_refresh *oauth_refresh_start(struct ev_loop *loop, const char *home, const char *name,
	const char *url, oauth_refresh_cb cb, void *arg, char **cause);
/* Stop; no callback after. NULL is fine. */
void oauth_refresh_cancel(struct oauth_refresh *r);

/* ---- the login (mcpServer/oauth/login, `mcp login`) ---- */

struct oauth_login;

struct oauth_login_opts {
	const char *home;	    /* CODEX_HOME (tokens are stored there) */
	const char *name, *url;	    /* the server */
	const json_t *scopes;	    /* array of strings, or NULL: the discovered ones, else none */
	const char *client_id;	    /* configured (oauth_client_id); NULL: dynamic registration */
	const char *resource;	    /* configured oauth_resource, or NULL */
	int callback_port;	    /* mcp_oauth_callback_port; 0: any free port */
	long long timeout_secs;	    /* callback wait; <= 0: upstream's 300 s */
	const char *const *headers; /* the server's http_headers ("Name: value"), NULL-ended */
};

struct oauth_login_cbs {
	/* the authorization URL to open, or the error (upstream's text); once */
	void (*started)(void *arg, const char *authorization_url, const char *error);
	/* the login ended: error NULL when the tokens are stored; once, only after started
	 * gave a URL */
	void (*done)(void *arg, const char *error);
};

struct oauth_login *oauth_login_start(struct ev_loop *loop, const struct oauth_login_opts *o,
	const struct oauth_login_cbs *cbs, void *arg);
/* Stop now (the callback port is free when this returns); no callback after. */
void oauth_login_free(struct oauth_login *l);

#endif
