/*
 * A command's environment (server/agent/shell/shell_env.c): the base kept in order, entries
 * replaced by exact name (not by prefix), extras then the sandbox's variable appended.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agent/shell/shell_env.h"

/* The entries joined with '|' into out. */
static void
env_bar(char *const *e, char *out, size_t size)
{
	out[0] = '\0';
	for (size_t i = 0; e[i] != NULL; i++) {
		if (i > 0)
			strncat(out, "|", size - strlen(out) - 1);
		strncat(out, e[i], size - strlen(out) - 1);
	}
}

static void
test_replace(void **state)
{
	char *base[] = {"A=1", "AB=2", "PATH=/bin", "C=", NULL}, out[256];
	const char *extra[] = {"A=x", "NEW=y", NULL};
	char **e;

	(void)state;
	e = shell_env_with(base, NULL, NULL);
	env_bar(e, out, sizeof out);
	assert_string_equal(out, "A=1|AB=2|PATH=/bin|C=");
	assert_ptr_equal(e[0], base[0]); /* borrowed, not copied */
	free(e);
	e = shell_env_with(base, extra, "C=sandbox");
	env_bar(e, out, sizeof out);
	assert_string_equal(out, "AB=2|PATH=/bin|A=x|NEW=y|C=sandbox");
	free(e);
	e = shell_env_with((char *[]){NULL}, NULL, "S=1");
	env_bar(e, out, sizeof out);
	assert_string_equal(out, "S=1");
	free(e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
