/*
 * Tool definitions (tool_specs.h). Schemas are built as upstream serializes its JsonSchema enum:
 * "type" first, properties in sorted order (a BTreeMap), then required, then
 * additionalProperties. The texts are upstream's, byte for byte.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tool_specs.h"
#include "protocol/xmalloc.h"

/* Twenty spaces: the indentation upstream's raw strings carry into two descriptions. */
#define TS_INDENT "                    "

static const char ts_lark[] =
	"start: begin_patch hunk+ end_patch\n"
	"begin_patch: \"*** Begin Patch\" LF\n"
	"end_patch: \"*** End Patch\" LF?\n"
	"\n"
	"hunk: add_hunk | delete_hunk | update_hunk\n"
	"add_hunk: \"*** Add File: \" filename LF add_line+\n"
	"delete_hunk: \"*** Delete File: \" filename LF\n"
	"update_hunk: \"*** Update File: \" filename LF change_move? change?\n"
	"\n"
	"filename: /(.+)/\n"
	"add_line: \"+\" /(.*)/ LF -> line\n"
	"\n"
	"change_move: \"*** Move to: \" filename LF\n"
	"change: (change_context | change_line)+ eof_line?\n"
	"change_context: (\"@@\" | \"@@ \" /(.+)/) LF\n"
	"change_line: (\"+\" | \"-\" | \" \") /(.*)/ LF\n"
	"eof_line: \"*** End of File\" LF\n"
	"\n"
	"%import common.LF\n";

static const char ts_apply_patch_description[] =
	"Use the `apply_patch` tool to edit files.\n"
	"Your patch language is a stripped\u2011down, file\u2011oriented diff format designed to be "
	"easy to parse and safe to apply. You can think of it as a high\u2011level envelope:\n"
	"\n"
	"*** Begin Patch\n"
	"[ one or more file sections ]\n"
	"*** End Patch\n"
	"\n"
	"Within that envelope, you get a sequence of file operations.\n"
	"You MUST include a header to specify the action you are taking.\n"
	"Each operation starts with one of three headers:\n"
	"\n"
	"*** Add File: <path> - create a new file. Every following line is a + line (the initial "
	"contents).\n"
	"*** Delete File: <path> - remove an existing file. Nothing follows.\n"
	"*** Update File: <path> - patch an existing file in place (optionally with a rename).\n"
	"\n"
	"May be immediately followed by *** Move to: <new path> if you want to rename the file.\n"
	"Then one or more \u201chunks\u201d, each introduced by @@ (optionally followed by a hunk "
	"header).\n"
	"Within a hunk each line starts with:\n"
	"\n"
	"For instructions on [context_before] and [context_after]:\n"
	"- By default, show 3 lines of code immediately above and 3 lines immediately below each "
	"change. If a change is within 3 lines of a previous change, do NOT duplicate the first "
	"change\u2019s [context_after] lines in the second change\u2019s [context_before] lines.\n"
	"- If 3 lines of context is insufficient to uniquely identify the snippet of code within "
	"the file, use the @@ operator to indicate the class or function to which the snippet "
	"belongs. For instance, we might have:\n"
	"@@ class BaseClass\n"
	"[3 lines of pre-context]\n"
	"- [old_code]\n"
	"+ [new_code]\n"
	"[3 lines of post-context]\n"
	"\n"
	"- If a code block is repeated so many times in a class or function such that even a "
	"single `@@` statement and 3 lines of context cannot uniquely identify the snippet of "
	"code, you can use multiple `@@` statements to jump to the right context. For instance:\n"
	"\n"
	"@@ class BaseClass\n"
	"@@ \t def method():\n"
	"[3 lines of pre-context]\n"
	"- [old_code]\n"
	"+ [new_code]\n"
	"[3 lines of post-context]\n"
	"\n"
	"The full grammar definition is below:\n"
	"Patch := Begin { FileOp } End\n"
	"Begin := \"*** Begin Patch\" NEWLINE\n"
	"End := \"*** End Patch\" NEWLINE\n"
	"FileOp := AddFile | DeleteFile | UpdateFile\n"
	"AddFile := \"*** Add File: \" path NEWLINE { \"+\" line NEWLINE }\n"
	"DeleteFile := \"*** Delete File: \" path NEWLINE\n"
	"UpdateFile := \"*** Update File: \" path NEWLINE [ MoveTo ] { Hunk }\n"
	"MoveTo := \"*** Move to: \" newPath NEWLINE\n"
	"Hunk := \"@@\" [ header ] NEWLINE { HunkLine } [ \"*** End of File\" NEWLINE ]\n"
	"HunkLine := (\" \" | \"-\" | \"+\") text NEWLINE\n"
	"\n"
	"A full patch can combine several operations:\n"
	"\n"
	"*** Begin Patch\n"
	"*** Add File: hello.txt\n"
	"+Hello world\n"
	"*** Update File: src/app.py\n"
	"*** Move to: src/main.py\n"
	"@@ def greet():\n"
	"-print(\"Hi\")\n"
	"+print(\"Hello, world!\")\n"
	"*** Delete File: obsolete.txt\n"
	"*** End Patch\n"
	"\n"
	"It is important to remember:\n"
	"\n"
	"- You must include a header with your intended action (Add/Delete/Update)\n"
	"- You must prefix new lines with `+` even when creating a new file\n"
	"- File references can only be relative, NEVER ABSOLUTE.\n";

