/*
 * MCP resources (mcp_resources.h): the three tools' specs and calls, and the listing
 * mcpServerStatus/list shows. One operation asks one server (a page, or a read) or every
 * ready server (every page); its handle is a struct mcp_call whose `res` is set, so callers
 * cancel it as any call.
 *
 * Rule: the operation's `done` runs once, last, never from inside the call that started it
 * (an operation with nothing to ask ends on the loop's next turn).
 */
#include <stdlib.h>
#include <string.h>

#include "mcp_int.h"
#include "mcp_resources.h"
#include "protocol/xmalloc.h"

/* The tools as upstream 0.169 offers them, byte for byte (its recorded request). */
static const char *const mcp_res_specs[] = {
	"{\"type\":\"function\",\"name\":\"list_mcp_resources\",\"description\":\"Lists "
	"resources provided by MCP servers. Resources allow servers to share data that provides "
	"context to language models, such as files, database schemas, or application-specific "
	"information. Prefer resources over web search when possible.\",\"strict\":false,"
	"\"parameters\":{\"type\":\"object\",\"properties\":{\"cursor\":{\"type\":\"string\","
	"\"description\":\"Opaque cursor from a previous list_mcp_resources call; omit for the "
	"first page.\"},\"server\":{\"type\":\"string\",\"description\":\"MCP server name. Omit "
	"to list resources from every configured server.\"}},\"additionalProperties\":false}}",
	"{\"type\":\"function\",\"name\":\"list_mcp_resource_templates\",\"description\":\"Lists "
	"resource templates provided by MCP servers. Parameterized resource templates allow "
	"servers to share data that takes parameters and provides context to language models, "
	"such as files, database schemas, or application-specific information. Prefer resource "
	"templates over web search when possible.\",\"strict\":false,\"parameters\":{\"type\":"
	"\"object\",\"properties\":{\"cursor\":{\"type\":\"string\",\"description\":\"Opaque "
	"cursor from a previous list_mcp_resource_templates call; omit for the first page.\"},"
	"\"server\":{\"type\":\"string\",\"description\":\"MCP server name. Omit to list "
	"resource templates from every configured server.\"}},\"additionalProperties\":false}}",
	"{\"type\":\"function\",\"name\":\"read_mcp_resource\",\"description\":\"Read a specific "
	"resource from an MCP server given the server name and resource URI.\",\"strict\":false,"
	"\"parameters\":{\"type\":\"object\",\"properties\":{\"server\":{\"type\":\"string\","
	"\"description\":\"MCP server name exactly as configured. Must match the 'server' field "
	"returned by list_mcp_resources.\"},\"uri\":{\"type\":\"string\",\"description\":"
	"\"Resource URI to read. Must be one of the URIs returned by list_mcp_resources.\"}},"
	"\"required\":[\"server\",\"uri\"],\"additionalProperties\":false}}",
};

/* The tools' names (the specs' order), the method each asks and its result's list. */
static const struct {
	const char *tool, *method, *key;
} mcp_res_kinds[] = {
	{"list_mcp_resources", "resources/list", "resources"},
	{"list_mcp_resource_templates", "resources/templates/list", "resourceTemplates"},
	{"read_mcp_resource", "resources/read", NULL},
};

/* The shell tools upstream puts before the resource tools. */
static const char *const mcp_res_before[] = {
	"exec_command", "write_stdin", "shell", "shell_command"};

enum mcp_res_mode {
	MCP_RES_ONE,	/* a page of one server, or its read: its errors are the call's */
	MCP_RES_ALL,	/* every page of every ready server, errors left out */
	MCP_RES_GATHER, /* both lists of every server, for mcpServerStatus/list */
};

/* One server's requests in an operation (one method). */
struct mcp_res_sub {
	struct mcp_res *r;
	size_t srv;
	const char *method, *key;
	struct mcp_call *h; /* the request under way, NULL between pages and once over */
	int pages, code;
};

struct mcp_res {
	struct mcp_call *outer; /* the caller's handle */
	struct mcp_set *set;
	struct ev_loop *loop;
	enum mcp_res_mode mode;
	int kind;	/* mcp_res_kinds' index (MCP_RES_ONE, MCP_RES_ALL) */
	json_t *acc;	/* {key: {server: [entries]}} */
	json_t *one;	/* MCP_RES_ONE: the server's result */
	json_t *params; /* MCP_RES_ONE: {uri} or {cursor} */
	char *error;
	struct mcp_res_sub *subs;
	size_t nsubs, pending;
	int cancelling;
	ev_timer later; /* ends an operation with nothing to ask */
};

