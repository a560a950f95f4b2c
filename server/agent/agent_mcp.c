/*
 * MCP tools in a turn: the model's call (namespace mcp__<server> and the tool; the flat name on
 * the Chat wire) is a tools/call on the thread's set (mcp/mcp.h) in an mcpToolCall item, with
 * progress; shapes, approval and results as upstream's (agent/tools/mcp_output.h); where the
 * user would be asked, PermissionRequest hooks answer first. The calls of one response go out
 * at once. Kept where upstream breaks it: every started item completes,
 * an interrupted call as failed, after notifications/cancelled to the server.
 */
#include <stdlib.h>
#include <time.h>

#include "agent_int.h"
#include "agent/codemode/codemode_run.h"
#include "agent/tools/mcp_output.h"
#include "agent/tools/mcp_route.h"
#include "hooks/hooks_turn.h"
#include "mcp/mcp.h"
#include "mcp/mcp_resources.h"
#include "mcp/mcp_tools.h"
#include "protocol/xmalloc.h"

struct agent_mcp_call {
	struct agent_mcp_call *next;
	struct agent_turn *t;
	char *call_id;
	json_t *item; /* the mcpToolCall item, as started */
	int64_t started_ms;
	struct timespec started; /* the wall time the model is told, finer than ms */
	struct mcp_call *h;	 /* the call on the server, NULL once it ended */
	int res;		 /* a resource tool's (mcp/mcp_resources.h) */
	size_t srv; /* the server, the tool and its arguments while PermissionRequest runs */
	char *tool;
	json_t *args;
};

/* A server started or failed: a model request waiting for the servers may go now. */
static void
agent_mcp_settled(void *arg)
{
	struct agent *a = arg;

	if (a->turn != NULL)
		agent_kick(a->turn);
}

void
agent_set_mcp(struct agent *a, struct mcp_set *mcp)
{
	if (a->mcp != NULL)
		mcp_set_on_settle(a->mcp, NULL, NULL);
	a->mcp = mcp;
	if (mcp != NULL)
		mcp_set_on_settle(mcp, agent_mcp_settled, a);
}

