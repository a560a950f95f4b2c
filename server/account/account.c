/*
 * The account on the loop (account.h): credentials for ChatGPT-backend requests and the one
 * refresh at a time that renews them.
 *
 * A refresh is upstream's: POST {"client_id", "grant_type": "refresh_token", "refresh_token"}
 * as JSON to https://auth.openai.com/oauth/token (or $CODEX_REFRESH_TOKEN_URL_OVERRIDE); the
 * answer's id_token, access_token and refresh_token (each optional) replace the stored ones
 * and last_refresh is stamped. A 401 whose code says the refresh token expired, was reused or
 * revoked is permanent, with upstream's sentence; any other failure is transient.
 *
 * Waiters are kept in a list; when the refresh ends they are taken off it one at a time
 * (a waiter's callback may cancel another, or ask again and start a new refresh).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "account.h"
#include "auth_store.h"
#include "config/home.h"
#include "io/http.h"
#include "io/log.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define ACCOUNT_MAX_BODY   (64 << 10) /* the issuer's answer */
#define ACCOUNT_TIMEOUT_MS 60000      /* upstream's refresh cap */

#define MSG_EXPIRED                                                                                \
	"Your access token could not be refreshed because your refresh token has expired. "        \
	"Please log out and sign in again."
#define MSG_REUSED                                                                                 \
	"Your access token could not be refreshed because your refresh token was already used. "   \
	"Please log out and sign in again."
#define MSG_REVOKED                                                                                \
	"Your access token could not be refreshed because your refresh token was revoked. "        \
	"Please log out and sign in again."
#define MSG_UNKNOWN "Your access token could not be refreshed. Please log out and sign in again."
#define MSG_MISMATCH                                                                               \
	"Your access token could not be refreshed because you have since logged out or signed "    \
	"in to another account. Please sign in again."

struct account_wait {
	account_cb cb;
	void *arg;
	struct account_wait *next;
};

static struct {
	struct ev_loop *loop;
	struct http *http;
	struct http_req *xfer;	     /* the refresh in flight, or NULL */
	struct buf body;	     /* its answer */
	struct account_wait *waits;  /* waiting for it */
	struct account_wait *firing; /* being told how it ended */
	void (*listener)(void *);
	void *listener_arg;
	unsigned long refreshes;
	/* chatgptAuthTokens: the client's tokens (memory only) and its refresher */
	char *ext_access, *ext_account, *ext_plan;
	int ext_refreshing;
	void (*ext_ask)(void *arg, const char *previous_account_id);
	void *ext_arg;
} account_state;

static void account_fire(const struct account_creds *c);

static void
account_wipe_free(char *s)
{
	if (s != NULL)
		explicit_bzero(s, strlen(s));
	free(s);
}

void
account_creds_clear(struct account_creds *c)
{
	if (c->access_token != NULL)
		explicit_bzero(c->access_token, strlen(c->access_token));
	free(c->access_token);
	free(c->account_id);
	free(c->error);
	memset(c, 0, sizeof *c);
}

void
account_init(struct ev_loop *loop, struct http *h)
{
	account_state.loop = loop;
	account_state.http = h;
	buf_init(&account_state.body, ACCOUNT_MAX_BODY);
}

/* Remove w from a list; 1 when it was there. */
static int
account_unlink(struct account_wait **list, struct account_wait *w)
{
	for (struct account_wait **p = list; *p != NULL; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			return 1;
		}
	return 0;
}

void
account_shutdown(void)
{
	struct account_wait *w;

	if (account_state.xfer != NULL)
		http_cancel(account_state.xfer);
	account_state.xfer = NULL;
	while ((w = account_state.waits) != NULL) {
		account_state.waits = w->next;
		free(w);
	}
	buf_free(&account_state.body);
	account_external_clear();
}

int
account_external_set(const char *access_token, const char *account_id, const char *plan)
{
	struct auth *a = auth_new_external(access_token, account_id, plan);

	if (a == NULL)
		return -1;
	auth_free(a);
	account_external_clear();
	account_state.ext_access = xstrdup(access_token);
	account_state.ext_account = xstrdup(account_id);
	account_state.ext_plan = plan != NULL ? xstrdup(plan) : NULL;
	return 0;
}