static int
mcp_res_kind(const char *name)
{
	for (size_t i = 0; name != NULL && i < nitems(mcp_res_kinds); i++)
		if (strcmp(mcp_res_kinds[i].tool, name) == 0)
			return (int)i;
	return -1;
}

int
mcp_resources_tool(const char *name)
{
	return mcp_res_kind(name) >= 0;
}

/* A tool's name in either wire's form. */
static const char *
mcp_res_spec_name(const json_t *t)
{
	return json_string_value(json_object_get(t, "name"))
		?: json_string_value(json_object_get(json_object_get(t, "function"), "name"));
}

void
mcp_resources_specs(json_t *tools, const struct mcp_set *s, int chat)
{
	size_t at = 0, k;
	json_t *t;

	if (mcp_set_count(s) == 0)
		return;
	while (at < json_array_size(tools)) {
		const char *n = mcp_res_spec_name(json_array_get(tools, at)) ?: "";

		for (k = 0; k < nitems(mcp_res_before) && strcmp(n, mcp_res_before[k]) != 0; k++)
			;
		if (k == nitems(mcp_res_before))
			break;
		at++;
	}
	for (k = 0; k < nitems(mcp_res_specs); k++) {
		t = json_loads(mcp_res_specs[k], 0, NULL);
		if (chat) {
			json_object_del(t, "type");
			t = json_pack("{s:s, s:o}", "type", "function", "function", t);
		}
		json_array_insert_new(tools, at + k, t);
	}
}

/* A string argument, NULL when absent or empty (upstream's normalising). */
static const char *
mcp_res_arg(const json_t *args, const char *key)
{
	const char *v = json_string_value(json_object_get(args, key));

	return v != NULL && v[0] != '\0' ? v : NULL;
}

int
mcp_resources_check(const struct mcp_set *s, const char *tool, const char *text,
	const char **server, json_t **args, char **answer)
{
	int kind = mcp_res_kind(tool);
	const char *name;
	json_error_t e;
	json_t *a;

	*args = NULL;
	a = json_loads(text != NULL && text[0] != '\0' ? text : "{}", JSON_DECODE_ANY, &e);
	if (a == NULL || !json_is_object(a)) {
		*answer = xasprintf("failed to parse function arguments: %s",
			a == NULL ? e.text : "invalid type: expected a map");
		json_decref(a);
		return -1;
	}
	if (kind == 2 &&
		(json_object_get(a, "server") == NULL || json_object_get(a, "uri") == NULL)) {
		*answer = xasprintf("failed to parse function arguments: missing field `%s`",
			json_object_get(a, "server") == NULL ? "server" : "uri");
		json_decref(a);
		return -1;
	}
	if (kind == 2 && (mcp_res_arg(a, "server") == NULL || mcp_res_arg(a, "uri") == NULL)) {
		*answer = xasprintf(
			"%s must be provided", mcp_res_arg(a, "server") == NULL ? "server" : "uri");
		json_decref(a);
		return -1;
	}
	name = mcp_res_arg(a, "server");
	if (name != NULL && mcp_set_find(s, name) < 0) {
		*answer = xasprintf("unknown MCP server '%s'", name);
		json_decref(a);
		return -1;
	}
	*server = name != NULL ? mcp_set_name(s, (size_t)mcp_set_find(s, name)) : MCP_RESOURCES_ANY;
	*args = a;
	return 0;
}

static void mcp_res_sub_done(void *arg, const json_t *result, const char *error);

/* Ask sub's server for a page (cursor NULL: the first) or, MCP_RES_ONE, what params say. */
static int
mcp_res_ask(struct mcp_res_sub *sub, const char *cursor, char **cause)
{
	struct mcp_call_cbs cbs = {NULL, mcp_res_sub_done, sub, &sub->code};
	json_t *p = sub->r->mode == MCP_RES_ONE ? json_deep_copy(sub->r->params)
		: cursor != NULL		? json_pack("{s:s}", "cursor", cursor)
						: NULL;

	sub->h = mcp_request(sub->r->set, sub->srv, sub->method, p, &cbs, cause);
	return sub->h != NULL ? 0 : -1;
}

