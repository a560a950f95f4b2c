/*
 * fs/remove and fs/copy: the two operations that walk a tree (fs.h).
 *
 * Rules kept here:
 *   - a walk never follows a symlink: entries are looked at with AT_SYMLINK_NOFOLLOW and
 *     directories are opened with O_NOFOLLOW relative to their parent's fd, so a link inside
 *     the tree (or one swapped in during the walk) can never lead the walk out of it;
 *   - any depth: the walk (fs_tree_walk.h) keeps one folder open and no path string;
 *   - symlinks are copied as links (their text, unresolved); files keep their mode, folders
 *     get the default mode (as upstream);
 *   - a failed copy leaves nothing behind: what it made is removed (the top folder it
 *     created, or each entry it made inside folders that were already there);
 *   - a file copied onto itself is left alone (upstream empties it: a bug we do not copy).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "fs_tree_walk.h"
#include "io/log.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define FS_UNDO_MAX (64u * 1024 * 1024) /* bytes of paths a copy remembers to undo */

/* Remove everything inside the directory open as fd (taken over), then nothing else. */
static int
fs_rm_contents(int fd)
{
	struct fs_tree t;
	const char *name, *child;
	unsigned char type;
	int r;

	if ((r = fs_tree_open(&t, fd, -1, 1)) < 0) {
		fs_tree_close(&t);
		return r;
	}
	for (;;) {
		if ((r = fs_tree_next(&t, &name, &type)) < 0)
			break;
		if (r == 0) {
			if (t.depth == 1)
				break;
			if ((r = fs_tree_up(&t, &child)) < 0)
				break;
			if (unlinkat(t.fd, child, AT_REMOVEDIR) < 0 && errno != ENOENT) {
				r = -errno;
				break;
			}
			continue;
		}
		if (type == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(t.fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				if (errno == ENOENT)
					continue;
				r = -errno;
				break;
			}
			type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		}
		if (type == DT_DIR) {
			int sub =
				openat(t.fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0 && errno == ENOENT)
				continue;
			if (sub < 0 || (r = fs_tree_down(&t, sub, -1, 0)) < 0) {
				r = sub < 0 ? -errno : r;
				break;
			}
		} else if (unlinkat(t.fd, name, 0) < 0 && errno != ENOENT) {
			r = -errno;
			break;
		}
	}
	fs_tree_close(&t);
	return r;
}

/* Remove name inside the folder dirfd, a whole tree when it is a folder; 0 or -errno. */
static int
fs_rm_at(int dirfd, const char *name)
{
	struct stat st;
	int fd, r;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) < 0 ? -errno : 0;
	if ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -errno;
	if ((r = fs_rm_contents(fd)) < 0)
		return r;
	return unlinkat(dirfd, name, AT_REMOVEDIR) < 0 ? -errno : 0;
}

/* fs/remove: recursive and force by default; force only forgives a missing path. */
int
fs_remove(const json_t *params, json_t **result, struct fs_err *err)
{
	int recursive = fs_param_bool(params, "recursive", 1);
	int force = fs_param_bool(params, "force", 1);
	char *path = NULL;
	struct stat st;
	int r;

	if ((r = fs_param_path(params, "path", &path, err)) < 0)
		goto out;
	if (lstat(path, &st) < 0) {
		r = -errno;
	} else if (!S_ISDIR(st.st_mode)) {
		r = unlink(path) < 0 ? -errno : 0;
	} else if (!recursive) {
		r = rmdir(path) < 0 ? -errno : 0;
	} else {
		int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		r = fd < 0 ? -errno : fs_rm_contents(fd);
		if (r == 0 && rmdir(path) < 0)
			r = -errno;
	}
	if (r == -ENOENT && force)
		r = 0;
	if (r < 0) {
		r = fs_err_io(err, -r);
		goto out;
	}
	*result = json_object();
out:
	free(path);
	return r;
}

/*
 * Copy the bytes of file sfd into a new file name in ddir (O_EXCL unless replace); *made
 * (may be NULL) says the file was created, also when the copy then failed.
 */
