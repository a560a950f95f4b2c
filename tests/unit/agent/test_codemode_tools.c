/*
 * The code-mode tool list (agent/codemode/codemode_tools.h) against upstream 0.169's, as its
 * requests carried it for every catalogue model (tests/fixtures/tools/upstream/, model_*.json, the
 * additional_tools item, recorded by record.py): from the tools we offer a catalogue model,
 * our item must be upstream's byte for byte once what we do not run is taken out of
 * upstream's (the collaboration namespace, request_user_input_async, and in exec's
 * description the sections of the MCP resource tools, which we only offer with MCP servers):
 * the same texts, declarations and order; the clock namespace (gpt-6 families) byte for byte too.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/codemode/codemode_tools.h"
#include "agent/codemode/codemode_ts.h"
#include "agent/tools/tool_specs.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define FIXTURES "tests/fixtures/tools/upstream/"

/* Nested tools (and namespaces) upstream describes in exec that we do not offer there. */
static const char *const not_nested[] = {
	"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource", NULL};

static int
cm_not_nested(const char *name, size_t len)
{
	for (size_t i = 0; not_nested[i] != NULL; i++)
		if (strlen(not_nested[i]) == len && strncmp(not_nested[i], name, len) == 0)
			return 1;
	return 0;
}

/* The next section start ("\n\n### `" or "\n\n## ") at or after p, or the end. */
static const char *
cm_next(const char *p)
{
	const char *a = strstr(p, "\n\n### `"), *b = strstr(p, "\n\n## ");

	if (a == NULL)
		return b != NULL ? b : p + strlen(p);
	return b != NULL && b < a ? b : a;
}

/* Upstream's exec description without the sections of tools we do not nest (heap). */
static char *
cm_strip(const char *desc)
{
	struct buf b;
	const char *p = cm_next(desc), *end, *name;
	size_t len;

	buf_init(&b, 1u << 24);
	buf_add(&b, desc, (size_t)(p - desc));
	while (*p != '\0') {
		end = cm_next(p + 2);
		name = p[4] == '#' ? p + 7 : p + 5; /* "### `name`" or "## name" */
		len = strcspn(name, p[4] == '#' ? "`" : "\n");
		if (!cm_not_nested(name, len))
			buf_add(&b, p, (size_t)(end - p));
		p = end;
	}
	return buf_steal(&b, NULL);
}

/* Upstream's item with what we do not run taken out (new reference). */
static json_t *
cm_expected(const json_t *rec)
{
	json_t *item = json_deep_copy(json_array_get(json_object_get(rec, "additional_tools"), 0));
	json_t *nss = json_object_get(item, "tools"), *fns, *exec;
	char *desc;
	size_t i;

	for (i = json_array_size(nss); i-- > 1;) /* collaboration (clock is ours too) */
		if (strcmp(json_string_value(json_object_get(json_array_get(nss, i), "name")),
			    "clock") != 0)
			json_array_remove(nss, i);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(nss, 0), "name")), "functions");
	fns = json_object_get(json_array_get(nss, 0), "tools");
	for (i = json_array_size(fns); i-- > 0;)
		if (strcmp(json_string_value(json_object_get(json_array_get(fns, i), "name")),
			    "request_user_input_async") == 0)
			json_array_remove(fns, i);
	exec = json_array_get(fns, 0);
	desc = cm_strip(json_string_value(json_object_get(exec, "description")));
	json_object_set_new(exec, "description", json_string(desc));
	free(desc);
	return item;
}

/* Where two texts first differ, printed for the failing case. */
static void
cm_print_diff(const char *a, const char *b)
{
	size_t i = 0;

	while (a[i] != '\0' && a[i] == b[i])
		i++;
	print_error("differ at %zu:\n--- ours\n%.200s\n--- upstream\n%.200s\n", i,
		a + (i > 40 ? i - 40 : 0), b + (i > 40 ? i - 40 : 0));
}

