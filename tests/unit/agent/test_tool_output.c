/*
 * Tool output texts (server/agent/tools/tool_output.c, tool_headtail.c): the exec_command answer
 * and the intercepted apply_patch answer exactly as 0.169 wrote them into the reference rollouts,
 * the rejection text of notes §4, upstream's truncation (token and byte budgets, UTF-8
 * boundaries, the warning header), the shell / shell_command layouts, and the head-tail buffer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agent/tools/tool_headtail.h"
#include "agent/tools/tool_output.h"

/* The two answers recorded in the reference rollouts (shell_tool and apply_patch threads). */
static void
test_exec_observed(void **state)
{
	struct tool_exec_result r = {.chunk_id = "5e7825",
		.wall_time_s = 0.30271,
		.has_exit_code = 1,
		.exit_code = 0,
		.has_token_count = 1,
		.original_token_count = tool_output_approx_tokens(12),
		.output = "fixture-out\n",
		.output_len = 12};
	struct tool_shell_result patch = {.exit_code = 0,
		.duration_s = 0.0,
		.output = "Success. Updated the following files:\nA hello.txt\n",
		.policy = {TOOL_TRUNC_BYTES, TOOL_OUTPUT_SHELL_BYTES}};
	char *s = tool_output_exec(&r), *inner;

	assert_string_equal(s,
		"Chunk ID: 5e7825\nWall time: 0.3027 seconds\nProcess exited with "
		"code 0\nOriginal token count: 3\nOutput:\nfixture-out\n");
	free(s);

	patch.output_len = strlen(patch.output);
	inner = tool_output_shell_text(&patch);
	r = (struct tool_exec_result){.output = inner, .output_len = strlen(inner)};
	s = tool_output_exec(&r);
	assert_string_equal(s,
		"Wall time: 0.0000 seconds\nOutput:\nExit code: 0\nWall time: 0 "
		"seconds\nOutput:\nSuccess. Updated the following files:\nA "
		"hello.txt\n");
	free(s);
	free(inner);
}

/* A running command: the session id line instead of an exit code. */
static void
test_exec_running(void **state)
{
	struct tool_exec_result r = {.chunk_id = "abc123",
		.wall_time_s = 10.00004,
		.session_id = "7",
		.has_token_count = 1,
		.original_token_count = 2,
		.output = "line1\n",
		.output_len = 6};
	char *s = tool_output_exec(&r);

	assert_string_equal(s,
		"Chunk ID: abc123\nWall time: 10.0000 seconds\nProcess running "
		"with session ID 7\nOriginal token count: 2\nOutput:\nline1\n");
	free(s);
}

/* Token budget: 100 bytes into 10 tokens = 20 + 20 bytes around "…15 tokens truncated…". */
static void
test_truncate_tokens(void **state)
{
	char in[101];
	struct tool_exec_result r = {.wall_time_s = 0, .max_output_tokens = 10};
	char *s;

	for (int i = 0; i < 100; i++)
		in[i] = (char)('0' + i % 10);
	in[100] = '\0';
	s = tool_output_truncate(in, 100, (struct tool_trunc){TOOL_TRUNC_TOKENS, 10}, NULL);
	assert_string_equal(s,
		"01234567890123456789\xe2\x80\xa6"
		"15 tokens truncated\xe2\x80\xa6"
		"01234567890123456789");
	free(s);
	s = tool_output_truncate(in, 40, (struct tool_trunc){TOOL_TRUNC_TOKENS, 10}, NULL);
	assert_int_equal(strlen(s), 40);
	free(s);
	s = tool_output_truncate(in, 100, (struct tool_trunc){TOOL_TRUNC_TOKENS, 0}, NULL);
	assert_string_equal(s,
		"\xe2\x80\xa6"
		"25 tokens truncated\xe2\x80\xa6");
	free(s);

	r.output = in;
	r.output_len = 100;
	s = tool_output_exec(&r);
	assert_string_equal(s,
		"Wall time: 0.0000 seconds\nOutput:\nWarning: truncated output "
		"(original token count: 25)\nTotal output lines: 1\n\n"
		"01234567890123456789\xe2\x80\xa6"
		"15 tokens truncated\xe2\x80\xa6"
		"01234567890123456789");
	free(s);
}

/* Cuts land on character boundaries; a byte budget counts removed characters. */
static void
test_truncate_utf8(void **state)
{
	char in[41];
	char *s;

	for (int i = 0; i < 10; i++)
		memcpy(in + 4 * i, "\xf0\x9f\x98\x80", 4); /* U+1F600 */
	in[40] = '\0';
	s = tool_output_truncate(in, 40, (struct tool_trunc){TOOL_TRUNC_TOKENS, 5}, NULL);
	assert_string_equal(s,
		"\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xe2\x80\xa6"
		"5 tokens truncated\xe2\x80\xa6\xf0\x9f\x98\x80\xf0\x9f\x98\x80");
	free(s);
	s = tool_output_truncate(in, 40, (struct tool_trunc){TOOL_TRUNC_BYTES, 20}, NULL);
	assert_string_equal(s,
		"\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xe2\x80\xa6"
		"6 chars truncated\xe2\x80\xa6\xf0\x9f\x98\x80\xf0\x9f\x98\x80");
	free(s);
	/* invalid UTF-8 is repaired first: one U+FFFD per bad byte here */
	s = tool_output_truncate("a\xff\xfe"
				 "b",
		4, (struct tool_trunc){TOOL_TRUNC_BYTES, 100}, NULL);
	assert_string_equal(s,
		"a\xef\xbf\xbd\xef\xbf\xbd"
		"b");
	free(s);
	assert_int_equal(tool_output_count_lines("", 0), 0);
	assert_int_equal(tool_output_count_lines("a", 1), 1);
	assert_int_equal(tool_output_count_lines("a\n", 2), 1);
	assert_int_equal(tool_output_count_lines("a\nb", 3), 2);
	assert_int_equal(tool_output_count_lines("\n\n", 2), 2);
}

