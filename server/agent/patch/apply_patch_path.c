/*
 * Paths for apply_patch: lexical resolution against the working directory (what the
 * FileChange item shows), resolution through symlinks (what is really written), the
 * confinement check, and opening a directory without following any symlink.
 *
 * The rule kept here: a path is checked only once it is free of symlinks, and every write
 * later reaches its directory by walking from "/" with O_NOFOLLOW, so a symlink planted in
 * the workspace (before or during the patch) can neither pass the check nor redirect a
 * write. Messages follow Rust's io::Error text ("No such file or directory (os error 2)").
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apply_patch_path.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define PATH_HOPS 40 /* symlinks followed in one resolution, as the kernel allows */

char *
ap_io_error(int err)
{
	return xasprintf("%s (os error %d)", strerror(err), err);
}

char *
ap_path_normal(const char *base, const char *path)
{
	struct buf b;
	const char *p, *e;
	size_t n, i;
	int pass;

	buf_init(&b, (size_t)-1);
	/* Two passes over base then path; an absolute path drops the base. */
	for (pass = 0; pass < 2; pass++) {
		p = pass == 0 ? (path[0] == '/' || base == NULL ? "" : base) : path;
		if (p[0] == '/')
			buf_reset(&b);
		while (*p != '\0') {
			while (*p == '/')
				p++;
			e = strchr(p, '/');
			n = e != NULL ? (size_t)(e - p) : strlen(p);
			if (n == 0 || (n == 1 && p[0] == '.'))
				;
			else if (n == 2 && p[0] == '.' && p[1] == '.') {
				for (i = b.len; i > 0 && b.ptr[i - 1] != '/'; i--)
					;
				buf_truncate(&b, i > 0 ? i - 1 : 0);
			} else {
				buf_addc(&b, '/');
				buf_add(&b, p, n);
			}
			p += n;
		}
	}
	if (b.len == 0)
		buf_addc(&b, '/');
	return buf_steal(&b, NULL);
}

int
ap_path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return path[0] == '/';
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Take the first component of *rest (advancing past it); 0 when none is left. */
static int
path_next(const char **rest, const char **comp, size_t *n)
{
	const char *p = *rest, *e;

	while (*p == '/')
		p++;
	if (*p == '\0')
		return 0;
	e = strchr(p, '/');
	*n = e != NULL ? (size_t)(e - p) : strlen(p);
	*comp = p;
	*rest = p + *n;
	return 1;
}

/* Whether nothing but slashes is left. */
static int
path_is_last(const char *rest)
{
	while (*rest == '/')
		rest++;
	return *rest == '\0';
}

int
ap_path_real(const char *abs, int follow_last, char **out, int *err)
{
	struct buf real, todo;
	char link[PATH_MAX + 1], *rest_copy = NULL;
	const char *rest, *comp;
	size_t n;
	ssize_t ln;
	struct stat st;
	int hops = 0, r = -1, missing = 0;

	buf_init(&real, PATH_MAX * 4);
	buf_init(&todo, PATH_MAX * 8);
	if (buf_adds(&todo, abs) != 0) {
		*err = ENAMETOOLONG;
		goto out;
	}
	rest_copy = buf_steal(&todo, NULL);
	rest = rest_copy;
	while (path_next(&rest, &comp, &n)) {
		size_t keep = real.len;

		if (n == 1 && comp[0] == '.')
			continue;
		if (n == 2 && comp[0] == '.' && comp[1] == '.') {
			while (real.len > 0 && real.ptr[real.len - 1] != '/')
				real.len--;
			buf_truncate(&real, real.len > 0 ? real.len - 1 : 0);
			continue;
		}
		if (buf_addc(&real, '/') != 0 || buf_add(&real, comp, n) != 0) {
			*err = ENAMETOOLONG;
			goto out;
		}
		if (missing)
			continue; /* below a missing directory nothing can be a link */
		if (lstat(real.ptr, &st) != 0) {
			if (errno != ENOENT) {
				*err = errno;
				goto out;
			}
			missing = 1;
			continue;
		}
		if (!S_ISLNK(st.st_mode) || (!follow_last && path_is_last(rest)))
			continue;
		if (++hops > PATH_HOPS) {
			*err = ELOOP;
			goto out;
		}
		if ((ln = readlink(real.ptr, link, sizeof(link) - 1)) < 0) {
			*err = errno;
			goto out;
		}
		link[ln] = '\0';
		/* Continue with the link's target, then what was left. */
		buf_truncate(&real, link[0] == '/' ? 0 : keep);
		buf_init(&todo, PATH_MAX * 8);
		if (buf_adds(&todo, link) != 0 || buf_addc(&todo, '/') != 0 ||
			buf_adds(&todo, rest) != 0) {
			buf_free(&todo);
			*err = ENAMETOOLONG;
			goto out;
		}
		free(rest_copy);
		rest_copy = buf_steal(&todo, NULL);
		rest = rest_copy;
	}
	if (real.len == 0)
		buf_addc(&real, '/');
	*out = buf_steal(&real, NULL);
	r = 0;
out:
	free(rest_copy);
	buf_free(&real);
	return r;
}

