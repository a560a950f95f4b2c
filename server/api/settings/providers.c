/*
 * The model provider methods as upstream 0.169 answers them (recorded: tests/fixtures/providers/):
 * modelProvider/list (every configured provider and OpenAI, sorted by id), capabilities/read,
 * and modelProvider/config/write (the edit is server/config/provider_write.c's; its answer is
 * the provider as modelProvider/list now shows it). Bedrock and Vertex AI providers are listed
 * and written as upstream does, though nothing here talks to them.
 */
#include <stdlib.h>
#include <string.h>

#include "api/startup.h"
#include "config/config.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"

/* Upstream's names of the built-in providers it lists when configured. */
static const struct {
	const char *id, *name;
} providers_named[] = {
	{"amazon-bedrock", "Amazon Bedrock Mantle"},
	{"amazon-bedrock-runtime", "Amazon Bedrock Runtime"},
	{"gcp", "Google Cloud Vertex AI"},
};

/* A string member of t, or JSON null. New reference. */
static json_t *
providers_str(const json_t *t, const char *key)
{
	const json_t *v = json_object_get(t, key);

	return json_is_string(v) ? json_copy((json_t *)v) : json_null();
}

/* A configured custom provider as upstream describes one (baseUrl null when unset). */
static json_t *
providers_custom(const struct model_provider *p, const json_t *table)
{
	json_t *auth;

	if (p->env_key != NULL)
		auth = json_pack("{s:s, s:s}", "mode", "environmentVariable", "envKey", p->env_key);
	else if (p->requires_openai_auth)
		auth = json_pack("{s:s, s:n}", "mode", "externallyConfigured", "envKey");
	else
		auth = json_pack("{s:s}", "mode", "none");
	return json_pack("{s:s, s:s, s:b, s:o, s:{s:s, s:o}}", "id", p->id, "name", p->name,
		"canEdit", 1, "baseUrl", providers_str(table, "base_url"), "settings", "type",
		"customGateway", "auth", auth);
}

/* One provider of the list by id (its table in config, NULL for none); NULL to leave out. */
static json_t *
providers_summary(const struct config *c, const char *id, const json_t *table)
{
	const struct model_provider *p;
	const char *name = NULL;
	json_t *aws;

	if (strcmp(id, "openai") == 0)
		return json_pack("{s:s, s:s, s:b, s:n, s:{s:s}}", "id", "openai", "name", "OpenAI",
			"canEdit", 0, "baseUrl", "settings", "type", "openai");
	for (size_t i = 0; i < sizeof providers_named / sizeof providers_named[0]; i++)
		if (strcmp(providers_named[i].id, id) == 0)
			name = providers_named[i].name;
	if (name != NULL && strcmp(id, "gcp") == 0)
		return json_pack("{s:s, s:s, s:b, s:n, s:{s:s, s:o, s:o, s:o}}", "id", id, "name",
			name, "canEdit", 1, "baseUrl", "settings", "type", "gcp", "projectId",
			providers_str(table, "project_id"), "location",
			providers_str(table, "location"), "credentialFile",
			providers_str(table, "credential_file"));
	if (name != NULL) {
		aws = json_object_get(table, "aws");
		return json_pack("{s:s, s:s, s:b, s:n, s:{s:s, s:o, s:o}}", "id", id, "name", name,
			"canEdit", 1, "baseUrl", "settings", "type", "bedrock", "profile",
			providers_str(aws, "profile"), "region", providers_str(aws, "region"));
	}
	if ((p = config_provider(c, id)) == NULL || p->builtin)
		return NULL;
	return providers_custom(p, table);
}

/* The configuration now, or NULL after answering the request's error. */
static struct config *
providers_config(struct rpc_req *req)
{
	struct config *c;
	char *cause = NULL;

	if ((c = config_load(&cause)) == NULL) {
		rpc_reply_errorf(req, RPC_INTERNAL_ERROR, "%s", cause);
		free(cause);
	}
	return c;
}

/* modelProvider/list: config.toml's providers and OpenAI, sorted by id (upstream's order). */
static void
providers_list(struct session *s, struct rpc_req *req, json_t *params)
{
	json_t *data = json_array(), *table, *v, *one;
	const char **ids;
	const char *id;
	struct config *c;
	size_t n = 0;

	(void)s;
	(void)params;
	if ((c = providers_config(req)) == NULL) {
		json_decref(data);
		return;
	}
	table = config_get(c, "model_providers");
	ids = xcalloc(json_object_size(table) + 2, sizeof *ids);
	json_object_foreach(table, id, v)
	{
		if (strcmp(id, "openai") != 0)
			ids[n++] = id;
	}
	ids[n++] = "openai";
	qsort(ids, n, sizeof *ids, startup_strcmp);
	for (size_t i = 0; i < n; i++)
		if ((one = providers_summary(c, ids[i], json_object_get(table, ids[i]))) != NULL)
			json_array_append_new(data, one);
	free(ids);
	rpc_reply(req,
		json_pack("{s:o, s:s, s:b}", "data", data, "defaultProviderId",
			config_provider_id(c), "canChangeDefault", 1));
	config_free(c);
}

/* modelProvider/capabilities/read: upstream answers the same for every provider. */
static void
providers_capabilities(struct session *s, struct rpc_req *req, json_t *params)
{
	(void)s;
	(void)params;
	rpc_reply(req, json_pack("{s:b, s:b}", "imageGeneration", 1, "webSearch", 1));
}

/* modelProvider/config/write: the patch applied, then the provider as it now is. */
static void
providers_write(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *code = NULL;
	char *cause = NULL, *id = NULL;
	struct config *c;
	json_t *one;

	(void)s;
	if (provider_write(json_object_get(params, "settings"), &id, &code, &cause) != 0) {
		if (code != NULL)
			rpc_reply_error(req, RPC_INVALID_REQUEST, cause,
				json_pack("{s:s}", "config_write_error_code", code));
		else
			rpc_reply_error(req, RPC_INTERNAL_ERROR, cause, NULL);
		free(cause);
		return;
	}
	if ((c = providers_config(req)) != NULL) {
		one = providers_summary(
			c, id, json_object_get(config_get(c, "model_providers"), id));
		if (one != NULL)
			rpc_reply(req, json_pack("{s:o}", "provider", one));
		else
			rpc_reply_errorf(req, RPC_INTERNAL_ERROR, "provider %s not found", id);
		config_free(c);
	}
	free(id);
}

const struct rpc_method api_providers_methods[] = {
	{"modelProvider/list", providers_list, 0},
	{"modelProvider/capabilities/read", providers_capabilities, 0},
	{"modelProvider/config/write", providers_write, 0},
	{NULL, NULL, 0},
};
