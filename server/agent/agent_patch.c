/*
 * apply_patch in a turn: the patch (a function call {input}, a custom tool call, or a shell
 * command intercepted in agent_shell.c) is parsed, verified against the disk on the agent's
 * worker (never on the loop), shown as a fileChange item with its diffs, approved as the
 * policy says, then written all or nothing on the worker, and the turn's aggregated diff is
 * sent (turn/diff/updated). Every path written, moved or deleted must be one a sandboxed
 * command could write (sandbox_may_write: writable roots, protected paths): a patch never
 * writes where the command sandbox could not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "agent/diff/diff.h"
#include "agent/patch/apply_patch.h"
#include "agent/tools/file_change.h"
#include "agent/tools/tool_output.h"
#include "hooks/hooks_turn.h"
#include "protocol/xmalloc.h"
#include "sandbox/sandbox.h"
#include "thread/store/worker.h"

/* One patch going through prepare, approval and commit. */
struct agent_patch {
	struct agent_turn *t;
	char *call_id;
	int custom;
	enum agent_patch_form form;
	char *cwd;
	struct patch *patch;
	struct apply_patch_result *res;
	json_t *item;
	json_t *policy; /* the turn's sandbox policy, for the confinement check */
	char *policy_cwd;
	int r; /* the job's result */
	char *cause;
	int64_t started_ms;
};

/* The confinement: a path a sandboxed command could write (runs on the worker). */
static int
agent_patch_confine_cb(void *arg, const char *path, enum apply_patch_op op, char **cause)
{
	struct agent_patch *ap = arg;

	(void)op;
	if (sandbox_may_write(ap->policy, ap->policy_cwd, path))
		return 0;
	*cause = xasprintf("writing %s is outside the sandbox's writable roots", path);
	return -1;
}

static void
agent_patch_free(struct agent_patch *ap)
{
	apply_patch_free(ap->patch);
	apply_patch_result_free(ap->res);
	json_decref(ap->item);
	json_decref(ap->policy);
	free(ap->policy_cwd);
	free(ap->call_id);
	free(ap->cwd);
	free(ap->cause);
	free(ap);
}

/*
 * Tell the model how it went. A patch that ran (written or failing to write) is answered as
 * upstream formats apply_patch's exec output, wrapped once more in unified exec's form when it
 * came through exec_command (as the reference rollout shows: "Wall time: 0.0000 seconds\n
 * Output:\nExit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. ..."); a refusal
 * (verification, confinement, the user) is answered as plain text.
 */
static void
agent_patch_answer(struct agent_patch *ap, const char *text, int ran, int exit_code)
{
	struct tool_exec_result r = {0};
	char *out = NULL, *wrapped = NULL;

	if (ran) {
		out = apply_patch_exec_output(exit_code, 0, text);
		text = out;
		if (ap->form == AGENT_PATCH_EXEC) {
			r.output = out;
			r.output_len = strlen(out);
			wrapped = tool_output_exec(&r);
			text = wrapped;
		}
	}
	agent_tool_output(ap->t, ap->call_id, ap->custom, text);
	if (ap->form == AGENT_PATCH_EXEC) /* the apply_patch tool's PostToolUse runs */
		agent_hooks_no_post(ap->t);
	free(out);
	free(wrapped);
}

/* End the call: its item (if any) completes with status; the turn goes on. */
static void
agent_patch_end(struct agent_patch *ap, const char *status)
{
	struct agent_turn *t = ap->t;

	if (ap->item != NULL) {
		json_object_set_new(ap->item, "status", json_string(status));
		agent_item_complete(t, ap->item, ap->started_ms);
	}
	t->busy = 0;
	agent_kick(t);
	agent_patch_free(ap);
}

static void
agent_patch_commit_run(void *arg)
{
	struct agent_patch *ap = arg;

	ap->r = apply_patch_commit(ap->res, &ap->cause);
}

/* Written (or not): report the file changes and the turn's diff. */
static void
agent_patch_commit_done(void *arg)
{
	struct agent_patch *ap = arg;
	struct agent_turn *t = ap->t;
	struct buf diff;

	agent_worker_done(t->a);
	char *summary;
	int empty = 1;

	if (ap->r != 0) {
		agent_patch_answer(
			ap, ap->cause != NULL ? ap->cause : "Failed to write the patch", 1, 1);
		agent_patch_end(ap, "failed");
		return;
	}
	summary = apply_patch_summary(ap->res);
	agent_patch_answer(ap, summary, 1, 0);
	free(summary);
	apply_patch_track(ap->res, t->diffs);
	agent_patch_end(ap, "completed");
	buf_init(&diff, AGENT_DIFF_MAX);
	if (diff_turn_unified(t->diffs, &diff, &empty) == 0 && !empty)
		t->sink->diff(t->arg, buf_str(&diff));
	buf_free(&diff);
}

/* Approved (or no approval needed): write it on the worker. */
static void
agent_patch_commit(struct agent_patch *ap)
{
	agent_worker_post(ap->t->a, agent_patch_commit_run, agent_patch_commit_done, ap);
}

