/*
 * item_from_core from text to text (item.h). A history of thousands of items is mostly these
 * four variants; each is written in item_from_core's field order straight from the record's
 * text: large values (output, messages, content) are copied as they are, small ones that
 * change (an argv joined, a path, an enum spelled camelCase) are decoded and re-encoded. Any
 * other variant, or text the strict scanner refuses, is parsed with jansson and given to
 * item_from_core itself; tests/unit/thread/test_item_text.c holds the two paths to the same
 * output.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "item.h"
#include "protocol/buf.h"
#include "protocol/jscan.h"
#include "protocol/xmalloc.h"

#define ITEM_DECODED_MAX (64u << 20) /* a decoded value (joined text, path, argv word) */

/* The core members the fast path reads, found in one pass. */
enum {
	F_TYPE,
	F_ID,
	F_CLIENT_ID,
	F_CONTENT,
	F_MODERATION,
	F_PHASE,
	F_MEMORY_CITATION,
	F_DELIVERY,
	F_QUESTIONS,
	F_SUMMARY_TEXT,
	F_RAW_CONTENT,
	F_PLUGIN_ID,
	F_SCRIPT_PATH,
	F_COMMAND,
	F_CWD,
	F_PROCESS_ID,
	F_SOURCE,
	F_STATUS,
	F_PARSED_CMD,
	F_AGGREGATED_OUTPUT,
	F_EXIT_CODE,
	F_DURATION,
	F_COUNT
};
static const char *const item_fields[F_COUNT + 1] = {"type", "id", "client_id", "content",
	"moderation", "phase", "memory_citation", "delivery", "questions", "summary_text",
	"raw_content", "plugin_id", "script_path", "command", "cwd", "process_id", "source",
	"status", "parsed_cmd", "aggregated_output", "exit_code", "duration", NULL};

/* `,"key":` */
static int
item_key(struct buf *b, const char *key)
{
	int r;

	if ((r = buf_addc(b, ',')) != 0 || (r = jscan_put_str(b, key, strlen(key))) != 0)
		return r;
	return buf_addc(b, ':');
}

/* `,"key":` and the member's text, or null when it is missing. */
static int
item_copy(struct buf *b, const char *key, struct jspan v)
{
	int r;

	if ((r = item_key(b, key)) != 0)
		return r;
	return v.p != NULL ? jscan_put(b, v) : buf_adds(b, "null");
}

/* `,"key":` and the member's text when it is an array, else []. */
static int
item_array(struct buf *b, const char *key, struct jspan v)
{
	int r;

	if ((r = item_key(b, key)) != 0)
		return r;
	return v.p != NULL && v.p[0] == '[' ? jscan_put(b, v) : buf_adds(b, "[]");
}

/*
 * A string value's bytes: the text itself when it has no escapes, else decoded into d.
 * 0, or -1 when it is missing or not a string.
 */
static int
item_view(struct jspan v, struct buf *d, const char **s, size_t *n)
{
	struct jspan body;

	if (v.p == NULL || v.p[0] != '"')
		return -1;
	if (jscan_plain(v, &body) == 0) {
		*s = body.p;
		*n = (size_t)(body.end - body.p);
		return 0;
	}
	buf_reset(d);
	if (jscan_unescape(v, d) != 0)
		return -1;
	*s = buf_str(d);
	*n = d->len;
	return 0;
}

/* `,"key":` and a string member camelCased, or dflt when it is not a string. */
static int
item_camel_member(struct buf *b, const char *key, struct jspan v, const char *dflt, struct buf *d)
{
	const char *s;
	char *cam;
	size_t n;
	int r;

	if ((r = item_key(b, key)) != 0)
		return r;
	if (item_view(v, d, &s, &n) != 0)
		return jscan_put_str(b, dflt, strlen(dflt));
	cam = item_camel_n(s, n);
	r = jscan_put_str(b, cam, strlen(cam));
	free(cam);
	return r;
}

/* UserMessage -> userMessage. */
static int
item_text_user(const struct jspan *f, struct buf *b)
{
	int r;

	if ((r = buf_adds(b, "{\"type\":\"userMessage\"")) != 0 ||
		(r = item_copy(b, "id", f[F_ID])) != 0 ||
		(r = item_copy(b, "clientId", f[F_CLIENT_ID])) != 0)
		return r;
	return item_array(b, "content", f[F_CONTENT]);
}

