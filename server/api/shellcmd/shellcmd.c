/*
 * thread/shellCommand: the user's own shell command in a thread (`!cmd` in upstream's TUI), run
 * by agent/user_shell.c unsandboxed, as upstream documents. Order on the wire, as 0.169's: the
 * immediate {} acknowledgement, then (when no turn runs) thread/status/changed(active) and
 * turn/started of a turn of its own, item/started (commandExecution, source userShell), its
 * outputDelta, item/completed, and that turn's end. With a turn running, the item is that
 * turn's, between its other items.
 */
#include <stdlib.h>

#include "api/api.h"
#include "api/session.h"
#include "api/turn.h"
#include "agent/agent.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"
#include "thread/uuidv7.h"

#define SHELLCMD_TIMEOUT_MS (60 * 60 * 1000LL) /* upstream's default: one hour */

/* Whether the command is only blanks (upstream refuses it as empty). */
static int
shellcmd_blank(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r' && *s != '\f' && *s != '\v')
			return 0;
	return 1;
}

static void
shellcmd_run(struct session *s, struct rpc_req *req, json_t *params)
{
	const char *id = json_string_value(json_object_get(params, "threadId"));
	const char *command = json_string_value(json_object_get(params, "command"));
	json_t *tv = json_object_get(params, "timeoutMs"), *none;
	long long timeout = SHELLCMD_TIMEOUT_MS;
	struct turn_thread *tt;
	struct agent_turn_opts o;
	char canon[UUID_STRLEN + 1], *why = NULL;
	int new_turn = 0, r;

	if (json_is_integer(tv)) {
		timeout = (long long)json_integer_value(tv);
		if (timeout < 0) {
			rpc_reply_errorf(req, RPC_INVALID_PARAMS,
				"thread/shellCommand timeoutMs must be non-negative, got %lld",
				timeout);
			return;
		}
	}
	if (uuidv7_check(id, &why) != 0) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST, "invalid thread id: %s",
			why != NULL ? why : "missing");
		free(why);
		return;
	}
	uuidv7_canon(id, canon);
	if ((tt = turn_api_thread(s, canon)) == NULL) {
		rpc_reply_errorf(req, RPC_INVALID_REQUEST, "thread not found: %s", id);
		return;
	}
	if (shellcmd_blank(command)) {
		rpc_reply_error(req, RPC_INVALID_REQUEST, "command must not be empty", NULL);
		return;
	}
	none = json_array();
	r = turn_api_opts(tt, none, &o, &why);
	if (r == 0)
		r = agent_user_shell(
			tt->agent, &o, command, timeout, &turn_sink, tt, &new_turn, &why);
	json_decref(none);
	if (r != 0) {
		rpc_reply_error(req, RPC_INVALID_REQUEST,
			why != NULL ? why : "cannot run the command", NULL);
		free(why);
		return;
	}
	if (new_turn) {
		turn_sink_begin(tt, agent_turn_id(agent_running(tt->agent)));
		tt->shell_only = 1;
	}
	rpc_reply(req, json_object());
	if (new_turn)
		turn_sink_started(tt);
	agent_shell_snapshot_hurry(); /* for the commands after this one */
}

const struct rpc_method api_shellcmd_methods[] = {
	{"thread/shellCommand", shellcmd_run, 0},
	{NULL, NULL, 0},
};