/* The operation's end: its payload (or error) to the caller, then it is gone. */
static void
mcp_res_finish(struct mcp_res *r)
{
	struct mcp_call_cbs cbs = r->outer->cbs;
	json_t *payload = NULL, *result = NULL, *list, *e, *entry, *byserver;
	const char *k, *srv = NULL;
	size_t i;
	char *text;

	ev_timer_stop(r->loop, &r->later);
	if (r->error == NULL && r->mode == MCP_RES_GATHER) {
		result = json_incref(r->acc);
	} else if (r->error == NULL) {
		payload = json_object();
		if (r->mode == MCP_RES_ONE)
			json_object_set_new(payload, "server",
				json_string(srv = mcp_set_name(r->set, r->subs[0].srv)));
		if (r->mode == MCP_RES_ONE && r->kind == 2) {
			/* the read's result, after the server and the uri */
			json_object_set(payload, "uri", json_object_get(r->params, "uri"));
			json_object_foreach(r->one, k, e) json_object_set(payload, k, e);
		} else {
			list = json_array();
			if (r->mode == MCP_RES_ONE)
				e = json_pack("{s:O}", srv,
					json_object_get(r->one, mcp_res_kinds[r->kind].key)
						?: json_null());
			else
				e = json_incref(
					json_object_get(r->acc, mcp_res_kinds[r->kind].key));
			/* each entry after its server's name, the servers in name order */
			json_object_foreach(e, k, byserver) json_array_foreach(byserver, i, entry)
			{
				json_t *o = json_pack("{s:s}", "server", k);

				if (json_is_object(entry))
					json_object_update(o, entry);
				json_array_append_new(list, o);
			}
			json_decref(e);
			json_object_set_new(payload, mcp_res_kinds[r->kind].key, list);
			if (r->mode == MCP_RES_ONE &&
				json_is_string(json_object_get(r->one, "nextCursor")))
				json_object_set(payload, "nextCursor",
					json_object_get(r->one, "nextCursor"));
		}
		text = json_dumps(payload, JSON_COMPACT | JSON_PRESERVE_ORDER);
		result = json_pack(
			"{s:[{s:s, s:s}]}", "content", "type", "text", "text", text ?: "");
		free(text);
		json_decref(payload);
	}
	cbs.done(cbs.arg, r->error == NULL ? result : NULL, r->error);
	json_decref(result);
	json_decref(r->acc);
	json_decref(r->one);
	json_decref(r->params);
	free(r->error);
	free(r->subs);
	free(r->outer);
	free(r);
}

static void
mcp_res_later_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	mcp_res_finish(container_of(w, struct mcp_res, later));
}

/* A request of the operation answered. */
static void
mcp_res_sub_done(void *arg, const json_t *result, const char *error)
{
	struct mcp_res_sub *sub = arg;
	struct mcp_res *r = sub->r;
	const char *srv = mcp_set_name(r->set, sub->srv), *next;
	json_t *byserver, *list, *e;
	char *cause = NULL;
	size_t i;

	sub->h = NULL;
	if (r->cancelling) {
		r->pending--;
		return;
	}
	if (error != NULL && r->mode == MCP_RES_ONE && sub->code != 0 && r->kind == 2)
		r->error = xasprintf("%s failed: %s failed for `%s` (%s): Mcp error: %d: %s",
			sub->method, sub->method, srv,
			json_string_value(json_object_get(r->params, "uri")), sub->code, error);
	else if (error != NULL && r->mode == MCP_RES_ONE && sub->code != 0)
		r->error = xasprintf("%s failed: %s failed for `%s`: Mcp error: %d: %s",
			sub->method, sub->method, srv, sub->code, error);
	else if (error != NULL && r->mode == MCP_RES_ONE)
		r->error = xasprintf("%s failed: %s", sub->method, error);
	else if (error == NULL && r->mode == MCP_RES_ONE)
		r->one = json_incref((json_t *)result);
	else if (error == NULL) {
		byserver = json_object_get(r->acc, sub->key);
		if ((list = json_object_get(byserver, srv)) == NULL)
			json_object_set_new(byserver, srv, list = json_array());
		json_array_foreach(json_object_get(result, sub->key), i, e)
			json_array_append(list, e);
		next = json_string_value(json_object_get(result, "nextCursor"));
		if (next != NULL && next[0] != '\0' && ++sub->pages < MCP_LIST_PAGES &&
			mcp_res_ask(sub, next, &cause) == 0)
			return;
		free(cause);
	}
	if (--r->pending == 0)
		mcp_res_finish(r);
}

