/*
 * The thread side of the api (thread.c: the store, loaded threads, start/resume/fork;
 * thread_read.c: read, list, turns/list, items/list, loaded/list; thread_ops.c: archive,
 * unarchive, delete, name/set, metadata/update, unsubscribe). The store is per daemon (one
 * CODEX_HOME, one index), opened at the first thread request. Each loaded thread may hold an
 * agent (turn.c's per-thread state), freed when the thread unloads.
 */
#ifndef API_THREAD_H
#define API_THREAD_H

#include <jansson.h>

struct session;
struct store;
struct store_thread;
struct rpc_req;

/*
 * Run fn(s, req, params) again THREAD_RETRY_DELAY seconds from now (thread_retry.c): a request
 * that met a passing condition (a killed daemon's rollout lock, still held by a child it
 * started). 0, or -1 when it was tried THREAD_RETRY_TRIES times: answer it with the error.
 */
int thread_retry_later(struct session *s, struct rpc_req *req, json_t *params,
	void (*fn)(struct session *, struct rpc_req *, json_t *));
/* Drop the retries of a session that ended (NULL: every one); rpc_free answers them. */
void thread_retries_drop(struct session *s);

/* The daemon's store, opened on first use; NULL with *cause when it cannot be opened. */
struct store *thread_api_store(struct session *s, char **cause);
/* A loaded thread of this daemon, or NULL. */
struct store_thread *thread_api_loaded(struct session *s, const char *thread_id);
/* Hold a per-thread pointer (the agent side); free_fn runs when the thread unloads. */
void thread_api_set_agent(
	struct session *s, const char *thread_id, void *agent, void (*free_fn)(void *));
/* The pointer set for a loaded thread, or NULL. */
void *thread_api_agent(struct session *s, const char *thread_id);
/* The permission profile's wire policy a loaded thread runs under (borrowed), or NULL. */
json_t *thread_api_policy(struct session *s, const char *thread_id);
/* Whether thread/start's `config` asked for bypass_hook_trust (upstream's session flag). */
int thread_api_bypass_hooks(struct session *s, const char *thread_id);
/*
 * A loaded thread now runs under profile (borrowed; NULL: none) with its wire policy
 * (borrowed, NULL with no profile): what its answers report and its rollout records.
 */
void thread_api_set_profile(
	struct session *s, const char *thread_id, const char *profile, json_t *policy);
/* Whether this connection still wants the thread's turn notifications (thread/unsubscribe). */
int thread_api_subscribed(struct session *s, const char *thread_id);
/*
 * Free a loaded thread's agent (a running turn ends, reported as interrupted) and keep the
 * thread loaded: the next turn starts a new agent that reads the history from the rollout.
 */
void thread_api_drop_agent(struct session *s, const char *thread_id);
/* Forget a loaded thread: its agent first (a running turn ends), then the store's side. */
void thread_api_unload(struct session *s, const char *thread_id);
/* Daemon exit: every loaded thread unloads, the store closes (before the rpc layer goes). */
void thread_api_shutdown(struct session *s);
/* A connection ended: unload the threads that report to it (docs/transports.md). */
void thread_api_session_end(struct session *s);

/* Answer a store error (r < 0) in upstream's terms: -32600 / -32602 (+ data) / -32603. */
void thread_api_error(struct rpc_req *req, int r, const char *cause, const char *cursor);
/*
 * Answer {"thread": thread, ...rest}: thread (stolen) ends with "turns":[], replaced by turns
 * (JSON text, may be NULL: kept empty) without parsing it; rest (stolen, may be NULL) holds the
 * other members of the result.
 */
void thread_api_reply_thread(
	struct rpc_req *req, json_t *thread, const char *turns, size_t turns_len, json_t *rest);
/* Send a thread notification (params stolen) when the connection is subscribed to it. */
void thread_api_notify(
	struct session *s, const char *thread_id, const char *method, json_t *params);

/* thread_ops.c: mark a thread subscribed again (resume) or not (unsubscribe); 0 or 1 before. */
int thread_api_subscribe(struct session *s, const char *thread_id, int on);

#endif
