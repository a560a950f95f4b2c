/*
 * Tools the client runs: a dynamic tool (thread/start.dynamicTools) is an `item/tool/call`
 * server request inside a dynamicToolCall item. As upstream 0.169 (recorded against a mock
 * model, tests/fixtures/dynamic_tools/): item/started, the request, then item/completed once
 * the client answered, with its contentItems and success; no thread status flag and no
 * serverRequest/resolved for it. The rule kept here, which upstream broke (openai/codex#33993):
 * a started item completes exactly once whatever happens to the request: an error answer
 * (failed, "dynamic tool request failed"), an answer not of the schema ("... was invalid"), an
 * interrupt or the turn's end (failed, no contentItems), the client gone (the same); an answer
 * arriving after that is ignored by the rpc layer.
 */
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "agent/codemode/codemode_run.h"
#include "agent/tools/dynamic_tools.h"
#include "agent/tools/tool_output.h"
#include "protocol/xmalloc.h"

/* A call waiting on the client (the turn's list: the calls of one response run at once). */
struct agent_dyn_call {
	struct agent_dyn_call *next;
	long long token; /* the sink's request */
	char *call_id;
	json_t *item; /* the dynamicToolCall item, as started */
	int64_t started_ms;
};

/* The function_call_output of a call whose output is JSON (a string or content parts). */
static void
agent_dyn_output(struct agent_turn *t, const char *call_id, json_t *output)
{
	json_t *item;

	if (codemode_tool_json(t->a->cm, call_id, output, NULL)) {
		json_decref(output); /* a cell's nested call: its script gets the output */
		return;
	}
	item = json_pack("{s:s, s:s, s:o}", "type", "function_call_output", "call_id", call_id,
		"output", output);
	agent_record_response(t->a, item);
	agent_history_add(t->a, item);
}

/* The client's answer (or its absence): the item completes, the model hears the outcome. */
static void
agent_dyn_answer(
	struct agent_turn *t, struct agent_dyn_call *c, const json_t *result, enum agent_answer st)
{
	struct agent_dyn_call **pp;
	json_t *items = NULL;
	int success = 0;
	int64_t now = agent_now_ms();

	for (pp = &t->dyn; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	t->busy = t->dyn != NULL || t->mcp_calls != NULL;
	if (st == AGENT_ANSWER_RESULT && dynamic_tools_answer(result, &items, &success) != 0)
		items = json_pack(
			"[{s:s, s:s}]", "type", "inputText", "text", DYNAMIC_TOOLS_INVALID);
	else if (st == AGENT_ANSWER_ERROR)
		items = json_pack(
			"[{s:s, s:s}]", "type", "inputText", "text", DYNAMIC_TOOLS_FAILED);
	if (st == AGENT_ANSWER_CANCEL) {
		json_object_set_new(c->item, "contentItems", json_array());
		agent_tool_output(t, c->call_id, 0, DYNAMIC_TOOLS_CANCELLED);
	} else {
		json_object_set(c->item, "contentItems", items);
		agent_dyn_output(t, c->call_id, dynamic_tools_output(items));
	}
	json_object_set_new(c->item, "status", json_string(success ? "completed" : "failed"));
	json_object_set_new(c->item, "success", json_boolean(success));
	json_object_set_new(c->item, "durationMs", json_integer(now - c->started_ms));
	agent_item_complete(t, c->item, c->started_ms);
	json_decref(items);
	json_decref(c->item);
	free(c->call_id);
	free(c);
}

int
agent_dynamic_call(struct agent_turn *t, const json_t *call, const char *call_id)
{
	const char *name = json_string_value(json_object_get(call, "name"));
	const char *ns = json_string_value(json_object_get(call, "namespace"));
	const char *text = json_string_value(json_object_get(call, "arguments"));
	struct agent_dyn_call *c;
	json_error_t err;
	json_t *args, *params;
	char *msg;

	if (dynamic_tools_find(t->a->dynamic_tools, ns, name) == NULL)
		return 0;
	/* Arguments that are not JSON never reach the client (upstream: no item either). */
	args = json_loads(text != NULL ? text : "", JSON_DECODE_ANY, &err);
	if (args == NULL) {
		msg = tool_output_bad_arguments(err.text);
		agent_tool_output(t, call_id, 0, msg);
		free(msg);
		return 1;
	}
	c = xcalloc(1, sizeof *c);
	c->call_id = xstrdup(call_id != NULL ? call_id : "");
	c->started_ms = agent_now_ms();
	c->item = json_pack("{s:s, s:s, s:s*, s:s, s:O, s:s, s:n, s:n, s:n}", "type",
		"dynamicToolCall", "id", c->call_id, "namespace", ns, "tool", name, "arguments",
		args, "status", "inProgress", "contentItems", "success", "durationMs");
	if (ns == NULL)
		json_object_set_new(c->item, "namespace", json_null());
	agent_item_start(t, c->item, c->started_ms);
	params = json_pack("{s:s, s:O, s:s, s:O}", "callId", c->call_id, "namespace",
		json_object_get(c->item, "namespace"), "tool", name, "arguments", args);
	json_decref(args);
	c->token = t->a->next_approval++;
	c->next = t->dyn;
	t->dyn = c;
	t->busy = 1;
	t->sink->approval(t->arg, c->token, "item/tool/call", params);
	json_decref(params);
	return 1;
}

int
agent_dynamic_answer(
	struct agent_turn *t, long long token, const json_t *result, enum agent_answer st)
{
	struct agent_dyn_call *c;

	for (c = t->dyn; c != NULL && c->token != token; c = c->next)
		;
	if (c == NULL)
		return 0;
	agent_dyn_answer(t, c, result, st);
	agent_kick(t);
	return 1;
}

void
agent_dynamic_abort(struct agent_turn *t)
{
	struct agent_dyn_call *c;

	/* Oldest first: the items complete in the order they started. */
	while (t->dyn != NULL) {
		for (c = t->dyn; c->next != NULL; c = c->next)
			;
		t->sink->approval_cancel(t->arg, c->token);
		agent_dyn_answer(t, c, NULL, AGENT_ANSWER_CANCEL);
	}
}
