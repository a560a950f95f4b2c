/*
 * Configuration: $CODEX_HOME/config.toml (upstream's file and keys, so one CODEX_HOME drives
 * both) under the -c key=value overrides of the command line, and the model providers it
 * defines next to the built-in ones (openai, ollama, lmstudio).
 *
 * A file that does not parse, or whose known keys have the wrong type, never stops the
 * daemon: it is ignored as a whole, the problem is kept (config_error) and reported as a
 * configWarning after initialize and as an error by config/read.
 */
#ifndef CONFIG_H
#define CONFIG_H

#include <jansson.h>

#include "protocol/toml/toml.h"

#define CONFIG_DEFAULT_MODEL	"gpt-6.1-sol" /* upstream 0.169's, recorded: tests/fixtures/tools/ */
#define CONFIG_DEFAULT_PROVIDER "openai"
#define CONFIG_MAX_RETRIES	100 /* request_max_retries / stream_max_retries ceiling */

enum model_wire { MODEL_WIRE_RESPONSES, MODEL_WIRE_CHAT };

/* How to reach a model (a [model_providers.ID] table, or a built-in one). */
struct model_provider {
	char *id;	/* the key under [model_providers] */
	char *name;	/* display name */
	char *base_url; /* without a trailing '/' */
	enum model_wire wire;
	char *env_key;		     /* environment variable holding the API key, or NULL */
	json_t *http_headers;	     /* {name: value} */
	json_t *env_http_headers;    /* {name: environment variable} */
	json_t *query_params;	     /* {name: value} */
	int request_max_retries;     /* connect errors, 429, 5xx (default 4) */
	int stream_max_retries;	     /* stream cut or idle after 200 OK (default 5) */
	long stream_idle_timeout_ms; /* default 300000 */
	long connect_timeout_ms;     /* ours: default 30000 */
	int requires_openai_auth;
	int builtin;
};

struct config;

/*
 * Load the configuration now (file + overrides). Never fails for a bad file (see above);
 * returns NULL only for an internal failure, with *cause.
 */
struct config *config_load(char **cause);
/*
 * The same, as seen from cwd (absolute): with the project layers between cwd and its project
 * root (the nearest folder holding a git `.git`, else cwd itself), those of projects
 * config.toml trusts applied. cwd NULL: config_load.
 */
struct config *config_load_cwd(const char *cwd, char **cause);
void config_free(struct config *c);

/* "path:line:col: message" when the file (or an override) was rejected, else NULL. */
const char *config_error(const struct config *c);
/* configWarning params for every problem found (an array, possibly empty; new reference). */
json_t *config_warnings(const struct config *c);

/* A value by dotted path ("sandbox_workspace_write.network_access"), borrowed or NULL. */
json_t *config_get(const struct config *c, const char *dotted);
/* The model and provider id in effect (defaults applied). */
const char *config_model(const struct config *c);
const char *config_provider_id(const struct config *c);
/* A provider by id (NULL: the one in effect); NULL when unknown. Owned by the config. */
const struct model_provider *config_provider(const struct config *c, const char *id);

/*
 * The config/read result: {config, origins, layers?}. Fails (NULL, *cause) when the
 * configuration was rejected.
 */
json_t *config_read_result(const struct config *c, int include_layers, char **cause);

/*
 * config/value/write and config/batchWrite: apply edits ({keyPath, value, mergeStrategy}) to
 * the user's config.toml in place (config_edit.c). Returns the ConfigWriteResponse, or NULL
 * with *cause and *code: the ConfigWriteErrorCode (static string), or NULL for a failure that
 * is not the request's (reading or writing the file).
 */
json_t *config_write(const json_t *edits, const char *file_path, const char *expected_version,
	const char **code, char **cause);

/*
 * Set one value (segs: the key path, split) in a config.toml at path (a project's
 * .codex/config.toml or the user's), edited in place and replaced atomically as config_write
 * does, without its checks: for the daemon's own writes (an MCP tool approved "always").
 */
int config_edit_file(
	const char *path, const char *const *segs, size_t n, const json_t *value, char **cause);

/*
 * modelProvider/config/write (provider_write.c): apply a ProviderSettingsPatch (customGateway,
 * bedrock or gcp) to the user's config.toml as upstream does; *id: the provider written
 * (heap). 0, or -1 with *cause and *code (a ConfigWriteErrorCode, NULL for a failure that is
 * not the request's).
 */
int provider_write(const json_t *settings, char **id, const char **code, char **cause);
/* Whether id is one of upstream's built-in providers (openai, ollama, lmstudio, bedrock, gcp). */
int provider_is_builtin(const char *id);
/* A new custom provider's id from its name: lower-case ASCII alphanumerics joined by '-'. */
char *provider_slug(const char *name);
/* A base URL modelProvider/config/write accepts; an API key variable name it accepts. */
int provider_url_ok(const char *url);
int provider_env_ok(const char *name);

/* The provider's API key (heap) from its env_key, OPENAI_API_KEY or auth.json; NULL if none. */
char *config_provider_api_key(const struct model_provider *p);
/* Copy a provider (the copy outlives its config). */
struct model_provider *config_provider_dup(const struct model_provider *p);
void config_provider_free(struct model_provider *p);

/*
 * Overrides from the command line, kept for every later config_load. "key.path=value": the
 * value is parsed as TOML, and taken as a literal string when it does not parse. Fails on a
 * missing '=' or an empty key.
 */
int config_add_override(const char *kv, char **cause);
/* Forget every override (tests). */
void config_clear_overrides(void);
/* Bumped each time the overrides change. */
unsigned config_generation(void);

/*
 * The configuration in effect, loaded again only when config.toml, CODEX_HOME or the
 * overrides changed (config_cache.c). Borrowed: valid until the next call.
 */
const struct config *config_cache_get(void);
void config_cache_free(void);
/* [app_server] max_processes: the process cap of one command (default 1024). */
unsigned config_max_processes(const struct config *c);

#endif
