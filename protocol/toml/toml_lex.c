/*
 * The TOML parser's scanner (toml_int.h): blanks, comments and newlines, keys, the four kinds
 * of strings with their escapes, integers in four bases, floats, and date-times (kept as their
 * text). Positions in errors count characters, not bytes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml_int.h"
#include "protocol/xmalloc.h"

/* Record the first error at the cursor; always returns -1. */
int
toml_lex_fail(struct toml *t, const char *fmt, ...)
{
	const char *s;
	unsigned col = 1;
	va_list ap;
	char *msg;

	if (t->cause != NULL)
		return -1;
	for (s = t->line_start; s < t->p && s < t->end; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			col++;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	t->pos.line = t->line;
	t->pos.column = col;
	t->cause = xasprintf("%u:%u: %s", t->line, col, msg != NULL ? msg : "error");
	free(msg);
	return -1;
}

/* True at the end of the text. */
int
toml_lex_eof(const struct toml *t)
{
	return t->p >= t->end;
}

/* Skip blanks (spaces and tabs) on the current line. */
void
toml_lex_ws(struct toml *t)
{
	while (t->p < t->end && (*t->p == ' ' || *t->p == '\t'))
		t->p++;
}

/* Consume a newline (LF or CRLF) if one is at the cursor; 1 if consumed, -1 on a lone CR. */
int
toml_lex_newline(struct toml *t)
{
	if (t->p < t->end && *t->p == '\n') {
		t->p++;
	} else if (t->p + 1 < t->end && t->p[0] == '\r' && t->p[1] == '\n') {
		t->p += 2;
	} else if (t->p < t->end && *t->p == '\r') {
		return toml_lex_fail(t, "carriage return not followed by a newline");
	} else
		return 0;
	t->line++;
	t->line_start = t->p;
	return 1;
}

/* Skip a comment if one starts at the cursor (up to, not including, the newline). */
int
toml_lex_comment(struct toml *t)
{
	unsigned char c;

	if (t->p >= t->end || *t->p != '#')
		return 0;
	for (t->p++; t->p < t->end && *t->p != '\n'; t->p++) {
		c = (unsigned char)*t->p;
		if (c == '\r' && t->p + 1 < t->end && t->p[1] == '\n')
			break;
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return toml_lex_fail(t, "control character in a comment");
	}
	return 0;
}

/* Whitespace, comments and newlines (inside arrays and inline tables). */
int
toml_lex_blank(struct toml *t)
{
	int r;

	for (;;) {
		toml_lex_ws(t);
		if (toml_lex_comment(t) != 0)
			return -1;
		if ((r = toml_lex_newline(t)) < 0)
			return -1;
		if (r == 0)
			return 0;
	}
}

/* True when c may follow a bare value (number, boolean, date). */
int
toml_lex_value_end(const struct toml *t)
{
	char c;

	if (toml_lex_eof(t))
		return 1;
	c = *t->p;
	return c == ' ' || c == '\t' || c == ',' || c == ']' || c == '}' || c == '#' || c == '\n' ||
		c == '\r';
}

/* Append n bytes of a value's text; -1 (recorded) past TOML_MAX_VALUE. */
static int
toml_lex_add(struct toml *t, struct buf *b, const char *s, size_t n)
{
	if (buf_add(b, s, n) == 0)
		return 0;
	return toml_lex_fail(t, "value longer than %d bytes", TOML_MAX_VALUE);
}

/* Append the UTF-8 encoding of code point cp. */
static int
toml_lex_utf8(struct toml *t, struct buf *b, uint32_t cp)
{
	char u[4];

	if (cp < 0x80) {
		u[0] = (char)cp;
		return toml_lex_add(t, b, u, 1);
	}
	if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		return toml_lex_add(t, b, u, 2);
	}
	if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		return toml_lex_add(t, b, u, 3);
	}
	u[0] = (char)(0xf0 | cp >> 18);
	u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	u[3] = (char)(0x80 | (cp & 0x3f));
	return toml_lex_add(t, b, u, 4);
}

