/* What config.c shares with config_provider.c and config_read.c. */
#ifndef CONFIG_INT_H
#define CONFIG_INT_H

#include "config.h"

/* One `.codex` folder between a cwd and its project root (config_project.c). */
struct config_project {
	char *dir;	/* the .codex folder, absolute */
	json_t *config; /* its config.toml's table, {} when it has none */
	char *disabled; /* why it is not applied (upstream's disabledReason), or NULL */
};

struct config {
	char *path;
	json_t *user;	   /* the file's table, {} when absent or rejected */
	json_t *flags;	   /* the overrides' table, {} when none or rejected */
	json_t *effective; /* the merge */
	char *error;	   /* why a layer was rejected, or NULL */
	struct toml_pos pos;
	int error_in_file;
	json_t *warnings; /* ConfigWarningNotification params */
	struct model_provider **providers;
	size_t nproviders;
	struct config_project *projects; /* deepest first */
	size_t nprojects;
};

/* config_provider.c: the providers of the effective configuration, built-in ones first. */
void config_provider_build(struct config *c);
/* One [model_providers.ID] table; NULL with *cause when a field has the wrong type. */
struct model_provider *config_provider_parse(const char *id, const json_t *t, char **cause);
/* config.c: a TOML file's table ({} when absent), or NULL with *error (heap) and *pos. */
json_t *config_file_read(const char *path, struct toml_pos *pos, char **error);
/* config_project.c: find and read the project layers of cwd into c (before the merge). */
void config_project_load(struct config *c, const char *cwd);
void config_project_free(struct config *c);
/* config.c */
void config_warn(struct config *c, const char *summary, const char *details, const char *path,
	const struct toml_pos *pos);

/* config.c: check one layer against the Config schema and the provider rules; 0 or -1. */
int config_check_layer(const json_t *layer, char **cause);
/* config_read.c: a layer's version, "sha256:<hex>" of its canonical JSON (new reference). */
json_t *config_read_version(const json_t *layer);

#endif
