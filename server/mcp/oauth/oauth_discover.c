/*
 * Where a server's authorization lives, in the order upstream 0.169's client (rmcp) asks:
 *  1. RFC 9728 protected-resource metadata: {origin}/.well-known/oauth-protected-resource{path},
 *     then {origin}/.well-known/oauth-protected-resource; its first authorization_servers entry
 *     is the issuer (none found: the server's own url is asked as the issuer, the 2025-03-26
 *     way);
 *  2. RFC 8414 / OpenID metadata of the issuer: with a path, /.well-known/oauth-authorization-
 *     server{path}, /.well-known/openid-configuration{path}, {path}/.well-known/openid-
 *     configuration; without, /.well-known/oauth-authorization-server then /.well-known/openid-
 *     configuration;
 *  3. nothing found: {origin}/authorize, /token and /register, as rmcp's defaults.
 * Each candidate is one GET on the loop; a 200 with a JSON object that names what is needed
 * ends the step, anything else tries the next.
 */
#include <stdlib.h>
#include <string.h>

#include "oauth_int.h"
#include "protocol/xmalloc.h"

struct oauth_discovery {
	oauth_discover_cb cb;
	void *arg;
	char *server_url;
	json_t *cands; /* the step's URLs still to try */
	int step;      /* 1: protected resource, 2: authorization server */
	struct oauth_fetch *f;
	struct oauth_meta m;
	struct ev_loop *loop;
	ev_timer start;
};

void
oauth_meta_free(struct oauth_meta *m)
{
	free(m->authorization_endpoint);
	free(m->token_endpoint);
	free(m->registration_endpoint);
	free(m->resource);
	free(m->issuer);
	json_decref(m->scopes_supported);
	memset(m, 0, sizeof *m);
}

/* url's origin ("http://h:p") and path (no query, no trailing '/'; "" for the root). */
static void
split_url(const char *url, char **origin, char **path)
{
	const char *s = strstr(url, "://"), *p, *end;

	s = s != NULL ? s + 3 : url;
	p = s + strcspn(s, "/?#");
	*origin = xstrndup(url, (size_t)(p - url));
	end = p + strcspn(p, "?#");
	while (end > p && end[-1] == '/')
		end--;
	*path = xstrndup(p, (size_t)(end - p));
}

static void
add(json_t *a, char *s)
{
	json_array_append_new(a, json_string(s));
	free(s);
}

static void discover_next(struct oauth_discovery *d);

static void
discover_finish(struct oauth_discovery *d, const char *error)
{
	d->cb(d->arg, error == NULL ? &d->m : NULL, error);
	oauth_discovery_cancel(d);
}

/* Step 2's candidates for issuer. */
static void
as_candidates(struct oauth_discovery *d, const char *issuer)
{
	char *origin, *path;

	split_url(issuer, &origin, &path);
	json_array_clear(d->cands);
	if (path[0] != '\0') {
		add(d->cands,
			xasprintf("%s/.well-known/oauth-authorization-server%s", origin, path));
		add(d->cands, xasprintf("%s/.well-known/openid-configuration%s", origin, path));
		add(d->cands, xasprintf("%s%s/.well-known/openid-configuration", origin, path));
	} else {
		add(d->cands, xasprintf("%s/.well-known/oauth-authorization-server", origin));
		add(d->cands, xasprintf("%s/.well-known/openid-configuration", origin));
	}
	d->step = 2;
	free(origin);
	free(path);
}

static char *
dup_str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL && s[0] != '\0' ? xstrdup(s) : NULL;
}

static void
discover_fetched(void *arg, long status, const char *body, size_t len, const char *error)
{
	struct oauth_discovery *d = arg;
	json_t *j = status == 200 && body != NULL ? json_loadb(body, len, 0, NULL) : NULL;
	const char *issuer;

	(void)error;
	d->f = NULL;
	if (d->step == 1 && json_is_object(j) &&
		(issuer = json_string_value(
			 json_array_get(json_object_get(j, "authorization_servers"), 0))) != NULL) {
		d->m.resource = dup_str(j, "resource");
		d->m.issuer = xstrdup(issuer);
		if (json_is_array(json_object_get(j, "scopes_supported")))
			d->m.scopes_supported = json_incref(json_object_get(j, "scopes_supported"));
		as_candidates(d, issuer);
	} else if (d->step == 2 && json_is_object(j) &&
		json_string_value(json_object_get(j, "authorization_endpoint")) != NULL &&
		json_string_value(json_object_get(j, "token_endpoint")) != NULL) {
		d->m.authorization_endpoint = dup_str(j, "authorization_endpoint");
		d->m.token_endpoint = dup_str(j, "token_endpoint");
		d->m.registration_endpoint = dup_str(j, "registration_endpoint");
		if (json_string_value(json_object_get(j, "issuer")) != NULL) {
			free(d->m.issuer);
			d->m.issuer = dup_str(j, "issuer");
		}
		if (d->m.scopes_supported == NULL &&
			json_is_array(json_object_get(j, "scopes_supported")))
			d->m.scopes_supported = json_incref(json_object_get(j, "scopes_supported"));
		json_decref(j);
		discover_finish(d, NULL);
		return;
	}
	json_decref(j);
	discover_next(d);
}

static void
discover_next(struct oauth_discovery *d)
{
	char *cause = NULL, *origin, *path, *url;

	while (json_array_size(d->cands) > 0) {
		url = xstrdup(json_string_value(json_array_get(d->cands, 0)));
		json_array_remove(d->cands, 0);
		d->f = oauth_fetch_start(url, NULL, NULL, discover_fetched, d, &cause);
		free(url);
		if (d->f != NULL)
			return;
		free(cause);
		cause = NULL;
	}
	if (d->step == 1) { /* no protected-resource metadata: the server is its own issuer */
		as_candidates(d, d->server_url);
		discover_next(d);
		return;
	}
	split_url(d->server_url, &origin, &path);
	d->m.authorization_endpoint = xasprintf("%s/authorize", origin);
	d->m.token_endpoint = xasprintf("%s/token", origin);
	d->m.registration_endpoint = xasprintf("%s/register", origin);
	free(origin);
	free(path);
	discover_finish(d, NULL);
}

static void
discover_start_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	discover_next(w->data);
}

struct oauth_discovery *
oauth_discover(struct ev_loop *loop, const char *server_url, oauth_discover_cb cb, void *arg)
{
	struct oauth_discovery *d = xcalloc(1, sizeof *d);
	char *origin, *path;

	d->loop = loop;
	d->cb = cb;
	d->arg = arg;
	d->server_url = xstrdup(server_url);
	d->cands = json_array();
	d->step = 1;
	split_url(server_url, &origin, &path);
	if (path[0] != '\0')
		add(d->cands, xasprintf("%s/.well-known/oauth-protected-resource%s", origin, path));
	add(d->cands, xasprintf("%s/.well-known/oauth-protected-resource", origin));
	free(origin);
	free(path);
	/* the first GET starts from the loop: the caller always hears back the same way */
	ev_timer_init(&d->start, discover_start_cb, 0., 0.);
	d->start.data = d;
	ev_timer_start(loop, &d->start);
	return d;
}

void
oauth_discovery_cancel(struct oauth_discovery *d)
{
	if (d == NULL)
		return;
	ev_timer_stop(d->loop, &d->start);
	oauth_fetch_cancel(d->f);
	oauth_meta_free(&d->m);
	json_decref(d->cands);
	free(d->server_url);
	free(d);
}
