/*
 * Protocol tables: the thread methods (start, resume, fork, read, list, turns/list,
 * items/list, archive, unarchive, delete, name/set, metadata/update, loaded/list, unsubscribe),
 * their notifications, the Thread object and its status, sources and git info. The turns and
 * items a thread carries are in defs_item.c.
 */
#include <stddef.h>

#include "defs.h"

static const struct pfield thread_start_params_fields[] = {
	{"approvalPolicy", "AskForApproval?", 0, NULL, NULL},
	{"approvalsReviewer", "ApprovalsReviewer?", 0, NULL, NULL},
	{"baseInstructions", "string?", 0, NULL, NULL},
	{"config", "{any}?", 0, NULL, NULL},
	{"cwd", "string?", 0, NULL, NULL},
	{"developerInstructions", "string?", 0, NULL, NULL},
	{"ephemeral", "boolean?", 0, NULL, NULL},
	{"model", "string?", 0, NULL, NULL},
	{"modelProvider", "string?", 0, NULL, NULL},
	{"personality", "Personality?", 0, NULL, NULL},
	{"permissions", "string?", 0, NULL,
		"Named profile id for this thread. Cannot be combined with `sandbox`."},
	{"sandbox", "SandboxMode?", 0, NULL, NULL},
	{"serviceName", "string?", 0, NULL, NULL},
	{"serviceTier", "string?", 0, NULL, NULL},
	{"sessionStartSource", "ThreadStartSource?", 0, NULL, NULL},
	{"threadSource", "ThreadSource?", 0, NULL, NULL},
	{NULL},
};

static const struct penum personality_values[] = {{"none"}, {"friendly"}, {"pragmatic"}, {NULL}};

static const struct penum thread_start_source_values[] = {{"startup"}, {"clear"}, {NULL}};

