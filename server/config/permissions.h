/*
 * Permission profiles: the three built-ins (":read-only", ":workspace", ":danger-full-access")
 * and the [permissions.<name>] tables of config.toml, selected by `default_permissions`, a
 * thread's `permissions` or a turn's. A profile becomes the wire policy a command runs under:
 * a SandboxPolicy for a built-in, a managed PermissionProfile for a table (sandbox/policy.h
 * reads both). Errors carry upstream's words, which name `default_permissions` even for a
 * profile a request selected (upstream selects it by overriding that key).
 */
#ifndef CONFIG_PERMISSIONS_H
#define CONFIG_PERMISSIONS_H

#include <jansson.h>

struct config;

#define PERMISSIONS_NBUILTIN 3

/* The built-in ids, in the order permissionProfile/list gives them. */
extern const char *const permissions_builtin[PERMISSIONS_NBUILTIN];

/* Whether id is a built-in profile. */
int permissions_is_builtin(const char *id);
/* The [permissions] profile names, sorted as upstream lists them (new reference). */
json_t *permissions_names(const struct config *c);
/* A configured profile's `description` / `extends`, or NULL (borrowed from the config). */
const char *permissions_description(const struct config *c, const char *id);
const char *permissions_extends(const struct config *c, const char *id);
/* `default_permissions`, or NULL when unset. */
const char *permissions_default(const struct config *c);

/* Whether id can be selected: 0, or -1 with upstream's message in *cause (heap). */
int permissions_check(const struct config *c, const char *id, char **cause);
/*
 * Whether the configuration lets a thread start without naming a profile: profiles defined
 * but no default_permissions is refused, as upstream does. 0, or -1 with *cause.
 */
int permissions_check_default(const struct config *c, char **cause);

/*
 * The wire policy of profile id (new reference): a SandboxPolicy for a built-in, a managed
 * PermissionProfile for a configured one (its `extends` chain applied first). NULL with
 * *cause when the profile cannot be selected or a table is malformed.
 */
json_t *permissions_policy(const struct config *c, const char *id, char **cause);

/*
 * The ActivePermissionProfile ({id, extends}, new reference) of a thread or turn: the profile
 * it named, else none when it named a sandbox mode (JSON null), else default_permissions,
 * else none when config.toml sets sandbox_mode, else the implicit ":read-only".
 * `named` is the request's `permissions`, `sandbox` whether it named a sandbox mode.
 */
json_t *permissions_active(const struct config *c, const char *named, int sandbox);

/*
 * The profile a thread runs under (thread/start, resume, fork): `named` (the request's
 * `permissions`) when given; else none when a sandbox mode was chosen (`sandbox`: by the
 * request, its `config` or config.toml); else default_permissions, refused as upstream when
 * profiles are defined without it; else none (the implicit :read-only, run as the legacy
 * read-only sandbox). 0 with *id (borrowed, or NULL: none) and *policy (permissions_policy's,
 * new reference, or NULL), or -1 with upstream's message in *cause.
 */
int permissions_thread(const struct config *c, const char *named, int sandbox, const char **id,
	json_t **policy, char **cause);

/*
 * The SandboxPolicy a thread answer reports for a profile's wire policy (new reference), as
 * upstream projects it: unrestricted files -> dangerFullAccess; any write access ->
 * workspaceWrite (its explicit writable paths, network, /tmp and $TMPDIR excluded unless
 * writable); else readOnly. What the thread runs under stays the profile itself.
 */
json_t *permissions_legacy(const json_t *policy);

#endif
