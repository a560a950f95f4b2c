/*
 * Commands the model runs, on the exec engine (exec/exec.h) and the sandbox executor: the
 * same spawn path as command/exec, with the turn's policy and writable roots from the turn's
 * cwd (policy_cwd), never from the model's workdir. Output goes out as
 * item/commandExecution/outputDelta text as it comes (UTF-8: a sequence cut by a read waits
 * for its end), and is kept head+tail for the item (aggregatedOutput) and for the model.
 * The model gets its answer at exit, or for exec_command after yield_time_ms with the session
 * id it polls with write_stdin; the item completes at exit. Every command of a thread is on
 * its list (a->sessions holds exec_command sessions; t->cmd the one a call waits on), so an
 * interrupt or the thread's end reaches each of them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "agent/shell/command_actions.h"
#include "agent/shell/shell_env.h"
#include "agent/shell/shell_snapshot.h"
#include "agent/tools/tool_output.h"
#include "exec/exec.h"
#include "protocol/utf8.h"
#include "protocol/xmalloc.h"
#include "sandbox/sandbox.h"

extern char **environ;

static void agent_cmd_done(struct exec_proc *p, void *arg);
static void agent_yield_cb(struct ev_loop *, ev_timer *, int);

/* What exec_command's processes see on top of our environment (upstream's unified exec). */
static const char *const agent_exec_env[] = {"NO_COLOR=1", "TERM=dumb", "LANG=C.UTF-8",
	"LC_CTYPE=C.UTF-8", "LC_ALL=C.UTF-8", "COLORTERM=", "PAGER=cat", "GIT_PAGER=cat",
	"GH_PAGER=cat", "CODEX_CI=1", NULL};

struct agent_cmd *
agent_cmd_new(struct agent_turn *t, const char *call_id, int custom)
{
	struct agent_cmd *c = xcalloc(1, sizeof *c);

	c->t = t;
	c->a = t->a;
	c->call_id = xstrdup(call_id != NULL ? call_id : "");
	c->custom = custom;
	snprintf(c->item_id, sizeof c->item_id, "%s", c->call_id);
	shell_words_init(&c->argv);
	shell_words_init(&c->prefix);
	tool_headtail_init(&c->agg, TOOL_OUTPUT_AGGREGATE_MAX);
	buf_init(&c->out, AGENT_MODEL_OUT);
	ev_init(&c->yield, agent_yield_cb);
	c->timeout_ms = AGENT_SHELL_TIMEOUT;
	return c;
}

/* Forget a command in the thread's session table. */
static void
agent_cmd_unlist(struct agent_cmd *c)
{
	for (int i = 0; i < AGENT_SESSIONS; i++)
		if (c->a->sessions[i] == c)
			c->a->sessions[i] = NULL;
	if (c->t != NULL && c->t->cmd == c)
		c->t->cmd = NULL;
}

void
agent_cmd_free(struct agent_cmd *c)
{
	if (c == NULL)
		return;
	agent_cmd_unlist(c);
	ev_timer_stop(c->a->c.loop, &c->yield);
	exec_free(c->proc);
	json_decref(c->item);
	shell_words_free(&c->argv);
	shell_words_free(&c->prefix);
	free(c->display);
	free(c->call_id);
	free(c->cwd);
	free(c->justification);
	free(c->cache_key);
	tool_headtail_free(&c->agg);
	buf_free(&c->out);
	free(c->script);
	buf_free(&c->std[0]);
	buf_free(&c->std[1]);
	free(c);
}

/* The commandExecution item (started): its command, cwd and commandActions. */
void
agent_cmd_item_start(struct agent_cmd *c, const char *source)
{
	struct command_actions ca = {0};
	json_t *actions;

	if (command_actions_parse(shell_words_argv(&c->argv), c->argv.n, &ca) == 0)
		actions = command_actions_to_wire(&ca, c->cwd);
	else
		actions = json_array();
	command_actions_free(&ca);
	c->started_ms = agent_now_ms();
	c->item = json_pack("{s:s, s:s, s:s, s:s, s:n, s:s, s:s, s:o, s:n, s:n, s:n}", "type",
		"commandExecution", "id", c->item_id, "command", c->display, "cwd", c->cwd,
		"processId", "source", source, "status", "inProgress", "commandActions", actions,
		"aggregatedOutput", "exitCode", "durationMs");
	agent_item_start(c->t, c->item, c->started_ms);
}

