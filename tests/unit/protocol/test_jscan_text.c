/*
 * Tests for protocol/jscan.c, scalars and text: jscan_int, jscan_is, jscan_plain, jscan_str_is,
 * jscan_put_int, and the encoders against jansson: jscan_put_str must write what json_dumps
 * writes and jscan_unescape must give json_string_value's bytes, for every ASCII byte and a
 * set of multibyte characters; past a buffer's ceiling both fail with -E2BIG.
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
#include "protocol/utf8.h"
#include "jscan_util.h"

static void
test_scalars(void **state)
{
	static const struct {
		const char *text;
		int ok;
		long long want;
	} ints[] = {
		{"0", 0, 0},
		{"-0", 0, 0},
		{"7", 0, 7},
		{"-7", 0, -7},
		{"999999999999999999", 0, 999999999999999999LL},
		{"-999999999999999999", 0, -999999999999999999LL},
		{"1000000000000000000", -1, 0}, /* 19 digits */
		{"\"1\"", -1, 0},
		{"true", -1, 0},
		{"[1]", -1, 0},
		{"-", -1, 0},
		{"", -1, 0},
	};
	struct jspan v, body;
	long long x;

	(void)state;
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		v.p = ints[i].text;
		v.end = v.p + strlen(v.p);
		x = 12345;
		if (jscan_int(v, &x) != ints[i].ok || (ints[i].ok == 0 && x != ints[i].want))
			fail_msg("jscan_int(%s) = %lld", ints[i].text, x);
		if (ints[i].ok != 0)
			assert_int_equal(x, 12345); /* untouched on failure */
	}

	v.p = "\"ab\"";
	v.end = v.p + 4;
	assert_int_equal(jscan_plain(v, &body), 0);
	assert_int_equal(body.end - body.p, 2);
	assert_memory_equal(body.p, "ab", 2);
	assert_true(jscan_is(v, "\"ab\""));
	assert_false(jscan_is(v, "\"ab"));
	assert_false(jscan_is(v, "\"ab\" "));
	v.p = "\"a\\nb\"";
	v.end = v.p + 6;
	assert_int_equal(jscan_plain(v, &body), -1);
	v.p = "\"\"";
	v.end = v.p + 2;
	assert_int_equal(jscan_plain(v, &body), 0);
	assert_true(body.p == body.end);
	v.p = "12";
	v.end = v.p + 2;
	assert_int_equal(jscan_plain(v, &body), -1);
	assert_true(jscan_is(v, "12"));
	assert_false(jscan_is(v, "1"));
}

static void
test_str_is(void **state)
{
	static const struct {
		const char *text, *s;
		int want;
	} cases[] = {
		{"\"abc\"", "abc", 1},
		{"\"abc\"", "ab", 0},
		{"\"abc\"", "abcd", 0},
		{"\"\"", "", 1},
		{"\"\"", "a", 0},
		{"\"a\\nb\"", "a\nb", 1},
		{"\"a\\nb\"", "a\\nb", 0},
		{"\"\\u00e9\"", "\xc3\xa9", 1},
		{"\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80", 1},
		{"\"\\ud83d\\ude00\"", "\xf0\x9f\x98", 0},
		{"\"\\/\"", "/", 1},
		{"abc", "abc", 0}, /* not a string */
		{"123", "123", 0},
		{"null", "null", 0},
	};
	struct buf tmp;

	(void)state;
	buf_init(&tmp, BIG);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct jspan v = {cases[i].text, cases[i].text + strlen(cases[i].text)};

		if (jscan_str_is(v, cases[i].s, &tmp) != cases[i].want)
			fail_msg("jscan_str_is(%s, %s) != %d", cases[i].text, cases[i].s,
				cases[i].want);
	}
	buf_free(&tmp);
}

