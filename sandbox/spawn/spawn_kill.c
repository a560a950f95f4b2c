/*
 * Ending a spawned tree. Kill state lives in the handle (libuv's UV_HANDLE_ESRCH): a supervised
 * child (the sandbox's init) is asked to tear down instead of being killed, and a reaped pid,
 * or its group id, is never signalled again; its cgroup still can be. Without cgroups, the
 * daemon (a subreaper) kills adopted orphans when no command should be left.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sandbox/cgroup/cgroup.h"
#include "protocol/xmalloc.h"
#include "spawn.h"

/* Signal the child's group (and cgroup); see spawn.h. 0 or -errno. */
int
spawn_kill(struct spawn_proc *p, int sig)
{
	int r = -ESRCH;

	/* Never kill(0), kill(-1) or kill(1): those reach our own group, everything, init. */
	if (p->pid <= 1)
		return -EINVAL;
	/*
	 * A supervisor still setting up (SPAWN_NOWAIT) keeps SPAWN_SUPERVISOR_KILL blocked until
	 * its setup is done (spawn_child.c), then tears down: nobody waits for it here.
	 */
	if (!(p->state & SPAWN_P_REAPED)) {
		if (sig == SIGKILL && (p->state & SPAWN_P_SUPERVISED))
			return kill(p->pid, SPAWN_SUPERVISOR_KILL) == 0 ? 0 : -errno;
		if (kill(-p->pid, sig) == 0 || kill(p->pid, sig) == 0)
			r = 0;
		else
			r = -errno;
	}
	if (sig == SIGKILL && p->cg != NULL && !cgroup_empty(p->cg) && cgroup_kill(p->cg) == 0)
		r = 0;
	return r;
}

/* The children of this process, from /proc/self/task/<tid>/children; how many fit in out. */
static size_t
spawn_kill_children(pid_t *out, size_t max)
{
	char path[300], buf[4096], *s, *end;
	struct dirent *e;
	size_t n = 0;
	ssize_t len;
	long pid;
	DIR *d;
	int fd;

	if ((d = opendir("/proc/self/task")) == NULL)
		return 0;
	while ((e = readdir(d)) != NULL && n < max) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/children", e->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		len = read(fd, buf, sizeof buf - 1);
		close(fd);
		buf[len > 0 ? len : 0] = '\0';
		for (s = buf; n < max && (pid = strtol(s, &end, 10)) > 0; s = end)
			out[n++] = (pid_t)pid;
	}
	closedir(d);
	return n;
}

/*
 * The children spawn_start made that nobody reaped or released yet, daemon-wide (every
 * connection's commands, turns' tools, snapshots, MCP servers, hooks): without cgroups, a
 * child of ours outside this list is an adopted orphan.
 */
static pid_t *spawn_live;
static size_t spawn_nlive, spawn_live_cap;

void
spawn_live_add(pid_t pid)
{
	if (spawn_nlive == spawn_live_cap) {
		spawn_live_cap = spawn_live_cap ? 2 * spawn_live_cap : 64;
		spawn_live = xrealloc(spawn_live, spawn_live_cap * sizeof *spawn_live);
	}
	spawn_live[spawn_nlive++] = pid;
}

void
spawn_live_del(pid_t pid)
{
	for (size_t i = 0; i < spawn_nlive; i++)
		if (spawn_live[i] == pid) {
			spawn_live[i] = spawn_live[--spawn_nlive];
			break;
		}
	if (spawn_nlive == 0) {
		free(spawn_live);
		spawn_live = NULL;
		spawn_live_cap = 0;
	}
}

size_t
spawn_live_count(void)
{
	return spawn_nlive;
}

int
spawn_kill_orphans(const pid_t *keep, size_t n)
{
	pid_t kids[512];
	size_t k = spawn_kill_children(kids, nitems(kids)), i, j;
	int killed = 0;

	for (i = 0; i < k; i++) {
		for (j = 0; j < n && keep[j] != kids[i]; j++)
			;
		if (j == n && kill(kids[i], SIGKILL) == 0)
			killed++;
	}
	return killed;
}
