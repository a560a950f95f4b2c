/*
 * Loaded threads (store.h): thread/start, resume, fork and unload. A thread is created on disk
 * at once (unlike upstream, which waits for the first turn: openai/codex#42099), with
 * session_meta and thread_settings_applied, and synced (file and folders) on the sync worker,
 * so a zero-turn thread survives a crash and can be resumed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names.h"
#include "store_int.h"
#include "protocol/xmalloc.h"
#include "thread/history/history.h"
#include "thread/rollout/record.h"
#include "thread/rollout/rollout.h"
#include "thread/rollout/rollout_reader.h"
#include "thread/uuidv7.h"

struct store_thread *
store_loaded(struct store *s, const char *id)
{
	struct store_thread *t;

	TAILQ_FOREACH(t, &s->loaded, entry)
	if (strcmp(t->meta.id, id) == 0)
		return t;
	return NULL;
}

json_t *
store_loaded_ids(struct store *s)
{
	json_t *ids = json_array();
	struct store_thread *t;

	TAILQ_FOREACH(t, &s->loaded, entry)
	json_array_append_new(ids, json_string(t->meta.id));
	return ids;
}

const struct thread_meta *
store_thread_meta(struct store_thread *t)
{
	return &t->meta;
}

const char *
store_thread_id(struct store_thread *t)
{
	return t->meta.id;
}

const char *
store_thread_sandbox(struct store_thread *t)
{
	return t->sandbox;
}

json_t *
store_thread_approval(struct store_thread *t)
{
	return t->approval_policy;
}

json_t *
store_thread_profile(struct store_thread *t)
{
	return t->active_profile;
}

json_t *
store_thread_collab(struct store_thread *t)
{
	return t->collab;
}

/* Replace a settings slot with a copy of v (NULL or JSON null: none). */
static void
store_thread_slot(json_t **slot, const json_t *v)
{
	json_decref(*slot);
	*slot = v != NULL && !json_is_null(v) ? json_deep_copy(v) : NULL;
}

void
store_thread_set_profile(struct store_thread *t, const json_t *active_profile)
{
	store_thread_slot(&t->active_profile, active_profile);
}

void
store_thread_set_collab(struct store_thread *t, const json_t *collab)
{
	store_thread_slot(&t->collab, collab);
}

void
store_thread_set_sandbox(struct store_thread *t, const char *mode)
{
	thread_meta_set(&t->sandbox, mode);
}

const char *
store_thread_base_instructions(struct store_thread *t)
{
	return t->base_instructions;
}

const char *
store_thread_developer_instructions(struct store_thread *t)
{
	return t->developer_instructions;
}

const json_t *
store_thread_dynamic_tools(struct store_thread *t)
{
	return t->dynamic_tools;
}

/* Idle, or active while a turn runs. */
json_t *
store_thread_status(struct store_thread *t)
{
	if (t->turn_id[0] != '\0')
		return json_pack("{s:s,s:[]}", "type", "active", "activeFlags");
	return json_pack("{s:s}", "type", "idle");
}

json_t *
store_thread_json(struct store_thread *t, json_t *turns)
{
	return store_meta_json(t->s, &t->meta, store_thread_status(t), turns, 1);
}

/* Apply the given settings over the thread's (NULL fields keep what it has). */
static void
store_thread_settings(struct store_thread *t, const struct store_params *p)
{
	if (p == NULL)
		return;
	if (p->model != NULL)
		thread_meta_set(&t->meta.model, p->model);
	if (p->model_provider != NULL)
		thread_meta_set(&t->meta.model_provider, p->model_provider);
	if (p->cwd != NULL)
		thread_meta_set(&t->meta.cwd, p->cwd);
	if (p->effort != NULL)
		thread_meta_set(&t->meta.effort, p->effort);
	if (p->approval_policy != NULL) {
		json_decref(t->approval_policy);
		t->approval_policy = json_deep_copy(p->approval_policy);
	}
	if (p->approvals_reviewer != NULL)
		thread_meta_set(&t->approvals_reviewer, p->approvals_reviewer);
	if (p->sandbox != NULL)
		thread_meta_set(&t->sandbox, p->sandbox);
	if (p->base_instructions != NULL)
		thread_meta_set(&t->base_instructions, p->base_instructions);
	if (p->developer_instructions != NULL)
		thread_meta_set(&t->developer_instructions, p->developer_instructions);
	if (json_is_array(p->dynamic_tools)) {
		json_decref(t->dynamic_tools);
		t->dynamic_tools = json_deep_copy(p->dynamic_tools);
	}
	if (p->active_profile != NULL)
		store_thread_slot(&t->active_profile, p->active_profile);
}

