/*
 * thread/start, thread/resume and thread/fork, and what every thread method shares: the
 * daemon's store (opened at the first thread request, closed at exit before the rpc layer),
 * the loaded threads' per-thread state (the agent slot, the subscription), the settings a
 * thread starts with (the request's, else config.toml's, else upstream's defaults) and the
 * result those three methods answer with. Order on the wire, as 0.169's: start and fork answer,
 * then thread/started; resume sends thread/status/changed before its answer.
 */
#include <sys/queue.h>

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "session.h"
#include "thread.h"
#include "api/mcp/mcp_api.h"
#include "api/settings/thread_settings.h"
#include "api/subscribers/subscribers.h"
#include "turn.h"
#include "config/config.h"
#include "config/home.h"
#include "config/permissions.h"
#include "io/log.h"
#include "protocol/buf.h"
#include "protocol/version.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"
#include "thread/store/store.h"

/* What this daemon keeps per loaded thread besides the store's side. */
struct thread_slot {
	TAILQ_ENTRY(thread_slot) entry;
	char id[40];
	void *agent;
	void (*free_fn)(void *);
	struct session *closer; /* the last to unsubscribe: thread/closed goes to it */
	ev_timer idle;		/* nobody subscribed: unload once idle this long */
	char *profile;		/* the permission profile the thread runs under, or NULL */
	json_t *policy;	  /* its wire policy (permissions_policy), what the commands run under */
	int bypass_hooks; /* thread/start's config said bypass_hook_trust */
};

#define THREAD_IDLE_UNLOAD 1800.0    /* seconds, as upstream's 30 minutes */
#define THREAD_TRIM_BYTES  (1 << 20) /* a resume answer this long trims malloc */

TAILQ_HEAD(thread_slots, thread_slot);

static void thread_idle_cb(struct ev_loop *, ev_timer *, int);

static struct store *thread_store;
static char *thread_store_home;
static struct thread_slots thread_slots = TAILQ_HEAD_INITIALIZER(thread_slots);

struct store *
thread_api_store(struct session *s, char **cause)
{
	const struct config *cfg = config_cache_get();
	struct store_config c = {0};

	if (thread_store != NULL)
		return thread_store;
	if (home_ensure(cause) != 0)
		return NULL;
	free(thread_store_home);
	thread_store_home = home_path();
	c.home = thread_store_home;
	c.default_provider = config_provider_id(cfg);
	c.cli_version = APP_SERVER_COMPAT_VERSION;
	c.originator = s->originator != NULL ? s->originator : "app-server";
	c.loop = s->loop;
	if (store_open(&c, &thread_store, cause) != 0)
		thread_store = NULL;
	return thread_store;
}

struct store_thread *
thread_api_loaded(struct session *s, const char *id)
{
	(void)s;
	return thread_store != NULL && id != NULL ? store_loaded(thread_store, id) : NULL;
}

/* The slot of a thread; made when `make`, else NULL when it has none. */
static struct thread_slot *
thread_slot(const char *id, int make)
{
	struct thread_slot *sl;

	TAILQ_FOREACH(sl, &thread_slots, entry)
	if (strcmp(sl->id, id) == 0)
		return sl;
	if (!make)
		return NULL;
	sl = xcalloc(1, sizeof *sl);
	snprintf(sl->id, sizeof sl->id, "%s", id);
	ev_init(&sl->idle, thread_idle_cb);
	TAILQ_INSERT_TAIL(&thread_slots, sl, entry);
	return sl;
}

void
thread_api_set_agent(struct session *s, const char *id, void *agent, void (*free_fn)(void *))
{
	struct thread_slot *sl = thread_slot(id, 1);

	(void)s;
	sl->agent = agent;
	sl->free_fn = free_fn;
}

json_t *
thread_api_policy(struct session *s, const char *id)
{
	struct thread_slot *sl = thread_slot(id, 0);

	(void)s;
	return sl != NULL ? sl->policy : NULL;
}

int
thread_api_bypass_hooks(struct session *s, const char *id)
{
	struct thread_slot *sl = thread_slot(id, 0);

	(void)s;
	return sl != NULL && sl->bypass_hooks;
}

