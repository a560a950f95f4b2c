/*
 * The rollout writer (rollout_writer.h). Every line is assembled in one bounded buffer and
 * leaves in a single write(2); `size` always ends on a line boundary, so a failed or short write
 * can be cut back to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "protocol/buf.h"
#include "rollout.h"
#include "rollout_lock.h"
#include "rollout_reader.h"
#include "rollout_writer.h"
#include "protocol/xmalloc.h"

#define WRITER_KEEP 4096 /* line buffer kept between records */

struct rollout_writer {
	int fd; /* -1 while suspended */
	char *path;
	int hidden;	/* made by rollout_writer_create_hidden, not published yet */
	char *tmp_path; /* hidden without O_TMPFILE: the temporary name it has */
	off_t size;
	int64_t next_ordinal; /* -1: the file has no ordinals */
	uint64_t count;
	struct buf line;
};

static int rollout_writer_recover(struct rollout_writer *w);

/*
 * The active-writer lock on a new or reopened fd; -EBUSY names the process that has it. A
 * holder that is gone (killed) still holds it through a child it forked that has not exec'd
 * or ended yet (a sandbox's set-up: its fds close at exec): -EAGAIN, it clears in a moment.
 */
static int
rollout_writer_lock(int fd, const char *path, char **cause)
{
	pid_t holder;
	int r = rollout_lock(fd, &holder);
	char *who;

	if (r == 0)
		return 0;
	if (r == -EBUSY && holder > 0 && kill(holder, 0) != 0 && errno == ESRCH)
		r = -EAGAIN;
	if (cause != NULL && (r == -EBUSY || r == -EAGAIN)) {
		who = rollout_lock_who(holder);
		*cause = xasprintf("%s is writing %s", who, path);
		free(who);
	} else if (cause != NULL) {
		*cause = xasprintf("failed to lock %s: %s", path, strerror(-r));
	}
	return r;
}

int rollout_writer_no_tmpfile;

/* A writer around an open fd. */
static struct rollout_writer *
rollout_writer_wrap(int fd, const char *path, off_t size, int64_t next_ordinal)
{
	struct rollout_writer *w = xcalloc(1, sizeof *w);

	w->fd = fd;
	w->path = xstrdup(path);
	w->size = size;
	w->next_ordinal = next_ordinal;
	buf_init(&w->line, ROLLOUT_LINE_MAX);
	return w;
}

/* New file, ordinals from 0 (upstream's paginated history mode). */
int
rollout_writer_create(const char *path, struct rollout_writer **out, char **cause)
{
	int r, fd;

	if ((r = rollout_mkdirs(path)) != 0) {
		*cause = xasprintf("failed to create directory for %s: %s", path, strerror(-r));
		return r;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = -errno;
		*cause = xasprintf("failed to create %s: %s", path, strerror(errno));
		return r;
	}
	if ((r = rollout_writer_lock(fd, path, cause)) != 0) {
		close(fd);
		unlink(path);
		return r;
	}
	*out = rollout_writer_wrap(fd, path, 0, 0);
	return 0;
}

int
rollout_writer_create_hidden(const char *path, struct rollout_writer **out, char **cause)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/'), *tmp = NULL;
	int r, fd;

	if ((r = rollout_mkdirs(path)) != 0) {
		*cause = xasprintf("failed to create directory for %s: %s", path, strerror(-r));
		free(dir);
		return r;
	}
	if (access(path, F_OK) == 0) {
		*cause = xasprintf("failed to create %s: %s", path, strerror(EEXIST));
		free(dir);
		return -EEXIST;
	}
	if (slash != NULL)
		*slash = '\0';
	/* Unnamed in its folder: a crash before the link leaves nothing behind. */
	if (rollout_writer_no_tmpfile) {
		fd = -1;
		errno = EOPNOTSUPP;
	} else
		fd = open(slash != NULL ? dir : ".", O_WRONLY | O_TMPFILE | O_APPEND | O_CLOEXEC,
			0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		/* A filesystem without O_TMPFILE: a dot name no scan reads, linked on publish. */
		tmp = xasprintf(
			"%s/.%s.tmp", slash != NULL ? dir : ".", slash != NULL ? slash + 1 : path);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0600);
	}
	free(dir);
	if (fd < 0) {
		r = -errno;
		*cause = xasprintf("failed to create %s: %s", path, strerror(errno));
		free(tmp);
		return r;
	}
	if ((r = rollout_writer_lock(fd, path, cause)) != 0) {
		close(fd);
		if (tmp != NULL)
			unlink(tmp);
		free(tmp);
		return r;
	}
	*out = rollout_writer_wrap(fd, path, 0, 0);
	(*out)->hidden = 1;
	(*out)->tmp_path = tmp;
	return 0;
}

