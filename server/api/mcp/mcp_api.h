/*
 * A thread's MCP servers (mcp/mcp.h) seen from the protocol: which servers a thread gets (the
 * effective config's [mcp_servers] under the request's `config.mcp_servers`), started when the
 * thread opens (after thread/start's answer, never holding it), each state change sent as
 * `mcpServer/startupStatus/updated`.
 */
#ifndef API_MCP_H
#define API_MCP_H

#include <jansson.h>

struct session;
struct config;
struct mcp_set;

/*
 * A thread was started, resumed or forked with params (borrowed) under cfg: its servers start
 * now, unless the loaded thread has them already.
 */
void mcp_api_thread_opened(
	struct session *s, const char *thread_id, const struct config *cfg, const json_t *params);
/*
 * The servers a thread gets: cfg's [mcp_servers] with the request's `config.mcp_servers`
 * tables (and dotted `mcp_servers.<name>.<key>` keys) over them (new reference).
 */
json_t *mcp_api_servers(const struct config *cfg, const json_t *params);

#endif
