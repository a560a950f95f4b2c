/*
 * The turn builder (history.h). State: the finished turns (unless a sink takes them) and the
 * open turn with an id -> index map of its items, so an upsert (an item that starts, then
 * completes) is a hash lookup, not a scan.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "history_int.h"
#include "item.h"
#include "protocol/xmalloc.h"
#include "thread/rollout/rollout.h"
#include "thread/rollout/rollout_summary.h"
#include "thread/rollout/rollout_writer.h"
#include "thread/uuidv7.h"

struct history *
history_new(void)
{
	struct history *h = xcalloc(1, sizeof *h);

	h->turns = json_array();
	h->next_item = 1;
	/* history_text.c's scratch; a v2 item may be longer than its record (escapes, argv) */
	buf_init(&h->item, 2 * ROLLOUT_LINE_MAX);
	buf_init(&h->turn_id, ROLLOUT_LINE_MAX);
	buf_init(&h->tmp, ROLLOUT_LINE_MAX);
	return h;
}

void
history_sink(struct history *h, history_sink_fn fn, void *arg)
{
	h->sink = fn;
	h->sink_arg = arg;
}

void
history_ignore_rollbacks(struct history *h)
{
	h->ignore_rollbacks = 1;
}

/* Record types the builder reads. */
int
history_filter(const char *type, const char *ptype)
{
	static const char *const events[] = {"task_started", "task_complete", "turn_aborted",
		"item_completed", "item_started", "user_message", "agent_message",
		"agent_reasoning", "agent_reasoning_raw_content", "exec_command_begin",
		"exec_command_end", "patch_apply_begin", "patch_apply_end", "web_search_end",
		"view_image_tool_call", "context_compacted", "error", "thread_rolled_back",
		"entered_review_mode", "exited_review_mode"};

	if (strcmp(type, "compacted") == 0)
		return 1;
	if (strcmp(type, "event_msg") != 0)
		return 0;
	for (size_t i = 0; i < nitems(events); i++)
		if (strcmp(ptype, events[i]) == 0)
			return 1;
	return 0;
}

/* task_started always opens a turn; user_message too for rollouts without task_started. */
int
history_is_boundary(const char *type, const char *ptype)
{
	return strcmp(type, "event_msg") == 0 &&
		(strcmp(ptype, "task_started") == 0 || strcmp(ptype, "user_message") == 0);
}

/* A UUIDv7-shaped id made only of (ms, offset): the same turn gets the same id every read. */
void
history_synth_id(int64_t ms, int64_t off, char out[37])
{
	uint64_t o = (uint64_t)off;

	snprintf(out, 37, "%08llx-%04llx-7%03llx-8%03llx-%012llx",
		(unsigned long long)((uint64_t)ms >> 16) & 0xffffffffull,
		(unsigned long long)ms & 0xffff, (unsigned long long)(o >> 60) & 0xfff,
		(unsigned long long)(o >> 48) & 0xfff, (unsigned long long)o & 0xffffffffffffull);
}

/* A member (new reference), or dflt (stolen) when missing. */
json_t *
history_get(json_t *o, const char *key, json_t *dflt)
{
	json_t *v = json_object_get(o, key);

	if (v == NULL)
		return dflt;
	json_decref(dflt);
	return json_incref(v);
}

/* A turn object in upstream's key order. */
static json_t *
history_turn_new(const char *id)
{
	json_t *t = json_object();

	json_object_set_new(t, "id", json_string(id));
	json_object_set_new(t, "rootTurnId", json_string(id));
	json_object_set_new(t, "items", json_array());
	json_object_set_new(t, "itemsView", json_string("full"));
	json_object_set_new(t, "status", json_string("completed"));
	json_object_set_new(t, "error", json_null());
	json_object_set_new(t, "startedAt", json_null());
	json_object_set_new(t, "completedAt", json_null());
	json_object_set_new(t, "durationMs", json_null());
	return t;
}

/* Close the open turn: keep it (or sink it) unless it is an empty implicit one. */
void
history_close(struct history *h)
{
	json_t *t = h->cur;

	if (t == NULL)
		return;
	h->cur = NULL;
	json_decref(h->ids);
	h->ids = NULL;
	if (json_array_size(json_object_get(t, "items")) == 0 && !h->explicit_turn &&
		!h->saw_compaction) {
		json_decref(t);
		return;
	}
	if (h->sink != NULL)
		h->sink(h->sink_arg, t);
	else
		json_array_append_new(h->turns, t);
}