int
rollout_writer_publish(struct rollout_writer *w, char **cause)
{
	char proc[64];
	int r;

	if (!w->hidden)
		return 0;
	if (w->tmp_path != NULL) {
		/* link, not rename: an existing file at path is never replaced */
		r = link(w->tmp_path, w->path) == 0 ? 0 : -errno;
		unlink(w->tmp_path);
	} else {
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", w->fd);
		r = linkat(AT_FDCWD, proc, AT_FDCWD, w->path, AT_SYMLINK_FOLLOW) == 0 ? 0 : -errno;
		if (r == -ENOENT && linkat(w->fd, "", AT_FDCWD, w->path, AT_EMPTY_PATH) == 0)
			r = 0; /* no /proc: the privileged way */
	}
	free(w->tmp_path);
	w->tmp_path = NULL;
	if (r != 0) {
		*cause = xasprintf("failed to create %s: %s", w->path, strerror(-r));
		return r;
	}
	w->hidden = 0;
	return 0;
}

int
rollout_writer_published(struct rollout_writer *w)
{
	return !w->hidden;
}

/* Find the ordinal of the last valid record: the first line a backwards scan can parse. */
static int
rollout_writer_last_cb(void *arg, const char *line, size_t len, off_t off)
{
	int64_t *next = arg;
	json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	json_t *ord;

	if (root == NULL || !json_is_object(root)) {
		json_decref(root);
		return 0; /* not a record: look further back */
	}
	ord = json_object_get(root, "ordinal");
	*next = json_is_integer(ord) && json_integer_value(ord) >= 0 ? json_integer_value(ord) + 1
								     : -1;
	json_decref(root);
	return 1;
}

/* Existing file: cut a torn tail, continue the ordinals. */
int
rollout_writer_open(const char *path, struct rollout_writer **out, char **cause)
{
	struct rollout_writer *w;
	int r, fd;

	fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		*cause = xasprintf("failed to open %s: %s", path, strerror(errno));
		return r;
	}
	/* The lock first: the tail is only cut when no one else is writing it. */
	if ((r = rollout_writer_lock(fd, path, cause)) != 0) {
		close(fd);
		return r;
	}
	w = rollout_writer_wrap(fd, path, -1, -1);
	if ((r = rollout_writer_recover(w)) != 0) {
		*cause = xasprintf("failed to open %s for appending: %s", path, strerror(-r));
		rollout_writer_close(w);
		return r;
	}
	*out = w;
	return 0;
}

/* jansson's dump callback into the line buffer. */
static int
rollout_writer_dump_cb(const char *p, size_t n, void *arg)
{
	return buf_add(arg, p, n) == 0 ? 0 : -1;
}

/* Find where whole lines end and the next ordinal, cutting a torn tail (open, resume). */
static int
rollout_writer_recover(struct rollout_writer *w)
{
	off_t good;
	int r;

	if ((r = rollout_good_end(w->fd, &good)) != 0 || (r = rollout_cut_torn(w->fd, good)) != 0)
		return r;
	if (good != w->size) {
		/* Someone else appended (or the file is new to us): read the ordinal back. */
		int64_t next = -1;

		if (good > 0 &&
			rollout_scan_back(
				w->fd, good, ROLLOUT_BACK_MAX, rollout_writer_last_cb, &next) < 0)
			next = -1;
		w->next_ordinal = next;
		w->size = good;
	}
	return 0;
}

/* Reopen a suspended writer's file. */
static int
rollout_writer_wake(struct rollout_writer *w)
{
	int fd, r;

	if (w->fd >= 0)
		return 0;
	if ((fd = open(w->path, O_RDWR | O_APPEND | O_CLOEXEC)) < 0)
		return -errno;
	/* Suspended, the lock was given back: another daemon may have taken the thread since. */
	if ((r = rollout_writer_lock(fd, w->path, NULL)) != 0) {
		close(fd);
		return r;
	}
	w->fd = fd;
	return rollout_writer_recover(w);
}

/* One write(2) of the whole line; a short write is cut back so the file stays whole lines. */
static int
rollout_writer_emit(struct rollout_writer *w, const char *p, size_t n)
{
	ssize_t k;
	int e;

	if ((e = rollout_writer_wake(w)) != 0)
		return e;

	do
		k = write(w->fd, p, n);
	while (k < 0 && errno == EINTR);
	if (k == (ssize_t)n) {
		w->size += (off_t)n;
		return 0;
	}
	int r = k < 0 ? -errno : -EIO;
	if (k > 0 && ftruncate(w->fd, w->size) != 0)
		r = -errno;
	return r;
}

