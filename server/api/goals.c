/*
 * thread/goal/get, set and clear: a loaded thread's goal (objective, status, token budget),
 * checked in upstream 0.169's order and words, with thread/goal/updated and thread/goal/cleared
 * after each change. Goals live with the connection's loaded threads: unlike upstream (its
 * goals_1.sqlite) they do not outlive the daemon, and a goal does not start turns on its own
 * (upstream continues toward an active goal with turns of its own; docs/protocol.md).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "session.h"
#include "startup.h"
#include "thread.h"
#include "config/config.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"
#include "thread/uuidv7.h"

/*
 * The thread id of a goal request, canonical, once every check upstream makes before touching
 * the goal passed (the feature, the id, the thread being loaded); NULL after answering.
 */
static const char *
goals_thread(struct session *s, struct rpc_req *req, json_t *params, char canon[UUID_STRLEN + 1])
{
	const char *id = json_string_value(json_object_get(params, "threadId"));
	struct config *c;
	char *why = NULL;
	int on;

	if ((c = config_load(&why)) == NULL) {
		rpc_reply_errorf(req, RPC_INTERNAL_ERROR, "%s", why);
		free(why);
		return NULL;
	}
	on = startup_feature_enabled(c, "goals");
	config_free(c);
	if (!on) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, "goals feature is disabled", NULL);
		return NULL;
	}
	if (uuidv7_check(id, &why) != 0) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST, "invalid thread id: %s", why);
		free(why);
		return NULL;
	}
	uuidv7_canon(id, canon);
	if (thread_api_loaded(s, canon) == NULL) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST, "thread not found: %s", id);
		return NULL;
	}
	return canon;
}

/* thread/goal/get: the goal, or null. */
static void
goals_get(struct session *s, struct rpc_req *req, json_t *params)
{
	char canon[UUID_STRLEN + 1];
	json_t *goal;

	if (goals_thread(s, req, params, canon) == NULL)
		return;
	goal = json_object_get(s->goals, canon);
	rpc_reply(req, json_pack("{s:O?}", "goal", goal));
}

/* An objective as upstream keeps it (trimmed), or NULL with *cause when it is empty. */
static char *
goals_objective(const char *text, char **cause)
{
	size_t n;

	while (*text == ' ' || *text == '\t' || *text == '\n' || *text == '\r')
		text++;
	n = strlen(text);
	while (n > 0 && strchr(" \t\n\r", text[n - 1]) != NULL)
		n--;
	if (n == 0) {
		*cause = xstrdup("goal objective must not be empty");
		return NULL;
	}
	return xstrndup(text, n);
}

/* thread/goal/set: a new goal (objective required) or an update of the one there. */
static void
goals_set(struct session *s, struct rpc_req *req, json_t *params)
{
	json_t *obj = json_object_get(params, "objective"), *status, *budget, *goal;
	char canon[UUID_STRLEN + 1], *objective = NULL, *cause = NULL;
	json_int_t now = (json_int_t)time(NULL);

	if (goals_thread(s, req, params, canon) == NULL)
		return;
	status = json_object_get(params, "status");
	budget = json_object_get(params, "tokenBudget");
	if (json_is_string(obj) &&
		(objective = goals_objective(json_string_value(obj), &cause)) == NULL)
		goto fail;
	if (json_is_integer(budget) && json_integer_value(budget) <= 0) {
		cause = xstrdup("goal budgets must be positive when provided");
		goto fail;
	}
	if ((goal = json_object_get(s->goals, canon)) == NULL) {
		if (objective == NULL) {
			cause = xasprintf(
				"cannot update goal for thread %s: no goal exists", canon);
			goto fail;
		}
		goal = json_pack("{s:s, s:s, s:s, s:n, s:i, s:i, s:I, s:I}", "threadId", canon,
			"objective", objective, "status", "active", "tokenBudget", "tokensUsed", 0,
			"timeUsedSeconds", 0, "createdAt", now, "updatedAt", now);
		if (s->goals == NULL)
			s->goals = json_object();
		json_object_set_new(s->goals, canon, goal);
	} else {
		if (objective != NULL)
			json_object_set_new(goal, "objective", json_string(objective));
		json_object_set_new(goal, "updatedAt", json_integer(now));
	}
	if (json_is_string(status))
		json_object_set(goal, "status", status);
	if (json_is_integer(budget))
		json_object_set(goal, "tokenBudget", budget);
	free(objective);
	rpc_reply(req, json_pack("{s:O}", "goal", goal));
	thread_api_notify(s, canon, "thread/goal/updated",
		json_pack("{s:s, s:n, s:O}", "threadId", canon, "turnId", "goal", goal));
	return;
fail:
	free(objective);
	rpc_reply_error(req, RPC_INVALID_REQUEST, cause, NULL);
	free(cause);
}

/* thread/goal/clear: whether there was a goal to remove. */
static void
goals_clear(struct session *s, struct rpc_req *req, json_t *params)
{
	char canon[UUID_STRLEN + 1];
	int had;

	if (goals_thread(s, req, params, canon) == NULL)
		return;
	had = json_object_get(s->goals, canon) != NULL;
	json_object_del(s->goals, canon);
	rpc_reply(req, json_pack("{s:b}", "cleared", had));
	if (had)
		thread_api_notify(
			s, canon, "thread/goal/cleared", json_pack("{s:s}", "threadId", canon));
}

const struct rpc_method api_goals_methods[] = {
	{"thread/goal/get", goals_get, 0},
	{"thread/goal/set", goals_set, 0},
	{"thread/goal/clear", goals_clear, 0},
	{NULL, NULL, 0},
};
