/*
 * Integration tests of the transport's limits: the line-length ceiling and resynchronisation,
 * 100k pipelined requests all answered, -32001 past --max-inflight, and notification opt-outs.
 * The transport's shapes and errors are in test_rpc.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "tests/helpers/skip_note.h"

#define T_REPLY 5000 /* ms for one answer */

/* A line sent and the next message taken (the caller frees it). */
#define roundtrip(c, line) asc_roundtrip((c), (line), asc_timeout(T_REPLY))

/* A line of `len` bytes: a valid initialize request padded with an ignored field. */
static char *
padded_initialize(const char *id, size_t len)
{
	const char *head = "{\"id\":",
		   *mid = ",\"method\":\"initialize\",\"params\":{\"clientInfo\":{"
			  "\"name\":\"a\",\"version\":\"1\"},\"pad\":\"";
	size_t fixed = strlen(head) + strlen(id) + strlen(mid) + 3;
	char *s = xmalloc(len + 2), *p = s;

	assert_true(len > fixed);
	p += snprintf(p, len + 2, "%s%s%s", head, id, mid);
	memset(p, 'p', len - fixed);
	p += len - fixed;
	memcpy(p, "\"}}\n", 5);
	assert_int_equal(strlen(s), len + 1);
	return s;
}

static void
test_line_limit_and_resync(void **state)
{
	static const char *const args[] = {"--max-line-bytes", "1M", NULL};
	struct asc_opts o = {.args = args};
	struct asc *c = asc_spawn(&o);
	char *line;
	json_t *m;
	long rss;

	/* Over the limit: one -32600 (id null, the id was never read), nothing executed. */
	line = padded_initialize("1", 3 << 20);
	assert_int_equal(asc_send_raw(c, line, strlen(line)), 0);
	free(line);
	m = asc_next(c, asc_timeout(T_REPLY));
	assert_non_null(m);
	asc_expect_error(m, -32600, NULL, NULL);
	json_decref(m);
	/* Resynchronised at the next newline: the next request is answered normally. */
	assert_int_equal(asc_sync(c, asc_timeout(T_REPLY)), 0);
	/* Just under the limit is a normal line (and this one really initializes). */
	line = padded_initialize("2", (1 << 20) - 100);
	assert_int_equal(asc_send_raw(c, line, strlen(line)), 0);
	free(line);
	m = asc_wait_response(c, 2, asc_timeout(T_REPLY));
	asc_assert_result(m);
	json_decref(m);
	/* Several oversized lines in one write: one error each. */
	line = xmalloc(9 << 20);
	memset(line, 'x', 9 << 20);
	line[(3 << 20) - 1] = line[(6 << 20) - 1] = line[(9 << 20) - 1] = '\n';
	assert_int_equal(asc_send_raw(c, line, 9 << 20), 0);
	free(line);
	for (int i = 0; i < 3; i++) {
		m = asc_next(c, asc_timeout(T_REPLY));
		assert_non_null(m);
		asc_expect_error(m, -32600, NULL, NULL);
		json_decref(m);
	}
	assert_int_equal(asc_sync(c, asc_timeout(T_REPLY)), 0);
	rss = asc_rss_kb(asc_pid(c));
	print_message("line limit 1 MiB: daemon VmRSS after 4 oversized lines %ld KiB\n", rss);
	asc_free(c);
}

static void
test_default_line_limit(void **state)
{
	size_t len = (size_t)65 << 20;
	struct asc *c;
	long long t0;
	char *line;
	json_t *m;

	if (asc_sanitized())
		skip_test("slow under ASan; the plain run covers it");
	c = asc_spawn(NULL);
	/* 65 MiB is over the default 64 MiB ceiling. */
	line = padded_initialize("1", len);
	t0 = asc_now_ms();
	assert_int_equal(asc_send_raw(c, line, len + 1), 0);
	free(line);
	m = asc_next(c, asc_timeout(10000));
	assert_non_null(m);
	asc_expect_error(m, -32600, NULL, NULL);
	json_decref(m);
	assert_int_equal(asc_sync(c, asc_timeout(T_REPLY)), 0);
	print_message("65 MiB line refused and resynced in %lld ms, daemon VmRSS %ld KiB\n",
		asc_now_ms() - t0, asc_rss_kb(asc_pid(c)));
	asc_initialize(c);
	asc_free(c);
}

