/*
 * A thread's shell snapshot over its life (shell_snapshot.h): the login shell and the check
 * run as children on the exec engine, so the loop never waits for a profile; the file work
 * (a file of a few KB, at most SHELL_SNAPSHOT_MAX, written, renamed, removed) is done on the
 * loop between them. At most SHELL_SNAPSHOT_RUNNING captures run at once in the daemon: a
 * client that opens many threads at once does not start as many login shells; the others
 * wait in order, and a thread unloaded meanwhile never starts its own.
 *
 * A capture asked for at thread start begins SHELL_SNAPSHOT_DEFER later, or at once when a
 * turn starts (shell_snapshot_hurry): thread/start is one request of a client's start-up
 * burst, and the login shell (a profile can cost 100 ms of CPU) with its sandbox's set-up
 * (namespaces, a cgroup: ~1.5 ms of the loop's time) would compete with the rest of it.
 *
 * States: WAITING (queued) -> CAPTURE (bash -lc prints) -> CHECK (bash -c 'set -e; . tmp')
 * -> READY (renamed to <id>.<nanos>.sh), or FAILED from any of them (no file left behind).
 */
#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shell_snapshot.h"
#include "shell_words.h"
#include "exec/exec.h"
#include "io/log.h"
#include "protocol/xmalloc.h"
#include "sandbox/sandbox.h"

extern char **environ;

enum snap_state { SNAP_WAITING, SNAP_CAPTURE, SNAP_CHECK, SNAP_READY, SNAP_FAILED };

struct shell_snapshot {
	struct ev_loop *loop;
	enum snap_state state;
	char *cwd, *shell, *thread_id;
	char *tmp;  /* <dir>/<id>.tmp-<nanos>: written, then checked */
	char *path; /* <dir>/<id>.<nanos>.sh: the file once READY */
	char *dir;  /* <codex_home>/shell_snapshots, made before the file is written */
	json_t *policy;
	struct exec_proc *proc;
	struct shell_snapshot *prev; /* the thread's older snapshot, used until this one ends */
	char **env;	    /* what the wrapper's exec hands on (the check's dump), or NULL */
	uint64_t base_hash; /* of the environment the check started from (ours) */
	int queued;
	TAILQ_ENTRY(shell_snapshot) wait;
};

TAILQ_HEAD(snap_queue, shell_snapshot);
static struct snap_queue snap_waiting = TAILQ_HEAD_INITIALIZER(snap_waiting);
static int snap_running;
static struct ev_loop *snap_loop; /* the daemon's: where snap_timer runs */
static ev_timer snap_timer;	  /* SHELL_SNAPSHOT_DEFER after a capture was asked for */
static size_t snap_budget;	  /* bytes held by every capture (exec.h's budget) */

static void snap_capture_done(struct exec_proc *p, void *arg);
static void snap_check_done(struct exec_proc *p, void *arg);
static void snap_next(void);

/* The snapshot is over (ready or failed): the older one goes, another capture may start. */
static void
snap_end(struct shell_snapshot *s, enum snap_state st)
{
	if (st == SNAP_FAILED && s->tmp != NULL)
		unlink(s->tmp);
	s->state = st;
	shell_snapshot_free(s->prev);
	s->prev = NULL;
	snap_running--;
	snap_next();
}

/* FNV-1a over an environment's entries (each with its NUL): which one a call starts from. */
static uint64_t
snap_env_hash(char *const *envp)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; envp != NULL && envp[i] != NULL; i++)
		for (const char *p = envp[i];; p++) {
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
			if (*p == '\0')
				break;
		}
	return h;
}

/* Run argv for the snapshot (the thread's cwd and policy); 0, or -1 (logged). */
static int
snap_spawn(
	struct shell_snapshot *s, const char *const *argv, void (*done)(struct exec_proc *, void *))
{
	struct spawn_opts so = {0};
	struct spawn_proc sp;
	struct exec_opts eo = {0};
	char *cause = NULL;