void
account_external_clear(void)
{
	struct account_creds c = {0};

	account_wipe_free(account_state.ext_access);
	free(account_state.ext_account);
	free(account_state.ext_plan);
	account_state.ext_access = account_state.ext_account = account_state.ext_plan = NULL;
	if (account_state.ext_refreshing) {
		/* the turns waiting for the client's answer hear the login is gone */
		account_state.ext_refreshing = 0;
		c.error = xstrdup(MSG_MISMATCH);
		c.permanent = 1;
		account_fire(&c);
		account_creds_clear(&c);
	}
}

int
account_external_active(void)
{
	return account_state.ext_access != NULL;
}

void
account_set_external_refresher(void (*ask)(void *arg, const char *previous_account_id), void *arg)
{
	account_state.ext_ask = ask;
	account_state.ext_arg = arg;
}

void
account_external_refreshed(
	const char *access_token, const char *account_id, const char *plan, const char *error)
{
	struct account_creds c = {0};

	if (!account_state.ext_refreshing)
		return;
	account_state.ext_refreshing = 0;
	if (error != NULL)
		c.error = xstrdup(error);
	else if (account_external_set(access_token, account_id, plan) != 0)
		c.error = xstrdup("failed to set external auth: the access token is not a JWT");
	else {
		c.access_token = xstrdup(access_token);
		c.account_id = xstrdup(account_id);
		log_info("account: the client sent new ChatGPT tokens");
	}
	if (c.error != NULL)
		log_warn("account: %s", c.error);
	account_fire(&c);
	account_creds_clear(&c);
}

void
account_set_listener(void (*fn)(void *arg), void *arg)
{
	account_state.listener = fn;
	account_state.listener_arg = arg;
}

unsigned long
account_refresh_count(void)
{
	return account_state.refreshes;
}

struct auth *
account_load(void)
{
	char *home, *cause = NULL;
	struct auth *a = NULL;

	if (account_state.ext_access != NULL)
		return auth_new_external(account_state.ext_access, account_state.ext_account,
			account_state.ext_plan);
	home = home_path();
	if (auth_load(home, &a, &cause) < 0) {
		log_warn("account: %s", cause);
		free(cause);
	}
	free(home);
	return a;
}

int
account_chatgpt_applies(const struct model_provider *p)
{
	struct auth *a;
	char *key;
	int r;

	if (p == NULL || !p->requires_openai_auth || p->env_key != NULL)
		return 0;
	if (account_state.ext_access != NULL)
		return 1; /* the client's tokens win, as upstream's external auth does */
	if ((key = config_provider_api_key(p)) != NULL) {
		explicit_bzero(key, strlen(key));
		free(key);
		return 0; /* an API key wins, as it always did here */
	}
	a = account_load();
	r = a != NULL && a->mode == AUTH_MODE_CHATGPT;
	auth_free(a);
	return r;
}

const char *
account_chatgpt_base(const struct model_provider *p)
{
	/* upstream: the openai provider's default base becomes the ChatGPT backend's; a base
	 * set with openai_base_url (or a custom provider's) is kept */
	if (p->builtin && strcmp(p->id, "openai") == 0 &&
		strcmp(p->base_url, "https://api.openai.com/v1") == 0)
		return ACCOUNT_CHATGPT_BASE;
	return p->base_url;
}

/* Fill creds from a ChatGPT login. */
static void
account_fill(struct account_creds *c, const struct auth *a)
{
	const char *id = a->account_id != NULL ? a->account_id : a->jwt_account_id;

	c->access_token = xstrdup(a->access_token);
	c->account_id = id != NULL ? xstrdup(id) : NULL;
}

/* The refresh ended: tell every waiter, each off the list before its callback. */
static void
account_fire(const struct account_creds *c)
{
	struct account_wait *w;

	account_state.firing = account_state.waits;
	account_state.waits = NULL;
	while ((w = account_state.firing) != NULL) {
		account_state.firing = w->next;
		w->cb(w->arg, c);
		free(w);
	}
}

