/*
 * command/exec and its follow-ups (write, resize, terminate): request validation in upstream's
 * order and wording, the connection's processes keyed by the client's processId, the
 * outputDelta frames and the final answer, and the sandbox decision (sandbox/: a policy that
 * cannot be enforced fails the request; a command never runs less sandboxed than asked).
 *
 * Rule: a command is answered from its `done` callback (exec.h), after every outputDelta it
 * produced; its entry is then unlinked at once (a new command may reuse its processId) and
 * freed from an idle watcher, never inside the callback.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "command_exec.h"
#include "config/config.h"
#include "config/home.h"
#include "exec/exec.h"
#include "io/log.h"
#include "protocol/base64.h"
#include "protocol/utf8.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"
#include "sandbox/cgroup/cgroup.h"
#include "sandbox/sandbox.h"
#include "session.h"

#define CX_DEFAULT_TIMEOUT_MS 10000
#define CX_DEFAULT_CAP	      (1024 * 1024)
#define CX_MAX_PROCS	      1024 /* running processes per connection */

/* One command of the connection. */
struct cx_entry {
	struct command_exec *t;
	struct cx_entry *prev, *next;
	struct rpc_req *req; /* answered when the process is done */
	char *id;	     /* client processId, or NULL */
	struct exec_proc *proc;
};

struct command_exec {
	struct session *s;
	struct cx_entry *live; /* running or draining */
	struct cx_entry *dead; /* answered, freed from the idle watcher */
	ev_idle reaper;
	size_t count;
	size_t captured; /* bytes of every buffered capture (EXEC_CAPTURE_BUDGET) */
};

/* What a command/exec asks, read from its validated params. */
struct cx_req {
	json_t *argv, *size, *policy;
	const char *id;
	int tty, sin, sout, no_cap, no_timeout;
	json_int_t timeout_ms, cap, rows, cols;
	int has_timeout, has_cap;
};

static void command_exec_reaper_cb(struct ev_loop *, ev_idle *, int);

struct command_exec *
command_exec_new(struct session *s)
{
	struct command_exec *t = xcalloc(1, sizeof *t);

	t->s = s;
	ev_idle_init(&t->reaper, command_exec_reaper_cb);
	return t;
}

/* Free one entry and its process. */
static void
command_exec_entry_free(struct cx_entry *e)
{
	exec_free(e->proc);
	free(e->id);
	free(e);
}

static void
command_exec_reap_dead(struct command_exec *t)
{
	struct cx_entry *e;

	while ((e = t->dead) != NULL) {
		t->dead = e->next;
		command_exec_entry_free(e);
	}
}

static void
command_exec_reaper_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct command_exec *t = container_of(w, struct command_exec, reaper);

	ev_idle_stop(loop, w);
	command_exec_reap_dead(t);
}

/*
 * Without cgroups, a descendant that left its session (setsid) is not reached by the kill of
 * its process group; as the subreaper of every orphan, the daemon adopts it. With nothing
 * spawned running any more anywhere in the daemon (this connection's commands, other
 * connections', turns' tools, snapshots, MCP servers, hooks), every child of the daemon is
 * such an orphan: kill them. One connection's last command used to end every child.
 */
static void
command_exec_orphans(void)
{
	int n;

	/* No cgroup was ever asked for: no command ran, so there is no orphan of ours. */
	if (!cgroup_probed() || cgroup_support()->kill || cgroup_support()->pids ||
		spawn_live_count() > 0)
		return;
	if ((n = spawn_kill_orphans(NULL, 0)) > 0)
		log_debug("exec: killed %d orphaned descendant(s)", n);
}

/* Unlink an answered entry now, free it from the idle watcher. */
static void
command_exec_retire(struct command_exec *t, struct cx_entry *e)
{
	if (e->prev != NULL)
		e->prev->next = e->next;
	else
		t->live = e->next;
	if (e->next != NULL)
		e->next->prev = e->prev;
	e->prev = NULL;
	e->next = t->dead;
	t->dead = e;
	t->count--;
	ev_idle_start(t->s->loop, &t->reaper);
	if (t->count == 0)
		command_exec_orphans();
}

void
command_exec_kill_all(struct command_exec *t)
{
	for (struct cx_entry *e = t->live; e != NULL; e = e->next)
		exec_kill(e->proc);
}

