/* What rpc.c shares with rpc_call.c (server requests) and rpc_nul.c (NUL in strings). */
#ifndef RPC_INT_H
#define RPC_INT_H

#include "protocol/buf.h"
#include "rpc.h"

struct rpc_call;
struct validator;

struct rpc {
	struct ev_loop *loop;
	struct outq *q;
	struct validator *validator;
	const struct rpc_method *const *tables;
	struct session *session;
	struct rpc_opts opts;
	int initialized;
	int experimental;
	char **optouts;
	size_t noptouts;
	struct rpc_req *pending; /* unanswered requests, newest first */
	size_t inflight;
	int nul_marked;		/* the line had NULs in keys, read as U+FFFF (rpc_nul_mark) */
	int nul_escape;		/* the line holds "\u0000": a string may hold a NUL */
	struct buf line;	/* an error answer's text, reused (rpc_send_error_n) */
	struct rpc_call *calls; /* server requests awaiting the client */
	size_t ncalls;
	long long next_call; /* the next server request id */
};

/* rpc.c */
void rpc_send(struct rpc *r, json_t *msg);
void rpc_send_error(struct rpc *r, json_t *id, int code, const char *message, json_t *data);
void rpc_send_error_n(
	struct rpc *r, json_t *id, int code, const char *message, size_t mlen, json_t *data);
/* rpc_call.c: a response from the client; the id is a string or an integer. */
void rpc_call_response(struct rpc *r, json_t *msg, json_t *id);
void rpc_call_cancel_all(struct rpc *r);
/* rpc_nul.c */
char *rpc_nul_mark(const char *line, size_t len);
int rpc_nul_refuse(struct rpc *r, json_t *id, const json_t *params);
/* rpc_gate.c: the experimentalApi gate; 1 when the request was answered (refused). */
int rpc_gate_refuse(struct rpc *r, json_t *id, const char *method, const json_t *params);
int rpc_gate_unknown(struct rpc *r, json_t *id, const char *method);

#endif
