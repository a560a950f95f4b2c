/*
 * A tool call as upstream's tool hooks see it (hooks_tool.h): names, inputs and texts as
 * recorded in tests/fixtures/hooks/upstream/tools.json.
 */
#include <stdlib.h>
#include <string.h>

#include "hooks_tool.h"
#include "protocol/xmalloc.h"

static int
hooks_tool_is(const json_t *call, const char *key, const char *want)
{
	const char *v = json_string_value(json_object_get(call, key));

	return v != NULL && strcmp(v, want) == 0;
}

int
hooks_tool_read(const json_t *call, struct hooks_tool *t)
{
	const char *name = json_string_value(json_object_get(call, "name"));
	const char *ns = json_string_value(json_object_get(call, "namespace"));
	const char *args = json_string_value(json_object_get(call, "arguments"));
	const char *id = json_string_value(json_object_get(call, "call_id"));
	const char *input = json_string_value(json_object_get(call, "input"));
	json_t *a = NULL;

	memset(t, 0, sizeof *t);
	if (name == NULL || id == NULL)
		return -1;
	if (hooks_tool_is(call, "type", "custom_tool_call") && strcmp(name, "apply_patch") == 0 &&
		input != NULL) {
		t->kind = HOOKS_TOOL_PATCH;
		t->name = xstrdup("apply_patch");
		t->input = json_pack("{s:s}", "command", input);
	} else if (!hooks_tool_is(call, "type", "function_call") || args == NULL)
		return -1;
	else if (ns == NULL && strcmp(name, "exec_command") == 0) {
		a = json_loads(args, 0, NULL);
		if (!json_is_string(json_object_get(a, "cmd"))) {
			json_decref(a);
			return -1;
		}
		t->kind = HOOKS_TOOL_SHELL;
		t->name = xstrdup("Bash");
		t->input = json_pack("{s:O}", "command", json_object_get(a, "cmd"));
	} else if (ns != NULL && strncmp(ns, "mcp__", 5) == 0) {
		/* upstream reads empty arguments as none: the hook sees {} */
		a = json_loads(args[0] != '\0' ? args : "{}", JSON_DECODE_ANY, NULL);
		if (a == NULL)
			return -1;
		t->kind = HOOKS_TOOL_MCP;
		t->name = xasprintf("%s__%s", ns, name);
		t->input = json_incref(a);
	} else
		return -1;
	json_decref(a);
	t->call_id = xstrdup(id);
	t->command = (char *)json_string_value(json_object_get(t->input, "command"));
	return 0;
}

void
hooks_tool_clear(struct hooks_tool *t)
{
	free(t->name);
	free(t->call_id);
	json_decref(t->input);
	memset(t, 0, sizeof *t);
}

json_t *
hooks_tool_blocked(const struct hooks_tool *t, const char *reason)
{
	char *text = t->kind == HOOKS_TOOL_MCP
		? xasprintf("Tool call blocked by PreToolUse hook: %s. Tool: %s", reason, t->name)
		: xasprintf("Command blocked by PreToolUse hook: %s. Command: %s", reason,
			  t->command);
	json_t *item = json_pack("{s:s, s:s, s:s}", "type",
		t->kind == HOOKS_TOOL_PATCH ? "custom_tool_call_output" : "function_call_output",
		"call_id", t->call_id, "output", text);

	free(text);
	return item;
}

json_t *
hooks_tool_response(const struct hooks_tool *t, const json_t *output, const json_t *result)
{
	const char *text = json_string_value(json_object_get(output, "output"));
	const char *o = text != NULL ? strstr(text, "\nOutput:\n") : NULL;
	const json_t *content = json_object_get(result, "content");

	if (t->kind == HOOKS_TOOL_MCP)
		return json_pack("{s:o, s:b}", "content",
			json_is_array(content) ? json_incref((json_t *)content) : json_array(),
			"isError", json_is_true(json_object_get(result, "isError")));
	if (t->kind == HOOKS_TOOL_PATCH || o == NULL)
		return json_string(text != NULL ? text : "");
	return json_string(o + strlen("\nOutput:\n")); /* what the command printed */
}

int
hooks_tool_name_matches(const char *matcher, const char *name)
{
	static const char *const patch_alias[] = {"apply_patch", "Edit", "Write"};
	const char *p = matcher, *end;
	size_t n, i;

	if (matcher[strspn(matcher,
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789_|")] != '\0')
		return -1;
	for (; *p != '\0'; p = *end != '\0' ? end + 1 : end) {
		end = p + strcspn(p, "|");
		n = (size_t)(end - p);
		if (strlen(name) == n && strncmp(p, name, n) == 0)
			return 1;
		for (i = 0; strcmp(name, "apply_patch") == 0 && i < 3; i++)
			if (strlen(patch_alias[i]) == n && strncmp(p, patch_alias[i], n) == 0)
				return 1;
	}
	return 0;
}