/* The defaults of p for what nothing else set (a thread just loaded or forked). */
static void
store_thread_defaults(struct store_thread *t, const struct store_params *p)
{
	if (p == NULL)
		return;
	if (t->approval_policy == NULL && p->default_approval_policy != NULL)
		t->approval_policy = json_deep_copy(p->default_approval_policy);
	if (t->sandbox == NULL && p->default_sandbox != NULL)
		thread_meta_set(&t->sandbox, p->default_sandbox);
}

/* The record_settings view of a loaded thread. */
struct record_settings
store_thread_rs(struct store_thread *t)
{
	struct record_settings rs = {
		.model = t->meta.model,
		.model_provider = t->meta.model_provider,
		.cwd = t->meta.cwd,
		.effort = t->meta.effort,
		.approval_policy = t->approval_policy,
		.approvals_reviewer = t->approvals_reviewer,
		.sandbox = t->sandbox,
		.developer_instructions = t->developer_instructions,
		.active_profile = t->active_profile,
		.collab = t->collab,
	};
	return rs;
}

/* A new loaded thread around meta (stolen). */
static struct store_thread *
store_thread_add(struct store *s, struct thread_meta *meta, struct rollout_writer *w)
{
	struct store_thread *t = xcalloc(1, sizeof *t);

	t->s = s;
	t->meta = *meta;
	memset(meta, 0, sizeof *meta);
	t->w = w;
	t->used = ++s->clock;
	TAILQ_INSERT_TAIL(&s->loaded, t, entry);
	s->nloaded++;
	return t;
}

void
store_thread_free(struct store_thread *t)
{
	thread_meta_clear(&t->meta);
	free(t->base_instructions);
	free(t->developer_instructions);
	free(t->approvals_reviewer);
	free(t->sandbox);
	free(t->last_agent_message);
	json_decref(t->approval_policy);
	json_decref(t->dynamic_tools);
	json_decref(t->active_profile);
	json_decref(t->collab);
	free(t);
}

/* The fields a new thread starts with. */
static void
store_new_meta(struct store *s, const struct store_params *p, const char *id, int64_t ms,
	struct thread_meta *m)
{
	json_t *src = record_source_to_rollout(p->source);
	char cwd[4096];

	memset(m, 0, sizeof *m);
	snprintf(m->id, sizeof m->id, "%s", id);
	m->created_ms = m->updated_ms = m->recency_ms = ms;
	m->cwd = xstrdup(p->cwd ? p->cwd : (getcwd(cwd, sizeof cwd) ? cwd : "/"));
	m->model_provider = xstrdup(p->model_provider ? p->model_provider : s->default_provider);
	m->model = p->model ? xstrdup(p->model) : NULL;
	m->effort = p->effort ? xstrdup(p->effort) : NULL;
	m->originator = xstrdup(p->originator ? p->originator : s->originator);
	m->cli_version = xstrdup(s->cli_version);
	m->source = json_dumps(src, JSON_ENCODE_ANY | JSON_COMPACT);
	m->preview = xstrdup("");
	m->ephemeral = p->ephemeral;
	json_decref(src);
}

