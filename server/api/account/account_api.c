/*
 * The account area: account/read, account/login/start, account/login/cancel, account/logout,
 * account/rateLimits/read, and the account/updated, account/login/completed and
 * account/rateLimits/updated notifications, answered as upstream 0.169 answers them (observed
 * side by side):
 *   login/start apiKey   the key is stored as `codex login --with-api-key` stores it (any string,
 *                        the empty one too); answer {type:"apiKey"}, then login/completed
 *                        {loginId:null, success:true}, then account/updated {authMode:"apikey"}
 *   login/cancel         a loginId that is not a UUID: -32600 "invalid login id: X"; no such
 *                        pending login: {status:"notFound"}
 *   logout               auth.json removed (there or not), {}, then account/updated with nulls
 *   rateLimits/read      without a ChatGPT login: -32600 "codex account authentication required
 *                        to read rate limits"; with one, GET {chatgpt_base_url}/wham/usage each
 *                        time (account/usage.c), its failure -32603 "failed to fetch codex rate
 *                        limits: ..."
 * Secrets are never echoed: account/read says which login there is, never its key or tokens.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "account/account.h"
#include "account/auth_store.h"
#include "account/usage.h"
#include "account_api.h"
#include "external_api.h"
#include "login_api.h"
#include "api/api.h"
#include "api/session.h"
#include "config/config.h"
#include "config/home.h"
#include "io/log.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"

/* The connection told of account changes the engine finds (a refresh refused for good). */
static struct rpc *account_api_rpc;
/* The last rate-limit snapshot of the ChatGPT backend, or NULL. */
static json_t *account_api_limits;

/* A rateLimits/read waiting for the backend. */
struct account_api_read {
	struct rpc_req *req;
	struct account_usage *u;
	struct account_api_read *next;
};
static struct account_api_read *account_api_reads;

/* account/updated's params for a login (NULL: none). */
static json_t *
account_api_updated(const struct auth *a)
{
	const char *mode = auth_mode_wire(a), *plan = auth_plan_wire(a);

	return json_pack("{s:o, s:o}", "authMode", mode != NULL ? json_string(mode) : json_null(),
		"planType", plan != NULL ? json_string(plan) : json_null());
}

/* Tell the client what auth.json holds now. */
static void
account_api_notify_updated(struct rpc *r)
{
	struct auth *a = account_load();

	rpc_notify(r, "account/updated", account_api_updated(a));
	auth_free(a);
}

/* The engine's listener: a refresh was refused for good. */
static void
account_api_refresh_failed(void *arg)
{
	(void)arg;
	if (account_api_rpc != NULL)
		account_api_notify_updated(account_api_rpc);
}

void
account_api_attach(struct session *s)
{
	account_api_rpc = s->rpc;
	account_set_listener(account_api_refresh_failed, NULL);
	external_api_attach(s);
}

void
account_api_detach(struct session *s)
{
	login_api_detach(s);
	external_api_detach(s);
	if (account_api_rpc == s->rpc) {
		account_api_rpc = NULL;
		account_set_listener(NULL, NULL);
	}
	json_decref(account_api_limits);
	account_api_limits = NULL;
	/* reads still waiting are answered by rpc_free; their transfers stop here */
	while (account_api_reads != NULL) {
		struct account_api_read *rd = account_api_reads;

		account_api_reads = rd->next;
		account_usage_cancel(rd->u);
		free(rd);
	}
}

void
account_api_rate_limits(struct rpc *r, json_t *snapshot)
{
	json_decref(account_api_limits);
	account_api_limits = json_incref(snapshot);
	if (r != NULL)
		rpc_notify(r, "account/rateLimits/updated",
			json_pack("{s:O}", "rateLimits", snapshot));
}

