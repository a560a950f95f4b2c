/*
 * The shell tools (exec_command, shell, shell_command, local_shell_call, write_stdin): which
 * command a call asks for, and whether it runs. A call is parsed into an argv and a workdir;
 * apply_patch written as a command goes to agent_patch.c instead of running; a workdir that
 * resolves outside the turn's writable roots is refused; then approval_rules decides: run
 * (agent_run.c), ask the client first, or refuse with upstream's words for the model. After a
 * sandboxed run that failed and looks sandbox-denied, approval_rules_retry says whether it is
 * re-run without the sandbox, after asking or not (agent_shell_denied): an accepted sandboxed
 * run is never taken as consent to an unsandboxed one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "agent/approval/approval_sandbox.h"
#include "agent/patch/apply_patch.h"
#include "agent/shell/shell_env.h"
#include "agent/tools/tool_args.h"
#include "agent/tools/tool_output.h"
#include "exec/exec.h"
#include "hooks/hooks_turn.h"
#include "protocol/xmalloc.h"
#include "sandbox/sandbox.h"

/* A call's command, workdir and settings into c (tools/tool_args.h); 0, or -1 with *why. */
static int
agent_shell_parse(struct agent_turn *t, struct agent_cmd *c, json_t *call, const char *name,
	json_t *args, char **why)
{
	struct tool_shell_call sc;

	if (tool_args_shell(call, name, args, AGENT_SHELL_TIMEOUT, &sc, why) != 0)
		return -1;
	c->tool = sc.kind == TOOL_SHELL_EXEC ? AGENT_TOOL_EXEC
		: sc.kind == TOOL_SHELL_ARGV ? AGENT_TOOL_SHELL
					     : AGENT_TOOL_SHELL_TEXT;
	shell_words_free(&c->argv); /* empty: the parsed words replace them */
	shell_words_free(&c->prefix);
	c->argv = sc.argv;
	c->prefix = sc.prefix;
	c->justification = sc.justification;
	c->yield_ms = sc.yield_ms;
	c->max_tokens = sc.max_tokens;
	c->tty = sc.tty;
	c->timeout_ms = sc.timeout_ms;
	c->cwd = shell_workdir(t->o.cwd, sc.workdir);
	c->display = shell_words_join(shell_words_argv(&c->argv), c->argv.n);
	c->req.tool = c->tool == AGENT_TOOL_EXEC ? APPROVAL_TOOL_EXEC_COMMAND : APPROVAL_TOOL_SHELL;
	c->req.argv = shell_words_argv(&c->argv);
	c->req.argc = c->argv.n;
	c->req.cwd = c->cwd;
	c->req.tty = c->tty;
	c->req.sandbox = approval_sandbox_of(t->o.sandbox_policy);
	c->req.require_escalated = sc.escalated;
	c->req.justification = c->justification;
	c->req.prefix_rule = c->prefix.n > 0 ? shell_words_argv(&c->prefix) : NULL;
	c->req.prefix_rule_n = c->prefix.n;
	c->req.cache = t->a->cache;
	return approval_policy_parse(t->o.approval_policy, &c->req.policy, why) != 0 ? -1 : 0;
}

/* The model's answer for a refused or declined command, in its tool's words (heap). */
static char *
agent_shell_rejected(const struct agent_cmd *c, const char *reason)
{
	return c->tool == AGENT_TOOL_EXEC ? tool_output_exec_rejected(reason)
					  : tool_output_shell_rejected(reason);
}

/* Keep the command's session (exec_command): a slot and an id the model polls with. */
static void
agent_shell_session(struct agent *a, struct agent_cmd *c)
{
	int slot = -1, oldest = 0;

	for (int i = 0; i < AGENT_SESSIONS && slot < 0; i++)
		if (a->sessions[i] == NULL)
			slot = i;
	if (slot < 0) {
		/* Full: the oldest session is killed, as upstream prunes its process table. */
		for (int i = 1; i < AGENT_SESSIONS; i++)
			if (a->sessions[i]->session < a->sessions[oldest]->session)
				oldest = i;
		struct agent_cmd *o = a->sessions[oldest];

		a->sessions[oldest] = NULL;
		o->exit_code = 137;
		agent_cmd_complete(o, "failed");
		agent_cmd_free(o);
		slot = oldest;
	}
	c->session = a->next_session++;
	a->sessions[slot] = c;
}

