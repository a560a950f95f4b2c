/*
 * The MCP client (engine): a thread's MCP servers, each a child speaking newline-delimited
 * JSON-RPC 2.0 on its stdio, on the loop. It knows nothing of the app-server protocol: its
 * owner (api/mcp/) is told of each server's start-up through a callback, the agent lists the
 * tools and calls them.
 *
 * Rules:
 *  - Nothing blocks the loop: the servers start in parallel (mcp_set_start returns at once),
 *    a server that does not finish its start-up within startup_timeout_sec fails, a call not
 *    answered within tool_timeout_sec fails; every callback runs from the loop.
 *  - Every call ends exactly once (its `done`), also when the server dies, the call is
 *    cancelled (notifications/cancelled is sent) or the set is freed.
 *  - A server is a child in its own session and process group (and cgroup where the machine
 *    has them), killed with the set; its stderr goes to our log, never to our stdout.
 *  - A server that died is reported (status failed) and started again by mcp_set_turn_begin,
 *    as upstream restarts it at the next turn.
 */
#ifndef MCP_H
#define MCP_H

#include <stdint.h>

#include <ev.h>
#include <jansson.h>

struct outq;
struct mcp_set;
struct mcp_call;

#define MCP_PROTOCOL_VERSION "2025-06-18" /* what upstream 0.169 asks for (recorded) */
#define MCP_STARTUP_TIMEOUT  10.0	  /* seconds: upstream's startup_timeout_sec default */
#define MCP_TOOL_TIMEOUT     60.0	  /* seconds: upstream's tool_timeout_sec default */
#define MCP_LINE_MAX	     (64u << 20)  /* one message from a server, at most */

enum mcp_state {
	MCP_STARTING,
	MCP_READY,
	MCP_FAILED,
	MCP_CANCELLED,
};

/* The wire name of a state ("starting", "ready", "failed", "cancelled"). */
const char *mcp_state_name(enum mcp_state st);

/*
 * Check and normalise [mcp_servers] (a table of tables, borrowed) the way upstream reads it:
 * 0 with *out (new reference: {name: {command, args, env, env_vars, cwd, url, ...}} with the
 * defaults applied, disabled servers kept with enabled false), or -1 with *cause naming the
 * server and the key.
 */
int mcp_config_parse(const json_t *servers, json_t **out, char **cause);

/* What the set's owner hears: a server's start-up state changed (error: why it failed). */
typedef void (*mcp_status_cb)(void *arg, const char *server, enum mcp_state st, const char *error);

/*
 * Asking the user (mcp_elicit.c): a tool's approval, or a server's elicitation/create, goes to
 * the owner as the params of an mcpServer/elicitation/request (stolen). ask returns 0 with
 * *token, then answer(ctx, st, value) runs once, or -1 when nobody can be asked now (no turn
 * running, approval policy never: the server hears decline). withdraw(arg, token) takes a
 * question back (an interrupt): answer never runs then.
 */
enum mcp_answer {
	MCP_ANSWER_RESULT, /* value: the client's result */
	MCP_ANSWER_ERROR,  /* value: its error (-32601...): a decline, as upstream */
	MCP_ANSWER_GONE,   /* the client went away: a cancel */
};
typedef void (*mcp_answer_cb)(void *ctx, int st, const json_t *value);
typedef int (*mcp_ask_fn)(
	void *arg, json_t *params, mcp_answer_cb answer, void *ctx, long long *token);
typedef void (*mcp_withdraw_fn)(void *arg, long long token);
/* A tool approved "always" (the answer's _meta.persist): the owner writes it to config. */
typedef void (*mcp_persist_fn)(void *arg, const char *server, const char *tool);

/* The errors of a tool call the user did not approve (upstream's texts). */
#define MCP_REJECTED	   "user rejected MCP tool call"
#define MCP_USER_CANCELLED "user cancelled MCP tool call"

struct mcp_set_opts {
	struct ev_loop *loop;
	struct outq *q;	 /* its congestion pauses reading the servers (mcp_set_resume) */
	const char *cwd; /* a server's cwd when its config names none (NULL: ours) */
	mcp_status_cb status;
	mcp_ask_fn ask; /* NULL: questions are declined */
	mcp_withdraw_fn withdraw;
	mcp_persist_fn persist; /* NULL: "always" is remembered for the session alone */
	void *arg;
	/*
	 * The tools approved for the session ({server: {tool: true}}, shared: the set takes a
	 * reference and adds to it), so that they outlive the set (a reload); NULL: its own.
	 */
	json_t *approved;
};