/* account/read: which login the provider would use; never the key or a token. */
static void
account_api_read(struct session *s, struct rpc_req *req, json_t *params)
{
	const struct model_provider *p;
	json_t *account = json_null(), *user = json_null();
	struct auth *a = NULL;
	struct config *c;
	char *cause = NULL, *key;
	int needs;

	(void)s;
	(void)params;
	if ((c = config_load(&cause)) == NULL) {
		rpc_reply_errorf(req, RPC_INTERNAL_ERROR, "%s", cause);
		free(cause);
		return;
	}
	p = config_provider(c, NULL);
	needs = p != NULL ? p->requires_openai_auth : 0;
	if (needs) {
		if (!account_external_active() && (key = config_provider_api_key(p)) != NULL) {
			account = json_pack("{s:s}", "type", "apiKey");
			explicit_bzero(key, strlen(key));
			free(key); /* presence only: the key is never echoed */
		} else if ((a = account_load()) != NULL && a->mode == AUTH_MODE_CHATGPT) {
			account = json_pack("{s:s, s:o, s:s}", "type", "chatgpt", "email",
				a->email != NULL ? json_string(a->email) : json_null(), "planType",
				auth_plan_wire(a));
			if (a->user_id != NULL)
				user = json_string(a->user_id);
		}
	}
	rpc_reply(req,
		json_pack("{s:o, s:b, s:o}", "account", account, "requiresOpenaiAuth", needs,
			"userId", user));
	auth_free(a);
	config_free(c);
}

/* The browser sign-in succeeded: the client hears of the new login. */
static void
account_api_signed_in(struct rpc *r)
{
	account_api_notify_updated(r);
}

/* account/login/start: an API key is stored; chatgpt and chatgptDeviceCode run their
 * sign-ins (login_api.c); chatgptAuthTokens holds the client's tokens (external_api.c); the
 * other logins are not run here. While the client's tokens are held, only new ones are
 * taken, as upstream. */
static void
account_api_login_start(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *type = json_string_value(json_object_get(params, "type"));
	struct auth *a;
	char *home, *cause = NULL;

	if (strcmp(type, "chatgptAuthTokens") == 0) {
		login_api_drop_pending(); /* as upstream: no pending sign-in may store a login */
		if (external_api_login(req, params, s->rpc) == 0)
			account_api_notify_updated(s->rpc);
		return;
	}
	if (account_external_active() &&
		(strcmp(type, "apiKey") == 0 || strcmp(type, "chatgpt") == 0 ||
			strcmp(type, "chatgptDeviceCode") == 0)) {
		rpc_reply_error(req, RPC_INVALID_REQUEST,
			"External auth is active. Use account/login/start (chatgptAuthTokens) to "
			"update it or account/logout to clear it.",
			NULL);
		return;
	}
	if (strcmp(type, "chatgpt") == 0) {
		login_api_chatgpt_start(s, req, account_api_signed_in);
		return;
	}
	if (strcmp(type, "chatgptDeviceCode") == 0) {
		login_api_device_start(s, req, account_api_signed_in);
		return;
	}
	if (strcmp(type, "apiKey") != 0) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST,
			"account/login/start type `%s` is not supported by this server", type);
		return;
	}
	login_api_drop_pending(); /* as upstream: an API key replaces a pending sign-in */
	home = home_path();
	a = auth_new_api_key(json_string_value(json_object_get(params, "apiKey")));
	if (auth_save(home, a, &cause) != 0) {
		rpc_reply_errorf(req, RPC_INTERNAL_ERROR, "failed to save api key: %s", cause);
		free(cause);
	} else {
		rpc_reply(req, json_pack("{s:s}", "type", "apiKey"));
		rpc_notify(s->rpc, "account/login/completed",
			json_pack("{s:n, s:b, s:n, s:n}", "loginId", "success", 1, "error",
				"onboardingEntrypoint"));
		rpc_notify(s->rpc, "account/updated", account_api_updated(a));
	}
	auth_free(a);
	free(home);
}