/* The call's end: the item completes, the model hears the outcome. */
static void
agent_mcp_done(void *arg, const json_t *result, const char *error)
{
	struct agent_mcp_call *c = arg, **pp;
	struct agent_turn *t = c->t;
	json_t *out, *item;

	for (pp = &t->mcp_calls; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	t->busy = t->dyn != NULL || t->mcp_calls != NULL;
	mcp_output_complete(c->item, result, error, agent_now_ms() - c->started_ms);
	agent_item_complete(t, c->item, c->started_ms);
	/* a cell's nested call: its script gets the CallToolResult (or the error) */
	if (codemode_tool_json(t->a->cm, c->call_id, result, error))
		goto out;
	out = c->res ? mcp_resources_output(result, error)
		     : mcp_output_model(result, error, mcp_output_since(&c->started));
	item = json_pack("{s:s, s:s, s:o}", "type", "function_call_output", "call_id", c->call_id,
		"output", out);
	if (result != NULL && !c->res && agent_hooks_output(t, item))
		t->tool_res = json_incref((json_t *)result); /* PostToolUse's tool_response */
	else {
		agent_record_response(t->a, item);
		agent_history_add(t->a, item);
	}
out:
	json_decref(c->item);
	json_decref(c->args);
	free(c->tool);
	free(c->call_id);
	free(c);
	agent_kick(t);
}

/* The server's answer: an error is framed as upstream frames it. */
static void
agent_mcp_answer(void *arg, const json_t *result, const char *error)
{
	char *msg = mcp_output_error(((struct agent_mcp_call *)arg)->item, error);

	agent_mcp_done(arg, result, msg != NULL ? msg : error);
	free(msg);
}

/* The server's notifications/progress: item/mcpToolCall/progress with its message. */
static void
agent_mcp_progress(void *arg, double progress, const double *total, const char *message)
{
	struct agent_mcp_call *c = arg;
	json_t *p = mcp_output_progress(c->call_id, progress, total, message);

	c->t->sink->delta(c->t->arg, "item/mcpToolCall/progress", p);
	json_decref(p);
}

/* A call's item starts and the call joins the turn's. */
static struct agent_mcp_call *
agent_mcp_begin(struct agent_turn *t, const char *call_id, const char *server, const json_t *tool,
	const json_t *args)
{
	struct agent_mcp_call *c = xcalloc(1, sizeof *c);

	c->t = t;
	c->call_id = xstrdup(call_id != NULL ? call_id : "");
	c->started_ms = agent_now_ms();
	clock_gettime(CLOCK_MONOTONIC, &c->started);
	c->item = mcp_output_item(c->call_id, server, tool, args);
	agent_item_start(t, c->item, c->started_ms);
	c->next = t->mcp_calls;
	t->mcp_calls = c;
	t->busy = 1;
	return c;
}

/* A resource tool's call: its item (upstream answers some without one), then the requests. */
static int
agent_mcp_resource(struct agent_turn *t, const char *name, const char *text, const char *call_id)
{
	struct agent_mcp_call *c;
	const char *server;
	char *msg = NULL;
	json_t *args = NULL, *tool = json_pack("{s:s}", "name", name);

	if (mcp_resources_check(t->a->mcp, name, text, &server, &args, &msg) != 0)
		agent_tool_output(t, call_id, 0, msg);
	else {
		c = agent_mcp_begin(t, call_id, server, tool, args);
		c->res = 1;
		c->h = mcp_resources_call(t->a->mcp, name, args,
			&(struct mcp_call_cbs){.done = agent_mcp_done, .arg = c}, &msg);
		if (c->h == NULL)
			agent_mcp_done(c, NULL, msg);
	}
	json_decref(tool);
	json_decref(args);
	free(msg);
	return 1;
}

/* tools/call on the server, the user asked first when ask (mcp_elicit.c). */
static void
agent_mcp_send(struct agent_mcp_call *c, int ask)
{
	struct mcp_call_cbs cbs = {agent_mcp_progress, agent_mcp_answer, c, NULL, ask};
	json_t *meta = mcp_route_meta(c->call_id, c->t->a->c.thread_id);
	char *cause = NULL;

	c->h = mcp_call_tool(c->t->a->mcp, c->srv, c->tool, c->args, meta, &cbs, &cause);
	json_decref(meta);
	if (c->h == NULL)
		agent_mcp_answer(c, NULL, cause);
	free(cause);
}

/* PermissionRequest's answer (r NULL: the turn ended first): an allow calls the tool without
 * asking, a deny fails the item with the hooks' message, no decision asks the user. */
static void
agent_mcp_permitted(struct agent_turn *t, const struct hooks_result *r, void *arg)
{
	(void)t;
	if (r == NULL)
		agent_mcp_answer(arg, NULL, "cancelled"); /* as an interrupted call ends */
	else if (r->verdict == HOOKS_DENY)
		agent_mcp_done(arg, NULL, r->message);
	else
		agent_mcp_send(arg, r->verdict != HOOKS_ALLOW);
}

/* Start one call (its item first); 1 when the call is an MCP tool's, else 0. */
static int
agent_mcp_start(struct agent_turn *t, const json_t *call, const char *call_id, int chat)
{
	const char *name = json_string_value(json_object_get(call, "name"));
	const char *ns = json_string_value(json_object_get(call, "namespace"));
	const json_t *tool = NULL;
	struct agent_mcp_call *c;
	const char *why = NULL;
	json_t *args;
	char *msg;
	int srv;

	if (ns == NULL && mcp_resources_tool(name))
		return agent_mcp_resource(
			t, name, json_string_value(json_object_get(call, "arguments")), call_id);
	if (!mcp_route_wire(call, chat) || (srv = mcp_tools_find(t->a->mcp, ns, name, &tool)) < 0)
		return 0;
	if ((args = mcp_route_args(call, &msg)) == NULL) {
		agent_tool_output(t, call_id, 0, msg);
		free(msg);
		return 1;
	}
	c = agent_mcp_begin(t, call_id, mcp_set_name(t->a->mcp, (size_t)srv), tool, args);
	c->srv = (size_t)srv;
	c->tool = xstrdup(json_string_value(json_object_get(tool, "name")) ?: "");
	c->args = args;
	why = mcp_output_approval(
		mcp_set_config(t->a->mcp, (size_t)srv), tool, t->o.approval_policy);
	if (why != NULL && why != MCP_OUTPUT_ASK) /* upstream's failure: nobody may be asked */
		agent_mcp_done(c, NULL, why);
	/* where the user would be asked, PermissionRequest may answer in their place */
	else if (why == NULL || mcp_call_remembered(t->a->mcp, c->srv, c->tool) ||
		!agent_hooks_permission(t, c->call_id, call, NULL, agent_mcp_permitted, c))
		agent_mcp_send(c, why == MCP_OUTPUT_ASK);
	return 1;
}

int
agent_mcp_call(struct agent_turn *t, const json_t *call, const char *call_id)
{
	int chat = t->provider->wire == MODEL_WIRE_CHAT;
	const json_t *nc;

	if (t->a->mcp == NULL || !agent_mcp_start(t, call, call_id, chat))
		return 0;
	/* The response's next MCP calls go out at once, as upstream's run in parallel (one by
	 * one when the tool hooks see them: each waits for its PreToolUse). */
	while ((nc = json_array_get(t->calls, t->next)) != NULL &&
		!hooks_tool_seen(t->a->c.hooks, nc) && mcp_route_function_call(nc) &&
		agent_mcp_start(t, nc, json_string_value(json_object_get(nc, "call_id")), chat))
		t->next++;
	return 1;
}

void
agent_mcp_abort(struct agent_turn *t)
{
	struct agent_mcp_call *c;

	/* Oldest first: the items complete in the order they started. */
	while (t->mcp_calls != NULL) {
		for (c = t->mcp_calls; c->next != NULL; c = c->next)
			;
		if (c->h != NULL)
			mcp_call_cancel(c->h); /* its done runs now: the item completes, failed */
		else			       /* still waiting for PermissionRequest */
			agent_mcp_answer(c, NULL, "cancelled");
	}
}
