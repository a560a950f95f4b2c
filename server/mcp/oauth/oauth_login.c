/*
 * An MCP server's OAuth login, as upstream 0.169's perform_oauth_login_return_url:
 *   1. the callback listener on 127.0.0.1:{mcp_oauth_callback_port or any free port}, bound
 *      once (no retries: the port is the user's choice); the redirect URI is
 *      http://127.0.0.1:PORT/callback/<id>, id the unpadded base64url of the first 9 bytes of
 *      the SHA-256 of the server url (upstream's callback id);
 *   2. discovery (oauth_discover.c), then dynamic client registration (RFC 7591) at the
 *      registration endpoint when no client id is configured;
 *   3. the authorization URL (PKCE S256, state, scopes, resource) goes to `started`;
 *   4. the browser comes back: another path or no code/state: 400 "Invalid OAuth callback"
 *      (the login waits on); a wrong state: 400, the login waits on (a stray request cannot
 *      end it); an error: 400 and the login fails with the provider's words; the code:
 *      "Authentication complete. You may close this window.", exchanged at the token
 *      endpoint, the tokens stored (oauth_store.c), `done`.
 * The whole login is bounded by timeoutSecs (upstream's default 300 s).
 */
#include <stdlib.h>
#include <string.h>

#include "config/digest.h"
#include "config/pkce.h"
#include "io/log.h"
#include "io/loopback.h"
#include "oauth.h"
#include "oauth_int.h"
#include "protocol/xmalloc.h"

#define LOGIN_TIMEOUT_S 300
#define TEXT_PLAIN	"text/plain; charset=UTF-8"

struct oauth_login {
	struct ev_loop *loop;
	struct oauth_login_cbs cbs;
	void *arg;
	char *home, *name, *url, *client_id, *client_secret, *resource, *redirect_uri, *path;
	json_t *scopes;
	struct pkce pkce;
	struct loopback_srv *srv;
	struct oauth_discovery *disc;
	struct oauth_fetch *f;
	struct oauth_meta m;
	int started; /* `started` said the URL */
	ev_timer timeout;
};

static void
wipe_free(char *s)
{
	if (s != NULL)
		explicit_bzero(s, strlen(s));
	free(s);
}

static void
login_fail(struct oauth_login *l, const char *error)
{
	/* the port is free before anyone hears; the owner may free l from its callback */
	ev_timer_stop(l->loop, &l->timeout);
	loopback_srv_free(l->srv);
	l->srv = NULL;
	if (l->started)
		l->cbs.done(l->arg, error);
	else
		l->cbs.started(l->arg, NULL, error);
}

/* Upstream's callback id of a server url. */
static char *
callback_id(const char *url)
{
	unsigned char md[32];
	char out[16];
	char *norm = strstr(url, "://") != NULL && strchr(strstr(url, "://") + 3, '/') == NULL
		? xasprintf("%s/", url) /* the URL parser's form of a bare origin */
		: xstrndup(url, strcspn(url, "#"));

	if (digest_sha256(norm, strlen(norm), md) != 0) {
		free(norm);
		return NULL;
	}
	free(norm);
	pkce_b64url(md, 9, out);
	return xstrdup(out);
}

static void
login_authorize(struct oauth_login *l)
{
	char *q = NULL, *scope = NULL, *url;
	size_t i;
	json_t *v;

	json_array_foreach(l->scopes, i, v)
	{
		char *s = xasprintf("%s%s%s", scope != NULL ? scope : "", scope != NULL ? " " : "",
			json_string_value(v) ?: "");

		free(scope);
		scope = s;
	}
	oauth_form_add(&q, "response_type", "code");
	oauth_form_add(&q, "client_id", l->client_id);
	oauth_form_add(&q, "state", l->pkce.state);
	oauth_form_add(&q, "code_challenge", l->pkce.challenge);
	oauth_form_add(&q, "code_challenge_method", "S256");
	oauth_form_add(&q, "redirect_uri", l->redirect_uri);
	if (scope != NULL && scope[0] != '\0')
		oauth_form_add(&q, "scope", scope);
	if (l->resource != NULL)
		oauth_form_add(&q, "resource", l->resource);
	url = xasprintf("%s%c%s", l->m.authorization_endpoint,
		strchr(l->m.authorization_endpoint, '?') != NULL ? '&' : '?', q);
	l->started = 1;
	l->cbs.started(l->arg, url, NULL);
	free(url);
	free(q);
	free(scope);
}

