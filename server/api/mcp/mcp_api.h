/*
 * A thread's MCP servers (mcp/mcp.h) seen from the protocol: which servers a thread gets (the
 * effective config's [mcp_servers] under the request's `config.mcp_servers`), started when the
 * thread opens (after thread/start's answer, never holding it), each state change sent as
 * `mcpServer/startupStatus/updated`.
 */
#ifndef API_MCP_H
#define API_MCP_H

#include <jansson.h>

#include "rpc/rpc.h"

struct session;
struct config;
struct mcp_set;
struct turn_thread;

/* mcpServerStatus/list, mcpServer/tool/call, mcpServer/resource/read, config/mcpServer/reload
 * (mcp_methods.c). */
extern const struct rpc_method api_mcp_methods[];

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

/* The servers of cfg and params, parsed (new reference; an empty object when broken). */
json_t *mcp_api_parsed(const char *thread_id, const struct config *cfg, const json_t *params);

typedef void (*mcp_api_start_fn)(struct session *s, struct rpc_req *req, json_t *params);
/*
 * thread/start (mcp_required.c): when the thread gets `required` servers, take the request (1):
 * start them, then fail it with upstream's error when one failed, or call start(s, req,
 * params) with them. 0: not taken (no required server, or start is running now).
 */
int mcp_api_start_gate(
	struct session *s, struct rpc_req *req, json_t *params, mcp_api_start_fn start);
/* How a thread is opened: the words of upstream's error differ. */
enum mcp_api_open { MCP_API_START, MCP_API_RESUME, MCP_API_FORK };
/* thread/resume (of a thread not loaded) and thread/fork wait as thread/start does. */
int mcp_api_open_gate(struct session *s, struct rpc_req *req, json_t *params,
	enum mcp_api_open kind, mcp_api_start_fn start);
/* The servers a passing thread/start's thread takes (once), or NULL. */
struct mcp_set *mcp_api_adopt(void);
/* The session ends: its thread/starts waiting for servers are dropped. */
void mcp_api_gates_free(struct session *s);

/* config/mcpServer/reload: each loaded thread takes [mcp_servers] again at its next turn. */
void mcp_api_reload(struct session *s);
/* A turn of tt begins: after a reload, servers whose configuration changed start anew. */
void mcp_api_turn_begin(struct session *s, struct turn_thread *tt);
/* The session ends: requests under way are dropped (rpc_free answers them), records freed. */
void mcp_api_session_end(struct session *s);
/* A thread unloads: what its servers came from is forgotten. */
void mcp_api_thread_closed(const char *thread_id);
/* mcpServer/oauth/login (mcp_oauth_api.c), and the session's logins dropped (ports freed). */
extern const struct rpc_method api_mcp_oauth_methods[];
void mcp_oauth_api_session_free(struct session *s);
/* mcp_methods.c: drop the session's requests under way. */
void mcp_api_session_free(struct session *s);

#endif