/* Free the table. Processes still listed are killed; their requests are answered by rpc_free. */
void
command_exec_free(struct command_exec *t)
{
	struct cx_entry *e;

	if (t == NULL)
		return;
	while ((e = t->live) != NULL) {
		t->live = e->next;
		command_exec_entry_free(e);
	}
	ev_idle_stop(t->s->loop, &t->reaper);
	command_exec_reap_dead(t);
	command_exec_orphans();
	free(t);
}

size_t
command_exec_count(const struct command_exec *t)
{
	return t != NULL ? t->count : 0;
}

/* The output queue drained: resume every paused stream. */
void
command_exec_resume(struct command_exec *t)
{
	for (struct cx_entry *e = t->live; e != NULL; e = e->next)
		exec_resume(e->proc);
}

/* The entry with this client processId, or NULL. */
static struct cx_entry *
command_exec_find(struct command_exec *t, const char *id)
{
	for (struct cx_entry *e = t->live; e != NULL; e = e->next)
		if (e->id != NULL && strcmp(e->id, id) == 0)
			return e;
	return NULL;
}

/* `"id"` as upstream quotes process ids in messages. */
static char *
command_exec_quote(const char *id)
{
	json_t *s = json_string(id);
	char *q = json_dumps(s, JSON_ENCODE_ANY);

	json_decref(s);
	return q;
}

/* The note a clipped answer carries at the end of its stderr. */
#define CX_CLIPPED_NOTE "\\n[app-server: output truncated: an answer is at most %d bytes]"

/*
 * The answer as one line of JSON text built from the raw captures: invalid UTF-8 repaired,
 * escaped, and clipped so that the line stays under EXEC_ANSWER_MAX whatever the output
 * holds (a NUL takes six bytes once escaped). Clipping keeps the start of each stream and
 * says so at the end of stderr.
 */
static void
command_exec_answer(struct exec_proc *p, struct buf *b)
{
	const struct buf *o = exec_output(p, 0), *e = exec_output(p, 1);
	size_t limit = EXEC_ANSWER_MAX - 256, lo = utf8_json_len(o->ptr, o->len),
	       le = utf8_json_len(e->ptr, e->len), eo, ee;
	int clipped = exec_clipped(p);

	if (lo + le > limit) {
		clipped = 1;
		/* Each stream gets what it needs, up to half, and the rest of the other's half. */
		ee = le < limit / 2 ? le : lo < limit / 2 ? limit - lo : limit / 2;
		eo = limit - ee;
	} else {
		eo = lo;
		ee = le;
	}
	buf_printf(b, "{\"exitCode\":%d,\"stdout\":\"", exec_exit_code(p));
	utf8_json_append(b, o->ptr, o->len, b->len + eo);
	buf_adds(b, "\",\"stderr\":\"");
	utf8_json_append(b, e->ptr, e->len, b->len + ee);
	if (clipped) {
		buf_printf(b, CX_CLIPPED_NOTE, EXEC_ANSWER_MAX);
		log_warn("exec: an answer was clipped to %d bytes", EXEC_ANSWER_MAX);
	}
	buf_adds(b, "\"}");
}

/* The process is done (exec.h): answer after its last delta, then retire the entry. */
static void
command_exec_done(struct exec_proc *p, void *arg)
{
	struct cx_entry *e = arg;
	struct buf answer;

	buf_init(&answer, EXEC_ANSWER_MAX);
	command_exec_answer(p, &answer);
	rpc_reply_raw(e->req, buf_str(&answer), answer.len);
	buf_free(&answer);
	e->req = NULL;
	command_exec_retire(e->t, e);
}

/* The end of an outputDelta line: capReached, the timestamp. */
static size_t
command_exec_frame_tail(char *out, size_t room, int cap)
{
	int n = snprintf(out, room, "\",\"capReached\":%s},\"emittedAtMs\":%lld}\n",
		cap ? "true" : "false", rpc_now_ms());

	return n > 0 && (size_t)n < room ? (size_t)n : 0;
}

/* A uint/int JSON field that may be null: 1 when present. */
static int
command_exec_int(const json_t *params, const char *key, json_int_t *out)
{
	json_t *v = json_object_get(params, key);

	if (!json_is_integer(v))
		return 0;
	*out = json_integer_value(v);
	return 1;
}

