/*
 * The fallback process cap where no cgroup can cap a command (cgroup.h: cgroup_nproc_limit):
 * RLIMIT_NPROC set to what the real uid runs now plus the cap, counted from /proc.
 */
#include <sys/resource.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"

#define CGROUP_PF_EXITING 0x4 /* the kernel's task flag, field 9 of /proc/<pid>/stat */

/* A task's state and parent from /proc/<pid>/stat; 0, or -1 when gone or unreadable. */
static int
cgroup_task_stat(const char *pid, char *state, int *ppid, unsigned long *flags)
{
	char path[300], buf[1024];
	const char *s;
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%s/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* After the command name (which may hold anything): state ppid pgrp sid tty tpgid flags. */
	if ((s = strrchr(buf, ')')) == NULL ||
		sscanf(s + 1, " %c %d %*d %*d %*d %*d %lu", state, ppid, flags) != 3)
		return -1;
	return 0;
}

/* Whether pid is self or descends from it (a few generations up: our commands' trees). */
static int
cgroup_ours(int pid, pid_t self)
{
	char name[24], state;
	unsigned long flags;

	for (int i = 0; i < 8 && pid > 1; i++) {
		if (pid == (int)self)
			return 1;
		snprintf(name, sizeof name, "%d", pid);
		if (cgroup_task_stat(name, &state, &pid, &flags) != 0)
			return 0;
	}
	return 0;
}

/*
 * Whether a task is on its way out and will stop counting soon: a task of our own commands'
 * trees (we, a sandbox's init or the command reap it) with SIGKILL pending (from its
 * /proc/<pid>/status text), already in exit, or a zombie. Anyone else's task counts until its
 * parent reaps it, which may be late or never: an init that reaps slowly or not at all (a
 * container's, a `runuser` as a PID namespace's pid 1) kept the killed trees of an earlier
 * daemon counted by the kernel for seconds or for good, and a command given a cap that left
 * them out could not fork at all.
 */
static int
cgroup_task_dying(const char *pid, const char *status, pid_t self)
{
	static const char *const masks[] = {"\nSigPnd:", "\nShdPnd:"};
	unsigned long long m;
	unsigned long flags;
	const char *s;
	int ppid, dying = 0;
	char state;

	if (cgroup_task_stat(pid, &state, &ppid, &flags) != 0)
		return 1; /* gone meanwhile */
	for (size_t i = 0; i < 2; i++)
		if ((s = strstr(status, masks[i])) != NULL && sscanf(s + 8, "%llx", &m) == 1 &&
			(m & (1ULL << (SIGKILL - 1))) != 0)
			dying = 1;
	if (state == 'Z' || state == 'X' || (flags & CGROUP_PF_EXITING) != 0)
		dying = 1;
	return dying && cgroup_ours(ppid, self);
}

/*
 * The fallback cap. RLIMIT_NPROC is checked against every task (thread) of the real uid, here
 * and in the user namespaces it made, not against the command's own: so the limit is what the
 * uid runs now plus max_pids. Counted from /proc (only where no cgroup caps, a few ms for a
 * thousand processes); what is miscounted only makes the cap tighter: tasks of the uid this
 * /proc does not show (another PID namespace, hidepid), our own long-lived threads.
 */
int
cgroup_nproc_limit(unsigned max_pids, struct rlimit *rl)
{
	char path[300], buf[4096], *s;
	unsigned long long tasks = 0, threads, limit;
	unsigned long owner;
	struct dirent *e;
	struct rlimit cur;
	uid_t uid = getuid();
	pid_t self = getpid();
	ssize_t n;
	DIR *d;
	int fd;

	if (uid == 0)
		return -EPERM;
	if (getrlimit(RLIMIT_NPROC, &cur) == -1 || (d = opendir("/proc")) == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue; /* gone meanwhile, or hidden */
		n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/*
		 * "Uid:" lists the real uid first, the one the kernel counts. Tasks about to go are
		 * left out (the killed tree of a command that just ended): counted, they would
		 * widen this command's headroom for its whole life once gone, and each command
		 * after a fork bomb would get more than the last.
		 */
		if ((s = strstr(buf, "\nUid:")) == NULL || sscanf(s + 5, "%lu", &owner) != 1 ||
			owner != (unsigned long)uid || cgroup_task_dying(e->d_name, buf, self))
			continue;
		/* Ourself as one task: our short-lived threads (a closer) would widen the cap. */
		if ((s = strstr(buf, "\nThreads:")) == NULL ||
			sscanf(s + 9, "%llu", &threads) != 1 ||
			strtol(e->d_name, NULL, 10) == (long)self)
			threads = 1;
		tasks += threads;
	}
	closedir(d);
	limit = tasks + max_pids;
	if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < limit)
		limit = cur.rlim_max; /* tighter already: kept */
	rl->rlim_cur = rl->rlim_max = (rlim_t)limit;
	return 0;
}
