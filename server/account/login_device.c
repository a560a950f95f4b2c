/*
 * Device-code sign-in (login_device.h), in 0.169's order and words (observed):
 *   usercode  POST {issuer}/api/accounts/deviceauth/usercode {"client_id"} (JSON): 200
 *             {device_auth_id, user_code (or usercode), interval: "5"}; 404: "device code
 *             login is not enabled for this Codex server. ..."; else "device code request
 *             failed with status N Reason"
 *   poll      at once, then every interval seconds: POST .../deviceauth/token {device_auth_id,
 *             user_code}; 403 or 404: not yet (after 15 minutes "device auth timed out after
 *             15 minutes"); 2xx: {authorization_code, code_challenge, code_verifier}; else
 *             "device auth failed with status N Reason"
 *   exchange  POST {issuer}/oauth/token, form grant_type=authorization_code&client_id&code
 *             &redirect_uri={issuer}/deviceauth/callback&code_verifier; a refusal "device
 *             code exchange failed: token endpoint returned status N Reason: <description>"
 *   store     auth.json as the browser flow writes it, without an API key (0.169 asks for
 *             none here)
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "auth_store.h"
#include "config/home.h"
#include "io/http.h"
#include "io/log.h"
#include "login_device.h"
#include "login_flow.h"
#include "login_int.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define DEVICE_MAX_BODY	  (256 << 10)
#define DEVICE_TIMEOUT_MS 60000
#define DEVICE_MAX_WAIT	  (15 * 60.0) /* upstream's poll cap */
#define MSG_NOT_ENABLED                                                                            \
	"device code login is not enabled for this Codex server. Use the browser login or verify " \
	"the server URL."

enum device_stage { STAGE_USERCODE, STAGE_POLL, STAGE_WAIT, STAGE_EXCHANGE };

struct login_device {
	struct ev_loop *loop;
	struct http *http;
	struct login_device_cbs cbs;
	void *arg;
	char *issuer; /* without a final '/' */
	char *auth_id, *user_code;
	char *start_error; /* the usercode request could not be sent: told from the loop */
	double interval, started, max_wait;
	enum device_stage stage;
	struct http_req *xfer;
	struct buf body;
	ev_timer poll;
};

static void device_done_cb(void *arg, const struct http_result *res);

static void
wipe_free(char *s)
{
	if (s != NULL)
		explicit_bzero(s, strlen(s));
	free(s);
}

static int
device_data_cb(void *arg, long status, const char *p, size_t n)
{
	struct login_device *d = arg;

	(void)status;
	return buf_add(&d->body, p, n) != 0;
}

/* POST body (wiped after) to {issuer}{path}; -1 with *cause. */
static int
device_post(struct login_device *d, const char *path, const char *ctype, char *body, char **cause)
{
	static const struct http_cbs cbs = {device_data_cb, device_done_cb};
	char *h_ctype = xasprintf("Content-Type: %s", ctype), *url;
	const char *headers[] = {h_ctype, "Accept: */*", NULL};
	struct http_req_opts o = {
		.method = "POST",
		.headers = headers,
		.body = body,
		.body_len = strlen(body),
		.connect_timeout_ms = 30000,
		.total_timeout_ms = DEVICE_TIMEOUT_MS,
	};

	url = xasprintf("%s%s", d->issuer, path);
	o.url = url;
	buf_reset(&d->body);
	d->xfer = d->http != NULL ? http_start(d->http, &o, &cbs, d, cause) : NULL;
	if (d->http == NULL)
		*cause = xstrdup("no HTTP client");
	explicit_bzero(body, strlen(body));
	free(body);
	free(url);
	free(h_ctype);
	return d->xfer != NULL ? 0 : -1;
}

/* The sign-in is over: the owner hears why (NULL: signed in). */
static void
device_end(struct login_device *d, const char *error)
{
	if (error != NULL)
		log_info("login: device code sign-in ended: %s", error);
	d->cbs.done(d->arg, error);
}

/* Ask whether the user has typed the code yet. */
static void
device_poll(struct login_device *d)
{
	json_t *req =
		json_pack("{s:s, s:s}", "device_auth_id", d->auth_id, "user_code", d->user_code);
	char *cause = NULL, *msg;

	d->stage = STAGE_POLL;
	if (device_post(d, "/api/accounts/deviceauth/token", "application/json",
		    json_dumps(req, JSON_COMPACT | JSON_PRESERVE_ORDER), &cause) != 0) {
		msg = xasprintf("device auth failed: %s", cause);
		free(cause);
		json_decref(req);
		device_end(d, msg);
		free(msg);
		return;
	}
	json_decref(req);
}

