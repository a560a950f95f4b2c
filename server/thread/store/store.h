/*
 * The thread store: everything below JSON-RPC that makes threads durable and listable. The
 * JSON-RPC handlers (server/api/thread.c) call these functions and turn the results into
 * answers; the agent loop appends a running turn's records through the append API.
 *
 * Threading: every function here is called on the loop thread. Slow disk work (fdatasync,
 * directory fsyncs, index rebuilds and rescans) and every SQLite call runs on the store's
 * worker threads; its
 * completions come back on the loop (or inline when the store has no loop).
 *
 * Errors: functions return 0 or a negative errno and, on failure, a message in upstream's
 * wording in *cause (the caller frees it). store_rpc_code() maps the errno to the JSON-RPC code:
 *   -EINVAL  invalid request (-32600): "invalid thread id: ...", a name that is empty, ...
 *   -ENOENT  unknown thread (-32600): "no rollout found for thread id <id>", "thread not
 *            loaded: <id>"
 *   -EBUSY   another process writes the thread (-32600): "thread <id> already has an active
 *            writer: process <pid> (<name>) is writing <path>"
 *   -EAGAIN  the same, its writer gone (killed) and the lock held a moment longer by a child
 *            it started (rollout_lock.h): worth trying again shortly
 *   -ERANGE  invalid params (-32602, with data {"cursor": ...} for a bad cursor)
 *   other    internal error (-32603)
 */
#ifndef STORE_H
#define STORE_H

#include <stdint.h>

#include <ev.h>
#include <jansson.h>

#include "protocol/buf.h"
#include "thread/rollout/rollout_summary.h"

struct store;
struct store_thread;

struct store_config {
	const char *home;	      /* CODEX_HOME */
	const char *default_provider; /* the configured model_provider (list's default filter) */
	const char *cli_version;      /* written to session_meta */
	const char *originator;	      /* default originator for new threads */
	struct ev_loop *loop;	      /* completions; NULL: everything inline (tools, tests) */
	double rescan_interval;	      /* seconds between list-triggered rescans (0: 10) */
};

/* Called once a durability step finished: r is 0 or -errno. Runs on the loop thread. */
typedef void (*store_done_fn)(void *arg, int r);

/* Open the store; never blocks on a rebuild (that runs in the background). */
int store_open(const struct store_config *cfg, struct store **out, char **cause);
/* Close every loaded thread (syncing them), wait for the workers, free. Accepts NULL. */
void store_free(struct store *s);
/* The JSON-RPC error code for a negative errno from this API. */
int store_rpc_code(int r);

/* Settings a thread starts, resumes or forks with; strings borrowed, NULL = keep/default. */
struct store_params {
	const char *model, *model_provider, *cwd, *effort;
	json_t *approval_policy; /* wire AskForApproval */
	const char *approvals_reviewer;
	const char *sandbox; /* "read-only" | "workspace-write" | "danger-full-access" */
	const char *base_instructions, *developer_instructions;
	json_t *dynamic_tools; /* thread/start's DynamicToolSpec[] (session_meta), or NULL */
	/* the profile it runs under, rollout form {id, extends?}, or NULL: keep (JSON null: none)
	 */
	json_t *active_profile;
	/*
	 * What a thread runs with when neither the request nor a loaded thread says (config.toml's
	 * approval_policy and sandbox_mode): resume of an unloaded thread, fork.
	 */
	json_t *default_approval_policy;
	const char *default_sandbox;
	json_t *source; /* wire SessionSource; NULL: "vscode" */
	const char *originator;
	int ephemeral;
	store_done_fn durable; /* optional: the new rollout and its folder are on disk */
	void *durable_arg;
};

/* thread/start: a new loaded thread; its rollout is created (and synced) now. */
int store_create(
	struct store *s, const struct store_params *p, struct store_thread **out, char **cause);
/* thread/resume: the loaded thread, or load it from its rollout (zero-turn threads too). */
int store_resume(struct store *s, const char *id, const struct store_params *p,
	struct store_thread **out, char **cause);
/* thread/fork: a new thread with the history up to last_turn_id (NULL: all) copied. */
int store_fork(struct store *s, const char *id, const char *last_turn_id,
	const struct store_params *p, struct store_thread **out, char **cause);
/* Unload: sync and close the rollout, forget the thread. */
/*
 * Whether store_resume (resume: 1) or store_fork (0) would find the thread id: 0, or the error
 * they would give (-errno, *cause). Asked before slow work a resume or fork waits for.
 */
int store_openable(struct store *s, const char *id, int resume, char **cause);
void store_unload(struct store_thread *t);
/* The loaded thread with this id, or NULL. */
struct store_thread *store_loaded(struct store *s, const char *id);
/* Ids of the loaded threads, oldest first (new reference). */
json_t *store_loaded_ids(struct store *s);

