/*
 * Thread attachments on the loop's side (attachments.h): upstream's checks in its order
 * and words (the names and the payload's size first, then the thread), then one job of the
 * index worker (index/tattach.c does the SQL), answered on the loop.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attachments.h"
#include "protocol/xmalloc.h"
#include "thread/index/tattach.h"
#include "thread/rollout/rollout.h"
#include "thread/store/store_jobs.h"
#include "thread/uuidv7.h"

#define ATTACH_SPACE " \t\r\n\v\f"

enum attach_op { ATTACH_ADD, ATTACH_REMOVE, ATTACH_LIST, ATTACH_OWNERS, ATTACH_FORGET };

/* One request on its way to the worker and back. */
struct attach_job {
	enum attach_op op;
	char thread[UUID_STRLEN + 1], id[UUID_STRLEN + 1];
	char *type, *identity, *payload, *cursor, *next, *cause, *removed;
	int limit, archived, created;
	int64_t now_ms;
	json_t *result; /* add: the attachment; lists: the page's data */
	store_attach_fn cb;
	void *arg;
};

static void
attach_job_free(struct attach_job *j)
{
	free(j->type);
	free(j->identity);
	free(j->payload);
	free(j->cursor);
	free(j->next);
	free(j->cause);
	free(j->removed);
	json_decref(j->result);
	free(j);
}

static int
attach_run(struct tindex *x, void *arg)
{
	struct attach_job *j = arg;
	int r;

	if (x == NULL) {
		j->cause = xstrdup("thread index unavailable");
		return -EIO;
	}
	switch (j->op) {
	case ATTACH_ADD:
		r = tattach_add(x, j->thread, j->type, j->identity, j->id, j->payload, j->now_ms,
			&j->result, &j->created);
		if (r == -EMLINK) {
			j->cause = xasprintf(
				"thread attachment identity count exceeds %d", TATTACH_PER_THREAD);
			r = -ERANGE;
		}
		return r;
	case ATTACH_REMOVE:
		return tattach_remove(x, j->thread, j->type, j->identity, &j->removed);
	case ATTACH_LIST:
		r = tattach_list(x, j->thread, j->cursor, j->limit, &j->result, &j->next);
		break;
	case ATTACH_OWNERS:
		r = tattach_owners(x, j->type, j->identity, j->archived, j->cursor, j->limit,
			&j->result, &j->next);
		break;
	case ATTACH_FORGET:
		return tattach_forget(x, j->thread);
	default:
		return -EINVAL;
	}
	if (r == -ERANGE)
		j->cause = xstrdup("invalid pagination cursor");
	return r;
}

/* thread/attachment/updated's params (upstream's member order). */
static json_t *
attach_updated(struct attach_job *j, const char *id, const char *operation)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:s}", "threadId", j->thread, "attachmentType", j->type,
		"identityKey", j->identity, "attachmentId", id, "operation", operation);
}

static void
attach_done(void *arg, int r)
{
	struct attach_job *j = arg;
	json_t *result = NULL, *updated = NULL;

	if (j->cb == NULL) {
		attach_job_free(j);
		return;
	}
	if (r != 0) {
		j->cb(j->arg, r, NULL, NULL, j->cause ? j->cause : "thread index unavailable");
		attach_job_free(j);
		return;
	}
	switch (j->op) {
	case ATTACH_ADD:
		result = json_pack("{s:s,s:O}", "outcome", j->created ? "created" : "existing",
			"attachment", j->result);
		if (j->created)
			updated = attach_updated(j, j->id, "created");
		break;
	case ATTACH_REMOVE:
		result = json_object();
		if (j->removed != NULL)
			updated = attach_updated(j, j->removed, "deleted");
		break;
	default:
		result = json_pack("{s:O,s:o}", "data", j->result, "nextCursor",
			j->next ? json_string(j->next) : json_null());
		break;
	}
	j->cb(j->arg, 0, result, updated, NULL);
	attach_job_free(j);
}

static struct attach_job *
attach_job(enum attach_op op, store_attach_fn cb, void *arg)
{
	struct attach_job *j = xcalloc(1, sizeof *j);

	j->op = op;
	j->cb = cb;
	j->arg = arg;
	j->now_ms = rollout_now_ms();
	j->archived = -1;
	return j;
}

static void
attach_refuse(store_attach_fn cb, void *arg, char *cause)
{
	cb(arg, -ERANGE, NULL, NULL, cause);
	free(cause);
}

/* Upstream's checks of an identity: neither part blank, each at most 256 bytes. */
static char *
attach_check_names(const char *type, const char *identity)
{
	if (type[strspn(type, ATTACH_SPACE)] == '\0')
		return xstrdup("attachmentType must not be empty");
	if (identity[strspn(identity, ATTACH_SPACE)] == '\0')
		return xstrdup("identityKey must not be empty");
	if (strlen(type) > TATTACH_NAME_MAX)
		return xasprintf("attachmentType must not exceed %d bytes", TATTACH_NAME_MAX);
	if (strlen(identity) > TATTACH_NAME_MAX)
		return xasprintf("identityKey must not exceed %d bytes", TATTACH_NAME_MAX);
	return NULL;
}

