/*
 * What a turn reports (agent.h's sink), as upstream's notifications and server requests:
 * item/started, deltas, item/completed, thread/tokenUsage/updated, turn/diff/updated,
 * turn/plan/updated, error, thread/status/changed (active, waitingOnApproval, idle), the
 * approval requests with serverRequest/resolved after each, and turn/completed exactly once.
 * A request the agent withdraws (interrupt, the turn's end) is cancelled in the rpc layer,
 * and resolved on the wire after turn/completed, as 0.169 does. As upstream 0.169 shares a
 * thread (api/subscribers/): every subscribed connection gets the thread's notifications
 * (thread/status/changed goes to every connection) and a copy of each server request under
 * its own id; the first answer wins.
 */
#include <stdlib.h>
#include <string.h>

#include "api/account/account_api.h"
#include "api/goals/goal_turn.h"
#include "api/subscribers/subscribers.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"
#include "session.h"
#include "thread.h"
#include "turn.h"

/* Send method with params (stolen) plus threadId and, when turn, turnId. */
static void
turn_sink_notify(struct turn_thread *tt, const char *method, json_t *params, int turn)
{
	json_object_set_new(params, "threadId", json_string(tt->id));
	if (turn)
		json_object_set_new(params, "turnId", json_string(tt->turn_id));
	/* Status changes reach every connection, subscribed or not (upstream 0.169's). */
	if (strcmp(method, "thread/status/changed") == 0)
		subs_broadcast(method, params);
	else
		thread_api_notify(tt->s, tt->id, method, params);
}

static void
turn_sink_status(struct turn_thread *tt, const char *type, int waiting)
{
	json_t *st = strcmp(type, "active") == 0
		? json_pack("{s:s, s:[]}", "type", type, "activeFlags")
		: json_pack("{s:s}", "type", type);

	if (waiting)
		json_array_append_new(json_object_get(st, "activeFlags"),
			json_string(waiting == 2 ? "waitingOnUserInput" : "waitingOnApproval"));
	turn_sink_notify(tt, "thread/status/changed", json_pack("{s:o}", "status", st), 0);
}

void
turn_sink_begin(struct turn_thread *tt, const char *turn_id)
{
	snprintf(tt->turn_id, sizeof tt->turn_id, "%s", turn_id);
	tt->started_ms = rpc_now_ms();
	tt->ending = 0;
	json_decref(tt->last_message);
	tt->last_message = NULL;
}

void
turn_sink_started(struct turn_thread *tt)
{
	json_t *turn = json_pack("{s:s, s:s, s:[], s:s, s:s, s:n, s:I, s:n, s:n}", "id",
		tt->turn_id, "rootTurnId", tt->turn_id, "items", "itemsView", "notLoaded", "status",
		"inProgress", "error", "startedAt", (json_int_t)(tt->started_ms / 1000),
		"completedAt", "durationMs");

	turn_sink_status(tt, "active", 0);
	turn_sink_notify(tt, "turn/started", json_pack("{s:o}", "turn", turn), 0);
}

static void
turn_sink_item_started(void *arg, json_t *item, int64_t at_ms)
{
	turn_sink_notify(arg, "item/started",
		json_pack("{s:O, s:I}", "item", item, "startedAtMs", (json_int_t)at_ms), 1);
}

static void
turn_sink_item_completed(void *arg, json_t *item, int64_t at_ms)
{
	struct turn_thread *tt = arg;
	const char *type = json_string_value(json_object_get(item, "type"));

	if (type != NULL && strcmp(type, "agentMessage") == 0) {
		json_decref(tt->last_message);
		tt->last_message = json_deep_copy(item);
	}
	turn_sink_notify(tt, "item/completed",
		json_pack("{s:O, s:n, s:I}", "item", item, "contentTokenCount", "completedAtMs",
			(json_int_t)at_ms),
		1);
}

static void
turn_sink_delta(void *arg, const char *method, json_t *params)
{
	turn_sink_notify(arg, method, json_incref(params), 1);
}

static void
turn_sink_usage(void *arg, json_t *usage)
{
	turn_sink_notify(
		arg, "thread/tokenUsage/updated", json_pack("{s:O}", "tokenUsage", usage), 1);
}