static void
cm_case(const char *fixture, int update_plan)
{
	char *path = xasprintf(FIXTURES "%s.json", fixture);
	json_t *rec = json_load_file(path, 0, NULL), *want, *tools, *got;
	const char *a, *b;

	assert_non_null(rec);
	want = cm_expected(rec);
	tools = tool_specs_build(tool_specs_select(1, update_plan) | TOOL_SPECS_GOALS |
			(codemode_clock_model(json_string_value(json_object_get(rec, "model")))
					? TOOL_SPEC_CLOCK
					: 0),
		TOOL_WIRE_RESPONSES);
	got = codemode_tools_item(tools);
	a = json_string_value(json_object_get(
		json_array_get(
			json_object_get(json_array_get(json_object_get(got, "tools"), 0), "tools"),
			0),
		"description"));
	b = json_string_value(json_object_get(
		json_array_get(
			json_object_get(json_array_get(json_object_get(want, "tools"), 0), "tools"),
			0),
		"description"));
	/* what is compared holds the sections of the tools we nest */
	assert_non_null(strstr(b, "\n\n### `apply_patch`\n"));
	assert_non_null(strstr(b, "\n\n### `exec_command`\n"));
	assert_non_null(strstr(b, "\n\n### `write_stdin`\n"));
	assert_true(update_plan == (strstr(b, "\n\n### `update_plan`\n") != NULL));
	if (strcmp(a, b) != 0)
		cm_print_diff(a, b);
	assert_string_equal(a, b);
	if (!json_equal(got, want)) {
		char *x = json_dumps(got, JSON_COMPACT), *y = json_dumps(want, JSON_COMPACT);

		cm_print_diff(x, y);
		free(x);
		free(y);
	}
	assert_true(json_equal(got, want));
	json_decref(got);
	json_decref(tools);
	json_decref(want);
	json_decref(rec);
	free(path);
}

/* Every recorded code-mode model, each family's list. */
static void
test_recorded_models(void **state)
{
	static const char *const models[] = {"default_model", "model_gpt_6_astra",
		"model_gpt_6_sol", "model_gpt_6_luna", "model_gpt_6_1_terra", "model_gpt_5_6_sol",
		"model_gpt_5_6_terra", "model_gpt_5_6_luna"};

	(void)state;
	for (size_t i = 0; i < nitems(models); i++)
		cm_case(models[i], 0);
}

/* update_plan enabled: nested too, in its place among the names. */
static void
test_recorded_update_plan(void **state)
{
	(void)state;
	cm_case("default_model_update_plan", 1);
}

/* Which models: upstream's code_mode_only catalogue, and the feature's override. */
static void
test_models(void **state)
{
	(void)state;
	assert_true(codemode_model("gpt-6.1-sol", -1));
	assert_true(codemode_model("gpt-5.6-luna", -1));
	assert_false(codemode_model("gpt-5.5", -1));
	assert_false(codemode_model("mock-model", -1));
	assert_false(codemode_model(NULL, -1));
	assert_true(codemode_model("mock-model", 1));
	assert_false(codemode_model("gpt-6.1-sol", 0));
}

/*
 * What a cell may call: every nested tool, MCP servers' deferred ones too, sorted as exec's
 * sections, each with ALL_TOOLS' description (recorded for an MCP tool in
 * tests/fixtures/codemode/upstream/mcp_call.json: its description, its server's instructions,
 * its declaration).
 */
