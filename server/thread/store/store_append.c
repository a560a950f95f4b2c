/*
 * The append API (store.h) for a running turn. Each call is one record, one write(2) on the
 * loop thread (the page cache takes it in microseconds); the index row and the fdatasync wait
 * for the turn's end, so a turn of a thousand deltas costs one SQLite statement and one sync.
 * The thread's metadata (preview, model, tokens, times) is kept current in memory meanwhile.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "protocol/xmalloc.h"
#include "thread/rollout/record.h"
#include "thread/rollout/rollout.h"
#include "thread/rollout/rollout_lock.h"
#include "thread/uuidv7.h"

/* Append one record if the thread has a rollout; keeps updated_ms current. */
static int
store_put(struct store_thread *t, int64_t ms, const char *type, json_t *payload)
{
	int r;

	if (payload == NULL)
		return -EINVAL;
	if (t->reverting)
		return -EBUSY; /* it would land in the file being replaced */
	t->meta.updated_ms = ms;
	t->used = ++t->s->clock;
	if (t->w == NULL)
		return 0;
	r = rollout_writer_append(t->w, ms, type, payload);
	return r;
}

int
store_turn_begin(
	struct store_thread *t, const struct store_turn_params *p, char turn_id[37], char **cause)
{
	int64_t ms = rollout_now_ms();
	struct record_settings rs = {
		.model = t->meta.model,
		.model_provider = t->meta.model_provider,
		.cwd = t->meta.cwd,
		.effort = t->meta.effort,
		.approval_policy = t->approval_policy,
		.approvals_reviewer = t->approvals_reviewer,
		.sandbox = t->sandbox,
		.developer_instructions = t->developer_instructions,
		.active_profile = t->active_profile,
		.collab = t->collab,
	};
	json_t *started, *ctx;
	int r;

	if (t->turn_id[0] != '\0') {
		*cause = xasprintf("a turn is already running: %s", t->turn_id);
		return -EINVAL;
	}
	if (t->reverting) {
		*cause = xasprintf("thread %s is being reverted", t->meta.id);
		return -EBUSY;
	}
	if (p != NULL) {
		if (p->model != NULL)
			thread_meta_set(&t->meta.model, p->model);
		if (p->cwd != NULL)
			thread_meta_set(&t->meta.cwd, p->cwd);
		if (p->effort != NULL)
			thread_meta_set(&t->meta.effort, p->effort);
		if (p->sandbox != NULL)
			thread_meta_set(&t->sandbox, p->sandbox);
		if (p->approval_policy != NULL) {
			json_decref(t->approval_policy);
			t->approval_policy = json_deep_copy(p->approval_policy);
		}
		rs.model = t->meta.model;
		rs.cwd = t->meta.cwd;
		rs.effort = t->meta.effort;
		rs.sandbox = t->sandbox;
		rs.approval_policy = t->approval_policy;
	}
	uuidv7_new_at(turn_id, ms);
	started = record_task_started(turn_id, ms / 1000, p ? p->context_window : 0);
	ctx = record_turn_context(turn_id, &rs);
	r = store_put(t, ms, "event_msg", started);
	if (r == 0)
		r = store_put(t, ms, "turn_context", ctx);
	json_decref(started);
	json_decref(ctx);
	if (r == -EBUSY) {
		/* suspended meanwhile, and another daemon took the thread */
		char *who = rollout_lock_who(rollout_lock_holder(t->meta.path));

		*cause = xasprintf("thread %s already has an active writer: %s is writing %s",
			t->meta.id, who, t->meta.path);
		free(who);
		return r;
	}
	if (r != 0) {
		*cause = xasprintf("failed to write rollout: %s", strerror(-r));
		return r;
	}
	memcpy(t->turn_id, turn_id, 37);
	t->turn_started_ms = ms;
	t->meta.recency_ms = ms / 1000 * 1000;
	memset(&t->turn_tokens, 0, sizeof t->turn_tokens);
	free(t->last_agent_message);
	t->last_agent_message = NULL;
	/* The append reopened this writer if it slept: keep the open ones bounded. */
	store_limit_writers(t->s);
	return 0;
}

