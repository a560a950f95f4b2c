/*
 * MCP servers end to end: the real binary, the mock model and our own MCP server
 * (tests/fixtures/mcp/mcp_server.py, stdlib Python). What upstream 0.169 did with the same
 * server and scripts is recorded in tests/fixtures/mcp/upstream/ (record.py; upstream is not
 * needed here): the tools the model is offered, the mcpToolCall items, what the model gets back.
 * Beyond upstream's recordings: progress notifications, an interrupt completing the item after
 * notifications/cancelled, a server dying mid-call and restarted at the next turn, one hanging
 * at start (thread/start answered at once, the server failed after startup_timeout_sec), a
 * 50 MB result, tools/list_changed, 500 tools over pages, tool_timeout_sec, the servers of
 * thread/start's `config`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "mcp_util.h"
#include "tests/helpers/skip_note.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

/* One recorded scenario: the same items and outputs as upstream's; the tools as offered. */
static void
mcp_scenario(const char *name, const char *script)
{
	struct tt f;
	json_t *msgs, *recs, *want = mcp_fixture(name), *t;
	size_t i;

	mcp_start(&f, script, NULL, NULL);
	mcp_ready(&f);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	recs = mm_records(&f.mm);
	assert_int_equal(json_array_size(recs), 2);
	json_array_foreach(json_object_get(want, "tools"), i,
		t) if (strcmp(json_string_value(json_object_get(t, "name")) ?: "", "mcp__test") ==
		0) mcp_equal("the MCP namespace tool offered", t,
		mcp_body_tool(tt_request_body(recs, 0), "mcp__test"));
	mcp_compare_items(msgs, want);
	mcp_compare_outputs(tt_request_body(recs, 1), want);
	json_decref(recs);
	json_decref(msgs);
	json_decref(want);
	tt_stop(&f);
}

static void
test_echo_as_upstream(void **state)
{
	(void)state;
	mcp_scenario("echo", SCRIPT(CALL("call-1", "echo", "{\\`text\\`:\\`hi\\`}")));
}

static void
test_content_kinds_as_upstream(void **state)
{
	(void)state;
	mcp_scenario("image",
		SCRIPT(CALL("call-1", "image", "{}") "," CALL(
			"call-2", "structured", "{}") "," CALL("call-3", "fail", "{}")));
}

static void
test_approval_never_as_upstream(void **state)
{
	(void)state;
	mcp_scenario("write", SCRIPT(CALL("call-1", "write", "{}")));
}