/* Upstream's lark grammar. */
const char *
tool_specs_apply_patch_grammar(void)
{
	return ts_lark;
}

/* {"type":T} with an optional description. */
static json_t *
ts_scalar(const char *type, const char *description)
{
	json_t *o = json_object();

	json_object_set_new(o, "type", json_string(type));
	if (description != NULL)
		json_object_set_new(o, "description", json_string(description));
	return o;
}

/* {"type":"array","description":d,"items":items}, upstream's member order. */
static json_t *
ts_array(json_t *items, const char *description)
{
	json_t *o = json_object();

	json_object_set_new(o, "type", json_string("array"));
	if (description != NULL)
		json_object_set_new(o, "description", json_string(description));
	json_object_set_new(o, "items", items);
	return o;
}

/* {"type":"string","description":d,"enum":[values...]}. */
static json_t *
ts_enum(const char *description, const char *const *values)
{
	json_t *o = ts_scalar("string", description), *e = json_array();

	for (; *values != NULL; values++)
		json_array_append_new(e, json_string(*values));
	json_object_set_new(o, "enum", e);
	return o;
}

static int
ts_cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* {"type":"object","properties":<sorted>,"required":[...],"additionalProperties":false}. */
static json_t *
ts_object(json_t *props, const char *const *required)
{
	json_t *o = json_object(), *sorted = json_object(), *req = json_array();
	size_t n = json_object_size(props), i = 0;
	const char **keys = xcalloc(n + 1, sizeof(*keys)), *k;
	json_t *v;

	json_object_foreach(props, k, v) keys[i++] = k;
	qsort(keys, n, sizeof(*keys), ts_cmp_keys);
	for (i = 0; i < n; i++)
		json_object_set(sorted, keys[i], json_object_get(props, keys[i]));
	free(keys);
	json_decref(props);
	for (; *required != NULL; required++)
		json_array_append_new(req, json_string(*required));
	json_object_set_new(o, "type", json_string("object"));
	json_object_set_new(o, "properties", sorted);
	json_object_set_new(o, "required", req);
	json_object_set_new(o, "additionalProperties", json_false());
	return o;
}

/* sandbox_permissions, justification and prefix_rule (create_approval_parameters). */
static void
ts_approval_params(json_t *props)
{
	json_object_set_new(props, "sandbox_permissions",
		ts_scalar("string",
			"Sandbox permissions for the command. Set to "
			"\"require_escalated\" to request running without sandbox "
			"restrictions; defaults to \"use_default\"."));
	json_object_set_new(props, "justification",
		ts_scalar("string",
			"Only set if sandbox_permissions is \\\"require_escalated\\\". \n" TS_INDENT
			"Request approval from the user to run this command outside the sandbox. \n" TS_INDENT
			"Phrased as a simple question that summarizes the purpose of the \n" TS_INDENT
			"command as it relates to the task at hand - e.g. 'Do you want to \n" TS_INDENT
			"fetch and pull the latest version of this git branch?'"));
	json_object_set_new(props, "prefix_rule",
		ts_array(ts_scalar("string", NULL),
			"Only specify when sandbox_permissions is `require_escalated`. \n" TS_INDENT
			"Suggest a prefix command pattern that will allow you to fulfill similar "
			"requests from the user in the future.\n" TS_INDENT
			"Should be a short but reasonable prefix, e.g. [\\\"git\\\", \\\"pull\\\"] or "
			"[\\\"uv\\\", \\\"run\\\"] or [\\\"pytest\\\"]."));
}