static const struct pfield thread_start_response_fields[] = {
	{"activePermissionProfile", "ActivePermissionProfile?", 0, "null",
		"The profile that produced the permissions: `:read-only` when no sandbox mode was "
		"chosen, else null."},
	{"approvalPolicy", "AskForApproval", PF_REQ, NULL, NULL},
	{"approvalsReviewer", "ApprovalsReviewer", PF_REQ, NULL, NULL},
	{"cwd", "AbsolutePathBuf", PF_REQ, NULL, NULL},
	{"disabledPluginIds", "string[]", 0, "[]", NULL},
	{"instructionSources", "LegacyAppPathString[]", 0, "[]", NULL},
	{"model", "string", PF_REQ, NULL, NULL},
	{"modelProvider", "string", PF_REQ, NULL, NULL},
	{"multiAgentMode", "MultiAgentMode", 0, "\"explicitRequestOnly\"",
		"Always explicitRequestOnly (upstream: deprecated)."},
	{"reasoningEffort", "ReasoningEffort?", 0, NULL, NULL},
	{"runtimeWorkspaceRoots", "AbsolutePathBuf[]", 0, "[]",
		"The thread's workspace roots: its cwd."},
	{"sandbox", "SandboxPolicy", PF_REQ, NULL, NULL},
	{"serviceTier", "string?", 0, NULL, NULL},
	{"thread", "Thread", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_fields[] = {
	{"agentNickname", "string?", 0, NULL, NULL},
	{"agentRole", "string?", 0, NULL, NULL},
	{"cliVersion", "string", PF_REQ, NULL, NULL},
	{"createdAt", "int64", PF_REQ, NULL, NULL},
	{"cwd", "AbsolutePathBuf", PF_REQ, NULL, NULL},
	{"ephemeral", "boolean", PF_REQ, NULL, NULL},
	{"forkedFromId", "string?", 0, NULL, NULL},
	{"gitInfo", "GitInfo?", 0, NULL, NULL},
	{"historyMode", "ThreadHistoryMode", 0, "\"legacy\"", NULL},
	{"id", "string", PF_REQ, NULL, NULL},
	{"model", "string?", 0, NULL, NULL},
	{"modelProvider", "string", PF_REQ, NULL, NULL},
	{"name", "string?", 0, NULL, NULL},
	{"originator", "string?", 0, NULL, NULL},
	{"parentThreadId", "string?", 0, NULL, NULL},
	{"path", "string?", 0, NULL, NULL},
	{"preview", "string", PF_REQ, NULL, NULL},
	{"projectId", "string?", PF_REQ, NULL, NULL},
	{"reasoningEffort", "ReasoningEffort?", 0, NULL, NULL},
	{"recencyAt", "int64?", 0, NULL, NULL},
	{"section", "ThreadSection?", 0, "null", NULL},
	{"sectionEnteredAt", "int64?", 0, "null", NULL},
	{"sessionId", "string", PF_REQ, NULL, NULL},
	{"source", "SessionSource", PF_REQ, NULL, NULL},
	{"status", "ThreadStatus", PF_REQ, NULL, NULL},
	{"threadSource", "ThreadSource?", 0, NULL, NULL},
	{"turns", "Turn[]", PF_REQ, NULL, NULL},
	{"updatedAt", "int64", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield git_info_fields[] = {
	{"branch", "string?", 0, NULL, NULL},
	{"originUrl", "string?", 0, NULL, NULL},
	{"sha", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct penum thread_history_mode_values[] = {{"legacy"}, {"paginated"}, {NULL}};

static const struct pfield thread_section_fields[] = {
	{"appearance", "ThreadSectionAppearance?", 0, "null", NULL},
	{"id", "string", PF_REQ, NULL, NULL},
	{"name", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_section_appearance_fields[] = {
	{"color", "string?", 0, NULL, NULL},
	{"icon", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield thread_status_active_fields[] = {
	{"activeFlags", "ThreadActiveFlag[]", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pvariant thread_status_variants[] = {
	{"notLoaded", NULL, NULL},
	{"idle", NULL, NULL},
	{"systemError", NULL, NULL},
	{"active", thread_status_active_fields, NULL},
	{NULL},
};

static const struct penum thread_active_flag_values[] = {
	{"waitingOnApproval"}, {"waitingOnUserInput"}, {NULL}};

static const struct pfield thread_resume_params_fields[] = {
	{"approvalPolicy", "AskForApproval?", 0, NULL, NULL},
	{"approvalsReviewer", "ApprovalsReviewer?", 0, NULL, NULL},
	{"baseInstructions", "string?", 0, NULL, NULL},
	{"config", "{any}?", 0, NULL, NULL},
	{"cwd", "string?", 0, NULL, NULL},
	{"developerInstructions", "string?", 0, NULL, NULL},
	{"excludeTurns", "boolean", 0, NULL, NULL},
	{"model", "string?", 0, NULL, NULL},
	{"modelProvider", "string?", 0, NULL, NULL},
	{"personality", "Personality?", 0, NULL, NULL},
	{"permissions", "string?", 0, NULL,
		"Named profile id for the resumed thread. Cannot be combined with `sandbox`."},
	{"sandbox", "SandboxMode?", 0, NULL, NULL},
	{"serviceTier", "string?", 0, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_resume_response_fields[] = {
	{"activePermissionProfile", "ActivePermissionProfile?", 0, "null",
		"The profile that produced the permissions: `:read-only` when no sandbox mode was "
		"chosen, else null."},
	{"approvalPolicy", "AskForApproval", PF_REQ, NULL, NULL},
	{"approvalsReviewer", "ApprovalsReviewer", PF_REQ, NULL, NULL},
	{"collaborationMode", "CollaborationMode?", 0, NULL, NULL},
	{"cwd", "AbsolutePathBuf", PF_REQ, NULL, NULL},
	{"disabledPluginIds", "string[]", 0, "[]", NULL},
	{"instructionSources", "LegacyAppPathString[]", 0, "[]", NULL},
	{"itemsBackwardsCursor", "string?", 0, "null", NULL},
	{"model", "string", PF_REQ, NULL, NULL},
	{"modelProvider", "string", PF_REQ, NULL, NULL},
	{"multiAgentMode", "MultiAgentMode", 0, "\"explicitRequestOnly\"",
		"Always explicitRequestOnly (upstream: deprecated)."},
	{"reasoningEffort", "ReasoningEffort?", 0, NULL, NULL},
	{"runtimeWorkspaceRoots", "AbsolutePathBuf[]", 0, "[]",
		"The thread's workspace roots: its cwd."},
	{"sandbox", "SandboxPolicy", PF_REQ, NULL, NULL},
	{"serviceTier", "string?", 0, NULL, NULL},
	{"thread", "Thread", PF_REQ, NULL, NULL},
	{"turnsBackwardsCursor", "string?", 0, "null", NULL},
	{NULL},
};

static const struct pfield collaboration_mode_fields[] = {
	{"mode", "ModeKind", PF_REQ, NULL, NULL},
	{"settings", "Settings", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum mode_kind_values[] = {{"plan"}, {"default"}, {NULL}};

static const struct pfield settings_fields[] = {
	{"developer_instructions", "string?", 0, NULL, NULL},
	{"model", "string", PF_REQ, NULL, NULL},
	{"reasoning_effort", "ReasoningEffort?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield thread_fork_params_fields[] = {
	{"approvalPolicy", "AskForApproval?", 0, NULL, NULL},
	{"approvalsReviewer", "ApprovalsReviewer?", 0, NULL, NULL},
	{"baseInstructions", "string?", 0, NULL, NULL},
	{"config", "{any}?", 0, NULL, NULL},
	{"cwd", "string?", 0, NULL, NULL},
	{"developerInstructions", "string?", 0, NULL, NULL},
	{"ephemeral", "boolean", 0, NULL, NULL},
	{"excludeTurns", "boolean", 0, NULL, NULL},
	{"lastTurnId", "string?", 0, NULL, NULL},
	{"model", "string?", 0, NULL, NULL},
	{"modelProvider", "string?", 0, NULL, NULL},
	{"permissions", "string?", 0, NULL,
		"Named profile id for the forked thread. Cannot be combined with `sandbox`."},
	{"sandbox", "SandboxMode?", 0, NULL, NULL},
	{"serviceTier", "string?", 0, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"threadSource", "ThreadSource?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield thread_fork_response_fields[] = {
	{"activePermissionProfile", "ActivePermissionProfile?", 0, "null",
		"The profile that produced the permissions: `:read-only` when no sandbox mode was "
		"chosen, else null."},
	{"approvalPolicy", "AskForApproval", PF_REQ, NULL, NULL},
	{"approvalsReviewer", "ApprovalsReviewer", PF_REQ, NULL, NULL},
	{"cwd", "AbsolutePathBuf", PF_REQ, NULL, NULL},
	{"disabledPluginIds", "string[]", 0, "[]", NULL},
	{"instructionSources", "LegacyAppPathString[]", 0, "[]", NULL},
	{"model", "string", PF_REQ, NULL, NULL},
	{"modelProvider", "string", PF_REQ, NULL, NULL},
	{"multiAgentMode", "MultiAgentMode", 0, "\"explicitRequestOnly\"",
		"Always explicitRequestOnly (upstream: deprecated)."},
	{"reasoningEffort", "ReasoningEffort?", 0, NULL, NULL},
	{"runtimeWorkspaceRoots", "AbsolutePathBuf[]", 0, "[]",
		"The thread's workspace roots: its cwd."},
	{"sandbox", "SandboxPolicy", PF_REQ, NULL, NULL},
	{"serviceTier", "string?", 0, NULL, NULL},
	{"thread", "Thread", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_read_params_fields[] = {
	{"includeTurns", "boolean", 0, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_read_response_fields[] = {
	{"thread", "Thread", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_turns_list_params_fields[] = {
	{"cursor", "string?", 0, NULL, NULL},
	{"itemsView", "TurnItemsView?", 0, NULL, NULL},
	{"limit", "uint32?", 0, NULL, NULL},
	{"sortDirection", "SortDirection?", 0, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum sort_direction_values[] = {{"asc"}, {"desc"}, {NULL}};

static const struct pfield thread_turns_list_response_fields[] = {
	{"backwardsCursor", "string?", 0, NULL, NULL},
	{"data", "Turn[]", PF_REQ, NULL, NULL},
	{"nextCursor", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield thread_items_list_params_fields[] = {
	{"cursor", "ThreadItemsListCursor?", 0, NULL, NULL},
	{"deferOutput", "ThreadItemOutputDeferral?", 0, NULL, NULL},
	{"limit", "uint32?", 0, NULL, NULL},
	{"sortDirection", "SortDirection?", 0, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield thread_items_list_anchor_item_fields[] = {
	{"itemId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pvariant thread_items_list_anchor_variants[] = {
	{"item", thread_items_list_anchor_item_fields, NULL},
	{NULL},
};

static const struct pfield thread_items_list_response_fields[] = {
	{"backwardsCursor", "string?", 0, NULL, NULL},
	{"data", "ThreadItemEntry[]", PF_REQ, NULL, NULL},
	{"nextCursor", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield thread_item_entry_fields[] = {
	{"completedAtMs", "int64?", 0, NULL, NULL},
	{"item", "ThreadItem", PF_REQ, NULL, NULL},
	{"startedAtMs", "int64?", 0, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_list_params_fields[] = {
	{"archived", "boolean?", 0, NULL, NULL},
	{"currentAccountOnly", "boolean", 0, NULL, NULL},
	{"cursor", "string?", 0, NULL, NULL},
	{"cwd", "ThreadListCwdFilter?", 0, NULL, NULL},
	{"excludedThreadIds", "string[]?", 0, NULL, NULL},
	{"limit", "uint32?", 0, NULL, NULL},
	{"modelProviders", "string[]?", 0, NULL, NULL},
	{"originators", "string[]?", 0, NULL, NULL},
	{"searchTerm", "string?", 0, NULL, NULL},
	{"sectionId", "string?", 0, NULL, NULL},
	{"sortDirection", "SortDirection?", 0, NULL, NULL},
	{"sortKey", "ThreadSortKey?", 0, NULL, NULL},
	{"sourceKinds", "ThreadSourceKind[]?", 0, NULL, NULL},
	{"useStateDbOnly", "boolean", 0, NULL, NULL},
	{NULL},
};

static const struct penum thread_sort_key_values[] = {
	{"created_at"}, {"updated_at"}, {"recency_at"}, {"section_position"}, {NULL}};

static const struct penum thread_source_kind_values[] = {{"cli"}, {"vscode"}, {"exec"},
	{"appServer"}, {"subAgent"}, {"subAgentReview"}, {"subAgentCompact"},
	{"subAgentThreadSpawn"}, {"subAgentOther"}, {"unknown"}, {NULL}};

static const struct pfield thread_list_response_fields[] = {
	{"backwardsCursor", "string?", 0, NULL, NULL},
	{"data", "Thread[]", PF_REQ, NULL, NULL},
	{"nextCursor", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield thread_archive_params_fields[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_unarchive_params_fields[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_unarchive_response_fields[] = {
	{"thread", "Thread", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_delete_params_fields[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_set_name_params_fields[] = {
	{"name", "string", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_metadata_update_params_fields[] = {
	{"gitInfo", "ThreadMetadataGitInfoUpdateParams?", 0, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_metadata_git_info_update_params_fields[] = {
	{"branch", "string?", 0, NULL, NULL},
	{"originUrl", "string?", 0, NULL, NULL},
	{"sha", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield thread_metadata_update_response_fields[] = {
	{"thread", "Thread", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_loaded_list_params_fields[] = {
	{"cursor", "string?", 0, NULL, NULL},
	{"limit", "uint32?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield thread_loaded_list_response_fields[] = {
	{"data", "string[]", PF_REQ, NULL, NULL},
	{"nextCursor", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield thread_unsubscribe_params_fields[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_unsubscribe_response_fields[] = {
	{"status", "ThreadUnsubscribeStatus", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum thread_unsubscribe_status_values[] = {
	{"notLoaded"}, {"notSubscribed"}, {"unsubscribed"}, {NULL}};

static const struct pfield thread_started_notification_fields[] = {
	{"thread", "Thread", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_status_changed_notification_fields[] = {
	{"status", "ThreadStatus", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_archived_notification_fields[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_unarchived_notification_fields[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_name_updated_notification_fields[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"threadName", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield thread_closed_notification_fields[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_deleted_notification_fields[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

const struct pdef pdefs_thread[] = {
	{.name = "ThreadStartParams", .kind = PD_STRUCT, .fields = thread_start_params_fields},
	{.name = "Personality", .kind = PD_ENUM, .values = personality_values},
	{.name = "ThreadStartSource", .kind = PD_ENUM, .values = thread_start_source_values},
	{.name = "ThreadSource", .kind = PD_ALIAS, .schema = "{\"type\": \"string\"}"},
	{.name = "ThreadStartResponse", .kind = PD_STRUCT, .fields = thread_start_response_fields},
	{.name = "MultiAgentMode",
		.kind = PD_ALIAS,
		.schema = "{\"oneOf\": [{\"enum\": [\"explicitRequestOnly\", \"proactive\"], "
			  "\"type\": \"string\"}, {\"additionalProperties\": false, "
			  "\"properties\": {\"custom\": {\"type\": \"string\"}}, "
			  "\"required\": [\"custom\"], \"title\": \"CustomMultiAgentMode\", "
			  "\"type\": \"object\"}]}"},
	{.name = "Thread", .kind = PD_STRUCT, .fields = thread_fields},
	{.name = "GitInfo", .kind = PD_STRUCT, .fields = git_info_fields},
	{.name = "ThreadHistoryMode", .kind = PD_ENUM, .values = thread_history_mode_values},
	{.name = "ThreadSection", .kind = PD_STRUCT, .fields = thread_section_fields},
	{.name = "ThreadSectionAppearance",
		.kind = PD_STRUCT,
		.fields = thread_section_appearance_fields},
	{.name = "SessionSource",
		.kind = PD_ALIAS,
		.schema =
			"{\"oneOf\": [{\"enum\": [\"cli\", \"vscode\", \"exec\", \"appServer\", \"unknown\"], \"type\": \"string\"}, {\"additionalProperties\": false, \"properties\": {\"custom\": {\"type\": \"string\"}}, \"required\": [\"custom\"], \"title\": \"CustomSessionSource\", \"type\": \"object\"}, {\"additionalProperties\": false, \"properties\": {\"subAgent\": {\"$ref\": \"#/definitions/SubAgentSource\"}}, \"required\": [\"subAgent\"], \"title\": \"SubAgentSessionSource\", \"type\": \"object\"}]}"},
	{.name = "SubAgentSource",
		.kind = PD_ALIAS,
		.schema =
			"{\"oneOf\": [{\"enum\": [\"review\", \"compact\", \"memory_consolidation\"], \"type\": \"string\"}, {\"additionalProperties\": false, \"properties\": {\"thread_spawn\": {\"properties\": {\"agent_nickname\": {\"default\": null, \"type\": [\"string\", \"null\"]}, \"agent_path\": {\"anyOf\": [{\"$ref\": \"#/definitions/AgentPath\"}, {\"type\": \"null\"}], \"default\": null}, \"agent_role\": {\"default\": null, \"type\": [\"string\", \"null\"]}, \"depth\": {\"format\": \"int32\", \"type\": \"integer\"}, \"parent_thread_id\": {\"$ref\": \"#/definitions/ThreadId\"}}, \"required\": [\"depth\", \"parent_thread_id\"], \"type\": \"object\"}}, \"required\": [\"thread_spawn\"], \"title\": \"ThreadSpawnSubAgentSource\", \"type\": \"object\"}, {\"additionalProperties\": false, \"properties\": {\"other\": {\"type\": \"string\"}}, \"required\": [\"other\"], \"title\": \"OtherSubAgentSource\", \"type\": \"object\"}]}"},
	{.name = "AgentPath", .kind = PD_ALIAS, .schema = "{\"type\": \"string\"}"},
	{.name = "ThreadId", .kind = PD_ALIAS, .schema = "{\"type\": \"string\"}"},
	{.name = "ThreadStatus",
		.kind = PD_UNION,
		.variants = thread_status_variants,
		.tag = "type"},
	{.name = "ThreadActiveFlag", .kind = PD_ENUM, .values = thread_active_flag_values},
	{.name = "ThreadResumeParams", .kind = PD_STRUCT, .fields = thread_resume_params_fields},
	{.name = "ThreadResumeResponse",
		.kind = PD_STRUCT,
		.fields = thread_resume_response_fields},
	{.name = "CollaborationMode", .kind = PD_STRUCT, .fields = collaboration_mode_fields},
	{.name = "ModeKind", .kind = PD_ENUM, .values = mode_kind_values},
	{.name = "Settings", .kind = PD_STRUCT, .fields = settings_fields},
	{.name = "ThreadForkParams", .kind = PD_STRUCT, .fields = thread_fork_params_fields},
	{.name = "ThreadForkResponse", .kind = PD_STRUCT, .fields = thread_fork_response_fields},
	{.name = "ThreadReadParams", .kind = PD_STRUCT, .fields = thread_read_params_fields},
	{.name = "ThreadReadResponse", .kind = PD_STRUCT, .fields = thread_read_response_fields},
	{.name = "ThreadTurnsListParams",
		.kind = PD_STRUCT,
		.fields = thread_turns_list_params_fields},
	{.name = "SortDirection", .kind = PD_ENUM, .values = sort_direction_values},
	{.name = "ThreadTurnsListResponse",
		.kind = PD_STRUCT,
		.fields = thread_turns_list_response_fields},
	{.name = "ThreadItemsListParams",
		.kind = PD_STRUCT,
		.fields = thread_items_list_params_fields},
	{.name = "ThreadItemsListCursor",
		.kind = PD_ALIAS,
		.schema =
			"{\"anyOf\": [{\"type\": \"string\"}, {\"$ref\": \"#/definitions/ThreadItemsListAnchor\"}]}"},
	{.name = "ThreadItemsListAnchor",
		.kind = PD_UNION,
		.variants = thread_items_list_anchor_variants,
		.tag = "type"},
	{.name = "ThreadItemOutputDeferral", .kind = PD_STRUCT, .schema = "{\"properties\": {}}"},
	{.name = "ThreadItemsListResponse",
		.kind = PD_STRUCT,
		.fields = thread_items_list_response_fields},
	{.name = "ThreadItemEntry", .kind = PD_STRUCT, .fields = thread_item_entry_fields},
	{.name = "ThreadListParams", .kind = PD_STRUCT, .fields = thread_list_params_fields},
	{.name = "ThreadListCwdFilter",
		.kind = PD_ALIAS,
		.schema =
			"{\"anyOf\": [{\"type\": \"string\"}, {\"items\": {\"type\": \"string\"}, \"type\": \"array\"}]}"},
	{.name = "ThreadSortKey", .kind = PD_ENUM, .values = thread_sort_key_values},
	{.name = "ThreadSourceKind", .kind = PD_ENUM, .values = thread_source_kind_values},
	{.name = "ThreadListResponse", .kind = PD_STRUCT, .fields = thread_list_response_fields},
	{.name = "ThreadArchiveParams", .kind = PD_STRUCT, .fields = thread_archive_params_fields},
	{.name = "ThreadArchiveResponse", .kind = PD_ALIAS, .schema = "{\"type\": \"object\"}"},
	{.name = "ThreadUnarchiveParams",
		.kind = PD_STRUCT,
		.fields = thread_unarchive_params_fields},
	{.name = "ThreadUnarchiveResponse",
		.kind = PD_STRUCT,
		.fields = thread_unarchive_response_fields},
	{.name = "ThreadDeleteParams", .kind = PD_STRUCT, .fields = thread_delete_params_fields},
	{.name = "ThreadDeleteResponse", .kind = PD_ALIAS, .schema = "{\"type\": \"object\"}"},
	{.name = "ThreadSetNameParams", .kind = PD_STRUCT, .fields = thread_set_name_params_fields},
	{.name = "ThreadSetNameResponse", .kind = PD_ALIAS, .schema = "{\"type\": \"object\"}"},
	{.name = "ThreadMetadataUpdateParams",
		.kind = PD_STRUCT,
		.fields = thread_metadata_update_params_fields},
	{.name = "ThreadMetadataGitInfoUpdateParams",
		.kind = PD_STRUCT,
		.fields = thread_metadata_git_info_update_params_fields},
	{.name = "ThreadMetadataUpdateResponse",
		.kind = PD_STRUCT,
		.fields = thread_metadata_update_response_fields},
	{.name = "ThreadLoadedListParams",
		.kind = PD_STRUCT,
		.fields = thread_loaded_list_params_fields},
	{.name = "ThreadLoadedListResponse",
		.kind = PD_STRUCT,
		.fields = thread_loaded_list_response_fields},
	{.name = "ThreadUnsubscribeParams",
		.kind = PD_STRUCT,
		.fields = thread_unsubscribe_params_fields},
	{.name = "ThreadUnsubscribeResponse",
		.kind = PD_STRUCT,
		.fields = thread_unsubscribe_response_fields},
	{.name = "ThreadUnsubscribeStatus",
		.kind = PD_ENUM,
		.values = thread_unsubscribe_status_values},
	{.name = "ThreadStartedNotification",
		.kind = PD_STRUCT,
		.fields = thread_started_notification_fields},
	{.name = "ThreadStatusChangedNotification",
		.kind = PD_STRUCT,
		.fields = thread_status_changed_notification_fields},
	{.name = "ThreadArchivedNotification",
		.kind = PD_STRUCT,
		.fields = thread_archived_notification_fields},
	{.name = "ThreadUnarchivedNotification",
		.kind = PD_STRUCT,
		.fields = thread_unarchived_notification_fields},
	{.name = "ThreadNameUpdatedNotification",
		.kind = PD_STRUCT,
		.fields = thread_name_updated_notification_fields},
	{.name = "ThreadClosedNotification",
		.kind = PD_STRUCT,
		.fields = thread_closed_notification_fields},
	{.name = "ThreadDeletedNotification",
		.kind = PD_STRUCT,
		.fields = thread_deleted_notification_fields},
	{NULL},
};
