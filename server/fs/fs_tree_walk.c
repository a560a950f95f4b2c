/*
 * The descent of fs/remove and fs/copy (fs_tree_walk.h).
 *
 * Rules kept here:
 *   - one folder open (and its copy): an fd per level would stop at the fd limit, and a path
 *     string at PATH_MAX;
 *   - going up reopens ".." from the child and compares (device, inode) with what was walked
 *     through: a folder moved away during the walk ends it (-ESTALE) instead of letting it
 *     continue somewhere else;
 *   - a folder is read in chunks (one getdents64 each); a level keeps the rest of its chunk
 *     and the offset of the next one, which is where reading resumes after coming back up;
 *   - fs/remove (relist): entries are deleted as they are read, and some file systems give
 *     offsets by position, so a folder ends only when a pass from its start finds nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs_tree_walk.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define FS_TREE_CHUNK 32768 /* bytes of listing one getdents64 reads */

struct fs_tree_level {
	struct buf list; /* the records of the current chunk */
	size_t pos;	 /* the next record */
	size_t last;	 /* the record returned last */
	size_t entered;	 /* the record of the child walked below */
	off_t resume;	 /* where the next chunk starts */
	int eof;
	int rewound;  /* relist: this pass started at the folder's start */
	size_t found; /* relist: entries returned in this pass */
	int made;     /* the copy of this folder (or of one above) was made by the walk */
	dev_t dev, ddev;
	ino_t ino, dino;
};

/* Push a level for the folder open as t->fd (and t->dfd); 0 or -errno. */
static int
fs_tree_push(struct fs_tree *t, int made)
{
	struct fs_tree_level *l;
	struct stat st, dst;

	if (fstat(t->fd, &st) < 0 || (t->dfd >= 0 && fstat(t->dfd, &dst) < 0))
		return -errno;
	if (t->depth == t->cap) {
		size_t cap = t->cap < 16 ? 16 : 2 * t->cap;
		if (t->held + (cap - t->cap) * sizeof(*t->lv) > FS_TREE_HELD_MAX)
			return -ENOMEM;
		t->held += (cap - t->cap) * sizeof(*t->lv);
		t->lv = xrealloc(t->lv, cap * sizeof(*t->lv));
		t->cap = cap;
	}
	l = &t->lv[t->depth++];
	memset(l, 0, sizeof(*l));
	buf_init(&l->list, FS_TREE_CHUNK);
	l->rewound = 1; /* the first pass reads from the start */
	l->made = made;
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	if (t->dfd >= 0) {
		l->ddev = dst.st_dev;
		l->dino = dst.st_ino;
	}
	return 0;
}

/* Start a walk (fs_tree_walk.h). */
int
fs_tree_open(struct fs_tree *t, int fd, int dfd, int relist)
{
	memset(t, 0, sizeof(*t));
	t->fd = fd;
	t->dfd = dfd;
	t->relist = relist;
	return fs_tree_push(t, 0);
}

/* Close and free (fs_tree_walk.h). */
void
fs_tree_close(struct fs_tree *t)
{
	for (size_t i = 0; i < t->depth; i++)
		buf_free(&t->lv[i].list);
	free(t->lv);
	if (t->fd >= 0)
		close(t->fd);
	if (t->dfd >= 0)
		close(t->dfd);
	memset(t, 0, sizeof(*t));
	t->fd = t->dfd = -1;
}

/* Read the next chunk of the deepest folder from l->resume; 0 or -errno. */
static int
fs_tree_fill(struct fs_tree *t, struct fs_tree_level *l)
{
	char chunk[FS_TREE_CHUNK] __attribute__((aligned(8)));
	ssize_t k;

	if (lseek(t->fd, l->resume, SEEK_SET) < 0)
		return -errno;
	do
		k = getdents64(t->fd, chunk, sizeof(chunk));
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return -errno;
	t->held -= l->list.cap;
	buf_free(&l->list); /* a chunk's size: a deep chain of small folders holds little */
	l->pos = 0;
	if (k == 0) {
		l->eof = 1;
		return 0;
	}
	if (t->held + (size_t)k * 2 > FS_TREE_HELD_MAX)
		return -ENOMEM;
	buf_add(&l->list, chunk, (size_t)k);
	t->held += l->list.cap;
	for (size_t p = 0; p < (size_t)k;) {
		const struct dirent64 *de = (const struct dirent64 *)(chunk + p);
		l->resume = de->d_off;
		p += de->d_reclen;
	}
	return 0;
}

