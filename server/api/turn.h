/*
 * The turn side of the api (turn.c: methods; turn_sink.c: what a turn reports, as
 * notifications and server requests). One struct turn_thread per loaded thread that ran a
 * turn, held in the thread's agent slot (thread.h) and on its session's list.
 */
#ifndef API_TURN_H
#define API_TURN_H

#include <stdint.h>

#include <jansson.h>

#include "agent/agent.h"

struct session;
struct store_thread;

/* An approval waiting on the client: the agent's token and the server request's id. */
struct turn_pending {
	struct turn_thread *tt;
	long long token;
	struct subs_call *call; /* one copy per subscribed connection (api/subscribers/) */
	int cancelled;		/* the agent withdrew it: resolved after turn/completed */
	int quiet; /* item/tool/call: no serverRequest/resolved (upstream sends none) */
	struct turn_pending *next;
	/* turn_sink_ask's: the answer goes here, not to the agent (an int: rpc_call_status) */
	void (*fn)(void *arg, int st, const json_t *value);
	void *arg;
};

struct turn_thread {
	struct session *s;
	struct store_thread *st;
	char id[40];
	struct agent *agent;
	struct mcp_set *mcp; /* its MCP servers (api/mcp/), or NULL; freed after agent */
	struct turn_thread *next, *prev; /* the session's list */
	/* Settings: the thread's, changed by turn/start's overrides for every later turn. */
	char *cwd, *model, *effort, *summary;
	json_t *approval_policy, *sandbox_policy;
	/* The running turn. */
	char turn_id[64];
	int64_t started_ms;
	int ending;		   /* done is being reported */
	json_t *last_message;	   /* the last agentMessage item: turn/completed's items */
	struct turn_pending *pend; /* approvals asked and not resolved */
	struct subs_call **later;  /* requests to resolve after turn/completed */
	size_t nlater;
	int shell_only; /* a turn of thread/shellCommand's alone: items notLoaded */
};

extern const struct agent_sink turn_sink;

/* turn_sink.c: a turn begins (before its answer) / was answered (status, turn/started). */
void turn_sink_begin(struct turn_thread *tt, const char *turn_id);
void turn_sink_started(struct turn_thread *tt);
/*
 * A server request of the running turn answered to fn (st: rpc_call_status) rather than to the
 * agent (api/mcp/: MCP approvals and elicitations): threadId and turnId added, the thread
 * waitingOnApproval until the answer, serverRequest/resolved after it. Returns its token for
 * turn_sink_withdraw (an interrupt: resolved after turn/completed, fn never runs).
 */
long long turn_sink_ask(struct turn_thread *tt, const char *method, json_t *params,
	void (*fn)(void *arg, int st, const json_t *value), void *arg);
void turn_sink_withdraw(struct turn_thread *tt, long long token);
/* Forget what the sink holds for the thread (it is freed). */
void turn_sink_clear(struct turn_thread *tt);

/* A thread was started, resumed or forked: its shell snapshot is taken now (upstream's). */
void turn_api_thread_opened(struct session *s, const char *thread_id);
/* The turn side of a loaded thread (made the first time), or NULL when it is not loaded. */
struct turn_thread *turn_api_thread(struct session *s, const char *thread_id);
/*
 * Its connection went and another subscriber stays: the thread's engine is now that one's
 * (what the sink sends to the engine's connection alone, account/rateLimits/updated, goes
 * there), and its turn goes on.
 */
void turn_api_move(struct turn_thread *tt, struct session *to);
/* What a turn of tt runs with now (its settings, input borrowed); 0 or -1 with *cause. */
int turn_api_opts(struct turn_thread *tt, json_t *input, struct agent_turn_opts *o, char **cause);
/* Whether a turn of this thread is running. */
int turn_api_running(struct session *s, const char *thread_id);
/* The output queue drained: every thread's commands read on. */
void turn_api_resume(struct session *s);
/* Daemon exit: the shared worker stops (after every thread was freed). */
void turn_api_shutdown(void);

#endif
