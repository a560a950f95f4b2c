/*
 * The clock tools (clock.h). sleep's argument errors are serde's for a struct with one u64
 * field and unknown fields denied: the column is where the parser stood (the end of the key,
 * of the value, or of the text), found again in the compact text the model sent.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "clock.h"
#include "protocol/xmalloc.h"

#define CLOCK_ARGS_ERR "failed to parse function arguments: "

/* 1-based column just past the first `needle` at or after from, or the text's end. */
static size_t
clock_col(const char *text, const char *needle)
{
	const char *p = strstr(text, needle);

	return p != NULL ? (size_t)(p - text) + strlen(needle) : strlen(text);
}

/* Column just past the value of "duration_ms" (its token in the text). */
static size_t
clock_value_col(const char *text)
{
	size_t c = clock_col(text, "\"duration_ms\"");

	while (text[c] == ' ' || text[c] == ':' || text[c] == '\t')
		c++;
	if (text[c] == '"') /* a string: to its closing quote */
		for (c++; text[c] != '\0' && text[c] != '"'; c += text[c] == '\\' ? 2 : 1)
			;
	else
		while (text[c] != '\0' && strchr(",} \t\r\n", text[c]) == NULL)
			c++;
	return c + (text[c] == '"');
}

int
clock_sleep_args(const char *args, long long *ms, char **cause)
{
	json_error_t err;
	json_t *a = json_loads(args != NULL ? args : "", JSON_DECODE_ANY, &err), *v;
	const char *key;
	char *q;

	*cause = NULL;
	if (a == NULL || !json_is_object(a)) {
		*cause = a == NULL ? xasprintf(CLOCK_ARGS_ERR "%s at line %d column %d", err.text,
					     err.line, err.column)
				   : xstrdup(CLOCK_ARGS_ERR "invalid type, expected struct "
							    "SleepArgs");
		json_decref(a);
		return -1;
	}
	json_object_foreach(a, key, v)
	{
		if (strcmp(key, "duration_ms") == 0)
			continue;
		q = xasprintf("\"%s\"", key);
		*cause = xasprintf(CLOCK_ARGS_ERR "unknown field `%s`, expected `duration_ms` at "
						  "line 1 column %zu",
			key, clock_col(args, q));
		free(q);
		json_decref(a);
		return -1;
	}
	v = json_object_get(a, "duration_ms");
	if (v == NULL)
		*cause =
			xasprintf(CLOCK_ARGS_ERR "missing field `duration_ms` at line 1 column %zu",
				strlen(args));
	else if (json_is_real(v))
		*cause = xasprintf(CLOCK_ARGS_ERR "invalid type: floating point `%g`, expected u64 "
						  "at line 1 column %zu",
			json_real_value(v), clock_value_col(args));
	else if (json_is_integer(v) && json_integer_value(v) < 0)
		*cause = xasprintf(CLOCK_ARGS_ERR "invalid value: integer `%lld`, expected u64 at "
						  "line 1 column %zu",
			(long long)json_integer_value(v), clock_value_col(args));
	else if (!json_is_integer(v))
		*cause = xasprintf(CLOCK_ARGS_ERR "invalid type: %s, expected u64 at line 1 column "
						  "%zu",
			json_is_string(v)	     ? "string"
				: json_is_boolean(v) ? "boolean"
						     : "other",
			clock_value_col(args));
	else if (json_integer_value(v) < 1 || json_integer_value(v) > CLOCK_SLEEP_MAX_MS)
		*cause = xstrdup("duration_ms must be between 1 and 43200000");
	else
		*ms = (long long)json_integer_value(v);
	json_decref(a);
	return *cause != NULL ? -1 : 0;
}

char *
clock_sleep_text(double seconds, enum clock_end how)
{
	if (how == CLOCK_ABORTED) /* upstream's words for a call the user interrupted */
		return xasprintf("aborted by user after %.1fs", seconds);
	return xasprintf("Wall time: %.4f seconds\n%s", seconds,
		how == CLOCK_INPUT ? "Sleep interrupted by new input." : "Sleep completed.");
}

struct clock_sleep {
	ev_timer timer;
	struct ev_loop *loop;
	ev_tstamp start;
	void (*done)(void *arg, enum clock_end how, double seconds);
	void *arg;
};

static void
clock_sleep_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	clock_sleep_end((struct clock_sleep *)w, CLOCK_DUE);
}

struct clock_sleep *
clock_sleep_start(struct ev_loop *loop, long long ms,
	void (*done)(void *arg, enum clock_end how, double seconds), void *arg)
{
	struct clock_sleep *s = xcalloc(1, sizeof *s);

	s->loop = loop;
	s->done = done;
	s->arg = arg;
	ev_now_update(loop);
	s->start = ev_now(loop);
	ev_timer_init(&s->timer, clock_sleep_cb, (ev_tstamp)ms / 1000.0, 0.);
	ev_timer_start(loop, &s->timer);
	return s;
}

void
clock_sleep_end(struct clock_sleep *s, enum clock_end how)
{
	double secs;

	if (s == NULL)
		return;
	ev_timer_stop(s->loop, &s->timer);
	ev_now_update(s->loop);
	secs = ev_now(s->loop) - s->start;
	s->done(s->arg, how, secs > 0 ? secs : 0);
	free(s);
}

void
clock_curr_time(time_t now, char out[32])
{
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(out, 32, "%Y-%m-%d %H:%M:%S UTC", &tm);
}
