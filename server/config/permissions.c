/*
 * Permission profiles (permissions.h). A [permissions.<name>] table is read the way upstream's
 * config writes it:
 *
 *   [permissions.dev]
 *   description = "..."          shown by permissionProfile/list
 *   extends = ":workspace"       a built-in or another table, applied first
 *   [permissions.dev.filesystem]
 *   ":minimal" = "read"          special paths: :root :minimal :workspace_roots :tmpdir
 *   ":workspace_roots" = "write"   :slash_tmp; or a table {subpath = access} for
 *   "/opt/data" = "read"           :workspace_roots; absolute or ~/ paths
 *   [permissions.dev.network]
 *   enabled = true
 *
 * and turned into a managed PermissionProfile whose entries keep the table's order after
 * the parents' (the sandbox resolves overlaps by specificity, not order).
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "permissions.h"
#include "protocol/xmalloc.h"

#define PERMISSIONS_DEPTH 8 /* `extends` links followed before giving up (a cycle) */

const char *const permissions_builtin[PERMISSIONS_NBUILTIN] = {
	":read-only",
	":workspace",
	":danger-full-access",
};

int
permissions_is_builtin(const char *id)
{
	for (size_t i = 0; i < PERMISSIONS_NBUILTIN; i++)
		if (strcmp(id, permissions_builtin[i]) == 0)
			return 1;
	return 0;
}

/* The [permissions] table, or NULL. */
static json_t *
permissions_table(const struct config *c)
{
	json_t *t = c != NULL && config_error(c) == NULL ? config_get(c, "permissions") : NULL;

	return json_is_object(t) ? t : NULL;
}

/* One configured profile's table, or NULL. */
static json_t *
permissions_profile(const struct config *c, const char *id)
{
	json_t *p = json_object_get(permissions_table(c), id);

	return json_is_object(p) ? p : NULL;
}

static int
permissions_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *
permissions_names(const struct config *c)
{
	json_t *t = permissions_table(c), *names = json_array(), *v;
	const char **keys;
	const char *k;
	size_t n = 0;

	keys = xcalloc(json_object_size(t) + 1, sizeof *keys);
	json_object_foreach(t, k, v)
	{
		if (json_is_object(v))
			keys[n++] = k;
	}
	qsort(keys, n, sizeof *keys, permissions_cmp);
	for (size_t i = 0; i < n; i++)
		json_array_append_new(names, json_string(keys[i]));
	free(keys);
	return names;
}

const char *
permissions_description(const struct config *c, const char *id)
{
	return json_string_value(json_object_get(permissions_profile(c, id), "description"));
}

const char *
permissions_extends(const struct config *c, const char *id)
{
	return json_string_value(json_object_get(permissions_profile(c, id), "extends"));
}

const char *
permissions_default(const struct config *c)
{
	if (c == NULL || config_error(c) != NULL)
		return NULL;
	return json_string_value(config_get(c, "default_permissions"));
}

int
permissions_check(const struct config *c, const char *id, char **cause)
{
	if (permissions_is_builtin(id))
		return 0;
	if (permissions_table(c) == NULL) {
		*cause = xstrdup("failed to load configuration: default_permissions requires a "
				 "`[permissions]` table");
		return -1;
	}
	if (permissions_profile(c, id) == NULL) {
		*cause = xasprintf("failed to load configuration: default_permissions refers to "
				   "undefined profile `%s`",
			id);
		return -1;
	}
	return 0;
}

int
permissions_check_default(const struct config *c, char **cause)
{
	const char *d = permissions_default(c);

	if (d != NULL)
		return permissions_check(c, d, cause);
	if (json_object_size(permissions_table(c)) > 0) {
		*cause = xstrdup("failed to load configuration: config defines `[permissions]` "
				 "profiles but does not set `default_permissions`");
		return -1;
	}
	return 0;
}

/* A FileSystemSandboxEntry on a special path (new reference). */
static json_t *
permissions_special(const char *kind, const char *subpath, const char *access)
{
	json_t *v = json_pack("{s:s}", "kind", kind);

	if (subpath != NULL)
		json_object_set_new(v, "subpath", json_string(subpath));
	return json_pack(
		"{s:{s:s, s:o}, s:s}", "path", "type", "special", "value", v, "access", access);
}

/* A config access word as the wire's; NULL when unknown. */
static const char *
permissions_access(const json_t *v)
{
	const char *s = json_string_value(v);

	if (s == NULL)
		return NULL;
	if (strcmp(s, "read") == 0 || strcmp(s, "write") == 0)
		return s;
	if (strcmp(s, "none") == 0 || strcmp(s, "deny") == 0)
		return "deny";
	return NULL;
}

