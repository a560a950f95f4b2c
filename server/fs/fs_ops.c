/*
 * fs/readFile, fs/writeFile, fs/createDirectory, fs/getMetadata and fs/readDirectory (fs.h);
 * fs/remove and fs/copy live in fs_tree.c.
 *
 * Rules kept here:
 *   - every fd is O_CLOEXEC, and a file is only opened after a stat said it is a regular file
 *     (and with O_NONBLOCK), so a fifo can never block the worker;
 *   - fs/writeFile is atomic: the bytes go to a temporary file in the same directory, are
 *     fsync'd, take the mode (and owner) of the file they replace, and are renamed over it;
 *     a symlink is written through (its target is replaced, the link stays);
 *   - sizes are bounded: FS_READ_MAX, FS_WRITE_MAX, FS_READDIR_MAX.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "fs.h"
#include "protocol/base64.h"
#include "protocol/xmalloc.h"

/* Unix milliseconds of a timespec. */
static json_int_t
fs_ms(const struct timespec *ts)
{
	return (json_int_t)ts->tv_sec * 1000 + ts->tv_nsec / 1000000;
}

/* Read a whole regular file (at most FS_READ_MAX bytes) into a heap buffer. */
static int
fs_slurp(const char *path, char **datap, size_t *lenp, struct fs_err *err)
{
	struct stat st;
	char *data = NULL;
	size_t len = 0;
	int fd = -1, r = -1;

	if (stat(path, &st) < 0) {
		r = fs_err_io(err, errno);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = fs_err_set(err, FS_ERR_REQUEST, "path `%s` is not a file", path);
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = fs_err_io(err, errno);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = fs_err_set(err, FS_ERR_REQUEST, "path `%s` is not a file", path);
		goto out;
	}
	if ((unsigned long long)st.st_size > FS_READ_MAX) {
		r = fs_err_set(err, FS_ERR_REQUEST,
			"fs/readFile: `%s` is %lld bytes, more than the %u-byte limit", path,
			(long long)st.st_size, FS_READ_MAX);
		goto out;
	}
	/* One byte more than the size, to notice a file that grew while we read it. */
	size_t cap = (size_t)st.st_size + 1;
	data = xmalloc(cap);
	for (;;) {
		ssize_t n = read(fd, data + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = fs_err_io(err, errno);
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == cap) {
			if (cap > FS_READ_MAX) {
				r = fs_err_set(err, FS_ERR_REQUEST,
					"fs/readFile: `%s` is more than the %u-byte limit", path,
					FS_READ_MAX);
				goto out;
			}
			cap = cap * 2 > FS_READ_MAX + 1 ? FS_READ_MAX + 1 : cap * 2;
			data = xrealloc(data, cap);
		}
	}
	*datap = data;
	*lenp = len;
	data = NULL;
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	free(data);
	return r;
}

/* fs/readFile: {"dataBase64": ...}. */
int
fs_read_file(const json_t *params, json_t **result, struct fs_err *err)
{
	char *path = NULL, *data = NULL, *enc = NULL;
	size_t len = 0;
	int r;

	if ((r = fs_param_path(params, "path", &path, err)) < 0)
		goto out;
	if ((r = fs_slurp(path, &data, &len, err)) < 0)
		goto out;
	size_t elen = base64_encoded_len(len);
	enc = xmalloc(elen + 1);
	base64_encode(data, len, enc);
	enc[elen] = '\0';
	*result = json_pack("{s:s%}", "dataBase64", enc, elen);
	r = 0;
out:
	free(path);
	free(data);
	free(enc);
	return r;
}

/* fs/readFile's answer as JSON text, the base64 written straight into it (fs.h). */
int
fs_read_file_text(const json_t *params, char **text, size_t *lenp, struct fs_err *err)
{
	static const char head[] = "{\"dataBase64\":\"", tail[] = "\"}";
	char *path = NULL, *data = NULL, *out;
	size_t len = 0;
	int r;

	if ((r = fs_param_path(params, "path", &path, err)) < 0)
		goto out;
	if ((r = fs_slurp(path, &data, &len, err)) < 0)
		goto out;
	size_t elen = base64_encoded_len(len), n = sizeof(head) - 1;
	out = xmalloc(n + elen + sizeof(tail));
	memcpy(out, head, n);
	base64_encode(data, len, out + n);
	memcpy(out + n + elen, tail, sizeof(tail));
	*text = out;
	*lenp = n + elen + sizeof(tail) - 1;
	r = 0;
out:
	free(path);
	free(data);
	return r;
}

