/*
 * thread/shellCommand: the user's own command (`!cmd` in upstream's TUI), on the agent's command
 * machinery (agent_run.c: spawn, cgroup, streamed outputDelta, the shell snapshot) but with
 * none of a tool call's rules: no approval, no sandbox (upstream runs it with full access, by
 * design: the user typed it), no answer to the model. Rules kept here:
 *  - A command belongs to one turn: the running one (it joins it), or a turn of its own
 *    (shell_only) that starts with it. The turn waits for its user commands before it ends
 *    (agent.c's ENDING phase counts user_running), so every item completes before done.
 *  - The item starts from the loop (agent_advance), after the caller reported turn/started.
 *  - Its end, whatever it is (exit, timeout, interrupt, the thread's end), completes the
 *    item once and appends upstream's <user_shell_command> record to the history and the
 *    rollout (user_shell_text.h), then the process and its tree are gone (exec_free).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent_int.h"
#include "agent/tools/tool_output.h"
#include "agent/tools/user_shell_text.h"
#include "exec/exec.h"
#include "protocol/xmalloc.h"
#include "thread/store/store.h"
#include "thread/uuidv7.h"

#define USER_SHELL_MAX	 32	     /* commands running at once per thread */
#define USER_SHELL_SHELL "/bin/bash" /* the thread's shell: agent_shell.c's default */
#define USER_SHELL_KEEP	 (1u << 20)  /* per stream, for a timeout's error text */

/* CLOCK_MONOTONIC in nanoseconds. */
static int64_t
user_shell_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int
agent_turn_shell_only(const struct agent_turn *t)
{
	return t != NULL && t->shell_only;
}

int
agent_user_shell(struct agent *a, const struct agent_turn_opts *o, const char *script,
	long long timeout_ms, const struct agent_sink *sink, void *arg, int *new_turn, char **cause)
{
	struct agent_turn *t = a->turn;
	struct shell_words argv;
	struct agent_cmd *c;
	char id[37];

	*new_turn = 0;
	if (a->n_user >= USER_SHELL_MAX) {
		*cause = xasprintf("too many shell commands running (%d)", USER_SHELL_MAX);
		return -1;
	}
	if (t != NULL && (t->ended || t->interrupted || t->failed)) {
		*cause = xstrdup("the running turn is ending");
		return -1;
	}
	shell_words_init(&argv);
	if (shell_words_exec_argv(USER_SHELL_SHELL, 1, script, &argv) != 0) {
		shell_words_free(&argv);
		*cause = xstrdup("command is too long");
		return -1;
	}
	if (t == NULL) {
		if ((t = agent_turn_new(a, o, sink, arg, cause)) == NULL) {
			shell_words_free(&argv);
			return -1;
		}
		t->shell_only = 1;
		t->phase = PHASE_ENDING; /* nothing but its commands: it ends after them */
		*new_turn = 1;
	}
	uuidv7_new(id);
	c = agent_cmd_new(t, id, 0);
	c->user = true;
	c->tool = AGENT_TOOL_SHELL_TEXT; /* no session, no yield: it runs to its end */
	c->script = xstrdup(script);
	c->timeout_ms = timeout_ms;
	shell_words_free(&c->argv);
	c->argv = argv; /* transferred */
	c->display = shell_words_join(shell_words_argv(&c->argv), c->argv.n);
	c->cwd = xstrdup(t->o.cwd);
	buf_init(&c->std[0], USER_SHELL_KEEP);
	buf_init(&c->std[1], USER_SHELL_KEEP);
	c->next_user = a->user_cmds;
	a->user_cmds = c;
	a->n_user++;
	t->user_running++;
	agent_kick(t);
	return 0;
}

/* Start the commands not started yet (from agent_advance: after turn/started went out). */
void
agent_user_shell_launch(struct agent_turn *t)
{
	struct agent_cmd *c;

again:
	for (c = t->a->user_cmds; c != NULL; c = c->next_user) {
		if (c->t != t || c->launched)
			continue;
		c->launched = true;
		agent_cmd_item_start(c, "userShell");
		c->spawned_ns = user_shell_now_ns();
		/* a spawn failure ends (and frees) c at once: the list changed, walk it again */
		agent_cmd_start(c);
		goto again;
	}
}

void
agent_user_shell_output(struct agent_cmd *c, int stream, const char *data, size_t n)
{
	struct buf *b = &c->std[stream == 1 ? 1 : 0];

	if (b->len < b->max)
		buf_add(b, data, n <= b->max - b->len ? n : b->max - b->len);
}

/* Take c off the thread's list. */
static void
user_shell_unlist(struct agent_cmd *c)
{
	struct agent_cmd **pp;

	for (pp = &c->a->user_cmds; *pp != NULL; pp = &(*pp)->next_user)
		if (*pp == c) {
			*pp = c->next_user;
			c->a->n_user--;
			return;
		}
}