/* A UUID's text (8-4-4-4-12 hex digits), as upstream parses a loginId. */
static int
account_api_uuid(const char *s)
{
	static const int dash[] = {8, 13, 18, 23};
	size_t n = strlen(s), d = 0;

	if (n != 36)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (d < 4 && (int)i == dash[d]) {
			if (s[i] != '-')
				return 0;
			d++;
		} else if (!isxdigit((unsigned char)s[i]))
			return 0;
	}
	return 1;
}

/* account/login/cancel: the pending browser sign-in stops and frees its port. */
static void
account_api_login_cancel(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "loginId"));

	(void)s;
	if (!account_api_uuid(id)) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST, "invalid login id: %s", id);
		return;
	}
	if (!login_api_cancel(id)) {
		rpc_reply(req, json_pack("{s:s}", "status", "notFound"));
		return;
	}
	rpc_reply(req, json_pack("{s:s}", "status", "canceled"));
	login_api_drop_pending();
}

/* account/logout: the credentials go, and the client hears there is no login. */
static void
account_api_logout(struct session *s, struct rpc_req *req, json_t *params)
{
	char *home = home_path(), *cause = NULL;

	(void)params;
	account_external_clear();
	if (auth_delete(home, &cause) < 0) {
		rpc_reply_errorf(req, RPC_INTERNAL_ERROR, "logout failed: %s", cause);
		free(cause);
	} else {
		rpc_reply(req, json_object());
		rpc_notify(
			s->rpc, "account/updated", json_pack("{s:n, s:n}", "authMode", "planType"));
	}
	free(home);
}

static void
account_api_unlink(struct account_api_read *rd)
{
	for (struct account_api_read **p = &account_api_reads; *p != NULL; p = &(*p)->next)
		if (*p == rd) {
			*p = rd->next;
			return;
		}
}

static void
account_api_usage_cb(void *arg, json_t *result, const char *error)
{
	struct account_api_read *rd = arg;

	account_api_unlink(rd);
	if (result != NULL)
		rpc_reply(rd->req, result);
	else
		rpc_reply_error(rd->req, RPC_INTERNAL_ERROR, error, NULL);
	free(rd);
}

/*
 * account/rateLimits/read: asked of the backend's usage endpoint each time, as upstream does
 * (config's chatgpt_base_url), with the login's tokens (refreshed first when stale).
 */
static void
account_api_rate_limits_read(struct session *s, struct rpc_req *req, json_t *params)
{
	struct auth *a = account_load();
	struct account_client who = {NULL, s->user_agent};
	struct account_api_read *rd;
	struct config *c;
	char *cause = NULL;

	(void)params;
	if (a == NULL || a->mode != AUTH_MODE_CHATGPT) {
		rpc_reply_error(req, RPC_INVALID_REQUEST,
			"codex account authentication required to read rate limits", NULL);
		auth_free(a);
		return;
	}
	auth_free(a);
	if ((c = config_load(&cause)) == NULL) {
		rpc_reply_errorf(req, RPC_INTERNAL_ERROR, "%s", cause);
		free(cause);
		return;
	}
	rd = xcalloc(1, sizeof *rd);
	rd->req = req;
	if (account_usage_read(json_string_value(config_get(c, "chatgpt_base_url")), &who,
		    account_api_usage_cb, rd, &rd->u, &cause) != 0) {
		rpc_reply_error(req, RPC_INTERNAL_ERROR, cause, NULL);
		free(cause);
		free(rd);
	} else {
		rd->next = account_api_reads;
		account_api_reads = rd;
	}
	config_free(c);
}

const struct rpc_method api_account_methods[] = {
	{"account/read", account_api_read, 0},
	{"account/login/start", account_api_login_start, 0},
	{"account/login/cancel", account_api_login_cancel, 0},
	{"account/logout", account_api_logout, 0},
	{"account/rateLimits/read", account_api_rate_limits_read, 0},
	{NULL, NULL, 0},
};
