/*
 * Configuration loading (config.h). Layers, highest precedence first: the session flags
 * (-c overrides), the project layers of a cwd when one is given (config_project.c: each
 * `.codex/config.toml` between the cwd and its project root, deepest first, those of trusted
 * projects only) and the user file $CODEX_HOME/config.toml. The user layer and the flags are
 * checked against upstream's Config schema (our protocol tables) and the provider rules below; a
 * layer that fails is dropped whole and its problem reported. The merged tree is a deep merge:
 * tables merge key by key, anything else is replaced.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config_int.h"
#include "digest.h"
#include "home.h"
#include "protocol/jsonschema/jsonschema.h"
#include "io/log.h"
#include "protocol/defs/defs.h"
#include "protocol/version.h"
#include "protocol/xmalloc.h"
#include "protocol/gen/schema.h"

/* Overrides given on the command line (config_add_override). */
static json_t *config_overrides;
static unsigned config_gen;

/* Bumped each time the overrides change. */
unsigned
config_generation(void)
{
	return config_gen;
}

/* [app_server] max_processes, bounded to 1..1048576; 1024 when unset or out of range. */
unsigned
config_max_processes(const struct config *c)
{
	json_t *v = c != NULL ? config_get(c, "app_server.max_processes") : NULL;

	if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 1048576)
		return 1024;
	return (unsigned)json_integer_value(v);
}
/* The compiled Config schema, built on first use. */
static struct jsv *config_jsv;

/* Set value (stolen) at a dotted path in table, creating (or replacing with) tables. */
static void
config_set_path(json_t *table, const char *dotted, json_t *value)
{
	char *copy = xstrdup(dotted), *seg = copy, *dot;
	json_t *child;

	while ((dot = strchr(seg, '.')) != NULL) {
		*dot = '\0';
		child = json_object_get(table, seg);
		if (!json_is_object(child)) {
			child = json_object();
			json_object_set_new(table, seg, child);
		}
		table = child;
		seg = dot + 1;
	}
	json_object_set_new(table, seg, value);
	free(copy);
}

/* Trim blanks at both ends of s in place. */
static char *
config_trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	for (e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t'); e--)
		;
	*e = '\0';
	return s;
}

/* Remember a -c key=value for every later load. */
int
config_add_override(const char *kv, char **cause)
{
	char *copy = xstrdup(kv), *eq = strchr(copy, '='), *key, *val, *err = NULL;
	json_t *v;
	int r = -EINVAL;

	if (eq == NULL) {
		*cause = xasprintf("invalid override `%s`: expected key=value", kv);
		goto out;
	}
	*eq = '\0';
	key = config_trim(copy);
	val = config_trim(eq + 1);
	if (*key == '\0' || key[0] == '.' || key[strlen(key) - 1] == '.' ||
		strstr(key, "..") != NULL) {
		*cause = xasprintf("invalid override `%s`: bad key", kv);
		goto out;
	}
	if ((v = toml_parse_value(val, &err)) == NULL)
		v = json_string(val); /* not TOML: a literal string, as upstream does */
	free(err);
	if (config_overrides == NULL)
		config_overrides = json_object();
	config_set_path(config_overrides, key, v);
	config_gen++;
	r = 0;
out:
	free(copy);
	return r;
}

/* Forget every -c override. */
void
config_clear_overrides(void)
{
	json_decref(config_overrides);
	config_overrides = NULL;
	config_gen++;
}

/* Merge src into dst: tables key by key, anything else replaced. */
static void
config_merge(json_t *dst, const json_t *src)
{
	const char *k;
	json_t *v, *d;

	json_object_foreach((json_t *)src, k, v)
	{
		d = json_object_get(dst, k);
		if (json_is_object(d) && json_is_object(v))
			config_merge(d, v);
		else
			json_object_set_new(dst, k, json_deep_copy(v));
	}
}

