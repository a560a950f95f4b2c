/*
 * What an MCP tool call gives back, as upstream 0.169 shapes it (recorded against a mock model,
 * tests/fixtures/mcp/upstream/):
 *  - to the model, a function_call_output whose output is, with structuredContent, the text
 *    "Wall time: W seconds\nOutput:\n<structuredContent as compact JSON>"; else content parts:
 *    input_text "Wall time: W seconds\nOutput:", then each text as input_text and each image
 *    as input_image {image_url: data URL, detail "high"} (other blocks as their JSON text); a
 *    failed call has its error message as the one text. Text beyond MCP_OUTPUT_MODEL_BYTES is
 *    cut in the middle ("…N tokens truncated…") as upstream cuts a big result;
 *  - in the mcpToolCall item, result {content, structuredContent, _meta} with a text over
 *    MCP_OUTPUT_ITEM_BYTES replaced by "Truncated tool output:\n" and its head.
 */
#ifndef MCP_OUTPUT_H
#define MCP_OUTPUT_H

#include <jansson.h>

struct timespec;

#define MCP_OUTPUT_MODEL_TOKENS 2991	/* text kept for the model: 5982 head + 5982 tail bytes */
#define MCP_OUTPUT_ITEM_BYTES	1048516 /* a text kept in the item (recorded: 1 MiB - 60) */
#define MCP_OUTPUT_TRUNCATED	"Truncated tool output:\n"

/* Seconds since start (CLOCK_MONOTONIC): the wall time the model is told. */
double mcp_output_since(const struct timespec *start);

#define MCP_OUTPUT_NEVER "MCP tool call requires approval, but approval policy is never"
/* A sentinel (compared by address): the user is asked (mcp/mcp_elicit.c). */
extern const char mcp_output_ask[];
#define MCP_OUTPUT_ASK mcp_output_ask

/*
 * Whether a tool (an MCP Tool) may run without asking, as upstream decides: annotated
 * readOnlyHint (unless its server's config says `tools.<tool>.approval_mode = "prompt"`), or
 * configured "approve": NULL. Else it needs an approval: under the approval policy "never"
 * upstream's failure (static text); otherwise MCP_OUTPUT_ASK: the user approves it first
 * (mcpServer/elicitation/request, mcp/mcp_elicit.c).
 */
const char *mcp_output_approval(const json_t *cfg, const json_t *tool, const json_t *policy);
/* A started mcpToolCall item (new reference), as upstream's (arguments borrowed). */
json_t *mcp_output_item(const char *id, const char *server, const json_t *tool, const json_t *args);
/* Complete a started item (its result or error, status and durationMs). */
void mcp_output_complete(json_t *item, const json_t *result, const char *error, long long ms);
/* A call's error framed as upstream's (heap), or NULL for one that stays as it is. */
char *mcp_output_error(const json_t *item, const char *error);
/* item/mcpToolCall/progress's params (new reference): the message, else "progress/total". */
json_t *mcp_output_progress(
	const char *item_id, double progress, const double *total, const char *message);
/* The function_call_output's output (new reference): result (CallToolResult) or error. */
json_t *mcp_output_model(const json_t *result, const char *error, double wall_s);
/* The item's result (new reference) from a CallToolResult. */
json_t *mcp_output_item_result(const json_t *result);

#endif
