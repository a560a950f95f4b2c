/*
 * Process spawning for command/exec: pipes or a PTY, a session of its own,
 * exec failures reported synchronously (or, with SPAWN_NOWAIT, not waited for).
 * Pure POSIX: the caller (server/exec.c) watches the fds and reaps the pid with libev.
 */
#ifndef SPAWN_H
#define SPAWN_H

#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#define SPAWN_PTY	 0x1 /* child on a new PTY: stdin, stdout and stderr are the slave */
#define SPAWN_STDIN_PIPE 0x2 /* a pipe to the child's stdin, else /dev/null (ignored with PTY) */
#define SPAWN_INHERIT	 0x4 /* the child's stdio are our fds 0, 1 and 2 (a CLI, not the daemon) */
/*
 * The child is a supervisor (the sandbox's init) that tears its tree down itself:
 * spawn_kill(p, SIGKILL) sends it SPAWN_SUPERVISOR_KILL instead, so it can kill
 * everything below it, clean up and exit 128+SIGKILL.
 */
#define SPAWN_SUPERVISED      0x8
#define SPAWN_SUPERVISOR_KILL SIGUSR1
/*
 * The child starts in the network namespace netns_fd: the calling thread enters it just
 * around the fork and returns to its own right after (the child of a clone with
 * CLONE_NEWUSER could not enter a namespace owned by ours any more).
 */
#define SPAWN_NETNS 0x10
/*
 * The child and every descendant in a cgroup of their own (cgroup.h), capped at max_pids
 * processes: spawn_kill reaches even those that left the session, and spawn_release kills
 * what is left when the command is over. Without cgroups on this machine: see spawn_start.
 */
#define SPAWN_CGROUP 0x20
/*
 * Return once the child is started, without waiting for its execve: the sandbox's setup in
 * the child (its cgroup join, mounts, Landlock: 5-50 ms) then never holds the caller's event
 * loop. For a caller that needs no failure message: a child that fails before execve exits
 * 127 and says nothing more. The handle keeps the error pipe (SPAWN_P_STARTING) until the exec
 * is seen (spawn_exec_seen) or the command is over. A supervisor asked to tear down during
 * its setup does so once the setup is done (the request waits, blocked, in the child).
 */
#define SPAWN_NOWAIT 0x40

#define SPAWN_DEFAULT_ROWS 24
#define SPAWN_DEFAULT_COLS 80

struct spawn_opts {
	char *const *argv;	   /* argv[0] without '/' is looked up in envp's PATH (not ours) */
	char *const *envp;	   /* the child's full environment; NULL means empty */
	const char *cwd;	   /* absolute; NULL inherits the daemon's */
	const char *policy_cwd;	   /* a sandbox's writable roots derive from this; NULL: cwd */
	unsigned flags;		   /* SPAWN_* */
	unsigned short rows, cols; /* PTY size; 0 means 24x80 */
	/*
	 * Runs in the child after stdio, setsid and chdir, right before execve.
	 * Must be async-signal-safe. Returns 0 or a positive errno, reported
	 * like an exec failure with the stage "sandbox". With hook_steps, the
	 * value is SPAWN_HOOK_ERR(step, errno) and the message names the step.
	 */
	int (*child_hook)(void *arg);
	void *child_hook_arg;
	const char *const *hook_steps; /* names of the hook's steps, or NULL */
	/* The message of a step hook_steps does not name (heap), or NULL for the default. */
	char *(*hook_cause)(void *arg, int step, int err);
	/*
	 * Namespaces for the child (CLONE_NEW*): it is then created with a raw
	 * clone(2) instead of fork(). With CLONE_NEWPID it is pid 1 there and
	 * getppid() says 0, so the parent-death re-check uses the error pipe.
	 */
	unsigned long clone_flags;
	int netns_fd;	   /* with SPAWN_NETNS */
	unsigned max_pids; /* with SPAWN_CGROUP: processes at most, 0 for no cap */
};

/* A child hook's failure: which step (index into hook_steps) and the errno. */
#define SPAWN_HOOK_ERR(step, err) (((step) << 16) | ((err)&0xffff))

/* What the handle knows of its process (libuv's UV_HANDLE_ESRCH): never signal a reaped pid. */
#define SPAWN_P_SUPERVISED 0x1 /* the child is a supervisor (SPAWN_SUPERVISED) */
#define SPAWN_P_REAPED	   0x2 /* the caller reaped it (spawn_reaped) */
#define SPAWN_P_STARTING   0x4 /* SPAWN_NOWAIT: its exec not seen yet; report_fd is open */