static void
test_put_int(void **state)
{
	static const long long xs[] = {0, 1, -1, 9, 10, -10, 1234567890LL, LLONG_MAX, LLONG_MIN,
		LLONG_MIN + 1, LLONG_MAX - 1};
	struct buf b;
	char want[32];

	(void)state;
	buf_init(&b, 64);
	for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
		buf_reset(&b);
		assert_int_equal(jscan_put_int(&b, xs[i]), 0);
		snprintf(want, sizeof want, "%lld", xs[i]);
		assert_string_equal(buf_str(&b), want);
	}
	/* appends */
	buf_reset(&b);
	assert_int_equal(jscan_put_int(&b, 12), 0);
	assert_int_equal(jscan_put_int(&b, -3), 0);
	assert_string_equal(buf_str(&b), "12-3");
	buf_free(&b);
	/* the ceiling: nothing half-written */
	buf_init(&b, 3);
	assert_int_equal(jscan_put_int(&b, -100), -E2BIG);
	assert_int_equal(b.len, 0);
	assert_int_equal(jscan_put_int(&b, -99), 0);
	assert_string_equal(buf_str(&b), "-99");
	buf_free(&b);
}

/* put_str of s (n bytes) must equal json_dumps of json_stringn(s, n). */
static void
check_put_str(const char *s, size_t n)
{
	json_t *j = json_stringn(s, n);
	char *want;
	struct buf b;

	assert_non_null(j);
	want = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
	assert_non_null(want);
	buf_init(&b, BIG);
	assert_int_equal(jscan_put_str(&b, s, n), 0);
	if (b.len != strlen(want) || memcmp(b.ptr, want, b.len) != 0)
		fail_msg("put_str of %zu bytes '%.*s': %s, jansson: %s", n, (int)n, s, buf_str(&b),
			want);
	/* and it reads back: jscan accepts it (without NUL) and decodes it to s */
	if (memchr(s, '\0', n) == NULL) {
		struct jspan v;
		struct buf d;

		if (jscan_value(b.ptr, b.ptr + b.len, &v) == NULL || v.end != b.ptr + b.len)
			fail_msg("jscan refuses its own output %s", buf_str(&b));
		buf_init(&d, BIG);
		assert_int_equal(jscan_unescape(v, &d), 0);
		assert_int_equal(d.len, n);
		assert_memory_equal(d.ptr != NULL ? d.ptr : "", s, n);
		buf_free(&d);
	}
	buf_free(&b);
	free(want);
	json_decref(j);
}

/* text must be accepted, and jscan_unescape must give json_string_value's bytes. */
static void
check_unescape(const char *text, size_t n)
{
	struct jspan v;
	json_t *j;
	struct buf b;

	if (jscan_value(text, text + n, &v) == NULL)
		fail_msg("refused %.*s", (int)n, text);
	j = load_span(v);
	assert_non_null(j);
	assert_true(json_is_string(j));
	buf_init(&b, BIG);
	assert_int_equal(jscan_unescape(v, &b), 0);
	if (b.len != json_string_length(j) ||
		memcmp(b.ptr != NULL ? b.ptr : "", json_string_value(j), b.len) != 0)
		fail_msg("unescape %.*s: '%s', jansson '%s'", (int)n, text, buf_str(&b),
			json_string_value(j));
	buf_free(&b);
	json_decref(j);
}

static const unsigned multibyte[] = {0x80, 0xa0, 0xe9, 0xff, 0x100, 0x7ff, 0x800, 0x20ac, 0x2028,
	0x2029, 0xd7ff, 0xe000, 0xfeff, 0xfffd, 0xfffe, 0xffff, 0x10000, 0x1f600, 0x10fffd,
	0x10ffff};

