/*
 * The small methods real clients call at start-up (notes/real-clients.md §1), answered as
 * upstream 0.169 answers them for a user without a ChatGPT login: experimentalFeature/list
 * and enablement/set, hooks/list (each cwd's layers'
 * hooks, server/hooks/), app/list and plugin/list (empty: both need a ChatGPT login upstream).
 * Each request reads the configuration afresh, as config/read does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "profiles.h"
#include "session.h"
#include "startup.h"
#include "config/config.h"
#include "config/features.h"
#include "hooks/hooks.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"
#include "thread/uuidv7.h"

/*
 * experimentalFeature/enablement/set: the flags upstream 0.169 takes at run time (the others
 * it drops without a word, as observed), and their process-wide state: -1 unset, 0 or 1.
 */
static struct {
	const char *name;
	int on;
} startup_runtime[] = {{"memories", -1}, {"remote_control", -1}, {"tool_suggest", -1}};

/* The configuration now, or NULL after answering the request's error. */
static struct config *
startup_config(struct rpc_req *req)
{
	struct config *c;
	char *cause = NULL;

	if ((c = config_load(&cause)) == NULL) {
		rpc_reply_errorf(req, RPC_INTERNAL_ERROR, "%s", cause);
		free(cause);
	}
	return c;
}

int
startup_feature_enabled(const struct config *c, const char *name)
{
	const struct feature_info *f = config_feature_find(name);
	json_t *v = json_object_get(config_get(c, "features"), name);

	/* config.toml, -c and --enable/--disable first; the run-time switch only below them */
	if (json_is_boolean(v))
		return json_is_true(v);
	for (size_t i = 0; i < nitems(startup_runtime); i++)
		if (strcmp(startup_runtime[i].name, name) == 0 && startup_runtime[i].on >= 0)
			return startup_runtime[i].on;
	return f != NULL && f->default_enabled;
}

/* experimentalFeature/list: every flag of upstream's, in its order, paged. */
static void
startup_feature_list(struct session *s, struct rpc_req *req, json_t *params)
{
	static const char *const stages[] = {[FEATURE_BETA] = "beta",
		[FEATURE_UNDER_DEVELOPMENT] = "underDevelopment",
		[FEATURE_STABLE] = "stable",
		[FEATURE_DEPRECATED] = "deprecated",
		[FEATURE_REMOVED] = "removed"};
	const struct feature_info *f;
	json_t *all = json_array();
	struct config *c;

	(void)s;
	if ((c = startup_config(req)) == NULL) {
		json_decref(all);
		return;
	}
	for (size_t i = 0; (f = config_feature_at(i)) != NULL; i++)
		json_array_append_new(all,
			json_pack("{s:s, s:s, s:s?, s:s?, s:s?, s:b, s:b}", "name", f->name,
				"stage", stages[f->stage], "displayName", f->display_name,
				"description", f->description, "announcement", f->announcement,
				"enabled", startup_feature_enabled(c, f->name), "defaultEnabled",
				f->default_enabled));
	profiles_reply_page(req, params, all, "feature flags");
	json_decref(all);
	config_free(c);
}

/* experimentalFeature/enablement/set: the switchable flags named, echoed; others dropped. */
static void
startup_feature_enablement(struct session *s, struct rpc_req *req, json_t *params)
{
	json_t *set = json_object_get(params, "enablement"), *done = json_object(), *v;
	const char *name;

	(void)s;
	json_object_foreach(set, name, v)
	{
		for (size_t i = 0; i < nitems(startup_runtime); i++)
			if (strcmp(startup_runtime[i].name, name) == 0) {
				startup_runtime[i].on = json_is_true(v);
				json_object_set(done, name, v);
			}
	}
	rpc_reply(req, json_pack("{s:o}", "enablement", done));
}

/* Answer upstream's error for a threadId member that is not a UUID; 0 when it is fine. */
static int
startup_bad_thread_id(struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "threadId"));
	char *why = NULL;

	if (id == NULL || uuidv7_check(id, &why) == 0)
		return 0;
	rpc_reply_errorf(req, RPC_INVALID_REQUEST, "invalid thread id: %s", why);
	free(why);
	return -1;
}

/* One cwd's HooksListEntry: the hooks of its configuration layers, as upstream lists them. */
static json_t *
startup_hooks_entry(const char *cwd)
{
	char *cause = NULL;
	struct config *c = config_load_cwd(cwd, &cause);
	struct hook_set *hs = hooks_discover(c, 0);
	json_t *e = json_pack("{s:s, s:o, s:o, s:[]}", "cwd", cwd, "hooks", hooks_list_entries(hs),
		"warnings", hooks_list_warnings(hs), "errors");

	hooks_unref(hs);
	config_free(c);
	free(cause);
	return e;
}

/* hooks/list: one entry per cwd asked (the daemon's cwd when none), as upstream. */
static void
startup_hooks_list(struct session *s, struct rpc_req *req, json_t *params)
{
	json_t *cwds = json_object_get(params, "cwds"), *data = json_array(), *v;
	char *here;
	size_t i;

	(void)s;
	if (startup_bad_thread_id(req, params) != 0) {
		json_decref(data);
		return;
	}
	json_array_foreach(cwds, i, v)
	{
		json_array_append_new(data, startup_hooks_entry(json_string_value(v)));
	}
	if (json_array_size(data) == 0) {
		here = getcwd(NULL, 0);
		json_array_append_new(data, startup_hooks_entry(here != NULL ? here : "/"));
		free(here);
	}
	rpc_reply(req, json_pack("{s:o}", "data", data));
}

/* app/list: apps come from ChatGPT's connectors, so none without that login. */
static void
startup_app_list(struct session *s, struct rpc_req *req, json_t *params)
{
	(void)s;
	if (startup_bad_thread_id(req, params) == 0)
		rpc_reply(req, json_pack("{s:[], s:n}", "data", "nextCursor"));
}

/* plugin/list: no marketplace without a ChatGPT login, as upstream lists it then. */
static void
startup_plugin_list(struct session *s, struct rpc_req *req, json_t *params)
{
	(void)s;
	(void)params;
	rpc_reply(req,
		json_pack("{s:[], s:[], s:[]}", "marketplaces", "marketplaceLoadErrors",
			"featuredPluginIds"));
}

int
startup_strcmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const struct rpc_method api_startup_methods[] = {
	{"experimentalFeature/list", startup_feature_list, 0},
	{"experimentalFeature/enablement/set", startup_feature_enablement, 0},
	{"hooks/list", startup_hooks_list, 0},
	{"app/list", startup_app_list, 0},
	{"plugin/list", startup_plugin_list, 0},
	{NULL, NULL, 0},
};
