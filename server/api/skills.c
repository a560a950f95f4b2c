/*
 * skills/list, skills/config/write, skills/extraRoots/set and skills/changed (server/skills/,
 * docs/skills.md), with upstream 0.169's shapes, errors and caching.
 *
 * Rules kept here: scans and config.toml writes run on this connection's worker thread, so
 * the loop never walks skill folders for a request; a skills/list answers from the cache the
 * cwds it holds (forceReload: none) and stores what it scanned; every request is answered
 * exactly once, also when the connection ends with a job queued (session_free joins the
 * worker before rpc_free). skills/changed watches start with a thread's cwd, as upstream's.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "session.h"
#include "fs/fs_worker.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"
#include "skills/skills.h"
#include "skills/skills_watch.h"
#include "thread/store/store.h"

#define SKILLS_CWDS_MAX 256

struct skills_session {
	struct session *s;
	struct fs_worker *worker;
	struct skills_watch *watch;
};

/* One skills/list: the cwds as given, as scanned, and the outcomes of those not cached. */
struct list_job {
	struct session *s;
	struct rpc_req *req;
	struct skills_env *env;
	size_t n;
	char **given, **abs;
	char *scan;		       /* which cwds the job scans (not cached, or forceReload) */
	struct skills_outcome **fresh; /* what it found */
};

/* A config.toml write. */
struct write_job {
	struct rpc_req *req;
	char *path, *name;
	int enabled, r;
	char *cause;
};

static struct skills_session *
skills_session(struct session *s)
{
	if (s->skills == NULL) {
		s->skills = xcalloc(1, sizeof *s->skills);
		s->skills->s = s;
	}
	return s->skills;
}

static struct fs_worker *
skills_worker(struct session *s)
{
	struct skills_session *k = skills_session(s);

	if (k->worker == NULL)
		k->worker = fs_worker_new(s->loop, 1);
	return k->worker;
}

void
skills_session_free(struct skills_session *k)
{
	if (k == NULL)
		return;
	if (k->worker != NULL)
		fs_worker_free(k->worker);
	skills_watch_free(k->watch);
	free(k);
}

/* An absolute, normalized cwd: relative ones are taken from the daemon's cwd (heap). */
static char *
skills_abs(const char *cwd)
{
	char here[PATH_MAX], *p;
	size_t n;

	if (cwd[0] == '/')
		p = xstrdup(cwd);
	else if (getcwd(here, sizeof here) != NULL)
		p = xasprintf("%s/%s", strcmp(here, "/") == 0 ? "" : here, cwd);
	else
		p = xasprintf("/%s", cwd);
	while ((n = strlen(p)) > 1 && p[n - 1] == '/')
		p[n - 1] = '\0';
	return p;
}

static void
list_run(void *arg)
{
	struct list_job *j = arg;

	for (size_t i = 0; i < j->n; i++)
		if (j->scan[i])
			j->fresh[i] = skills_scan(j->env, j->abs[i]);
}

static void
list_done(void *arg, int cancelled)
{
	struct list_job *j = arg;
	struct skills *sk = skills_default();
	struct skills_outcome *o;
	struct buf out;
	const char *text;
	size_t len;

	for (size_t i = 0; i < j->n; i++) {
		if (j->fresh[i] != NULL)
			skills_store(sk, j->abs[i], j->fresh[i]); /* stolen */
		j->fresh[i] = NULL;
	}
	/* The entries' texts as the outcomes keep them: a cached list serialises nothing. */
	buf_init(&out, SIZE_MAX / 2);
	buf_add(&out, "{\"data\":[", 9);
	for (size_t i = 0, n = 0; i < j->n && !cancelled; i++)
		if ((o = (struct skills_outcome *)skills_cached(sk, j->abs[i])) != NULL) {
			text = skills_entry_text(o, j->given[i], &len);
			if (n++ > 0)
				buf_add(&out, ",", 1);
			buf_add(&out, text, len);
		}
	buf_add(&out, "]}", 2);
	if (cancelled)
		rpc_reply_error(j->req, RPC_INTERNAL_ERROR, "skills/list was cancelled", NULL);
	else
		rpc_reply_raw(j->req, out.ptr, out.len);
	buf_free(&out);
	for (size_t i = 0; i < j->n; i++) {
		free(j->given[i]);
		free(j->abs[i]);
	}
	free(j->given);
	free(j->abs);
	free(j->fresh);
	free(j->scan);
	skills_env_free(j->env);
	free(j);
}

