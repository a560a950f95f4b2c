/*
 * Leftovers of a crashed commit (apply_patch_commit.c names its files ".apply_patch-<pid>-<n>.tmp"
 * and ".bak" beside their targets): removed from a directory when the next patch writes there,
 * on the worker, before staging. A leftover is removed only when all of these hold, so that a
 * commit in flight is never touched:
 *   - its name is exactly ours, and it is not a directory (unlinkat without AT_REMOVEDIR; a
 *     symlink is removed itself, never followed);
 *   - the pid in its name is not this process (a concurrent commit here) and no process has it
 *     (kill(pid, 0) fails with ESRCH);
 *   - its inode changed at least APPLY_PATCH_STALE_SECS ago (ctime: creating the .tmp, linking
 *     or renaming the .bak set it), for a daemon in another pid namespace writing the same
 *     folder, whose pid we cannot see.
 * Bounded: at most AP_SWEEP_MAX_ENTRIES directory entries are looked at per directory and
 * patch. Best effort: a failure only leaves the file where it is.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apply_patch_int.h"

#define AP_SWEEP_MAX_ENTRIES 100000
#define AP_SWEEP_PREFIX	     ".apply_patch-"

static long ap_stale_secs = APPLY_PATCH_STALE_SECS;

void
ap_sweep_set_stale_secs(long secs)
{
	ap_stale_secs = secs;
}

/* ".apply_patch-<pid>-<n>.tmp|bak": the pid, or -1 when the name is not one of ours. */
static long
ap_sweep_pid(const char *name)
{
	const char *p = name + strlen(AP_SWEEP_PREFIX), *n;
	size_t digits;
	long pid = 0;

	if (strncmp(name, AP_SWEEP_PREFIX, strlen(AP_SWEEP_PREFIX)) != 0)
		return -1;
	digits = strspn(p, "0123456789");
	if (digits == 0 || digits > 9 || p[digits] != '-')
		return -1;
	for (size_t i = 0; i < digits; i++)
		pid = pid * 10 + (p[i] - '0');
	n = p + digits + 1;
	digits = strspn(n, "0123456789");
	if (digits == 0 || (strcmp(n + digits, ".tmp") != 0 && strcmp(n + digits, ".bak") != 0))
		return -1;
	return pid > 0 ? pid : -1;
}

/* Whether the entry is a leftover nobody can still be using. */
static int
ap_sweep_stale(int dfd, const char *name, long pid, time_t now)
{
	struct stat st;

	if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return 0;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode))
		return 0;
	return now - st.st_ctim.tv_sec >= ap_stale_secs;
}

int
ap_sweep(int dfd)
{
	time_t now = time(NULL);
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), removed = 0;
	size_t seen = 0;
	struct dirent *e;
	DIR *d;

	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (seen++ < AP_SWEEP_MAX_ENTRIES && (e = readdir(d)) != NULL) {
		long pid = ap_sweep_pid(e->d_name);

		if (pid > 0 && ap_sweep_stale(dfd, e->d_name, pid, now) &&
			unlinkat(dfd, e->d_name, 0) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}
