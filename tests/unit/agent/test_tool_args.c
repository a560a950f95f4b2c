/*
 * A call's arguments as the shell tools read them (server/agent/tools/tool_args.c): integers
 * with their default for anything else, and argv words from a JSON array, refusing an empty
 * array, a non-string and a word with an embedded NUL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agent/tools/tool_args.h"

static void
test_int(void **state)
{
	json_t *a = json_loads("{\"n\":42,\"s\":\"7\",\"f\":1.5,\"neg\":-3}", 0, NULL);

	(void)state;
	assert_int_equal(tool_args_int(a, "n", 9), 42);
	assert_int_equal(tool_args_int(a, "neg", 9), -3);
	assert_int_equal(tool_args_int(a, "s", 9), 9);
	assert_int_equal(tool_args_int(a, "f", 9), 9);
	assert_int_equal(tool_args_int(a, "missing", -1), -1);
	assert_int_equal(tool_args_int(NULL, "n", 5), 5);
	json_decref(a);
}

static int
words(const char *text, struct shell_words *w)
{
	json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	int r;

	assert_non_null(j);
	r = tool_args_words(j, w);
	json_decref(j);
	return r;
}

static void
test_words(void **state)
{
	struct shell_words w;

	(void)state;
	shell_words_init(&w);
	assert_int_equal(words("[\"ls\",\"-l\",\"a b\"]", &w), 0);
	assert_int_equal(w.n, 3);
	assert_string_equal(w.v[2], "a b");
	shell_words_free(&w);
	assert_int_equal(words("[]", &w), -1);
	assert_int_equal(words("\"ls\"", &w), -1);
	assert_int_equal(words("[\"ls\",1]", &w), -1);
	shell_words_free(&w);
	assert_int_equal(words("[\"a\\u0000b\"]", &w), -1);
	shell_words_free(&w);
	assert_int_equal(tool_args_words(NULL, &w), -1);
	shell_words_free(&w);
}

/* The arguments of the last shell_call: sc borrows its workdir from them. */
static json_t *held;

/* Parse a shell call from its arguments' JSON text. */
static int
shell_call(const char *name, const char *args, struct tool_shell_call *sc, char **why)
{
	json_decref(held);
	held = json_loads(args, 0, NULL);
	assert_non_null(held);
	return tool_args_shell(held, name, held, 10000, sc, why);
}

static void
test_shell_call(void **state)
{
	struct tool_shell_call sc;
	char *why = NULL;

	(void)state;
	assert_int_equal(shell_call("exec_command",
				 "{\"cmd\":\"echo hi\",\"login\":false,\"tty\":true,"
				 "\"yield_time_ms\":1,\"max_output_tokens\":7,\"workdir\":\"sub\","
				 "\"sandbox_permissions\":\"require_escalated\","
				 "\"justification\":\"why\",\"prefix_rule\":[\"echo\"]}",
				 &sc, &why),
		0);
	assert_int_equal(sc.kind, TOOL_SHELL_EXEC);
	assert_int_equal(sc.argv.n, 3);
	assert_string_equal(sc.argv.v[0], "/bin/bash");
	assert_string_equal(sc.argv.v[1], "-c");
	assert_string_equal(sc.argv.v[2], "echo hi");
	assert_int_equal(sc.yield_ms, 250); /* clamped */
	assert_int_equal(sc.max_tokens, 7);
	assert_int_equal(sc.timeout_ms, -1);
	assert_true(sc.tty && sc.escalated);
	assert_string_equal(sc.workdir, "sub");
	assert_string_equal(sc.justification, "why");
	assert_int_equal(sc.prefix.n, 1);
	tool_args_shell_free(&sc);

	assert_int_equal(shell_call("shell_command", "{\"command\":\"ls\"}", &sc, &why), 0);
	assert_int_equal(sc.kind, TOOL_SHELL_TEXT);
	assert_string_equal(sc.argv.v[1], "-lc");
	assert_int_equal(sc.timeout_ms, 10000);
	assert_false(sc.escalated);
	assert_null(sc.justification);
	tool_args_shell_free(&sc);

	assert_int_equal(
		shell_call("shell", "{\"command\":[\"ls\",\"-l\"],\"timeout_ms\":5}", &sc, &why),
		0);
	assert_int_equal(sc.kind, TOOL_SHELL_ARGV);
	assert_int_equal(sc.argv.n, 2);
	assert_int_equal(sc.timeout_ms, 5);
	tool_args_shell_free(&sc);

	assert_int_equal(
		shell_call("local_shell_call",
			"{\"action\":{\"command\":[\"pwd\"],\"working_directory\":\"/x\"}}", &sc,
			&why),
		0);
	assert_int_equal(sc.kind, TOOL_SHELL_TEXT);
	assert_string_equal(sc.workdir, "/x");
	tool_args_shell_free(&sc);

	assert_int_equal(shell_call("exec_command", "{\"command\":\"ls\"}", &sc, &why), -1);
	assert_string_equal(why, "failed to parse function arguments: missing field `cmd`");
	free(why);
	assert_int_equal(shell_call("shell", "{\"command\":[]}", &sc, &why), -1);
	assert_string_equal(why, "failed to parse function arguments: missing field `command`");
	free(why);
	json_decref(held);
	held = NULL;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int),
		cmocka_unit_test(test_words),
		cmocka_unit_test(test_shell_call),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