static void
device_poll_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct login_device *d =
		(struct login_device *)((char *)w - offsetof(struct login_device, poll));

	(void)loop;
	(void)revents;
	if (d->start_error != NULL)
		d->cbs.started(d->arg, NULL, NULL, d->start_error, 0);
	else
		device_poll(d);
}

/* The user code's answer: tell the owner, then start polling. */
static void
device_usercode(struct login_device *d, const struct http_result *res)
{
	json_t *j = NULL, *iv;
	const char *id = NULL, *code = NULL;
	char *msg = NULL, *url;

	if (res->status == 404) {
		d->cbs.started(d->arg, NULL, NULL, MSG_NOT_ENABLED, 1);
		return;
	}
	if (res->status == 0)
		msg = xstrdup(res->error != NULL ? res->error : "no answer");
	else if (res->status < 200 || res->status > 299)
		msg = xasprintf("device code request failed with status %ld %s", res->status,
			http_reason(res->status));
	else if ((j = json_loadb(d->body.ptr, d->body.len, 0, NULL)) == NULL ||
		(id = json_string_value(json_object_get(j, "device_auth_id"))) == NULL ||
		((code = json_string_value(json_object_get(j, "user_code"))) == NULL &&
			(code = json_string_value(json_object_get(j, "usercode"))) == NULL))
		msg = xstrdup("error decoding response body");
	if (msg != NULL) {
		json_decref(j);
		d->cbs.started(d->arg, NULL, NULL, msg, 0);
		free(msg);
		return;
	}
	/* a string of seconds, as the issuer sends it; absent: 0 (upstream's default) */
	iv = json_object_get(j, "interval");
	d->interval = json_is_string(iv) ? strtod(json_string_value(iv), NULL)
		: json_is_number(iv)	 ? json_number_value(iv)
					 : 0;
	if (d->interval < 0)
		d->interval = 0;
	d->auth_id = xstrdup(id);
	d->user_code = xstrdup(code);
	json_decref(j);
	url = xasprintf("%s/codex/device", d->issuer);
	d->started = ev_now(d->loop);
	log_info("login: device code issued; polling every %.0f s", d->interval);
	/* the owner may free us from started: poll from a timer of 0 (the loop's next turn) */
	d->stage = STAGE_WAIT;
	ev_timer_set(&d->poll, 0., 0.);
	ev_timer_start(d->loop, &d->poll);
	d->cbs.started(d->arg, url, d->user_code, NULL, 0);
	free(url);
}

/* The issuer handed out the code: exchange it as the browser flow does. */
static void
device_exchange(struct login_device *d, json_t *ans)
{
	const char *code = json_string_value(json_object_get(ans, "authorization_code")),
		   *verifier = json_string_value(json_object_get(ans, "code_verifier"));
	char *cause = NULL, *msg, *e_code, *e_redirect, *e_verifier, *redirect;

	if (code == NULL || verifier == NULL ||
		!json_is_string(json_object_get(ans, "code_challenge"))) {
		device_end(d, "error decoding response body");
		return;
	}
	redirect = xasprintf("%s/deviceauth/callback", d->issuer);
	e_code = login_form_encode(code);
	e_redirect = login_form_encode(redirect);
	e_verifier = login_form_encode(verifier);
	d->stage = STAGE_EXCHANGE;
	if (device_post(d, "/oauth/token", "application/x-www-form-urlencoded",
		    xasprintf("grant_type=authorization_code&client_id=%s&code=%s&redirect_uri=%s"
			      "&code_verifier=%s",
			    ACCOUNT_CLIENT_ID, e_code, e_redirect, e_verifier),
		    &cause) != 0) {
		msg = xasprintf("device code exchange failed: %s", cause);
		free(cause);
		device_end(d, msg);
		free(msg);
	}
	wipe_free(e_code);
	wipe_free(e_verifier);
	free(e_redirect);
	free(redirect);
}

/* A poll's answer: wait more, exchange, or give up. */
static void
device_polled(struct login_device *d, const struct http_result *res)
{
	double left = d->max_wait - (ev_now(d->loop) - d->started);
	json_t *ans;
	char *msg;

	if (res->status == 403 || res->status == 404) {
		if (left <= 0) {
			device_end(d, "device auth timed out after 15 minutes");
			return;
		}
		d->stage = STAGE_WAIT;
		ev_timer_set(&d->poll, d->interval < left ? d->interval : left, 0.);
		ev_timer_start(d->loop, &d->poll);
		return;
	}
	if (res->status >= 200 && res->status <= 299) {
		ans = json_loadb(d->body.ptr, d->body.len, 0, NULL);
		if (d->body.ptr != NULL) /* NULL when nothing came: not for explicit_bzero */
			explicit_bzero(d->body.ptr, d->body.len);
		device_exchange(d, ans);
		json_decref(ans);
		return;
	}
	msg = res->status == 0 ? xstrdup(res->error != NULL ? res->error : "no answer")
			       : xasprintf("device auth failed with status %ld %s", res->status,
					 http_reason(res->status));
	device_end(d, msg);
	free(msg);
}

