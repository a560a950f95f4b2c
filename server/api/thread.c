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
#include "turn.h"
#include "agent/approval/approval_rules.h"
#include "config/config.h"
#include "config/home.h"
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
	int unsubscribed;
	struct session *s;
	ev_timer idle; /* unsubscribed: unload once idle this long (thread/closed) */
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
	struct thread_slot *sl = thread_slot(id, 0);

	(void)s;
	return sl == NULL || !sl->unsubscribed;
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
 * An unsubscribed thread idle for that long unloads, with thread/closed: no connection wants
 * it any more (a running turn postpones it).
 */
static void
thread_idle_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct thread_slot *sl = container_of(w, struct thread_slot, idle);
	struct session *s = sl->s;
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
	int was = !sl->unsubscribed;

	sl->unsubscribed = !on;
	sl->s = s;
	if (on)
		ev_timer_stop(s->loop, &sl->idle);
	else if (was) {
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

	if (sl->s != NULL)
		ev_timer_stop(sl->s->loop, &sl->idle);
	TAILQ_REMOVE(&thread_slots, sl, entry);
	if (agent != NULL && sl->free_fn != NULL)
		sl->free_fn(agent);
	free(sl);
}

void
thread_api_unload(struct session *s, const char *id)
{
	struct thread_slot *sl = thread_slot(id, 0);
	struct store_thread *t;

	if (sl != NULL)
		thread_slot_free(sl);
	if ((t = thread_api_loaded(s, id)) != NULL)
		store_unload(t);
}

void
thread_api_shutdown(struct session *s)
{
	(void)s;
	while (!TAILQ_EMPTY(&thread_slots))
		thread_slot_free(TAILQ_FIRST(&thread_slots));
	store_free(thread_store);
	thread_store = NULL;
	free(thread_store_home);
	thread_store_home = NULL;
}

void
thread_api_error(struct rpc_req *req, int r, const char *cause, const char *cursor)
{
	int code = store_rpc_code(r);
	json_t *data = NULL;

	if (code == RPC_INVALID_PARAMS && cursor != NULL)
		data = json_pack("{s:s}", "cursor", cursor);
	rpc_reply_error(req, code, cause != NULL ? cause : "thread store error", data);
}

void
thread_api_notify(struct session *s, const char *id, const char *method, json_t *params)
{
	if (!thread_api_subscribed(s, id)) {
		json_decref(params);
		return;
	}
	rpc_notify(s->rpc, method, params);
}

/* The wire SandboxPolicy of a sandbox mode, with config.toml's workspace-write settings. */
static json_t *
thread_sandbox_policy(const char *mode)
{
	const struct config *cfg = config_cache_get();
	json_t *roots;

	if (mode != NULL && strcmp(mode, "danger-full-access") == 0)
		return json_pack("{s:s}", "type", "dangerFullAccess");
	if (mode == NULL || strcmp(mode, "workspace-write") != 0)
		return json_pack("{s:s, s:b}", "type", "readOnly", "networkAccess", 0);
	roots = config_get(cfg, "sandbox_workspace_write.writable_roots");
	roots = json_is_array(roots) ? json_deep_copy(roots) : json_array();
	return json_pack("{s:s, s:o, s:b, s:b, s:b}", "type", "workspaceWrite", "writableRoots",
		roots, "networkAccess",
		json_is_true(config_get(cfg, "sandbox_workspace_write.network_access")),
		"excludeTmpdirEnvVar",
		json_is_true(config_get(cfg, "sandbox_workspace_write.exclude_tmpdir_env_var")),
		"excludeSlashTmp",
		json_is_true(config_get(cfg, "sandbox_workspace_write.exclude_slash_tmp")));
}

/*
 * The permission profile upstream names as active: its built-in `:read-only` when the
 * sandbox is the implicit default (neither the request, its `config`, nor config.toml chose a
 * sandbox mode), else none (a legacy sandbox mode was chosen and no profile produced it).
 */
static int
thread_profile_implicit(const json_t *params)
{
	const struct config *cfg = config_cache_get();
	const json_t *cfgo = json_object_get(params, "config");

	if (json_string_value(json_object_get(params, "sandbox")) != NULL ||
		json_string_value(json_object_get(cfgo, "sandbox_mode")) != NULL)
		return 0;
	return config_error(cfg) != NULL ||
		json_string_value(config_get(cfg, "sandbox_mode")) == NULL;
}

