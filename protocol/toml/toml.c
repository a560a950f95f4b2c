/*
 * TOML to jansson (toml.h). One pass over the text with a cursor (the scanner is toml_lex.c);
 * every value is built as it is read. TOML forbids redefining things, and jansson objects
 * carry no flags, so how each table came to exist is kept on the side, keyed by the object's
 * address:
 *   explicit   [a.b] named it; it cannot be named again
 *   implicit   created as the parent of a header; one later [header] may still define it
 *   dotted     created by a dotted key (a.b = 1); further dotted keys may add to it
 *   inline     an inline table or anything inside one; frozen once read
 *   tables     an array made by [[a]]; only such arrays take more [[a]] elements
 * Date-time values are kept as their text. Inline tables may span lines and end with a comma
 * (as TOML 1.1 allows); everything else follows TOML 1.0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toml_int.h"
#include "protocol/utf8.h"
#include "protocol/xmalloc.h"

#define T_EXPLICIT 0x01
#define T_IMPLICIT 0x02
#define T_DOTTED   0x04
#define T_INLINE   0x08
#define T_TABLES   0x10

static json_t *toml_value(struct toml *t);

/* The side flags of a table or array. */
static unsigned
toml_flags(struct toml *t, const json_t *v)
{
	char k[32];

	snprintf(k, sizeof k, "%p", (const void *)v);
	return (unsigned)json_integer_value(json_object_get(t->flags, k));
}

/* Record how a table or array came to exist. */
static void
toml_set_flags(struct toml *t, const json_t *v, unsigned f)
{
	char k[32];

	snprintf(k, sizeof k, "%p", (const void *)v);
	json_object_set_new(t->flags, k, json_integer(f));
}

/* Mark v and everything inside it frozen (an inline table's contents). */
static void
toml_freeze(struct toml *t, json_t *v)
{
	const char *k;
	json_t *e;
	size_t i;

	if (json_is_object(v)) {
		toml_set_flags(t, v, T_INLINE);
		json_object_foreach(v, k, e)
		{
			toml_freeze(t, e);
		}
	} else if (json_is_array(v)) {
		toml_set_flags(t, v, T_INLINE);
		json_array_foreach(v, i, e)
		{
			toml_freeze(t, e);
		}
	}
}

/* Assign value (stolen) at the dotted key `parts` below table; inline tables freeze later. */
static int
toml_assign(struct toml *t, json_t *table, json_t *parts, json_t *value)
{
	size_t n = json_array_size(parts), i;
	const char *k;
	json_t *child;
	unsigned f;

	for (i = 0; i + 1 < n; i++) {
		k = json_string_value(json_array_get(parts, i));
		child = json_object_get(table, k);
		if (child == NULL) {
			child = json_object();
			json_object_set_new(table, k, child);
			toml_set_flags(t, child, T_DOTTED);
		} else {
			f = toml_flags(t, child);
			if (!json_is_object(child) || !(f & T_DOTTED) || (f & T_INLINE)) {
				json_decref(value);
				return toml_lex_fail(
					t, "cannot add keys to `%s`: it is already defined", k);
			}
		}
		table = child;
	}
	k = json_string_value(json_array_get(parts, n - 1));
	if (json_object_get(table, k) != NULL) {
		json_decref(value);
		return toml_lex_fail(t, "duplicate key `%s`", k);
	}
	json_object_set_new(table, k, value);
	return 0;
}

/* [ values, ... ] with the cursor on '['. */
static json_t *
toml_array(struct toml *t)
{
	json_t *a = json_array(), *v;

	t->p++;
	for (;;) {
		if (toml_lex_blank(t) != 0)
			goto fail;
		if (toml_lex_eof(t)) {
			toml_lex_fail(t, "unterminated array");
			goto fail;
		}
		if (*t->p == ']') {
			t->p++;
			return a;
		}
		if ((v = toml_value(t)) == NULL)
			goto fail;
		json_array_append_new(a, v);
		if (toml_lex_blank(t) != 0)
			goto fail;
		if (!toml_lex_eof(t) && *t->p == ',') {
			t->p++;
			continue;
		}
		if (!toml_lex_eof(t) && *t->p == ']') {
			t->p++;
			return a;
		}
		toml_lex_fail(t,
			toml_lex_eof(t) ? "unterminated array" : "expected ',' or ']' in an array");
		goto fail;
	}
fail:
	json_decref(a);
	return NULL;
}

