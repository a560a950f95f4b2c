/*
 * One client connection's state, every area's: what the JSON-RPC layer hands back to each
 * handler (rpc.h's opaque struct session). The daemon makes one per connection and frees it
 * when the connection ends.
 */
#ifndef SESSION_H
#define SESSION_H

#include <stddef.h>

#include <ev.h>
#include <jansson.h>

struct outq;
struct rpc;
struct command_exec;
struct fs_session;

struct session {
	struct rpc *rpc;
	struct ev_loop *loop;
	struct outq *q;
	/*
	 * The queue whose congestion pauses the engine work of the threads this connection
	 * drives (their commands' output): q on stdio; NULL for a listener's connection, whose
	 * threads are shared and must not stall for one slow subscriber (docs/transports.md).
	 */
	struct outq *engine_q;
	struct command_exec *exec;     /* command/exec's processes (command_exec.c) */
	struct fs_session *fs;	       /* workers, watches and searches of the fs area (fs.c) */
	struct turn_thread *turns;     /* loaded threads that ran a turn (turn.c) */
	struct skills_session *skills; /* skills/ jobs and skills/changed watches (skills.c) */
	char *originator;	       /* initialize's clientInfo.name (model request headers) */
	char *user_agent;	       /* the userAgent initialize answered */
	json_t *goals;		       /* thread id -> its ThreadGoal (goals.c), or NULL */
};

struct session *session_new(struct ev_loop *loop, struct outq *q, struct rpc *rpc);
/* Free every area's state; what still runs is killed (its requests are rpc_free's). */
void session_free(struct session *s);
/* Shutdown or disconnect: kill everything still running; answers follow as it ends. */
void session_kill(struct session *s);
/* The output queue drained: resume whatever was paused for it. */
void session_resume(struct session *s);
/* Work still running that will produce answers (processes, ...). */
size_t session_busy(const struct session *s);
/* After the initialize answer went out: configWarning for every configuration problem. */
void session_config_warnings(struct session *s);

#endif
