/*
 * What the MCP client's files share: mcp_set.c (a thread's servers, their start-up and
 * restart), mcp_conn.c (one server's JSON-RPC over its stdio: requests, answers, its own
 * requests and notifications), mcp_call.c (tools/call, progress, cancel, timeouts).
 */
#ifndef MCP_INT_H
#define MCP_INT_H

#include <stddef.h>

#include "mcp.h"

struct exec_proc;
struct linebuf;
struct mcp_http;
struct mcp_parse;
struct mcp_res;
struct mcp_server;

#define MCP_LIST_PAGES	1000 /* tools/list pages followed, at most */
#define MCP_STDERR_LINE 4096
#define MCP_PARSE_BIG	(1u << 20) /* a longer message is parsed beside the loop */

/* What an answered request goes on with (mcp_conn_request's callback). */
typedef void (*mcp_answer_fn)(struct mcp_server *sv, json_t *result, const char *error);

/* A request sent and not answered yet. */
struct mcp_req {
	struct mcp_req *next;
	long long id;
	mcp_answer_fn fn; /* or, for tools/call: */
	struct mcp_call *call;
};

struct mcp_call {
	struct mcp_call *next;
	struct mcp_server *sv;
	long long id; /* the request's id, also its progressToken */
	struct mcp_call_cbs cbs;
	ev_timer timeout;
	struct mcp_res *res; /* a resource operation's handle (mcp_resources.c): no sv */
	json_t *held;	     /* the tools/call params while the user is asked (mcp_elicit.c) */
	long long token;     /* that question's */
};

/* A server's elicitation/create forwarded to the user (mcp_elicit.c). */
struct mcp_elicit {
	struct mcp_elicit *next;
	struct mcp_server *sv;
	json_t *id; /* the server's request id */
	long long token;
};

/* Why a start failed, for upstream's texts when a `required` server fails (mcp_set_error).
 */
enum mcp_fail {
	MCP_FAIL_OTHER,
	MCP_FAIL_SPAWN,	  /* the program did not start */
	MCP_FAIL_EXIT,	  /* it exited during the handshake */
	MCP_FAIL_TIMEOUT, /* startup_timeout_sec passed */
};

struct mcp_server {
	struct mcp_set *set;
	char *name;
	char *error; /* why it failed last (reported), and how */
	enum mcp_fail fail;
	json_t *cfg; /* mcp_config_parse's entry (borrowed from the set) */
	enum mcp_state state;
	int died;    /* it exited after being ready: started again at the next turn */
	int listing; /* a tools/list is under way (its pages) */
	int relist;  /* tools/list_changed came during one: list again after it */
	struct exec_proc *proc;
	struct mcp_http *http; /* a streamable HTTP server's transport (mcp_http.c), or NULL */
	struct linebuf *out, *err;
	struct mcp_parse *parse; /* a big line being parsed beside the loop: stdout is held */
	char *pend;		 /* bytes read after that line, fed once it is back */
	size_t pend_len;
	int finishing; /* the process is over: its last line is parsed on the loop */
	long long next_id;
	struct mcp_req *reqs;
	struct mcp_call *calls;
	struct mcp_elicit *elicits; /* its questions waiting on the user */
	json_t *init;		    /* the initialize result */
	json_t *tools;		    /* Tool[] in effect (filtered) */
	json_t *acc;		    /* pages of the listing under way */
	int pages;
	ev_timer startup;
	double tool_timeout;
};

struct mcp_set {
	struct mcp_set_opts o;
	char *cwd;
	struct mcp_server *sv;
	size_t n;
	void (*settle)(void *arg); /* mcp_set_on_settle's listener */
	void *settle_arg;
};

/* mcp_conn.c */
int mcp_conn_spawn(struct mcp_server *sv, char **cause);
/* Send a request; fn (or the call) hears the answer. 0, or -1 with *cause. */
int mcp_conn_request(struct mcp_server *sv, const char *method, json_t *params, mcp_answer_fn fn,
	struct mcp_call *call, long long *id, char **cause);
