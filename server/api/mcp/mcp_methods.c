/*
 * The mcpServer methods, answered as upstream 0.169 (recorded against our test server,
 * tests/fixtures/mcp/upstream/methods.json): mcpServerStatus/list, mcpServer/tool/call,
 * mcpServer/resource/read, config/mcpServer/reload.
 *
 * Rules: a request naming a thread uses that thread's servers (found again by id at each
 * step: the thread may close meanwhile); one without starts the config's servers for itself
 * and stops them once answered (upstream's discovery). A request waits while a server it needs
 * is still starting, polled (a set has one settle listener: the agent's). Each request gets
 * one answer; an MCP server's JSON-RPC error is relayed with its code and message, as
 * upstream does. A set of our own is freed on a later loop turn, never inside its callbacks.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcp_api.h"
#include "api/session.h"
#include "api/turn.h"
#include "config/config.h"
#include "config/home.h"
#include "io/log.h"
#include "mcp/mcp.h"
#include "mcp/mcp_resources.h"
#include "mcp/oauth/oauth.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"

#define MCP_POLL 0.02 /* seconds between looks at servers still starting */

struct mcp_op;
typedef void (*mcp_op_fn)(struct mcp_op *op, struct mcp_set *set);

/* One request waiting for servers, then for a call. */
struct mcp_op {
	struct mcp_op *next;
	struct session *s;
	struct rpc_req *req; /* NULL once the session ended (rpc_free answers it) */
	json_t *params;
	char *thread_id;     /* the thread's servers; NULL: own */
	struct mcp_set *own; /* the config's servers, for this request alone */
	mcp_op_fn run;	     /* the servers settled */
	struct mcp_call *call;
	int code;    /* the server's JSON-RPC error code for the call */
	json_t *res; /* mcpServerStatus/list: the servers' resources, once gathered */
	ev_timer poll, later;
};

static struct mcp_op *mcp_ops;

static void mcp_op_poll_cb(struct ev_loop *loop, ev_timer *w, int revents);
static void mcp_op_later_cb(struct ev_loop *loop, ev_timer *w, int revents);

static void
mcp_op_free(struct mcp_op *op)
{
	struct mcp_op **pp;

	for (pp = &mcp_ops; *pp != NULL; pp = &(*pp)->next)
		if (*pp == op) {
			*pp = op->next;
			break;
		}
	ev_timer_stop(op->s->loop, &op->poll);
	ev_timer_stop(op->s->loop, &op->later);
	mcp_set_free(op->own);
	json_decref(op->res);
	json_decref(op->params);
	free(op->thread_id);
	free(op);
}

/* Done: freed on the loop's next turn (a set of our own may be in its own callback now). */
static void
mcp_op_finish(struct mcp_op *op)
{
	op->req = NULL;
	ev_timer_stop(op->s->loop, &op->poll);
	ev_timer_set(&op->later, 0., 0.);
	ev_timer_start(op->s->loop, &op->later);
}

static void
mcp_op_later_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	mcp_op_free(container_of(w, struct mcp_op, later));
}

static void
mcp_op_reply(struct mcp_op *op, json_t *result)
{
	if (op->req != NULL)
		rpc_reply(op->req, result);
	else
		json_decref(result);
	mcp_op_finish(op);
}

static void
mcp_op_error(struct mcp_op *op, int code, const char *message)
{
	if (op->req != NULL)
		rpc_reply_error(op->req, code, message, NULL);
	mcp_op_finish(op);
}

/* The servers the op works with now, or NULL (the thread closed: *gone). */
static struct mcp_set *
mcp_op_set(struct mcp_op *op, int *gone)
{
	struct turn_thread *tt;

	*gone = 0;
	if (op->thread_id == NULL)
		return op->own;
	if ((tt = turn_api_thread(op->s, op->thread_id)) == NULL)
		*gone = 1;
	return tt != NULL ? tt->mcp : NULL;
}

static void
mcp_op_poll_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct mcp_op *op = container_of(w, struct mcp_op, poll);
	struct mcp_set *set;
	char *why;
	int gone;

	(void)loop;
	(void)revents;
	set = mcp_op_set(op, &gone);
	if (gone) {
		why = xasprintf("thread not found: %s", op->thread_id);
		mcp_op_error(op, RPC_INVALID_REQUEST, why);
		free(why);
		return;
	}
	if (mcp_set_starting(set))
		return; /* the timer repeats */
	ev_timer_stop(op->s->loop, &op->poll);
	op->run(op, set);
}