static void
test_nested(void **state)
{
	json_t *tools = json_loads(
		"[{\"type\": \"function\", \"name\": \"exec_command\", \"description\": "
		"\"Runs.\", \"parameters\": {\"type\": \"object\", \"properties\": {}}}, "
		"{\"type\": \"custom\", \"name\": \"apply_patch\", \"description\": \"Patch.\"}, "
		"{\"type\": \"function\", \"name\": \"request_user_input\"}, {\"type\": "
		"\"namespace\", \"name\": \"mcp__test\", \"description\": \"Test server "
		"instructions.\", \"tools\": [{\"type\": \"function\", \"name\": \"echo\", "
		"\"description\": \"Echo the text back.\", \"parameters\": {\"type\": "
		"\"object\", \"properties\": {\"text\": {\"type\": \"string\"}}, "
		"\"required\": [\"text\"]}}]}]",
		0, NULL);
	json_t *got = codemode_tools_nested(tools), *fx, *saw;
	const char *names[] = {"apply_patch", "exec_command", "mcp__test__echo"};
	char *want;

	(void)state;
	assert_int_equal(json_array_size(got), 3);
	for (size_t i = 0; i < 3; i++)
		assert_string_equal(
			json_string_value(json_object_get(json_array_get(got, i), "name")),
			names[i]);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(got, 2), "ns")), "mcp__test");
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(got, 2), "tool")), "echo");
	assert_null(json_object_get(json_array_get(got, 1), "ns"));
	/* upstream's ALL_TOOLS entry for the MCP tool, as the script printed it */
	fx = json_load_file("tests/fixtures/codemode/upstream/mcp_call.json", 0, NULL);
	assert_non_null(fx);
	saw = json_loads(
		json_string_value(json_object_get(
			json_array_get(
				json_object_get(json_array_get(json_object_get(fx, "model_saw"), 0),
					"output"),
				2),
			"text")),
		0, NULL);
	want = xstrdup(json_string_value(json_array_get(json_array_get(saw, 0), 1)));
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(got, 2), "description")), want);
	free(want);
	json_decref(saw);
	json_decref(fx);
	json_decref(tools);
	json_decref(got);
}

/* Schemas to TypeScript: upstream's rules for what the recorded tools do not show. */
static void
test_typescript(void **state)
{
	static const struct {
		const char *schema, *ts;
	} cases[] = {
		{"true", "unknown"},
		{"false", "never"},
		{"{}", "unknown"},
		{"{\"type\":\"object\"}", "{ [key: string]: unknown; }"},
		{"{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}", "{}"},
		{"{\"type\":\"object\",\"properties\":{\"b\":{\"type\":\"integer\"},\"a\":{\"type\":"
		 "[\"string\",\"null\"]}},\"required\":[\"b\"]}",
			"{ a?: string | null; b: number /* integer */; }"},
		{"{\"type\":\"number\",\"minimum\":0.5,\"maximum\":3}",
			"number /* minimum: 0.5; maximum: 3 */"},
		{"{\"enum\":[\"x\",1,null]}", "\"x\" | 1 | null"},
		{"{\"const\":\"k\"}", "\"k\""},
		{"{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"array\",\"items\":{\"type\":"
		 "\"boolean\"}}]}",
			"string | Array<boolean>"},
		{"{\"allOf\":[{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},"
		 "\"required\":[\"a\"]},{\"type\":\"object\",\"additionalProperties\":"
		 "{\"type\":\"number\"}}]}",
			"{ a: string; } & { [key: string]: number; }"},
		{"{\"type\":\"array\",\"prefixItems\":[{\"type\":\"string\"},{\"type\":\"number\"}]}",
			"[string, number]"},
		{"{\"type\":\"array\"}", "unknown[]"},
		{"{\"type\":\"object\",\"properties\":{\"my-key\":{\"type\":\"string\"}}}",
			"{ \"my-key\"?: string; }"},
		{"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"description\":"
		 "\" one \\n\\n two\"},\"b\":{\"type\":\"string\"}},\"additionalProperties\":true}",
			"{\n  // one\n  // two\n  a?: string;\n  b?: string;\n  [key: string]: "
			"unknown;\n}"},
		{"{\"$ref\":\"#/$defs/n\",\"$defs\":{\"n\":{\"type\":\"object\",\"properties\":"
		 "{\"next\":{\"$ref\":\"#/$defs/n\"}}}}}",
			"{ next?: unknown; }"},
	};

	(void)state;
	for (size_t i = 0; i < nitems(cases); i++) {
		json_t *s = json_loads(cases[i].schema, JSON_DECODE_ANY, NULL);
		char *ts = codemode_ts_type(s);

		assert_string_equal(ts, cases[i].ts);
		free(ts);
		json_decref(s);
	}
}