/* Track what the index summarises: the first user message, the last agent message. */
static void
store_note_item(struct store_thread *t, json_t *item)
{
	const char *type = json_string_value(json_object_get(item, "type"));

	if (type == NULL)
		return;
	if (strcmp(type, "userMessage") == 0 && !t->meta.has_user_message) {
		t->meta.has_user_message = 1;
		free(t->meta.preview);
		t->meta.preview =
			summary_user_text(json_object_get(item, "content"), SUMMARY_PREVIEW_MAX);
	} else if (strcmp(type, "agentMessage") == 0) {
		const char *text = json_string_value(json_object_get(item, "text"));

		free(t->last_agent_message);
		t->last_agent_message = text ? xstrdup(text) : NULL;
	}
}

int
store_append_item(struct store_thread *t, json_t *item, int64_t started_ms, int64_t completed_ms)
{
	int64_t ms = rollout_now_ms();
	json_t *rec;
	int r;

	if (t->turn_id[0] == '\0')
		return -EINVAL;
	rec = record_item_completed(
		t->meta.id, t->turn_id, item, started_ms, completed_ms > 0 ? completed_ms : ms);
	if (rec == NULL)
		return -EINVAL;
	r = store_put(t, ms, "event_msg", rec);
	json_decref(rec);
	if (r == 0)
		store_note_item(t, item);
	return r;
}

int
store_append_response_item(struct store_thread *t, json_t *item)
{
	return store_put(t, rollout_now_ms(), "response_item", item);
}

int
store_append_record(struct store_thread *t, const char *type, json_t *payload)
{
	return store_put(t, rollout_now_ms(), type, payload);
}

/* Add b to a. */
static void
store_tokens_add(struct token_totals *a, const struct token_totals *b)
{
	a->input += b->input;
	a->cached += b->cached;
	a->output += b->output;
	a->reasoning += b->reasoning;
	a->total += b->total;
}

int
store_append_tokens(struct store_thread *t, const struct token_totals *last, int64_t context_window,
	const char *response_id)
{
	int64_t ms = rollout_now_ms();
	json_t *usage, *count;
	int r;

	store_tokens_add(&t->turn_tokens, last);
	store_tokens_add(&t->meta.tokens, last);
	usage = record_token_usage(t->meta.id, t->turn_id[0] ? t->turn_id : t->meta.id, last,
		&t->turn_tokens, &t->meta.tokens, response_id);
	count = record_token_count(&t->meta.tokens, last, context_window);
	r = store_put(t, ms, "token_usage_record", usage);
	if (r == 0)
		r = store_put(t, ms, "event_msg", count);
	json_decref(usage);
	json_decref(count);
	return r;
}

int
store_turn_end(struct store_thread *t, enum store_turn_end how, json_t *error, store_done_fn done,
	void *arg)
{
	int64_t ms = rollout_now_ms();
	int64_t dur = ms - t->turn_started_ms;
	json_t *rec, *err = NULL;
	int r;

	if (t->turn_id[0] == '\0')
		return -EINVAL;
	if (how == STORE_TURN_INTERRUPTED) {
		rec = record_turn_aborted(
			t->turn_id, "interrupted", t->turn_started_ms / 1000, ms / 1000, dur);
	} else {
		if (how == STORE_TURN_FAILED)
			err = error != NULL ? json_incref(error)
					    : json_pack("{s:s,s:n}", "message", "turn failed",
						      "codex_error_info");
		rec = record_task_complete(t->turn_id, t->last_agent_message,
			t->turn_started_ms / 1000, ms / 1000, dur, err);
	}
	r = store_put(t, ms, "event_msg", rec);
	json_decref(rec);
	json_decref(err);
	t->turn_id[0] = '\0';
	/* The batch point: one index write, one sync. */
	store_index_put(t);
	if (t->w != NULL)
		store_post_sync(t->s, rollout_writer_dupfd(t->w), NULL, 0, done, arg);
	else if (done != NULL)
		done(arg, r);
	store_limit_writers(t->s);
	return r;
}

void
store_sync(struct store_thread *t, store_done_fn done, void *arg)
{
	if (t->w == NULL) {
		if (done != NULL)
			done(arg, 0);
		return;
	}
	store_post_sync(t->s, rollout_writer_dupfd(t->w), NULL, 0, done, arg);
}
