/*
 * The agent loop: one turn of a thread, from the user's input to the model's last answer,
 * with the tools it calls in between. It knows nothing of JSON-RPC: it reports through a sink
 * (items, deltas, usage, plans, diffs, errors, approvals to ask for) that server/api/turn.c
 * turns into notifications and server requests, so a test can drive a turn without JSON-RPC.
 *
 * Rules:
 *  - A turn ends exactly once: sink->done runs once, last, with completed | interrupted |
 *    failed (and the error for failed). Nothing is reported for the turn after it.
 *  - Every item that started completes (item_completed), before done; nothing is reported for
 *    an item after its completion.
 *  - Every approval asked for is resolved before done: answered (agent_approval), or cancelled
 *    by the agent (sink->approval_cancel) on interrupt and at the end.
 *  - The thread's history (the model's input) is kept in memory per loaded thread, bounded by
 *    the model's context window: past AGENT_COMPACT_RATIO of it, the history is compacted.
 */
#ifndef AGENT_H
#define AGENT_H

#include <stdint.h>

#include <ev.h>
#include <jansson.h>

struct http;
struct outq;
struct worker;
struct store_thread;
struct model_provider;
struct agent;
struct agent_turn;
struct hook_set;

#define AGENT_CONTEXT_WINDOW 258400	 /* upstream's figure for a model it knows nothing of */
#define AGENT_COMPACT_RATIO  0.9	 /* of the window: compact the history past this */
#define AGENT_HISTORY_MAX    (64u << 20) /* bytes of history text, whatever the window says */

enum agent_status {
	AGENT_COMPLETED,
	AGENT_INTERRUPTED,
	AGENT_FAILED,
};

/* What a turn reports. Everything is borrowed for the duration of the call. */
struct agent_sink {
	/* item/started and item/completed: the v2 ThreadItem. */
	void (*item_started)(void *arg, json_t *item, int64_t at_ms);
	void (*item_completed)(void *arg, json_t *item, int64_t at_ms);
	/* item/agentMessage/delta, item/reasoning/{summaryTextDelta,textDelta,summaryPartAdded},
	 * item/commandExecution/outputDelta: method and its params without threadId/turnId. */
	void (*delta)(void *arg, const char *method, json_t *params);
	/* thread/tokenUsage/updated's tokenUsage; turn/diff/updated's diff; turn/plan/updated's
	 * {explanation, plan}. */
	void (*usage)(void *arg, json_t *token_usage);
	void (*diff)(void *arg, const char *diff);
	void (*plan)(void *arg, json_t *plan);
	/* The `error` notification: a TurnError, and whether the turn retries. */
	void (*error)(void *arg, json_t *turn_error, int will_retry);
	/* Waiting on the client or not: thread/status/changed flags (0 none, 1 an approval:
	 * waitingOnApproval, 2 a question: waitingOnUserInput). */
	void (*waiting)(void *arg, int waiting);
	/*
	 * Ask the client (item/commandExecution/requestApproval or item/fileChange/
	 * requestApproval, params without threadId/turnId). The answer comes back through
	 * agent_approval(token); approval_cancel(token) tells the sink the wait is over without
	 * an answer (interrupt, the turn's end): it resolves the request its own way.
	 */
	void (*approval)(void *arg, long long token, const char *method, json_t *params);
	void (*approval_cancel)(void *arg, long long token);
	/* The turn ended (once, last): error is a TurnError for AGENT_FAILED, else NULL. */
	void (*done)(void *arg, enum agent_status status, json_t *error);
	/* account/rateLimits/updated's rateLimits (a RateLimitSnapshot), after each usage; may
	 * be NULL (not told). Last, so positional initializers of the others stay valid. */
	void (*rate_limits)(void *arg, json_t *snapshot);
	/* hook/started, hook/completed: a HookRunSummary (hooks/hooks_turn.h); may be NULL. */
	void (*hook)(void *arg, const char *method, json_t *run);
	/* An offered goal tool's call: the model's answer (heap), NULL if not its tool; may be
	 * NULL. */
	char *(*tool)(void *arg, const char *name, const char *arguments);
};

/* A loaded thread's agent side: its history and settings (api/ owns one per loaded thread). */
struct agent_config {
	struct ev_loop *loop;
	struct http *http;
	struct outq *q;		     /* its congestion pauses tool output */
	struct worker *worker;	     /* disk jobs (apply_patch), shared by every thread */
	struct store_thread *thread; /* where the turn's records go (ephemeral: no-op) */
	const char *thread_id;
	const char *originator;	       /* the client name, for the request headers */
	const char *user_agent;	       /* initialize's userAgent */
	const char *base_instructions; /* NULL: ours */
	const char *developer_instructions;
	/* thread/start's dynamicTools (DynamicToolSpec[], copied), or NULL: a resumed thread
	 * gets them back from its rollout's session_meta, as upstream's */
	const json_t *dynamic_tools;
	struct hook_set *hooks; /* the thread's lifecycle hooks (the agent keeps a reference) */
};

struct agent *agent_new(const struct agent_config *c);
/* Free a thread's agent (a running turn is interrupted first, reporting as usual). */
void agent_free(struct agent *a);
/*
 * Take the thread's shell snapshot (agent/shell/shell_snapshot.h) in cwd, under the thread's
 * sandbox policy: at the thread's start, and again when its cwd changed (else nothing).
 */