	/* The daemon's environment, as upstream's: the sandbox's own variable is not given to
	 * the shell, so it never lands in the file and in unsandboxed calls after it. */
	so.argv = (char *const *)argv;
	so.envp = environ;
	so.cwd = s->cwd;
	so.policy_cwd = s->cwd;
	/* Not waiting for the exec: a sandbox's setup (5-50 ms) would hold thread/start's answer
	 * and every request behind it; a failure before the exec shows as exit 127 here. */
	so.flags = SPAWN_CGROUP | SPAWN_NOWAIT;
	if (sandbox_spawn_prepare(s->policy, &so, &cause) != 0 ||
		spawn_start(&so, &sp, &cause) != 0) {
		sandbox_spawn_done(&so, NULL);
		log_warn("shell snapshot of thread %s: %s", s->thread_id,
			cause != NULL ? cause : "spawn failed");
		free(cause);
		return -1;
	}
	sandbox_spawn_done(&so, &sp);
	eo.loop = s->loop;
	eo.cap = SHELL_SNAPSHOT_MAX;
	eo.timeout = SHELL_SNAPSHOT_TIMEOUT;
	eo.budget = &snap_budget;
	eo.done = done;
	eo.arg = s;
	s->proc = exec_start(&eo, &sp);
	return 0;
}

/* Start the login shell that prints the snapshot. */
static void
snap_capture(struct shell_snapshot *s)
{
	const char *argv[] = {s->shell, "-lc", shell_snapshot_capture_script, NULL};

	s->state = SNAP_CAPTURE;
	snap_running++;
	if (snap_spawn(s, argv, snap_capture_done) != 0)
		snap_end(s, SNAP_FAILED);
}

/* Start the captures that wait, as far as the limit allows. */
static void
snap_next(void)
{
	struct shell_snapshot *s;

	while (snap_running < SHELL_SNAPSHOT_RUNNING && (s = TAILQ_FIRST(&snap_waiting)) != NULL) {
		TAILQ_REMOVE(&snap_waiting, s, wait);
		s->queued = 0;
		snap_capture(s);
	}
}

/*
 * SHELL_SNAPSHOT_DEFER, or APP_SERVER_SNAPSHOT_DEFER_MS (a test's: how long a capture waits
 * for a turn to hurry it, at most a minute).
 */
static double
snap_defer(void)
{
	const char *v = getenv("APP_SERVER_SNAPSHOT_DEFER_MS");
	unsigned long ms = v != NULL ? strtoul(v, NULL, 10) : 0;

	return ms == 0 ? SHELL_SNAPSHOT_DEFER : (ms > 60000 ? 60000 : ms) / 1000.;
}

static void
snap_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	snap_next();
}

void
shell_snapshot_hurry(void)
{
	if (snap_loop != NULL && ev_is_active(&snap_timer))
		ev_timer_stop(snap_loop, &snap_timer);
	snap_next();
}

/* Write the file's text to the temporary name (new, private: it holds the environment). */
static int
snap_write(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600), r = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (r == 0 && len > 0) {
		if ((n = write(fd, text, len)) < 0 && errno != EINTR)
			r = -errno;
		else if (n > 0) {
			text += n;
			len -= (size_t)n;
		}
	}
	if (close(fd) != 0 && r == 0)
		r = -errno;
	return r;
}

