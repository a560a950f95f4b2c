/*
 * Tool definitions (server/agent/tools/tool_specs.c): the default set and its order, exec_command's
 * schema serialized exactly (sorted properties, upstream's description texts, the raw-string
 * backslashes of `justification`), the freeform apply_patch with upstream's lark grammar, the
 * Chat wrapping, update_plan, and the name parsing / lookup used to answer unsupported calls.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/tools/tool_specs.h"

/* The names of a tools array, comma-joined (Responses or Chat form). */
static void
names_of(json_t *arr, char *out, size_t n)
{
	size_t i;
	json_t *t;

	out[0] = '\0';
	json_array_foreach(arr, i, t)
	{
		json_t *fn = json_object_get(t, "function");
		const char *name = json_string_value(json_object_get(fn ? fn : t, "name"));

		if (i > 0)
			strncat(out, ",", n - strlen(out) - 1);
		strncat(out, name, n - strlen(out) - 1);
	}
}

/* The default set: exec_command, write_stdin, update_plan, freeform apply_patch. */
static void
test_default_set(void **state)
{
	json_t *arr = tool_specs_build(TOOL_SPECS_DEFAULT, TOOL_WIRE_RESPONSES), *ap;
	char names[256];

	names_of(arr, names, sizeof(names));
	assert_string_equal(names, "exec_command,write_stdin,update_plan,apply_patch");
	ap = json_array_get(arr, 3);
	assert_string_equal(json_string_value(json_object_get(ap, "type")), "custom");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(ap, "format"), "syntax")),
		"lark");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(ap, "format"), "definition")),
		tool_specs_apply_patch_grammar());
	assert_int_equal(strlen(tool_specs_apply_patch_grammar()), 626);
	assert_non_null(strstr(tool_specs_apply_patch_grammar(),
		"change_context: (\"@@\" | \"@@ \" /(.+)/) LF\n"));
	json_decref(arr);

	arr = tool_specs_build(TOOL_SPEC_SHELL | TOOL_SPEC_SHELL_COMMAND |
			TOOL_SPEC_APPLY_PATCH_FUNCTION | TOOL_SPEC_UPDATE_PLAN,
		TOOL_WIRE_RESPONSES);
	names_of(arr, names, sizeof(names));
	assert_string_equal(names, "shell,shell_command,update_plan,apply_patch");
	json_decref(arr);
}

/* exec_command serialized exactly as upstream sends it. */
static void
test_exec_command_schema(void **state)
{
	json_t *arr = tool_specs_build(TOOL_SPEC_EXEC_COMMAND, TOOL_WIRE_RESPONSES);
	char *s = json_dumps(json_array_get(arr, 0), JSON_COMPACT);

	assert_string_equal(s,
		"{\"type\":\"function\",\"name\":\"exec_command\",\"description\":\"Runs a command in "
		"a PTY, returning output or a session ID for ongoing interaction.\",\"strict\":false,"
		"\"parameters\":{\"type\":\"object\",\"properties\":{\"cmd\":{\"type\":\"string\","
		"\"description\":\"Shell command to execute.\"},\"justification\":{\"type\":"
		"\"string\",\"description\":\"Only set if sandbox_permissions is "
		"\\\\\\\"require_escalated\\\\\\\". \\n                    Request approval from the "
		"user to run this command outside the sandbox. \\n                    Phrased as a "
		"simple question that summarizes the purpose of the \\n                    command "
		"as it relates to the task at hand - e.g. 'Do you want to \\n                    "
		"fetch and pull the latest version of this git branch?'\"},\"login\":{\"type\":"
		"\"boolean\",\"description\":\"Whether to run the shell with -l/-i semantics. "
		"Defaults to true.\"},\"max_output_tokens\":{\"type\":\"number\",\"description\":"
		"\"Maximum number of tokens to return. Excess output will be truncated.\"},"
		"\"prefix_rule\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":"
		"\"Only specify when sandbox_permissions is `require_escalated`. \\n                 "
		"   Suggest a prefix command pattern that will allow you to fulfill similar "
		"requests from the user in the future.\\n                    Should be a short but "
		"reasonable prefix, e.g. [\\\\\\\"git\\\\\\\", \\\\\\\"pull\\\\\\\"] or "
		"[\\\\\\\"uv\\\\\\\", \\\\\\\"run\\\\\\\"] or [\\\\\\\"pytest\\\\\\\"].\"},"
		"\"sandbox_permissions\":{\"type\":\"string\",\"description\":\"Sandbox permissions "
		"for the command. Set to \\\"require_escalated\\\" to request running without "
		"sandbox restrictions; defaults to \\\"use_default\\\".\"},\"shell\":{\"type\":"
		"\"string\",\"description\":\"Shell binary to launch. Defaults to the user's "
		"default shell.\"},\"tty\":{\"type\":\"boolean\",\"description\":\"Whether to "
		"allocate a TTY for the command. Defaults to false (plain pipes); set to true to "
		"open a PTY and access TTY process.\"},\"workdir\":{\"type\":\"string\","
		"\"description\":\"Optional working directory to run the command in; defaults to "
		"the turn cwd.\"},\"yield_time_ms\":{\"type\":\"number\",\"description\":\"How long "
		"to wait (in milliseconds) for output before yielding.\"}},\"required\":[\"cmd\"],"
		"\"additionalProperties\":false}}");
	free(s);
	json_decref(arr);
}

