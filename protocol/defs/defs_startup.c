/*
 * Protocol tables: what real clients ask at start-up besides threads and config reads
 * (modelProvider/list, capabilities and config/write, experimentalFeature/list and enablement/set,
 * hooks/list, app/list, plugin/list, thread/goal/get, set and clear). Names and shapes are upstream
 * 0.169's (tests/unit/protocol/test_conformance.c checks them). Lists we only ever answer empty
 * (apps, plugin marketplaces, hooks) keep their items undescribed: the conformance test lists
 * those three responses as deliberate differences.
 */
#include <stddef.h>

#include "defs.h"

#define CURSOR_DOC "Opaque pagination cursor returned by a previous call."
#define NEXT_CURSOR_DOC                                                                            \
	"Opaque cursor to pass to the next call to continue after the last item. If None, there "  \
	"are no more items to return."
#define LIMIT_DOC "Optional page size; defaults to a reasonable server-side value."

/* --- modelProvider/list, modelProvider/capabilities/read --------------------------------- */

static const struct pfield empty_params[] = {
	{NULL},
};

static const struct pfield model_provider_list_response[] = {
	{"canChangeDefault", "boolean", PF_REQ, NULL, NULL},
	{"data", "ModelProviderSummary[]", PF_REQ, NULL, NULL},
	{"defaultProviderId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield model_provider_summary[] = {
	{"baseUrl", "string?", 0, NULL,
		"Null when the endpoint is absent or cannot be safely displayed."},
	{"canEdit", "boolean", PF_REQ, NULL,
		"Whether a supported configuration field can be edited in the active user layer."},
	{"id", "string", PF_REQ, NULL, NULL},
	{"name", "string", PF_REQ, NULL, NULL},
	{"settings", "ProviderSettings", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield provider_custom_gateway[] = {
	{"auth", "GatewayAuth", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield provider_bedrock[] = {
	{"profile", "string?", 0, NULL, NULL},
	{"region", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield provider_gcp[] = {
	{"credentialFile", "string?", 0, NULL,
		"Path on the app-server host, without credential-file contents."},
	{"location", "string?", 0, NULL, NULL},
	{"projectId", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pvariant provider_settings[] = {
	{"openai", NULL, NULL},
	{"customGateway", provider_custom_gateway, NULL},
	{"bedrock", provider_bedrock, NULL},
	{"gcp", provider_gcp, NULL},
	{NULL},
};

static const struct pfield gateway_env[] = {
	{"envKey", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield gateway_external[] = {
	{"envKey", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pvariant gateway_auth[] = {
	{"none", NULL, NULL},
	{"environmentVariable", gateway_env, NULL},
	{"externallyConfigured", gateway_external,
		"Authentication is configured outside the gateway form. Preserve it on edits."},
	{NULL},
};

static const struct pfield model_provider_capabilities_response[] = {
	{"imageGeneration", "boolean", PF_REQ, NULL, NULL},
	{"webSearch", "boolean", PF_REQ, NULL, NULL},
	{NULL},
};

/* --- modelProvider/config/write ---------------------------------------------------------- */

static const struct pfield provider_write_params[] = {
	{"settings", "ProviderSettingsPatch", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield provider_write_response[] = {
	{"provider", "ModelProviderSummary", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield patch_custom_gateway[] = {
	{"baseUrl", "string?", 0, NULL, NULL},
	{"envKey", "string?", 0, NULL, NULL},
	{"name", "string", 0, NULL, NULL},
	{"providerId", "string?", 0, NULL,
		"Omit or pass null to allocate a new custom provider ID."},
	{NULL},
};

static const struct pfield patch_bedrock[] = {
	{"profile", "string?", 0, NULL, NULL},
	{"providerId", "BedrockProviderId", PF_REQ, NULL, NULL},
	{"region", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield patch_gcp[] = {
	{"credentialFile", "string?", 0, NULL, NULL},
	{"location", "string?", 0, NULL, NULL},
	{"projectId", "string?", 0, NULL, NULL},
	{"providerId", "GcpProviderId", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pvariant provider_settings_patch[] = {
	{"customGateway", patch_custom_gateway, NULL, 1},
	{"bedrock", patch_bedrock, "AWS configuration fields for built-in Bedrock providers.", 1},
	{"gcp", patch_gcp,
		"GCP configuration fields. Credential-file paths refer to the app-server host.", 1},
	{NULL},
};

static const struct penum bedrock_provider_id[] = {
	{"amazon-bedrock"}, {"amazon-bedrock-runtime"}, {NULL}};

static const struct penum gcp_provider_id[] = {{"gcp"}, {NULL}};

/* --- experimentalFeature/list, experimentalFeature/enablement/set ------------------------- */

static const struct pfield experimental_feature_list_params[] = {
	{"cursor", "string?", 0, NULL, CURSOR_DOC},
	{"limit", "uint32?", 0, NULL, LIMIT_DOC},
	{"threadId", "string?", 0, NULL,
		"Optional loaded thread id. Pass this when showing feature state for an existing "
		"thread so enablement is computed from that thread's refreshed config, including "
		"project-local config for the thread's cwd."},
	{NULL},
};

static const struct pfield experimental_feature_list_response[] = {
	{"data", "ExperimentalFeature[]", PF_REQ, NULL, NULL},
	{"nextCursor", "string?", 0, NULL, NEXT_CURSOR_DOC},
	{NULL},
};

static const struct pfield experimental_feature[] = {
	{"announcement", "string?", 0, NULL,
		"Announcement copy shown to users when the feature is introduced. Null when this "
		"feature is not in beta."},
	{"defaultEnabled", "boolean", PF_REQ, NULL, "Whether this feature is enabled by default."},
	{"description", "string?", 0, NULL,
		"Short summary describing what the feature does. Null when this feature is not in "
		"beta."},
	{"displayName", "string?", 0, NULL,
		"User-facing display name shown in the experimental features UI. Null when this "
		"feature is not in beta."},
	{"enabled", "boolean", PF_REQ, NULL,
		"Whether this feature is currently enabled in the loaded config."},
	{"name", "string", PF_REQ, NULL, "Stable key used in config.toml and CLI flag toggles."},
	{"stage", "ExperimentalFeatureStage", PF_REQ, NULL,
		"Lifecycle stage of this feature flag."},
	{NULL},
};

static const struct penum experimental_feature_stage[] = {
	{"beta", "Feature is available for user testing and feedback."},
	{"underDevelopment", "Feature is still being built and not ready for broad use."},
	{"stable", "Feature is production-ready."},
	{"deprecated", "Feature is deprecated and should be avoided."},
	{"removed", "Feature flag is retained only for backwards compatibility."},
	{NULL},
};

static const struct pfield enablement_set_params[] = {
	{"enablement", "{boolean}", PF_REQ, NULL,
		"Process-wide runtime feature enablement keyed by canonical feature name.\n\nOnly "
		"named features are updated. Omitted features are left unchanged. Send an empty "
		"map for a no-op."},
	{NULL},
};

static const struct pfield enablement_set_response[] = {
	{"enablement", "{boolean}", PF_REQ, NULL,
		"Feature enablement entries updated by this request."},
	{NULL},
};

/* --- hooks/list, app/list, plugin/list ---------------------------------------------------- */

static const struct pfield hooks_list_params[] = {
	{"cwds", "string[]", 0, NULL,
		"Working directories to inspect when no thread is specified. An empty list uses "
		"the session cwd."},
	{"threadId", "string?", 0, NULL,
		"List a loaded thread's hooks, including its selected environments. Omit `cwds` in "
		"this mode."},
	{NULL},
};

static const struct pfield hooks_list_response[] = {
	{"data", "HooksListEntry[]", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield hooks_list_entry[] = {
	{"cwd", "string", PF_REQ, NULL, NULL},
	{"errors", "HookErrorInfo[]", PF_REQ, NULL, NULL},
	{"hooks", "any[]", PF_REQ, NULL, "HookMetadata[] as upstream lists them (server/hooks/)."},
	{"warnings", "string[]", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield hook_error_info[] = {
	{"message", "string", PF_REQ, NULL, NULL},
	{"path", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield apps_list_params[] = {
	{"cursor", "string?", 0, NULL, CURSOR_DOC},
	{"forceRefetch", "boolean", 0, NULL,
		"When true, bypass app caches and fetch the latest data from sources."},
	{"limit", "uint32?", 0, NULL, LIMIT_DOC},
	{"threadId", "string?", 0, NULL,
		"Optional thread id used to evaluate app feature gating from that thread's config."},
	{NULL},
};

static const struct pfield apps_list_response[] = {
	{"data", "any[]", PF_REQ, NULL, "Always empty here: apps need a ChatGPT login."},
	{"nextCursor", "string?", 0, NULL, NEXT_CURSOR_DOC},
	{NULL},
};

static const struct pfield plugin_list_params[] = {
	{"cwds", "AbsolutePathBuf[]?", 0, NULL,
		"Optional working directories used to discover repo marketplaces. When omitted, "
		"only home-scoped marketplaces and the official curated marketplace are "
		"considered."},
	{"forceRefetch", "boolean", 0, NULL,
		"Whether the client requests a fresh remote plugin catalog fetch."},
	{"marketplaceKinds", "PluginListMarketplaceKind[]?", 0, NULL,
		"Optional marketplace kind filter. When omitted, only local marketplaces are "
		"queried, plus the default remote catalog when enabled by feature flag."},
	{NULL},
};

static const struct penum plugin_list_marketplace_kind[] = {{"local"}, {"vertical"},
	{"workspace-directory"}, {"shared-with-me"}, {"created-by-me-remote"}, {NULL}};

static const struct pfield plugin_list_response[] = {
	{"featuredPluginIds", "string[]", 0, "[]", NULL},
	{"marketplaceLoadErrors", "MarketplaceLoadErrorInfo[]", 0, "[]", NULL},
	{"marketplaces", "any[]", PF_REQ, NULL, "Always empty here: no marketplace is read."},
	{NULL},
};

static const struct pfield marketplace_load_error_info[] = {
	{"marketplacePath", "AbsolutePathBuf", PF_REQ, NULL, NULL},
	{"message", "string", PF_REQ, NULL, NULL},
	{NULL},
};

/* --- thread/goal/get, set, clear ---------------------------------------------------------- */

static const struct pfield thread_goal_get_params[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_goal_get_response[] = {
	{"goal", "ThreadGoal?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield thread_goal_set_params[] = {
	{"objective", "string?", 0, NULL, NULL},
	{"origin", "ThreadGoalMutationOrigin?", 0, NULL,
		"Missing provenance does not supply user authorization."},
	{"status", "ThreadGoalStatus?", 0, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"tokenBudget", "int64?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield thread_goal_set_response[] = {
	{"goal", "ThreadGoal", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_goal_clear_params[] = {
	{"origin", "ThreadGoalMutationOrigin?", 0, NULL,
		"Missing provenance does not supply user authorization."},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_goal_clear_response[] = {
	{"cleared", "boolean", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_goal[] = {
	{"createdAt", "int64", PF_REQ, NULL, NULL},
	{"objective", "string", PF_REQ, NULL, NULL},
	{"status", "ThreadGoalStatus", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"timeUsedSeconds", "int64", PF_REQ, NULL, NULL},
	{"tokenBudget", "int64?", 0, NULL, NULL},
	{"tokensUsed", "int64", PF_REQ, NULL, NULL},
	{"updatedAt", "int64", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum thread_goal_status[] = {{"active"}, {"paused"}, {"blocked"},
	{"usageLimited"}, {"budgetLimited"}, {"complete"}, {NULL}};

static const struct penum thread_goal_mutation_origin[] = {{"user"}, {"automatic"}, {NULL}};

static const struct pfield thread_goal_updated[] = {
	{"goal", "ThreadGoal", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield thread_goal_cleared[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

const struct pdef pdefs_startup[] = {
	{.name = "ModelProviderListParams", .kind = PD_STRUCT, .fields = empty_params},
	{.name = "ModelProviderListResponse",
		.kind = PD_STRUCT,
		.fields = model_provider_list_response},
	{.name = "ModelProviderSummary", .kind = PD_STRUCT, .fields = model_provider_summary},
	{.name = "ProviderSettings",
		.kind = PD_UNION,
		.variants = provider_settings,
		.tag = "type"},
	{.name = "GatewayAuth", .kind = PD_UNION, .variants = gateway_auth, .tag = "mode"},
	{.name = "ModelProviderConfigWriteParams",
		.kind = PD_STRUCT,
		.fields = provider_write_params,
		.schema = "{\"additionalProperties\": false}"},
	{.name = "ModelProviderConfigWriteResponse",
		.kind = PD_STRUCT,
		.fields = provider_write_response},
	{.name = "ProviderSettingsPatch",
		.kind = PD_UNION,
		.doc = "Omitted patch fields preserve their values. Explicit null clears a nullable "
		       "field.",
		.variants = provider_settings_patch,
		.tag = "type"},
	{.name = "BedrockProviderId", .kind = PD_ENUM, .values = bedrock_provider_id},
	{.name = "GcpProviderId", .kind = PD_ENUM, .values = gcp_provider_id},
	{.name = "ModelProviderCapabilitiesReadParams", .kind = PD_STRUCT, .fields = empty_params},
	{.name = "ModelProviderCapabilitiesReadResponse",
		.kind = PD_STRUCT,
		.fields = model_provider_capabilities_response},
	{.name = "ExperimentalFeatureListParams",
		.kind = PD_STRUCT,
		.fields = experimental_feature_list_params},
	{.name = "ExperimentalFeatureListResponse",
		.kind = PD_STRUCT,
		.fields = experimental_feature_list_response},
	{.name = "ExperimentalFeature", .kind = PD_STRUCT, .fields = experimental_feature},
	{.name = "ExperimentalFeatureStage", .kind = PD_ENUM, .values = experimental_feature_stage},
	{.name = "ExperimentalFeatureEnablementSetParams",
		.kind = PD_STRUCT,
		.fields = enablement_set_params},
	{.name = "ExperimentalFeatureEnablementSetResponse",
		.kind = PD_STRUCT,
		.fields = enablement_set_response},
	{.name = "HooksListParams", .kind = PD_STRUCT, .fields = hooks_list_params},
	{.name = "HooksListResponse", .kind = PD_STRUCT, .fields = hooks_list_response},
	{.name = "HooksListEntry", .kind = PD_STRUCT, .fields = hooks_list_entry},
	{.name = "HookErrorInfo", .kind = PD_STRUCT, .fields = hook_error_info},
	{.name = "AppsListParams",
		.kind = PD_STRUCT,
		.fields = apps_list_params,
		.doc = "EXPERIMENTAL - list available apps/connectors."},
	{.name = "AppsListResponse",
		.kind = PD_STRUCT,
		.fields = apps_list_response,
		.doc = "EXPERIMENTAL - app list response."},
	{.name = "PluginListParams", .kind = PD_STRUCT, .fields = plugin_list_params},
	{.name = "PluginListMarketplaceKind",
		.kind = PD_ENUM,
		.values = plugin_list_marketplace_kind},
	{.name = "PluginListResponse", .kind = PD_STRUCT, .fields = plugin_list_response},
	{.name = "MarketplaceLoadErrorInfo",
		.kind = PD_STRUCT,
		.fields = marketplace_load_error_info},
	{.name = "ThreadGoalGetParams", .kind = PD_STRUCT, .fields = thread_goal_get_params},
	{.name = "ThreadGoalGetResponse", .kind = PD_STRUCT, .fields = thread_goal_get_response},
	{.name = "ThreadGoalSetParams", .kind = PD_STRUCT, .fields = thread_goal_set_params},
	{.name = "ThreadGoalSetResponse", .kind = PD_STRUCT, .fields = thread_goal_set_response},
	{.name = "ThreadGoalClearParams", .kind = PD_STRUCT, .fields = thread_goal_clear_params},
	{.name = "ThreadGoalClearResponse",
		.kind = PD_STRUCT,
		.fields = thread_goal_clear_response},
	{.name = "ThreadGoal", .kind = PD_STRUCT, .fields = thread_goal},
	{.name = "ThreadGoalStatus", .kind = PD_ENUM, .values = thread_goal_status},
	{.name = "ThreadGoalMutationOrigin",
		.kind = PD_ENUM,
		.values = thread_goal_mutation_origin,
		.doc = "Distinguishes explicit user actions from automatic goal lifecycle mutations."},
	{.name = "ThreadGoalUpdatedNotification", .kind = PD_STRUCT, .fields = thread_goal_updated},
	{.name = "ThreadGoalClearedNotification", .kind = PD_STRUCT, .fields = thread_goal_cleared},
	{NULL},
};