/* The Responses form of a function tool; the caller rewraps it for Chat. */
static json_t *
ts_function(const char *name, const char *description, json_t *parameters)
{
	json_t *o = json_object();

	json_object_set_new(o, "type", json_string("function"));
	json_object_set_new(o, "name", json_string(name));
	json_object_set_new(o, "description", json_string(description));
	json_object_set_new(o, "strict", json_false());
	json_object_set_new(o, "parameters", parameters);
	return o;
}

/* exec_command as 0.169 words it (its approval parameters differ from the older shells'). */
static json_t *
ts_exec_command(void)
{
	static const char *const required[] = {"cmd", NULL};
	static const char *const perms[] = {"use_default", "require_escalated", NULL};
	json_t *p = json_object();

	json_object_set_new(p, "cmd", ts_scalar("string", "Shell command to execute."));
	json_object_set_new(p, "justification",
		ts_scalar("string",
			"User-facing approval question for `require_escalated`; omit otherwise."));
	json_object_set_new(p, "login",
		ts_scalar("boolean",
			"True runs the shell with -l/-i semantics; false disables them. Defaults to "
			"true."));
	json_object_set_new(p, "max_output_tokens",
		ts_scalar("number",
			"Output token budget. Defaults to 10000 tokens; larger requests may be capped "
			"by policy."));
	json_object_set_new(p, "prefix_rule",
		ts_array(ts_scalar("string", NULL),
			"Reusable approval prefix for `cmd`, only with `sandbox_permissions: "
			"\"require_escalated\"`; for example [\"git\", \"pull\"]."));
	json_object_set_new(p, "sandbox_permissions",
		ts_enum("Per-command sandbox override. Defaults to `use_default`; use "
			"`require_escalated` for unsandboxed execution.",
			perms));
	json_object_set_new(p, "shell",
		ts_scalar(
			"string", "Shell binary to launch. Defaults to the user's default shell."));
	json_object_set_new(p, "tty",
		ts_scalar("boolean",
			"True allocates a PTY for the command; false or omitted uses plain pipes."));
	json_object_set_new(p, "workdir",
		ts_scalar(
			"string", "Working directory for the command. Defaults to the turn cwd."));
	json_object_set_new(p, "yield_time_ms",
		ts_scalar("number",
			"Wait before yielding output. Defaults to 10000 ms; effective range is "
			"250-30000 ms."));
	return ts_function("exec_command",
		"Runs a command in a PTY, returning output or a session ID for ongoing interaction.",
		ts_object(p, required));
}

/* write_stdin as 0.169 words it. */
static json_t *
ts_write_stdin(void)
{
	static const char *const required[] = {"session_id", NULL};
	json_t *p = json_object();

	json_object_set_new(p, "chars",
		ts_scalar("string",
			"Bytes to write to stdin. Defaults to empty, which polls without writing."));
	json_object_set_new(p, "max_output_tokens",
		ts_scalar("number",
			"Output token budget. Defaults to 10000 tokens; larger requests may be capped "
			"by policy."));
	json_object_set_new(p, "session_id",
		ts_scalar("number", "Identifier of the running unified exec session."));
	json_object_set_new(p, "yield_time_ms",
		ts_scalar("number",
			"Wait before yielding output. Non-empty writes default to 250 ms and cap at "
			"30000 ms; empty polls wait 5000-300000 ms by default."));
	return ts_function("write_stdin",
		"Writes characters to an existing unified exec session and returns recent output.",
		ts_object(p, required));
}