/*
 * account/rateLimits/updated (no threadId): kept for account/rateLimits/read, and sent, as
 * upstream sends the thread's events, to the connections subscribed to the thread; one that
 * unsubscribed hears only status changes.
 */
static void
turn_sink_rate_limits(void *arg, json_t *snapshot)
{
	struct turn_thread *tt = arg;

	account_api_rate_limits(NULL, snapshot);
	subs_notify(
		tt->id, "account/rateLimits/updated", json_pack("{s:O}", "rateLimits", snapshot));
}

/* hook/started, hook/completed: {threadId, turnId, run} in upstream's order. */
static void
turn_sink_hook(void *arg, const char *method, json_t *run)
{
	struct turn_thread *tt = arg;

	thread_api_notify(tt->s, tt->id, method,
		json_pack(
			"{s:s, s:s, s:O}", "threadId", tt->id, "turnId", tt->turn_id, "run", run));
}

/* The goal tools act on the thread's goal, kept here (api/goals/goal_turn.h). */
static char *
turn_sink_tool(void *arg, const char *name, const char *args)
{
	struct turn_thread *tt = arg;

	return goal_turn_tool(tt->s, tt->id, tt->turn_id, name, args);
}

static void
turn_sink_diff(void *arg, const char *diff)
{
	turn_sink_notify(arg, "turn/diff/updated", json_pack("{s:s}", "diff", diff), 1);
}

static void
turn_sink_plan(void *arg, json_t *plan)
{
	turn_sink_notify(arg, "turn/plan/updated", json_deep_copy(plan), 1);
}

static void
turn_sink_error(void *arg, json_t *err, int will_retry)
{
	turn_sink_notify(
		arg, "error", json_pack("{s:O, s:b}", "error", err, "willRetry", will_retry), 1);
}

static void
turn_sink_waiting(void *arg, int waiting)
{
	turn_sink_status(arg, "active", waiting);
}

/* Take a pending approval out of the thread's list. */
static void
turn_sink_unlink(struct turn_pending *p)
{
	struct turn_pending **pp;

	for (pp = &p->tt->pend; *pp != NULL; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			return;
		}
}

/* The client answered (or the connection closed): resolve, then hand the answer over. */
static void
turn_sink_answer(void *arg, enum rpc_call_status st, const json_t *value)
{
	struct turn_pending *p = arg;
	struct turn_thread *tt = p->tt;

	turn_sink_unlink(p);
	if (p->cancelled) {
		free(p);
		return; /* withdrawn by the agent: resolved after turn/completed */
	}
	if (!p->quiet) /* each connection that got a copy hears it, with its own id */
		subs_call_resolved(p->call, tt->id);
	if (p->fn != NULL) {
		turn_sink_status(tt, "active", 0);
		p->fn(p->arg, (int)st, value);
	} else if (st == RPC_CALL_RESULT)
		agent_approval(tt->agent, p->token, (json_t *)value);
	else if (st == RPC_CALL_ERROR)
		agent_approval(tt->agent, p->token, NULL);
	else /* Every connection went away: nobody will answer; the request is cancelled. */
		agent_approval_gone(tt->agent, p->token);
	subs_call_free(p->call);
	free(p);
}

/* A withdrawn request, resolved on the wire after turn/completed. */
static void
turn_sink_later(struct turn_thread *tt, struct subs_call *c)
{
	tt->later = xrealloc(tt->later, (tt->nlater + 1) * sizeof *tt->later);
	tt->later[tt->nlater++] = c;
}

static void turn_sink_approval_cancel(void *arg, long long token);

static void
turn_sink_request(struct turn_thread *tt, long long token, const char *method, json_t *params,
	void (*fn)(void *arg, int st, const json_t *value), void *arg)
{
	struct turn_pending *p = xcalloc(1, sizeof *p);
	json_t *msg = json_deep_copy(params);

	p->tt = tt;
	p->token = token;
	p->fn = fn;
	p->arg = arg;
	/* upstream resolves item/tool/call with the item's completion, no notification */
	p->quiet = strcmp(method, "item/tool/call") == 0;
	p->next = tt->pend;
	tt->pend = p;
	json_object_set_new(msg, "threadId", json_string(tt->id));
	json_object_set_new(msg, "turnId", json_string(tt->turn_id));
	p->call = subs_call(tt->id, tt->s, method, msg, turn_sink_answer, p);
}