/* A profile's active_permission_profile as upstream records it (new reference). */
static json_t *
thread_profile_record(const char *profile)
{
	return json_pack("{s:s, s:s*}", "id", profile, "extends",
		permissions_is_builtin(profile) ? NULL
						: permissions_extends(config_cache_get(), profile));
}

/*
 * Remember the profile (borrowed) and policy (stolen) a thread runs under, and have its
 * rollout record it as upstream does (active_permission_profile {id, extends?}), so that a
 * resume in another process restores it.
 */
static void
thread_slot_set_profile(const char *id, const char *profile, json_t *policy)
{
	struct thread_slot *sl = thread_slot(id, 1);
	struct store_thread *t = thread_store != NULL ? store_loaded(thread_store, id) : NULL;
	json_t *active = NULL;

	free(sl->profile);
	json_decref(sl->policy);
	sl->profile = profile != NULL ? xstrdup(profile) : NULL;
	sl->policy = policy;
	if (t == NULL)
		return;
	if (profile != NULL && policy != NULL)
		active = thread_profile_record(profile);
	store_thread_set_profile(t, active);
	json_decref(active);
}

void
thread_api_set_profile(struct session *s, const char *id, const char *profile, json_t *policy)
{
	(void)s;
	thread_slot_set_profile(id, profile, policy != NULL ? json_incref(policy) : NULL);
}

/*
 * thread/resume of a thread loaded now that names neither a profile nor a sandbox mode: the
 * profile its rollout last recorded, as upstream restores it (config.toml's profile of that
 * name, read again), else default_permissions (a thread that ran a legacy sandbox mode comes
 * back under it, as upstream's does); one no longer defined leaves the thread as it was.
 */
static void
thread_restore_profile(const struct config *cfg, struct store_thread *t, const json_t *params)
{
	const char *id = json_string_value(json_object_get(store_thread_profile(t), "id"));
	json_t *policy;
	char *cause = NULL;

	if (id == NULL)
		id = permissions_default(cfg);
	if (id == NULL || json_string_value(json_object_get(params, "permissions")) != NULL ||
		!thread_settings_implicit(cfg, params))
		return;
	if ((policy = permissions_policy(cfg, id, &cause)) == NULL) {
		log_warn(
			"thread %s: its permission profile is gone: %s", store_thread_id(t), cause);
		free(cause);
		store_thread_set_profile(t, NULL);
		return;
	}
	store_thread_set_sandbox(t, thread_settings_mode(policy));
	thread_slot_set_profile(store_thread_id(t), id, policy);
}

void *
thread_api_agent(struct session *s, const char *id)
{
	struct thread_slot *sl = thread_slot(id, 0);

	(void)s;
	return sl != NULL ? sl->agent : NULL;
}

int
thread_api_subscribed(struct session *s, const char *id)
{
	return subs_is(id, s) != 0; /* a thread nobody ever subscribed to: its one connection */
}

/* How long an unsubscribed thread stays loaded once idle ($APP_SERVER_THREAD_IDLE_SECS). */
static double
thread_idle_secs(void)
{
	const char *v = getenv("APP_SERVER_THREAD_IDLE_SECS");
	double d = v != NULL ? strtod(v, NULL) : 0;

	return d > 0 ? d : THREAD_IDLE_UNLOAD;
}

/*
 * A thread nobody is subscribed to, idle for that long, unloads, with thread/closed to the
 * connection that unsubscribed last (a running turn postpones it).
 */
static void
thread_idle_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct thread_slot *sl = container_of(w, struct thread_slot, idle);
	struct session *s = sl->closer;
	char id[40];

	(void)revents;
	if (turn_api_running(s, sl->id)) {
		ev_timer_set(w, thread_idle_secs(), 0.);
		ev_timer_start(loop, w);
		return;
	}
	snprintf(id, sizeof id, "%s", sl->id);
	thread_api_unload(s, id); /* frees sl */
	rpc_notify(s->rpc, "thread/closed", json_pack("{s:s}", "threadId", id));
}

int
thread_api_subscribe(struct session *s, const char *id, int on)
{
	struct thread_slot *sl = thread_slot(id, 1);
	int was = subs_set(id, s, on);

	if (on) {
		ev_timer_stop(s->loop, &sl->idle);
		sl->closer = NULL;
	} else if (was && subs_count(id) == 0) {
		sl->closer = s;
		ev_timer_set(&sl->idle, thread_idle_secs(), 0.);
		ev_timer_start(s->loop, &sl->idle);
	}
	return was;
}