/* An escape sequence after the backslash (the cursor is on the backslash). */
static int
toml_lex_escape(struct toml *t, struct buf *b)
{
	static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
	const char *e;
	uint32_t cp = 0;
	int n, i;

	if (t->p + 1 >= t->end)
		return toml_lex_fail(t, "unterminated escape sequence");
	t->p++;
	if (*t->p != '\0' && (e = strchr(from, *t->p)) != NULL) {
		t->p++;
		return toml_lex_add(t, b, &to[e - from], 1);
	}
	if (*t->p != 'u' && *t->p != 'U')
		return toml_lex_fail(t, "invalid escape sequence \\%c", *t->p);
	n = *t->p == 'u' ? 4 : 8;
	if (t->end - t->p <= n)
		return toml_lex_fail(t, "truncated \\%c escape", *t->p);
	for (i = 1; i <= n; i++) {
		char c = t->p[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;

		if (d < 0)
			return toml_lex_fail(t, "invalid hex digit in a unicode escape");
		cp = cp << 4 | (uint32_t)d;
	}
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return toml_lex_fail(t, "escape is not a Unicode scalar value");
	t->p += n + 1;
	return toml_lex_utf8(t, b, cp);
}

/*
 * Quotes inside a multi-line string, the cursor on the first: up to two are text, three to
 * five end the string (the ones before the last three are text). 1 at the end, 0 to go on.
 */
static int
toml_lex_multi_quotes(struct toml *t, struct buf *b, char q)
{
	int nq;

	for (nq = 0; t->p + nq < t->end && t->p[nq] == q; nq++)
		;
	if (nq > 5)
		return toml_lex_fail(t, "too many quotes at the end of a string");
	if (toml_lex_add(t, b, t->p, nq >= 3 ? (size_t)nq - 3 : (size_t)nq) != 0)
		return -1;
	t->p += nq;
	return nq >= 3;
}

/*
 * A backslash in a basic string, the cursor on it. In a multi-line string a line-ending
 * backslash eats the newline and the blanks and newlines after it; otherwise an escape.
 */
static int
toml_lex_backslash(struct toml *t, struct buf *b, int multi)
{
	const char *s = t->p + 1;
	int r;

	while (multi && s < t->end && (*s == ' ' || *s == '\t'))
		s++;
	if (!multi || s >= t->end || (*s != '\n' && *s != '\r'))
		return toml_lex_escape(t, b);
	t->p = s;
	do {
		toml_lex_ws(t);
		if ((r = toml_lex_newline(t)) < 0)
			return -1;
	} while (r != 0);
	return 0;
}

/*
 * A string of any of the four kinds, the cursor on its first quote. Keys pass multi = 0: a
 * triple quote there is an error.
 */
json_t *
toml_lex_string(struct toml *t, int allow_multi)
{
	char q = *t->p;
	int multi = 0, literal = q == '\'', r = 0;
	struct buf b;
	unsigned char c;
	json_t *v = NULL;

	buf_init(&b, TOML_MAX_VALUE);
	if (t->end - t->p >= 3 && t->p[1] == q && t->p[2] == q) {
		if (!allow_multi) {
			toml_lex_fail(t, "multi-line strings cannot be keys");
			return NULL;
		}
		multi = 1;
		t->p += 3;
		if (toml_lex_newline(t) < 0)
			goto out;
	} else
		t->p++;
	for (;;) {
		if (toml_lex_eof(t)) {
			toml_lex_fail(t, "unterminated string");
			goto out;
		}
		c = (unsigned char)*t->p;
		if (c == (unsigned char)q && !multi) {
			t->p++;
			break;
		}
		if (c == (unsigned char)q)
			r = toml_lex_multi_quotes(t, &b, q);
		else if (c == '\\' && !literal)
			r = toml_lex_backslash(t, &b, multi);
		else if ((c == '\n' || c == '\r') && !multi)
			r = toml_lex_fail(t, "newline in a single-line string");
		else if (c == '\n' || c == '\r')
			r = toml_lex_newline(t) < 0 ? -1 : toml_lex_add(t, &b, "\n", 1);
		else if ((c < 0x20 && c != '\t') || c == 0x7f)
			r = toml_lex_fail(t, "control character in a string");
		else
			r = toml_lex_add(t, &b, (const char *)t->p++, 1);
		if (r < 0)
			goto out;
		if (r > 0)
			break;
	}
	v = json_stringn(buf_str(&b), b.len);
out:
	buf_free(&b);
	return v;
}

/* One key segment: bare, "basic" or 'literal'. Returns a heap string. */
static json_t *
toml_lex_simple_key(struct toml *t)
{
	const char *s = t->p;

	if (!toml_lex_eof(t) && (*t->p == '"' || *t->p == '\''))
		return toml_lex_string(t, 0);
	while (t->p < t->end &&
		((*t->p >= 'A' && *t->p <= 'Z') || (*t->p >= 'a' && *t->p <= 'z') ||
			(*t->p >= '0' && *t->p <= '9') || *t->p == '_' || *t->p == '-'))
		t->p++;
	if (t->p == s) {
		toml_lex_fail(t, "expected a key");
		return NULL;
	}
	return json_stringn(s, (size_t)(t->p - s));
}

/* A dotted key: an array of its segments (TOML_MAX_DEPTH at most: each one nests a table). */
json_t *
toml_lex_key(struct toml *t)
{
	json_t *parts = json_array(), *k;

	for (;;) {
		toml_lex_ws(t);
		if (json_array_size(parts) >= TOML_MAX_DEPTH) {
			toml_lex_fail(t, "a key with more than %d parts", TOML_MAX_DEPTH);
			json_decref(parts);
			return NULL;
		}
		if ((k = toml_lex_simple_key(t)) == NULL) {
			json_decref(parts);
			return NULL;
		}
		json_array_append_new(parts, k);
		toml_lex_ws(t);
		if (toml_lex_eof(t) || *t->p != '.')
			return parts;
		t->p++;
	}
}

/* Digits with single underscores between them, copied (without underscores) to b. */
static int
toml_lex_digits(struct toml *t, struct buf *b, int base)
{
	const char *s = t->p;
	int prev_digit = 0;
	char c;

	for (; t->p < t->end; t->p++) {
		c = *t->p;
		if (c == '_') {
			if (!prev_digit || t->p + 1 >= t->end)
				return toml_lex_fail(t, "misplaced underscore in a number");
			prev_digit = 0;
			continue;
		}
		if (!((base == 16 && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) ||
			    (c >= '0' && c < '0' + (base < 10 ? base : 10))))
			break;
		if (toml_lex_add(t, b, t->p, 1) != 0)
			return -1;
		prev_digit = 1;
	}
	if (t->p == s)
		return toml_lex_fail(t, "expected digits");
	if (!prev_digit)
		return toml_lex_fail(t, "misplaced underscore in a number");
	return 0;
}

/* A date, time or date-time, kept as its text. */
static json_t *
toml_lex_datetime(struct toml *t)
{
	const char *s = t->p;
	char c;

	while (t->p < t->end) {
		c = *t->p;
		if ((c >= '0' && c <= '9') || c == '-' || c == ':' || c == '.' || c == '+' ||
			c == 'T' || c == 't' || c == 'Z' || c == 'z')
			t->p++;
		else if (c == ' ' && t->p - s == 10 && t->p + 1 < t->end && t->p[1] >= '0' &&
			t->p[1] <= '9')
			t->p++;
		else
			break;
	}
	if (!toml_lex_value_end(t)) {
		toml_lex_fail(t, "invalid date-time");
		return NULL;
	}
	return json_stringn(s, (size_t)(t->p - s));
}

/* An integer or a float (or a date, which also starts with a digit). */
json_t *
toml_lex_number(struct toml *t)
{
	const char *s = t->p, *d;
	struct buf b;
	json_t *v = NULL;
	int base = 10, is_float = 0;
	long long ll;
	double dv;
	char *end;

	for (d = s; d < t->end && *d >= '0' && *d <= '9'; d++)
		;
	if ((d - s == 4 && d < t->end && *d == '-') || (d - s == 2 && d < t->end && *d == ':'))
		return toml_lex_datetime(t);
	buf_init(&b, TOML_MAX_VALUE);
	if ((*t->p == '+' || *t->p == '-') && toml_lex_add(t, &b, t->p++, 1) != 0)
		goto out;
	if (t->end - t->p >= 3 && (strncmp(t->p, "inf", 3) == 0 || strncmp(t->p, "nan", 3) == 0)) {
		toml_lex_fail(t, "inf and nan have no JSON representation");
		goto out;
	}
	if (b.len == 0 && t->end - t->p >= 2 && t->p[0] == '0' &&
		(t->p[1] == 'x' || t->p[1] == 'o' || t->p[1] == 'b')) {
		base = t->p[1] == 'x' ? 16 : t->p[1] == 'o' ? 8 : 2;
		t->p += 2;
		if (toml_lex_digits(t, &b, base) != 0)
			goto out;
	} else {
		if (toml_lex_eof(t) || *t->p < '0' || *t->p > '9') {
			toml_lex_fail(t, "expected a value");
			goto out;
		}
		if (*t->p == '0' && t->p + 1 < t->end && t->p[1] >= '0' && t->p[1] <= '9') {
			toml_lex_fail(t, "leading zeros are not allowed");
			goto out;
		}
		if (toml_lex_digits(t, &b, 10) != 0)
			goto out;
		if (!toml_lex_eof(t) && *t->p == '.') {
			is_float = 1;
			if (toml_lex_add(t, &b, t->p++, 1) != 0 || toml_lex_digits(t, &b, 10) != 0)
				goto out;
		}
		if (!toml_lex_eof(t) && (*t->p == 'e' || *t->p == 'E')) {
			is_float = 1;
			t->p++;
			if (toml_lex_add(t, &b, "e", 1) != 0)
				goto out;
			if (!toml_lex_eof(t) && (*t->p == '+' || *t->p == '-') &&
				toml_lex_add(t, &b, t->p++, 1) != 0)
				goto out;
			if (toml_lex_digits(t, &b, 10) != 0)
				goto out;
		}
	}
	if (!toml_lex_value_end(t)) {
		toml_lex_fail(t, "invalid character in a number");
		goto out;
	}
	errno = 0;
	if (is_float) {
		dv = strtod(buf_str(&b), &end);
		if (errno == ERANGE && (dv > 1 || dv < -1)) {
			toml_lex_fail(t, "float out of range");
			goto out;
		}
		v = json_real(dv);
	} else {
		ll = strtoll(buf_str(&b), &end, base);
		if (errno == ERANGE) {
			toml_lex_fail(t, "integer out of the 64-bit range");
			goto out;
		}
		v = json_integer(ll);
	}
out:
	buf_free(&b);
	return v;
}
