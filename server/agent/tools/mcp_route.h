/*
 * A model's call on its way to an MCP tool, before anything runs (pure: no I/O): whether the
 * wire routes it to the MCP tools at all, its arguments as upstream 0.169 reads them, and the
 * _meta a tools/call carries.
 */
#ifndef MCP_ROUTE_H
#define MCP_ROUTE_H

#include <jansson.h>

/*
 * Whether a call item (borrowed) may name an MCP tool on this wire: on Responses the namespace
 * (mcp__<server>) names the server and a flat name is no MCP tool, as upstream; on Chat the
 * flat name alone (chat: 1) and a namespace is not one.
 */
int mcp_route_wire(const json_t *call, int chat);
/* Whether a call item is a function_call (one that may go out with the response's others). */
int mcp_route_function_call(const json_t *call);
/*
 * The call's arguments (new reference): its `arguments` text as JSON, empty or absent as {}.
 * NULL when the text is no JSON, with *msg (heap) the answer the model gets, upstream's words.
 */
json_t *mcp_route_args(const json_t *call, char **msg);
/* tools/call's _meta (new reference): the item's callId, the thread as threadId and sessionId. */
json_t *mcp_route_meta(const char *call_id, const char *thread_id);

#endif
