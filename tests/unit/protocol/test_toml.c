/*
 * Tests for protocol/toml/toml.c: a table of documents, each with the JSON it must become or the
 * position and words of the error it must raise. Upstream-style config.toml files (the mock
 * provider table its tests write) are among them, and so are the -c override values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/toml/toml.h"
#include "protocol/xmalloc.h"

struct valid {
	const char *toml;
	const char *json; /* the expected tree, compared with json_equal */
};

static const struct valid valid_docs[] = {
	{"", "{}"},
	{"# only a comment\n\n   \n", "{}"},
	{"a = 1", "{\"a\":1}"},
	{"a = 1 # trailing comment\r\nb = 2\r\n", "{\"a\":1,\"b\":2}"},
	{"model = \"mock-model\"\napproval_policy = \"never\"\nsandbox_mode = \"read-only\"\n"
	 "model_provider = \"mock_provider\"\n[features]\nremote_models = false\n"
	 "[model_providers.mock_provider]\nname = \"Mock provider for test\"\n"
	 "base_url = \"http://127.0.0.1:4567/v1\"\nwire_api = \"responses\"\n"
	 "request_max_retries = 0\nstream_max_retries = 0\n",
		"{\"model\":\"mock-model\",\"approval_policy\":\"never\",\"sandbox_mode\":\"read-only\","
		"\"model_provider\":\"mock_provider\",\"features\":{\"remote_models\":false},"
		"\"model_providers\":{\"mock_provider\":{\"name\":\"Mock provider for test\","
		"\"base_url\":\"http://127.0.0.1:4567/v1\",\"wire_api\":\"responses\","
		"\"request_max_retries\":0,\"stream_max_retries\":0}}}"},
	{"[model_providers.p]\nhttp_headers = { \"X-Test\" = \"1\", Y = \"two\" }\n"
	 "query_params = {api-version = \"2025-01-01\"}\nenv_key = 'MOCK_KEY'\n",
		"{\"model_providers\":{\"p\":{\"http_headers\":{\"X-Test\":\"1\",\"Y\":\"two\"},"
		"\"query_params\":{\"api-version\":\"2025-01-01\"},\"env_key\":\"MOCK_KEY\"}}}"},
	{"[sandbox_workspace_write]\nwritable_roots = [\"/a\", '/b',]\nnetwork_access = true\n"
	 "exclude_tmpdir_env_var = false\nexclude_slash_tmp = true\n",
		"{\"sandbox_workspace_write\":{\"writable_roots\":[\"/a\",\"/b\"],\"network_access\":"
		"true,\"exclude_tmpdir_env_var\":false,\"exclude_slash_tmp\":true}}"},
	{"a.b.c = 1\na.b.d = 2\na.e = 3", "{\"a\":{\"b\":{\"c\":1,\"d\":2},\"e\":3}}"},
	{"\"quoted key\" = 1\n'lit.key' = 2\n\"\" = 3\n a . \"b c\" = 4",
		"{\"quoted key\":1,\"lit.key\":2,\"\":3,\"a\":{\"b c\":4}}"},
	{"s = \"tab\\there \\\"q\\\" \\\\ \\u00e9 \\U0001F600\"",
		"{\"s\":\"tab\\there \\\"q\\\" \\\\ \\u00e9 \\ud83d\\ude00\"}"},
	{"s = 'C:\\path\\no\\escapes'", "{\"s\":\"C:\\\\path\\\\no\\\\escapes\"}"},
	{"s = \"\"\"\nline1\nline2\"\"\"", "{\"s\":\"line1\\nline2\"}"},
	{"s = \"\"\"one \\\n     two \\\n  three\"\"\"", "{\"s\":\"one two three\"}"},
	{"s = \"\"\"quote\"\" \"\"\"\"\"", "{\"s\":\"quote\\\"\\\" \\\"\\\"\"}"},
	{"s = '''\nraw \\n text\n'''", "{\"s\":\"raw \\\\n text\\n\"}"},
	{"i = [0, +7, -17, 1_000, 0xDEAD_beef, 0o755, 0b1101, 9223372036854775807]",
		"{\"i\":[0,7,-17,1000,3735928559,493,13,9223372036854775807]}"},
	{"f = [1.5, -0.25, 3e2, 6.02E+23, 1_0.5e-1, -0.0]",
		"{\"f\":[1.5,-0.25,300.0,6.02e23,1.05,-0.0]}"},
	{"b = [true, false]", "{\"b\":[true,false]}"},
	{"d = 1979-05-27T07:32:00Z\nt = 07:32:00\nl = 1979-05-27 07:32:00.999",
		"{\"d\":\"1979-05-27T07:32:00Z\",\"t\":\"07:32:00\",\"l\":\"1979-05-27 07:32:00.999\"}"},
	{"a = [ [1, 2], [\"x\"], [], {k = 1} ]", "{\"a\":[[1,2],[\"x\"],[],{\"k\":1}]}"},
	{"a = [\n  1, # one\n  2\n  # done\n]", "{\"a\":[1,2]}"},
	{"t = {}\nu = { a.b = 1, c = [1] }", "{\"t\":{},\"u\":{\"a\":{\"b\":1},\"c\":[1]}}"},
	{"t = {\n  a = 1,\n  b = 2,\n}", "{\"t\":{\"a\":1,\"b\":2}}"},
	{"[[p]]\nn = 1\n[[p]]\nn = 2\n[p.sub]\nx = true",
		"{\"p\":[{\"n\":1},{\"n\":2,\"sub\":{\"x\":true}}]}"},
	{"[a.b.c]\nx = 1\n[a]\ny = 2", "{\"a\":{\"b\":{\"c\":{\"x\":1}},\"y\":2}}"},
	{"[fruit]\napple.color = \"red\"\napple.taste.sweet = true\n[fruit.apple.texture]\n"
	 "smooth = true",
		"{\"fruit\":{\"apple\":{\"color\":\"red\",\"taste\":{\"sweet\":true},"
		"\"texture\":{\"smooth\":true}}}}"},
	{"\xef\xbb\xbf"
	 "a = \"bom\"",
		"{\"a\":\"bom\"}"},
	{"[ spaced . \"table\" ]\nk = 'v'", "{\"spaced\":{\"table\":{\"k\":\"v\"}}}"},
	{"k = \"\xc3\xa9t\xc3\xa9\"", "{\"k\":\"\\u00e9t\\u00e9\"}"},
};

