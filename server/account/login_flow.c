/*
 * The browser sign-in (login_flow.h), observed side by side with upstream 0.169:
 *   authorize URL  {issuer}/oauth/authorize?response_type=code&client_id&redirect_uri=
 *                  http://127.0.0.1:PORT/auth/callback&code_challenge&code_challenge_method=S256
 *                  &state&scope=openid profile email offline_access api.connectors.read
 *                  api.connectors.invoke&id_token_add_organizations=true
 *                  &codex_cli_simplified_flow=true&originator (form-encoded: spaces as '+')
 *   /auth/callback state not ours: 400 "State mismatch", the flow goes on; error=...: the error
 *                  page, "Sign-in failed: <description>"; no code: "Missing authorization
 *                  code. ..."; else POST {issuer}/oauth/token grant_type=authorization_code
 *                  (form), then the id_token's token-exchange for an API key (its failure is
 *                  no failure), auth.json written, 302 to /success?id_token&needs_setup&org_id
 *                  &project_id&plan_type&platform_url
 *   /success       the success page, and the flow ends signed in (only once auth.json holds
 *                  this flow's login: upstream ends on any /success)
 *   /cancel        "Login cancelled" (another sign-in wants the port), the flow ends
 * A callback arriving while the code is being exchanged gets 400 "Bad Request".
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "auth_store.h"
#include "config/home.h"
#include "config/pkce.h"
#include "io/http.h"
#include "io/log.h"
#include "io/loopback.h"
#include "login_flow.h"
#include "login_int.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define FLOW_MAX_BODY	(256 << 10) /* the issuer's token answer */
#define FLOW_TIMEOUT_MS 60000
#define FLOW_SCOPE	"openid profile email offline_access api.connectors.read api.connectors.invoke"
#define TEXT_PLAIN	"text/plain; charset=UTF-8"
#define TEXT_HTML	"text/html; charset=utf-8"

enum flow_stage { STAGE_WAITING, STAGE_CODE, STAGE_API_KEY, STAGE_SIGNED_IN };

struct login_flow {
	struct ev_loop *loop;
	struct http *http;
	struct login_flow_cbs cbs;
	void *arg;
	struct loopback_srv *srv;
	char *issuer, *originator, *redirect_uri;
	struct pkce pkce;
	int port;
	enum flow_stage stage;
	struct http_req *xfer;
	struct buf body;
	struct loopback_conn *held; /* the callback waiting for the exchanges */
	char *id_token, *access_token, *refresh_token;
};

static void
wipe_free(char *s)
{
	if (s != NULL)
		explicit_bzero(s, strlen(s));
	free(s);
}

char *
login_form_encode(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = xmalloc(3 * strlen(s) + 1), *o = out;

	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			(*p >= '0' && *p <= '9') || strchr("*-._", *p) != NULL)
			*o++ = (char)*p;
		else if (*p == ' ')
			*o++ = '+';
		else {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	*o = '\0';
	return out;
}

/* Append "&key=value" (no '&' first) form-encoded. */
static void
form_pair(struct buf *b, const char *key, const char *value)
{
	char *v = login_form_encode(value);

	buf_printf(b, "%s%s=%s", b->len > 0 && b->ptr[b->len - 1] != '?' ? "&" : "", key, v);
	explicit_bzero(v, strlen(v));
	free(v);
}

/* A query's value for key, decoded (heap), or NULL. */
static char *
query_get(const char *query, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = query; p != NULL && *p != '\0';) {
		const char *end = strchr(p, '&');
		size_t n = end != NULL ? (size_t)(end - p) : strlen(p);

		if (n > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
			char *v = xmalloc(n - kl), *o = v;

			for (const char *q = p + kl + 1; q < p + n; q++) {
				unsigned int c;

				if (*q == '+')
					*o++ = ' ';
				else if (*q == '%' && q + 2 < p + n &&
					isxdigit((unsigned char)q[1]) &&
					isxdigit((unsigned char)q[2])) {
					sscanf(q + 1, "%2x", &c);
					*o++ = (char)c;
					q += 2;
				} else
					*o++ = *q;
			}
			*o = '\0';
			return v;
		}
		p = end != NULL ? end + 1 : NULL;
	}
	return NULL;
}

/* End the flow: the port is given back now, then the owner hears. */
static void
flow_end(struct login_flow *f, const char *error)
{
	loopback_srv_free(f->srv);
	f->srv = NULL;
	f->held = NULL;
	if (error != NULL)
		log_info("login: sign-in ended: %s", error);
	f->cbs.done(f->arg, error);
}

