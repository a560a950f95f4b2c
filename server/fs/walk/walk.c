/*
 * The walk (walk.h): a depth-first descent with one open folder per level, each level holding
 * its listing (read whole with getdents64) and the ignore lists found in it. An entry's verdict
 * is computed from the deepest level up, then through the root's ancestors (their ignore files
 * count too), with the `ignore` crate's precedence (.ignore, .gitignore, .git/info/exclude, then
 * the global file) and its rule that git files above the first folder holding `.git` are not
 * read.
 *
 * Cost rules kept here: a folder costs open + getdents64 + close, plus one open per ignore file
 * its listing names; an entry costs nothing more unless its type is unknown or it is a symlink
 * (then one stat, following it); a folder's (device, inode) is only asked for when a symlink
 * leads to a folder (the loop check needs the folders above).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gitignore.h"
#include "walk.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define WALK_READ_CHUNK 32768

/* What a folder's listing says about the ignore files in it. */
#define WL_IGNORE    0x1
#define WL_GITIGNORE 0x2
#define WL_GIT	     0x4
#define WL_PROBE     0x8 /* no listing: probe for each */

struct walk_level {
	int fd;
	struct buf list; /* getdents64 records; kept allocated for the next folder at this depth */
	size_t pos;	 /* next record in list */
	size_t off;	 /* where this folder's children start in the path buffer */
	dev_t dev;
	ino_t ino;
	int st_known; /* dev/ino were asked for */
	int has_git;
	struct gi_list ign, git, exclude;
	char *prefix; /* ancestors only: the root's path relative to this folder, "a/b/" */
};

/* The kernel's views that are not files (walk.h): /proc, /sys and /dev, and proc and sysfs. */
struct walk_pseudo {
	dev_t dev[3];
	ino_t ino[3];
	size_t n;
	dev_t fsdev[2]; /* the devices of /proc and /sys when they are mounts */
	size_t nfs;
};

struct walk {
	struct walk_level lv[WALK_DEPTH_MAX + 1];
	struct walk_pseudo pseudo;
	int depth; /* levels in lv that are open */
	struct walk_level *anc;
	size_t nanc;
	struct gi_list global;
	int any_git_above; /* an ancestor of the root has .git */
	int rules;	   /* some list anywhere is non-empty */
	const char *root;
	size_t ri;
	char path[PATH_MAX + 1];
	char tmp[2 * PATH_MAX + 2];
	const struct walk_ops *ops;
	struct walk_stats *st;
};

/* Read the ignore files of the folder open as fd into a level (only those its listing names). */
static void
walk_level_load(struct walk *w, struct walk_level *l, int fd, unsigned listed)
{
	int probe = (listed & WL_PROBE) != 0;

	l->has_git = (listed & WL_GIT) ||
		(probe && faccessat(fd, ".git", F_OK, AT_SYMLINK_NOFOLLOW) == 0);
	if (probe || (listed & WL_IGNORE))
		gi_list_load_at(&l->ign, fd, ".ignore");
	if (probe || (listed & WL_GITIGNORE))
		gi_list_load_at(&l->git, fd, ".gitignore");
	if (l->has_git)
		gi_list_load_at(&l->exclude, fd, ".git/info/exclude");
	if (l->ign.n || l->git.n || l->exclude.n)
		w->rules = 1;
}

/* Release a level's lists (its listing buffer stays for reuse). */
static void
walk_level_clear(struct walk_level *l)
{
	gi_list_free(&l->ign);
	gi_list_free(&l->git);
	gi_list_free(&l->exclude);
	free(l->prefix);
	l->prefix = NULL;
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

/* Load the root's ancestors ("/" .. parent of root), nearest first. */
static void
walk_ancestors(struct walk *w, const char *root)
{
	size_t n = 0;

	for (const char *p = root; *p; p++)
		n += *p == '/';
	w->anc = xcalloc(n + 1, sizeof(*w->anc));
	w->nanc = 0;
	char *dir = xstrdup(root);
	for (;;) {
		char *slash = strrchr(dir, '/');
		if (slash == NULL || (slash == dir && dir[1] == '\0'))
			break;
		slash[slash == dir ? 1 : 0] = '\0';
		struct walk_level *l = &w->anc[w->nanc++];
		l->fd = -1;
		int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			walk_level_load(w, l, fd, WL_PROBE);
			close(fd);
		}
		size_t dl = strlen(dir);
		l->prefix = xasprintf("%s/", root + (dl == 1 ? 1 : dl + 1));
		w->any_git_above |= l->has_git;
		if (dl == 1)
			break;
	}
	free(dir);
}

