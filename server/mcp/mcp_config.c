/*
 * [mcp_servers.<name>] as upstream reads it: a stdio server (command, args, env, env_vars, cwd)
 * or a streamable HTTP one (url, bearer_token_env_var, http_headers, env_http_headers), and
 * what both take (enabled, required, enabled_tools, disabled_tools, startup_timeout_sec or the
 * older startup_timeout_ms, tool_timeout_sec, tools.<tool>.approval_mode). The HTTP keys are
 * checked and kept for the HTTP transport; unknown keys are ignored.
 */
#include <string.h>

#include "mcp.h"
#include "protocol/xmalloc.h"

/* Whether v is an array of strings. */
static int
mcp_cfg_strings(const json_t *v)
{
	const json_t *e;
	size_t i;

	if (!json_is_array(v))
		return 0;
	json_array_foreach(v, i, e) if (!json_is_string(e)) return 0;
	return 1;
}

/* Whether v is a table of strings. */
static int
mcp_cfg_table(const json_t *v)
{
	const char *k;
	json_t *e;

	if (!json_is_object(v))
		return 0;
	json_object_foreach((json_t *)v, k, e) if (!json_is_string(e)) return 0;
	return 1;
}

/* The kind a key needs: s string, a strings, t table of strings, b bool, n number. */
static const struct {
	const char *key;
	char kind;
} mcp_cfg_keys[] = {
	{"command", 's'},
	{"args", 'a'},
	{"env", 't'},
	{"env_vars", 'a'},
	{"cwd", 's'},
	{"url", 's'},
	{"bearer_token_env_var", 's'},
	{"http_headers", 't'},
	{"env_http_headers", 't'},
	{"enabled", 'b'},
	{"required", 'b'},
	{"enabled_tools", 'a'},
	{"disabled_tools", 'a'},
	{"startup_timeout_sec", 'n'},
	{"startup_timeout_ms", 'n'},
	{"tool_timeout_sec", 'n'},
};

static int
mcp_cfg_kind_ok(char kind, const json_t *v)
{
	switch (kind) {
	case 's':
		return json_is_string(v);
	case 'a':
		return mcp_cfg_strings(v);
	case 't':
		return mcp_cfg_table(v);
	case 'b':
		return json_is_boolean(v);
	default:
		return json_is_number(v) && json_number_value(v) >= 0;
	}
}

/* One server's table: 0 with *out (new), or -1 with *cause. */
static int
mcp_cfg_server(const char *name, const json_t *in, json_t **out, char **cause)
{
	json_t *o, *v;
	double startup = MCP_STARTUP_TIMEOUT, tool = MCP_TOOL_TIMEOUT;

	if (!json_is_object(in)) {
		*cause = xasprintf("mcp_servers.%s: expected a table", name);
		return -1;
	}
	for (size_t i = 0; i < nitems(mcp_cfg_keys); i++) {
		v = json_object_get(in, mcp_cfg_keys[i].key);
		if (v != NULL && !mcp_cfg_kind_ok(mcp_cfg_keys[i].kind, v)) {
			*cause = xasprintf(
				"mcp_servers.%s.%s: invalid type", name, mcp_cfg_keys[i].key);
			return -1;
		}
	}
	if ((json_object_get(in, "command") != NULL) == (json_object_get(in, "url") != NULL)) {
		*cause = xasprintf("mcp_servers.%s: exactly one of `command` (stdio) or `url` "
				   "(streamable HTTP) is needed",
			name);
		return -1;
	}
	if (name[0] == '\0') {
		*cause = xstrdup("mcp_servers: a server needs a name");
		return -1;
	}
	o = json_deep_copy(in);
	if ((v = json_object_get(in, "startup_timeout_ms")) != NULL)
		startup = json_number_value(v) / 1000.0;
	if ((v = json_object_get(in, "startup_timeout_sec")) != NULL)
		startup = json_number_value(v);
	if ((v = json_object_get(in, "tool_timeout_sec")) != NULL)
		tool = json_number_value(v);
	json_object_set_new(o, "startup_timeout_sec", json_real(startup));
	json_object_set_new(o, "tool_timeout_sec", json_real(tool));
	if (json_object_get(o, "enabled") == NULL)
		json_object_set_new(o, "enabled", json_true());
	if (json_object_get(o, "required") == NULL)
		json_object_set_new(o, "required", json_false());
	*out = o;
	return 0;
}

int
mcp_config_parse(const json_t *servers, json_t **out, char **cause)
{
	json_t *all = json_object(), *v, *one;
	const char *k;

	*out = NULL;
	if (servers != NULL && !json_is_object(servers)) {
		*cause = xstrdup("mcp_servers: expected a table");
		json_decref(all);
		return -1;
	}
	json_object_foreach((json_t *)servers, k, v)
	{
		if (mcp_cfg_server(k, v, &one, cause) != 0) {
			json_decref(all);
			return -1;
		}
		json_object_set_new(all, k, one);
	}
	*out = all;
	return 0;
}