static void
login_registered(void *arg, long status, const char *body, size_t len, const char *error)
{
	struct oauth_login *l = arg;
	json_t *j = body != NULL ? json_loadb(body, len, 0, NULL) : NULL;
	const char *id = json_string_value(json_object_get(j, "client_id"));
	const char *secret = json_string_value(json_object_get(j, "client_secret"));
	char *msg;

	l->f = NULL;
	if (status < 200 || status >= 300 || id == NULL) {
		msg = error != NULL
			? xasprintf("Dynamic client registration failed: %s", error)
			: xasprintf("Dynamic client registration failed: HTTP %ld", status);
		json_decref(j);
		login_fail(l, msg);
		free(msg);
		return;
	}
	l->client_id = xstrdup(id);
	if (secret != NULL)
		l->client_secret = xstrdup(secret);
	json_decref(j);
	login_authorize(l);
}

static void
login_discovered(void *arg, const struct oauth_meta *m, const char *error)
{
	struct oauth_login *l = arg;
	json_t *reg;
	char *body, *cause = NULL, *msg;

	l->disc = NULL;
	if (m == NULL) {
		login_fail(l, error);
		return;
	}
	l->m.authorization_endpoint = xstrdup(m->authorization_endpoint);
	l->m.token_endpoint = xstrdup(m->token_endpoint);
	l->m.issuer = m->issuer != NULL ? xstrdup(m->issuer) : NULL;
	if (l->resource == NULL && m->resource != NULL)
		l->resource = xstrdup(m->resource);
	if (json_array_size(l->scopes) == 0 && m->scopes_supported != NULL) {
		json_decref(l->scopes); /* upstream's discovered scopes when none were asked */
		l->scopes = json_deep_copy(m->scopes_supported);
	}
	if (l->client_id != NULL) {
		login_authorize(l);
		return;
	}
	if (m->registration_endpoint == NULL) {
		login_fail(l, "Dynamic client registration not supported");
		return;
	}
	/* upstream 0.169's registration, member for member (recorded by the mock's log) */
	reg = json_pack("{s:s, s:[s], s:[s, s], s:s, s:[s]}", "client_name", "Codex",
		"redirect_uris", l->redirect_uri, "grant_types", "authorization_code",
		"refresh_token", "token_endpoint_auth_method", "none", "response_types", "code");
	if (json_array_size(l->scopes) > 0) {
		char *scope = NULL;
		size_t i;
		json_t *v;

		json_array_foreach(l->scopes, i, v)
		{
			char *s = xasprintf("%s%s%s", scope ?: "", scope != NULL ? " " : "",
				json_string_value(v) ?: "");

			free(scope);
			scope = s;
		}
		json_object_set_new(reg, "scope", json_string(scope));
		free(scope);
	}
	json_object_set_new(reg, "application_type", json_string("native"));
	body = json_dumps(reg, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(reg);
	l->f = oauth_fetch_start(
		m->registration_endpoint, "application/json", body, login_registered, l, &cause);
	free(body);
	if (l->f == NULL) {
		msg = xasprintf("Dynamic client registration failed: %s", cause);
		free(cause);
		login_fail(l, msg);
		free(msg);
	}
}

static void
login_exchanged(void *arg, long status, const char *body, size_t len, const char *error)
{
	struct oauth_login *l = arg;
	json_t *j = body != NULL ? json_loadb(body, len, 0, NULL) : NULL;
	struct oauth_tokens t = {0};
	const char *access = json_string_value(json_object_get(j, "access_token"));
	const char *scope = json_string_value(json_object_get(j, "scope"));
	char *cause = NULL, *msg;

	l->f = NULL;
	if (status != 200 || access == NULL) {
		char *why = error != NULL ? xstrdup(error) : oauth_token_refusal(status, body);

		msg = xasprintf("failed to exchange the authorization code: %s", why);
		free(why);
		json_decref(j);
		login_fail(l, msg);
		free(msg);
		return;
	}
	t.server_name = xstrdup(l->name);
	t.server_url = xstrdup(l->url);
	t.client_id = xstrdup(l->client_id);
	t.issuer = l->m.issuer != NULL ? xstrdup(l->m.issuer) : NULL;
	t.access_token = xstrdup(access);
	if (json_string_value(json_object_get(j, "refresh_token")) != NULL)
		t.refresh_token = xstrdup(json_string_value(json_object_get(j, "refresh_token")));
	if (json_integer_value(json_object_get(j, "expires_in")) > 0)
		t.expires_at = oauth_now_ms() +
			json_integer_value(json_object_get(j, "expires_in")) * 1000;
	t.scopes = json_array();
	if (scope != NULL) { /* the scopes granted, space-separated */
		for (const char *p = scope; *p != '\0';) {
			size_t n = strcspn(p, " ");

			if (n > 0)
				json_array_append_new(t.scopes, json_stringn(p, n));
			p += n + (p[n] == ' ');
		}
	} else
		json_array_extend(t.scopes, l->scopes);
	json_decref(j);
	if (oauth_store_save(l->home, &t, &cause) != 0) {
		msg = xasprintf("failed to persist OAuth tokens: %s", cause);
		free(cause);
		oauth_tokens_free(&t);
		login_fail(l, msg);
		free(msg);
		return;
	}
	oauth_tokens_free(&t);
	log_info("mcp %s: OAuth login complete", l->name);
	ev_timer_stop(l->loop, &l->timeout);
	l->cbs.done(l->arg, NULL);
}

/* One query parameter's decoded value (heap), or NULL. */
static char *
query_get(const char *q, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = q; p != NULL && *p != '\0'; p = strchr(p, '&'), p = p ? p + 1 : p) {
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			const char *v = p + kl + 1;
			size_t n = strcspn(v, "&");
			char *out = xmalloc(n + 1), *o = out;

			for (size_t i = 0; i < n; i++) {
				if (v[i] == '%' && i + 2 < n + 1 && v[i + 1] != '\0' &&
					v[i + 2] != '\0') {
					char h[3] = {v[i + 1], v[i + 2], '\0'};

					*o++ = (char)strtol(h, NULL, 16);
					i += 2;
				} else
					*o++ = v[i] == '+' ? ' ' : v[i];
			}
			*o = '\0';
			return out;
		}
	}
	return NULL;
}