static void
test_die_as_upstream_then_restart(void **state)
{
	struct tt f;
	json_t *msgs, *it, *p;
	const char *err;

	(void)state;
	mcp_start(&f,
		"{`responses`:[" RESP("0", CALL("call-1", "die", "{}")) "," MSG("1") "," RESP(
			"2", CALL("call-2", "echo", "{\\`text\\`:\\`back\\`}")) "," MSG("3") "]}",
		NULL, NULL);
	mcp_ready(&f);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	it = tt_item(msgs, "mcpToolCall", 0);
	assert_string_equal(json_string_value(json_object_get(it, "status")), "failed");
	assert_true(json_is_null(json_object_get(it, "result")));
	err = json_string_value(json_object_get(json_object_get(it, "error"), "message"));
	assert_non_null(err);
	/* upstream's frame, recorded (its cause: "Transport closed" and a backtrace) */
	assert_memory_equal(
		err, "tool call error: tool call failed for `test/die`\n\nCaused by:\n    ", 63);
	assert_non_null(strstr(err, "exited"));
	/* reported failed, then started again with the next turn */
	p = json_object_get(tt_find(msgs, "mcpServer/startupStatus/updated", 0), "params");
	assert_non_null(p);
	assert_string_equal(json_string_value(json_object_get(p, "status")), "failed");
	json_decref(msgs);
	msgs = tt_turn(&f, "again", NULL, NULL, NULL);
	assert_int_equal(tt_count(msgs, "mcpServer/startupStatus/updated"), 2);
	it = tt_item(msgs, "mcpToolCall", 0);
	assert_string_equal(json_string_value(json_object_get(it, "status")), "completed");
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(
				json_object_get(json_object_get(it, "result"), "content"), 0),
			"text")),
		"echo: back");
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_progress(void **state)
{
	struct tt f;
	json_t *msgs, *m;

	(void)state;
	mcp_start(&f, SCRIPT(CALL("call-1", "progress", "{\\`steps\\`:3}")), NULL, NULL);
	mcp_ready(&f);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	assert_int_equal(tt_count(msgs, "item/mcpToolCall/progress"), 3);
	m = json_object_get(tt_find(msgs, "item/mcpToolCall/progress", 1), "params");
	assert_string_equal(json_string_value(json_object_get(m, "message")), "step 2 of 3");
	assert_string_equal(json_string_value(json_object_get(m, "itemId")), "call-1");
	assert_true(tt_index(msgs, "item/mcpToolCall/progress") > tt_index(msgs, "item/started"));
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "mcpToolCall", 0), "status")),
		"completed");
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_interrupt_cancels_and_completes(void **state)
{
	struct tt f;
	json_t *m, *it = NULL;
	const char *method;
	char *dir = mcp_log_dir(), *args = xasprintf("\"--log\", \"%s/mcp.log\"", dir), *log;
	int done = 0, interrupted = 0;
	long long t0;

	(void)state;
	mcp_start(&f, SCRIPT(CALL("call-1", "slow", "{\\`seconds\\`:30}")), args, NULL);
	mcp_ready(&f);
	asc_request(f.c, "turn/start",
		json_pack("{s:s, s:o}", "threadId", f.thread_id, "input", tt_text("hi")));
	t0 = asc_now_ms();
	while (!done && asc_now_ms() - t0 < asc_timeout(20000)) {
		if ((m = asc_next(f.c, 200)) == NULL)
			continue;
		method = json_string_value(json_object_get(m, "method")) ?: "";
		if (strcmp(method, "item/started") == 0 &&
			strcmp(mcp_msg_item_type(m), "mcpToolCall") == 0) {
			asc_request(f.c, "turn/interrupt",
				json_pack("{s:s, s:O}", "threadId", f.thread_id, "turnId",
					json_object_get(json_object_get(m, "params"), "turnId")));
			interrupted = 1;
		} else if (strcmp(method, "item/completed") == 0 &&
			strcmp(mcp_msg_item_type(m), "mcpToolCall") == 0)
			it = json_incref(json_object_get(json_object_get(m, "params"), "item"));
		else if (strcmp(method, "turn/completed") == 0) {
			assert_string_equal(
				json_string_value(json_object_get(
					json_object_get(json_object_get(m, "params"), "turn"),
					"status")),
				"interrupted");
			done = 1;
		}
		json_decref(m);
	}
	assert_true(interrupted);
	assert_true(done);
	/* upstream leaves the item started; here it completes, before turn/completed */
	assert_non_null(it);
	assert_string_equal(json_string_value(json_object_get(it, "status")), "failed");
	json_decref(it);
	/* the server heard notifications/cancelled for the call's request */
	for (t0 = asc_now_ms(), done = 0; !done && asc_now_ms() - t0 < 3000;) {
		log = mcp_log(dir);
		done = strstr(log, "notifications/cancelled") != NULL;
		free(log);
		if (!done)
			usleep(50000);
	}
	log = mcp_log(dir);
	assert_non_null(strstr(log, "\"method\":\"notifications/cancelled\""));
	/* upstream's initialize, recorded */
	assert_non_null(strstr(log, "\"protocolVersion\":\"2025-06-18\""));
	assert_non_null(strstr(log, "\"name\":\"codex-mcp-client\""));
	assert_non_null(
		strstr(log, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));
	free(log);
	free(args);
	tt_stop(&f);
	mcp_log_done(dir);
}

