/*
 * A thread's MCP servers from the protocol's side (mcp_api.h). Upstream's order, recorded
 * (tests/fixtures/mcp/upstream/): thread/start's answer, thread/started, then each server's
 * `starting` and later its `ready` or `failed`, each with the threadId.
 */
#include <stdlib.h>
#include <string.h>

#include "mcp_api.h"
#include "agent/agent.h"
#include "api/session.h"
#include "api/turn.h"
#include "config/config.h"
#include "io/log.h"
#include "mcp/mcp.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"

/* Merge a server's table over what is there (key by key). */
static void
mcp_api_merge(json_t *all, const char *name, const json_t *table)
{
	json_t *cur = json_object_get(all, name);

	if (!json_is_object(table) || !json_is_object(cur)) {
		json_object_set_new(all, name, json_deep_copy(table));
		return;
	}
	json_object_update(cur, (json_t *)table);
}

json_t *
mcp_api_servers(const struct config *cfg, const json_t *params)
{
	const json_t *over = json_object_get(params, "config"), *v;
	json_t *all = json_object(), *cfgs = config_get(cfg, "mcp_servers"), *srv;
	const char *k, *dot;
	char *name;

	if (config_error(cfg) == NULL && json_is_object(cfgs))
		json_object_update(all, cfgs);
	all = json_deep_copy(all) ?: json_object();
	json_object_foreach((json_t *)json_object_get(over, "mcp_servers"), k, v)
		mcp_api_merge(all, k, v);
	json_object_foreach((json_t *)over, k, v)
	{
		/* dotted keys: mcp_servers.<name>.<key> = value */
		if (strncmp(k, "mcp_servers.", 12) != 0 || (dot = strchr(k + 12, '.')) == NULL)
			continue;
		name = xstrndup(k + 12, (size_t)(dot - (k + 12)));
		if (!json_is_object(srv = json_object_get(all, name))) {
			srv = json_object();
			json_object_set_new(all, name, srv);
		}
		json_object_set(srv, dot + 1, (json_t *)v);
		free(name);
	}
	return all;
}

static void
mcp_api_status_cb(void *arg, const char *server, enum mcp_state st, const char *error)
{
	struct turn_thread *tt = arg; /* it owns the set: it outlives every callback */

	rpc_notify(tt->s->rpc, "mcpServer/startupStatus/updated",
		json_pack("{s:s, s:s, s:s, s:s?, s:n}", "threadId", tt->id, "name", server,
			"status", mcp_state_name(st), "error", error, "failureReason"));
}

void
mcp_api_thread_opened(
	struct session *s, const char *thread_id, const struct config *cfg, const json_t *params)
{
	struct turn_thread *tt = turn_api_thread(s, thread_id);
	struct mcp_set_opts o = {0};
	json_t *servers, *parsed = NULL;
	char *cause = NULL;

	if (tt == NULL || tt->mcp != NULL)
		return;
	servers = mcp_api_servers(cfg, params);
	if (mcp_config_parse(servers, &parsed, &cause) != 0) {
		log_warn("thread %s: %s", thread_id, cause);
		free(cause);
		json_decref(servers);
		return;
	}
	json_decref(servers);
	if (json_object_size(parsed) == 0) {
		json_decref(parsed);
		return;
	}
	o.loop = s->loop;
	o.q = s->engine_q; /* the thread may outlive this connection */
	o.cwd = tt->cwd;
	o.status = mcp_api_status_cb;
	o.arg = tt;
	tt->mcp = mcp_set_new(&o, parsed);
	json_decref(parsed);
	agent_set_mcp(tt->agent, tt->mcp);
	mcp_set_start(tt->mcp);
}
