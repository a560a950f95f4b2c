/*
 * turn/start, turn/steer, turn/interrupt, thread/compact/start and review/start: where JSON-RPC
 * meets the agent loop (agent/agent.h). Each loaded thread gets a struct turn_thread in its agent
 * slot (thread.h): the agent, and the settings turn/start's overrides change for every later turn
 * (cwd, model, effort, summary, approval and sandbox policies). What a turn reports goes out
 * through turn_sink.c. Order on the wire, as upstream's: the {turn} answer, then
 * thread/status/changed(active), turn/started, then the turn's items.
 */
#include <stdlib.h>
#include <string.h>

#include "api/models/model_catalog.h"
#include "profiles.h"
#include "session.h"
#include "startup.h"
#include "thread.h"
#include "turn.h"
#include "api/mcp/mcp_api.h"
#include "agent/agent.h"
#include "agent/approval/approval_rules.h"
#include "agent/codemode/codemode_host.h"
#include "agent/codemode/codemode_tools.h"
#include "agent/modes/collab_mode.h"
#include "agent/review/review.h"
#include "agent/tools/tool_specs.h"
#include "config/config.h"
#include "hooks/hooks.h"
#include "io/http.h"
#include "mcp/mcp.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"
#include "sandbox/sandbox.h"
#include "thread/store/store.h"
#include "thread/store/worker.h"

static struct worker *turn_worker; /* disk work of every thread's turns (apply_patch, history) */

/* The wire SandboxPolicy of a thread's sandbox mode word (new reference). */
static json_t *
turn_policy_of_mode(const char *mode)
{
	if (mode != NULL && strcmp(mode, "danger-full-access") == 0)
		return json_pack("{s:s}", "type", "dangerFullAccess");
	if (mode != NULL && strcmp(mode, "workspace-write") == 0)
		return json_pack("{s:s, s:[], s:b, s:b, s:b}", "type", "workspaceWrite",
			"writableRoots", "networkAccess", 0, "excludeTmpdirEnvVar", 0,
			"excludeSlashTmp", 0);
	return json_pack("{s:s}", "type", "readOnly");
}

static void turn_thread_unlink(struct turn_thread *tt);

static void
turn_thread_free(void *arg)
{
	struct turn_thread *tt = arg;

	if (tt == NULL)
		return;
	agent_free(tt->agent);
	mcp_set_free(tt->mcp); /* after the agent: its calls ended with its turn */
	mcp_api_thread_closed(tt->id);
	/* a review/start waiting for git is answered first */ /* a running turn is
								  interrupted and reported
								  first */
	turn_thread_unlink(tt);
	turn_sink_clear(tt);
	free(tt->cwd);
	free(tt->model);
	free(tt->effort);
	free(tt->summary);
	json_decref(tt->approval_policy);
	json_decref(tt->sandbox_policy);
	free(tt);
}

/* The worker every thread's turns share. */
static struct worker *
turn_shared_worker(struct ev_loop *loop)
{
	if (turn_worker == NULL)
		turn_worker = worker_new(loop, "agent");
	return turn_worker;
}

int
turn_api_running(struct session *s, const char *thread_id)
{
	struct turn_thread *tt = thread_api_agent(s, thread_id);

	return tt != NULL && agent_running(tt->agent) != NULL;
}

void
turn_api_resume(struct session *s)
{
	for (struct turn_thread *tt = s->turns; tt != NULL; tt = tt->next)
		agent_resume(tt->agent);
}

void
turn_api_shutdown(void)
{
	worker_free(turn_worker);
	turn_worker = NULL;
}

/*
 * The collaboration mode the thread's rollout last recorded (a resume in a new process), given
 * back to its agent: Plan stays Plan, and its developer message, in the history read back, is
 * not sent again, as upstream resumes it.
 */
static void
turn_thread_restore_collab(struct turn_thread *tt)
{
	json_t *cm = store_thread_collab(tt->st);
	const char *mode = json_string_value(json_object_get(cm, "mode"));
	char *msg;

	if (mode == NULL || collab_mode_builtin(mode) == NULL)
		return;
	msg = collab_mode_message(mode,
		collab_mode_unrecord(mode,
			json_string_value(json_object_get(
				json_object_get(cm, "settings"), "developer_instructions"))));
	agent_collab_restore(tt->agent, mode, msg);
	free(msg);
}

/* The lifecycle hooks of the thread's cwd (its project layers included), as hooks/list lists
 * them: read once, when the thread's agent is made. */
