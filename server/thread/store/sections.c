/*
 * Thread sections on the loop's side (store_sections.h): the checks upstream makes before it
 * touches its database, in its order and words, then one job of the index worker per request
 * (index/tsections.c does the SQL), and the loop's copy of sections and memberships brought up
 * to date when a job succeeded. The copy is only ever changed here, on the loop, after the
 * file was: a wire Thread never shows a section the file does not hold.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"
#include "store_sections.h"
#include "protocol/xmalloc.h"
#include "thread/index/tsections.h"
#include "thread/rollout/rollout.h"
#include "thread/uuidv7.h"

#define SECTIONS_SPACE " \t\r\n\v\f"

enum sections_op {
	SECTIONS_LOAD,
	SECTIONS_LIST,
	SECTIONS_CREATE,
	SECTIONS_UPDATE,
	SECTIONS_DELETE,
	SECTIONS_MOVE,
	SECTIONS_FORGET,
};

/* One request on its way to the worker and back; the worker touches only its own fields. */
struct sections_job {
	struct store *s;
	enum sections_op op;
	char id[UUID_STRLEN + 1]; /* the section (create, update, delete) */
	char thread[UUID_STRLEN + 1];
	char *name, *appearance, *section, *before, *cursor;
	int set_appearance, limit;
	int64_t now_ms, entered_ms;
	json_t *sections, *members, *result;
	char *next, *cause;
	store_json_fn cb;
	void *arg;
};

static struct sections_job *
sections_job(struct store *s, enum sections_op op, store_json_fn cb, void *arg)
{
	struct sections_job *j = xcalloc(1, sizeof *j);

	j->s = s;
	j->op = op;
	j->cb = cb;
	j->arg = arg;
	j->now_ms = rollout_now_ms();
	return j;
}

static void
sections_job_free(struct sections_job *j)
{
	free(j->name);
	free(j->appearance);
	free(j->section);
	free(j->before);
	free(j->cursor);
	free(j->next);
	free(j->cause);
	json_decref(j->sections);
	json_decref(j->members);
	json_decref(j->result);
	free(j);
}

/* The worker's half: SQL only, results kept in the job. */
static int
sections_run(struct tindex *x, void *arg)
{
	struct sections_job *j = arg;
	int r;

	if (x == NULL) {
		j->cause = xstrdup("thread index unavailable");
		return -EIO;
	}
	switch (j->op) {
	case SECTIONS_LOAD:
		return tsections_load(x, &j->sections, &j->members);
	case SECTIONS_LIST:
		return tsections_page(x, j->cursor, j->limit, &j->result, &j->next);
	case SECTIONS_CREATE:
		r = tsections_create(x, j->id, j->name, j->appearance, j->now_ms);
		break;
	case SECTIONS_UPDATE:
		r = tsections_update(x, j->id, j->name, j->set_appearance, j->appearance);
		if (r == -ENOENT) {
			j->cause = xasprintf("thread section not found: %s", j->id);
			return -ERANGE;
		}
		break;
	case SECTIONS_DELETE:
		if ((r = tsections_delete(x, j->id)) == -ENOENT) {
			j->cause = xasprintf("thread section not found: %s", j->id);
			return -ERANGE;
		}
		return r;
	case SECTIONS_MOVE:
		return tsections_move(
			x, j->thread, j->section, j->before, j->now_ms, &j->entered_ms, &j->cause);
	case SECTIONS_FORGET:
		return tsections_forget(x, j->thread);
	default:
		return -EINVAL;
	}
	if (r == 0 && (j->result = tsections_get(x, j->id)) == NULL)
		r = -EIO;
	return r;
}

/* Drop every membership of a section from the loop's copy. */
static void
sections_drop_members(struct store *s, const char *section)
{
	const char *thread;
	json_t *v;
	void *tmp;

	json_object_foreach_safe(s->members, tmp, thread, v)
	{
		if (strcmp(json_string_value(json_array_get(v, 0)), section) == 0)
			json_object_del(s->members, thread);
	}
}

