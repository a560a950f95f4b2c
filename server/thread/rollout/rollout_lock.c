/*
 * The active-writer lock (rollout_lock.h). Order: the pid byte first, then the mutex, so a
 * writer that finds the mutex taken always finds the holder's pid byte too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rollout_lock.h"
#include "protocol/xmalloc.h"

/* One OFD lock operation on [start, start + len). */
static int
rollout_lock_op(int fd, int cmd, short type, off_t start, off_t len, struct flock *out)
{
	struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};

	if (fcntl(fd, cmd, &fl) != 0)
		return -errno;
	if (out != NULL)
		*out = fl;
	return 0;
}

/* Who holds the pid bytes of fd's file (0: nobody, or a holder of another kind). */
static pid_t
rollout_lock_probe(int fd)
{
	struct flock fl = {0};

	if (rollout_lock_op(fd, F_OFD_GETLK, F_WRLCK, ROLLOUT_LOCK_BASE, ROLLOUT_LOCK_PIDS, &fl) !=
			0 ||
		fl.l_type == F_UNLCK)
		return 0;
	return (pid_t)(fl.l_start - ROLLOUT_LOCK_BASE);
}

int
rollout_lock(int fd, pid_t *holder)
{
	off_t mine = ROLLOUT_LOCK_BASE + getpid();
	int r;

	*holder = 0;
	if ((r = rollout_lock_op(fd, F_OFD_SETLK, F_WRLCK, mine, 1, NULL)) != 0)
		return r == -EAGAIN || r == -EACCES ? -EBUSY : r;
	r = rollout_lock_op(fd, F_OFD_SETLK, F_WRLCK, ROLLOUT_LOCK_BASE - 1, 1, NULL);
	if (r == 0)
		return 0;
	rollout_lock_op(fd, F_OFD_SETLK, F_UNLCK, mine, 1, NULL);
	if (r != -EAGAIN && r != -EACCES)
		return r;
	*holder = rollout_lock_probe(fd);
	return -EBUSY;
}

void
rollout_unlock(int fd)
{
	rollout_lock_op(fd, F_OFD_SETLK, F_UNLCK, ROLLOUT_LOCK_BASE - 1, 1, NULL);
	rollout_lock_op(fd, F_OFD_SETLK, F_UNLCK, ROLLOUT_LOCK_BASE + getpid(), 1, NULL);
}

pid_t
rollout_lock_holder(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct flock fl = {0};
	pid_t pid = 0;

	if (fd < 0)
		return -errno;
	/* A read lock would be refused by the mutex: someone writes. */
	if (rollout_lock_op(fd, F_OFD_GETLK, F_RDLCK, ROLLOUT_LOCK_BASE - 1, 1, &fl) == 0 &&
		fl.l_type != F_UNLCK)
		pid = rollout_lock_probe(fd);
	close(fd);
	return pid;
}

char *
rollout_lock_who(pid_t pid)
{
	char path[64], name[64] = "";
	FILE *f;

	if (pid <= 0)
		return xstrdup("another process");
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	if ((f = fopen(path, "re")) != NULL) {
		if (fgets(name, sizeof name, f) != NULL)
			name[strcspn(name, "\n")] = '\0';
		fclose(f);
	}
	return name[0] != '\0' ? xasprintf("process %d (%s)", (int)pid, name)
			       : xasprintf("process %d", (int)pid);
}