/* Answer with the error page and end the flow with message. */
static void
flow_fail(struct login_flow *f, struct loopback_conn *c, const char *message, const char *code,
	const char *description)
{
	char *page = login_page_error(message, code, description);

	if (c != NULL)
		loopback_conn_respond(c, 200, TEXT_HTML, NULL, page, strlen(page));
	free(page);
	flow_end(f, message);
}

static int
flow_data_cb(void *arg, long status, const char *p, size_t n)
{
	struct login_flow *f = arg;

	(void)status;
	return buf_add(&f->body, p, n) != 0;
}

static void flow_done_cb(void *arg, const struct http_result *res);

/* POST a form to {issuer}/oauth/token; -1 with *cause. */
static int
flow_post(struct login_flow *f, struct buf *form, char **cause)
{
	static const struct http_cbs cbs = {flow_data_cb, flow_done_cb};
	static const char *const headers[] = {
		"Content-Type: application/x-www-form-urlencoded", "Accept: */*", NULL};
	size_t il = strlen(f->issuer);
	char *url;
	struct http_req_opts o = {
		.method = "POST",
		.headers = headers,
		.body = form->ptr,
		.body_len = form->len,
		.connect_timeout_ms = 30000,
		.total_timeout_ms = FLOW_TIMEOUT_MS,
	};

	while (il > 0 && f->issuer[il - 1] == '/')
		il--;
	url = xasprintf("%.*s/oauth/token", (int)il, f->issuer);
	o.url = url;
	buf_reset(&f->body);
	f->xfer = f->http != NULL ? http_start(f->http, &o, &cbs, f, cause) : NULL;
	if (f->http == NULL)
		*cause = xstrdup("no HTTP client");
	explicit_bzero(form->ptr, form->len);
	buf_free(form);
	free(url);
	return f->xfer != NULL ? 0 : -1;
}

char *
login_token_refusal(const char *body, size_t len)
{
	json_t *j = json_loadb(body, len, 0, NULL), *e = json_object_get(j, "error");
	const char *d = json_string_value(json_object_get(j, "error_description")),
		   *m = json_string_value(json_object_get(e, "message")),
		   *c = json_is_string(e) ? json_string_value(e)
					  : json_string_value(json_object_get(e, "code"));
	char *r;

	if (d != NULL && *d != '\0')
		r = xstrdup(d);
	else if (m != NULL && *m != '\0')
		r = xstrdup(m);
	else if (c != NULL && *c != '\0')
		r = xstrdup(c);
	else if (len == 0)
		r = xstrdup("unknown error");
	else
		r = xasprintf("%.*s", (int)len, body);
	json_decref(j);
	return r;
}

/* Both exchanges are done: store the login, then send the browser to the success page. */
static void
flow_signed_in(struct login_flow *f, const char *api_key)
{
	struct auth *a = auth_new_chatgpt_login(f->id_token, f->access_token, f->refresh_token,
		api_key, f->issuer, ACCOUNT_CLIENT_ID);
	json_t *idc = auth_jwt_auth_claims(f->id_token),
	       *acc = auth_jwt_auth_claims(f->access_token);
	char *home = home_path(), *cause = NULL;
	const char *plan = json_string_value(json_object_get(acc, "chatgpt_plan_type")),
		   *org = json_string_value(json_object_get(idc, "organization_id")),
		   *project = json_string_value(json_object_get(idc, "project_id"));
	int needs_setup = !json_is_true(json_object_get(idc, "completed_platform_onboarding")) &&
		json_is_true(json_object_get(idc, "is_org_owner"));
	struct buf url;

	if (auth_save(home, a, &cause) != 0) {
		log_warn("login: cannot store the new login: %s", cause);
		flow_fail(f, f->held,
			"Sign-in completed but credentials could not be saved locally.",
			"persist_failed", cause);
		free(cause);
		goto out;
	}
	f->stage = STAGE_SIGNED_IN;
	buf_init(&url, 1 << 20);
	buf_printf(&url, "http://127.0.0.1:%d/success?", f->port);
	form_pair(&url, "id_token", f->id_token);
	form_pair(&url, "needs_setup", needs_setup ? "true" : "false");
	form_pair(&url, "org_id", org != NULL ? org : "");
	form_pair(&url, "project_id", project != NULL ? project : "");
	form_pair(&url, "plan_type", plan != NULL ? plan : "");
	form_pair(&url, "platform_url",
		strcmp(f->issuer, LOGIN_ISSUER) == 0 ? "https://platform.openai.com"
						     : "https://platform.api.openai.org");
	loopback_conn_respond(f->held, 302, NULL, buf_str(&url), NULL, 0);
	f->held = NULL;
	if (url.ptr != NULL) /* NULL when nothing came: not for explicit_bzero */
		explicit_bzero(url.ptr, url.len);
	buf_free(&url);
out:
	json_decref(idc);
	json_decref(acc);
	auth_free(a);
	free(home);
}