/* The next entry of the deepest folder (fs_tree_walk.h). */
int
fs_tree_next(struct fs_tree *t, const char **name, unsigned char *type)
{
	struct fs_tree_level *l = &t->lv[t->depth - 1];
	int r;

	for (;;) {
		while (l->pos < l->list.len) {
			const struct dirent64 *de = (const struct dirent64 *)(l->list.ptr + l->pos);
			const char *n = de->d_name;
			l->last = l->pos;
			l->pos += de->d_reclen;
			if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0')))
				continue;
			l->found++;
			*name = n;
			*type = de->d_type;
			return 1;
		}
		if (l->eof) {
			if (!t->relist || (l->rewound && l->found == 0))
				return 0;
			l->resume = 0; /* another pass: what a positional offset skipped */
			l->eof = 0;
			l->rewound = 1;
			l->found = 0;
		}
		if ((r = fs_tree_fill(t, l)) < 0)
			return r;
	}
}

/* Go down into a child folder (fs_tree_walk.h). */
int
fs_tree_down(struct fs_tree *t, int fd, int dfd, int made)
{
	struct fs_tree_level *p = &t->lv[t->depth - 1];
	int ofd = t->fd, odfd = t->dfd, r;

	p->entered = p->last;
	t->fd = fd;
	t->dfd = dfd;
	if ((r = fs_tree_push(t, made || p->made)) < 0) {
		t->fd = ofd;
		t->dfd = odfd;
		close(fd);
		if (dfd >= 0)
			close(dfd);
		return r;
	}
	close(ofd);
	if (odfd >= 0)
		close(odfd);
	return 0;
}

/* Open ".." of fd and check it is (dev, ino); the fd, or -errno (-ESTALE: another folder). */
static int
fs_tree_parent(int fd, dev_t dev, ino_t ino)
{
	int pfd = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st) < 0) {
		int e = errno;
		close(pfd);
		return -e;
	}
	if (st.st_dev != dev || st.st_ino != ino) {
		close(pfd);
		return -ESTALE;
	}
	return pfd;
}

/* Back to the parent (fs_tree_walk.h). */
int
fs_tree_up(struct fs_tree *t, const char **child)
{
	struct fs_tree_level *c = &t->lv[t->depth - 1], *p = c - 1;
	int pfd, pdfd = -1;

	if ((pfd = fs_tree_parent(t->fd, p->dev, p->ino)) < 0)
		return pfd;
	if (t->dfd >= 0 && (pdfd = fs_tree_parent(t->dfd, p->ddev, p->dino)) < 0) {
		close(pfd);
		return pdfd;
	}
	close(t->fd);
	if (t->dfd >= 0)
		close(t->dfd);
	t->fd = pfd;
	t->dfd = pdfd;
	t->held -= c->list.cap;
	buf_free(&c->list);
	t->depth--;
	if (child != NULL)
		*child = ((const struct dirent64 *)(p->list.ptr + p->entered))->d_name;
	return 0;
}

int
fs_tree_made(const struct fs_tree *t)
{
	return t->lv[t->depth - 1].made;
}

/* The names gone down by (fs_tree_walk.h). */
char *
fs_tree_path(const struct fs_tree *t)
{
	struct buf b;

	buf_init(&b, SIZE_MAX - 1);
	for (size_t i = 0; i + 1 < t->depth; i++) {
		const struct fs_tree_level *l = &t->lv[i];
		if (i > 0)
			buf_addc(&b, '/');
		buf_adds(&b, ((const struct dirent64 *)(l->list.ptr + l->entered))->d_name);
	}
	return buf_steal(&b, NULL);
}