/* Read what a command/exec asks. */
static void
command_exec_read(json_t *params, struct cx_req *q)
{
	memset(q, 0, sizeof *q);
	q->argv = json_object_get(params, "command");
	q->size = json_object_get(params, "size");
	q->policy = json_object_get(params, "sandboxPolicy");
	q->id = json_string_value(json_object_get(params, "processId"));
	q->tty = json_is_true(json_object_get(params, "tty"));
	q->sin = q->tty || json_is_true(json_object_get(params, "streamStdin"));
	q->sout = q->tty || json_is_true(json_object_get(params, "streamStdoutStderr"));
	q->no_cap = json_is_true(json_object_get(params, "disableOutputCap"));
	q->no_timeout = json_is_true(json_object_get(params, "disableTimeout"));
	q->timeout_ms = CX_DEFAULT_TIMEOUT_MS;
	q->cap = CX_DEFAULT_CAP;
	q->has_timeout = command_exec_int(params, "timeoutMs", &q->timeout_ms);
	q->has_cap = command_exec_int(params, "outputBytesCap", &q->cap);
	if (json_is_object(q->size)) {
		command_exec_int(q->size, "rows", &q->rows);
		command_exec_int(q->size, "cols", &q->cols);
	}
}

/* The checks upstream makes before the policy, in its order; 0, or -1 once answered. */
static int
command_exec_check_shape(struct session *s, struct rpc_req *req, json_t *params, struct cx_req *q)
{
	if (json_array_size(q->argv) == 0) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, "command must not be empty", NULL);
		return -1;
	}
	if (json_object_get(params, "permissionProfile") != NULL) {
		if (!rpc_experimental(s->rpc)) {
			rpc_reply_error(req, RPC_INVALID_REQUEST,
				"command/exec.permissionProfile requires experimentalApi capability",
				NULL);
			return -1;
		}
		if (json_is_object(q->policy)) {
			rpc_reply_error(req, RPC_INVALID_REQUEST,
				"`permissionProfile` cannot be combined with `sandboxPolicy`",
				NULL);
			return -1;
		}
		/* The profile takes the policy's place; sandbox_policy_check tells them apart. */
		q->policy = json_object_get(params, "permissionProfile");
	}
	if (json_is_object(q->size) && !q->tty) {
		rpc_reply_error(
			req, RPC_INVALID_PARAMS, "command/exec size requires tty: true", NULL);
		return -1;
	}
	if (q->no_cap && q->has_cap) {
		rpc_reply_error(req, RPC_INVALID_PARAMS,
			"command/exec cannot set both outputBytesCap and disableOutputCap", NULL);
		return -1;
	}
	if (q->no_timeout && q->has_timeout) {
		rpc_reply_error(req, RPC_INVALID_PARAMS,
			"command/exec cannot set both timeoutMs and disableTimeout", NULL);
		return -1;
	}
	if (q->timeout_ms < 0) {
		rpc_reply_errorf(req, RPC_INVALID_PARAMS,
			"command/exec timeoutMs must be non-negative, got %lld",
			(long long)q->timeout_ms);
		return -1;
	}
	return 0;
}

/* The checks after the policy, in upstream's order; 0, or -1 once answered. */
static int
command_exec_check_rest(struct command_exec *t, struct rpc_req *req, const struct cx_req *q)
{
	char *quoted;

	if (json_is_object(q->size) && (q->rows == 0 || q->cols == 0)) {
		rpc_reply_error(req, RPC_INVALID_PARAMS,
			"command/exec size rows and cols must be greater than 0", NULL);
		return -1;
	}
	if ((q->tty || q->sin || q->sout) && q->id == NULL) {
		rpc_reply_error(req, RPC_INVALID_REQUEST,
			"command/exec tty or streaming requires a client-supplied processId", NULL);
		return -1;
	}
	if (q->id != NULL && command_exec_find(t, q->id) != NULL) {
		quoted = command_exec_quote(q->id);
		rpc_reply_errorf(req, RPC_INVALID_REQUEST,
			"duplicate active command/exec process id: %s", quoted);
		free(quoted);
		return -1;
	}
	if (t->count >= CX_MAX_PROCS) {
		rpc_reply_error(req, RPC_OVERLOADED, "Server overloaded; retry later.",
			json_pack("{s:s}", "codex_error_info", "server_overloaded"));
		return -1;
	}
	return 0;
}

/* Take over a spawned process: its entry, its frames, its answer. */
static void
command_exec_track(
	struct session *s, struct rpc_req *req, const struct cx_req *q, struct spawn_proc *sp)
{
	struct command_exec *t = s->exec;
	struct cx_entry *e = xcalloc(1, sizeof *e);
	struct exec_opts o = {0};
	char *quoted = q->id != NULL ? command_exec_quote(q->id) : xstrdup("\"\"");
	char *head[2];