/* The approval request of a command (params without threadId/turnId). */
static json_t *
agent_shell_request(struct agent_cmd *c, const struct approval_decision *d, const char *reason)
{
	json_t *p = json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:O, s:o}", "kind", "command",
		"itemId", c->item_id, "startedAtMs", (json_int_t)c->started_ms, "environmentId",
		"local", "command", c->display, "cwd", c->cwd, "commandActions",
		json_object_get(c->item, "commandActions"), "availableDecisions",
		approval_rules_available_decisions(d));

	json_object_set_new(p, "reason", reason != NULL ? json_string(reason) : json_null());
	if (d->amendment.n > 0) {
		json_t *am = json_array();

		for (size_t i = 0; i < d->amendment.n; i++)
			json_array_append_new(am, json_string(d->amendment.v[i]));
		json_object_set_new(p, "proposedExecpolicyAmendment", am);
	}
	return p;
}

/* The user said no (decline, cancel) or the request failed: the item ends, the model hears. */
static void
agent_shell_refused(struct agent_turn *t, struct agent_cmd *c, enum approval_reply r)
{
	char *text;

	text = agent_shell_rejected(c,
		r == APPROVAL_REPLY_ERROR ? TOOL_OUTPUT_APPROVAL_FAILED
					  : TOOL_OUTPUT_REJECTED_BY_USER);
	agent_tool_output(t, c->call_id, c->custom, text);
	agent_hooks_no_post(t);
	free(text);
	c->answered = 1;
	agent_cmd_complete(c, r == APPROVAL_REPLY_ERROR ? "failed" : "declined");
	agent_cmd_release(c);
	agent_cmd_free(c);
	if (r == APPROVAL_REPLY_CANCEL && !t->interrupted)
		agent_turn_interrupt(t);
}

/* The client's answer to a command's approval. */
static void
agent_shell_answered(struct agent_turn *t, enum approval_reply r)
{
	struct agent_cmd *c = t->pending;

	t->pending = NULL;
	switch (r) {
	case APPROVAL_REPLY_ACCEPT_FOR_SESSION:
		if (c->cache_key != NULL)
			approval_cache_add(t->a->cache, c->cache_key);
		/* fall through */
	case APPROVAL_REPLY_ACCEPT:
	case APPROVAL_REPLY_ACCEPT_WITH_AMENDMENT:
	case APPROVAL_REPLY_NETWORK_ALLOW:
		c->approved = true;
		if (t->interrupted || t->failed) {
			agent_shell_refused(t, c, APPROVAL_REPLY_CANCEL);
			return;
		}
		agent_cmd_start(c);
		return;
	default:
		agent_shell_refused(t, c, r);
		return;
	}
}

/* Re-run a command without the sandbox (approved after a sandbox denial). */
static void
agent_shell_rerun(struct agent_cmd *c)
{
	c->retried = 1;
	c->sandboxed = false;
	exec_free(c->proc);
	c->proc = NULL;
	buf_reset(&c->out);
	c->out_total = 0;
	tool_headtail_free(&c->agg);
	tool_headtail_init(&c->agg, TOOL_OUTPUT_AGGREGATE_MAX);
	agent_cmd_start(c);
}

/* The answer to "retry without the sandbox?". */
static void
agent_shell_retry_answered(struct agent_turn *t, enum approval_reply r)
{
	struct agent_cmd *c = t->pending;

	t->pending = NULL;
	if ((r == APPROVAL_REPLY_ACCEPT || r == APPROVAL_REPLY_ACCEPT_FOR_SESSION ||
		    r == APPROVAL_REPLY_ACCEPT_WITH_AMENDMENT) &&
		!t->interrupted && !t->failed) {
		if (r == APPROVAL_REPLY_ACCEPT_FOR_SESSION) {
			/* the session now covers this command unsandboxed, nothing wider */
			char *key = approval_rules_retry_key(&c->req);

			approval_cache_add(t->a->cache, key);
			free(key);
		}
		agent_shell_rerun(c);
		return;
	}
	/* No: the model sees the sandboxed failure as it was. */
	agent_cmd_answer(c, 0);
	agent_cmd_complete(c, "failed");
	agent_cmd_release(c);
	agent_cmd_free(c);
	if (r == APPROVAL_REPLY_CANCEL && !t->interrupted)
		agent_turn_interrupt(t);
}

