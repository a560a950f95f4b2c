/*
 * The fs/ file operations, fs/watch and fs/unwatch: the connection's workspace state (struct
 * fs_session: a worker pool for file operations, the watch engine, the search runner used by
 * fuzzy_search.c) and the handlers that forward to server/fs/.
 *
 * Rules kept here:
 *   - no file is read, written or listed on the loop thread: every file operation runs on the
 *     pool (FS_POOL_THREADS threads) and is answered from its completion; fs/watch only places
 *     inotify watches (path lookups, no file read);
 *   - every request is answered exactly once: when the connection ends, fs_session_free joins
 *     the pool and the search worker before rpc_free, and the completions that were still due
 *     answer their requests then (an error for an operation that never ran, the files found so
 *     far for a search), so no completion ever runs on a freed request.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "session.h"
#include "fs/fs.h"
#include "fs/fs_watch.h"
#include "fs/fs_worker.h"
#include "fs/search/search.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"

#define FS_POOL_THREADS 2

struct fs_session {
	struct session *s;
	struct fs_worker *pool;
	struct fs_watch *watch; /* NULL once killed */
	struct search_runner *search;
};

/* An fs/readFile in flight. */
struct fs_read_job {
	struct rpc_req *req;
	json_t *params;
	char *text;
	size_t len;
	struct fs_err err;
};

static void fs_changed_cb(void *arg, const char *id, const char *const *paths, size_t n);

struct fs_session *
fs_session_new(struct session *s)
{
	struct fs_session *f = xcalloc(1, sizeof(*f));
	struct fs_watch_cbs cbs = {fs_changed_cb, f};

	f->s = s;
	f->watch = fs_watch_new(s->loop, &cbs);
	return f;
}

/* The file operation pool, started at the first file request (start-up stays thread-free). */
static struct fs_worker *
fs_session_pool(struct fs_session *f)
{
	if (f->pool == NULL)
		f->pool = fs_worker_new(f->s->loop, FS_POOL_THREADS);
	return f->pool;
}

/* Join the workers (their last completions answer their requests), then free. */
void
fs_session_free(struct fs_session *f)
{
	if (f == NULL)
		return;
	if (f->pool != NULL)
		fs_worker_free(f->pool);
	if (f->search != NULL)
		search_runner_free(f->search);
	fs_watch_free(f->watch);
	free(f);
}

/* Disconnect or shutdown: watches dropped, searches cancelled (still answered). */
void
fs_session_kill(struct fs_session *f)
{
	if (f == NULL)
		return;
	fs_watch_free(f->watch);
	f->watch = NULL;
	if (f->search != NULL)
		search_runner_cancel(f->search);
}

/* Searches that will still answer (shutdown at end of input waits for them, bounded). */
size_t
fs_session_busy(const struct fs_session *f)
{
	return f != NULL && f->search != NULL ? search_runner_pending(f->search) : 0;
}

/* Watches in place (for tests and logs). */
size_t
fs_session_watches(const struct fs_session *f)
{
	return f != NULL ? fs_watch_count(f->watch) : 0;
}

/* The search runner of the connection (fuzzy_search.c). */
struct search_runner *
fs_session_search(struct fs_session *f)
{
	if (f->search == NULL)
		f->search = search_runner_new(f->s->loop);
	return f->search;
}

/* A watch's report: one fs/changed. */
static void
fs_changed_cb(void *arg, const char *id, const char *const *paths, size_t n)
{
	struct fs_session *f = arg;
	json_t *list = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(list, json_string(paths[i]));
	rpc_notify(f->s->rpc, "fs/changed",
		json_pack("{s:s, s:o}", "watchId", id, "changedPaths", list));
}

/* The completion of an fs operation: its answer. */
static void
fs_op_done_cb(void *arg, json_t *result, const struct fs_err *err)
{
	struct rpc_req *req = arg;

	if (err->message != NULL)
		rpc_reply_error(req, err->code, err->message, NULL);
	else
		rpc_reply(req, json_incref(result));
}

/* Run an fs operation on the pool; its completion answers. */
static void
fs_forward(struct session *s, struct rpc_req *req, json_t *params, const char *method)
{
	if (fs_worker_op(fs_session_pool(s->fs), method, params, fs_op_done_cb, req) < 0)
		rpc_reply_error(req, RPC_OVERLOADED, "Server overloaded; retry later.",
			json_pack("{s:s}", "codex_error_info", "server_overloaded"));
}

