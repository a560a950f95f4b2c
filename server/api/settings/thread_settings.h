/*
 * The settings a thread/start, resume or fork request gives a thread (thread_settings.c): the
 * configuration it sees (its cwd's project layers over config.toml), its sandbox mode or
 * permission profile, and what its answer reports about them.
 */
#ifndef API_THREAD_SETTINGS_H
#define API_THREAD_SETTINGS_H

#include <limits.h>

#include <jansson.h>

struct config;
struct session;
struct store_params;

/*
 * The configuration a request sees (owned): the project layers of its cwd (made absolute; a
 * start without one: the daemon's) over config.toml. NULL (use the cache) when it cannot load.
 */
struct config *thread_settings_config(const json_t *params, int defaults);
/*
 * The settings of start / resume / fork from the request; with defaults (start) the ones not
 * given come from cfg. cwd_buf holds a relative cwd made absolute. Pointers are borrowed from
 * params and cfg.
 */
void thread_settings_params(struct session *s, const struct config *cfg, json_t *params,
	int defaults, struct store_params *p, char cwd_buf[PATH_MAX]);
/* Settings that came from `config` or config.toml, checked as the params are; 0 or -1. */
int thread_settings_check(const struct store_params *p, char **cause);
/*
 * The permission profile of a start (defaults 1), resume or fork (0), or of a resume of a
 * thread already loaded (-1: only `permissions` with `sandbox` is refused). 0 with *id
 * (borrowed) and *policy (new reference, NULL: none), p->sandbox set to what the profile
 * reports; or -1 with upstream's message in *cause.
 */
int thread_settings_permissions(const struct config *cfg, const json_t *params, int defaults,
	struct store_params *p, const char **id, json_t **policy, char **cause);
/* The wire SandboxPolicy of a sandbox mode, with cfg's workspace-write settings (new ref). */
json_t *thread_settings_sandbox(const struct config *cfg, const char *mode);
/* The legacy sandbox mode a profile's wire policy reports as (static string). */
const char *thread_settings_mode(const json_t *policy);
/* Whether no sandbox mode was chosen (request, its `config`, config.toml). */
int thread_settings_implicit(const struct config *cfg, const json_t *params);
/* The activePermissionProfile of a request that named no profile (new reference). */
json_t *thread_settings_active(const struct config *cfg, const json_t *params);

#endif
