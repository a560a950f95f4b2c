/*
 * Whose "app-server-<pid>" directory is whose (cgroup_int.h). A pid says nothing across PID
 * namespaces: a daemon in a container and one outside it, under the same cgroup parent, see
 * each other's pids as gone (or as someone else). So the owner holds an flock on its
 * directory for its whole life, which the kernel drops when it dies however it dies, and
 * which every namespace sees on the same inode. Rules:
 *  - Claim: mkdir, open, flock, then check the path still names the locked inode (a sweeper
 *    may have removed it in between), then make the CGROUP_MARKER child. A name locked by
 *    someone else is a live daemon with our pid number in another namespace: take the next
 *    name ("app-server-<pid>.<k>"). A directory that existed is a dead owner's: its
 *    processes are killed first.
 *  - Sweep: a directory whose lock we can take has a dead owner, unless it has no marker:
 *    then it is an older daemon's, which locks nothing, and only a pid gone from our own
 *    namespace may retire it (never a pid alone when there is a lock to ask), and only its
 *    empty cgroups, as older daemons did: a guess never kills. A dead locking owner's processes
 *    (the survivors of a kill -9: setsid'd descendants of unsandboxed commands) are killed
 *    with cgroup.kill (v1: signalled by pid) and the directories removed; those still dying
 *    are removed later by cgroup_owner_retry, so nobody waits for the kernel.
 *  - The marker also keeps an older daemon's sweep (which removes "c*" children, then the
 *    directory) from ever removing a live directory of ours.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_int.h"
#include "protocol/xmalloc.h"

#define OWNER_NAMES  16 /* names tried when ours is a live daemon's of another namespace */
#define OWNER_RACES  4	/* claims retried when a sweeper removes the directory meanwhile */
#define OWNER_STALE  16 /* swept directories waiting for their processes to die */
#define OWNER_ROUNDS 64 /* rounds of a v1 kill by pid */
#define OWNER_PREFIX "app-server-"

static char *owner_stale[OWNER_STALE];

/* Remove a daemon's directory and its cgroups; 0, or -errno (-EBUSY while processes remain). */
static int
owner_rmdir_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *child;

	if (d == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		child = xasprintf("%s/%s", dir, e->d_name);
		(void)rmdir(child);
		free(child);
	}
	closedir(d);
	return rmdir(dir) == 0 || errno == ENOENT ? 0 : -errno;
}

/* Kill every process under a daemon's directory: cgroup.kill, or each child's list (v1). */
static void
owner_kill_tree(const char *dir)
{
	DIR *d;
	struct dirent *e;
	char *child;

	if (cgroup_write(dir, "cgroup.kill", "1") == 0 || (d = opendir(dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		child = xasprintf("%s/%s", dir, e->d_name);
		(void)cgroup_kill_listed(child);
		free(child);
	}
	closedir(d);
}

/* Kill and remove a dead owner's directory, or keep it for a later try while busy. */
static void
owner_bury(const char *dir)
{
	int i;

	owner_kill_tree(dir);
	if (owner_rmdir_tree(dir) != -EBUSY)
		return;
	for (i = 0; i < OWNER_STALE && owner_stale[i] != NULL; i++)
		if (strcmp(owner_stale[i], dir) == 0)
			return;
	if (i < OWNER_STALE)
		owner_stale[i] = xstrdup(dir); /* else the next daemon's sweep finds it */
}

/* The pid in a directory name "app-server-<pid>[.<k>]", or 0. */
static long
owner_pid(const char *name)
{
	char *end;
	long pid;

	if (strncmp(name, OWNER_PREFIX, strlen(OWNER_PREFIX)) != 0)
		return 0;
	pid = strtol(name + strlen(OWNER_PREFIX), &end, 10);
	return pid > 0 && (*end == '\0' || *end == '.') ? pid : 0;
}

/*
 * Whether the owner of an open directory is gone (the caller then holds its lock): 1 for a
 * locking owner that let go, 2 for an older daemon's directory whose pid is gone from our
 * namespace (only a guess: it may live in another one), 0 for alive.
 */
static int
owner_dead(int fd, long pid)
{
	if (flock(fd, LOCK_EX | LOCK_NB) != 0)
		return 0; /* held: alive, in whatever namespace */
	if (faccessat(fd, CGROUP_MARKER, F_OK, 0) == 0)
		return 1; /* a locking owner let go: it died */
	/* An older daemon locks nothing: only its pid can tell, and only in our namespace. */
	return kill((pid_t)pid, 0) == -1 && errno == ESRCH ? 2 : 0;
}

void
cgroup_owner_sweep(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *e;
	char *dir;
	long pid;
	int fd;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if ((pid = owner_pid(e->d_name)) == 0)
			continue;
		dir = xasprintf("%s/%s", parent, e->d_name);
		if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
			switch (owner_dead(fd, pid)) {
			case 1:
				owner_bury(dir); /* under its lock: no claim can race us */
				break;
			case 2:
				/*
				 * An older daemon's, its pid gone from our namespace: it may
				 * still live in another one, so nothing is killed on a guess;
				 * empty cgroups are removed, as that daemon's own sweep did.
				 */
				(void)owner_rmdir_tree(dir);
				break;
			}
			close(fd);
		}
		free(dir);
	}
	closedir(d);
}

