/*
 * The goal tools' arguments and answers (goal_tools.h). Upstream reads the arguments with
 * serde, so its errors name the first offending member and point (line, column) at its value's
 * last byte, or at the closing brace for a missing field; they are rebuilt here from a scan of
 * the top-level members (jansson keeps no positions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goal_tools.h"
#include "protocol/xmalloc.h"

#define GT_REPORT                                                                                  \
	"Goal achieved. Report final usage from this tool result's structured goal fields. If "    \
	"`goal.tokenBudget` is present, include token usage from `goal.tokensUsed` and "           \
	"`goal.tokenBudget`. If `goal.timeUsedSeconds` is greater than 0, summarize elapsed time " \
	"in a concise, human-friendly form appropriate to the response language."

static const char *const gt_statuses[] = {
	"active", "paused", "blocked", "usageLimited", "budgetLimited", "complete", NULL};

/* " at line L column C" of the byte at offset off (0-based) of text. */
static char *
gt_at(const char *text, size_t off)
{
	size_t line = 1, col = 0;

	for (size_t i = 0; i <= off && text[i] != '\0'; i++) {
		col++;
		if (text[i] == '\n' && i < off) {
			line++;
			col = 0;
		}
	}
	return xasprintf(" at line %zu column %zu", line, col);
}