/* Free a slot's agent (reporting a running turn's end) and the slot. */
static void
thread_slot_free(struct thread_slot *sl)
{
	void *agent = sl->agent;

	if (sl->closer != NULL)
		ev_timer_stop(sl->closer->loop, &sl->idle);
	TAILQ_REMOVE(&thread_slots, sl, entry);
	if (agent != NULL && sl->free_fn != NULL)
		sl->free_fn(agent);
	free(sl->profile);
	json_decref(sl->policy);
	free(sl);
}

void
thread_api_drop_agent(struct session *s, const char *id)
{
	struct thread_slot *sl = thread_slot(id, 0);
	void *agent;
	void (*free_fn)(void *);

	(void)s;
	if (sl == NULL || sl->agent == NULL)
		return;
	agent = sl->agent;
	free_fn = sl->free_fn;
	sl->agent = NULL; /* before the free: what it reports must not find it */
	sl->free_fn = NULL;
	if (free_fn != NULL)
		free_fn(agent);
}

void
thread_api_unload(struct session *s, const char *id)
{
	struct thread_slot *sl = thread_slot(id, 0);
	struct store_thread *t;

	if (sl != NULL)
		thread_slot_free(sl);
	subs_forget(id);
	if ((t = thread_api_loaded(s, id)) != NULL)
		store_unload(t);
}

/*
 * A connection went (docs/transports.md). It leaves every thread it was subscribed to; a
 * thread whose engine ran on it moves to another subscriber and its turn goes on (upstream
 * 0.169's: no connection owns a thread); a thread nobody is subscribed to any more unloads as
 * at the end of stdio (a running turn is interrupted and its processes killed).
 */
void
thread_api_session_end(struct session *s)
{
	struct thread_slot *sl, *next;
	struct turn_thread *head;
	json_t *mine = json_array(), *v;
	struct session *other;
	char id[40];
	size_t i;

	for (i = 0; subs_thread_of(s, i, id) == 0; i++)
		json_array_append_new(mine, json_string(id));
	subs_session_remove(s); /* its copies of pending server requests end too */
	thread_retries_drop(s);
	while ((head = s->turns) != NULL) {
		snprintf(id, sizeof id, "%s", head->id);
		if ((other = subs_other(id, NULL)) != NULL) {
			turn_api_move(head, other);
			continue;
		}
		thread_api_unload(s, id);
		if (s->turns == head) /* not in a slot: free it by hand */
			thread_api_drop_agent(s, id);
		if (s->turns == head)
			break;
	}
	json_array_foreach(mine, i, v) if (subs_count(json_string_value(v)) == 0 &&
		thread_slot(json_string_value(v), 0) != NULL)
		thread_api_unload(s, json_string_value(v));
	json_decref(mine);
	for (sl = TAILQ_FIRST(&thread_slots); sl != NULL; sl = next) {
		next = TAILQ_NEXT(sl, entry);
		if (sl->closer != s)
			continue;
		snprintf(id, sizeof id, "%s", sl->id);
		if (subs_count(id) == 0)
			thread_api_unload(s, id);
		else
			sl->closer = NULL;
		next = TAILQ_FIRST(&thread_slots); /* the unload may have freed others */
	}
}

void
thread_api_shutdown(struct session *s)
{
	(void)s;
	thread_retries_drop(NULL);
	while (!TAILQ_EMPTY(&thread_slots))
		thread_slot_free(TAILQ_FIRST(&thread_slots));
	store_free(thread_store);
	thread_store = NULL;
	free(thread_store_home);
	thread_store_home = NULL;
}

void
thread_api_notify(struct session *s, const char *id, const char *method, json_t *params)
{
	if (subs_is(id, s) < 0) /* nobody ever subscribed: the one connection there is */
		rpc_notify(s->rpc, method, params);
	else
		subs_notify(id, method, params);
}

/* A string param, or NULL. */
static const char *
thread_str(const json_t *params, const char *key)
{
	return json_string_value(json_object_get(params, key));
}

