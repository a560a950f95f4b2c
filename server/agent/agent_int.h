/*
 * What the agent's files share: agent.c (lifecycle, the state machine, the end of a turn),
 * agent_model.c (model requests and their events as items), agent_tools.c (tool calls and
 * approvals), agent_shell.c (which command, and may it run), agent_run.c (commands on the exec
 * engine), agent_patch.c (apply_patch), agent_prompt.c (what the model is sent),
 * agent_client_tools.c (dynamic tools) and agent_user_input.c (request_user_input).
 *
 * The state machine: a turn is driven by agent_advance(), run from an idle watcher after every
 * completion (never from inside a callback of model/, exec/ or the sink), so it is never
 * re-entered. Phases:
 *   MODEL  a model request runs (or is about to be made: req NULL, need_model)
 *   TOOLS  the calls of the last response run one after another (calls[next])
 *   ENDING interrupted or failed: wait for what still runs (a process, a disk job), then end
 * A call holds the turn (t->busy) while it runs: a process, an approval, a disk job.
 */
#ifndef AGENT_INT_H
#define AGENT_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "account/account.h"
#include "agent.h"
#include "agent/approval/approval_rules.h"
#include "agent/prompt/prompt_input.h"
#include "agent/prompt/prompt_texts.h"
#include "agent/shell/shell_words.h"
#include "agent/tools/tool_headtail.h"
#include "config/config.h"
#include "protocol/buf.h"
#include "thread/rollout/rollout_summary.h"

struct agent_review;
struct codemode;
struct agent_dyn_call;
struct agent_mcp_call;
struct mcp_set;
struct review_git;
struct model_req;
struct patch;
struct shell_snapshot;
struct exec_proc;
struct hooks_result;
struct worker;

#define AGENT_TEXT_MAX	    (4u << 20)	/* an agent message or reasoning text, at most */
#define AGENT_MODEL_OUT	    (1u << 20)	/* a command's output kept for the model, at most */
#define AGENT_SESSIONS	    16		/* running exec_command sessions per thread */
#define AGENT_SHELL_TIMEOUT 10000	/* shell / shell_command without timeout_ms (upstream's) */
#define AGENT_DIFF_MAX	    (64u << 20) /* file contents the turn's diff tracker keeps */
#define AGENT_COMPACT_KEEP                                                                         \
	(80u << 10) /* user message text kept by a compaction (upstream: 20k tokens) */

/* The shell snapshots are taken with: agent_shell.c's default shell. */
#define AGENT_SNAPSHOT_SHELL "/bin/bash"

enum agent_phase { PHASE_MODEL, PHASE_TOOLS, PHASE_ENDING };

/* How a request to the client ended (agent_ask_client's callback). */
enum agent_answer {
	AGENT_ANSWER_RESULT, /* its result */
	AGENT_ANSWER_ERROR,  /* a JSON-RPC error */
	AGENT_ANSWER_CANCEL, /* withdrawn (interrupt, the turn's end) or the client is gone */
};

/* What the thread's status says while a request waits (the sink's `waiting`). */
enum agent_wait {
	AGENT_WAIT_NONE,     /* nothing (item/tool/call, as upstream) */
	AGENT_WAIT_APPROVAL, /* waitingOnApproval */
	AGENT_WAIT_INPUT,    /* waitingOnUserInput */
};

/* An item being streamed (agent message or reasoning). */
struct agent_stream_item {
	char id[128];
	int started;
	int synth;	 /* started by a delta without an item id: the id is ours */
	int kind;	 /* 0 agentMessage, 1 reasoning */
	struct buf text; /* agentMessage text */
	json_t *summary; /* reasoning: summary strings */
	json_t *content; /* reasoning: content strings */
	int64_t started_ms;
};

/* Which shell tool a command came from: how its answer is written. */
enum agent_cmd_tool {
	AGENT_TOOL_EXEC,       /* exec_command: unified exec text, a session while it runs */
	AGENT_TOOL_SHELL,      /* shell {command: argv}: JSON */
	AGENT_TOOL_SHELL_TEXT, /* shell_command, local_shell_call: freeform text */
};