/* { key = value, ... } with the cursor on '{'. */
static json_t *
toml_inline_table(struct toml *t)
{
	json_t *obj = json_object(), *parts = NULL, *v;

	t->p++;
	for (;;) {
		if (toml_lex_blank(t) != 0)
			goto fail;
		if (toml_lex_eof(t)) {
			toml_lex_fail(t, "unterminated inline table");
			goto fail;
		}
		if (*t->p == '}') {
			t->p++;
			toml_freeze(t, obj);
			return obj;
		}
		if ((parts = toml_lex_key(t)) == NULL)
			goto fail;
		if (toml_lex_eof(t) || *t->p != '=') {
			toml_lex_fail(t, "expected '=' after a key");
			goto fail;
		}
		t->p++;
		toml_lex_ws(t);
		if ((v = toml_value(t)) == NULL)
			goto fail;
		if (toml_assign(t, obj, parts, v) != 0)
			goto fail;
		json_decref(parts);
		parts = NULL;
		if (toml_lex_blank(t) != 0)
			goto fail;
		if (!toml_lex_eof(t) && *t->p == ',') {
			t->p++;
			continue;
		}
		if (!toml_lex_eof(t) && *t->p == '}') {
			t->p++;
			toml_freeze(t, obj);
			return obj;
		}
		toml_lex_fail(t,
			toml_lex_eof(t) ? "unterminated inline table"
					: "expected ',' or '}' in an inline table");
		goto fail;
	}
fail:
	json_decref(parts);
	json_decref(obj);
	return NULL;
}

/* Any value, the cursor on its first character. */
static json_t *
toml_value(struct toml *t)
{
	json_t *v;

	if (toml_lex_eof(t)) {
		toml_lex_fail(t, "expected a value");
		return NULL;
	}
	if (t->depth >= TOML_MAX_DEPTH) {
		toml_lex_fail(t, "values nested deeper than %d", TOML_MAX_DEPTH);
		return NULL;
	}
	switch (*t->p) {
	case '"':
	case '\'':
		return toml_lex_string(t, 1);
	case '[':
		t->depth++;
		v = toml_array(t);
		t->depth--;
		return v;
	case '{':
		t->depth++;
		v = toml_inline_table(t);
		t->depth--;
		return v;
	case 't':
	case 'f':
		if (t->end - t->p >= 4 && strncmp(t->p, "true", 4) == 0) {
			t->p += 4;
			v = json_true();
		} else if (t->end - t->p >= 5 && strncmp(t->p, "false", 5) == 0) {
			t->p += 5;
			v = json_false();
		} else
			break;
		if (!toml_lex_value_end(t)) {
			json_decref(v);
			break;
		}
		return v;
	default:
		if (*t->p == '+' || *t->p == '-' || (*t->p >= '0' && *t->p <= '9') ||
			(t->end - t->p >= 3 &&
				(strncmp(t->p, "inf", 3) == 0 || strncmp(t->p, "nan", 3) == 0)))
			return toml_lex_number(t);
	}
	toml_lex_fail(t, "expected a value (string, number, boolean, array or inline table)");
	return NULL;
}

/* A [table] or [[array of tables]] header, the cursor on '['. */
static int
toml_header(struct toml *t)
{
	int array = t->end - t->p >= 2 && t->p[1] == '[';
	json_t *parts, *table = t->root, *child, *arr;
	size_t n, i;
	const char *k;
	unsigned f;
	int r = -1;

	t->p += array ? 2 : 1;
	if ((parts = toml_lex_key(t)) == NULL)
		return -1;
	if (toml_lex_eof(t) || *t->p != ']' || (array && (t->end - t->p < 2 || t->p[1] != ']'))) {
		toml_lex_fail(t,
			array ? "expected ']]' after an array of tables name"
			      : "expected ']' after a table name");
		goto out;
	}
	t->p += array ? 2 : 1;
	n = json_array_size(parts);
	for (i = 0; i + 1 < n; i++) {
		k = json_string_value(json_array_get(parts, i));
		child = json_object_get(table, k);
		if (child == NULL) {
			child = json_object();
			json_object_set_new(table, k, child);
			toml_set_flags(t, child, T_IMPLICIT);
		} else if (json_is_array(child)) {
			if (!(toml_flags(t, child) & T_TABLES) || json_array_size(child) == 0) {
				toml_lex_fail(t, "`%s` is an array, not a table", k);
				goto out;
			}
			child = json_array_get(child, json_array_size(child) - 1);
		} else if (!json_is_object(child) || (toml_flags(t, child) & T_INLINE)) {
			toml_lex_fail(t, "`%s` already has a value that is not a table", k);
			goto out;
		}
		table = child;
	}
	k = json_string_value(json_array_get(parts, n - 1));
	child = json_object_get(table, k);
	if (!array) {
		if (child == NULL) {
			child = json_object();
			json_object_set_new(table, k, child);
		} else if (!json_is_object(child) ||
			((f = toml_flags(t, child)) & (T_EXPLICIT | T_DOTTED | T_INLINE))) {
			toml_lex_fail(t, "table `%s` is defined twice", k);
			goto out;
		}
		toml_set_flags(t, child, T_EXPLICIT);
	} else {
		if (child == NULL) {
			arr = json_array();
			json_object_set_new(table, k, arr);
			toml_set_flags(t, arr, T_TABLES);
		} else if (json_is_array(child) && (toml_flags(t, child) & T_TABLES)) {
			arr = child;
		} else {
			toml_lex_fail(
				t, "`%s` already has a value that is not an array of tables", k);
			goto out;
		}
		child = json_object();
		json_array_append_new(arr, child);
		toml_set_flags(t, child, T_EXPLICIT);
	}
	t->cur = child;
	r = 0;
out:
	json_decref(parts);
	return r;
}

