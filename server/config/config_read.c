/*
 * The config/read result: the effective configuration, the origin of each leaf (which layer
 * set it, with the layer's version "sha256:<hex>" as upstream computes it) and the layers,
 * highest precedence first: flags, the project layers (deepest first, disabled ones with
 * their disabledReason), user, system.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_int.h"
#include "digest.h"
#include "protocol/xmalloc.h"

#define CONFIG_SYSTEM_FILE "/etc/codex/config.toml"

/* "sha256:<hex>" of a layer's canonical JSON (sorted keys, compact), as upstream versions. */
json_t *
config_read_version(const json_t *layer)
{
	char *text = layer != NULL
		? json_dumps(layer, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)
		: xstrdup("{}"),
	     hex[65];
	json_t *v;

	if (digest_sha256_hex(text != NULL ? text : "", text != NULL ? strlen(text) : 0, hex) != 0)
		snprintf(hex, sizeof hex, "unavailable");
	v = json_sprintf("sha256:%s", hex);
	free(text);
	return v;
}

/* origins[path] = meta for every leaf of value (arrays by index), as upstream records them. */
static void
config_read_origins(
	json_t *origins, const json_t *value, char *path, size_t len, const json_t *meta)
{
	const char *k;
	json_t *v;
	size_t i;
	int n;

	if (json_is_object(value)) {
		json_object_foreach((json_t *)value, k, v)
		{
			n = snprintf(path + len, 4096 - len, "%s%s", len > 0 ? "." : "", k);
			if (n > 0 && len + (size_t)n < 4096)
				config_read_origins(origins, v, path, len + (size_t)n, meta);
		}
	} else if (json_is_array(value)) {
		json_array_foreach(value, i, v)
		{
			n = snprintf(path + len, 4096 - len, "%s%zu", len > 0 ? "." : "", i);
			if (n > 0 && len + (size_t)n < 4096)
				config_read_origins(origins, v, path, len + (size_t)n, meta);
		}
	} else if (len > 0) {
		path[len] = '\0';
		json_object_set(origins, path, (json_t *)meta);
	}
	path[len] = '\0';
}

/* A project layer's {name, version} (new reference). */
static json_t *
config_read_project_meta(const struct config_project *p)
{
	return json_pack("{s:{s:s, s:s}, s:o}", "name", "type", "project", "dotCodexFolder", p->dir,
		"version", config_read_version(p->config));
}

/* The config/read result, or NULL when the configuration was rejected. */
json_t *
config_read_result(const struct config *c, int include_layers, char **cause)
{
	json_t *origins = json_object(), *layers = json_array(), *user_meta, *flags_meta, *r;
	char path[4096] = "";

	if (c->error != NULL) {
		*cause = xasprintf("Invalid configuration: %s", c->error);
		json_decref(origins);
		json_decref(layers);
		return NULL;
	}
	user_meta = json_pack("{s:{s:s, s:s, s:n}, s:o}", "name", "type", "user", "file", c->path,
		"profile", "version", config_read_version(c->user));
	flags_meta = json_pack("{s:{s:s}, s:o}", "name", "type", "sessionFlags", "version",
		config_read_version(c->flags));
	config_read_origins(origins, c->user, path, 0, user_meta);
	/* lowest precedence first, so a deeper layer's origin replaces a shallower one's */
	for (size_t i = c->nprojects; i-- > 0;)
		if (c->projects[i].disabled == NULL) {
			json_t *meta = config_read_project_meta(&c->projects[i]);

			config_read_origins(origins, c->projects[i].config, path, 0, meta);
			json_decref(meta);
		}
	config_read_origins(origins, c->flags, path, 0, flags_meta);
	r = json_pack("{s:O, s:o}", "config", c->effective, "origins", origins);
	if (include_layers) {
		/* Highest precedence first; upstream lists session flags only when there are. */
		if (json_object_size(c->flags) > 0)
			json_array_append_new(layers,
				json_pack("{s:O, s:O, s:O}", "name",
					json_object_get(flags_meta, "name"), "version",
					json_object_get(flags_meta, "version"), "config",
					c->flags));
		for (size_t i = 0; i < c->nprojects; i++) {
			json_t *l = config_read_project_meta(&c->projects[i]);

			json_object_set(l, "config", c->projects[i].config);
			if (c->projects[i].disabled != NULL)
				json_object_set_new(
					l, "disabledReason", json_string(c->projects[i].disabled));
			json_array_append_new(layers, l);
		}
		json_array_append_new(layers,
			json_pack("{s:O, s:O, s:O}", "name", json_object_get(user_meta, "name"),
				"version", json_object_get(user_meta, "version"), "config",
				c->user));
		/* Upstream always lists the system file; we list it while it is absent (empty). */
		if (access(CONFIG_SYSTEM_FILE, F_OK) != 0)
			json_array_append_new(layers,
				json_pack("{s:{s:s, s:s}, s:o, s:{}}", "name", "type", "system",
					"file", CONFIG_SYSTEM_FILE, "version",
					config_read_version(NULL), "config"));
		json_object_set(r, "layers", layers);
	}
	json_decref(layers);
	json_decref(user_meta);
	json_decref(flags_meta);
	return r;
}