/* The compiled Config definition (and what it reaches), compiled once. */
static const struct jsv_node *
config_schema(char **cause)
{
	json_t *names, *defs, *doc;

	if (config_jsv == NULL) {
		names = json_object();
		defs = schema_closure("Config", names, cause) == 0 ? schema_defs_of(names, cause)
								   : NULL;
		json_decref(names);
		if (defs == NULL)
			return NULL;
		doc = json_pack("{s:o}", "definitions", defs);
		config_jsv = jsv_compile(doc, cause);
		json_decref(doc);
	}
	return config_jsv != NULL ? jsv_lookup(config_jsv, "#/definitions/Config") : NULL;
}

/* Check one layer: the Config schema, then every [model_providers] table. */
int
config_check_layer(const json_t *layer, char **cause)
{
	const struct jsv_node *node = config_schema(cause);
	struct model_provider *p;
	struct jsv_error err;
	const char *id;
	json_t *provs, *t;

	if (node == NULL)
		return -1;
	if (jsv_validate(node, layer, &err) != 0) {
		*cause = xasprintf(
			"%s: %s", err.path[0] != '\0' ? err.path + 1 : "(top level)", err.message);
		for (char *s = *cause; *s != '\0' && *s != ':'; s++)
			if (*s == '/')
				*s = '.';
		return -1;
	}
	provs = json_object_get(layer, "model_providers");
	if (provs != NULL && !json_is_object(provs)) {
		*cause = xstrdup("model_providers: expected a table");
		return -1;
	}
	json_object_foreach(provs, id, t)
	{
		if ((p = config_provider_parse(id, t, cause)) == NULL)
			return -1;
		config_provider_free(p);
	}
	return 0;
}

/* Add a configWarning. */
void
config_warn(struct config *c, const char *summary, const char *details, const char *path,
	const struct toml_pos *pos)
{
	json_t *w = json_pack(
		"{s:s, s:s?, s:s?}", "summary", summary, "details", details, "path", path);

	if (pos != NULL && pos->line > 0)
		json_object_set_new(w, "range",
			json_pack("{s:{s:i, s:i}, s:{s:i, s:i}}", "start", "line", pos->line,
				"column", pos->column, "end", "line", pos->line, "column",
				pos->column));
	json_array_append_new(c->warnings, w);
}

/*
 * A TOML file's table: {} when the file is absent; NULL when it cannot be read or does not
 * parse, with *error ("path: why" or "path:line:col: why", heap) and *pos.
 */
