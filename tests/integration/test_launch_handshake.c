/*
 * The handshake and the experimental contract as upstream 0.169 keeps them, driven on the real
 * binary: no `initialized` needed, string ids, unknown top-level members (`trace`, `jsonrpc`)
 * ignored, optOutNotificationMethods honoured, experimental methods and params members refused
 * without experimentalApi with upstream's words (observed on 0.169) and let through with it,
 * and the members upstream puts in every thread/start, resume and fork answer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "protocol/xmalloc.h"

#define HS_MS 10000

/* initialize as a raw line (string id, extra top-level members); asserts success. */
static void
hs_initialize(struct asc *c, const char *caps)
{
	char *line = xasprintf(
		"{\"jsonrpc\":\"2.0\",\"id\":\"init-1\",\"method\":\"initialize\",\"trace\":"
		"{\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\"},"
		"\"params\":{\"clientInfo\":{\"name\":\"hs\",\"version\":\"1\"},"
		"\"capabilities\":%s}}",
		caps);
	json_t *id = json_string("init-1"), *r;

	assert_int_equal(asc_send_line(c, line), 0);
	r = asc_wait_response_id(c, id, asc_timeout(HS_MS));
	asc_assert_result(r);
	json_decref(r);
	json_decref(id);
	free(line);
}

static json_t *
hs_call(struct asc *c, const char *method, json_t *params)
{
	long long id = asc_request(c, method, params);

	return asc_wait_response(c, id, asc_timeout(HS_MS));
}

/* The request fails with upstream's gate text. */
static void
hs_gated(struct asc *c, const char *method, json_t *params, const char *what)
{
	char *want = xasprintf("%s requires experimentalApi capability", what);
	long long id = asc_request(c, method, params);
	char *id_text = xasprintf("%lld", id);
	json_t *r = asc_wait_response(c, id, asc_timeout(HS_MS));

	asc_expect_error(r, -32600, want, id_text);
	json_decref(r);
	free(id_text);
	free(want);
}

/* No `initialized`, string ids and a `trace` member: requests are served all the same. */
static void
test_string_ids_trace_no_initialized(void **state)
{
	struct asc *c = asc_spawn(NULL);
	json_t *id = json_string("start-\"1\""), *r;
	char *line;

	(void)state;
	hs_initialize(c, "{}");
	line = xasprintf("{\"id\":\"start-\\\"1\\\"\",\"method\":\"thread/start\",\"trace\":"
			 "{\"traceparent\":null},\"params\":{\"cwd\":\"%s\"}}",
		asc_dir(c));
	assert_int_equal(asc_send_line(c, line), 0);
	r = asc_wait_response_id(c, id, asc_timeout(HS_MS));
	assert_non_null(json_object_get(asc_assert_result(r), "thread"));
	json_decref(r);
	json_decref(id);
	free(line);
	asc_free(c);
}

/* A method named in optOutNotificationMethods never reaches that connection. */
static void
test_opt_out_never_sent(void **state)
{
	struct asc *c = asc_spawn(NULL);
	json_t *r, *m;
	int seen_started = 0;

	(void)state;
	hs_initialize(c, "{\"optOutNotificationMethods\":[\"thread/started\"]}");
	for (int k = 0; k < 3; k++) {
		r = hs_call(c, "thread/start", json_pack("{s:s}", "cwd", asc_dir(c)));
		asc_assert_result(r);
		json_decref(r);
	}
	asc_sync(c, asc_timeout(HS_MS));
	while ((m = asc_next(c, 0)) != NULL) {
		seen_started |= json_object_get(m, "method") != NULL &&
			strcmp(json_string_value(json_object_get(m, "method")), "thread/started") ==
				0;
		json_decref(m);
	}
	assert_false(seen_started);
	asc_free(c);
}

/* Without experimentalApi: upstream's -32600 for experimental methods and set members. */
static void
test_gate_without_capability(void **state)
{
	struct asc *c = asc_spawn(NULL);
	json_t *r;

	(void)state;
	hs_initialize(c, "{\"experimentalApi\":false}");
	/* methods, implemented here or not */
	hs_gated(c, "collaborationMode/list", json_object(), "collaborationMode/list");
	hs_gated(c, "fuzzyFileSearch/sessionStart",
		json_pack("{s:s, s:[]}", "sessionId", "s", "roots"),
		"fuzzyFileSearch/sessionStart");
	hs_gated(c, "mock/experimentalMethod", json_object(), "mock/experimentalMethod");
	/* members: set (an empty array counts), even where we ignore them */
	hs_gated(c, "thread/start", json_pack("{s:[]}", "dynamicTools"),
		"thread/start.dynamicTools");
	hs_gated(c, "thread/start", json_pack("{s:[s]}", "runtimeWorkspaceRoots", "/tmp"),
		"thread/start.runtimeWorkspaceRoots");
	hs_gated(c, "thread/start", json_pack("{s:b}", "daybreakEnabled", 0),
		"thread/start.daybreakEnabled");
	hs_gated(c, "thread/list", json_pack("{s:b}", "includeAttachedThreads", 1),
		"thread/list.includeAttachedThreads");
	hs_gated(c, "command/exec",
		json_pack("{s:[s], s:s}", "command", "true", "permissionProfile", ":read-only"),
		"command/exec.permissionProfile");
	/* null, and false for a plain boolean, are as absent */
	r = hs_call(c, "thread/start",
		json_pack("{s:s, s:n, s:b, s:n}", "cwd", asc_dir(c), "dynamicTools",
			"experimentalRawEvents", 0, "historyMode"));
	asc_assert_result(r);
	json_decref(r);
	r = hs_call(c, "thread/list", json_pack("{s:b}", "includeAttachedThreads", 0));
	asc_assert_result(r);
	json_decref(r);
	asc_free(c);
}

