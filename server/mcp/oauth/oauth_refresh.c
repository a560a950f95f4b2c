/*
 * The refresh of a server's stored OAuth tokens (RFC 6749 section 6), as upstream 0.169's
 * client does before using an expired token and after a 401: the tokens read from the store,
 * the token endpoint discovered again (the store keeps none, like upstream's), a POST of
 * grant_type=refresh_token with the client id, the answer's tokens stored in place of the old
 * ones (a refresh token the answer leaves out is kept; the write is atomic, 0600), then the
 * new access token goes to the caller.
 *
 * A refusal with `invalid_grant` (the refresh token is dead; upstream's test for "needs
 * reauthentication") removes the entry, so mcpServerStatus/list says the server needs a
 * login again, unless a login stored other tokens meanwhile. Other failures keep the tokens.
 * Nothing secret reaches an error.
 *
 * One refresh per stored entry at a time in the whole daemon (a flight): every connection's
 * and thread's refresh of the same server joins it and gets its answer. Two refreshes with
 * one refresh token would fail where the provider rotates them (the second one's token is
 * already spent), and that `invalid_grant` would throw the new tokens away. A flight whose
 * request went out runs to its end even when everyone waiting went away, so the tokens the
 * provider issued are stored, never lost.
 */
#include <stdlib.h>
#include <string.h>

#include "io/log.h"
#include "oauth.h"
#include "oauth_int.h"
#include "protocol/xmalloc.h"

/* One refresh of a stored entry; its waiters get its answer. */
struct oauth_flight {
	struct ev_loop *loop;
	char *home;
	struct oauth_tokens t; /* as stored when the refresh began */
	struct oauth_discovery *disc;
	struct oauth_fetch *f;
	struct oauth_refresh *waiters;
	struct oauth_flight *next;
};

/* A caller waiting on a flight. */
struct oauth_refresh {
	struct oauth_flight *fl;
	oauth_refresh_cb cb;
	void *arg;
	struct oauth_refresh *next;
};

static struct oauth_flight *flights;

static void
flight_free(struct oauth_flight *fl)
{
	struct oauth_flight **pp;

	for (pp = &flights; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == fl) {
			*pp = fl->next;
			break;
		}
	}
	oauth_discovery_cancel(fl->disc);
	oauth_fetch_cancel(fl->f);
	oauth_tokens_free(&fl->t);
	free(fl->home);
	free(fl);
}

/* The flight's answer to each waiter (who may start another refresh from its callback). */
static void
refresh_finish(struct oauth_flight *r, const char *access, const char *error)
{
	struct oauth_refresh *w = r->waiters, *next;
	char *a = access != NULL ? xstrdup(access) : NULL,
	     *e = error != NULL ? xstrdup(error) : NULL;

	r->waiters = NULL;
	flight_free(r);
	for (; w != NULL; w = next) {
		next = w->next;
		w->cb(w->arg, a, e);
		free(w);
	}
	if (a != NULL)
		explicit_bzero(a, strlen(a));
	free(a);
	free(e);
}

/* Forget the tokens the provider refused, unless a login replaced them meanwhile. */
static void
refresh_forget(struct oauth_flight *r)
{
	struct oauth_tokens now;
	char *cause = NULL;

	if (oauth_store_load(r->home, r->t.server_name, r->t.server_url, &now, &cause) == 1 &&
		now.refresh_token != NULL && strcmp(now.refresh_token, r->t.refresh_token) == 0 &&
		oauth_store_delete(r->home, r->t.server_name, r->t.server_url, &cause) < 0) {
		log_warn("mcp %s: %s", r->t.server_name, cause);
	}
	free(cause);
	oauth_tokens_free(&now);
}