/* Complete the command's item: status, output, exit code, duration (once). */
void
agent_cmd_complete(struct agent_cmd *c, const char *status)
{
	json_t *item = c->item;
	char *text;
	size_t len;

	if (item == NULL || c->t == NULL)
		return;
	c->item = NULL;
	json_object_set_new(item, "status", json_string(status));
	if (strcmp(status, "declined") != 0 && c->agg.total > 0) {
		text = tool_headtail_text(&c->agg, &len);
		json_object_set_new(item, "aggregatedOutput", json_stringn(text, len));
		free(text);
	} else if (strcmp(status, "declined") != 0)
		json_object_set_new(item, "aggregatedOutput", json_string(""));
	if (c->proc != NULL || c->done) {
		json_object_set_new(item, "exitCode", json_integer(c->exit_code));
		json_object_set_new(
			item, "durationMs", json_integer(agent_now_ms() - c->started_ms));
	}
	if (c->tool == AGENT_TOOL_EXEC && c->proc != NULL) {
		char pid[24];

		snprintf(pid, sizeof pid, "%ld", (long)exec_pid(c->proc));
		json_object_set_new(item, "processId", json_string(pid));
		json_object_set_new(item, "source", json_string("unifiedExecStartup"));
	}
	agent_item_complete(c->t, item, c->started_ms);
	json_decref(item);
}

/* Answer the model for this call with what the command gave since the last answer. */
void
agent_cmd_answer(struct agent_cmd *c, int running)
{
	char *text = NULL, *out, chunk[7], sid[24];
	double wall = (double)(agent_now_ms() - c->call_ms) / 1000.0;
	size_t len;

	if (c->answered || c->t == NULL || c->user)
		return; /* the user's own commands answer no model call */
	c->answered = 1;
	out = utf8_lossy(c->out.ptr != NULL ? c->out.ptr : "", c->out.len, &len);
	if (c->tool == AGENT_TOOL_EXEC) {
		struct tool_exec_result r = {0};

		tool_output_chunk_id(chunk);
		snprintf(sid, sizeof sid, "%d", c->session);
		r.chunk_id = chunk;
		r.wall_time_s = wall;
		r.has_exit_code = !running;
		r.exit_code = c->exit_code;
		r.session_id = running ? sid : NULL;
		r.has_token_count = 1;
		r.original_token_count = tool_output_approx_tokens(c->out_total);
		r.output = out;
		r.output_len = len;
		r.max_output_tokens = c->max_tokens;
		text = tool_output_exec(&r);
	} else {
		struct tool_shell_result r = {0};

		r.exit_code = c->exit_code;
		r.duration_s = wall;
		r.timed_out = c->timed_out;
		r.output = out;
		r.output_len = len;
		r.policy.kind = TOOL_TRUNC_BYTES;
		r.policy.limit = TOOL_OUTPUT_SHELL_BYTES;
		text = c->tool == AGENT_TOOL_SHELL ? tool_output_shell_json(&r)
						   : tool_output_shell_text(&r);
	}
	agent_tool_output(c->t, c->call_id, c->custom, text);
	free(text);
	free(out);
	buf_reset(&c->out);
	c->out_total = 0;
}

/* A delta for the client: bytes made valid UTF-8, a sequence cut at the end held back. */
static void
agent_cmd_delta(struct agent_cmd *c, const char *data, size_t n, int last)
{
	char tmp[4 + 65536], *lossy;
	const char *p = data;
	size_t len = n, keep = 0, outlen;
	json_t *params;

	if (c->npend > 0 && n <= sizeof tmp - c->npend) {
		memcpy(tmp, c->pend, c->npend);
		memcpy(tmp + c->npend, data, n);
		p = tmp;
		len = c->npend + n;
	}
	c->npend = 0;
	if (!last) {
		keep = tool_output_utf8_cut(p, len);
		memcpy(c->pend, p + len - keep, keep);
		c->npend = keep;
		len -= keep;
	}
	if (len == 0 || c->t == NULL || c->item == NULL || c->deltas >= TOOL_OUTPUT_MAX_DELTAS)
		return;
	c->deltas++;
	lossy = utf8_lossy(p, len, &outlen);
	params = json_pack("{s:s, s:s%}", "itemId", c->item_id, "delta", lossy, outlen);
	c->t->sink->delta(c->t->arg, "item/commandExecution/outputDelta", params);
	json_decref(params);
	free(lossy);
}