/* A command the model runs (exec_command, shell, shell_command, local_shell_call). */
struct agent_cmd {
	struct agent_turn *t; /* NULL once the turn it belonged to ended */
	struct agent *a;
	enum agent_cmd_tool tool;
	char item_id[128];	     /* the call id */
	char *call_id;		     /* the call the next answer goes to (write_stdin changes it) */
	int custom;		     /* answered with custom_tool_call_output */
	json_t *item;		     /* the commandExecution item while it is started */
	struct shell_words argv;     /* as it runs */
	char *display;		     /* shlex-joined argv: the item's command */
	char *cwd;		     /* where it runs */
	struct approval_request req; /* the policy's view of it (borrows from this struct) */
	char *justification;
	struct shell_words prefix; /* the model's prefix_rule */
	bool sandboxed;		   /* runs in the sandbox (else escalated, approved) */
	bool approved;		   /* the user accepted it (or acceptForSession covered it) */
	bool asked;		   /* an approval request was sent for it */
	char *cache_key;	   /* acceptForSession's key */
	int tty;
	int session;	      /* exec_command: the session id the model may poll, else 0 */
	long long yield_ms;   /* exec_command: answer the model after this long */
	long long timeout_ms; /* shell tools: kill after this long (< 0: none) */
	size_t max_tokens;    /* exec_command's max_output_tokens, or 0 */
	struct exec_proc *proc;
	struct tool_headtail agg; /* aggregatedOutput */
	struct buf out;		  /* not yet given to the model */
	size_t out_total;	  /* bytes produced since the last answer */
	char pend[4];		  /* a UTF-8 sequence cut by a read, for the next delta */
	size_t npend;
	size_t deltas;	    /* outputDelta notifications sent */
	int64_t started_ms; /* the item's start */
	int64_t call_ms;    /* this call's start (write_stdin: the write) */
	ev_timer yield;	    /* exec_command: the answer to the model before exit */
	int answered;	    /* the model got its answer for this call */
	int done;	    /* the process ended */
	int timed_out;
	int exit_code;
	int retried; /* re-run without the sandbox after a denial */
	/* thread/shellCommand (user_shell.c): no model call; its end and records are its own. */
	bool user;
	bool launched;		     /* its item started and it was spawned */
	char *script;		     /* the user's command as typed */
	struct buf std[2];	     /* stdout, stderr apart (a timeout's error text) */
	int64_t spawned_ns;	     /* CLOCK_MONOTONIC at the spawn */
	struct agent_cmd *next_user; /* the thread's list */
};

enum agent_history_state {
	AGENT_HISTORY_NONE,    /* not read from the rollout yet */
	AGENT_HISTORY_LOADING, /* being read on the worker */
	AGENT_HISTORY_LOADED,
};

struct agent {
	struct agent_config c;
	enum agent_history_state history_state;
	char *rollout_path; /* the thread's rollout, or NULL (ephemeral) */
	off_t rollout_end;  /* its size before this agent appended to it */
	struct buf hist;    /* Responses items of the thread, compact JSON joined by commas */
	size_t *hist_lens;  /* each item's length in hist, oldest first */
	size_t hist_n, hist_cap;
	struct agent_turn *turn;      /* running, or NULL */
	struct approval_cache *cache; /* acceptForSession: commands, and patch paths */
	long long next_approval;
	int next_session;
	struct agent_cmd *sessions[AGENT_SESSIONS]; /* exec_command processes alive */
	struct token_totals total;		    /* the thread's usage so far */
	json_t *rate_limits;	     /* the last RateLimitSnapshot its responses carried, or NULL */
	struct shell_snapshot *snap; /* the login shell's set-up, for -lc calls (or NULL) */
	char *collab_last;	     /* the last collaboration mode message given, or NULL */
	int plan_mode; /* the collaboration mode turns last selected is Plan (kept across turns) */
	struct review_git *review_git; /* review/start's git step (agent_review.c), or NULL */
	json_t *dynamic_tools;	       /* DynamicToolSpec[] of the thread, or NULL */
	struct mcp_set *mcp;	       /* the thread's MCP servers (borrowed), or NULL */
	agent_review_cb review_cb;
	void *review_arg;
	struct agent_cmd *user_cmds; /* thread/shellCommand's commands running (user_shell.c) */
	unsigned n_user;
	int hooks_started;   /* SessionStart's turn came (agent_hooks.c) */
	struct codemode *cm; /* code mode's cells and store (agent_codemode.c), or NULL */
};

