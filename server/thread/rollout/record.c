/*
 * Record payload builders (record.h). Key order follows upstream's serialisation; optional
 * fields upstream skips when empty are skipped here too.
 */
#include <string.h>

#include "record.h"
#include "rollout.h"
#include "protocol/xmalloc.h"
#include "thread/history/item.h"
#include "thread/uuidv7.h"

/* A string or null. */
static json_t *
record_str(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

/* session_meta: the thread's identity, written once as the first record. */
json_t *
record_session_meta(const struct record_meta *m)
{
	json_t *p = json_object();
	char ts[ROLLOUT_TS_LEN + 1], window[37];

	rollout_ts_format(m->ms, ts);
	uuidv7_new(window);
	json_object_set_new(p, "session_id", json_string(m->id));
	json_object_set_new(p, "id", json_string(m->id));
	if (m->forked_from_id != NULL)
		json_object_set_new(p, "forked_from_id", json_string(m->forked_from_id));
	json_object_set_new(p, "timestamp", json_string(ts));
	json_object_set_new(p, "cwd", record_str(m->cwd));
	json_object_set_new(p, "runtime_workspace_roots", json_pack("[s]", m->cwd ? m->cwd : "/"));
	json_object_set_new(p, "originator", record_str(m->originator));
	json_object_set_new(p, "cli_version", record_str(m->cli_version));
	json_object_set_new(
		p, "source", m->source ? json_incref(m->source) : json_string("vscode"));
	json_object_set_new(p, "model_provider", record_str(m->model_provider));
	json_object_set_new(p, "base_instructions",
		m->base_instructions ? json_pack("{s:s}", "text", m->base_instructions)
				     : json_null());
	if (m->dynamic_tools != NULL)
		json_object_set_new(p, "dynamic_tools", json_deep_copy(m->dynamic_tools));
	json_object_set_new(p, "history_mode", json_string("paginated"));
	json_object_set_new(p, "context_window", json_pack("{s:s}", "window_id", window));
	return p;
}

/* task_started, with upstream's turn attribution block. */
json_t *
record_task_started(const char *turn_id, int64_t started_at_s, int64_t context_window)
{
	return json_pack("{s:s,s:{s:s,s:n,s:n,s:n,s:s},s:s,s:s,s:I,s:o,s:s}", "type",
		"task_started", "turn_attribution", "turn_id", turn_id, "turn_trigger",
		"parent_turn_id", "initiating_agent_path", "root_turn_id", turn_id, "turn_id",
		turn_id, "root_turn_id", turn_id, "started_at", (json_int_t)started_at_s,
		"model_context_window",
		context_window > 0 ? json_integer(context_window) : json_null(),
		"collaboration_mode_kind", "default");
}

/* The sandbox mode as upstream's rollout SandboxPolicy. */
static json_t *
record_sandbox_policy(const char *mode)
{
	if (mode != NULL && strcmp(mode, "workspace-write") == 0)
		return json_pack("{s:s,s:[],s:b,s:b,s:b}", "type", "workspace-write",
			"writable_roots", "network_access", 0, "exclude_tmpdir_env_var", 0,
			"exclude_slash_tmp", 0);
	return json_pack("{s:s}", "type", mode != NULL ? mode : "read-only");
}

/* The approval policy in the rollout's spelling (same words as the wire, kebab-case). */
static json_t *
record_approval(const struct record_settings *s)
{
	return s->approval_policy != NULL ? json_incref(s->approval_policy)
					  : json_string("on-request");
}

/* collaboration_mode {mode, settings}: the one selected, else the Default mode's. */
static json_t *
record_collab(const struct record_settings *s)
{
	if (s->collab != NULL)
		return json_deep_copy(s->collab);
	return json_pack("{s:s,s:{s:o,s:o,s:o}}", "mode", "default", "settings", "model",
		record_str(s->model), "reasoning_effort", record_str(s->effort),
		"developer_instructions", record_str(s->developer_instructions));
}

/* turn_context: what the turn runs with. */
json_t *
record_turn_context(const char *turn_id, const struct record_settings *s)
{
	json_t *p = json_object();

	json_object_set_new(p, "turn_id", json_string(turn_id));
	json_object_set_new(p, "root_turn_id", json_string(turn_id));
	json_object_set_new(p, "disabled_plugin_ids", json_array());
	json_object_set_new(p, "cwd", record_str(s->cwd));
	json_object_set_new(p, "approval_policy", record_approval(s));
	json_object_set_new(p, "approvals_reviewer",
		json_string(s->approvals_reviewer ? s->approvals_reviewer : "user"));
	if (s->sandbox != NULL && strcmp(s->sandbox, "danger-full-access") == 0)
		json_object_set_new(
			p, "permission_profile", json_pack("{s:s}", "type", "disabled"));
	if (s->active_profile != NULL)
		json_object_set_new(
			p, "active_permission_profile", json_deep_copy(s->active_profile));
	json_object_set_new(p, "model", record_str(s->model));
	if (s->effort != NULL)
		json_object_set_new(p, "effort", json_string(s->effort));
	json_object_set_new(p, "collaboration_mode", record_collab(s));
	json_object_set_new(p, "multi_agent_version", json_string("v1"));
	json_object_set_new(p, "realtime_active", json_false());
	json_object_set_new(p, "summary", json_string("none"));
	json_object_set_new(p, "sandbox_policy", record_sandbox_policy(s->sandbox));
	return p;
}

/* event_msg thread_settings_applied. */
json_t *
record_settings_applied(const char *thread_id, const struct record_settings *s)
{
	json_t *t = json_object();

	json_object_set_new(t, "model", record_str(s->model));
	json_object_set_new(t, "model_provider_id", record_str(s->model_provider));
	json_object_set_new(t, "approval_policy", record_approval(s));
	json_object_set_new(t, "approvals_reviewer",
		json_string(s->approvals_reviewer ? s->approvals_reviewer : "user"));
	json_object_set_new(t, "requested_approvals_reviewer",
		json_string(s->approvals_reviewer ? s->approvals_reviewer : "user"));
	if (s->sandbox != NULL && strcmp(s->sandbox, "danger-full-access") == 0)
		json_object_set_new(
			t, "permission_profile", json_pack("{s:s}", "type", "disabled"));
	if (s->active_profile != NULL)
		json_object_set_new(
			t, "active_permission_profile", json_deep_copy(s->active_profile));
	json_object_set_new(t, "cwd", record_str(s->cwd));
	json_object_set_new(t, "runtime_workspace_roots", json_pack("[s]", s->cwd ? s->cwd : "/"));
	if (s->effort != NULL)
		json_object_set_new(t, "reasoning_effort", json_string(s->effort));
	json_object_set_new(t, "collaboration_mode", record_collab(s));
	json_object_set_new(t, "disabled_plugin_ids", json_array());
	return json_pack("{s:s,s:s,s:o}", "type", "thread_settings_applied", "thread_id", thread_id,
		"thread_settings", t);
}

/* event_msg item_completed with the item in core shape. */
json_t *
record_item_completed(const char *thread_id, const char *turn_id, json_t *item, int64_t started_ms,
	int64_t completed_ms)
{
	json_t *core = item_to_core(item);

	if (core == NULL)
		return NULL;
	return json_pack("{s:s,s:s,s:s,s:o,s:o,s:I}", "type", "item_completed", "thread_id",
		thread_id, "turn_id", turn_id, "item", core, "started_at_ms",
		started_ms > 0 ? json_integer(started_ms) : json_null(), "completed_at_ms",
		(json_int_t)completed_ms);
}

/* Upstream's TokenUsage object. */
static json_t *
record_usage(const struct token_totals *t)
{
	return json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "input_tokens", (json_int_t)t->input,
		"cached_input_tokens", (json_int_t)t->cached, "cache_write_input_tokens",
		(json_int_t)0, "output_tokens", (json_int_t)t->output, "reasoning_output_tokens",
		(json_int_t)t->reasoning, "total_tokens", (json_int_t)t->total);
}