/* Match one level's lists for rel, keeping the first verdict of each kind. */
static void
walk_match_level(
	const struct walk_level *l, const char *rel, int is_dir, int git_ok, enum gi_match m[3])
{
	if (m[0] == GI_NONE && l->ign.n)
		m[0] = gi_list_match(&l->ign, rel, is_dir);
	if (git_ok && m[1] == GI_NONE && l->git.n)
		m[1] = gi_list_match(&l->git, rel, is_dir);
	if (git_ok && m[2] == GI_NONE && l->exclude.n)
		m[2] = gi_list_match(&l->exclude, rel, is_dir);
}

/* Is the entry at w->path (len bytes, in the deepest open folder) ignored? */
static int
walk_ignored(struct walk *w, size_t len, int is_dir)
{
	enum gi_match m[3] = {GI_NONE, GI_NONE, GI_NONE}, v;
	int any_git = w->any_git_above, saw_git = 0;

	for (int i = 0; i < w->depth && !any_git; i++)
		any_git = w->lv[i].has_git;
	for (int i = w->depth - 1; i >= 0; i--) {
		const struct walk_level *l = &w->lv[i];
		walk_match_level(l, w->path + l->off, is_dir, any_git && !saw_git, m);
		saw_git |= l->has_git;
	}
	for (size_t i = 0; i < w->nanc; i++) {
		const struct walk_level *l = &w->anc[i];
		if (l->ign.n || l->git.n || l->exclude.n) {
			size_t pl = strlen(l->prefix);
			memcpy(w->tmp, l->prefix, pl);
			memcpy(w->tmp + pl, w->path, len + 1);
			walk_match_level(l, w->tmp, is_dir, any_git && !saw_git, m);
		}
		saw_git |= l->has_git;
	}
	v = m[0] != GI_NONE ? m[0] : m[1] != GI_NONE ? m[1] : m[2];
	if (v == GI_IGNORE)
		return 1;
	if (v == GI_WHITELIST || !any_git || w->global.n == 0)
		return 0;
	return gi_list_match(&w->global, w->path, is_dir) == GI_IGNORE;
}

/* Would entering the folder (dev, ino) close a loop with a folder open above? */
static int
walk_loops(struct walk *w, dev_t dev, ino_t ino)
{
	struct stat st;

	for (int i = 0; i < w->depth; i++) {
		struct walk_level *l = &w->lv[i];
		if (!l->st_known) {
			if (fstat(l->fd, &st) < 0)
				continue;
			l->dev = st.st_dev;
			l->ino = st.st_ino;
			l->st_known = 1;
		}
		if (l->dev == dev && l->ino == ino)
			return 1;
	}
	return 0;
}