static struct hook_set *
turn_thread_hooks(const char *cwd, int bypass)
{
	char *cause = NULL;
	struct config *c = config_load_cwd(cwd, &cause);
	struct hook_set *hs = hooks_discover(c, bypass);

	config_free(c);
	free(cause);
	return hs;
}

/* The turn side of a loaded thread (made the first time), or NULL when it is not loaded. */
static struct turn_thread *
turn_thread_get(struct session *s, const char *id)
{
	struct store_thread *st = thread_api_loaded(s, id);
	const struct thread_meta *m;
	const struct config *cfg = config_cache_get();
	struct agent_config ac = {0};
	struct turn_thread *tt;
	json_t *ap;

	if (st == NULL)
		return NULL;
	if ((tt = thread_api_agent(s, id)) != NULL)
		return tt;
	m = store_thread_meta(st);
	tt = xcalloc(1, sizeof *tt);
	tt->s = s;
	tt->st = st;
	snprintf(tt->id, sizeof tt->id, "%s", store_thread_id(st));
	tt->cwd = xstrdup(m->cwd != NULL ? m->cwd : "/");
	tt->model = xstrdup(m->model != NULL ? m->model : config_model(cfg));
	tt->effort = m->effort != NULL ? xstrdup(m->effort) : NULL;
	ap = store_thread_approval(st);
	tt->approval_policy = ap != NULL ? json_incref(ap) : json_string("on-request");
	/* a thread started with a permission profile runs under the profile itself */
	tt->sandbox_policy = thread_api_policy(s, id) != NULL
		? json_incref(thread_api_policy(s, id))
		: turn_policy_of_mode(store_thread_sandbox(st));
	ac.loop = s->loop;
	ac.http = http_default();
	ac.q = s->engine_q;
	ac.worker = turn_shared_worker(s->loop);
	ac.thread = st;
	ac.thread_id = tt->id;
	ac.originator = s->originator;
	ac.user_agent = s->user_agent;
	ac.base_instructions = store_thread_base_instructions(st);
	ac.developer_instructions = store_thread_developer_instructions(st);
	ac.dynamic_tools = store_thread_dynamic_tools(st);
	ac.hooks = turn_thread_hooks(tt->cwd, thread_api_bypass_hooks(s, id));
	tt->agent = agent_new(&ac);
	hooks_unref(ac.hooks); /* the agent keeps its own reference */
	turn_thread_restore_collab(tt);
	tt->next = s->turns;
	if (s->turns != NULL)
		s->turns->prev = tt;
	s->turns = tt;
	thread_api_set_agent(s, id, tt, turn_thread_free);
	return tt;
}

struct turn_thread *
turn_api_thread(struct session *s, const char *thread_id)
{
	return turn_thread_get(s, thread_id);
}

/* Take tt off its connection's list. */
static void
turn_thread_unlink(struct turn_thread *tt)
{
	if (tt->prev != NULL)
		tt->prev->next = tt->next;
	else
		tt->s->turns = tt->next;
	if (tt->next != NULL)
		tt->next->prev = tt->prev;
	tt->next = tt->prev = NULL;
}

void
turn_api_move(struct turn_thread *tt, struct session *to)
{
	turn_thread_unlink(tt);
	tt->s = to;
	tt->next = to->turns;
	if (to->turns != NULL)
		to->turns->prev = tt;
	to->turns = tt;
}

/*
 * The thread's shell snapshot for its cwd now (taken once, again when the cwd changed),
 * unless config.toml says `[features] shell_snapshot = false` (upstream's switch).
 */
static void
turn_snapshot(struct turn_thread *tt)
{
	if (json_is_false(config_get(config_cache_get(), "features.shell_snapshot")))
		return;
	agent_shell_snapshot(tt->agent, tt->cwd, tt->sandbox_policy);
}

void
turn_api_thread_opened(struct session *s, const char *thread_id)
{
	struct turn_thread *tt = turn_thread_get(s, thread_id);

	if (tt != NULL)
		turn_snapshot(tt);
}

/* Replace a string setting when the request gives one. */
static void
turn_set_str(char **slot, const json_t *v)
{
	if (!json_is_string(v))
		return;
	free(*slot);
	*slot = xstrdup(json_string_value(v));
}

/*
 * Apply turn/start's overrides (they persist for later turns); 0, or -1 with *cause. A
 * permission profile or a collaboration mode (profiles.h) comes last and wins; the mode's
 * developer message goes to *collab (heap) for this turn only, its name to *mode (borrowed
 * from params, NULL when not given: the agent keeps the thread's last mode).
 */