/* token_usage_record (a record type of its own, not an event). */
json_t *
record_token_usage(const char *thread_id, const char *turn_id, const struct token_totals *last,
	const struct token_totals *turn, const struct token_totals *thread, const char *response_id)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:o,s:o,s:o,s:o}", "thread_id", thread_id, "turn_id",
		turn_id, "session_id", thread_id, "root_turn_id", turn_id, "response_id",
		record_str(response_id), "usage", record_usage(last), "turn_token_usage",
		record_usage(turn), "thread_token_usage", record_usage(thread));
}

/* event_msg token_count. */
json_t *
record_token_count(
	const struct token_totals *total, const struct token_totals *last, int64_t context_window)
{
	return json_pack("{s:s,s:{s:o,s:o,s:b,s:o},s:n}", "type", "token_count", "info",
		"total_token_usage", record_usage(total), "last_token_usage", record_usage(last),
		"last_usage_includes_reasoning", 0, "model_context_window",
		context_window > 0 ? json_integer(context_window) : json_null(), "rate_limits");
}

/* event_msg task_complete (error: upstream's ErrorEvent {message, codex_error_info} or NULL). */
json_t *
record_task_complete(const char *turn_id, const char *last_agent_message, int64_t started_at_s,
	int64_t completed_at_s, int64_t duration_ms, json_t *error)
{
	json_t *p = json_pack("{s:s,s:s,s:s,s:o,s:I,s:I,s:I,s:n}", "type", "task_complete",
		"root_turn_id", turn_id, "turn_id", turn_id, "last_agent_message",
		record_str(last_agent_message), "started_at", (json_int_t)started_at_s,
		"completed_at", (json_int_t)completed_at_s, "duration_ms", (json_int_t)duration_ms,
		"time_to_first_token_ms");

	if (error != NULL)
		json_object_set(p, "error", error);
	return p;
}