/* Build the record line and write it. */
int
rollout_writer_append(struct rollout_writer *w, int64_t ms, const char *type, json_t *payload)
{
	char ts[ROLLOUT_TS_LEN + 1];
	json_t *type_s = json_string(type);
	int r = -E2BIG;

	if ((r = rollout_writer_wake(w)) != 0) /* the ordinal may have moved while asleep */
		goto out;
	r = -E2BIG;
	rollout_ts_format(ms != 0 ? ms : rollout_now_ms(), ts);
	buf_reset(&w->line);
	if (buf_printf(&w->line, "{\"timestamp\":\"%s\",", ts) != 0)
		goto out;
	if (w->next_ordinal >= 0 &&
		buf_printf(&w->line, "\"ordinal\":%lld,", (long long)w->next_ordinal) != 0)
		goto out;
	if (buf_adds(&w->line, "\"type\":") != 0 ||
		json_dump_callback(type_s, rollout_writer_dump_cb, &w->line,
			JSON_ENCODE_ANY | JSON_COMPACT) != 0 ||
		buf_adds(&w->line, ",\"payload\":") != 0 ||
		json_dump_callback(payload, rollout_writer_dump_cb, &w->line,
			JSON_ENCODE_ANY | JSON_COMPACT) != 0 ||
		buf_adds(&w->line, "}\n") != 0)
		goto out;
	if ((r = rollout_writer_emit(w, w->line.ptr, w->line.len)) != 0)
		goto out;
	if (w->next_ordinal >= 0)
		w->next_ordinal++;
	w->count++;
out:
	json_decref(type_s);
	if (w->line.cap > WRITER_KEEP)
		buf_free(&w->line); /* an idle thread keeps at most WRITER_KEEP bytes */
	return r;
}

/* A copied record: renumbered, serialised whole, one write. */
int
rollout_writer_append_root(struct rollout_writer *w, json_t *root)
{
	int r;

	if ((r = rollout_writer_wake(w)) != 0)
		return r;
	r = -E2BIG;
	if (w->next_ordinal >= 0)
		json_object_set_new(root, "ordinal", json_integer(w->next_ordinal));
	else
		json_object_del(root, "ordinal");
	buf_reset(&w->line);
	if (json_dump_callback(root, rollout_writer_dump_cb, &w->line, JSON_COMPACT) != 0 ||
		buf_addc(&w->line, '\n') != 0)
		goto out;
	if ((r = rollout_writer_emit(w, w->line.ptr, w->line.len)) != 0)
		goto out;
	if (w->next_ordinal >= 0)
		w->next_ordinal++;
	w->count++;
out:
	if (w->line.cap > WRITER_KEEP)
		buf_free(&w->line);
	return r;
}

/* For fdatasync on the worker thread (a suspended writer's file is opened for it). */
int
rollout_writer_dupfd(struct rollout_writer *w)
{
	int fd =
		w->fd >= 0 ? fcntl(w->fd, F_DUPFD_CLOEXEC, 0) : open(w->path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* Give the fd back while idle; the next append reopens and re-checks the file. */
void
rollout_writer_suspend(struct rollout_writer *w)
{
	if (w->hidden)
		return; /* an unnamed file lives only through its fd */
	if (w->fd >= 0) {
		rollout_unlock(w->fd);
		close(w->fd);
		w->fd = -1;
	}
	buf_free(&w->line);
}

int
rollout_writer_suspended(struct rollout_writer *w)
{
	return w->fd < 0;
}

const char *
rollout_writer_path(struct rollout_writer *w)
{
	return w->path;
}

/* The file moved (archive): remember its new name. */
void
rollout_writer_renamed(struct rollout_writer *w, const char *path)
{
	free(w->path);
	w->path = xstrdup(path);
}

int
rollout_writer_stat(struct rollout_writer *w, int64_t *size, int64_t *mtime_ns)
{
	struct stat st;

	if ((w->fd >= 0 ? fstat(w->fd, &st) : stat(w->path, &st)) != 0)
		return -errno;
	*size = st.st_size;
	*mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return 0;
}

off_t
rollout_writer_size(struct rollout_writer *w)
{
	return w->size;
}

void
rollout_writer_set_ordinal(struct rollout_writer *w, int64_t next)
{
	w->next_ordinal = next;
}

int64_t
rollout_writer_next_ordinal(struct rollout_writer *w)
{
	return w->next_ordinal;
}

uint64_t
rollout_writer_count(struct rollout_writer *w)
{
	return w->count;
}

/* Close the fd and free. */
void
rollout_writer_close(struct rollout_writer *w)
{
	if (w == NULL)
		return;
	if (w->fd >= 0) {
		rollout_unlock(w->fd);
		close(w->fd);
	}
	if (w->tmp_path != NULL)
		unlink(w->tmp_path); /* never published */
	free(w->tmp_path);
	buf_free(&w->line);
	free(w->path);
	free(w);
}