struct invalid {
	const char *toml;
	unsigned line, column;
	const char *words;
};

static const struct invalid invalid_docs[] = {
	{"a = ", 1, 5, "expected a value"},
	{"a = 1\nb", 2, 2, "expected '='"},
	{"a = 1\na = 2", 2, 6, "duplicate key"},
	{"[t]\n[t]", 2, 4, "defined twice"},
	{"[t\nk = 1", 1, 3, "expected ']'"},
	{"a = \"open", 1, 10, "unterminated string"},
	{"a = \"new\nline\"", 1, 9, "newline"},
	{"a = \"\\q\"", 1, 7, "invalid escape"},
	{"a = \"\\uD800\"", 1, 7, "Unicode scalar"},
	{"a = 01", 1, 5, "leading zeros"},
	{"a = 1__0", 1, 7, "underscore"},
	{"a = 1_", 1, 6, "underscore"},
	{"a = 9223372036854775808", 1, 24, "64-bit"},
	{"a = inf", 1, 5, "inf and nan"},
	{"a = 1.", 1, 7, "expected digits"},
	{"a = 1 2", 1, 7, "expected a newline"},
	{"a = tru", 1, 5, "expected a value"},
	{"a = [1, 2", 1, 10, "unterminated array"},
	{"a = [1 2]", 1, 8, "expected ',' or ']'"},
	{"a = {b = 1", 1, 11, "unterminated inline table"},
	{"a = {b = 1}\na.c = 2", 2, 8, "cannot add keys"},
	{"a = {b = 1}\n[a]", 2, 4, "defined twice"},
	{"a = [1]\n[[a]]", 2, 6, "not an array of tables"},
	{"a.b = 1\n[a]", 2, 4, "defined twice"},
	{"a = 1\n[a.b]", 2, 6, "not a table"},
	{"[[a]]\n[a]", 2, 4, "defined twice"},
	{"\"\"\"k\"\"\" = 1", 1, 1, "multi-line strings cannot be keys"},
	{"a = \"\"\"x\"\"\"\"\"\"", 1, 9, "too many quotes"},
	{"a = \"\"\"x \\  \r y\"\"\"", 1, 13, "carriage return"},
	{"a = 1\rb = 2", 1, 6, "carriage return"},
	{"# bad \x01 comment", 1, 7, "control character"},
	{"a = \"\xff\"", 1, 6, "invalid UTF-8"},
	{"a = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]", 1, 69,
		"nested deeper"},
	{"[model_providers.mock]\nbase_url = \"http://x\"\nbase_url = \"http://y\"", 3, 22,
		"duplicate key"},
};

