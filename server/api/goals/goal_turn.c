/* The goal tools on a session's goals (goal_turn.h). */
#include <stdlib.h>
#include <time.h>

#include "goal_turn.h"
#include "goal_tools.h"
#include "api/session.h"
#include "api/thread.h"

char *
goal_turn_tool(struct session *s, const char *thread_id, const char *turn_id, const char *name,
	const char *args)
{
	json_t *changed;
	char *out;

	if (goal_tools_run(json_object_get(s->goals, thread_id), thread_id, name, args,
		    (json_int_t)time(NULL), &out, &changed) != 0)
		return NULL;
	if (changed != NULL) {
		if (s->goals == NULL)
			s->goals = json_object();
		json_object_set(s->goals, thread_id, changed);
		thread_api_notify(s, thread_id, "thread/goal/updated",
			json_pack("{s:s, s:s?, s:o}", "threadId", thread_id, "turnId", turn_id,
				"goal", changed));
	}
	return out;
}