/* The config's servers (session config.toml and -c), started for this request alone. */
static struct mcp_set *
mcp_op_own_set(struct session *s)
{
	struct mcp_set_opts o = {0};
	json_t *servers = mcp_api_servers(config_cache_get(), NULL), *parsed = NULL;
	struct mcp_set *set;
	char *cause = NULL;

	if (mcp_config_parse(servers, &parsed, &cause) != 0) {
		log_warn("mcp: %s", cause);
		free(cause);
		parsed = json_object();
	}
	json_decref(servers);
	o.loop = s->loop;
	o.q = s->q;
	set = mcp_set_new(&o, parsed);
	json_decref(parsed);
	mcp_set_start(set);
	return set;
}

/*
 * Start an op: the thread's servers (thread_id given: -32600 when not loaded, answered here)
 * or the config's; run once none of them is starting. Takes params (borrowed).
 */
static void
mcp_op_start(struct session *s, struct rpc_req *req, const json_t *params, const char *thread_id,
	mcp_op_fn run)
{
	struct mcp_op *op;

	if (thread_id != NULL && turn_api_thread(s, thread_id) == NULL) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST, "thread not found: %s", thread_id);
		return;
	}
	op = xcalloc(1, sizeof *op);
	op->s = s;
	op->req = req;
	op->params = json_incref((json_t *)params);
	op->thread_id = thread_id != NULL ? xstrdup(thread_id) : NULL;
	op->run = run;
	if (thread_id == NULL)
		op->own = mcp_op_own_set(s);
	ev_timer_init(&op->poll, mcp_op_poll_cb, 0., MCP_POLL);
	ev_timer_init(&op->later, mcp_op_later_cb, 0., 0.);
	op->next = mcp_ops;
	mcp_ops = op;
	ev_timer_start(s->loop, &op->poll);
}

/* --- mcpServerStatus/list ---------------------------------------------------------------- */

/* The connection status of a thread's server, upstream's names. */
static const char *
mcp_runtime_status(const struct mcp_set *set, size_t i)
{
	if (!json_is_true(json_object_get(mcp_set_config(set, i), "enabled")))
		return "disabled";
	switch (mcp_set_state(set, i)) {
	case MCP_STARTING:
		return "starting";
	case MCP_READY:
		return "connected";
	case MCP_FAILED:
		return "failed";
	default:
		return "notStarted";
	}
}

/* scheme://host[:port] of an HTTP server's url (no credentials, path, query), or null. */
static json_t *
mcp_http_origin(const json_t *cfg)
{
	const char *url = json_string_value(json_object_get(cfg, "url")), *p, *host, *at;
	size_t len;
	json_t *o;
	char *text;

	if (url == NULL || (p = strstr(url, "://")) == NULL)
		return json_null();
	host = p + 3;
	len = strcspn(host, "/?#");
	if ((at = memchr(host, '@', len)) != NULL) {
		len -= (size_t)(at + 1 - host);
		host = at + 1;
	}
	text = xasprintf("%.*s://%.*s", (int)(p - url), url, (int)len, host);
	o = json_string(text);
	free(text);
	return o;
}

/* McpServerInfo from the initialize result's serverInfo, every member upstream sends. */
static json_t *
mcp_server_info(const json_t *init)
{
	const json_t *si = json_object_get(init, "serverInfo");
	static const char *const keys[] = {
		"name", "title", "version", "description", "icons", "websiteUrl"};
	json_t *o;

	if (!json_is_object(si))
		return json_null();
	o = json_object();
	for (size_t k = 0; k < nitems(keys); k++) {
		const json_t *v = json_object_get(si, keys[k]);

		if (v == NULL && (k == 0 || k == 2))
			v = json_string(""); /* required by the schema: an odd server left it out */
		else if (v == NULL)
			v = json_null();
		else
			json_incref((json_t *)v);
		json_object_set_new(o, keys[k], (json_t *)v);
	}
	return o;
}

/* Whether headers (name -> value, or name -> variable when env) hold an Authorization. */
static int
mcp_has_auth_header(const json_t *headers, int env)
{
	const char *k, *val;
	json_t *v;

	json_object_foreach((json_t *)headers, k, v)
	{
		val = env ? getenv(json_string_value(v) ?: "") : json_string_value(v);
		if (strcasecmp(k, "authorization") == 0 && val != NULL && (!env || val[0] != '\0'))
			return 1;
	}
	return 0;
}

/*
 * upstream's McpAuthStatus (its determine_streamable_http_auth_status): stdio `unsupported`;
 * a bearer_token_env_var or an Authorization header `bearerToken`; tokens an OAuth login
 * stored (expired ones too) `oAuth`; otherwise `notLoggedIn` (upstream says `unsupported`
 * when its discovery finds no authorization server: not asked here).
 */