/* Identifiers: what JavaScript cannot name becomes `_`, one per character. */
static void
test_identifiers(void **state)
{
	static const char *const cases[][2] = {
		{"mcp__ologs__get_profile", "mcp__ologs__get_profile"},
		{"hidden-dynamic-tool", "hidden_dynamic_tool"}, {"9lives", "_lives"}, {"", "_"},
		{"caf\xc3\xa9", "caf_"}, {"$a1", "$a1"}};

	(void)state;
	for (size_t i = 0; i < nitems(cases); i++) {
		char *id = codemode_ts_identifier(cases[i][0]);

		assert_string_equal(id, cases[i][1]);
		free(id);
	}
}

/* MCP servers' tools are deferred: not in exec's description, their namespaces named apart;
 * other namespaced tools (a client's) are nested under their namespace's heading. */
static void
test_mcp_deferred(void **state)
{
	json_t *tools = json_loads(
		"[{\"type\":\"namespace\",\"name\":\"mcp__srv\",\"description\":\" Server & "
		"<words>.\\nMore.\",\"tools\":[{\"type\":\"function\",\"name\":\"a\","
		"\"description\":\"A.\",\"strict\":false,\"parameters\":{\"type\":\"object\"}}]},"
		"{\"type\":\"namespace\",\"name\":\"mcp__b\",\"description\":\"\",\"tools\":[]},"
		"{\"type\":\"namespace\",\"name\":\"client\",\"description\":\"Client tools.\","
		"\"tools\":[{\"type\":\"function\",\"name\":\"b-tool\",\"description\":\"B.\","
		"\"strict\":false,\"parameters\":{\"type\":\"object\",\"properties\":{\"q\":"
		"{\"type\":\"string\"}},\"required\":[\"q\"]}}]}]",
		0, NULL);
	json_t *item = codemode_tools_item(tools);
	const char *d = json_string_value(json_object_get(
		json_array_get(
			json_object_get(json_array_get(json_object_get(item, "tools"), 0), "tools"),
			0),
		"description"));
	char *text = codemode_tools_deferred(tools);

	assert_null(strstr(d, "mcp__srv"));
	assert_non_null(strstr(d,
		"\n\n## client\nClient tools.\n\n### `client__b_tool` (`client__b-tool`)\nB.\n\n"
		"exec tool declaration:\n```ts\ndeclare const tools: { client__b_tool(args: { q: "
		"string; }): Promise<unknown>; };\n```"));
	assert_string_equal(text,
		"<tools>\nDeferred tool namespaces:\n- mcp__b\n- mcp__srv: "
		"Server &amp; &lt;words&gt;.\n</tools>");
	free(text);
	/* without request_user_input, functions holds exec and wait only */
	assert_int_equal(json_array_size(json_object_get(
				 json_array_get(json_object_get(item, "tools"), 0), "tools")),
		2);
	json_decref(item);
	json_decref(tools);
	/* no MCP server: no text */
	tools = tool_specs_build(tool_specs_select(1, 0), TOOL_WIRE_RESPONSES);
	assert_null(codemode_tools_deferred(tools));
	json_decref(tools);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_models),
		cmocka_unit_test(test_recorded_update_plan),
		cmocka_unit_test(test_models),
		cmocka_unit_test(test_nested),
		cmocka_unit_test(test_typescript),
		cmocka_unit_test(test_identifiers),
		cmocka_unit_test(test_mcp_deferred),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