/* shell's JSON and shell_command's text, with a timeout and a cut. */
static void
test_shell_layouts(void **state)
{
	struct tool_shell_result r = {.exit_code = 1,
		.duration_s = 0.26,
		.output = "hi \"x\"\n",
		.output_len = 7,
		.policy = {TOOL_TRUNC_BYTES, 10000}};
	char *s = tool_output_shell_json(&r);

	assert_string_equal(s,
		"{\"output\":\"hi \\\"x\\\"\\n\",\"metadata\":{\"exit_code\":1,"
		"\"duration_seconds\":0.3}}");
	free(s);
	r.duration_s = 2.0;
	s = tool_output_shell_json(&r);
	assert_non_null(strstr(s, "\"duration_seconds\":2.0}"));
	free(s);
	r.timed_out = 1;
	r.exit_code = 124;
	r.duration_s = 1.5;
	s = tool_output_shell_text(&r);
	assert_string_equal(s,
		"Exit code: 124\nWall time: 1.5 seconds\nOutput:\ncommand timed "
		"out after 1500 milliseconds\nhi \"x\"\n");
	free(s);
	r = (struct tool_shell_result){.output = "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
		.output_len = 18,
		.duration_s = 0.04,
		.policy = {TOOL_TRUNC_BYTES, 8}};
	s = tool_output_shell_text(&r);
	assert_string_equal(s,
		"Exit code: 0\nWall time: 0 seconds\nTotal output lines: "
		"9\nOutput:\n1\n2\n\xe2\x80\xa6"
		"10 chars truncated\xe2\x80\xa6"
		"8\n9\n");
	free(s);
}

/* Rejections and other texts for the model. */
static void
test_error_texts(void **state)
{
	char *s = tool_output_exec_rejected(TOOL_OUTPUT_REJECTED_BY_USER);

	assert_string_equal(s,
		"exec_command failed: CreateProcess { message: "
		"\"Rejected(\\\"rejected by user\\\")\" }");
	free(s);
	s = tool_output_exec_rejected("a \"b\"\nc");
	assert_string_equal(s,
		"exec_command failed: CreateProcess { message: "
		"\"Rejected(\\\"a \\\\\\\"b\\\\\\\"\\\\nc\\\")\" }");
	free(s);
	s = tool_output_shell_rejected(TOOL_OUTPUT_REJECTED_BY_USER);
	assert_string_equal(s, "exec command rejected by user");
	free(s);
	s = tool_output_shell_rejected("blocked");
	assert_string_equal(s, "blocked");
	free(s);
	s = tool_output_unsupported("apply_patch", 0);
	assert_string_equal(s, "unsupported call: apply_patch");
	free(s);
	s = tool_output_unsupported("apply_patch", 1);
	assert_string_equal(s, "unsupported custom tool call: apply_patch");
	free(s);
	s = tool_output_rust_debug("\x1b\t");
	assert_string_equal(s, "\"\\u{1b}\\t\"");
	free(s);
}

/* Chunk ids and yield clamps. */
static void
test_chunk_and_yield(void **state)
{
	char id[7];

	tool_output_chunk_id(id);
	assert_int_equal(strlen(id), 6);
	assert_int_equal(strspn(id, "0123456789abcdef"), 6);
	assert_int_equal(tool_output_clamp_yield(10, 0), 250);
	assert_int_equal(tool_output_clamp_yield(2000, 0), 2000);
	assert_int_equal(tool_output_clamp_yield(100000, 0), 30000);
	assert_int_equal(tool_output_clamp_yield(250, 1), 5000);
	assert_int_equal(tool_output_clamp_yield(10000000, 1), 300000);
}

/* The head-tail buffer keeps the first and the last halves. */
static void
test_headtail(void **state)
{
	struct tool_headtail h;
	size_t len;
	char *s;

	tool_headtail_init(&h, 10);
	tool_headtail_add(&h, "abc", 3);
	s = tool_headtail_text(&h, &len);
	assert_string_equal(s, "abc");
	free(s);
	tool_headtail_add(&h, "defgh", 5);
	tool_headtail_add(&h, "ijklmnop", 8);
	s = tool_headtail_text(&h, &len);
	assert_string_equal(s, "abcdelmnop");
	assert_int_equal(tool_headtail_omitted(&h), 6);
	free(s);
	tool_headtail_add(&h, "0123456789xyz", 13);
	s = tool_headtail_text(&h, NULL);
	assert_string_equal(s, "abcde89xyz");
	assert_int_equal(h.total, 29);
	free(s);
	tool_headtail_free(&h);

	tool_headtail_init(&h, 10);
	for (int i = 0; i < 26; i++)
		tool_headtail_add(&h, &"abcdefghijklmnopqrstuvwxyz"[i], 1);
	s = tool_headtail_text(&h, NULL);
	assert_string_equal(s, "abcdevwxyz");
	free(s);
	tool_headtail_free(&h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_observed),
		cmocka_unit_test(test_exec_running),
		cmocka_unit_test(test_truncate_tokens),
		cmocka_unit_test(test_truncate_utf8),
		cmocka_unit_test(test_shell_layouts),
		cmocka_unit_test(test_error_texts),
		cmocka_unit_test(test_chunk_and_yield),
		cmocka_unit_test(test_headtail),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