/* Write session_meta (+ settings) into a new rollout; 0 or -errno. */
static int
store_write_head(struct store_thread *t, const char *forked_from, char **cause)
{
	json_t *src = json_loads(t->meta.source, JSON_DECODE_ANY, NULL);
	struct record_meta rm = {
		.id = t->meta.id,
		.forked_from_id = forked_from,
		.cwd = t->meta.cwd,
		.originator = t->meta.originator,
		.cli_version = t->meta.cli_version,
		.model_provider = t->meta.model_provider,
		.base_instructions = t->base_instructions,
		.dynamic_tools = t->dynamic_tools,
		.source = src,
		.ms = t->meta.created_ms,
	};
	struct record_settings rs = store_thread_rs(t);
	json_t *meta = record_session_meta(&rm), *set = record_settings_applied(t->meta.id, &rs);
	int r;

	r = rollout_writer_append(t->w, t->meta.created_ms, "session_meta", meta);
	if (r == 0)
		r = rollout_writer_append(t->w, t->meta.created_ms, "event_msg", set);
	if (r != 0)
		*cause = xasprintf("failed to write rollout %s: %s", t->meta.path, strerror(-r));
	json_decref(meta);
	json_decref(set);
	json_decref(src);
	return r;
}

/*
 * Create the rollout of a new thread (not of an ephemeral one) with its head records, out of
 * sight until store_publish: a crash in between leaves no file.
 */
static int
store_materialize(struct store_thread *t, const char *forked_from, char **cause)
{
	int r;

	if (t->meta.ephemeral)
		return 0;
	t->meta.path = rollout_path_new(t->s->home, t->meta.id, t->meta.created_ms);
	if ((r = rollout_writer_create_hidden(t->meta.path, &t->w, cause)) != 0)
		return r;
	return store_write_head(t, forked_from, cause);
}

/* The rollout at its path, then its index row; the file and its folders synced on the worker. */
static int
store_publish(struct store_thread *t, const struct store_params *p, char **cause)
{
	int r, fd;

	if (t->w == NULL)
		return 0;
	if ((r = rollout_writer_publish(t->w, cause)) != 0)
		return r;
	store_index_put(t);
	/* The file, its day folder and the month/year/sessions folders above it. */
	fd = rollout_writer_dupfd(t->w);
	store_post_sync(
		t->s, fd, t->meta.path, 4, p ? p->durable : NULL, p ? p->durable_arg : NULL);
	return 0;
}

/* Undo a half-made thread. */
static void
store_discard(struct store_thread *t)
{
	TAILQ_REMOVE(&t->s->loaded, t, entry);
	t->s->nloaded--;
	if (t->w != NULL) {
		int published = rollout_writer_published(t->w);

		rollout_writer_close(t->w);
		if (published) {
			unlink(t->meta.path);
			store_ix_delete(t->s, t->meta.id);
		}
	}
	store_thread_free(t);
}

int
store_create(struct store *s, const struct store_params *p, struct store_thread **out, char **cause)
{
	static const struct store_params none;
	struct thread_meta m;
	struct store_thread *t;
	char id[37];
	int64_t ms = rollout_now_ms();
	int r;

	if (p == NULL)
		p = &none;
	uuidv7_new_at(id, ms);
	store_new_meta(s, p, id, ms, &m);
	t = store_thread_add(s, &m, NULL);
	store_thread_settings(t, p);
	if ((r = store_materialize(t, NULL, cause)) != 0 || (r = store_publish(t, p, cause)) != 0) {
		store_discard(t);
		return r;
	}
	if (t->meta.ephemeral && p->durable != NULL)
		p->durable(p->durable_arg, 0);
	store_limit_writers(s);
	*out = t;
	return 0;
}

int
store_openable(struct store *s, const char *id, int resume, char **cause)
{
	struct thread_meta m;
	char canon[37];
	int r;

	if ((r = store_check_id(id, canon, cause)) != 0)
		return r;
	if (store_loaded(s, canon) != NULL)
		return 0;
	if ((r = store_find(s, canon, &m, cause)) != 0)
		return r;
	if (resume && m.archived) {
		*cause = xasprintf("no rollout found for thread id %s", canon);
		r = -ENOENT;
	}
	thread_meta_clear(&m);
	return r;
}

int
store_resume(struct store *s, const char *id, const struct store_params *p,
	struct store_thread **out, char **cause)
{
	char canon[37];
	struct thread_meta m;
	struct rollout_writer *w = NULL;
	struct store_thread *t;
	int r;

