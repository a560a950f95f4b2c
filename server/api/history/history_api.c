/*
 * thread/revert and thread/inject_items: a loaded thread's model-visible history cut before a
 * turn, or extended with raw Responses items. Upstream 0.169's words and order:
 *   - both need a loaded thread: "thread not found: <id>" (-32600) otherwise, after the id's
 *     own check ("invalid thread id: ...");
 *   - revert: "turn not found: <id>" for a turn the history does not hold (a reverted one
 *     included); a running turn is interrupted first (turn/completed "interrupted"), then the
 *     rollout is cut (store_revert), then {thread (turns []), turnsBackwardsCursor,
 *     itemsBackwardsCursor} and thread/reverted {threadId}. Files the turns changed stay.
 *   - inject_items: "items must not be empty", "items[N] is not a valid response item: ..."
 *     (serde's words for the common cases), then {}; allowed while a turn runs (the items join
 *     its history and its span of the rollout).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/session.h"
#include "api/thread.h"
#include "api/turn.h"
#include "agent/agent.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"
#include "thread/store/store.h"
#include "thread/uuidv7.h"

/* A revert waiting for its copy to reach the disk. */
struct history_revert {
	struct session *s;
	struct rpc_req *req;
	char id[UUID_STRLEN + 1];
};

/*
 * The loaded thread named by params.threadId (its canonical id in canon), or NULL after
 * answering upstream's error.
 */
static struct store_thread *
history_thread(struct session *s, struct rpc_req *req, json_t *params, char canon[UUID_STRLEN + 1])
{
	const char *id = json_string_value(json_object_get(params, "threadId"));
	struct store_thread *t;
	char *why = NULL, *cause = NULL;

	if (uuidv7_check(id, &why) != 0) {
		rpc_reply_errorf(req, -32600, "invalid thread id: %s", why ? why : "missing");
		free(why);
		return NULL;
	}
	uuidv7_canon(id, canon);
	if (thread_api_store(s, &cause) == NULL) {
		thread_api_error(req, -EIO, cause, NULL);
		free(cause);
		return NULL;
	}
	if ((t = thread_api_loaded(s, canon)) == NULL)
		rpc_reply_errorf(req, -32600, "thread not found: %s", canon);
	return t;
}

/* The backwardsCursor of a one-entry newest-first page (turns or items), or NULL. */
static json_t *
history_cursor(struct store *st, const char *id, int items)
{
	struct store_page_params p = {
		.limit = 1, .sort_direction = "desc", .items_view = "notLoaded"};
	json_t *page = NULL, *c = NULL;
	char *cause = NULL;
	int r = items ? store_items_list(st, id, &p, &page, &cause)
		      : store_turns_list(st, id, &p, &page, &cause);

	if (r == 0 && json_array_size(json_object_get(page, "data")) > 0)
		c = json_incref(json_object_get(page, "backwardsCursor"));
	json_decref(page);
	free(cause);
	return c != NULL && json_is_string(c) ? c : (json_decref(c), json_null());
}

/* The copy is on disk and in place (r 0), or the revert failed: answer, then notify. */
static void
history_revert_done(void *arg, int r, const char *cause)
{
	struct history_revert *x = arg;
	struct store_thread *t = thread_api_loaded(x->s, x->id);
	char *why = NULL;
	struct store *st = thread_api_store(x->s, &why);
	json_t *rest;

	free(why); /* the store is open: a revert started on it */
	if (r != 0 || t == NULL || st == NULL) {
		thread_api_error(x->req, r != 0 ? r : -ENOENT, cause, NULL);
		free(x);
		return;
	}
	rest = json_pack("{s:o, s:o}", "turnsBackwardsCursor", history_cursor(st, x->id, 0),
		"itemsBackwardsCursor", history_cursor(st, x->id, 1));
	thread_api_reply_thread(x->req, store_thread_json(t, NULL), NULL, 0, rest);
	thread_api_notify(x->s, x->id, "thread/reverted", json_pack("{s:s}", "threadId", x->id));
	/* a new agent: the history it sends is read back from the cut rollout */
	turn_api_thread_opened(x->s, x->id);
	free(x);
}