/* After a statement: blanks, an optional comment, then a newline or the end. */
static int
toml_line_end(struct toml *t)
{
	toml_lex_ws(t);
	if (toml_lex_comment(t) != 0)
		return -1;
	if (toml_lex_eof(t))
		return 0;
	switch (toml_lex_newline(t)) {
	case 1:
		return 0;
	case 0:
		return toml_lex_fail(t, "expected a newline after the value");
	default:
		return -1;
	}
}

/* key = value at the cursor, into the current table. */
static int
toml_keyval(struct toml *t)
{
	json_t *parts, *v;
	int r;

	if ((parts = toml_lex_key(t)) == NULL)
		return -1;
	if (toml_lex_eof(t) || *t->p != '=') {
		json_decref(parts);
		return toml_lex_fail(t, "expected '=' after a key");
	}
	t->p++;
	toml_lex_ws(t);
	if ((v = toml_value(t)) == NULL) {
		json_decref(parts);
		return -1;
	}
	r = toml_assign(t, t->cur, parts, v);
	json_decref(parts);
	return r;
}

/* Set up a parser over text, checking the encoding first. */
static int
toml_init(struct toml *t, const char *text, size_t len)
{
	memset(t, 0, sizeof *t);
	t->p = t->line_start = text;
	t->end = text + len;
	t->line = 1;
	t->flags = json_object();
	if (len > TOML_MAX_INPUT)
		return toml_lex_fail(t, "document larger than %d bytes", TOML_MAX_INPUT);
	if (memchr(text, '\0', len) != NULL) {
		t->p = memchr(text, '\0', len);
		for (const char *s = text; s < t->p; s++)
			if (*s == '\n')
				t->line++, t->line_start = s + 1;
		return toml_lex_fail(t, "NUL byte in the document");
	}
	if (utf8_valid_prefix(text, len) != len) {
		t->p = text + utf8_valid_prefix(text, len);
		for (const char *s = text; s < t->p; s++)
			if (*s == '\n')
				t->line++, t->line_start = s + 1;
		return toml_lex_fail(t, "invalid UTF-8");
	}
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		t->p = t->line_start = text + 3;
	return 0;
}

/* Parse a whole document into an object. */
json_t *
toml_parse(const char *text, size_t len, struct toml_pos *pos, char **cause)
{
	struct toml t;
	int r;

	if (toml_init(&t, text, len) != 0)
		goto fail;
	t.root = t.cur = json_object();
	toml_set_flags(&t, t.root, T_EXPLICIT);
	while (!toml_lex_eof(&t)) {
		toml_lex_ws(&t);
		if (toml_lex_comment(&t) != 0)
			goto fail;
		if ((r = toml_lex_newline(&t)) < 0)
			goto fail;
		if (r == 1 || toml_lex_eof(&t))
			continue;
		if (*t.p == '[')
			r = toml_header(&t);
		else
			r = toml_keyval(&t);
		if (r != 0 || toml_line_end(&t) != 0)
			goto fail;
	}
	json_decref(t.flags);
	return t.root;
fail:
	if (pos != NULL)
		*pos = t.pos;
	*cause = t.cause != NULL ? t.cause : xstrdup("1:1: parse error");
	json_decref(t.root);
	json_decref(t.flags);
	return NULL;
}

/* Parse one value (the right-hand side of `key = value`). */
json_t *
toml_parse_value(const char *text, char **cause)
{
	struct toml t;
	json_t *v = NULL;

	if (toml_init(&t, text, strlen(text)) != 0)
		goto out;
	toml_lex_ws(&t);
	if ((v = toml_value(&t)) == NULL)
		goto out;
	toml_lex_ws(&t);
	if (!toml_lex_eof(&t)) {
		toml_lex_fail(&t, "unexpected text after the value");
		json_decref(v);
		v = NULL;
	}
out:
	json_decref(t.flags);
	if (v == NULL)
		*cause = t.cause != NULL ? t.cause : xstrdup("1:1: parse error");
	return v;
}