/*
 * start, resume and fork's result around a Thread (stolen), members in upstream's order.
 * disabledPluginIds, runtimeWorkspaceRoots, activePermissionProfile and multiAgentMode are
 * experimental in upstream's schema, yet it sends them to every client: so do we, with the
 * values it sends for what we support (no plugins, the cwd as the one workspace root,
 * multiAgentMode fixed at explicitRequestOnly).
 */
static json_t *
thread_result(struct store_thread *t, json_t *thread, int implicit_profile)
{
	const struct thread_meta *m = store_thread_meta(t);
	json_t *ap = store_thread_approval(t);
	const char *cwd = m->cwd != NULL ? m->cwd : "/";
	json_t *sandbox = thread_sandbox_policy(store_thread_sandbox(t)), *profile = json_null();

	if (implicit_profile &&
		strcmp(json_string_value(json_object_get(sandbox, "type")), "readOnly") == 0)
		profile = json_pack("{s:s, s:n}", "id", ":read-only", "extends");
	return json_pack("{s:o, s:s, s:s, s:n, s:[], s:s, s:[s], s:[], s:o, s:s, s:o, s:o, s:s?, "
			 "s:s}",
		"thread", thread, "model",
		m->model != NULL ? m->model : config_model(config_cache_get()), "modelProvider",
		m->model_provider != NULL ? m->model_provider : "", "serviceTier",
		"disabledPluginIds", "cwd", cwd, "runtimeWorkspaceRoots", cwd, "instructionSources",
		"approvalPolicy", ap != NULL ? json_incref(ap) : json_string("on-request"),
		"approvalsReviewer", "user", "sandbox", sandbox, "activePermissionProfile", profile,
		"reasoningEffort", m->effort, "multiAgentMode", "explicitRequestOnly");
}

/* A string param, or NULL. */
static const char *
thread_str(const json_t *params, const char *key)
{
	return json_string_value(json_object_get(params, key));
}

/*
 * The settings of start / resume / fork from the request; with defaults (start) the ones not
 * given come from config.toml. cwd_buf holds a relative cwd made absolute.
 */
static void
thread_params(struct session *s, json_t *params, int defaults, struct store_params *p,
	char cwd_buf[PATH_MAX])
{
	const struct config *cfg = config_cache_get();
	const char *cwd = thread_str(params, "cwd");
	json_t *ap = json_object_get(params, "approvalPolicy");
	json_t *cfgo = json_object_get(params, "config");

	memset(p, 0, sizeof *p);
	p->model = thread_str(params, "model");
	p->model_provider = thread_str(params, "modelProvider");
	p->approval_policy = json_is_null(ap) ? NULL : ap;
	p->sandbox = thread_str(params, "sandbox");
	p->base_instructions = thread_str(params, "baseInstructions");
	p->developer_instructions = thread_str(params, "developerInstructions");
	p->approvals_reviewer = thread_str(params, "approvalsReviewer");
	p->ephemeral = json_is_true(json_object_get(params, "ephemeral"));
	p->originator = s->originator;
	if (cwd != NULL && cwd[0] != '/' && getcwd(cwd_buf, PATH_MAX) != NULL) {
		size_t n = strlen(cwd_buf);

		snprintf(cwd_buf + n, PATH_MAX - n, "/%s", cwd);
		cwd = cwd_buf;
	}
	p->cwd = cwd;
	/*
	 * resume and fork: what a thread runs with when neither the request nor a loaded thread
	 * says is config.toml's (or the thread's `config`) approval policy and sandbox, as start.
	 */
	if (config_error(cfg) == NULL) {
		p->default_approval_policy = config_get(cfg, "approval_policy");
		p->default_sandbox = json_string_value(config_get(cfg, "sandbox_mode"));
	}
	if (json_object_get(cfgo, "approval_policy") != NULL)
		p->default_approval_policy = json_object_get(cfgo, "approval_policy");
	if (thread_str(cfgo, "sandbox_mode") != NULL)
		p->default_sandbox = thread_str(cfgo, "sandbox_mode");
	if (!defaults)
		return;
	/* `config`: overrides of config.toml keys for this thread (those a thread keeps). */
	if (p->model == NULL)
		p->model = thread_str(cfgo, "model");
	if (p->model_provider == NULL)
		p->model_provider = thread_str(cfgo, "model_provider");
	if (p->approval_policy == NULL && json_object_get(cfgo, "approval_policy") != NULL)
		p->approval_policy = json_object_get(cfgo, "approval_policy");
	if (p->sandbox == NULL)
		p->sandbox = thread_str(cfgo, "sandbox_mode");
	if (p->effort == NULL)
		p->effort = thread_str(cfgo, "model_reasoning_effort");
	if (p->model == NULL)
		p->model = json_string_value(config_get(cfg, "model")) != NULL
			? json_string_value(config_get(cfg, "model"))
			: config_model(cfg);
	if (p->model_provider == NULL)
		p->model_provider = config_provider_id(cfg);
	if (p->approval_policy == NULL && config_error(cfg) == NULL)
		p->approval_policy = config_get(cfg, "approval_policy");
	if (p->sandbox == NULL && config_error(cfg) == NULL)
		p->sandbox = json_string_value(config_get(cfg, "sandbox_mode"));
	if (p->sandbox == NULL)
		p->sandbox = "read-only";
	if (p->cwd == NULL && getcwd(cwd_buf, PATH_MAX) != NULL)
		p->cwd = cwd_buf;
}

