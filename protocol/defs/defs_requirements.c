/*
 * Protocol tables: configRequirements/read, a stable method. The requirements are what an
 * administrator's requirements.toml (or MDM) imposes; we read none, so the answer's
 * `requirements` is always null, as upstream's is without such a file, but the whole type is
 * described so that the schema, the validator and the clients' types are upstream's
 * (tests/unit/protocol/test_conformance.c compares every definition). Upstream's
 * experimental schema adds members (application, hooks, network, allowedApprovalsReviewers)
 * that only a requirements file could fill: they are left out until one is read.
 */
#include <stddef.h>

#include "defs.h"

static const struct pfield config_requirements_read_response[] = {
	{"requirements", "ConfigRequirements?", 0, NULL,
		"Null if no requirements are configured (e.g. no requirements.toml/MDM entries)."},
	{"supportsIndependentSpeedModes", "boolean?", 0, "null",
		"Whether Fast and Ultra Fast requirements are enforced independently. Older servers "
		"omit this field and use Fast mode as a shared speed gate."},
	{NULL},
};

static const struct pfield config_requirements[] = {
	{"additionalDeveloperInstructions", "string?", 0, NULL, NULL},
	{"allowAppshots", "boolean?", 0, NULL, NULL},
	{"allowBrowserAndComputerUse", "boolean?", 0, NULL, NULL},
	{"allowLoginShell", "boolean?", 0, NULL, NULL},
	{"allowManagedHooksOnly", "boolean?", 0, NULL, NULL},
	{"allowRemoteControl", "boolean?", 0, NULL, NULL},
	{"allowedApprovalPolicies", "AskForApproval[]?", 0, NULL, NULL},
	{"allowedLoginMethods", "ForcedLoginMethod[]?", 0, NULL,
		"Effective login methods after managed, forced-login, and workspace restrictions. An "
		"empty list permits no login method. Older servers may omit this field."},
	{"allowedPermissionProfiles", "{boolean}?", 0, NULL, NULL},
	{"allowedSandboxModes", "SandboxMode[]?", 0, NULL, NULL},
	{"allowedWebSearchModes", "WebSearchMode[]?", 0, NULL, NULL},
	{"allowedWindowsSandboxImplementations", "WindowsSandboxImplementation[]?", 0, NULL, NULL},
	{"autoReview", "AutoReviewRequirements?", 0, NULL, NULL},
	{"browserUse", "BrowserUseRequirements?", 0, NULL, NULL},
	{"chatgptBaseUrl", "string?", 0, NULL, NULL},
	{"checkForUpdateOnStartup", "boolean?", 0, NULL, NULL},
	{"cliAuthCredentialsStore", "CliAuthCredentialsStoreMode?", 0, NULL, NULL},
	{"computerUse", "ComputerUseRequirements?", 0, NULL, NULL},
	{"defaultPermissions", "string?", 0, NULL, NULL},
	{"enforceResidency", "ResidencyRequirement?", 0, NULL, NULL},
	{"featureRequirements", "{boolean}?", 0, NULL, NULL},
	{"feedback", "FeedbackRequirements?", 0, NULL, NULL},
	{"inAppBrowser", "InAppBrowserRequirements?", 0, NULL, NULL},
	{"logDir", "string?", 0, NULL, NULL},
	{"modelCatalogJson", "string?", 0, NULL, NULL},
	{"modelProvider", "string?", 0, NULL,
		"Exact provider selection required by managed policy."},
	{"modelProviders", "{any}?", 0, NULL,
		"Complete required provider definitions, using config.toml field names."},
	{"models", "ModelsRequirements?", 0, NULL, NULL},
	{"otel", "OtelRequirements?", 0, NULL, NULL},
	{"sqliteHome", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield auto_review_requirements[] = {
	{"ignoreRules", "string[]?", 0, NULL, NULL},
	{"requiredOnModels", "string[]?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield browser_use_requirements[] = {
	{"allowGlobalPersistentApproval", "boolean?", 0, NULL, NULL},
	{"allowHistoryAccess", "boolean?", 0, NULL, NULL},
	{"allowWebmcp", "boolean?", 0, NULL, NULL},
	{"defaultOriginPolicy", "BrowserUseOriginPolicy?", 0, NULL, NULL},
	{"disableAutoReview", "boolean?", 0, NULL, NULL},
	{"extension", "BrowserUseExtensionRequirements?", 0, NULL, NULL},
	{"origins", "{BrowserUseOriginPolicy}?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield browser_use_extension_requirements[] = {
	{"requestHeaders", "RequestHeader[]?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield request_header[] = {
	{"name", "string", PF_REQ, NULL, NULL},
	{"value", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield browser_use_origin_policy[] = {
	{"access", "AllowDenyRequirement?", 0, NULL, NULL},
	{"accessApprovalLifetime", "BrowserUseAccessApprovalLifetime?", 0, NULL, NULL},
	{"autoReview", "AllowDenyRequirement?", 0, NULL, NULL},
	{"downloads", "AllowDenyRequirement?", 0, NULL, NULL},
	{"fullCdpAccess", "AllowDenyRequirement?", 0, NULL, NULL},
	{"persistentApproval", "boolean?", 0, NULL, NULL},
	{"uploads", "AllowDenyRequirement?", 0, NULL, NULL},
	{NULL},
};

static const struct penum browser_use_access_approval_lifetime[] = {{"turn"}, {"thread"}, {NULL}};

static const struct penum cli_auth_credentials_store_mode[] = {
	{"file"}, {"keyring"}, {"auto"}, {"ephemeral"}, {NULL}};

static const struct pfield computer_use_requirements[] = {
	{"allowLockedComputerUse", "boolean?", 0, NULL, NULL},
	{"allowPersistentApproval", "boolean?", 0, NULL, NULL},
	{"defaultAppAccess", "AllowDenyRequirement?", 0, NULL, NULL},
	{"macos", "ComputerUseMacosRequirements?", 0, NULL, NULL},
	{"windows", "ComputerUseWindowsRequirements?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield computer_use_macos_requirements[] = {
	{"bundleIds", "{AllowDenyRequirement}?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield computer_use_windows_requirements[] = {
	{"aumids", "{AllowDenyRequirement}?", 0, NULL, NULL},
	{"exes", "ComputerUseWindowsExeRequirement[]?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield computer_use_windows_exe_requirement[] = {
	{"access", "AllowDenyRequirement", PF_REQ, NULL, NULL},
	{"binaryName", "string?", 0, NULL, NULL},
	{"productName", "string", PF_REQ, NULL, NULL},
	{"publisherName", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield feedback_requirements[] = {
	{"enabled", "boolean?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield in_app_browser_requirements[] = {
	{"allowExternalBrowserSettingsImport", "boolean?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield models_requirements[] = {
	{"newThread", "NewThreadModelDefaults?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield new_thread_model_defaults[] = {
	{"model", "string?", 0, NULL, NULL},
	{"modelReasoningEffort", "ReasoningEffort?", 0, NULL, NULL},
	{"serviceTier", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield otel_requirements[] = {
	{"environment", "string?", 0, NULL, NULL},
	{"exporter", "OtelExporter?", 0, NULL, NULL},
	{"log_agent_responses", "boolean?", 0, NULL, NULL},
	{"log_guardian_assessments", "boolean?", 0, NULL, NULL},
	{"log_sse_deltas", "boolean?", 0, NULL, NULL},
	{"log_user_prompt", "boolean?", 0, NULL, NULL},
	{"metrics_exporter", "OtelExporter?", 0, NULL, NULL},
	{"span_attributes", "{string}?", 0, NULL, NULL},
	{"tool_result", "OtelToolResultLogConfig?", 0, NULL, NULL},
	{"trace_exporter", "OtelExporter?", 0, NULL, NULL},
	{"tracestate", "{{string}}?", 0, NULL, NULL},
	{NULL},
};

/* A mixed oneOf (a word, or one exporter table) the tables cannot express. */
#define OTEL_EXPORTER_SCHEMA                                                                       \
	"{\"oneOf\": [{\"enum\": [\"none\", \"statsig\"], \"type\": \"string\"}, {\"additiona"     \
	"lProperties\": false, \"properties\": {\"otlp-http\": {\"properties\": {\"endpoint\""     \
	": {\"type\": \"string\"}, \"headers\": {\"additionalProperties\": {\"type\": \"strin"     \
	"g\"}, \"description\": \"Header names are retained; values are redacted by the serve"     \
	"r.\", \"type\": \"object\"}, \"protocol\": {\"$ref\": \"#/definitions/OtelHttpProtoc"     \
	"ol\"}, \"tls\": {\"anyOf\": [{\"$ref\": \"#/definitions/OtelTlsConfig\"}, {\"type\":"     \
	" \"null\"}]}}, \"required\": [\"endpoint\", \"headers\", \"protocol\"], \"type\": \""     \
	"object\"}}, \"required\": [\"otlp-http\"], \"title\": \"OtlpHttpOtelExporter\", \"ty"     \
	"pe\": \"object\"}, {\"additionalProperties\": false, \"properties\": {\"otlp-grpc\":"     \
	" {\"properties\": {\"endpoint\": {\"type\": \"string\"}, \"headers\": {\"additionalP"     \
	"roperties\": {\"type\": \"string\"}, \"description\": \"Header names are retained; v"     \
	"alues are redacted by the server.\", \"type\": \"object\"}, \"tls\": {\"anyOf\": [{"      \
	"\"$ref\": \"#/definitions/OtelTlsConfig\"}, {\"type\": \"null\"}]}}, \"required\": ["     \
	"\"endpoint\", \"headers\"], \"type\": \"object\"}}, \"required\": [\"otlp-grpc\"], "      \
	"\"title\": \"OtlpGrpcOtelExporter\", \"type\": \"object\"}]}"

static const struct penum otel_http_protocol[] = {{"binary"}, {"json"}, {NULL}};

static const struct pfield otel_tls_config[] = {
	{"ca-certificate", "string?", 0, NULL, NULL},
	{"client-certificate", "string?", 0, NULL, NULL},
	{"client-private-key", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield otel_tool_result_log_config[] = {
	{"max_bytes", "uint", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum residency_requirement[] = {{"us"}, {NULL}};

static const struct penum windows_sandbox_implementation[] = {
	{"elevated"}, {"unelevated"}, {"mxc"}, {NULL}};

const struct pdef pdefs_requirements[] = {
	{.name = "ConfigRequirementsReadResponse",
		.kind = PD_STRUCT,
		.fields = config_requirements_read_response},
	{.name = "ConfigRequirements", .kind = PD_STRUCT, .fields = config_requirements},
	{.name = "AutoReviewRequirements", .kind = PD_STRUCT, .fields = auto_review_requirements},
	{.name = "BrowserUseRequirements", .kind = PD_STRUCT, .fields = browser_use_requirements},
	{.name = "BrowserUseExtensionRequirements",
		.kind = PD_STRUCT,
		.fields = browser_use_extension_requirements},
	{.name = "RequestHeader", .kind = PD_STRUCT, .fields = request_header},
	{.name = "BrowserUseOriginPolicy", .kind = PD_STRUCT, .fields = browser_use_origin_policy},
	{.name = "BrowserUseAccessApprovalLifetime",
		.kind = PD_ENUM,
		.values = browser_use_access_approval_lifetime},
	{.name = "CliAuthCredentialsStoreMode",
		.kind = PD_ENUM,
		.values = cli_auth_credentials_store_mode},
	{.name = "ComputerUseRequirements", .kind = PD_STRUCT, .fields = computer_use_requirements},
	{.name = "ComputerUseMacosRequirements",
		.kind = PD_STRUCT,
		.fields = computer_use_macos_requirements},
	{.name = "ComputerUseWindowsRequirements",
		.kind = PD_STRUCT,
		.fields = computer_use_windows_requirements},
	{.name = "ComputerUseWindowsExeRequirement",
		.kind = PD_STRUCT,
		.fields = computer_use_windows_exe_requirement},
	{.name = "FeedbackRequirements", .kind = PD_STRUCT, .fields = feedback_requirements},
	{.name = "InAppBrowserRequirements",
		.kind = PD_STRUCT,
		.fields = in_app_browser_requirements},
	{.name = "ModelsRequirements", .kind = PD_STRUCT, .fields = models_requirements},
	{.name = "NewThreadModelDefaults", .kind = PD_STRUCT, .fields = new_thread_model_defaults},
	{.name = "OtelRequirements", .kind = PD_STRUCT, .fields = otel_requirements},
	{.name = "OtelExporter", .kind = PD_ALIAS, .schema = OTEL_EXPORTER_SCHEMA},
	{.name = "OtelHttpProtocol", .kind = PD_ENUM, .values = otel_http_protocol},
	{.name = "OtelTlsConfig", .kind = PD_STRUCT, .fields = otel_tls_config},
	{.name = "OtelToolResultLogConfig",
		.kind = PD_STRUCT,
		.fields = otel_tool_result_log_config},
	{.name = "ResidencyRequirement", .kind = PD_ENUM, .values = residency_requirement},
	{.name = "WindowsSandboxImplementation",
		.kind = PD_ENUM,
		.values = windows_sandbox_implementation},
	{NULL},
};