static void
flow_done_cb(void *arg, const struct http_result *res)
{
	struct login_flow *f = arg;
	json_t *ans = NULL;
	char *detail = NULL, *msg = NULL, *cause = NULL;
	struct buf form;

	f->xfer = NULL;
	if (res->status == 200)
		ans = json_loadb(f->body.ptr, f->body.len, 0, NULL);
	else if (res->status != 0)
		detail = login_token_refusal(f->body.ptr, f->body.len);
	/* the answer held tokens; what follows may end the flow (and free it) */
	if (f->body.ptr != NULL) /* NULL when nothing came: not for explicit_bzero */
		explicit_bzero(f->body.ptr, f->body.len);
	buf_reset(&f->body);
	if (f->stage == STAGE_API_KEY) {
		/* upstream keeps going without a key when this exchange fails */
		const char *key = json_string_value(json_object_get(ans, "access_token"));
		char *k = key != NULL ? xstrdup(key) : NULL;

		free(detail); /* the refusal's words matter not here */
		json_decref(ans);
		flow_signed_in(f, k);
		wipe_free(k);
		return;
	}
	if (res->status == 0)
		msg = xasprintf(
			"Token exchange failed: %s", res->error != NULL ? res->error : "no answer");
	else if (res->status != 200)
		msg = xasprintf("Token exchange failed: token endpoint returned status %ld %s: %s",
			res->status, http_reason(res->status), detail);
	else if (!json_is_string(json_object_get(ans, "id_token")) ||
		!json_is_string(json_object_get(ans, "access_token")) ||
		!json_is_string(json_object_get(ans, "refresh_token")))
		msg = xstrdup("Token exchange failed: error decoding response body");
	free(detail);
	if (msg != NULL) {
		json_decref(ans);
		flow_fail(f, f->held, msg, "token_exchange_failed", NULL);
		free(msg);
		return;
	}
	f->id_token = xstrdup(json_string_value(json_object_get(ans, "id_token")));
	f->access_token = xstrdup(json_string_value(json_object_get(ans, "access_token")));
	f->refresh_token = xstrdup(json_string_value(json_object_get(ans, "refresh_token")));
	json_decref(ans);
	f->stage = STAGE_API_KEY;
	buf_init(&form, 1 << 20);
	form_pair(&form, "grant_type", "urn:ietf:params:oauth:grant-type:token-exchange");
	form_pair(&form, "client_id", ACCOUNT_CLIENT_ID);
	form_pair(&form, "requested_token", "openai-api-key");
	form_pair(&form, "subject_token", f->id_token);
	form_pair(&form, "subject_token_type", "urn:ietf:params:oauth:token-type:id_token");
	if (flow_post(f, &form, &cause) != 0) {
		free(cause);
		flow_signed_in(f, NULL);
	}
}

/* The issuer sent the browser back: check the state, then exchange the code. */
static void
flow_callback(struct login_flow *f, struct loopback_conn *c, const char *query)
{
	char *state = query_get(query, "state"), *error = query_get(query, "error"),
	     *code = query_get(query, "code"), *cause = NULL, *msg, *desc;
	struct buf form;

	if (state == NULL || strcmp(state, f->pkce.state) != 0) {
		log_warn("login: login callback state mismatch");
		loopback_conn_respond(c, 400, TEXT_PLAIN, NULL, "State mismatch", 14);
	} else if (f->stage != STAGE_WAITING) {
		loopback_conn_respond(c, 400, TEXT_PLAIN, NULL, "Bad Request", 11);
	} else if (error != NULL) {
		desc = query_get(query, "error_description");
		msg = login_callback_error(error, desc);
		log_warn("login: oauth callback returned error");
		flow_fail(f, c, msg, error, desc);
		free(msg);
		free(desc);
	} else if (code == NULL || *code == '\0') {
		flow_fail(f, c, "Missing authorization code. Sign-in could not be completed.",
			"missing_authorization_code", NULL);
	} else {
		buf_init(&form, 1 << 20);
		form_pair(&form, "grant_type", "authorization_code");
		form_pair(&form, "client_id", ACCOUNT_CLIENT_ID);
		form_pair(&form, "code", code);
		form_pair(&form, "redirect_uri", f->redirect_uri);
		form_pair(&form, "code_verifier", f->pkce.verifier);
		f->stage = STAGE_CODE;
		f->held = c;
		if (flow_post(f, &form, &cause) != 0) {
			msg = xasprintf("Token exchange failed: %s", cause);
			flow_fail(f, c, msg, "token_exchange_failed", NULL);
			free(msg);
			free(cause);
		}
	}
	wipe_free(code);
	wipe_free(state);
	free(error);
}

