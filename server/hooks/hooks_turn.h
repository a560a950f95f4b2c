/*
 * The hooks at a turn's lifecycle points, as upstream 0.169 runs them (recorded in
 * tests/fixtures/hooks/upstream/turns.json), behind a narrow interface for the agent: it says
 * where the turn is, and gets back what to put into the history, an item to report and whether
 * the turn goes on, ends, or asks the model again. Steps run on the loop (never waited for).
 *
 *  - prompt: SessionStart (the thread's first turn) then UserPromptSubmit, before the user's
 *    message item. Their contexts become developer messages, SessionStart's before the
 *    user's input, UserPromptSubmit's after it; a UserPromptSubmit block ends the turn with
 *    nothing recorded and no model request.
 *  - stop: Stop after the final answer; a block asks the model again with a user message
 *    `<hook_prompt hook_run_id="...">reason</hook_prompt>` and reports a hookPrompt item.
 *  - end: SessionEnd when the thread goes (the connection closed): detached, nothing is
 *    reported; hooks_detached_live says whether one still runs (the daemon waits for it).
 *  - tools: PreToolUse / PostToolUse around a call, PermissionRequest where the approval policy
 *    would ask the client (tests/fixtures/hooks/upstream/permission.json).
 */
#ifndef HOOKS_TURN_H
#define HOOKS_TURN_H

#include "hooks.h"

/* Where the turn is: the fields every hook's stdin carries (borrowed during the call). */
struct hooks_ctx {
	struct ev_loop *loop;
	const struct hook_set *set;
	const char *session_id;	     /* the thread's id */
	const char *turn_id;	     /* or NULL */
	const char *transcript_path; /* the rollout, or NULL */
	const char *cwd;
	const char *model;
	const json_t *approval_policy; /* wire AskForApproval: permission_mode */
};

enum hooks_verdict {
	HOOKS_GO_ON, /* go on as without hooks */
	HOOKS_END,   /* end the turn now (what was not recorded is dropped) */
	HOOKS_AGAIN, /* ask the model again */
	HOOKS_ALLOW, /* PermissionRequest: approved, run it without asking */
	HOOKS_DENY,  /* PermissionRequest: refused, the model hears message */
};

struct hooks_result {
	enum hooks_verdict verdict;
	json_t *items;	     /* Responses items for the history and the rollout, in order */
	json_t *item;	     /* a ThreadItem to report started and completed, or NULL */
	const char *message; /* HOOKS_DENY: the hooks' denial (borrowed) */
};

struct hooks_step;
struct hooks_step_report {
	/* hook/started and hook/completed: a HookRunSummary (borrowed). */
	void (*summary)(void *arg, const char *method, json_t *run);
	/* Once, from the loop, last (r borrowed); the step is freed right after it returns. */
	void (*done)(void *arg, const struct hooks_result *r);
};

/*
 * The prompt step: input are the turn's new Responses items (the user's message and what
 * goes with it, borrowed), prompt the user's text; session_start: the thread's first turn
 * ("startup", or "resume" for a thread read back). NULL when no hook runs (nothing reported).
 */
struct hooks_step *hooks_prompt_start(const struct hooks_ctx *c, const char *session_start,
	const json_t *input, const char *prompt, const struct hooks_step_report *r, void *arg);
/* The stop step: active after a Stop block already asked again; item_id names the hookPrompt
 * item and its message. NULL when no hook runs. */
struct hooks_step *hooks_stop_start(const struct hooks_ctx *c, int active, const char *last_message,
	const char *item_id, const struct hooks_step_report *r, void *arg);
/* Interrupt: the hooks' processes are killed, nothing more is reported. */
void hooks_step_free(struct hooks_step *s);

/*
 * The tool steps around one call (a Responses call item, borrowed): PreToolUse before it runs
 * (output NULL), PostToolUse once its output item is there (borrowed; result: an MCP call's
 * result, or NULL). The calls the hooks see and their names: hooks_tool.h; run ids end in
 * ":<call id>". done's items: the contexts as developer messages, then PostToolUse's the
 * output item (a block's or stop's reason replacing its output); a PreToolUse block is
 * HOOKS_END with the call's answer among the items (it must not run). NULL when no hook runs.
 */
struct hooks_step *hooks_tool_start(const struct hooks_ctx *c, const json_t *call,
	const json_t *output, const json_t *result, const struct hooks_step_report *r, void *arg);
/*
 * The permission step: PermissionRequest for a call the approval policy would ask about, after
 * PreToolUse and before the approval request (upstream's order: a command's item starts after
 * it, a patch's before). exec_command's call is tool "Bash" {command, description: its
 * justification}; a patch (its text without the heredoc; call NULL) is "apply_patch"
 * {command}; an MCP tool's (after its item started, where the user would be asked) is
 * "mcp__<server>__<tool>" with the call's arguments. done's verdict: HOOKS_ALLOW, HOOKS_DENY, or
 * HOOKS_GO_ON (no decision: the client is asked). NULL when no hook runs.
 */
struct hooks_step *hooks_permission_start(const struct hooks_ctx *c, const char *call_id,
	const json_t *call, const char *patch, const struct hooks_step_report *r, void *arg);
/* Whether the tool hooks (PreToolUse, PermissionRequest, PostToolUse) see that call: its output
 * then waits for PostToolUse, and a response's MCP calls go out one by one. */
int hooks_tool_seen(const struct hook_set *set, const json_t *call);

/* UserPromptSubmit's `prompt`: the input's texts (heap). Stop's `last_assistant_message`:
 * the last assistant text among Responses items (heap), or NULL. */
char *hooks_prompt_text(const json_t *input);
char *hooks_last_answer(const json_t *items);

/* SessionEnd, detached (c->turn_id unused). */
void hooks_session_end(const struct hooks_ctx *c);
int hooks_detached_live(void);

#endif