/* A server that never answers initialize: thread/start is not held, the server fails in time. */
static void
test_hang_at_start_times_out(void **state)
{
	struct tt f;
	json_t *p, *msgs, *recs;
	long long t0 = asc_now_ms();

	(void)state;
	mcp_start(&f, "{`responses`:[" MSG("0") "],`repeat`:true}", "\"--hang-start\"",
		"startup_timeout_sec = 1");
	/* tt_start returned with the thread started: long before the server's timeout */
	assert_true(asc_now_ms() - t0 < 900 || asc_sanitized());
	p = mcp_status(&f, asc_timeout(5000));
	assert_string_equal(json_string_value(json_object_get(p, "status")), "starting");
	json_decref(p);
	p = mcp_status(&f, asc_timeout(5000));
	assert_string_equal(json_string_value(json_object_get(p, "status")), "failed");
	assert_non_null(strstr(json_string_value(json_object_get(p, "error")),
		"MCP client for `test` timed out after 1 seconds"));
	assert_true(asc_now_ms() - t0 >= 1000);
	json_decref(p);
	/* the turn runs without its tools */
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	recs = mm_records(&f.mm);
	assert_null(mcp_body_tool(tt_request_body(recs, 0), "mcp__test"));
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
}

/* 50 MB of result: read, cut for the model and the item, nothing crashes or stalls. */
static void
test_big_result(void **state)
{
	struct tt f;
	json_t *msgs, *recs, *it, *out;
	const char *text;
	long long t0;

	(void)state;
	mcp_start(&f, SCRIPT(CALL("call-1", "big", "{\\`mb\\`:50}")), NULL, NULL);
	mcp_ready(&f);
	t0 = asc_now_ms();
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	fprintf(stderr, "50 MB result: turn in %lld ms\n", asc_now_ms() - t0);
	it = tt_item(msgs, "mcpToolCall", 0);
	assert_string_equal(json_string_value(json_object_get(it, "status")), "completed");
	text = json_string_value(json_object_get(
		json_array_get(json_object_get(json_object_get(it, "result"), "content"), 0),
		"text"));
	assert_non_null(text);
	assert_int_equal(strlen(text), 1048516); /* upstream's item, recorded with 1 MiB */
	assert_memory_equal(text, "Truncated tool output:\nxxx", 26);
	recs = mm_records(&f.mm);
	out = NULL;
	{
		json_t *in = json_object_get(tt_request_body(recs, 1), "input"), *x;
		size_t i;

		json_array_foreach(
			in, i, x) if (strcmp(json_string_value(json_object_get(x, "type")) ?: "",
					      "function_call_output") == 0) out =
			json_object_get(x, "output");
	}
	assert_non_null(out);
	text = json_string_value(json_object_get(json_array_get(out, 1), "text"));
	assert_non_null(text);
	/* upstream's cut of a big text: 5982 bytes each side of the marker */
	assert_non_null(strstr(text, " tokens truncated…"));
	assert_true(strlen(text) < 12100);
	assert_int_equal(strspn(text, "x"), 5982);
	json_decref(recs);
	json_decref(msgs);
	/* the daemon still answers at once */
	json_decref(tt_call(&f, "thread/loaded/list", json_object()));
	tt_stop(&f);
}

/*
 * A 50 MB result is parsed beside the loop: a request sent while the daemon's log says the
 * parse is under way is answered before the call's item completes (parsed on the loop, the
 * item completed first, since the request was read only after the parse). No timing: the log
 * line marks the parse's start, the order of the answers shows the loop was free meanwhile.
 */