static int
turn_overrides(struct session *s, struct turn_thread *tt, json_t *params, char **collab,
	const char **mode, char **cause)
{
	struct profiles_turn pt;

	json_t *ap = json_object_get(params, "approvalPolicy");
	json_t *sp = json_object_get(params, "sandboxPolicy");
	struct approval_policy pol;
	const char *extra = NULL;

	if (ap != NULL && !json_is_null(ap)) {
		if (approval_policy_parse(ap, &pol, cause) != 0)
			return -1;
		json_decref(tt->approval_policy);
		tt->approval_policy = json_deep_copy(ap);
	}
	if (sp != NULL && !json_is_null(sp)) {
		if (sandbox_policy_check(sp, &extra, cause) != 0)
			return -1;
		json_decref(tt->sandbox_policy);
		tt->sandbox_policy = json_deep_copy(sp);
	}
	turn_set_str(&tt->cwd, json_object_get(params, "cwd"));
	turn_set_str(&tt->model, json_object_get(params, "model"));
	turn_set_str(&tt->effort, json_object_get(params, "effort"));
	turn_set_str(&tt->summary, json_object_get(params, "summary"));
	if (profiles_turn_params(s, params, &pt, cause) != 0) /* the requester's capabilities */
		return -1;
	if (pt.sandbox_policy != NULL) {
		json_decref(tt->sandbox_policy);
		tt->sandbox_policy = json_incref(pt.sandbox_policy);
		/* the thread's profile from now on: answers report it, the rollout keeps it */
		thread_api_set_profile(tt->s, tt->id,
			json_string_value(json_object_get(params, "permissions")),
			pt.sandbox_policy);
	}
	if (pt.collab_record != NULL)
		store_thread_set_collab(tt->st, pt.collab_record);
	if (pt.model != NULL) {
		free(tt->model);
		tt->model = xstrdup(pt.model);
	}
	if (pt.effort_set) {
		free(tt->effort);
		tt->effort = pt.effort != NULL ? xstrdup(pt.effort) : NULL;
	}
	*collab = pt.collab_message;
	pt.collab_message = NULL; /* transferred */
	*mode = pt.collab_mode;	  /* borrowed from params */
	profiles_turn_clear(&pt);
	return 0;
}

/*
 * Whether the turn runs in upstream's code mode: the model's default or [features] code_mode,
 * and only where node, which runs exec's JavaScript, is found (else the classic tools).
 */
static int
turn_code_mode(const struct config *cfg, const char *model)
{
	static int node = -1; /* looked up once: the daemon's PATH does not change */
	const json_t *f = config_get(cfg, "features.code_mode");

	if (!codemode_model(model, json_is_boolean(f) ? json_is_true(f) : -1))
		return 0;
	if (node < 0) {
		char *path = codemode_node_path(getenv("PATH"));

		node = path != NULL;
		free(path);
	}
	return node;
}

/* What a turn runs with: the thread's settings now. */
static int
turn_opts(struct turn_thread *tt, json_t *input, json_t *output_schema, struct agent_turn_opts *o,
	char **cause)
{
	const struct config *cfg = config_cache_get();
	const char *pid = store_thread_meta(tt->st)->model_provider;
	const struct model_provider *p = config_provider(cfg, pid);

	if (p == NULL)
		p = config_provider(cfg, NULL);
	if (p == NULL) {
		*cause = xasprintf("model provider `%s` not found", pid != NULL ? pid : "");
		return -1;
	}
	memset(o, 0, sizeof *o);
	o->input = input;
	o->cwd = tt->cwd;
	o->sandbox_policy = tt->sandbox_policy;
	o->approval_policy = tt->approval_policy;
	o->model = tt->model;
	o->effort = tt->effort;
	o->summary = tt->summary;
	o->output_schema = output_schema;
	o->provider = p;
	o->max_processes = config_max_processes(cfg);
	o->tools = tool_specs_select(model_catalog_known(tt->model),
		json_is_true(config_get(cfg, "tools.update_plan.enabled")));
	if (startup_feature_enabled(cfg, "goals"))
		o->tools |= TOOL_SPECS_GOALS; /* the goal tools (api/goals/) */
	o->code_mode = turn_code_mode(cfg, tt->model);
	if (o->code_mode && codemode_clock_model(tt->model))
		o->tools |=
			TOOL_SPEC_CLOCK; /* the gpt-6 families' clock, in code mode (recorded) */
	return 0;
}