/* A chunk of output (exec.h's output callback). */
static void
agent_cmd_output(void *arg, int stream, const char *data, size_t n)
{
	struct agent_cmd *c = arg;

	if (c->user)
		agent_user_shell_output(c, stream, data, n);
	tool_headtail_add(&c->agg, data, n);
	c->out_total += n;
	if (c->out.len < c->out.max)
		buf_add(&c->out, data, n <= c->out.max - c->out.len ? n : c->out.max - c->out.len);
	agent_cmd_delta(c, data, n, 0);
}

/* The call waiting on c is over: the turn goes on. */
void
agent_cmd_release(struct agent_cmd *c)
{
	struct agent_turn *t = c->t;

	if (t != NULL && t->cmd == c) {
		t->cmd = NULL;
		t->busy = 0;
		agent_kick(t);
	}
}

/* exec_command's yield passed with the process still running: the model hears so now. */
static void
agent_yield_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct agent_cmd *c = container_of(w, struct agent_cmd, yield);

	(void)loop;
	(void)revents;
	if (c->done || c->answered || c->t == NULL)
		return;
	agent_cmd_answer(c, 1);
	agent_cmd_release(c);
}

/* The process ended (exec.h's done): the model gets its answer, the item completes. */
static void
agent_cmd_done(struct exec_proc *p, void *arg)
{
	struct agent_cmd *c = arg;
	struct agent_turn *t = c->t;

	c->done = 1;
	c->exit_code = exec_exit_code(p);
	c->timed_out = exec_timed_out(p); /* the kill, not the code: `exit 124` is no timeout */
	ev_timer_stop(c->a->c.loop, &c->yield);
	agent_cmd_delta(c, "", 0, 1);
	if (c->user) {
		agent_user_shell_done(c); /* the user's command: its own end (user_shell.c) */
		return;
	}
	if (t != NULL && agent_shell_denied(c))
		return; /* asked about a re-run without the sandbox, or re-running */
	if (c->session != 0 && c->answered) {
		/* The model was answered at its yield: it gets the rest when it polls. */
		agent_cmd_complete(c, c->exit_code == 0 ? "completed" : "failed");
		return;
	}
	agent_cmd_answer(c, 0);
	agent_cmd_complete(c, c->exit_code == 0 ? "completed" : "failed");
	agent_cmd_release(c);
	/* exec_free from inside done is allowed (exec.h): done is its last use of p. */
	agent_cmd_free(c);
}

/* The command could not start: its item fails, the model is told why. */
static void
agent_cmd_spawn_failed(struct agent_cmd *c, const char *cause)
{
	const char *why = cause != NULL ? cause : "failed to spawn command";

	if (c->user) {
		agent_user_shell_failed(c, why);
		return;
	}
	tool_headtail_add(&c->agg, why, strlen(why));
	buf_adds(&c->out, why);
	c->out_total += strlen(why);
	c->exit_code = -1;
	c->done = 1;
	agent_cmd_answer(c, 0);
	agent_cmd_complete(c, "failed");
	agent_cmd_release(c);
	agent_cmd_free(c);
}

/*
 * A -lc call through the thread's shell snapshot, when one serves c's cwd: out gets the argv
 * to spawn (0), else -1. What extra and the sandbox set keep their values over the file's.
 */
static int
agent_cmd_snapshot(struct agent_cmd *c, const char *const *extra, const char *var,
	struct shell_words *out, char *const **envp)
{
	const char *keep[16];
	size_t n = 0, kl;
	int r;