struct agent_turn {
	struct agent *a;
	char id[64];
	struct agent_turn_opts o; /* strings and JSON are our copies */
	struct model_provider *provider;
	const struct agent_sink *sink;
	void *arg;
	enum agent_phase phase;
	ev_idle kick;
	int64_t started_ms;
	/* MODEL */
	struct model_req *req;
	struct {
		struct account_wait *wait;  /* a refresh the next request waits for, or NULL */
		struct account_creds creds; /* the last fetched (its token: the 401 check) */
		int chatgpt;		    /* requests go to the ChatGPT backend */
		int ready;		    /* creds are fresh for the next request */
		int retried;		    /* this request already recovered from a 401 */
		char *rejected;		    /* the token the backend refused, or NULL */
	} auth;				    /* agent_auth.c */
	int need_model;
	json_t *response_items; /* model items of the response being streamed */
	struct agent_stream_item msg, reasoning;
	json_t *user_input;  /* the turn's input, until its item is reported */
	json_t *steer;	     /* input queued by turn/steer */
	int steer_cut;	     /* steered: cut the response being streamed */
	int compacting;	     /* the request is a compaction */
	int compact_only;    /* thread/compact/start: end after compacting */
	int context_retried; /* compacted once after context_length_exceeded */
	/* TOOLS */
	json_t *calls; /* tool calls of the last response */
	size_t next;
	int busy;		   /* a call is running (process, approval, disk job) */
	struct clock_sleep *sleep; /* clock.sleep's timer while it runs (tools/clock.h) */
	long long approval;	   /* the pending approval's token, or -1 */
	void (*on_answer)(struct agent_turn *t, enum approval_reply reply);
	/* or, for a request whose result is not a decision (agent_ask_client): */
	void (*on_result)(struct agent_turn *t, const json_t *result, enum agent_answer st);
	void *pending;			  /* what waits for the answer */
	struct agent_dyn_call *dyn;	  /* dynamic calls waiting on the client, newest first */
	struct agent_mcp_call *mcp_calls; /* MCP calls waiting on their server, newest first */
	struct agent_cmd *cmd;		  /* the command the current call waits on */
	struct diff_turn *diffs;	  /* the turn's file changes, for turn/diff/updated */
	struct token_totals last;	  /* the last response's usage */
	/* ENDING */
	int interrupted, failed, ended;
	json_t *error;		     /* TurnError of a failed turn */
	int waiting;		     /* the sink was told we wait on the client */
	int plan_mode;		     /* the turn runs in Plan mode (request_user_input asks) */
	struct agent_review *review; /* a review turn's state (agent_review.c), or NULL */
	/* thread/shellCommand: a turn of the user's commands alone (no model), and how many of
	 * the thread's user commands run in this turn (it ends after them). */
	int shell_only;
	unsigned user_running;
	/* agent_hooks.c: the hook step running, the turn's new items waiting for the prompt
	 * hooks, the final answer waiting for the Stop hooks, and whether one asked again; the
	 * call the tool hooks last saw (held) and its output waiting for PostToolUse; the call
	 * waiting for PermissionRequest and what resumes it */
	struct hooks_step *hook;
	json_t *hook_input, *hook_call, *tool_out, *tool_res;
	void *perm;
	void (*on_perm)(struct agent_turn *t, const struct hooks_result *r, void *perm);
	char *stop_text;
	int stop_due, stop_active;
};

/* agent.c */
struct agent_turn *agent_turn_new(struct agent *a, const struct agent_turn_opts *o,
	const struct agent_sink *sink, void *arg, char **cause);
void agent_record_response(struct agent *a, json_t *item);
void agent_kick(struct agent_turn *t);
void agent_worker_post(struct agent *a, void (*run)(void *), void (*done)(void *), void *arg);
void agent_worker_done(struct agent *a);
void agent_fail(struct agent_turn *t, json_t *turn_error);
void agent_history_add(struct agent *a, json_t *item);
void agent_history_clear(struct agent *a);
json_t *agent_history_items(const struct agent *a);
void agent_item_start(struct agent_turn *t, json_t *item, int64_t started_ms);
void agent_item_complete(struct agent_turn *t, json_t *item, int64_t started_ms);
int64_t agent_now_ms(void);
void agent_set_waiting(struct agent_turn *t, int waiting);
/* agent_review.c: the reviewer's own history replaces the thread's from begin to end */
void agent_review_begin(struct agent_turn *t);
void agent_review_end(struct agent_turn *t, enum agent_status st);
int agent_review_private(const struct agent *a);
void agent_review_free(struct agent_review *r);
void agent_review_cancel(struct agent *a);
/* agent_history.c */
void agent_history_load(struct agent *a);
/* agent_model.c */
int agent_model_request(struct agent_turn *t, char **cause);
/* agent_auth.c: a ChatGPT login's credentials for the turn's requests. prepare: 0 go on,
 * 1 a refresh runs (the request starts when it ends), -1 the turn failed. headers: the
 * auth headers (heap copies in owned), their count. unauthorized: 1 when a 401 is being
 * recovered from (the request is asked again). */
int agent_auth_prepare(struct agent_turn *t);
size_t agent_auth_headers(struct agent_turn *t, const char **headers, char **owned);
void agent_auth_sent(struct agent_turn *t);
int agent_auth_unauthorized(struct agent_turn *t);
void agent_auth_completed(struct agent_turn *t);
void agent_auth_cancel(struct agent_turn *t);
void agent_auth_free(struct agent_turn *t);
void agent_model_cancel(struct agent_turn *t);
void agent_stream_finish(struct agent_turn *t);
/* agent_prompt.c */
json_t *agent_prompt_input(struct agent_turn *t);
/* agent_tools.c */
void agent_compact_done(struct agent_turn *t);
void agent_steer_flush(struct agent_turn *t);
void agent_tools_next(struct agent_turn *t);
void agent_tools_run(struct agent_turn *t, json_t *call);
void agent_tool_output(struct agent_turn *t, const char *call_id, int custom, const char *text);
void agent_ask(struct agent_turn *t, const char *method, json_t *params,
	void (*on_answer)(struct agent_turn *, enum approval_reply), void *pending);
