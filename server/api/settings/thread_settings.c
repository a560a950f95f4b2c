/*
 * What a thread/start, resume or fork request sets for its thread (thread_settings.h): the
 * request's settings, else (start) its `config` member's, else config.toml's as its cwd sees
 * it (a trusted project's .codex/config.toml layers included, as upstream applies them), else
 * upstream's defaults; and the permission profile it runs under (`permissions`, else
 * default_permissions when no sandbox mode was chosen), refused in upstream's words.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/profiles.h"
#include "api/session.h"
#include "thread_settings.h"
#include "agent/approval/approval_rules.h"
#include "config/config.h"
#include "config/permissions.h"
#include "protocol/xmalloc.h"
#include "thread/store/store.h"

/* The wire SandboxPolicy of a sandbox mode, with config.toml's workspace-write settings. */
json_t *
thread_settings_sandbox(const struct config *cfg, const char *mode)
{
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
int
thread_settings_implicit(const struct config *cfg, const json_t *params)
{
	const json_t *cfgo = json_object_get(params, "config");

	if (json_string_value(json_object_get(params, "sandbox")) != NULL ||
		json_string_value(json_object_get(cfgo, "sandbox_mode")) != NULL)
		return 0;
	return config_error(cfg) != NULL ||
		json_string_value(config_get(cfg, "sandbox_mode")) == NULL;
}

/*
 * The activePermissionProfile of a request that named no profile (new reference): upstream's
 * choice (profiles_active_permission_profile) when no sandbox mode was chosen either, else none.
 */
json_t *
thread_settings_active(const struct config *cfg, const json_t *params)
{
	return thread_settings_implicit(cfg, params)
		? profiles_active_permission_profile(cfg, params)
		: json_null();
}

/* A string param, or NULL. */
static const char *
thread_settings_str(const json_t *params, const char *key)
{
	return json_string_value(json_object_get(params, key));
}

/*
 * The settings of start / resume / fork from the request; with defaults (start) the ones not
 * given come from config.toml. cwd_buf holds a relative cwd made absolute.
 */
void
thread_settings_params(struct session *s, const struct config *cfg, json_t *params, int defaults,
	struct store_params *p, char cwd_buf[PATH_MAX])
{
	const char *cwd = thread_settings_str(params, "cwd");
	json_t *ap = json_object_get(params, "approvalPolicy");
	json_t *cfgo = json_object_get(params, "config");

	memset(p, 0, sizeof *p);
	p->model = thread_settings_str(params, "model");
	p->model_provider = thread_settings_str(params, "modelProvider");
	p->approval_policy = json_is_null(ap) ? NULL : ap;
	p->sandbox = thread_settings_str(params, "sandbox");
	p->base_instructions = thread_settings_str(params, "baseInstructions");
	p->developer_instructions = thread_settings_str(params, "developerInstructions");
	/* thread/start's only (resume has no such field): kept in session_meta */
	p->dynamic_tools = json_is_array(json_object_get(params, "dynamicTools")) &&
			json_array_size(json_object_get(params, "dynamicTools")) > 0
		? json_object_get(params, "dynamicTools")
		: NULL;
	p->approvals_reviewer = thread_settings_str(params, "approvalsReviewer");
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
	if (thread_settings_str(cfgo, "sandbox_mode") != NULL)
		p->default_sandbox = thread_settings_str(cfgo, "sandbox_mode");
	if (!defaults)
		return;
	/* `config`: overrides of config.toml keys for this thread (those a thread keeps). */
	if (p->model == NULL)
		p->model = thread_settings_str(cfgo, "model");
	if (p->model_provider == NULL)
		p->model_provider = thread_settings_str(cfgo, "model_provider");
	if (p->approval_policy == NULL && json_object_get(cfgo, "approval_policy") != NULL)
		p->approval_policy = json_object_get(cfgo, "approval_policy");
	if (p->sandbox == NULL)
		p->sandbox = thread_settings_str(cfgo, "sandbox_mode");
	if (p->effort == NULL)
		p->effort = thread_settings_str(cfgo, "model_reasoning_effort");
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
	if (p->effort == NULL && config_error(cfg) == NULL)
		p->effort = json_string_value(config_get(cfg, "model_reasoning_effort"));
	if (p->sandbox == NULL)
		p->sandbox = "read-only";
	if (p->cwd == NULL && getcwd(cwd_buf, PATH_MAX) != NULL)
		p->cwd = cwd_buf;
}

/* Settings that came from `config` or config.toml are checked as the params are. */
int
thread_settings_check(const struct store_params *p, char **cause)
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

/*
 * The configuration a request sees (owned): the project layers of its cwd (made absolute; a
 * start without one: the daemon's) over config.toml, as upstream applies a trusted project's
 * .codex/config.toml to a thread started there. NULL (use the cache) when it cannot load.
 */
struct config *
thread_settings_config(const json_t *params, int defaults)
{
	const char *cwd = thread_settings_str(params, "cwd");
	char buf[PATH_MAX], *cause = NULL;
	struct config *c;
	size_t n;

	if ((cwd == NULL || cwd[0] != '/') && (cwd != NULL || defaults) &&
		getcwd(buf, sizeof buf) != NULL) {
		n = strlen(buf);
		if (cwd != NULL)
			snprintf(buf + n, sizeof buf - n, "/%s", cwd);
		cwd = buf;
	}
	if (cwd == NULL)
		return NULL;
	if ((c = config_load_cwd(cwd, &cause)) == NULL)
		free(cause);
	return c;
}

/* The legacy sandbox mode a profile's policy reports as (static), kept in the rollout. */
const char *
thread_settings_mode(const json_t *policy)
{
	json_t *legacy = permissions_legacy(policy);
	const char *type = json_string_value(json_object_get(legacy, "type")), *mode;

	mode = strcmp(type, "dangerFullAccess") == 0  ? "danger-full-access"
		: strcmp(type, "workspaceWrite") == 0 ? "workspace-write"
						      : "read-only";
	json_decref(legacy);
	return mode;
}

/*
 * The permission profile of a start (defaults 1), resume or fork (0): `permissions` with
 * `sandbox` is refused first, as upstream does, and that is all for a thread already loaded
 * (defaults -1); a start without either takes default_permissions (permissions_thread). 0
 * with *id (borrowed) and *policy (new reference, NULL: no profile), and p->sandbox set to
 * what the profile reports; or -1 with *cause.
 */
int
thread_settings_permissions(const struct config *cfg, const json_t *params, int defaults,
	struct store_params *p, const char **id, json_t **policy, char **cause)
{
	const char *named = thread_settings_str(params, "permissions");

	*id = NULL;
	*policy = NULL;
	if (named != NULL && thread_settings_str(params, "sandbox") != NULL) {
		*cause = xstrdup("`permissions` cannot be combined with `sandbox`");
		return -1;
	}
	if ((named == NULL && defaults == 0) || defaults < 0)
		return 0;
	if (permissions_thread(
		    cfg, named, !thread_settings_implicit(cfg, params), id, policy, cause) != 0)
		return -1;
	if (*policy != NULL)
		p->sandbox = thread_settings_mode(*policy);
	return 0;
}
