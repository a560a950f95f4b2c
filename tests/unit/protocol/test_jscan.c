/*
 * Tests for protocol/jscan.c, validation and walking. The oracle is jansson: a span
 * jscan_value accepts must be one jansson accepts, and walking it (members, elements,
 * jscan_get, jscan_fields, jscan_unescape, jscan_int) must give exactly jansson's values.
 * Refusals are table-driven, each with the reason it is refused. The scalar helpers and the
 * encoders are in test_jscan_text.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "protocol/buf.h"
#include "protocol/jscan.h"
#include "jscan_util.h"

/* A text with its length (for embedded NULs) and why it is in the table. */
struct jcase {
	const char *text;
	size_t len; /* 0: strlen(text) */
	const char *why;
};

struct jaccept {
	const char *text;
	const char *span; /* the value's text jscan_value must give */
	const char *why;
};

static size_t
case_len(const struct jcase *c)
{
	return c->len != 0 ? c->len : strlen(c->text);
}

/* A copy of n bytes in a heap block of exactly n bytes: reading past the end is caught by ASan. */
static char *
exact(const char *text, size_t n)
{
	char *p = malloc(n != 0 ? n : 1);

	assert_non_null(p);
	memcpy(p, text, n);
	return p;
}

/* A key span copied into a C string (accepted keys hold no escape and no NUL). */
static char *
key_dup(struct jspan k)
{
	size_t n = (size_t)(k.end - k.p);
	char *s = malloc(n + 1);

	assert_non_null(s);
	memcpy(s, k.p, n);
	s[n] = '\0';
	return s;
}

static const char *walk_diff(struct jspan v, const json_t *j, struct buf *tmp);

/* The members of object v against jansson's object j; NULL when they agree. */
static const char *
walk_obj(struct jspan v, const json_t *j, struct buf *tmp)
{
	const char *keys[JSCAN_FIELDS + 2], *why = NULL;
	struct jspan vals[JSCAN_FIELDS + 2], k, m, last;
	char *owned[JSCAN_FIELDS];
	struct jscan_it it;
	size_t distinct = 0, nkeys = 0;
	int found;

	if (jscan_obj(&it, v) != 0)
		return "jscan_obj refuses an object";
	while (why == NULL && jscan_obj_next(&it, &k, &m)) {
		char *key = key_dup(k);
		const json_t *jm = json_object_getn(j, k.p, (size_t)(k.end - k.p));
		json_t *re;

		if (!jscan_key_is(k, key))
			why = "jscan_key_is denies the key it yielded";
		else if (jm == NULL)
			why = "the walk yields a key jansson does not have";
		else if (!jscan_get(v, key, &last))
			why = "jscan_get misses a key the walk yields";
		else if (last.p < m.p)
			why = "jscan_get returns an earlier duplicate";
		else if (last.p == m.p) {
			/* the last occurrence: the value jansson keeps */
			distinct++;
			if ((re = load_span(m)) == NULL || !json_equal(re, jm))
				why = "a member's span re-parses to another value";
			json_decref(re);
			if (why == NULL)
				why = walk_diff(m, jm, tmp);
			if (nkeys < JSCAN_FIELDS) {
				owned[nkeys] = key;
				keys[nkeys++] = key;
				key = NULL;
			}
		}
		free(key);
	}
	if (why == NULL && distinct != json_object_size(j))
		why = "the walk and jansson hold different numbers of members";
	/* jscan_fields must agree with jscan_get, and report an absent key as missing */
	if (why == NULL) {
		size_t n = nkeys;

		keys[n++] = "\xff"; /* never a key of an accepted text */
		keys[n] = NULL;
		found = jscan_fields(v, keys, vals);
		if (found != (int)nkeys)
			why = "jscan_fields counts wrongly";
		for (size_t i = 0; why == NULL && i < nkeys; i++)
			if (!jscan_get(v, keys[i], &last) || vals[i].p != last.p ||
				vals[i].end != last.end)
				why = "jscan_fields and jscan_get disagree";
		if (why == NULL && vals[nkeys].p != NULL)
			why = "jscan_fields finds an absent key";
		if (why == NULL && jscan_get(v, "\xff", &last))
			why = "jscan_get finds an absent key";
	}
	for (size_t i = 0; i < nkeys; i++)
		free(owned[i]);
	return why;
}

