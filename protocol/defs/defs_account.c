/*
 * Protocol tables: the account area beside account/read (defs_config.c): account/login/start,
 * account/login/cancel, account/logout, account/rateLimits/read and their notifications
 * (account/updated, account/login/completed, account/rateLimits/updated), shaped as upstream
 * 0.169's experimental schema.
 */
#include <stddef.h>

#include "defs.h"

/* --- account/login/start ---------------------------------------------------------------- */

static const struct pfield login_api_key[] = {
	{"apiKey", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield login_chatgpt[] = {
	{"appBrand", "LoginAppBrand?", 0, "null", NULL},
	{"codexStreamlinedLogin", "boolean", 0, NULL, NULL},
	{"useHostedLoginSuccessPage", "boolean", 0, NULL, NULL},
	{NULL},
};

static const struct pfield login_auth_tokens[] = {
	{"accessToken", "string", PF_REQ, NULL,
		"Access token (JWT) supplied by the client. This token is used for backend API "
		"requests and email extraction."},
	{"chatgptAccountId", "string", PF_REQ, NULL,
		"Workspace/account identifier supplied by the client."},
	{"chatgptPlanType", "string?", 0, NULL,
		"Optional plan type supplied by the client.\n\nWhen `null`, Codex attempts to derive "
		"the plan type from access-token claims. If unavailable, the plan defaults to "
		"`unknown`."},
	{NULL},
};

static const struct pfield login_bedrock[] = {
	{"apiKey", "string", PF_REQ, NULL, NULL},
	{"region", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield login_bedrock_keys[] = {
	{"accessKeyId", "string", PF_REQ, NULL, NULL},
	{"region", "string", PF_REQ, NULL, NULL},
	{"secretAccessKey", "string", PF_REQ, NULL, NULL},
	{"sessionToken", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pvariant login_params[] = {
	{"apiKey", login_api_key, NULL},
	{"chatgpt", login_chatgpt, NULL},
	{"chatgptDeviceCode", NULL, NULL},
	{"chatgptAuthTokens", login_auth_tokens,
		"[UNSTABLE] FOR OPENAI INTERNAL USE ONLY - DO NOT USE. The access token must contain "
		"the same scopes that Codex-managed ChatGPT auth tokens have."},
	{"amazonBedrock", login_bedrock,
		"[UNSTABLE] Managed Amazon Bedrock login is experimental."},
	{"amazonBedrockAccessKeys", login_bedrock_keys,
		"[UNSTABLE] Managed Amazon Bedrock AWS access key login is experimental."},
	{NULL},
};

static const struct penum login_app_brand[] = {{"codex"}, {"chatgpt"}, {NULL}};

static const struct pfield login_chatgpt_response[] = {
	{"authUrl", "string", PF_REQ, NULL,
		"URL the client should open in a browser to initiate the OAuth flow."},
	{"loginId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield login_device_response[] = {
	{"loginId", "string", PF_REQ, NULL, NULL},
	{"userCode", "string", PF_REQ, NULL, "One-time code the user must enter after signing in."},
	{"verificationUrl", "string", PF_REQ, NULL,
		"URL the client should open in a browser to complete device code authorization."},
	{NULL},
};

static const struct pvariant login_response[] = {
	{"apiKey", NULL, NULL},
	{"chatgpt", login_chatgpt_response, NULL},
	{"chatgptDeviceCode", login_device_response, NULL},
	{"chatgptAuthTokens", NULL, NULL},
	{"amazonBedrock", NULL, NULL},
	{NULL},
};

/* --- account/login/cancel, account/logout ----------------------------------------------- */

static const struct pfield cancel_params[] = {
	{"loginId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield cancel_response[] = {
	{"status", "CancelLoginAccountStatus", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum cancel_status[] = {{"canceled"}, {"notFound"}, {NULL}};

static const struct pfield logout_response[] = {
	{NULL},
};

/* --- notifications ------------------------------------------------------------------------ */

static const struct pfield account_updated[] = {
	{"authMode", "AuthMode?", 0, NULL, NULL},
	{"planType", "PlanType?", 0, NULL, NULL},
	{NULL},
};

static const struct penum auth_mode[] = {
	{"apikey", "OpenAI API key provided by the caller and stored by Codex."},
	{"chatgpt", "ChatGPT OAuth managed by Codex (tokens persisted and refreshed by Codex)."},
	{"chatgptAuthTokens",
		"[UNSTABLE] FOR OPENAI INTERNAL USE ONLY - DO NOT USE.\n\nChatGPT auth tokens are "
		"supplied by an external host app and are only stored in memory. Token refresh must "
		"be handled by the external host app."},
	{"headers", "Backend auth supplied as request headers."},
	{"agentIdentity", "Programmatic Codex auth backed by a registered Agent Identity."},
	{"personalAccessToken", "Programmatic Codex auth backed by a personal access token."},
	{"bedrockApiKey", "Amazon Bedrock bearer token managed by Codex."},
	{"bedrockAccessKeys", "Amazon Bedrock AWS access keys managed by Codex."},
	{NULL},
};

static const struct pfield login_completed[] = {
	{"error", "string?", 0, NULL, NULL},
	{"loginId", "string?", 0, NULL, NULL},
	{"onboardingEntrypoint", "DesktopOnboardingEntrypoint?", 0, NULL, NULL},
	{"success", "boolean", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum onboarding_entrypoint[] = {{"life_sciences"}, {NULL}};

/* --- account/chatgptAuthTokens/refresh (server request) ----------------------------------- */

static const struct pfield auth_tokens_refresh_params[] = {
	{"previousAccountId", "string?", 0, NULL,
		"Workspace/account identifier that Codex was previously using.\n\nClients that manage "
		"multiple accounts/workspaces can use this as a hint to refresh the token for the "
		"correct workspace.\n\nThis may be `null` when the prior auth state did not include a "
		"workspace identifier (`chatgpt_account_id`)."},
	{"reason", "ChatgptAuthTokensRefreshReason", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum auth_tokens_refresh_reason[] = {
	{"unauthorized", "Codex attempted a backend request and received `401 Unauthorized`."},
	{NULL},
};

static const struct pfield auth_tokens_refresh_response[] = {
	{"accessToken", "string", PF_REQ, NULL, NULL},
	{"chatgptAccountId", "string", PF_REQ, NULL, NULL},
	{"chatgptPlanType", "string?", 0, NULL, NULL},
	{NULL},
};

/* --- rate limits ---------------------------------------------------------------------------- */

static const struct pfield rate_limits_response[] = {
	{"accountId", "string?", 0, NULL,
		"Account associated with this usage snapshot, when supplied by the backend."},
	{"ordinaryUsageAllowed", "boolean?", 0, NULL,
		"Backend permission for ordinary included usage, validated against the active "
		"account. Null means unavailable; clients must not infer recovery from percentages "
		"or reset times."},
	{"rateLimits", "RateLimitSnapshot", PF_REQ, NULL,
		"Backward-compatible single-bucket view; mirrors the historical payload."},
	{"rateLimitsByLimitId", "{RateLimitSnapshot}?", 0, NULL,
		"Multi-bucket view keyed by metered `limit_id` (for example, `codex`)."},
	{"rateLimitResetCredits", "RateLimitResetCreditsSummary?", 0, NULL, NULL},
	{"rateLimitUpsell", "any", 0, NULL,
		"Optional backend-owned banner from the same usage read. Its nested keys retain the "
		"backend's snake_case contract; an absent banner leaves the client's existing UI "
		"unchanged."},
	{NULL},
};

static const struct pfield reset_credits_summary[] = {
	{"availableCount", "int64", PF_REQ, NULL, NULL},
	{"credits", "RateLimitResetCredit[]?", 0, NULL,
		"Detail rows for available reset credits, when the backend provides them."},
	{NULL},
};

static const struct pfield reset_credit[] = {
	{"description", "string?", 0, NULL, NULL},
	{"expiresAt", "int64?", 0, NULL, NULL},
	{"grantedAt", "int64", PF_REQ, NULL, NULL},
	{"id", "string", PF_REQ, NULL, NULL},
	{"resetType", "RateLimitResetType", PF_REQ, NULL, NULL},
	{"status", "RateLimitResetCreditStatus", PF_REQ, NULL, NULL},
	{"title", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct penum reset_credit_status[] = {
	{"available"}, {"redeeming"}, {"redeemed"}, {"unknown"}, {NULL}};
static const struct penum reset_type[] = {{"codexRateLimits"}, {"unknown"}, {NULL}};
static const struct penum reached_type[] = {{"rate_limit_reached"},
	{"workspace_owner_credits_depleted"}, {"workspace_member_credits_depleted"},
	{"workspace_owner_usage_limit_reached"}, {"workspace_member_usage_limit_reached"}, {NULL}};

static const struct pfield spend_control[] = {
	{"limit", "string", PF_REQ, NULL, NULL},
	{"remainingPercent", "int32", PF_REQ, NULL, NULL},
	{"resetsAt", "int64", PF_REQ, NULL, NULL},
	{"used", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield rate_limit_snapshot[] = {
	{"credits", "CreditsSnapshot?", 0, NULL, NULL},
	{"individualLimit", "SpendControlLimitSnapshot?", 0, NULL, NULL},
	{"limitId", "string?", 0, NULL, NULL},
	{"limitName", "string?", 0, NULL, NULL},
	{"normalModelSlug", "string?", 0, NULL,
		"Normal model whose display name and reasoning options describe this quota alias."},
	{"planType", "PlanType?", 0, NULL, NULL},
	{"primary", "RateLimitWindow?", 0, NULL, NULL},
	{"rateLimitReachedType", "RateLimitReachedType?", 0, NULL, NULL},
	{"secondary", "RateLimitWindow?", 0, NULL, NULL},
	{"spendControlReached", "boolean?", 0, NULL,
		"Backend-reported spend-control state. `None` is unavailable, not a sparse-update "
		"recovery."},
	{NULL},
};

static const struct pfield rate_limit_window[] = {
	{"resetsAt", "int64?", 0, NULL, NULL},
	{"usedPercent", "int32", PF_REQ, NULL, NULL},
	{"windowDurationMins", "int64?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield credits_snapshot[] = {
	{"balance", "string?", 0, NULL, NULL},
	{"hasCredits", "boolean", PF_REQ, NULL, NULL},
	{"unlimited", "boolean", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield rate_limits_updated[] = {
	{"rateLimits", "RateLimitSnapshot", PF_REQ, NULL, NULL},
	{NULL},
};

const struct pdef pdefs_account[] = {
	{.name = "LoginAccountParams", .kind = PD_UNION, .variants = login_params, .tag = "type"},
	{.name = "LoginAppBrand", .kind = PD_ENUM, .values = login_app_brand},
	{.name = "LoginAccountResponse",
		.kind = PD_UNION,
		.variants = login_response,
		.tag = "type"},
	{.name = "CancelLoginAccountParams", .kind = PD_STRUCT, .fields = cancel_params},
	{.name = "CancelLoginAccountResponse", .kind = PD_STRUCT, .fields = cancel_response},
	{.name = "CancelLoginAccountStatus", .kind = PD_ENUM, .values = cancel_status},
	{.name = "LogoutAccountResponse", .kind = PD_STRUCT, .fields = logout_response},
	{.name = "AccountUpdatedNotification", .kind = PD_STRUCT, .fields = account_updated},
	{.name = "AuthMode",
		.kind = PD_ENUM,
		.values = auth_mode,
		.doc = "Authentication mode for OpenAI-backed providers."},
	{.name = "AccountLoginCompletedNotification", .kind = PD_STRUCT, .fields = login_completed},
	{.name = "DesktopOnboardingEntrypoint", .kind = PD_ENUM, .values = onboarding_entrypoint},
	{.name = "ChatgptAuthTokensRefreshParams",
		.kind = PD_STRUCT,
		.fields = auth_tokens_refresh_params},
	{.name = "ChatgptAuthTokensRefreshReason",
		.kind = PD_ENUM,
		.values = auth_tokens_refresh_reason},
	{.name = "ChatgptAuthTokensRefreshResponse",
		.kind = PD_STRUCT,
		.fields = auth_tokens_refresh_response},
	{.name = "GetAccountRateLimitsResponse", .kind = PD_STRUCT, .fields = rate_limits_response},
	{.name = "RateLimitSnapshot", .kind = PD_STRUCT, .fields = rate_limit_snapshot},
	{.name = "RateLimitWindow", .kind = PD_STRUCT, .fields = rate_limit_window},
	{.name = "CreditsSnapshot", .kind = PD_STRUCT, .fields = credits_snapshot},
	{.name = "RateLimitResetCreditsSummary",
		.kind = PD_STRUCT,
		.fields = reset_credits_summary},
	{.name = "RateLimitResetCredit", .kind = PD_STRUCT, .fields = reset_credit},
	{.name = "RateLimitResetCreditStatus", .kind = PD_ENUM, .values = reset_credit_status},
	{.name = "RateLimitResetType", .kind = PD_ENUM, .values = reset_type},
	{.name = "RateLimitReachedType", .kind = PD_ENUM, .values = reached_type},
	{.name = "SpendControlLimitSnapshot", .kind = PD_STRUCT, .fields = spend_control},
	{.name = "AccountRateLimitsUpdatedNotification",
		.kind = PD_STRUCT,
		.fields = rate_limits_updated},
	{NULL},
};
