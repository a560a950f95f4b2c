/*
 * Tool definitions (server/agent/tools/tool_specs.c): the sets per model family and config and
 * their order, exec_command, write_stdin and update_plan serialized byte for byte as upstream
 * 0.169 sent them (tests/fixtures/tools/upstream/), the freeform apply_patch with upstream's lark
 * grammar, the Chat wrapping, and the name parsing / lookup used to answer unsupported calls.
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

/* The sets upstream 0.169 offers: per model family, and update_plan only when configured. */
static void
test_default_set(void **state)
{
	unsigned all = tool_specs_select(1, 1);
	json_t *arr = tool_specs_build(TOOL_SPECS_DEFAULT, TOOL_WIRE_RESPONSES), *ap;
	char names[256];

	names_of(arr, names, sizeof(names));
	assert_string_equal(names, "exec_command,write_stdin");
	json_decref(arr);
	/* request_user_input is offered in every mode (refused outside Plan mode), view_image to
	 * every model */
	assert_int_equal(tool_specs_select(0, 0),
		TOOL_SPECS_DEFAULT | TOOL_SPEC_REQUEST_USER_INPUT | TOOL_SPEC_VIEW_IMAGE);
	assert_int_equal(tool_specs_select(0, 1),
		TOOL_SPECS_DEFAULT | TOOL_SPEC_REQUEST_USER_INPUT | TOOL_SPEC_UPDATE_PLAN |
			TOOL_SPEC_VIEW_IMAGE);
	assert_int_equal(tool_specs_select(1, 0),
		TOOL_SPECS_DEFAULT | TOOL_SPEC_REQUEST_USER_INPUT | TOOL_SPEC_APPLY_PATCH_FREEFORM |
			TOOL_SPEC_VIEW_IMAGE);
	arr = tool_specs_build(all, TOOL_WIRE_RESPONSES);
	names_of(arr, names, sizeof(names));
	assert_string_equal(names,
		"exec_command,write_stdin,update_plan,request_user_input,apply_patch,view_image");
	ap = json_array_get(arr, 4);
	assert_string_equal(json_string_value(json_object_get(ap, "type")), "custom");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(ap, "format"), "syntax")),
		"lark");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(ap, "format"), "definition")),
		tool_specs_apply_patch_grammar());
	assert_int_equal(strlen(tool_specs_apply_patch_grammar()), 578); /* gpt-5.5's, recorded */
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

/*
 * exec_command, write_stdin, update_plan and request_user_input serialized byte for byte
 * (member order included)
 * as upstream 0.169 sent them (tests/fixtures/tools/upstream/, recorded by record.py).
 */
static void
test_upstream_bytes(void **state)
{
	static const char *const names[] = {
		"exec_command", "write_stdin", "update_plan", "request_user_input", NULL};
	json_t *rec = json_load_file(
		"tests/fixtures/tools/upstream/custom_model_update_plan.json", 0, NULL);
	json_t *arr = tool_specs_build(tool_specs_select(0, 1), TOOL_WIRE_RESPONSES), *t;
	size_t i, k;

	assert_non_null(rec);
	for (k = 0; names[k] != NULL; k++) {
		char *ours = json_dumps(json_array_get(arr, k), JSON_COMPACT), *theirs = NULL;

		json_array_foreach(json_object_get(rec, "tools"), i, t)
		{
			const char *n = json_string_value(json_object_get(t, "name"));

			if (n != NULL && strcmp(n, names[k]) == 0)
				theirs = json_dumps(t, JSON_COMPACT);
		}
		assert_non_null(theirs);
		assert_string_equal(ours, theirs);
		free(ours);
		free(theirs);
	}
	json_decref(arr);
	json_decref(rec);
}

/* Chat: every tool a function under "function"; the freeform apply_patch becomes {input}. */
static void
test_chat(void **state)
{
	json_t *arr = tool_specs_build(tool_specs_select(1, 1), TOOL_WIRE_CHAT), *t;
	size_t i;
	char names[256];

	names_of(arr, names, sizeof(names));
	/* not view_image: a Chat tool message carries no image */
	assert_string_equal(
		names, "exec_command,write_stdin,update_plan,request_user_input,apply_patch");
	json_array_foreach(arr, i, t)
	{
		json_t *fn = json_object_get(t, "function");

		assert_string_equal(json_string_value(json_object_get(t, "type")), "function");
		assert_non_null(fn);
		assert_null(json_object_get(fn, "type"));
		assert_non_null(json_object_get(fn, "parameters"));
	}
	t = json_object_get(json_array_get(arr, 4), "function");
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
	assert_int_equal(tool_specs_lookup(TOOL_SPECS_DEFAULT, "update_plan", 0), 0);
	assert_int_equal(tool_specs_lookup(tool_specs_select(1, 1), "update_plan", 0),
		TOOL_SPEC_UPDATE_PLAN);
	assert_int_equal(tool_specs_lookup(TOOL_SPECS_DEFAULT, "shell", 0), 0);
	assert_int_equal(tool_specs_lookup(TOOL_SPECS_DEFAULT, "apply_patch", 1), 0);
	assert_int_equal(tool_specs_lookup(tool_specs_select(1, 0), "apply_patch", 1),
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
		cmocka_unit_test(test_upstream_bytes),
		cmocka_unit_test(test_chat),
		cmocka_unit_test(test_parse_lookup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
