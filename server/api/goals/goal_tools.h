/*
 * The goal tools as upstream 0.169 answers them (recorded: tests/fixtures/goals/): a call's
 * arguments read as serde reads them (its error texts, positions included), the checks in
 * upstream's order and words, and the output the model gets: the compact JSON
 * {goal, remainingTokens, completionBudgetReport} (the goal without tokenBudget when it has
 * none), or the plain text of a refusal. Pure: the caller keeps the goal and tells the client.
 */
#ifndef GOAL_TOOLS_H
#define GOAL_TOOLS_H

#include <jansson.h>

/*
 * Run tool name (get_goal, create_goal, update_goal) with its arguments (JSON text, NULL as
 * "{}") on a thread's goal (a ThreadGoal, or NULL). -1 when name is not a goal tool; else 0
 * with *output the model's answer (heap) and *changed the goal to keep from now on (new
 * reference), or NULL when the goal stays as it was. now: seconds since the epoch.
 */
int goal_tools_run(const json_t *goal, const char *thread_id, const char *name, const char *args,
	json_int_t now, char **output, json_t **changed);

/* The model's answer for a goal (or none): {goal, remainingTokens, completionBudgetReport}. */
char *goal_tools_output(const json_t *goal);

#endif