/* Every ASCII byte, alone and between others, through put_str and back through unescape. */
static void
test_ascii_round_trip(void **state)
{
	char s[8], text[32];
	int n;

	(void)state;
	for (unsigned c = 0x01; c <= 0x7f; c++) {
		s[0] = (char)c;
		check_put_str(s, 1);
		memcpy(s, "a\0b", 3);
		s[1] = (char)c;
		check_put_str(s, 3);
		/* the same character written as \u00XX, both cases, and as jansson writes it */
		n = snprintf(text, sizeof text, "\"\\u%04x\"", c);
		check_unescape(text, (size_t)n);
		n = snprintf(text, sizeof text, "\"x\\u%04Xy\"", c);
		check_unescape(text, (size_t)n);
		if (c >= 0x20 && c != '"' && c != '\\') {
			n = snprintf(text, sizeof text, "\"%c\"", (int)c);
			check_unescape(text, (size_t)n);
		}
	}
	/* every byte 0x00-0x7f at once, NUL included */
	{
		char all[128];

		for (unsigned c = 0; c < 0x80; c++)
			all[c] = (char)c;
		check_put_str(all, sizeof all);
		check_put_str(all + 1, sizeof all - 1);
	}
	check_put_str("", 0);
}

/* Multibyte characters: raw, \u-escaped (surrogate pairs above the BMP), through both. */
static void
test_multibyte_round_trip(void **state)
{
	char s[64], text[64];
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof multibyte / sizeof multibyte[0]; i++) {
		unsigned cp = multibyte[i];

		n = utf8_put_cp(cp, s);
		check_put_str(s, n);
		memcpy(s + n, "\"\\\n", 3);
		n += utf8_put_cp(cp, s + n + 3) + 3;
		check_put_str(s, n);

		text[0] = '"';
		n = 1 + utf8_put_cp(cp, text + 1);
		text[n++] = '"';
		check_unescape(text, n);
		if (cp < 0x10000)
			n = (size_t)snprintf(text, sizeof text, "\"\\u%04x|\\u%04X\"", cp, cp);
		else
			n = (size_t)snprintf(text, sizeof text, "\"\\u%04x\\u%04X|\\u%04X\\u%04x\"",
				0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff),
				0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
		check_unescape(text, n);
	}
	/* all of them in one string, with escapes between */
	{
		struct buf b;

		buf_init(&b, BIG);
		for (size_t i = 0; i < sizeof multibyte / sizeof multibyte[0]; i++) {
			n = utf8_put_cp(multibyte[i], s);
			assert_int_equal(buf_add(&b, s, n), 0);
			assert_int_equal(buf_add(&b, "\t\"/\x1f", 4), 0);
		}
		check_put_str(b.ptr, b.len);
		buf_free(&b);
	}
}

/* The ceilings: -E2BIG, and nothing appended past them. */
static void
test_ceilings(void **state)
{
	struct buf b;
	struct jspan v = {"\"a\\nb\"", NULL};

	(void)state;
	v.end = v.p + strlen(v.p);
	buf_init(&b, 4);
	assert_int_equal(jscan_put_str(&b, "abcd", 4), -E2BIG);
	assert_true(b.len <= 4);
	buf_reset(&b);
	assert_int_equal(jscan_put_str(&b, "ab", 2), 0);
	assert_string_equal(buf_str(&b), "\"ab\"");
	buf_free(&b);
	buf_init(&b, 2);
	assert_int_equal(jscan_unescape(v, &b), -E2BIG);
	buf_free(&b);
	buf_init(&b, 3);
	assert_int_equal(jscan_unescape(v, &b), 0);
	assert_string_equal(buf_str(&b), "a\nb");
	buf_free(&b);
	buf_init(&b, 5);
	assert_int_equal(jscan_put(&b, v), -E2BIG);
	assert_int_equal(b.len, 0);
	buf_free(&b);
	buf_init(&b, 6);
	assert_int_equal(jscan_put(&b, v), 0);
	assert_string_equal(buf_str(&b), v.p);
	buf_free(&b);
	/* not a string */
	buf_init(&b, 16);
	v.p = "12";
	v.end = v.p + 2;
	assert_int_equal(jscan_unescape(v, &b), -1);
	buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalars),
		cmocka_unit_test(test_str_is),
		cmocka_unit_test(test_put_int),
		cmocka_unit_test(test_ascii_round_trip),
		cmocka_unit_test(test_multibyte_round_trip),
		cmocka_unit_test(test_ceilings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