/* Note where /proc, /sys and /dev are (followed, as a walk reaches them). */
static void
walk_pseudo_init(struct walk_pseudo *ps)
{
	static const char *const paths[] = {"/proc", "/sys", "/dev"};
	struct stat root, st;
	int have_root = stat("/", &root) == 0;

	memset(ps, 0, sizeof(*ps));
	for (size_t i = 0; i < nitems(paths); i++) {
		if (stat(paths[i], &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		ps->dev[ps->n] = st.st_dev;
		ps->ino[ps->n++] = st.st_ino;
		/* a whole file system of them, unless it is only a folder of / (no mount) */
		if (i < 2 && have_root && st.st_dev != root.st_dev)
			ps->fsdev[ps->nfs++] = st.st_dev;
	}
}

/* Is the folder st one of the kernel's views (never walked: /proc/<pid>/cwd leads back)? */
static int
walk_pseudo(const struct walk *w, const struct stat *st)
{
	for (size_t i = 0; i < w->pseudo.n; i++) {
		if (w->pseudo.dev[i] == st->st_dev && w->pseudo.ino[i] == st->st_ino)
			return 1;
	}
	for (size_t i = 0; i < w->pseudo.nfs; i++) {
		if (w->pseudo.fsdev[i] == st->st_dev)
			return 1;
	}
	return 0;
}

/*
 * Should the folder `name` of the deepest level not be entered? A followed link was stat'ed
 * (st); a plain folder costs a stat only when it is named as one of them.
 */
static int
walk_skip_dir(struct walk *w, const char *name, const struct stat *st)
{
	struct stat own;

	if (st == NULL) {
		if (strcmp(name, "proc") != 0 && strcmp(name, "sys") != 0 &&
			strcmp(name, "dev") != 0)
			return 0;
		if (fstatat(w->lv[w->depth - 1].fd, name, &own, AT_SYMLINK_NOFOLLOW) < 0)
			return 0;
		st = &own;
	}
	return walk_pseudo(w, st);
}

/* Read the whole listing of the level's folder; returns what it says about ignore files. */
static unsigned
walk_read(struct walk *w, struct walk_level *l)
{
	unsigned listed = 0;
	ssize_t k;

	buf_reset(&l->list);
	l->pos = 0;
	for (;;) {
		if (buf_reserve(&l->list, WALK_READ_CHUNK) < 0) {
			w->st->truncated = 1;
			break;
		}
		k = getdents64(l->fd, l->list.ptr + l->list.len, l->list.cap - l->list.len - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		l->list.len += (size_t)k;
	}
	for (size_t p = 0; p < l->list.len;) {
		const struct dirent64 *de = (const struct dirent64 *)(l->list.ptr + p);
		if (de->d_name[0] == '.') {
			if (strcmp(de->d_name, ".ignore") == 0)
				listed |= WL_IGNORE;
			else if (strcmp(de->d_name, ".gitignore") == 0)
				listed |= WL_GITIGNORE;
			else if (strcmp(de->d_name, ".git") == 0)
				listed |= WL_GIT;
		}
		p += de->d_reclen;
	}
	return listed;
}

/*
 * Open a folder as a new level: rel is w->path[0..off) without its trailing '/'. With
 * `listing`, its entries are read (and ops->dir told first); without, only its ignore files
 * are probed (a folder on the way to walk_names' folder).
 */
static int
walk_push(struct walk *w, int fd, size_t off, int listing)
{
	if (w->depth > WALK_DEPTH_MAX) {
		close(fd);
		return -1;
	}
	struct walk_level *l = &w->lv[w->depth];
	if (l->list.max == 0)
		buf_init(&l->list, WALK_DIR_BYTES);
	l->fd = fd;
	l->off = off;
	l->st_known = 0;
	l->pos = 0;
	buf_reset(&l->list);
	unsigned listed = WL_PROBE;
	if (listing) {
		if (w->ops->dir != NULL) {
			size_t rl = strlen(w->root);
			char *abs = w->tmp;
			memcpy(abs, w->root, rl);
			if (off > 0) {
				abs[rl] = '/';
				memcpy(abs + rl + 1, w->path, off - 1);
				abs[rl + off] = '\0';
			} else {
				abs[rl] = '\0';
			}
			char save = w->path[off > 0 ? off - 1 : 0];
			w->path[off > 0 ? off - 1 : 0] = '\0';
			w->ops->dir(w->ops->arg, w->ri, abs, w->path);
			w->path[off > 0 ? off - 1 : 0] = save;
		}
		listed = walk_read(w, l);
	}
	walk_level_load(w, l, fd, listed);
	w->depth++;
	return 0;
}

/* Pop the deepest level. */
static void
walk_pop(struct walk *w)
{
	walk_level_clear(&w->lv[--w->depth]);
}

/* Report one entry; non-zero stops the walk. */
static int
walk_emit(struct walk *w, size_t len, int is_dir)
{
	w->st->entries++;
	if (w->st->entries >= WALK_ENTRIES_MAX) {
		w->st->truncated = 1;
		return 1;
	}
	if ((w->st->entries & 1023) == 0 && w->ops->cancel && atomic_load(w->ops->cancel)) {
		w->st->cancelled = 1;
		return 1;
	}
	return w->ops->fn(w->ops->arg, w->ri, w->path, len, is_dir);
}

/*
 * One entry `name` of the deepest folder (its d_type, DT_UNKNOWN when not known): skipped when
 * missing, dangling or ignored, else reported and, when a folder, entered. Non-zero stops.
 */
static int
walk_entry(struct walk *w, const char *name, unsigned char type)
{
	struct walk_level *l = &w->lv[w->depth - 1];
	size_t nl = strlen(name), len = l->off + nl;
	struct stat st;
	int is_dir = type == DT_DIR, followed = 0;

	if (len + 2 > sizeof(w->path))
		return 0;
	memcpy(w->path + l->off, name, nl + 1);
	if (type == DT_UNKNOWN) {
		if (fstatat(l->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return 0;
		type = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		is_dir = type == DT_DIR;
	}
	if (type == DT_LNK) {
		if (fstatat(l->fd, name, &st, 0) < 0)
			return 0; /* dangling or looping: left out, as upstream */
		is_dir = S_ISDIR(st.st_mode);
		followed = 1;
	}
	if ((w->rules || w->global.n) && walk_ignored(w, len, is_dir))
		return 0;
	if (walk_emit(w, len, is_dir))
		return 1;
	if (!is_dir || (followed && walk_loops(w, st.st_dev, st.st_ino)) ||
		walk_skip_dir(w, name, followed ? &st : NULL))
		return 0;
	int sub = openat(l->fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sub >= 0) {
		w->path[len] = '/';
		w->path[len + 1] = '\0';
		walk_push(w, sub, len + 1, 1);
	}
	return 0;
}

/* Walk until the depth falls back to `floor`; non-zero when stopped. */
static int
walk_run(struct walk *w, int floor)
{
	while (w->depth > floor) {
		struct walk_level *l = &w->lv[w->depth - 1];
		if (l->pos >= l->list.len) {
			walk_pop(w);
			continue;
		}
		const struct dirent64 *de = (const struct dirent64 *)(l->list.ptr + l->pos);
		l->pos += de->d_reclen;
		const char *n = de->d_name;
		if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0')))
			continue;
		if (walk_entry(w, n, de->d_type))
			return 1;
	}
	return 0;
}

/* Make a walk over roots[ri]: its ancestors' ignore files read. */
static struct walk *
walk_new(const char *root, size_t ri, const struct walk_ops *ops, struct walk_stats *st)
{
	struct walk *w = xcalloc(1, sizeof(*w));
	char *gp = gi_global_path();

	for (size_t i = 0; i < nitems(w->lv); i++)
		w->lv[i].fd = -1;
	w->ops = ops;
	w->st = st;
	w->root = root;
	w->ri = ri;
	walk_pseudo_init(&w->pseudo);
	if (gp != NULL) {
		gi_list_load_at(&w->global, AT_FDCWD, gp);
		free(gp);
	}
	walk_ancestors(w, root);
	return w;
}

/* Close what is open and free the walk. */
static void
walk_free(struct walk *w)
{
	while (w->depth > 0)
		walk_pop(w);
	for (size_t i = 0; i < nitems(w->lv); i++)
		buf_free(&w->lv[i].list);
	for (size_t k = 0; k < w->nanc; k++)
		walk_level_clear(&w->anc[k]);
	free(w->anc);
	gi_list_free(&w->global);
	free(w);
}

/* Walk one root depth-first; non-zero when stopped. */
static int
walk_one(const char *root, size_t ri, const struct walk_ops *ops, struct walk_stats *st)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), stop = 0;
	struct walk *w;
	struct stat rst;

	if (fd < 0)
		return 0;
	w = walk_new(root, ri, ops, st);
	w->path[0] = '\0';
	if (walk_emit(w, 0, 1)) {
		close(fd);
		stop = 1;
	} else if (fstat(fd, &rst) == 0 && walk_pseudo(w, &rst)) {
		close(fd); /* a root in /proc, /sys or /dev: itself only */
	} else if (walk_push(w, fd, 0, 1) == 0)
		stop = walk_run(w, 0);
	walk_free(w);
	return stop;
}

/* Walk every root (walk.h). */
int
walk_roots(const char *const *roots, size_t nroots, const struct walk_ops *ops,
	struct walk_stats *stats)
{
	memset(stats, 0, sizeof(*stats));
	for (size_t i = 0; i < nroots; i++) {
		if (walk_one(roots[i], i, ops, stats))
			break;
	}
	return 0;
}

/* Open each folder from the root down to dir as levels without listings; 0 or -errno. */
static int
walk_chain(struct walk *w, const char *dir)
{
	int fd = open(w->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t off = 0;

	if (fd < 0 || walk_push(w, fd, 0, 0) < 0)
		return -errno;
	while (*dir != '\0') {
		const char *slash = strchr(dir, '/');
		size_t cl = slash ? (size_t)(slash - dir) : strlen(dir);
		if (off + cl + 2 > sizeof(w->path) || cl > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(w->path + off, dir, cl);
		w->path[off + cl] = '\0';
		fd = openat(
			w->lv[w->depth - 1].fd, w->path + off, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		off += cl;
		w->path[off++] = '/';
		w->path[off] = '\0';
		if (walk_push(w, fd, off, 0) < 0)
			return -ELOOP;
		dir += cl + (slash != NULL);
	}
	return 0;
}

/* Report some entries of one folder as the full walk would (walk.h). */
int
walk_names(const char *const *roots, size_t ri, const char *dir, const char *const *names, size_t n,
	const struct walk_ops *ops, struct walk_stats *stats)
{
	struct walk *w;
	int r;

	memset(stats, 0, sizeof(*stats));
	w = walk_new(roots[ri], ri, ops, stats);
	if ((r = walk_chain(w, dir)) == 0) {
		int floor = w->depth;
		for (size_t i = 0; i < n; i++) {
			if (strchr(names[i], '/') != NULL || strcmp(names[i], ".") == 0 ||
				strcmp(names[i], "..") == 0)
				continue;
			if (walk_entry(w, names[i], DT_UNKNOWN) || walk_run(w, floor))
				break;
		}
	}
	walk_free(w);
	return r;
}
