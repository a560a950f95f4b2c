/* Protocol tables: every message the daemon implements, and lookups over the definitions. */
#include <string.h>

#include "defs.h"
#include "protocol/xmalloc.h"

const struct pmethod pmethods[] = {
	{"initialize", PM_REQUEST, "InitializeParams", "InitializeResponse", "v1",
		"Start the session; must be the first request."},
	{"command/exec", PM_REQUEST, "CommandExecParams", "CommandExecResponse", "v2",
		"Run a command (argv) under a sandbox policy, outside any thread."},
	{"command/exec/write", PM_REQUEST, "CommandExecWriteParams", "CommandExecWriteResponse",
		"v2", NULL},
	{"command/exec/terminate", PM_REQUEST, "CommandExecTerminateParams",
		"CommandExecTerminateResponse", "v2", NULL},
	{"command/exec/resize", PM_REQUEST, "CommandExecResizeParams", "CommandExecResizeResponse",
		"v2", NULL},
	{"model/list", PM_REQUEST, "ModelListParams", "ModelListResponse", "v2",
		"Models known for the configured (or given) provider."},
	{"permissionProfile/list", PM_REQUEST, "PermissionProfileListParams",
		"PermissionProfileListResponse", "v2",
		"Built-in and config.toml permission profiles."},
	{"collaborationMode/list", PM_REQUEST, "CollaborationModeListParams",
		"CollaborationModeListResponse", "v2",
		"Experimental: the collaboration mode presets."},
	{"config/read", PM_REQUEST, "ConfigReadParams", "ConfigReadResponse", "v2",
		"The effective configuration, where each key came from, and optionally the layers."},
	{"config/value/write", PM_REQUEST, "ConfigValueWriteParams", "ConfigWriteResponse", "v2",
		"Edit one key of the user's config.toml in place."},
	{"config/batchWrite", PM_REQUEST, "ConfigBatchWriteParams", "ConfigWriteResponse", "v2",
		"Edit keys of the user's config.toml in place, all or none."},
	{"account/read", PM_REQUEST, "GetAccountParams", "GetAccountResponse", "v2",
		"Whether an API key is available and whether the provider needs OpenAI auth."},
	/* start-up surface (defs_startup.c) */
	{"modelProvider/list", PM_REQUEST, "ModelProviderListParams", "ModelProviderListResponse",
		"v2", "The configured model providers (custom ones first) and the default."},
	{"modelProvider/capabilities/read", PM_REQUEST, "ModelProviderCapabilitiesReadParams",
		"ModelProviderCapabilitiesReadResponse", "v2",
		"What the provider offers beside text (upstream answers the same for every one)."},
	{"experimentalFeature/list", PM_REQUEST, "ExperimentalFeatureListParams",
		"ExperimentalFeatureListResponse", "v2",
		"Upstream's feature flags with their stage, default and state, paged."},
	{"experimentalFeature/enablement/set", PM_REQUEST, "ExperimentalFeatureEnablementSetParams",
		"ExperimentalFeatureEnablementSetResponse", "v2",
		"Process-wide runtime enablement of the flags upstream lets clients toggle."},
	{"hooks/list", PM_REQUEST, "HooksListParams", "HooksListResponse", "v2",
		"Lifecycle hooks per cwd (none: hooks are not run here)."},
	{"app/list", PM_REQUEST, "AppsListParams", "AppsListResponse", "v2",
		"Apps (connectors): none without a ChatGPT login, as upstream."},
	{"plugin/list", PM_REQUEST, "PluginListParams", "PluginListResponse", "v2",
		"Plugin marketplaces: none without a ChatGPT login, as upstream."},
	/* thread/revert and thread/inject_items (defs_history.c) */
	{"thread/revert", PM_REQUEST, "ThreadRevertParams", "ThreadRevertResponse", "v2",
		"Cut a loaded thread's history before a turn (files are not touched)."},
	{"thread/inject_items", PM_REQUEST, "ThreadInjectItemsParams", "ThreadInjectItemsResponse",
		"v2", "Append raw Responses items to a loaded thread's model-visible history."},
	{"thread/reverted", PM_NOTIFICATION, "ThreadRevertedNotification", NULL, "v2", NULL},
	{"thread/goal/get", PM_REQUEST, "ThreadGoalGetParams", "ThreadGoalGetResponse", "v2",
		"A loaded thread's goal, or null."},
	{"thread/goal/set", PM_REQUEST, "ThreadGoalSetParams", "ThreadGoalSetResponse", "v2",
		"Set or update a loaded thread's goal (objective, status, token budget)."},
	{"thread/goal/clear", PM_REQUEST, "ThreadGoalClearParams", "ThreadGoalClearResponse", "v2",
		"Remove a loaded thread's goal."},
	{"configRequirements/read", PM_REQUEST, NULL, "ConfigRequirementsReadResponse", "v2",
		"What requirements.toml imposes: none read here, so null, as upstream without one."},
	{"account/rateLimits/read", PM_REQUEST, NULL, "GetAccountRateLimitsResponse", "v2",
		"Rate limits of a ChatGPT login, from the backend's last rate-limit headers; "
		"without that login, upstream's -32600."},
	/* accounts (defs_account.c) */
	{"account/login/start", PM_REQUEST, "LoginAccountParams", "LoginAccountResponse", "v2",
		"Sign in: an API key (stored in auth.json as upstream stores it)."},
	{"account/login/cancel", PM_REQUEST, "CancelLoginAccountParams",
		"CancelLoginAccountResponse", "v2", "Stop a pending sign-in."},
	{"account/logout", PM_REQUEST, NULL, "LogoutAccountResponse", "v2",
		"Remove the stored credentials (auth.json)."},
	{"account/updated", PM_NOTIFICATION, "AccountUpdatedNotification", NULL, "v2", NULL},
	{"account/login/completed", PM_NOTIFICATION, "AccountLoginCompletedNotification", NULL,
		"v2", NULL},
	{"account/rateLimits/updated", PM_NOTIFICATION, "AccountRateLimitsUpdatedNotification",
		NULL, "v2", NULL},
	{"thread/goal/updated", PM_NOTIFICATION, "ThreadGoalUpdatedNotification", NULL, "v2", NULL},
	{"thread/goal/cleared", PM_NOTIFICATION, "ThreadGoalClearedNotification", NULL, "v2", NULL},
	{"fs/readFile", PM_REQUEST, "FsReadFileParams", "FsReadFileResponse", "v2",
		"Read a whole file, base64-encoded."},
	{"fs/writeFile", PM_REQUEST, "FsWriteFileParams", "FsWriteFileResponse", "v2",
		"Write a whole file atomically."},
	{"fs/createDirectory", PM_REQUEST, "FsCreateDirectoryParams", "FsCreateDirectoryResponse",
		"v2", "Make a folder (with its parents by default)."},
	{"fs/getMetadata", PM_REQUEST, "FsGetMetadataParams", "FsGetMetadataResponse", "v2",
		"Kind and times of a path."},
	{"fs/readDirectory", PM_REQUEST, "FsReadDirectoryParams", "FsReadDirectoryResponse", "v2",
		"A folder's entries."},
	{"fs/remove", PM_REQUEST, "FsRemoveParams", "FsRemoveResponse", "v2",
		"Remove a file or a folder tree."},
	{"fs/copy", PM_REQUEST, "FsCopyParams", "FsCopyResponse", "v2",
		"Copy a file or a folder tree (symlinks as links)."},
	{"fs/watch", PM_REQUEST, "FsWatchParams", "FsWatchResponse", "v2",
		"Report changes of a file or of a folder's children with fs/changed."},
	{"fs/unwatch", PM_REQUEST, "FsUnwatchParams", "FsUnwatchResponse", "v2", "Stop a watch."},
	{"fuzzyFileSearch", PM_REQUEST, "FuzzyFileSearchParams", "FuzzyFileSearchResponse", NULL,
		"Fuzzy search of file and folder names under the roots."},
	{"fuzzyFileSearch/sessionStart", PM_REQUEST, "FuzzyFileSearchSessionStartParams", NULL,
		NULL, "Experimental (experimentalApi): start a search session; answers {}."},
	{"fuzzyFileSearch/sessionUpdate", PM_REQUEST, "FuzzyFileSearchSessionUpdateParams", NULL,
		NULL, "Experimental (experimentalApi): a new query for a session; answers {}."},
	{"fuzzyFileSearch/sessionStop", PM_REQUEST, "FuzzyFileSearchSessionStopParams", NULL, NULL,
		"Experimental (experimentalApi): end a session; answers {}."},
	{"thread/start", PM_REQUEST, "ThreadStartParams", "ThreadStartResponse", "v2",
		"A new thread; its rollout is on disk when the answer is sent."},
	{"thread/resume", PM_REQUEST, "ThreadResumeParams", "ThreadResumeResponse", "v2",
		"Load a thread from its rollout (zero-turn threads too) with its turns."},
	{"thread/fork", PM_REQUEST, "ThreadForkParams", "ThreadForkResponse", "v2",
		"A new thread with another's history (up to lastTurnId)."},
	{"thread/read", PM_REQUEST, "ThreadReadParams", "ThreadReadResponse", "v2",
		"A thread, loaded or not, with its turns when asked."},
	{"thread/list", PM_REQUEST, "ThreadListParams", "ThreadListResponse", "v2",
		"Saved threads, a page at a time (from the SQLite index)."},
	{"thread/turns/list", PM_REQUEST, "ThreadTurnsListParams", "ThreadTurnsListResponse", "v2",
		"A thread's turns, a page at a time."},
	{"thread/items/list", PM_REQUEST, "ThreadItemsListParams", "ThreadItemsListResponse", "v2",
		"A thread's items, a page at a time."},
	{"thread/archive", PM_REQUEST, "ThreadArchiveParams", "ThreadArchiveResponse", "v2",
		"Move a thread's rollout to archived_sessions/."},
	{"thread/unarchive", PM_REQUEST, "ThreadUnarchiveParams", "ThreadUnarchiveResponse", "v2",
		NULL},
	{"thread/delete", PM_REQUEST, "ThreadDeleteParams", "ThreadDeleteResponse", "v2",
		"Remove a thread's rollout and index row."},
	{"thread/name/set", PM_REQUEST, "ThreadSetNameParams", "ThreadSetNameResponse", "v2", NULL},
	{"thread/metadata/update", PM_REQUEST, "ThreadMetadataUpdateParams",
		"ThreadMetadataUpdateResponse", "v2", "Patch a thread's git info."},
	{"thread/loaded/list", PM_REQUEST, "ThreadLoadedListParams", "ThreadLoadedListResponse",
		"v2", NULL},
	{"thread/unsubscribe", PM_REQUEST, "ThreadUnsubscribeParams", "ThreadUnsubscribeResponse",
		"v2", "Stop this connection's notifications of a thread."},
	{"thread/started", PM_NOTIFICATION, "ThreadStartedNotification", NULL, "v2", NULL},
	{"thread/status/changed", PM_NOTIFICATION, "ThreadStatusChangedNotification", NULL, "v2",
		NULL},
	{"thread/archived", PM_NOTIFICATION, "ThreadArchivedNotification", NULL, "v2", NULL},
	{"thread/unarchived", PM_NOTIFICATION, "ThreadUnarchivedNotification", NULL, "v2", NULL},
	{"thread/name/updated", PM_NOTIFICATION, "ThreadNameUpdatedNotification", NULL, "v2", NULL},
	{"thread/closed", PM_NOTIFICATION, "ThreadClosedNotification", NULL, "v2", NULL},
	{"thread/deleted", PM_NOTIFICATION, "ThreadDeletedNotification", NULL, "v2", NULL},
	{"turn/start", PM_REQUEST, "TurnStartParams", "TurnStartResponse", "v2",
		"Start a turn of a loaded thread (while one runs, its input joins it, as 0.169)."},
	{"turn/steer", PM_REQUEST, "TurnSteerParams", "TurnSteerResponse", "v2",
		"Add input to the running turn; the model hears it with its next request."},
	{"turn/interrupt", PM_REQUEST, "TurnInterruptParams", "TurnInterruptResponse", "v2",
		"Stop the running turn: the model is cancelled, its commands killed."},
	{"thread/compact/start", PM_REQUEST, "ThreadCompactStartParams",
		"ThreadCompactStartResponse", "v2",
		"Summarize the thread's history now, as a turn of its own."},
	{"turn/started", PM_NOTIFICATION, "TurnStartedNotification", NULL, "v2", NULL},
	{"turn/completed", PM_NOTIFICATION, "TurnCompletedNotification", NULL, "v2",
		"Exactly once per turn: completed, interrupted or failed."},
	{"item/started", PM_NOTIFICATION, "ItemStartedNotification", NULL, "v2", NULL},
	{"item/completed", PM_NOTIFICATION, "ItemCompletedNotification", NULL, "v2", NULL},
	{"item/agentMessage/delta", PM_NOTIFICATION, "AgentMessageDeltaNotification", NULL, "v2",
		NULL},
	{"item/reasoning/summaryTextDelta", PM_NOTIFICATION,
		"ReasoningSummaryTextDeltaNotification", NULL, "v2", NULL},
	{"item/reasoning/summaryPartAdded", PM_NOTIFICATION,
		"ReasoningSummaryPartAddedNotification", NULL, "v2", NULL},
	{"item/reasoning/textDelta", PM_NOTIFICATION, "ReasoningTextDeltaNotification", NULL, "v2",
		NULL},
	{"item/commandExecution/outputDelta", PM_NOTIFICATION,
		"CommandExecutionOutputDeltaNotification", NULL, "v2",
		"A command's output, as text."},
	{"thread/tokenUsage/updated", PM_NOTIFICATION, "ThreadTokenUsageUpdatedNotification", NULL,
		"v2", "After each model request."},
	{"turn/diff/updated", PM_NOTIFICATION, "TurnDiffUpdatedNotification", NULL, "v2",
		"The turn's aggregated diff, after each patch."},
	{"turn/plan/updated", PM_NOTIFICATION, "TurnPlanUpdatedNotification", NULL, "v2", NULL},
	{"error", PM_NOTIFICATION, "ErrorNotification", NULL, "v2",
		"A model error: retried (willRetry) or ending the turn."},
	{"serverRequest/resolved", PM_NOTIFICATION, "ServerRequestResolvedNotification", NULL, "v2",
		NULL},
	{"item/commandExecution/requestApproval", PM_SERVER_REQUEST,
		"CommandExecutionRequestApprovalParams", "CommandExecutionRequestApprovalResponse",
		NULL, "May this command run?"},
	{"item/fileChange/requestApproval", PM_SERVER_REQUEST, "FileChangeRequestApprovalParams",
		"FileChangeRequestApprovalResponse", NULL, "May this patch be written?"},
	{"account/chatgptAuthTokens/refresh", PM_SERVER_REQUEST, "ChatgptAuthTokensRefreshParams",
		"ChatgptAuthTokensRefreshResponse", NULL, NULL},
	{"item/tool/requestUserInput", PM_SERVER_REQUEST, "ToolRequestUserInputParams",
		"ToolRequestUserInputResponse", NULL,
		"request_user_input in Plan mode: the model's questions for the user."},
	{"initialized", PM_CLIENT_NOTIFICATION, NULL, NULL, "v1", NULL},
	{"command/exec/outputDelta", PM_NOTIFICATION, "CommandExecOutputDeltaNotification", NULL,
		"v2", "Output of a streaming command/exec, base64-encoded."},
	{"fs/changed", PM_NOTIFICATION, "FsChangedNotification", NULL, "v2",
		"Changes of a watched path."},
	{"fuzzyFileSearch/sessionUpdated", PM_NOTIFICATION,
		"FuzzyFileSearchSessionUpdatedNotification", NULL, NULL,
		"The results of a session's latest query."},
	{"fuzzyFileSearch/sessionCompleted", PM_NOTIFICATION,
		"FuzzyFileSearchSessionCompletedNotification", NULL, NULL,
		"A session's latest query is done."},
	{"skills/list", PM_REQUEST, "SkillsListParams", "SkillsListResponse", "v2", NULL},
	{"skills/config/write", PM_REQUEST, "SkillsConfigWriteParams", "SkillsConfigWriteResponse",
		"v2", NULL},
	{"skills/extraRoots/set", PM_REQUEST, "SkillsExtraRootsSetParams",
		"SkillsExtraRootsSetResponse", "v2", NULL},
	{"skills/changed", PM_NOTIFICATION, "SkillsChangedNotification", NULL, "v2", NULL},
	{"review/start", PM_REQUEST, "ReviewStartParams", "ReviewStartResponse", "v2",
		"Start a code review as a turn of the thread (inline delivery)."},
	{"thread/shellCommand", PM_REQUEST, "ThreadShellCommandParams",
		"ThreadShellCommandResponse", "v2",
		"Run the user's own shell command in the thread, unsandboxed (a `!cmd`)."},
	{"configWarning", PM_NOTIFICATION, "ConfigWarningNotification", NULL, "v2",
		"A problem with the configuration (e.g. config.toml does not parse)."},
	{NULL},
};

