/*
 * The goal tools' answers (api/goals/goal_tools.h) against upstream 0.169's, recorded by
 * tests/fixtures/goals/record.py: per direct-call scenario, the goal the client set first, then
 * each call's arguments as the model sent them; what the model got back must be upstream's
 * byte for byte (ids recorded as "UUID" and times as 0, which is what the test gives).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/goals/goal_tools.h"
#include "protocol/xmalloc.h"

#define FIXTURES "tests/fixtures/goals/upstream/"

/* The goal thread/goal/set made before the turn, as the daemon keeps it, or NULL. */
static json_t *
gt_initial(const json_t *set)
{
	const json_t *budget = json_object_get(set, "tokenBudget");

	if (!json_is_object(set))
		return NULL;
	return json_pack("{s:s, s:s, s:s, s:O?, s:i, s:i, s:i, s:i}", "threadId", "UUID",
		"objective", json_string_value(json_object_get(set, "objective")), "status",
		json_string_value(json_object_get(set, "status")) ?: "active", "tokenBudget",
		budget, "tokensUsed", 0, "timeUsedSeconds", 0, "createdAt", 0, "updatedAt", 0);
}

/* One recorded scenario: each step's answer is upstream's. */
static void
gt_replay(const char *name)
{
	char *path = xasprintf(FIXTURES "%s", name), *out, *args;
	json_t *fx = json_load_file(path, 0, NULL), *goal, *changed, *step;
	size_t i;

	assert_non_null(fx);
	goal = gt_initial(json_object_get(fx, "goal_set"));
	json_array_foreach(json_object_get(fx, "steps"), i, step)
	{
		const json_t *a = json_object_get(step, "arguments");
		const char *want = json_string_value(json_object_get(
			json_array_get(json_object_get(fx, "model_saw"), i), "output"));

		/* the recorder sent json.dumps(arguments): jansson's default separators */
		args = json_is_string(a) ? xstrdup(json_string_value(a)) : json_dumps(a, 0);
		assert_int_equal(goal_tools_run(goal, "UUID",
					 json_string_value(json_object_get(step, "tool")), args, 0,
					 &out, &changed),
			0);
		if (want == NULL || strcmp(out, want) != 0)
			fail_msg("%s step %zu (%s):\n ours     %s\n upstream %s", name, i, args,
				out, want);
		if (changed != NULL) {
			json_decref(goal);
			goal = changed;
		}
		free(out);
		free(args);
	}
	json_decref(goal);
	json_decref(fx);
	free(path);
}

static void
test_recorded(void **state)
{
	DIR *d = opendir(FIXTURES);
	struct dirent *e;
	int n = 0;

	(void)state;
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		/* code mode's (cm_*) are the integration test's: a script sees them */
		if (strstr(e->d_name, ".json") == NULL || strncmp(e->d_name, "cm_", 3) == 0)
			continue;
		gt_replay(e->d_name);
		n++;
	}
	closedir(d);
	assert_true(n >= 20);
}

/* Not a goal tool: -1, nothing answered; get_goal takes no arguments it reads. */
static void
test_other_tools(void **state)
{
	json_t *changed = NULL;
	char *out = NULL;

	(void)state;
	assert_int_equal(goal_tools_run(NULL, "t", "update_plan", "{}", 0, &out, &changed), -1);
	assert_null(out);
	assert_int_equal(goal_tools_run(NULL, "t", "get_goal", "nonsense", 0, &out, &changed), 0);
	assert_string_equal(out,
		"{\"goal\":null,\"remainingTokens\":null,"
		"\"completionBudgetReport\":null}");
	assert_null(changed);
	free(out);
}

/* What the recordings do not show: the remaining budget once it is spent, a report for a
 * goal that took time, serde's order (a member's type before a missing field). */
static void
test_unrecorded(void **state)
{
	json_t *g = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:i}", "threadId", "t",
		"objective", "o", "status", "complete", "tokenBudget", 10, "tokensUsed", 25,
		"timeUsedSeconds", 3, "createdAt", 1, "updatedAt", 2);
	json_t *changed;
	char *out = goal_tools_output(g);

	(void)state;
	assert_non_null(strstr(out, "\"remainingTokens\":0,"));
	assert_non_null(strstr(out, "\"completionBudgetReport\":\"Goal achieved."));
	free(out);
	json_object_del(g, "tokenBudget");
	out = goal_tools_output(g);
	assert_non_null(strstr(out, "\"completionBudgetReport\":\"Goal achieved."));
	free(out);
	assert_int_equal(goal_tools_run(NULL, "t", "create_goal", "{\"token_budget\": true}", 0,
				 &out, &changed),
		0);
	assert_string_equal(out, "invalid type: boolean `true`, expected i64 at line 1 column 21");
	free(out);
	assert_int_equal(goal_tools_run(NULL, "t", "create_goal", "{\"objective\": \"x\"} x", 0,
				 &out, &changed),
		0);
	assert_null(changed);
	free(out);
	json_decref(g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded),
		cmocka_unit_test(test_other_tools),
		cmocka_unit_test(test_unrecorded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