/* The sentence for a refused refresh, from the answer's error code. */
static const char *
account_refusal(const char *body, size_t len)
{
	json_t *j = json_loadb(body, len, 0, NULL), *e = json_object_get(j, "error");
	const char *code = json_is_string(e) ? json_string_value(e)
					     : json_string_value(json_object_get(e, "code"));
	const char *msg = MSG_UNKNOWN;

	if (code == NULL)
		code = json_string_value(json_object_get(j, "code"));
	if (code != NULL && strcasecmp(code, "refresh_token_expired") == 0)
		msg = MSG_EXPIRED;
	else if (code != NULL && strcasecmp(code, "refresh_token_reused") == 0)
		msg = MSG_REUSED;
	else if (code != NULL &&
		(strcasecmp(code, "refresh_token_invalidated") == 0 ||
			strcasecmp(code, "token_revoked") == 0))
		msg = MSG_REVOKED;
	json_decref(j);
	return msg;
}

/* Store the issuer's new tokens in auth.json as it is now; 0, or -1 with c->error. */
static int
account_store(const json_t *ans, struct account_creds *c)
{
	struct auth *a = account_load();
	char *home = home_path(), *cause = NULL;
	int r = -1;

	if (a == NULL || a->mode != AUTH_MODE_CHATGPT) {
		/* logged out (or in with a key) while the refresh ran */
		c->error = xstrdup(MSG_MISMATCH);
		c->permanent = 1;
		goto out;
	}
	auth_set_tokens(a, json_string_value(json_object_get(ans, "id_token")),
		json_string_value(json_object_get(ans, "access_token")),
		json_string_value(json_object_get(ans, "refresh_token")));
	if (auth_save(home, a, &cause) != 0) {
		log_warn("account: cannot store the refreshed tokens: %s", cause);
		c->error = xasprintf("failed to store refreshed tokens: %s", cause);
		free(cause);
		goto out;
	}
	account_fill(c, a);
	r = 0;
out:
	auth_free(a);
	free(home);
	return r;
}

static int
account_data_cb(void *arg, long status, const char *p, size_t n)
{
	(void)arg;
	(void)status;
	return buf_add(&account_state.body, p, n) != 0; /* an answer past the ceiling is refused */
}

static void
account_done_cb(void *arg, const struct http_result *res)
{
	struct account_creds c = {0};
	json_t *ans = NULL;

	(void)arg;
	account_state.xfer = NULL;
	if (res->status == 200 &&
		(ans = json_loadb(account_state.body.ptr, account_state.body.len, 0, NULL)) !=
			NULL &&
		json_is_object(ans)) {
		if (account_store(ans, &c) == 0)
			log_info("account: ChatGPT access token refreshed");
	} else if (res->status == 401) {
		c.error = xstrdup(account_refusal(account_state.body.ptr, account_state.body.len));
		c.permanent = 1;
		log_warn("account: token refresh refused (401)");
	} else {
		c.error = res->status != 0 ? xasprintf("Failed to refresh token: %ld", res->status)
					   : xasprintf("Failed to refresh token: %s",
						     res->error != NULL ? res->error : "no answer");
		log_warn("account: %s", c.error);
	}
	json_decref(ans);
	if (account_state.body.ptr != NULL) /* NULL when nothing came: not for explicit_bzero */
		explicit_bzero(account_state.body.ptr, account_state.body.len);
	buf_reset(&account_state.body);
	account_fire(&c);
	if (c.permanent && account_state.listener != NULL)
		account_state.listener(account_state.listener_arg);
	account_creds_clear(&c);
}

/*
 * Start the refresh; -1 with *cause when it cannot be sent. The body is 0.169's (observed):
 * refresh_reason "proactive_expiry" for a stale token, "unauthorized" after a 401.
 */
