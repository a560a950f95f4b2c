/*
 * Core <-> v2 ThreadItem conversion (item.h). The field orders follow what upstream 0.169
 * serialises, so a re-encoded item reads the same as upstream's answer.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
#include "item.h"
#include "protocol/xmalloc.h"

#define ITEM_TEXT_MAX (64u << 20)

/* A member or JSON null (new reference). */
static json_t *
item_or_null(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return v != NULL ? json_incref(v) : json_null();
}

/* A string member or NULL. */
static const char *
item_str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *
item_id(json_t *item)
{
	return item_str(item, "id");
}

/* snake_case -> camelCase. */
char *
item_camel_n(const char *s, size_t n)
{
	char *out = xmalloc(n + 1), *o = out;
	int up = 0;

	for (const char *end = s + n; s < end; s++) {
		if (*s == '_') {
			up = o != out;
			continue;
		}
		*o++ = up ? (char)toupper((unsigned char)*s) : *s;
		up = 0;
	}
	*o = '\0';
	return out;
}

char *
item_camel(const char *s)
{
	return item_camel_n(s, strlen(s));
}

/* camelCase (or PascalCase) -> snake_case. */
char *
item_snake(const char *s)
{
	char *out = xmalloc(2 * strlen(s) + 1), *o = out;

	for (const char *p = s; *p != '\0'; p++) {
		if (isupper((unsigned char)*p)) {
			if (p != s)
				*o++ = '_';
			*o++ = (char)tolower((unsigned char)*p);
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return out;
}

/* A string value snake -> camel ("unified_exec_startup" -> "unifiedExecStartup"). */
static json_t *
item_camel_value(json_t *v, const char *dflt)
{
	char *c;
	json_t *out;

	if (!json_is_string(v))
		return dflt != NULL ? json_string(dflt) : json_null();
	c = item_camel(json_string_value(v));
	out = json_string(c);
	free(c);
	return out;
}

/* A string value camel -> snake. */
static json_t *
item_snake_value(json_t *v)
{
	char *c;
	json_t *out;

	if (!json_is_string(v))
		return json_incref(v);
	c = item_snake(json_string_value(v));
	out = json_string(c);
	free(c);
	return out;
}

/* Characters a word can hold and stay unquoted. */
static int
item_shell_safe(unsigned char c)
{
	return isalnum(c) || strchr("_@%+=:,./-", c) != NULL;
}

/* shlex-style join. */
char *
item_shell_join(json_t *argv)
{
	struct buf b;
	size_t i;
	json_t *a;

	buf_init(&b, ITEM_TEXT_MAX);
	json_array_foreach(argv, i, a)
	{
		const char *s = json_is_string(a) ? json_string_value(a) : "";
		int safe = *s != '\0';

		for (const char *p = s; *p != '\0' && safe; p++)
			safe = item_shell_safe((unsigned char)*p);
		if (i > 0)
			buf_addc(&b, ' ');
		if (safe) {
			buf_adds(&b, s);
			continue;
		}
		buf_addc(&b, '\'');
		for (const char *p = s; *p != '\0'; p++) {
			if (*p == '\'')
				buf_adds(&b, "'\\''");
			else
				buf_addc(&b, *p);
		}
		buf_addc(&b, '\'');
	}
	return buf_steal(&b, NULL);
}

/* POSIX-shell word splitting of a joined command (quotes and backslashes; nothing expanded). */
json_t *
item_shell_split(const char *cmd)
{
	json_t *argv = json_array();
	struct buf w;
	int inword = 0;
	const char *p = cmd;

	buf_init(&w, ITEM_TEXT_MAX);
	for (;;) {
		char c = *p;

		if (c == '\0' || c == ' ' || c == '\t' || c == '\n') {
			if (inword)
				json_array_append_new(
					argv, json_stringn(w.ptr ? w.ptr : "", w.len));
			buf_reset(&w);
			inword = 0;
			if (c == '\0')
				break;
			p++;
			continue;
		}
		inword = 1;
		if (c == '\'') {
			const char *end = strchr(p + 1, '\'');

			if (end == NULL)
				goto bad;
			buf_add(&w, p + 1, (size_t)(end - p - 1));
			p = end + 1;
		} else if (c == '"') {
			for (p++; *p != '"'; p++) {
				if (*p == '\0')
					goto bad;
				if (*p == '\\' && p[1] != '\0' && strchr("\"\\$`\n", p[1]) != NULL)
					p++;
				buf_addc(&w, *p);
			}
			p++;
		} else if (c == '\\' && p[1] != '\0') {
			buf_addc(&w, p[1]);
			p += 2;
		} else {
			buf_addc(&w, c);
			p++;
		}
	}
	buf_free(&w);
	return argv;
bad:
	buf_free(&w);
	json_decref(argv);
	return NULL;
}

/* Every top-level key renamed, values kept; type given. */
static json_t *
item_rekey(json_t *src, const char *type, char *(*rename)(const char *))
{
	json_t *out = json_object(), *v;
	const char *k;

	json_object_set_new(out, "type", json_string(type));
	json_object_foreach(src, k, v)
	{
		char *nk;

		if (strcmp(k, "type") == 0)
			continue;
		nk = rename(k);
		json_object_set(out, nk, v);
		free(nk);
	}
	return out;
}

/* Core parsed_cmd entries -> v2 commandActions. */
json_t *
item_actions_from_core(json_t *parsed)
{
	json_t *out = json_array(), *a;
	size_t i;

	json_array_foreach(parsed, i, a)
	{
		json_t *o = json_object();
		json_t *type = item_camel_value(json_object_get(a, "type"), "unknown");

		json_object_set_new(o, "type", type);
		json_object_set_new(o, "command", item_or_null(a, "cmd"));
		if (json_object_get(a, "name") != NULL)
			json_object_set_new(o, "name", item_or_null(a, "name"));
		if (json_object_get(a, "query") != NULL)
			json_object_set_new(o, "query", item_or_null(a, "query"));
		if (json_object_get(a, "path") != NULL)
			json_object_set_new(o, "path", item_or_null(a, "path"));
		json_array_append_new(out, o);
	}
	return out;
}

/* A core Duration {secs, nanos} (or a number of ms) in milliseconds, or JSON null. */
static json_t *
item_duration_ms(json_t *d)
{
	if (json_is_integer(d))
		return json_incref(d);
	if (!json_is_object(d))
		return json_null();
	/* unsigned: a huge secs wraps instead of overflowing */
	return json_integer((
		json_int_t)((unsigned long long)json_integer_value(json_object_get(d, "secs")) *
			1000u +
		(unsigned long long)(json_integer_value(json_object_get(d, "nanos")) / 1000000)));
}

/* Strip the file:// upstream puts in front of some paths. */
static json_t *
item_path_value(json_t *v)
{
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;

	if (s == NULL)
		return json_null();
	if (strncmp(s, "file://", 7) == 0)
		return json_string(s + 7);
	return json_incref(v);
}

/* CommandExecution -> commandExecution. */
static json_t *
item_command_from_core(json_t *c)
{
	json_t *o = json_object(), *cmd = json_object_get(c, "command");

	json_object_set_new(o, "type", json_string("commandExecution"));
	json_object_set_new(o, "id", item_or_null(c, "id"));
	json_object_set_new(o, "pluginId", item_or_null(c, "plugin_id"));
	json_object_set_new(o, "scriptPath", item_or_null(c, "script_path"));
	if (json_is_array(cmd)) {
		char *joined = item_shell_join(cmd);

		json_object_set_new(o, "command", json_string(joined));
		free(joined);
	} else {
		json_object_set_new(o, "command", item_or_null(c, "command"));
	}
	json_object_set_new(o, "cwd", item_path_value(json_object_get(c, "cwd")));
	json_object_set_new(o, "processId", item_or_null(c, "process_id"));
	json_object_set_new(o, "source", item_camel_value(json_object_get(c, "source"), "agent"));
	json_object_set_new(
		o, "status", item_camel_value(json_object_get(c, "status"), "completed"));
	json_object_set_new(
		o, "commandActions", item_actions_from_core(json_object_get(c, "parsed_cmd")));
	json_object_set_new(o, "aggregatedOutput", item_or_null(c, "aggregated_output"));
	json_object_set_new(o, "exitCode", item_or_null(c, "exit_code"));
	json_object_set_new(o, "durationMs", item_duration_ms(json_object_get(c, "duration")));
	return o;
}

/* Order changes by path, as upstream does. */
static int
item_change_cmp(const void *a, const void *b)
{
	const char *pa = item_str(*(json_t *const *)a, "path");
	const char *pb = item_str(*(json_t *const *)b, "path");

	return strcmp(pa ? pa : "", pb ? pb : "");
}

/* One core FileChange {type, content | unified_diff, move_path} -> {path, kind, diff}. */
static json_t *
item_change_from_core(const char *path, json_t *ch)
{
	json_t *o = json_object(), *kind = json_object();
	const char *type = item_str(ch, "type");
	const char *move = item_str(ch, "move_path");

	json_object_set_new(o, "path", json_string(path));
	json_object_set_new(kind, "type", json_string(type ? type : "update"));
	if (type != NULL && strcmp(type, "update") == 0) {
		const char *diff = item_str(ch, "unified_diff");

		json_object_set_new(kind, "move_path", move ? json_string(move) : json_null());
		if (move != NULL) {
			char *d = xasprintf("%s\n\nMoved to: %s", diff ? diff : "", move);

			json_object_set_new(o, "diff", json_string(d));
			free(d);
		} else {
			json_object_set_new(o, "diff", json_string(diff ? diff : ""));
		}
	} else {
		const char *content = item_str(ch, "content");

		json_object_set_new(o, "diff", json_string(content ? content : ""));
	}
	json_object_set_new(o, "kind", kind);
	/* kind before diff, as upstream prints it */
	json_t *diff = json_incref(json_object_get(o, "diff"));
	json_object_del(o, "diff");
	json_object_set_new(o, "diff", diff);
	return o;
}

/* FileChange -> fileChange. */
static json_t *
item_patch_from_core(json_t *c)
{
	json_t *o = json_object(), *changes = json_object_get(c, "changes"), *list = json_array();
	json_t *v;
	const char *path;
	size_t n;

	if (json_is_object(changes)) {
		json_object_foreach(changes, path, v)
			json_array_append_new(list, item_change_from_core(path, v));
	} else if (json_is_array(changes)) {
		json_decref(list);
		list = json_deep_copy(changes);
	}
	n = json_array_size(list);
	if (n > 1) {
		json_t **tmp = xmalloc(n * sizeof *tmp);

		for (size_t i = 0; i < n; i++)
			tmp[i] = json_incref(json_array_get(list, i));
		qsort(tmp, n, sizeof *tmp, item_change_cmp);
		json_array_clear(list);
		for (size_t i = 0; i < n; i++)
			json_array_append_new(list, tmp[i]);
		free(tmp);
	}
	json_object_set_new(o, "type", json_string("fileChange"));
	json_object_set_new(o, "id", item_or_null(c, "id"));
	json_object_set_new(o, "changes", list);
	json_object_set_new(
		o, "status", item_camel_value(json_object_get(c, "status"), "completed"));
	return o;
}

/* AgentMessage -> agentMessage (text parts joined). */
static json_t *
item_agent_from_core(json_t *c)
{
	json_t *o = json_object(), *part;
	struct buf b;
	size_t i;

	buf_init(&b, ITEM_TEXT_MAX);
	json_array_foreach(json_object_get(c, "content"), i, part)
	{
		const char *t = item_str(part, "text");

		if (t != NULL)
			buf_adds(&b, t);
	}
	json_object_set_new(o, "type", json_string("agentMessage"));
	json_object_set_new(o, "moderation", item_or_null(c, "moderation"));
	json_object_set_new(o, "id", item_or_null(c, "id"));
	json_object_set_new(o, "text", json_stringn(b.ptr ? b.ptr : "", b.len));
	json_object_set_new(o, "phase", item_or_null(c, "phase"));
	json_object_set_new(o, "memoryCitation", item_or_null(c, "memory_citation"));
	json_object_set_new(o, "delivery", item_or_null(c, "delivery"));
	json_object_set_new(o, "questions", item_or_null(c, "questions"));
	buf_free(&b);
	return o;
}

/* Core TurnItem -> v2 ThreadItem. */
json_t *
item_from_core(json_t *c)
{
	const char *type = item_str(c, "type");
	json_t *o;

	if (type == NULL || item_id(c) == NULL)
		return NULL;
	if (strcmp(type, "UserMessage") == 0) {
		o = json_object();
		json_object_set_new(o, "type", json_string("userMessage"));
		json_object_set_new(o, "id", item_or_null(c, "id"));
		json_object_set_new(o, "clientId", item_or_null(c, "client_id"));
		json_object_set_new(o, "content",
			json_is_array(json_object_get(c, "content")) ? item_or_null(c, "content")
								     : json_array());
		return o;
	}
	if (strcmp(type, "AgentMessage") == 0)
		return item_agent_from_core(c);
	if (strcmp(type, "Reasoning") == 0) {
		json_t *summary = json_object_get(c, "summary_text");
		json_t *content = json_object_get(c, "raw_content");

		o = json_object();
		json_object_set_new(o, "type", json_string("reasoning"));
		json_object_set_new(o, "id", item_or_null(c, "id"));
		json_object_set_new(
			o, "summary", json_is_array(summary) ? json_incref(summary) : json_array());
		json_object_set_new(
			o, "content", json_is_array(content) ? json_incref(content) : json_array());
		return o;
	}
	if (strcmp(type, "CommandExecution") == 0)
		return item_command_from_core(c);
	if (strcmp(type, "FileChange") == 0)
		return item_patch_from_core(c);
	if (strcmp(type, "Extension") == 0 &&
		strcmp(item_str(c, "kind") ?: "", "clock.sleep") == 0) /* recorded, 0.169 */
		return json_pack("{s:s, s:o, s:o}", "type", "sleep", "id", item_or_null(c, "id"),
			"durationMs", item_or_null(c, "durationMs"));
	/* Plan, WebSearch, McpToolCall, ContextCompaction, ...: key by key. */
	char *t = xstrdup(type);
	t[0] = (char)tolower((unsigned char)t[0]);
	o = item_rekey(c, t, item_camel);
	free(t);
	if (strcmp(type, "ImageView") == 0) /* its path as a file:// URL (recorded, 0.169) */
		json_object_set_new(o, "path", item_path_value(json_object_get(c, "path")));
	return o;
}

/* v2 commandActions -> core parsed_cmd. */
static json_t *
item_actions_to_core(json_t *actions)
{
	json_t *out = json_array(), *a;
	size_t i;

	json_array_foreach(actions, i, a)
	{
		json_t *o = json_object();

		json_object_set_new(o, "type", item_snake_value(json_object_get(a, "type")));
		json_object_set_new(o, "cmd", item_or_null(a, "command"));
		if (json_object_get(a, "name") != NULL)
			json_object_set_new(o, "name", item_or_null(a, "name"));
		if (json_object_get(a, "query") != NULL)
			json_object_set_new(o, "query", item_or_null(a, "query"));
		if (json_object_get(a, "path") != NULL)
			json_object_set_new(o, "path", item_or_null(a, "path"));
		json_array_append_new(out, o);
	}
	return out;
}

/* commandExecution -> CommandExecution, in upstream's field order. */
static json_t *
item_command_to_core(json_t *v)
{
	json_t *o = json_object(), *cmd = json_object_get(v, "command");
	json_t *dur = json_object_get(v, "durationMs");
	const char *cwd = item_str(v, "cwd");

	json_object_set_new(o, "type", json_string("CommandExecution"));
	json_object_set_new(o, "id", item_or_null(v, "id"));
	json_object_set_new(o, "process_id", item_or_null(v, "processId"));
	if (json_is_string(cmd)) {
		json_t *argv = item_shell_split(json_string_value(cmd));

		if (argv == NULL) {
			argv = json_array();
			json_array_append(argv, cmd);
		}
		json_object_set_new(o, "command", argv);
	} else {
		json_object_set_new(o, "command", item_or_null(v, "command"));
	}
	if (cwd != NULL) {
		char *u = xasprintf("file://%s", cwd);

		json_object_set_new(o, "cwd", json_string(u));
		free(u);
	} else {
		json_object_set_new(o, "cwd", json_null());
	}
	json_object_set_new(
		o, "parsed_cmd", item_actions_to_core(json_object_get(v, "commandActions")));
	json_object_set_new(o, "source", item_snake_value(json_object_get(v, "source")));
	json_object_set_new(o, "status", item_snake_value(json_object_get(v, "status")));
	json_object_set_new(o, "aggregated_output", item_or_null(v, "aggregatedOutput"));
	json_object_set_new(o, "exit_code", item_or_null(v, "exitCode"));
	if (json_is_integer(dur)) {
		json_int_t ms = json_integer_value(dur);

		json_object_set_new(o, "duration",
			json_pack("{s:I,s:I}", "secs", (json_int_t)(ms / 1000), "nanos",
				(json_int_t)(ms % 1000) * 1000000));
	} else {
		json_object_set_new(o, "duration", json_null());
	}
	return o;
}

/* fileChange -> FileChange with upstream's path-keyed map. */
static json_t *
item_patch_to_core(json_t *v)
{
	json_t *o = json_object(), *map = json_object(), *ch;
	size_t i;

	json_array_foreach(json_object_get(v, "changes"), i, ch)
	{
		const char *path = item_str(ch, "path");
		json_t *kind = json_object_get(ch, "kind");
		const char *type = item_str(kind, "type");
		json_t *c = json_object();

		if (path == NULL)
			continue;
		json_object_set_new(c, "type", json_string(type ? type : "update"));
		if (type != NULL && strcmp(type, "update") == 0) {
			json_object_set_new(c, "unified_diff", item_or_null(ch, "diff"));
			json_object_set_new(c, "move_path", item_or_null(kind, "move_path"));
		} else {
			json_object_set_new(c, "content", item_or_null(ch, "diff"));
		}
		json_object_set_new(map, path, c);
	}
	json_object_set_new(o, "type", json_string("FileChange"));
	json_object_set_new(o, "id", item_or_null(v, "id"));
	json_object_set_new(o, "changes", map);
	json_object_set_new(o, "status", item_snake_value(json_object_get(v, "status")));
	return o;
}

/* v2 ThreadItem -> core TurnItem. */
json_t *
item_to_core(json_t *v)
{
	const char *type = item_str(v, "type");
	json_t *o;

	if (type == NULL || item_id(v) == NULL)
		return NULL;
	if (strcmp(type, "userMessage") == 0) {
		o = json_object();
		json_object_set_new(o, "type", json_string("UserMessage"));
		json_object_set_new(o, "id", item_or_null(v, "id"));
		if (json_is_string(json_object_get(v, "clientId")))
			json_object_set_new(o, "client_id", item_or_null(v, "clientId"));
		json_object_set_new(o, "content", item_or_null(v, "content"));
		return o;
	}
	if (strcmp(type, "agentMessage") == 0) {
		o = json_object();
		json_object_set_new(o, "type", json_string("AgentMessage"));
		json_object_set_new(o, "id", item_or_null(v, "id"));
		json_object_set_new(o, "content",
			json_pack("[{s:s,s:s}]", "type", "Text", "text",
				item_str(v, "text") != NULL ? item_str(v, "text") : ""));
		if (json_is_string(json_object_get(v, "phase")))
			json_object_set_new(o, "phase", item_or_null(v, "phase"));
		if (json_is_object(json_object_get(v, "memoryCitation")))
			json_object_set_new(
				o, "memory_citation", item_or_null(v, "memoryCitation"));
		return o;
	}
	if (strcmp(type, "reasoning") == 0) {
		o = json_object();
		json_object_set_new(o, "type", json_string("Reasoning"));
		json_object_set_new(o, "id", item_or_null(v, "id"));
		json_object_set_new(o, "summary_text",
			json_is_array(json_object_get(v, "summary")) ? item_or_null(v, "summary")
								     : json_array());
		json_object_set_new(o, "raw_content",
			json_is_array(json_object_get(v, "content")) ? item_or_null(v, "content")
								     : json_array());
		return o;
	}
	if (strcmp(type, "commandExecution") == 0)
		return item_command_to_core(v);
	if (strcmp(type, "fileChange") == 0)
		return item_patch_to_core(v);
	if (strcmp(type, "sleep") == 0) /* upstream's extension item (recorded, 0.169) */
		return json_pack("{s:s, s:s, s:o, s:o}", "type", "Extension", "kind", "clock.sleep",
			"id", item_or_null(v, "id"), "durationMs", item_or_null(v, "durationMs"));
	char *t = xstrdup(type);
	t[0] = (char)toupper((unsigned char)t[0]);
	o = item_rekey(v, t, item_snake);
	free(t);
	if (strcmp(type, "imageView") == 0 && item_str(v, "path") != NULL)
		json_object_set_new(o, "path", json_sprintf("file://%s", item_str(v, "path")));
	/* Timestamps live beside the item in the event, not inside it. */
	json_object_del(o, "started_at_ms");
	json_object_del(o, "completed_at_ms");
	return o;
}