/* The elements of array v against jansson's array j. */
static const char *
walk_arr(struct jspan v, const json_t *j, struct buf *tmp)
{
	struct jscan_it it;
	struct jspan e;
	size_t i = 0;
	const char *why;

	if (jscan_arr(&it, v) != 0)
		return "jscan_arr refuses an array";
	while (jscan_arr_next(&it, &e)) {
		const json_t *je = json_array_get(j, i++);
		json_t *re;

		if (je == NULL)
			return "the walk yields more elements than jansson";
		re = load_span(e);
		if (re == NULL || !json_equal(re, je)) {
			json_decref(re);
			return "an element's span re-parses to another value";
		}
		json_decref(re);
		if ((why = walk_diff(e, je, tmp)) != NULL)
			return why;
	}
	return i == json_array_size(j) ? NULL : "the walk yields fewer elements than jansson";
}

/* A string value against jansson's string. */
static const char *
walk_str(struct jspan v, const json_t *j, struct buf *tmp)
{
	const char *s = json_string_value(j);
	size_t n = json_string_length(j);
	struct jspan body;
	struct buf b;
	char *longer;
	int same, is;

	buf_init(&b, BIG);
	same = jscan_unescape(v, &b) == 0 && b.len == n &&
		memcmp(b.ptr != NULL ? b.ptr : "", s, n) == 0;
	buf_free(&b);
	if (!same)
		return "jscan_unescape differs from jansson";
	if (jscan_plain(v, &body) == 0) {
		if (memchr(v.p, '\\', (size_t)(v.end - v.p)) != NULL)
			return "jscan_plain takes an escaped string";
		if ((size_t)(body.end - body.p) != n || memcmp(body.p, s, n) != 0)
			return "jscan_plain's body differs from jansson";
	} else if (memchr(v.p, '\\', (size_t)(v.end - v.p)) == NULL)
		return "jscan_plain refuses a string without escapes";
	if (!jscan_str_is(v, s, tmp))
		return "jscan_str_is denies the string's own value";
	longer = malloc(n + 2);
	assert_non_null(longer);
	memcpy(longer, s, n);
	memcpy(longer + n, "x", 2);
	is = jscan_str_is(v, longer, tmp);
	longer[n > 0 ? n - 1 : 0] = '\0';
	is |= n > 0 && jscan_str_is(v, longer, tmp);
	free(longer);
	return is ? "jscan_str_is takes another string" : NULL;
}

/* jscan's view of v against jansson's value j (recursively); NULL when they agree. */
static const char *
walk_diff(struct jspan v, const json_t *j, struct buf *tmp)
{
	struct jscan_it it;
	long long x;
	int is_int = jscan_int(v, &x) == 0;

	if (!json_is_integer(j) && is_int)
		return "jscan_int takes a value that is not an integer";
	if (!json_is_object(j) && jscan_obj(&it, v) == 0)
		return "jscan_obj takes a value that is not an object";
	if (!json_is_array(j) && jscan_arr(&it, v) == 0)
		return "jscan_arr takes a value that is not an array";
	if (!json_is_string(j) && jscan_plain(v, &(struct jspan){0}) == 0)
		return "jscan_plain takes a value that is not a string";
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return walk_obj(v, j, tmp);
	case JSON_ARRAY:
		return walk_arr(v, j, tmp);
	case JSON_STRING:
		return walk_str(v, j, tmp);
	case JSON_INTEGER:
		if (!is_int || x != json_integer_value(j))
			return "jscan_int differs from jansson";
		return NULL;
	case JSON_TRUE:
		return jscan_is(v, "true") ? NULL : "true is not jscan_is true";
	case JSON_FALSE:
		return jscan_is(v, "false") ? NULL : "false is not jscan_is false";
	case JSON_NULL:
		return jscan_is(v, "null") ? NULL : "null is not jscan_is null";
	default:
		return "jscan accepted a real";
	}
}

