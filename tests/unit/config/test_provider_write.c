/*
 * Tests for server/config/provider_write.c's pure parts: a new custom provider's id from its
 * name (upstream's slugs, recorded in tests/fixtures/providers/upstream/write.json), the base
 * URLs and API key variable names modelProvider/config/write accepts, and the built-in ids.
 * The writes themselves are replayed against upstream's recording by test_providers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "config/config.h"

static void
slug_is(const char *name, const char *want)
{
	char *s = provider_slug(name);

	assert_string_equal(s, want);
	free(s);
}

static void
test_slug(void **state)
{
	(void)state;
	slug_is("My Gateway", "my-gateway");
	slug_is("  \xc3\x91ice GW!! 2 ", "ice-gw-2"); /* non-ASCII letters are separators */
	slug_is("a_b.c", "a-b-c");
	slug_is("!!!", "custom");
	slug_is("", "custom");
	slug_is("OpenAI!", "openai");
	slug_is("x--y", "x-y");
}

static void
test_url(void **state)
{
	(void)state;
	assert_true(provider_url_ok("http://127.0.0.1:9/v1"));
	assert_true(provider_url_ok("HTTPS://h.example:8443/a/b/"));
	assert_false(provider_url_ok("not a url"));
	assert_false(provider_url_ok("https://u:p@h.example/v1"));
	assert_false(provider_url_ok("https://h.example/v1?x=1"));
	assert_false(provider_url_ok("https://h.example/v1#f"));
	assert_false(provider_url_ok("ftp://h.example/"));
	assert_false(provider_url_ok("https:///v1"));
	assert_false(provider_url_ok(""));
}

static void
test_env(void **state)
{
	(void)state;
	assert_true(provider_env_ok("MY_KEY"));
	assert_true(provider_env_ok("my_key1"));
	assert_true(provider_env_ok("_K"));
	assert_false(provider_env_ok("1KEY"));
	assert_false(provider_env_ok("has space"));
	assert_false(provider_env_ok(""));
}

static void
test_builtin(void **state)
{
	(void)state;
	assert_true(provider_is_builtin("openai"));
	assert_true(provider_is_builtin("amazon-bedrock-runtime"));
	assert_true(provider_is_builtin("gcp"));
	assert_false(provider_is_builtin("oss"));
	assert_false(provider_is_builtin("openai-2"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slug),
		cmocka_unit_test(test_url),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_builtin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
