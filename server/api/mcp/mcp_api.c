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
#include "api/settings/thread_settings.h"
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
	json_t *from = json_object(), *cfgs = config_get(cfg, "mcp_servers"), *srv, *all;
	const char *k, *dot;
	char *name;

	if (config_error(cfg) == NULL && json_is_object(cfgs))
		json_object_update(from, cfgs);
	/* a copy of its own: the merges below must not change the cached config */
	all = json_deep_copy(from) ?: json_object();
	json_decref(from);
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

/* Server requests and MCP answers are the same three outcomes, in the same order. */
_Static_assert((int)RPC_CALL_RESULT == (int)MCP_ANSWER_RESULT &&
		(int)RPC_CALL_ERROR == (int)MCP_ANSWER_ERROR &&
		(int)RPC_CALL_CANCELLED == (int)MCP_ANSWER_GONE,
	"rpc_call_status and mcp_answer differ");

/* Whether the approval policy lets a server's elicitation reach the user (upstream declines
 * them under never; granular with mcp_elicitations false too). */
static int
mcp_api_may_ask(const json_t *policy)
{
	const json_t *g = json_object_get(policy, "granular");

	if (json_is_string(policy))
		return strcmp(json_string_value(policy), "never") != 0;
	return !json_is_false(json_object_get(g, "mcp_elicitations"));
}

/* A question of the thread's servers (mcp/mcp.h): an mcpServer/elicitation/request of its
 * running turn; nobody to ask without one. */
static int
mcp_api_ask(void *arg, json_t *params, mcp_answer_cb answer, void *ctx, long long *token)
{
	struct turn_thread *tt = arg;
	int tool = json_object_get(json_object_get(params, "_meta"), "codex_approval_kind") != NULL;

	if (!turn_api_running(tt->s, tt->id) || (!tool && !mcp_api_may_ask(tt->approval_policy))) {
		json_decref(params);
		return -1;
	}
	*token = turn_sink_ask(tt, "mcpServer/elicitation/request", params, answer, ctx);
	return 0;
}

static void
mcp_api_withdraw(void *arg, long long token)
{
	turn_sink_withdraw(arg, token);
}

/*
 * What a loaded thread's servers came from: its opening request's cwd and config (kept to
 * compute them again after config/mcpServer/reload), and whether a reload is pending.
 */
struct mcp_api_thread {
	struct mcp_api_thread *next;
	struct session *s;
	char *id;
	json_t *params;	  /* {cwd, config} of the opening request */
	json_t *approved; /* the tools approved for the session: they outlive a reload */
	int stale;	  /* config/mcpServer/reload since: taken at the next turn */
};

static struct mcp_api_thread *mcp_api_threads;

static struct mcp_api_thread *
mcp_api_thread_find(struct session *s, const char *id)
{
	struct mcp_api_thread *t;

	(void)s; /* a shared thread's turns may run on any of its connections */
	for (t = mcp_api_threads; t != NULL; t = t->next)
		if (strcmp(t->id, id) == 0)
			return t;
	return NULL;
}

json_t *
mcp_api_parsed(const char *thread_id, const struct config *cfg, const json_t *params)
{
	json_t *servers = mcp_api_servers(cfg, params), *parsed = NULL;
	char *cause = NULL;

	if (mcp_config_parse(servers, &parsed, &cause) != 0) {
		log_warn("thread %s: %s", thread_id, cause);
		free(cause);
		parsed = json_object();
	}
	json_decref(servers);
	return parsed;
}

/*
 * A tool approved "always", as upstream persists it: approval_mode = "approve" under the
 * server's table in the highest project layer that defines the server (its .codex/config.toml),
 * else in the user's config.toml when it defines the server; a server from elsewhere (the
 * request's config, -c) is remembered for the session alone.
 */
static void
mcp_api_persist(void *arg, const char *server, const char *tool)
{
	struct turn_thread *tt = arg;
	struct mcp_api_thread *t = mcp_api_thread_find(tt->s, tt->id);
	struct config *own = t != NULL ? thread_settings_config(t->params, 1) : NULL;
	const char *segs[] = {"mcp_servers", server, "tools", tool, "approval_mode"};
	json_t *read, *l, *name, *value = json_string("approve");
	char *cause = NULL, *file = NULL;
	size_t i;

	read = config_read_result(own != NULL ? own : config_cache_get(), 1, &cause);
	json_array_foreach(json_object_get(read, "layers"), i, l)
	{
		name = json_object_get(l, "name");
		if (json_object_get(json_object_get(json_object_get(l, "config"), "mcp_servers"),
			    server) == NULL ||
			json_object_get(l, "disabledReason") != NULL)
			continue;
		if (strcmp(json_string_value(json_object_get(name, "type")) ?: "", "project") == 0)
			file = xasprintf("%s/config.toml",
				json_string_value(json_object_get(name, "dotCodexFolder")));
		else if (strcmp(json_string_value(json_object_get(name, "type")) ?: "", "user") ==
			0)
			file = xstrdup(json_string_value(json_object_get(name, "file")));
		if (file != NULL)
			break;
	}
	if (file == NULL)
		log_warn("thread %s: MCP server `%s` is not configured in config.toml: its tool %s "
			 "is approved for the session only",
			tt->id, server, tool);
	else if (config_edit_file(file, segs, 5, value, &cause) != 0)
		log_warn("thread %s: failed to persist the approval of %s/%s: %s", tt->id, server,
			tool, cause);
	else
		log_info("thread %s: %s/%s approved in %s", tt->id, server, tool, file);
	free(file);
	free(cause);
	json_decref(value);
	json_decref(read);
	config_free(own);
}