/* A document parses into exactly the expected tree. */
static void
test_valid(void **state)
{
	json_t *got, *want;
	char *cause = NULL, *text;
	struct toml_pos pos;

	for (size_t i = 0; i < nitems(valid_docs); i++) {
		got = toml_parse(valid_docs[i].toml, strlen(valid_docs[i].toml), &pos, &cause);
		if (got == NULL)
			fail_msg("valid doc %zu failed: %s\n%s", i, cause, valid_docs[i].toml);
		want = json_loads(valid_docs[i].json, 0, NULL);
		assert_non_null(want);
		if (!json_equal(got, want)) {
			text = json_dumps(got, JSON_COMPACT);
			fail_msg("doc %zu:\n%s\ngot  %s\nwant %s", i, valid_docs[i].toml, text,
				valid_docs[i].json);
		}
		json_decref(got);
		json_decref(want);
	}
}

/* A document fails at the expected line and column, with words that say why. */
static void
test_invalid(void **state)
{
	struct toml_pos pos;
	char *cause, *want;
	json_t *got;
	int bad = 0;

	for (size_t i = 0; i < nitems(invalid_docs); i++) {
		cause = NULL;
		memset(&pos, 0, sizeof pos);
		got = toml_parse(invalid_docs[i].toml, strlen(invalid_docs[i].toml), &pos, &cause);
		if (got != NULL)
			fail_msg("invalid doc %zu parsed:\n%s", i, invalid_docs[i].toml);
		assert_non_null(cause);
		want = xasprintf("%u:%u: ", invalid_docs[i].line, invalid_docs[i].column);
		if (pos.line != invalid_docs[i].line || pos.column != invalid_docs[i].column ||
			strncmp(cause, want, strlen(want)) != 0 ||
			strstr(cause, invalid_docs[i].words) == NULL)
			bad++,
				print_error("doc %zu %s: got `%s` at %u:%u, want %u:%u `%s`\n", i,
					invalid_docs[i].toml, cause, pos.line, pos.column,
					invalid_docs[i].line, invalid_docs[i].column,
					invalid_docs[i].words);
		free(want);
		free(cause);
	}
	assert_int_equal(bad, 0);
}

/* Columns count characters, not bytes. */
static void
test_column_in_characters(void **state)
{
	static const char doc[] = "k = \"\xc3\xa9\xc3\xa9\" x";
	struct toml_pos pos;
	char *cause = NULL;

	assert_null(toml_parse(doc, strlen(doc), &pos, &cause));
	assert_int_equal(pos.line, 1);
	assert_int_equal(pos.column, 10);
	free(cause);
}

/* A NUL byte inside the text is refused, with its line. */
static void
test_nul_byte(void **state)
{
	static const char doc[] = "a = 1\nb = \"x\0y\"";
	struct toml_pos pos;
	char *cause = NULL;

	assert_null(toml_parse(doc, sizeof doc - 1, &pos, &cause));
	assert_int_equal(pos.line, 2);
	assert_non_null(strstr(cause, "NUL"));
	free(cause);
}