/* AgentMessage -> agentMessage: the text parts joined (one part's string copied as is). */
static int
item_text_agent(const struct jspan *f, struct buf *b, struct buf *d)
{
	struct jspan part, text, only = {NULL, NULL};
	struct jscan_it it;
	int r, n = 0;

	buf_reset(d);
	if (f[F_CONTENT].p != NULL && jscan_arr(&it, f[F_CONTENT]) == 0)
		while (jscan_arr_next(&it, &part))
			if (jscan_get(part, "text", &text) && text.p[0] == '"') {
				if (n++ == 0)
					only = text;
				if ((r = jscan_unescape(text, d)) != 0)
					return r;
			}
	if ((r = buf_adds(b, "{\"type\":\"agentMessage\"")) != 0 ||
		(r = item_copy(b, "moderation", f[F_MODERATION])) != 0 ||
		(r = item_copy(b, "id", f[F_ID])) != 0 || (r = item_key(b, "text")) != 0)
		return r;
	r = n == 1 ? jscan_put(b, only) : jscan_put_str(b, d->ptr ? d->ptr : "", d->len);
	if (r != 0 || (r = item_copy(b, "phase", f[F_PHASE])) != 0 ||
		(r = item_copy(b, "memoryCitation", f[F_MEMORY_CITATION])) != 0 ||
		(r = item_copy(b, "delivery", f[F_DELIVERY])) != 0)
		return r;
	return item_copy(b, "questions", f[F_QUESTIONS]);
}

/* Reasoning -> reasoning. */
static int
item_text_reasoning(const struct jspan *f, struct buf *b)
{
	int r;

	if ((r = buf_adds(b, "{\"type\":\"reasoning\"")) != 0 ||
		(r = item_copy(b, "id", f[F_ID])) != 0 ||
		(r = item_array(b, "summary", f[F_SUMMARY_TEXT])) != 0)
		return r;
	return item_array(b, "content", f[F_RAW_CONTENT]);
}

/* The argv of a command joined as upstream shows it; 1 when an element is not a string. */
static int
item_text_command(struct buf *b, struct jspan cmd, struct buf *d)
{
	json_t *argv = json_array();
	struct jscan_it it;
	struct jspan w;
	char *joined;
	int r = 0;

	jscan_arr(&it, cmd);
	while (r == 0 && jscan_arr_next(&it, &w)) {
		const char *word;
		size_t n;

		if (item_view(w, d, &word, &n) != 0)
			r = 1;
		else
			json_array_append_new(argv, json_stringn_nocheck(word, n));
	}
	if (r == 0) {
		joined = item_shell_join(argv);
		r = jscan_put_str(b, joined, strlen(joined));
		free(joined);
	}
	json_decref(argv);
	return r;
}

/* A core Duration {secs, nanos} or a number of ms, as durationMs. */
static int
item_text_duration(struct buf *b, struct jspan d)
{
	struct jspan v;
	long long ms, secs = 0, nanos = 0;

	if (d.p == NULL)
		return buf_adds(b, "null");
	if (jscan_int(d, &ms) == 0)
		return jscan_put(b, d);
	if (d.p[0] != '{')
		return buf_adds(b, "null");
	if (jscan_get(d, "secs", &v) && jscan_int(v, &secs) != 0)
		secs = 0;
	if (jscan_get(d, "nanos", &v) && jscan_int(v, &nanos) != 0)
		nanos = 0;
	/* wrapping, as item_duration_ms does */
	return jscan_put_int(b,
		(long long)((unsigned long long)secs * 1000u +
			(unsigned long long)(nanos / 1000000)));
}

/* commandActions from parsed_cmd, through item_actions_from_core unless it is empty. */
static int
item_text_actions(struct buf *b, struct jspan v)
{
	json_t *parsed, *actions;
	char *s;
	int r;

	if (v.p == NULL || jscan_is(v, "[]"))
		return buf_adds(b, "[]");
	parsed = json_loadb(v.p, (size_t)(v.end - v.p), JSON_DECODE_ANY, NULL);
	actions = item_actions_from_core(parsed);
	s = json_dumps(actions, JSON_COMPACT);
	r = buf_adds(b, s);
	free(s);
	json_decref(actions);
	json_decref(parsed);
	return r;
}