/* Before initialize, an experimental method is refused as any other: Not initialized. */
static void
test_gate_before_initialize(void **state)
{
	struct asc *c = asc_spawn(NULL);
	json_t *r;

	(void)state;
	r = hs_call(c, "collaborationMode/list", json_object());
	asc_expect_error(r, -32600, "Not initialized", "1");
	json_decref(r);
	asc_free(c);
}

/* With experimentalApi the same requests pass the gate. */
static void
test_gate_with_capability(void **state)
{
	struct asc *c = asc_spawn(NULL);
	json_t *r;

	(void)state;
	hs_initialize(c, "{\"experimentalApi\":true}");
	r = hs_call(c, "thread/start",
		json_pack("{s:s, s:[], s:[s], s:b}", "cwd", asc_dir(c), "dynamicTools",
			"runtimeWorkspaceRoots", asc_dir(c), "experimentalRawEvents", 1));
	asc_assert_result(r);
	json_decref(r);
	r = hs_call(c, "fuzzyFileSearch/sessionStart",
		json_pack("{s:s, s:[s]}", "sessionId", "s", "roots", asc_dir(c)));
	asc_assert_result(r);
	json_decref(r);
	/* implemented: answered */
	r = hs_call(c, "collaborationMode/list", json_object());
	asc_assert_result(r);
	json_decref(r);
	/* not implemented: no longer the gate's refusal, but -32601 */
	r = hs_call(c, "thread/queue/list", json_object());
	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(r, "error"), "code")), -32601);
	json_decref(r);
	asc_free(c);
}

/* The four members upstream sends in start, resume and fork answers, with its values. */
static void
hs_members(const json_t *res, const char *cwd, int implicit_profile)
{
	json_t *roots = json_object_get(res, "runtimeWorkspaceRoots");
	json_t *profile = json_object_get(res, "activePermissionProfile");

	assert_true(json_is_array(json_object_get(res, "disabledPluginIds")));
	assert_int_equal(json_array_size(json_object_get(res, "disabledPluginIds")), 0);
	assert_int_equal(json_array_size(roots), 1);
	assert_string_equal(json_string_value(json_array_get(roots, 0)), cwd);
	assert_string_equal(
		json_string_value(json_object_get(res, "multiAgentMode")), "explicitRequestOnly");
	assert_non_null(profile);
	if (implicit_profile) {
		assert_string_equal(
			json_string_value(json_object_get(profile, "id")), ":read-only");
		assert_true(json_is_null(json_object_get(profile, "extends")));
	} else
		assert_true(json_is_null(profile));
}

static void
test_thread_answers_members(void **state)
{
	struct asc *c = asc_spawn(NULL);
	const char *dir = asc_dir(c);
	json_t *r;
	char *id;

	(void)state;
	hs_initialize(c, "{}");
	r = hs_call(c, "thread/start", json_pack("{s:s}", "cwd", dir));
	hs_members(asc_assert_result(r), dir, 1);
	id = xstrdup(json_string_value(
		json_object_get(json_object_get(asc_assert_result(r), "thread"), "id")));
	json_decref(r);
	/* a sandbox mode chosen: no profile produced it */
	r = hs_call(c, "thread/start",
		json_pack("{s:s, s:s}", "cwd", dir, "sandbox", "workspace-write"));
	hs_members(asc_assert_result(r), dir, 0);
	json_decref(r);
	r = hs_call(c, "thread/fork", json_pack("{s:s}", "threadId", id));
	hs_members(asc_assert_result(r), dir, 1);
	json_decref(r);
	r = hs_call(
		c, "thread/fork", json_pack("{s:s, s:s}", "threadId", id, "sandbox", "read-only"));
	hs_members(asc_assert_result(r), dir, 0);
	json_decref(r);
	r = hs_call(c, "thread/resume", json_pack("{s:s}", "threadId", id));
	hs_members(asc_assert_result(r), dir, 1);
	json_decref(r);
	free(id);
	asc_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_string_ids_trace_no_initialized),
		cmocka_unit_test(test_opt_out_never_sent),
		cmocka_unit_test(test_gate_without_capability),
		cmocka_unit_test(test_gate_before_initialize),
		cmocka_unit_test(test_gate_with_capability),
		cmocka_unit_test(test_thread_answers_members),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
