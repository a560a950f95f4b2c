/*
 * model/list (upstream's bundled catalogue, model_catalog.c), config/read (account/read is in
 * api/account/) and the configWarning notifications sent once after initialize. Each request reads
 * the configuration afresh (config.toml is small), so an edit of the file shows in the next answer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "api/api.h"
#include "config/home.h"
#include "io/log.h"
#include "api/models/model_catalog.h"
#include "api/profiles.h"
#include "rpc/rpc.h"
#include "api/session.h"
#include "protocol/xmalloc.h"

/* Every model of a provider: upstream's bundled catalogue, hidden ones included. */
json_t *
config_api_catalog(const struct config *c, const struct model_provider *p)
{
	(void)c;
	(void)p;
	return model_catalog_list(1);
}

/* model/list: one page of the catalogue, as upstream pages it (profiles_reply_page). */
static void
config_api_model_list(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *pid = json_string_value(json_object_get(params, "modelProvider"));
	json_t *all;
	struct config *c;
	char *cause = NULL;

	(void)s;
	if ((c = config_load(&cause)) == NULL) {
		rpc_reply_errorf(req, RPC_INTERNAL_ERROR, "%s", cause);
		free(cause);
		return;
	}
	if (config_provider(c, pid) == NULL) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST, "Model provider `%s` not found",
			pid != NULL ? pid : config_provider_id(c));
		config_free(c);
		return;
	}
	all = model_catalog_list(json_is_true(json_object_get(params, "includeHidden")));
	profiles_reply_page(req, params, all, "models");
	json_decref(all);
	config_free(c);
}

/* config/read: the effective configuration, origins and layers (with a cwd's projects). */
static void
config_api_read(struct session *s, struct rpc_req *req, json_t *params)
{
	int layers = json_is_true(json_object_get(params, "includeLayers"));
	const char *cwd = json_string_value(json_object_get(params, "cwd"));
	struct config *c;
	char *cause = NULL;
	json_t *result;

	/* upstream reads project layers for the `cwd` given only, never the daemon's own */
	if ((c = config_load_cwd(cwd, &cause)) == NULL) {
		rpc_reply_errorf(req, RPC_INTERNAL_ERROR, "%s", cause);
		free(cause);
		return;
	}
	if ((result = config_read_result(c, layers, &cause)) == NULL) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, cause, NULL);
		free(cause);
	} else {
		/* upstream always emits default_permissions (codex-acp reads it): null when unset
		 */
		if (json_object_get(json_object_get(result, "config"), "default_permissions") ==
			NULL)
			json_object_set_new(json_object_get(result, "config"),
				"default_permissions", json_null());
		rpc_reply(req, result);
	}
	config_free(c);
}

/* Send a configWarning for each problem of the configuration. */
void
config_api_warnings(struct rpc *r)
{
	struct config *c;
	char *cause = NULL;
	json_t *warnings, *w;
	size_t i;

	if ((c = config_load(&cause)) == NULL) {
		log_warn("config: %s", cause);
		free(cause);
		return;
	}
	warnings = config_warnings(c);
	json_array_foreach(warnings, i, w)
	{
		log_warn("config: %s: %s", json_string_value(json_object_get(w, "summary")),
			json_string_value(json_object_get(w, "details")));
		rpc_notify(r, "configWarning", json_incref(w));
	}
	json_decref(warnings);
	config_free(c);
}

const struct rpc_method api_config_methods[] = {
	{"model/list", config_api_model_list, 0},
	{"config/read", config_api_read, 0},
	{NULL, NULL, 0},
};