/* The login shell ended: make the file from its output, then check it in a fresh shell. */
static void
snap_capture_done(struct exec_proc *p, void *arg)
{
	struct shell_snapshot *s = arg;
	const struct buf *out = exec_output(p, 0);
	char *script = NULL;
	struct buf text;
	int r, code = exec_exit_code(p);

	buf_init(&text, SHELL_SNAPSHOT_MAX + 64);
	s->proc = NULL;
	if (code != 0 || exec_clipped(p) || out->ptr == NULL ||
		shell_snapshot_text(out->ptr, out->len, &text) != 0) {
		log_warn("shell snapshot of thread %s: the login shell %s", s->thread_id,
			code != 0 ? "failed" : "printed no snapshot");
		goto fail;
	}
	/* The folder is made when there is a file for it, not at thread/start: on a busy file
	 * system a mkdir costs a millisecond or more, and thread/start's answer waited for it. */
	r = mkdir(s->dir, 0700) == 0 || errno == EEXIST ? 0 : -errno;
	if (r != 0 || (r = snap_write(s->tmp, text.ptr, text.len)) != 0) {
		log_warn("shell snapshot of thread %s: %s: %s", s->thread_id, s->tmp, strerror(-r));
		goto fail;
	}
	/* A file the shell cannot source is no snapshot: calls would lose their profile. The
	 * same shell prints the environment a call's wrapper would hand on (shell_snapshot_env). */
	if ((script = shell_snapshot_check_script(s->tmp)) == NULL)
		goto fail;
	s->base_hash = snap_env_hash(environ);
	s->state = SNAP_CHECK;
	const char *argv[] = {s->shell, "-c", script, NULL};

	if (snap_spawn(s, argv, snap_check_done) != 0)
		goto fail;
	exec_free(p);
	buf_free(&text);
	free(script);
	return;
fail:
	exec_free(p); /* allowed from done (exec.h): its last use of p */
	buf_free(&text);
	free(script);
	snap_end(s, SNAP_FAILED);
}

/* The check ended: the file is published under its final name, or removed. */
static void
snap_check_done(struct exec_proc *p, void *arg)
{
	struct shell_snapshot *s = arg;
	const struct buf *out = exec_output(p, 0);
	int code = exec_exit_code(p);

	s->proc = NULL;
	if (code == 0 && !exec_clipped(p) && out->ptr != NULL)
		s->env = shell_snapshot_env(out->ptr, out->len, s->shell);
	exec_free(p);
	if (code != 0) {
		log_warn("shell snapshot of thread %s: sourcing it failed (exit %d)", s->thread_id,
			code);
		snap_end(s, SNAP_FAILED);
		return;
	}
	if (rename(s->tmp, s->path) != 0) {
		log_warn("shell snapshot of thread %s: %s: %s", s->thread_id, s->path,
			strerror(errno));
		snap_end(s, SNAP_FAILED);
		return;
	}
	log_debug("shell snapshot of thread %s: %s", s->thread_id, s->path);
	snap_end(s, SNAP_READY);
}