static void
flow_request_cb(void *arg, struct loopback_conn *c, const char *target)
{
	struct login_flow *f = arg;
	const char *q = target != NULL ? strchr(target, '?') : NULL;
	size_t n = target == NULL ? 0 : q != NULL ? (size_t)(q - target) : strlen(target);
	char *page;

	if (target == NULL)
		loopback_conn_respond(c, 400, TEXT_PLAIN, NULL, "Bad Request", 11);
	else if (n == 14 && strncmp(target, "/auth/callback", n) == 0)
		flow_callback(f, c, q != NULL ? q + 1 : "");
	else if (n == 8 && strncmp(target, "/success", n) == 0 && f->stage == STAGE_SIGNED_IN) {
		page = login_page_success();
		loopback_conn_respond(c, 200, TEXT_HTML, NULL, page, strlen(page));
		free(page);
		flow_end(f, NULL);
	} else if (n == 7 && strncmp(target, "/cancel", n) == 0) {
		loopback_conn_respond(c, 200, NULL, NULL, "Login cancelled", 15);
		flow_end(f, "Login cancelled");
	} else
		loopback_conn_respond(c, 404, TEXT_PLAIN, NULL, "Not Found", 9);
}

static void
flow_ready_cb(void *arg, int port, const char *error)
{
	struct login_flow *f = arg;
	struct buf url;

	if (error != NULL) {
		loopback_srv_free(f->srv);
		f->srv = NULL;
		f->cbs.started(f->arg, NULL, error);
		return;
	}
	f->port = port;
	f->redirect_uri = xasprintf("http://127.0.0.1:%d/auth/callback", port);
	buf_init(&url, 1 << 16);
	buf_printf(&url, "%s/oauth/authorize?", f->issuer);
	form_pair(&url, "response_type", "code");
	form_pair(&url, "client_id", ACCOUNT_CLIENT_ID);
	form_pair(&url, "redirect_uri", f->redirect_uri);
	form_pair(&url, "code_challenge", f->pkce.challenge);
	form_pair(&url, "code_challenge_method", "S256");
	form_pair(&url, "state", f->pkce.state);
	form_pair(&url, "scope", FLOW_SCOPE);
	form_pair(&url, "id_token_add_organizations", "true");
	form_pair(&url, "codex_cli_simplified_flow", "true");
	form_pair(&url, "originator", f->originator);
	log_info("login: callback server listening on 127.0.0.1:%d", port);
	f->cbs.started(f->arg, buf_str(&url), NULL);
	buf_free(&url);
}

struct login_flow *
login_flow_start(struct ev_loop *loop, struct http *h, const struct login_flow_opts *o,
	const struct login_flow_cbs *cbs, void *arg)
{
	static const struct loopback_cbs srv_cbs = {flow_ready_cb, flow_request_cb};
	struct login_flow *f = xcalloc(1, sizeof *f);
	struct loopback_opts srv_opts = {.attempts = 10, .send_cancel = 1};
	const char *issuer = o->issuer, *env;
	int port = o->port;

	if (issuer == NULL)
		issuer = (env = getenv(LOGIN_ISSUER_ENV)) != NULL && *env != '\0' ? env
										  : LOGIN_ISSUER;
	if (port < 0)
		port = (env = getenv(LOGIN_PORT_ENV)) != NULL && *env != '\0'
			? (int)strtol(env, NULL, 10)
			: LOGIN_DEFAULT_PORT;
	f->loop = loop;
	f->http = h;
	f->cbs = *cbs;
	f->arg = arg;
	f->issuer = xstrdup(issuer);
	f->originator = xstrdup(o->originator != NULL ? o->originator : "codex_cli_rs");
	buf_init(&f->body, FLOW_MAX_BODY);
	srv_opts.port = port;
	srv_opts.fallback_port = port == LOGIN_DEFAULT_PORT ? LOGIN_FALLBACK_PORT : 0;
	if (pkce_new(&f->pkce) != 0) /* told from the loop, as a busy port would be */
		srv_opts.refuse = "failed to generate the sign-in's PKCE codes";
	f->srv = loopback_srv_start(loop, &srv_opts, &srv_cbs, f);
	return f;
}

void
login_flow_free(struct login_flow *f)
{
	if (f == NULL)
		return;
	if (f->xfer != NULL)
		http_cancel(f->xfer);
	loopback_srv_free(f->srv);
	pkce_wipe(&f->pkce);
	if (f->body.ptr != NULL) /* NULL when nothing came: not for explicit_bzero */
		explicit_bzero(f->body.ptr, f->body.len);
	buf_free(&f->body);
	wipe_free(f->id_token);
	wipe_free(f->access_token);
	wipe_free(f->refresh_token);
	free(f->issuer);
	free(f->originator);
	free(f->redirect_uri);
	free(f);
}