	for (size_t i = 0; extra != NULL && extra[i] != NULL && n < nitems(keep) - 2; i++)
		keep[n++] = xstrndup(extra[i], strcspn(extra[i], "="));
	if (var != NULL)
		keep[n++] = xstrndup(var, strcspn(var, "="));
	keep[n] = NULL;
	r = shell_snapshot_wrap(
		c->a->snap, c->cwd, shell_words_argv(&c->argv), c->argv.n, keep, envp, out);
	for (kl = 0; kl < n; kl++)
		free((char *)keep[kl]);
	return r;
}

/* Spawn the command (in the sandbox unless approved to run without). */
void
agent_cmd_start(struct agent_cmd *c)
{
	struct agent_turn *t = c->t;
	struct spawn_opts so = {0};
	struct spawn_proc sp;
	struct exec_opts eo = {0};
	static size_t budget;
	json_t *open = json_pack("{s:s}", "type", "dangerFullAccess");
	const json_t *policy = c->sandboxed ? t->o.sandbox_policy : open;
	const char *var = NULL, *const *extra = c->tool == AGENT_TOOL_EXEC ? agent_exec_env : NULL;
	char *cause = NULL, **envp;
	struct shell_words snap;

	shell_words_init(&snap);
	c->call_ms = agent_now_ms();
	c->answered = 0;
	c->done = 0;
	if (sandbox_policy_check(policy, &var, &cause) != 0) {
		agent_cmd_spawn_failed(c, cause);
		free(cause);
		json_decref(open);
		return;
	}
	so.envp = envp = shell_env_with(environ, extra, var);
	so.argv = agent_cmd_snapshot(c, extra, var, &snap, &so.envp) == 0
		? (char **)shell_words_argv(&snap)
		: (char **)shell_words_argv(&c->argv);
	so.cwd = c->cwd;
	so.policy_cwd = t->o.cwd;
	so.flags = SPAWN_CGROUP | (c->tty ? SPAWN_PTY : (c->session ? SPAWN_STDIN_PIPE : 0));
	so.max_pids = t->o.max_processes;
	if (sandbox_spawn_prepare(policy, &so, &cause) != 0 || spawn_start(&so, &sp, &cause) != 0) {
		sandbox_spawn_done(&so, NULL);
		free(envp);
		shell_words_free(&snap);
		json_decref(open);
		agent_cmd_spawn_failed(c, cause);
		free(cause);
		return;
	}
	sandbox_spawn_done(&so, &sp);
	free(envp);
	shell_words_free(&snap);
	json_decref(open);
	eo.loop = t->a->c.loop;
	eo.q = t->a->c.q;
	eo.cap = SIZE_MAX;
	eo.timeout = c->timeout_ms >= 0 ? (double)c->timeout_ms / 1000.0 : -1.;
	eo.streaming = 1;
	eo.stdin_enabled = c->session != 0 || c->tty;
	eo.output = agent_cmd_output;
	eo.budget = &budget;
	eo.done = agent_cmd_done;
	eo.arg = c;
	c->proc = exec_start(&eo, &sp);
	if (c->tool == AGENT_TOOL_EXEC) {
		ev_timer_set(&c->yield, (double)c->yield_ms / 1000.0, 0.);
		ev_timer_start(t->a->c.loop, &c->yield);
	}
}

/*
 * The thread goes away (or its turn ended): every command is killed now and its item
 * completes (failed, 137) before the turn reports its end.
 */
void
agent_shell_kill_all(struct agent *a)
{
	struct agent_cmd *c;

	for (int i = 0; i < AGENT_SESSIONS; i++) {
		if ((c = a->sessions[i]) == NULL)
			continue;
		a->sessions[i] = NULL;
		if (!c->done) {
			c->exit_code = 137;
			c->done = 1;
		}
		agent_cmd_answer(c, 0);
		agent_cmd_complete(c, "failed");
		agent_cmd_release(c);
		agent_cmd_free(c); /* exec_free kills the tree */
	}
	if (a->turn != NULL && (c = a->turn->cmd) != NULL) {
		if (!c->done) {
			c->exit_code = 137;
			c->done = 1;
		}
		agent_cmd_answer(c, 0);
		agent_cmd_complete(c, "failed");
		agent_cmd_release(c);
		agent_cmd_free(c);
	}
}