static void
login_request(void *arg, struct loopback_conn *c, const char *target)
{
	struct oauth_login *l = arg;
	size_t pl = strlen(l->path);
	const char *q;
	char *code, *state, *err, *desc, *form = NULL, *cause = NULL, *msg;

	if (target == NULL || strncmp(target, l->path, pl) != 0 || target[pl] != '?' ||
		!l->started || l->f != NULL) {
		loopback_conn_respond(c, 400, TEXT_PLAIN, NULL, "Invalid OAuth callback", 22);
		return;
	}
	q = target + pl + 1;
	code = query_get(q, "code");
	state = query_get(q, "state");
	err = query_get(q, "error");
	desc = query_get(q, "error_description");
	if (code != NULL && state != NULL && strcmp(state, l->pkce.state) != 0) {
		log_warn("mcp %s: OAuth callback with a state that is not this login's", l->name);
		loopback_conn_respond(c, 400, TEXT_PLAIN, NULL,
			"OAuth callback state does not match this login", 46);
	} else if (code != NULL && state != NULL) {
		loopback_conn_respond(c, 200, TEXT_PLAIN, NULL,
			"Authentication complete. You may close this window.", 51);
		oauth_form_add(&form, "grant_type", "authorization_code");
		oauth_form_add(&form, "code", code);
		oauth_form_add(&form, "redirect_uri", l->redirect_uri);
		oauth_form_add(&form, "client_id", l->client_id);
		oauth_form_add(&form, "code_verifier", l->pkce.verifier);
		if (l->client_secret != NULL)
			oauth_form_add(&form, "client_secret", l->client_secret);
		if (l->resource != NULL)
			oauth_form_add(&form, "resource", l->resource);
		l->f = oauth_fetch_start(l->m.token_endpoint, "application/x-www-form-urlencoded",
			form, login_exchanged, l, &cause);
		wipe_free(form);
		if (l->f == NULL) {
			msg = xasprintf("failed to exchange the authorization code: %s", cause);
			free(cause);
			login_fail(l, msg);
			free(msg);
		}
	} else if (err != NULL || desc != NULL) {
		msg = err != NULL && desc != NULL
			? xasprintf("OAuth provider returned `%s`: %s", err, desc)
			: err != NULL ? xasprintf("OAuth provider returned `%s`", err)
				      : xasprintf("OAuth error: %s", desc);
		loopback_conn_respond(c, 400, TEXT_PLAIN, NULL, msg, strlen(msg));
		login_fail(l, msg);
		free(msg);
	} else
		loopback_conn_respond(c, 400, TEXT_PLAIN, NULL, "Invalid OAuth callback", 22);
	wipe_free(code);
	wipe_free(state);
	free(err);
	free(desc);
}