/* Values alone, as -c key=value gives them. */
static void
test_values(void **state)
{
	static const struct {
		const char *text, *json;
	} ok[] = {
		{"42", "42"},
		{"\"s\"", "\"s\""},
		{"true", "true"},
		{"[1, \"a\"]", "[1,\"a\"]"},
		{"{a = 1}", "{\"a\":1}"},
		{" 'x' ", "\"x\""},
		{"1.5", "1.5"},
	};
	static const char *const bad[] = {"never", "on-request", "1 2", "", "[1", "gpt-5"};
	char *cause = NULL;
	json_t *v, *want;

	for (size_t i = 0; i < nitems(ok); i++) {
		v = toml_parse_value(ok[i].text, &cause);
		if (v == NULL)
			fail_msg("%s: %s", ok[i].text, cause);
		want = json_loads(ok[i].json, JSON_DECODE_ANY, NULL);
		assert_true(json_equal(v, want));
		json_decref(v);
		json_decref(want);
	}
	for (size_t i = 0; i < nitems(bad); i++) {
		cause = NULL;
		assert_null(toml_parse_value(bad[i], &cause));
		assert_non_null(cause);
		free(cause);
	}
}

/* The size ceiling is enforced before any parsing. */
static void
test_too_large(void **state)
{
	size_t n = TOML_MAX_INPUT + 1;
	char *doc = xmalloc(n), *cause = NULL;

	memset(doc, '#', n);
	assert_null(toml_parse(doc, n, NULL, &cause));
	assert_non_null(strstr(cause, "larger than"));
	free(cause);
	free(doc);
}

/* A long document of many tables parses in a reasonable time (flags stay O(1)). */
static void
test_many_tables(void **state)
{
	size_t n = 20000, len = 0;
	char *doc = xmalloc(n * 32), *cause = NULL;
	json_t *v;

	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(doc + len, 32, "[t%zu]\nk = %zu\n", i, i);
	v = toml_parse(doc, len, NULL, &cause);
	assert_non_null(v);
	assert_int_equal(json_object_size(v), n);
	json_decref(v);
	free(doc);
}

/*
 * Found by tests/fuzz/fuzz_toml.c: a dotted key of a million parts ("[a.a.a...]", 2 MB) made a
 * tree that deep and overflowed the stack; a key has at most TOML_MAX_DEPTH parts, in a table
 * header, a key/value line and an inline table alike.
 */
static void
test_deep_dotted_key(void **state)
{
	static const char *const forms[][2] = {
		{"[", "]\n"}, {"", " = 1\n"}, {"t = { ", " = 1 }\n"}, {"[[", "]]\n"}};
	size_t parts = 1000000, klen = 2 * parts - 1;
	char *key = xmalloc(klen + 1), *doc = xmalloc(klen + 32), *cause = NULL;
	struct toml_pos pos;
	json_t *v;
	int n;

	for (size_t i = 0; i < parts; i++)
		memcpy(key + 2 * i, i + 1 < parts ? "a." : "a", i + 1 < parts ? 2 : 1);
	key[klen] = '\0';
	for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
		n = snprintf(doc, klen + 32, "%s%s%s", forms[f][0], key, forms[f][1]);
		assert_null(toml_parse(doc, (size_t)n, &pos, &cause));
		assert_non_null(strstr(cause, "more than"));
		free(cause);
		cause = NULL;
	}
	/* TOML_MAX_DEPTH parts are fine. */
	n = snprintf(doc, klen + 32, "[%.*s]\n", 2 * TOML_MAX_DEPTH - 1, key);
	assert_non_null(v = toml_parse(doc, (size_t)n, &pos, &cause));
	json_decref(v);
	free(key);
	free(doc);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_column_in_characters),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_many_tables),
		cmocka_unit_test(test_deep_dotted_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