/* A set of servers from mcp_config_parse's output (borrowed); none started yet. */
struct mcp_set *mcp_set_new(const struct mcp_set_opts *o, const json_t *servers);
/* Kill every server and end every call (their `done` runs, with an error). */
void mcp_set_free(struct mcp_set *s);
/* Start every enabled server, in parallel; returns at once. */
void mcp_set_start(struct mcp_set *s);
/* A turn begins: servers that died since are started again. */
void mcp_set_turn_begin(struct mcp_set *s);
/* The output queue drained: resume reading servers paused by its congestion. */
void mcp_set_resume(struct mcp_set *s);

/*
 * Whether a server is still starting (or listing its tools again after tools/list_changed): a
 * turn's model request waits for them, as upstream's tools are listed only once every server
 * started or failed. fn(arg) runs each time one of them is ready, failed or listed (one
 * listener; NULL to stop).
 */
int mcp_set_starting(const struct mcp_set *s);
void mcp_set_on_settle(struct mcp_set *s, void (*fn)(void *arg), void *arg);
/* How many servers the set has, and the i-th one's name (config order: sorted by name). */
size_t mcp_set_count(const struct mcp_set *s);
const char *mcp_set_name(const struct mcp_set *s, size_t i);
enum mcp_state mcp_set_state(const struct mcp_set *s, size_t i);
/* A ready server's tools (Tool[] as listed, enabled_tools/disabled_tools applied; borrowed). */
const json_t *mcp_set_tools(const struct mcp_set *s, size_t i);
/* Its initialize result's instructions (borrowed), or NULL. */
const char *mcp_set_instructions(const struct mcp_set *s, size_t i);
/* Its initialize result (serverInfo, capabilities...; borrowed), or NULL. */
const json_t *mcp_set_server_info(const struct mcp_set *s, size_t i);
/* Its configuration (mcp_config_parse's entry; borrowed). */
const json_t *mcp_set_config(const struct mcp_set *s, size_t i);
/* Who hears the servers' state changes and questions from now on (a set handed to a thread:
 * o's status, ask, withdraw, persist, arg and approved). */
void mcp_set_owner(struct mcp_set *s, const struct mcp_set_opts *o);
/* A failed server's reported error (borrowed), or NULL when it is not failed. */
const char *mcp_set_last_error(const struct mcp_set *s, size_t i);
/*
 * Why a failed server did not start, as upstream words it when a `required` server fails a
 * thread start (heap: "handshaking with MCP server failed: ...", "timed out handshaking with
 * MCP server after 2s: ...", the OS error of a program that did not start), or NULL.
 */
char *mcp_set_error(const struct mcp_set *s, size_t i);
/* The server's index by name, or -1. */
int mcp_set_find(const struct mcp_set *s, const char *name);

/* How a call is told of progress (message may be NULL) and of its end. */
struct mcp_call_cbs {
	void (*progress)(void *arg, double progress, const double *total, const char *message);
	/* result: CallToolResult (borrowed) or NULL with error (a message). Runs once, last. */
	void (*done)(void *arg, const json_t *result, const char *error);
	void *arg;
	int *code; /* may be NULL: gets the server's JSON-RPC error code when it answered one */
	int ask;   /* tools/call: the user approves it first (mcpServer/elicitation/request) */
};

/*
 * tools/call `tool` of server i with arguments (borrowed, an object or NULL) and _meta
 * (borrowed, merged into the request's _meta with a progressToken; may be NULL). NULL when the
 * server is not ready: *cause says why. The handle is valid until done ran. With cbs->ask the
 * user is asked first (upstream's approval request); declined, done hears MCP_REJECTED (or
 * MCP_USER_CANCELLED) and nothing reaches the server.
 */
struct mcp_call *mcp_call_tool(struct mcp_set *s, size_t i, const char *tool, const json_t *args,
	const json_t *meta, const struct mcp_call_cbs *cbs, char **cause);
/*
 * Any other request (resources/read, resources/list...) to server i, params stolen (may be
 * NULL), bounded by tool_timeout_sec; done hears the result. NULL when not ready (*cause).
 */
struct mcp_call *mcp_request(struct mcp_set *s, size_t i, const char *method, json_t *params,
	const struct mcp_call_cbs *cbs, char **cause);
/* Whether tools/call `tool` of server i goes without asking though cbs->ask says ask: the user
 * approved it for the session (and its approval_mode is not "prompt"). */
int mcp_call_remembered(const struct mcp_set *s, size_t i, const char *tool);
/* Cancel: notifications/cancelled to the server, then done (error "cancelled") at once. */
void mcp_call_cancel(struct mcp_call *c);

#endif