/*
 * The end of a user command: its item completes (status, output, exit code, duration as
 * given), the record joins the history and the rollout, the process goes (its tree killed if
 * still there), and its turn may end.
 */
static void
user_shell_finish(struct agent_cmd *c, const char *status, const char *output, size_t len,
	int exit_code, int64_t duration_ms, double record_s)
{
	struct agent_turn *t = c->t;
	struct agent *a = c->a;
	json_t *item = c->item, *msg;
	char *record;

	c->item = NULL;
	if (item != NULL) {
		json_object_set_new(item, "status", json_string(status));
		json_object_set_new(item, "aggregatedOutput", json_stringn(output, len));
		json_object_set_new(item, "exitCode", json_integer(exit_code));
		json_object_set_new(item, "durationMs", json_integer(duration_ms));
		agent_item_complete(t, item, c->started_ms);
		json_decref(item);
	}
	record = user_shell_record(c->script, exit_code, record_s, output, len);
	msg = prompt_text_message("user", record);
	agent_record_response(a, msg);
	agent_history_add(a, msg);
	free(record);
	user_shell_unlist(c);
	if (t->user_running > 0)
		t->user_running--;
	agent_kick(t);
	agent_cmd_free(c); /* exec_free: the tree dies if anything of it is left */
}

/* The process ended (agent_cmd_done, after the last delta): exit, or the timeout. */
void
agent_user_shell_done(struct agent_cmd *c)
{
	int64_t ns = user_shell_now_ns() - c->spawned_ns;
	char *text;
	size_t len;

	if (c->timed_out) {
		char *agg = tool_headtail_text(&c->agg, &len);

		text = user_shell_timeout_text(c->std[0].ptr, c->std[0].len, c->std[1].ptr,
			c->std[1].len, agg, len, (uint64_t)(ns > 0 ? ns : 0));
		free(agg);
		/* upstream reports a timeout as an execution error: exit -1, no duration */
		user_shell_finish(c, "failed", text, strlen(text), -1, 0, 0.);
		free(text);
		return;
	}
	text = tool_headtail_text(&c->agg, &len);
	user_shell_finish(c, c->exit_code == 0 ? "completed" : "failed", text != NULL ? text : "",
		text != NULL ? len : 0, c->exit_code, ns / 1000000, (double)ns / 1e9);
	free(text);
}

/* The command could not be spawned: upstream's execution error. */
void
agent_user_shell_failed(struct agent_cmd *c, const char *cause)
{
	char *text = xasprintf("execution error: %s", cause != NULL ? cause : "spawn failed");

	user_shell_finish(c, "failed", text, strlen(text), -1, 0, 0.);
	free(text);
}

/* Interrupt (or the thread's end): the turn's user commands are killed and end now. */
void
agent_user_shell_abort(struct agent_turn *t)
{
	struct agent_cmd *c;

again:
	for (c = t->a->user_cmds; c != NULL; c = c->next_user) {
		if (c->t != t)
			continue;
		if (c->proc != NULL)
			exec_kill(c->proc);
		if (!c->launched) {
			/* never started: its item starts and ends here, as upstream reports it */
			c->launched = true;
			agent_cmd_item_start(c, "userShell");
		}
		user_shell_finish(
			c, "failed", USER_SHELL_ABORTED, strlen(USER_SHELL_ABORTED), -1, 0, 0.);
		goto again;
	}
}

/*
 * Input given (turn/start, turn/steer) while a turn of user commands ran: as upstream 0.169,
 * it joins the history and the turn as a userMessage at the turn's end, and the model is not
 * asked (the client starts a turn to be answered).
 */
void
agent_user_shell_steered(struct agent_turn *t)
{
	struct agent *a = t->a;
	json_t *user;
	char uid[37], *cause = NULL;
	int64_t now = agent_now_ms();

	if (t->steer == NULL || json_array_size(t->steer) == 0)
		return;
	if ((user = agent_user_message(t->steer, &cause)) != NULL) {
		agent_record_response(a, user);
		agent_history_add(a, user);
	}
	free(cause);
	uuidv7_new(uid);
	user = agent_user_item(t->steer, uid);
	agent_item_start(t, user, now);
	agent_item_complete(t, user, now);
	json_decref(user);
	json_decref(t->steer);
	t->steer = NULL;
}

/* The output queue drained: the user commands read on. */
void
agent_user_shell_resume(struct agent *a)
{
	for (struct agent_cmd *c = a->user_cmds; c != NULL; c = c->next_user)
		if (c->proc != NULL)
			exec_resume(c->proc);
}