/* Open a turn with this id; an unfinished turn before it was cut short. */
void
history_open(struct history *h, const char *id, int explicit_turn)
{
	if (h->cur != NULL &&
		strcmp(json_string_value(json_object_get(h->cur, "status")), "inProgress") == 0)
		json_object_set_new(h->cur, "status", json_string("interrupted"));
	history_close(h);
	h->cur = history_turn_new(id);
	h->ids = json_object();
	h->explicit_turn = explicit_turn;
	h->saw_compaction = 0;
}

/* The open turn, opening an implicit one when there is none. */
json_t *
history_ensure(struct history *h, const struct rollout_rec *rec)
{
	if (h->cur == NULL) {
		char id[37];

		history_synth_id(rec->ms, rec->off, id);
		history_open(h, id, 0);
	}
	return h->cur;
}

/* The turn with this id: the open one or a kept one; NULL when unknown. */
json_t *
history_find(struct history *h, const char *turn_id)
{
	size_t n = json_array_size(h->turns);

	if (h->cur != NULL &&
		strcmp(json_string_value(json_object_get(h->cur, "id")), turn_id) == 0)
		return h->cur;
	for (size_t i = n; i-- > 0;) {
		json_t *t = json_array_get(h->turns, i);

		if (strcmp(json_string_value(json_object_get(t, "id")), turn_id) == 0)
			return t;
	}
	return NULL;
}

/* Insert or replace (by id) an item in turn t; item is stolen, id (may be NULL) borrowed. */
void
history_upsert_id(struct history *h, json_t *t, json_t *item, const char *id)
{
	json_t *items = json_object_get(t, "items");

	if (t == h->cur && id != NULL) {
		json_t *at = json_object_get(h->ids, id);

		if (at != NULL) {
			json_array_set_new(items, (size_t)json_integer_value(at), item);
			return;
		}
		json_object_set_new(h->ids, id, json_integer((json_int_t)json_array_size(items)));
	} else if (id != NULL) {
		struct buf tmp;

		buf_init(&tmp, ROLLOUT_LINE_MAX);
		for (size_t i = json_array_size(items); i-- > 0;) {
			const char *other = history_item_key(json_array_get(items, i), &tmp);

			if (other != NULL && strcmp(other, id) == 0) {
				json_array_set_new(items, i, item);
				buf_free(&tmp);
				return;
			}
		}
		buf_free(&tmp);
	}
	json_array_append_new(items, item);
}

void
history_upsert(struct history *h, json_t *t, json_t *item)
{
	history_upsert_id(h, t, item, item_id(item));
}

/* An "item-N" id for records that carry none. */
json_t *
history_next_id(struct history *h)
{
	char id[32];

	snprintf(id, sizeof id, "item-%lld", (long long)h->next_item++);
	return json_string(id);
}

/* Put the event's start/finish times on the item (upstream shows both on each item). */
static void
history_item_times(json_t *item, json_t *payload)
{
	json_t *s = json_object_get(payload, "started_at_ms");
	json_t *c = json_object_get(payload, "completed_at_ms");

	json_object_set_new(item, "startedAtMs", json_is_integer(s) ? json_incref(s) : json_null());
	json_object_set_new(item, "completedAtMs",
		json_is_integer(c) && json_integer_value(c) != 0 ? json_incref(c) : json_null());
}

/*
 * Place an item (stolen; id borrowed, may be NULL) in its turn: the one with turn_id, else the
 * open one. A canonical message means the file's old-style message events are duplicates.
 */
void
history_item_place(struct history *h, const struct rollout_rec *rec, const char *turn_id,
	int message, json_t *item, const char *id)
{
	json_t *t;

	if (message)
		h->legacy_done = 1; /* this file has canonical messages: ignore the old events */
	t = turn_id != NULL ? history_find(h, turn_id) : NULL;
	if (t == NULL && (h->cur == NULL || turn_id == NULL)) {
		if (turn_id != NULL && h->cur == NULL)
			history_open(h, turn_id, 0);
		t = history_ensure(h, rec);
	}
	if (t == NULL) {
		json_decref(item); /* a turn this history never opened: dropped, as upstream does */
		return;
	}
	history_upsert_id(h, t, item, id);
}