/* The loop's half: the copy brought up to date, then the answer. */
static void
sections_done(void *arg, int r)
{
	struct sections_job *j = arg;
	struct store *s = j->s;
	json_t *result = NULL;

	if (r == 0 && s->sections != NULL) {
		switch (j->op) {
		case SECTIONS_CREATE:
		case SECTIONS_UPDATE:
			json_object_set(s->sections, j->id, j->result);
			break;
		case SECTIONS_DELETE:
			json_object_del(s->sections, j->id);
			sections_drop_members(s, j->id);
			break;
		case SECTIONS_MOVE:
			if (j->section != NULL)
				json_object_set_new(s->members, j->thread,
					json_pack("[s,I]", j->section, (json_int_t)j->entered_ms));
			else
				json_object_del(s->members, j->thread);
			break;
		case SECTIONS_FORGET:
			json_object_del(s->members, j->thread);
			break;
		default:
			break;
		}
	}
	if (r == 0 && j->op == SECTIONS_LOAD) {
		json_decref(s->sections);
		json_decref(s->members);
		s->sections = j->sections;
		s->members = j->members;
		j->sections = j->members = NULL; /* transferred */
	}
	if (j->cb != NULL) {
		if (r != 0)
			j->cb(j->arg, r, NULL, j->cause ? j->cause : "thread index unavailable");
		else if (j->op == SECTIONS_LIST)
			result = json_pack("{s:O,s:o}", "data", j->result, "nextCursor",
				j->next ? json_string(j->next) : json_null());
		else if (j->op == SECTIONS_CREATE || j->op == SECTIONS_UPDATE)
			result = json_pack("{s:O}", "section", j->result);
		else
			result = json_object();
		if (r == 0)
			j->cb(j->arg, 0, result, NULL);
	}
	sections_job_free(j);
}

static void
sections_post(struct sections_job *j)
{
	store_ix_call(j->s, sections_run, sections_done, j);
}

void
store_sections_start(struct store *s)
{
	sections_post(sections_job(s, SECTIONS_LOAD, NULL, NULL));
}

void
store_sections_free(struct store *s)
{
	json_decref(s->sections);
	json_decref(s->members);
	s->sections = s->members = NULL;
}

void
store_sections_put(struct store *s, json_t *thread, const char *id)
{
	json_t *m = id != NULL ? json_object_get(s->members, id) : NULL;
	json_t *sec = m != NULL
		? json_object_get(s->sections, json_string_value(json_array_get(m, 0)))
		: NULL;

	json_object_set_new(thread, "section", sec != NULL ? json_deep_copy(sec) : json_null());
	json_object_set_new(thread, "sectionEnteredAt",
		sec != NULL ? json_integer(json_integer_value(json_array_get(m, 1)) / 1000)
			    : json_null());
}

void
store_sections_forget(struct store *s, const char *id)
{
	struct sections_job *j;

	if (json_object_get(s->members, id) == NULL)
		return;
	j = sections_job(s, SECTIONS_FORGET, NULL, NULL);
	snprintf(j->thread, sizeof j->thread, "%s", id);
	sections_post(j);
}

/* A name trimmed as upstream (heap), or NULL with the refusal in *cause. */
static char *
sections_name(const char *name, char **cause)
{
	size_t n;

	name = name != NULL ? name + strspn(name, SECTIONS_SPACE) : "";
	n = strlen(name);
	while (n > 0 && strchr(SECTIONS_SPACE, name[n - 1]) != NULL)
		n--;
	if (n == 0) {
		*cause = xstrdup("section name must not be empty");
		return NULL;
	}
	if (n > STORE_SECTION_NAME_MAX) {
		*cause = xasprintf(
			"section name must not be longer than %d bytes", STORE_SECTION_NAME_MAX);
		return NULL;
	}
	return xstrndup(name, n);
}

/* An appearance as stored: {"icon", "color"} in upstream's order, other members dropped. */
static char *
sections_appearance(const json_t *a)
{
	json_t *o;
	char *text;

	if (!json_is_object(a))
		return NULL;
	o = json_pack("{s:O,s:O}", "icon",
		json_is_string(json_object_get(a, "icon")) ? json_object_get(a, "icon")
							   : json_null(),
		"color",
		json_is_string(json_object_get(a, "color")) ? json_object_get(a, "color")
							    : json_null());
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return text;
}

/* Answer a refusal made on the loop. */
static void
sections_refuse(store_json_fn cb, void *arg, int r, char *cause)
{
	cb(arg, r, NULL, cause);
	free(cause);
}

void
store_section_list(struct store *s, const char *cursor, int64_t limit, store_json_fn cb, void *arg)
{
	struct sections_job *j = sections_job(s, SECTIONS_LIST, cb, arg);

	/* upstream: no limit gives 25, 0 gives one, more than 100 gives 100 */
	j->limit = limit < 0		     ? TSECTIONS_LIST_DEFAULT
		: limit == 0		     ? 1
		: limit > TSECTIONS_LIST_MAX ? TSECTIONS_LIST_MAX
					     : (int)limit;
	j->cursor = cursor != NULL ? xstrdup(cursor) : NULL;
	sections_post(j);
}

