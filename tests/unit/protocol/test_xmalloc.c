/* Tests for protocol/xmalloc.c's string helpers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "protocol/xmalloc.h"

static void
trim_is(const char *s, const char *want)
{
	char *t = xstrtrim(s);

	assert_string_equal(t, want);
	free(t);
}

static void
test_trim(void **state)
{
	(void)state;
	trim_is("  My Gateway \t\n", "My Gateway");
	trim_is("inner  space", "inner  space");
	trim_is(" \r\n\v\f", "");
	trim_is("", "");
}

static void
test_strndup_and_asprintf(void **state)
{
	char *s = xstrndup("abcdef", 3), *t = xasprintf("%s-%d", s, 2);

	(void)state;
	assert_string_equal(s, "abc");
	assert_string_equal(t, "abc-2");
	free(s);
	free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trim),
		cmocka_unit_test(test_strndup_and_asprintf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