void agent_shell_snapshot(struct agent *a, const char *cwd, const json_t *sandbox_policy);
/* Begin the snapshots that wait for their deferred start now: a turn began. */
void agent_shell_snapshot_hurry(void);
/* Seed the history (Responses items of the thread so far, e.g. from its rollout; stolen). */
void agent_set_history(struct agent *a, json_t *items);
/*
 * thread/inject_items: Responses items (borrowed) appended to the history, in order, and to the
 * rollout, where a resume reads them back; the next model request carries them.
 */
void agent_inject_items(struct agent *a, const json_t *items);
/* The running turn, or NULL. */
struct agent_turn *agent_running(struct agent *a);

/* What one turn runs with (turn/start's params over the thread's settings). */
struct agent_turn_opts {
	const char *turn_id;
	json_t *input;		 /* wire UserInput[] (borrowed) */
	const char *cwd;	 /* absolute: the sandbox's writable roots derive from it */
	json_t *sandbox_policy;	 /* wire SandboxPolicy (borrowed) */
	json_t *approval_policy; /* wire AskForApproval (borrowed) */
	const char *model;
	const char *effort;		       /* reasoning effort, or NULL */
	const char *summary;		       /* reasoning summary, or NULL */
	json_t *output_schema;		       /* or NULL */
	const struct model_provider *provider; /* copied */
	int64_t context_window;		       /* 0: AGENT_CONTEXT_WINDOW */
	unsigned max_processes;		       /* per tool command */
	unsigned tools; /* enum tool_spec mask offered to the model; 0: the default */
	int code_mode;	/* the tools go nested in exec (agent/codemode/codemode_tools.h) */
	/* A collaboration mode's developer message (collab_mode.h) this turn selected, or NULL:
	 * it goes before the user's input unless it is the last one the thread was given. */
	const char *collab_message;
	/* The collaboration mode this turn selected ("plan", "default"), or NULL: the thread's
	 * last one (upstream keeps it for later turns; a new agent starts in Default). */
	const char *collab_mode;
};

/* Start a turn (none may be running); 0, or -1 with *cause. The sink reports from now on. */
int agent_turn_start(struct agent *a, const struct agent_turn_opts *o,
	const struct agent_sink *sink, void *arg, char **cause);
/*
 * The collaboration mode a resumed thread's rollout recorded ("plan", "default") and its
 * developer message (collab_mode_message's, borrowed), before any turn: later turns keep the
 * mode, and the message, already in the history read back, is not added again.
 */
void agent_collab_restore(struct agent *a, const char *mode, const char *message);
/* Interrupt: cancel the model, kill tool processes, cancel approvals; done(interrupted) follows. */
void agent_turn_interrupt(struct agent_turn *t);
/* Add input to the running turn (it goes with the next model request); 0 or -1 when ending. */
int agent_turn_steer(struct agent_turn *t, json_t *input);
const char *agent_turn_id(const struct agent_turn *t);

/*
 * The client's answer to approval `token`: the request's result ({"decision": ...}), or NULL
 * for a JSON-RPC error reply. Unknown or already resolved tokens are ignored.
 */
void agent_approval(struct agent *a, long long token, json_t *result);
/* The client went away with request `token` unanswered (an approval: cancelled). */
void agent_approval_gone(struct agent *a, long long token);
/* The output queue drained: resume tool output paused by its congestion. */
void agent_resume(struct agent *a);
/*
 * The thread's MCP servers (mcp/mcp.h; borrowed: the caller frees them after the agent): their
 * ready servers' tools are offered from the next model request on (agent_mcp.c).
 */
struct mcp_set;
void agent_set_mcp(struct agent *a, struct mcp_set *mcp);

/*
 * review/start's git step (agent/review/review.h): cb runs once, with the merge base or an
 * error (also when the agent is freed first). 0, or -1 when a turn or another review is under
 * way.
 */
typedef void (*agent_review_cb)(void *arg, const char *error, const char *merge_base);
int agent_review_prepare(
	struct agent *a, const char *cwd, const json_t *target, agent_review_cb cb, void *arg);
/*
 * review/start (agent_review.c): a review turn whose reviewer is told prompt, read-only and
 * without approvals whatever o says; 0 or -1 with *cause. Then agent_review_entered reports
 * its enteredReviewMode item (hint: what is reviewed) before anything else of the turn.
 */
int agent_review_start(struct agent *a, const struct agent_turn_opts *o, const char *prompt,
	const struct agent_sink *sink, void *arg, char **cause);
void agent_review_entered(struct agent_turn *t, const char *hint);

/*
 * thread/shellCommand (user_shell.c): the user's script, run by the thread's shell (-lc, its
 * syntax kept) in the thread's cwd WITHOUT the sandbox, as upstream documents, killed (its
 * whole tree) after timeout_ms, on interrupt, or when the thread goes. Its output streams as
 * a commandExecution item (source userShell); at its end the model's history gets upstream's
 * <user_shell_command> record. With a turn running it joins that turn (which then ends only
 * after it); else it starts a turn of its own with o's settings, ending with its commands:
 * *new_turn says which (the caller reports turn/started before the item starts, from the
 * loop). 0, or -1 with *cause.
 */
int agent_user_shell(struct agent *a, const struct agent_turn_opts *o, const char *script,
	long long timeout_ms, const struct agent_sink *sink, void *arg, int *new_turn,
	char **cause);
/* Whether the turn is one of user shell commands alone (no model). */
int agent_turn_shell_only(const struct agent_turn *t);

/* thread/compact/start: compact the history now (as its own turn); 0 or -1 with *cause. */
int agent_compact_start(struct agent *a, const struct agent_turn_opts *o,
	const struct agent_sink *sink, void *arg, char **cause);

#endif
