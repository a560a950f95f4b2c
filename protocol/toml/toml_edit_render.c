/*
 * Values and keys written the way upstream's toml_edit writes them, so that a file edited by
 * either program reads the same: strings take a literal form ('...', '''...''') when they hold
 * a backslash or a double quote and can be written without escapes, else a basic form with
 * escapes ("...", or """ with a leading newline when they hold newlines); floats are written
 * in full (Rust's shortest round-trip digits, never an exponent, ".0" when integral); arrays
 * as [a, b] and inline tables as { k = v }.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
#include "toml_edit.h"
#include "protocol/xmalloc.h"

/* toml_edit's choice for a string: may it be literal, and does it span lines? */
static void
toml_edit_string_style(const char *s, int *literal, int *multiline)
{
	int prefer_literal = 0, can_literal = 1, singles = 0, max_singles = 0;
	const unsigned char *p;

	*multiline = 0;
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (*p == '\n')
			*multiline = 1;
		if (*p == '\'') {
			if (++singles >= 3)
				can_literal = 0;
		} else {
			if (singles > max_singles)
				max_singles = singles;
			singles = 0;
		}
		if (*p == '\\' || *p == '"')
			prefer_literal = 1;
		else if ((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f)
			can_literal = 0;
	}
	*literal = prefer_literal && can_literal;
}

/* A basic string's body: escapes for quotes, backslashes and control characters. */
static void
toml_edit_basic_body(struct buf *b, const char *s, int multiline)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			buf_adds(b, "\\\"");
			break;
		case '\\':
			buf_adds(b, "\\\\");
			break;
		case '\b':
			buf_adds(b, "\\b");
			break;
		case '\t':
			buf_adds(b, "\\t");
			break;
		case '\n':
			buf_adds(b, multiline ? "\n" : "\\n");
			break;
		case '\f':
			buf_adds(b, "\\f");
			break;
		case '\r':
			buf_adds(b, "\\r");
			break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				buf_printf(b, "\\u%04X", *p);
			else
				buf_addc(b, (char)*p);
		}
	}
}

/* A string value in toml_edit's form. */
static void
toml_edit_string(struct buf *b, const char *s)
{
	int literal, multiline;

	toml_edit_string_style(s, &literal, &multiline);
	if (literal && multiline) {
		buf_printf(b, "'''\n%s'''", s);
	} else if (literal) {
		const char *q = strchr(s, '\'') != NULL ? "'''" : "'";

		buf_printf(b, "%s%s%s", q, s, q);
	} else {
		buf_adds(b, multiline ? "\"\"\"\n" : "\"");
		toml_edit_basic_body(b, s, multiline);
		buf_adds(b, multiline ? "\"\"\"" : "\"");
	}
}

/* A float as Rust's Display writes it: the shortest digits that read back, no exponent. */
static void
toml_edit_real(struct buf *b, double x)
{
	char e[40], digits[24];
	int prec, exp, nd = 0;
	char *p;

	if (isnan(x)) {
		buf_adds(b, "nan");
		return;
	}
	if (isinf(x)) {
		buf_adds(b, x < 0 ? "-inf" : "inf");
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(e, sizeof e, "%.*e", prec - 1, x);
		if (strtod(e, NULL) == x)
			break;
	}
	p = e;
	if (*p == '-' || signbit(x)) {
		buf_addc(b, '-');
		if (*p == '-')
			p++;
	}
	for (; *p != 'e'; p++)
		if (*p != '.' && nd < (int)sizeof digits - 1)
			digits[nd++] = *p;
	digits[nd] = '\0';
	exp = (int)strtol(p + 1, NULL, 10); /* as snprintf wrote it */
	while (nd > 1 && digits[nd - 1] == '0')
		digits[--nd] = '\0';
	if (exp >= 0) {
		for (int i = 0; i <= exp; i++)
			buf_addc(b, i < nd ? digits[i] : '0');
		buf_addc(b, '.');
		if (nd > exp + 1)
			buf_adds(b, digits + exp + 1);
		else
			buf_addc(b, '0');
	} else {
		buf_adds(b, "0.");
		for (int i = 0; i < -exp - 1; i++)
			buf_addc(b, '0');
		buf_adds(b, digits);
	}
}

/* A key segment: bare when made of A-Za-z0-9_- only. */
static void
toml_edit_key(struct buf *b, const char *key)
{
	size_t n = strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-");

	if (*key != '\0' && key[n] == '\0') {
		buf_adds(b, key);
		return;
	}
	buf_addc(b, '"');
	toml_edit_basic_body(b, key, 0);
	buf_addc(b, '"');
}

/* Append a value; -1 for a null anywhere in it. */
static int
toml_edit_value(struct buf *b, const json_t *v)
{
	const char *k;
	json_t *item;
	size_t i;
	int first = 1;

	switch (json_typeof(v)) {
	case JSON_STRING:
		toml_edit_string(b, json_string_value(v));
		return 0;
	case JSON_INTEGER:
		buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return 0;
	case JSON_REAL:
		toml_edit_real(b, json_real_value(v));
		return 0;
	case JSON_TRUE:
	case JSON_FALSE:
		buf_adds(b, json_is_true(v) ? "true" : "false");
		return 0;
	case JSON_ARRAY:
		buf_addc(b, '[');
		json_array_foreach(v, i, item)
		{
			if (i > 0)
				buf_adds(b, ", ");
			if (toml_edit_value(b, item) != 0)
				return -1;
		}
		buf_addc(b, ']');
		return 0;
	case JSON_OBJECT:
		if (json_object_size(v) == 0) {
			buf_adds(b, "{}");
			return 0;
		}
		buf_addc(b, '{');
		json_object_foreach((json_t *)v, k, item)
		{
			buf_adds(b, first ? " " : ", ");
			first = 0;
			toml_edit_key(b, k);
			buf_adds(b, " = ");
			if (toml_edit_value(b, item) != 0)
				return -1;
		}
		buf_adds(b, " }");
		return 0;
	default:
		return -1;
	}
}

char *
toml_edit_render(const json_t *value)
{
	struct buf b;

	buf_init(&b, (size_t)1 << 26);
	if (toml_edit_value(&b, value) != 0) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b, NULL);
}

char *
toml_edit_render_key(const char *key)
{
	struct buf b;

	buf_init(&b, (size_t)1 << 20);
	toml_edit_key(&b, key);
	return buf_steal(&b, NULL);
}
