/*
 * Older rollouts (history.h): before 0.169's item_completed events, items were rebuilt from
 * separate events: user_message opened a turn, agent_message / agent_reasoning added items,
 * exec_command_* and patch_apply_* carried tool calls. Items without ids of their own get
 * upstream's "item-N" ids, numbered in file order.
 */
#include <stdio.h>
#include <string.h>

#include "history_int.h"
#include "item.h"
#include "protocol/xmalloc.h"

/* Old user_message: a new implicit turn unless an explicit one is open. */
void
history_legacy_user_message(struct history *h, const struct rollout_rec *rec)
{
	json_t *p = rec->payload, *item, *content, *img;
	const char *msg = json_string_value(json_object_get(p, "message"));
	size_t i;

	if (h->legacy_done)
		return;
	content = json_array();
	if (h->cur != NULL && !h->explicit_turn)
		history_close(h);
	history_ensure(h, rec);
	if (msg != NULL && msg[strspn(msg, " \t\r\n")] != '\0') {
		json_t *te = json_object_get(p, "text_elements");

		json_array_append_new(content,
			json_pack("{s:s,s:s,s:o}", "type", "text", "text", msg, "text_elements",
				json_is_array(te) ? json_incref(te) : json_array()));
	}
	json_array_foreach(json_object_get(p, "images"), i, img)
		json_array_append_new(content, json_pack("{s:s,s:O}", "type", "image", "url", img));
	json_array_foreach(json_object_get(p, "local_images"), i, img) json_array_append_new(
		content, json_pack("{s:s,s:O}", "type", "localImage", "path", img));
	item = json_pack("{s:s,s:o,s:n,s:o}", "type", "userMessage", "id", history_next_id(h),
		"clientId", "content", content);
	history_upsert(h, h->cur, item);
}

/* Old agent_message. */
void
history_legacy_agent_message(struct history *h, const struct rollout_rec *rec)
{
	const char *msg = json_string_value(json_object_get(rec->payload, "message"));
	json_t *phase = json_object_get(rec->payload, "phase");

	if (h->legacy_done || msg == NULL || *msg == '\0')
		return;
	history_upsert(h, history_ensure(h, rec),
		json_pack("{s:s,s:n,s:o,s:s,s:o,s:n,s:n,s:n}", "type", "agentMessage", "moderation",
			"id", history_next_id(h), "text", msg, "phase",
			phase != NULL ? json_incref(phase) : json_null(), "memoryCitation",
			"delivery", "questions"));
}

/* Old agent_reasoning(_raw_content): extend the last reasoning item or start one. */
void
history_legacy_reasoning(struct history *h, const struct rollout_rec *rec, const char *field)
{
	const char *text = json_string_value(json_object_get(rec->payload, "text"));
	json_t *t, *items, *last;

	if (h->legacy_done || text == NULL || *text == '\0')
		return;
	t = history_ensure(h, rec);
	items = json_object_get(t, "items");
	last = json_array_size(items) > 0 ? history_item_obj(items, json_array_size(items) - 1)
					  : NULL;
	if (last != NULL &&
		strcmp(json_string_value(json_object_get(last, "type")), "reasoning") == 0) {
		json_array_append_new(json_object_get(last, field), json_string(text));
		return;
	}
	json_t *item = json_pack("{s:s,s:o,s:[],s:[]}", "type", "reasoning", "id",
		history_next_id(h), "summary", "content");
	json_array_append_new(json_object_get(item, field), json_string(text));
	history_upsert(h, t, item);
}

/* Old exec_command_begin/end and patch_apply_begin/end: rebuilt as canonical items. */
void
history_legacy_tool_event(struct history *h, const struct rollout_rec *rec)
{
	json_t *p = rec->payload, *core = json_object(), *item, *t;
	const char *pt = rec->ptype, *turn_id = json_string_value(json_object_get(p, "turn_id"));
	int exec = strncmp(pt, "exec_", 5) == 0, end = strstr(pt, "_end") != NULL;

	json_object_set_new(core, "type", json_string(exec ? "CommandExecution" : "FileChange"));
	json_object_set(core, "id", json_object_get(p, "call_id"));
	if (exec) {
		const char *keys[] = {"process_id", "command", "cwd", "parsed_cmd", "source",
			"aggregated_output", "exit_code", "duration"};

		for (size_t i = 0; i < nitems(keys); i++)
			if (json_object_get(p, keys[i]) != NULL)
				json_object_set(core, keys[i], json_object_get(p, keys[i]));
	} else {
		json_object_set(core, "changes", json_object_get(p, "changes"));
	}
	json_t *status = json_object_get(p, "status");
	if (!end)
		json_object_set_new(core, "status", json_string("in_progress"));
	else if (json_is_string(status))
		json_object_set(core, "status", status);
	else if (json_is_boolean(json_object_get(p, "success")))
		json_object_set_new(core, "status",
			json_string(json_is_true(json_object_get(p, "success")) ? "completed"
										: "failed"));
	else
		json_object_set_new(core, "status",
			json_string(json_integer_value(json_object_get(p, "exit_code")) == 0
					? "completed"
					: "failed"));
	item = item_from_core(core);
	json_decref(core);
	if (item == NULL)
		return;
	t = turn_id != NULL && *turn_id != '\0' ? history_find(h, turn_id) : NULL;
	history_upsert(h, t != NULL ? t : history_ensure(h, rec), item);
}

/* Smaller item kinds from old events. */
void
history_legacy_misc(struct history *h, const struct rollout_rec *rec)
{
	json_t *p = rec->payload, *item = NULL;
	const char *pt = rec->ptype;

	if (strcmp(pt, "web_search_end") == 0) {
		item = json_pack("{s:s,s:o,s:o,s:o}", "type", "webSearch", "id",
			history_get(p, "call_id", json_null()), "query",
			history_get(p, "query", json_string("")), "action",
			history_get(p, "action", json_null()));
	} else if (strcmp(pt, "view_image_tool_call") == 0) {
		item = json_pack("{s:s,s:o,s:o}", "type", "imageView", "id",
			history_get(p, "call_id", json_null()), "path",
			history_get(p, "path", json_string("")));
	} else if (strcmp(pt, "context_compacted") == 0) {
		item = json_pack(
			"{s:s,s:o}", "type", "contextCompaction", "id", history_next_id(h));
	} else if (strcmp(pt, "entered_review_mode") == 0 ||
		strcmp(pt, "exited_review_mode") == 0) {
		int entered = pt[0] == 'e' && pt[1] == 'n';
		const char *hint = json_string_value(json_object_get(p, "user_facing_hint"));

		item = json_pack("{s:s,s:o,s:s}", "type",
			entered ? "enteredReviewMode" : "exitedReviewMode", "id",
			history_next_id(h), "review",
			hint != NULL ? hint
				     : (entered ? "Review requested."
						: "Reviewer failed to output a response."));
	}
	if (item != NULL)
		history_upsert(h, history_ensure(h, rec), item);
}
