/*
 * The child side of the sandbox: spawn's child hook. Async-signal-safe calls only (the
 * daemon may have threads), every failure returned as SBX_ERR(step, errno) so the request
 * fails with the layer's name; nothing ever runs less sandboxed than asked.
 *
 * Process shape (SBX_MODE_NS): spawn creates the child with clone(CLONE_NEWUSER |
 * CLONE_NEWNS | CLONE_NEWPID [| CLONE_NEWNET]), so it is pid 1 of the new PID namespace,
 * the session leader and, with a PTY, the terminal's controller. As that init it
 *  1. maps its own uid and gid (setgroups deny, "U U 1", "G G 1": the daemon's ids),
 *  2. builds the mount view (mounts.c), goes back into the cwd (a new mount sits on it),
 *  3. builds the Landlock ruleset from the final view,
 *  4. forks the command (pid 2, same session and process group, so it has the terminal and
 *     ^C reaches it; the init ignores the terminal's signals, being the namespace's init),
 *     which drops every capability, sets no_new_privs, restricts itself with Landlock and
 *     loads seccomp last, then returns to spawn, which execs it (an exec failure still
 *     reaches the daemon through spawn's error pipe: the init closes its copy of it);
 *  5. then waits: TERM and HUP are passed on to the command; when the command exits, or
 *     when SPAWN_SUPERVISOR_KILL arrives (terminate, timeout, the daemon's death), it
 *     kills everything left in the namespace, removes its placeholders and exits with the
 *     command's status (its exit code, or 128+N after signal N; 137 when killed).
 * SBX_MODE_SECCOMP (full disk write, network off) is just step 4's no_new_privs and seccomp
 * in the spawned child itself.
 */
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sandbox_int.h"
#include "protocol/xmalloc.h"

const char *const init_step_names[] = {
	[SBX_STEP_USERNS] = "user namespace",
	[SBX_STEP_MOUNTS] = "mounts",
	[SBX_STEP_DEV] = "/dev",
	[SBX_STEP_PROC] = "/proc",
	[SBX_STEP_PROTECT] = "protected paths",
	[SBX_STEP_CWD] = "cwd",
	[SBX_STEP_INIT] = "init",
	[SBX_STEP_CAPS] = "capabilities",
	[SBX_STEP_NNP] = "no_new_privs",
	[SBX_STEP_LANDLOCK] = "landlock",
	[SBX_STEP_SECCOMP] = "seccomp",
	[SBX_STEP_COUNT] = NULL,
};

/* The message of a failure that names an operation (a writable root that changed). */
char *
init_cause(void *arg, int step, int err)
{
	const struct sandbox *sb = arg;
	const struct sbx_op *op;

	if (step < SBX_STEP_OP || (size_t)(step - SBX_STEP_OP) >= sb->nops)
		return NULL;
	op = &sb->ops[step - SBX_STEP_OP];
	if (op->kind == SBX_OP_PROTECT)
		return xasprintf("sandbox setup failed: protected path %s changed during setup: "
				 "%s; refusing to run",
			op->path,
			err == ESTALE		? "it was replaced"
				: err == ENOENT ? "it was removed"
				: err == EBUSY	? "it kept changing"
						: strerror(err));
	if (err == ESTALE)
		return xasprintf("sandbox setup failed: writable root %s changed during setup: it "
				 "was replaced",
			op->root);
	return xasprintf("sandbox setup failed: writable root %s changed during setup: %s (os "
			 "error %d)",
		op->root, strerror(err), err);
}

/* Seconds the init waits for the namespace to die before it gives up and exits. */
#define SBX_TEARDOWN_SECONDS 5

/* The init's exit code, for the teardown alarm. */
static volatile int init_code;

/* The teardown took too long (a process stuck in the kernel): leave. */
static void
init_alarm_cb(int sig)
{
	_exit(init_code);
}