/* text (n bytes) must be accepted with span want (NULL: any), and agree with jansson. */
static void
check_accepted(const char *text, size_t n, const char *want, const char *why)
{
	char *copy = exact(text, n);
	struct jspan v = {NULL, NULL};
	const char *e = jscan_value(copy, copy + n, &v), *diff;
	struct buf tmp;
	json_t *j;

	if (e == NULL)
		fail_msg("refused %s (%s)", text, why);
	assert_ptr_equal(e, v.end);
	if (want != NULL &&
		((size_t)(v.end - v.p) != strlen(want) || memcmp(v.p, want, strlen(want)) != 0))
		fail_msg("span of %s is '%.*s', want '%s'", text, (int)(v.end - v.p), v.p, want);
	/* the same answer without asking for the span */
	assert_ptr_equal(jscan_value(copy, copy + n, NULL), e);
	if ((j = load_span(v)) == NULL)
		fail_msg("jscan accepts %s, jansson refuses it (%s)", text, why);
	buf_init(&tmp, BIG);
	diff = walk_diff(v, j, &tmp);
	buf_free(&tmp);
	json_decref(j);
	if (diff != NULL)
		fail_msg("%s: %s", text, diff);
	free(copy);
}

static void
test_accepted(void **state)
{
	static const struct jaccept cases[] = {
		{"0", "0", "zero"},
		{"-0", "-0", "negative zero is an integer"},
		{"123", "123", "integer"},
		{"-123", "-123", "negative integer"},
		{"123456789012345678", "123456789012345678", "18 digits, the most taken"},
		{"-999999999999999999", "-999999999999999999", "18 digits, negative"},
		{"true", "true", "literal"},
		{"false", "false", "literal"},
		{"null", "null", "literal"},
		{"\"\"", "\"\"", "empty string"},
		{"\"abc\"", "\"abc\"", "plain string"},
		{" \t\r\n 7", "7", "leading whitespace is skipped, not in the span"},
		{"7 \t\r\n", "7", "trailing whitespace is not in the span"},
		{"7,8", "7", "a number ends at a comma"},
		{"7]", "7", "a number ends at a bracket"},
		{"7}", "7", "a number ends at a brace"},
		{"7:", "7", "a number ends at a colon"},
		{"true,", "true", "a literal ends at a comma"},
		{"null ]", "null", "a literal ends at whitespace"},
		{"\"\\u0041\"", NULL, "\\u escape"},
		{"\"\\u00e9\\u00E9\"", NULL, "lower and upper case hex"},
		{"\"\\ud83d\\ude00\"", NULL, "surrogate pair"},
		{"\"\\uDBFF\\uDFFF\"", NULL, "the last surrogate pair, U+10FFFF"},
		{"\"\\uD800\\uDC00\"", NULL, "the first surrogate pair, U+10000"},
		{"\"\\ud7ff\\ue000\\uffff\"", NULL, "around the surrogates"},
		{"\"\\u0001\\u001f\"", NULL, "escaped control characters"},
		{"\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", NULL, "every short escape"},
		{"\"\xc2\x80\"", NULL, "U+0080, the first two-byte character"},
		{"\"\xdf\xbf\"", NULL, "U+07FF"},
		{"\"\xe0\xa0\x80\"", NULL, "U+0800, the first three-byte character"},
		{"\"\xed\x9f\xbf\"", NULL, "U+D7FF, before the surrogates"},
		{"\"\xee\x80\x80\"", NULL, "U+E000, after the surrogates"},
		{"\"\xef\xbf\xbf\"", NULL, "U+FFFF"},
		{"\"\xf0\x90\x80\x80\"", NULL, "U+10000, the first four-byte character"},
		{"\"\xf4\x8f\xbf\xbf\"", NULL, "U+10FFFF, the last character"},
		{"\"\xe2\x80\xa8\x7f\"", NULL, "U+2028 and DEL are not control characters"},
		{"[]", "[]", "empty array"},
		{"{}", "{}", "empty object"},
		{"[ \n]", "[ \n]", "empty array with whitespace"},
		{"{ \t}", "{ \t}", "empty object with whitespace"},
		{"[1,2,3]]", "[1,2,3]", "what follows a container is the caller's"},
		{"{\"a\":1}", "{\"a\":1}", "object"},
		{"{\"\":\"\"}", NULL, "empty key"},
		{"{\"\xc3\xa9\":1}", NULL, "UTF-8 key"},
		{"{\"a\":\"\\\"}\"}", NULL, "escaped quote and brace in a value"},
		{"[\"]\",\"[\",\"{\"]", NULL, "brackets inside strings"},
		{"[\"\\\\\",\"\\\\\\\"\"]", NULL, "backslash runs before quotes"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_accepted(cases[i].text, strlen(cases[i].text), cases[i].span, cases[i].why);
}

static void
test_refused(void **state)
{
	static const struct jcase cases[] = {
		{"", 0, "nothing"},
		{" \t\r\n", 0, "only whitespace"},
		{"\v1", 0, "vertical tab is not JSON whitespace"},
		{"\f1", 0, "form feed is not JSON whitespace"},
		{"1.0", 0, "real"},
		{"0.5", 0, "real"},
		{"-0.5", 0, "real"},
		{"1e5", 0, "real (exponent)"},
		{"1E5", 0, "real (exponent)"},
		{"0e0", 0, "real (exponent)"},
		{"[1.5]", 0, "real inside an array"},
		{"{\"a\":2E1}", 0, "real inside an object"},
		{"1234567890123456789", 0, "19 digits"},
		{"-1234567890123456789", 0, "19 digits, negative"},
		{"9223372036854775807", 0, "LLONG_MAX has 19 digits"},
		{"[12345678901234567890]", 0, "20 digits inside an array"},
		{"\"\\u0000\"", 0, "\\u0000"},
		{"\"a\\u0000b\"", 0, "\\u0000 inside"},
		{"{\"a\\\"b\":1}", 0, "key with an escape"},
		{"{\"\\u0041\":1}", 0, "key with a \\u escape"},
		{"{\"ok\":1,\"a\\nb\":2}", 0, "second key with an escape"},
		{"\"\xc0\x80\"", 0, "overlong NUL"},
		{"\"\xc1\xbf\"", 0, "overlong two-byte form"},
		{"\"\xe0\x80\x80\"", 0, "overlong three-byte form"},
		{"\"\xe0\x9f\xbf\"", 0, "overlong three-byte form of U+07FF"},
		{"\"\xf0\x8f\xbf\xbf\"", 0, "overlong four-byte form of U+FFFF"},
		{"\"\xed\xa0\x80\"", 0, "U+D800 encoded in UTF-8"},
		{"\"\xed\xbf\xbf\"", 0, "U+DFFF encoded in UTF-8"},
		{"\"\xed\xa0\xbd\xed\xb8\x80\"", 0, "a surrogate pair encoded in UTF-8 (CESU-8)"},
		{"\"\xf4\x90\x80\x80\"", 0, "U+110000"},
		{"\"\xf5\x80\x80\x80\"", 0, "lead byte 0xf5"},
		{"\"\xf8\x88\x80\x80\x80\"", 0, "five-byte form"},
		{"\"\xff\"", 0, "byte 0xff"},
		{"\"\xfe\"", 0, "byte 0xfe"},
		{"\"\x80\"", 0, "lone continuation byte"},
		{"\"\xbf\"", 0, "lone continuation byte"},
		{"\"\xc3\"", 0, "truncated two-byte sequence"},
		{"\"\xe2\x82\"", 0, "truncated three-byte sequence"},
		{"\"\xf0\x9f\x98\"", 0, "truncated four-byte sequence"},
		{"\"\xc3(\"", 0, "bad continuation byte"},
		{"\"\xc3\xc3\"", 0, "a lead byte where a continuation byte belongs"},
		{"\"\xe2\xe2\x82\"", 0, "a lead byte where a continuation byte belongs"},
		{"\"\xf0\x9f\xf0\x80\"", 0, "a lead byte where a continuation byte belongs"},
		{"\"\xe2(\xa1\"", 0, "bad continuation byte"},
		{"\"\xc3", 0, "truncated at the end of the text"},
		{"{\"\xff\":1}", 0, "invalid UTF-8 in a key"},
		{"\"\\ud800\"", 0, "lone high surrogate"},
		{"\"\\udc00\"", 0, "lone low surrogate"},
		{"\"\\udfff\\ud800\"", 0, "reversed pair"},
		{"\"\\ud800x\"", 0, "high surrogate before a character"},
		{"\"\\ud800\\u0041\"", 0, "high surrogate before a non-surrogate"},
		{"\"\\ud800\\ud800\"", 0, "two high surrogates"},
		{"\"\\ud800\\ue000\"", 0, "high surrogate before a character past the low ones"},
		{"\"\\ud800\\n\"", 0, "high surrogate before a short escape"},
		{"\"\\ud800\\udc0", 0, "truncated low surrogate"},
		{"\"\\u12\"", 0, "short \\u escape"},
		{"\"\\u12G4\"", 0, "bad hex digit"},
		{"\"\\U0041\"", 0, "\\U is not an escape"},
		{"\"\\x41\"", 0, "\\x is not an escape"},
		{"\"\\'\"", 0, "\\' is not an escape"},
		{"\"\\", 0, "backslash at the end"},
		{"\"a\x01b\"", 0, "control character"},
		{"\"\x1f\"", 0, "control character 0x1f"},
		{"\"\t\"", 0, "raw tab in a string"},
		{"\"\n\"", 0, "raw newline in a string"},
		{"\"a\0b\"", 5, "raw NUL in a string"},
		{"{\"a\x01\":1}", 0, "control character in a key"},
		{"1x", 0, "number followed by a letter"},
		{"1\"", 0, "number followed by a quote"},
		{"1/", 0, "number followed by a slash"},
		{"1\0", 2, "number followed by NUL"},
		{"truex", 0, "literal followed by a letter"},
		{"true1", 0, "literal followed by a digit"},
		{"nullnull", 0, "literal followed by a literal"},
		{"false[", 0, "literal followed by a bracket"},
		{"tru", 0, "truncated literal"},
		{"nul", 0, "truncated literal"},
		{"fals", 0, "truncated literal"},
		{"True", 0, "capitalised literal"},
		{"-", 0, "sign alone"},
		{"--1", 0, "two signs"},
		{"+1", 0, "plus sign"},
		{"01", 0, "leading zero"},
		{"-01", 0, "leading zero, negative"},
		{"00", 0, "two zeros"},
		{".5", 0, "no integer part"},
		{"'a'", 0, "single quotes"},
		{"\"abc", 0, "unterminated string"},
		{"[", 0, "unterminated array"},
		{"{", 0, "unterminated object"},
		{"[1", 0, "unterminated array"},
		{"[1,", 0, "unterminated array"},
		{"{\"a\":1", 0, "unterminated object"},
		{"{\"a\"", 0, "unterminated object"},
		{"[1,]", 0, "trailing comma"},
		{"[,1]", 0, "leading comma"},
		{"[1,,2]", 0, "double comma"},
		{"[1 2]", 0, "missing comma"},
		{"[1 22]", 0, "missing comma"},
		{"[1;2]", 0, "a semicolon is no separator"},
		{"[\"a\"x\"b\"]", 0, "string followed by a letter in an array"},
		{"{\"a\":1 x\"b\":2}", 0, "junk between members"},
		{"{\"a\":1,}", 0, "trailing comma in an object"},
		{"{\"a\" 1}", 0, "missing colon"},
		{"{\"a\":}", 0, "missing value"},
		{"{\"a\"::1}", 0, "double colon"},
		{"{a:1}", 0, "bare key"},
		{"{1:1}", 0, "number key"},
		{"{\"a\":1 \"b\":2}", 0, "missing comma between members"},
		{"[1}", 0, "mismatched bracket"},
		{"{\"a\":1]", 0, "mismatched brace"},
		{"]", 0, "closing bracket"},
		{",", 0, "comma"},
		{"[truex]", 0, "literal followed by a letter in an array"},
		{"{\"a\":nullx}", 0, "literal followed by a letter in an object"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct jcase *c = &cases[i];
		size_t n = case_len(c);
		char *copy = exact(c->text, n);
		struct jspan v = {NULL, NULL};

		if (jscan_value(copy, copy + n, &v) != NULL)
			fail_msg("accepted %s (%s) as '%.*s'", c->text, c->why, (int)(v.end - v.p),
				v.p);
		/* a refusal leaves the span alone */
		assert_null(v.p);
		free(copy);
	}
}

/* n arrays (or objects) nested in one another. */
static char *
nested(int n, int objects)
{
	struct buf b;

	buf_init(&b, BIG);
	for (int i = 0; i < n; i++)
		assert_int_equal(buf_adds(&b, objects ? "{\"k\":" : "["), 0);
	assert_int_equal(buf_adds(&b, "1"), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(buf_adds(&b, objects ? "}" : "]"), 0);
	return buf_steal(&b, NULL);
}

static void
test_depth(void **state)
{
	char *s;

	(void)state;
	for (int objects = 0; objects <= 1; objects++) {
		s = nested(JSCAN_DEPTH, objects);
		check_accepted(s, strlen(s), s, "JSCAN_DEPTH levels");
		free(s);
		s = nested(JSCAN_DEPTH + 1, objects);
		assert_null(jscan_value(s, s + strlen(s), NULL));
		free(s);
	}
	/* the depth is nesting, not the number of containers */
	s = malloc(1 + 4 * JSCAN_DEPTH * 3 + 3);
	assert_non_null(s);
	s[0] = '[';
	for (int i = 0; i < 4 * JSCAN_DEPTH; i++)
		memcpy(s + 1 + 3 * i, "[],", 3);
	memcpy(s + 1 + 4 * JSCAN_DEPTH * 3, "1]", 3);
	check_accepted(s, strlen(s), s, "many sibling containers");
	free(s);
}

/* Documents walked against jansson: members, elements, duplicates, values of every kind. */
static void
test_documents(void **state)
{
	static const char *docs[] = {
		"{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}",
		"{\"a\":1,\"a\":2}",
		"{\"a\":{\"x\":1},\"b\":0,\"a\":[2,3]}",
		"{\"a\":1,\"b\":2,\"a\":3,\"b\":4,\"a\":5}",
		"{\"k\":\"v\",\"kk\":\"vv\",\"\":\"empty\"}",
		"{\"a\":{\"a\":{\"a\":1}},\"b\":\"a\"}",
		"{ \"a\" : 1 , \"b\" : [ 1 , 2 ] , \"c\" : { } }",
		"\n{\n\t\"a\":\t\"x\"\r\n,\"b\"\n:\n-5\n}\n",
		"[1,-2,0,-0,123456789012345678,-123456789012345678]",
		"[[],[[]],[[],[[]]],{}]",
		"[\"\",\"a\",\"\\\"\",\"\\\\\",\"\\/\",\"\\b\\f\\n\\r\\t\"]",
		"[\"\\u00e9\",\"\\u20AC\",\"\\ud83d\\ude00\",\"\\uDBFF\\uDFFF\"]",
		"[\"\xc3\xa9\",\"\xe2\x82\xac\",\"\xf0\x9f\x98\x80\",\"\xf4\x8f\xbf\xbf\"]",
		"[\"mixed \xc3\xa9 and \\u00e9 and \\ud83d\\ude00 and \xf0\x9f\x98\x80\"]",
		"{\"text\":\"line1\\nline2\\ttab \\\"quoted\\\" \\\\ back\",\"n\":3}",
		"{\"\xe2\x82\xac\":\"euro\",\"\xf0\x9f\x98\x80\":\"smile\"}",
		"{\"a\":\"}\",\"b\":\"]\",\"c\":\"{[\",\"d\":\",\",\"e\":\":\"}",
		"{\"a\":\"\\\\\",\"b\":\"\\\\\\\"\",\"c\":\"x\\\\\\\\\"}",
		"[true,false,null,true]",
		"{\"t\":true,\"f\":false,\"n\":null}",
		"[{\"a\":1},{\"a\":2},{\"b\":[{\"c\":[]}]}]",
		"{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\","
		"\"text\":\"hello\"}]}",
		"{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":\"$ ls\\n"
		"a.c\\nb.c\\n\\u001b[0m\"}",
		"{\"ts\":1732500000000,\"seq\":-1,\"ok\":true,\"id\":\"0193\"}",
		"\"just a string\"",
		"-42",
		"null",
		"{\"a\":[1,{\"b\":[2,{\"c\":[3]}]}],\"a\":null}",
		"{\"x\":\"\x7f\xe2\x80\xa8\xe2\x80\xa9\"}",
		"{\"dup\":{\"in\":1},\"other\":2,\"dup\":{\"in\":2,\"in\":3}}",
		"[\"a\\/b\",\"\\u002F\",\"\\u005c\"]",
		"{\"a\":1,\"ab\":2,\"abc\":3,\"b\":4}",
	};

	(void)state;
	for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++)
		check_accepted(docs[i], strlen(docs[i]), NULL, "document");
}

/* jscan_get / jscan_fields: the last duplicate, absent keys, prefixes, nesting. */
static void
test_get_and_fields(void **state)
{
	static const char doc[] = "{\"a\":1,\"ab\":\"x\",\"in\":{\"z\":9},\"a\":[2],\"s\":\"z\"}";
	static const char *const keys[] = {"s", "a", "nope", "ab", "z", NULL};
	struct jspan v, m, vals[5];
	struct buf tmp;

	(void)state;
	assert_non_null(jscan_value(doc, doc + sizeof doc - 1, &v));
	assert_int_equal(jscan_get(v, "a", &m), 1);
	assert_true(jscan_is(m, "[2]"));
	assert_int_equal(jscan_get(v, "ab", &m), 1);
	assert_true(jscan_is(m, "\"x\""));
	assert_int_equal(jscan_get(v, "", &m), 0);
	assert_int_equal(jscan_get(v, "b", &m), 0);   /* a prefix of "ab" is not a key */
	assert_int_equal(jscan_get(v, "abc", &m), 0); /* nor an extension of one */
	assert_int_equal(jscan_get(v, "z", &m), 0);   /* a nested key is not a member */
	assert_int_equal(jscan_get(v, "x", &m), 0);   /* nor a string value */

	assert_int_equal(jscan_fields(v, keys, vals), 3);
	assert_true(jscan_is(vals[0], "\"z\""));
	assert_true(jscan_is(vals[1], "[2]"));
	assert_null(vals[2].p);
	assert_true(jscan_is(vals[3], "\"x\""));
	assert_null(vals[4].p);

	/* not an object: nothing found */
	assert_int_equal(jscan_get(vals[1], "a", &m), 0);
	assert_int_equal(jscan_fields(vals[0], keys, vals), 0);
	assert_null(vals[0].p);
	assert_null(vals[1].p);

	buf_init(&tmp, BIG);
	assert_int_equal(jscan_get(v, "s", &m), 1);
	assert_true(jscan_str_is(m, "z", &tmp));
	assert_false(jscan_str_is(m, "", &tmp));
	assert_false(jscan_str_is(m, "zz", &tmp));
	buf_free(&tmp);
}

/* The walk stops at the end of every container, empty ones included. */
static void
test_iterators(void **state)
{
	static const char doc[] = "[ 1 , [ ] , { } , \"s\" , { \"k\" : [ 2 ] } ]";
	struct jscan_it it, in;
	struct jspan v, e, k, m;
	int n = 0;

	(void)state;
	assert_non_null(jscan_value(doc, doc + sizeof doc - 1, &v));
	assert_int_equal(jscan_obj(&it, v), -1);
	assert_int_equal(jscan_arr(&it, v), 0);
	while (jscan_arr_next(&it, &e)) {
		switch (n++) {
		case 0:
			assert_true(jscan_is(e, "1"));
			break;
		case 1:
			assert_true(jscan_is(e, "[ ]"));
			assert_int_equal(jscan_arr(&in, e), 0);
			assert_int_equal(jscan_arr_next(&in, &m), 0);
			break;
		case 2:
			assert_true(jscan_is(e, "{ }"));
			assert_int_equal(jscan_obj(&in, e), 0);
			assert_int_equal(jscan_obj_next(&in, &k, &m), 0);
			break;
		case 3:
			assert_true(jscan_is(e, "\"s\""));
			assert_int_equal(jscan_obj(&in, e), -1);
			assert_int_equal(jscan_arr(&in, e), -1);
			break;
		case 4:
			assert_true(jscan_is(e, "{ \"k\" : [ 2 ] }"));
			assert_int_equal(jscan_obj(&in, e), 0);
			assert_int_equal(jscan_obj_next(&in, &k, &m), 1);
			assert_true(jscan_key_is(k, "k"));
			assert_false(jscan_key_is(k, "kk"));
			assert_false(jscan_key_is(k, ""));
			assert_true(jscan_is(m, "[ 2 ]"));
			assert_int_equal(jscan_obj_next(&in, &k, &m), 0);
			break;
		}
	}
	assert_int_equal(n, 5);
	/* once at the end, it stays there */
	assert_int_equal(jscan_arr_next(&it, &e), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_depth),
		cmocka_unit_test(test_documents),
		cmocka_unit_test(test_get_and_fields),
		cmocka_unit_test(test_iterators),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
