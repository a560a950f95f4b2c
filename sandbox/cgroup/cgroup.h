/*
 * A cgroup per command: the whole tree of a command can be killed at once, whatever its
 * processes did (setsid, double fork), and its number of processes is capped (pids.max), so a
 * fork bomb cannot take the machine. Two hierarchies may be in use together: the unified one
 * (cgroup v2) for cgroup.kill, and wherever the pids controller is (v2, or a v1 hierarchy
 * beside it) for the limit. When the daemon cannot create cgroups, cgroup_new says so and
 * spawn falls back (docs/sandbox.md, "Process limits and lifetimes").
 *
 * Each daemon keeps its cgroups under "app-server-<pid>" in its own cgroup of each hierarchy,
 * a directory it holds an flock on for its life; empty ones are reused. At start, what the
 * daemons that died left there (survivors of a kill -9 among them) is killed and removed;
 * a directory whose lock is held is a live daemon's, whatever PID namespace it runs in.
 */
#ifndef CGROUP_H
#define CGROUP_H

#include <sys/resource.h>
#include <sys/types.h>

struct cgroup;

/* What this machine offers, probed once. */
struct cgroup_support {
	int kill;  /* a v2 cgroup can be made here: cgroup.kill ends a whole tree */
	int pids;  /* a pids controller can cap a command: 2 (v2) or 1 (v1), 0 none */
	int into;  /* a child can be created in its v2 cgroup (clone3's CLONE_INTO_CGROUP) */
	int error; /* why not, when neither works: an errno */
};

/* Probe (once) and describe what can be used. */
const struct cgroup_support *cgroup_support(void);
/* Whether cgroup_support() ran yet (no command has asked for a cgroup before it does). */
int cgroup_probed(void);
/*
 * A cgroup for one command capped at max_pids processes (0: no cap): 0 with *out, or
 * -errno when the machine gives none (cgroup_support() says so) or making one failed.
 */
int cgroup_new(unsigned max_pids, struct cgroup **out);
/*
 * The process cap where no pids controller of ours holds one (docs/sandbox.md): the
 * RLIMIT_NPROC a command gets so that it can start max_pids tasks at most. 0 with *rl, or
 * -errno (-EPERM as root, which the kernel exempts from RLIMIT_NPROC: no cap that way).
 */
int cgroup_nproc_limit(unsigned max_pids, struct rlimit *rl);
/*
 * How a child started with max_pids joins cg: *into, the v2 directory to create it in
 * (cgroup_clone_into), else -1; fds, the cgroup.procs it writes "0" to first (before it forks
 * anything); returns how many (<= 2).
 */
int cgroup_join_fds(const struct cgroup *cg, unsigned max_pids, int *into, int fds[2]);
/*
 * clone3 with clone_flags (namespaces, or 0), the child created in the v2 cgroup dir_fd and
 * going on on a copy of our stack, as after fork(): 0 in the child, its pid, or -1 (errno).
 */
pid_t cgroup_clone_into(unsigned long clone_flags, int dir_fd);
/* SIGKILL every process in it; 0 or -errno. */
int cgroup_kill(struct cgroup *cg);
/* Whether it holds no process any more. */
int cgroup_empty(const struct cgroup *cg);
/* Kill what is left and give it back (kept for reuse once empty). Accepts NULL. */
void cgroup_free(struct cgroup *cg);
/* At exit: remove this daemon's cgroups (those still busy are left). */
void cgroup_cleanup(void);
/*
 * A cgroup of ours was removed under us (a join failed with ENODEV, a mkdir with ENOENT):
 * drop the pooled ones and make our directory again where it vanished. The caller retries
 * once.
 */
void cgroup_renew(void);

#endif