/* The entries of a :workspace_roots table {subpath = access}; 0 or -1 with *cause. */
static int
permissions_roots(json_t *entries, const char *id, json_t *table, char **cause)
{
	const char *sub, *acc;
	json_t *v;

	json_object_foreach(table, sub, v)
	{
		if ((acc = permissions_access(v)) == NULL) {
			*cause = xasprintf("invalid permission profile `%s`: unknown access for "
					   "`:workspace_roots.%s`",
				id, sub);
			return -1;
		}
		json_array_append_new(entries,
			permissions_special(
				"project_roots", strcmp(sub, ".") == 0 ? NULL : sub, acc));
	}
	return 0;
}

/* One `filesystem` key and value into entries; 0 or -1 with *cause. */
static int
permissions_fs_entry(json_t *entries, const char *id, const char *key, json_t *v, char **cause)
{
	static const char *const specials[][2] = {{":root", "root"}, {":minimal", "minimal"},
		{":workspace_roots", "project_roots"}, {":tmpdir", "tmpdir"},
		{":slash_tmp", "slash_tmp"}, {":cwd", "current_working_directory"}};
	const char *acc = permissions_access(v), *home;
	char *path;

	if (strcmp(key, "glob_scan_max_depth") == 0)
		return 0;
	if (strcmp(key, ":workspace_roots") == 0 && json_is_object(v))
		return permissions_roots(entries, id, v, cause);
	if (acc == NULL) {
		*cause = xasprintf(
			"invalid permission profile `%s`: unknown access for `%s`", id, key);
		return -1;
	}
	for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
		if (strcmp(key, specials[i][0]) == 0) {
			json_array_append_new(
				entries, permissions_special(specials[i][1], NULL, acc));
			return 0;
		}
	if (key[0] == '~' && key[1] == '/' && (home = getenv("HOME")) != NULL)
		path = xasprintf("%s%s", home, key + 1);
	else if (key[0] == '/')
		path = xstrdup(key);
	else {
		*cause = xasprintf(
			"invalid permission profile `%s`: `%s` is not an absolute path", id, key);
		return -1;
	}
	json_array_append_new(entries,
		json_pack("{s:{s:s, s:s}, s:s}", "path", "type", "path", "path", path, "access",
			acc));
	free(path);
	return 0;
}

/* A built-in's entries, for a table that extends it; 0, or 1 when it lifts every limit. */
static int
permissions_builtin_entries(json_t *entries, const char *id)
{
	json_array_append_new(entries, permissions_special("root", NULL, "read"));
	if (strcmp(id, ":workspace") == 0) {
		json_array_append_new(entries, permissions_special("project_roots", NULL, "write"));
		json_array_append_new(entries, permissions_special("slash_tmp", NULL, "write"));
		json_array_append_new(entries, permissions_special("tmpdir", NULL, "write"));
	}
	return strcmp(id, ":danger-full-access") == 0;
}

/*
 * Append profile id's entries (its parents' first) and set *net / *open; 0 or -1 with *cause.
 */
static int
permissions_collect(const struct config *c, const char *id, int depth, json_t *entries, int *net,
	int *open, char **cause)
{
	json_t *p, *fs, *nw, *v;
	const char *parent, *k;

	if (permissions_is_builtin(id)) {
		*open |= permissions_builtin_entries(entries, id);
		return 0;
	}
	if (depth >= PERMISSIONS_DEPTH) {
		*cause = xasprintf("invalid permission profile `%s`: `extends` loops", id);
		return -1;
	}
	if (permissions_check(c, id, cause) != 0)
		return -1;
	p = permissions_profile(c, id);
	if ((parent = json_string_value(json_object_get(p, "extends"))) != NULL &&
		permissions_collect(c, parent, depth + 1, entries, net, open, cause) != 0)
		return -1;
	fs = json_object_get(p, "filesystem");
	json_object_foreach(fs, k, v)
	{
		if (permissions_fs_entry(entries, id, k, v, cause) != 0)
			return -1;
	}
	nw = json_object_get(p, "network");
	if (json_is_object(nw) && json_is_boolean(json_object_get(nw, "enabled")))
		*net = json_is_true(json_object_get(nw, "enabled"));
	else if (json_is_string(nw))
		*net = strcmp(json_string_value(nw), "enabled") == 0;
	return 0;
}

/* A built-in's SandboxPolicy, as upstream reports it for the thread (new reference). */
static json_t *
permissions_builtin_policy(const char *id)
{
	if (strcmp(id, ":danger-full-access") == 0)
		return json_pack("{s:s}", "type", "dangerFullAccess");
	if (strcmp(id, ":workspace") == 0)
		return json_pack("{s:s, s:[], s:b, s:b, s:b}", "type", "workspaceWrite",
			"writableRoots", "networkAccess", 0, "excludeTmpdirEnvVar", 0,
			"excludeSlashTmp", 0);
	return json_pack("{s:s, s:b}", "type", "readOnly", "networkAccess", 0);
}