/* Give tt the servers of parsed (none when empty), started now, or those a thread/start
 * waiting for its required servers started (mcp_required.c): their states told from the
 * start, after the answer, as upstream. */
static void
mcp_api_attach(struct session *s, struct turn_thread *tt, const json_t *parsed)
{
	struct mcp_set_opts o = {0};
	struct mcp_set *set = mcp_api_adopt();
	struct mcp_api_thread *t = mcp_api_thread_find(s, tt->id);

	o.status = mcp_api_status_cb;
	o.ask = mcp_api_ask;
	o.withdraw = mcp_api_withdraw;
	o.persist = mcp_api_persist;
	o.arg = tt;
	o.approved = t != NULL ? t->approved : NULL;
	if (set != NULL) {
		tt->mcp = set;
		mcp_set_owner(set, &o);
		agent_set_mcp(tt->agent, set);
		for (size_t i = 0; i < mcp_set_count(set); i++)
			if (json_is_true(json_object_get(mcp_set_config(set, i), "enabled")))
				mcp_api_status_cb(tt, mcp_set_name(set, i), MCP_STARTING, NULL);
		for (size_t i = 0; i < mcp_set_count(set); i++)
			if (json_is_true(json_object_get(mcp_set_config(set, i), "enabled")) &&
				mcp_set_state(set, i) != MCP_STARTING)
				mcp_api_status_cb(tt, mcp_set_name(set, i), mcp_set_state(set, i),
					mcp_set_last_error(set, i));
		return;
	}
	if (json_object_size(parsed) == 0)
		return;
	o.loop = s->loop;
	o.q = s->engine_q; /* the thread may outlive this connection */
	o.cwd = tt->cwd;
	tt->mcp = mcp_set_new(&o, parsed);
	agent_set_mcp(tt->agent, tt->mcp);
	mcp_set_start(tt->mcp);
}

void
mcp_api_thread_opened(
	struct session *s, const char *thread_id, const struct config *cfg, const json_t *params)
{
	struct turn_thread *tt = turn_api_thread(s, thread_id);
	struct mcp_api_thread *t;
	json_t *parsed;

	if (tt == NULL || tt->mcp != NULL)
		return;
	if ((t = mcp_api_thread_find(s, thread_id)) == NULL) {
		t = xcalloc(1, sizeof *t);
		t->s = s;
		t->id = xstrdup(thread_id);
		t->approved = json_object();
		t->next = mcp_api_threads;
		mcp_api_threads = t;
	}
	json_decref(t->params);
	t->params = json_pack("{s:O?, s:O?}", "cwd", json_object_get(params, "cwd"), "config",
		json_object_get(params, "config"));
	t->stale = 0;
	parsed = mcp_api_parsed(thread_id, cfg, params);
	mcp_api_attach(s, tt, parsed);
	json_decref(parsed);
}

void
mcp_api_reload(struct session *s)
{
	(void)s; /* every loaded thread, whoever opened it */
	for (struct mcp_api_thread *t = mcp_api_threads; t != NULL; t = t->next)
		t->stale = 1;
}

void
mcp_api_turn_begin(struct session *s, struct turn_thread *tt)
{
	struct mcp_api_thread *t = mcp_api_thread_find(s, tt->id);
	struct config *own;
	json_t *parsed, *now;
	size_t i;

	if (t == NULL || !t->stale)
		return;
	t->stale = 0;
	now = json_object();
	own = thread_settings_config(t->params, 1);
	parsed = mcp_api_parsed(tt->id, own != NULL ? own : config_cache_get(), t->params);
	config_free(own);
	for (i = 0; i < mcp_set_count(tt->mcp); i++)
		json_object_set(
			now, mcp_set_name(tt->mcp, i), (json_t *)mcp_set_config(tt->mcp, i));
	if (!json_equal(parsed, now)) {
		log_info("thread %s: MCP servers reloaded", tt->id);
		agent_set_mcp(tt->agent, NULL);
		mcp_set_free(tt->mcp);
		tt->mcp = NULL;
		mcp_api_attach(s, tt, parsed);
	}
	json_decref(now);
	json_decref(parsed);
}

void
mcp_api_session_end(struct session *s)
{
	mcp_api_session_free(s);
	mcp_oauth_api_session_free(s);
	mcp_api_gates_free(s);
}

void
mcp_api_thread_closed(const char *thread_id)
{
	struct mcp_api_thread **pp = &mcp_api_threads, *t;

	while ((t = *pp) != NULL) {
		if (strcmp(t->id, thread_id) != 0) {
			pp = &t->next;
			continue;
		}
		*pp = t->next;
		json_decref(t->params);
		json_decref(t->approved);
		free(t->id);
		free(t);
	}
}
