/*
 * Spawn a child on pipes or a PTY.
 *
 * Ordering rules (libuv process.c, tmux job.c, bubblewrap):
 *  - Everything that allocates or can fail for a reason worth a message
 *    happens in the parent: the PATH lookup (envp's PATH, not ours), /dev/null,
 *    the pipes, the PTY with an explicit termios and size, the error pipe.
 *    Every fd the parent creates is O_CLOEXEC from birth and kept above 2, so
 *    the child's dup2 onto 0, 1 and 2 can never clobber one of its sources.
 *  - All signals are blocked across fork(), so no handler of the daemon (libev
 *    writes to its wakeup fd) runs in the child; the parent's mask is restored
 *    right after.
 *  - Between fork and execve the child makes async-signal-safe calls only (no
 *    malloc, no stdio): libcurl's resolver threads may hold locks. In order:
 *    signal dispositions to SIG_DFL and an empty mask; setsid; PDEATHSIG with
 *    a getppid() re-check; TIOCSCTTY for a PTY; dup2 stdio; every other fd
 *    close-on-exec; chdir; the child hook (the sandbox, seccomp last); execve.
 *  - A failure in the child is written as {stage, errno} to a close-on-exec
 *    pipe followed by _exit(127). The parent reads that pipe to EOF (exec
 *    succeeded) or a report, and then reaps that one pid itself: the daemon's
 *    libev loop cannot run during spawn_start. With SPAWN_NOWAIT the parent
 *    returns at once and keeps the pipe in the handle (spawn_exec_seen): the
 *    child's setup then runs beside the loop, and a failure is its exit 127.
 *  - PR_SET_PDEATHSIG fires when the forking *thread* exits: call spawn_start
 *    from the main thread only.
 *  - With clone_flags the child comes from a raw clone(2) (as bubblewrap does):
 *    glibc's fork() is not needed because the child never allocates, and a
 *    child in a new PID namespace cannot see its parent, so it checks that the
 *    parent still holds the error pipe open instead of calling getppid().
 *  - Kill state lives in the handle (struct spawn_proc): a supervised child is asked to
 *    tear down instead of being killed, and a reaped pid is never signalled again; with
 *    SPAWN_CGROUP the child joins its cgroup before anything else, so spawn_kill and
 *    spawn_release reach descendants that left the session. A cgroup removed under us
 *    (cgroup_renew) fails the join with ENODEV: the spawn is tried once more in a new one.
 *    Where no pids controller caps it, the child sets RLIMIT_NPROC right after (the
 *    parent sized it, cgroup_nproc_limit), before it can start anything.
 *  - SPAWN_NETNS: network namespaces belong to threads, so the calling thread
 *    enters netns_fd right before the fork and goes back to its own right after,
 *    with every signal blocked; nothing else runs on this thread meanwhile.
 */
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "sandbox/cgroup/cgroup.h"
#include "spawn.h"
#include "spawn_int.h"
#include "protocol/xmalloc.h"

/* PATH when envp has none, as glibc's execvp uses. */
#define SPAWN_DEFAULT_PATH "/bin:/usr/bin"
static rlim_t spawn_nofile = RLIM_INFINITY; /* spawn_set_nofile's, for every child */

void
spawn_set_nofile(rlim_t soft)
{
	spawn_nofile = soft;
}

/* Ceiling of the per-fd fallback when close_range() is unavailable. */
#define SPAWN_MAX_FD_SCAN 65536

static const char *spawn_stage_names[] = {
	[SPAWN_STAGE_CGROUP] = "cgroup",
	[SPAWN_STAGE_NPROC] = "process cap",
	[SPAWN_STAGE_SIGNALS] = "signal reset",
	[SPAWN_STAGE_SETSID] = "setsid",
	[SPAWN_STAGE_PDEATHSIG] = "parent-death signal",
	[SPAWN_STAGE_CTTY] = "controlling terminal",
	[SPAWN_STAGE_STDIO] = "stdio redirection",
	[SPAWN_STAGE_FDS] = "closing descriptors",
	[SPAWN_STAGE_CHDIR] = "chdir",
	[SPAWN_STAGE_SANDBOX] = "sandbox",
	[SPAWN_STAGE_EXEC] = "exec",
};

/* Close *fd if open and mark it closed. */
void
spawn_close(int *fd)
{
	if (*fd != -1) {
		close(*fd);
		*fd = -1;
	}
}