json_t *
permissions_policy(const struct config *c, const char *id, char **cause)
{
	json_t *entries;
	int net = 0, open = 0;

	if (permissions_check(c, id, cause) != 0)
		return NULL;
	if (permissions_is_builtin(id))
		return permissions_builtin_policy(id);
	entries = json_array();
	if (permissions_collect(c, id, 0, entries, &net, &open, cause) != 0) {
		json_decref(entries);
		return NULL;
	}
	if (open) {
		json_decref(entries);
		return json_pack("{s:s, s:{s:s}, s:s}", "type", "managed", "fileSystem", "type",
			"unrestricted", "network", net ? "enabled" : "restricted");
	}
	return json_pack("{s:s, s:{s:s, s:o}, s:s}", "type", "managed", "fileSystem", "type",
		"restricted", "entries", entries, "network", net ? "enabled" : "restricted");
}

json_t *
permissions_active(const struct config *c, const char *named, int sandbox)
{
	const char *id = named;
	const char *ext;

	if (id == NULL && sandbox)
		return json_null();
	if (id == NULL)
		id = permissions_default(c);
	if (id == NULL && c != NULL && config_error(c) == NULL &&
		json_is_string(config_get(c, "sandbox_mode")))
		return json_null();
	if (id == NULL)
		id = ":read-only";
	ext = permissions_is_builtin(id) ? NULL : permissions_extends(c, id);
	return json_pack("{s:s, s:s?}", "id", id, "extends", ext);
}

int
permissions_thread(const struct config *c, const char *named, int sandbox, const char **id,
	json_t **policy, char **cause)
{
	*id = named;
	*policy = NULL;
	if (named == NULL && sandbox)
		return 0;
	if (named == NULL) {
		if (permissions_check_default(c, cause) != 0)
			return -1;
		if ((*id = permissions_default(c)) == NULL)
			return 0; /* the implicit :read-only: the legacy read-only sandbox */
	}
	return (*policy = permissions_policy(c, *id, cause)) != NULL ? 0 : -1;
}

/* Whether a managed profile's entries give access `acc` to the special path `kind`. */
static int
permissions_entry_is(const json_t *e, const char *kind, const char *acc)
{
	const json_t *p = json_object_get(e, "path");

	return json_is_string(json_object_get(p, "type")) &&
		strcmp(json_string_value(json_object_get(p, "type")), "special") == 0 &&
		strcmp(json_string_value(json_object_get(json_object_get(p, "value"), "kind")),
			kind) == 0 &&
		strcmp(json_string_value(json_object_get(e, "access")), acc) == 0;
}

json_t *
permissions_legacy(const json_t *policy)
{
	const char *type = json_string_value(json_object_get(policy, "type"));
	const json_t *fs = json_object_get(policy, "fileSystem"), *e;
	json_t *roots;
	int net, write = 0, tmpdir = 0, slash_tmp = 0;
	size_t i;

	if (type == NULL || strcmp(type, "managed") != 0)
		return json_deep_copy(policy); /* a built-in's: already a SandboxPolicy */
	net = json_is_string(json_object_get(policy, "network")) &&
		strcmp(json_string_value(json_object_get(policy, "network")), "enabled") == 0;
	if (strcmp(json_string_value(json_object_get(fs, "type")), "unrestricted") == 0)
		return json_pack("{s:s}", "type", "dangerFullAccess");
	roots = json_array();
	json_array_foreach(json_object_get(fs, "entries"), i, e)
	{
		if (strcmp(json_string_value(json_object_get(e, "access")), "write") != 0)
			continue;
		write = 1;
		tmpdir |= permissions_entry_is(e, "tmpdir", "write");
		slash_tmp |= permissions_entry_is(e, "slash_tmp", "write");
		if (strcmp(json_string_value(json_object_get(json_object_get(e, "path"), "type")),
			    "path") == 0)
			json_array_append(
				roots, json_object_get(json_object_get(e, "path"), "path"));
	}
	if (!write) {
		json_decref(roots);
		return json_pack("{s:s, s:b}", "type", "readOnly", "networkAccess", net);
	}
	return json_pack("{s:s, s:o, s:b, s:b, s:b}", "type", "workspaceWrite", "writableRoots",
		roots, "networkAccess", net, "excludeTmpdirEnvVar", !tmpdir, "excludeSlashTmp",
		!slash_tmp);
}