int
agent_shell_denied(struct agent_cmd *c)
{
	struct agent_turn *t = c->t;
	struct approval_decision d = {0};

	if (!c->sandboxed || c->retried || c->answered || t->interrupted || t->failed ||
		!approval_rules_sandbox_denied(true, c->exit_code, c->out.ptr, c->out.len))
		return 0;
	/* Accepting the sandboxed run never covers this one: it is asked for on its own. */
	switch (approval_rules_retry(&c->req)) {
	case APPROVAL_RETRY_RUN:
		agent_shell_rerun(c);
		return 1;
	case APPROVAL_RETRY_ASK:
		/* upstream's shape: the first request's amendment, the retry's reason */
		if (approval_rules_decide(&c->req, &d) != 0)
			approval_rules_decision_free(&d);
		agent_ask(t, "item/commandExecution/requestApproval",
			agent_shell_request(c, &d, APPROVAL_RETRY_REASON),
			agent_shell_retry_answered, c);
		approval_rules_decision_free(&d);
		return 1;
	default:
		return 0;
	}
}

/* Its session, then the client asked first (d says ask) or it runs. */
static void
agent_shell_go(struct agent_turn *t, struct agent_cmd *c, const struct approval_decision *d)
{
	if (c->tool == AGENT_TOOL_EXEC)
		agent_shell_session(t->a, c);
	t->cmd = c;
	t->busy = 1;
	if (d != NULL && d->action == APPROVAL_ASK) {
		agent_cmd_item_start(c, "agent");
		c->asked = true;
		agent_ask(t, "item/commandExecution/requestApproval",
			agent_shell_request(c, d, d->reason), agent_shell_answered, c);
	} else {
		agent_cmd_item_start(
			c, c->tool == AGENT_TOOL_EXEC ? "unifiedExecStartup" : "agent");
		agent_cmd_start(c);
	}
}

static void agent_shell_permitted(struct agent_turn *t, const struct hooks_result *r, void *arg);

/*
 * approval_rules decides: refuse (-1, *why for the model), run, or ask; before asking or running
 * a session-approved command, PermissionRequest (call: not run yet) may answer for the client.
 */
static int
agent_shell_decide(struct agent_turn *t, struct agent_cmd *c, const json_t *call, char **why)
{
	struct approval_decision d = {0};
	int r = -1;

	if (approval_rules_decide(&c->req, &d) != 0)
		*why = xstrdup("the command is too long to judge");
	else if (d.action == APPROVAL_REJECT)
		*why = d.reject_form == APPROVAL_REJECT_VERBATIM
			? xstrdup(d.reject_text)
			: agent_shell_rejected(c, d.reject_text);
	else {
		c->sandboxed = d.sandboxed;
		c->approved = d.cached;
		free(c->cache_key);
		c->cache_key = d.cache_key != NULL ? xstrdup(d.cache_key) : NULL;
		if ((d.action != APPROVAL_ASK && !d.cached) || call == NULL ||
			!agent_hooks_permission(
				t, c->call_id, call, NULL, agent_shell_permitted, c))
			agent_shell_go(t, c, &d);
		r = 0;
	}
	approval_rules_decision_free(&d);
	return r;
}

/* PermissionRequest's answer (r NULL: the turn ended first). An allow runs it as the user's
 * accept would (its sandbox as decided); a deny answers the model without an item. */
static void
agent_shell_permitted(struct agent_turn *t, const struct hooks_result *r, void *arg)
{
	struct agent_cmd *c = arg;
	char *why = NULL;

	if (r != NULL && r->verdict == HOOKS_ALLOW) {
		c->approved = true;
		agent_shell_go(t, c, NULL);
		return;
	}
	if (r != NULL && r->verdict != HOOKS_DENY && agent_shell_decide(t, c, NULL, &why) == 0)
		return;
	if (why == NULL)
		why = agent_shell_rejected(
			c, r != NULL ? r->message : TOOL_OUTPUT_REJECTED_BY_USER);
	agent_tool_output(t, c->call_id, c->custom, why);
	free(why);
	agent_cmd_free(c);
}

