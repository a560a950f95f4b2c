/*
 * A model's tool call as upstream 0.169's tool hooks (PreToolUse, PermissionRequest,
 * PostToolUse) see it, recorded in tests/fixtures/hooks/upstream/tools.json: its tool_name and
 * tool_input, the answer the model gets when a PreToolUse hook blocks it, and the
 * tool_response PostToolUse gets. Pure: no I/O.
 *
 *  - exec_command: "Bash" {command: cmd}; its response is what the command printed.
 *  - the apply_patch tool (custom_tool_call): "apply_patch" {command: the patch}; matched by
 *    the names apply_patch, Edit and Write; its response is the whole answer.
 *  - an MCP tool (function_call in namespace mcp__<server>): "mcp__<server>__<tool>" with the
 *    call's arguments; its response is {content, isError} of the server's result.
 * shell, shell_command and local_shell are no tools in 0.169 ("unsupported call"): not seen.
 */
#ifndef HOOKS_TOOL_H
#define HOOKS_TOOL_H

#include <jansson.h>

enum hooks_tool_kind { HOOKS_TOOL_SHELL, HOOKS_TOOL_PATCH, HOOKS_TOOL_MCP };

struct hooks_tool {
	enum hooks_tool_kind kind;
	char *name;    /* tool_name */
	json_t *input; /* tool_input */
	char *call_id;
	char *command; /* SHELL, PATCH: tool_input.command (borrowed from input) */
};

/* Read a Responses call item: 0 when the tool hooks see it (t filled), else -1. */
int hooks_tool_read(const json_t *call, struct hooks_tool *t);
void hooks_tool_clear(struct hooks_tool *t);
/* The output item answering a call a PreToolUse hook blocked, as upstream words it. */
json_t *hooks_tool_blocked(const struct hooks_tool *t, const char *reason);
/* PostToolUse's tool_response: from the output item, or (MCP) the server's result. */
json_t *hooks_tool_response(const struct hooks_tool *t, const json_t *output, const json_t *result);
/* A matcher of names only ([A-Za-z0-9_] and |) selects by exact name (or alias); 1, 0, or -1
 * for a matcher that is a regular expression instead. */
int hooks_tool_name_matches(const char *matcher, const char *name);

#endif
