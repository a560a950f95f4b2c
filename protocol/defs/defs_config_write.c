/*
 * Protocol tables: config/value/write and config/batchWrite, upstream's edits of the user's
 * config.toml (names and shapes are upstream's; tests/unit/protocol/test_conformance.c checks
 * them against its schema).
 */
#include <stddef.h>

#include "defs.h"

static const struct pfield config_value_write_params[] = {
	{"expectedVersion", "string?", 0, NULL, NULL},
	{"filePath", "string?", 0, NULL,
		"Path to the config file to write; defaults to the user's `config.toml` when "
		"omitted."},
	{"keyPath", "string", PF_REQ, NULL, NULL},
	{"mergeStrategy", "MergeStrategy", PF_REQ, NULL, NULL},
	{"value", "any", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield config_batch_write_params[] = {
	{"edits", "ConfigEdit[]", PF_REQ, NULL, NULL},
	{"expectedVersion", "string?", 0, NULL, NULL},
	{"filePath", "string?", 0, NULL,
		"Path to the config file to write; defaults to the user's `config.toml` when "
		"omitted."},
	{"reloadUserConfig", "boolean", 0, NULL,
		"When true, hot-reload updated runtime settings into loaded threads after writing. "
		"Session-static model, reasoning-effort, Plan-mode reasoning-effort, and "
		"service-tier defaults are not reloaded. The deprecated personality setting is "
		"also not reloaded."},
	{NULL},
};

static const struct pfield config_edit[] = {
	{"keyPath", "string", PF_REQ, NULL, NULL},
	{"mergeStrategy", "MergeStrategy", PF_REQ, NULL, NULL},
	{"value", "any", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum merge_strategy[] = {{"replace"}, {"upsert"}, {NULL}};
static const struct penum write_status[] = {{"ok"}, {"okOverridden"}, {NULL}};

static const struct pfield config_write_response[] = {
	{"filePath", "AbsolutePathBuf", PF_REQ, NULL,
		"Canonical path to the config file that was written."},
	{"overriddenMetadata", "OverriddenMetadata?", 0, NULL, NULL},
	{"status", "WriteStatus", PF_REQ, NULL, NULL},
	{"version", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield overridden_metadata[] = {
	{"effectiveValue", "any", PF_REQ, NULL, NULL},
	{"message", "string", PF_REQ, NULL, NULL},
	{"overridingLayer", "ConfigLayerMetadata", PF_REQ, NULL, NULL},
	{NULL},
};

const struct pdef pdefs_config_write[] = {
	{.name = "ConfigValueWriteParams", .kind = PD_STRUCT, .fields = config_value_write_params},
	{.name = "ConfigBatchWriteParams", .kind = PD_STRUCT, .fields = config_batch_write_params},
	{.name = "ConfigEdit", .kind = PD_STRUCT, .fields = config_edit},
	{.name = "MergeStrategy", .kind = PD_ENUM, .values = merge_strategy},
	{.name = "WriteStatus", .kind = PD_ENUM, .values = write_status},
	{.name = "ConfigWriteResponse", .kind = PD_STRUCT, .fields = config_write_response},
	{.name = "OverriddenMetadata", .kind = PD_STRUCT, .fields = overridden_metadata},
	{NULL},
};
