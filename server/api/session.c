/* One connection's state (session.h): each area's part made, resumed, killed and freed. */
#include <stdlib.h>

#include "api/account/account_api.h"
#include "api/mcp/mcp_api.h"
#include "api.h"
#include "api/subscribers/subscribers.h"
#include "protocol/xmalloc.h"
#include "session.h"
#include "turn.h"

struct session *
session_new(struct ev_loop *loop, struct outq *q, struct rpc *rpc)
{
	struct session *s = xcalloc(1, sizeof *s);

	s->rpc = rpc;
	s->loop = loop;
	s->q = q;
	s->engine_q = q;
	s->exec = command_exec_new(s);
	s->fs = fs_session_new(s);
	account_api_attach(s);
	subs_session_add(s);
	return s;
}

void
session_free(struct session *s)
{
	if (s == NULL)
		return;
	subs_session_remove(s);
	account_api_detach(s);
	mcp_api_session_end(s);
	command_exec_free(s->exec);
	fs_session_free(s->fs);
	skills_session_free(s->skills);
	free(s->originator);
	free(s->user_agent);
	json_decref(s->goals);
	free(s);
}

void
session_kill(struct session *s)
{
	command_exec_kill_all(s->exec);
	fs_session_kill(s->fs);
}

void
session_resume(struct session *s)
{
	command_exec_resume(s->exec);
	turn_api_resume(s);
}

size_t
session_busy(const struct session *s)
{
	return command_exec_count(s->exec) + fs_session_busy(s->fs);
}

void
session_config_warnings(struct session *s)
{
	config_api_warnings(s->rpc);
}
