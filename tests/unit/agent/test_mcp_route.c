/*
 * A model's call on its way to an MCP tool (server/agent/tools/mcp_route.c): which wire routes
 * it to the MCP tools, its arguments (empty as {}, bad JSON answered in upstream's words) and
 * the tools/call _meta.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agent/tools/mcp_route.h"

static json_t *
call(const char *text)
{
	json_t *c = json_loads(text, 0, NULL);

	assert_non_null(c);
	return c;
}

static void
test_wire(void **state)
{
	json_t *ns =
		call("{\"type\":\"function_call\",\"name\":\"echo\",\"namespace\":\"mcp__t\"}");
	json_t *flat = call("{\"type\":\"function_call\",\"name\":\"mcp__t__echo\"}");
	json_t *custom = call("{\"type\":\"custom_tool_call\",\"name\":\"apply_patch\"}");

	(void)state;
	assert_true(mcp_route_wire(ns, 0));
	assert_false(mcp_route_wire(flat, 0)); /* Responses: a flat name is no MCP tool */
	assert_true(mcp_route_wire(flat, 1));
	assert_false(mcp_route_wire(ns, 1)); /* Chat: no namespaces */
	assert_true(mcp_route_function_call(ns));
	assert_false(mcp_route_function_call(custom));
	assert_false(mcp_route_function_call(NULL));
	json_decref(ns);
	json_decref(flat);
	json_decref(custom);
}

static void
test_args(void **state)
{
	json_t *c, *a;
	char *msg;

	(void)state;
	c = call("{\"arguments\":\"{\\\"x\\\":1}\"}");
	a = mcp_route_args(c, &msg);
	assert_null(msg);
	assert_int_equal(json_integer_value(json_object_get(a, "x")), 1);
	json_decref(a);
	json_decref(c);
	/* empty or absent: no arguments, an empty object */
	c = call("{\"arguments\":\"\"}");
	a = mcp_route_args(c, &msg);
	assert_true(json_is_object(a) && json_object_size(a) == 0);
	json_decref(a);
	json_decref(c);
	c = call("{}");
	a = mcp_route_args(c, &msg);
	assert_true(json_is_object(a) && json_object_size(a) == 0);
	json_decref(a);
	json_decref(c);
	/* any JSON value is read; what is no JSON is answered */
	c = call("{\"arguments\":\"[1]\"}");
	a = mcp_route_args(c, &msg);
	assert_true(json_is_array(a));
	json_decref(a);
	json_decref(c);
	c = call("{\"arguments\":\"{oops\"}");
	assert_null(mcp_route_args(c, &msg));
	assert_non_null(msg);
	assert_int_equal(strncmp(msg, "failed to parse function arguments: ", 36), 0);
	free(msg);
	json_decref(c);
}

static void
test_meta(void **state)
{
	json_t *m = mcp_route_meta("call-1", "thr");

	(void)state;
	assert_string_equal(json_string_value(json_object_get(m, "callId")), "call-1");
	assert_string_equal(json_string_value(json_object_get(m, "threadId")), "thr");
	assert_string_equal(json_string_value(json_object_get(m, "sessionId")), "thr");
	assert_int_equal(json_object_size(m), 3);
	json_decref(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wire),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_meta),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
