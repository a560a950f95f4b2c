/*
 * Lifecycle hooks (upstream's `codex_hooks`): which command hooks the configuration declares,
 * whether each may run (enabled, and trusted: `[hooks.state."<key>"] trusted_hash` equal to the
 * hook's current hash, which is upstream's own sha256 so a trust written by either program holds
 * for the other), and one event's run: every matching handler as `$SHELL -lc <command>` in the
 * session's cwd with the event's JSON on stdin, unsandboxed as upstream runs them, in its own
 * process group killed at the timeout, on the loop (never waited for).
 *
 * Ordering rule: hooks_run_start reports every run's `started` summary before it returns, and
 * `done` once, from the loop, after the last handler ended, with the runs in display order.
 */
#ifndef HOOKS_H
#define HOOKS_H

#include <stdint.h>

#include <ev.h>
#include <jansson.h>

struct config;

/* Upstream's HookEventName, in its declaration order (the display order follows it). */
enum hook_event {
	HOOK_PRE_TOOL_USE,
	HOOK_PERMISSION_REQUEST,
	HOOK_POST_TOOL_USE,
	HOOK_PRE_COMPACT,
	HOOK_POST_COMPACT,
	HOOK_SESSION_START,
	HOOK_SESSION_END,
	HOOK_USER_PROMPT_SUBMIT,
	HOOK_SUBAGENT_START,
	HOOK_SUBAGENT_STOP,
	HOOK_STOP,
	HOOK_EVENTS
};

/* Names of an event: "PreToolUse" (config), "preToolUse" (wire), "pre_tool_use" (keys). */
const char *hooks_event_config_name(enum hook_event e);
const char *hooks_event_wire_name(enum hook_event e);
const char *hooks_event_key_name(enum hook_event e);

/* What the configuration declares (shared, reference-counted: a turn keeps its own). */
struct hook_set;

/*
 * Discover the hooks of a configuration's layers (lowest precedence first: the system file,
 * the user's config.toml and $CODEX_HOME/hooks.json, session flags); never NULL. bypass: the
 * session's bypass_hook_trust (thread/start's config), on top of the configuration's.
 */
struct hook_set *hooks_discover(const struct config *c, int bypass);
/* The same from layers given as config/read's `layers` (highest precedence first) and the
 * merged `hooks.state` table (both borrowed): what hooks_discover uses, for tests. */
struct hook_set *hooks_discover_layers(const json_t *layers, const json_t *states);
struct hook_set *hooks_ref(struct hook_set *s);
void hooks_unref(struct hook_set *s);

/* hooks/list's HookMetadata[] and warnings (new references). */
json_t *hooks_list_entries(const struct hook_set *s);
json_t *hooks_list_warnings(const struct hook_set *s);
/* How many handlers of the event may run (enabled and trusted). */
unsigned hooks_count(const struct hook_set *s, enum hook_event e);

/* Upstream's trust hash of one command handler ("sha256:<hex>", heap), or NULL. */
char *hooks_hash(enum hook_event e, const char *matcher, const char *command, long long timeout,
	int async, const char *status_message);

/* One handler's outcome, parsed as upstream parses it (hooks_output.c). */
struct hook_outcome {
	const char *status; /* HookRunStatus: "completed", "failed", "blocked", "stopped" */
	json_t *entries;    /* HookOutputEntry[] */
	char *context;	    /* additional context for the model (heap), or NULL */
	char *feedback;	    /* blocked: the reason, stopped: the stopReason (heap), or NULL */
	int allow;	    /* PermissionRequest: the hook approved (a deny is "blocked") */
};
void hooks_outcome_parse(enum hook_event e, int exit_code, int timed_out, long long timeout,
	const char *out, const char *err, struct hook_outcome *o);
void hooks_outcome_free(struct hook_outcome *o);

/* An event's run, and what it tells its owner. HOOKS_ALLOWED: a PermissionRequest hook
 * approved and none denied (a deny is HOOKS_BLOCKED, its message the feedback). */
enum { HOOKS_BLOCKED = 1, HOOKS_STOPPED = 2, HOOKS_ALLOWED = 4 };
struct hooks_run;
struct hooks_report {
	/* hook/started and hook/completed: a HookRunSummary (borrowed during the call). */
	void (*summary)(void *arg, const char *method, json_t *run);
	/*
	 * Every handler ended: the contexts for the model (a string array, borrowed), whether
	 * one blocked (HOOKS_BLOCKED) or said `continue: false` (HOOKS_STOPPED, which wins) and
	 * that verdict's fragments [{text, hookRunId}] (borrowed: reasons or stopReasons). The
	 * caller frees the run (hooks_run_free), here or later: nothing of it is touched after.
	 */
	void (*done)(void *arg, json_t *contexts, int blocked, json_t *feedback);
};

/*
 * Run the event's handlers whose matcher matches subject (NULL: no matcher applies) with
 * input (the event's JSON object, borrowed; hook_event_name and the common fields included)
 * in cwd; NULL when no handler matches (nothing is reported then). id_suffix (or NULL) ends
 * the run ids (upstream's tool events add ":<call id>").
 */
struct hooks_run *hooks_run_start(struct ev_loop *loop, const struct hook_set *s, enum hook_event e,
	const char *subject, const char *cwd, const json_t *input, int turn_scope,
	const char *id_suffix, const struct hooks_report *r, void *arg);
/* Free a run; handlers still running are killed with their process groups (no report). */
void hooks_run_free(struct hooks_run *run);

#endif