/* An exec_command / shell / shell_command / local_shell_call: intercept, decide, run. */
void
agent_shell_call(struct agent_turn *t, json_t *call, const char *name)
{
	const char *id = json_string_value(json_object_get(call, "call_id"));
	const char *a = json_string_value(json_object_get(call, "arguments"));
	json_t *args = a != NULL ? json_loads(a, 0, NULL) : json_object();
	struct agent_cmd *c = agent_cmd_new(t, id, 0);
	struct patch *patch = NULL;
	enum apply_patch_intercept ip;
	char *why = NULL;

	if (!json_is_object(args)) {
		why = tool_output_bad_arguments("expected a JSON object");
		goto refuse;
	}
	if (agent_shell_parse(t, c, call, name, args, &why) != 0)
		goto refuse;
	/* apply_patch written as a command is applied, not run, as upstream does. */
	ip = apply_patch_intercept_argv(shell_words_argv(&c->argv), c->argv.n, &patch, &why);
	if (ip == APPLY_PATCH_ERROR)
		goto refuse;
	if (ip == APPLY_PATCH_BODY) {
		/* apply_patch_prepare resolves the patch's own `cd dir &&` against c->cwd. */
		agent_patch_call(t, c->call_id, 0, patch, c->cwd,
			c->tool == AGENT_TOOL_EXEC ? AGENT_PATCH_EXEC : AGENT_PATCH_SHELL);
		patch = NULL; /* the patch call owns it now */
		goto out;
	}
	if (sandbox_check_workdir(t->o.sandbox_policy, t->o.cwd, c->cwd, &why) != 0)
		goto refuse;
	if (agent_shell_decide(t, c, call, &why) != 0)
		goto refuse;
	json_decref(args);
	return;
refuse:
	agent_tool_output(t, c->call_id, 0, why != NULL ? why : "command refused");
out:
	apply_patch_free(patch);
	free(why);
	json_decref(args);
	agent_cmd_free(c);
}

/* write_stdin: send chars to a running exec_command session and answer with what it said. */
void
agent_shell_write_stdin(struct agent_turn *t, json_t *call)
{
	const char *a = json_string_value(json_object_get(call, "arguments"));
	const char *id = json_string_value(json_object_get(call, "call_id")), *why, *chars;
	json_t *args = a != NULL ? json_loads(a, 0, NULL) : NULL;
	long long sid = tool_args_int(args, "session_id", -1);
	struct agent_cmd *c = NULL;
	char *text;

	for (int i = 0; i < AGENT_SESSIONS && c == NULL; i++)
		if (t->a->sessions[i] != NULL && t->a->sessions[i]->session == sid)
			c = t->a->sessions[i];
	if (c == NULL) {
		text = xasprintf("write_stdin failed: Unknown process id %lld", sid);
		agent_tool_output(t, id, 0, text);
		free(text);
		json_decref(args);
		return;
	}
	chars = json_string_value(json_object_get(args, "chars"));
	if (!c->done && chars != NULL && *chars != '\0' &&
		exec_write(c->proc, chars, strlen(chars), 0, &why) != 0) {
		text = xasprintf("write_stdin failed: %s", why);
		agent_tool_output(t, id, 0, text);
		free(text);
		json_decref(args);
		return;
	}
	/* This call now waits on the session: its next answer goes to this call id. */
	free(c->call_id);
	c->call_id = xstrdup(id != NULL ? id : "");
	c->custom = 0;
	c->answered = 0;
	c->call_ms = agent_now_ms();
	if (json_is_integer(json_object_get(args, "max_output_tokens")))
		c->max_tokens = (size_t)tool_args_int(args, "max_output_tokens", 0);
	c->yield_ms = (long long)tool_output_clamp_yield(
		tool_args_int(args, "yield_time_ms", TOOL_OUTPUT_STDIN_YIELD_DEFAULT_MS),
		chars == NULL || *chars == '\0');
	json_decref(args);
	if (c->done) {
		/* It exited since its last answer: the rest of its output and its code. */
		agent_cmd_answer(c, 0);
		agent_cmd_free(c);
		return;
	}
	ev_timer_stop(t->a->c.loop, &c->yield);
	ev_timer_set(&c->yield, (double)c->yield_ms / 1000.0, 0.);
	ev_timer_start(t->a->c.loop, &c->yield);
	t->cmd = c;
	t->busy = 1;
}