int
turn_api_opts(struct turn_thread *tt, json_t *input, struct agent_turn_opts *o, char **cause)
{
	return turn_opts(tt, input, NULL, o, cause);
}

/* The wire Turn of a turn just started. */
static json_t *
turn_json_started(const char *id)
{
	return json_pack("{s:s, s:s, s:[], s:s, s:s, s:n, s:n, s:n, s:n}", "id", id, "rootTurnId",
		id, "items", "itemsView", "notLoaded", "status", "inProgress", "error", "startedAt",
		"completedAt", "durationMs");
}

static void
turn_start(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "threadId"));
	json_t *input = json_object_get(params, "input");
	json_t *schema = json_object_get(params, "outputSchema");
	struct turn_thread *tt = turn_thread_get(s, id);
	struct agent_turn *running;
	struct agent_turn_opts o;
	char *cause = NULL, *collab = NULL;
	const char *mode = NULL;
	int r;

	if (tt == NULL) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST, "thread not found: %s", id);
		return;
	}
	if ((running = agent_running(tt->agent)) != NULL) {
		/* 0.169: turn/start while a turn runs adds the input to it (a steer). */
		if (agent_turn_steer(running, input) == 0) {
			rpc_reply(req,
				json_pack("{s:o}", "turn",
					turn_json_started(agent_turn_id(running))));
			return;
		}
		rpc_reply_error(req, RPC_INVALID_REQUEST, "a turn is already running", NULL);
		return;
	}
	mcp_api_turn_begin(s, tt); /* after config/mcpServer/reload */
	r = turn_overrides(s, tt, params, &collab, &mode, &cause);
	if (r == 0)
		r = turn_opts(tt, input, json_is_null(schema) ? NULL : schema, &o, &cause);
	if (r == 0) {
		o.collab_message = collab;
		o.collab_mode = mode;
		r = agent_turn_start(tt->agent, &o, &turn_sink, tt, &cause);
	}
	if (r != 0) {
		rpc_reply_error(req, RPC_INVALID_REQUEST,
			cause != NULL ? cause : "cannot start turn", NULL);
		free(cause);
		free(collab);
		return;
	}
	free(collab);
	turn_snapshot(tt); /* a cwd changed by the overrides: taken again, as upstream does */
	turn_sink_begin(tt, agent_turn_id(agent_running(tt->agent)));
	rpc_reply(req, json_pack("{s:o}", "turn", turn_json_started(tt->turn_id)));
	turn_sink_started(tt);
	agent_shell_snapshot_hurry(); /* its commands may come soon */
}

/* The running turn of a thread for steer / interrupt; NULL after answering the error. */
static struct agent_turn *
turn_active(struct session *s, struct rpc_req *req, json_t *params, const char *what,
	const char *expected)
{
	const char *id = json_string_value(json_object_get(params, "threadId"));
	struct turn_thread *tt = turn_thread_get(s, id);
	struct agent_turn *t = tt != NULL ? agent_running(tt->agent) : NULL;

	if (tt == NULL) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST, "thread not found: %s", id);
		return NULL;
	}
	if (t == NULL || tt->ending) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST, "no active turn to %s", what);
		return NULL;
	}
	if (expected != NULL && strcmp(expected, agent_turn_id(t)) != 0) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST,
			"expected active turn id `%s` but found `%s`", expected, agent_turn_id(t));
		return NULL;
	}
	return t;
}

static void
turn_steer(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *expected = json_string_value(json_object_get(params, "expectedTurnId"));
	struct agent_turn *t = turn_active(s, req, params, "steer", expected);

	if (t == NULL)
		return;
	if (agent_turn_steer(t, json_object_get(params, "input")) != 0) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, "no active turn to steer", NULL);
		return;
	}
	rpc_reply(req, json_pack("{s:s}", "turnId", agent_turn_id(t)));
}

static void
turn_interrupt(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *expected = json_string_value(json_object_get(params, "turnId"));
	struct agent_turn *t = turn_active(s, req, params, "interrupt", expected);

	if (t == NULL)
		return;
	if (agent_turn_shell_only(t)) {
		/* upstream's order for the user's commands: their items end, then {} */
		agent_turn_interrupt(t);
		rpc_reply(req, json_object());
		return;
	}
	/* {} first; the turn then ends (interrupted) as soon as what it runs is stopped. */
	rpc_reply(req, json_object());
	agent_turn_interrupt(t);
}

