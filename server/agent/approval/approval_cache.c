/*
 * acceptForSession keys (approval_rules.h): a bounded set of exact command keys per thread. A
 * key is the JSON of {command, cwd, tty, sandbox_permissions}, so only the very same command in
 * the same place is covered, never a prefix or a look-alike.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "approval_rules.h"
#include "protocol/xmalloc.h"

struct approval_cache {
	char **keys; /* owned */
	size_t n;
};

/* An empty set. */
struct approval_cache *
approval_cache_new(void)
{
	return xcalloc(1, sizeof(struct approval_cache));
}

/* Free the set. */
void
approval_cache_free(struct approval_cache *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->keys[i]);
	free(c->keys);
	free(c);
}

/* Exact membership. */
bool
approval_cache_has(const struct approval_cache *c, const char *key)
{
	for (size_t i = 0; c != NULL && key != NULL && i < c->n; i++)
		if (strcmp(c->keys[i], key) == 0)
			return true;
	return false;
}

/* Add a key (a repeat is a no-op). */
int
approval_cache_add(struct approval_cache *c, const char *key)
{
	if (key == NULL || strlen(key) > APPROVAL_CACHE_KEY_MAX)
		return -E2BIG;
	if (approval_cache_has(c, key))
		return 0;
	if (c->n >= APPROVAL_CACHE_MAX)
		return -E2BIG;
	c->keys = xrealloc(c->keys, (c->n + 1) * sizeof(*c->keys));
	c->keys[c->n++] = xstrdup(key);
	return 0;
}

/* {"command":[...],"cwd":...,"tty":...,"sandbox_permissions":...} as compact JSON. */
char *
approval_cache_key(const char *const *argv, size_t argc, const char *cwd, bool tty, bool escalated)
{
	json_t *o = json_object(), *cmd = json_array();
	char *s;

	for (size_t i = 0; i < argc; i++)
		json_array_append_new(cmd, json_stringn_nocheck(argv[i], strlen(argv[i])));
	json_object_set_new(o, "command", cmd);
	json_object_set_new(o, "cwd", cwd ? json_stringn_nocheck(cwd, strlen(cwd)) : json_null());
	json_object_set_new(o, "tty", json_boolean(tty));
	json_object_set_new(o, "sandbox_permissions",
		json_string(escalated ? "require_escalated" : "use_default"));
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}
