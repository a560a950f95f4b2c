/*
 * Operations on a thread by id, loaded or not (store.h): read, archive, unarchive, delete,
 * name, git metadata; and the wire Thread object built from metadata. Archive and unarchive
 * are a rename(2) (never a rewrite) plus an index update; the folders are synced on the worker.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names.h"
#include "store_int.h"
#include "thread/store/attach/attachments.h"
#include "protocol/xmalloc.h"
#include "thread/history/history.h"
#include "thread/rollout/record.h"
#include "thread/rollout/rollout.h"
#include "thread/rollout/rollout_chain.h"
#include "thread/rollout/rollout_reader.h"

/* Seconds, as the wire wants them. */
static json_t *
store_secs(int64_t ms)
{
	return json_integer(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
}

/* A string or null. */
static json_t *
store_str(const char *s)
{
	return s != NULL ? json_string(s) : json_null();
}

/* The wire Thread, keys in upstream's order. */
json_t *
store_meta_json(
	struct store *s, const struct thread_meta *m, json_t *status, json_t *turns, int loaded)
{
	json_t *t = json_object(), *src = NULL, *git = NULL;

	if (m->source != NULL)
		src = json_loads(m->source, JSON_DECODE_ANY, NULL);
	if (!m->ephemeral && (git = store_ix_git_get(s, m->id)) != NULL)
		git = json_deep_copy(git);
	json_object_set_new(t, "id", json_string(m->id));
	json_object_set_new(t, "environments",
		loaded ? json_pack("[{s:s,s:o,s:[o]}]", "environmentId", "local", "cwd",
				 store_str(m->cwd), "runtimeWorkspaceRoots", store_str(m->cwd))
		       : json_null());
	json_object_set_new(t, "extra", json_null());
	json_object_set_new(t, "sessionId", json_string(m->id));
	json_object_set_new(t, "forkedFromId", store_str(m->forked_from_id));
	json_object_set_new(t, "attachedToThreadId", json_null());
	json_object_set_new(t, "parentThreadId", json_null());
	json_object_set_new(t, "preview", json_string(m->preview ? m->preview : ""));
	json_object_set_new(t, "ephemeral", json_boolean(m->ephemeral));
	store_sections_put(s, t, m->ephemeral ? NULL : m->id);
	json_object_set_new(t, "projectId", json_null());
	json_object_set_new(t, "historyMode", json_string("paginated"));
	json_object_set_new(
		t, "modelProvider", json_string(m->model_provider ? m->model_provider : ""));
	json_object_set_new(t, "model", store_str(m->model));
	json_object_set_new(t, "reasoningEffort", store_str(m->effort));
	json_object_set_new(t, "createdAt", store_secs(m->created_ms));
	json_object_set_new(t, "updatedAt", store_secs(m->updated_ms));
	json_object_set_new(t, "recencyAt", store_secs(m->recency_ms));
	json_object_set_new(
		t, "status", status != NULL ? status : json_pack("{s:s}", "type", "notLoaded"));
	json_object_set_new(t, "path", m->ephemeral ? json_null() : store_str(m->path));
	json_object_set_new(t, "cwd", store_str(m->cwd));
	json_object_set_new(t, "cliVersion", json_string(m->cli_version ? m->cli_version : ""));
	json_object_set_new(t, "originator", store_str(m->originator));
	json_object_set_new(t, "source", record_source_to_wire(src));
	json_object_set_new(t, "canAcceptDirectInput", loaded ? json_true() : json_null());
	json_object_set_new(t, "threadSource", json_null());
	json_object_set_new(t, "agentNickname", store_str(m->agent_nickname));
	json_object_set_new(t, "agentRole", store_str(m->agent_role));
	json_object_set_new(t, "gitInfo", git != NULL ? git : json_null());
	json_object_set_new(t, "name", store_str(m->name));
	json_object_set_new(t, "daybreakEnabled", json_null());
	json_object_set_new(t, "turns", turns != NULL ? turns : json_array());
	json_decref(src);
	return t;
}

/*
 * Turns of a rollout up to `end` (< 0: all), as trees or with items kept as text (text); live:
 * an unfinished last turn is still running. NULL with *cause when it cannot be read whole.
 */
json_t *
store_history(const char *path, off_t end, int live, int text, char **cause)
{
	struct history *h = history_new();
	json_t *turns;

	if (text)
		history_text(h);
	turns = history_read(h, path, 0, end, live, cause);
	history_free(h);
	return turns;
}

int
store_read(struct store *s, const char *id, int include_turns, json_t **thread, char **cause)
{
	char canon[37];
	struct thread_meta m;
	struct store_thread *t;
	json_t *turns = NULL;
	int r;

	if ((r = store_check_id(id, canon, cause)) != 0)
		return r;
	if ((t = store_loaded(s, canon)) != NULL) {
		if (include_turns && (turns = store_thread_turns(t, cause)) == NULL)
			return -EIO;
		*thread = store_thread_json(t, turns);
		return 0;
	}
	if ((r = store_find(s, canon, &m, cause)) != 0) {
		free(*cause);
		*cause = xasprintf("thread not loaded: %s", canon);
		return r;
	}
	if (include_turns && (turns = store_history(m.path, -1, 0, 0, cause)) == NULL) {
		thread_meta_clear(&m);
		return -EIO;
	}
	*thread = store_meta_json(s, &m, NULL, turns, 0);
	thread_meta_clear(&m);
	return 0;
}

/* Rename a rollout; the folders of both ends are synced afterwards. */
static int
store_move(struct store *s, const char *from, const char *to, char **cause)
{
	int r;

	if ((r = rollout_mkdirs(to)) != 0 || rename(from, to) != 0) {
		r = r != 0 ? r : -errno;
		*cause = xasprintf("failed to move %s to %s: %s", from, to, strerror(-r));
		return r;
	}
	store_turnidx_forget(s, from);
	store_post_sync(s, -1, to, 4, NULL, NULL);
	store_post_sync(s, -1, from, 1, NULL, NULL);
	return 0;
}

/*
 * Move every segment of thread id (rollout_chain.h), its current file m->path last: a crash
 * part-way leaves the current file where it was, and its bases are found in either folder.
 * archive: to archived_sessions/, else back to their dated folders. *to: the current's new path.
 */
static int
store_move_all(
	struct store *s, const char *id, const char *path, int archive, char **to, char **cause)
{
	json_t *files = rollout_thread_files(path, id), *v;
	size_t i;
	int r = 0;

	json_array_foreach(files, i, v)
	{
		const char *from = json_string_value(v);
		char *dst = archive ? rollout_path_archived(s->home, from)
				    : rollout_path_unarchived(s->home, from);

		if (strcmp(dst, from) != 0 && (r = store_move(s, from, dst, cause)) != 0) {
			free(dst);
			break;
		}
		if (i + 1 == json_array_size(files))
			*to = dst;
		else
			free(dst);
	}
	json_decref(files);
	return r;
}

/* Find an unloaded-or-loaded thread with a rollout; unload it when asked. */
static int
store_resolve(struct store *s, const char *id, char canon[37], struct thread_meta *m, int unload,
	char **cause)
{
	struct store_thread *t;
	int r;

	if ((r = store_check_id(id, canon, cause)) != 0)
		return r;
	if ((t = store_loaded(s, canon)) != NULL && unload)
		store_unload(t);
	if ((r = store_find(s, canon, m, cause)) != 0)
		return r;
	if (m->ephemeral || m->path == NULL) {
		thread_meta_clear(m);
		*cause = xasprintf("no rollout found for thread id %s", canon);
		return -ENOENT;
	}
	return 0;
}

int
store_archive(struct store *s, const char *id, char **cause)
{
	char canon[37], *to = NULL;
	struct thread_meta m;
	int r;

	if ((r = store_resolve(s, id, canon, &m, 1, cause)) != 0)
		return r;
	if (m.archived) {
		thread_meta_clear(&m);
		*cause = xasprintf("no rollout found for thread id %s", canon);
		return -ENOENT;
	}
	if ((r = store_move_all(s, canon, m.path, 1, &to, cause)) == 0) {
		thread_meta_set(&m.path, to);
		m.archived = 1;
		store_ix_put(s, &m);
	}
	free(to);
	thread_meta_clear(&m);
	return r;
}

int
store_unarchive(struct store *s, const char *id, json_t **thread, char **cause)
{
	char canon[37], *to = NULL;
	struct thread_meta m;
	int r;

	if ((r = store_resolve(s, id, canon, &m, 0, cause)) != 0)
		return r;
	if (!m.archived) {
		thread_meta_clear(&m);
		*cause = xasprintf("thread %s is not archived", canon);
		return -EINVAL;
	}
	if ((r = store_move_all(s, canon, m.path, 0, &to, cause)) == 0) {
		thread_meta_set(&m.path, to);
		m.archived = 0;
		m.updated_ms = rollout_now_ms(); /* upstream bumps updatedAt */
		store_ix_put(s, &m);
		*thread = store_meta_json(s, &m, NULL, NULL, 0);
	}
	free(to);
	thread_meta_clear(&m);
	return r;
}

int
store_delete(struct store *s, const char *id, char **cause)
{
	char canon[37];
	struct thread_meta m;
	json_t *files, *v;
	size_t i;
	int r;

	if ((r = store_resolve(s, id, canon, &m, 1, cause)) != 0)
		return r;
	/* every segment, the current file last (a crash part-way leaves it to delete again) */
	files = rollout_thread_files(m.path, canon);
	json_array_foreach(files, i, v)
	{
		const char *p = json_string_value(v);

		if (unlink(p) != 0 && errno != ENOENT) {
			r = -errno;
			*cause = xasprintf("failed to delete %s: %s", p, strerror(errno));
			break;
		}
		store_turnidx_forget(s, p);
		store_post_sync(s, -1, p, 1, NULL, NULL);
	}
	json_decref(files);
	if (r == 0) {
		store_ix_delete(s, canon);
		store_sections_forget(s, canon);
		store_attachments_forget(s, canon);
	}
	thread_meta_clear(&m);
	return r;
}

int
store_set_name(struct store *s, const char *id, const char *name, char **cause)
{
	char canon[37], *trimmed;
	struct store_thread *t;
	struct thread_meta m;
	size_t n;
	int r;

	if ((r = store_check_id(id, canon, cause)) != 0)
		return r;
	name = name != NULL ? name + strspn(name, " \t\r\n") : "";
	n = strlen(name);
	while (n > 0 && strchr(" \t\r\n", name[n - 1]) != NULL)
		n--;
	if (n == 0) {
		*cause = xstrdup("thread name must not be empty");
		return -EINVAL;
	}
	if (n > STORE_NAME_MAX) {
		*cause = xasprintf("thread name must not be longer than %d bytes", STORE_NAME_MAX);
		return -EINVAL;
	}
	trimmed = xstrndup(name, n);
	t = store_loaded(s, canon);
	if (t != NULL && t->meta.ephemeral) {
		thread_meta_set(&t->meta.name, trimmed);
		free(trimmed);
		return 0;
	}
	if ((r = store_find(s, canon, &m, cause)) == 0) {
		if ((r = names_append(s->home, canon, trimmed)) != 0) {
			*cause = xasprintf("failed to record the name: %s", strerror(-r));
		} else {
			store_ix_name(s, canon, trimmed);
			/* fdatasync of session_index.jsonl on the worker (any fd of it will do). */
			char *np = names_path(s->home);
			int fd = open(np, O_RDONLY | O_CLOEXEC);

			if (fd >= 0)
				store_post_sync(s, fd, NULL, 0, NULL, NULL);
			free(np);
		}
		if (r == 0 && t != NULL)
			thread_meta_set(&t->meta.name, trimmed);
		thread_meta_clear(&m);
	}
	free(trimmed);
	return r;
}

int
store_update_git(struct store *s, const char *id, json_t *patch, json_t **thread, char **cause)
{
	static const char *const keys[] = {"sha", "branch", "originUrl"};
	char canon[37];
	struct thread_meta m;
	struct store_thread *t;
	json_t *git;
	int r;

	if ((r = store_check_id(id, canon, cause)) != 0)
		return r;
	if ((r = store_find(s, canon, &m, cause)) != 0)
		return r;
	git = store_ix_git_get(s, canon);
	git = git != NULL ? json_deep_copy(git) : NULL;
	if (git == NULL)
		git = json_pack("{s:n,s:n,s:n}", "sha", "branch", "originUrl");
	for (size_t i = 0; i < nitems(keys); i++) {
		json_t *v = json_object_get(patch, keys[i]);

		if (v == NULL)
			continue;
		if (!json_is_null(v) && (!json_is_string(v) || *json_string_value(v) == '\0')) {
			json_decref(git);
			thread_meta_clear(&m);
			*cause =
				xasprintf("gitInfo.%s must be a non-empty string or null", keys[i]);
			return -ERANGE;
		}
		json_object_set(git, keys[i], v);
	}
	store_ix_git(s, canon, git);
	json_decref(git);
	t = store_loaded(s, canon);
	*thread = t != NULL ? store_thread_json(t, NULL) : store_meta_json(s, &m, NULL, NULL, 0);
	thread_meta_clear(&m);
	return 0;
}

/* A thread/read whose history is built on the read worker, as text. */
struct store_read_job {
	struct store *s;
	struct thread_meta m;
	json_t *status; /* a loaded thread's status when posted, or NULL */
	int loaded, live, include, r;
	off_t end;
	struct buf turns;
	char *cause;
	store_thread_fn cb;
	void *arg;
};

int
store_file_turns_text(const char *path, off_t end, int live, struct buf *out, char **cause)
{
	json_t *turns = store_history(path, end, live, 1, cause);
	int r = 0;

	if (turns == NULL)
		return -EIO;
	if (history_turns_text(turns, out) != 0) {
		*cause = xasprintf(
			"%s is too large to return whole; page it with thread/turns/list", path);
		r = -EIO;
	}
	json_decref(turns);
	return r;
}

static void
store_read_run(void *arg)
{
	struct store_read_job *j = arg;

	struct stat st;

	if (j->include && j->m.path != NULL)
		j->r = store_file_turns_text(j->m.path, j->end, j->live, &j->turns, &j->cause);
	else if (j->include)
		j->r = buf_adds(&j->turns, "[]");
	/*
	 * A long history leaves its parse garbage (the records' objects, freed) in this
	 * thread's malloc arena: hand those pages back now, so serving it peaks lower.
	 */
	if (j->include && j->m.path != NULL && stat(j->m.path, &st) == 0 &&
		st.st_size >= STORE_TRIM_BYTES)
		malloc_trim(0);
}

static void
store_read_done(void *arg)
{
	struct store_read_job *j = arg;

	if (j->r != 0) {
		j->cb(j->arg, j->r, NULL, NULL, 0,
			j->cause ? j->cause : "failed to read the thread");
		json_decref(j->status);
	} else {
		j->cb(j->arg, 0, store_meta_json(j->s, &j->m, j->status, NULL, j->loaded),
			j->include ? buf_str(&j->turns) : NULL, j->turns.len, NULL);
	}
	buf_free(&j->turns);
	thread_meta_clear(&j->m);
	free(j->cause);
	free(j);
}

void
store_read_async(struct store *s, const char *id, int include_turns, store_thread_fn cb, void *arg)
{
	struct store_read_job *j;
	struct store_thread *t;
	char canon[37], *cause = NULL;
	int r;

	if ((r = store_check_id(id, canon, &cause)) != 0) {
		cb(arg, r, NULL, NULL, 0, cause);
		free(cause);
		return;
	}
	j = xcalloc(1, sizeof *j);
	buf_init(&j->turns, STORE_TURNS_TEXT_MAX);
	j->s = s;
	j->include = include_turns;
	j->cb = cb;
	j->arg = arg;
	j->end = -1;
	if ((t = store_loaded(s, canon)) != NULL) {
		thread_meta_copy(&j->m, &t->meta);
		j->status = store_thread_status(t);
		j->loaded = 1;
		j->live = t->turn_id[0] != '\0';
		if (t->w != NULL)
			j->end = rollout_writer_size(t->w);
		else
			thread_meta_set(&j->m.path, NULL);
	} else if ((r = store_find(s, canon, &j->m, &cause)) != 0) {
		free(cause);
		cause = xasprintf("thread not loaded: %s", canon);
		cb(arg, r, NULL, NULL, 0, cause);
		free(cause);
		free(j);
		return;
	}
	worker_post(s->read, store_read_run, store_read_done, j);
	if (s->loop == NULL) {
		worker_drain(s->read);
		worker_complete(s->read);
	}
}
