/*
 * A goal tool called by the model in a running turn (turn_sink.c): it acts on the thread's goal
 * that thread/goal/get, set and clear see (struct session's goals), and a change is told to
 * the client as upstream tells it: thread/goal/updated with the turn's id.
 */
#ifndef GOAL_TURN_H
#define GOAL_TURN_H

struct session;

/* The model's answer (heap) to tool name with args, or NULL when name is not a goal tool. */
char *goal_turn_tool(struct session *s, const char *thread_id, const char *turn_id,
	const char *name, const char *args);

#endif