static void
login_ready(void *arg, int port, const char *error)
{
	struct oauth_login *l = arg;
	char *id, *msg;

	if (error != NULL) {
		msg = xasprintf("failed to start OAuth callback server: %s", error);
		login_fail(l, msg);
		free(msg);
		return;
	}
	if ((id = callback_id(l->url)) == NULL) {
		login_fail(l, "no SHA-256 here (libcrypto)");
		return;
	}
	l->path = xasprintf("/callback/%s", id);
	l->redirect_uri = xasprintf("http://127.0.0.1:%d%s", port, l->path);
	free(id);
	l->disc = oauth_discover(l->loop, l->url, login_discovered, l);
}

static void
login_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct oauth_login *l = w->data;

	(void)loop;
	(void)revents;
	oauth_discovery_cancel(l->disc);
	l->disc = NULL;
	oauth_fetch_cancel(l->f);
	l->f = NULL;
	login_fail(l, "timed out waiting for OAuth callback");
}

struct oauth_login *
oauth_login_start(struct ev_loop *loop, const struct oauth_login_opts *o,
	const struct oauth_login_cbs *cbs, void *arg)
{
	static const struct loopback_cbs srv_cbs = {login_ready, login_request};
	struct oauth_login *l = xcalloc(1, sizeof *l);
	struct loopback_opts so = {.port = o->callback_port, .attempts = 1};

	l->loop = loop;
	l->cbs = *cbs;
	l->arg = arg;
	l->home = xstrdup(o->home);
	l->name = xstrdup(o->name);
	l->url = xstrdup(o->url);
	l->client_id = o->client_id != NULL ? xstrdup(o->client_id) : NULL;
	l->resource = o->resource != NULL ? xstrdup(o->resource) : NULL;
	l->scopes = o->scopes != NULL ? json_deep_copy(o->scopes) : json_array();
	if (pkce_new(&l->pkce) != 0)
		so.refuse = "failed to generate the PKCE codes";
	ev_timer_init(&l->timeout, login_timeout_cb,
		(double)(o->timeout_secs > 0 ? o->timeout_secs : LOGIN_TIMEOUT_S), 0.);
	l->timeout.data = l;
	ev_timer_start(loop, &l->timeout);
	l->srv = loopback_srv_start(loop, &so, &srv_cbs, l);
	return l;
}

void
oauth_login_free(struct oauth_login *l)
{
	if (l == NULL)
		return;
	ev_timer_stop(l->loop, &l->timeout);
	loopback_srv_free(l->srv);
	oauth_discovery_cancel(l->disc);
	oauth_fetch_cancel(l->f);
	oauth_meta_free(&l->m);
	pkce_wipe(&l->pkce);
	wipe_free(l->client_secret);
	free(l->client_id);
	free(l->home);
	free(l->name);
	free(l->url);
	free(l->resource);
	free(l->redirect_uri);
	free(l->path);
	json_decref(l->scopes);
	free(l);
}