static void
test_big_result_beside_the_loop(void **state)
{
	static const char *const env[] = {"APP_SERVER_LOG=info", NULL};
	struct tt f;
	json_t *p, *msgs;
	long long id, deadline;
	char *err = NULL;
	size_t at, done;

	(void)state;
	mcp_start_env(&f, SCRIPT(CALL("call-1", "big", "{\\`mb\\`:50}")), NULL, NULL, env);
	mcp_ready(&f);
	p = json_pack("{s:s, s:o}", "threadId", f.thread_id, "input", tt_text("hi"));
	id = asc_request(f.c, "turn/start", p);
	asc_assert_result(asc_wait_response(f.c, id, asc_timeout(5000)));
	deadline = asc_now_ms() + asc_timeout(20000);
	for (;;) {
		free(err);
		err = asc_stderr(f.c);
		if (strstr(err, "parsing a ") != NULL || asc_now_ms() > deadline)
			break;
		usleep(2000);
	}
	if (strstr(err, "-byte message beside the loop") == NULL)
		fprintf(stderr, "daemon stderr: %.3000s\n", err);
	assert_non_null(strstr(err, "-byte message beside the loop"));
	id = asc_request(f.c, "thread/loaded/list", json_object());
	msgs = tt_collect(&f, NULL, NULL);
	at = mcp_answer_at(msgs, id);
	done = mcp_completed_at(msgs, "mcpToolCall");
	assert_true(at != SIZE_MAX);
	assert_true(done != SIZE_MAX);
	fprintf(stderr, "thread/loaded/list answered at %zu, the big item completed at %zu\n", at,
		done);
	assert_true(at < done);
	free(err);
	err = asc_stderr(f.c);
	assert_non_null(strstr(err, "-byte message parsed"));
	free(err);
	json_decref(msgs);
	tt_stop(&f);
}

/* tools/list_changed: the next model request offers the new list, the new tool works. */
static void
test_list_changed(void **state)
{
	struct tt f;
	json_t *msgs, *recs, *ns, *t;
	size_t i;
	int found = 0;

	(void)state;
	mcp_start(&f,
		"{`responses`:[" RESP("0", CALL("call-1", "change", "{}")) "," RESP(
			"1", CALL("call-2", "added", "{\\`text\\`:\\`new\\`}")) "," MSG("2") "]}",
		NULL, NULL);
	mcp_ready(&f);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "mcpToolCall", 1), "status")),
		"completed");
	recs = mm_records(&f.mm);
	assert_null(NULL);
	ns = mcp_body_tool(tt_request_body(recs, 2), "mcp__test");
	json_array_foreach(json_object_get(ns, "tools"), i, t) found |=
		strcmp(json_string_value(json_object_get(t, "name")), "added") == 0;
	assert_true(found);
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
}

/* 500 more tools over pages of 50: every one offered, sorted by name. */
static void
test_500_tools_paged(void **state)
{
	struct tt f;
	json_t *msgs, *recs, *ns;

	(void)state;
	mcp_start(&f, "{`responses`:[" MSG("0") "],`repeat`:true}", "\"--tools\", \"500\"", NULL);
	mcp_ready(&f);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	recs = mm_records(&f.mm);
	ns = mcp_body_tool(tt_request_body(recs, 0), "mcp__test");
	assert_int_equal(json_array_size(json_object_get(ns, "tools")), 511);
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(ns, "tools"), 0), "name")),
		"big");
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
}

/* tool_timeout_sec: the call fails in time, the turn goes on. */
static void
test_tool_timeout(void **state)
{
	struct tt f;
	json_t *msgs, *it;
	long long t0;

	(void)state;
	mcp_start(&f, SCRIPT(CALL("call-1", "slow", "{\\`seconds\\`:30}")), NULL,
		"tool_timeout_sec = 0.5");
	mcp_ready(&f);
	t0 = asc_now_ms();
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	assert_true(asc_now_ms() - t0 < 10000);
	it = tt_item(msgs, "mcpToolCall", 0);
	assert_string_equal(json_string_value(json_object_get(it, "status")), "failed");
	assert_non_null(
		strstr(json_string_value(json_object_get(json_object_get(it, "error"), "message")),
			"timed out"));
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(msgs), "status")), "completed");
	json_decref(msgs);
	tt_stop(&f);
}