void
store_section_create(
	struct store *s, const char *name, const json_t *appearance, store_json_fn cb, void *arg)
{
	struct sections_job *j;
	char *cause = NULL, *trimmed = sections_name(name, &cause);

	if (trimmed == NULL) {
		sections_refuse(cb, arg, -ERANGE, cause);
		return;
	}
	j = sections_job(s, SECTIONS_CREATE, cb, arg);
	uuidv7_new(j->id);
	j->name = trimmed;
	j->appearance = sections_appearance(appearance);
	sections_post(j);
}

void
store_section_update(struct store *s, const char *id, const char *name, int set_appearance,
	const json_t *appearance, store_json_fn cb, void *arg)
{
	struct sections_job *j;
	char *cause = NULL, *trimmed = sections_name(name, &cause);

	if (trimmed == NULL) {
		sections_refuse(cb, arg, -ERANGE, cause);
		return;
	}
	if (strcmp(id, TSECTIONS_PINNED_ID) == 0) {
		free(trimmed);
		sections_refuse(
			cb, arg, -ERANGE, xstrdup("the built-in pinned section cannot be renamed"));
		return;
	}
	if (strlen(id) > UUID_STRLEN) {
		free(trimmed);
		sections_refuse(cb, arg, -ERANGE, xasprintf("thread section not found: %s", id));
		return;
	}
	j = sections_job(s, SECTIONS_UPDATE, cb, arg);
	snprintf(j->id, sizeof j->id, "%s", id);
	j->name = trimmed;
	j->set_appearance = set_appearance;
	j->appearance = set_appearance ? sections_appearance(appearance) : NULL;
	sections_post(j);
}

void
store_section_delete(struct store *s, const char *id, store_json_fn cb, void *arg)
{
	struct sections_job *j;

	if (strcmp(id, TSECTIONS_PINNED_ID) == 0) {
		sections_refuse(
			cb, arg, -ERANGE, xstrdup("the built-in pinned section cannot be deleted"));
		return;
	}
	if (strlen(id) > UUID_STRLEN) {
		sections_refuse(cb, arg, -ERANGE, xasprintf("thread section not found: %s", id));
		return;
	}
	j = sections_job(s, SECTIONS_DELETE, cb, arg);
	snprintf(j->id, sizeof j->id, "%s", id);
	sections_post(j);
}

/* The thread a move names: persisted (loaded or not), not ephemeral. 0 or -EINVAL, *cause. */
static int
sections_thread(struct store *s, const char *canon, char **cause)
{
	struct store_thread *t = store_loaded(s, canon);
	struct thread_meta m;
	char *why = NULL;

	if (t != NULL && t->meta.ephemeral) {
		*cause = xasprintf("ephemeral thread does not support section moves: %s", canon);
		return -EINVAL;
	}
	if (t != NULL)
		return 0;
	memset(&m, 0, sizeof m);
	if (store_find(s, canon, &m, &why) != 0) {
		free(why);
		*cause = xasprintf("thread not found: %s", canon);
		return -EINVAL;
	}
	thread_meta_clear(&m);
	return 0;
}

void
store_section_move(struct store *s, const char *thread_id, const char *section, const char *before,
	store_json_fn cb, void *arg)
{
	char canon[UUID_STRLEN + 1], before_canon[UUID_STRLEN + 1], *cause = NULL, *why = NULL;
	struct sections_job *j;
	int r;

	if ((r = store_check_id(thread_id, canon, &cause)) != 0) {
		sections_refuse(cb, arg, r, cause);
		return;
	}
	if (before != NULL && uuidv7_check(before, &why) != 0) {
		cause = xasprintf("invalid before thread id: %s", why ? why : "missing");
		free(why);
		sections_refuse(cb, arg, -EINVAL, cause);
		return;
	}
	if (before != NULL && section == NULL) {
		sections_refuse(
			cb, arg, -EINVAL, xstrdup("beforeThreadId requires a non-null sectionId"));
		return;
	}
	if ((r = sections_thread(s, canon, &cause)) != 0) {
		sections_refuse(cb, arg, r, cause);
		return;
	}
	j = sections_job(s, SECTIONS_MOVE, cb, arg);
	memcpy(j->thread, canon, sizeof canon);
	j->section = section != NULL ? xstrdup(section) : NULL;
	if (before != NULL) {
		uuidv7_canon(before, before_canon);
		j->before = xstrdup(before_canon);
	}
	sections_post(j);
}
