/*
 * Reading threads: thread/read (a whole history is built on the store's read worker, never on
 * the loop), thread/list (keyset pages of the SQLite index), thread/turns/list and
 * thread/items/list (pages of one rollout), thread/loaded/list (this daemon's loaded threads).
 * A bad cursor is -32602 with data {cursor}, as the store reports it. And what every thread
 * method answers with: a store error in upstream's terms, a {thread, ...} result with its turns
 * spliced in as text.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "session.h"
#include "thread.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"
#include "thread/store/store.h"

#define THREAD_LOADED_LIMIT 100 /* thread/loaded/list page size at most (and by default) */

/* The daemon's store, or NULL after answering the error. */
static struct store *
thread_read_store(struct session *s, struct rpc_req *req)
{
	char *cause = NULL;
	struct store *st = thread_api_store(s, &cause);

	if (st == NULL) {
		thread_api_error(req, -EIO, cause, NULL);
		free(cause);
	}
	return st;
}

/* thread/read's answer, once the store read the thread (turns off the loop). */
static void
thread_read_cb(
	void *arg, int r, json_t *thread, const char *turns, size_t turns_len, const char *cause)
{
	struct rpc_req *req = arg;

	if (r != 0) {
		thread_api_error(req, r, cause, NULL);
		json_decref(thread);
		return;
	}
	thread_api_reply_thread(req, thread, turns, turns_len, NULL);
}

static void
thread_read(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st = thread_read_store(s, req);

	if (st == NULL)
		return;
	store_read_async(st, json_string_value(json_object_get(params, "threadId")),
		json_is_true(json_object_get(params, "includeTurns")), thread_read_cb, req);
}

/* thread/list's answer from the index. */
struct thread_list {
	struct rpc_req *req;
	char *cursor;
};

static void
thread_list_cb(void *arg, int r, json_t *result, const char *cause)
{
	struct thread_list *x = arg;

	if (r != 0)
		thread_api_error(x->req, r, cause, x->cursor);
	else
		rpc_reply(x->req, result);
	free(x->cursor);
	free(x);
}

/* An array param, or NULL (null and absent alike). */
static json_t *
thread_read_array(const json_t *params, const char *key)
{
	json_t *v = json_object_get(params, key);

	return json_is_null(v) ? NULL : v;
}

static void
thread_list(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st = thread_read_store(s, req);
	struct store_list_params p = {0};
	struct thread_list *x;
	const char *cursor = json_string_value(json_object_get(params, "cursor"));
	json_t *section;

	if (st == NULL)
		return;
	p.cursor = cursor;
	p.limit = json_integer_value(json_object_get(params, "limit"));
	p.sort_key = json_string_value(json_object_get(params, "sortKey"));
	p.sort_direction = json_string_value(json_object_get(params, "sortDirection"));
	p.archived = json_is_true(json_object_get(params, "archived"));
	p.model_providers = thread_read_array(params, "modelProviders");
	p.source_kinds = thread_read_array(params, "sourceKinds");
	p.cwd = thread_read_array(params, "cwd");
	p.excluded_ids = thread_read_array(params, "excludedThreadIds");
	p.search_term = json_string_value(json_object_get(params, "searchTerm"));
	if ((section = json_object_get(params, "sectionId")) != NULL) {
		p.section_mode = json_is_null(section) ? 1 : 2;
		p.section_id = json_string_value(section);
	}
	x = xcalloc(1, sizeof *x);
	x->req = req;
	x->cursor = cursor != NULL ? xstrdup(cursor) : NULL;
	store_list(st, &p, thread_list_cb, x);
}

/* The page params of turns/list and items/list. */
static void
thread_page_params(const json_t *params, struct store_page_params *p)
{
	json_t *cursor = json_object_get(params, "cursor");

	memset(p, 0, sizeof *p);
	p->cursor = json_string_value(cursor);
	if (json_is_object(cursor))
		p->anchor_item_id = json_string_value(json_object_get(cursor, "itemId"));
	p->limit = json_integer_value(json_object_get(params, "limit"));
	p->sort_direction = json_string_value(json_object_get(params, "sortDirection"));
	p->items_view = json_string_value(json_object_get(params, "itemsView"));
	p->turn_id = json_string_value(json_object_get(params, "turnId"));
}

static void
thread_turns_list(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st = thread_read_store(s, req);
	struct store_page_params p;
	json_t *result = NULL;
	char *cause = NULL;
	int r;

	if (st == NULL)
		return;
	thread_page_params(params, &p);
	r = store_turns_list(
		st, json_string_value(json_object_get(params, "threadId")), &p, &result, &cause);
	if (r != 0)
		thread_api_error(req, r, cause, p.cursor);
	else
		rpc_reply(req, result);
	free(cause);
}

