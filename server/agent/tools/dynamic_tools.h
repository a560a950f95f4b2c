/*
 * Dynamic tools (thread/start.dynamicTools, experimental): tools the client defines and runs.
 * Pure conversions, as upstream 0.169 does them (recorded against a mock model):
 *  - a DynamicToolSpec becomes a model tool: a function {type, name, description, strict:false,
 *    parameters: inputSchema}, a namespace {type:"namespace", name, description, tools:[...]};
 *  - the client's answer (DynamicToolCallResponse) is checked, and its contentItems become the
 *    function_call_output's `output`: one inputText alone is a plain string, anything else an
 *    array of input_text / input_image (detail "high") parts.
 */
#ifndef DYNAMIC_TOOLS_H
#define DYNAMIC_TOOLS_H

#include <jansson.h>

#include "tool_specs.h"

/* Upstream's texts for what the model hears when the client did not answer properly. */
#define DYNAMIC_TOOLS_FAILED	"dynamic tool request failed"
#define DYNAMIC_TOOLS_INVALID	"dynamic tool response was invalid"
#define DYNAMIC_TOOLS_CANCELLED "dynamic tool call was cancelled before receiving a response"

/* Append the model tools of specs (DynamicToolSpec[], borrowed) to tools. */
void dynamic_tools_append(json_t *tools, const json_t *specs, enum tool_wire wire);
/*
 * Whether a call of the model names a dynamic tool: `name` in namespace `ns` (NULL: none).
 * The function spec (borrowed), or NULL.
 */
const json_t *dynamic_tools_find(const json_t *specs, const char *ns, const char *name);
/*
 * Check a DynamicToolCallResponse: 0 with *items (new reference, the contentItems) and
 * *success, or -1 when it is not one.
 */
int dynamic_tools_answer(const json_t *result, json_t **items, int *success);
/* The function_call_output's output for contentItems (new reference). */
json_t *dynamic_tools_output(const json_t *items);

#endif
