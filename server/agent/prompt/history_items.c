/*
 * The history's rules for rollout records (history_items.h): what is read back, what is
 * context sent anew by every request (developer messages, the environment context, AGENTS.md,
 * but not a collaboration mode's message: that is history), and a compaction's replacement.
 */
#include <string.h>

#include "history_items.h"
#include "protocol/buf.h"

int
history_items_wanted(const char *type, const char *ptype)
{
	(void)ptype;
	return strcmp(type, "response_item") == 0 || strcmp(type, "compacted") == 0 ||
		strcmp(type, "session_meta") == 0;
}

int
history_items_is_context(const json_t *item)
{
	static const char *const prefixes[] = {"<environment_context>", "# AGENTS.md instructions",
		"<user_instructions>", "<skills_instructions>", "<INSTRUCTIONS>", NULL};
	const char *role = json_string_value(json_object_get(item, "role"));
	const char *text;

	if (role == NULL)
		return 0;
	text = json_string_value(
		json_object_get(json_array_get(json_object_get(item, "content"), 0), "text"));
	/* a collaboration mode's message is history: sent once, when the mode was selected */
	if (strcmp(role, "developer") == 0 && text != NULL &&
		strncmp(text, "<collaboration_mode>", 20) == 0)
		return 0;
	if (strcmp(role, "developer") == 0 || strcmp(role, "system") == 0)
		return 1;
	if (strcmp(role, "user") != 0)
		return 0;
	for (const char *const *p = prefixes; text != NULL && *p != NULL; p++)
		if (strncmp(text, *p, strlen(*p)) == 0)
			return 1;
	return 0;
}

void
history_items_compacted(json_t *items, const json_t *payload)
{
	json_t *repl = json_object_get(payload, "replacement_history"), *kept, *it;
	const char *msg = json_string_value(json_object_get(payload, "message"));
	size_t i;

	kept = json_array();
	if (json_is_array(repl)) {
		json_array_foreach(repl, i, it) if (!history_items_is_context(it))
			json_array_append(kept, it);
	} else {
		/* an old record without its replacement: the user's messages and the summary */
		json_array_foreach(items, i,
			it) if (strcmp(json_string_value(json_object_get(it, "role")) ?: "",
					"user") == 0) json_array_append(kept, it);
		if (msg != NULL)
			json_array_append_new(kept,
				json_pack("{s:s, s:s, s:[{s:s, s:s}]}", "type", "message", "role",
					"user", "content", "type", "input_text", "text", msg));
	}
	json_array_clear(items);
	json_array_extend(items, kept);
	json_decref(kept);
}

void
history_items_compact_keep(const json_t *history, size_t max, json_t *kept)
{
	size_t i, n = json_array_size(kept), bytes = 0;
	json_t *it, *part;

	for (i = json_array_size(history); i-- > 0;) {
		it = json_array_get(history, i);
		if (strcmp(json_string_value(json_object_get(it, "role")) ?: "", "user") != 0)
			continue;
		part = json_array_get(json_object_get(it, "content"), 0);
		bytes += strlen(json_string_value(json_object_get(part, "text")) ?: "");
		if (bytes > max && json_array_size(kept) > n)
			break;
		json_array_insert(kept, n, it);
	}
}

char *
history_items_summary(const json_t *response_items, size_t max)
{
	struct buf b;
	const json_t *it, *part;
	size_t i, j;

	buf_init(&b, max);
	json_array_foreach(response_items, i, it)
	{
		if (strcmp(json_string_value(json_object_get(it, "type")) ?: "", "message") != 0)
			continue;
		json_array_foreach(json_object_get(it, "content"), j, part)
			buf_adds(&b, json_string_value(json_object_get(part, "text")) ?: "");
	}
	return buf_steal(&b, NULL);
}
