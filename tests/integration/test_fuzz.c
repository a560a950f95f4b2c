/*
 * Robustness of the JSON-RPC input path of the real daemon: seeded, deterministic mutations of
 * valid messages sent pipelined with known-good sentinels between them, duplicate ids in
 * flight, and client responses of odd shapes. The rule kept: every line gets exactly the
 * answers its parsed form calls for (docs/protocol.md, "Error codes and messages"), once each,
 * in bounded time; a response (no "method", a "result" or an "error") is never answered,
 * whatever its id; the daemon keeps serving and exits 0 on stdin EOF. The generator is
 * fuzz_gen.c, the oracle and the runs fuzz_check.c; the harness checks every line the daemon
 * writes against the reference schema. Mutated command/exec requests that would run something
 * are defused to `true` under dangerFullAccess or readOnly before they are sent, so no fuzz
 * line can run a real command.
 *
 * APP_SERVER_FUZZ_SEED (any base strtoull reads) and APP_SERVER_FUZZ_LINES override the seed
 * and the line count; APP_SERVER_FUZZ_ISOLATE=1 sends the lines one at a time and names the
 * first one answered wrongly (a pipelined mismatch does that by itself).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "harness.h"

static const struct asc_opts fz_quiet = {.capture_stderr = 1}; /* logs to a file */

/* Seeded mutations, pipelined: before the handshake with a small line limit, then after it. */
static void
test_fuzz_pipelined(void **state)
{
	const char *iso = getenv("APP_SERVER_FUZZ_ISOLATE");
	int isolate = iso != NULL && strcmp(iso, "1") == 0;
	uint64_t seed = fz_seed();
	size_t n = fz_lines();
	const struct fz_plan plans[] = {
		{"before the handshake, 4 KiB lines", seed ^ 0x9e3779b97f4a7c15ULL, n / 10, 0,
			4096},
		{"after the handshake", seed, n, 1, 0},
	};

	print_message("fuzz seed 0x%" PRIx64 " (APP_SERVER_FUZZ_SEED=... to change), %zu lines%s\n",
		seed, n + n / 10, isolate ? ", one at a time" : "");
	for (size_t i = 0; i < FZ_NITEMS(plans); i++)
		fz_play(&plans[i], isolate);
}

/* Build command/exec params: argv (NULL-terminated) under dangerFullAccess. */
static json_t *
fz_exec_params(const char *arg0, ...)
{
	json_t *argv = json_array();
	const char *a;
	va_list ap;

	json_array_append_new(argv, json_string(arg0));
	va_start(ap, arg0);
	while ((a = va_arg(ap, const char *)) != NULL)
		json_array_append_new(argv, json_string(a));
	va_end(ap);
	return json_pack("{s:o, s:{s:s}, s:i}", "command", argv, "sandboxPolicy", "type",
		"dangerFullAccess", "timeoutMs", 10000);
}

/* Assert a command/exec success with exit code 0. */
static void
fz_assert_exit0(json_t *m, const char *what)
{
	json_t *r = asc_assert_result(m);

	if (json_integer_value(json_object_get(r, "exitCode")) != 0 ||
		!json_is_integer(json_object_get(r, "exitCode")))
		fail_msg("%s: expected exit code 0, got %s", what,
			json_dumps(m, JSON_COMPACT)); /* leaks only on failure */
}