void
cgroup_owner_retry(void)
{
	for (int i = 0; i < OWNER_STALE; i++) {
		if (owner_stale[i] != NULL && owner_rmdir_tree(owner_stale[i]) != -EBUSY) {
			free(owner_stale[i]);
			owner_stale[i] = NULL;
		}
	}
}

/* Whether path still names the directory open as fd. */
static int
owner_same(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
		a.st_dev == b.st_dev;
}

/* Try one name: 0 with the lock, -EBUSY (a live owner), -EAGAIN (removed meanwhile), -errno. */
static int
owner_try(struct cgroup_base *b, const char *path)
{
	int existed = 0, fd, r;

	if (mkdir(path, 0755) == -1) {
		if (errno != EEXIST)
			return -errno;
		existed = 1;
	}
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return errno == ENOENT ? -EAGAIN : -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		r = errno == EWOULDBLOCK ? -EBUSY : -errno;
		close(fd);
		return r;
	}
	if (!owner_same(fd, path)) {
		close(fd);
		return -EAGAIN;
	}
	/* A dead daemon's with our pid number: what it left runs no more. */
	if (existed)
		owner_kill_tree(path);
	if (mkdirat(fd, CGROUP_MARKER, 0755) == -1 && errno != EEXIST) {
		r = -errno;
		close(fd);
		return r;
	}
	b->lock_fd = fd;
	b->path = xstrdup(path);
	return 0;
}

int
cgroup_owner_claim(struct cgroup_base *b)
{
	int r = -EBUSY, k, race;
	char *path;

	b->path = NULL;
	b->lock_fd = -1;
	for (k = 0; k < OWNER_NAMES && r == -EBUSY; k++) {
		if (k == 0)
			path = xasprintf("%s/" OWNER_PREFIX "%d", b->parent, (int)getpid());
		else
			path = xasprintf("%s/" OWNER_PREFIX "%d.%d", b->parent, (int)getpid(), k);
		for (race = 0; race < OWNER_RACES; race++)
			if ((r = owner_try(b, path)) != -EAGAIN)
				break;
		free(path);
	}
	return r;
}

int
cgroup_owner_lost(const struct cgroup_base *b)
{
	return b->path != NULL && !owner_same(b->lock_fd, b->path);
}

void
cgroup_owner_release(struct cgroup_base *b, int remove)
{
	char *marker;

	if (b->path != NULL && remove) {
		marker = xasprintf("%s/" CGROUP_MARKER, b->path);
		(void)rmdir(marker);
		(void)rmdir(b->path);
		free(marker);
	}
	if (b->lock_fd >= 0)
		close(b->lock_fd);
	b->lock_fd = -1;
	free(b->path);
	b->path = NULL;
}
