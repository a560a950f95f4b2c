/*
 * One event's run: each matching handler is `$SHELL -lc <command>` (upstream's shell, /bin/sh
 * without SHELL) in the session's cwd, with the daemon's environment, unsandboxed as upstream
 * runs hooks, its JSON on stdin, in a process group (and cgroup) of its own on the exec engine;
 * the timeout kills the group. Handlers run side by side; every `started` summary goes out
 * before any handler runs, and the `completed` ones in display order once the last ended.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hooks_int.h"
#include "exec/exec.h"
#include "io/log.h"
#include "protocol/xmalloc.h"

#define HOOK_OUTPUT_MAX (1u << 20) /* bytes of a hook's stdout or stderr kept */

extern char **environ;

struct hooks_job {
	struct hooks_run *run;
	const struct hook_handler *h;
	struct exec_proc *proc;
	json_t *summary; /* HookRunSummary */
	int64_t started_ms;
	int done;
	struct hook_outcome out;
};

struct hooks_run {
	struct ev_loop *loop;
	struct hook_set *set; /* kept while the handlers run */
	enum hook_event event;
	struct hooks_job *jobs;
	size_t n, left;
	size_t budget;
	struct hooks_report r;
	void *arg;
	ev_idle later; /* the end, reported from the loop */
};

static void hooks_run_done_cb(struct exec_proc *p, void *arg);
static void hooks_run_later_cb(struct ev_loop *loop, ev_idle *w, int revents);

static int64_t
hooks_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The run's summary as upstream's hook/started announces it. */
static json_t *
hooks_summary(const struct hook_handler *h, int turn_scope, const char *suffix, int64_t started_ms)
{
	char *id = xasprintf("%s:%lld:%s%s%s", hooks_event_key_name(h->event), h->display_order,
		h->source_path, suffix != NULL ? ":" : "", suffix != NULL ? suffix : "");

	for (char *c = id; *c != ':'; c++)
		if (*c == '_')
			*c = '-'; /* upstream's run ids name the event in kebab case */
	json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s?, s:I, s:n, s:n, "
			      "s:[]}",
		"id", id, "eventName", hooks_event_wire_name(h->event), "handlerType", "command",
		"executionMode", h->async ? "async" : "sync", "scope",
		turn_scope ? "turn" : "thread", "sourcePath", h->source_path, "source", h->source,
		"displayOrder", (json_int_t)h->display_order, "status", "running", "statusMessage",
		h->status_message, "startedAt", (json_int_t)(started_ms / 1000), "completedAt",
		"durationMs", "entries");

	free(id);
	return r;
}

/* Start one handler; 0, or -1 with its outcome set to the failure. */
static int
hooks_job_spawn(struct hooks_run *run, struct hooks_job *j, const char *cwd, const char *input)
{
	const char *shell = getenv("SHELL");
	char *argv[] = {(char *)(shell != NULL && shell[0] == '/' ? shell : "/bin/sh"), "-lc",
		j->h->command, NULL};
	struct spawn_opts so = {0};
	struct spawn_proc sp;
	struct exec_opts eo = {0};
	const char *why = NULL;
	char *cause = NULL;

	so.argv = argv;
	so.envp = environ;
	so.cwd = cwd;
	so.flags = SPAWN_STDIN_PIPE | SPAWN_CGROUP;
	if (spawn_start(&so, &sp, &cause) != 0) {
		memset(&j->out, 0, sizeof j->out);
		j->out.status = "failed";
		j->out.entries = json_pack("[{s:s, s:s}]", "kind", "error", "text",
			cause != NULL ? cause : "spawn failed");
		free(cause);
		return -1;
	}
	eo.loop = run->loop;
	eo.cap = HOOK_OUTPUT_MAX;
	eo.timeout = (double)j->h->timeout;
	eo.stdin_enabled = 1;
	eo.budget = &run->budget;
	eo.done = hooks_run_done_cb;
	eo.arg = j;
	j->proc = exec_start(&eo, &sp);
	if (exec_write(j->proc, input, strlen(input), 1, &why) != 0)
		log_warn("hook stdin: %s", why != NULL ? why : "refused");
	return 0;
}

/* A handler ended: its outcome; the run ends with the last one. */
static void
hooks_job_finish(struct hooks_job *j)
{
	int64_t now = hooks_now_ms();

	j->done = 1;
	json_object_set_new(j->summary, "status", json_string(j->out.status));
	json_object_set_new(j->summary, "completedAt", json_integer(now / 1000));
	json_object_set_new(j->summary, "durationMs", json_integer(now - j->started_ms));
	json_object_set(j->summary, "entries", j->out.entries);
	if (--j->run->left == 0)
		ev_idle_start(j->run->loop, &j->run->later);
}