	for (int i = 0; i < 2; i++)
		head[i] = xasprintf("{\"method\":\"command/exec/outputDelta\",\"params\":{"
				    "\"processId\":%s,\"stream\":\"%s\",\"deltaBase64\":\"",
			quoted, i == 0 ? "stdout" : "stderr");
	o.loop = s->loop;
	o.q = s->q;
	/* Without a cap, a buffered capture is still bounded by the answer ceiling. */
	o.cap = q->no_cap ? SIZE_MAX : (size_t)q->cap;
	o.timeout = q->no_timeout ? -1. : (double)q->timeout_ms / 1000.0;
	o.streaming = q->sout;
	o.frames = q->sout && rpc_notify_wanted(s->rpc, "command/exec/outputDelta");
	o.stdin_enabled = q->sin;
	o.head[0] = head[0];
	o.head[1] = head[1];
	o.frame_tail = command_exec_frame_tail;
	o.budget = &t->captured;
	o.done = command_exec_done;
	o.arg = e;
	e->t = t;
	e->req = req;
	e->id = q->id != NULL ? xstrdup(q->id) : NULL;
	e->next = t->live;
	if (t->live != NULL)
		t->live->prev = e;
	t->live = e;
	t->count++;
	e->proc = exec_start(&o, sp);
	log_debug("exec: started pid %d%s%s", (int)exec_pid(e->proc), q->id != NULL ? " as " : "",
		q->id != NULL ? q->id : "");
	free(head[0]);
	free(head[1]);
	free(quoted);
}

/* Build the spawn from the request and start it; 0, or -1 once answered. */
static int
command_exec_spawn(struct session *s, struct rpc_req *req, json_t *params, const struct cx_req *q,
	const struct config *cfg, const char *env_extra, json_t *policy)
{
	struct spawn_opts so = {0};
	struct spawn_proc sp = {.pid = -1, .in_fd = -1, .out_fd = -1, .err_fd = -1, .pty_fd = -1};
	char **argv = NULL, **envp = NULL, *cwd = NULL, *why = NULL;
	const char *bad = NULL;
	int r = -1;

	if ((argv = command_exec_spawn_argv(q->argv)) == NULL) {
		rpc_reply_error(req, RPC_INVALID_PARAMS,
			"command/exec command must not contain NUL bytes", NULL);
		goto out;
	}
	if ((envp = command_exec_spawn_env(json_object_get(params, "env"), env_extra, &bad)) ==
		NULL) {
		rpc_reply_errorf(
			req, RPC_INVALID_PARAMS, "command/exec env has an invalid entry `%s`", bad);
		goto out;
	}
	if (json_is_string(json_object_get(params, "cwd")) &&
		(cwd = command_exec_spawn_cwd(json_object_get(params, "cwd"))) == NULL) {
		rpc_reply_error(req, RPC_INVALID_PARAMS,
			"command/exec cwd must not contain NUL bytes", NULL);
		goto out;
	}
	so.argv = argv;
	so.envp = envp;
	so.cwd = cwd;
	/* A cgroup per command: capped, and its whole tree dies with the request. */
	so.flags = (q->tty ? SPAWN_PTY : 0) | (q->sin ? SPAWN_STDIN_PIPE : 0) | SPAWN_CGROUP;
	so.max_pids = config_max_processes(cfg);
	so.rows = (unsigned short)q->rows;
	so.cols = (unsigned short)q->cols;
	/* A CODEX_HOME that exists is bound read-only, rather than held by a placeholder. */
	if (home_ensure(&why) != 0) {
		log_debug("exec: %s", why);
		free(why);
		why = NULL;
	}
	if (sandbox_spawn_prepare(policy, &so, &why) != 0 || spawn_start(&so, &sp, &why) != 0) {
		sandbox_spawn_done(&so, NULL);
		rpc_reply_error(req, RPC_INTERNAL_ERROR, why, NULL);
		goto out;
	}
	sandbox_spawn_done(&so, &sp);
	command_exec_track(s, req, q, &sp);
	r = 0;
out:
	command_exec_spawn_strv_free(argv);
	command_exec_spawn_strv_free(envp);
	free(cwd);
	free(why);
	return r;
}

