/*
 * The sandbox's file system view, built by its init in a private mount namespace with the
 * new mount API (Linux 5.12+), async-signal-safe calls only. Order (later mounts win):
 *  1. "/" made private, recursively, so nothing propagates back to the host.
 *  2. Every bind source cloned from the host view first (open_tree OPEN_TREE_CLONE): the
 *     writable roots (nosuid, nodev), read-only binds, /dev nodes, /dev/null for file masks.
 *  3. The base: the host root frozen read-only, nosuid, nodev, recursively (mount_setattr);
 *     or, when "/" is not readable, a fresh tmpfs made the root with pivot_root.
 *  4. A fresh /dev (tmpfs with bind mounts of null zero full random urandom tty, devpts with
 *     ptmx, a tmpfs /dev/shm; read-only once the view is done) and a fresh /proc for the new
 *     PID namespace (if the kernel refuses, by errno: the host's read-only /proc stays, or
 *     in a fresh root is bound).
 *  5. The operations, shallowest first: writable roots bound back, read-only carve-outs,
 *     deny masks, protected metadata (.git .codex .agents) bound read-only over themselves.
 *
 * Protected metadata that does not exist must not be creatable. A mount needs a dentry to
 * sit on, so the init creates an empty mode-000 directory (a placeholder) through the
 * writable bind and binds an empty read-only directory on it: the command cannot remove or
 * rename a mountpoint (EBUSY), write in it (EROFS), or create the name (EEXIST); git still
 * walks past an empty .git to find a parent repository. Placeholders are shared between
 * sandboxes through a shared flock and removed by the last one at teardown (LOCK_EX), so
 * nothing is left on the host once the sandbox is gone.
 */
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <linux/openat2.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sandbox_int.h"

/* The empty directory placeholders are covered with (bound, then unlinked, from /dev). */
#define MNT_EMPTY ".app-server-empty"

/* Device nodes bound from the host into the fresh /dev. */
static const char *const mnt_devices[] = {"null", "zero", "full", "random", "urandom", "tty"};
#define MNT_NDEVICES (sizeof mnt_devices / sizeof mnt_devices[0])

/* Symlinks of the fresh /dev. */
static const char *const mnt_dev_links[][2] = {
	{"ptmx", "pts/ptmx"},
	{"fd", "/proc/self/fd"},
	{"stdin", "/proc/self/fd/0"},
	{"stdout", "/proc/self/fd/1"},
	{"stderr", "/proc/self/fd/2"},
};

/* Close *fd if open. */
static void
mounts_close(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

/* openat2 refusing every symlink on the way (paths in the plan are canonical); fd or -1. */
static int
mounts_open(int dfd, const char *path, int flags)
{
	struct open_how how;

	memset(&how, 0, sizeof how);
	how.flags = (unsigned long long)(flags | O_CLOEXEC | O_NOFOLLOW);
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, dfd, path, &how, sizeof how);
}

/* Set (and clear) mount attributes on a tree fd or path; 0 or errno. */
int
mounts_setattr(int dfd, const char *path, int recursive, unsigned set, unsigned clr)
{
	struct mount_attr a;
	unsigned flags = recursive ? AT_RECURSIVE : 0;

	memset(&a, 0, sizeof a);
	a.attr_set = set;
	a.attr_clr = clr;
	if (path[0] == '\0')
		flags |= AT_EMPTY_PATH;
	if (mount_setattr(dfd, path, flags, &a, sizeof a) == -1)
		return errno;
	return 0;
}

/* Clone the mount tree at a host path (detached), with attributes set; fd or -errno. */
static int
mounts_clone(const char *path, int recursive, unsigned set)
{
	int fd, tree, err;

	if ((fd = mounts_open(AT_FDCWD, path, O_PATH)) == -1)
		return -errno;
	tree = open_tree(fd, "",
		AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
			(recursive ? AT_RECURSIVE : 0));
	err = tree == -1 ? errno : 0;
	close(fd);
	if (err == 0 && (err = mounts_setattr(tree, "", recursive, set, 0)) != 0)
		close(tree);
	return err != 0 ? -err : tree;
}