static size_t
gt_ws(const char *text, size_t i)
{
	while (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')
		i++;
	return i;
}

/* The offset of the last byte of member key's value (a top-level one), or -1. */
static long
gt_member_end(const char *text, const char *key)
{
	size_t i = gt_ws(text, 0), len = strlen(text);
	json_error_t e;
	json_t *k, *v;

	if (text[i++] != '{')
		return -1;
	for (;;) {
		int match;

		i = gt_ws(text, i);
		if ((k = json_loadb(text + i, len - i, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK,
			     &e)) == NULL)
			return -1;
		match = json_is_string(k) && strcmp(json_string_value(k), key) == 0;
		json_decref(k);
		i = gt_ws(text, i + (size_t)e.position);
		if (text[i] != ':')
			return -1;
		i = gt_ws(text, i + 1);
		if ((v = json_loadb(text + i, len - i, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK,
			     &e)) == NULL)
			return -1;
		json_decref(v);
		i += (size_t)e.position;
		if (match)
			return (long)i - 1;
		i = gt_ws(text, i);
		if (text[i++] != ',')
			return -1;
	}
}

/* serde's words for a JSON value of the wrong type (its Unexpected). */
static char *
gt_unexpected(const json_t *v)
{
	char *s, *r;

	switch (json_typeof(v)) {
	case JSON_STRING:
		s = json_dumps(v, JSON_ENCODE_ANY);
		r = xasprintf("string %s", s);
		free(s);
		return r;
	case JSON_INTEGER:
		return xasprintf("integer `%" JSON_INTEGER_FORMAT "`", json_integer_value(v));
	case JSON_REAL:
		return xasprintf("floating point `%g`", json_real_value(v));
	case JSON_TRUE:
	case JSON_FALSE:
		return xasprintf("boolean `%s`", json_is_true(v) ? "true" : "false");
	case JSON_NULL:
		return xstrdup("null");
	case JSON_ARRAY:
		return xstrdup("sequence");
	default:
		return xstrdup("map");
	}
}

/* "<what> at line L column C", pointing at member key's value. */
static char *
gt_member_error(const char *text, const char *key, const char *what)
{
	long end = gt_member_end(text, key);
	char *at = gt_at(text, end >= 0 ? (size_t)end : strlen(text) - 1), *r;

	r = xasprintf("%s%s", what, at);
	free(at);
	return r;
}

static char *
gt_type_error(const char *text, const char *key, const json_t *v, const char *expected)
{
	char *u = gt_unexpected(v), *what = xasprintf("invalid type: %s, expected %s", u, expected);
	char *r = gt_member_error(text, key, what);

	free(u);
	free(what);
	return r;
}

/* The arguments as an object, or NULL with *why as serde words a syntax error. */
static json_t *
gt_args(const char *text, char **why)
{
	json_error_t e;
	json_t *args = json_loads(text, 0, &e);
	size_t i;
	char *at;

	if (json_is_object(args))
		return args;
	json_decref(args);
	i = gt_ws(text, 0);
	if (text[i] == '{' && strstr(e.text, "string or '}' expected") != NULL) {
		/* serde stops at the first byte where a key should start */
		i = gt_ws(text, i + 1);
		at = gt_at(text, i);
		*why = xasprintf("key must be a string%s", at);
	} else {
		at = gt_at(text, text[i] != '\0' ? i : (i > 0 ? i - 1 : 0));
		*why = xasprintf("%s%s",
			text[i] == '{' ? "expected value" : "invalid type: expected struct", at);
	}
	free(at);
	return NULL;
}

/* "missing field `key`" at the arguments' closing brace. */
static char *
gt_missing(const char *text, const char *key)
{
	size_t n = strlen(text);
	char *at, *r;

	while (n > 0 && strchr(" \t\r\n", text[n - 1]) != NULL)
		n--;
	at = gt_at(text, n > 0 ? n - 1 : 0);
	r = xasprintf("missing field `%s`%s", key, at);
	free(at);
	return r;
}

char *
goal_tools_output(const json_t *goal)
{
	json_t *out, *g = json_null(), *budget = json_object_get(goal, "tokenBudget");
	json_t *remaining = json_null(), *report = json_null();
	const char *k;
	json_t *v;
	char *s;

	if (goal != NULL) {
		g = json_object();
		json_object_foreach((json_t *)goal, k, v)
		{
			if (strcmp(k, "tokenBudget") != 0 || !json_is_null(v))
				json_object_set(g, k, v);
		}
		if (json_is_integer(budget)) {
			json_int_t left = json_integer_value(budget) -
				json_integer_value(json_object_get(goal, "tokensUsed"));

			remaining = json_integer(left > 0 ? left : 0);
		}
		/* the report asks for the usage only when there is some to report */
		if (strcmp(json_string_value(json_object_get(goal, "status")) ?: "", "complete") ==
				0 &&
			(json_is_integer(budget) ||
				json_integer_value(json_object_get(goal, "timeUsedSeconds")) > 0))
			report = json_string(GT_REPORT);
	}
	out = json_pack("{s:o, s:o, s:o}", "goal", g, "remainingTokens", remaining,
		"completionBudgetReport", report);
	s = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	return s;
}

/* A trimmed objective, or NULL when nothing is left. */
static char *
gt_trim(const char *s)
{
	size_t n;

	while (*s != '\0' && strchr(" \t\r\n", *s) != NULL)
		s++;
	n = strlen(s);
	while (n > 0 && strchr(" \t\r\n", s[n - 1]) != NULL)
		n--;
	return n > 0 ? xstrndup(s, n) : NULL;
}

/* create_goal {objective, token_budget?}. */
static char *
gt_create(const json_t *goal, const char *thread_id, const char *text, const json_t *args,
	json_int_t now, json_t **changed)
{
	json_t *obj = json_object_get(args, "objective"),
	       *budget = json_object_get(args, "token_budget");
	const char *status = json_string_value(json_object_get(goal, "status"));
	char *objective;
	const char *k;
	json_t *v;

	/* serde meets the members in order; a missing one is noticed at the end */
	json_object_foreach((json_t *)args, k, v)
	{
		if (strcmp(k, "objective") == 0 && !json_is_string(v))
			return gt_type_error(text, k, v, "a string");
		if (strcmp(k, "token_budget") == 0 && !json_is_null(v) && !json_is_integer(v))
			return gt_type_error(text, k, v, "i64");
	}
	if (obj == NULL)
		return gt_missing(text, "objective");
	if ((objective = gt_trim(json_string_value(obj))) == NULL)
		return xstrdup("goal objective must not be empty");
	if (json_is_integer(budget) && json_integer_value(budget) <= 0) {
		free(objective);
		return xstrdup("goal budgets must be positive when provided");
	}
	if (goal != NULL && strcmp(status ?: "", "complete") != 0) {
		free(objective);
		return xstrdup(
			"cannot create a new goal because this thread has an unfinished goal; "
			"complete the existing goal first");
	}
	*changed = json_pack("{s:s, s:s, s:s, s:O?, s:i, s:i, s:I, s:I}", "threadId", thread_id,
		"objective", objective, "status", "active", "tokenBudget",
		json_is_integer(budget) ? budget : NULL, "tokensUsed", 0, "timeUsedSeconds", 0,
		"createdAt", now, "updatedAt", now);
	free(objective);
	return goal_tools_output(*changed);
}

/* update_goal {status}: complete, blocked or paused only. */
static char *
gt_update(
	const json_t *goal, const char *text, const json_t *args, json_int_t now, json_t **changed)
{
	json_t *st = json_object_get(args, "status");
	const char *s = json_string_value(st);
	size_t i;

	if (st == NULL)
		return gt_missing(text, "status");
	if (!json_is_string(st))
		return gt_type_error(text, "status", st, "enum ThreadGoalStatus");
	for (i = 0; gt_statuses[i] != NULL && strcmp(gt_statuses[i], s) != 0; i++)
		;
	if (gt_statuses[i] == NULL) {
		char *what = xasprintf("unknown variant `%s`, expected one of `active`, `paused`, "
				       "`blocked`, `usageLimited`, `budgetLimited`, `complete`",
			s);
		char *r = gt_member_error(text, "status", what);

		free(what);
		return r;
	}
	if (strcmp(s, "complete") != 0 && strcmp(s, "blocked") != 0 && strcmp(s, "paused") != 0)
		return xstrdup("update_goal can only mark the existing goal complete, blocked, or "
			       "paused at the user's explicit request; resume, budget-limited, and "
			       "usage-limited status changes are controlled by the user or system");
	if (goal == NULL)
		return xstrdup("cannot update goal because this thread has no goal");
	*changed = json_deep_copy(goal);
	json_object_set_new(*changed, "status", json_string(s));
	json_object_set_new(*changed, "updatedAt", json_integer(now));
	return goal_tools_output(*changed);
}

int
goal_tools_run(const json_t *goal, const char *thread_id, const char *name, const char *args,
	json_int_t now, char **output, json_t **changed)
{
	json_t *a;
	char *why = NULL;

	*changed = NULL;
	if (strcmp(name, "get_goal") != 0 && strcmp(name, "create_goal") != 0 &&
		strcmp(name, "update_goal") != 0)
		return -1;
	if (strcmp(name, "get_goal") == 0) {
		*output = goal_tools_output(goal);
		return 0;
	}
	if (args == NULL)
		args = "{}";
	if ((a = gt_args(args, &why)) == NULL) {
		*output = why;
		return 0;
	}
	*output = strcmp(name, "create_goal") == 0
		? gt_create(goal, thread_id, args, a, now, changed)
		: gt_update(goal, args, a, now, changed);
	json_decref(a);
	return 0;
}
