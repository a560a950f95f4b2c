/*
 * Hook discovery as upstream's `discover_handlers`: each config layer, lowest precedence first,
 * gives its `hooks.json` (beside the layer's file) then its `[hooks]` table; within a source the
 * events go in upstream's declaration order, then groups, then handlers, and every command
 * handler takes the next display order. A handler runs when enabled and trusted (or managed):
 * trust is `[hooks.state."<key>"] trusted_hash` equal to its current hash, upstream's sha256 of
 * the normalized handler, so a hook trusted through upstream is trusted here and back.
 */
#include <libgen.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hooks_int.h"
#include "hooks_tool.h"
#include "config/config.h"
#include "config/digest.h"
#include "protocol/xmalloc.h"

#define HOOKS_FILE_MAX	     (4u << 20) /* hooks.json read at most */
#define HOOK_TIMEOUT_DEFAULT 600	/* seconds, upstream's */
#define HOOK_SESSION_END_MAX 3		/* SessionEnd hooks are clamped to this */

static const char *const event_names[HOOK_EVENTS][3] = {
	{"PreToolUse", "preToolUse", "pre_tool_use"},
	{"PermissionRequest", "permissionRequest", "permission_request"},
	{"PostToolUse", "postToolUse", "post_tool_use"},
	{"PreCompact", "preCompact", "pre_compact"},
	{"PostCompact", "postCompact", "post_compact"},
	{"SessionStart", "sessionStart", "session_start"},
	{"SessionEnd", "sessionEnd", "session_end"},
	{"UserPromptSubmit", "userPromptSubmit", "user_prompt_submit"},
	{"SubagentStart", "subagentStart", "subagent_start"},
	{"SubagentStop", "subagentStop", "subagent_stop"},
	{"Stop", "stop", "stop"},
};

const char *
hooks_event_config_name(enum hook_event e)
{
	return event_names[e][0];
}

const char *
hooks_event_wire_name(enum hook_event e)
{
	return event_names[e][1];
}

const char *
hooks_event_key_name(enum hook_event e)
{
	return event_names[e][2];
}

/* Upstream ignores the matcher of the events that have nothing to match against. */
static int
hooks_event_has_matcher(enum hook_event e)
{
	return e != HOOK_USER_PROMPT_SUBMIT && e != HOOK_STOP && e != HOOK_SESSION_END;
}

char *
hooks_hash(enum hook_event e, const char *matcher, const char *command, long long timeout,
	int async, const char *status_message)
{
	json_t *handler = json_pack("{s:s, s:s, s:I, s:b}", "type", "command", "command", command,
		"timeout", (json_int_t)timeout, "async", async);
	json_t *id = json_pack("{s:s, s:[o]}", "event_name", event_names[e][2], "hooks", handler);
	char hex[65], *text, *r = NULL;

	/* TOML drops absent fields: only what is set is part of the identity */
	if (status_message != NULL)
		json_object_set_new(handler, "statusMessage", json_string(status_message));
	if (matcher != NULL)
		json_object_set_new(id, "matcher", json_string(matcher));
	text = json_dumps(id, JSON_COMPACT | JSON_SORT_KEYS);
	if (text != NULL && digest_sha256_hex(text, strlen(text), hex) == 0)
		r = xasprintf("sha256:%s", hex);
	free(text);
	json_decref(id);
	return r;
}

int
hooks_matches(const struct hook_handler *h, const char *subject)
{
	regex_t re;
	int r;

	if (subject == NULL || h->matcher == NULL || h->matcher[0] == '\0' ||
		strcmp(h->matcher, "*") == 0)
		return 1;
	/* upstream's tool matchers: names only select by exact name (tools.json: "echo" and
	 * "test" miss mcp__test__echo, "e.ho" finds it) */
	if ((h->event == HOOK_PRE_TOOL_USE || h->event == HOOK_POST_TOOL_USE ||
		    h->event == HOOK_PERMISSION_REQUEST) &&
		(r = hooks_tool_name_matches(h->matcher, subject)) >= 0)
		return r;
	if (regcomp(&re, h->matcher, REG_EXTENDED | REG_NOSUB) != 0)
		return 0;
	r = regexec(&re, subject, 0, NULL, 0) == 0;
	regfree(&re);
	return r;
}

/* Where a layer's hooks come from: its file, source, managed, and the hooks.json folder. */
struct hooks_source {
	char *path;	   /* config.toml (or upstream's synthetic path) */
	char *json_folder; /* where hooks.json may be, or NULL */
	const char *source;
	int managed;
};

