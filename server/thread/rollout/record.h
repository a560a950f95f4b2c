/*
 * Payloads of the records we append, in the shapes upstream 0.169 writes for the same events
 * (compared field by field with the fixture rollouts), so upstream can resume our rollouts:
 *   session_meta                      when the thread is created
 *   event_msg task_started            a turn begins
 *   turn_context                      the settings a turn runs with
 *   event_msg thread_settings_applied the thread's settings (also written at creation: it
 *                                     carries the model of a thread that has no turn yet)
 *   event_msg item_completed          one finished ThreadItem (core TurnItem shape)
 *   token_usage_record, event_msg token_count   usage after a model response
 *   event_msg task_complete / turn_aborted / error   how a turn ended
 * Every builder returns a new reference; the writer adds timestamp, ordinal and type.
 */
#ifndef RECORD_H
#define RECORD_H

#include <stdint.h>

#include <jansson.h>

#include "rollout_summary.h"

/* The settings a thread (and each of its turns) runs with; strings borrowed, NULL = unset. */
struct record_settings {
	const char *model, *model_provider, *cwd, *effort;
	json_t *approval_policy;	/* wire AskForApproval ("never", {"granular":..}) */
	const char *approvals_reviewer; /* "user" when NULL */
	const char *sandbox;		/* "read-only" | "workspace-write" | "danger-full-access" */
	const char *developer_instructions;
	/* rollout forms, borrowed; NULL: none (a legacy sandbox), the Default mode */
	json_t *active_profile; /* active_permission_profile {id, extends?} */
	json_t *collab;		/* collaboration_mode {mode, settings} */
};

/* What session_meta records; strings borrowed. */
struct record_meta {
	const char *id, *forked_from_id, *cwd, *originator, *cli_version, *model_provider;
	const char *base_instructions; /* NULL: null */
	json_t *dynamic_tools;	       /* DynamicToolSpec[] as given, or NULL: not written */
	json_t *source; /* rollout form ("vscode", {"subagent":..}); NULL: "vscode" */
	int64_t ms;
};

json_t *record_session_meta(const struct record_meta *m);
json_t *record_task_started(const char *turn_id, int64_t started_at_s, int64_t context_window);
json_t *record_turn_context(const char *turn_id, const struct record_settings *s);
json_t *record_settings_applied(const char *thread_id, const struct record_settings *s);
/* item is a v2 ThreadItem (borrowed); NULL when it is not one. */
json_t *record_item_completed(const char *thread_id, const char *turn_id, json_t *item,
	int64_t started_ms, int64_t completed_ms);
json_t *record_token_usage(const char *thread_id, const char *turn_id,
	const struct token_totals *last, const struct token_totals *turn,
	const struct token_totals *thread, const char *response_id);
json_t *record_token_count(
	const struct token_totals *total, const struct token_totals *last, int64_t context_window);
json_t *record_task_complete(const char *turn_id, const char *last_agent_message,
	int64_t started_at_s, int64_t completed_at_s, int64_t duration_ms, json_t *error);
/* reason: "interrupted" | "replaced" | "review_ended". */
json_t *record_turn_aborted(const char *turn_id, const char *reason, int64_t started_at_s,
	int64_t completed_at_s, int64_t duration_ms);
json_t *record_error(const char *message, json_t *codex_error_info);
/* Wire SessionSource -> rollout form, and back (new references). */
json_t *record_source_to_rollout(json_t *wire);
json_t *record_source_to_wire(json_t *rollout);
/* The ThreadSourceKind a rollout source falls under ("cli", "subAgentReview", ...). */
const char *record_source_kind(json_t *rollout);

#endif
