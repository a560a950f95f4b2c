/*
 * The child's side of a spawn (spawn.c has the rules): between fork and execve, async-signal-safe
 * calls only, every failure reported as {stage, errno, step} on the error pipe.
 */
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "spawn.h"
#include "spawn_int.h"

static void spawn_child_fail(int, int, int, int) __attribute__((noreturn));

/*
 * In the child: whether the parent is gone, seen from the error pipe: the
 * parent holds its read end until the child execs, so POLLERR on our write end
 * means it died (before PDEATHSIG was armed).
 */
static int
spawn_parent_gone(int report)
{
	struct pollfd pfd = {.fd = report, .events = POLLOUT};

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR) != 0;
}

/* In the child: report {stage, err, step} to the parent and exit. */
static void
spawn_child_fail(int fd, int stage, int err, int step)
{
	struct spawn_report rep = {stage, err, step};

	while (write(fd, &rep, sizeof rep) == -1 && errno == EINTR)
		;
	_exit(127);
}

/* In the child: set up and exec; async-signal-safe calls only. */
void
spawn_child(const struct spawn_child *c)
{
	/* The kernel's struct sigaction; all zero is SIG_DFL, no flags, empty mask. */
	struct {
		unsigned long handler, flags, restorer, mask;
	} dfl = {0};
	sigset_t empty;
	int sig, fd, err, i;

	/* First of all, so that nothing the child starts is ever outside its cgroup. */
	for (i = 0; i < c->ncg; i++)
		if (write(c->cgfd[i], "0", 1) != 1)
			spawn_child_fail(c->report, SPAWN_STAGE_CGROUP, errno, -1);
	if (c->has_nproc && setrlimit(RLIMIT_NPROC, &c->nproc) == -1)
		spawn_child_fail(c->report, SPAWN_STAGE_NPROC, errno, -1);
	for (sig = 1; sig < NSIG; sig++) {
		/*
		 * Ignored signals stay ignored across execve. The raw syscall, because glibc's
		 * sigaction refuses its internal signals (32, 33), which a parent may have ignored.
		 */
		if (sig != SIGKILL && sig != SIGSTOP)
			syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof dfl.mask);
	}
	sigemptyset(&empty);
	/*
	 * A supervisor (a PID namespace's init) drops the signals it has no handler for, so
	 * SPAWN_SUPERVISOR_KILL, the daemon's death included, stays blocked (pending) from here
	 * through its setup: a teardown asked for meanwhile happens once the setup is done.
	 */
	if (c->pidns)
		sigaddset(&empty, SPAWN_SUPERVISOR_KILL);
	if (sigprocmask(SIG_SETMASK, &empty, NULL) == -1)
		spawn_child_fail(c->report, SPAWN_STAGE_SIGNALS, errno, -1);

	if (setsid() == -1)
		spawn_child_fail(c->report, SPAWN_STAGE_SETSID, errno, -1);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		spawn_child_fail(c->report, SPAWN_STAGE_PDEATHSIG, errno, -1);
	if (!c->pidns && getppid() != c->parent)
		_exit(127); /* the parent died before PDEATHSIG was armed */
	if (c->pidns && spawn_parent_gone(c->report))
		_exit(127);
	if (c->slave != -1 && ioctl(c->slave, TIOCSCTTY, 0) == -1)
		spawn_child_fail(c->report, SPAWN_STAGE_CTTY, errno, -1);

	for (fd = 0; fd < 3; fd++) {
		if (c->stdio[fd] == fd) {
			/* Inherited as it is: make sure it survives execve. */
			if (fcntl(fd, F_SETFD, 0) == -1)
				spawn_child_fail(c->report, SPAWN_STAGE_STDIO, errno, -1);
		} else if (dup2(c->stdio[fd], fd) == -1)
			spawn_child_fail(c->report, SPAWN_STAGE_STDIO, errno, -1);
	}
	/* Everything above stdio closes at exec; the error pipe stays usable until then. */
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == -1) {
		for (fd = 3; fd <= c->maxfd; fd++)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	}

	if (c->nofile != RLIM_INFINITY) {
		struct rlimit rl;

		/* Back to the limit the daemon was given (only fds 0-2 and the report pipe). */
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && c->nofile < rl.rlim_cur) {
			rl.rlim_cur = c->nofile;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	if (c->cwd != NULL && chdir(c->cwd) == -1)
		spawn_child_fail(c->report, SPAWN_STAGE_CHDIR, errno, -1);
	if (c->hook != NULL && (err = c->hook(c->hook_arg)) != 0) {
		if (err < 0)
			err = -err;
		if (c->hook_steps)
			spawn_child_fail(c->report, SPAWN_STAGE_SANDBOX, err & 0xffff, err >> 16);
		spawn_child_fail(c->report, SPAWN_STAGE_SANDBOX, err, -1);
	}

	execve(c->path, c->argv, c->envp);
	spawn_child_fail(c->report, SPAWN_STAGE_EXEC, errno, -1);
}