struct cgroup;

/* Every fd is O_CLOEXEC and O_NONBLOCK, owned by the caller; -1 when absent. */
struct spawn_proc {
	pid_t pid;	   /* session and process group leader; -1 before start */
	int in_fd;	   /* write end of the stdin pipe (SPAWN_STDIN_PIPE without PTY) */
	int out_fd;	   /* read end of the stdout pipe (no PTY) */
	int err_fd;	   /* read end of the stderr pipe (no PTY) */
	int pty_fd;	   /* PTY master, read and written through this one fd */
	unsigned state;	   /* SPAWN_P_* */
	struct cgroup *cg; /* SPAWN_CGROUP, when the machine has cgroups; NULL otherwise */
	int linger_fd;	   /* kept until the command is over, then spawn_close_later; -1 */
	int report_fd;	   /* with SPAWN_P_STARTING: the error pipe, EOF once the child exec'd */
};
/*
 * On a PTY master, read() gives -1/EIO (not 0) once every slave fd is closed.
 * That can come before the child has exited (cat closes its stdin and then
 * runs atexit handlers), and closing the master hangs the session up: the
 * kernel sends SIGHUP to the child. So close pty_fd after the child has been
 * reaped (or deliberately, to hang it up), never as soon as EIO is seen.
 */

/*
 * Start o->argv. Returns 0 with *p filled in, or -errno with a heap message
 * in *cause ("failed to spawn command: <strerror> (os error N)"); on failure
 * nothing is left open and any forked child has been reaped.
 */
int spawn_start(const struct spawn_opts *o, struct spawn_proc *p, char **cause);
/*
 * The soft fd limit every child gets (the daemon raised its own): set once at start-up, before
 * any spawn. Unset, children inherit the daemon's.
 */
void spawn_set_nofile(rlim_t soft);
/*
 * Test seam, for the libFuzzer targets only (tests/fuzz/fuzz_rpc.c): when set, spawn_start
 * calls it instead of starting o->argv, with the same contract (fill p, or fail with *cause).
 * The daemon never sets it, so it is always NULL there.
 */
extern int (*spawn_fake)(const struct spawn_opts *o, struct spawn_proc *p, char **cause);
/* Set the window size of a PTY master (the kernel sends SIGWINCH); 0 or -errno. */
int spawn_pty_resize(int pty_fd, unsigned short rows, unsigned short cols);
/*
 * Signal the child's process group (or the child alone if that fails); SIGKILL also reaches
 * its cgroup. SIGKILL to a supervised child becomes SPAWN_SUPERVISOR_KILL to it alone. Once
 * reaped, only the cgroup is signalled (the pid and group id may be reused); 0 or -errno
 * (-ESRCH: nothing left to signal).
 */
int spawn_kill(struct spawn_proc *p, int sig);
/* The caller reaped the child: its pid is never signalled again. */
void spawn_reaped(struct spawn_proc *p);
/*
 * SPAWN_NOWAIT: whether the child has exec'd (1), failed before (-1: it exits 127) or is still
 * setting up (0, only when wait is 0); with wait > 0, up to that many seconds for the answer,
 * then 0. Without SPAWN_P_STARTING: 1.
 */
int spawn_exec_seen(struct spawn_proc *p, double wait);
/*
 * The command is over: kill what is left of its tree (its cgroup), free the cgroup, and
 * close linger_fd later.
 */
void spawn_release(struct spawn_proc *p);
/*
 * Close fd on a short-lived thread: the last close of an inotify instance with watches waits
 * for an SRCU grace period (8-10 ms), too long for the event loop.
 */
void spawn_close_later(int fd);
/*
 * Without cgroups: SIGKILL every child of this process (adopted orphans, as a subreaper)
 * whose pid is not in keep[0..n); the number killed. For when no command should be left.
 */
int spawn_kill_orphans(const pid_t *keep, size_t n);
/* The children spawn_start made that are neither reaped nor released, daemon-wide. */
size_t spawn_live_count(void);
void spawn_live_add(pid_t pid);
void spawn_live_del(pid_t pid);
/* Close every fd of p still open and set it to -1 (the pid is left alone). */
void spawn_proc_close(struct spawn_proc *p);

#endif
