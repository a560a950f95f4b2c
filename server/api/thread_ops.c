/*
 * Changing threads: thread/archive (the thread unloads first: thread/status/changed(notLoaded)
 * before the {} answer, thread/archived after it), thread/unarchive ({thread}, then
 * thread/unarchived), thread/delete ({}, then thread/deleted), thread/name/set ({}, then
 * thread/name/updated), thread/metadata/update ({thread}) and thread/unsubscribe (this
 * connection stops hearing the thread's turns; the thread stays loaded).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "session.h"
#include "thread.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"
#include "thread/store/store.h"

/* The daemon's store, or NULL after answering the error. */
static struct store *
thread_ops_store(struct session *s, struct rpc_req *req)
{
	char *cause = NULL;
	struct store *st = thread_api_store(s, &cause);

	if (st == NULL) {
		thread_api_error(req, -EIO, cause, NULL);
		free(cause);
	}
	return st;
}

/* Unload a thread for archive / delete, telling the client it is no longer loaded. */
static void
thread_ops_unload(struct session *s, const char *id)
{
	if (id == NULL || thread_api_loaded(s, id) == NULL)
		return;
	thread_api_unload(s, id);
	rpc_notify(s->rpc, "thread/status/changed",
		json_pack("{s:s, s:{s:s}}", "threadId", id, "status", "type", "notLoaded"));
}

static void
thread_archive(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "threadId"));
	struct store *st = thread_ops_store(s, req);
	char *cause = NULL, *copy;
	int r;

	if (st == NULL)
		return;
	copy = xstrdup(id);
	thread_ops_unload(s, copy);
	if ((r = store_archive(st, copy, &cause)) != 0)
		thread_api_error(req, r, cause, NULL);
	else {
		rpc_reply(req, json_object());
		rpc_notify(s->rpc, "thread/archived", json_pack("{s:s}", "threadId", copy));
	}
	free(cause);
	free(copy);
}

static void
thread_unarchive(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "threadId"));
	struct store *st = thread_ops_store(s, req);
	json_t *thread = NULL;
	char *cause = NULL;
	int r;

	if (st == NULL)
		return;
	if ((r = store_unarchive(st, id, &thread, &cause)) != 0)
		thread_api_error(req, r, cause, NULL);
	else {
		rpc_reply(req, json_pack("{s:o}", "thread", thread));
		rpc_notify(s->rpc, "thread/unarchived", json_pack("{s:s}", "threadId", id));
	}
	free(cause);
}

static void
thread_delete(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "threadId"));
	struct store *st = thread_ops_store(s, req);
	char *cause = NULL, *copy;
	int r;

	if (st == NULL)
		return;
	copy = xstrdup(id);
	thread_ops_unload(s, copy);
	if ((r = store_delete(st, copy, &cause)) != 0)
		thread_api_error(req, r, cause, NULL);
	else {
		rpc_reply(req, json_object());
		rpc_notify(s->rpc, "thread/deleted", json_pack("{s:s}", "threadId", copy));
	}
	free(cause);
	free(copy);
}

static void
thread_name_set(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "threadId"));
	const char *name = json_string_value(json_object_get(params, "name"));
	struct store *st = thread_ops_store(s, req);
	char *cause = NULL;
	int r;

	if (st == NULL)
		return;
	if ((r = store_set_name(st, id, name, &cause)) != 0)
		thread_api_error(req, r, cause, NULL);
	else {
		/* the name as stored: trimmed, as upstream's normalize_thread_name */
		const char *b = name + strspn(name, " \t\r\n");
		size_t n = strlen(b);

		while (n > 0 && strchr(" \t\r\n", b[n - 1]) != NULL)
			n--;
		rpc_reply(req, json_object());
		rpc_notify(s->rpc, "thread/name/updated",
			json_pack("{s:s, s:s%}", "threadId", id, "threadName", b, n));
	}
	free(cause);
}

static void
thread_metadata_update(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "threadId"));
	json_t *git = json_object_get(params, "gitInfo"), *thread = NULL;
	struct store *st = thread_ops_store(s, req);
	char *cause = NULL;
	int r;

	if (st == NULL)
		return;
	if ((r = store_update_git(st, id, json_is_null(git) ? NULL : git, &thread, &cause)) != 0)
		thread_api_error(req, r, cause, NULL);
	else
		rpc_reply(req, json_pack("{s:o}", "thread", thread));
	free(cause);
}

static void
thread_unsubscribe(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "threadId"));
	const char *status;

	if (id == NULL || thread_api_loaded(s, id) == NULL)
		status = "notLoaded";
	else
		status = thread_api_subscribe(s, id, 0) ? "unsubscribed" : "notSubscribed";
	rpc_reply(req, json_pack("{s:s}", "status", status));
}

const struct rpc_method api_thread_ops_methods[] = {
	{"thread/archive", thread_archive, 0},
	{"thread/unarchive", thread_unarchive, 0},
	{"thread/delete", thread_delete, 0},
	{"thread/name/set", thread_name_set, 0},
	{"thread/metadata/update", thread_metadata_update, 0},
	{"thread/unsubscribe", thread_unsubscribe, 0},
	{NULL, NULL, 0},
};