static void
refresh_answered(void *arg, long status, const char *body, size_t len, const char *error)
{
	struct oauth_flight *r = arg;
	json_t *j = body != NULL ? json_loadb(body, len, 0, NULL) : NULL;
	const char *access = json_string_value(json_object_get(j, "access_token"));
	const char *rt = json_string_value(json_object_get(j, "refresh_token"));
	const char *scope = json_string_value(json_object_get(j, "scope"));
	json_int_t expires = json_integer_value(json_object_get(j, "expires_in"));
	char *cause = NULL, *msg, *why;

	r->f = NULL;
	if (status != 200 || access == NULL) {
		why = error != NULL ? xstrdup(error) : oauth_token_refusal(status, body);
		if (strcmp(json_string_value(json_object_get(j, "error")) ?: "", "invalid_grant") ==
			0)
			refresh_forget(r); /* as upstream: the grant is dead, a login is needed */
		json_decref(j);
		msg = xasprintf("OAuth token refresh failed: %s; log in again "
				"(mcpServer/oauth/login)",
			why);
		free(why);
		refresh_finish(r, NULL, msg);
		free(msg);
		return;
	}
	free(r->t.access_token);
	r->t.access_token = xstrdup(access);
	if (rt != NULL) {
		explicit_bzero(r->t.refresh_token, strlen(r->t.refresh_token));
		free(r->t.refresh_token);
		r->t.refresh_token = xstrdup(rt);
	}
	r->t.expires_at = expires > 0 ? oauth_now_ms() + expires * 1000 : 0;
	if (scope != NULL) { /* the scopes granted, space-separated */
		json_array_clear(r->t.scopes);
		for (const char *p = scope; *p != '\0';) {
			size_t n = strcspn(p, " ");

			if (n > 0)
				json_array_append_new(r->t.scopes, json_stringn(p, n));
			p += n + (p[n] == ' ');
		}
	}
	json_decref(j);
	if (oauth_store_save(r->home, &r->t, &cause) != 0) {
		/* the new token works for this connection; the next start refreshes again */
		log_warn("mcp %s: failed to persist refreshed OAuth tokens: %s", r->t.server_name,
			cause);
		free(cause);
	}
	log_info("mcp %s: OAuth tokens refreshed", r->t.server_name);
	refresh_finish(r, r->t.access_token, NULL);
}

static void
refresh_discovered(void *arg, const struct oauth_meta *m, const char *error)
{
	struct oauth_flight *r = arg;
	char *form = NULL, *cause = NULL, *msg;

	r->disc = NULL;
	if (m == NULL) {
		msg = xasprintf("OAuth token refresh failed: %s", error);
		refresh_finish(r, NULL, msg);
		free(msg);
		return;
	}
	oauth_form_add(&form, "grant_type", "refresh_token");
	oauth_form_add(&form, "refresh_token", r->t.refresh_token);
	if (r->t.client_id != NULL && r->t.client_id[0] != '\0')
		oauth_form_add(&form, "client_id", r->t.client_id);
	r->f = oauth_fetch_start(m->token_endpoint, "application/x-www-form-urlencoded", form,
		refresh_answered, r, &cause);
	explicit_bzero(form, strlen(form));
	free(form);
	if (r->f == NULL) {
		msg = xasprintf("OAuth token refresh failed: %s", cause);
		free(cause);
		refresh_finish(r, NULL, msg);
		free(msg);
	}
}

struct oauth_refresh *
oauth_refresh_start(struct ev_loop *loop, const char *home, const char *name, const char *url,
	oauth_refresh_cb cb, void *arg, char **cause)
{
	struct oauth_flight *r;
	struct oauth_refresh *w;
	int found;

	for (r = flights; r != NULL; r = r->next) { /* one under way: join it */
		if (strcmp(r->home, home) == 0 && strcmp(r->t.server_name, name) == 0 &&
			strcmp(r->t.server_url, url) == 0)
			break;
	}
	if (r == NULL) {
		r = xcalloc(1, sizeof *r);
		found = oauth_store_load(home, name, url, &r->t, cause);
		if (found <= 0 || r->t.refresh_token == NULL || r->t.refresh_token[0] == '\0') {
			if (found == 0)
				*cause = xstrdup("not logged in (no stored OAuth tokens); log in "
						 "with mcpServer/oauth/login");
			else if (found == 1)
				*cause = xstrdup(
					"the OAuth access token expired and no refresh "
					"token is stored; log in again (mcpServer/oauth/login)");
			oauth_tokens_free(&r->t);
			free(r);
			return NULL;
		}
		r->loop = loop;
		r->home = xstrdup(home);
		r->next = flights;
		flights = r;
		r->disc = oauth_discover(loop, url, refresh_discovered, r);
	}
	w = xcalloc(1, sizeof *w);
	w->fl = r;
	w->cb = cb;
	w->arg = arg;
	w->next = r->waiters;
	r->waiters = w;
	return w;
}

void
oauth_refresh_cancel(struct oauth_refresh *w)
{
	struct oauth_flight *fl;
	struct oauth_refresh **pp;

	if (w == NULL)
		return;
	fl = w->fl;
	for (pp = &fl->waiters; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	}
	free(w);
	/* Nobody waits: a flight still discovering stops; one whose request went out ends on
	 * its own and stores what the provider issued. */
	if (fl->waiters == NULL && fl->f == NULL)
		flight_free(fl);
}
