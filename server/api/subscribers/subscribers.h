/*
 * Threads shared between connections, as upstream 0.169 shares them (docs/transports.md): a
 * loaded thread has a set of subscribed connections (sessions); its notifications go to each
 * of them, and its server requests (approvals, questions, dynamic tool calls) go to every
 * subscriber at once, each under the id of its own connection; the first answer wins and the
 * others' copies are withdrawn (serverRequest/resolved tells each connection, with its id).
 * Sessions register while they live, for what upstream sends to every connection
 * (thread/started, thread/status/changed).
 */
#ifndef API_SUBSCRIBERS_H
#define API_SUBSCRIBERS_H

#include <stddef.h>

#include <jansson.h>

#include "rpc/rpc.h"

struct session;
struct subs_call;

/* A connection begins / ends (session_new, session_free): it leaves every set and call. */
void subs_session_add(struct session *s);
void subs_session_remove(struct session *s);
/* Send to every initialized connection (params stolen). */
void subs_broadcast(const char *method, json_t *params);

/* Subscribe s to a thread (on) or unsubscribe it; whether it was subscribed before. */
int subs_set(const char *thread_id, struct session *s, int on);
/* Whether s is subscribed; -1 when the thread has no subscription record at all. */
int subs_is(const char *thread_id, const struct session *s);
/* How many connections are subscribed. */
size_t subs_count(const char *thread_id);
/* A subscriber other than not (NULL: any), or NULL. */
struct session *subs_other(const char *thread_id, const struct session * not );
/* The i-th thread s is subscribed to (copied into id, 40 bytes); 0, or -1 past the end. */
int subs_thread_of(const struct session *s, size_t i, char id[40]);
/* The thread unloads: its record goes (pending calls stay with their owners). */
void subs_forget(const char *thread_id);
/* Send a notification (params stolen) to every subscriber of the thread. */
void subs_notify(const char *thread_id, const char *method, json_t *params);

/*
 * A server request (params stolen) to every subscriber of the thread, or to fallback alone
 * when nobody is (the connection that runs the thread's engine: thread/unsubscribe does not
 * stop a turn's approvals, as on stdio). cb runs exactly once, never from here: with the
 * first answer, or RPC_CALL_CANCELLED once every copy is gone (the connections went, or
 * subs_call_cancel). cb may free the call.
 */
struct subs_call *subs_call(const char *thread_id, struct session *fallback, const char *method,
	json_t *params, rpc_call_cb cb, void *arg);
/*
 * s subscribed to the thread (thread/resume answered): it gets a copy of each of the thread's
 * requests still waiting that it has none of, under its own id, as upstream 0.169 replays them
 * to a connection that attaches. Its answer counts as any other copy's.
 */
void subs_replay(const char *thread_id, struct session *s);
/* Withdraw the copies still pending; cb runs now (cancelled) if it has not run. */
void subs_call_cancel(struct subs_call *c);
/* serverRequest/resolved {threadId, requestId} to each connection that got a copy and is
 * still subscribed, with its own id. */
void subs_call_resolved(struct subs_call *c, const char *thread_id);
/* The lowest id a copy went out with (the stdio connection's only id), or -1. */
long long subs_call_id(const struct subs_call *c);
/* Forget the call (after cb ran); NULL is fine. */
void subs_call_free(struct subs_call *c);

#endif