/* A loaded thread's metadata (borrowed) and settings. */
const struct thread_meta *store_thread_meta(struct store_thread *t);
const char *store_thread_id(struct store_thread *t);
const char *store_thread_sandbox(struct store_thread *t);
json_t *store_thread_approval(struct store_thread *t); /* borrowed */
/* baseInstructions / developerInstructions it was started with, or NULL (borrowed). */
const char *store_thread_base_instructions(struct store_thread *t);
const char *store_thread_developer_instructions(struct store_thread *t);
/* dynamicTools it was started with in this process, or NULL (borrowed). */
const json_t *store_thread_dynamic_tools(struct store_thread *t);
/*
 * The permission profile ({id, extends?}) and collaboration mode ({mode, settings}) in their
 * rollout forms, as the thread's newest settings record says (restored by a resume), or NULL:
 * none, the Default mode. Borrowed. The setters copy (NULL clears); the next turn_context
 * records them.
 */
json_t *store_thread_profile(struct store_thread *t);
json_t *store_thread_collab(struct store_thread *t);
void store_thread_set_profile(struct store_thread *t, const json_t *active_profile);
void store_thread_set_collab(struct store_thread *t, const json_t *collab);
/* The legacy sandbox mode word its records carry ("read-only", ...; copied). */
void store_thread_set_sandbox(struct store_thread *t, const char *mode);
/* Its ThreadStatus: idle, or active while a turn runs (new reference). */
json_t *store_thread_status(struct store_thread *t);
/* The wire Thread of a loaded thread (turns: [] unless given; stolen). */
json_t *store_thread_json(struct store_thread *t, json_t *turns);
/* Its turns from the rollout (new reference) or NULL with *cause. */
json_t *store_thread_turns(struct store_thread *t, char **cause);
/*
 * The same turns as JSON text (an array) appended to out, each item kept as text from record
 * to answer (history_text): no tree per item, where a 5,000-item thread's tree costs ~10 MiB.
 * For a caller that splices the text into its answer. 0, or -EIO with *cause.
 */
int store_thread_turns_text(struct store_thread *t, struct buf *out, char **cause);

/* ---- the append API, for the agent loop (no-ops for ephemeral threads) ---- */

/* The per-turn overrides (NULL fields: the thread's settings). */
struct store_turn_params {
	const char *model, *cwd, *effort, *sandbox;
	json_t *approval_policy;
	int64_t context_window;
};
/* Start a turn: task_started + turn_context. Its id goes to turn_id. */
int store_turn_begin(
	struct store_thread *t, const struct store_turn_params *p, char turn_id[37], char **cause);
/* One finished v2 ThreadItem of the running turn (event_msg item_completed). */
int store_append_item(
	struct store_thread *t, json_t *item, int64_t started_ms, int64_t completed_ms);
/* One model-facing Responses item (response_item). */
int store_append_response_item(struct store_thread *t, json_t *item);
/* Usage after a model response: token_usage_record + token_count. */
int store_append_tokens(struct store_thread *t, const struct token_totals *last,
	int64_t context_window, const char *response_id);
/* Any other record (world_state, compacted, an event_msg payload, ...); payload borrowed. */
int store_append_record(struct store_thread *t, const char *type, json_t *payload);

enum store_turn_end {
	STORE_TURN_COMPLETED,
	STORE_TURN_FAILED,	/* error: upstream ErrorEvent {message, codex_error_info} */
	STORE_TURN_INTERRUPTED, /* turn_aborted "interrupted" */
};
/*
 * End the running turn: task_complete / turn_aborted, then one index write and an fdatasync
 * on the worker; done (optional) runs when the turn is on disk.
 */
int store_turn_end(struct store_thread *t, enum store_turn_end how, json_t *error,
	store_done_fn done, void *arg);
/*
 * thread/revert: the loaded thread's rollout becomes its records before before_turn_id (that
 * turn and every later one gone; files the turns changed are not touched). The turn must not
 * be running (the caller ends it first). 0 and cb later on the loop (r 0, or r < 0 with its
 * cause, borrowed), or r < 0 now with *cause: -EINVAL "turn not found: <id>", -EBUSY.
 * Appends are refused until cb ran.
 */
typedef void (*store_revert_fn)(void *arg, int r, const char *cause);
/* Whether the thread's history holds this turn (one thread/revert could cut before). */
int store_thread_has_turn(struct store_thread *t, const char *turn_id);
int store_revert(struct store_thread *t, const char *before_turn_id, store_revert_fn cb, void *arg,
	char **cause);