/* Write text to a /proc file; 0 or errno. */
static int
init_write(const char *path, const char *text)
{
	size_t len = strlen(text);
	ssize_t n;
	int fd, err = 0;

	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return errno;
	n = write(fd, text, len);
	if (n != (ssize_t)len)
		err = n == -1 ? errno : EIO;
	close(fd);
	return err;
}

/* The command's own steps, last before execve: capabilities, nnp, Landlock, seccomp. */
static int
init_restrict(struct sandbox *sb)
{
	int err;

	/* No cgroup can cap it: the user namespace's process count does (not for uid 0). */
	if (sb->nproc > 0) {
		struct rlimit rl = {sb->nproc, sb->nproc};

		if (setrlimit(RLIMIT_NPROC, &rl) == -1)
			return SBX_ERR(SBX_STEP_CAPS, errno);
	}
	if (sb->mode == SBX_MODE_NS) {
		if (sb->fault == SBX_STEP_CAPS)
			return SBX_ERR(SBX_STEP_CAPS, EPERM);
		if ((err = caps_drop(sb->cap_last)) != 0)
			return SBX_ERR(SBX_STEP_CAPS, err);
	}
	if (sb->fault == SBX_STEP_NNP)
		return SBX_ERR(SBX_STEP_NNP, EPERM);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return SBX_ERR(SBX_STEP_NNP, errno);
	if (sb->mode == SBX_MODE_NS && (err = landlock_restrict(sb)) != 0)
		return SBX_ERR(SBX_STEP_LANDLOCK, err);
	if (sb->fault == SBX_STEP_SECCOMP)
		return SBX_ERR(SBX_STEP_SECCOMP, EPERM);
	if ((err = filter_load(sb->filter)) != 0)
		return SBX_ERR(SBX_STEP_SECCOMP, err);
	return 0;
}

/* Close every fd of the init but the placeholders' (locks, parent directories). */
static void
init_close_others(struct sandbox *sb)
{
	unsigned keep[2 * SBX_MAX_OPS + 2], n = 0, i, j, t, from = 0;
	struct sbx_op *op;

	for (i = 0; i < sb->nops && n + 4 < sizeof keep / sizeof keep[0]; i++) {
		op = &sb->ops[i];
		if (op->pdir >= 0)
			keep[n++] = (unsigned)op->pdir;
		if (op->lock >= 0)
			keep[n++] = (unsigned)op->lock;
	}
	if (sb->guard >= 0)
		keep[n++] = (unsigned)sb->guard;
	if (sb->errfd >= 0)
		keep[n++] = (unsigned)sb->errfd;
	for (i = 1; i < n; i++) /* insertion sort: a handful of fds */
		for (j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			t = keep[j];
			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		if (keep[i] > from)
			close_range(from, keep[i] - 1, 0);
		from = keep[i] + 1;
	}
	close_range(from, ~0U, 0);
}

/* The init's life after the fork: wait, pass signals on, tear down, exit. */
static void __attribute__((noreturn)) init_run(struct sandbox *sb, const sigset_t *set)
{
	struct sigaction sa;
	sigset_t alrm;
	int sig, status, code = 128 + SIGKILL;
	pid_t pid;

	init_close_others(sb);
	for (;;) {
		if ((sig = sigwaitinfo(set, NULL)) == -1)
			continue; /* EINTR */
		if (sig == SPAWN_SUPERVISOR_KILL)
			break;
		if (sig == SIGIO) {
			if (sb->guard >= 0 && guard_breached(sb, sb->guard, 0))
				break; /* a protected path lost its cover: fail closed, now */
			continue;
		}
		if (sig != SIGCHLD) {
			kill(sb->cmd, sig);
			continue;
		}
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			if (pid != sb->cmd)
				continue;
			code = WIFEXITED(status)      ? WEXITSTATUS(status)
				: WIFSIGNALED(status) ? 128 + WTERMSIG(status)
						      : 1;
			/* Uncovered before the SIGIO was seen: still not a success. */
			if (sb->guard >= 0 && guard_breached(sb, sb->guard, 1))
				code = 128 + SIGKILL;
			goto teardown;
		}
	}
