/*
 * update_plan (server/agent/tools/plan_update.c): arguments to turn/plan/updated params
 * (in_progress becomes inProgress as 0.169 shows it, notes §8), the plan item text, and the error
 * texts the model gets for arguments that do not parse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/tools/plan_update.h"

/* A full plan: params in upstream's key order, the checklist text. */
static void
test_plan(void **state)
{
	struct plan_update p;
	char *cause = NULL, *s;
	json_t *j;

	assert_int_equal(plan_update_parse("{\"explanation\":\"Two steps\",\"plan\":[{\"step\":"
					   "\"Read code\",\"status\":\"completed\"},{\"step\":"
					   "\"Fix bug\",\"status\":\"in_progress\"},{\"step\":"
					   "\"Test\",\"status\":\"pending\"}]}",
				 &p, &cause),
		0);
	j = plan_update_params(&p, "TH", "T");
	s = json_dumps(j, JSON_COMPACT);
	assert_string_equal(s,
		"{\"threadId\":\"TH\",\"turnId\":\"T\",\"explanation\":\"Two "
		"steps\",\"plan\":[{\"step\":\"Read code\",\"status\":\"completed\"},"
		"{\"step\":\"Fix bug\",\"status\":\"inProgress\"},{\"step\":\"Test\","
		"\"status\":\"pending\"}]}");
	free(s);
	json_decref(j);
	s = plan_update_text(&p);
	assert_string_equal(s, "Two steps\n\n- [x] Read code\n- [~] Fix bug\n- [ ] Test");
	free(s);
	plan_update_free(&p);

	assert_int_equal(plan_update_parse("{\"explanation\":null,\"plan\":[]}", &p, NULL), 0);
	j = plan_update_params(&p, "TH", "T");
	assert_true(json_is_null(json_object_get(j, "explanation")));
	assert_int_equal(json_array_size(json_object_get(j, "plan")), 0);
	json_decref(j);
	s = plan_update_text(&p);
	assert_string_equal(s, "");
	free(s);
	plan_update_free(&p);
	assert_string_equal(PLAN_UPDATE_OUTPUT, "Plan updated");
}

/* What the model is told when the arguments do not parse. */
static void
test_errors(void **state)
{
	static const struct {
		const char *args;
		const char *cause;
	} t[] = {
		{"{\"explanation\":\"x\"}",
			"failed to parse function arguments: missing field `plan`"},
		{"{\"plan\":[{\"status\":\"pending\"}]}",
			"failed to parse function arguments: missing field `step`"},
		{"{\"plan\":[{\"step\":\"a\"}]}",
			"failed to parse function arguments: missing field `status`"},
		{"{\"plan\":[{\"step\":\"a\",\"status\":\"inProgress\"}]}",
			"failed to parse function arguments: unknown variant `inProgress`, expected one "
			"of `pending`, `in_progress`, `completed`"},
		{"{\"plan\":{}}",
			"failed to parse function arguments: invalid type for `plan`, expected a "
			"sequence"},
	};
	struct plan_update p;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *cause = NULL;

		assert_int_equal(plan_update_parse(t[i].args, &p, &cause), -EINVAL);
		assert_string_equal(cause, t[i].cause);
		assert_int_equal(p.n, 0);
		free(cause);
	}
	{
		char *cause = NULL;

		assert_int_equal(plan_update_parse("{not json", &p, &cause), -EINVAL);
		assert_non_null(strstr(cause, "failed to parse function arguments: "));
		free(cause);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