/*
 * start, resume and fork's result around a Thread (stolen), members in upstream's order.
 * disabledPluginIds, runtimeWorkspaceRoots, activePermissionProfile and multiAgentMode are
 * experimental in upstream's schema, yet it sends them to every client: so do we, with the
 * values it sends for what we support (no plugins, the cwd as the one workspace root,
 * multiAgentMode fixed at explicitRequestOnly). A thread running a permission profile
 * reports it and its sandbox as upstream projects it; otherwise `active` (stolen,
 * thread_active_profile's) stands while the thread's sandbox is the read-only one it implies.
 */
static json_t *
thread_result(struct store_thread *t, json_t *thread, const struct config *cfg, json_t *active)
{
	const struct thread_meta *m = store_thread_meta(t);
	struct thread_slot *sl = thread_slot(store_thread_id(t), 0);
	json_t *ap = store_thread_approval(t);
	const char *cwd = m->cwd != NULL ? m->cwd : "/";
	json_t *sandbox, *profile = active;

	if (sl != NULL && sl->policy != NULL) {
		sandbox = permissions_legacy(sl->policy);
		json_decref(profile);
		profile = json_pack("{s:s, s:s?}", "id", sl->profile, "extends",
			permissions_is_builtin(sl->profile)
				? NULL
				: permissions_extends(cfg, sl->profile));
	} else {
		sandbox = thread_settings_sandbox(cfg, store_thread_sandbox(t));
		if (strcmp(json_string_value(json_object_get(sandbox, "type")), "readOnly") != 0) {
			json_decref(profile);
			profile = json_null();
		}
	}
	return json_pack("{s:o, s:s, s:s, s:n, s:[], s:s, s:[s], s:[], s:o, s:s, s:o, s:o, s:s?, "
			 "s:s}",
		"thread", thread, "model", m->model != NULL ? m->model : config_model(cfg),
		"modelProvider", m->model_provider != NULL ? m->model_provider : "", "serviceTier",
		"disabledPluginIds", "cwd", cwd, "runtimeWorkspaceRoots", cwd, "instructionSources",
		"approvalPolicy", ap != NULL ? json_incref(ap) : json_string("on-request"),
		"approvalsReviewer", "user", "sandbox", sandbox, "activePermissionProfile", profile,
		"reasoningEffort", m->effort, "multiAgentMode", "explicitRequestOnly");
}

static void
thread_start(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st;
	struct store_params p;
	struct store_thread *t;
	struct config *own = NULL;
	const struct config *cfg;
	const char *profile;
	char cwd[PATH_MAX], *cause = NULL;
	json_t *thread, *policy = NULL;
	int r;

	if (mcp_api_start_gate(s, req, params, thread_start))
		return; /* its required MCP servers first (api/mcp/mcp_required.c) */
	if ((st = thread_api_store(s, &cause)) == NULL) {
		thread_api_error(req, -EIO, cause, NULL);
		free(cause);
		return;
	}
	cfg = (own = thread_settings_config(params, 1)) != NULL ? own : config_cache_get();
	thread_settings_params(s, cfg, params, 1, &p, cwd);
	if (thread_settings_permissions(cfg, params, 1, &p, &profile, &policy, &cause) != 0 ||
		thread_settings_check(&p, &cause) != 0) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, cause, NULL);
		goto out;
	}
	if (p.approval_policy == NULL)
		p.approval_policy = json_string("on-request"); /* freed below: not the config's */
	else
		json_incref(p.approval_policy);
	if (policy != NULL && profile != NULL)
		p.active_profile = thread_profile_record(profile);
	r = store_create(st, &p, &t, &cause);
	json_decref(p.approval_policy);
	json_decref(p.active_profile);
	if (r != 0) {
		thread_api_error(req, r, cause, NULL);
		goto out;
	}
	if (policy != NULL)
		thread_slot_set_profile(store_thread_id(t), profile, json_incref(policy));
	if (json_is_true(json_object_get(json_object_get(params, "config"), "bypass_hook_trust")))
		thread_slot(store_thread_id(t), 1)->bypass_hooks =
			1; /* its hooks' discovery reads it */
	thread = store_thread_json(t, NULL);
	thread_api_subscribe(s, store_thread_id(t), 1);
	rpc_reply(req,
		thread_result(t, json_incref(thread), cfg, thread_settings_active(cfg, params)));
	/* to every connection, as upstream 0.169 (subscribed or not) */
	subs_broadcast("thread/started", json_pack("{s:o}", "thread", thread));
	turn_api_thread_opened(s, store_thread_id(t));
	skills_api_thread_opened(s, t);
	mcp_api_thread_opened(s, store_thread_id(t), cfg, params);
