/*
 * The process's skills on the loop thread (skills.h): the extra roots, the outcomes cached per
 * cwd (upstream caches per cwd too: a second skills/list is answered from memory until
 * forceReload, new extra roots or a change of the skill files), whether a skill is enabled
 * under config.toml's [[skills.config]] rules, and the wire shapes of skills/list.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/home.h"
#include "protocol/xmalloc.h"
#include "skills_int.h"

#define SKILLS_CACHE_MAX 64 /* cwds remembered; the oldest goes first */

struct skills_cached {
	char *cwd;
	struct skills_outcome *o;
};

struct skills {
	char **extra;
	size_t nextra;
	struct skills_cached cache[SKILLS_CACHE_MAX];
	size_t ncache;
};

static struct skills *skills_global;

struct skills *
skills_default(void)
{
	if (skills_global == NULL)
		skills_global = xcalloc(1, sizeof *skills_global);
	return skills_global;
}

void
skills_invalidate(struct skills *s)
{
	for (size_t i = 0; i < s->ncache; i++) {
		free(s->cache[i].cwd);
		skills_outcome_free(s->cache[i].o);
	}
	s->ncache = 0;
}

void
skills_default_free(void)
{
	struct skills *s = skills_global;

	if (s == NULL)
		return;
	skills_invalidate(s);
	for (size_t i = 0; i < s->nextra; i++)
		free(s->extra[i]);
	free(s->extra);
	free(s);
	skills_global = NULL;
}

/* The environment's strings live in one block after it, freed with it. */
struct skills_env *
skills_env_now(struct skills *s)
{
	struct skills_env *env = xcalloc(1, sizeof *env);
	const char *home = getenv("HOME");
	char **extra = xcalloc(s->nextra + 1, sizeof *extra);

	env->codex_home = home_path();
	env->home = home != NULL && *home != '\0' ? xstrdup(home) : NULL;
	for (size_t i = 0; i < s->nextra; i++)
		extra[i] = xstrdup(s->extra[i]);
	env->extra = (const char *const *)extra;
	env->nextra = s->nextra;
	return env;
}

void
skills_env_free(struct skills_env *env)
{
	if (env == NULL)
		return;
	for (size_t i = 0; i < env->nextra; i++)
		free((char *)env->extra[i]);
	free((void *)env->extra);
	free((char *)env->codex_home);
	free((char *)env->home);
	free(env);
}

void
skills_set_extra_roots(struct skills *s, const char *const *roots, size_t n)
{
	for (size_t i = 0; i < s->nextra; i++)
		free(s->extra[i]);
	free(s->extra);
	s->extra = xcalloc(n + 1, sizeof *s->extra);
	for (size_t i = 0; i < n; i++)
		s->extra[i] = xstrdup(roots[i]);
	s->nextra = n;
	skills_invalidate(s);
}

const struct skills_outcome *
skills_cached(struct skills *s, const char *cwd)
{
	for (size_t i = 0; i < s->ncache; i++)
		if (strcmp(s->cache[i].cwd, cwd) == 0)
			return s->cache[i].o;
	return NULL;
}

const struct skills_outcome *
skills_store(struct skills *s, const char *cwd, struct skills_outcome *o)
{
	for (size_t i = 0; i < s->ncache; i++)
		if (strcmp(s->cache[i].cwd, cwd) == 0) {
			skills_outcome_free(s->cache[i].o);
			s->cache[i].o = o;
			return o;
		}
	if (s->ncache == SKILLS_CACHE_MAX) {
		free(s->cache[0].cwd);
		skills_outcome_free(s->cache[0].o);
		memmove(s->cache, s->cache + 1, (SKILLS_CACHE_MAX - 1) * sizeof *s->cache);
		s->ncache--;
	}
	s->cache[s->ncache].cwd = xstrdup(cwd);
	s->cache[s->ncache++].o = o;
	return o;
}

const struct skills_outcome *
skills_get(struct skills *s, const char *cwd)
{
	const struct skills_outcome *o = skills_cached(s, cwd);
	struct skills_env *env;

	if (o != NULL)
		return o;
	env = skills_env_now(s);
	o = skills_store(s, cwd, skills_scan(env, cwd));
	skills_env_free(env);
	return o;
}

/* --- [[skills.config]] ------------------------------------------------------------------ */

struct rule {
	char *path; /* real path when it resolves */
	const char *name;
	int enabled;
};