static void
handle_list(struct session *s, struct rpc_req *req, json_t *params)
{
	json_t *cwds = json_object_get(params, "cwds"), *v;
	int force = json_is_true(json_object_get(params, "forceReload"));
	struct skills *sk = skills_default();
	struct list_job *j;
	size_t i, todo = 0;
	char here[PATH_MAX];

	if (json_array_size(cwds) > SKILLS_CWDS_MAX) {
		rpc_reply_errorf(req, RPC_INVALID_PARAMS, "skills/list takes at most %d cwds",
			SKILLS_CWDS_MAX);
		return;
	}
	j = xcalloc(1, sizeof *j);
	j->s = s;
	j->req = req;
	j->n = json_array_size(cwds) > 0 ? json_array_size(cwds) : 1;
	j->given = xcalloc(j->n, sizeof *j->given);
	j->abs = xcalloc(j->n, sizeof *j->abs);
	j->fresh = xcalloc(j->n, sizeof *j->fresh);
	j->scan = xcalloc(j->n, 1);
	if (json_array_size(cwds) == 0)
		j->given[0] = xstrdup(getcwd(here, sizeof here) != NULL ? here : "/");
	json_array_foreach(cwds, i, v) j->given[i] = xstrdup(json_string_value(v));
	for (i = 0; i < j->n; i++) {
		j->abs[i] = skills_abs(j->given[i]);
		if (force || skills_cached(sk, j->abs[i]) == NULL) {
			/* The same cwd twice in one request is scanned once. */
			size_t k;

			for (k = 0; k < i && (!j->scan[k] || strcmp(j->abs[k], j->abs[i]) != 0);
				k++)
				;
			j->scan[i] = k == i;
			todo += j->scan[i];
		}
	}
	if (todo == 0) { /* all cached: answered now */
		list_done(j, 0);
		return;
	}
	j->env = skills_env_now(sk);
	if (fs_worker_submit(skills_worker(s), list_run, list_done, j) != 0)
		list_done(j, 1);
}

static void
write_run(void *arg)
{
	struct write_job *w = arg;

	w->r = skills_config_write(w->path, w->name, w->enabled, &w->cause);
}

static void
write_done(void *arg, int cancelled)
{
	struct write_job *w = arg;

	if (cancelled)
		rpc_reply_error(
			w->req, RPC_INTERNAL_ERROR, "skills/config/write was cancelled", NULL);
	else if (w->r != 0)
		rpc_reply_errorf(w->req, RPC_INTERNAL_ERROR, "failed to update skill settings: %s",
			w->cause);
	else
		rpc_reply(w->req, json_pack("{s:b}", "effectiveEnabled", w->enabled));
	free(w->cause);
	free(w->path);
	free(w->name);
	free(w);
}

static void
handle_config_write(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *path = json_string_value(json_object_get(params, "path"));
	const char *name = json_string_value(json_object_get(params, "name"));
	struct write_job *w;

	if (path != NULL && path[0] != '/') {
		rpc_reply_error(req, RPC_INVALID_REQUEST,
			"Invalid request: AbsolutePathBuf deserialized without a base path", NULL);
		return;
	}
	if ((path == NULL) == (name == NULL)) {
		rpc_reply_error(req, RPC_INVALID_PARAMS,
			"skills/config/write requires exactly one of path or name", NULL);
		return;
	}
	w = xcalloc(1, sizeof *w);
	w->req = req;
	w->path = path != NULL ? xstrdup(path) : NULL;
	w->name = name != NULL ? xstrdup(name) : NULL;
	w->enabled = json_is_true(json_object_get(params, "enabled"));
	if (fs_worker_submit(skills_worker(s), write_run, write_done, w) != 0)
		write_done(w, 1);
}

static void
handle_extra_roots(struct session *s, struct rpc_req *req, json_t *params)
{
	json_t *roots = json_object_get(params, "extraRoots"), *v;
	const char **list = xcalloc(json_array_size(roots) + 1, sizeof *list);
	size_t i;

	json_array_foreach(roots, i, v)
	{
		list[i] = json_string_value(v);
		if (list[i][0] != '/') {
			free(list);
			rpc_reply_error(req, RPC_INVALID_REQUEST,
				"Invalid request: AbsolutePathBuf deserialized without a base path",
				NULL);
			return;
		}
	}
	skills_set_extra_roots(skills_default(), list, json_array_size(roots));
	free(list);
	rpc_reply(req, json_object());
	(void)s;
}

static void
skills_changed_cb(void *arg)
{
	struct session *s = arg;

	rpc_notify(s->rpc, "skills/changed", json_object());
}

void
skills_api_thread_opened(struct session *s, struct store_thread *t)
{
	struct skills_session *k = skills_session(s);
	json_t *thread = store_thread_json(t, NULL);
	const char *cwd = json_string_value(json_object_get(thread, "cwd"));

	if (cwd != NULL && cwd[0] == '/') {
		if (k->watch == NULL)
			k->watch = skills_watch_new(s->loop, skills_changed_cb, s);
		skills_watch_cwd(k->watch, cwd);
	}
	json_decref(thread);
}

const struct rpc_method api_skills_methods[] = {
	{"skills/list", handle_list, 0},
	{"skills/config/write", handle_config_write, 0},
	{"skills/extraRoots/set", handle_extra_roots, 0},
	{NULL, NULL, 0},
};