/* Move a new close-on-exec fd above stdio if it landed on 0, 1 or 2; 0 or -errno. */
int
spawn_fd_high(int *fd)
{
	int nfd;

	if (*fd > 2)
		return 0;
	if ((nfd = fcntl(*fd, F_DUPFD_CLOEXEC, 3)) == -1)
		return -errno;
	close(*fd);
	*fd = nfd;
	return 0;
}

/* Set O_NONBLOCK on an fd the parent keeps; 0 or -errno. */
int
spawn_set_nonblock(int fd)
{
	int fl;

	if ((fl = fcntl(fd, F_GETFL)) == -1 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) == -1)
		return -errno;
	return 0;
}

/* Create a close-on-exec pipe with both ends above stdio; 0 or -errno. */
static int
spawn_pipe(int fds[2])
{
	int r;

	if (pipe2(fds, O_CLOEXEC) == -1)
		return -errno;
	if ((r = spawn_fd_high(&fds[0])) != 0 || (r = spawn_fd_high(&fds[1])) != 0) {
		spawn_close(&fds[0]);
		spawn_close(&fds[1]);
		return r;
	}
	return 0;
}

/* The value of PATH in envp (the first one, as getenv sees it), or the default. */
static const char *
spawn_env_path(char *const *envp)
{
	for (; envp != NULL && *envp != NULL; envp++) {
		if (strncmp(*envp, "PATH=", 5) == 0)
			return *envp + 5;
	}
	return SPAWN_DEFAULT_PATH;
}

/*
 * Resolve name as execvp would, but against envp's PATH and with relative
 * entries taken from cwd: the first regular executable file wins; if none,
 * -EACCES when some candidate existed but could not be run, else -ENOENT.
 */
static int
spawn_find_path(const char *name, char *const *envp, const char *cwd, char **pathp)
{
	const char *dir, *end;
	char *cand;
	struct stat sb;
	int len, r = -ENOENT;

	*pathp = NULL;
	if (*name == '\0')
		return -ENOENT;
	if (strchr(name, '/') != NULL) {
		*pathp = xstrdup(name); /* execve reports its errors after chdir */
		return 0;
	}
	for (dir = spawn_env_path(envp);; dir = end + 1) {
		end = strchrnul(dir, ':');
		len = (int)(end - dir);
		if (len == 0)
			cand = cwd != NULL ? xasprintf("%s/%s", cwd, name)
					   : xasprintf("./%s", name);
		else if (*dir != '/' && cwd != NULL)
			cand = xasprintf("%s/%.*s/%s", cwd, len, dir, name);
		else
			cand = xasprintf("%.*s/%s", len, dir, name);
		if (access(cand, X_OK) == 0) {
			if (stat(cand, &sb) == 0 && S_ISREG(sb.st_mode)) {
				*pathp = cand;
				return 0;
			}
			r = -EACCES; /* a directory, like execve */
		} else if (errno == EACCES)
			r = -EACCES;
		free(cand);
		if (*end == '\0')
			break;
	}
	return r;
}

/* Read up to len bytes until EOF, retrying EINTR; bytes read or -errno. */
static ssize_t
spawn_read_full(int fd, void *buf, size_t len)
{
	size_t off = 0;
	ssize_t n;

	while (off < len) {
		n = read(fd, (char *)buf + off, len - off);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -errno;
		if (n == 0)
			break;
		off += (size_t)n;
	}
	return (ssize_t)off;
}

/* Reap pid, retrying EINTR. */
static void
spawn_reap(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
}

/* The message for a failure at stage (a parent-side failure is SPAWN_STAGE_EXEC). */
static char *
spawn_cause(int stage, int err, int step, const struct spawn_opts *o)
{
	const char *cwd = o->cwd;
	size_t n = 0;

	char *custom;

	if (stage == SPAWN_STAGE_SANDBOX && step >= 0 && o->hook_cause != NULL &&
		(custom = o->hook_cause(o->child_hook_arg, step, err)) != NULL)
		return custom;
	while (o->hook_steps != NULL && o->hook_steps[n] != NULL)
		n++;
	if (stage == SPAWN_STAGE_SANDBOX && step >= 0 && (size_t)step < n)
		return xasprintf("sandbox setup failed: %s: %s (os error %d)", o->hook_steps[step],
			strerror(err), err);
	switch (stage) {
	case SPAWN_STAGE_EXEC:
		return xasprintf("failed to spawn command: %s (os error %d)", strerror(err), err);
	case SPAWN_STAGE_CHDIR:
		return xasprintf("failed to spawn command: cannot change directory to '%s': %s "
				 "(os error %d)",
			cwd, strerror(err), err);
	case SPAWN_STAGE_SANDBOX:
		return xasprintf("failed to spawn command: sandbox setup failed: %s (os error %d)",
			strerror(err), err);
	default:
		return xasprintf("failed to spawn command: %s failed: %s (os error %d)",
			spawn_stage_names[stage], strerror(err), err);
	}
}