/* item_completed / item_started: a canonical item for a turn by id. */
static void
history_item_event(struct history *h, const struct rollout_rec *rec)
{
	json_t *core = json_object_get(rec->payload, "item");
	const char *turn_id = json_string_value(json_object_get(rec->payload, "turn_id"));
	const char *ctype = json_string_value(json_object_get(core, "type"));
	json_t *item;

	item = item_from_core(core);
	if (item == NULL)
		return;
	history_item_times(item, rec->payload);
	history_item_place(h, rec, turn_id,
		ctype != NULL &&
			(strcmp(ctype, "UserMessage") == 0 || strcmp(ctype, "AgentMessage") == 0),
		item, item_id(item));
}

/* task_complete / turn_aborted: status and times, then close. */
static void
history_turn_end(struct history *h, const struct rollout_rec *rec, int aborted)
{
	json_t *p = rec->payload, *t;
	const char *turn_id = json_string_value(json_object_get(p, "turn_id"));
	json_t *err = json_object_get(p, "error");

	t = turn_id != NULL ? history_find(h, turn_id) : NULL;
	if (t == NULL)
		t = h->cur;
	if (t == NULL)
		return;
	if (aborted) {
		json_object_set_new(t, "status", json_string("interrupted"));
	} else if (json_is_object(err)) {
		json_object_set_new(t, "status", json_string("failed"));
		json_object_set_new(t, "error",
			json_pack("{s:o,s:o,s:n}", "message",
				history_get(err, "message", json_string("")), "codexErrorInfo",
				history_get(err, "codex_error_info", json_null()),
				"additionalDetails"));
	} else if (strcmp(json_string_value(json_object_get(t, "status")), "inProgress") == 0) {
		json_object_set_new(t, "status", json_string("completed"));
	}
	if (json_is_integer(json_object_get(p, "started_at")))
		json_object_set(t, "startedAt", json_object_get(p, "started_at"));
	if (json_is_integer(json_object_get(p, "completed_at")))
		json_object_set(t, "completedAt", json_object_get(p, "completed_at"));
	if (json_is_integer(json_object_get(p, "duration_ms")))
		json_object_set(t, "durationMs", json_object_get(p, "duration_ms"));
	if (t == h->cur)
		history_close(h);
}

/* task_started: an explicit turn. */
static void
history_turn_start(struct history *h, const struct rollout_rec *rec)
{
	json_t *p = rec->payload;
	const char *id = json_string_value(json_object_get(p, "turn_id"));
	const char *root = json_string_value(json_object_get(p, "root_turn_id"));
	char synth[37];

	if (id == NULL) {
		history_synth_id(rec->ms, rec->off, synth);
		id = synth;
	}
	history_open(h, id, 1);
	json_object_set_new(h->cur, "rootTurnId", json_string(root != NULL ? root : id));
	json_object_set_new(h->cur, "status", json_string("inProgress"));
	if (json_is_integer(json_object_get(p, "started_at")))
		json_object_set(h->cur, "startedAt", json_object_get(p, "started_at"));
}

/* An error event fails the open turn. */
static void
history_error(struct history *h, const struct rollout_rec *rec)
{
	json_t *p = rec->payload;

	if (h->cur == NULL)
		return;
	json_object_set_new(h->cur, "status", json_string("failed"));
	json_object_set_new(h->cur, "error",
		json_pack("{s:o,s:o,s:n}", "message", history_get(p, "message", json_string("")),
			"codexErrorInfo", history_get(p, "codex_error_info", json_null()),
			"additionalDetails"));
}

/* thread_rolled_back {num_turns}: drop that many kept turns. */
static void
history_rollback(struct history *h, const struct rollout_rec *rec)
{
	json_int_t n = json_integer_value(json_object_get(rec->payload, "num_turns"));
	size_t have;

	if (h->ignore_rollbacks)
		return;
	history_close(h);
	have = json_array_size(h->turns);
	while (n-- > 0 && have > 0)
		json_array_remove(h->turns, --have);
}