/* A new detached tmpfs with a root of this mode ("0755"); mount fd or -errno. */
int
mounts_tmpfs(const char *mode, unsigned attrs)
{
	int fs, m, err;

	if ((fs = fsopen("tmpfs", FSOPEN_CLOEXEC)) == -1)
		return -errno;
	if (fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0) == -1 ||
		fsconfig(fs, FSCONFIG_SET_STRING, "size", "16m", 0) == -1 ||
		fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1 ||
		(m = fsmount(fs, FSMOUNT_CLOEXEC, attrs)) == -1) {
		err = errno;
		close(fs);
		return -err;
	}
	close(fs);
	return m;
}

/* Attach the tree `from` on top of `to` (an fd, or a path relative to it); 0 or errno. */
int
mounts_move(int from, int to, const char *to_path)
{
	unsigned flags =
		MOVE_MOUNT_F_EMPTY_PATH | (to_path[0] == '\0' ? MOVE_MOUNT_T_EMPTY_PATH : 0);

	if (move_mount(from, "", to, to_path, flags) == -1)
		return errno;
	return 0;
}

/* Attach a tree on the (canonical) path target in the view; 0 or errno. */
static int
mounts_move_path(int from, const char *target)
{
	int tfd, err;

	if ((tfd = mounts_open(AT_FDCWD, target, O_PATH)) == -1)
		return errno;
	err = mounts_move(from, tfd, "");
	close(tfd);
	return err;
}

/*
 * Inside a fresh tmpfs (dirfd root), make the mountpoint rel: its parents as directories of
 * mode dmode, then a directory, an empty file, or a symlink to link; 0 or errno.
 */
static int
mounts_mkpath(int root, const char *rel, mode_t dmode, int dir, const char *link)
{
	char buf[PATH_MAX], *comp, *slash;
	int dfd = root, nfd, err = 0, fd;
	size_t len = strlen(rel);

	if (len == 0 || len >= sizeof buf)
		return ENAMETOOLONG;
	memcpy(buf, rel, len + 1);
	comp = buf;
	while ((slash = strchr(comp, '/')) != NULL) {
		*slash = '\0';
		if (mkdirat(dfd, comp, dmode) == -1 && errno != EEXIST) {
			err = errno;
			goto out;
		}
		if ((nfd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) ==
			-1) {
			err = errno;
			goto out;
		}
		if (dfd != root)
			close(dfd);
		dfd = nfd;
		comp = slash + 1;
	}
	if (link != NULL) {
		if (symlinkat(link, dfd, comp) == -1 && errno != EEXIST)
			err = errno;
	} else if (dir) {
		if (mkdirat(dfd, comp, dmode) == -1 && errno != EEXIST)
			err = errno;
	} else if ((fd = openat(dfd, comp, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0)) == -1)
		err = errno;
	else
		close(fd);
out:
	if (dfd != root)
		close(dfd);
	return err;
}

/* Path of op relative to its container's path. */
static const char *
mounts_rel(const char *path, const char *container)
{
	size_t n = strlen(container);

	return n == 1 ? path + 1 : path + n + 1;
}

/* Make the mountpoints of every op held by container c (index, or SBX_IN_ROOT); 0 or errno. */
static int
mounts_populate(struct sandbox *sb, int c, int root, const char *cpath, mode_t dmode)
{
	struct sbx_op *op;
	size_t i;
	int err;

	for (i = 0; i < sb->nops; i++) {
		op = &sb->ops[i];
		if (op->container != c)
			continue;
		err = mounts_mkpath(root, mounts_rel(op->path, cpath), dmode, op->dir,
			op->kind == SBX_OP_LINK ? op->link : NULL);
		if (err != 0)
			return err;
	}
	return 0;
}

/* Whether fd is still the file the plan saw for op. */
static int
mounts_same(int fd, const struct sbx_op *op)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_dev == op->dev && st.st_ino == op->ino;
}