/* Requests sharing an id while one still runs: each is answered once, in its own type. */
static void
test_duplicate_ids_in_flight(void **state)
{
	struct asc *c = asc_spawn(&fz_quiet);
	json_t *id = json_string("dup"), *num = json_integer(7), *m, *r;
	long long t0;

	asc_initialize(c);
	/* Two execs with one id: the later, quicker one answers first; both answer. */
	t0 = asc_now_ms();
	asc_request_id(c, id, "command/exec", fz_exec_params("sleep", "0.2", NULL));
	asc_request_id(c, id, "command/exec", fz_exec_params("true", NULL));
	m = asc_wait_response_id(c, id, asc_timeout(FZ_REPLY_MS));
	fz_assert_exit0(m, "first answer to \"dup\"");
	json_decref(m);
	m = asc_wait_response_id(c, id, asc_timeout(FZ_REPLY_MS));
	fz_assert_exit0(m, "second answer to \"dup\"");
	json_decref(m);
	if (asc_now_ms() - t0 < 190)
		fail_msg("both answers to \"dup\" came before sleep 0.2 could end (%lld ms)",
			asc_now_ms() - t0);
	assert_int_equal(asc_sync(c, asc_timeout(FZ_REPLY_MS)), 0);

	/*
	 * One integer id on an exec and, while it runs, on two quick requests in turn: each gets
	 * its own answer, of its own type, and the exec's still comes.
	 */
	t0 = asc_now_ms();
	asc_request_id(c, num, "command/exec", fz_exec_params("sleep", "0.3", NULL));
	asc_request_id(c, num, "model/list", json_object());
	m = asc_wait_response_id(c, num, asc_timeout(FZ_REPLY_MS));
	assert_true(json_is_array(json_object_get(asc_assert_result(m), "data")));
	json_decref(m);
	asc_request_id(c, num, "account/read", json_object());
	m = asc_wait_response_id(c, num, asc_timeout(FZ_REPLY_MS));
	r = asc_assert_result(m);
	assert_true(json_is_boolean(json_object_get(r, "requiresOpenaiAuth")));
	json_decref(m);
	m = asc_wait_response_id(c, num, asc_timeout(FZ_REPLY_MS));
	fz_assert_exit0(m, "the exec sharing id 7");
	json_decref(m);
	if (asc_now_ms() - t0 < 290)
		fail_msg("the exec's answer came before sleep 0.3 could end");
	/* Exactly those: nothing more for either id. */
	assert_int_equal(asc_sync(c, asc_timeout(FZ_REPLY_MS)), 0);
	if ((m = asc_next(c, FZ_QUIET_MS)) != NULL)
		fail_msg("stray message after duplicate ids: %s", asc_raw(c));
	json_decref(id);
	json_decref(num);
	asc_free(c);
}