static void
test_pipelined(void **state)
{
	size_t total = asc_load(100000), sent = 0, got = 0, len, batch = 2000;
	unsigned char *seen = xcalloc(total + 1, 1);
	struct asc *c = asc_spawn(NULL);
	long long t0 = asc_now_ms(), end;
	json_t *m, *id;
	json_int_t v;
	int fds0, fds1;
	char *buf;

	asc_initialize(c);
	/*
	 * The daemon sets its cgroups up (a few fds) once its client pauses (daemon.c): count
	 * its fds once they have held still for 100 ms.
	 */
	fds0 = asc_fd_count(asc_pid(c));
	for (long long still = asc_now_ms(), t0s = still;
		asc_now_ms() - still < 100 && asc_now_ms() - t0s < asc_timeout(5000);) {
		usleep(10000);
		if ((fds1 = asc_fd_count(asc_pid(c))) != fds0) {
			fds0 = fds1;
			still = asc_now_ms();
		}
	}
	buf = xmalloc(batch * 64);
	/* Write in batches while reading: neither side may wait for the other to finish. */
	while (sent < total || got < total) {
		if (sent < total) {
			len = 0;
			for (size_t i = 0; i < batch && sent < total; i++)
				len += (size_t)snprintf(buf + len, 64,
					"{\"id\":%zu,\"method\":\"bench/unknown\"}\n", ++sent);
			assert_int_equal(asc_send_raw(c, buf, len), 0);
		}
		end = asc_now_ms() + asc_timeout(20000);
		while ((m = asc_next(c, sent < total ? 0 : (int)(end - asc_now_ms()))) != NULL) {
			id = json_object_get(m, "id");
			asc_assert_error(m, -32601, NULL);
			assert_true(json_is_integer(id));
			v = json_integer_value(id);
			if (v < 1 || (size_t)v > total || seen[v])
				fail_msg("unexpected or repeated id in %s", asc_raw(c));
			seen[v] = 1;
			got++;
			json_decref(m);
			if (got == total)
				break;
		}
		if (sent == total && got < total && asc_now_ms() >= end)
			fail_msg("only %zu of %zu pipelined requests answered", got, total);
	}
	fds1 = asc_fd_count(asc_pid(c));
	print_message("%zu pipelined requests answered in %lld ms; daemon VmRSS %ld KiB, fds %d -> "
		      "%d\n",
		total, asc_now_ms() - t0, asc_rss_kb(asc_pid(c)), fds0, fds1);
	assert_int_equal(fds0, fds1);
	for (size_t i = 1; i <= total; i++)
		assert_int_equal(seen[i], 1);
	free(buf);
	free(seen);
	asc_free(c);
}

/* With --max-inflight unanswered requests, the next gets -32001 at once; later ones work again. */
static void
test_overloaded(void **state)
{
	static const char *const args[] = {"--max-inflight", "1", NULL};
	struct asc_opts o = {.args = args};
	struct asc *c = asc_spawn(&o);
	long long slow, over, after;
	json_t *m, *data;

	asc_initialize(c); /* answered: no longer in flight */
	slow = asc_request(c, "command/exec",
		json_pack("{s:[s,s], s:{s:s}}", "command", "sleep", "0.5", "sandboxPolicy", "type",
			"dangerFullAccess"));
	over = asc_request(c, "command/exec",
		json_pack("{s:[s], s:{s:s}}", "command", "true", "sandboxPolicy", "type",
			"dangerFullAccess"));
	m = asc_wait_response(c, over, asc_timeout(300));
	asc_assert_error(m, -32001, "Server overloaded; retry later.");
	data = json_object_get(json_object_get(m, "error"), "data");
	assert_string_equal(
		json_string_value(json_object_get(data, "codex_error_info")), "server_overloaded");
	json_decref(m);
	m = asc_wait_response(c, slow, asc_timeout(3000));
	assert_int_equal(json_integer_value(json_object_get(asc_assert_result(m), "exitCode")), 0);
	json_decref(m);
	after = asc_request(c, "command/exec",
		json_pack("{s:[s], s:{s:s}}", "command", "true", "sandboxPolicy", "type",
			"dangerFullAccess"));
	m = asc_wait_response(c, after, asc_timeout(3000));
	asc_assert_result(m);
	json_decref(m);
	asc_free(c);
}

