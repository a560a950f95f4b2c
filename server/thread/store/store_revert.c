/*
 * thread/revert on the store: a loaded thread's rollout becomes the records before one turn.
 *
 * Upstream 0.169 writes a new rollout file per revert (`rollout-<time>-<id>_<rollout id>.jsonl`)
 * whose session_meta.history_base names the prefix of the previous file it continues. Here the
 * thread keeps one file: the prefix is copied byte for byte (ordinals and timestamps kept) into
 * a hidden file beside it, synced on the store's sync worker, then renamed over the rollout, so
 * every reader (history, paging, the index, resume, upstream's own reader) sees a plain rollout
 * without the reverted turns, and a crash leaves either the old file or the new one whole.
 *
 * Order, so that nothing is lost or interleaved:
 *   1. the prefix is copied (page cache, on the loop) and the thread refuses appends;
 *   2. the copy is fdatasync'ed on the sync worker;
 *   3. back on the loop: a writer opens the copy (taking its active-writer lock before the copy
 *      is visible), the copy is renamed over the rollout, the old writer closes, the cached
 *      turn index is dropped, the index row refreshed and the folder synced in the background.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store_int.h"
#include "protocol/xmalloc.h"
#include "thread/rollout/rollout.h"

struct store_revert_job {
	struct store *s;
	char id[37];
	char *path, *tmp;
	store_revert_fn cb;
	void *arg;
};

/* The hidden name of the copy: a dot file in the rollout's folder, which no scan reads. */
static char *
store_revert_tmp_path(const char *path)
{
	const char *slash = strrchr(path, '/');
	int dir = slash != NULL ? (int)(slash - path) : 0;

	return xasprintf("%.*s/.%s.revert", dir, path, slash != NULL ? slash + 1 : path);
}

/* Copy the first `len` bytes of src into the new file dst; its fd (open) to *fdp; 0 or -errno. */
static int
store_revert_copy(const char *src, const char *dst, off_t len, int *fdp)
{
	char buf[65536];
	int in, out, r = 0;
	off_t done = 0;

	if ((in = open(src, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	/* O_TRUNC: a copy left by a crash in the middle of an earlier revert is stale */
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (out < 0) {
		r = -errno;
		close(in);
		return r;
	}
	while (done < len && r == 0) {
		size_t want = (size_t)(len - done) < sizeof buf ? (size_t)(len - done) : sizeof buf;
		ssize_t n = pread(in, buf, want, done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO; /* the file shrank under us */
			break;
		}
		for (ssize_t off = 0; off < n && r == 0;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				r = -errno;
			else
				off += w;
		}
		done += n;
	}
	close(in);
	if (r != 0) {
		close(out);
		unlink(dst);
		return r;
	}
	*fdp = out;
	return 0;
}

static void
store_revert_job_free(struct store_revert_job *j)
{
	free(j->path);
	free(j->tmp);
	free(j);
}

/* Report a failure (cause stolen) and free the job. */
static void
store_revert_fail(struct store_revert_job *j, int r, char *cause)
{
	j->cb(j->arg, r, cause);
	free(cause);
	store_revert_job_free(j);
}

/* Step 3, on the loop once the copy is on disk. */
static void
store_revert_synced(void *arg, int r)
{
	struct store_revert_job *j = arg;
	struct store_thread *t = store_loaded(j->s, j->id);
	struct rollout_writer *w = NULL;
	char *cause = NULL;

	if (t != NULL)
		t->reverting = 0;
	if (t == NULL || t->w == NULL || strcmp(rollout_writer_path(t->w), j->path) != 0) {
		/* unloaded, archived or deleted meanwhile: the revert has nothing left to replace
		 */
		unlink(j->tmp);
		store_revert_fail(j, -ENOENT, xasprintf("thread not found: %s", j->id));
		return;
	}
	if (r != 0) {
		unlink(j->tmp);
		store_revert_fail(j, r, xasprintf("failed to write %s: %s", j->tmp, strerror(-r)));
		return;
	}
	if ((r = rollout_writer_open(j->tmp, &w, &cause)) != 0 || rename(j->tmp, j->path) != 0) {
		if (r == 0)
			r = -errno;
		rollout_writer_close(w);
		unlink(j->tmp);
		store_revert_fail(j, r,
			xasprintf("failed to replace %s: %s", j->path,
				cause != NULL ? cause : strerror(-r)));
		free(cause);
		return;
	}
	rollout_writer_renamed(w, j->path);
	rollout_writer_close(t->w);
	t->w = w;
	t->meta.updated_ms = rollout_now_ms();
	store_turnidx_forget(j->s, j->path);
	store_index_put(t);
	/* the rename itself: the folder's entry (the file's data was synced in step 2) */
	store_post_sync(j->s, -1, j->path, 1, NULL, NULL);
	j->cb(j->arg, 0, NULL);
	store_revert_job_free(j);
}

/* Where before_turn_id's span starts in the thread's rollout: >= 0, -1 (no such turn), -EIO. */
static off_t
store_revert_start(struct store_thread *t, const char *turn_id)
{
	struct store_turnidx *ix;

	if (t->w == NULL || turn_id == NULL)
		return -1;
	if ((ix = store_turnidx_get(t->s, rollout_writer_path(t->w))) == NULL)
		return -EIO;
	for (size_t i = 0; i < ix->n; i++)
		if (strcmp(ix->v[i].id, turn_id) == 0)
			return ix->v[i].start;
	return -1;
}

int
store_thread_has_turn(struct store_thread *t, const char *turn_id)
{
	return store_revert_start(t, turn_id) >= 0;
}

int
store_revert(struct store_thread *t, const char *before_turn_id, store_revert_fn cb, void *arg,
	char **cause)
{
	struct store_revert_job *j;
	const char *path;
	off_t start;
	int r, fd = -1;

	if (t->w == NULL) {
		*cause = xasprintf(
			"thread %s is ephemeral: it has no history to revert", t->meta.id);
		return -EINVAL;
	}
	if (t->reverting) {
		*cause = xasprintf("thread %s is being reverted", t->meta.id);
		return -EBUSY;
	}
	path = rollout_writer_path(t->w);
	if ((start = store_revert_start(t, before_turn_id)) == -EIO) {
		*cause = xasprintf("failed to read %s", path);
		return -EIO;
	}
	if (start < 0) {
		*cause = xasprintf("turn not found: %s", before_turn_id);
		return -EINVAL;
	}
	j = xcalloc(1, sizeof *j);
	j->s = t->s;
	snprintf(j->id, sizeof j->id, "%s", t->meta.id);
	j->path = xstrdup(path);
	j->tmp = store_revert_tmp_path(path);
	j->cb = cb;
	j->arg = arg;
	if ((r = store_revert_copy(path, j->tmp, start, &fd)) != 0) {
		*cause = xasprintf("failed to write %s: %s", j->tmp, strerror(-r));
		store_revert_job_free(j);
		return r;
	}
	t->reverting = 1;
	store_post_sync(t->s, fd, NULL, 0, store_revert_synced, j);
	return 0;
}
