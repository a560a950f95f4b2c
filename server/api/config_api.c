/*
 * model/list, config/read and account/read, and the configWarning notifications sent once
 * after initialize. Each request reads the configuration afresh (config.toml is small), so an
 * edit of the file shows in the next answer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "api.h"
#include "config/home.h"
#include "io/log.h"
#include "rpc/rpc.h"
#include "session.h"
#include "protocol/xmalloc.h"

/* The OpenAI models we know, in upstream's order; the first is the default. */
static const struct known_model {
	const char *id;
	const char *description;
	const char *efforts; /* space-separated, in order */
} known_models[] = {
	{"gpt-5.1-codex-max", "Codex-optimized flagship for deep and fast reasoning.",
		"low medium high xhigh"},
	{"gpt-5.1-codex", "Optimized for agentic coding.", "low medium high"},
	{"gpt-5.1-codex-mini", "Codex-optimized; cheaper and faster, less capable.", "medium high"},
	{"gpt-5.2", "Frontier model for knowledge, reasoning and coding.", "low medium high xhigh"},
	{"gpt-5.1", "Broad world knowledge with strong general reasoning.", "low medium high"},
};

/* What each reasoning effort means, for the picker. */
static const char *
config_api_effort(const char *effort)
{
	if (strcmp(effort, "low") == 0)
		return "Fast responses with lighter reasoning";
	if (strcmp(effort, "medium") == 0)
		return "Balances speed and reasoning depth for everyday tasks";
	if (strcmp(effort, "high") == 0)
		return "Greater reasoning depth for complex problems";
	return "Extra high reasoning depth for complex problems";
}

/* One Model object. */
static json_t *
config_api_model_entry(const char *id, const char *description, const char *efforts, int is_default)
{
	json_t *opts = json_array();
	char e[16];
	size_t n;

	for (const char *s = efforts; *s != '\0'; s += n + strspn(s + n, " ")) {
		n = strcspn(s, " ");
		snprintf(e, sizeof e, "%.*s", (int)n, s);
		json_array_append_new(opts,
			json_pack("{s:s, s:s}", "reasoningEffort", e, "description",
				config_api_effort(e)));
	}
	return json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:s, s:o, s:[s, s], s:b, s:[], s:[], "
			 "s:n, s:n, s:n, s:n, s:n, s:n, s:n}",
		"id", id, "model", id, "displayName", id, "description", description, "hidden", 0,
		"isDefault", is_default, "defaultReasoningEffort", "medium",
		"supportedReasoningEfforts", opts, "inputModalities", "text", "image",
		"supportsPersonality", 0, "serviceTiers", "additionalSpeedTiers", "upgrade",
		"upgradeInfo", "availabilityNux", "defaultServiceTier", "modelSpecialty",
		"availableAccessPrograms", "multiAgentVersion");
}

/* Every model of a provider: the known ones for openai, else the configured one. */
json_t *
config_api_catalog(const struct config *c, const struct model_provider *p)
{
	json_t *list = json_array();
	const char *configured = NULL;
	int listed = 0, mine = strcmp(p->id, config_provider_id(c)) == 0;
	size_t i;

	if (mine)
		configured = config_model(c);
	if (strcmp(p->id, "openai") == 0) {
		for (i = 0; i < nitems(known_models); i++) {
			int dflt = configured != NULL ? strcmp(configured, known_models[i].id) == 0
						      : i == 0;

			listed |= dflt;
			json_array_append_new(list,
				config_api_model_entry(known_models[i].id,
					known_models[i].description, known_models[i].efforts,
					dflt));
		}
	}
	if (configured != NULL && !listed) {
		char *d = xasprintf("Configured model (provider %s).", p->name);

		json_array_insert_new(
			list, 0, config_api_model_entry(configured, d, "low medium high", 1));
		free(d);
	}
	return list;
}