/* shell with an argv (create_shell_tool). */
static json_t *
ts_shell(void)
{
	static const char *const required[] = {"command", NULL};
	json_t *p = json_object();

	json_object_set_new(
		p, "command", ts_array(ts_scalar("string", NULL), "The command to execute"));
	json_object_set_new(p, "workdir",
		ts_scalar("string", "The working directory to execute the command in"));
	json_object_set_new(p, "timeout_ms",
		ts_scalar("number", "The timeout for the command in milliseconds"));
	ts_approval_params(p);
	return ts_function("shell",
		"Runs a shell command and returns its output.\n- The arguments to `shell` will be "
		"passed to execvp(). Most terminal commands should be prefixed with [\"bash\", "
		"\"-lc\"].\n- Always set the `workdir` param when using the shell function. Do not "
		"use `cd` unless absolutely necessary.",
		ts_object(p, required));
}

/* shell_command with a script (create_shell_command_tool). */
static json_t *
ts_shell_command(void)
{
	static const char *const required[] = {"command", NULL};
	json_t *p = json_object();

	json_object_set_new(p, "command",
		ts_scalar("string", "The shell script to execute in the user's default shell"));
	json_object_set_new(p, "workdir",
		ts_scalar("string", "The working directory to execute the command in"));
	json_object_set_new(p, "login",
		ts_scalar("boolean",
			"Whether to run the shell with login shell semantics. Defaults "
			"to true."));
	json_object_set_new(p, "timeout_ms",
		ts_scalar("number", "The timeout for the command in milliseconds"));
	ts_approval_params(p);
	return ts_function("shell_command",
		"Runs a shell command and returns its output.\n- Always set the `workdir` param "
		"when using the shell_command function. Do not use `cd` unless absolutely "
		"necessary.",
		ts_object(p, required));
}

/* apply_patch as a JSON function {input} (create_apply_patch_json_tool). */
static json_t *
ts_apply_patch_function(void)
{
	static const char *const required[] = {"input", NULL};
	json_t *p = json_object();

	json_object_set_new(
		p, "input", ts_scalar("string", "The entire contents of the apply_patch command"));
	return ts_function("apply_patch", ts_apply_patch_description, ts_object(p, required));
}

/*
 * apply_patch as a freeform tool with the lark grammar, in the words 0.169 sends gpt-5.5
 * (tests/fixtures/tools/upstream/model_gpt_5_5.json: its one catalogue model without code mode).
 */
static json_t *
ts_apply_patch_freeform(void)
{
	json_t *o = json_object(), *format = json_object();

	json_object_set_new(format, "type", json_string("grammar"));
	json_object_set_new(format, "syntax", json_string("lark"));
	json_object_set_new(format, "definition", json_string(ts_lark));
	json_object_set_new(o, "type", json_string("custom"));
	json_object_set_new(o, "name", json_string("apply_patch"));
	json_object_set_new(o, "description",
		json_string("The `apply_patch` tool can be used to edit files. This is a FREEFORM "
			    "tool, so do not wrap the patch in JSON."));
	json_object_set_new(o, "format", format);
	return o;
}

/* update_plan as 0.169 words it. */
static json_t *
ts_update_plan(void)
{
	static const char *const item_required[] = {"step", "status", NULL};
	static const char *const required[] = {"plan", NULL};
	static const char *const statuses[] = {"pending", "in_progress", "completed", NULL};
	json_t *item = json_object(), *p = json_object();

	json_object_set_new(item, "status", ts_enum("Step status.", statuses));
	json_object_set_new(item, "step", ts_scalar("string", "Task step text."));
	json_object_set_new(p, "explanation",
		ts_scalar("string", "Optional explanation for this plan update."));
	json_object_set_new(
		p, "plan", ts_array(ts_object(item, item_required), "The list of steps"));
	return ts_function("update_plan",
		"Updates the task plan.\nProvide an optional explanation and a list of plan items, "
		"each with a step and status.\nAt most one step can be in_progress at a time.\n",
		ts_object(p, required));
}

/*
 * request_user_input (upstream's handlers/request_user_input.rs spec): offered in every mode;
 * a call outside Plan mode is answered "unavailable" (agent_user_input.c).
 */