/* Write all of buf to fd. */
static int
fs_write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Where a write to path really lands: a symlink is followed (as std::fs::write does) so the
 * rename replaces its target, not the link.
 */
static char *
fs_write_target(const char *path)
{
	struct stat st;
	char *real;

	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && (real = realpath(path, NULL)) != NULL)
		return real;
	return xstrdup(path);
}

/* The atomic replace: temp file beside target, fsync, mode/owner kept, rename, dir fsync. */
static int
fs_replace(const char *target, const char *data, size_t len, struct fs_err *err)
{
	char *dir = xstrdup(target), *tmp = NULL;
	const char *dname;
	struct stat old;
	int fd = -1, r, have_old;

	have_old = stat(target, &old) == 0;
	if (have_old && S_ISDIR(old.st_mode)) {
		r = fs_err_io(err, EISDIR);
		goto out;
	}
	dname = dirname(dir);
	tmp = xasprintf("%s/.%s.XXXXXX", dname, strrchr(target, '/') + 1);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		r = fs_err_io(err, errno == ENAMETOOLONG ? ENAMETOOLONG : errno);
		free(tmp);
		tmp = NULL;
		goto out;
	}
	mode_t mode;
	if (have_old) {
		mode = old.st_mode & 07777;
		if (fchown(fd, old.st_uid, old.st_gid) < 0) {
			/* not ours to give away: keep our ownership, as a plain rewrite would */
		}
	} else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	if (fchmod(fd, mode) < 0 || (r = fs_write_all(fd, data, len)) < 0 || fsync(fd) < 0) {
		r = fs_err_io(err, errno);
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		r = fs_err_io(err, errno);
		goto out;
	}
	fd = -1;
	if (rename(tmp, target) < 0) {
		r = fs_err_io(err, errno);
		goto out;
	}
	free(tmp);
	tmp = NULL;
	int dfd = open(dname, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	if (tmp != NULL)
		unlink(tmp);
	free(tmp);
	free(dir);
	return r;
}

/* fs/writeFile: {} once the new bytes are in place. */
int
fs_write_file(const json_t *params, json_t **result, struct fs_err *err)
{
	const json_t *b64 = json_object_get(params, "dataBase64");
	char *path = NULL, *target = NULL, *data = NULL, *cause = NULL;
	size_t len = 0;
	int r;

	if ((r = fs_param_path(params, "path", &path, err)) < 0)
		goto out;
	size_t n = json_string_length(b64);
	if (base64_decoded_max(n) > FS_WRITE_MAX + 3) {
		r = fs_err_set(err, FS_ERR_REQUEST,
			"fs/writeFile: dataBase64 decodes to more than the %u-byte limit",
			FS_WRITE_MAX);
		goto out;
	}
	data = xmalloc(base64_decoded_max(n) + 1);
	if (base64_decode(json_string_value(b64), n, data, &len, &cause) < 0) {
		r = fs_err_set(err, FS_ERR_REQUEST,
			"fs/writeFile requires valid base64 dataBase64: %s", cause);
		goto out;
	}
	target = fs_write_target(path);
	if ((r = fs_replace(target, data, len, err)) < 0)
		goto out;
	*result = json_object();
	r = 0;
out:
	free(path);
	free(target);
	free(data);
	free(cause);
	return r;
}

/* mkdir -p: every missing component is made; an existing non-directory is EEXIST/ENOTDIR. */
int
fs_mkdir_all(const char *path, char **made)
{
	char *p = xstrdup(path);
	int r = 0;

	if (made != NULL)
		*made = NULL;
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0777) == 0) {
			if (made != NULL && *made == NULL)
				*made = xstrdup(p);
		} else {
			struct stat st;
			if (errno != EEXIST) {
				r = -errno;
				break;
			}
			if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode)) {
				/* Rust's create_dir_all: an existing file is EEXIST at the end, and
				 * ENOTDIR when something must be made below it */
				r = c == '\0' ? -EEXIST : -ENOTDIR;
				break;
			}
		}
		*s = c;
		if (c == '\0')
			break;
	}
	free(p);
	return r;
}

