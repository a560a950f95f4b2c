/*
 * `required` MCP servers at thread/start, as upstream 0.169 (recorded): the answer waits until
 * every enabled required server is ready or failed; when one failed the thread is not created
 * and the request fails (-32603) with upstream's text, the failures in name order:
 *   error creating thread: Fatal error: Failed to initialize session: required MCP servers
 *   failed to initialize: a: <why>; b: <why>
 * thread/resume (of a thread not loaded: a loaded one keeps its servers) and thread/fork open
 * a session the same way upstream, so they wait alike; their text begins "error resuming
 * thread: " and "error forking thread: " (upstream's prefixes of the same session error).
 * Otherwise thread/start runs and the thread takes the servers already started (its
 * mcpServer/startupStatus/updated follow the answer: each `starting`, then the states reached).
 * A thread without required servers is answered at once, its servers started after.
 *
 * Rules: the set is freed on a later loop turn, never inside its callbacks; a session that
 * ends while a start waits drops it (rpc_free answers the request).
 */
#include <stdlib.h>
#include <string.h>

#include "mcp_api.h"
#include "api/session.h"
#include "api/settings/thread_settings.h"
#include "config/config.h"
#include "mcp/mcp.h"
#include "protocol/xmalloc.h"

#define MCP_REQUIRED_PREFIX                                                                        \
	"Fatal error: Failed to initialize session: required MCP servers failed to initialize: "

/* Upstream's words for each way of opening a thread (mcp_api_open). */
static const char *const mcp_open_words[] = {"creating", "resuming", "forking"};

/* One thread/start waiting for its required servers. */
struct mcp_gate {
	struct mcp_gate *next;
	struct session *s;
	struct rpc_req *req;
	json_t *params;
	mcp_api_start_fn start;
	enum mcp_api_open kind;
	struct mcp_set *set;
	ev_timer later; /* the decision, out of the set's callbacks */
};

static struct mcp_gate *mcp_gates;
static struct mcp_set *mcp_adopt; /* a passing gate's set, for the thread being opened */
static int mcp_passing;		  /* a gate's thread/start runs: not gated again */

static int
mcp_required(const struct mcp_set *set, size_t i)
{
	const json_t *cfg = mcp_set_config(set, i);

	return json_is_true(json_object_get(cfg, "required")) &&
		json_is_true(json_object_get(cfg, "enabled"));
}

static void
mcp_gate_free(struct mcp_gate *g)
{
	struct mcp_gate **pp;

	for (pp = &mcp_gates; *pp != NULL; pp = &(*pp)->next)
		if (*pp == g) {
			*pp = g->next;
			break;
		}
	ev_timer_stop(g->s->loop, &g->later);
	mcp_set_free(g->set);
	json_decref(g->params);
	free(g);
}

/* Every required server ready or failed: fail the start, or run it with the servers. */
static void
mcp_gate_decide(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct mcp_gate *g = container_of(w, struct mcp_gate, later);
	size_t n = mcp_set_count(g->set), i;
	char *msg = xasprintf("error %s thread: " MCP_REQUIRED_PREFIX, mcp_open_words[g->kind]);
	char *why, *t;
	int failed = 0;

	(void)loop;
	(void)revents;
	for (i = 0; i < n; i++) {
		if (!mcp_required(g->set, i))
			continue;
		if (mcp_set_state(g->set, i) == MCP_STARTING) {
			free(msg);
			return; /* not yet */
		}
		if ((why = mcp_set_error(g->set, i)) == NULL)
			continue;
		t = xasprintf(
			"%s%s%s: %s", msg, failed++ ? "; " : "", mcp_set_name(g->set, i), why);
		free(msg);
		free(why);
		msg = t;
	}
	mcp_set_on_settle(g->set, NULL, NULL);
	if (failed) {
		rpc_reply_error(g->req, RPC_INTERNAL_ERROR, msg, NULL);
	} else {
		mcp_adopt = g->set;
		g->set = NULL;
		mcp_passing = 1;
		g->start(g->s, g->req, g->params);
		mcp_passing = 0;
		mcp_set_free(mcp_adopt); /* thread/start failed: nobody took it */
		mcp_adopt = NULL;
	}
	free(msg);
	mcp_gate_free(g);
}

/* A server of the set settled: decide on the loop's next turn. */
static void
mcp_gate_settled(void *arg)
{
	struct mcp_gate *g = arg;

	if (!ev_is_active(&g->later))
		ev_timer_start(g->s->loop, &g->later);
}

int
mcp_api_start_gate(struct session *s, struct rpc_req *req, json_t *params, mcp_api_start_fn start)
{
	return mcp_api_open_gate(s, req, params, MCP_API_START, start);
}

int
mcp_api_open_gate(struct session *s, struct rpc_req *req, json_t *params, enum mcp_api_open kind,
	mcp_api_start_fn start)
{
	struct config *own;
	struct mcp_set_opts o = {0};
	struct mcp_gate *g;
	json_t *parsed;
	const char *cwd = json_string_value(json_object_get(params, "cwd"));
	size_t i;
	int any = 0;

	if (mcp_passing)
		return 0;
	own = thread_settings_config(params, kind == MCP_API_START);
	parsed = mcp_api_parsed("(new)", own != NULL ? own : config_cache_get(), params);
	config_free(own);
	o.loop = s->loop;
	o.q = s->q;
	o.cwd = cwd != NULL && cwd[0] == '/' ? cwd : NULL;
	g = xcalloc(1, sizeof *g);
	g->set = mcp_set_new(&o, parsed);
	json_decref(parsed);
	for (i = 0; i < mcp_set_count(g->set); i++)
		any |= mcp_required(g->set, i);
	if (!any) {
		mcp_set_free(g->set);
		free(g);
		return 0;
	}
	g->s = s;
	g->req = req;
	g->params = json_incref(params);
	g->start = start;
	g->kind = kind;
	ev_timer_init(&g->later, mcp_gate_decide, 0., 0.);
	g->next = mcp_gates;
	mcp_gates = g;
	mcp_set_on_settle(g->set, mcp_gate_settled, g);
	mcp_set_start(g->set);
	return 1;
}

struct mcp_set *
mcp_api_adopt(void)
{
	struct mcp_set *set = mcp_adopt;

	mcp_adopt = NULL;
	return set;
}

void
mcp_api_gates_free(struct session *s)
{
	struct mcp_gate *g, *next;

	for (g = mcp_gates; g != NULL; g = next) {
		next = g->next;
		if (g->s == s)
			mcp_gate_free(g); /* rpc_free answers its request */
	}
}
