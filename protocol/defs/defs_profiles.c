/*
 * Protocol tables: permissionProfile/list, collaborationMode/list (experimental upstream) and
 * the ActivePermissionProfile thread answers carry. Names and shapes are upstream's
 * (tests/unit/protocol/test_conformance.c checks them against its schema).
 */
#include <stddef.h>

#include "defs.h"

/* --- permissionProfile/list ------------------------------------------------------------- */

static const struct pfield permission_profile_list_params[] = {
	{"cursor", "string?", 0, NULL, "Opaque pagination cursor returned by a previous call."},
	{"cwd", "string?", 0, NULL, "Optional working directory to resolve project config layers."},
	{"limit", "uint32?", 0, NULL, "Optional page size; defaults to the full result set."},
	{NULL},
};

static const struct pfield permission_profile_list_response[] = {
	{"data", "PermissionProfileSummary[]", PF_REQ, NULL, NULL},
	{"nextCursor", "string?", 0, NULL,
		"Opaque cursor to pass to the next call to continue after the last item. If None, "
		"there are no more items to return."},
	{NULL},
};

static const struct pfield permission_profile_summary[] = {
	{"allowed", "boolean", PF_REQ, NULL,
		"Whether the effective requirements allow selecting this profile."},
	{"description", "string?", 0, NULL,
		"Optional user-facing description for display in clients."},
	{"id", "string", PF_REQ, NULL, "Available permission profile identifier."},
	{NULL},
};

static const struct pfield active_permission_profile[] = {
	{"extends", "string?", 0, "null",
		"Parent profile identifier from the selected permissions profile's `extends` "
		"setting, when present."},
	{"id", "string", PF_REQ, NULL,
		"Identifier from `default_permissions` or the implicit built-in default, such as "
		"`:workspace` or a user-defined `[permissions.<id>]` profile."},
	{NULL},
};

/* --- collaborationMode/list -------------------------------------------------------------- */

static const struct pfield collaboration_mode_list_params[] = {
	{NULL},
};

static const struct pfield collaboration_mode_list_response[] = {
	{"data", "CollaborationModeMask[]", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield collaboration_mode_mask[] = {
	{"mode", "ModeKind?", 0, NULL, NULL},
	{"model", "string?", 0, NULL, NULL},
	{"name", "string", PF_REQ, NULL, NULL},
	{"reasoning_effort", "ReasoningEffort??", 0, NULL, NULL},
	{NULL},
};

const struct pdef pdefs_profiles[] = {
	{.name = "PermissionProfileListParams",
		.kind = PD_STRUCT,
		.fields = permission_profile_list_params},
	{.name = "PermissionProfileListResponse",
		.kind = PD_STRUCT,
		.fields = permission_profile_list_response},
	{.name = "PermissionProfileSummary",
		.kind = PD_STRUCT,
		.fields = permission_profile_summary},
	{.name = "ActivePermissionProfile", .kind = PD_STRUCT, .fields = active_permission_profile},
	{.name = "CollaborationModeListParams",
		.kind = PD_STRUCT,
		.fields = collaboration_mode_list_params,
		.doc = "EXPERIMENTAL - list collaboration mode presets."},
	{.name = "CollaborationModeListResponse",
		.kind = PD_STRUCT,
		.fields = collaboration_mode_list_response,
		.doc = "EXPERIMENTAL - collaboration mode presets response."},
	{.name = "CollaborationModeMask",
		.kind = PD_STRUCT,
		.fields = collaboration_mode_mask,
		.doc = "EXPERIMENTAL - collaboration mode preset metadata for clients."},
	{NULL},
};
