/* The OAuth room's shared parts: HTTP exchanges with a body (oauth_fetch.c) and discovery. */
#ifndef OAUTH_INT_H
#define OAUTH_INT_H

#include <stddef.h>

#include <ev.h>
#include <jansson.h>

#define OAUTH_MAX_BODY (1 << 20) /* metadata, registrations and token answers are small */

struct oauth_fetch;
/* status 0 with error when no answer came; body NUL-terminated (wiped after the call) */
typedef void (*oauth_fetch_cb)(
	void *arg, long status, const char *body, size_t len, const char *error);
/* GET (body NULL) or POST body of ctype; NULL with *cause. cb runs once from the loop. */
struct oauth_fetch *oauth_fetch_start(const char *url, const char *ctype, const char *body,
	oauth_fetch_cb cb, void *arg, char **cause);
void oauth_fetch_cancel(struct oauth_fetch *f);

/* What discovery found (heap strings; NULL when absent). */
struct oauth_meta {
	char *authorization_endpoint, *token_endpoint, *registration_endpoint, *resource, *issuer;
	json_t *scopes_supported; /* array, or NULL */
};
void oauth_meta_free(struct oauth_meta *m);

struct oauth_discovery;
/* m filled (borrowed for the call), or error; once. */
typedef void (*oauth_discover_cb)(void *arg, const struct oauth_meta *m, const char *error);
struct oauth_discovery *oauth_discover(
	struct ev_loop *loop, const char *server_url, oauth_discover_cb cb, void *arg);
void oauth_discovery_cancel(struct oauth_discovery *d);

/* Append "&key=value" (no '&' first) form-encoded to a heap string. */
void oauth_form_add(char **form, const char *key, const char *value);
/* The token endpoint's refusal as a sentence (error_description, error, or the status). */
char *oauth_token_refusal(long status, const char *body);

#endif
