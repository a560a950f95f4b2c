/* What spawn.c shares with spawn_pty.c and spawn_child.c. */
#ifndef SPAWN_INT_H
#define SPAWN_INT_H

#include <sys/resource.h>
#include <sys/types.h>

/* Where the child failed; the order matches the child's steps. */
enum spawn_stage {
	SPAWN_STAGE_CGROUP,
	SPAWN_STAGE_NPROC,
	SPAWN_STAGE_SIGNALS,
	SPAWN_STAGE_SETSID,
	SPAWN_STAGE_PDEATHSIG,
	SPAWN_STAGE_CTTY,
	SPAWN_STAGE_STDIO,
	SPAWN_STAGE_FDS,
	SPAWN_STAGE_CHDIR,
	SPAWN_STAGE_SANDBOX,
	SPAWN_STAGE_EXEC,
};

/* What a failing child writes to the error pipe: 12 bytes, one atomic write. */
struct spawn_report {
	int stage;
	int err;
	int step; /* the hook's step, or -1 */
};

/* Everything the child needs, prepared by the parent before fork. */
struct spawn_child {
	const char *path;
	char *const *argv;
	char *const *envp;
	const char *cwd;
	int stdio[3]; /* sources for fds 0, 1 and 2, all above 2 */
	int slave;    /* PTY slave or -1 */
	int report;   /* write end of the error pipe */
	pid_t parent;
	int maxfd;     /* highest fd the close_range() fallback marks */
	rlim_t nofile; /* the soft fd limit to give the command, or RLIM_INFINITY: as it is */
	int (*hook)(void *);
	void *hook_arg;
	int hook_steps; /* the hook's errors carry a step */
	int pidns;	/* the child is in a new PID namespace */
	int cgfd[2];	/* cgroup.procs to join first (SPAWN_CGROUP) */
	int ncg;
	int into;	     /* parent side: the v2 cgroup to clone the child into, or -1 */
	struct rlimit nproc; /* the process cap when no cgroup holds one (has_nproc) */
	int has_nproc;
};

/* In the child: set up and exec; async-signal-safe calls only (spawn_child.c). */
void spawn_child(const struct spawn_child *c) __attribute__((noreturn));

/* Open a PTY pair, both close-on-exec and above stdio, with our termios and size; 0 or -errno. */
int spawn_pty_open(unsigned short rows, unsigned short cols, int *masterp, int *slavep);
/* Move a new close-on-exec fd above stdio if it landed on 0, 1 or 2; 0 or -errno. */
int spawn_fd_high(int *fd);
/* Set O_NONBLOCK on an fd the parent keeps; 0 or -errno. */
int spawn_set_nonblock(int fd);
/* Close *fd if open and mark it closed. */
void spawn_close(int *fd);

#endif
