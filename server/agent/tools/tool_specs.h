/*
 * The `tools` array of a model request: upstream's tool definitions with their descriptions and
 * parameter schemas (core tools/spec.rs, handlers/apply_patch.rs, handlers/plan.rs) — the words
 * the model was trained on, so they are kept as upstream writes them, odd spacing included.
 *
 * Tools: exec_command + write_stdin (the PTY shell of 0.169), shell (argv) and shell_command
 * (script), apply_patch as a JSON function {input} or as a freeform "custom" tool whose input
 * is constrained by upstream's lark grammar, update_plan, and request_user_input.
 *
 * Wires: Responses takes {"type":"function","name",...,"parameters"} and {"type":"custom",...};
 * Chat Completions takes only {"type":"function","function":{name,description,strict,
 * parameters}}, so there a freeform apply_patch is offered as the function form instead.
 */
#ifndef TOOL_SPECS_H
#define TOOL_SPECS_H

#include <jansson.h>

enum tool_spec {
	TOOL_SPEC_EXEC_COMMAND = 1u << 0,
	TOOL_SPEC_WRITE_STDIN = 1u << 1,
	TOOL_SPEC_SHELL = 1u << 2,
	TOOL_SPEC_SHELL_COMMAND = 1u << 3,
	TOOL_SPEC_APPLY_PATCH_FUNCTION = 1u << 4,
	TOOL_SPEC_APPLY_PATCH_FREEFORM = 1u << 5,
	TOOL_SPEC_UPDATE_PLAN = 1u << 6,
	TOOL_SPEC_REQUEST_USER_INPUT = 1u << 7,
	TOOL_SPEC_GET_GOAL = 1u << 8,
	TOOL_SPEC_CREATE_GOAL = 1u << 9,
	TOOL_SPEC_UPDATE_GOAL = 1u << 10,
	TOOL_SPEC_VIEW_IMAGE = 1u << 11, /* agent/tools/view_image.h */
	TOOL_SPEC_CLOCK = 1u << 12,	 /* the clock namespace: curr_time, sleep (tools/clock.h) */
};

/* The goal tools, offered together when the `goals` feature is on (api/goals/goal_tools.h). */
#define TOOL_SPECS_GOALS (TOOL_SPEC_GET_GOAL | TOOL_SPEC_CREATE_GOAL | TOOL_SPEC_UPDATE_GOAL)

/* What the turn loop offers when it is given no set: upstream's for an unknown model. */
#define TOOL_SPECS_DEFAULT (TOOL_SPEC_EXEC_COMMAND | TOOL_SPEC_WRITE_STDIN)

enum tool_wire { TOOL_WIRE_RESPONSES, TOOL_WIRE_CHAT };

/*
 * The set a turn offers, as upstream 0.169 chooses it (recorded: tests/fixtures/tools/): a model
 * unknown to its catalogue (a custom provider's "fallback metadata") gets exec_command and
 * write_stdin and request_user_input (in every collaboration mode: outside Plan mode a call is
 * refused) and view_image (0.169 offers it even with `[tools] view_image = false`); a
 * catalogue model gets apply_patch too (and in code mode, for the gpt-6 families, the clock:
 * turn.c adds TOOL_SPEC_CLOCK) (a code-mode turn nests them all in exec:
 * agent/codemode/codemode_tools.h); update_plan only
 * with `[tools.update_plan] enabled = true`; the goal tools are added by the caller when the
 * `goals` feature is on. Upstream's other tools (web_search, the multi-agent tools) are not
 * offered: nothing here runs them.
 */
unsigned tool_specs_select(int known_model, int update_plan);

/* The tools array for a set of tools (a mask of enum tool_spec). New reference. */
json_t *tool_specs_build(unsigned set, enum tool_wire wire);

/*
 * A set from a comma-separated list of names as a config would write it: exec_command,
 * write_stdin, shell, shell_command, apply_patch (freeform), apply_patch_function,
 * update_plan, request_user_input, get_goal, create_goal, update_goal, or "default". 0, or -EINVAL
 * with *cause naming the unknown entry.
 */
int tool_specs_parse(const char *names, unsigned *set, char **cause);

/*
 * Which offered tool a model call names: the tool's bit when `name` is offered in `set` (for
 * apply_patch, either form), 0 when it is not offered (the model is then told "unsupported
 * call"). `custom` is 1 for a custom_tool_call, which only the freeform apply_patch accepts.
 */
unsigned tool_specs_lookup(unsigned set, const char *name, int custom);

/* Upstream's lark grammar of the freeform apply_patch tool. */
const char *tool_specs_apply_patch_grammar(void);

#endif
