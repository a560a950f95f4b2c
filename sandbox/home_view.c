/*
 * CODEX_HOME as a sandbox sees it (docs/sandbox.md, "Secrets and state files"): a read-only
 * tmpfs holding read-only binds of the directory's entries, except the secrets and the
 * daemon's state files (home_view_hidden). Built by the init, in place of the plain
 * read-only bind every other protected path gets (mounts.c), with async-signal-safe calls
 * only.
 *
 * Why a directory of its own rather than masks on the files: a mount needs a dentry, so a
 * file that does not exist yet (auth.json before a login, the index's -wal, -shm and
 * -journal, which SQLite makes and removes as it opens and closes) could not be masked, and
 * a mask on a file the host later replaces (an atomic rewrite, a rename) is detached by the
 * kernel, showing the new file. In a tmpfs of our own those names never exist, whatever
 * happens on the host. The price: entries added at the top of CODEX_HOME while the command
 * runs are not shown, and a top-level file replaced on the host keeps its old content in the
 * view (directories such as sessions/ are live binds).
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "sandbox_int.h"

#define HOME_VIEW_MAX 128 /* entries bound; more are left out (hidden, never shown) */

/* What getdents64 fills in. */
struct home_view_dirent {
	unsigned long long ino;
	long long off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* Whether a CODEX_HOME entry is a secret or a state file of the daemon. */
int
home_view_hidden(const char *name)
{
	/* server/config: the login file; server/thread/index: the index and its companions. */
	static const char auth[] = "auth.json", index[] = "app-server-threads.sqlite";

	return strcmp(name, auth) == 0 || strncmp(name, index, sizeof index - 1) == 0;
}

/* Make the entry name of dir (of this type) in the view m; 1 when it needs a bind. */
static int
home_view_entry(int dir, int m, const char *name, unsigned char type, int *err)
{
	char link[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	*err = 0;
	if (type == DT_UNKNOWN) {
		if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			return 0; /* gone meanwhile */
		type = S_ISDIR(st.st_mode)    ? DT_DIR
			: S_ISREG(st.st_mode) ? DT_REG
			: S_ISLNK(st.st_mode) ? DT_LNK
					      : DT_UNKNOWN;
	}
	switch (type) {
	case DT_LNK:
		/* The link's text, not a bind: it resolves in the view like any other. */
		if ((n = readlinkat(dir, name, link, sizeof link - 1)) <= 0)
			return 0;
		link[n] = '\0';
		if (symlinkat(link, m, name) == -1)
			*err = errno;
		return 0;
	case DT_DIR:
		if (mkdirat(m, name, 0755) == -1)
			*err = errno;
		return *err == 0;
	case DT_REG:
		if ((fd = openat(m, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0444)) == -1)
			*err = errno;
		else
			close(fd);
		return *err == 0;
	default:
		return 0; /* sockets, fifos, devices: not shown */
	}
}

/*
 * Cover CODEX_HOME (sfd, an O_PATH fd of it in the view) with the view; its root's identity
 * in *st for the guard. 0 or errno.
 */
int
home_view_mount(int sfd, struct stat *st)
{
	char buf[4096] __attribute__((aligned(8)));
	char names[HOME_VIEW_MAX][NAME_MAX + 1];
	int clones[HOME_VIEW_MAX], n = 0, dir, m, err = 0, i;
	struct home_view_dirent *d;
	long got;

	if ((dir = openat(sfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return errno;
	if ((m = mounts_tmpfs("0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) < 0) {
		close(dir);
		return -m;
	}
	/* Clone every entry shown before the view covers them. */
	while (err == 0 && (got = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
		for (long off = 0; off < got && err == 0; off += d->reclen) {
			d = (struct home_view_dirent *)(buf + off);
			if (strcmp(d->name, ".") == 0 || strcmp(d->name, "..") == 0 ||
				home_view_hidden(d->name) || n == HOME_VIEW_MAX ||
				strlen(d->name) > NAME_MAX)
				continue;
			if (!home_view_entry(dir, m, d->name, d->type, &err))
				continue;
			clones[n] = open_tree(dir, d->name,
				OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
					AT_SYMLINK_NOFOLLOW);
			if (clones[n] == -1) {
				err = errno == ENOENT ? 0 : errno; /* ENOENT: removed meanwhile */
				if (err == 0)
					(void)unlinkat(
						m, d->name, d->type == DT_DIR ? AT_REMOVEDIR : 0);
				continue;
			}
			err = mounts_setattr(clones[n], "", 1,
				MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0);
			memcpy(names[n], d->name, strlen(d->name) + 1);
			n++;
		}
	}
	if (err == 0 && got < 0)
		err = errno;
	if (err == 0)
		err = mounts_move(m, sfd, "");
	for (i = 0; i < n; i++) {
		if (err == 0)
			err = mounts_move(clones[i], m, names[i]);
		close(clones[i]);
	}
	if (err == 0)
		err = mounts_setattr(m, "", 0, MOUNT_ATTR_RDONLY, 0);
	if (err == 0 && fstat(m, st) == -1)
		err = errno;
	close(m);
	close(dir);
	return err;
}