/*
 * The thread an add or remove names, canonical in canon: persisted (loaded or not), never
 * ephemeral (upstream keeps attachments only for threads in its database). NULL or the cause.
 */
static char *
attach_check_thread(struct store *s, const char *thread_id, char canon[UUID_STRLEN + 1], int find)
{
	struct store_thread *t;
	struct thread_meta m;
	char *cause = NULL;

	if (store_check_id(thread_id, canon, &cause) != 0)
		return cause;
	if (!find)
		return NULL;
	t = store_loaded(s, canon);
	if (t != NULL)
		return store_thread_meta(t)->ephemeral ? xasprintf("thread not found: %s", canon)
						       : NULL;
	memset(&m, 0, sizeof m);
	if (store_find(s, canon, &m, &cause) != 0) {
		free(cause);
		return xasprintf("thread not found: %s", canon);
	}
	thread_meta_clear(&m);
	return NULL;
}

/* upstream: no limit gives 25, 0 gives one, more than 100 gives 100 */
static int
attach_limit(int64_t limit)
{
	return limit < 0		   ? TATTACH_LIST_DEFAULT
		: limit == 0		   ? 1
		: limit > TATTACH_LIST_MAX ? TATTACH_LIST_MAX
					   : (int)limit;
}

void
store_attachment_add(struct store *s, const char *thread_id, const char *type, const char *identity,
	const json_t *payload, store_attach_fn cb, void *arg)
{
	char canon[UUID_STRLEN + 1], *cause, *text;
	struct attach_job *j;

	if ((cause = attach_check_names(type, identity)) != NULL) {
		attach_refuse(cb, arg, cause);
		return;
	}
	text = json_dumps(payload, JSON_COMPACT | JSON_ENCODE_ANY);
	if (text == NULL || strlen(text) > TATTACH_PAYLOAD_MAX) {
		free(text);
		attach_refuse(cb, arg,
			xasprintf("attachment payload must not exceed %d bytes",
				TATTACH_PAYLOAD_MAX));
		return;
	}
	if ((cause = attach_check_thread(s, thread_id, canon, 1)) != NULL) {
		free(text);
		attach_refuse(cb, arg, cause);
		return;
	}
	j = attach_job(ATTACH_ADD, cb, arg);
	memcpy(j->thread, canon, sizeof canon);
	uuidv7_new(j->id);
	j->type = xstrdup(type);
	j->identity = xstrdup(identity);
	j->payload = text;
	store_ix_call(s, attach_run, attach_done, j);
}

void
store_attachment_remove(struct store *s, const char *thread_id, const char *type,
	const char *identity, store_attach_fn cb, void *arg)
{
	char canon[UUID_STRLEN + 1], *cause;
	struct attach_job *j;

	if ((cause = attach_check_names(type, identity)) != NULL ||
		(cause = attach_check_thread(s, thread_id, canon, 1)) != NULL) {
		attach_refuse(cb, arg, cause);
		return;
	}
	j = attach_job(ATTACH_REMOVE, cb, arg);
	memcpy(j->thread, canon, sizeof canon);
	j->type = xstrdup(type);
	j->identity = xstrdup(identity);
	store_ix_call(s, attach_run, attach_done, j);
}

void
store_attachment_list(struct store *s, const char *thread_id, const char *cursor, int64_t limit,
	store_attach_fn cb, void *arg)
{
	char canon[UUID_STRLEN + 1], *cause;
	struct attach_job *j;

	/* an unknown thread holds nothing: [] (as upstream), only a malformed id is refused */
	if ((cause = attach_check_thread(s, thread_id, canon, 0)) != NULL) {
		attach_refuse(cb, arg, cause);
		return;
	}
	j = attach_job(ATTACH_LIST, cb, arg);
	memcpy(j->thread, canon, sizeof canon);
	j->cursor = cursor != NULL ? xstrdup(cursor) : NULL;
	j->limit = attach_limit(limit);
	store_ix_call(s, attach_run, attach_done, j);
}

void
store_attachment_owners(struct store *s, const char *type, const char *identity, int archived,
	const char *cursor, int64_t limit, store_attach_fn cb, void *arg)
{
	struct attach_job *j;
	char *cause;

	if ((cause = attach_check_names(type, identity)) != NULL) {
		attach_refuse(cb, arg, cause);
		return;
	}
	j = attach_job(ATTACH_OWNERS, cb, arg);
	j->type = xstrdup(type);
	j->identity = xstrdup(identity);
	j->archived = archived;
	j->cursor = cursor != NULL ? xstrdup(cursor) : NULL;
	j->limit = attach_limit(limit);
	store_ix_call(s, attach_run, attach_done, j);
}

void
store_attachments_forget(struct store *s, const char *id)
{
	struct attach_job *j = attach_job(ATTACH_FORGET, NULL, NULL);

	snprintf(j->thread, sizeof j->thread, "%s", id);
	store_ix_call(s, attach_run, attach_done, j);
}