/* Pre-clone what the base change would hide; 0 or an SBX_ERR. */
static int
mounts_preclone(struct sandbox *sb, int *dev, int *proc)
{
	const unsigned ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	char path[32];
	struct sbx_op *op;
	size_t i;
	int fd;

	for (i = 0; i < sb->nops; i++) {
		op = &sb->ops[i];
		fd = -1;
		if (op->kind == SBX_OP_RW)
			fd = mounts_clone(op->path, 1, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
		else if (op->kind == SBX_OP_RO)
			fd = mounts_clone(op->path, 1, ro);
		else if (op->kind == SBX_OP_MASK && !op->dir)
			fd = mounts_clone("/dev/null", 0, ro | MOUNT_ATTR_NOEXEC);
		else
			continue;
		if (fd == -ENOENT && op->kind == SBX_OP_RO)
			continue; /* gone since the plan: nothing to bind */
		if (fd < 0 && op->check)
			return SBX_ERR(SBX_STEP_OP + (int)i, -fd); /* a writable root changed */
		if (fd < 0)
			return SBX_ERR(SBX_STEP_MOUNTS, -fd);
		op->src = fd;
		if (op->check && !mounts_same(fd, op))
			return SBX_ERR(SBX_STEP_OP + (int)i, ESTALE);
	}
	for (i = 0; i < MNT_NDEVICES; i++) {
		memcpy(path, "/dev/", 5);
		memcpy(path + 5, mnt_devices[i], strlen(mnt_devices[i]) + 1);
		dev[i] = mounts_clone(path, 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
		if (dev[i] < 0 && dev[i] != -ENOENT && dev[i] != -ENXIO)
			return SBX_ERR(SBX_STEP_DEV, -dev[i]);
	}
	if (!sb->full_read) {
		*proc = mounts_clone("/proc", 1, ro | MOUNT_ATTR_NOEXEC);
		if (*proc < 0)
			return SBX_ERR(SBX_STEP_PROC, -*proc);
	}
	return 0;
}

/* A fresh tmpfs root with the mountpoints it needs, pivoted to; 0 or an SBX_ERR. */
static int
mounts_new_root(struct sandbox *sb)
{
	static const char *const scratch[] = {"/tmp", "/mnt", "/var/tmp", "/proc"};
	struct stat st;
	size_t i;
	int root, err = 0;

	if ((root = mounts_tmpfs("0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) < 0)
		return SBX_ERR(SBX_STEP_MOUNTS, -root);
	for (i = 0; i < sizeof scratch / sizeof scratch[0]; i++) {
		if (stat(scratch[i], &st) == 0 && S_ISDIR(st.st_mode))
			break;
	}
	if (i == sizeof scratch / sizeof scratch[0]) {
		err = ENOENT;
		goto out;
	}
	if ((err = mounts_move(root, AT_FDCWD, scratch[i])) != 0)
		goto out;
	if (mkdirat(root, "dev", 0755) == -1 || mkdirat(root, "proc", 0555) == -1) {
		err = errno;
		goto out;
	}
	if ((err = mounts_populate(sb, SBX_IN_ROOT, root, "/", 0755)) != 0)
		goto out;
	/* pivot_root(".", "."): the old root stacks on the new one; detach it. */
	if (fchdir(root) == -1 || syscall(SYS_pivot_root, ".", ".") == -1 ||
		umount2(".", MNT_DETACH) == -1 || chdir("/") == -1)
		err = errno;
out:
	close(root);
	return err != 0 ? SBX_ERR(SBX_STEP_MOUNTS, err) : 0;
}

/*
 * The fresh /dev, left writable (*devp) until the end of the view, with an empty directory
 * (*emptyp) that placeholders are covered with; 0 or an SBX_ERR.
 */
static int
mounts_dev(struct sandbox *sb, int *dev, int *devp, int *emptyp)
{
	size_t i;
	int d, fd, err;

	if ((d = mounts_tmpfs("0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)) < 0)
		return SBX_ERR(SBX_STEP_DEV, -d);
	*devp = d;
	if ((err = mounts_move(d, AT_FDCWD, "/dev")) != 0)
		goto out;
	for (i = 0; i < MNT_NDEVICES; i++) {
		if (dev[i] < 0)
			continue;
		if ((fd = openat(d, mnt_devices[i], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
			     0666)) == -1) {
			err = errno;
			goto out;
		}
		close(fd);
		if ((err = mounts_move(dev[i], d, mnt_devices[i])) != 0)
			goto out;
	}
	for (i = 0; i < sizeof mnt_dev_links / sizeof mnt_dev_links[0]; i++) {
		if (symlinkat(mnt_dev_links[i][1], d, mnt_dev_links[i][0]) == -1) {
			err = errno;
			goto out;
		}
	}
	if (mkdirat(d, "pts", 0755) == -1 || mkdirat(d, "shm", 01777) == -1 ||
		mkdirat(d, MNT_EMPTY, 0555) == -1 ||
		(*emptyp = openat(d, MNT_EMPTY, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		err = errno;
		goto out;
	}
	/* New PTYs for the command (the PTY it runs on stays the one it was given). */
	(void)mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
		"newinstance,ptmxmode=0666,mode=0620");
	if (!sb->devshm &&
		mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m") ==
			-1)
		err = errno;
out:
	return err != 0 ? SBX_ERR(SBX_STEP_DEV, err) : 0;
}

/* Remove the empty directory of /dev and make /dev read-only; 0 or an SBX_ERR. */
static int
mounts_dev_seal(int dev)
{
	int err;

	if (unlinkat(dev, MNT_EMPTY, AT_REMOVEDIR) == -1)
		return SBX_ERR(SBX_STEP_DEV, errno);
	if ((err = mounts_setattr(dev, "", 0, MOUNT_ATTR_RDONLY, 0)) != 0)
		return SBX_ERR(SBX_STEP_DEV, err);
	return 0;
}

/* The fresh /proc of our PID namespace, or the read-only host one; 0 or an SBX_ERR. */
static int
mounts_proc(struct sandbox *sb, int *proc)
{
	int err = EPERM;

	/* The "proc" fault plays a kernel that refuses: it exercises the fallback. */
	if (sb->fault != SBX_STEP_PROC) {
		if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
			    NULL) == 0)
			return 0;
		err = errno;
	}
	/* A container may mask parts of its /proc: the kernel then refuses a new one. */
	if (err != EPERM && err != EACCES && err != EINVAL)
		return SBX_ERR(SBX_STEP_PROC, err);
	if (sb->full_read)
		return 0; /* the host's, frozen read-only with the rest */
	if ((err = mounts_move_path(*proc, "/proc")) != 0)
		return SBX_ERR(SBX_STEP_PROC, err);
	mounts_close(proc);
	return 0;
}

/* Sleep for a millisecond. */
static void
mounts_nap(void)
{
	struct timespec ts = {0, 1000000};

	nanosleep(&ts, NULL);
}

/* Whether st is a placeholder: an empty-looking directory of mode 000. */
static int
mounts_is_placeholder(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && (st->st_mode & 07777) == 0;
}

/*
 * Hold a placeholder shared and make sure it is still the one at pdir/name; 1, 0 retry, 2 one
 * of another user's that we cannot open (covered, not held), -errno.
 */
static int
mounts_hold(struct sbx_op *op, int pdir, const char *name, const struct stat *st)
{
	struct stat now, lst;
	int i;

	if ((op->lock = openat(pdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) ==
		-1) {
		/*
		 * Another user's placeholder (another daemon's sandbox in a shared /tmp): we cannot
		 * lock it, nor will we ever remove it; it is covered like ours, without the lock.
		 */
		if (errno == EACCES && st->st_uid != getuid())
			return 2;
		return errno == ENOENT ? 0 : -errno;
	}
	for (i = 0; flock(op->lock, LOCK_SH | LOCK_NB) == -1; i++) {
		if (errno != EWOULDBLOCK || i == 2000)
			return -errno;
		mounts_nap(); /* another sandbox is removing it right now */
	}
	if (fstat(op->lock, &lst) == -1 || fstatat(pdir, name, &now, AT_SYMLINK_NOFOLLOW) == -1 ||
		lst.st_ino != st->st_ino || lst.st_dev != st->st_dev || now.st_ino != st->st_ino ||
		now.st_dev != st->st_dev) {
		mounts_close(&op->lock);
		return 0;
	}
	return 1;
}

/*
 * Make a protected path read-only, creating a placeholder when it is missing; 0, errno, or
 * -errno when its parent directory (the writable root) is no longer what the plan saw.
 */
static int
mounts_protect(struct sbx_op *op, int empty)
{
	char parent[PATH_MAX];
	const char *name = strrchr(op->path, '/') + 1;
	size_t plen = (size_t)(name - op->path) - 1;
	struct stat st;
	int sfd = -1, src = -1, tries, err = 0, h, ph;

	if (plen == 0)
		plen = 1; /* the root */
	if (plen >= sizeof parent)
		return ENAMETOOLONG;
	memcpy(parent, op->path, plen);
	parent[plen] = '\0';
	if ((op->pdir = mounts_open(AT_FDCWD, parent, O_PATH | O_DIRECTORY)) == -1)
		return -errno;
	if (op->check && !mounts_same(op->pdir, op))
		return -ESTALE;
	for (tries = 0; tries < 16; tries++) {
		if ((sfd = mounts_open(op->pdir, name, O_PATH)) == -1) {
			if (errno != ENOENT)
				return errno; /* ELOOP: it became a symlink */
			if (mkdirat(op->pdir, name, 0) == 0) {
				op->made = 1;
				continue;
			}
			if (errno == EEXIST)
				continue;
			if (errno == EACCES || errno == EPERM || errno == EROFS)
				return 0; /* the command, with fewer rights, cannot create it either
					   */
			return errno;
		}
		if (fstat(sfd, &st) == -1) {
			err = errno;
			goto out;
		}
		if ((ph = mounts_is_placeholder(&st))) {
			if ((h = mounts_hold(op, op->pdir, name, &st)) < 0) {
				err = -h;
				goto out;
			}
			if (h == 0) {
				mounts_close(&sfd);
				continue;
			}
		}
		/* CODEX_HOME: its entries but the secrets and state files (home_view.c). */
		if (op->hide && !ph) {
			if ((err = home_view_mount(sfd, &st)) == 0) {
				op->mounted = 1;
				op->mdev = st.st_dev;
				op->mino = st.st_ino;
			}
			goto out;
		}
		/* Over a placeholder: an empty read-only directory, listable (git walks it). */
		src = open_tree(ph ? empty : sfd, "",
			AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
		if (src == -1) {
			err = errno;
			goto out;
		}
		if ((err = mounts_setattr(src, "", 1,
			     MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0)) != 0)
			goto out;
		if (fstat(src, &st) == -1) {
			err = errno;
			goto out;
		}
		if ((err = mounts_move(src, sfd, "")) == 0) {
			op->mounted = 1; /* guard.c makes sure it stays */
			op->mdev = st.st_dev;
			op->mino = st.st_ino;
		}
		goto out;
	}
	err = EBUSY;
out:
	mounts_close(&src);
	mounts_close(&sfd);
	return err;
}

/* Apply one operation to the view; 0 or an SBX_ERR. */
static int
mounts_op(struct sandbox *sb, size_t i, int empty)
{
	struct sbx_op *op = &sb->ops[i];
	int m, err = 0;

	switch (op->kind) {
	case SBX_OP_RW:
	case SBX_OP_RO:
		if (op->src >= 0)
			err = mounts_move_path(op->src, op->path);
		mounts_close(&op->src);
		break;
	case SBX_OP_MASK:
		if (!op->dir) {
			err = mounts_move_path(op->src, op->path);
			mounts_close(&op->src);
			break;
		}
		m = mounts_tmpfs(op->nkids > 0 ? "0111" : "0000",
			MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
		if (m < 0)
			return SBX_ERR(SBX_STEP_MOUNTS, -m);
		if ((err = mounts_move_path(m, op->path)) == 0 &&
			(err = mounts_populate(sb, (int)i, m, op->path, 0111)) == 0)
			err = mounts_setattr(m, "", 0, MOUNT_ATTR_RDONLY, 0);
		close(m);
		break;
	case SBX_OP_PROTECT:
		if ((err = mounts_protect(op, empty)) < 0)
			return SBX_ERR(SBX_STEP_OP + (int)i, -err);
		if (err == ENOENT || err == EBUSY) /* removed, or kept changing, while we looked */
			return SBX_ERR(SBX_STEP_OP + (int)i, err);
		if (err != 0)
			return SBX_ERR(SBX_STEP_PROTECT, err);
		break;
	}
	return err != 0 ? SBX_ERR(SBX_STEP_MOUNTS, err) : 0;
}

/* In the init: build the whole view; 0 or an SBX_ERR. */
int
mounts_view(struct sandbox *sb)
{
	int dev[MNT_NDEVICES], proc = -1, devfd = -1, empty = -1, r;
	size_t i;

	for (i = 0; i < MNT_NDEVICES; i++)
		dev[i] = -1;
	if (sb->fault == SBX_STEP_MOUNTS)
		return SBX_ERR(SBX_STEP_MOUNTS, EPERM);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return SBX_ERR(SBX_STEP_MOUNTS, errno);
	if ((r = mounts_preclone(sb, dev, &proc)) != 0)
		goto out;
	if (sb->full_read) {
		r = mounts_setattr(AT_FDCWD, "/", 1,
			(sb->root_write ? 0 : MOUNT_ATTR_RDONLY) | MOUNT_ATTR_NOSUID |
				MOUNT_ATTR_NODEV,
			0);
		if (r != 0) {
			r = SBX_ERR(SBX_STEP_MOUNTS, r);
			goto out;
		}
	} else if ((r = mounts_new_root(sb)) != 0)
		goto out;
	if (sb->fault == SBX_STEP_DEV) {
		r = SBX_ERR(SBX_STEP_DEV, EPERM);
		goto out;
	}
	if ((r = mounts_dev(sb, dev, &devfd, &empty)) != 0 || (r = mounts_proc(sb, &proc)) != 0)
		goto out;
	for (i = 0; i < sb->nops; i++) {
		if (sb->fault == SBX_STEP_PROTECT && sb->ops[i].kind == SBX_OP_PROTECT) {
			r = SBX_ERR(SBX_STEP_PROTECT, EPERM);
			goto out;
		}
		if ((r = mounts_op(sb, i, empty)) != 0)
			goto out;
	}
	if ((r = mounts_dev_seal(devfd)) != 0)
		goto out;
	if (!sb->full_read && (r = mounts_setattr(AT_FDCWD, "/", 0, MOUNT_ATTR_RDONLY, 0)) != 0)
		r = SBX_ERR(SBX_STEP_MOUNTS, r);
out:
	mounts_close(&devfd);
	mounts_close(&empty);
	for (i = 0; i < MNT_NDEVICES; i++)
		mounts_close(&dev[i]);
	mounts_close(&proc);
	for (i = 0; i < sb->nops; i++)
		mounts_close(&sb->ops[i].src);
	return r;
}

/*
 * In the init, after everything else in the namespace died: unmount our placeholders and
 * remove those nobody else holds, so that the host keeps nothing of the sandbox.
 */
void
mounts_protect_cleanup(struct sandbox *sb)
{
	struct sbx_op *op;
	struct stat st, now;
	const char *name;
	size_t i;

	for (i = 0; i < sb->nops; i++) {
		op = &sb->ops[i];
		if (op->kind != SBX_OP_PROTECT || op->pdir < 0)
			continue;
		name = strrchr(op->path, '/') + 1;
		(void)umount2(op->path, MNT_DETACH | UMOUNT_NOFOLLOW);
		if (op->lock >= 0 && fstat(op->lock, &st) == 0 && mounts_is_placeholder(&st) &&
			flock(op->lock, LOCK_EX | LOCK_NB) == 0 &&
			fstatat(op->pdir, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
			now.st_ino == st.st_ino && now.st_dev == st.st_dev)
			(void)unlinkat(op->pdir, name, AT_REMOVEDIR);
		mounts_close(&op->lock);
		mounts_close(&op->pdir);
	}
}