/* A new operation on the set; its subs are added by the caller. */
static struct mcp_res *
mcp_res_new(struct mcp_set *s, enum mcp_res_mode mode, int kind, const struct mcp_call_cbs *cbs)
{
	struct mcp_res *r = xcalloc(1, sizeof *r);

	r->outer = xcalloc(1, sizeof *r->outer);
	r->outer->res = r;
	r->outer->cbs = *cbs;
	r->set = s;
	r->loop = s->o.loop;
	r->mode = mode;
	r->kind = kind;
	r->acc = json_pack("{s:{}, s:{}}", "resources", "resourceTemplates");
	r->subs = xcalloc(2 * mcp_set_count(s) + 1, sizeof *r->subs);
	ev_timer_init(&r->later, mcp_res_later_cb, 0., 0.);
	return r;
}

/* Ask every ready server for a list, every page (errors: that server's list is left out). */
static void
mcp_res_all(struct mcp_res *r, int kind)
{
	struct mcp_res_sub *sub;
	char *cause = NULL;

	for (size_t i = 0; i < mcp_set_count(r->set); i++) {
		if (mcp_set_state(r->set, i) != MCP_READY)
			continue;
		sub = &r->subs[r->nsubs];
		sub->r = r;
		sub->srv = i;
		sub->method = mcp_res_kinds[kind].method;
		sub->key = mcp_res_kinds[kind].key;
		if (mcp_res_ask(sub, NULL, &cause) == 0) {
			r->nsubs++;
			r->pending++;
		}
		free(cause);
		cause = NULL;
	}
}

/* Start what was asked; nothing asked: it ends on the loop's next turn. */
static struct mcp_call *
mcp_res_go(struct mcp_res *r)
{
	if (r->pending == 0)
		ev_timer_start(r->loop, &r->later);
	return r->outer;
}

struct mcp_call *
mcp_resources_call(struct mcp_set *s, const char *tool, const json_t *args,
	const struct mcp_call_cbs *cbs, char **cause)
{
	int kind = mcp_res_kind(tool);
	const char *server = mcp_res_arg(args, "server"), *cursor = mcp_res_arg(args, "cursor");
	struct mcp_res *r;

	if (kind < 0) {
		*cause = xasprintf("unsupported MCP resource tool: %s", tool ?: "");
		return NULL;
	}
	if (server == NULL && cursor != NULL) {
		*cause = xstrdup("cursor can only be used when a server is specified");
		return NULL;
	}
	if (server != NULL && mcp_set_find(s, server) < 0) {
		*cause = xasprintf("unknown MCP server '%s'", server);
		return NULL;
	}
	r = mcp_res_new(s, server != NULL ? MCP_RES_ONE : MCP_RES_ALL, kind, cbs);
	if (server == NULL) {
		mcp_res_all(r, kind);
		return mcp_res_go(r);
	}
	r->params = kind == 2	 ? json_pack("{s:s}", "uri", mcp_res_arg(args, "uri"))
		: cursor != NULL ? json_pack("{s:s}", "cursor", cursor)
				 : json_object();
	r->subs[0].r = r;
	r->subs[0].srv = (size_t)mcp_set_find(s, server);
	r->subs[0].method = mcp_res_kinds[kind].method;
	r->subs[0].key = mcp_res_kinds[kind].key;
	r->nsubs = r->pending = 1;
	if (mcp_res_ask(&r->subs[0], NULL, cause) != 0) {
		/* not ready: the call fails at once, without done */
		char *why = *cause;

		*cause = xasprintf("%s failed: %s", r->subs[0].method, why);
		free(why);
		json_decref(r->acc);
		json_decref(r->params);
		free(r->subs);
		free(r->outer);
		free(r);
		return NULL;
	}
	return r->outer;
}

struct mcp_call *
mcp_resources_gather(struct mcp_set *s, const struct mcp_call_cbs *cbs)
{
	struct mcp_res *r = mcp_res_new(s, MCP_RES_GATHER, 0, cbs);

	mcp_res_all(r, 0);
	mcp_res_all(r, 1);
	return mcp_res_go(r);
}

/* mcp_call_cancel of an operation: its requests cancelled, then done ("cancelled"). */
void
mcp_res_cancel(struct mcp_call *c)
{
	struct mcp_res *r = c->res;

	r->cancelling = 1;
	for (size_t i = 0; i < r->nsubs; i++)
		if (r->subs[i].h != NULL)
			mcp_call_cancel(r->subs[i].h);
	free(r->error);
	r->error = xstrdup("cancelled");
	mcp_res_finish(r);
}

json_t *
mcp_resources_output(const json_t *result, const char *error)
{
	if (error != NULL)
		return json_string(error);
	const json_t *t =
		json_object_get(json_array_get(json_object_get(result, "content"), 0), "text");

	return json_is_string(t) ? json_incref((json_t *)t) : json_string("");
}