/* Settings that came from `config` or config.toml are checked as the params are. */
static int
thread_check(const struct store_params *p, char **cause)
{
	struct approval_policy pol;
	const char *const modes[] = {p->sandbox, p->default_sandbox};

	if (p->approval_policy != NULL &&
		approval_policy_parse(p->approval_policy, &pol, cause) != 0)
		return -1;
	if (p->default_approval_policy != NULL &&
		approval_policy_parse(p->default_approval_policy, &pol, cause) != 0)
		return -1;
	for (size_t i = 0; i < nitems(modes); i++)
		if (modes[i] != NULL && strcmp(modes[i], "read-only") != 0 &&
			strcmp(modes[i], "workspace-write") != 0 &&
			strcmp(modes[i], "danger-full-access") != 0) {
			*cause = xasprintf("unknown sandbox mode `%s`", modes[i]);
			return -1;
		}
	return 0;
}

static void
thread_start(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st;
	struct store_params p;
	struct store_thread *t;
	char cwd[PATH_MAX], *cause = NULL;
	json_t *thread;
	int r;

	if ((st = thread_api_store(s, &cause)) == NULL) {
		thread_api_error(req, -EIO, cause, NULL);
		free(cause);
		return;
	}
	thread_params(s, params, 1, &p, cwd);
	if (thread_check(&p, &cause) != 0) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, cause, NULL);
		free(cause);
		return;
	}
	if (p.approval_policy == NULL)
		p.approval_policy = json_string("on-request"); /* freed below: not the config's */
	else
		json_incref(p.approval_policy);
	if ((r = store_create(st, &p, &t, &cause)) != 0) {
		json_decref(p.approval_policy);
		thread_api_error(req, r, cause, NULL);
		free(cause);
		return;
	}
	json_decref(p.approval_policy);
	thread = store_thread_json(t, NULL);
	thread_api_subscribe(s, store_thread_id(t), 1);
	rpc_reply(req, thread_result(t, json_incref(thread), thread_profile_implicit(params)));
	rpc_notify(s->rpc, "thread/started", json_pack("{s:o}", "thread", thread));
	turn_api_thread_opened(s, store_thread_id(t));
	skills_api_thread_opened(s, t);
}

static int
thread_text_cb(const char *p, size_t n, void *arg)
{
	return buf_add(arg, p, n) == 0 ? 0 : -1;
}

void
thread_api_reply_thread(
	struct rpc_req *req, json_t *thread, const char *turns, size_t turns_len, json_t *rest)
{
	static const char tail[] = "\"turns\":[]}"; /* the Thread's last member */
	const size_t tl = sizeof tail - 1;
	struct buf b;
	size_t mark;
	int r;

	buf_init(&b, SIZE_MAX / 2);
	r = buf_adds(&b, "{\"thread\":");
	mark = b.len;
	if (r == 0 && json_dump_callback(thread, thread_text_cb, &b, JSON_COMPACT) != 0)
		r = -E2BIG;
	if (r == 0 && turns != NULL) {
		if (b.len - mark < tl || memcmp(b.ptr + b.len - tl, tail, tl) != 0) {
			r = -EINVAL;
		} else {
			buf_truncate(&b, b.len - 3);
			if ((r = buf_add(&b, turns, turns_len)) == 0)
				r = buf_addc(&b, '}');
		}
	}
	if (r == 0 && rest != NULL && json_object_size(rest) > 0) {
		mark = b.len;
		if ((r = buf_addc(&b, ',')) == 0 &&
			json_dump_callback(rest, thread_text_cb, &b, JSON_COMPACT) != 0)
			r = -E2BIG;
		/* the rest's own braces go: its members follow the thread's */
		if (r == 0) {
			memmove(b.ptr + mark + 1, b.ptr + mark + 2, b.len - mark - 2);
			buf_truncate(&b, b.len - 2);
		}
	}
	if (r == 0)
		r = buf_addc(&b, '}');
	if (r == 0)
		rpc_reply_raw(req, b.ptr, b.len);
	else
		rpc_reply_errorf(
			req, RPC_INTERNAL_ERROR, "failed to write the thread: %s", strerror(-r));
	buf_free(&b);
	json_decref(thread);
	json_decref(rest);
}

