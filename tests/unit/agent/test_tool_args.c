/*
 * A call's arguments as the shell tools read them (server/agent/tools/tool_args.c): integers
 * with their default for anything else, and argv words from a JSON array, refusing an empty
 * array, a non-string and a word with an embedded NUL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int),
		cmocka_unit_test(test_words),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