/* event_msg turn_aborted. */
json_t *
record_turn_aborted(const char *turn_id, const char *reason, int64_t started_at_s,
	int64_t completed_at_s, int64_t duration_ms)
{
	return json_pack("{s:s,s:s,s:s,s:I,s:I,s:I}", "type", "turn_aborted", "turn_id", turn_id,
		"reason", reason, "started_at", (json_int_t)started_at_s, "completed_at",
		(json_int_t)completed_at_s, "duration_ms", (json_int_t)duration_ms);
}

/* event_msg error. */
json_t *
record_error(const char *message, json_t *codex_error_info)
{
	return json_pack("{s:s,s:s,s:O}", "type", "error", "message", message, "codex_error_info",
		codex_error_info != NULL ? codex_error_info : json_null());
}

/* Wire SessionSource -> rollout (core) spelling. */
json_t *
record_source_to_rollout(json_t *w)
{
	const char *s = json_string_value(w);

	if (w == NULL || json_is_null(w))
		return json_string("vscode");
	if (s != NULL)
		return json_string(strcmp(s, "appServer") == 0 ? "mcp" : s);
	if (json_is_object(w) && json_object_get(w, "subAgent") != NULL) {
		json_t *sub = json_object_get(w, "subAgent");
		json_t *out = json_object();

		json_object_set(out, "subagent", sub);
		return out;
	}
	return json_incref(w);
}

/* Rollout -> wire spelling. */
json_t *
record_source_to_wire(json_t *r)
{
	const char *s = json_string_value(r);

	if (r == NULL || json_is_null(r))
		return json_string("unknown");
	if (s != NULL) {
		if (strcmp(s, "mcp") == 0)
			return json_string("appServer");
		if (strcmp(s, "cli") == 0 || strcmp(s, "vscode") == 0 || strcmp(s, "exec") == 0 ||
			strcmp(s, "appServer") == 0 || strcmp(s, "unknown") == 0)
			return json_string(s);
		return json_pack("{s:s}", "custom", s);
	}
	if (json_is_object(r) && json_object_get(r, "subagent") != NULL)
		return json_pack("{s:O}", "subAgent", json_object_get(r, "subagent"));
	return json_incref(r);
}

/* The filter kind of a rollout source. */
const char *
record_source_kind(json_t *r)
{
	const char *s = json_string_value(r);
	json_t *sub;

	if (s != NULL) {
		if (strcmp(s, "mcp") == 0 || strcmp(s, "appServer") == 0)
			return "appServer";
		if (strcmp(s, "cli") == 0 || strcmp(s, "vscode") == 0 || strcmp(s, "exec") == 0)
			return s;
		return "unknown";
	}
	sub = json_object_get(r, "subagent");
	if (sub == NULL)
		sub = json_object_get(r, "subAgent");
	if (sub == NULL)
		return "unknown";
	if (json_is_string(sub)) {
		if (strcmp(json_string_value(sub), "review") == 0)
			return "subAgentReview";
		if (strcmp(json_string_value(sub), "compact") == 0)
			return "subAgentCompact";
		return "subAgentOther";
	}
	if (json_object_get(sub, "thread_spawn") != NULL)
		return "subAgentThreadSpawn";
	return "subAgentOther";
}
