/*
 * MCP resources as upstream 0.169 handles them (recorded: tests/fixtures/mcp/upstream/
 * resources.json, nores.json): the model's tools list_mcp_resources,
 * list_mcp_resource_templates and read_mcp_resource (offered whenever the thread has MCP
 * servers, after the shell tools), their calls answered with upstream's JSON payloads and
 * error texts, and the listing mcpServerStatus/list shows. Nothing is listed at start-up:
 * like upstream, each request asks the servers then (every page of a listing of all servers,
 * one page when the model names a server and a cursor).
 */
#ifndef MCP_RESOURCES_H
#define MCP_RESOURCES_H

#include <jansson.h>

#include "mcp.h"

/* The item's server for a call naming none: upstream's. */
#define MCP_RESOURCES_ANY "codex"

/* 1 when name is one of the three tools. */
int mcp_resources_tool(const char *name);
/* Insert the three tools into tools (built-ins first) where upstream puts them: after the shell
 * tools; only when the set has servers (chat: the Chat wire's form). */
void mcp_resources_specs(json_t *tools, const struct mcp_set *s, int chat);
/*
 * Check a call's arguments (text): 0 with *server (the item's: the named server, borrowed
 * from the set, or MCP_RESOURCES_ANY) and *args (new reference), or -1 with *answer (heap):
 * what upstream answers the model without an item (unknown server, an argument missing).
 */
int mcp_resources_check(const struct mcp_set *s, const char *tool, const char *text,
	const char **server, json_t **args, char **answer);
/*
 * Run a checked call: cbs->done hears {content:[{type:"text", text:<payload>}]} or upstream's
 * error text; never from inside this call. NULL with *cause when it cannot start. The handle
 * is a struct mcp_call: mcp_call_cancel cancels it.
 */
struct mcp_call *mcp_resources_call(struct mcp_set *s, const char *tool, const json_t *args,
	const struct mcp_call_cbs *cbs, char **cause);
/*
 * For mcpServerStatus/list: every ready server's resources and resource templates, every page
 * (a server's error leaves its lists empty); done hears {"resources":{<server>:[...]},
 * "resourceTemplates":{<server>:[...]}}. Never NULL.
 */
struct mcp_call *mcp_resources_gather(struct mcp_set *s, const struct mcp_call_cbs *cbs);
/* The model's output of a finished call: the payload, or the error as upstream says it. */
json_t *mcp_resources_output(const json_t *result, const char *error);

#endif
