/*
 * Code mode's host process (codemode_host.h): node on codemode_host.js, spawned like every
 * command (its own session and process group, a cgroup, O_CLOEXEC pipes, reaped by the exec
 * engine's child watcher) under a read-only sandbox. Its stdout is framed into JSON lines
 * (bounded); its stderr is read and dropped into the log.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codemode_host.h"
#include "exec/exec.h"
#include "io/log.h"
#include "protocol/xmalloc.h"
#include "sandbox/sandbox.h"
#include "sandbox/spawn/spawn.h"

struct codemode_host {
	struct exec_proc *proc;
	struct codemode_frame out;
	const struct codemode_host_cbs *cbs;
	void *arg;
	int broken; /* a line too long or not JSON: the host is killed */
};

static size_t host_budget; /* every host's captured bytes (none: streamed) */

void
codemode_frame_init(struct codemode_frame *f, size_t max)
{
	buf_init(&f->pending, max);
}

void
codemode_frame_free(struct codemode_frame *f)
{
	buf_free(&f->pending);
}

int
codemode_frame_feed(struct codemode_frame *f, const char *data, size_t n,
	void (*line)(void *arg, const char *text, size_t len), void *arg)
{
	const char *nl;
	size_t k;

	while (n > 0) {
		nl = memchr(data, '\n', n);
		k = nl != NULL ? (size_t)(nl - data) : n;
		if (buf_add(&f->pending, data, k) != 0)
			return -1; /* past the ceiling: the stream cannot be trusted any more */
		if (nl == NULL)
			break;
		line(arg, buf_str(&f->pending), f->pending.len);
		buf_reset(&f->pending);
		data = nl + 1;
		n -= k + 1;
	}
	return 0;
}

char *
codemode_node_path(const char *path_env)
{
	const char *p = path_env, *end;
	char *cand;

	while (p != NULL && *p != '\0') {
		end = strchr(p, ':');
		cand = xasprintf("%.*s/node", (int)(end != NULL ? end - p : (long)strlen(p)), p);
		if (cand[0] == '/' && access(cand, X_OK) == 0)
			return cand;
		free(cand);
		p = end != NULL ? end + 1 : NULL;
	}
	return NULL;
}

/* One line of the host's stdout: a message for the owner, or the end of trust. */
static void
host_line(void *arg, const char *text, size_t len)
{
	struct codemode_host *h = arg;
	json_t *msg;

	if (h->broken)
		return;
	if ((msg = json_loadb(text, len, 0, NULL)) == NULL || !json_is_object(msg)) {
		log_warn("code mode host: not a JSON object on its stdout");
		h->broken = 1;
		exec_kill(h->proc);
		json_decref(msg);
		return;
	}
	h->cbs->message(h->arg, msg);
	json_decref(msg);
}

/* Bytes from the host: stdout is its protocol, stderr goes to our log. */
static void
host_output(void *arg, int stream, const char *data, size_t n)
{
	struct codemode_host *h = arg;

	if (stream == 1) {
		log_debug("code mode host stderr: %.*s", (int)(n > 2000 ? 2000 : n), data);
		return;
	}
	if (!h->broken && codemode_frame_feed(&h->out, data, n, host_line, h) != 0) {
		log_warn("code mode host: a line past %u bytes", CODEMODE_LINE_MAX);
		h->broken = 1;
		exec_kill(h->proc);
	}
}

/* Reaped and drained. */
static void
host_done(struct exec_proc *p, void *arg)
{
	struct codemode_host *h = arg;

	(void)p;
	h->cbs->gone(h->arg);
}

int
codemode_host_start(struct ev_loop *loop, struct outq *q, const char *cwd,
	const struct codemode_host_cbs *cbs, void *arg, struct codemode_host **out, char **cause)
{
	struct spawn_opts so = {0};
	struct spawn_proc sp;
	struct exec_opts eo = {0};
	char *node = codemode_node_path(getenv("PATH")), *pathv = NULL;
	char *argv[] = {node, "--experimental-vm-modules", "--no-warnings", "-e",
		(char *)codemode_host_js, NULL};
	char *envp[] = {NULL, "LANG=C.UTF-8", NULL};
	json_t *policy = json_pack("{s:s}", "type", "readOnly");
	struct codemode_host *h;
	int r = -1;

	if (node == NULL) {
		*cause = xstrdup("code mode is unavailable: node was not found on PATH");
		goto out;
	}
	pathv = xasprintf("PATH=%s", getenv("PATH"));
	envp[0] = pathv;
	so.argv = argv;
	so.envp = envp; /* nothing of ours: no NODE_OPTIONS, no secrets */
	so.cwd = cwd;
	so.policy_cwd = cwd;
	so.flags = SPAWN_CGROUP | SPAWN_STDIN_PIPE;
	if (sandbox_spawn_prepare(policy, &so, cause) != 0 || spawn_start(&so, &sp, cause) != 0) {
		sandbox_spawn_done(&so, NULL);
		goto out;
	}
	sandbox_spawn_done(&so, &sp);
	h = xcalloc(1, sizeof *h);
	codemode_frame_init(&h->out, CODEMODE_LINE_MAX);
	h->cbs = cbs;
	h->arg = arg;
	eo.loop = loop;
	eo.q = q;
	eo.cap = SIZE_MAX;
	eo.timeout = -1.;
	eo.streaming = 1;
	eo.stdin_enabled = 1;
	eo.output = host_output;
	eo.budget = &host_budget;
	eo.done = host_done;
	eo.arg = h;
	h->proc = exec_start(&eo, &sp);
	*out = h;
	r = 0;
out:
	free(node);
	free(pathv);
	json_decref(policy);
	return r;
}

int
codemode_host_send(struct codemode_host *h, const json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT | JSON_ENSURE_ASCII);
	const char *why = NULL;
	size_t n;
	int r;

	if (text == NULL || exec_state(h->proc) != EXEC_RUNNING) {
		free(text);
		return -1;
	}
	n = strlen(text);
	text[n] = '\0';
	r = exec_write(h->proc, text, n, 0, &why) == 0 && exec_write(h->proc, "\n", 1, 0, &why) == 0
		? 0
		: -1;
	free(text);
	return r;
}

void
codemode_host_kill(struct codemode_host *h)
{
	if (h != NULL && exec_state(h->proc) == EXEC_RUNNING)
		exec_kill(h->proc);
}

void
codemode_host_free(struct codemode_host *h)
{
	if (h == NULL)
		return;
	exec_free(h->proc); /* kills the tree when still running */
	codemode_frame_free(&h->out);
	free(h);
}

pid_t
codemode_host_pid(const struct codemode_host *h)
{
	return exec_pid(h->proc);
}