static void
turn_compact(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "threadId"));
	struct turn_thread *tt = turn_thread_get(s, id);
	struct agent_turn_opts o;
	char *cause = NULL;
	json_t *none = json_array();

	if (tt == NULL) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST, "thread not found: %s", id);
		json_decref(none);
		return;
	}
	if (turn_opts(tt, none, NULL, &o, &cause) != 0 ||
		agent_compact_start(tt->agent, &o, &turn_sink, tt, &cause) != 0) {
		rpc_reply_error(
			req, RPC_INVALID_REQUEST, cause != NULL ? cause : "cannot compact", NULL);
		free(cause);
		json_decref(none);
		return;
	}
	json_decref(none);
	turn_sink_begin(tt, agent_turn_id(agent_running(tt->agent)));
	rpc_reply(req, json_object());
	turn_sink_started(tt);
}

/*
 * review/start: a code review as a turn of the thread (agent/agent_review.c). git runs first
 * (is cwd a repository, a base branch's merge base) as children, the loop never waits; then,
 * as upstream's order: the {turn, reviewThreadId} answer (its turn holds the hint as a
 * userMessage), enteredReviewMode, thread/status/changed, turn/started. Delivery is inline
 * only in 0.169 (the schema refuses "detached"): reviewThreadId is the thread's own id.
 */
struct turn_review {
	struct turn_thread *tt;
	struct rpc_req *req;
	json_t *target;
};

static void
turn_review_ready(void *arg, const char *error, const char *merge_base)
{
	struct turn_review *rv = arg;
	struct turn_thread *tt = rv->tt;
	struct agent_turn_opts o;
	struct agent_turn *t;
	char *prompt = NULL, *hint = NULL, *cause = NULL;
	json_t *none = json_array();

	if (error != NULL)
		cause = xstrdup(error);
	else if (review_target_text(rv->target, merge_base, &prompt, &hint, &cause) == 0 &&
		turn_opts(tt, none, NULL, &o, &cause) == 0 &&
		agent_review_start(tt->agent, &o, prompt, &turn_sink, tt, &cause) == 0) {
		t = agent_running(tt->agent);
		turn_sink_begin(tt, agent_turn_id(t));
		rpc_reply(rv->req,
			json_pack("{s:{s:s, s:n, s:[{s:s, s:s, s:n, s:[{s:s, s:s, s:[]}], s:n, "
				  "s:n}], s:s, s:s, s:n, s:n, s:n, s:n}, s:s}",
				"turn", "id", tt->turn_id, "rootTurnId", "items", "type",
				"userMessage", "id", tt->turn_id, "clientId", "content", "type",
				"text", "text", hint, "text_elements", "startedAtMs",
				"completedAtMs", "itemsView", "notLoaded", "status", "inProgress",
				"error", "startedAt", "completedAt", "durationMs", "reviewThreadId",
				tt->id));
		agent_review_entered(t, hint);
		turn_sink_started(tt);
		rv->req = NULL;
	}
	if (rv->req != NULL)
		rpc_reply_error(rv->req, RPC_INVALID_REQUEST,
			cause != NULL ? cause : "cannot start review", NULL);
	json_decref(none);
	json_decref(rv->target);
	free(rv);
	free(prompt);
	free(hint);
	free(cause);
}

static void
turn_review(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "threadId"));
	json_t *target = json_object_get(params, "target");
	struct turn_thread *tt = turn_thread_get(s, id);
	struct turn_review *rv;
	char *prompt = NULL, *hint = NULL, *cause = NULL;

	if (tt == NULL) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST, "thread not found: %s", id);
		return;
	}
	/* The target's own checks (upstream's words) come before git runs. */
	if (review_target_text(target, NULL, &prompt, &hint, &cause) != 0) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, cause, NULL);
		free(cause);
		return;
	}
	free(prompt);
	free(hint);
	rv = xcalloc(1, sizeof *rv);
	rv->tt = tt;
	rv->req = req;
	rv->target = json_incref(target);
	if (agent_review_prepare(tt->agent, tt->cwd, target, turn_review_ready, rv) != 0) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, "a turn is already running", NULL);
		json_decref(rv->target);
		free(rv);
	}
}

const struct rpc_method api_turn_methods[] = {
	{"review/start", turn_review, 0},
	{"turn/start", turn_start, 0},
	{"turn/steer", turn_steer, 0},
	{"turn/interrupt", turn_interrupt, 0},
	{"thread/compact/start", turn_compact, 0},
	{NULL, NULL, 0},
};
