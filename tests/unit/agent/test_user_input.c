/*
 * request_user_input's conversions (server/agent/tools/user_input.c): the model's arguments to
 * item/tool/requestUserInput params (isOther forced, isSecret kept, unknown members dropped,
 * upstream's member order), the texts the model gets for arguments upstream refuses (serde's
 * words, its position for a missing top-level field), and the client's answer to the compact
 * output (only the answers kept; {"answers":{}} for anything else).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agent/tools/user_input.h"

/* The params of arguments, compact, or the refusal. */
static char *
ui(const char *args)
{
	json_t *p = NULL;
	char *cause = NULL, *s;

	if (user_input_params(args, "call-1", &p, &cause) != 0) {
		assert_null(p);
		return cause;
	}
	assert_null(cause);
	s = json_dumps(p, JSON_COMPACT);
	json_decref(p);
	return s;
}

static void
expect(const char *args, const char *want)
{
	char *got = ui(args);

	assert_string_equal(got, want);
	free(got);
}

static void
test_params(void **state)
{
	(void)state;
	expect("{\"questions\":[{\"id\":\"c\",\"header\":\"C\",\"question\":\"Which?\","
	       "\"options\":[{\"label\":\"Red\",\"description\":\"Warm.\",\"x\":1}],"
	       "\"isSecret\":true,\"isOther\":false,\"is_secret\":false,\"extra\":1}],\"more\":2}",
		"{\"itemId\":\"call-1\",\"questions\":[{\"id\":\"c\",\"header\":\"C\",\"question\":"
		"\"Which?\",\"isOther\":true,\"isSecret\":true,\"options\":[{\"label\":\"Red\","
		"\"description\":\"Warm.\"}]}],\"isBlocking\":true,\"autoResolutionMs\":null}");
	expect("{\"questions\":[]}",
		"{\"itemId\":\"call-1\",\"questions\":[],\"isBlocking\":true,\"autoResolutionMs\":"
		"null}");
}

static void
test_refusals(void **state)
{
	(void)state;
	/* upstream's, recorded (tests/fixtures/user_input/upstream/) */
	expect("{\"q\":1}",
		"failed to parse function arguments: missing field `questions` at line 1 column 7");
	expect("{\n \"q\": 1\n}\n",
		"failed to parse function arguments: missing field `questions` at line 3 column 1");
	expect("{\"questions\":[{\"id\":\"a\",\"header\":\"A\",\"question\":\"Q\"}]}",
		USER_INPUT_NO_OPTIONS);
	expect("{\"questions\":[{\"id\":\"a\",\"header\":\"A\",\"question\":\"Q\","
	       "\"options\":null}]}",
		USER_INPUT_NO_OPTIONS);
	expect("{\"questions\":[{\"id\":\"a\",\"header\":\"A\",\"question\":\"Q\","
	       "\"options\":[]}]}",
		USER_INPUT_NO_OPTIONS);
	/* serde's words for the rest */
	expect("{\"questions\":[{\"id\":\"a\",\"question\":\"Q\"}]}",
		"failed to parse function arguments: missing field `header`");
	expect("{\"questions\":[{\"id\":1,\"header\":\"A\",\"question\":\"Q\"}]}",
		"failed to parse function arguments: invalid type: integer `1`, expected a string");
	expect("{\"questions\":{}}",
		"failed to parse function arguments: invalid type: map, expected a sequence");
	expect("[1]",
		"failed to parse function arguments: invalid type: sequence, expected "
		"struct RequestUserInputArgs");
	expect("{\"questions\":[{\"id\":\"a\",\"header\":\"A\",\"question\":\"Q\",\"isSecret\":"
	       "\"yes\",\"options\":[{\"label\":\"x\",\"description\":\"y\"}]}]}",
		"failed to parse function arguments: invalid type: string \"yes\", expected a "
		"boolean");
	expect("{\"questions\":[{\"id\":\"a\",\"header\":\"A\",\"question\":\"Q\","
	       "\"options\":[{\"label\":\"x\"}]}]}",
		"failed to parse function arguments: missing field `description`");
	/* a parse error is reported before missing options */
	expect("{\"questions\":[{\"id\":\"a\",\"header\":\"A\",\"question\":\"Q\"},{\"id\":\"b\"}]}",
		"failed to parse function arguments: missing field `header`");
}

static void
output(const char *result, const char *want)
{
	json_t *r = result != NULL ? json_loads(result, 0, NULL) : NULL;
	char *got = user_input_output(r);

	assert_string_equal(got, want);
	free(got);
	json_decref(r);
}

static void
test_output(void **state)
{
	(void)state;
	output("{\"answers\":{\"c\":{\"answers\":[\"Red (Recommended)\"]}}}",
		"{\"answers\":{\"c\":{\"answers\":[\"Red (Recommended)\"]}}}");
	/* only the answers are kept, in the client's order */
	output("{\"answers\":{\"b\":{\"answers\":[\"x\",\"user_note: y\"],\"extra\":1},"
	       "\"a\":{\"answers\":[]}},\"more\":2}",
		"{\"answers\":{\"b\":{\"answers\":[\"x\",\"user_note: y\"]},\"a\":{\"answers\":[]}}}");
	output(NULL, USER_INPUT_NO_ANSWERS);
	output("{\"nope\":1}", USER_INPUT_NO_ANSWERS);
	output("{\"answers\":{\"a\":{\"answers\":[1]}}}", USER_INPUT_NO_ANSWERS);
	output("{\"answers\":{\"a\":{}}}", USER_INPUT_NO_ANSWERS);
	output("{\"answers\":{}}", "{\"answers\":{}}");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_output),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