/* fs/createDirectory: recursive by default; without it an existing folder is error 17. */
int
fs_create_directory(const json_t *params, json_t **result, struct fs_err *err)
{
	char *path = NULL;
	int r;

	if ((r = fs_param_path(params, "path", &path, err)) < 0)
		goto out;
	if (fs_param_bool(params, "recursive", 1))
		r = fs_mkdir_all(path, NULL);
	else
		r = mkdir(path, 0777) < 0 ? -errno : 0;
	if (r < 0) {
		r = fs_err_io(err, -r);
		goto out;
	}
	*result = json_object();
out:
	free(path);
	return r;
}

/* fs/getMetadata: follows symlinks (times of the target), createdAtMs is always 0. */
int
fs_get_metadata(const json_t *params, json_t **result, struct fs_err *err)
{
	struct stat lst, st;
	char *path = NULL;
	int r;

	if ((r = fs_param_path(params, "path", &path, err)) < 0)
		goto out;
	if (lstat(path, &lst) < 0 || stat(path, &st) < 0) {
		r = fs_err_io(err, errno);
		goto out;
	}
	*result = json_pack("{s:b,s:b,s:b,s:I,s:I}", "isDirectory", S_ISDIR(st.st_mode), "isFile",
		S_ISREG(st.st_mode), "isSymlink", S_ISLNK(lst.st_mode), "createdAtMs",
		(json_int_t)0, "modifiedAtMs", fs_ms(&st.st_mtim));
	r = 0;
out:
	free(path);
	return r;
}

/* fs/readDirectory: raw disk order; entries whose target cannot be stat'ed are left out. */
int
fs_read_directory(const json_t *params, json_t **result, struct fs_err *err)
{
	json_t *entries = NULL;
	char *path = NULL;
	DIR *d = NULL;
	int fd = -1, r;

	if ((r = fs_param_path(params, "path", &path, err)) < 0)
		goto out;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		r = fs_err_io(err, errno);
		goto out;
	}
	fd = -1; /* owned by d */
	entries = json_array();
	struct dirent *de;
	while ((errno = 0, de = readdir(d)) != NULL) {
		struct stat st;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) < 0)
			continue; /* dangling or looping symlink, or gone */
		if (json_array_size(entries) >= FS_READDIR_MAX) {
			r = fs_err_set(err, FS_ERR_REQUEST,
				"fs/readDirectory: `%s` has more than %d entries", path,
				FS_READDIR_MAX);
			goto out;
		}
		json_array_append_new(entries,
			json_pack("{s:s,s:b,s:b}", "fileName", de->d_name, "isDirectory",
				S_ISDIR(st.st_mode), "isFile", S_ISREG(st.st_mode)));
	}
	if (errno != 0) {
		r = fs_err_io(err, errno);
		goto out;
	}
	*result = json_pack("{s:O}", "entries", entries);
	r = 0;
out:
	json_decref(entries);
	if (d != NULL)
		closedir(d);
	if (fd >= 0)
		close(fd);
	free(path);
	return r;
}

/* The method table: one entry per fs operation. */
static const struct {
	const char *method;
	fs_op_fn fn;
} fs_ops[] = {
	{"fs/readFile", fs_read_file},
	{"fs/writeFile", fs_write_file},
	{"fs/createDirectory", fs_create_directory},
	{"fs/getMetadata", fs_get_metadata},
	{"fs/readDirectory", fs_read_directory},
	{"fs/remove", fs_remove},
	{"fs/copy", fs_copy},
};

/* The operation for a method name, so the api layer can dispatch by name. */
fs_op_fn
fs_op_lookup(const char *method)
{
	for (size_t i = 0; i < nitems(fs_ops); i++) {
		if (strcmp(fs_ops[i].method, method) == 0)
			return fs_ops[i].fn;
	}
	return NULL;
}