static json_t *
ts_request_user_input(void)
{
	static const char *const opt_required[] = {"label", "description", NULL};
	static const char *const q_required[] = {"id", "header", "question", "options", NULL};
	static const char *const required[] = {"questions", NULL};
	json_t *opt = json_object(), *q = json_object(), *p = json_object();

	json_object_set_new(opt, "description",
		ts_scalar("string", "One short sentence explaining impact/tradeoff if selected."));
	json_object_set_new(opt, "label", ts_scalar("string", "User-facing label (1-5 words)."));
	json_object_set_new(q, "header",
		ts_scalar("string", "Short header label shown in the UI (12 or fewer chars)."));
	json_object_set_new(q, "id",
		ts_scalar("string", "Stable identifier for mapping answers (snake_case)."));
	json_object_set_new(q, "options",
		ts_array(ts_object(opt, opt_required),
			"Provide 2-3 mutually exclusive choices. Put the recommended option first "
			"and suffix its label with \"(Recommended)\". Do not include an \"Other\" "
			"option in this list; the client will add a free-form \"Other\" option "
			"automatically."));
	json_object_set_new(
		q, "question", ts_scalar("string", "Single-sentence prompt shown to the user."));
	json_object_set_new(p, "questions",
		ts_array(ts_object(q, q_required),
			"Questions to show the user. Prefer 1 and do not exceed 3"));
	return ts_function("request_user_input",
		"Request user input for one to three short questions and wait for the response. "
		"This tool is only available in Plan mode.",
		ts_object(p, required));
}

/* get_goal, create_goal and update_goal as 0.169 words them (its goal tools' specs). */
static json_t *
ts_get_goal(void)
{
	static const char *const none[] = {NULL};

	return ts_function("get_goal",
		"Get the current goal for this thread, including status, budgets, token and "
		"elapsed-time usage, and remaining token budget.",
		ts_object(json_object(), none));
}

static json_t *
ts_create_goal(void)
{
	static const char *const required[] = {"objective", NULL};
	json_t *p = json_object();

	json_object_set_new(p, "objective",
		ts_scalar("string",
			"Required. The concrete objective to start pursuing. This starts a new "
			"active goal when no goal exists or replaces the current goal when it is "
			"complete."));
	json_object_set_new(p, "token_budget",
		ts_scalar("integer",
			"Positive token budget for the new goal. Omit unless explicitly requested."));
	return ts_function("create_goal",
		"Create a goal only when explicitly requested by the user or system/developer "
		"instructions; do not infer goals from ordinary tasks.\nSet token_budget only when "
		"an explicit token budget is requested. Fails if an unfinished goal exists; use "
		"update_goal only for status.",
		ts_object(p, required));
}

static json_t *
ts_update_goal(void)
{
	static const char *const required[] = {"status", NULL};
	static const char *const statuses[] = {"complete", "blocked", "paused", NULL};
	json_t *p = json_object();

	json_object_set_new(p, "status",
		ts_enum("Required. `paused` requires an explicit user request. Set to `complete` "
			"only when the objective is achieved and no required work remains. Set to "
			"`blocked` only after the same blocking condition has recurred for at least "
			"three consecutive goal turns and the agent is at an impasse. After a "
			"previously blocked goal is resumed, the resumed run starts a fresh blocked "
			"audit.",
			statuses));
	return ts_function("update_goal",
		"Update the existing goal.\nSet status to `paused` only at the user's explicit "
		"request to pause this goal, never on your own initiative. Ask if unclear; a later "
		"resume revokes that request. Report the returned status and stop goal work. "
		"Budget limits take precedence over pausing.\nSet status to `complete` only when "
		"the objective has actually been achieved and no required work remains.\nSet "
		"status to `blocked` only when the same blocking condition has repeated for at "
		"least three consecutive goal turns, counting the original/user-triggered turn and "
		"any automatic continuations, and the agent cannot make meaningful progress "
		"without user input or an external-state change.\nIf the user resumes a goal that "
		"was previously marked `blocked`, treat the resumed run as a fresh blocked audit. "
		"If the same blocking condition then repeats for at least three consecutive "
		"resumed goal turns, set status to `blocked` again.\nOnce the blocked threshold "
		"is satisfied, do not keep reporting that you are still blocked while leaving the "
		"goal active; set status to `blocked`.\nDo not use `blocked` merely because the "
		"work is hard, slow, uncertain, incomplete, or would benefit from "
		"clarification.\nDo not mark a goal complete merely because its budget is nearly "
		"exhausted or because you are stopping work.\nYou cannot use this tool to resume, "
		"budget-limit, or usage-limit a goal; those status changes are controlled by the "
		"user or system.\nWhen marking a budgeted goal achieved with status `complete`, "
		"report the final token usage from the tool result to the user.",
		ts_object(p, required));
}