/* The tokens arrived: store them, as upstream's persist_tokens does. */
static void
device_exchanged(struct login_device *d, const struct http_result *res)
{
	json_t *ans = res->status == 200 ? json_loadb(d->body.ptr, d->body.len, 0, NULL) : NULL;
	const char *id = json_string_value(json_object_get(ans, "id_token")),
		   *access = json_string_value(json_object_get(ans, "access_token")),
		   *refresh = json_string_value(json_object_get(ans, "refresh_token"));
	char *msg = NULL, *detail, *home, *cause = NULL;
	struct auth *a;

	if (res->status == 0)
		msg = xasprintf("device code exchange failed: %s",
			res->error != NULL ? res->error : "no answer");
	else if (res->status != 200) {
		detail = login_token_refusal(d->body.ptr, d->body.len);
		msg = xasprintf("device code exchange failed: token endpoint returned status %ld "
				"%s: %s",
			res->status, http_reason(res->status), detail);
		free(detail);
	} else if (id == NULL || access == NULL || refresh == NULL)
		msg = xstrdup("device code exchange failed: error decoding response body");
	if (d->body.ptr != NULL) /* NULL when nothing came: not for explicit_bzero */
		explicit_bzero(d->body.ptr, d->body.len);
	if (msg == NULL) {
		a = auth_new_chatgpt_login(id, access, refresh, NULL, d->issuer, ACCOUNT_CLIENT_ID);
		home = home_path();
		if (auth_save(home, a, &cause) != 0) {
			log_warn("login: cannot store the new login: %s", cause);
			msg = cause;
			cause = NULL;
		}
		free(home);
		auth_free(a);
	}
	json_decref(ans);
	device_end(d, msg);
	free(msg);
}

static void
device_done_cb(void *arg, const struct http_result *res)
{
	struct login_device *d = arg;

	d->xfer = NULL;
	switch (d->stage) {
	case STAGE_USERCODE:
		device_usercode(d, res);
		break;
	case STAGE_POLL:
		device_polled(d, res);
		break;
	case STAGE_EXCHANGE:
		device_exchanged(d, res);
		break;
	case STAGE_WAIT:
		break;
	}
}

struct login_device *
login_device_start(struct ev_loop *loop, struct http *h, const char *issuer,
	const struct login_device_cbs *cbs, void *arg)
{
	struct login_device *d = xcalloc(1, sizeof *d);
	const char *env = getenv(LOGIN_ISSUER_ENV), *to = getenv(LOGIN_DEVICE_TIMEOUT_ENV);
	json_t *req;
	char *cause = NULL;
	size_t n;

	if (issuer == NULL)
		issuer = env != NULL && *env != '\0' ? env : LOGIN_ISSUER;
	n = strlen(issuer);
	while (n > 0 && issuer[n - 1] == '/')
		n--;
	d->issuer = xasprintf("%.*s", (int)n, issuer);
	d->loop = loop;
	d->http = h;
	d->cbs = *cbs;
	d->arg = arg;
	d->max_wait = to != NULL && *to != '\0' ? strtod(to, NULL) : DEVICE_MAX_WAIT;
	buf_init(&d->body, DEVICE_MAX_BODY);
	ev_timer_init(&d->poll, device_poll_cb, 0., 0.);
	d->stage = STAGE_USERCODE;
	req = json_pack("{s:s}", "client_id", ACCOUNT_CLIENT_ID);
	if (device_post(d, "/api/accounts/deviceauth/usercode", "application/json",
		    json_dumps(req, JSON_COMPACT), &cause) != 0) {
		/* told from the loop's next turn, as an answer would be */
		d->start_error = cause;
		ev_timer_start(loop, &d->poll);
	}
	json_decref(req);
	return d;
}

void
login_device_free(struct login_device *d)
{
	if (d == NULL)
		return;
	if (d->xfer != NULL)
		http_cancel(d->xfer);
	ev_timer_stop(d->loop, &d->poll);
	if (d->body.ptr != NULL) /* NULL when nothing came: not for explicit_bzero */
		explicit_bzero(d->body.ptr, d->body.len);
	buf_free(&d->body);
	wipe_free(d->auth_id);
	wipe_free(d->user_code);
	free(d->start_error);
	free(d->issuer);
	free(d);
}