/* Dispatch one parsed record. */
void
history_dispatch(struct history *h, const struct rollout_rec *rec)
{
	const char *pt = rec->ptype;

	if (strcmp(rec->type, "compacted") == 0) {
		history_ensure(h, rec);
		h->saw_compaction = 1;
		return;
	}
	if (strcmp(rec->type, "event_msg") != 0 || !json_is_object(rec->payload))
		return;
	if (strcmp(pt, "task_started") == 0)
		history_turn_start(h, rec);
	else if (strcmp(pt, "task_complete") == 0)
		history_turn_end(h, rec, 0);
	else if (strcmp(pt, "turn_aborted") == 0)
		history_turn_end(h, rec, 1);
	else if (strcmp(pt, "item_completed") == 0 || strcmp(pt, "item_started") == 0)
		history_item_event(h, rec);
	else if (strcmp(pt, "user_message") == 0)
		history_legacy_user_message(h, rec);
	else if (strcmp(pt, "agent_message") == 0)
		history_legacy_agent_message(h, rec);
	else if (strcmp(pt, "agent_reasoning") == 0)
		history_legacy_reasoning(h, rec, "summary");
	else if (strcmp(pt, "agent_reasoning_raw_content") == 0)
		history_legacy_reasoning(h, rec, "content");
	else if (strncmp(pt, "exec_command_", 13) == 0 || strncmp(pt, "patch_apply_", 12) == 0)
		history_legacy_tool_event(h, rec);
	else if (strcmp(pt, "error") == 0)
		history_error(h, rec);
	else if (strcmp(pt, "thread_rolled_back") == 0)
		history_rollback(h, rec);
	else
		history_legacy_misc(h, rec);
}

/* One record: counted against the ceiling, then read (from its text when left raw). */
void
history_feed(struct history *h, const struct rollout_rec *rec)
{
	if (h->too_big)
		return;
	h->bytes += rec->len;
	if (h->sink == NULL && h->bytes > HISTORY_MAX_BYTES) {
		h->too_big = 1;
		return;
	}
	if (rec->root == NULL && rec->line != NULL)
		history_raw_record(h, rec);
	else
		history_dispatch(h, rec);
}

/* Close what is open and hand the turns over. */
json_t *
history_finish(struct history *h, int live)
{
	json_t *out;

	if (h->too_big)
		return NULL;
	if (h->cur != NULL && !live &&
		strcmp(json_string_value(json_object_get(h->cur, "status")), "inProgress") == 0)
		json_object_set_new(h->cur, "status", json_string("interrupted"));
	history_close(h);
	out = h->turns;
	h->turns = json_array();
	return out;
}

json_t *
history_read(struct history *h, const char *path, off_t from, off_t to, int live, char **cause)
{
	struct rollout_reader *r;
	struct rollout_rec rec;
	json_t *turns;
	int e;

	if ((e = rollout_reader_open(path, from, to, &r)) != 0) {
		*cause = xasprintf("failed to read %s: %s", path, strerror(-e));
		return NULL;
	}
	history_reader(r);
	while (rollout_reader_next(r, &rec) == 1)
		history_feed(h, &rec);
	rollout_reader_close(r);
	if ((turns = history_finish(h, live)) == NULL)
		*cause = xasprintf(
			"%s is too large to return whole; page it with thread/turns/list", path);
	return turns;
}

void
history_free(struct history *h)
{
	if (h == NULL)
		return;
	json_decref(h->turns);
	json_decref(h->cur);
	json_decref(h->ids);
	buf_free(&h->item);
	buf_free(&h->turn_id);
	buf_free(&h->tmp);
	free(h);
}

/* First user message and final agent message (one item when they are the same). */
json_t *
history_summary_items(json_t *items)
{
	json_t *out = json_array(), *user = NULL, *agent = NULL, *it;
	size_t i;

	json_array_foreach(items, i, it)
	{
		const char *t = json_string_value(json_object_get(it, "type"));

		if (t == NULL)
			continue;
		if (user == NULL && strcmp(t, "userMessage") == 0)
			user = it;
		if (strcmp(t, "agentMessage") == 0)
			agent = it;
	}
	if (user != NULL)
		json_array_append(out, user);
	if (agent != NULL && agent != user)
		json_array_append(out, agent);
	return out;
}