/* model/list: the catalogue of a provider, one page of it. */
static void
config_api_model_list(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *cursor = json_string_value(json_object_get(params, "cursor"));
	const char *pid = json_string_value(json_object_get(params, "modelProvider"));
	json_t *limit = json_object_get(params, "limit"), *all, *page;
	const struct model_provider *p;
	struct config *c;
	char *cause = NULL, *end;
	unsigned long long off = 0, n;
	size_t i;

	if ((c = config_load(&cause)) == NULL) {
		rpc_reply_errorf(req, RPC_INTERNAL_ERROR, "%s", cause);
		free(cause);
		return;
	}
	if ((p = config_provider(c, pid)) == NULL) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST, "Model provider `%s` not found",
			pid != NULL ? pid : config_provider_id(c));
		config_free(c);
		return;
	}
	if (cursor != NULL) {
		errno = 0;
		off = strtoull(cursor, &end, 10);
		if (*cursor < '0' || *cursor > '9' || *end != '\0' || errno != 0) {
			rpc_reply_errorf(req, RPC_INVALID_REQUEST, "invalid cursor: %s", cursor);
			config_free(c);
			return;
		}
	}
	all = config_api_catalog(c, p);
	n = json_is_integer(limit) ? (unsigned long long)json_integer_value(limit)
				   : json_array_size(all);
	if (n == 0)
		n = 1;
	page = json_array();
	for (i = (size_t)off; i < json_array_size(all) && json_array_size(page) < n; i++)
		json_array_append(page, json_array_get(all, i));
	rpc_reply(req,
		json_pack("{s:o, s:o}", "data", page, "nextCursor",
			i < json_array_size(all) ? json_sprintf("%zu", i) : json_null()));
	json_decref(all);
	config_free(c);
}

/* config/read: the effective configuration, origins and layers. */
static void
config_api_read(struct session *s, struct rpc_req *req, json_t *params)
{
	int layers = json_is_true(json_object_get(params, "includeLayers"));
	struct config *c;
	char *cause = NULL;
	json_t *result;

	if ((c = config_load(&cause)) == NULL) {
		rpc_reply_errorf(req, RPC_INTERNAL_ERROR, "%s", cause);
		free(cause);
		return;
	}
	if ((result = config_read_result(c, layers, &cause)) == NULL) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, cause, NULL);
		free(cause);
	} else
		rpc_reply(req, result);
	config_free(c);
}

/* True when auth.json holds ChatGPT tokens (a login we cannot use, but report). */
static int
config_api_has_tokens(void)
{
	char *home = home_path(), *path = xasprintf("%s/auth.json", home);
	json_t *auth = json_load_file(path, 0, NULL);
	int r = json_is_object(json_object_get(auth, "tokens"));

	json_decref(auth);
	free(path);
	free(home);
	return r;
}

/* account/read: whether a key is there; never the key itself. */
static void
config_api_account_read(struct session *s, struct rpc_req *req, json_t *params)
{
	const struct model_provider *p;
	json_t *account = json_null();
	struct config *c;
	char *cause = NULL, *key;
	int needs;

	if ((c = config_load(&cause)) == NULL) {
		rpc_reply_errorf(req, RPC_INTERNAL_ERROR, "%s", cause);
		free(cause);
		return;
	}
	p = config_provider(c, NULL);
	needs = p != NULL ? p->requires_openai_auth : 0;
	if (needs) {
		if ((key = config_provider_api_key(p)) != NULL) {
			json_decref(account);
			account = json_pack("{s:s}", "type", "apiKey");
			free(key); /* presence only: the key is never echoed */
		} else if (config_api_has_tokens()) {
			json_decref(account);
			account = json_pack("{s:s, s:n, s:s}", "type", "chatgpt", "email",
				"planType", "unknown");
		}
	}
	rpc_reply(req, json_pack("{s:o, s:b}", "account", account, "requiresOpenaiAuth", needs));
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
	{"account/read", config_api_account_read, 0},
	{NULL, NULL, 0},
};
