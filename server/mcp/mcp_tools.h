/*
 * A set's tools as the model sees them, as upstream 0.169 offers them (recorded:
 * tests/fixtures/mcp/upstream/): on the Responses wire one tool of type `namespace` per ready
 * server, {"type":"namespace","name":"mcp__<server>","description":<its instructions>,
 * "tools":[{"type":"function","name":<tool>,"description","strict":false,"parameters":
 * <inputSchema>}]} with the tools sorted by name; the model calls `name` in `namespace`. The
 * Chat wire has no namespaces: there each tool is a function named mcp__<server>__<tool>.
 * Names keep [A-Za-z0-9_-] (anything else becomes '_'); a flat name longer than
 * MCP_TOOL_NAME_MAX is cut and ends with a hash of the whole, so it stays unique.
 */
#ifndef MCP_TOOLS_H
#define MCP_TOOLS_H

#include <jansson.h>

struct mcp_set;

#define MCP_TOOL_NAME_MAX 64

/* Append the tools of the set's ready servers to tools (chat: the Chat wire's form), and
 * insert the resource tools among the built-ins (mcp_resources.h). */
void mcp_tools_append(json_t *tools, const struct mcp_set *s, int chat);
/*
 * The server and tool a model's call names (ns: its namespace, or NULL): the server's index
 * with *tool (the MCP Tool, borrowed), or -1.
 */
int mcp_tools_find(const struct mcp_set *s, const char *ns, const char *name, const json_t **tool);
/* A name as the model sees it (heap): [A-Za-z0-9_-] kept, the rest '_'. */
char *mcp_tools_sanitize(const char *name);

#endif
