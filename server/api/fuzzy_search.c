/*
 * fuzzyFileSearch and its experimental sessions (sessionStart, sessionUpdate, sessionStop,
 * gated by experimentalApi as upstream's), forwarded to the connection's search runner
 * (fs/search/search.h): walks and scoring on its worker, answers and notifications from here.
 *
 * Rules kept here: a one-shot search is answered from its completion, also when cancelled by
 * a later search with the same cancellationToken (with what it found, never an error); a
 * session's update is answered {} at once, and its results follow as
 * fuzzyFileSearch/sessionUpdated then fuzzyFileSearch/sessionCompleted, for its latest query
 * only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "session.h"
#include "fs/search/search.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"

/* The roots of a request as a C vector (borrowed strings; the vector is the caller's). */
static const char **
fuzzy_roots(json_t *params, size_t *n)
{
	json_t *roots = json_object_get(params, "roots"), *v;
	const char **out = xcalloc(json_array_size(roots) + 1, sizeof(char *));
	size_t i;

	*n = 0;
	json_array_foreach(roots, i, v)
	{
		out[(*n)++] = json_string_value(v);
	}
	return out;
}

/* A one-shot search finished (or was cancelled): its answer. */
static void
fuzzy_done_cb(void *arg, const struct search_result *res, const char *const *roots)
{
	rpc_reply(arg, search_result_files(res, roots));
}

static void
handle_fuzzy_search(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *query = json_string_value(json_object_get(params, "query"));
	const char *token = json_string_value(json_object_get(params, "cancellationToken"));
	size_t n;
	const char **roots = fuzzy_roots(params, &n);

	if (search_run(fs_session_search(s->fs), query, roots, n, token, fuzzy_done_cb, req) < 0)
		rpc_reply_error(req, RPC_OVERLOADED, "Server overloaded; retry later.",
			json_pack("{s:s}", "codex_error_info", "server_overloaded"));
	free(roots);
}

/* The experimental gate; 0, or -1 once answered. */
static int
fuzzy_gate(struct session *s, struct rpc_req *req, const char *method)
{
	if (rpc_experimental(s->rpc))
		return 0;
	rpc_reply_errorf(
		req, RPC_INVALID_REQUEST, "%s requires experimentalApi capability", method);
	return -1;
}

/* A session's results for its latest query. */
static void
fuzzy_updated_cb(void *arg, const char *session, const char *query, const struct search_result *res,
	const char *const *roots)
{
	struct session *s = arg;
	json_t *files = search_result_files(res, roots);

	rpc_notify(s->rpc, "fuzzyFileSearch/sessionUpdated",
		json_pack("{s:s, s:s, s:O}", "sessionId", session, "query", query, "files",
			json_object_get(files, "files")));
	json_decref(files);
}

/* A session's latest query is done. */
static void
fuzzy_completed_cb(void *arg, const char *session)
{
	struct session *s = arg;

	rpc_notify(s->rpc, "fuzzyFileSearch/sessionCompleted",
		json_pack("{s:s}", "sessionId", session));
}

static void
handle_session_start(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "sessionId"));
	struct search_session_cbs cbs = {fuzzy_updated_cb, fuzzy_completed_cb, s};
	char *cause = NULL;
	size_t n;
	const char **roots;

	if (fuzzy_gate(s, req, "fuzzyFileSearch/sessionStart") < 0)
		return;
	if (*id == '\0') {
		rpc_reply_error(req, RPC_INVALID_REQUEST, "sessionId must not be empty", NULL);
		return;
	}
	roots = fuzzy_roots(params, &n);
	if (search_session_start(fs_session_search(s->fs), id, roots, n, &cbs, &cause) < 0)
		rpc_reply_error(req, RPC_INTERNAL_ERROR, cause, NULL);
	else
		rpc_reply(req, json_object());
	free(roots);
	free(cause);
}

static void
handle_session_update(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "sessionId"));
	const char *query = json_string_value(json_object_get(params, "query"));
	char *cause = NULL;
	int r;

	if (fuzzy_gate(s, req, "fuzzyFileSearch/sessionUpdate") < 0)
		return;
	if ((r = search_session_update(fs_session_search(s->fs), id, query, &cause)) == -ENOENT)
		rpc_reply_error(req, RPC_INVALID_REQUEST, cause, NULL);
	else if (r < 0)
		rpc_reply_error(req, RPC_OVERLOADED, cause, NULL);
	else
		rpc_reply(req, json_object());
	free(cause);
}

static void
handle_session_stop(struct session *s, struct rpc_req *req, json_t *params)
{
	if (fuzzy_gate(s, req, "fuzzyFileSearch/sessionStop") < 0)
		return;
	search_session_stop(
		fs_session_search(s->fs), json_string_value(json_object_get(params, "sessionId")));
	rpc_reply(req, json_object());
}

const struct rpc_method api_fuzzy_search_methods[] = {
	{"fuzzyFileSearch", handle_fuzzy_search, 0},
	{"fuzzyFileSearch/sessionStart", handle_session_start, 0},
	{"fuzzyFileSearch/sessionUpdate", handle_session_update, 0},
	{"fuzzyFileSearch/sessionStop", handle_session_stop, 0},
	{NULL, NULL, 0},
};
