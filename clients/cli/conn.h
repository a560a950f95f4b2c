/*
 * One JSON-RPC connection to a daemon that app-client spawns as its child (or reaches on a
 * socket, --connect), shared by every
 * subcommand (exec now; chat and threads later). Requests carry a completion callback; -32001
 * answers are retried with backoff and jitter; notifications and server-to-client requests go to
 * the hooks. When the daemon is gone the `closed` hook says why in one line, and every pending
 * request completes with both result and error NULL.
 */
#ifndef CONN_H
#define CONN_H

#include <ev.h>
#include <jansson.h>

struct conn;

struct conn_hooks {
	/* A server notification (params borrowed, may be NULL). */
	void (*notification)(void *arg, const char *method, json_t *params);
	/*
	 * A server-to-client request: answer it with conn_reply or conn_reply_error. NULL: the
	 * safe default (approvals declined, anything else refused with -32601).
	 */
	void (*request)(void *arg, const json_t *id, const char *method, json_t *params);
	/* The daemon exited, died or could not start; why is one human-readable line. */
	void (*closed)(void *arg, const char *why);
	void *arg;
};

/*
 * A request's completion: result (success) or error (the JSON-RPC error object), both borrowed;
 * both NULL when the connection ended before the answer.
 */
typedef void (*conn_cb)(void *arg, json_t *result, json_t *error);

/*
 * conn_spawn connects from now on to a daemon listening on url (ws://HOST:PORT or
 * unix:///PATH, its --listen), with the bearer token its --ws-auth asks for (may be NULL);
 * both borrowed for the program's life. url NULL: spawn again.
 */
void conn_set_target(const char *url, const char *token);
/*
 * Start the daemon: $APP_SERVER_BIN, else app-server next to this program, else app-server on
 * PATH; it gets its own session so terminal signals do not reach it. With conn_set_target, connect
 * to that daemon instead (blocking at most 10 s for the connect and the upgrade). NULL with *cause.
 */
struct conn *conn_spawn(struct ev_loop *loop, const struct conn_hooks *hooks, char **cause);
/* Send a request (params stolen, NULL for {}); 0, or -EPIPE when the connection is closed. */
int conn_request(struct conn *c, const char *method, json_t *params, conn_cb cb, void *arg);
/* Send a notification (params stolen, may be NULL). */
void conn_notify(struct conn *c, const char *method, json_t *params);
/* Answer a server request: a result (stolen) or an error. */
void conn_reply(struct conn *c, const json_t *id, json_t *result);
void conn_reply_error(struct conn *c, const json_t *id, int code, const char *message);
/* The safe answer to a server request nobody handles (new reference), or NULL to refuse it. */
json_t *conn_default_answer(const char *method);
/*
 * Close the daemon's stdin after what is queued (blocking at most 1 s if its pipe is full); the
 * daemon then exits and `closed` fires.
 */
void conn_close(struct conn *c);
/* True until the daemon is gone. */
int conn_alive(const struct conn *c);
/* Stop the daemon if still running (SIGKILL) and free everything. Accepts NULL. */
void conn_free(struct conn *c);

#endif
