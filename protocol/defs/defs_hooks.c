/*
 * Protocol tables: the hook/started and hook/completed notifications and their HookRunSummary,
 * with upstream 0.169's names and shapes (hooks/list's own types are defs_startup.c's).
 */
#include <stddef.h>

#include "defs.h"

static const struct pfield hook_notification[] = {
	{"run", "HookRunSummary", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield hook_run_summary[] = {
	{"completedAt", "int64?", 0, NULL, NULL},
	{"displayOrder", "int64", PF_REQ, NULL, NULL},
	{"durationMs", "int64?", 0, NULL, NULL},
	{"entries", "HookOutputEntry[]", PF_REQ, NULL, NULL},
	{"eventName", "HookEventName", PF_REQ, NULL, NULL},
	{"executionMode", "HookExecutionMode", PF_REQ, NULL, NULL},
	{"handlerType", "HookHandlerType", PF_REQ, NULL, NULL},
	{"id", "string", PF_REQ, NULL, NULL},
	{"scope", "HookScope", PF_REQ, NULL, NULL},
	{"source", "HookSource", 0, "\"unknown\"", NULL},
	{"sourcePath", "LegacyAppPathString", PF_REQ, NULL, NULL},
	{"startedAt", "int64", PF_REQ, NULL, NULL},
	{"status", "HookRunStatus", PF_REQ, NULL, NULL},
	{"statusMessage", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield hook_output_entry[] = {
	{"kind", "HookOutputEntryKind", PF_REQ, NULL, NULL},
	{"text", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum hook_event_name[] = {{"preModelRequest"}, {"postModelRequest"},
	{"preToolUse"}, {"permissionRequest"}, {"postToolUse"}, {"preCompact"}, {"postCompact"},
	{"sessionStart"}, {"sessionEnd"}, {"userPromptSubmit"}, {"subagentStart"}, {"subagentStop"},
	{"stop"}, {"interrupt"}, {NULL}};
static const struct penum hook_execution_mode[] = {{"sync"}, {"async"}, {NULL}};
static const struct penum hook_handler_type[] = {
	{"command"}, {"mcpTool"}, {"prompt"}, {"agent"}, {NULL}};
static const struct penum hook_scope[] = {{"thread"}, {"turn"}, {NULL}};
static const struct penum hook_source[] = {{"system"}, {"user"}, {"project"}, {"mdm"},
	{"sessionFlags"}, {"plugin"}, {"cloudRequirements"}, {"cloudManagedConfig"},
	{"legacyManagedConfigFile"}, {"legacyManagedConfigMdm"}, {"unknown"}, {NULL}};
static const struct penum hook_run_status[] = {
	{"running"}, {"completed"}, {"failed"}, {"blocked"}, {"stopped"}, {NULL}};
static const struct penum hook_output_entry_kind[] = {
	{"warning"}, {"stop"}, {"feedback"}, {"context"}, {"error"}, {NULL}};

const struct pdef pdefs_hooks[] = {
	{.name = "HookStartedNotification", .kind = PD_STRUCT, .fields = hook_notification},
	{.name = "HookCompletedNotification", .kind = PD_STRUCT, .fields = hook_notification},
	{.name = "HookRunSummary", .kind = PD_STRUCT, .fields = hook_run_summary},
	{.name = "HookOutputEntry", .kind = PD_STRUCT, .fields = hook_output_entry},
	{.name = "HookEventName", .kind = PD_ENUM, .values = hook_event_name},
	{.name = "HookExecutionMode", .kind = PD_ENUM, .values = hook_execution_mode},
	{.name = "HookHandlerType", .kind = PD_ENUM, .values = hook_handler_type},
	{.name = "HookScope", .kind = PD_ENUM, .values = hook_scope},
	{.name = "HookSource", .kind = PD_ENUM, .values = hook_source},
	{.name = "HookRunStatus", .kind = PD_ENUM, .values = hook_run_status},
	{.name = "HookOutputEntryKind", .kind = PD_ENUM, .values = hook_output_entry_kind},
	{NULL},
};