/* Chat Completions: {"type":"function","function":{name,description,strict,parameters}}. */
static json_t *
ts_for_chat(json_t *tool)
{
	json_t *o = json_object();

	json_object_del(tool, "type");
	json_object_set_new(o, "type", json_string("function"));
	json_object_set_new(o, "function", tool);
	return o;
}

/* Which tools a turn offers (tool_specs.h). */
unsigned
tool_specs_select(int known_model, int update_plan)
{
	unsigned set = TOOL_SPEC_EXEC_COMMAND | TOOL_SPEC_WRITE_STDIN |
		TOOL_SPEC_REQUEST_USER_INPUT | TOOL_SPEC_VIEW_IMAGE;

	if (known_model)
		set |= TOOL_SPEC_APPLY_PATCH_FREEFORM;
	if (update_plan)
		set |= TOOL_SPEC_UPDATE_PLAN;
	return set;
}

/*
 * The tools array: shells first, then update_plan, request_user_input, apply_patch, then the
 * goal tools, as upstream orders them.
 */
/* view_image, in 0.169's words. */
static json_t *
ts_view_image(void)
{
	return json_pack("{s:s, s:s, s:s, s:b, s:{s:s, s:{s:{s:s, s:s}}, s:[s], s:b}}", "type",
		"function", "name", "view_image", "description",
		"View a local image file from the filesystem when visual inspection is needed. Use "
		"this for images already available on disk.",
		"strict", 0, "parameters", "type", "object", "properties", "path", "type", "string",
		"description", "Local filesystem path to an image file.", "required", "path",
		"additionalProperties", 0);
}

/* The clock namespace of the gpt-6 families, in 0.169's words: curr_time is nested in exec,
 * sleep a direct tool beside it (agent/codemode/codemode_tools.c). */
static json_t *
ts_clock(void)
{
	return json_pack("{s:s, s:s, s:s, s:[{s:s, s:s, s:s, s:b, s:{s:s, s:{}, s:b}}, {s:s, s:s, "
			 "s:s, s:b, s:{s:s, s:{s:{s:s, s:s}}, s:[s], s:b}}]}",
		"type", "namespace", "name", "clock", "description",
		"Tools for reading and waiting on time.", "tools", "type", "function", "name",
		"curr_time", "description", "Return the current time in UTC.", "strict", 0,
		"parameters", "type", "object", "properties", "additionalProperties", 0, "type",
		"function", "name", "sleep", "description",
		"Pause execution for a specified duration. The sleep ends early when new input "
		"arrives for the active turn. Returns the elapsed wall-clock time.",
		"strict", 0, "parameters", "type", "object", "properties", "duration_ms", "type",
		"number", "description",
		"How long to sleep in milliseconds. Must be between 1 and 43200000.", "required",
		"duration_ms", "additionalProperties", 0);
}

