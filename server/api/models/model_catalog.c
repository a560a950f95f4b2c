/*
 * The model catalogue model/list and `debug models` answer from: upstream 0.169's bundled
 * catalogue, which it lists as is for every provider (a custom one included) when no ChatGPT
 * login refreshes it, with isDefault on its first entry whatever `model` says (recorded in
 * tests/fixtures/profiles/upstream_model_list.json). Hidden models are listed only on request.
 */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "model_catalog.h"
#include "protocol/xmalloc.h"

/* One bundled model; unset members are upstream's null, empty list or false. */
struct catalog_model {
	const char *id;
	const char *display_name;
	const char *description;
	const char *specialty;
	int hidden;
	const char *efforts; /* space-separated, in order */
	const char *default_effort;
	const char *multi_agent;
	const char *speed_tiers; /* space-separated */
	struct {
		const char *id, *name, *description;
	} tier;
	const char *default_tier;
	const char *nux;
	const char *upgrade;
	const char *migration;
};

static const struct catalog_model catalog[] = {
	{
		.id = "gpt-6.1-sol",
		.display_name = "GPT-6.1-Sol",
		.description = "Latest workhorse model for coding and everyday work.",
		.efforts = "low medium high xhigh max ultra",
		.default_effort = "low",
		.multi_agent = "v2",
		.speed_tiers = "fast",
		.tier = {"priority", "Fast", "2x speed, increased usage"},
		.nux = "Maximize usage with GPT-6.1 Sol. Try it on complex work for near-Astra performance at a lower cost.",
	},
	{
		.id = "gpt-6-astra",
		.display_name = "GPT-6-Astra",
		.description = "Frontier intelligence for the most demanding work.",
		.efforts = "low medium high xhigh max ultra",
		.default_effort = "low",
		.multi_agent = "v2",
		.speed_tiers = "fast",
		.tier = {"priority", "Fast", "2x speed, increased usage"},
	},
	{
		.id = "gpt-6-sol",
		.display_name = "GPT-6-Sol",
		.description = "Previous generation workhorse model.",
		.efforts = "low medium high xhigh max ultra",
		.default_effort = "medium",
		.multi_agent = "v2",
		.speed_tiers = "fast",
		.tier = {"priority", "Fast", "1.5x speed"},
		.default_tier = "priority",
	},
	{
		.id = "gpt-6-luna",
		.display_name = "GPT-6-Luna",
		.description = "Fast and affordable model for easier tasks.",
		.efforts = "low medium high xhigh max",
		.default_effort = "medium",
		.multi_agent = "v2",
		.speed_tiers = "fast",
		.tier = {"priority", "Fast", "1.5x speed"},
		.default_tier = "priority",
	},
	{
		.id = "gpt-5.6-sol",
		.display_name = "GPT-5.6-Sol",
		.description = "Older generation workhorse model.",
		.efforts = "low medium high xhigh max ultra",
		.default_effort = "low",
		.multi_agent = "v2",
		.speed_tiers = "fast",
		.tier = {"priority", "Fast", "1.5x speed, increased usage"},
		.upgrade = "gpt-6-sol",
		.migration =
			"Meet GPT-6 Sol\n\nOur latest Sol is more intelligent and more efficient so your usage limits go further. This model is a great daily driver for complex tasks, especially coding.\n",
	},
	{
		.id = "gpt-6.1-terra",
		.display_name = "GPT-6.1 Terra",
		.description = "GPT-6.1 Terra Codex model.",
		.efforts = "low medium high xhigh max ultra",
		.default_effort = "low",
		.multi_agent = "v2",
		.speed_tiers = "fast",
		.tier = {"priority", "Fast", "1.5x speed"},
	},
	{
		.id = "gpt-5.6-terra",
		.display_name = "GPT-5.6-Terra",
		.description = "Older balanced model for straightforward work.",
		.efforts = "low medium high xhigh max ultra",
		.default_effort = "medium",
		.multi_agent = "v2",
		.speed_tiers = "fast",
		.tier = {"priority", "Fast", "1.5x speed, increased usage"},
		.upgrade = "gpt-6-sol",
		.migration =
			"Meet GPT-6 Sol\n\nOur latest Sol is more intelligent and more efficient so your usage limits go further. This model is a great daily driver for complex tasks, especially coding.\n",
	},
	{
		.id = "gpt-5.6-luna",
		.display_name = "GPT-5.6-Luna",
		.description = "Older fast and efficient model.",
		.efforts = "low medium high xhigh max",
		.default_effort = "medium",
		.multi_agent = "v1",
		.speed_tiers = "fast",
		.tier = {"priority", "Fast", "1.5x speed, increased usage"},
		.upgrade = "gpt-6-luna",
		.migration =
			"Meet GPT-6 Luna\n\nOur latest Luna is significantly more efficient, so your usage limits go even further. Reach for it for any job that doesn't require frontier intelligence.\n",
	},
	{
		.id = "gpt-daybreak-blue-latest",
		.display_name = "Daybreak Blue",
		.description =
			"Latest frontier agentic coding model for broad defensive cybersecurity work.",
		.specialty = "cyber",
		.hidden = 1,
		.efforts = "low medium high xhigh max ultra",
		.default_effort = "low",
		.multi_agent = "v2",
	},
	{
		.id = "gpt-daybreak-red-latest",
		.display_name = "Daybreak Red",
		.description =
			"Cyber-permissive variant of our latest frontier agentic coding model for advanced, authorized cybersecurity research.",
		.specialty = "cyber",
		.hidden = 1,
		.efforts = "low medium high xhigh max ultra",
		.default_effort = "medium",
		.multi_agent = "v2",
	},
	{
		.id = "gpt-5.5",
		.display_name = "GPT-5.5",
		.description = "Legacy coding model.",
		.efforts = "low medium high xhigh",
		.default_effort = "medium",
		.speed_tiers = "fast",
		.tier = {"priority", "Fast", "1.5x speed, increased usage"},
		.upgrade = "gpt-6-sol",
		.migration =
			"Meet GPT-6 Sol\n\nOur latest Sol is more intelligent and more efficient so your usage limits go further. This model is a great daily driver for complex tasks, especially coding.\n",
	},
	{
		.id = "codex-auto-review",
		.display_name = "Codex Auto Review",
		.description = "Automatic approval review model for Codex.",
		.hidden = 1,
		.efforts = "low medium high xhigh max",
		.default_effort = "medium",
		.multi_agent = "v1",
		.speed_tiers = "fast",
		.tier = {"priority", "Fast", "1.5x speed, increased usage"},
	},
};