out:
	free(cause);
	json_decref(policy);
	config_free(own);
}

/* thread/resume: the answer once the turns were read on the store's worker. */
struct thread_resume {
	struct session *s;
	struct rpc_req *req;
	char id[40];
	json_t *active; /* thread_active_profile of the request */
};

/*
 * The resume answer's collaborationMode, before multiAgentMode as upstream orders it: the mode
 * the thread runs in (restored from its rollout), else the Default mode with the thread's model.
 */
static void
thread_resume_collab(struct store_thread *t, json_t *rest)
{
	json_t *mode = store_thread_collab(t), *multi = json_object_get(rest, "multiAgentMode");

	json_t *model = json_object_get(rest, "model"), *effort;

	effort = json_object_get(rest, "reasoningEffort");
	if (mode != NULL)
		mode = json_deep_copy(mode);
	else
		mode = json_pack("{s:s, s:{s:O, s:O, s:n}}", "mode", "default", "settings", "model",
			model != NULL ? model : json_null(), "reasoning_effort",
			effort != NULL ? effort : json_null(), "developer_instructions");
	json_incref(multi);
	json_object_del(rest, "multiAgentMode");
	json_object_set_new(rest, "collaborationMode", mode);
	json_object_set_new(rest, "multiAgentMode", multi);
}

static void
thread_resume_read_cb(
	void *arg, int r, json_t *thread, const char *turns, size_t turns_len, const char *cause)
{
	struct thread_resume *x = arg;
	struct store_thread *t = thread_api_loaded(x->s, x->id);
	json_t *rest;

	if (r != 0 || t == NULL) {
		/* t: unloaded (archived, say) while its history was read */
		char *gone = r == 0 ? xasprintf("thread not loaded: %s", x->id) : NULL;

		thread_api_error(x->req, r != 0 ? r : -ENOENT, gone != NULL ? gone : cause, NULL);
		free(gone);
		json_decref(thread);
		json_decref(x->active);
		free(x);
		return;
	}
	/* thread_result's members without the thread, which goes first as text */
	rest = thread_result(t, json_null(), config_cache_get(), x->active);
	json_object_del(rest, "thread");
	thread_resume_collab(t, rest);
	thread_api_reply_thread(x->req, thread, turns, turns_len, rest);
	/* after the answer, as upstream: the requests the turn still waits on */
	subs_replay(x->id, x->s);
	free(x);
	/* a long answer's buffers are freed by now: give their pages back */
	if (turns_len >= THREAD_TRIM_BYTES)
		malloc_trim(0);
}

/*
 * thread/resume. A thread already loaded keeps its settings, whatever the request says (a
 * bad profile name included), as upstream does; one loaded now takes the named profile.
 */