/* CommandExecution -> commandExecution; 1 when the text needs item_from_core. */
static int
item_text_exec(const struct jspan *f, struct buf *b, struct buf *d)
{
	const char *s;
	size_t n;
	int r;

	if ((r = buf_adds(b, "{\"type\":\"commandExecution\"")) != 0 ||
		(r = item_copy(b, "id", f[F_ID])) != 0 ||
		(r = item_copy(b, "pluginId", f[F_PLUGIN_ID])) != 0 ||
		(r = item_copy(b, "scriptPath", f[F_SCRIPT_PATH])) != 0 ||
		(r = item_key(b, "command")) != 0)
		return r;
	if (f[F_COMMAND].p != NULL && f[F_COMMAND].p[0] == '[')
		r = item_text_command(b, f[F_COMMAND], d);
	else
		r = f[F_COMMAND].p != NULL ? jscan_put(b, f[F_COMMAND]) : buf_adds(b, "null");
	if (r != 0 || (r = item_key(b, "cwd")) != 0)
		return r;
	if (item_view(f[F_CWD], d, &s, &n) != 0)
		r = buf_adds(b, "null");
	else if (n >= 7 && memcmp(s, "file://", 7) == 0)
		r = jscan_put_str(b, s + 7, n - 7);
	else
		r = jscan_put_str(b, s, n);
	if (r != 0 || (r = item_copy(b, "processId", f[F_PROCESS_ID])) != 0 ||
		(r = item_camel_member(b, "source", f[F_SOURCE], "agent", d)) != 0 ||
		(r = item_camel_member(b, "status", f[F_STATUS], "completed", d)) != 0 ||
		(r = item_key(b, "commandActions")) != 0 ||
		(r = item_text_actions(b, f[F_PARSED_CMD])) != 0 ||
		(r = item_copy(b, "aggregatedOutput", f[F_AGGREGATED_OUTPUT])) != 0 ||
		(r = item_copy(b, "exitCode", f[F_EXIT_CODE])) != 0 ||
		(r = item_key(b, "durationMs")) != 0)
		return r;
	return item_text_duration(b, f[F_DURATION]);
}

/* `,"key":` and the time, or null. */
static int
item_text_time(struct buf *b, const char *key, const long long *ms)
{
	int r;

	if ((r = item_key(b, key)) != 0)
		return r;
	return ms != NULL ? jscan_put_int(b, *ms) : buf_adds(b, "null");
}

/* The slow path: item_from_core on the parsed text. */
static int
item_text_slow(const char *core, size_t len, const long long *started, const long long *completed,
	struct buf *out, char **id)
{
	json_t *c = json_loadb(core, len, 0, NULL), *item = c ? item_from_core(c) : NULL;
	char *s;
	int r;

	json_decref(c);
	if (item == NULL)
		return -1;
	json_object_set_new(item, "startedAtMs", started ? json_integer(*started) : json_null());
	json_object_set_new(
		item, "completedAtMs", completed ? json_integer(*completed) : json_null());
	/* a variant converted key by key can lose its id ("_id" becomes "id") */
	*id = item_id(item) != NULL ? xstrdup(item_id(item)) : NULL;
	s = json_dumps(item, JSON_COMPACT);
	r = buf_adds(out, s);
	free(s);
	json_decref(item);
	if (r != 0) {
		free(*id);
		*id = NULL;
	}
	return r;
}

int
item_text_from_core(const char *core, size_t len, const long long *started,
	const long long *completed, struct buf *out, char **id)
{
	struct jspan c, f[F_COUNT];
	const char *after;
	struct buf d;
	size_t mark = out->len;
	int r = 1;

	*id = NULL;
	after = jscan_value(core, core + len, &c);
	while (after != NULL && after < core + len &&
		(*after == ' ' || *after == '\t' || *after == '\r' || *after == '\n'))
		after++;
	if (after != core + len || c.p[0] != '{')
		return item_text_slow(core, len, started, completed, out, id);
	jscan_fields(c, item_fields, f);
	if (f[F_TYPE].p == NULL || f[F_ID].p == NULL || f[F_ID].p[0] != '"')
		return item_text_slow(core, len, started, completed, out, id);
	buf_init(&d, ITEM_DECODED_MAX);
	if (jscan_is(f[F_TYPE], "\"UserMessage\""))
		r = item_text_user(f, out);
	else if (jscan_is(f[F_TYPE], "\"AgentMessage\""))
		r = item_text_agent(f, out, &d);
	else if (jscan_is(f[F_TYPE], "\"Reasoning\""))
		r = item_text_reasoning(f, out);
	else if (jscan_is(f[F_TYPE], "\"CommandExecution\""))
		r = item_text_exec(f, out, &d);
	if (r == 0)
		r = item_text_time(out, "startedAtMs", started);
	if (r == 0)
		r = item_text_time(out, "completedAtMs", completed);
	if (r == 0)
		r = buf_addc(out, '}');
	if (r == 0) {
		const char *s;
		size_t n;

		if ((r = item_view(f[F_ID], &d, &s, &n)) == 0)
			*id = xstrndup(s, n);
	}
	buf_free(&d);
	if (r == 0)
		return 0;
	/* Anything the fast path could not write: the reference path decides. */
	buf_truncate(out, mark);
	return item_text_slow(core, len, started, completed, out, id);
}
