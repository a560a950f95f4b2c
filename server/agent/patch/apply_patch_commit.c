/*
 * apply_patch_commit: write a prepared patch, all of it or none of it.
 *
 * Order (the rule this file keeps):
 *   1. check: every file is still as apply_patch_prepare saw it (same inode, size, mtime;
 *      still absent if it was absent), else -ESTALE and nothing is touched;
 *   2. stage: each new content goes to a temporary file in its target's directory
 *      (directories created as needed), fsync'ed, with the replaced file's mode;
 *      a failure here removes the temporaries and the directories made, disk untouched;
 *   3. switch: writes first, then removals; a replaced file is first hard-linked to a
 *      backup name, then the temporary is renamed over it; a removed file is renamed to a
 *      backup name. If a rename fails, the steps done are undone in reverse (backups
 *      renamed back, new files unlinked), so the disk returns to its state before the
 *      patch; only a failure of that undo itself (reported in the message) leaves the
 *      patch half applied;
 *   4. finish: backups unlinked, directories fsync'ed.
 * Between 1 and 2, the leftovers of a crashed commit in those directories are removed
 * (apply_patch_sweep.c says which are safe to remove).
 * Every directory is reached by walking from "/" with O_NOFOLLOW (ap_dir_open), so a
 * symlink planted since the check fails the patch instead of redirecting it.
 * Not kept from upstream, which rewrites files in place: hard links to a replaced file
 * keep the old content, and its owner is kept only when we may chown.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apply_patch_int.h"
#include "apply_patch_path.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

/* One file to switch: a write (tmp staged) or a removal. */
struct step {
	struct plan_file *f;
	char *dir, *name;
	int write;
	char *tmp; /* staged temporary (write), NULL once renamed or removed */
	char *bak; /* backup of the replaced/removed file, or NULL */
	int done;  /* switched */
};

struct commit {
	struct step *s;
	size_t n;
	char **made; /* directories created, in order */
	size_t nmade, capmade;
	char **cause;
};

/* Remember a directory ap_dir_open created (for the undo). */
static void
commit_made_cb(void *arg, const char *dir, size_t len)
{
	struct commit *c = arg;

	if (c->nmade == c->capmade) {
		c->capmade = c->capmade * 2 + 4;
		c->made = xrealloc(c->made, c->capmade * sizeof(char *));
	}
	c->made[c->nmade++] = xstrndup(dir, len);
}

/* A name of ours in a directory: ".apply_patch-<pid>-<n>.<ext>", n unique in the process. */
static char *
commit_name(const char *ext)
{
	static unsigned long seq;

	return xasprintf(".apply_patch-%ld-%lu.%s", (long)getpid(),
		__atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED), ext);
}

/* "<what> <path>: <why>"; appended when a message is already there. */
static void
commit_fail_text(struct commit *c, const char *what, const char *path, const char *why)
{
	char *old = *c->cause;

	*c->cause = old == NULL ? xasprintf("%s %s: %s", what, path, why)
				: xasprintf("%s; %s %s: %s", old, what, path, why);
	free(old);
}

/* "<what> <path>: <io error>". */
static void
commit_fail(struct commit *c, const char *what, const char *path, int err)
{
	char *io = ap_io_error(err);

	commit_fail_text(c, what, path, io);
	free(io);
}

/* The directory of a step, walked without following symlinks. */
static int
commit_dir(struct commit *c, struct step *s, int create, int *err)
{
	return ap_dir_open(s->dir, create, create ? commit_made_cb : NULL, c, err);
}

/* 1. Refuse a disk that changed since prepare. */
static int
commit_check(struct commit *c, struct step *s)
{
	struct stat st;
	int fd, err, r;

	if ((fd = commit_dir(c, s, 0, &err)) < 0)
		r = err == ENOENT && !s->f->existed ? 0 : -1;
	else {
		r = fstatat(fd, s->name, &st, AT_SYMLINK_NOFOLLOW);
		if (r != 0)
			r = errno == ENOENT && !s->f->existed ? 0 : -1;
		else if (!s->f->existed || st.st_ino != s->f->st.st_ino ||
			st.st_dev != s->f->st.st_dev || st.st_size != s->f->st.st_size ||
			st.st_mode != s->f->st.st_mode ||
			st.st_mtim.tv_sec != s->f->st.st_mtim.tv_sec ||
			st.st_mtim.tv_nsec != s->f->st.st_mtim.tv_nsec)
			r = -1;
		close(fd);
	}
	if (r != 0) {
		*c->cause = xasprintf("%s changed on disk since the patch was checked; nothing "
				      "was changed",
			s->f->shown);
		return -ESTALE;
	}
	return 0;
}

/* 2. Write one new content to a temporary file beside its target. */
static int
commit_stage(struct commit *c, struct step *s)
{
	mode_t mode = s->f->existed ? s->f->st.st_mode & 07777 : 0666;
	const char *p = s->f->cur.p;
	size_t left = s->f->cur.n;
	int dfd, fd = -1, err = 0;
	ssize_t k;

	if ((dfd = commit_dir(c, s, 1, &err)) < 0)
		goto fail;
	s->tmp = commit_name("tmp");
	fd = openat(dfd, s->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		err = errno;
		free(s->tmp);
		s->tmp = NULL;
		goto fail;
	}
	if (s->f->existed) {
		(void)fchmod(fd, mode); /* the umask may have narrowed it */
		(void)!fchown(fd, s->f->st.st_uid, s->f->st.st_gid);
	}
	while (left > 0 && err == 0) {
		if ((k = write(fd, p, left)) < 0 && errno != EINTR)
			err = errno;
		else if (k > 0)
			p += k, left -= (size_t)k;
	}
	if (err == 0 && fsync(fd) != 0)
		err = errno;
	if (close(fd) != 0 && err == 0)
		err = errno;
	fd = -1;
fail:
	if (dfd >= 0)
		close(dfd);
	if (err != 0) {
		commit_fail(c, "Failed to write file", s->f->shown, err);
		return -err;
	}
	return 0;
}