/* Chat: every tool a function under "function"; the freeform apply_patch becomes {input}. */
static void
test_chat(void **state)
{
	json_t *arr = tool_specs_build(TOOL_SPECS_DEFAULT, TOOL_WIRE_CHAT), *t;
	size_t i;
	char names[256];

	names_of(arr, names, sizeof(names));
	assert_string_equal(names, "exec_command,write_stdin,update_plan,apply_patch");
	json_array_foreach(arr, i, t)
	{
		json_t *fn = json_object_get(t, "function");

		assert_string_equal(json_string_value(json_object_get(t, "type")), "function");
		assert_non_null(fn);
		assert_null(json_object_get(fn, "type"));
		assert_non_null(json_object_get(fn, "parameters"));
	}
	t = json_object_get(json_array_get(arr, 3), "function");
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(
				json_object_get(json_object_get(t, "parameters"), "properties"),
				"input"),
			"type")),
		"string");
	assert_non_null(strstr(json_string_value(json_object_get(t, "description")),
		"a stripped\xe2\x80\x91"
		"down, file\xe2\x80\x91oriented diff format"));
	json_decref(arr);
}

/* update_plan's schema. */
static void
test_update_plan(void **state)
{
	json_t *arr = tool_specs_build(TOOL_SPEC_UPDATE_PLAN, TOOL_WIRE_RESPONSES);
	char *s = json_dumps(json_object_get(json_array_get(arr, 0), "parameters"), JSON_COMPACT);

	assert_string_equal(s,
		"{\"type\":\"object\",\"properties\":{\"explanation\":{\"type\":\"string\"},\"plan\":"
		"{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"status\":{"
		"\"type\":\"string\",\"description\":\"One of: pending, in_progress, completed\"},"
		"\"step\":{\"type\":\"string\"}},\"required\":[\"step\",\"status\"],"
		"\"additionalProperties\":false},\"description\":\"The list of steps\"}},"
		"\"required\":[\"plan\"],\"additionalProperties\":false}");
	free(s);
	json_decref(arr);
}

/* Config names and call lookup. */
static void
test_parse_lookup(void **state)
{
	unsigned set;
	char *cause = NULL;

	assert_int_equal(tool_specs_parse("default", &set, NULL), 0);
	assert_int_equal(set, TOOL_SPECS_DEFAULT);
	assert_int_equal(
		tool_specs_parse("shell, shell_command,apply_patch_function", &set, NULL), 0);
	assert_int_equal(
		set, TOOL_SPEC_SHELL | TOOL_SPEC_SHELL_COMMAND | TOOL_SPEC_APPLY_PATCH_FUNCTION);
	assert_int_equal(tool_specs_parse("exec_command,bogus", &set, &cause), -EINVAL);
	assert_string_equal(cause, "unknown tool \"bogus\"");
	free(cause);

	assert_int_equal(
		tool_specs_lookup(TOOL_SPECS_DEFAULT, "exec_command", 0), TOOL_SPEC_EXEC_COMMAND);
	assert_int_equal(
		tool_specs_lookup(TOOL_SPECS_DEFAULT, "update_plan", 0), TOOL_SPEC_UPDATE_PLAN);
	assert_int_equal(tool_specs_lookup(TOOL_SPECS_DEFAULT, "shell", 0), 0);
	assert_int_equal(tool_specs_lookup(TOOL_SPECS_DEFAULT, "apply_patch", 1),
		TOOL_SPEC_APPLY_PATCH_FREEFORM);
	assert_int_equal(tool_specs_lookup(TOOL_SPEC_APPLY_PATCH_FUNCTION, "apply_patch", 1), 0);
	assert_int_equal(tool_specs_lookup(TOOL_SPEC_APPLY_PATCH_FUNCTION, "apply_patch", 0),
		TOOL_SPEC_APPLY_PATCH_FUNCTION);
	assert_int_equal(tool_specs_lookup(TOOL_SPECS_DEFAULT, "exec_command", 1), 0);
	assert_int_equal(tool_specs_lookup(~0u, "default", 0), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_set),
		cmocka_unit_test(test_exec_command_schema),
		cmocka_unit_test(test_chat),
		cmocka_unit_test(test_update_plan),
		cmocka_unit_test(test_parse_lookup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