static void
thread_items_list(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st = thread_read_store(s, req);
	struct store_page_params p;
	json_t *result = NULL;
	char *cause = NULL;
	int r;

	if (st == NULL)
		return;
	thread_page_params(params, &p);
	r = store_items_list(
		st, json_string_value(json_object_get(params, "threadId")), &p, &result, &cause);
	if (r != 0)
		thread_api_error(req, r, cause, p.cursor);
	else
		rpc_reply(req, result);
	free(cause);
}

/*
 * thread/loaded/list: ids oldest first; the cursor is the last id of the previous page (an id
 * no longer loaded starts from the beginning).
 */
static void
thread_loaded_list(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st = thread_read_store(s, req);
	const char *cursor = json_string_value(json_object_get(params, "cursor"));
	json_int_t limit = json_integer_value(json_object_get(params, "limit"));
	json_t *ids, *page, *id;
	size_t i, from = 0;

	if (st == NULL)
		return;
	if (limit <= 0 || limit > THREAD_LOADED_LIMIT)
		limit = THREAD_LOADED_LIMIT;
	ids = store_loaded_ids(st);
	json_array_foreach(ids, i,
		id) if (cursor != NULL && strcmp(json_string_value(id), cursor) == 0) from = i + 1;
	page = json_array();
	for (i = from; i < json_array_size(ids) && (json_int_t)json_array_size(page) < limit; i++)
		json_array_append(page, json_array_get(ids, i));
	rpc_reply(req,
		json_pack("{s:o, s:o}", "data", page, "nextCursor",
			i < json_array_size(ids) ? json_incref(json_array_get(ids, i - 1))
						 : json_null()));
	json_decref(ids);
}

void
thread_api_error(struct rpc_req *req, int r, const char *cause, const char *cursor)
{
	int code = store_rpc_code(r);
	json_t *data = NULL;

	if (code == RPC_INVALID_PARAMS && cursor != NULL)
		data = json_pack("{s:s}", "cursor", cursor);
	rpc_reply_error(req, code, cause != NULL ? cause : "thread store error", data);
}

static int
thread_text_cb(const char *p, size_t n, void *arg)
{
	return buf_add(arg, p, n) == 0 ? 0 : -1;
}

void
thread_api_reply_thread(
	struct rpc_req *req, json_t *thread, const char *turns, size_t turns_len, json_t *rest)
{
	static const char tail[] = "\"turns\":[]}"; /* the Thread's last member */
	const size_t tl = sizeof tail - 1;
	struct buf b;
	size_t mark;
	int r;

	buf_init(&b, SIZE_MAX / 2);
	r = buf_adds(&b, "{\"thread\":");
	mark = b.len;
	if (r == 0 && json_dump_callback(thread, thread_text_cb, &b, JSON_COMPACT) != 0)
		r = -E2BIG;
	if (r == 0 && turns != NULL) {
		if (b.len - mark < tl || memcmp(b.ptr + b.len - tl, tail, tl) != 0) {
			r = -EINVAL;
		} else {
			buf_truncate(&b, b.len - 3);
			if ((r = buf_add(&b, turns, turns_len)) == 0)
				r = buf_addc(&b, '}');
		}
	}
	if (r == 0 && rest != NULL && json_object_size(rest) > 0) {
		mark = b.len;
		if ((r = buf_addc(&b, ',')) == 0 &&
			json_dump_callback(rest, thread_text_cb, &b, JSON_COMPACT) != 0)
			r = -E2BIG;
		/* the rest's own braces go: its members follow the thread's */
		if (r == 0) {
			memmove(b.ptr + mark + 1, b.ptr + mark + 2, b.len - mark - 2);
			buf_truncate(&b, b.len - 2);
		}
	}
	if (r == 0)
		r = buf_addc(&b, '}');
	if (r == 0)
		rpc_reply_raw(req, b.ptr, b.len);
	else
		rpc_reply_errorf(
			req, RPC_INTERNAL_ERROR, "failed to write the thread: %s", strerror(-r));
	buf_free(&b);
	json_decref(thread);
	json_decref(rest);
}

const struct rpc_method api_thread_read_methods[] = {
	{"thread/read", thread_read, 0},
	{"thread/list", thread_list, 0},
	{"thread/turns/list", thread_turns_list, 0},
	{"thread/items/list", thread_items_list, 0},
	{"thread/loaded/list", thread_loaded_list, 0},
	{NULL, NULL, 0},
};