/* optOutNotificationMethods suppresses exactly the named notifications. */
static void
test_opt_out_suppresses(void **state)
{
	struct asc *c = asc_spawn(NULL);
	json_t *m;
	long long id;

	m = roundtrip(c,
		"{\"id\":1,\"method\":\"initialize\",\"params\":{\"clientInfo\":{\"name\":"
		"\"a\",\"version\":\"1\"},\"capabilities\":{\"optOutNotificationMethods\":"
		"[\"command/exec/outputDelta\"]}}}");
	asc_assert_result(m);
	json_decref(m);
	id = asc_request(c, "command/exec",
		json_pack("{s:[s,s], s:s, s:b, s:{s:s}}", "command", "echo", "hidden", "processId",
			"p", "streamStdoutStderr", 1, "sandboxPolicy", "type", "dangerFullAccess"));
	m = asc_wait_response(c, id, asc_timeout(3000));
	asc_assert_result(m);
	json_decref(m);
	/* The response came; no delta may be queued before or after it. */
	assert_int_equal(asc_sync(c, asc_timeout(1000)), 0);
	assert_int_equal(asc_queued(c), 0);
	asc_free(c);
}

/*
 * A NUL character in a string is valid JSON: the request is parsed and answered -32602 with
 * the JSON pointer of the string (issue 9 item 10; it used to be -32700 with id null).
 */
static void
test_nul_in_strings(void **state)
{
	static const struct {
		const char *params, *path;
	} cases[] = {
		{"{\"command\":[\"echo\",\"a\\u0000b\"]}", "/params/command/1"},
		{"{\"command\":[\"echo\"],\"cwd\":\"/tmp\\u0000x\"}", "/params/cwd"},
		{"{\"command\":[\"echo\"],\"env\":{\"A\":\"x\\u0000\"}}", "/params/env/A"},
		{"{\"command\":[\"echo\"],\"env\":{\"A\\u0000B\":\"x\"}}", "/params/env/A\0B"},
	};
	struct asc *c = asc_spawn(NULL);
	const char *path;
	json_t *m, *data;
	char *line;
	size_t plen;

	asc_initialize(c);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		line = xasprintf("{\"id\":%zu,\"method\":\"command/exec\",\"params\":%s}", 100 + i,
			cases[i].params);
		m = roundtrip(c, line);
		asc_assert_error(m, -32602, NULL);
		assert_int_equal(json_integer_value(json_object_get(m, "id")), 100 + i);
		data = json_object_get(json_object_get(m, "error"), "data");
		path = json_string_value(json_object_get(data, "path"));
		plen = json_string_length(json_object_get(data, "path"));
		plen = plen > strlen(cases[i].path) ? plen : strlen(cases[i].path);
		assert_memory_equal(path, cases[i].path, plen);
		assert_string_equal(json_string_value(json_object_get(data, "keyword")), "nul");
		assert_string_equal(json_string_value(json_object_get(data, "message")),
			"a string must not contain a NUL character");
		json_decref(m);
		free(line);
	}
	/* The daemon keeps serving. */
	assert_int_equal(asc_sync(c, asc_timeout(T_REPLY)), 0);
	asc_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_limit_and_resync),
		cmocka_unit_test(test_default_line_limit),
		cmocka_unit_test(test_pipelined),
		cmocka_unit_test(test_overloaded),
		cmocka_unit_test(test_opt_out_suppresses),
		cmocka_unit_test(test_nul_in_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