static int
hooks_source_of(const json_t *name, struct hooks_source *src)
{
	const char *type = json_string_value(json_object_get(name, "type"));
	const char *file = json_string_value(json_object_get(name, "file"));
	const char *dot = json_string_value(json_object_get(name, "dotCodexFolder"));
	char *copy;

	memset(src, 0, sizeof *src);
	if (type == NULL)
		return -1;
	if ((strcmp(type, "user") == 0 || strcmp(type, "system") == 0) && file != NULL) {
		src->path = xstrdup(file);
		copy = xstrdup(file);
		src->json_folder = xstrdup(dirname(copy));
		free(copy);
		src->source = type[0] == 'u' ? "user" : "system";
		src->managed = type[0] == 's';
		return 0;
	}
	if (strcmp(type, "project") == 0 && dot != NULL) {
		src->path = xasprintf("%s/config.toml", dot);
		src->json_folder = xstrdup(dot);
		src->source = "project";
		return 0;
	}
	if (strcmp(type, "sessionFlags") == 0) {
		src->path = xstrdup("/<session-flags>/config.toml");
		src->source = "sessionFlags";
		return 0;
	}
	return -1;
}

/* A hooks.json's `hooks` table (new reference), or NULL (absent, or a warning). */
static json_t *
hooks_json_read(struct hook_set *s, const char *folder, char **path_out)
{
	char *path = xasprintf("%s/hooks.json", folder);
	json_error_t jerr;
	json_t *doc, *hooks = NULL;
	FILE *f = fopen(path, "re");

	if (f == NULL) {
		free(path);
		return NULL;
	}
	doc = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	fclose(f);
	if (doc == NULL || !json_is_object(doc)) {
		json_array_append_new(s->warnings,
			json_sprintf("failed to parse hooks config %s: %s", path,
				doc == NULL ? jerr.text : "expected an object"));
	} else if (json_object_size(json_object_get(doc, "hooks")) > 0) {
		hooks = json_incref(json_object_get(doc, "hooks"));
	}
	json_decref(doc);
	if (hooks != NULL)
		*path_out = path;
	else
		free(path);
	return hooks;
}

/* Add one command handler: its hooks/list entry, and the handler when it may run. */
static void
hooks_add(struct hook_set *s, const struct hooks_source *src, const json_t *states,
	enum hook_event e, const char *matcher, size_t gi, size_t hi, const json_t *h,
	long long *order)
{
	const char *command = json_string_value(json_object_get(h, "command"));
	const char *status = json_string_value(json_object_get(h, "statusMessage"));
	json_t *t = json_object_get(h, "timeout");
	long long timeout = json_is_integer(t) ? json_integer_value(t) : HOOK_TIMEOUT_DEFAULT;
	int async = json_is_true(json_object_get(h, "async"));
	char *key, *hash;
	const json_t *state;
	const char *trusted, *trust;
	int enabled;

	if (command == NULL || command[strspn(command, " \t\r\n")] == '\0') {
		json_array_append_new(
			s->warnings, json_sprintf("skipping empty hook command in %s", src->path));
		return;
	}
	if (timeout < 1)
		timeout = 1;
	if (e == HOOK_SESSION_END && timeout > HOOK_SESSION_END_MAX) {
		json_array_append_new(s->warnings,
			json_sprintf("clamping SessionEnd hook timeout to %ds in %s",
				HOOK_SESSION_END_MAX, src->path));
		timeout = HOOK_SESSION_END_MAX;
	}
	/* upstream hashes the handler as it runs it (the clamped timeout) */
	hash = hooks_hash(e, matcher, command, timeout, async, status);
	key = xasprintf("%s:%s:%zu:%zu", src->path, event_names[e][2], gi, hi);
	state = json_object_get(states, key);
	enabled = src->managed || !json_is_false(json_object_get(state, "enabled"));
	trusted = json_string_value(json_object_get(state, "trusted_hash"));
	trust = src->managed				     ? "managed"
		: trusted == NULL			     ? "untrusted"
		: hash != NULL && strcmp(trusted, hash) == 0 ? "trusted"
							     : "modified";
	json_array_append_new(s->entries,
		json_pack("{s:s, s:s, s:s, s:s, s:b, s:s?, s:I, s:s?, s:n, s:s, s:s, s:n, s:n, "
			  "s:I, s:b, s:b, s:s, s:s}",
			"key", key, "eventName", event_names[e][1], "handlerType", "command",
			"command", command, "async", async, "matcher", matcher, "timeoutSec",
			(json_int_t)timeout, "statusMessage", status, "additionalContextLimit",
			"sourcePath", src->path, "source", src->source, "pluginId", "environmentId",
			"displayOrder", (json_int_t)*order, "enabled", enabled, "isManaged",
			src->managed, "currentHash", hash != NULL ? hash : "", "trustStatus",
			trust));
	if (enabled && (src->managed || s->bypass || strcmp(trust, "trusted") == 0)) {
		struct hook_handler *x;

		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 8;
			s->h = xrealloc(s->h, s->cap * sizeof *s->h);
		}
		x = &s->h[s->n++];
		memset(x, 0, sizeof *x);
		x->event = e;
		x->matcher = matcher != NULL ? xstrdup(matcher) : NULL;
		x->command = xstrdup(command);
		x->timeout = timeout;
		x->async = async;
		x->status_message = status != NULL ? xstrdup(status) : NULL;
		x->source_path = xstrdup(src->path);
		x->source = src->source;
		x->display_order = *order;
	}
	(*order)++;
	free(key);
	free(hash);
}

