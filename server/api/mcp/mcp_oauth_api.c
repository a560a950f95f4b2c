/*
 * mcpServer/oauth/login and mcpServer/oauthLogin/completed, as upstream 0.169: the server by
 * name in the config's [mcp_servers] (-32600 "No MCP server named 'x' found.", -32600 "OAuth
 * login is only supported for streamable HTTP servers."), the login started on the engine
 * (mcp/oauth/oauth.h), answered `{authorizationUrl, loginId}` once its callback listener is
 * bound and the authorization server discovered (-32603 "failed to login to MCP server 'x':
 * ..." otherwise), then `mcpServer/oauthLogin/completed {name, success, error, loginId}`.
 * One login per server at a time: a new one replaces the one under way (its port freed); a
 * connection that ends takes its logins with it.
 */
#include <stdlib.h>
#include <string.h>

#include "mcp_api.h"
#include "api/session.h"
#include "config/config.h"
#include "config/home.h"
#include "mcp/oauth/oauth.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"
#include "thread/uuidv7.h"

struct mcp_oauth_op {
	struct mcp_oauth_op *next;
	struct session *s;
	struct rpc_req *req; /* until answered */
	struct oauth_login *login;
	char *name, *thread_id, id[UUID_STRLEN + 1];
};

static struct mcp_oauth_op *mcp_oauth_ops;

static void
oauth_op_free(struct mcp_oauth_op *op)
{
	for (struct mcp_oauth_op **pp = &mcp_oauth_ops; *pp != NULL; pp = &(*pp)->next)
		if (*pp == op) {
			*pp = op->next;
			break;
		}
	oauth_login_free(op->login);
	free(op->name);
	free(op->thread_id);
	free(op);
}

static void
oauth_op_started(void *arg, const char *url, const char *error)
{
	struct mcp_oauth_op *op = arg;
	struct rpc_req *req = op->req;

	op->req = NULL;
	if (url != NULL) {
		rpc_reply(req, json_pack("{s:s, s:s}", "authorizationUrl", url, "loginId", op->id));
		return;
	}
	rpc_reply_errorf(
		req, RPC_INTERNAL_ERROR, "failed to login to MCP server '%s': %s", op->name, error);
	oauth_op_free(op);
}

static void
oauth_op_done(void *arg, const char *error)
{
	struct mcp_oauth_op *op = arg;

	rpc_notify(op->s->rpc, "mcpServer/oauthLogin/completed",
		json_pack("{s:s, s:s?, s:s, s:b, s:s*}", "name", op->name, "threadId",
			op->thread_id, "loginId", op->id, "success", error == NULL, "error",
			error)); /* upstream's members: no error on success */
	oauth_op_free(op);
}

static void
mcp_oauth_login(struct session *s, struct rpc_req *req, json_t *params)
{
	static const struct oauth_login_cbs cbs = {oauth_op_started, oauth_op_done};
	const struct config *cfg = config_cache_get();
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *servers = mcp_api_servers(cfg, NULL), *sv = json_object_get(servers, name);
	const json_t *port = config_get(cfg, "mcp_oauth_callback_port");
	struct oauth_login_opts o = {0};
	struct mcp_oauth_op *op;
	char *home;

	if (!json_is_object(sv)) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST, "No MCP server named '%s' found.", name);
		goto out;
	}
	if (json_string_value(json_object_get(sv, "url")) == NULL) {
		rpc_reply_error(req, RPC_INVALID_REQUEST,
			"OAuth login is only supported for streamable HTTP servers.", NULL);
		goto out;
	}
	for (op = mcp_oauth_ops; op != NULL; op = op->next)
		if (strcmp(op->name, name) == 0 && op->req == NULL) {
			oauth_op_done(op, "replaced by a newer OAuth login for this server");
			break; /* one per server at a time: the list changed, stop here */
		}
	op = xcalloc(1, sizeof *op);
	op->s = s;
	op->req = req;
	op->name = xstrdup(name);
	if (json_string_value(json_object_get(params, "threadId")) != NULL)
		op->thread_id = xstrdup(json_string_value(json_object_get(params, "threadId")));
	uuidv7_new(op->id);
	op->next = mcp_oauth_ops;
	mcp_oauth_ops = op;
	home = home_path();
	o.home = home;
	o.name = name;
	o.url = json_string_value(json_object_get(sv, "url"));
	o.scopes = json_is_array(json_object_get(params, "scopes"))
		? json_object_get(params, "scopes")
		: json_is_array(json_object_get(sv, "scopes")) ? json_object_get(sv, "scopes")
							       : NULL;
	o.resource = json_string_value(json_object_get(sv, "oauth_resource"));
	o.client_id = json_string_value(json_object_get(sv, "oauth_client_id"));
	o.callback_port = json_is_integer(port) ? (int)json_integer_value(port) : 0;
	o.timeout_secs = json_integer_value(json_object_get(params, "timeoutSecs"));
	op->login = oauth_login_start(s->loop, &o, &cbs, op);
	free(home);
out:
	json_decref(servers);
}

void
mcp_oauth_api_session_free(struct session *s)
{
	struct mcp_oauth_op *op, *next;

	for (op = mcp_oauth_ops; op != NULL; op = next) {
		next = op->next;
		if (op->s == s)
			oauth_op_free(op); /* rpc_free answers a request still waiting */
	}
}

const struct rpc_method api_mcp_oauth_methods[] = {
	{"mcpServer/oauth/login", mcp_oauth_login, 0},
	{NULL, NULL, 0},
};