/* The client's answer for a patch. */
static void
agent_patch_answered(struct agent_turn *t, enum approval_reply r)
{
	struct agent_patch *ap = t->pending;

	t->pending = NULL;
	switch (r) {
	case APPROVAL_REPLY_ACCEPT_FOR_SESSION:
		file_change_remember(t->a->cache, ap->res);
		/* fall through */
	case APPROVAL_REPLY_ACCEPT:
	case APPROVAL_REPLY_ACCEPT_WITH_AMENDMENT:
	case APPROVAL_REPLY_NETWORK_ALLOW:
		if (!t->interrupted && !t->failed) {
			agent_patch_commit(ap);
			return;
		}
		agent_patch_answer(ap, TOOL_OUTPUT_PATCH_REJECTED, 0, 1);
		agent_patch_end(ap, "declined");
		return;
	case APPROVAL_REPLY_ERROR:
		agent_patch_answer(ap, "patch rejected: " TOOL_OUTPUT_APPROVAL_FAILED, 0, 1);
		agent_patch_end(ap, "failed");
		return;
	default:
		agent_patch_answer(ap, TOOL_OUTPUT_PATCH_REJECTED, 0, 1);
		agent_patch_end(ap, "declined");
		if (r == APPROVAL_REPLY_CANCEL && !t->interrupted)
			agent_turn_interrupt(t);
		return;
	}
}

static void
agent_patch_ask(struct agent_patch *ap)
{
	if (file_change_approved(ap->t->a->cache, ap->res)) /* acceptForSession's */
		agent_patch_commit(ap);
	else
		agent_ask(ap->t, "item/fileChange/requestApproval",
			json_pack("{s:s, s:I, s:n, s:n}", "itemId", ap->call_id, "startedAtMs",
				(json_int_t)ap->started_ms, "reason", "grantRoot"),
			agent_patch_answered, ap);
}

/* PermissionRequest's answer (r NULL: the turn ended first): an allow writes it, a deny
 * answers the model with the hooks' message, no decision asks the client. */
static void
agent_patch_permitted(struct agent_turn *t, const struct hooks_result *r, void *arg)
{
	struct agent_patch *ap = arg;

	(void)t;
	if (r != NULL && r->verdict == HOOKS_ALLOW)
		agent_patch_commit(ap);
	else if (r != NULL && r->verdict != HOOKS_DENY)
		agent_patch_ask(ap);
	else {
		agent_patch_answer(ap, r != NULL ? r->message : TOOL_OUTPUT_PATCH_REJECTED, 0, 1);
		agent_patch_end(ap, "declined");
	}
}

static void
agent_patch_prepare_run(void *arg)
{
	struct agent_patch *ap = arg;
	struct apply_patch_confine conf = {.check_cb = agent_patch_confine_cb, .arg = ap};

	ap->r = apply_patch_prepare(ap->patch, ap->cwd, &conf, &ap->res, &ap->cause);
}

/* Verified (or not): show the change, then ask or write. */
static void
agent_patch_prepare_done(void *arg)
{
	struct agent_patch *ap = arg;
	struct agent_turn *t = ap->t;
	struct approval_policy pol;
	char *text, *cause = NULL;
	int ask;

	agent_worker_done(t->a);
	if (ap->r != 0) {
		text = apply_patch_failure_text(ap->r, ap->cause);
		agent_patch_answer(ap, text, 0, 1);
		free(text);
		agent_patch_end(ap, NULL);
		return;
	}
	if (t->interrupted || t->failed) {
		agent_patch_end(ap, NULL);
		return;
	}
	ap->item = file_change_item(ap->res, ap->call_id);
	agent_item_start(t, ap->item, ap->started_ms);
	/*
	 * untrusted (and granular with sandbox_approval) asks for every patch (PermissionRequest
	 * first, even where acceptForSession covers it, as upstream); on-request and never write
	 * what the sandbox allows (confinement already refused the rest).
	 */
	ask = approval_policy_parse(t->o.approval_policy, &pol, &cause) != 0 ||
		pol.kind == APPROVAL_UNTRUSTED ||
		(pol.kind == APPROVAL_GRANULAR && pol.sandbox_approval);
	free(cause);
	if (!ask)
		agent_patch_commit(ap);
	else if (!agent_hooks_permission(t, ap->call_id, NULL, apply_patch_text(ap->patch),
			 agent_patch_permitted, ap))
		agent_patch_ask(ap);
}

/* A patch the model sent (parsed; stolen), resolved against cwd. */
void
agent_patch_call(struct agent_turn *t, const char *call_id, int custom, struct patch *p,
	const char *cwd, enum agent_patch_form form)
{
	struct agent_patch *ap = xcalloc(1, sizeof *ap);

	ap->t = t;
	ap->call_id = xstrdup(call_id != NULL ? call_id : "");
	ap->custom = custom;
	ap->form = form;
	ap->cwd = xstrdup(cwd);
	ap->policy = json_deep_copy(t->o.sandbox_policy);
	ap->policy_cwd = xstrdup(t->o.cwd);
	ap->started_ms = agent_now_ms();
	ap->patch = p;
	t->busy = 1;
	agent_worker_post(t->a, agent_patch_prepare_run, agent_patch_prepare_done, ap);
}