/* 3. Switch one step: backup, then rename into place (or away). */
static int
commit_switch(struct commit *c, struct step *s)
{
	int dfd, err = 0;

	if ((dfd = commit_dir(c, s, 0, &err)) < 0)
		goto fail;
	if (s->f->existed) {
		s->bak = commit_name("bak");
		if (!s->write) {
			if (renameat(dfd, s->name, dfd, s->bak) != 0)
				err = errno;
		} else if (linkat(dfd, s->name, dfd, s->bak, 0) != 0) {
			free(s->bak); /* no hard links here: this file cannot be restored */
			s->bak = NULL;
		}
		if (err != 0) {
			free(s->bak);
			s->bak = NULL;
		}
	}
	if (err == 0 && s->write && renameat(dfd, s->tmp, dfd, s->name) != 0) {
		err = errno;
		if (s->bak != NULL && unlinkat(dfd, s->bak, 0) == 0) {
			free(s->bak);
			s->bak = NULL;
		}
	} else if (err == 0 && s->write) {
		free(s->tmp);
		s->tmp = NULL;
	}
	close(dfd);
fail:
	if (err != 0) {
		commit_fail(c, s->write ? "Failed to write file" : "Failed to delete file",
			s->f->shown, err);
		return -err;
	}
	s->done = 1;
	return 0;
}

/* Undo one switched step; its failure is added to the message. */
static void
commit_undo(struct commit *c, struct step *s)
{
	int dfd, err = 0;

	if ((dfd = commit_dir(c, s, 0, &err)) < 0) {
		commit_fail(c, "could not restore", s->f->shown, err);
		return;
	}
	if (s->bak != NULL) {
		if (renameat(dfd, s->bak, dfd, s->name) != 0)
			err = errno;
		else {
			free(s->bak);
			s->bak = NULL;
		}
	} else if (s->write && s->f->existed) {
		close(dfd);
		commit_fail_text(c, "could not restore", s->f->shown,
			"no backup (the file system refused a hard link)");
		return;
	} else if (s->write && unlinkat(dfd, s->name, 0) != 0)
		err = errno;
	close(dfd);
	if (err != 0)
		commit_fail(c, "could not restore", s->f->shown, err);
}

/* Remove what is left of ours: temporaries, backups (on success), made directories. */
static void
commit_clean(struct commit *c, int success)
{
	size_t i;
	int dfd, err;

	for (i = 0; i < c->n; i++) {
		struct step *s = &c->s[i];

		if ((!success && s->tmp == NULL) || (dfd = commit_dir(c, s, 0, &err)) < 0)
			continue;
		if (s->tmp != NULL)
			unlinkat(dfd, s->tmp, 0);
		if (s->bak != NULL && success)
			unlinkat(dfd, s->bak, 0);
		if (success)
			fsync(dfd);
		close(dfd);
	}
	for (i = c->nmade; i > 0 && !success; i--)
		rmdir(c->made[i - 1]);
}

/* Before staging: each directory the patch writes in loses its crashed commits' leftovers. */
static void
commit_sweep(struct commit *c)
{
	for (size_t i = 0; i < c->n; i++) {
		size_t k = 0;
		int dfd, err;

		while (k < i && strcmp(c->s[k].dir, c->s[i].dir) != 0)
			k++;
		if (k < i || (dfd = commit_dir(c, &c->s[i], 0, &err)) < 0)
			continue; /* swept already, or not there yet */
		ap_sweep(dfd);
		close(dfd);
	}
}

/* The steps: files that end written, then files that existed and end removed. */
static void
commit_steps(struct commit *c, struct apply_patch_plan *plan)
{
	size_t i, pass;
	char *slash;

	c->s = xcalloc(plan->n + 1, sizeof(*c->s));
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < plan->n; i++) {
			struct plan_file *f = &plan->f[i];
			struct step *s;

			if (pass == 0 ? !(f->exists && f->written) : (f->exists || !f->existed))
				continue;
			s = &c->s[c->n++];
			s->f = f;
			s->write = pass == 0;
			slash = strrchr(f->real, '/');
			s->dir = slash == f->real ? xstrdup("/")
						  : xstrndup(f->real, (size_t)(slash - f->real));
			s->name = xstrdup(slash + 1);
		}
}

int
ap_commit(struct apply_patch_plan *plan, char **cause)
{
	struct commit c = {0};
	size_t i, k;
	int r = 0;

	c.cause = cause;
	commit_steps(&c, plan);
	for (i = 0; i < c.n && r == 0; i++)
		r = commit_check(&c, &c.s[i]);
	if (r == 0)
		commit_sweep(&c);
	for (i = 0; i < c.n && r == 0; i++)
		if (c.s[i].write)
			r = commit_stage(&c, &c.s[i]);
	for (i = 0; i < c.n && r == 0; i++)
		if ((r = commit_switch(&c, &c.s[i])) != 0)
			for (k = i; k > 0; k--)
				commit_undo(&c, &c.s[k - 1]);
	commit_clean(&c, r == 0);
	for (i = 0; i < c.n; i++) {
		free(c.s[i].dir);
		free(c.s[i].name);
		free(c.s[i].tmp);
		free(c.s[i].bak);
	}
	for (i = 0; i < c.nmade; i++)
		free(c.made[i]);
	free(c.made);
	free(c.s);
	return r;
}