static const struct pdef *const pdef_groups[] = {pdefs_core, pdefs_exec, pdefs_config, pdefs_fs,
	pdefs_thread, pdefs_item, pdefs_turn, pdefs_profiles, pdefs_skills, pdefs_config_write,
	pdefs_startup, pdefs_requirements, pdefs_review, pdefs_history, pdefs_shellcmd,
	pdefs_user_input, pdefs_account};

/* Find a definition by name; NULL when unknown. */
const struct pdef *
defs_find(const char *name)
{
	const struct pdef *d;

	for (size_t i = 0; i < nitems(pdef_groups); i++)
		for (d = pdef_groups[i]; d->name != NULL; d++)
			if (strcmp(d->name, name) == 0)
				return d;
	return NULL;
}

/* Call fn for every definition, in declaration order. */
void
defs_foreach(void (*fn)(const struct pdef *, void *), void *arg)
{
	const struct pdef *d;

	for (size_t i = 0; i < nitems(pdef_groups); i++)
		for (d = pdef_groups[i]; d->name != NULL; d++)
			fn(d, arg);
}

/* Find a method by name and kind; NULL when unknown. */
const struct pmethod *
defs_method_find(const char *method, enum pmsg_kind kind)
{
	const struct pmethod *m;

	for (m = pmethods; m->method != NULL; m++)
		if (m->kind == kind && strcmp(m->method, method) == 0)
			return m;
	return NULL;
}