/* Client responses of every odd shape among requests with extra keys: only requests answered. */
static void
test_client_responses_and_extra_keys(void **state)
{
	/* Not requests: the daemon must not answer any of these. */
	static const char *const quiet[] = {
		/* Answers reusing the id of a request of ours still running. */
		"{\"id\":50,\"result\":{\"exitCode\":0,\"stdout\":\"\",\"stderr\":\"\"}}",
		"{\"id\":50,\"error\":{\"code\":-32603,\"message\":\"client failed\"}}",
		/* Error responses, with data, for ids never used. */
		"{\"id\":\"srv-77\",\"error\":{\"code\":-32000,\"message\":\"denied\","
		"\"data\":{\"why\":[1,2]}}}",
		"{\"id\":-3,\"error\":{\"code\":1,\"message\":\"\"}}",
		/* Both result and error. */
		"{\"id\":12,\"result\":{\"decision\":\"accept\"},\"error\":{\"code\":1,"
		"\"message\":\"both\"}}",
		"{\"id\":13,\"result\":null,\"error\":null}",
		/* Extra top-level keys on responses and notifications. */
		"{\"jsonrpc\":\"2.0\",\"id\":14,\"result\":{},\"extra\":[1,{\"a\":null}],"
		"\"emittedAtMs\":5}",
		"{\"id\":\"15\",\"error\":{\"code\":1,\"message\":\"m\"},\"params\":{\"x\":1}}",
		"{\"method\":\"initialized\",\"params\":{},\"extra\":true,\"result\":{}}",
		/* Responses whose id is unusable or absent: never answered either. */
		"{\"id\":1.5,\"result\":{}}",
		"{\"id\":[50],\"error\":{\"code\":1,\"message\":\"m\"}}",
		"{\"result\":{\"decision\":\"accept\"}}"};
	/* Requests with extra top-level keys: answered as requests. */
	static const char *const asked[] = {
		"{\"id\":60,\"method\":\"model/list\",\"params\":{},\"extra\":{\"a\":1},"
		"\"trace\":[1,2],\"jsonrpc\":\"2.0\"}",
		"{\"id\":61,\"method\":\"account/read\",\"params\":{},\"result\":{},"
		"\"error\":{\"code\":1,\"message\":\"m\"}}",
		"{\"id\":\"62\",\"method\":\"config/read\",\"params\":{\"includeLayers\":false},"
		"\"emittedAtMs\":1,\"id2\":62}",
		"{\"id\":63,\"method\":\"fz/unknown\",\"extra\":null}"};
	static const char *const null_ids[] = {
		"{\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}",
		"{\"id\":null,\"result\":{}}"};
	struct asc *c = asc_spawn(&fz_quiet);
	json_t *exec_id = json_integer(50), *m, *id;
	int got[5] = {0}, slot = 0, i;
	long long t0;

	asc_initialize(c);
	t0 = asc_now_ms();
	asc_request_id(c, exec_id, "command/exec", fz_exec_params("sleep", "0.2", NULL));
	/* Interleaved, so every answer must be told from a non-answer. */
	for (size_t k = 0; k < FZ_NITEMS(quiet); k++) {
		assert_int_equal(asc_send_line(c, quiet[k]), 0);
		if (k < FZ_NITEMS(asked))
			assert_int_equal(asc_send_line(c, asked[k]), 0);
	}
	/* Exactly five answers: 60, 61, "62", 63 and the exec's 50, once each. */
	for (i = 0; i < 5; i++) {
		if ((m = asc_next(c, asc_timeout(FZ_REPLY_MS))) == NULL)
			fail_msg("only %d of 5 answers came", i);
		id = json_object_get(m, "id");
		if (json_equal(id, exec_id)) {
			slot = 0;
			fz_assert_exit0(m, "the exec whose id client responses reused");
			if (asc_now_ms() - t0 < 190)
				fail_msg("a client response answered the running exec: %s",
					asc_raw(c));
		} else if (json_integer_value(id) == 60) {
			slot = 1;
			assert_true(json_is_array(json_object_get(asc_assert_result(m), "data")));
		} else if (json_integer_value(id) == 61) {
			slot = 2;
			asc_assert_result(m);
		} else if (json_is_string(id) && strcmp(json_string_value(id), "62") == 0) {
			slot = 3;
			assert_true(
				json_is_object(json_object_get(asc_assert_result(m), "config")));
		} else if (json_integer_value(id) == 63) {
			slot = 4;
			asc_assert_error(m, -32601, "fz/unknown");
		} else
			fail_msg("answer to something that was not a request: %s", asc_raw(c));
		if (got[slot]++ > 0)
			fail_msg("answered twice: %s", asc_raw(c));
		json_decref(m);
	}
	/*
	 * Responses with id null, such as a client echoing our own parse error back: never
	 * answered (not even "missing field `method`"), and the daemon keeps serving.
	 */
	for (size_t k = 0; k < FZ_NITEMS(null_ids); k++) {
		assert_int_equal(asc_send_line(c, null_ids[k]), 0);
		m = asc_wait_response(
			c, asc_request(c, "model/list", json_object()), asc_timeout(FZ_REPLY_MS));
		assert_true(json_is_array(json_object_get(asc_assert_result(m), "data")));
		json_decref(m);
		if ((m = asc_next(c, 0)) != NULL)
			fail_msg("answer to %s: %s", null_ids[k], asc_raw(c));
	}
	assert_int_equal(asc_sync(c, asc_timeout(FZ_REPLY_MS)), 0);
	if ((m = asc_next(c, FZ_QUIET_MS)) != NULL)
		fail_msg("stray message: %s", asc_raw(c));
	json_decref(exec_id);
	asc_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_fuzz_pipelined, fz_teardown),
		cmocka_unit_test(test_duplicate_ids_in_flight),
		cmocka_unit_test(test_client_responses_and_extra_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