static int
fs_copy_bytes(int sfd, const struct stat *st, int ddir, const char *name, int replace, int *made)
{
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (replace ? O_TRUNC : O_EXCL);
	int dfd = openat(ddir, name, flags, 0600);
	int r = 0;

	if (dfd < 0)
		return -errno;
	if (made != NULL)
		*made = 1;
	for (;;) {
		ssize_t n = copy_file_range(sfd, NULL, dfd, NULL, 1 << 20, 0);
		if (n == 0)
			break;
		if (n > 0)
			continue;
		if (errno == EINTR)
			continue;
		if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP) {
			r = -errno;
			goto out;
		}
		/* no in-kernel copy here: plain read/write */
		char buf[65536];
		ssize_t k;
		while ((k = read(sfd, buf, sizeof(buf))) != 0) {
			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0) {
				r = -errno;
				goto out;
			}
			for (ssize_t off = 0; off < k;) {
				ssize_t w = write(dfd, buf + off, (size_t)(k - off));
				if (w < 0 && errno == EINTR)
					continue;
				if (w < 0) {
					r = -errno;
					goto out;
				}
				off += w;
			}
		}
		break;
	}
	if (fchmod(dfd, st->st_mode & 07777) < 0)
		r = -errno;
out:
	if (close(dfd) < 0 && r == 0)
		r = -errno;
	return r;
}

/* Copy one symlink: its text, unresolved. */
static int
fs_copy_link(int sdir, const char *sname, int ddir, const char *dname)
{
	char target[4096];
	ssize_t n = readlinkat(sdir, sname, target, sizeof(target) - 1);

	if (n < 0)
		return -errno;
	target[n] = '\0';
	return symlinkat(target, ddir, dname) < 0 ? -errno : 0;
}

/* Remember that the copy made name in the deepest folder's copy (when that folder was there). */
static void
fs_copy_note(const struct fs_tree *t, const char *name, struct buf *undo)
{
	char *dir;

	if (fs_tree_made(t))
		return; /* removing the folder it made takes this too */
	dir = fs_tree_path(t);
	if (buf_printf(undo, "%s%s%s", dir, dir[0] ? "/" : "", name) < 0 ||
		buf_addc(undo, '\0') < 0)
		log_warn("fs/copy: more than %u bytes of paths to undo; a failure may leave some",
			FS_UNDO_MAX);
	free(dir);
}