static void
thread_resume(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = thread_str(params, "threadId"), *profile;
	struct store *st;
	struct store_params p;
	struct store_thread *t;
	struct thread_resume *x;
	struct config *own = NULL;
	const struct config *cfg;
	char cwd[PATH_MAX], *cause = NULL;
	json_t *policy = NULL;
	int r, loaded;

	loaded = thread_api_loaded(s, id) != NULL;
	if ((st = thread_api_store(s, &cause)) == NULL) {
		thread_api_error(req, -EIO, cause, NULL);
		free(cause);
		return;
	}
	/* a thread that is not there is not worth waiting for servers: upstream's order */
	if (!loaded && (r = store_openable(st, id, 1, &cause)) != 0) {
		thread_api_error(req, r, cause, NULL);
		free(cause);
		return;
	}
	if (!loaded && mcp_api_open_gate(s, req, params, MCP_API_RESUME, thread_resume))
		return; /* its required MCP servers first (api/mcp/mcp_required.c) */
	cfg = (own = thread_settings_config(params, 0)) != NULL ? own : config_cache_get();
	thread_settings_params(s, cfg, params, 0, &p, cwd);
	if (thread_settings_permissions(
		    cfg, params, loaded ? -1 : 0, &p, &profile, &policy, &cause) != 0 ||
		thread_settings_check(&p, &cause) != 0) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, cause, NULL);
		goto out;
	}
	if ((r = store_resume(st, id, &p, &t, &cause)) != 0) {
		/* a killed daemon's lock, held a moment longer by a child it started */
		if (r != -EAGAIN || thread_retry_later(s, req, params, thread_resume) != 0)
			thread_api_error(req, r, cause, NULL);
		goto out;
	}
	if (!loaded && policy != NULL)
		thread_slot_set_profile(store_thread_id(t), profile, json_incref(policy));
	else if (!loaded)
		thread_restore_profile(cfg, t, params);
	thread_api_subscribe(s, store_thread_id(t), 1);
	rpc_notify(s->rpc, "thread/status/changed",
		json_pack("{s:s, s:o}", "threadId", store_thread_id(t), "status",
			store_thread_status(t)));
	turn_api_thread_opened(s, store_thread_id(t));
	skills_api_thread_opened(s, t);
	mcp_api_thread_opened(s, store_thread_id(t), cfg, params);
	x = xcalloc(1, sizeof *x);
	x->s = s;
	x->req = req;
	x->active = thread_settings_active(cfg, params);
	snprintf(x->id, sizeof x->id, "%s", store_thread_id(t));
	store_read_async(st, x->id, !json_is_true(json_object_get(params, "excludeTurns")),
		thread_resume_read_cb, x);
out:
	free(cause);
	json_decref(policy);
	config_free(own);
}

/* thread/fork: the new thread takes the named profile. */
static void
thread_fork(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st;
	struct store_params p;
	struct store_thread *t;
	struct config *own = NULL;
	const struct config *cfg;
	const char *profile;
	char cwd[PATH_MAX], *cause = NULL;
	json_t *thread, *turns = NULL, *policy = NULL;
	int r;

	if ((st = thread_api_store(s, &cause)) == NULL) {
		thread_api_error(req, -EIO, cause, NULL);
		free(cause);
		return;
	}
	if ((r = store_openable(st, thread_str(params, "threadId"), 0, &cause)) != 0) {
		thread_api_error(req, r, cause, NULL);
		free(cause);
		return;
	}
	if (mcp_api_open_gate(s, req, params, MCP_API_FORK, thread_fork))
		return; /* its required MCP servers first (api/mcp/mcp_required.c) */
	cfg = (own = thread_settings_config(params, 0)) != NULL ? own : config_cache_get();
	thread_settings_params(s, cfg, params, 0, &p, cwd);
	if (thread_settings_permissions(cfg, params, 0, &p, &profile, &policy, &cause) != 0 ||
		thread_settings_check(&p, &cause) != 0) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, cause, NULL);
		goto out;
	}
	if ((r = store_fork(st, thread_str(params, "threadId"), thread_str(params, "lastTurnId"),
		     &p, &t, &cause)) != 0) {
		thread_api_error(req, r, cause, NULL);
		goto out;
	}
	if (!json_is_true(json_object_get(params, "excludeTurns")) &&
		(turns = store_thread_turns(t, &cause)) == NULL) {
		free(cause);
		cause = NULL;
	}
	if (policy != NULL)
		thread_slot_set_profile(store_thread_id(t), profile, json_incref(policy));
	thread = store_thread_json(t, turns);
	thread_api_subscribe(s, store_thread_id(t), 1);
	rpc_reply(req,
		thread_result(t, json_incref(thread), cfg, thread_settings_active(cfg, params)));
	json_object_set_new(thread, "turns", json_array());
	/* to every connection, as upstream 0.169 (subscribed or not) */
	subs_broadcast("thread/started", json_pack("{s:o}", "thread", thread));
	turn_api_thread_opened(s, store_thread_id(t));
	skills_api_thread_opened(s, t);
	mcp_api_thread_opened(s, store_thread_id(t), cfg, params);
out:
	free(cause);
	json_decref(policy);
	config_free(own);
}

const struct rpc_method api_thread_methods[] = {
	{"thread/start", thread_start, 0},
	{"thread/resume", thread_resume, 0},
	{"thread/fork", thread_fork, 0},
	{NULL, NULL, 0},
};
