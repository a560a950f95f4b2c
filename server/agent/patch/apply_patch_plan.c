/*
 * apply_patch_prepare: verify a patch against the disk and compute everything it will do,
 * changing nothing (what upstream calls maybe_parse_apply_patch_verified, plus the
 * confinement check). Hunks are taken in order against an overlay of the files, so a
 * second hunk on a file sees the first one's result, as upstream's sequential application
 * would; paths are resolved through symlinks before they are checked and recorded.
 *
 * Upstream's messages are kept ("Failed to read file to update <path>: <io error>",
 * "Failed to find expected lines in <path>:\n...", "Failed to read <path>: ..."), with the
 * lexical absolute path as upstream shows it. Where upstream is wrong we are not: a file
 * moved onto itself is updated (upstream deletes it), a non-UTF-8 file can be deleted.
 * Bounded: APPLY_PATCH_MAX_FILE per file, APPLY_PATCH_MAX_TOTAL for all contents held.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apply_patch_int.h"
#include "apply_patch_path.h"
#include "agent/diff/diff.h"
#include "protocol/buf.h"
#include "protocol/utf8.h"
#include "protocol/xmalloc.h"

/* One prepare call: where paths resolve, the confinement, what is being built. */
struct prep {
	const char *cwd;
	const struct apply_patch_confine *confine;
	struct apply_patch_plan *plan;
	char **cause;
};

/* Keep a content block in the plan's arena (owned there); -E2BIG past the total bound. */
static int
prep_keep(struct prep *x, char *p, size_t n, struct apply_patch_text *t)
{
	struct apply_patch_plan *pl = x->plan;

	if (n > APPLY_PATCH_MAX_TOTAL - pl->bytes) {
		free(p);
		*x->cause = xasprintf("the patch needs more than %u bytes of file contents",
			APPLY_PATCH_MAX_TOTAL);
		return -E2BIG;
	}
	if ((pl->narena & (pl->narena - 1)) == 0)
		pl->arena = xrealloc(pl->arena, (pl->narena ? pl->narena * 2 : 8) * sizeof(char *));
	pl->arena[pl->narena++] = p;
	pl->bytes += n;
	*t = (struct apply_patch_text){1, p, n};
	return 0;
}

/* "<what> <path>: <io error>" into *cause; returns -EINVAL. */
static int
prep_io(struct prep *x, const char *what, const char *path, int err)
{
	char *io = err == -1 ? xstrdup("stream did not contain valid UTF-8") : ap_io_error(err);

	*x->cause = xasprintf("%s %s: %s", what, path, io);
	free(io);
	return -EINVAL;
}

/* Read a regular file (real: symlink-free, except a last link when follow is set). */
static int
prep_read(struct prep *x, const char *real, int follow, const char *what, const char *shown,
	struct apply_patch_text *t)
{
	struct buf b;
	struct stat st;
	ssize_t k;
	int fd, r = -EINVAL, err = 0;

	fd = open(real, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return prep_io(x, what, shown, errno);
	if (fstat(fd, &st) != 0)
		err = errno;
	else if (S_ISDIR(st.st_mode))
		err = EISDIR;
	else if (!S_ISREG(st.st_mode))
		err = EINVAL;
	if (err != 0) {
		close(fd);
		return prep_io(x, what, shown, err);
	}
	buf_init(&b, APPLY_PATCH_MAX_FILE);
	for (;;) {
		if (buf_reserve(&b, 65536) != 0 && buf_reserve(&b, 1) != 0) {
			*x->cause = xasprintf("%s %s: the file is more than %u bytes", what, shown,
				APPLY_PATCH_MAX_FILE);
			r = -E2BIG;
			break;
		}
		k = read(fd, b.ptr + b.len, b.cap - b.len - 1);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			r = prep_io(x, what, shown, errno);
			break;
		}
		if (k == 0) {
			b.ptr[b.len] = '\0';
			close(fd);
			return prep_keep(x, buf_steal(&b, NULL), b.len, t);
		}
		b.len += (size_t)k;
	}
	close(fd);
	buf_free(&b);
	return r;
}

/* The plan entry of path (resolved through symlinks, the last one too when follow). */
static int
prep_file(struct prep *x, const char *abs, int follow, const char *what, struct plan_file **out)
{
	struct apply_patch_plan *pl = x->plan;
	struct plan_file *f;
	char *real = NULL;
	size_t i;
	int err;

	if (ap_path_real(abs, follow, &real, &err) != 0)
		return prep_io(x, what, abs, err);
	for (i = 0; i < pl->n; i++)
		if (strcmp(pl->f[i].real, real) == 0) {
			free(real);
			*out = &pl->f[i];
			return 0;
		}
	f = &pl->f[pl->n]; /* room: one entry per hunk path at most */
	memset(f, 0, sizeof(*f));
	if (lstat(real, &f->st) == 0)
		f->existed = f->exists = 1;
	else if (errno != ENOENT) {
		err = errno;
		free(real);
		return prep_io(x, what, abs, err);
	}
	f->real = real;
	f->shown = xstrdup(abs);
	pl->n++;
	*out = f;
	return 0;
}