static void
thread_revert(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *turn = json_string_value(json_object_get(params, "beforeTurnId"));
	char id[UUID_STRLEN + 1], *cause = NULL;
	struct store_thread *t = history_thread(s, req, params, id);
	struct history_revert *x;
	int r;

	if (t == NULL)
		return;
	if (!store_thread_has_turn(t, turn)) {
		rpc_reply_errorf(req, -32600, "turn not found: %s", turn);
		return;
	}
	/* a running turn is part of what goes: it ends (and says so) before the cut */
	thread_api_drop_agent(s, id);
	x = xcalloc(1, sizeof *x);
	x->s = s;
	x->req = req;
	memcpy(x->id, id, sizeof x->id);
	if ((r = store_revert(t, turn, history_revert_done, x, &cause)) != 0) {
		thread_api_error(req, r, cause, NULL);
		free(cause);
		free(x);
		turn_api_thread_opened(s, id);
	}
}

/* serde's name of a JSON value that is not an object, as its "invalid type" message says. */
static char *
history_serde_kind(const json_t *v)
{
	char *text;
	char *out;

	switch (json_typeof(v)) {
	case JSON_NULL:
		return xstrdup("null");
	case JSON_ARRAY:
		return xstrdup("sequence");
	case JSON_STRING:
		return xasprintf("string \"%s\"", json_string_value(v));
	case JSON_TRUE:
	case JSON_FALSE:
		return xasprintf("boolean `%s`", json_is_true(v) ? "true" : "false");
	case JSON_INTEGER:
		return xasprintf("integer `%lld`", (long long)json_integer_value(v));
	default:
		text = json_dumps(v, JSON_ENCODE_ANY);
		out = xasprintf("floating point `%s`", text != NULL ? text : "?");
		free(text);
		return out;
	}
}

/* Whether every item can be a Responses item; otherwise answers upstream's error. */
static int
history_items_valid(struct rpc_req *req, const json_t *items)
{
	size_t i;
	json_t *it;

	if (json_array_size(items) == 0) {
		rpc_reply_errorf(req, -32600, "items must not be empty");
		return 0;
	}
	json_array_foreach(items, i, it)
	{
		char *kind;

		if (json_is_object(it) && json_is_string(json_object_get(it, "type")))
			continue;
		if (json_is_object(it) && json_object_get(it, "type") == NULL) {
			rpc_reply_errorf(req, -32600,
				"items[%zu] is not a valid response item: missing field `type`", i);
			return 0;
		}
		kind = history_serde_kind(json_is_object(it) ? json_object_get(it, "type") : it);
		rpc_reply_errorf(req, -32600,
			"items[%zu] is not a valid response item: invalid type: %s, expected %s", i,
			kind,
			json_is_object(it) ? "a string" : "internally tagged enum ResponseItem");
		free(kind);
		return 0;
	}
	return 1;
}

static void
thread_inject_items(struct session *s, struct rpc_req *req, json_t *params)
{
	json_t *items = json_object_get(params, "items");
	char id[UUID_STRLEN + 1];
	struct store_thread *t = history_thread(s, req, params, id);
	struct turn_thread *tt;
	size_t i;
	json_t *it;
	int r = 0;

	if (t == NULL || !history_items_valid(req, items))
		return;
	if ((tt = thread_api_agent(s, id)) != NULL && tt->agent != NULL) {
		agent_inject_items(tt->agent, items);
	} else {
		/* no agent yet: the rollout alone, which the first turn's agent reads back */
		json_array_foreach(items, i, it) if (r == 0) r = store_append_response_item(t, it);
	}
	if (r != 0) {
		thread_api_error(
			req, r, r == -EBUSY ? "thread is being reverted" : strerror(-r), NULL);
		return;
	}
	rpc_reply(req, json_object());
}

const struct rpc_method api_history_methods[] = {
	{"thread/revert", thread_revert, 0},
	{"thread/inject_items", thread_inject_items, 0},
	{NULL, NULL, 0},
};
