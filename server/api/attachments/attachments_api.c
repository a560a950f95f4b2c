/*
 * Thread attachments (upstream 0.169's stable thread/attachment methods and
 * thread/attachmentOwner/list): the params read here, the checks and the SQLite work in the
 * store (thread/store/attach/attachments.h), the answer when the index worker is done. An add that
 * created an attachment and a remove that deleted one are told to every connection with
 * thread/attachment/updated {threadId, attachmentType, identityKey, attachmentId, operation},
 * after the answer, as upstream broadcasts it; an add that found it, or a remove of nothing,
 * tells nobody.
 */
#include <errno.h>
#include <stdlib.h>

#include "api/api.h"
#include "api/session.h"
#include "api/subscribers/subscribers.h"
#include "api/thread.h"
#include "rpc/rpc.h"
#include "thread/store/attach/attachments.h"

static void
attachments_cb(void *arg, int r, json_t *result, json_t *updated, const char *cause)
{
	struct rpc_req *req = arg;

	if (r != 0) {
		thread_api_error(req, r, cause, NULL);
		return;
	}
	rpc_reply(req, result);
	if (updated != NULL)
		subs_broadcast("thread/attachment/updated", updated);
}

/* The store, or NULL after answering why there is none. */
static struct store *
attachments_store(struct session *s, struct rpc_req *req)
{
	char *cause = NULL;
	struct store *st = thread_api_store(s, &cause);

	if (st == NULL)
		thread_api_error(req, -EIO, cause, NULL);
	free(cause);
	return st;
}

static const char *
attachments_str(const json_t *params, const char *key)
{
	return json_string_value(json_object_get(params, key));
}

static int64_t
attachments_limit(const json_t *params)
{
	json_t *limit = json_object_get(params, "limit");

	return json_is_integer(limit) ? json_integer_value(limit) : -1;
}

static void
attachment_add(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st = attachments_store(s, req);

	if (st == NULL)
		return;
	store_attachment_add(st, attachments_str(params, "threadId"),
		attachments_str(params, "attachmentType"), attachments_str(params, "identityKey"),
		json_object_get(params, "payload"), attachments_cb, req);
}

static void
attachment_remove(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st = attachments_store(s, req);

	if (st == NULL)
		return;
	store_attachment_remove(st, attachments_str(params, "threadId"),
		attachments_str(params, "attachmentType"), attachments_str(params, "identityKey"),
		attachments_cb, req);
}

static void
attachment_list(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st = attachments_store(s, req);

	if (st == NULL)
		return;
	store_attachment_list(st, attachments_str(params, "threadId"),
		attachments_str(params, "cursor"), attachments_limit(params), attachments_cb, req);
}

static void
attachment_owner_list(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st = attachments_store(s, req);
	json_t *archived = json_object_get(params, "archived");

	if (st == NULL)
		return;
	/* absent or null: every owner; false: those not archived; true: the archived ones */
	store_attachment_owners(st, attachments_str(params, "attachmentType"),
		attachments_str(params, "identityKey"),
		json_is_boolean(archived) ? json_is_true(archived) : -1,
		attachments_str(params, "cursor"), attachments_limit(params), attachments_cb, req);
}

const struct rpc_method api_attachments_methods[] = {
	{"thread/attachment/add", attachment_add, 0},
	{"thread/attachment/list", attachment_list, 0},
	{"thread/attachment/remove", attachment_remove, 0},
	{"thread/attachmentOwner/list", attachment_owner_list, 0},
	{NULL, NULL, 0},
};
