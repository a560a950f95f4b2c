/*
 * Code mode's pure texts (no process, no agent): the `// @exec: {...}` pragma of an exec call,
 * the output items the model gets back for a cell (upstream 0.169's words: "Script completed",
 * "Script failed", "Script running with cell ID N", "Script terminated"), and a nested
 * exec_command's answer as the structured object its output schema promises.
 */
#ifndef CODEMODE_CELL_H
#define CODEMODE_CELL_H

#include <stddef.h>

#include <jansson.h>

#define CODEMODE_YIELD_MS   30000 /* yield_time_ms without a pragma (upstream's default) */
#define CODEMODE_MAX_TOKENS 10000 /* max_output_tokens without a pragma */

/* What the first line's pragma asks. */
struct codemode_pragma {
	long long yield_ms;
	size_t max_tokens;
};

/*
 * Read the optional pragma line; *code points at the JavaScript after it (into input). 0, or -1
 * with the model's error text in *cause (heap).
 */
int codemode_pragma_parse(
	const char *input, struct codemode_pragma *p, const char **code, char **cause);

/* How a cell's answer begins. */
enum codemode_state {
	CODEMODE_COMPLETED,
	CODEMODE_FAILED,
	CODEMODE_RUNNING,
	CODEMODE_TERMINATED,
};

/*
 * The output of one answer: the header text, then items (input_text / input_image objects,
 * borrowed), with their texts cut together to max_tokens as upstream cuts tool output, then
 * "Script error:\n<error>" when error is not NULL. A new array.
 */
json_t *codemode_output(enum codemode_state st, const char *cell_id, double wall_s,
	const json_t *items, size_t max_tokens, const char *error);

/*
 * A nested tool's text answer as the value JavaScript gets: exec_command's and write_stdin's
 * unified-exec text as {chunk_id, wall_time_seconds, exit_code | session_id,
 * original_token_count, output}, apply_patch's as {}, a goal tool's JSON as the object,
 * anything else as the string. New ref.
 */
json_t *codemode_tool_value(const char *tool, const char *text);
/* Whether tool is a goal tool: its refusals (plain text) reject, its answers are objects. */
int codemode_tool_is_goal(const char *tool);

#endif