	if ((r = store_check_id(id, canon, cause)) != 0)
		return r;
	if ((t = store_loaded(s, canon)) != NULL) {
		store_thread_settings(t, p);
		*out = t;
		return 0;
	}
	if ((r = store_find(s, canon, &m, cause)) != 0)
		return r;
	if (m.archived) {
		/* Upstream only looks for resumable rollouts under sessions/. */
		thread_meta_clear(&m);
		*cause = xasprintf("no rollout found for thread id %s", canon);
		return -ENOENT;
	}
	if ((r = rollout_writer_open(m.path, &w, cause)) != 0) {
		if (r == -EBUSY || r == -EAGAIN) {
			/* upstream's words for it, and who: the second daemon must not append */
			char *why = *cause;

			*cause =
				xasprintf("thread %s already has an active writer: %s", canon, why);
			free(why);
		}
		thread_meta_clear(&m);
		return r;
	}
	t = store_thread_add(s, &m, w);
	/* the newest settings record's profile and mode, before the request's */
	if (t->meta.profile != NULL)
		t->active_profile = json_loads(t->meta.profile, 0, NULL);
	if (t->meta.collab != NULL)
		t->collab = json_loads(t->meta.collab, 0, NULL);
	store_thread_settings(t, p);
	store_thread_defaults(t, p);
	store_limit_writers(s);
	*out = t;
	return 0;
}

/* Copy the source's records (session_meta aside) up to `end` into the fork's writer. */
static int
store_copy_history(struct store_thread *t, const char *src, off_t end, char **cause)
{
	struct rollout_reader *r;
	struct rollout_rec rec;
	int e;

	if ((e = rollout_reader_open(src, 0, end, &r)) != 0) {
		*cause = xasprintf("failed to read %s: %s", src, strerror(-e));
		return e;
	}
	while ((e = rollout_reader_next(r, &rec)) == 1) {
		if (strcmp(rec.type, "session_meta") == 0)
			continue;
		if ((e = rollout_writer_append_root(t->w, rec.root)) != 0) {
			*cause = xasprintf("failed to write %s: %s", t->meta.path, strerror(-e));
			break;
		}
	}
	rollout_reader_close(r);
	return e < 0 ? e : 0;
}

/* Where the fork stops copying: after last_turn_id's span, or the whole file. */
static int
store_fork_end(
	struct store *s, const char *path, const char *last_turn_id, off_t *end, char **cause)
{
	struct store_turnidx *ix;

	*end = -1;
	if (last_turn_id == NULL)
		return 0;
	if ((ix = store_turnidx_get(s, path)) == NULL) {
		*cause = xasprintf("failed to read %s", path);
		return -EIO;
	}
	for (size_t i = 0; i < ix->n; i++) {
		if (strcmp(ix->v[i].id, last_turn_id) == 0) {
			*end = ix->v[i].end;
			return 0;
		}
	}
	*cause = xasprintf("turn not found: %s", last_turn_id);
	return -EINVAL;
}

int
store_fork(struct store *s, const char *id, const char *last_turn_id, const struct store_params *p,
	struct store_thread **out, char **cause)
{
	static const struct store_params none;
	char canon[37], nid[37];
	struct thread_meta src, m;
	struct store_thread *t, *from;
	int64_t ms = rollout_now_ms();
	off_t end;
	int r;