/* thread/resume: the answer once the turns were read on the store's worker. */
struct thread_resume {
	struct session *s;
	struct rpc_req *req;
	char id[40];
	int implicit_profile; /* thread_profile_implicit of the request */
};

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
		free(x);
		return;
	}
	/* thread_result's members without the thread, which goes first as text */
	rest = thread_result(t, json_null(), x->implicit_profile);
	json_object_del(rest, "thread");
	thread_api_reply_thread(x->req, thread, turns, turns_len, rest);
	free(x);
	/* a long answer's buffers are freed by now: give their pages back */
	if (turns_len >= THREAD_TRIM_BYTES)
		malloc_trim(0);
}

static void
thread_resume(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = thread_str(params, "threadId");
	struct store *st;
	struct store_params p;
	struct store_thread *t;
	struct thread_resume *x;
	char cwd[PATH_MAX], *cause = NULL;
	int r;

	if ((st = thread_api_store(s, &cause)) == NULL) {
		thread_api_error(req, -EIO, cause, NULL);
		free(cause);
		return;
	}
	thread_params(s, params, 0, &p, cwd);
	if (thread_check(&p, &cause) != 0) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, cause, NULL);
		free(cause);
		return;
	}
	if ((r = store_resume(st, id, &p, &t, &cause)) != 0) {
		thread_api_error(req, r, cause, NULL);
		free(cause);
		return;
	}
	thread_api_subscribe(s, store_thread_id(t), 1);
	rpc_notify(s->rpc, "thread/status/changed",
		json_pack("{s:s, s:o}", "threadId", store_thread_id(t), "status",
			store_thread_status(t)));
	turn_api_thread_opened(s, store_thread_id(t));
	skills_api_thread_opened(s, t);
	x = xcalloc(1, sizeof *x);
	x->s = s;
	x->req = req;
	x->implicit_profile = thread_profile_implicit(params);
	snprintf(x->id, sizeof x->id, "%s", store_thread_id(t));
	store_read_async(st, x->id, !json_is_true(json_object_get(params, "excludeTurns")),
		thread_resume_read_cb, x);
}

static void
thread_fork(struct session *s, struct rpc_req *req, json_t *params)
{
	struct store *st;
	struct store_params p;
	struct store_thread *t;
	char cwd[PATH_MAX], *cause = NULL;
	json_t *thread, *turns = NULL;
	int r;

	if ((st = thread_api_store(s, &cause)) == NULL) {
		thread_api_error(req, -EIO, cause, NULL);
		free(cause);
		return;
	}
	thread_params(s, params, 0, &p, cwd);
	if (thread_check(&p, &cause) != 0) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, cause, NULL);
		free(cause);
		return;
	}
	if ((r = store_fork(st, thread_str(params, "threadId"), thread_str(params, "lastTurnId"),
		     &p, &t, &cause)) != 0) {
		thread_api_error(req, r, cause, NULL);
		free(cause);
		return;
	}
	if (!json_is_true(json_object_get(params, "excludeTurns")) &&
		(turns = store_thread_turns(t, &cause)) == NULL) {
		free(cause);
		cause = NULL;
	}
	thread = store_thread_json(t, turns);
	thread_api_subscribe(s, store_thread_id(t), 1);
	rpc_reply(req, thread_result(t, json_incref(thread), thread_profile_implicit(params)));
	json_object_set_new(thread, "turns", json_array());
	rpc_notify(s->rpc, "thread/started", json_pack("{s:o}", "thread", thread));
	turn_api_thread_opened(s, store_thread_id(t));
	skills_api_thread_opened(s, t);
}

const struct rpc_method api_thread_methods[] = {
	{"thread/start", thread_start, 0},
	{"thread/resume", thread_resume, 0},
	{"thread/fork", thread_fork, 0},
	{NULL, NULL, 0},
};