/* What each reasoning effort means, in upstream's words. */
static const char *
model_catalog_effort(const char *effort)
{
	static const char *const words[][2] = {
		{"low", "Fast responses with lighter reasoning"},
		{"medium", "Balances speed and reasoning depth for everyday tasks"},
		{"high", "Greater reasoning depth for complex problems"},
		{"xhigh", "Extra high reasoning depth for complex problems"},
		{"max", "Maximum reasoning depth for the hardest problems"},
		{"ultra", "Maximum reasoning with automatic task delegation"},
	};

	for (size_t i = 0; i < nitems(words); i++)
		if (strcmp(words[i][0], effort) == 0)
			return words[i][1];
	return effort;
}

/* A space-separated list as a JSON array, each word through fn when given. */
static json_t *
model_catalog_words(const char *list, json_t *(*fn)(const char *))
{
	json_t *a = json_array();
	char w[32];
	size_t n;

	for (const char *s = list != NULL ? list : ""; *s != '\0'; s += n + strspn(s + n, " ")) {
		n = strcspn(s, " ");
		snprintf(w, sizeof w, "%.*s", (int)n, s);
		json_array_append_new(a, fn != NULL ? fn(w) : json_string(w));
	}
	return a;
}

static json_t *
model_catalog_effort_option(const char *effort)
{
	return json_pack("{s:s, s:s}", "reasoningEffort", effort, "description",
		model_catalog_effort(effort));
}

/* One Model object, members in upstream's order. */
static json_t *
model_catalog_entry(const struct catalog_model *m, int is_default)
{
	json_t *tiers = json_array(), *upgrade_info = json_null(), *nux = json_null();

	if (m->tier.id != NULL)
		json_array_append_new(tiers,
			json_pack("{s:s, s:s, s:s}", "id", m->tier.id, "name", m->tier.name,
				"description", m->tier.description));
	if (m->upgrade != NULL)
		upgrade_info =
			json_pack("{s:s, s:n, s:n, s:s, s:n}", "model", m->upgrade, "upgradeCopy",
				"modelLink", "migrationMarkdown", m->migration, "retirementAt");
	if (m->nux != NULL)
		nux = json_pack("{s:s}", "message", m->nux);
	return json_pack("{s:s, s:s, s:s?, s:o, s:o, s:s, s:s, s:s?, s:b, s:o, s:s, s:[s, s], "
			 "s:b, s:s?, s:o, s:o, s:s?, s:n, s:b}",
		"id", m->id, "model", m->id, "upgrade", m->upgrade, "upgradeInfo", upgrade_info,
		"availabilityNux", nux, "displayName", m->display_name, "description",
		m->description, "modelSpecialty", m->specialty, "hidden", m->hidden,
		"supportedReasoningEfforts",
		model_catalog_words(m->efforts, model_catalog_effort_option),
		"defaultReasoningEffort", m->default_effort, "inputModalities", "text", "image",
		"supportsPersonality", 0, "multiAgentVersion", m->multi_agent,
		"additionalSpeedTiers", model_catalog_words(m->speed_tiers, NULL), "serviceTiers",
		tiers, "defaultServiceTier", m->default_tier, "availableAccessPrograms",
		"isDefault", is_default);
}

int
model_catalog_known(const char *slug)
{
	for (size_t i = 0; slug != NULL && i < nitems(catalog); i++)
		if (strcmp(catalog[i].id, slug) == 0)
			return 1;
	return 0;
}

json_t *
model_catalog_list(int include_hidden)
{
	json_t *all = json_array();

	for (size_t i = 0; i < nitems(catalog); i++)
		if (include_hidden || !catalog[i].hidden)
			json_array_append_new(all, model_catalog_entry(&catalog[i], i == 0));
	return all;
}
