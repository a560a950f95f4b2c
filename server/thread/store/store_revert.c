/*
 * thread/revert on the store: a loaded thread continues in a new segment file holding the
 * history before one turn, as upstream 0.169 keeps it (rollout_chain.h):
 *   sessions/YYYY/MM/DD/rollout-<now>-<thread id>_<new rollout id>.jsonl
 * whose session_meta (the current file's, stamped now) carries history_base {thread_id: the
 * rollout id of the file the kept history ends in, end_ordinal_exclusive: the reverted turn's
 * first ordinal, end_byte_offset: where that turn starts in that file}; its records are numbered
 * on from there. Reverting the first turn keeps nothing: a fresh file, ordinals from 0, no
 * history_base. Every older file stays as it was, so the reverted turns are still on disk, and
 * upstream reads our segments as we read its.
 *
 * Order, so that a crash leaves the old state or the new one, whole:
 *   1. the segment is written out of sight (O_TMPFILE, rollout_writer_create_hidden, holding
 *      its active-writer lock from the start) with its session_meta and thread_settings_applied,
 *      and the thread refuses appends;
 *   2. its data is fdatasync'ed on the sync worker;
 *   3. back on the loop it is linked at its name (from then on the newest segment is the
 *      thread's file), the old writer closes (its lock goes), the index row names the new file,
 *      and the folders are synced in the background.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "protocol/xmalloc.h"
#include "thread/rollout/rollout.h"
#include "thread/rollout/rollout_chain.h"
#include "thread/rollout/rollout_reader.h"
#include "thread/rollout/rollout_summary.h"
#include "thread/uuidv7.h"

struct store_revert_job {
	struct store *s;
	char id[37];
	char *old_path;		  /* the thread's file when the revert began */
	struct rollout_writer *w; /* the new segment's, hidden until step 3 */
	int64_t ms;
	store_revert_fn cb;
	void *arg;
};