/* Copy a folder entry of the deepest source folder into its copy; a folder is gone down into. */
static int
fs_copy_entry(struct fs_tree *t, const char *n, struct buf *undo, struct fs_err *err)
{
	struct stat st;
	int r = 0, made = 0;

	if (fstatat(t->fd, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return fs_err_io(err, errno);
	if (S_ISLNK(st.st_mode)) {
		r = fs_copy_link(t->fd, n, t->dfd, n);
		made = r == 0;
	} else if (S_ISREG(st.st_mode)) {
		int f = openat(t->fd, n, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		r = f < 0 ? -errno : fs_copy_bytes(f, &st, t->dfd, n, 0, &made);
		if (f >= 0)
			close(f);
	} else if (S_ISDIR(st.st_mode)) {
		if (mkdirat(t->dfd, n, 0777) == 0)
			made = 1;
		else if (errno != EEXIST)
			return fs_err_io(err, errno);
		if (made)
			fs_copy_note(t, n, undo);
		int s2 = openat(t->fd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int d2 = openat(t->dfd, n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (s2 < 0 || d2 < 0) {
			r = fs_err_io(err, errno);
			if (s2 >= 0)
				close(s2);
			if (d2 >= 0)
				close(d2);
			return r;
		}
		if ((r = fs_tree_down(t, s2, d2, made)) < 0)
			return fs_err_io(err, -r);
		return 0;
	} else {
		return fs_err_set(err, FS_ERR_REQUEST,
			"fs/copy only supports regular files, directories, and symlinks");
	}
	if (made)
		fs_copy_note(t, n, undo);
	return r < 0 ? fs_err_io(err, -r) : 0;
}

/* Copy the directory open as sfd into the (existing) directory open as dfd (both taken). */
static int
fs_copy_dir(int sfd, int dfd, struct buf *undo, struct fs_err *err)
{
	struct fs_tree t;
	const char *name;
	unsigned char type;
	int r;

	if ((r = fs_tree_open(&t, sfd, dfd, 0)) < 0) {
		fs_tree_close(&t);
		return fs_err_io(err, -r);
	}
	for (;;) {
		if ((r = fs_tree_next(&t, &name, &type)) < 0) {
			r = fs_err_io(err, -r);
			break;
		}
		if (r == 0) {
			if (t.depth == 1)
				break;
			if ((r = fs_tree_up(&t, NULL)) < 0) {
				r = fs_err_io(err, -r);
				break;
			}
			continue;
		}
		if ((r = fs_copy_entry(&t, name, undo, err)) < 0)
			break;
	}
	fs_tree_close(&t);
	return r;
}

/* Remove the path rel (names from the folder dirfd, never through a symlink); 0 or -errno. */
static int
fs_rm_rel(int dirfd, const char *rel)
{
	const char *slash = strrchr(rel, '/');
	int fd = dirfd, r;

	if (slash == NULL)
		return fs_rm_at(dirfd, rel);
	for (const char *p = rel; p < slash;) {
		const char *e = memchr(p, '/', (size_t)(slash - p) + 1);
		char *part = xstrndup(p, (size_t)(e - p));
		int sub = openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		free(part);
		if (fd != dirfd)
			close(fd);
		if (sub < 0)
			return -errno;
		fd = sub;
		p = e + 1;
	}
	r = fs_rm_at(fd, slash + 1);
	close(fd);
	return r;
}

/* A failed copy: remove the top folder it made, else what it made inside dst. */
static void
fs_copy_undo(const char *dst, const char *top, const struct buf *undo)
{
	int fd, r = 0;

	if (top == NULL && undo->len == 0)
		return;
	if (top != NULL) {
		const char *slash = strrchr(top, '/');
		char *parent = slash == top ? xstrdup("/") : xstrndup(top, (size_t)(slash - top));
		if ((fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
			r = fs_rm_at(fd, slash + 1);
			close(fd);
		}
		free(parent);
	} else if ((fd = open(dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		for (size_t p = 0; p < undo->len; p += strlen(undo->ptr + p) + 1) {
			int e = fs_rm_rel(fd, undo->ptr + p);
			r = r < 0 ? r : e;
		}
		close(fd);
	}
	if (fd < 0 || (r < 0 && r != -ENOENT))
		log_warn("fs/copy: could not remove the partial copy at %s: %s", dst,
			strerror(fd < 0 ? errno : -r));
}

/* Split path into a heap parent and a pointer to its last component (inside path). */
static char *
fs_parent(const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	*name = slash + 1;
	return slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
}

/* A directory copy: refused into itself, destination parents made, then merged in. */
static int
fs_copy_tree(const char *src, const char *dst, struct fs_err *err)
{
	size_t sl = strlen(src);
	char *rs = NULL, *rd = NULL, *top = NULL;
	struct buf undo;
	int sfd = -1, dfd = -1, r;

	buf_init(&undo, FS_UNDO_MAX);
	rs = realpath(src, NULL);
	rd = realpath(dst, NULL);
	if ((strncmp(dst, src, sl) == 0 && (dst[sl] == '/' || dst[sl] == '\0')) ||
		strcmp(src, "/") == 0 ||
		(rs && rd && strncmp(rd, rs, strlen(rs)) == 0 &&
			(rd[strlen(rs)] == '/' || rd[strlen(rs)] == '\0'))) {
		r = fs_err_set(err, FS_ERR_REQUEST,
			"fs/copy cannot copy a directory to itself or one of its descendants");
		goto out;
	}
	if ((r = fs_mkdir_all(dst, &top)) < 0) {
		r = fs_err_io(err, -r);
		fs_copy_undo(dst, top, &undo);
		goto out;
	}
	sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	dfd = open(dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0 || dfd < 0) {
		r = fs_err_io(err, errno);
		fs_copy_undo(dst, top, &undo);
		goto out;
	}
	r = fs_copy_dir(sfd, dfd, &undo, err);
	sfd = dfd = -1; /* taken */
	if (r < 0)
		fs_copy_undo(dst, top, &undo);
out:
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	buf_free(&undo);
	free(top);
	free(rs);
	free(rd);
	return r;
}

static unsigned fs_copy_seq; /* temporary names of single-file copies (workers: atomic) */

/* A single file (or top-level symlink) copy; the destination's parent must exist. */
static int
fs_copy_one(const char *src, const struct stat *st, const char *dst, struct fs_err *err)
{
	const char *sname, *dname;
	char *sparent = fs_parent(src, &sname), *dparent = fs_parent(dst, &dname);
	int sdir = -1, ddir = -1, f = -1, made = 0, r;
	struct stat dst_st;
	char tmp[64];

	sdir = open(sparent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ddir = open(dparent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sdir < 0 || ddir < 0) {
		r = fs_err_io(err, errno);
		goto out;
	}
	if (S_ISLNK(st->st_mode)) {
		r = fs_copy_link(sdir, sname, ddir, dname);
		if (r < 0)
			r = fs_err_io(err, -r);
		goto out;
	}
	if (fstatat(ddir, dname, &dst_st, 0) == 0) {
		if (S_ISDIR(dst_st.st_mode)) {
			r = fs_err_io(err, EISDIR);
			goto out;
		}
		if (dst_st.st_dev == st->st_dev && dst_st.st_ino == st->st_ino) {
			r = 0; /* onto itself: nothing to do (and nothing to lose) */
			goto out;
		}
	}
	/*
	 * Into a temporary name beside the destination, renamed over it once whole: a copy that
	 * fails (disk full, a read error) leaves the destination as it was, or absent.
	 */
	if (fstatat(ddir, dname, &dst_st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(dst_st.st_mode)) {
		r = fs_err_io(err, ELOOP); /* as the O_NOFOLLOW open of the destination said */
		goto out;
	}
	f = openat(sdir, sname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (f < 0) {
		r = fs_err_io(err, errno);
		goto out;
	}
	snprintf(tmp, sizeof tmp, ".fs-copy-%ld-%u.tmp", (long)getpid(),
		__atomic_fetch_add(&fs_copy_seq, 1, __ATOMIC_RELAXED));
	if ((r = fs_copy_bytes(f, st, ddir, tmp, 0, &made)) == 0 &&
		renameat(ddir, tmp, ddir, dname) < 0)
		r = -errno;
	if (r < 0) {
		if (made)
			(void)unlinkat(ddir, tmp, 0);
		r = fs_err_io(err, -r);
	}
out:
	if (f >= 0)
		close(f);
	if (sdir >= 0)
		close(sdir);
	if (ddir >= 0)
		close(ddir);
	free(sparent);
	free(dparent);
	return r;
}

/* fs/copy: files, symlinks (as links) and, with recursive:true, directory trees. */
int
fs_copy(const json_t *params, json_t **result, struct fs_err *err)
{
	char *src = NULL, *dst = NULL;
	struct stat st;
	int r;

	if ((r = fs_param_path(params, "sourcePath", &src, err)) < 0 ||
		(r = fs_param_path(params, "destinationPath", &dst, err)) < 0)
		goto out;
	if (lstat(src, &st) < 0) {
		r = fs_err_io(err, errno);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		if (!fs_param_bool(params, "recursive", 0)) {
			r = fs_err_set(err, FS_ERR_REQUEST,
				"fs/copy requires recursive: true when sourcePath is a directory");
			goto out;
		}
		r = fs_copy_tree(src, dst, err);
	} else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
		r = strcmp(dst, "/") == 0 ? fs_err_io(err, EISDIR)
					  : fs_copy_one(src, &st, dst, err);
	} else {
		r = fs_err_set(err, FS_ERR_REQUEST,
			"fs/copy only supports regular files, directories, and symlinks");
	}
	if (r < 0)
		goto out;
	*result = json_object();
out:
	free(src);
	free(dst);
	return r;
}