/* One source's events (a hooks.json's or a [hooks] table), in upstream's event order. */
static void
hooks_add_events(struct hook_set *s, const struct hooks_source *src, const json_t *events,
	const json_t *states, long long *order)
{
	for (int e = 0; e < HOOK_EVENTS; e++) {
		const json_t *groups = json_object_get(events, event_names[e][0]), *g, *h;
		size_t gi, hi;

		json_array_foreach(groups, gi, g)
		{
			const char *m = json_string_value(json_object_get(g, "matcher"));
			regex_t re;

			if (!hooks_event_has_matcher(e))
				m = NULL;
			if (m != NULL && strcmp(m, "*") != 0 && m[0] != '\0') {
				if (regcomp(&re, m, REG_EXTENDED | REG_NOSUB) != 0) {
					json_array_append_new(s->warnings,
						json_sprintf("invalid matcher \"%s\" in %s", m,
							src->path));
					continue;
				}
				regfree(&re);
			}
			json_array_foreach(json_object_get(g, "hooks"), hi, h)
			{
				const char *type = json_string_value(json_object_get(h, "type"));

				if (type != NULL && strcmp(type, "command") == 0)
					hooks_add(s, src, states, (enum hook_event)e, m, gi, hi, h,
						order);
				else if (type != NULL &&
					(strcmp(type, "prompt") == 0 || strcmp(type, "agent") == 0))
					json_array_append_new(s->warnings,
						json_sprintf("skipping %s hook in %s: %s hooks are "
							     "not supported yet",
							type, src->path, type));
			}
		}
	}
}

/* hooks_discover's bypass_hook_trust for the discovery under way (the loop's thread only) */
static int hooks_bypass_next;

struct hook_set *
hooks_discover_layers(const json_t *layers, const json_t *states)
{
	struct hook_set *s = xcalloc(1, sizeof *s);
	long long order = 0;

	s->refs = 1;
	s->bypass = hooks_bypass_next;
	s->entries = json_array();
	s->warnings = json_array();
	for (size_t i = json_array_size(layers); i-- > 0;) {
		const json_t *l = json_array_get(layers, i);
		const json_t *toml = json_object_get(json_object_get(l, "config"), "hooks");
		struct hooks_source src;
		json_t *fromjson = NULL;
		char *json_path = NULL;

		if (json_object_get(l, "disabledReason") != NULL ||
			hooks_source_of(json_object_get(l, "name"), &src) != 0)
			continue;
		if (src.json_folder != NULL)
			fromjson = hooks_json_read(s, src.json_folder, &json_path);
		if (fromjson != NULL) {
			struct hooks_source js = src;

			js.path = json_path;
			hooks_add_events(s, &js, fromjson, states, &order);
		}
		hooks_add_events(s, &src, toml, states, &order);
		json_decref(fromjson);
		free(json_path);
		free(src.path);
		free(src.json_folder);
	}
	return s;
}

struct hook_set *
hooks_discover(const struct config *c, int bypass)
{
	char *cause = NULL;
	json_t *r = c != NULL ? config_read_result(c, 1, &cause) : NULL;
	json_t *cfg = json_object_get(r, "config");
	struct hook_set *s;

	free(cause);
	/* upstream's session flag: enabled hooks run without their trust (still listed as is) */
	hooks_bypass_next = bypass || json_is_true(json_object_get(cfg, "bypass_hook_trust"));
	s = hooks_discover_layers(json_object_get(r, "layers"),
		json_object_get(json_object_get(cfg, "hooks"), "state"));
	hooks_bypass_next = 0;
	json_decref(r);
	return s;
}

struct hook_set *
hooks_ref(struct hook_set *s)
{
	if (s != NULL)
		s->refs++;
	return s;
}

void
hooks_unref(struct hook_set *s)
{
	if (s == NULL || --s->refs > 0)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free(s->h[i].matcher);
		free(s->h[i].command);
		free(s->h[i].status_message);
		free(s->h[i].source_path);
	}
	free(s->h);
	json_decref(s->entries);
	json_decref(s->warnings);
	free(s);
}

json_t *
hooks_list_entries(const struct hook_set *s)
{
	return json_deep_copy(s->entries);
}

json_t *
hooks_list_warnings(const struct hook_set *s)
{
	return json_deep_copy(s->warnings);
}

unsigned
hooks_count(const struct hook_set *s, enum hook_event e)
{
	unsigned n = 0;

	for (size_t i = 0; s != NULL && i < s->n; i++)
		n += s->h[i].event == e;
	return n;
}