/* The calling thread's own network namespace, opened once; -1 when unavailable. */
static int
spawn_home_netns(void)
{
	static int fd = -2;

	if (fd == -2)
		fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	return fd;
}

/* fork(), or a raw clone(2) into new namespaces, or clone3 into the v2 cgroup into (>= 0). */
static pid_t
spawn_fork(unsigned long clone_flags, int into)
{
	if (into >= 0)
		return cgroup_clone_into(clone_flags, into);
	if (clone_flags == 0)
		return fork();
	/* No new stack: the child continues on a copy of ours, like fork(). */
	return (pid_t)syscall(SYS_clone, clone_flags | SIGCHLD, NULL, NULL, NULL, 0);
}

/* The fds of one spawn, the child's ends and ours; -1 when absent. */
struct spawn_fds {
	int in[2], out[2], err[2], rp[2];
	int master, slave, devnull;
};

/* Close every fd still open. */
static void
spawn_fds_close(struct spawn_fds *f)
{
	for (int i = 0; i < 2; i++) {
		spawn_close(&f->in[i]);
		spawn_close(&f->out[i]);
		spawn_close(&f->err[i]);
		spawn_close(&f->rp[i]);
	}
	spawn_close(&f->master);
	spawn_close(&f->slave);
	spawn_close(&f->devnull);
}

