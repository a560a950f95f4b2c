/*
 * `debug models`: the model catalogue as upstream's `codex debug models` prints it, one JSON
 * document {"models":[ModelInfo...]} with upstream's snake_case members, built from the same
 * catalogue model/list answers from (so a client that reads either sees the same models).
 * Upstream also prints each model's instructions and messages, which are its own texts: we
 * have none, and leave those members out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "config/config.h"
#include "protocol/xmalloc.h"

/* One of model/list's Model objects as upstream's ModelInfo. */
static json_t *
debug_models_info(const json_t *m, size_t priority)
{
	json_t *levels = json_array(), *e;
	size_t i;

	json_array_foreach(json_object_get(m, "supportedReasoningEfforts"), i, e)
	{
		json_array_append_new(levels,
			json_pack("{s:O, s:O}", "effort", json_object_get(e, "reasoningEffort"),
				"description", json_object_get(e, "description")));
	}
	return json_pack("{s:O, s:O, s:O, s:O, s:o, s:s, s:b, s:i, s:[], s:[], s:n, s:n, s:O}",
		"slug", json_object_get(m, "id"), "display_name", json_object_get(m, "displayName"),
		"description", json_object_get(m, "description"), "default_reasoning_level",
		json_object_get(m, "defaultReasoningEffort"), "supported_reasoning_levels", levels,
		"visibility", json_is_true(json_object_get(m, "hidden")) ? "hide" : "list",
		"supported_in_api", 1, "priority", (int)priority, "additional_speed_tiers",
		"service_tiers", "availability_nux", "upgrade", "input_modalities",
		json_object_get(m, "inputModalities"));
}

/* `debug models [--bundled]`: print the configured provider's catalogue; the exit status. */
int
debug_models_main(int argc, char **argv)
{
	const struct model_provider *p;
	struct config *c;
	json_t *all, *models, *m, *doc;
	char *cause = NULL, *text;
	size_t i;

	for (int k = 1; k < argc; k++)
		if (strcmp(argv[k], "--bundled") != 0) {
			fprintf(stderr, "error: unexpected argument '%s' found\n", argv[k]);
			return 2;
		}
	if ((c = config_load(&cause)) == NULL) {
		fprintf(stderr, "Error: %s\n", cause);
		free(cause);
		return 1;
	}
	p = config_provider(c, NULL);
	all = p != NULL ? config_api_catalog(c, p) : json_array();
	models = json_array();
	json_array_foreach(all, i, m)
	{
		json_array_append_new(models, debug_models_info(m, i + 1));
	}
	doc = json_pack("{s:o}", "models", models);
	text = json_dumps(doc, JSON_COMPACT);
	puts(text != NULL ? text : "{\"models\":[]}");
	free(text);
	json_decref(doc);
	json_decref(all);
	config_free(c);
	return 0;
}