	if (p == NULL)
		p = &none;
	if ((r = store_check_id(id, canon, cause)) != 0)
		return r;
	if ((r = store_find(s, canon, &src, cause)) != 0)
		return r;
	if (src.path == NULL) {
		thread_meta_clear(&src);
		*cause = xasprintf("no rollout found for thread id %s", canon);
		return -ENOENT;
	}
	if ((r = store_fork_end(s, src.path, last_turn_id, &end, cause)) != 0) {
		thread_meta_clear(&src);
		return r;
	}
	uuidv7_new_at(nid, ms);
	store_new_meta(s, p, nid, ms, &m);
	/* Unless overridden, the fork runs with its source's settings. */
	if (p->model == NULL && src.model != NULL)
		thread_meta_set(&m.model, src.model);
	if (p->model_provider == NULL && src.model_provider != NULL)
		thread_meta_set(&m.model_provider, src.model_provider);
	if (p->cwd == NULL && src.cwd != NULL)
		thread_meta_set(&m.cwd, src.cwd);
	thread_meta_set(&m.forked_from_id, canon);
	thread_meta_set(&m.name, src.name);
	thread_meta_set(&m.preview, src.preview);
	m.has_user_message = src.has_user_message;
	t = store_thread_add(s, &m, NULL);
	store_thread_settings(t, p);
	if ((from = store_loaded(s, canon)) != NULL) {
		/* a loaded source's settings, unless the request gave its own */
		if (t->approval_policy == NULL && from->approval_policy != NULL)
			t->approval_policy = json_deep_copy(from->approval_policy);
		if (t->sandbox == NULL && from->sandbox != NULL)
			thread_meta_set(&t->sandbox, from->sandbox);
	}
	store_thread_defaults(t, p);
	/* The fork appears whole or not at all: its file is linked once its history is copied. */
	if ((r = store_materialize(t, canon, cause)) == 0 && t->w != NULL) {
		r = store_copy_history(t, src.path, end, cause);
		if (r == 0) {
			t->meta.updated_ms = rollout_now_ms();
			r = store_publish(t, p, cause);
		}
		if (r == 0 && t->meta.name != NULL)
			names_append(s->home, t->meta.id, t->meta.name);
	}
	thread_meta_clear(&src);
	if (r != 0) {
		store_discard(t);
		return r;
	}
	*out = t;
	return 0;
}

void
store_unload(struct store_thread *t)
{
	struct store *s = t->s;

	TAILQ_REMOVE(&s->loaded, t, entry);
	s->nloaded--;
	if (t->w != NULL) {
		store_index_put(t);
		store_post_sync(s, rollout_writer_dupfd(t->w), NULL, 0, NULL, NULL);
		rollout_writer_close(t->w);
	}
	store_thread_free(t);
}

/* Turns of a loaded thread: a running turn stays inProgress. */
json_t *
store_thread_turns(struct store_thread *t, char **cause)
{
	if (t->w == NULL)
		return json_array();
	return store_history(
		t->meta.path, rollout_writer_size(t->w), t->turn_id[0] != '\0', 0, cause);
}

int
store_thread_turns_text(struct store_thread *t, struct buf *out, char **cause)
{
	if (t->w == NULL)
		return buf_adds(out, "[]");
	return store_file_turns_text(
		t->meta.path, rollout_writer_size(t->w), t->turn_id[0] != '\0', out, cause);
}

/*
 * Whether a is a better writer to suspend than b: a thread without a running turn first, then
 * the least recently written. A turn waiting on an approval writes nothing for as long as the
 * client takes, so it holds no fd either once enough threads are loaded; its next record
 * reopens the file (rollout_writer_wake).
 */
static int
store_idler(const struct store_thread *a, const struct store_thread *b)
{
	int abusy = a->turn_id[0] != '\0', bbusy = b->turn_id[0] != '\0';

	return abusy != bbusy ? !abusy : a->used < b->used;
}

/* Beyond STORE_OPEN_WRITERS open writers, the idlest give their fd back. */
void
store_limit_writers(struct store *s)
{
	struct store_thread *t, *idlest;
	size_t open = 0;

	TAILQ_FOREACH(t, &s->loaded, entry)
	if (t->w != NULL && !rollout_writer_suspended(t->w))
		open++;
	while (open > STORE_OPEN_WRITERS) {
		idlest = NULL;
		TAILQ_FOREACH(t, &s->loaded, entry)
		{
			/* An unpublished file lives only through its fd. */
			if (t->w == NULL || rollout_writer_suspended(t->w) ||
				!rollout_writer_published(t->w))
				continue;
			if (idlest == NULL || store_idler(t, idlest))
				idlest = t;
		}
		if (idlest == NULL)
			return;
		rollout_writer_suspend(idlest->w);
		open--;
	}
}