teardown:
	init_code = code;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = init_alarm_cb;
	sigaction(SIGALRM, &sa, NULL);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &alrm, NULL);
	alarm(SBX_TEARDOWN_SECONDS);
	kill(-1, SIGKILL); /* everything in the namespace but us */
	while (waitpid(-1, &status, 0) != -1 || errno == EINTR)
		;
	mounts_protect_cleanup(sb);
	_exit(code);
}

/* The init's steps before the fork; 0 or an SBX_ERR. */
static int
init_setup(struct sandbox *sb)
{
	int err;

	if (sb->fault == SBX_STEP_USERNS)
		return SBX_ERR(SBX_STEP_USERNS, EPERM);
	if ((err = init_write("/proc/self/setgroups", "deny")) != 0 ||
		(err = init_write("/proc/self/uid_map", sb->uid_map)) != 0 ||
		(err = init_write("/proc/self/gid_map", sb->gid_map)) != 0)
		return SBX_ERR(SBX_STEP_USERNS, err);
	/* The daemon's death (or its thread's) tears the sandbox down like terminate. */
	if (prctl(PR_SET_PDEATHSIG, SPAWN_SUPERVISOR_KILL, 0, 0, 0) == -1)
		return SBX_ERR(SBX_STEP_INIT, errno);
	if ((err = mounts_view(sb)) != 0)
		return err;
	if (sb->fault == SBX_STEP_CWD)
		return SBX_ERR(SBX_STEP_CWD, EPERM);
	if (chdir(sb->cwd) == -1)
		return SBX_ERR(SBX_STEP_CWD, errno);
	if (sb->fault == SBX_STEP_LANDLOCK)
		return SBX_ERR(SBX_STEP_LANDLOCK, EPERM);
	if ((err = landlock_build(sb)) != 0)
		return SBX_ERR(SBX_STEP_LANDLOCK, err);
	return 0;
}

/* spawn's child hook: set the sandbox up, fork the command under the init; 0 or an SBX_ERR. */
int
init_child_hook(void *arg)
{
	struct sandbox *sb = arg;
	sigset_t set, none, pending;
	pid_t pid;
	int err;

	if (sb->mode == SBX_MODE_SECCOMP)
		return init_restrict(sb);
	if ((err = init_setup(sb)) != 0)
		goto fail;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SPAWN_SUPERVISOR_KILL);
	sigaddset(&set, SIGIO);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (sb->pause_ms > 0) {
		struct timespec ts = {sb->pause_ms / 1000, (long)(sb->pause_ms % 1000) * 1000000};

		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	}
	/* Watched since the plan (guard_open); armed, then looked at: nothing falls between. */
	if ((err = guard_arm(sb)) != 0) {
		err = SBX_ERR(SBX_STEP_PROTECT, err);
		goto fail;
	}
	if ((err = guard_verify(sb)) != 0)
		goto fail;
	sb->errfd = fcntl(2, F_DUPFD_CLOEXEC, 3);
	/* Torn down during the setup (terminate, the daemon's exit): the command never starts. */
	if (sigpending(&pending) == 0 && sigismember(&pending, SPAWN_SUPERVISOR_KILL)) {
		mounts_protect_cleanup(sb);
		_exit(128 + SIGKILL);
	}
	if (sb->fault == SBX_STEP_INIT)
		pid = -1, errno = EPERM;
	else
		pid = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, 0);
	if (pid == -1) {
		err = SBX_ERR(SBX_STEP_INIT, errno);
		goto fail;
	}
	if (pid == 0) {
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		return init_restrict(sb); /* the command: spawn execs it next */
	}
	sb->cmd = pid;
	init_run(sb, &set);
fail:
	mounts_protect_cleanup(sb);
	return err;
}