void agent_ask_client(struct agent_turn *t, const char *method, json_t *params,
	enum agent_wait wait,
	void (*on_result)(struct agent_turn *, const json_t *, enum agent_answer), void *pending);
void agent_tools_abort(struct agent_turn *t);
/* agent_user_input.c: request_user_input (asks the client in Plan mode, else refused) */
void agent_user_input_call(struct agent_turn *t, const json_t *call, const char *call_id);
/* agent_client_tools.c: 1 when the call is a dynamic tool's (then it is under way), else 0 */
int agent_dynamic_call(struct agent_turn *t, const json_t *call, const char *call_id);
/* The answer to a dynamic call's request: 1 when token was one, else 0. */
int agent_dynamic_answer(
	struct agent_turn *t, long long token, const json_t *result, enum agent_answer st);
/* Interrupt or the turn's end: every dynamic call waiting completes, cancelled. */
void agent_dynamic_abort(struct agent_turn *t);
/* agent_mcp.c: 1 when the call is an MCP tool's (then it is under way), else 0 */
int agent_mcp_call(struct agent_turn *t, const json_t *call, const char *call_id);
/* Interrupt or the turn's end: every MCP call is cancelled and its item completes. */
void agent_mcp_abort(struct agent_turn *t);
/* agent_codemode.c: 1 when the call is code mode's exec or wait (then under way) */
int agent_codemode_call(struct agent_turn *t, const json_t *call, const char *call_id, int custom);
/* The tools a code-mode turn's cells may call: those its request nests (borrowed). */
void agent_codemode_tools(struct agent_turn *t, const json_t *tools);
/* agent_shell.c */
void agent_shell_call(struct agent_turn *t, json_t *call, const char *name);
void agent_shell_write_stdin(struct agent_turn *t, json_t *call);
int agent_shell_denied(struct agent_cmd *c);
/* agent_run.c */
struct agent_cmd *agent_cmd_new(struct agent_turn *t, const char *call_id, int custom);
void agent_cmd_free(struct agent_cmd *c);
void agent_cmd_item_start(struct agent_cmd *c, const char *source);
void agent_cmd_complete(struct agent_cmd *c, const char *status);
void agent_cmd_start(struct agent_cmd *c);
void agent_cmd_release(struct agent_cmd *c);
void agent_cmd_answer(struct agent_cmd *c, int running);
void agent_shell_kill_all(struct agent *a);
/* user_shell.c */
void agent_user_shell_launch(struct agent_turn *t);
void agent_user_shell_output(struct agent_cmd *c, int stream, const char *data, size_t n);
void agent_user_shell_done(struct agent_cmd *c);
void agent_user_shell_failed(struct agent_cmd *c, const char *cause);
void agent_user_shell_abort(struct agent_turn *t);
void agent_user_shell_steered(struct agent_turn *t);
void agent_user_shell_resume(struct agent *a);
/* agent_hooks.c: 1 while a hook step holds the turn (agent_advance waits) */
int agent_hooks_advance(struct agent_turn *t);
void agent_hooks_stop_due(struct agent_turn *t, const json_t *response_items);
int agent_hooks_output(struct agent_turn *t, json_t *item);
void agent_hooks_interrupt(struct agent_turn *t);
void agent_hooks_no_post(struct agent_turn *t); /* the held output skips PostToolUse */
void agent_hooks_turn_free(struct agent_turn *t);
void agent_hooks_session_end(struct agent *a);
/* PermissionRequest before asking (1: fn resumes perm, with NULL when the turn ended first) */
int agent_hooks_permission(struct agent_turn *t, const char *call_id, const json_t *call,
	const char *patch, void (*fn)(struct agent_turn *, const struct hooks_result *, void *),
	void *perm);
/* agent_patch.c */
enum agent_patch_form {
	AGENT_PATCH_TOOL,  /* the apply_patch tool: exec-style text */
	AGENT_PATCH_EXEC,  /* intercepted from exec_command: wrapped once more */
	AGENT_PATCH_SHELL, /* intercepted from shell / shell_command: exec-style text */
};
void agent_patch_call(struct agent_turn *t, const char *call_id, int custom, struct patch *p,
	const char *cwd, enum agent_patch_form form);

#endif