static const char *
mcp_auth_status(const char *name, const json_t *cfg)
{
	const char *url = json_string_value(json_object_get(cfg, "url"));
	struct oauth_tokens t;
	char *home, *cause = NULL;
	int found;

	if (url == NULL)
		return "unsupported";
	if (json_object_get(cfg, "bearer_token_env_var") != NULL ||
		mcp_has_auth_header(json_object_get(cfg, "http_headers"), 0) ||
		mcp_has_auth_header(json_object_get(cfg, "env_http_headers"), 1))
		return "bearerToken";
	home = home_path();
	found = oauth_store_load(home, name, url, &t, &cause);
	oauth_tokens_free(&t);
	free(home);
	if (found < 0) {
		log_warn("mcp %s: %s", name, cause);
		free(cause);
	}
	return found == 1 ? "oAuth" : "notLoggedIn";
}

/* One McpServerStatus (runtime: the thread's connection state is known; res: gathered). */
static json_t *
mcp_status_entry(const struct mcp_set *set, size_t i, int runtime, const json_t *res)
{
	const char *name = mcp_set_name(set, i);
	const json_t *rs = json_object_get(json_object_get(res, "resources"), name);
	const json_t *rt = json_object_get(json_object_get(res, "resourceTemplates"), name);
	const json_t *init = mcp_set_server_info(set, i), *cfg = mcp_set_config(set, i), *t;
	const json_t *caps = json_object_get(init, "capabilities");
	json_t *tools = json_object();
	const char *auth = mcp_auth_status(name, cfg);
	size_t k;

	json_array_foreach(mcp_set_tools(set, i), k, t)
		json_object_set(tools, json_string_value(json_object_get(t, "name")), (json_t *)t);
	return json_pack("{s:s, s:o, s:n, s:o, s:o, s:O, s:n, s:o, s:n, s:o, s:o, s:s}", "name",
		name, "runtimeStatus",
		runtime ? json_string(mcp_runtime_status(set, i)) : json_null(), "pluginId",
		"httpOrigin", mcp_http_origin(cfg), "serverInfo", mcp_server_info(init),
		"serverCapabilities", caps != NULL ? caps : json_null(), "toolListMeta", "tools",
		tools, "toolsError", "resources",
		rs != NULL ? json_incref((json_t *)rs) : json_array(), "resourceTemplates",
		rt != NULL ? json_incref((json_t *)rt) : json_array(), "authStatus", auth);
}

/* A cursor is the index of the next server, as text; -1 when it is not one. */
static long
mcp_cursor(const char *c, size_t n)
{
	char *end;
	long v;

	if (c == NULL)
		return 0;
	if (!isdigit((unsigned char)c[0]))
		return -1;
	v = strtol(c, &end, 10);
	return *end != '\0' || v < 0 || (size_t)v > n ? -1 : v;
}

static void mcp_status_run(struct mcp_op *op, struct mcp_set *set);

/* The servers' resources are in (upstream lists them for each request): the answer. */
static void
mcp_status_gathered(void *arg, const json_t *result, const char *error)
{
	struct mcp_op *op = arg;
	struct mcp_set *set;
	char *why;
	int gone;

	(void)error;
	op->call = NULL;
	op->res = result != NULL ? json_incref((json_t *)result) : json_object();
	if (op->req == NULL)
		return; /* the session is going: the op is freed by it */
	set = mcp_op_set(op, &gone);
	if (gone) {
		why = xasprintf("thread not found: %s", op->thread_id);
		mcp_op_error(op, RPC_INVALID_REQUEST, why);
		free(why);
		return;
	}
	mcp_status_run(op, set);
}

static void
mcp_status_run(struct mcp_op *op, struct mcp_set *set)
{
	const char *name = json_string_value(json_object_get(op->params, "serverName"));
	const char *cursor = json_string_value(json_object_get(op->params, "cursor"));
	const json_t *lim = json_object_get(op->params, "limit");
	size_t n = mcp_set_count(set), i, seen = 0;
	long from = mcp_cursor(cursor, n);
	size_t limit = json_is_integer(lim) && json_integer_value(lim) > 0
		? (size_t)json_integer_value(lim)
		: n + 1;
	json_t *data = json_array(), *next = json_null();
	char *why;

	if (from >= 0 && op->res == NULL) {
		struct mcp_call_cbs cbs = {.done = mcp_status_gathered, .arg = op};

		json_decref(data);
		json_decref(next);
		op->call = mcp_resources_gather(set, &cbs);
		return;
	}
	if (from < 0) {
		json_decref(data);
		why = xasprintf("invalid cursor: %s", cursor);
		mcp_op_error(op, RPC_INVALID_REQUEST, why);
		free(why);
		return;
	}
	for (i = (size_t)from; i < n; i++) {
		if (name != NULL && strcmp(name, mcp_set_name(set, i)) != 0)
			continue;
		if (seen++ == limit) {
			json_decref(next);
			next = json_sprintf("%zu", i);
			break;
		}
		json_array_append_new(
			data, mcp_status_entry(set, i, op->thread_id != NULL, op->res));
	}
	mcp_op_reply(op, json_pack("{s:o, s:o}", "data", data, "nextCursor", next));
}

