/*
 * request_user_input's arguments and answers (user_input.h). The argument errors read like the
 * serde messages upstream gives the model ("missing field `id`", "invalid type: integer `1`,
 * expected a string"); serde's "at line L column C" is added where it is known without a
 * positional parser: a field missing from the top-level object (serde reports the object's
 * end). Fields are checked in upstream's struct order, so with several faults the one named
 * may differ from serde's (which reports the first in document order).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user_input.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define UI_PREFIX  "failed to parse function arguments: "
#define UI_MSG_MAX (64u << 10) /* an error text, at most (it quotes the model's values) */

static int ui_fail(char **cause, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The model-facing parse error: upstream's prefix, then serde's words. */
static int
ui_fail(char **cause, const char *fmt, ...)
{
	struct buf b;
	va_list ap;

	buf_init(&b, UI_MSG_MAX);
	buf_adds(&b, UI_PREFIX);
	va_start(ap, fmt);
	buf_vprintf(&b, fmt, ap);
	va_end(ap);
	*cause = buf_steal(&b, NULL);
	return -1;
}

/* serde's description of an unexpected value: `integer `1``, `string "x"`, `map`. */
static char *
ui_unexpected(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return xstrdup("map");
	case JSON_ARRAY:
		return xstrdup("sequence");
	case JSON_STRING:
		return xasprintf("string \"%.200s\"", json_string_value(v));
	case JSON_INTEGER:
		return xasprintf("integer `%lld`", (long long)json_integer_value(v));
	case JSON_REAL:
		return xasprintf("floating point `%g`", json_real_value(v));
	case JSON_TRUE:
		return xstrdup("boolean `true`");
	case JSON_FALSE:
		return xstrdup("boolean `false`");
	default:
		return xstrdup("null");
	}
}

/* "invalid type: <v>, expected <what>". */
static int
ui_invalid(char **cause, const json_t *v, const char *what)
{
	char *u = ui_unexpected(v);

	ui_fail(cause, "invalid type: %s, expected %s", u, what);
	free(u);
	return -1;
}

/* A required string member of obj. */
static int
ui_string(const json_t *obj, const char *name, const char **out, char **cause)
{
	const json_t *v = json_object_get(obj, name);

	if (v == NULL)
		return ui_fail(cause, "missing field `%s`", name);
	if (!json_is_string(v))
		return ui_invalid(cause, v, "a string");
	*out = json_string_value(v);
	return 0;
}

/* One option {label, description}, as upstream re-serializes it. */
static json_t *
ui_option(const json_t *o, char **cause)
{
	const char *label, *desc;

	if (!json_is_object(o)) {
		ui_invalid(cause, o, "struct RequestUserInputQuestionOption");
		return NULL;
	}
	if (ui_string(o, "label", &label, cause) != 0 ||
		ui_string(o, "description", &desc, cause) != 0)
		return NULL;
	return json_pack("{s:s, s:s}", "label", label, "description", desc);
}

/* One question; *no_options when it has none (refused once the whole call parsed). */
static json_t *
ui_question(const json_t *q, int *no_options, char **cause)
{
	const char *id, *header, *question;
	const json_t *secret, *opts, *o;
	json_t *out, *list;
	size_t i;

	if (!json_is_object(q)) {
		ui_invalid(cause, q, "struct RequestUserInputQuestion");
		return NULL;
	}
	if (ui_string(q, "id", &id, cause) != 0 || ui_string(q, "header", &header, cause) != 0 ||
		ui_string(q, "question", &question, cause) != 0)
		return NULL;
	secret = json_object_get(q, "isSecret");
	if (secret != NULL && !json_is_boolean(secret)) {
		ui_invalid(cause, secret, "a boolean");
		return NULL;
	}
	opts = json_object_get(q, "options");
	if (opts != NULL && !json_is_null(opts) && !json_is_array(opts)) {
		ui_invalid(cause, opts, "a sequence");
		return NULL;
	}
	/* upstream's member order; the client always offers "Other" (isOther) */
	out = json_pack("{s:s, s:s, s:s, s:b, s:b}", "id", id, "header", header, "question",
		question, "isOther", 1, "isSecret", json_is_true(secret));
	if (json_array_size(opts) == 0) {
		*no_options = 1;
		return out;
	}
	list = json_array();
	json_array_foreach(opts, i, o)
	{
		json_t *opt = ui_option(o, cause);

		if (opt == NULL) {
			json_decref(list);
			json_decref(out);
			return NULL;
		}
		json_array_append_new(list, opt);
	}
	json_object_set_new(out, "options", list);
	return out;
}