/* The current content of a file that exists (read from disk the first time). */
static int
prep_content(struct prep *x, struct plan_file *f, const char *what, const char *shown)
{
	if (f->cur.set)
		return 0;
	if (S_ISDIR(f->st.st_mode))
		return prep_io(x, what, shown, EISDIR);
	return prep_read(x, f->real, 0, what, shown, &f->cur);
}

/* The content of a file being replaced, when it can be read (upstream ignores failures). */
static int
prep_maybe_content(struct prep *x, struct plan_file *f, const char *abs, struct apply_patch_text *t)
{
	char *ignored = NULL, **saved = x->cause;
	int r;

	x->cause = &ignored;
	r = prep_content(x, f, "Failed to read", abs);
	x->cause = saved;
	if (r == 0)
		*t = f->cur;
	else if (r == -E2BIG) {
		*saved = ignored;
		return r;
	}
	free(ignored);
	return 0;
}

/* A copy of text that is valid UTF-8 (FileUpdateChange.diff goes into JSON). */
static char *
prep_utf8(const char *p, size_t n)
{
	char *s;

	if (utf8_valid_prefix(p, n) != n)
		return utf8_lossy(p, n, &n);
	s = xmalloc(n + 1);
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

/* The confinement's verdict on one file's symlink-free path. */
static int
prep_check(struct prep *x, const struct plan_file *f, enum apply_patch_op op)
{
	return ap_confine_check(x->confine, f->real, op, x->cause);
}

/* Add File: write the contents, replacing what is there. */
static int
prep_add(struct prep *x, const struct patch_hunk *h, const char *abs, struct apply_patch_change *ch)
{
	struct plan_file *f;
	char *copy;
	int r;

	if ((r = prep_file(x, abs, 1, "Failed to write file", &f)) != 0)
		return r;
	if (f->exists && S_ISDIR(f->st.st_mode) && !f->cur.set)
		return prep_io(x, "Failed to write file", abs, EISDIR);
	if ((r = prep_check(x, f, APPLY_PATCH_WRITE)) != 0)
		return r;
	if (f->exists && (r = prep_maybe_content(x, f, abs, &ch->before)) != 0)
		return r;
	copy = xmalloc(h->contents_len + 1);
	memcpy(copy, h->contents, h->contents_len + 1);
	if ((r = prep_keep(x, copy, h->contents_len, &f->cur)) != 0)
		return r;
	f->exists = f->written = 1;
	ch->kind = APPLY_PATCH_ADD;
	ch->after = f->cur;
	ch->diff = prep_utf8(h->contents, h->contents_len);
	return 0;
}

/* Delete File: the file (a symlink itself, not its target) goes. */
static int
prep_delete(struct prep *x, const char *abs, struct apply_patch_change *ch)
{
	struct plan_file *f;
	char *target = NULL;
	int r, err;

	if ((r = prep_file(x, abs, 0, "Failed to read", &f)) != 0)
		return r;
	if (!f->exists)
		return prep_io(x, "Failed to read", abs, ENOENT);
	if (!f->cur.set && S_ISLNK(f->st.st_mode)) {
		/* Its content, as upstream shows it, is the link target's. */
		if (ap_path_real(abs, 1, &target, &err) != 0)
			return prep_io(x, "Failed to read", abs, err);
		r = prep_read(x, target, 0, "Failed to read", abs, &f->cur);
		free(target);
	} else
		r = prep_content(x, f, "Failed to read", abs);
	if (r != 0 || (r = prep_check(x, f, APPLY_PATCH_REMOVE)) != 0)
		return r;
	ch->kind = APPLY_PATCH_DELETE;
	ch->before = f->cur;
	ch->diff = prep_utf8(f->cur.p, f->cur.n);
	f->exists = 0;
	f->cur = (struct apply_patch_text){0};
	return 0;
}

/* Update File: the chunks applied, written in place or to the Move to destination. */
static int
prep_update(
	struct prep *x, const struct patch_hunk *h, const char *abs, struct apply_patch_change *ch)
{
	static const char what[] = "Failed to read file to update";
	struct plan_file *f, *src, *d;
	struct apply_patch_text after;
	struct buf diff;
	char *newp = NULL;
	size_t newn;
	int r;

	if ((r = prep_file(x, abs, 1, what, &f)) != 0)
		return r;
	if (!f->exists)
		return prep_io(x, what, abs, ENOENT);
	if ((r = prep_content(x, f, what, abs)) != 0)
		return r;
	if (utf8_valid_prefix(f->cur.p, f->cur.n) != f->cur.n)
		return prep_io(x, what, abs, -1);
	if ((r = ap_apply_chunks(abs, f->cur.p, f->cur.n, h->chunks, h->nchunks, &newp, &newn,
		     x->cause)) != 0 ||
		(r = prep_keep(x, newp, newn, &after)) != 0)
		return r;
	ch->kind = APPLY_PATCH_UPDATE;
	ch->before = f->cur;
	ch->after = after;
	buf_init(&diff, 3 * (f->cur.n + after.n) + 2 * PATH_MAX + 4096);
	r = diff_unified(f->cur.p, f->cur.n, after.p, after.n, 1, NULL, NULL, &diff);
	if (r == 0 && h->move != NULL) {
		ch->move_path = ap_path_normal(x->cwd, h->move);
		r = buf_printf(&diff, "\n\nMoved to: %s", ch->move_path);
	}
	ch->diff = prep_utf8(buf_str(&diff), diff.len);
	buf_free(&diff);
	if (r != 0) {
		*x->cause = xasprintf("Failed to write file %s: the diff is too large", abs);
		return r;
	}
	if (h->move == NULL) {
		if ((r = prep_check(x, f, APPLY_PATCH_WRITE)) != 0)
			return r;
		f->cur = after;
		f->written = 1;
		return 0;
	}
	/* The source entry itself goes (a link, not its target); the destination is written. */
	if ((r = prep_file(x, abs, 0, "Failed to remove original", &src)) != 0 ||
		(r = prep_file(x, ch->move_path, 1, "Failed to write file", &d)) != 0)
		return r;
	if (d->exists && S_ISDIR(d->st.st_mode) && !d->cur.set)
		return prep_io(x, "Failed to write file", ch->move_path, EISDIR);
	if ((r = prep_check(x, d, APPLY_PATCH_WRITE)) != 0 ||
		(src != d && (r = prep_check(x, src, APPLY_PATCH_REMOVE)) != 0))
		return r;
	if (d != f && d->exists && (r = prep_maybe_content(x, d, ch->move_path, &ch->move_before)))
		return r;
	d->cur = after;
	d->exists = d->written = 1;
	if (src != d) {
		src->exists = 0;
		src->cur = (struct apply_patch_text){0};
	}
	return 0;
}

/* The message prefix upstream uses for a hunk's first file access. */
static const char *
prep_what(enum apply_patch_kind kind)
{
	return kind == APPLY_PATCH_ADD	     ? "Failed to write file"
		: kind == APPLY_PATCH_DELETE ? "Failed to read"
					     : "Failed to read file to update";
}

int
apply_patch_prepare(const struct patch *p, const char *cwd,
	const struct apply_patch_confine *confine, struct apply_patch_result **out, char **cause)
{
	struct apply_patch_result *res;
	const struct patch_hunk *h;
	struct apply_patch_change *ch;
	char *ignored = NULL;
	struct prep x;
	size_t i;
	int r = 0;

	*out = NULL;
	if (cause == NULL)
		cause = &ignored;
	if (cwd == NULL || cwd[0] != '/') {
		*cause = xstrdup("the working directory must be an absolute path");
		return -EINVAL;
	}
	if (p->nhunks == 0) {
		*cause = xstrdup("No files were modified.");
		return -EINVAL;
	}
	res = xcalloc(1, sizeof(*res));
	res->plan = xcalloc(1, sizeof(*res->plan));
	res->plan->f = xcalloc(3 * p->nhunks + 1, sizeof(*res->plan->f));
	res->changes = xcalloc(p->nhunks, sizeof(*res->changes));
	res->cwd = ap_path_normal(cwd, p->workdir != NULL ? p->workdir : ".");
	x = (struct prep){res->cwd, confine, res->plan, cause};
	for (i = 0; i < p->nhunks && r == 0; i++) {
		h = &p->hunks[i];
		ch = &res->changes[i];
		res->nchanges = i + 1;
		ch->path = ap_path_normal(res->cwd, h->path);
		ch->shown = xstrdup(h->move != NULL ? h->move : h->path);
		if (strlen(h->path) != h->path_len ||
			(h->move != NULL && strlen(h->move) != h->move_len)) {
			*cause = xasprintf("%s %s: file name contained an unexpected NUL byte",
				prep_what(h->kind), ch->path);
			r = -EINVAL;
		} else if (h->kind == APPLY_PATCH_ADD)
			r = prep_add(&x, h, ch->path, ch);
		else if (h->kind == APPLY_PATCH_DELETE)
			r = prep_delete(&x, ch->path, ch);
		else
			r = prep_update(&x, h, ch->path, ch);
	}
	if (r != 0)
		apply_patch_result_free(res);
	else
		*out = res;
	free(ignored);
	return r;
}

void
ap_plan_free(struct apply_patch_plan *plan)
{
	size_t i;

	if (plan == NULL)
		return;
	for (i = 0; i < plan->n; i++) {
		free(plan->f[i].real);
		free(plan->f[i].shown);
	}
	for (i = 0; i < plan->narena; i++)
		free(plan->arena[i]);
	free(plan->arena);
	free(plan->f);
	free(plan);
}

void
apply_patch_result_free(struct apply_patch_result *r)
{
	size_t i;

	if (r == NULL)
		return;
	for (i = 0; i < r->nchanges; i++) {
		free(r->changes[i].path);
		free(r->changes[i].move_path);
		free(r->changes[i].diff);
		free(r->changes[i].shown);
	}
	free(r->changes);
	free(r->cwd);
	ap_plan_free(r->plan);
	free(r);
}