static void
store_revert_job_free(struct store_revert_job *j)
{
	rollout_writer_close(j->w); /* an unpublished segment vanishes with its fd */
	free(j->old_path);
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

/* What the cut changed in the listing: the preview (the first user message kept), tokens. */
static void
store_revert_summary(struct store_thread *t)
{
	struct thread_meta m;

	if (rollout_summarize(t->meta.path, &m) != 0)
		return;
	thread_meta_set(&t->meta.preview, m.preview);
	t->meta.has_user_message = m.has_user_message;
	t->meta.tokens = m.tokens;
	thread_meta_clear(&m);
}

/* Step 3, on the loop once the segment's data is on disk. */
static void
store_revert_synced(void *arg, int r)
{
	struct store_revert_job *j = arg;
	struct store_thread *t = store_loaded(j->s, j->id);
	char *cause = NULL;

	if (t != NULL)
		t->reverting = 0;
	if (t == NULL || t->w == NULL || strcmp(rollout_writer_path(t->w), j->old_path) != 0) {
		/* unloaded, archived or deleted meanwhile: the revert has nothing left to extend */
		store_revert_fail(j, -ENOENT, xasprintf("thread not found: %s", j->id));
		return;
	}
	if (r != 0) {
		store_revert_fail(j, r,
			xasprintf(
				"failed to write %s: %s", rollout_writer_path(j->w), strerror(-r)));
		return;
	}
	if ((r = rollout_writer_publish(j->w, &cause)) != 0) {
		store_revert_fail(j, r, cause);
		return;
	}
	rollout_writer_close(t->w);
	t->w = j->w;
	j->w = NULL;
	thread_meta_set(&t->meta.path, rollout_writer_path(t->w));
	/* upstream shows the segment's session_meta time as the thread's createdAt */
	t->meta.created_ms = t->meta.updated_ms = j->ms;
	store_turnidx_forget(j->s, j->old_path);
	store_revert_summary(t);
	store_index_put(t);
	/* the new name, and the day folder (maybe new) with the ones above it */
	store_post_sync(j->s, -1, t->meta.path, 4, NULL, NULL);
	j->cb(j->arg, 0, NULL);
	store_revert_job_free(j);
}

/*
 * Where before_turn_id's span starts in the thread's history (*start: a virtual offset of its
 * chain, negative when in a base) and whether it is the first turn: 0, -ENOENT (no such turn),
 * -EIO.
 */
static int
store_revert_start(struct store_thread *t, const char *turn_id, off_t *start, int *first)
{
	struct store_turnidx *ix;

	if (t->w == NULL || turn_id == NULL)
		return -ENOENT;
	if ((ix = store_turnidx_get(t->s, rollout_writer_path(t->w))) == NULL)
		return -EIO;
	for (size_t i = 0; i < ix->n; i++)
		if (strcmp(ix->v[i].id, turn_id) == 0) {
			*first = i == 0;
			*start = ix->v[i].start;
			return 0;
		}
	return -ENOENT;
}

int
store_thread_has_turn(struct store_thread *t, const char *turn_id)
{
	off_t start;
	int first;

	return store_revert_start(t, turn_id, &start, &first) == 0;
}

/*
 * The history_base of a cut at virtual offset start of path's chain: the file it falls in, the
 * offset there, and the ordinal of the record starting there. 0 or -EIO.
 */
static int
store_revert_base(const char *path, off_t start, json_t **base, int64_t *ordinal)
{
	struct rollout_chain *c = NULL;
	struct rollout_reader *r = NULL;
	struct rollout_rec rec;
	off_t real;
	int part, e = -EIO;

	if (rollout_chain_open(path, -1, &c) != 0)
		return -EIO;
	if ((part = rollout_chain_locate(c, start, &real)) < 0 || c->v[part].rid[0] == '\0')
		goto out;
	if (rollout_reader_open(path, start, -1, &r) != 0 || rollout_reader_next(r, &rec) != 1)
		goto out;
	*ordinal = rec.ordinal;
	*base = json_pack("{s:s, s:I, s:I}", "thread_id", c->v[part].rid, "end_ordinal_exclusive",
		(json_int_t)(rec.ordinal >= 0 ? rec.ordinal : 0), "end_byte_offset",
		(json_int_t)real);
	e = 0;
out:
	rollout_reader_close(r);
	rollout_chain_free(c);
	return e;
}

/*
 * Steps 1 and 2: the segment's head written out of sight, its sync posted. head is the current
 * file's session_meta record (borrowed; its payload is changed).
 */
static int
store_revert_write(struct store_thread *t, struct store_revert_job *j, json_t *head, json_t *base,
	int64_t ordinal, char **cause)
{
	json_t *payload = json_object_get(head, "payload"), *set;
	struct record_settings rs = store_thread_rs(t);
	char rid[UUID_STRLEN + 1], ts[ROLLOUT_TS_LEN + 1], *name, *path;
	int r, fd;

	rollout_ts_format(j->ms, ts);
	json_object_set_new(payload, "timestamp", json_string(ts));
	if (base != NULL)
		json_object_set(payload, "history_base", base);
	else
		json_object_del(payload, "history_base");
	uuidv7_new_at(rid, j->ms);
	name = xasprintf("%s_%s", t->meta.id, rid);
	path = rollout_path_new(t->s->home, name, j->ms);
	free(name);
	if ((r = rollout_writer_create_hidden(path, &j->w, cause)) != 0) {
		free(path);
		return r;
	}
	rollout_writer_set_ordinal(j->w, ordinal);
	set = record_settings_applied(t->meta.id, &rs);
	r = rollout_writer_append(j->w, j->ms, "session_meta", payload);
	if (r == 0)
		r = rollout_writer_append(j->w, j->ms, "event_msg", set);
	json_decref(set);
	if (r != 0 || (fd = rollout_writer_dupfd(j->w)) < 0) {
		r = r != 0 ? r : -EIO;
		*cause = xasprintf("failed to write rollout %s: %s", path, strerror(-r));
		free(path);
		return r;
	}
	free(path);
	t->reverting = 1;
	store_post_sync(t->s, fd, NULL, 0, store_revert_synced, j);
	return 0;
}

int
store_revert(struct store_thread *t, const char *before_turn_id, store_revert_fn cb, void *arg,
	char **cause)
{
	struct store_revert_job *j;
	json_t *head = NULL, *base = NULL;
	const char *path;
	int64_t ordinal = 0;
	off_t start = 0;
	int r, first = 0;

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
	if ((r = store_revert_start(t, before_turn_id, &start, &first)) == -EIO) {
		*cause = xasprintf("failed to read %s", path);
		return -EIO;
	}
	if (r != 0) {
		*cause = xasprintf("turn not found: %s", before_turn_id);
		return -EINVAL;
	}
	head = rollout_chain_head(path);
	if (head == NULL || !json_is_object(json_object_get(head, "payload")) ||
		(!first && store_revert_base(path, start, &base, &ordinal) != 0)) {
		json_decref(head);
		*cause = xasprintf("failed to read %s", path);
		return -EIO;
	}
	j = xcalloc(1, sizeof *j);
	j->s = t->s;
	snprintf(j->id, sizeof j->id, "%s", t->meta.id);
	j->old_path = xstrdup(path);
	j->ms = rollout_now_ms();
	j->cb = cb;
	j->arg = arg;
	r = store_revert_write(t, j, head, base, first ? 0 : ordinal, cause);
	json_decref(head);
	json_decref(base);
	if (r != 0)
		store_revert_job_free(j);
	return r;
}
