/*
 * Which tools a code-mode turn offers, and how (upstream 0.169's "code mode only" tool mode,
 * recorded in tests/fixtures/tools/upstream/): the request has no `tools`; its first input
 * item is {"type":"additional_tools","role":"developer","tools":[{"type":"namespace","name":
 * "functions","description":"","tools":[exec, wait, request_user_input]}]}. `exec` is a
 * freeform tool whose description is upstream's text followed by one "### `name`" section per
 * nested tool (its description and its TypeScript declaration, codemode_ts.h); every tool the
 * turn would otherwise offer directly is nested there, request_user_input excepted, but MCP
 * servers' tools: those are "deferred" (reachable from exec, not described), and the model is
 * told their namespaces in a developer text instead (recorded: upstream 0.169 with an MCP
 * server, tests/fixtures/codemode/record_mcp.py).
 */
#ifndef CODEMODE_TOOLS_H
#define CODEMODE_TOOLS_H

#include <jansson.h>

/*
 * Whether a turn of `model` runs in code mode: upstream's catalogue models whose tool_mode is
 * "code_mode_only" (every 0.169 catalogue model but gpt-5.5) do; `feature` (the config's
 * [features] code_mode: 1 true, 0 false, -1 unset) overrides that for any model.
 */
int codemode_model(const char *model, int feature);

/* Whether a code-mode turn of `model` gets the clock namespace (tools/clock.h). */
int codemode_clock_model(const char *model);

/*
 * The additional_tools item (new reference) for the tools a turn would offer directly
 * (Responses wire: tool_specs_build, then dynamic tools, then MCP namespaces; borrowed).
 */
json_t *codemode_tools_item(const json_t *tools);

/*
 * The developer text naming the deferred (MCP) namespaces among tools (heap), or NULL when
 * there are none: "<tools>\nDeferred tool namespaces:\n- mcp__srv: <first line of its
 * instructions, at most 250 characters>\n</tools>", names sorted, XML-escaped.
 */
char *codemode_tools_deferred(const json_t *tools);

/*
 * Every tool a cell may call (new reference): [{name (its name on `tools`), description,
 * tool (the raw name), ns (its namespace, absent for a plain tool)}], MCP servers' deferred
 * tools included, request_user_input not.
 */
json_t *codemode_tools_nested(const json_t *tools);

/* The name nested tool `name` of namespace `ns` (NULL: none) has in exec (heap). */
char *codemode_tools_nested_name(const char *ns, const char *name);

#endif
