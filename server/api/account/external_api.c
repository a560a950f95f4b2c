/*
 * Externally managed ChatGPT tokens, as upstream 0.169's app-server keeps them (observed side
 * by side, and read from its external_auth.rs):
 *   login/start chatgptAuthTokens  the tokens are held in memory only (no auth.json); a
 *            pending sign-in is dropped; answer {type:"chatgptAuthTokens"}, then
 *            login/completed {loginId:null, success:true}, then account/updated
 *            {authMode:"chatgptAuthTokens", planType (given, else the token's claim)}; an
 *            access token that is no JWT: -32603 "failed to set external auth: invalid ID
 *            token format"
 *   refresh  after a backend 401 the client is asked account/chatgptAuthTokens/refresh
 *            {reason:"unauthorized", previousAccountId}; one question for all the turns
 *            waiting; its answer replaces the tokens and the request is sent again; an error
 *            answer ends the waiting turns with "auth refresh request failed: code=C
 *            message=M"; no answer in 10 s: the request is forgotten (a late answer is ignored)
 *            and "auth refresh request timed out after 10s"
 * While such tokens are held, other logins are refused with upstream's -32600 sentence.
 */
#include <stdlib.h>
#include <string.h>

#include "account/account.h"
#include "api/session.h"
#include "external_api.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"

#define EXTERNAL_REFRESH_TIMEOUT 10.0 /* upstream's EXTERNAL_AUTH_REFRESH_TIMEOUT */

static struct {
	struct rpc *rpc; /* the connection asked */
	struct ev_loop *loop;
	long long call; /* the pending refresh request's id, or -1 */
	int timed_out;
	ev_timer timer;
} external_api = {.call = -1};

static void
external_api_answer_cb(void *arg, enum rpc_call_status st, const json_t *value)
{
	const char *access = json_string_value(json_object_get(value, "accessToken")),
		   *account = json_string_value(json_object_get(value, "chatgptAccountId")),
		   *plan = json_string_value(json_object_get(value, "chatgptPlanType"));
	char *error = NULL;

	(void)arg;
	external_api.call = -1;
	ev_timer_stop(external_api.loop, &external_api.timer);
	if (st == RPC_CALL_CANCELLED)
		error = xstrdup(external_api.timed_out
				? "auth refresh request timed out after 10s"
				: "auth refresh request canceled: the connection closed");
	else if (st == RPC_CALL_ERROR)
		error = xasprintf("auth refresh request failed: code=%lld message=%s",
			(long long)json_integer_value(json_object_get(value, "code")),
			json_string_value(json_object_get(value, "message")) != NULL
				? json_string_value(json_object_get(value, "message"))
				: "");
	else if (access == NULL || account == NULL)
		error = xstrdup(access == NULL ? "missing field `accessToken`"
					       : "missing field `chatgptAccountId`");
	external_api.timed_out = 0;
	account_external_refreshed(access, account, plan, error);
	free(error);
}

static void
external_api_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	if (external_api.call < 0 || external_api.rpc == NULL)
		return;
	external_api.timed_out = 1;
	rpc_call_cancel(external_api.rpc, external_api.call); /* runs the answer callback */
}

/* The engine's question: new tokens, please (previous_account_id may be NULL). */
static void
external_api_ask(void *arg, const char *previous_account_id)
{
	(void)arg;
	if (external_api.rpc == NULL) {
		account_external_refreshed(
			NULL, NULL, NULL, "auth refresh request canceled: no client to ask");
		return;
	}
	external_api.timed_out = 0;
	ev_timer_set(&external_api.timer, EXTERNAL_REFRESH_TIMEOUT, 0.);
	ev_timer_start(external_api.loop, &external_api.timer);
	external_api.call = rpc_call(external_api.rpc, "account/chatgptAuthTokens/refresh",
		json_pack("{s:s, s:o}", "reason", "unauthorized", "previousAccountId",
			previous_account_id != NULL ? json_string(previous_account_id)
						    : json_null()),
		external_api_answer_cb, NULL);
}

void
external_api_attach(struct session *s)
{
	external_api.rpc = s->rpc;
	external_api.loop = s->loop;
	ev_timer_init(&external_api.timer, external_api_timeout_cb, EXTERNAL_REFRESH_TIMEOUT, 0.);
	account_set_external_refresher(external_api_ask, NULL);
}

void
external_api_detach(struct session *s)
{
	if (external_api.rpc != s->rpc)
		return;
	ev_timer_stop(external_api.loop, &external_api.timer);
	external_api.rpc = NULL;
	account_set_external_refresher(NULL, NULL);
	/* the tokens were this client's: nobody can renew them now (rpc_free cancels the call) */
	account_external_clear();
}

int
external_api_login(struct rpc_req *req, json_t *params, struct rpc *notify)
{
	const char *access = json_string_value(json_object_get(params, "accessToken")),
		   *account = json_string_value(json_object_get(params, "chatgptAccountId")),
		   *plan = json_string_value(json_object_get(params, "chatgptPlanType"));

	if (account_external_set(access, account, plan) != 0) {
		rpc_reply_error(req, RPC_INTERNAL_ERROR,
			"failed to set external auth: invalid ID token format", NULL);
		return -1;
	}
	rpc_reply(req, json_pack("{s:s}", "type", "chatgptAuthTokens"));
	rpc_notify(notify, "account/login/completed",
		json_pack("{s:n, s:b, s:n, s:n}", "loginId", "success", 1, "error",
			"onboardingEntrypoint"));
	return 0;
}