static void
command_exec_handle(struct session *s, struct rpc_req *req, json_t *params)
{
	const struct config *cfg;
	const char *env_extra = NULL;
	json_t *policy, *dflt = NULL;
	struct cx_req q;
	char *why = NULL;

	command_exec_read(params, &q);
	if (command_exec_check_shape(s, req, params, &q) != 0)
		return;
	cfg = config_cache_get();
	policy = q.policy;
	if (policy == NULL || json_is_null(policy)) /* neither a policy nor a profile */
		policy = dflt = command_exec_spawn_default_policy(cfg);
	if (sandbox_policy_check(policy, &env_extra, &why) != 0) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, why, NULL);
		goto out;
	}
	if (command_exec_check_rest(s->exec, req, &q) != 0)
		goto out;
	command_exec_spawn(s, req, params, &q, cfg, env_extra, policy);
out:
	json_decref(dflt);
	free(why);
}

/* Look up the target of a follow-up call, answering the error when there is none. */
static struct exec_proc *
command_exec_target(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "processId"));
	struct cx_entry *e = command_exec_find(s->exec, id);
	char *q;

	if (e != NULL && exec_state(e->proc) == EXEC_RUNNING)
		return e->proc;
	q = command_exec_quote(id);
	if (e == NULL)
		rpc_reply_errorf(
			req, RPC_INVALID_REQUEST, "no active command/exec for process id %s", q);
	else
		rpc_reply_errorf(
			req, RPC_INVALID_REQUEST, "command/exec %s is no longer running", q);
	free(q);
	return NULL;
}

static void
command_exec_handle_write(struct session *s, struct rpc_req *req, json_t *params)
{
	json_t *delta = json_object_get(params, "deltaBase64");
	int close_stdin = json_is_true(json_object_get(params, "closeStdin"));
	char *data = NULL, *cause = NULL;
	const char *why;
	struct exec_proc *p;
	size_t n = 0;

	if (!json_is_string(delta) && !close_stdin) {
		rpc_reply_error(req, RPC_INVALID_PARAMS,
			"command/exec/write requires deltaBase64 or closeStdin", NULL);
		return;
	}
	if (json_is_string(delta)) {
		data = xmalloc(base64_decoded_max(json_string_length(delta)) + 1);
		if (base64_decode(json_string_value(delta), json_string_length(delta), data, &n,
			    &cause) != 0) {
			rpc_reply_errorf(req, RPC_INVALID_PARAMS, "invalid deltaBase64: %s", cause);
			goto out;
		}
	}
	if ((p = command_exec_target(s, req, params)) == NULL)
		goto out;
	if (!exec_stdin_enabled(p)) {
		rpc_reply_error(req, RPC_INVALID_REQUEST,
			"stdin streaming is not enabled for this command/exec", NULL);
		goto out;
	}
	if (exec_write(p, data, n, close_stdin, &why) != 0) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, why, NULL);
		goto out;
	}
	rpc_reply(req, json_object());
out:
	free(data);
	free(cause);
}

static void
command_exec_handle_resize(struct session *s, struct rpc_req *req, json_t *params)
{
	json_t *size = json_object_get(params, "size");
	json_int_t rows = 0, cols = 0;
	struct exec_proc *p;
	int e;

	command_exec_int(size, "rows", &rows);
	command_exec_int(size, "cols", &cols);
	if (rows == 0 || cols == 0) {
		rpc_reply_error(req, RPC_INVALID_PARAMS,
			"command/exec size rows and cols must be greater than 0", NULL);
		return;
	}
	if ((p = command_exec_target(s, req, params)) == NULL)
		return;
	if ((e = exec_resize(p, (unsigned short)rows, (unsigned short)cols)) == -ENOTTY) {
		rpc_reply_error(req, RPC_INVALID_REQUEST,
			"failed to resize PTY: process is not attached to a PTY", NULL);
		return;
	}
	if (e != 0) {
		rpc_reply_errorf(req, RPC_INTERNAL_ERROR, "failed to resize PTY: %s", strerror(-e));
		return;
	}
	rpc_reply(req, json_object());
}

static void
command_exec_handle_terminate(struct session *s, struct rpc_req *req, json_t *params)
{
	struct exec_proc *p = command_exec_target(s, req, params);

	if (p == NULL)
		return;
	exec_kill(p);
	rpc_reply(req, json_object());
}

const struct rpc_method api_command_exec_methods[] = {
	{"command/exec", command_exec_handle, 0},
	{"command/exec/write", command_exec_handle_write, 0},
	{"command/exec/resize", command_exec_handle_resize, 0},
	{"command/exec/terminate", command_exec_handle_terminate, 0},
	{NULL, NULL, 0},
};
