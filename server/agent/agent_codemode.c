/*
 * Code mode's glue (agent/codemode/codemode_run.h does the work): an `exec` or `wait` call
 * goes to the thread's cells; a cell's nested call runs through agent_tools_run exactly as the
 * model's call of that tool would (approvals, sandbox, items), under a call id of its own whose
 * answer agent_tool_output hands back here instead of into the history.
 */
#include <string.h>

#include "agent_int.h"
#include "agent/codemode/codemode_run.h"
#include "agent/codemode/codemode_tools.h"

/*
 * A cell's nested call, as the model's call of that tool: a namespaced one (an MCP server's,
 * a dynamic tool's) named by its namespace and raw name again, as the model would call it.
 */
static void
agent_codemode_nested(void *arg, json_t *call)
{
	struct agent *a = arg;
	const char *name = json_string_value(json_object_get(call, "name")) ?: "";
	const json_t *tool;
	size_t i;

	if (a->turn == NULL)
		return; /* its cell dies with the turn */
	json_array_foreach(codemode_tools(a->cm), i, tool)
	{
		if (strcmp(json_string_value(json_object_get(tool, "name")) ?: "", name) != 0 ||
			json_object_get(tool, "ns") == NULL)
			continue;
		json_object_set(call, "namespace", json_object_get(tool, "ns"));
		json_object_set(call, "name", json_object_get(tool, "tool"));
		break;
	}
	agent_tools_run(a->turn, call);
}

/* The answer to an exec or wait call, and notify()'s texts after it. */
static void
agent_codemode_answer(
	void *arg, const char *call_id, int custom, const json_t *output, const json_t *notes)
{
	struct agent *a = arg;
	json_t *item, *note;
	size_t i;

	item = json_pack("{s:s, s:s, s:O}", "type",
		custom ? "custom_tool_call_output" : "function_call_output", "call_id", call_id,
		"output", output);
	agent_record_response(a, item);
	agent_history_add(a, item); /* stolen */
	/* upstream puts each notify() after the answer, the newest first */
	for (i = json_array_size(notes); i-- > 0;) {
		note = json_array_get(notes, i);
		item = json_pack("{s:s, s:s, s:s, s:O}", "type", "custom_tool_call_output",
			"call_id", call_id, "name", "exec", "output", note);
		agent_record_response(a, item);
		agent_history_add(a, item);
	}
	if (a->turn != NULL)
		agent_kick(a->turn);
}

static const struct codemode_ops agent_codemode_ops = {
	agent_codemode_nested, agent_codemode_answer};

/* The thread's cells, made at its first code-mode request. */
static struct codemode *
agent_codemode(struct agent *a)
{
	if (a->cm == NULL)
		a->cm = codemode_new(a->c.loop, a->c.q, &agent_codemode_ops, a);
	return a->cm;
}

void
agent_codemode_tools(struct agent_turn *t, const json_t *tools)
{
	json_t *nested = codemode_tools_nested(tools);

	codemode_set_tools(agent_codemode(t->a), nested);
	json_decref(nested);
}

int
agent_codemode_call(struct agent_turn *t, const json_t *call, const char *call_id, int custom)
{
	const char *name = json_string_value(json_object_get(call, "name")) ?: "";
	struct agent *a = t->a;

	/* only a code-mode turn has them (else the model hears "unsupported custom tool call", as
	 * upstream for a model it gives no code mode) */
	if (!t->o.code_mode ||
		(!(custom && strcmp(name, "exec") == 0) && !(!custom && strcmp(name, "wait") == 0)))
		return 0;
	agent_codemode(a);
	if (custom)
		codemode_exec(a->cm, call_id,
			json_string_value(json_object_get(call, "input")) ?: "", t->o.cwd);
	else
		codemode_wait(
			a->cm, call_id, json_string_value(json_object_get(call, "arguments")));
	return 1;
}