struct shell_snapshot *
shell_snapshot_start(const struct shell_snapshot_opts *o, struct shell_snapshot *prev)
{
	struct shell_snapshot *s = xcalloc(1, sizeof *s);
	char *dir = xasprintf("%s/" SHELL_SNAPSHOT_DIR, o->codex_home);
	struct timespec ts;
	unsigned long long nanos;
	static int swept;

	if (!swept) { /* once per daemon, off the loop: what dead daemons left */
		swept = 1;
		shell_snapshot_sweep_start(o->codex_home);
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	nanos = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
	s->loop = o->loop;
	s->cwd = xstrdup(o->cwd);
	s->shell = xstrdup(o->shell);
	s->thread_id = xstrdup(o->thread_id);
	s->policy = json_deep_copy(o->sandbox_policy);
	s->tmp = xasprintf("%s/%s.tmp-%llu", dir, o->thread_id, nanos);
	s->path = xasprintf("%s/%s.%llu.sh", dir, o->thread_id, nanos);
	s->dir = xstrdup(dir);
	s->prev = prev;
	s->state = SNAP_WAITING;
	s->queued = 1;
	TAILQ_INSERT_TAIL(&snap_waiting, s, wait);
	if (snap_loop == NULL) {
		snap_loop = o->loop;
		ev_init(&snap_timer, snap_timer_cb);
	}
	if (!ev_is_active(&snap_timer)) {
		ev_timer_set(&snap_timer, snap_defer(), 0.);
		ev_timer_start(snap_loop, &snap_timer);
	}
	free(dir);
	return s;
}

void
shell_snapshot_free(struct shell_snapshot *s)
{
	if (s == NULL)
		return;
	if (s->queued) {
		TAILQ_REMOVE(&snap_waiting, s, wait);
		if (TAILQ_EMPTY(&snap_waiting) && snap_loop != NULL)
			ev_timer_stop(snap_loop, &snap_timer); /* nothing left to start */
	}
	if (s->state == SNAP_CAPTURE || s->state == SNAP_CHECK) {
		exec_free(s->proc); /* kills the tree; its done never runs */
		s->proc = NULL;
		snap_end(s, SNAP_FAILED); /* unlinks tmp, frees prev, lets another start */
	}
	if (s->state == SNAP_READY)
		unlink(s->path);
	shell_snapshot_free(s->prev);
	free(s->env);
	json_decref(s->policy);
	free(s->cwd);
	free(s->shell);
	free(s->thread_id);
	free(s->tmp);
	free(s->path);
	free(s->dir);
	free(s);
}

const char *
shell_snapshot_cwd(const struct shell_snapshot *s)
{
	return s->cwd;
}

/* Whether a and b name the same directory as text: trailing "/" and "/." do not count. */
static int
snap_same_dir(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	for (;;) {
		if (la > 1 && a[la - 1] == '/')
			la--;
		else if (la > 2 && a[la - 1] == '.' && a[la - 2] == '/')
			la -= 2;
		else
			break;
	}
	for (;;) {
		if (lb > 1 && b[lb - 1] == '/')
			lb--;
		else if (lb > 2 && b[lb - 1] == '.' && b[lb - 2] == '/')
			lb -= 2;
		else
			break;
	}
	return la == lb && memcmp(a, b, la) == 0;
}

/* The ready snapshot of the chain that serves cwd, or NULL. */
static const struct shell_snapshot *
snap_serving(const struct shell_snapshot *s, const char *cwd)
{
	for (; s != NULL; s = s->prev)
		if (s->state == SNAP_READY && snap_same_dir(s->cwd, cwd))
			return s;
	return NULL;
}

const char *
shell_snapshot_path(const struct shell_snapshot *s, const char *cwd)
{
	return (s = snap_serving(s, cwd)) != NULL ? s->path : NULL;
}

int
shell_snapshot_wrap(const struct shell_snapshot *s, const char *cwd, const char *const *argv,
	size_t argc, const char *const *keep, char *const **envp, struct shell_words *out)
{
	char *wrapper;
	int r;

	/* Only what upstream rewrites: [shell, -lc, script, args...]; the file still there. */
	if ((s = snap_serving(s, cwd)) == NULL || argc < 3 || strcmp(argv[1], "-lc") != 0 ||
		access(s->path, R_OK) != 0)
		return -1;
	/*
	 * The wrapper's work known in advance: what it would source and exec is what the check
	 * sourced and printed, from the same environment; the call's shell starts from there.
	 */
	if (s->env != NULL && (keep == NULL || keep[0] == NULL) && strcmp(argv[0], s->shell) == 0 &&
		snap_env_hash(*envp) == s->base_hash) {
		const char *w[] = {argv[0], "-c"};

		if (shell_words_append(out, w, 2) != 0 ||
			shell_words_append(out, argv + 2, argc - 2) != 0) {
			shell_words_free(out);
			return -1;
		}
		*envp = s->env;
		return 0;
	}
	if ((wrapper = shell_snapshot_wrapper(s->path, argv, argc, keep)) == NULL)
		return -1;
	const char *w[] = {s->shell, "-c", wrapper};

	r = shell_words_append(out, w, 3);
	free(wrapper);
	if (r != 0) {
		shell_words_free(out);
		return -1;
	}
	return 0;
}