static int
account_refresh_start(
	const struct auth *a, const struct account_client *who, int refused, char **cause)
{
	static const struct http_cbs cbs = {account_data_cb, account_done_cb};
	const char *env = getenv(ACCOUNT_REFRESH_ENV), *headers[5];
	char *h_orig = xasprintf("originator: %s",
		     who != NULL && who->originator != NULL ? who->originator : "codex_cli_rs"),
	     *h_ua = NULL;
	size_t nh = 0;
	json_t *req = json_pack("{s:s, s:s, s:s, s:s}", "client_id", ACCOUNT_CLIENT_ID,
		"grant_type", "refresh_token", "refresh_reason",
		refused ? "unauthorized" : "proactive_expiry", "refresh_token", a->refresh_token);
	char *body = json_dumps(req, JSON_COMPACT | JSON_PRESERVE_ORDER);
	struct http_req_opts o = {
		.method = "POST",
		.url = env != NULL && *env != '\0' ? env : ACCOUNT_REFRESH_URL,
		.body = body,
		.body_len = strlen(body),
		.connect_timeout_ms = 30000,
		.total_timeout_ms = ACCOUNT_TIMEOUT_MS,
	};

	headers[nh++] = "Content-Type: application/json";
	headers[nh++] = h_orig;
	if (who != NULL && who->user_agent != NULL)
		headers[nh++] = h_ua = xasprintf("user-agent: %s", who->user_agent);
	headers[nh] = NULL;
	o.headers = headers;
	json_decref(req);
	buf_reset(&account_state.body);
	account_state.xfer = http_start(account_state.http, &o, &cbs, NULL, cause);
	explicit_bzero(body, strlen(body));
	free(body);
	free(h_orig);
	free(h_ua);
	if (account_state.xfer == NULL)
		return -1;
	account_state.refreshes++;
	log_info("account: refreshing the ChatGPT access token");
	return 0;
}

int
account_creds_get(const char *rejected, const struct account_client *who, struct account_creds *out,
	account_cb cb, void *arg, struct account_wait **wait)
{
	struct account_wait *w;
	struct auth *a = NULL;
	char *cause = NULL;
	int r = -1;

	memset(out, 0, sizeof *out);
	*wait = NULL;
	if (account_state.ext_access != NULL && !account_state.ext_refreshing) {
		/* the client's tokens: renewed only by the client, only after a 401 (0.169 sends
		 * an expired token as it is and asks on the refusal) */
		if (rejected == NULL || strcmp(rejected, account_state.ext_access) != 0) {
			out->access_token = xstrdup(account_state.ext_access);
			out->account_id = xstrdup(account_state.ext_account);
			return 0;
		}
		if (account_state.ext_ask == NULL) {
			out->error = xstrdup("auth refresh request canceled: no client to ask");
			return -1;
		}
		account_state.ext_refreshing = 1;
		/* waiting first: the ask may be answered (and fire) before it returns */
		w = xcalloc(1, sizeof *w);
		w->cb = cb;
		w->arg = arg;
		w->next = account_state.waits;
		account_state.waits = w;
		*wait = w;
		account_state.ext_ask(account_state.ext_arg, account_state.ext_account);
		return 1;
	}
	if (account_state.xfer == NULL && !account_state.ext_refreshing) {
		a = account_load();
		if (a == NULL || a->mode != AUTH_MODE_CHATGPT) {
			out->error = xstrdup(MSG_MISMATCH);
			out->permanent = 1;
			goto out;
		}
		/* refused, but auth.json already holds another token (a refresh by another
		 * turn, or by another process): take it, as upstream's reload step does */
		if (rejected != NULL ? strcmp(rejected, a->access_token) != 0
				     : !auth_stale(a, time(NULL))) {
			account_fill(out, a);
			r = 0;
			goto out;
		}
		if (account_state.http == NULL ||
			account_refresh_start(a, who, rejected != NULL, &cause) != 0) {
			out->error = xasprintf("Failed to refresh token: %s",
				cause != NULL ? cause : "no HTTP client");
			free(cause);
			goto out;
		}
	}
	w = xcalloc(1, sizeof *w);
	w->cb = cb;
	w->arg = arg;
	w->next = account_state.waits;
	account_state.waits = w;
	*wait = w;
	r = 1;
out:
	auth_free(a);
	return r;
}

void
account_wait_cancel(struct account_wait *w)
{
	if (w == NULL)
		return;
	if (account_unlink(&account_state.waits, w) || account_unlink(&account_state.firing, w))
		free(w);
}
