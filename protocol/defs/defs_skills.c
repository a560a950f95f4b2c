/*
 * Protocol tables: skills/list, skills/config/write, skills/extraRoots/set and the
 * skills/changed notification, with upstream 0.169's names, shapes and docs.
 */
#include <stddef.h>

#include "defs.h"

static const struct pfield skills_list_params[] = {
	{"cwds", "string[]", 0, NULL,
		"When empty, defaults to the current session working directory."},
	{"forceReload", "boolean", 0, NULL,
		"When true, bypass the skills cache and re-scan skills from disk."},
	{NULL},
};

static const struct pfield skills_list_response[] = {
	{"data", "SkillsListEntry[]", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield skills_list_entry[] = {
	{"cwd", "string", PF_REQ, NULL, NULL},
	{"errors", "SkillErrorInfo[]", PF_REQ, NULL, NULL},
	{"skills", "SkillMetadata[]", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield skill_error_info[] = {
	{"message", "string", PF_REQ, NULL, NULL},
	{"path", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield skill_metadata[] = {
	{"dependencies", "SkillDependencies?", 0, NULL, NULL},
	{"description", "string", PF_REQ, NULL, NULL},
	{"enabled", "boolean", PF_REQ, NULL, NULL},
	{"interface", "SkillInterface?", 0, NULL, NULL},
	{"name", "string", PF_REQ, NULL, NULL},
	{"path", "LegacyAppPathString", PF_REQ, NULL, NULL},
	{"pluginId", "string?", 0, NULL,
		"Owning plugin ID, matching `PluginSummary.id`, when known."},
	{"scope", "SkillScope", PF_REQ, NULL, NULL},
	{"shortDescription", "string?", 0, NULL,
		"Legacy short_description from SKILL.md. Prefer SKILL.json "
		"interface.short_description."},
	{NULL},
};

static const struct pfield skill_interface[] = {
	{"brandColor", "string?", 0, NULL, NULL},
	{"defaultPrompt", "string?", 0, NULL, NULL},
	{"displayName", "string?", 0, NULL, NULL},
	{"iconLarge", "AbsolutePathBuf?", 0, NULL, NULL},
	{"iconLargeUrl", "string?", 0, NULL, "Remote large icon URL from the plugin catalog."},
	{"iconSmall", "AbsolutePathBuf?", 0, NULL, NULL},
	{"iconSmallUrl", "string?", 0, NULL, "Remote small icon URL from the plugin catalog."},
	{"shortDescription", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield skill_dependencies[] = {
	{"tools", "SkillToolDependency[]", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield skill_tool_dependency[] = {
	{"command", "string?", 0, NULL, NULL},
	{"description", "string?", 0, NULL, NULL},
	{"transport", "string?", 0, NULL, NULL},
	{"type", "string", PF_REQ, NULL, NULL},
	{"url", "string?", 0, NULL, NULL},
	{"value", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum skill_scope[] = {{"user"}, {"repo"}, {"system"}, {"admin"}, {NULL}};

static const struct pfield skills_config_write_params[] = {
	{"enabled", "boolean", PF_REQ, NULL, NULL},
	{"name", "string?", 0, NULL, "Name-based selector."},
	{"path", "AbsolutePathBuf?", 0, NULL, "Path-based selector."},
	{NULL},
};

static const struct pfield skills_config_write_response[] = {
	{"effectiveEnabled", "boolean", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield skills_extra_roots_set_params[] = {
	{"extraRoots", "AbsolutePathBuf[]", PF_REQ, NULL, NULL},
	{NULL},
};

const struct pdef pdefs_skills[] = {
	{.name = "SkillsListParams", .kind = PD_STRUCT, .fields = skills_list_params},
	{.name = "SkillsListResponse", .kind = PD_STRUCT, .fields = skills_list_response},
	{.name = "SkillsListEntry", .kind = PD_STRUCT, .fields = skills_list_entry},
	{.name = "SkillErrorInfo", .kind = PD_STRUCT, .fields = skill_error_info},
	{.name = "SkillMetadata", .kind = PD_STRUCT, .fields = skill_metadata},
	{.name = "SkillInterface", .kind = PD_STRUCT, .fields = skill_interface},
	{.name = "SkillDependencies", .kind = PD_STRUCT, .fields = skill_dependencies},
	{.name = "SkillToolDependency", .kind = PD_STRUCT, .fields = skill_tool_dependency},
	{.name = "SkillScope", .kind = PD_ENUM, .values = skill_scope},
	{.name = "SkillsConfigWriteParams",
		.kind = PD_STRUCT,
		.fields = skills_config_write_params},
	{.name = "SkillsConfigWriteResponse",
		.kind = PD_STRUCT,
		.fields = skills_config_write_response},
	{.name = "SkillsExtraRootsSetParams",
		.kind = PD_STRUCT,
		.fields = skills_extra_roots_set_params},
	{.name = "SkillsExtraRootsSetResponse", .kind = PD_STRUCT},
	{.name = "SkillsChangedNotification",
		.kind = PD_STRUCT,
		.doc = "Notification emitted when watched local skill files change.\n\nTreat this as an "
		       "invalidation signal and re-run `skills/list` with the client's current "
		       "parameters when refreshed skill metadata is needed."},
	{NULL},
};