/* Open the child's stdio (a PTY, pipes, /dev/null) and the error pipe; 0 or -errno. */
static int
spawn_fds_open(const struct spawn_opts *o, struct spawn_fds *f)
{
	int r;

	if (o->flags & SPAWN_PTY) {
		if ((r = spawn_pty_open(o->rows, o->cols, &f->master, &f->slave)) != 0)
			return r;
	} else if (!(o->flags & SPAWN_INHERIT)) {
		if (o->flags & SPAWN_STDIN_PIPE) {
			if ((r = spawn_pipe(f->in)) != 0 || (r = spawn_set_nonblock(f->in[1])) != 0)
				return r;
		} else {
			if ((f->devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
				return -errno;
			if ((r = spawn_fd_high(&f->devnull)) != 0)
				return r;
		}
		if ((r = spawn_pipe(f->out)) != 0 || (r = spawn_set_nonblock(f->out[0])) != 0)
			return r;
		if ((r = spawn_pipe(f->err)) != 0 || (r = spawn_set_nonblock(f->err[0])) != 0)
			return r;
	}
	return spawn_pipe(f->rp);
}

/* Everything the child needs, prepared in the parent. */
static void
spawn_child_fill(struct spawn_child *c, const struct spawn_opts *o, const struct spawn_fds *f,
	const char *path, const struct cgroup *cg)
{
	static char *const no_env[] = {NULL};
	struct rlimit rl;

	memset(c, 0, sizeof *c);
	c->path = path;
	c->argv = o->argv;
	c->envp = o->envp != NULL ? o->envp : no_env;
	c->cwd = o->cwd;
	c->slave = f->slave;
	if (f->slave != -1)
		c->stdio[0] = c->stdio[1] = c->stdio[2] = f->slave;
	else if (o->flags & SPAWN_INHERIT) {
		c->stdio[0] = 0;
		c->stdio[1] = 1;
		c->stdio[2] = 2;
	} else {
		c->stdio[0] = f->in[0] != -1 ? f->in[0] : f->devnull;
		c->stdio[1] = f->out[1];
		c->stdio[2] = f->err[1];
	}
	c->report = f->rp[1];
	c->nofile = spawn_nofile;
	c->maxfd = SPAWN_MAX_FD_SCAN;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < SPAWN_MAX_FD_SCAN)
		c->maxfd = (int)rl.rlim_cur;
	c->hook = o->child_hook;
	c->hook_arg = o->child_hook_arg;
	c->hook_steps = o->hook_steps != NULL;
	c->pidns = (o->clone_flags & CLONE_NEWPID) != 0;
	c->into = -1;
	c->ncg = cg != NULL ? cgroup_join_fds(cg, o->max_pids, &c->into, c->cgfd) : 0;
	c->parent = getpid();
}

/* Fork (or clone) the child, from the sandbox's network namespace if asked; 0 or -errno. */
static int
spawn_launch(const struct spawn_opts *o, const struct spawn_child *c, pid_t *pidp)
{
	sigset_t all, old;
	pid_t pid;
	int r;

	if ((o->flags & SPAWN_NETNS) && spawn_home_netns() == -1)
		return -errno;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if ((o->flags & SPAWN_NETNS) && setns(o->netns_fd, CLONE_NEWNET) == -1) {
		r = -errno;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return r;
	}
	pid = spawn_fork(o->clone_flags, c->into);
	if (pid == 0)
		spawn_child(c);
	r = pid == -1 ? -errno : 0;
	if ((o->flags & SPAWN_NETNS) && setns(spawn_home_netns(), CLONE_NEWNET) == -1)
		abort(); /* stuck in the sandbox's empty namespace: nothing sane is left to do */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	*pidp = pid;
	return r;
}

/* The child's ends of its pipes, closed in the parent once it is started. */
static void
spawn_close_child_ends(struct spawn_fds *f)
{
	spawn_close(&f->slave);
	spawn_close(&f->in[0]);
	spawn_close(&f->out[1]);
	spawn_close(&f->err[1]);
	spawn_close(&f->devnull);
	spawn_close(&f->rp[1]);
}

/*
 * Wait for the child's exec through the error pipe (the child's ends closed first, so EOF
 * means execve succeeded); 0, or -errno with the stage and step, the child then reaped.
 */
static int
spawn_wait_exec(struct spawn_fds *f, pid_t pid, int *stage, int *step)
{
	struct spawn_report rep;
	ssize_t n;
	int r;

	spawn_close_child_ends(f);
	if ((n = spawn_read_full(f->rp[0], &rep, sizeof rep)) == 0)
		return 0;
	if (n == (ssize_t)sizeof rep && rep.err > 0 && rep.stage >= 0 &&
		rep.stage <= SPAWN_STAGE_EXEC) {
		*stage = rep.stage;
		*step = rep.step;
		r = -rep.err;
	} else {
		kill(pid, SIGKILL); /* cannot tell what happened: do not leave it running */
		r = n < 0 ? (int)n : -EIO;
	}
	spawn_reap(pid);
	return r;
}

/* The fuzz targets' stand-in for starting a process (spawn.h); NULL in the daemon. */
int (*spawn_fake)(const struct spawn_opts *o, struct spawn_proc *p, char **cause);

/* One try at starting the child: 0 with p filled, or -errno with the failure's stage and step. */
static int
spawn_try(const struct spawn_opts *o, const char *path, struct spawn_proc *p, int *stage, int *step)
{
	struct spawn_fds f = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, -1, -1, -1};
	struct cgroup *cg = NULL;
	struct spawn_child c;
	pid_t pid = -1;
	int r;

	if ((r = spawn_fds_open(o, &f)) != 0)
		goto out;
	/* No cgroups on this machine: the command runs without (docs/sandbox.md, fallbacks). */
	if ((o->flags & SPAWN_CGROUP) && (r = cgroup_new(o->max_pids, &cg)) != 0) {
		if (cgroup_support()->kill || cgroup_support()->pids) {
			*stage = SPAWN_STAGE_CGROUP;
			goto out;
		}
		r = 0;
	}
	spawn_child_fill(&c, o, &f, path, cg);
	/* No pids controller caps it: RLIMIT_NPROC does (docs/sandbox.md; not for root). */
	if ((o->flags & SPAWN_CGROUP) && o->max_pids > 0 && !cgroup_support()->pids)
		c.has_nproc = cgroup_nproc_limit(o->max_pids, &c.nproc) == 0;
	r = spawn_launch(o, &c, &pid);
	if (r != 0 && c.into >= 0 && (r == -ENODEV || r == -ENOENT))
		*stage = SPAWN_STAGE_CGROUP; /* its cgroup was removed under us: renewed, retried */
	if (r != 0)
		goto out;
	if (o->flags & SPAWN_NOWAIT) {
		/* The error pipe stays open: a child in a new PID namespace checks it for us. */
		spawn_close_child_ends(&f);
		fcntl(f.rp[0], F_SETFL, O_NONBLOCK);
		p->report_fd = f.rp[0];
		f.rp[0] = -1; /* transferred */
		p->state |= SPAWN_P_STARTING;
	} else if ((r = spawn_wait_exec(&f, pid, stage, step)) != 0)
		goto out;
	if (o->flags & SPAWN_SUPERVISED)
		p->state |= SPAWN_P_SUPERVISED;
	p->cg = cg;
	cg = NULL; /* transferred */
	p->pid = pid;
	spawn_live_add(pid);
	p->in_fd = f.in[1];
	p->out_fd = f.out[0];
	p->err_fd = f.err[0];
	p->pty_fd = f.master;
	f.in[1] = f.out[0] = f.err[0] = f.master = -1; /* transferred */
out:
	spawn_fds_close(&f);
	cgroup_free(cg);
	return r;
}

