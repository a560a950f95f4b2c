/*
 * permissionProfile/list and collaborationMode/list (profiles.h). Both read the configuration
 * afresh, as config/read does, so an edit of config.toml shows in the next answer. Lists are
 * paged the way upstream pages them: the cursor is the decimal offset of the next item.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "profiles.h"
#include "session.h"
#include "config/config.h"
#include "config/permissions.h"
#include "agent/modes/collab_mode.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"

void
profiles_reply_page(struct rpc_req *req, json_t *params, json_t *all, const char *what)
{
	const char *cursor = json_string_value(json_object_get(params, "cursor"));
	json_t *limit = json_object_get(params, "limit"), *page;
	size_t total = json_array_size(all), off = 0, n, i;
	unsigned long long v;
	char *end;

	if (cursor != NULL) {
		errno = 0;
		v = strtoull(cursor, &end, 10);
		if (*cursor < '0' || *cursor > '9' || *end != '\0' || errno != 0) {
			rpc_reply_errorf(req, RPC_INVALID_REQUEST, "invalid cursor: %s", cursor);
			return;
		}
		if (v > total) {
			rpc_reply_errorf(req, RPC_INVALID_REQUEST, "cursor %s exceeds total %s %zu",
				cursor, what, total);
			return;
		}
		off = (size_t)v;
	}
	/* no limit: everything; 0 is taken as 1, as upstream does */
	n = json_is_integer(limit) ? (size_t)json_integer_value(limit) : total;
	if (n == 0)
		n = 1;
	page = json_array();
	for (i = off; i < total && json_array_size(page) < n; i++)
		json_array_append(page, json_array_get(all, i));
	rpc_reply(req,
		json_pack("{s:o, s:o}", "data", page, "nextCursor",
			i < total ? json_sprintf("%zu", i) : json_null()));
}

json_t *
profiles_active_permission_profile(const struct config *c, const json_t *params)
{
	return permissions_active(c, json_string_value(json_object_get(params, "permissions")),
		json_is_string(json_object_get(params, "sandbox")));
}

/* turn/start's collaborationMode into t; 0 or -1 with *cause. */
static int
profiles_turn_collab(json_t *cm, struct profiles_turn *t, char **cause)
{
	const char *mode = json_string_value(json_object_get(cm, "mode"));
	json_t *set = json_object_get(cm, "settings"), *effort, *di;

	if (collab_mode_builtin(mode) == NULL) {
		*cause = xasprintf("unknown collaboration mode `%s`", mode != NULL ? mode : "");
		return -1;
	}
	if (!json_is_object(set) || !json_is_string(json_object_get(set, "model"))) {
		*cause = xstrdup("collaborationMode.settings.model is required");
		return -1;
	}
	t->model = json_string_value(json_object_get(set, "model"));
	if ((effort = json_object_get(set, "reasoning_effort")) != NULL) {
		t->effort_set = 1;
		t->effort = json_string_value(effort);
	}
	/* null (or absent) developer_instructions: the mode's built-in ones */
	di = json_object_get(set, "developer_instructions");
	t->collab_message = collab_mode_message(mode, json_string_value(di));
	t->collab_mode = mode;
	t->collab_record = json_pack("{s:s, s:{s:O, s:s?, s:s?}}", "mode", mode, "settings",
		"model", json_object_get(set, "model"), "reasoning_effort", t->effort,
		"developer_instructions",
		json_is_string(di) ? json_string_value(di) : collab_mode_recorded(mode));
	return 0;
}

int
profiles_turn_params(struct session *s, json_t *params, struct profiles_turn *t, char **cause)
{
	const char *perm = json_string_value(json_object_get(params, "permissions"));
	json_t *cm = json_object_get(params, "collaborationMode");
	json_t *sp = json_object_get(params, "sandboxPolicy");

	memset(t, 0, sizeof *t);
	if (perm != NULL) {
		if (!rpc_experimental(s->rpc)) {
			*cause = xstrdup(
				"turn/start.permissions requires experimentalApi capability");
			return -1;
		}
		if (sp != NULL && !json_is_null(sp)) {
			*cause = xstrdup("`permissions` cannot be combined with `sandboxPolicy`");
			return -1;
		}
		if ((t->sandbox_policy = permissions_policy(config_cache_get(), perm, cause)) ==
			NULL)
			return -1;
	}
	if (cm != NULL && !json_is_null(cm)) {
		if (!rpc_experimental(s->rpc)) {
			*cause = xstrdup(
				"turn/start.collaborationMode requires experimentalApi capability");
			profiles_turn_clear(t);
			return -1;
		}
		if (profiles_turn_collab(cm, t, cause) != 0) {
			profiles_turn_clear(t);
			return -1;
		}
	}
	return 0;
}

void
profiles_turn_clear(struct profiles_turn *t)
{
	json_decref(t->sandbox_policy);
	json_decref(t->collab_record);
	free(t->collab_message);
	memset(t, 0, sizeof *t);
}

/* permissionProfile/list: the built-ins, then config.toml's profiles by name. */
static void
profiles_permission_list(struct session *s, struct rpc_req *req, json_t *params)
{
	const struct config *c = config_cache_get();
	json_t *all = json_array(), *names, *v;
	size_t i;

	(void)s;
	for (i = 0; i < PERMISSIONS_NBUILTIN; i++)
		json_array_append_new(all,
			json_pack("{s:s, s:n, s:b}", "id", permissions_builtin[i], "description",
				"allowed", 1));
	names = permissions_names(c);
	json_array_foreach(names, i, v)
	{
		const char *id = json_string_value(v);

		json_array_append_new(all,
			json_pack("{s:s, s:s?, s:b}", "id", id, "description",
				permissions_description(c, id), "allowed", 1));
	}
	json_decref(names);
	profiles_reply_page(req, params, all, "permission profiles");
	json_decref(all);
}

/* collaborationMode/list (experimental): upstream's two presets, whatever the config says. */
static void
profiles_collaboration_list(struct session *s, struct rpc_req *req, json_t *params)
{
	(void)params;
	if (!rpc_experimental(s->rpc)) {
		rpc_reply_error(req, RPC_INVALID_REQUEST,
			"collaborationMode/list requires experimentalApi capability", NULL);
		return;
	}
	rpc_reply(req,
		json_pack("{s:[{s:s, s:s, s:n, s:s}, {s:s, s:s, s:n, s:n}]}", "data", "name",
			"Plan", "mode", "plan", "model", "reasoning_effort", "medium", "name",
			"Default", "mode", "default", "model", "reasoning_effort"));
}

const struct rpc_method api_profiles_methods[] = {
	{"permissionProfile/list", profiles_permission_list, 0},
	{"collaborationMode/list", profiles_collaboration_list, 0},
	{NULL, NULL, 0},
};