/* The servers of thread/start's config (as codex-acp passes an editor's), enabled_tools. */
static void
test_thread_config_servers(void **state)
{
	struct tt f;
	json_t *r, *p, *msgs, *recs, *ns;
	char path[PATH_MAX];

	(void)state;
	mcp_start(&f, "{`responses`:[" MSG("0") "],`repeat`:true}", NULL, NULL);
	mcp_ready(&f);
	assert_non_null(realpath(SERVER, path));
	r = tt_call(&f, "thread/start",
		json_pack("{s:s, s:s, s:{s:{s:{s:s, s:[s], s:[s, s]}}}}", "cwd", f.workspace,
			"approvalPolicy", "never", "config", "mcp_servers", "editor", "command",
			"python3", "args", path, "enabled_tools", "echo", "image"));
	free(f.thread_id);
	f.thread_id = xstrdup(json_string_value(
		json_object_get(json_object_get(json_object_get(r, "result"), "thread"), "id")));
	json_decref(r);
	/* both servers start for the new thread: config.toml's and the request's */
	for (int i = 0, ready = 0; ready < 2 && i < 6; i++) {
		p = mcp_status(&f, asc_timeout(10000));
		if (strcmp(json_string_value(json_object_get(p, "threadId")), f.thread_id) == 0 &&
			strcmp(json_string_value(json_object_get(p, "status")), "ready") == 0)
			ready++;
		json_decref(p);
	}
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	recs = mm_records(&f.mm);
	ns = mcp_body_tool(tt_request_body(recs, 0), "mcp__editor");
	assert_non_null(ns);
	assert_int_equal(json_array_size(json_object_get(ns, "tools")), 2);
	assert_non_null(mcp_body_tool(tt_request_body(recs, 0), "mcp__test"));
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
}

/* A real MCP server from npm: the same tools offered as upstream's, a real call in a turn. */
static void
test_server_everything(void **state)
{
	struct tt f;
	struct tt_opts o = {0};
	json_t *msgs, *recs, *want, *t;
	char *entry = mcp_everything_entry(), *cfg, *s;
	size_t i;

	(void)state;
	if (entry == NULL) {
		skip_note("test_mcp server-everything", 1,
			"npm could not install @modelcontextprotocol/server-everything (no node, or the "
			"registry unreachable)");
		skip();
	}
	want = mcp_fixture("everything");
	cfg = xasprintf(
		"[mcp_servers.everything]\ncommand = \"node\"\nargs = [\"%s\", \"stdio\"]\n",
		entry);
	s = tt_script("{`responses`:[" RESP("0",
		"{`type`:`response.output_item.done`,`item`:{`type`:`function_call`,`call_id`:`call-1`,"
		"`name`:`echo`,`namespace`:`mcp__everything`,`arguments`:`{\\`message\\`:\\`hi\\`}`}}") "," MSG("1") "]}");
	o.script = s;
	o.config_extra = cfg;
	tt_start(&f, &o);
	for (int k = 0; k < 2; k++)
		json_decref(mcp_status(&f, asc_timeout(20000)));
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	recs = mm_records(&f.mm);
	json_array_foreach(json_object_get(want, "tools"), i,
		t) if (strcmp(json_string_value(json_object_get(t, "name")) ?: "",
			       "mcp__everything") == 0)
		mcp_equal("server-everything's tools as offered", t,
			mcp_body_tool(tt_request_body(recs, 0), "mcp__everything"));
	mcp_compare_items(msgs, want);
	mcp_compare_outputs(tt_request_body(recs, 1), want);
	json_decref(recs);
	json_decref(msgs);
	json_decref(want);
	free(cfg);
	free(s);
	free(entry);
	tt_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_echo_as_upstream),
		cmocka_unit_test(test_content_kinds_as_upstream),
		cmocka_unit_test(test_approval_never_as_upstream),
		cmocka_unit_test(test_die_as_upstream_then_restart),
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_interrupt_cancels_and_completes),
		cmocka_unit_test(test_hang_at_start_times_out),
		cmocka_unit_test(test_big_result),
		cmocka_unit_test(test_big_result_beside_the_loop),
		cmocka_unit_test(test_list_changed),
		cmocka_unit_test(test_500_tools_paged),
		cmocka_unit_test(test_tool_timeout),
		cmocka_unit_test(test_thread_config_servers),
		cmocka_unit_test(test_server_everything),
	};

	asc_ref_load();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