/* Worker: read the file into its answer's text. */
static void
fs_read_run_cb(void *arg)
{
	struct fs_read_job *j = arg;

	fs_read_file_text(j->params, &j->text, &j->len, &j->err);
}

/* Loop: answer the read (an error if it never ran). */
static void
fs_read_done_cb(void *arg, int cancelled)
{
	struct fs_read_job *j = arg;

	if (j->text != NULL)
		rpc_reply_raw(j->req, j->text, j->len);
	else if (j->err.message != NULL)
		rpc_reply_error(j->req, j->err.code, j->err.message, NULL);
	else
		rpc_reply_error(j->req, RPC_INTERNAL_ERROR, "server is shutting down", NULL);
	json_decref(j->params);
	fs_err_clear(&j->err);
	free(j->text);
	free(j);
}

static void
handle_read_file(struct session *s, struct rpc_req *req, json_t *params)
{
	struct fs_read_job *j = xcalloc(1, sizeof(*j));

	j->req = req;
	j->params = json_incref(params);
	if (fs_worker_submit(fs_session_pool(s->fs), fs_read_run_cb, fs_read_done_cb, j) < 0) {
		json_decref(j->params);
		free(j);
		rpc_reply_error(req, RPC_OVERLOADED, "Server overloaded; retry later.",
			json_pack("{s:s}", "codex_error_info", "server_overloaded"));
	}
}

static void
handle_write_file(struct session *s, struct rpc_req *req, json_t *params)
{
	fs_forward(s, req, params, "fs/writeFile");
}

static void
handle_create_directory(struct session *s, struct rpc_req *req, json_t *params)
{
	fs_forward(s, req, params, "fs/createDirectory");
}

static void
handle_get_metadata(struct session *s, struct rpc_req *req, json_t *params)
{
	fs_forward(s, req, params, "fs/getMetadata");
}

static void
handle_read_directory(struct session *s, struct rpc_req *req, json_t *params)
{
	fs_forward(s, req, params, "fs/readDirectory");
}

static void
handle_remove(struct session *s, struct rpc_req *req, json_t *params)
{
	fs_forward(s, req, params, "fs/remove");
}

static void
handle_copy(struct session *s, struct rpc_req *req, json_t *params)
{
	fs_forward(s, req, params, "fs/copy");
}

static void
handle_watch(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "watchId"));
	struct fs_err err = {0};
	char *path = NULL, *cause = NULL;
	int r;

	if (fs_param_path(params, "path", &path, &err) < 0) {
		rpc_reply_error(req, err.code, err.message, NULL);
		goto out;
	}
	if (s->fs->watch == NULL) {
		rpc_reply_error(req, RPC_INTERNAL_ERROR, "server is shutting down", NULL);
		goto out;
	}
	if ((r = fs_watch_add(s->fs->watch, id, path, &cause)) == -EEXIST)
		rpc_reply_errorf(req, RPC_INVALID_REQUEST, "watchId already exists: %s", id);
	else if (r < 0)
		rpc_reply_error(req, RPC_INTERNAL_ERROR, cause, NULL);
	else
		rpc_reply(req, json_pack("{s:s}", "path", path));
out:
	fs_err_clear(&err);
	free(path);
	free(cause);
}

static void
handle_unwatch(struct session *s, struct rpc_req *req, json_t *params)
{
	if (s->fs->watch != NULL)
		fs_watch_remove(
			s->fs->watch, json_string_value(json_object_get(params, "watchId")));
	rpc_reply(req, json_object());
}

const struct rpc_method api_fs_methods[] = {
	{"fs/readFile", handle_read_file, 0},
	{"fs/writeFile", handle_write_file, 0},
	{"fs/createDirectory", handle_create_directory, 0},
	{"fs/getMetadata", handle_get_metadata, 0},
	{"fs/readDirectory", handle_read_directory, 0},
	{"fs/remove", handle_remove, 0},
	{"fs/copy", handle_copy, 0},
	{"fs/watch", handle_watch, 0},
	{"fs/unwatch", handle_unwatch, 0},
	{NULL, NULL, 0},
};