static void
hooks_run_done_cb(struct exec_proc *p, void *arg)
{
	struct hooks_job *j = arg;
	const struct buf *o = exec_output(p, 0), *e = exec_output(p, 1);
	char *out = xstrndup(o->ptr != NULL ? o->ptr : "", o->len);
	char *err = xstrndup(e->ptr != NULL ? e->ptr : "", e->len);
	int code = exec_exit_code(p);
	/* exec reports 124 after its timeout: upstream says the hook timed out */
	int timed_out = code == 124 && hooks_now_ms() - j->started_ms >= j->h->timeout * 1000;

	exec_free(p);
	j->proc = NULL;
	hooks_outcome_parse(j->h->event, code, timed_out, j->h->timeout, out, err, &j->out);
	free(out);
	free(err);
	hooks_job_finish(j);
}

static void
hooks_run_later_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct hooks_run *run = container_of(w, struct hooks_run, later);
	json_t *contexts = json_array(), *feedback = json_array(), *stops = json_array();
	int blocked = 0;

	(void)revents;
	ev_idle_stop(loop, w);
	for (size_t i = 0; i < run->n; i++) {
		struct hooks_job *j = &run->jobs[i];

		run->r.summary(run->arg, "hook/completed", j->summary);
		if (j->out.context != NULL)
			json_array_append_new(contexts, json_string(j->out.context));
		if (j->out.allow)
			blocked |= HOOKS_ALLOWED;
		if (strcmp(j->out.status, "stopped") == 0 ||
			strcmp(j->out.status, "blocked") == 0) {
			int stop = strcmp(j->out.status, "stopped") == 0;

			blocked |= stop ? HOOKS_STOPPED : HOOKS_BLOCKED;
			if (j->out.feedback != NULL)
				json_array_append_new(stop ? stops : feedback,
					json_pack("{s:s, s:O}", "text", j->out.feedback,
						"hookRunId", json_object_get(j->summary, "id")));
		}
	}
	/* continue: false wins over a block (upstream stops what the event guards), a deny over
	 * an allow (upstream: any PermissionRequest deny is final) */
	run->r.done(run->arg, contexts,
		blocked & HOOKS_STOPPED		  ? HOOKS_STOPPED
			: blocked & HOOKS_BLOCKED ? HOOKS_BLOCKED
						  : blocked,
		blocked & HOOKS_STOPPED ? stops : feedback);
	json_decref(contexts);
	json_decref(feedback);
	json_decref(stops);
}

struct hooks_run *
hooks_run_start(struct ev_loop *loop, const struct hook_set *s, enum hook_event e,
	const char *subject, const char *cwd, const json_t *input, int turn_scope,
	const char *id_suffix, const struct hooks_report *r, void *arg)
{
	struct hooks_run *run;
	char *text;
	size_t i, n = 0;

	for (i = 0; s != NULL && i < s->n; i++)
		n += s->h[i].event == e && hooks_matches(&s->h[i], subject);
	if (n == 0)
		return NULL;
	run = xcalloc(1, sizeof *run);
	run->loop = loop;
	run->set = hooks_ref((struct hook_set *)s);
	run->event = e;
	run->jobs = xcalloc(n, sizeof *run->jobs);
	run->r = *r;
	run->arg = arg;
	ev_idle_init(&run->later, hooks_run_later_cb);
	for (i = 0; i < s->n; i++)
		if (s->h[i].event == e && hooks_matches(&s->h[i], subject)) {
			struct hooks_job *j = &run->jobs[run->n++];

			j->run = run;
			j->h = &s->h[i];
			j->started_ms = hooks_now_ms();
			j->summary = hooks_summary(j->h, turn_scope, id_suffix, j->started_ms);
			r->summary(arg, "hook/started", j->summary);
		}
	run->left = run->n;
	text = json_dumps(input, JSON_COMPACT);
	for (i = 0; i < run->n; i++)
		if (hooks_job_spawn(run, &run->jobs[i], cwd, text != NULL ? text : "{}") != 0)
			hooks_job_finish(&run->jobs[i]);
	free(text);
	return run;
}

void
hooks_run_free(struct hooks_run *run)
{
	if (run == NULL)
		return;
	ev_idle_stop(run->loop, &run->later);
	for (size_t i = 0; i < run->n; i++) {
		exec_free(run->jobs[i].proc); /* still running: killed with its group */
		json_decref(run->jobs[i].summary);
		if (run->jobs[i].done)
			hooks_outcome_free(&run->jobs[i].out);
	}
	free(run->jobs);
	hooks_unref(run->set);
	free(run);
}