int mcp_conn_notify(struct mcp_server *sv, const char *method, json_t *params);
/* Forget a pending request without an answer (a call cancelled or timed out). */
void mcp_conn_forget(struct mcp_server *sv, long long id);
/* Kill the server; every pending request and call fails with error. */
void mcp_conn_kill(struct mcp_server *sv, const char *error);
/* A big line's parse is back (msg NULL: not JSON): handle it, go on reading. */
void mcp_conn_parsed(struct mcp_server *sv, json_t *msg, size_t len);
/* Free the server's line buffers (a parse under way keeps the one its line is in). */
void mcp_conn_release(struct mcp_server *sv);
/* Dispatch one message of the server (borrowed). */
void mcp_conn_dispatch(struct mcp_server *sv, json_t *m);
/* A request's answer: result, or error (code nonzero: the server's JSON-RPC error). */
void mcp_conn_answer(
	struct mcp_server *sv, long long id, json_t *result, int code, const char *error);
/* mcp_http.c */
/* Get a `url` server's transport ready (nothing is sent yet): 0, or -1 with *cause. */
int mcp_http_open(struct mcp_server *sv, char **cause);
/* POST one message (stolen): 0, or -1 with *cause. */
int mcp_http_send(struct mcp_server *sv, json_t *msg, char **cause);
/* notifications/initialized went out: the protocol version, the server's stream. */
void mcp_http_initialized(struct mcp_server *sv);
/* Stop every transfer, end the session; sv->http is NULL after. */
void mcp_http_close(struct mcp_server *sv);
/* mcp_parse.c */
/* Parse line (in sv->out, untouched until the parse is back) on a thread: 0, or -1. */
int mcp_parse_start(struct mcp_server *sv, const char *line, size_t len);
/* The server is going: its parse under way (if any) is dropped when it comes back. */
void mcp_parse_release(struct mcp_server *sv);
/*
 * Parse text (heap, stolen on success) of server sv on a thread; fn(arg, msg) runs on the loop
 * with the result (borrowed; NULL: not JSON). NULL when no thread could be had: the caller
 * keeps the text and parses it itself.
 */
struct mcp_parse *mcp_parse_text(struct mcp_server *sv, char *text, size_t len,
	void (*fn)(void *arg, json_t *msg), void *arg);
/* fn will not run (its owner is gone); the job frees itself once back. */
void mcp_parse_drop(struct mcp_parse *j);
/* mcp_set.c */
void mcp_server_failed(struct mcp_server *sv, enum mcp_fail kind, const char *error);
void mcp_server_list_tools(struct mcp_server *sv);
/* mcp_call.c */
void mcp_call_finish(struct mcp_call *c, const json_t *result, const char *error);
/* The server answered the call with a JSON-RPC error. */
void mcp_call_error(struct mcp_call *c, int code, const char *error);
void mcp_call_progress(struct mcp_server *sv, const json_t *params);
void mcp_call_fail_all(struct mcp_server *sv, const char *error);
/* mcp_elicit.c */
/* Whether the user approved the server's tool for the session (no question then). */
int mcp_elicit_remembered(const struct mcp_server *sv, const char *tool);
/* Ask the user to approve call c (its tools/call params stolen into c->held): 0, or -1 with
 * *cause (nobody to ask: declined). */
int mcp_elicit_approval(
	struct mcp_call *c, const char *tool, const json_t *args, json_t *params, char **cause);
/* A call waiting on the user ends: its question taken back. */
void mcp_elicit_withdraw_call(struct mcp_call *c);
/* The server's elicitation/create: forwarded to the user, or declined at once. */
void mcp_elicit_forward(struct mcp_server *sv, const json_t *id, const json_t *params);
/* Its questions end: answered `cancel` (reply) or dropped (the server is going). */
void mcp_elicit_end_all(struct mcp_server *sv, int reply);
/* mcp_call.c: the approved call goes to the server now. */
void mcp_call_send(struct mcp_call *c);
/* mcp_conn.c: answer a request of the server (result stolen). */
void mcp_conn_reply(struct mcp_server *sv, const json_t *id, json_t *result);
/* mcp_resources.c: cancel a resource operation (c->res) */
void mcp_res_cancel(struct mcp_call *c);

#endif