/* The rules in file order (user config and -c overrides merged); *n set. */
static struct rule *
rules_now(size_t *n)
{
	const struct config *c = config_cache_get();
	json_t *list = c != NULL ? config_get(c, "skills.config") : NULL, *e, *p, *nm;
	struct rule *v = xcalloc(json_array_size(list) + 1, sizeof *v);
	size_t i;

	*n = 0;
	json_array_foreach(list, i, e)
	{
		p = json_object_get(e, "path");
		nm = json_object_get(e, "name");
		if (!json_is_boolean(json_object_get(e, "enabled")) ||
			(json_is_string(p) == json_is_string(nm)))
			continue; /* upstream ignores an entry without exactly one selector */
		v[*n].enabled = json_is_true(json_object_get(e, "enabled"));
		if (json_is_string(p))
			v[*n].path = realpath(json_string_value(p), NULL)
				?: xstrdup(json_string_value(p));
		else if (*(v[*n].name = json_string_value(nm)) == '\0')
			continue;
		(*n)++;
	}
	return v;
}

static void
rules_free(struct rule *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

/* The last rule that selects sk decides; none: enabled. */
static int
rules_enabled(const struct rule *v, size_t n, const struct skill *sk)
{
	int enabled = 1;

	for (size_t i = 0; i < n; i++)
		if ((v[i].path != NULL && strcmp(v[i].path, sk->path) == 0) ||
			(v[i].name != NULL && strcmp(v[i].name, sk->name) == 0))
			enabled = v[i].enabled;
	return enabled;
}

int
skills_enabled(const struct skill *sk)
{
	size_t n;
	struct rule *v = rules_now(&n);
	int r = rules_enabled(v, n, sk);

	rules_free(v, n);
	return r;
}

char *
skills_enabled_mask(const struct skills_outcome *o)
{
	size_t n;
	struct rule *v = rules_now(&n);
	char *mask = xcalloc(o->n + 1, 1);

	for (size_t i = 0; i < o->n; i++)
		mask[i] = (char)rules_enabled(v, n, &o->v[i]);
	rules_free(v, n);
	return mask;
}

/* --- wire shapes ------------------------------------------------------------------------ */

static const char *
scope_word(enum skill_scope s)
{
	static const char *const words[] = {"repo", "user", "system", "admin"};

	return words[s];
}

json_t *
skills_entry_json(const struct skills_outcome *o, const char *cwd)
{
	json_t *list = json_array(), *m;
	size_t n;
	struct rule *rules = rules_now(&n);

	for (size_t i = 0; i < o->n; i++) {
		const struct skill *sk = &o->v[i];

		m = json_pack("{s:s, s:s}", "name", sk->name, "description", sk->description);
		if (sk->short_description != NULL)
			json_object_set_new(
				m, "shortDescription", json_string(sk->short_description));
		if (sk->interface != NULL)
			json_object_set(m, "interface", sk->interface);
		if (sk->dependencies != NULL)
			json_object_set(m, "dependencies", sk->dependencies);
		json_object_set_new(m, "path", json_string(sk->path));
		json_object_set_new(m, "scope", json_string(scope_word(sk->scope)));
		json_object_set_new(m, "enabled", json_boolean(rules_enabled(rules, n, sk)));
		json_object_set_new(m, "pluginId", json_null());
		json_array_append_new(list, m);
	}
	rules_free(rules, n);
	return json_pack("{s:s, s:o, s:O}", "cwd", cwd, "skills", list, "errors", o->errors);
}

/* An entry's text and what it was made for. */
struct skills_entry_text {
	char *cwd;  /* as given */
	char *mask; /* the enabled state of each skill then */
	char *text;
	size_t len;
};

void
skills_entry_text_free(struct skills_entry_text *t)
{
	if (t == NULL)
		return;
	free(t->cwd);
	free(t->mask);
	free(t->text);
	free(t);
}

const char *
skills_entry_text(struct skills_outcome *o, const char *cwd, size_t *len)
{
	char *mask = skills_enabled_mask(o);
	struct skills_entry_text *t = o->text;
	json_t *entry;

	/* The enabled flags follow config.toml, which may have changed since: compared each time.
	 */
	if (t != NULL && strcmp(t->cwd, cwd) == 0 && memcmp(t->mask, mask, o->n) == 0) {
		free(mask);
		*len = t->len;
		return t->text;
	}
	skills_entry_text_free(t);
	o->text = t = xcalloc(1, sizeof *t);
	t->cwd = xstrdup(cwd);
	t->mask = mask;
	entry = skills_entry_json(o, cwd);
	t->text = json_dumps(entry, JSON_COMPACT);
	json_decref(entry);
	t->len = strlen(t->text);
	*len = t->len;
	return t->text;
}
