/*
 * Thread sections (upstream 0.169's stable threadSection methods and thread/section/move):
 * the params read here, the checks and the SQLite work in the store (store_sections.h), the
 * answer when the index worker is done. A successful move is told to every connection with
 * thread/section/changed {threadId, sectionId}, after its answer, as upstream broadcasts it
 * (also when nothing changed: the same section again). Deleting a section tells nobody: its
 * threads are in none afterwards, which a client learns from its next thread/list or read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/session.h"
#include "api/subscribers/subscribers.h"
#include "api/thread.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"
#include "thread/store/store_sections.h"

/* A request waiting for the index worker; a move's notification params when it succeeds. */
struct sections_req {
	struct rpc_req *req;
	json_t *changed;
};

static struct sections_req *
sections_req(struct rpc_req *req)
{
	struct sections_req *x = xcalloc(1, sizeof *x);

	x->req = req;
	return x;
}

static void
sections_cb(void *arg, int r, json_t *result, const char *cause)
{
	struct sections_req *x = arg;

	if (r != 0) {
		thread_api_error(x->req, r, cause, NULL);
	} else {
		rpc_reply(x->req, result);
		if (x->changed != NULL)
			subs_broadcast("thread/section/changed", json_incref(x->changed));
	}
	json_decref(x->changed);
	free(x);
}

/* The store, or NULL after answering why there is none. */
static struct store *
sections_store(struct session *s, struct rpc_req *req)
{
	char *cause = NULL;
	struct store *st = thread_api_store(s, &cause);

	if (st == NULL)
		thread_api_error(req, -EIO, cause, NULL);
	free(cause);
	return st;
}

static void
section_list(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st = sections_store(s, req);
	json_t *limit = json_object_get(params, "limit");

	if (st == NULL)
		return;
	store_section_list(st, json_string_value(json_object_get(params, "cursor")),
		json_is_integer(limit) ? json_integer_value(limit) : -1, sections_cb,
		sections_req(req));
}

static void
section_create(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st = sections_store(s, req);

	if (st == NULL)
		return;
	store_section_create(st, json_string_value(json_object_get(params, "name")),
		json_object_get(params, "appearance"), sections_cb, sections_req(req));
}

static void
section_update(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st = sections_store(s, req);
	json_t *appearance = json_object_get(params, "appearance");

	if (st == NULL)
		return;
	/* absent: kept; null: cleared; an object: replaced */
	store_section_update(st, json_string_value(json_object_get(params, "sectionId")),
		json_string_value(json_object_get(params, "name")), appearance != NULL, appearance,
		sections_cb, sections_req(req));
}

static void
section_delete(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st = sections_store(s, req);

	if (st == NULL)
		return;
	store_section_delete(st, json_string_value(json_object_get(params, "sectionId")),
		sections_cb, sections_req(req));
}

static void
section_move(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st = sections_store(s, req);
	const char *thread = json_string_value(json_object_get(params, "threadId"));
	const char *section = json_string_value(json_object_get(params, "sectionId"));
	struct sections_req *x;

	if (st == NULL)
		return;
	x = sections_req(req);
	x->changed = json_pack("{s:s,s:o}", "threadId", thread, "sectionId",
		section != NULL ? json_string(section) : json_null());
	store_section_move(st, thread, section,
		json_string_value(json_object_get(params, "beforeThreadId")), sections_cb, x);
}

const struct rpc_method api_sections_methods[] = {
	{"threadSection/list", section_list, 0},
	{"threadSection/create", section_create, 0},
	{"threadSection/update", section_update, 0},
	{"threadSection/delete", section_delete, 0},
	{"thread/section/move", section_move, 0},
	{NULL, NULL, 0},
};
