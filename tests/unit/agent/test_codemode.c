/*
 * Code mode's pure parts (server/agent/codemode/): the exec pragma, a cell's output items in
 * upstream 0.169's words (tests/fixtures/codemode/upstream/), a nested exec_command's answer as
 * the object its output schema promises, the host's line framing, and the embedded host
 * program being the file in the tree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/codemode/codemode_cell.h"
#include "agent/codemode/codemode_host.h"
#include "tests/helpers/skip_note.h"

static void
test_pragma(void **state)
{
	struct codemode_pragma p;
	const char *code;
	char *cause = NULL;

	(void)state;
	assert_int_equal(codemode_pragma_parse("text(1);\n", &p, &code, &cause), 0);
	assert_int_equal(p.yield_ms, 30000);
	assert_int_equal(p.max_tokens, 10000);
	assert_string_equal(code, "text(1);\n");
	assert_int_equal(codemode_pragma_parse("// @exec: {\"yield_time_ms\": 300, "
					       "\"max_output_tokens\": 5}\ntext(2);\n",
				 &p, &code, &cause),
		0);
	assert_int_equal(p.yield_ms, 300);
	assert_int_equal(p.max_tokens, 5);
	assert_string_equal(code, "text(2);\n");
	assert_int_equal(codemode_pragma_parse("// @exec: {nope\nx", &p, &code, &cause), -1);
	assert_non_null(strstr(cause, "invalid exec pragma"));
	free(cause);
	cause = NULL;
	assert_int_equal(
		codemode_pragma_parse("// @exec: {\"yield_time_ms\": -1}\n", &p, &code, &cause),
		-1);
	free(cause);
	/* a pragma on a later line is code, not a pragma */
	assert_int_equal(codemode_pragma_parse("x;\n// @exec: {}\n", &p, &code, &cause), 0);
	assert_string_equal(code, "x;\n// @exec: {}\n");
}

/* The text of output item i. */
static const char *
item_text(const json_t *out, size_t i)
{
	return json_string_value(json_object_get(json_array_get(out, i), "text"));
}

static void
test_output(void **state)
{
	json_t *items = json_pack("[{s:s, s:s}, {s:s, s:s}]", "type", "input_text", "text", "hi",
		"type", "input_image", "image_url", "data:x");
	json_t *out, *long_items;
	char big[201];

	(void)state;
	out = codemode_output(CODEMODE_COMPLETED, "1", 0.06, items, 10000, NULL);
	assert_string_equal(
		item_text(out, 0), "Script completed\nWall time 0.1 seconds\nOutput:\n");
	assert_string_equal(item_text(out, 1), "hi");
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(out, 2), "image_url")), "data:x");
	json_decref(out);
	out = codemode_output(CODEMODE_FAILED, "1", 0, items, 10000, "Error: boom");
	assert_string_equal(item_text(out, 0), "Script failed\nWall time 0.0 seconds\nOutput:\n");
	assert_string_equal(item_text(out, 3), "Script error:\nError: boom");
	json_decref(out);
	out = codemode_output(CODEMODE_RUNNING, "7", 0.3, items, 10000, NULL);
	assert_string_equal(item_text(out, 0),
		"Script running with cell ID 7\nWall time 0.3 seconds\nOutput:\n");
	json_decref(out);
	/* max_output_tokens 5 (recorded: truncate.json) */
	for (int i = 0; i < 200; i++)
		big[i] = (char)('0' + i % 10);
	big[200] = '\0';
	long_items = json_pack("[{s:s, s:s}]", "type", "input_text", "text", big);
	out = codemode_output(CODEMODE_COMPLETED, "1", 0, long_items, 5, NULL);
	assert_string_equal(item_text(out, 1),
		"Warning: truncated output (original token count: 50)\nTotal output lines: 1\n\n"
		"0123456789\xe2\x80\xa6"
		"45 tokens truncated\xe2\x80\xa6"
		"0123456789");
	json_decref(out);
	json_decref(long_items);
	json_decref(items);
}

static void
test_tool_value(void **state)
{
	json_t *v;
	char *s;

	(void)state;
	v = codemode_tool_value("exec_command",
		"Chunk ID: abc123\nWall time: 0.0123 seconds\nProcess exited with code 3\n"
		"Original token count: 1\nOutput:\nout\n");
	s = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
	assert_string_equal(s,
		"{\"chunk_id\":\"abc123\",\"wall_time_seconds\":0.0123,"
		"\"exit_code\":3,\"original_token_count\":1,\"output\":\"out\\n\"}");
	free(s);
	json_decref(v);
	v = codemode_tool_value("exec_command",
		"Chunk ID: a\nWall time: 1.0 seconds\nProcess running with session ID 4\n"
		"Original token count: 0\nOutput:\n");
	assert_int_equal(json_integer_value(json_object_get(v, "session_id")), 4);
	assert_null(json_object_get(v, "exit_code"));
	json_decref(v);
	v = codemode_tool_value("exec_command", "failed to parse function arguments: nope");
	assert_true(json_is_string(v));
	json_decref(v);
	v = codemode_tool_value("apply_patch",
		"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following "
		"files:\nA a.txt\n");
	assert_true(json_is_object(v));
	assert_int_equal(json_object_size(v), 0);
	json_decref(v);
	v = codemode_tool_value("update_plan", "Plan updated");
	assert_string_equal(json_string_value(v), "Plan updated");
	json_decref(v);
}

struct lines {
	char got[8][64];
	int n;
};

static void
on_line(void *arg, const char *text, size_t len)
{
	struct lines *l = arg;

	snprintf(l->got[l->n++], sizeof l->got[0], "%.*s", (int)len, text);
}

static void
test_frame(void **state)
{
	struct codemode_frame f;
	struct lines l = {0};

	(void)state;
	codemode_frame_init(&f, 16);
	assert_int_equal(codemode_frame_feed(&f, "{\"a\":1}\n{\"b\"", 12, on_line, &l), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.got[0], "{\"a\":1}");
	assert_int_equal(codemode_frame_feed(&f, ":2}\n\n", 5, on_line, &l), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.got[1], "{\"b\":2}");
	assert_string_equal(l.got[2], "");
	/* a line past the ceiling ends the stream's trust */
	assert_int_equal(codemode_frame_feed(&f, "0123456789abcdefXYZ", 19, on_line, &l), -1);
	codemode_frame_free(&f);
}

/* The program in the binary is the file in the tree (no stale copy). */
static void
test_embedded_js(void **state)
{
	FILE *fp = fopen("server/agent/codemode/codemode_host.js", "rb");
	static char file[1 << 20];
	size_t n;

	(void)state;
	if (fp == NULL) {
		skip_test("codemode_host.js not found: not run from the repository's root");
		return;
	}
	n = fread(file, 1, sizeof file - 1, fp);
	fclose(fp);
	file[n] = '\0';
	assert_int_equal(strlen(codemode_host_js), n);
	assert_string_equal(codemode_host_js, file);
	assert_non_null(strstr(codemode_host_js, "exec_main.mjs"));
	free(codemode_node_path("/nonexistent"));
	assert_null(codemode_node_path("/nonexistent:/also/not"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pragma),
		cmocka_unit_test(test_output),
		cmocka_unit_test(test_tool_value),
		cmocka_unit_test(test_frame),
		cmocka_unit_test(test_embedded_js),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