static void
mcp_status_list(struct session *s, struct rpc_req *req, json_t *params)
{
	mcp_op_start(s, req, params, json_string_value(json_object_get(params, "threadId")),
		mcp_status_run);
}

/* --- mcpServer/tool/call and mcpServer/resource/read ------------------------------------- */

static void
mcp_call_done(void *arg, const json_t *result, const char *error)
{
	struct mcp_op *op = arg;
	static const char *const keys[] = {
		"content", "structuredContent", "isError", "_meta", "contents", "originCallId"};
	json_t *r;

	op->call = NULL;
	if (error != NULL) {
		mcp_op_error(op, op->code != 0 ? op->code : RPC_INTERNAL_ERROR, error);
		return;
	}
	/* the server's result as it came, the members the response has */
	r = json_object();
	for (size_t k = 0; k < nitems(keys); k++)
		if (json_object_get(result, keys[k]) != NULL)
			json_object_set(r, keys[k], json_object_get(result, keys[k]));
	if (json_object_get(op->params, "tool") != NULL && json_object_get(r, "content") == NULL)
		json_object_set_new(r, "content", json_array());
	if (json_object_get(op->params, "uri") != NULL && json_object_get(r, "contents") == NULL)
		json_object_set_new(r, "contents", json_array());
	mcp_op_reply(op, r);
}

/* The server the params name in set, or -1 (answered: upstream's -32603). */
static int
mcp_op_server(struct mcp_op *op, struct mcp_set *set)
{
	const char *name = json_string_value(json_object_get(op->params, "server"));
	int i = mcp_set_find(set, name);
	char *why;

	if (i < 0) {
		why = xasprintf("unknown MCP server '%s'", name);
		mcp_op_error(op, RPC_INTERNAL_ERROR, why);
		free(why);
	}
	return i;
}

static void
mcp_op_call(struct mcp_op *op, struct mcp_call *c, char *cause)
{
	if (c == NULL) {
		mcp_op_error(op, RPC_INTERNAL_ERROR, cause);
		free(cause);
		return;
	}
	op->call = c;
}

static void
mcp_tool_call_run(struct mcp_op *op, struct mcp_set *set)
{
	struct mcp_call_cbs cbs = {.done = mcp_call_done, .arg = op, .code = &op->code};
	char *cause = NULL;
	int i;

	if ((i = mcp_op_server(op, set)) < 0)
		return;
	mcp_op_call(op,
		mcp_call_tool(set, (size_t)i,
			json_string_value(json_object_get(op->params, "tool")),
			json_object_get(op->params, "arguments"),
			json_object_get(op->params, "_meta"), &cbs, &cause),
		cause);
}

static void
mcp_tool_call(struct session *s, struct rpc_req *req, json_t *params)
{
	mcp_op_start(s, req, params, json_string_value(json_object_get(params, "threadId")),
		mcp_tool_call_run);
}

static void
mcp_resource_read_run(struct mcp_op *op, struct mcp_set *set)
{
	struct mcp_call_cbs cbs = {.done = mcp_call_done, .arg = op, .code = &op->code};
	const json_t *meta = json_object_get(op->params, "_meta");
	char *cause = NULL;
	json_t *p;
	int i;

	if ((i = mcp_op_server(op, set)) < 0)
		return;
	p = json_pack("{s:O}", "uri", json_object_get(op->params, "uri"));
	if (json_is_object(meta))
		json_object_set(p, "_meta", (json_t *)meta);
	mcp_op_call(op, mcp_request(set, (size_t)i, "resources/read", p, &cbs, &cause), cause);
}

static void
mcp_resource_read(struct session *s, struct rpc_req *req, json_t *params)
{
	mcp_op_start(s, req, params, json_string_value(json_object_get(params, "threadId")),
		mcp_resource_read_run);
}

/* --- config/mcpServer/reload ------------------------------------------------------------- */

static void
mcp_reload(struct session *s, struct rpc_req *req, json_t *params)
{
	(void)params;
	mcp_api_reload(s);
	rpc_reply(req, json_object());
}

void
mcp_api_session_free(struct session *s)
{
	struct mcp_op *op, *next;

	for (op = mcp_ops; op != NULL; op = next) {
		next = op->next;
		if (op->s != s)
			continue;
		op->req = NULL; /* rpc_free answers it */
		if (op->call != NULL)
			mcp_call_cancel(op->call); /* its done finds no request */
		mcp_op_free(op);
	}
}

const struct rpc_method api_mcp_methods[] = {
	{"mcpServerStatus/list", mcp_status_list, 0},
	{"mcpServer/tool/call", mcp_tool_call, 0},
	{"mcpServer/resource/read", mcp_resource_read, 0},
	{"config/mcpServer/reload", mcp_reload, 0},
	{NULL, NULL, 0},
};