/* fdatasync the rollout on the worker; done (optional) afterwards. */
void store_sync(struct store_thread *t, store_done_fn done, void *arg);

/* ---- reading and lifecycle by id (loaded or not) ---- */

/* thread/read: the wire Thread, with turns when asked. */
int store_read(struct store *s, const char *id, int include_turns, json_t **thread, char **cause);

/* Receives a result (stolen) or r < 0 and cause; runs on the loop thread. */
typedef void (*store_json_fn)(void *arg, int r, json_t *result, const char *cause);
/*
 * Receives the wire Thread (stolen; its "turns" is [], the last member) and, when asked, the
 * turns as JSON text (borrowed for the call), or r < 0 and cause; runs on the loop thread.
 */
typedef void (*store_thread_fn)(
	void *arg, int r, json_t *thread, const char *turns, size_t turns_len, const char *cause);
/*
 * thread/read with the history built on the read worker, so a long history never holds the
 * loop; the turns come as text, never a tree (history_text). A loaded thread's rollout is read
 * up to what was written when this was called. Without a loop, cb runs before this returns.
 */
void store_read_async(
	struct store *s, const char *id, int include_turns, store_thread_fn cb, void *arg);

/* thread/list parameters (wire names; arrays borrowed). */
struct store_list_params {
	const char *cursor;
	int64_t limit; /* <= 0: default */
	/* created_at | updated_at | recency_at | section_position; NULL: created_at */
	const char *sort_key;
	const char *sort_direction; /* asc | desc; NULL: desc (asc for section_position) */
	int archived;
	json_t *model_providers, *source_kinds, *cwd, *excluded_ids;
	const char *search_term;
	/* sectionId: 0 absent (any section), 1 null (in none), 2 section_id's threads */
	int section_mode;
	const char *section_id;
};
/* Receives a list answer {data, nextCursor, backwardsCursor} (stolen) or r < 0 and cause. */
typedef void (*store_list_fn)(void *arg, int r, json_t *result, const char *cause);
/*
 * thread/list. Answered from the index on its worker, after every index write posted before
 * it (cb runs on the loop; without a loop, before this returns); while the index is being
 * built from scratch, after the build. A rescan is started in the background when the rollouts
 * may have changed (see docs/threads.md).
 */
void store_list(struct store *s, const struct store_list_params *p, store_list_fn cb, void *arg);

/* thread/archive: the rollout moves to archived_sessions/ (the thread is unloaded first). */
int store_archive(struct store *s, const char *id, char **cause);
/* thread/unarchive: back to sessions/YYYY/MM/DD; the Thread goes to *thread. */
int store_unarchive(struct store *s, const char *id, json_t **thread, char **cause);
/* thread/delete: the rollout and its index row are removed (the thread is unloaded first). */
int store_delete(struct store *s, const char *id, char **cause);
/*
 * thread/name/set: kept in session_index.jsonl (upstream's place) and the index. Upstream
 * takes any non-blank name; here a name (trimmed) is at most STORE_NAME_MAX bytes, so one call
 * cannot append megabytes, and every line stays readable (NAMES_LINE_MAX is 64 KiB).
 */
#define STORE_NAME_MAX 1024
int store_set_name(struct store *s, const char *id, const char *name, char **cause);
/* thread/metadata/update: patch gitInfo {sha, branch, originUrl}; the Thread to *thread. */
int store_update_git(
	struct store *s, const char *id, json_t *git_patch, json_t **thread, char **cause);

/* thread/turns/list and thread/items/list (wire params; strings borrowed). */
struct store_page_params {
	const char *cursor;	    /* string cursor, or NULL */
	const char *anchor_item_id; /* items/list {type:"item", itemId} anchor, or NULL */
	int64_t limit;		    /* <= 0: default */
	const char *sort_direction; /* NULL: desc for turns, asc for items */
	const char *items_view;	    /* turns: notLoaded | summary | full; NULL: summary */
	const char *turn_id;	    /* items: only this turn's items */
};
int store_turns_list(struct store *s, const char *id, const struct store_page_params *p,
	json_t **result, char **cause);
int store_items_list(struct store *s, const char *id, const struct store_page_params *p,
	json_t **result, char **cause);

/* ---- index maintenance ---- */

/* Start a rescan now (done, optional, when it finished). */
void store_rescan(struct store *s, int full, store_done_fn done, void *arg);
/* Whether the index is usable (not being built from scratch). */
int store_index_ready(struct store *s);
/* Run pending completions (stores without a loop call this; loops get them by ev_async). */
void store_poll(struct store *s);
/* Block until background work queued so far has finished (tests, shutdown). */
void store_drain(struct store *s);

#endif
