/*
 * A turn's model requests on a ChatGPT login (account/account.h): before each request the
 * credentials are fetched (a stale access token is refreshed first, the request waiting for
 * that one refresh with every other turn), the request goes to the ChatGPT backend with the
 * bearer access token and chatgpt-account-id; a 401 is answered once per request by fetching
 * again with the refused token (another turn's refresh, or a new one), then asking again.
 * A refresh refused for good ends the turn with upstream's sentence and codexErrorInfo
 * "unauthorized" (the api layer then sends account/updated).
 */
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "io/log.h"
#include "protocol/xmalloc.h"

static void agent_auth_cb(void *arg, const struct account_creds *c);

/* The TurnError of a failed credential fetch. */
static json_t *
agent_auth_error(const struct account_creds *c)
{
	return json_pack("{s:s, s:s}", "message", c->error, "codexErrorInfo",
		c->permanent ? "unauthorized" : "other");
}

/* Keep fetched credentials for the next request (copied: c is borrowed). */
static void
agent_auth_keep(struct agent_turn *t, const struct account_creds *c)
{
	account_creds_clear(&t->auth.creds);
	t->auth.creds.access_token = xstrdup(c->access_token);
	t->auth.creds.account_id = c->account_id != NULL ? xstrdup(c->account_id) : NULL;
	t->auth.ready = 1;
}

/* Ask for credentials; 0 ready (or not a ChatGPT login), 1 waiting, -1 the turn failed. */
static int
agent_auth_fetch(struct agent_turn *t)
{
	struct account_client who = {t->a->c.originator, t->a->c.user_agent};
	struct account_creds c;
	int r;

	r = account_creds_get(t->auth.rejected, &who, &c, agent_auth_cb, t, &t->auth.wait);
	free(t->auth.rejected);
	t->auth.rejected = NULL;
	if (r == 0)
		agent_auth_keep(t, &c);
	else if (r < 0)
		agent_fail(t, agent_auth_error(&c));
	account_creds_clear(&c);
	return r;
}

/* The refresh this turn waited for ended: ask the model now, or fail. */
static void
agent_auth_cb(void *arg, const struct account_creds *c)
{
	struct agent_turn *t = arg;
	char *cause = NULL;

	t->auth.wait = NULL;
	if (c->error != NULL) {
		agent_fail(t, agent_auth_error(c));
		return;
	}
	agent_auth_keep(t, c);
	if (agent_model_request(t, &cause) != 0) {
		agent_fail(t,
			json_pack("{s:s, s:s}", "message",
				cause != NULL ? cause : "model request failed", "codexErrorInfo",
				"other"));
		free(cause);
	}
}

int
agent_auth_prepare(struct agent_turn *t)
{
	if (t->auth.wait != NULL)
		return 1;
	if (t->auth.ready)
		return 0;
	t->auth.chatgpt = account_chatgpt_applies(t->provider);
	if (!t->auth.chatgpt)
		return 0;
	return agent_auth_fetch(t);
}

size_t
agent_auth_headers(struct agent_turn *t, const char **headers, char **owned)
{
	size_t n = 0;

	if (!t->auth.chatgpt || !t->auth.ready)
		return 0;
	headers[n] = owned[n] = xasprintf("Authorization: Bearer %s", t->auth.creds.access_token);
	n++;
	if (t->auth.creds.account_id != NULL) {
		headers[n] = owned[n] =
			xasprintf("chatgpt-account-id: %s", t->auth.creds.account_id);
		n++;
	}
	return n;
}

void
agent_auth_sent(struct agent_turn *t)
{
	/* the credentials stay for the 401 check; the next request fetches again */
	t->auth.ready = 0;
}

int
agent_auth_unauthorized(struct agent_turn *t)
{
	if (!t->auth.chatgpt || t->auth.retried || t->auth.creds.access_token == NULL)
		return 0;
	t->auth.retried = 1;
	free(t->auth.rejected);
	t->auth.rejected = xstrdup(t->auth.creds.access_token);
	log_info("agent: the ChatGPT backend refused the access token; refreshing once");
	t->need_model = 1;
	agent_kick(t);
	return 1;
}

void
agent_auth_completed(struct agent_turn *t)
{
	t->auth.retried = 0;
}

void
agent_auth_cancel(struct agent_turn *t)
{
	account_wait_cancel(t->auth.wait);
	t->auth.wait = NULL;
}

void
agent_auth_free(struct agent_turn *t)
{
	agent_auth_cancel(t);
	account_creds_clear(&t->auth.creds);
	if (t->auth.rejected != NULL)
		explicit_bzero(t->auth.rejected, strlen(t->auth.rejected));
	free(t->auth.rejected);
	t->auth.rejected = NULL;
}