/* serde's position after the top-level value: its last line, and the column of its end. */
static void
ui_end_position(const char *text, unsigned *line, size_t *col)
{
	size_t n = strlen(text), i, start = 0;

	while (n > 0 && strchr(" \t\r\n", text[n - 1]) != NULL)
		n--;
	*line = 1;
	for (i = 0; i < n; i++)
		if (text[i] == '\n') {
			(*line)++;
			start = i + 1;
		}
	*col = n - start;
}

int
user_input_params(const char *arguments, const char *call_id, json_t **params, char **cause)
{
	json_error_t err;
	json_t *root = json_loads(arguments, JSON_DECODE_ANY, &err), *list = NULL, *q;
	const json_t *qs, *v;
	int no_options = 0, r = -1;
	unsigned line;
	size_t col, i;

	if (root == NULL) {
		ui_fail(cause, "%s", err.text);
		goto out;
	}
	if (!json_is_object(root)) {
		ui_invalid(cause, root, "struct RequestUserInputArgs");
		goto out;
	}
	if ((qs = json_object_get(root, "questions")) == NULL) {
		ui_end_position(arguments, &line, &col);
		ui_fail(cause, "missing field `questions` at line %u column %zu", line, col);
		goto out;
	}
	if (!json_is_array(qs)) {
		ui_invalid(cause, qs, "a sequence");
		goto out;
	}
	list = json_array();
	json_array_foreach(qs, i, v)
	{
		if ((q = ui_question(v, &no_options, cause)) == NULL)
			goto out;
		json_array_append_new(list, q);
	}
	/* checked after parsing, as upstream: a parse error is reported first */
	if (no_options) {
		*cause = xstrdup(USER_INPUT_NO_OPTIONS);
		goto out;
	}
	*params = json_pack("{s:s, s:O, s:b, s:n}", "itemId", call_id != NULL ? call_id : "",
		"questions", list, "isBlocking", 1, "autoResolutionMs");
	r = 0;
out:
	json_decref(list);
	json_decref(root);
	return r;
}

/* The answers of a ToolRequestUserInputResponse rebuilt with nothing else, or NULL. */
static json_t *
user_input_answers(const json_t *result)
{
	const json_t *answers = json_object_get(result, "answers"), *a, *list, *s;
	const char *id;
	json_t *out;
	size_t i;

	if (!json_is_object(answers))
		return NULL;
	out = json_object();
	json_object_foreach((json_t *)answers, id, a)
	{
		list = json_object_get(a, "answers");
		if (!json_is_array(list))
			goto bad;
		json_array_foreach(list, i, s)
		{
			if (!json_is_string(s))
				goto bad;
		}
		json_object_set_new(out, id, json_pack("{s:O}", "answers", list));
	}
	return out;
bad:
	json_decref(out);
	return NULL;
}

char *
user_input_output(const json_t *result)
{
	json_t *answers = result != NULL ? user_input_answers(result) : NULL, *o;
	char *text;

	if (answers == NULL)
		return xstrdup(USER_INPUT_NO_ANSWERS);
	o = json_pack("{s:o}", "answers", answers);
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text != NULL ? text : xstrdup(USER_INPUT_NO_ANSWERS);
}