json_t *
tool_specs_build(unsigned set, enum tool_wire wire)
{
	json_t *arr = json_array(), *t;
	static const struct {
		unsigned bit;
		json_t *(*make)(void);
	} order[] = {
		{TOOL_SPEC_EXEC_COMMAND, ts_exec_command},
		{TOOL_SPEC_WRITE_STDIN, ts_write_stdin},
		{TOOL_SPEC_SHELL, ts_shell},
		{TOOL_SPEC_SHELL_COMMAND, ts_shell_command},
		{TOOL_SPEC_UPDATE_PLAN, ts_update_plan},
		{TOOL_SPEC_REQUEST_USER_INPUT, ts_request_user_input},
		{TOOL_SPEC_APPLY_PATCH_FREEFORM, ts_apply_patch_freeform},
		{TOOL_SPEC_APPLY_PATCH_FUNCTION, ts_apply_patch_function},
		{TOOL_SPEC_VIEW_IMAGE, ts_view_image},
		{TOOL_SPEC_CLOCK, ts_clock},
		{TOOL_SPEC_GET_GOAL, ts_get_goal},
		{TOOL_SPEC_CREATE_GOAL, ts_create_goal},
		{TOOL_SPEC_UPDATE_GOAL, ts_update_goal},
	};

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (!(set & order[i].bit))
			continue;
		/* one apply_patch only; Chat cannot take a freeform tool */
		if (order[i].bit == TOOL_SPEC_APPLY_PATCH_FUNCTION &&
			(set & TOOL_SPEC_APPLY_PATCH_FREEFORM))
			continue;
		if ((order[i].bit == TOOL_SPEC_VIEW_IMAGE || order[i].bit == TOOL_SPEC_CLOCK) &&
			wire == TOOL_WIRE_CHAT)
			continue; /* a Chat tool message carries no image; Chat has no namespaces */
		if (order[i].bit == TOOL_SPEC_APPLY_PATCH_FREEFORM && wire == TOOL_WIRE_CHAT)
			t = ts_apply_patch_function();
		else
			t = order[i].make();
		json_array_append_new(arr, wire == TOOL_WIRE_CHAT ? ts_for_chat(t) : t);
	}
	return arr;
}

static const struct {
	const char *name;
	unsigned bits;
} ts_names[] = {
	{"exec_command", TOOL_SPEC_EXEC_COMMAND},
	{"write_stdin", TOOL_SPEC_WRITE_STDIN},
	{"shell", TOOL_SPEC_SHELL},
	{"shell_command", TOOL_SPEC_SHELL_COMMAND},
	{"apply_patch", TOOL_SPEC_APPLY_PATCH_FREEFORM},
	{"apply_patch_function", TOOL_SPEC_APPLY_PATCH_FUNCTION},
	{"update_plan", TOOL_SPEC_UPDATE_PLAN},
	{"request_user_input", TOOL_SPEC_REQUEST_USER_INPUT},
	{"view_image", TOOL_SPEC_VIEW_IMAGE},
	{"get_goal", TOOL_SPEC_GET_GOAL},
	{"create_goal", TOOL_SPEC_CREATE_GOAL},
	{"update_goal", TOOL_SPEC_UPDATE_GOAL},
	{"default", TOOL_SPECS_DEFAULT},
};

/* A comma-separated list of names. */
int
tool_specs_parse(const char *names, unsigned *set, char **cause)
{
	const char *s = names;

	*set = 0;
	while (*s) {
		size_t n = strcspn(s, ","), i;

		while (n > 0 && *s == ' ')
			s++, n--;
		for (i = 0; i < sizeof(ts_names) / sizeof(ts_names[0]); i++)
			if (strlen(ts_names[i].name) == n && strncmp(s, ts_names[i].name, n) == 0)
				break;
		if (n > 0 && i == sizeof(ts_names) / sizeof(ts_names[0])) {
			if (cause != NULL)
				*cause = xasprintf("unknown tool \"%.*s\"", (int)n, s);
			return -EINVAL;
		}
		if (n > 0)
			*set |= ts_names[i].bits;
		s += n + (s[n] == ',');
	}
	return 0;
}

/* The offered tool a call names, or 0. */
unsigned
tool_specs_lookup(unsigned set, const char *name, int custom)
{
	unsigned bit = 0;

	if (strcmp(name, "apply_patch") == 0) {
		/* the freeform tool answers custom calls; Chat turns it into a function */
		if (custom)
			return set & TOOL_SPEC_APPLY_PATCH_FREEFORM;
		return set & (TOOL_SPEC_APPLY_PATCH_FUNCTION | TOOL_SPEC_APPLY_PATCH_FREEFORM);
	}
	if (custom)
		return 0;
	/* apply_patch_function and default are config names, not tool names */
	for (size_t i = 0; i < sizeof(ts_names) / sizeof(ts_names[0]); i++)
		if (strcmp(ts_names[i].name, name) == 0 &&
			strcmp(name, "apply_patch_function") != 0 && strcmp(name, "default") != 0)
			bit = ts_names[i].bits;
	return set & bit;
}