static void
turn_sink_approval(void *arg, long long token, const char *method, json_t *params)
{
	turn_sink_request(arg, token, method, params, NULL, NULL);
}

long long
turn_sink_ask(struct turn_thread *tt, const char *method, json_t *params,
	void (*fn)(void *arg, int st, const json_t *value), void *arg)
{
	static long long next = -2; /* the agent's tokens count up from 0 */
	long long token = next--;

	turn_sink_status(tt, "active", 1);
	turn_sink_request(tt, token, method, params, fn, arg);
	json_decref(params);
	return token;
}

void
turn_sink_withdraw(struct turn_thread *tt, long long token)
{
	turn_sink_approval_cancel(tt, token);
}

static void
turn_sink_approval_cancel(void *arg, long long token)
{
	struct turn_thread *tt = arg;
	struct turn_pending *p;
	struct subs_call *c;
	int quiet;

	for (p = tt->pend; p != NULL && p->token != token; p = p->next)
		;
	if (p == NULL)
		return;
	c = p->call;
	quiet = p->quiet;
	p->cancelled = 1;
	subs_call_cancel(c); /* its callback frees p */
	if (quiet)
		subs_call_free(c);
	else
		turn_sink_later(tt, c);
}

/* The withdrawn requests: resolved now (after turn/completed), or just forgotten. */
static void
turn_sink_flush_later(struct turn_thread *tt, int resolve)
{
	for (size_t i = 0; i < tt->nlater; i++) {
		if (resolve)
			subs_call_resolved(tt->later[i], tt->id);
		subs_call_free(tt->later[i]);
	}
	free(tt->later);
	tt->later = NULL;
	tt->nlater = 0;
}

static void
turn_sink_done(void *arg, enum agent_status status, json_t *error)
{
	struct turn_thread *tt = arg;
	static const char *const names[] = {"completed", "interrupted", "failed"};
	int64_t now = rpc_now_ms();
	json_t *items = json_array(), *turn;

	tt->ending = 1;
	if (tt->last_message != NULL)
		json_array_append(items, tt->last_message);
	/* a turn of the user's shell commands alone: upstream sends no summary of it */
	turn = json_pack("{s:s, s:s, s:o, s:s, s:s, s:O?, s:I, s:I, s:I}", "id", tt->turn_id,
		"rootTurnId", tt->turn_id, "items", items, "itemsView",
		tt->shell_only ? "notLoaded" : "summary", "status", names[status], "error", error,
		"startedAt", (json_int_t)(tt->started_ms / 1000), "completedAt",
		(json_int_t)(now / 1000), "durationMs", (json_int_t)(now - tt->started_ms));
	if (json_object_get(turn, "error") == NULL)
		json_object_set_new(turn, "error", json_null());
	turn_sink_status(tt, "idle", 0);
	turn_sink_notify(tt, "turn/completed", json_pack("{s:o}", "turn", turn), 0);
	turn_sink_flush_later(tt, 1);
	json_decref(tt->last_message);
	tt->last_message = NULL;
	tt->ending = 0;
	tt->shell_only = 0;
}

void
turn_sink_clear(struct turn_thread *tt)
{
	struct turn_pending *p;
	struct subs_call *c;

	while ((p = tt->pend) != NULL) {
		p->cancelled = 1;
		tt->pend = p->next;
		p->tt = tt;
		c = p->call;
		subs_call_cancel(c); /* frees p */
		subs_call_free(c);
	}
	json_decref(tt->last_message);
	tt->last_message = NULL;
	turn_sink_flush_later(tt, 0);
}

const struct agent_sink turn_sink = {
	.item_started = turn_sink_item_started,
	.item_completed = turn_sink_item_completed,
	.delta = turn_sink_delta,
	.usage = turn_sink_usage,
	.rate_limits = turn_sink_rate_limits,
	.diff = turn_sink_diff,
	.plan = turn_sink_plan,
	.error = turn_sink_error,
	.waiting = turn_sink_waiting,
	.approval = turn_sink_approval,
	.approval_cancel = turn_sink_approval_cancel,
	.done = turn_sink_done,
	.hook = turn_sink_hook,
	.tool = turn_sink_tool,
};
