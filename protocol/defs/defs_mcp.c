/*
 * Protocol tables: the MCP area (docs/mcp.md): mcpServerStatus/list, mcpServer/tool/call,
 * mcpServer/resource/read, config/mcpServer/reload, and the notifications
 * mcpServer/startupStatus/updated and item/mcpToolCall/progress, shaped as upstream 0.169's
 * experimental schema. Tool, Resource and ResourceTemplate are the MCP specification's, as
 * upstream relays them.
 */
#include <stddef.h>

#include "defs.h"

/* --- mcpServerStatus/list -------------------------------------------------------------- */

static const struct pfield status_list_params[] = {
	{"cursor", "string?", 0, NULL, "Opaque pagination cursor returned by a previous call."},
	{"detail", "McpServerStatusDetail?", 0, NULL,
		"Controls how much MCP inventory data to fetch for each server. Defaults to `Full` "
		"when omitted."},
	{"limit", "uint32?", 0, NULL, "Optional page size; defaults to a server-defined value."},
	{"serverName", "string?", 0, NULL,
		"Limit discovery to one server. With a thread ID, reuse that thread's MCP "
		"connection."},
	{"threadId", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct penum status_detail[] = {{"full"}, {"toolsAndAuthOnly"}, {NULL}};

static const struct pfield status_list_response[] = {
	{"data", "McpServerStatus[]", PF_REQ, NULL, NULL},
	{"nextCursor", "string?", 0, NULL,
		"Opaque cursor to pass to the next call to continue after the last item. If None, "
		"there are no more items to return."},
	{NULL},
};

static const struct penum auth_status[] = {
	{"unknown"}, {"unsupported"}, {"notLoggedIn"}, {"bearerToken"}, {"oAuth"}, {NULL}};

static const struct penum connection_status[] = {{"notStarted"}, {"starting"}, {"connected"},
	{"authenticationRequired"}, {"failed"}, {"cancelled"}, {"disabled"}, {NULL}};

static const struct pfield server_info[] = {
	{"description", "string?", 0, NULL, NULL},
	{"icons", "any[]?", 0, NULL, NULL},
	{"name", "string", PF_REQ, NULL, NULL},
	{"title", "string?", 0, NULL, NULL},
	{"version", "string", PF_REQ, NULL, NULL},
	{"websiteUrl", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield server_status[] = {
	{"authStatus", "McpAuthStatus", PF_REQ, NULL, NULL},
	{"httpOrigin", "string?", 0, NULL,
		"HTTP origin of the effective configured endpoint, including plugin servers. "
		"Excludes credentials, path, query, and fragment; null for non-HTTP transports."},
	{"name", "string", PF_REQ, NULL, NULL},
	{"pluginId", "string?", 0, NULL, NULL},
	{"resourceTemplates", "ResourceTemplate[]", PF_REQ, NULL, NULL},
	{"resources", "Resource[]", PF_REQ, NULL, NULL},
	{"runtimeStatus", "McpServerConnectionStatus?", 0, NULL,
		"Current thread-runtime connection state; null when unavailable or the "
		"configuration changed."},
	{"serverCapabilities", "any", 0, NULL,
		"Capabilities advertised by the initialized MCP server; null when unavailable."},
	{"serverInfo", "McpServerInfo?", 0, NULL, NULL},
	{"toolListMeta", "any", 0, NULL,
		"Opaque `_meta` from the first page of the corresponding MCP tool catalog. Null "
		"when unavailable."},
	{"tools", "{Tool}", PF_REQ, NULL, NULL},
	{"toolsError", "string?", 0, NULL,
		"Tool discovery failed and no catalog was returned. Null when a catalog is "
		"returned, including cached or empty catalogs."},
	{NULL},
};

static const struct pfield tool[] = {
	{"_meta", "any", 0, NULL, NULL},
	{"annotations", "any", 0, NULL, NULL},
	{"description", "string?", 0, NULL, NULL},
	{"icons", "any[]?", 0, NULL, NULL},
	{"inputSchema", "any", PF_REQ, NULL, NULL},
	{"name", "string", PF_REQ, NULL, NULL},
	{"outputSchema", "any", 0, NULL, NULL},
	{"title", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield resource[] = {
	{"_meta", "any", 0, NULL, NULL},
	{"annotations", "any", 0, NULL, NULL},
	{"description", "string?", 0, NULL, NULL},
	{"icons", "any[]?", 0, NULL, NULL},
	{"mimeType", "string?", 0, NULL, NULL},
	{"name", "string", PF_REQ, NULL, NULL},
	{"size", "int64?", 0, NULL, NULL},
	{"title", "string?", 0, NULL, NULL},
	{"uri", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield resource_template[] = {
	{"annotations", "any", 0, NULL, NULL},
	{"description", "string?", 0, NULL, NULL},
	{"mimeType", "string?", 0, NULL, NULL},
	{"name", "string", PF_REQ, NULL, NULL},
	{"title", "string?", 0, NULL, NULL},
	{"uriTemplate", "string", PF_REQ, NULL, NULL},
	{NULL},
};

/* --- mcpServer/tool/call --------------------------------------------------------------- */

static const struct pfield tool_call_params[] = {
	{"_meta", "any", 0, NULL, NULL},
	{"arguments", "any", 0, NULL, NULL},
	{"server", "string", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"tool", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield tool_call_response[] = {
	{"_meta", "any", 0, NULL, NULL},
	{"content", "any[]", PF_REQ, NULL, NULL},
	{"isError", "boolean?", 0, NULL, NULL},
	{"structuredContent", "any", 0, NULL, NULL},
	{NULL},
};

/* --- mcpServer/resource/read ----------------------------------------------------------- */

static const struct pfield resource_read_params[] = {
	{"_meta", "{any}?", 0, NULL,
		"Additional MCP request metadata. Account and turn routing keys are reserved."},
	{"connectorId", "string?", 0, NULL, NULL},
	{"originCallId", "string?", 0, NULL,
		"Originating MCP tool call used to select the resource's app."},
	{"server", "string", PF_REQ, NULL, NULL},
	{"target", "McpResourceReadTarget?", 0, NULL,
		"Explicit hosted app/account. Omit to retain legacy resource discovery."},
	{"threadId", "string?", 0, NULL, NULL},
	{"uri", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield resource_read_target[] = {
	{"connectorId", "string", PF_REQ, NULL, NULL},
	{"linkId", "string?", PF_REQ, NULL,
		"Null explicitly requests no-auth access, subject to the app's resource policy."},
	{NULL},
};

static const struct pfield resource_read_response[] = {
	{"contents", "ResourceContent[]", PF_REQ, NULL, NULL},
	{"originCallId", "string?", 0, NULL,
		"Originating call when the server applied app-specific resource scoping."},
	{NULL},
};

#define RESOURCE_CONTENT_SCHEMA                                                                    \
	"{\"anyOf\": [{\"properties\": {\"_meta\": true, \"mimeType\": {\"type\": [\"string\", "   \
	"\"null\"]}, \"text\": {\"type\": \"string\"}, \"uri\": {\"description\": \"The URI of "   \
	"this resource.\", \"type\": \"string\"}}, \"required\": [\"text\", \"uri\"], \"type\": "  \
	"\"object\"}, {\"properties\": {\"_meta\": true, \"blob\": {\"type\": \"string\"}, "       \
	"\"mimeType\": {\"type\": [\"string\", \"null\"]}, \"uri\": {\"description\": \"The URI "  \
	"of this resource.\", \"type\": \"string\"}}, \"required\": [\"blob\", \"uri\"], "         \
	"\"type\": \"object\"}], \"description\": \"Contents returned when reading a resource "    \
	"from an MCP server.\"}"

/* --- config/mcpServer/reload ----------------------------------------------------------- */

static const struct pfield refresh_response[] = {
	{NULL},
};

/* --- notifications --------------------------------------------------------------------- */

static const struct pfield status_updated[] = {
	{"error", "string?", 0, NULL, NULL},
	{"failureReason", "McpServerStartupFailureReason?", 0, NULL, NULL},
	{"name", "string", PF_REQ, NULL, NULL},
	{"status", "McpServerStartupState", PF_REQ, NULL, NULL},
	{"threadId", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct penum startup_state[] = {
	{"starting"}, {"ready"}, {"failed"}, {"cancelled"}, {NULL}};

static const struct penum startup_failure[] = {{"reauthenticationRequired"}, {NULL}};

static const struct pfield tool_call_progress[] = {
	{"itemId", "string", PF_REQ, NULL, NULL},
	{"message", "string", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

const struct pdef pdefs_mcp[] = {
	{.name = "ListMcpServerStatusParams", .kind = PD_STRUCT, .fields = status_list_params},
	{.name = "McpServerStatusDetail", .kind = PD_ENUM, .values = status_detail},
	{.name = "ListMcpServerStatusResponse", .kind = PD_STRUCT, .fields = status_list_response},
	{.name = "McpServerStatus", .kind = PD_STRUCT, .fields = server_status},
	{.name = "McpAuthStatus", .kind = PD_ENUM, .values = auth_status},
	{.name = "McpServerConnectionStatus", .kind = PD_ENUM, .values = connection_status},
	{.name = "McpServerInfo",
		.kind = PD_STRUCT,
		.fields = server_info,
		.doc = "Presentation metadata advertised by an initialized MCP server."},
	{.name = "Tool",
		.kind = PD_STRUCT,
		.fields = tool,
		.doc = "Definition for a tool the client can call."},
	{.name = "Resource",
		.kind = PD_STRUCT,
		.fields = resource,
		.doc = "A known resource that the server is capable of reading."},
	{.name = "ResourceTemplate",
		.kind = PD_STRUCT,
		.fields = resource_template,
		.doc = "A template description for resources available on the server."},
	{.name = "McpServerToolCallParams", .kind = PD_STRUCT, .fields = tool_call_params},
	{.name = "McpServerToolCallResponse", .kind = PD_STRUCT, .fields = tool_call_response},
	{.name = "McpResourceReadParams", .kind = PD_STRUCT, .fields = resource_read_params},
	{.name = "McpResourceReadTarget", .kind = PD_STRUCT, .fields = resource_read_target},
	{.name = "McpResourceReadResponse", .kind = PD_STRUCT, .fields = resource_read_response},
	{.name = "ResourceContent", .kind = PD_ALIAS, .schema = RESOURCE_CONTENT_SCHEMA},
	{.name = "McpServerRefreshResponse", .kind = PD_STRUCT, .fields = refresh_response},
	{.name = "McpServerStatusUpdatedNotification", .kind = PD_STRUCT, .fields = status_updated},
	{.name = "McpServerStartupState", .kind = PD_ENUM, .values = startup_state},
	{.name = "McpServerStartupFailureReason", .kind = PD_ENUM, .values = startup_failure},
	{.name = "McpToolCallProgressNotification",
		.kind = PD_STRUCT,
		.fields = tool_call_progress},
	{NULL},
};