json_t *
config_file_read(const char *path, struct toml_pos *pos, char **error)
{
	char *text = NULL, *cause = NULL;
	struct stat st;
	json_t *t = NULL;
	ssize_t n;
	size_t len = 0;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT)
			return json_object();
		*error = xasprintf("%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || st.st_size > TOML_MAX_INPUT) {
		*error = xasprintf("%s: larger than %d bytes", path, TOML_MAX_INPUT);
		close(fd);
		return NULL;
	}
	text = xmalloc((size_t)st.st_size + 1);
	while (len < (size_t)st.st_size &&
		(n = read(fd, text + len, (size_t)st.st_size - len)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	if ((t = toml_parse(text, len, pos, &cause)) == NULL)
		*error = xasprintf("%s:%s", path, cause);
	free(cause);
	free(text);
	return t;
}

/* Read the user file into c->user; a missing file is an empty table. */
static void
config_read_file(struct config *c)
{
	if ((c->user = config_file_read(c->path, &c->pos, &c->error)) == NULL) {
		c->error_in_file = 1;
		c->user = json_object();
	}
}

/* Read config.toml, apply the overrides, check both, build the providers. */
struct config *
config_load(char **cause)
{
	return config_load_cwd(NULL, cause);
}

/* config_load, with the project layers between cwd and its project root (config_project.c). */
struct config *
config_load_cwd(const char *cwd, char **cause)
{
	struct config *c = xcalloc(1, sizeof *c);
	char *home = home_path(), *why = NULL;

	c->path = xasprintf("%s/config.toml", home);
	free(home);
	c->warnings = json_array();
	config_read_file(c);
	if (c->error == NULL && config_check_layer(c->user, &why) != 0) {
		c->error = xasprintf("%s: %s", c->path, why);
		c->error_in_file = 1;
		json_decref(c->user);
		c->user = json_object();
	}
	free(why);
	why = NULL;
	if (c->error != NULL)
		config_warn(c, "Invalid configuration; config.toml is ignored", c->error, c->path,
			&c->pos);
	c->flags = config_overrides != NULL ? json_deep_copy(config_overrides) : json_object();
	if (config_check_layer(c->flags, &why) != 0) {
		char *e = xasprintf("-c override: %s", why);

		config_warn(c, "Invalid -c override; the overrides are ignored", e, NULL, NULL);
		if (c->error == NULL)
			c->error = e;
		else
			free(e);
		json_decref(c->flags);
		c->flags = json_object();
	}
	free(why);
	if (cwd != NULL)
		config_project_load(c, cwd);
	/* lowest precedence first: user, the project layers from the root down, the flags */
	c->effective = json_deep_copy(c->user);
	for (size_t i = c->nprojects; i-- > 0;)
		if (c->projects[i].disabled == NULL)
			config_merge(c->effective, c->projects[i].config);
	config_merge(c->effective, c->flags);
	config_provider_build(c);
	if (config_provider(c, NULL) == NULL) {
		char *d = xasprintf("model_provider `%s` is not defined under [model_providers]",
			config_provider_id(c));

		config_warn(c, "Unknown model provider", d, c->path, NULL);
		free(d);
	}
	if (c->effective == NULL) {
		*cause = xstrdup("cannot build the configuration");
		config_free(c);
		return NULL;
	}
	return c;
}

/* Free a configuration; NULL is fine. */
void
config_free(struct config *c)
{
	if (c == NULL)
		return;
	free(c->path);
	json_decref(c->user);
	json_decref(c->flags);
	json_decref(c->effective);
	json_decref(c->warnings);
	free(c->error);
	config_project_free(c);
	for (size_t i = 0; i < c->nproviders; i++)
		config_provider_free(c->providers[i]);
	free(c->providers);
	free(c);
}

/* Why a layer was rejected, or NULL. */
const char *
config_error(const struct config *c)
{
	return c->error;
}

/* The configWarning params of every problem (new reference). */
json_t *
config_warnings(const struct config *c)
{
	return json_incref(c->warnings);
}

/* A merged value by dotted path. */
json_t *
config_get(const struct config *c, const char *dotted)
{
	char *copy = xstrdup(dotted), *seg = copy, *dot;
	json_t *v = c->effective;

	while (v != NULL && (dot = strchr(seg, '.')) != NULL) {
		*dot = '\0';
		v = json_object_get(v, seg);
		seg = dot + 1;
	}
	v = json_object_get(v, seg);
	free(copy);
	return v;
}

/* The model in effect. */
const char *
config_model(const struct config *c)
{
	const char *m = json_string_value(json_object_get(c->effective, "model"));

	return m != NULL ? m : CONFIG_DEFAULT_MODEL;
}

/* The provider id in effect. */
const char *
config_provider_id(const struct config *c)
{
	const char *p = json_string_value(json_object_get(c->effective, "model_provider"));

	return p != NULL ? p : CONFIG_DEFAULT_PROVIDER;
}

/* A provider by id, NULL for the one in effect. */
const struct model_provider *
config_provider(const struct config *c, const char *id)
{
	if (id == NULL)
		id = config_provider_id(c);
	for (size_t i = 0; i < c->nproviders; i++)
		if (strcmp(c->providers[i]->id, id) == 0)
			return c->providers[i];
	return NULL;
}