int
ap_dir_open(const char *dir, int create, ap_mkdir_cb *made, void *arg, int *err)
{
	const char *rest = dir, *comp;
	char name[NAME_MAX + 1];
	size_t n;
	int fd, next;

	if ((fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		*err = errno;
		return -1;
	}
	while (path_next(&rest, &comp, &n)) {
		if (n > NAME_MAX) {
			close(fd);
			*err = ENAMETOOLONG;
			return -1;
		}
		memcpy(name, comp, n);
		name[n] = '\0';
		next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && create) {
			int mk = mkdirat(fd, name, 0777);

			if (mk == 0 && made != NULL)
				made(arg, dir, (size_t)(comp + n - dir));
			if (mk == 0 || errno == EEXIST)
				next = openat(
					fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0) {
			*err = errno;
			close(fd);
			return -1;
		}
		close(fd);
		fd = next;
	}
	return fd;
}

/* Whether the deepest entry above path is writable (ties: read-only wins). */
static int
path_allowed(const char *path, char *const *w, size_t nw, char *const *ro, size_t nro,
	const char **deny_by)
{
	size_t i, best = 0, len;
	int found = 0, writable = 0;

	for (i = 0; i < nw + nro; i++) {
		const char *e = i < nw ? w[i] : ro[i - nw];

		if (!ap_path_within(path, e))
			continue;
		len = strlen(e);
		if (!found || len > best || (len == best && i >= nw)) {
			writable = i < nw;
			*deny_by = writable ? NULL : e;
			best = len;
			found = 1;
		}
	}
	return found && writable;
}

int
ap_confine_check(
	const struct apply_patch_confine *c, const char *real, enum apply_patch_op op, char **cause)
{
	static const char *const prot[] = {".git", ".codex", ".agents"};
	char **w, **ro, *rp;
	const char *deny_by = NULL;
	size_t i, k, nro = 0;
	int ok, e;

	if (c == NULL)
		return 0;
	if (c->check_cb != NULL) {
		if (c->check_cb(c->arg, real, op, cause) == 0)
			return 0;
		if (*cause == NULL)
			*cause = xasprintf(
				"writing outside of the project: %s is not writable", real);
		return -EACCES;
	}
	w = xcalloc(c->nwritable + 1, sizeof(*w));
	ro = xcalloc(c->nreadonly + 3 * c->nwritable + 1, sizeof(*ro));
	for (i = 0; i < c->nwritable; i++) {
		rp = ap_path_normal(NULL, c->writable[i]);
		if (ap_path_real(rp, 1, &w[i], &e) != 0)
			w[i] = xstrdup(rp);
		free(rp);
		for (k = 0; c->protect_dirs && k < 3; k++)
			ro[nro++] = xasprintf("%s/%s", strcmp(w[i], "/") == 0 ? "" : w[i], prot[k]);
	}
	for (i = 0; i < c->nreadonly; i++) {
		rp = ap_path_normal(NULL, c->readonly[i]);
		if (ap_path_real(rp, 1, &ro[nro], &e) != 0)
			ro[nro] = xstrdup(rp);
		nro++;
		free(rp);
	}
	ok = path_allowed(real, w, c->nwritable, ro, nro, &deny_by);
	if (!ok)
		*cause = deny_by != NULL
			? xasprintf("%s is read-only (inside %s)", real, deny_by)
			: xasprintf("writing outside of the writable roots: %s", real);
	for (i = 0; i < c->nwritable; i++)
		free(w[i]);
	for (i = 0; i < nro; i++)
		free(ro[i]);
	free(w);
	free(ro);
	return ok ? 0 : -EACCES;
}
