/*
 * Protocol tables: MCP servers' OAuth login (docs/mcp.md): mcpServer/oauth/login and
 * mcpServer/oauthLogin/completed, shaped as upstream 0.169's experimental schema.
 */
#include "defs.h"

static const struct pfield login_params[] = {
	{"clientRegistration", "McpServerOauthClientRegistration?", 0, NULL,
		"Registration strategy for this login only; omission selects automatic discovery."},
	{"name", "string", PF_REQ, NULL, NULL},
	{"scopes", "string[]?", 0, NULL, NULL},
	{"threadId", "string?", 0, NULL, NULL},
	{"timeoutSecs", "int64?", 0, NULL, NULL},
	{NULL},
};

static const struct penum client_registration[] = {{"auto"}, {"cimd"}, {"dcr"}, {NULL}};

static const struct pfield login_response[] = {
	{"authorizationUrl", "string", PF_REQ, NULL, NULL},
	{"loginId", "string?", 0, "null",
		"Identifies this login attempt across the response and completion notification. "
		"Older servers omit this field; current servers always return it."},
	{NULL},
};

static const struct pfield login_completed[] = {
	{"error", "string?", 0, NULL, NULL},
	{"loginId", "string?", 0, NULL,
		"Identifies the explicit login attempt. Older servers omit this field."},
	{"name", "string", PF_REQ, NULL, NULL},
	{"success", "boolean", PF_REQ, NULL, NULL},
	{"threadId", "string?", 0, NULL, NULL},
	{NULL},
};

const struct pdef pdefs_mcp_oauth[] = {
	{.name = "McpServerOauthLoginParams", .kind = PD_STRUCT, .fields = login_params},
	{.name = "McpServerOauthClientRegistration",
		.kind = PD_ENUM,
		.values = client_registration},
	{.name = "McpServerOauthLoginResponse", .kind = PD_STRUCT, .fields = login_response},
	{.name = "McpServerOauthLoginCompletedNotification",
		.kind = PD_STRUCT,
		.fields = login_completed},
	{NULL},
};