/* Start o->argv on pipes or a PTY; 0, or -errno with a message in *cause. */
int
spawn_start(const struct spawn_opts *o, struct spawn_proc *p, char **cause)
{
	int stage = SPAWN_STAGE_EXEC, step = -1, r;
	char *path = NULL;

	memset(p, 0, sizeof *p);
	p->pid = -1;
	p->in_fd = p->out_fd = p->err_fd = p->pty_fd = p->linger_fd = p->report_fd = -1;
	if (spawn_fake != NULL)
		return spawn_fake(o, p, cause);
	if (o->argv == NULL || o->argv[0] == NULL || (o->cwd != NULL && o->cwd[0] != '/')) {
		r = -EINVAL;
		goto out;
	}
	if ((r = spawn_find_path(o->argv[0], o->envp, o->cwd, &path)) != 0)
		goto out;
	r = spawn_try(o, path, p, &stage, &step);
	/* Our cgroup was removed under us (cgroup.h): made again, and tried once more. */
	if (r != 0 && stage == SPAWN_STAGE_CGROUP && (r == -ENODEV || r == -ENOENT)) {
		cgroup_renew();
		stage = SPAWN_STAGE_EXEC;
		step = -1;
		r = spawn_try(o, path, p, &stage, &step);
	}
out:
	if (r != 0 && cause != NULL)
		*cause = spawn_cause(stage, -r, step, o);
	free(path);
	return r;
}

/* The caller reaped the child: its pid is never signalled again. */
void
spawn_reaped(struct spawn_proc *p)
{
	p->state |= SPAWN_P_REAPED;
	spawn_live_del(p->pid);
}

int
spawn_exec_seen(struct spawn_proc *p, double wait)
{
	struct pollfd pfd;
	char rep[sizeof(struct spawn_report)];
	ssize_t n;

	if (!(p->state & SPAWN_P_STARTING))
		return 1;
	pfd = (struct pollfd){.fd = p->report_fd, .events = POLLIN};
	while ((n = poll(&pfd, 1, wait > 0 ? (int)(wait * 1000) : 0)) == -1 && errno == EINTR)
		;
	if (n <= 0)
		return 0;
	/* EOF: every copy of the write end closed at an exec; bytes: a failure's report */
	while ((n = read(p->report_fd, rep, sizeof rep)) == -1 && errno == EINTR)
		;
	if (n == -1 && errno == EAGAIN)
		return 0;
	spawn_close(&p->report_fd);
	p->state &= ~(unsigned)SPAWN_P_STARTING;
	return n == 0 ? 1 : -1;
}

void
spawn_release(struct spawn_proc *p)
{
	if (!(p->state & SPAWN_P_REAPED))
		spawn_live_del(p->pid); /* abandoned, killed: nobody's command any more */
	if (p->state & SPAWN_P_STARTING) {
		spawn_close(&p->report_fd);
		p->state &= ~(unsigned)SPAWN_P_STARTING;
	}
	cgroup_free(p->cg); /* kills what is left first */
	p->cg = NULL;
	if (p->linger_fd >= 0)
		spawn_close_later(p->linger_fd);
	p->linger_fd = -1;
}

static void *
spawn_closer(void *arg)
{
	close((int)(intptr_t)arg);
	return NULL;
}

void
spawn_close_later(int fd)
{
	pthread_attr_t a;
	pthread_t t;

	if (fd < 0)
		return;
	if (pthread_attr_init(&a) != 0) {
		close(fd);
		return;
	}
	if (pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED) != 0 ||
		pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN + 16384) != 0 ||
		pthread_create(&t, &a, spawn_closer, (void *)(intptr_t)fd) != 0)
		close(fd); /* no thread: the slow close, but closed */
	pthread_attr_destroy(&a);
}

/* Close every fd of p still open and set it to -1. */
void
spawn_proc_close(struct spawn_proc *p)
{
	if (p == NULL)
		return;
	spawn_close(&p->in_fd);
	spawn_close(&p->out_fd);
	spawn_close(&p->err_fd);
	spawn_close(&p->pty_fd);
}
