/*
 * thread/shellCommand against the real daemon and the mock model, checked with what upstream
 * 0.169 sent on the same scripts (scripts/record-shellcmd.py recorded it once into
 * tests/fixtures/shellcmd/upstream_sequences.json; upstream is not needed here): the order of
 * the messages on an idle thread, alongside a turn waiting on an approval, on interrupt, on
 * timeout (and timeoutMs 0), with turn/start during the command; the item's shapes (checked
 * against the schema by the harness), the <user_shell_command> record the model sees next,
 * the command running unsandboxed in a read-only thread, the whole tree killed on interrupt
 * and timeout, kill -9 during a command then resume (no turn lost or doubled), the errors.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

#define FIXTURE "tests/fixtures/shellcmd/upstream_sequences.json"
#define ANSWER(text)                                                                               \
	"{`events`:[{`ev`:`created`},{`ev`:`message`,`id`:`m`,`text`:`" text                       \
	"`},{`ev`:`completed`}]}"
/* The model asks to run a command outside the sandbox: the turn waits on its approval. */
#define CALL_ESCALATED                                                                             \
	"{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`call-approve`,`name`:"       \
	"`exec_command`,`arguments`:{`cmd`:`touch agent.txt`,`sandbox_permissions`:"               \
	"`require_escalated`,`justification`:`need it`}},{`ev`:`completed`}]}"

static json_t *fixture;

/* Upstream's sequence of a scenario (borrowed). */
static const json_t *
upstream(const char *name)
{
	if (fixture == NULL) {
		json_error_t e;

		fixture = json_load_file(FIXTURE, 0, &e);
		assert_non_null(fixture);
	}
	return json_object_get(fixture, name);
}

/* A message as the fixture names it: method[:itemType[:source]] or answer:<method>. */
static void
label(const json_t *m, const json_t *methods, char *out, size_t room)
{
	const char *method = json_string_value(json_object_get(m, "method"));
	json_t *item = json_object_get(json_object_get(m, "params"), "item");
	char key[32];

	if (method == NULL) {
		snprintf(key, sizeof key, "%lld",
			(long long)json_integer_value(json_object_get(m, "id")));
		snprintf(out, room, "answer:%s",
			json_string_value(json_object_get(methods, key)) ?: "?");
		return;
	}
	if (item == NULL) {
		snprintf(out, room, "%s", method);
		return;
	}
	snprintf(out, room, "%s:%s%s%s", method, json_string_value(json_object_get(item, "type")),
		json_is_string(json_object_get(item, "source")) ? ":" : "",
		json_string_value(json_object_get(item, "source")) ?: "");
}

/* Send a request, remembering its method for the labels; its id. */
static long long
send(struct tt *f, json_t *methods, const char *method, json_t *params)
{
	long long id = asc_request(f->c, method, params);
	char key[32];

	snprintf(key, sizeof key, "%lld", id);
	json_object_set_new(methods, key, json_string(method));
	return id;
}

/* Take messages into msgs until one whose label is `until` (included); returns it. */
static json_t *
take_until(struct tt *f, json_t *msgs, const json_t *methods, const char *until)
{
	long long deadline = asc_now_ms() + asc_timeout(20000);
	char got[160];
	json_t *m;

	for (;;) {
		m = asc_next(f->c, 100);
		if (m == NULL) {
			assert_true(asc_now_ms() < deadline);
			continue;
		}
		json_array_append_new(msgs, m);
		label(m, methods, got, sizeof got);
		if (strcmp(got, until) == 0)
			return m;
	}
}

/* msgs as labels, consecutive outputDeltas as one, must equal upstream's sequence. */
static void
assert_upstream_order(const json_t *msgs, const json_t *methods, const char *scenario)
{
	const json_t *want = upstream(scenario);
	char got[160], prev[160] = "";
	size_t i, k = 0;
	json_t *m;

	assert_non_null(want);
	json_array_foreach((json_t *)msgs, i, m)
	{
		label(m, methods, got, sizeof got);
		if (strcmp(got, "item/commandExecution/outputDelta") == 0 && strcmp(got, prev) == 0)
			continue;
		if (strcmp(got, "thread/tokenUsage/updated") == 0 ||
			strcmp(got, "account/rateLimits/updated") == 0)
			continue; /* upstream's fixture leaves them out */
		snprintf(prev, sizeof prev, "%s", got);
		if (k >= json_array_size(want) ||
			strcmp(got, json_string_value(json_array_get(want, k))) != 0)
			fail_msg("%s: message %zu is %s, upstream sent %s", scenario, k, got,
				k < json_array_size(want)
					? json_string_value(json_array_get(want, k))
					: "nothing more");
		k++;
	}
	assert_int_equal(k, json_array_size(want));
}

/* The completed userShell item of msgs (borrowed). */
static json_t *
user_item(const json_t *msgs)
{
	json_t *m, *it;
	size_t i;

	json_array_foreach((json_t *)msgs, i, m)
	{
		if (strcmp(json_string_value(json_object_get(m, "method")) ?: "", "item/completed"))
			continue;
		it = json_object_get(json_object_get(m, "params"), "item");
		if (strcmp(json_string_value(json_object_get(it, "source")) ?: "", "userShell") ==
			0)
			return it;
	}
	fail_msg("no userShell item completed");
	return NULL;
}

/* Run one shell command on an idle thread to its turn/completed; the messages. */
static json_t *
shell(struct tt *f, json_t *methods, const char *command, long long timeout_ms)
{
	json_t *msgs = json_array(),
	       *p = json_pack("{s:s, s:s}", "threadId", f->thread_id, "command", command);

	if (timeout_ms >= 0)
		json_object_set_new(p, "timeoutMs", json_integer(timeout_ms));
	send(f, methods, "thread/shellCommand", p);
	take_until(f, msgs, methods, "turn/completed");
	return msgs;
}

/* The text of the <user_shell_command> record in a model request, Duration blanked (heap). */
static char *
record_in(const json_t *body, const char *command)
{
	json_t *it, *c;
	size_t i, j;
	char *head = xasprintf("<user_shell_command>\n<command>\n%s\n", command);

	json_array_foreach(json_object_get(body, "input"), i, it)
		json_array_foreach(json_object_get(it, "content"), j, c)
	{
		const char *s = json_string_value(json_object_get(c, "text")), *d, *e;

		if (s == NULL || strncmp(s, head, strlen(head)) != 0)
			continue;
		free(head);
		d = strstr(s, "Duration: ");
		e = d != NULL ? strstr(d, " seconds") : NULL;
		assert_non_null(e);
		return xasprintf("%.*sDuration: <D>%s", (int)(d - s), s, e);
	}
	free(head);
	return NULL;
}

/* Whether a process still exists (a zombie counts as gone). */
static int
alive(pid_t pid)
{
	char path[64], *st;
	int r;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((st = tt_read(path)) == NULL)
		return 0;
	r = strstr(st, ") Z ") == NULL;
	free(st);
	return r;
}

/* Wait up to 2 s for the process in the workspace's pid file to be gone. */
static void
assert_gone(struct tt *f, const char *pidfile)
{
	char *p = tt_path(f, pidfile), *txt = tt_read(p);
	pid_t pid;

	assert_non_null(txt);
	pid = (pid_t)strtol(txt, NULL, 10);
	assert_true(pid > 1);
	for (int i = 0; i < 200 && alive(pid); i++)
		usleep(10000);
	assert_false(alive(pid));
	free(txt);
	free(p);
}

static void
start(struct tt *f, const char *script, const char *sandbox, const char *approval)
{
	char *s = tt_script(script);
	struct tt_opts o = {.script = s, .sandbox = sandbox, .approval_policy = approval};

	tt_start(f, &o);
	free(s);
}

/* An idle thread, read-only: upstream's order and item, unsandboxed, the record next turn. */
static void
test_idle(void **state)
{
	struct tt f;
	json_t *methods = json_object(), *msgs, *it, *recs, *r, *turns;
	char *rec, *side;
	const char *want;

	(void)state;
	start(&f, "[" ANSWER("ok") "]", "read-only", NULL);
	/* (a pause: the two pipes are read apart, the order of their bytes is the writer's) */
	msgs = shell(&f, methods, "echo hi; sleep 0.1; echo err >&2; exit 3", -1);
	assert_upstream_order(msgs, methods, "idle");
	it = user_item(msgs);
	assert_string_equal(json_string_value(json_object_get(it, "command")),
		"/bin/bash -lc 'echo hi; sleep 0.1; echo err >&2; exit 3'");
	assert_string_equal(json_string_value(json_object_get(it, "status")), "failed");
	assert_int_equal(json_integer_value(json_object_get(it, "exitCode")), 3);
	assert_string_equal(
		json_string_value(json_object_get(it, "aggregatedOutput")), "hi\nerr\n");
	assert_string_equal(json_string_value(json_object_get(it, "cwd")), f.workspace);
	assert_true(json_is_null(json_object_get(it, "processId")));
	json_decref(msgs);
	/* The thread is read-only; the user's command is not sandboxed (upstream's rule). */
	msgs = shell(&f, methods, "echo side > side.txt", -1);
	json_decref(msgs);
	side = tt_path(&f, "side.txt");
	assert_int_equal(access(side, F_OK), 0);
	free(side);
	/* The model sees upstream's record of the first command in its next request. */
	json_decref(tt_turn(&f, "next", NULL, NULL, NULL));
	recs = mm_records(&f.mm);
	assert_int_equal(json_array_size(recs), 1);
	rec = record_in(tt_request_body(recs, 0), "echo hi; sleep 0.1; echo err >&2; exit 3");
	want = json_string_value(
		json_object_get(upstream("records"), "echo hi; echo err >&2; exit 3"));
	assert_non_null(rec);
	assert_non_null(want);
	/* upstream's record of its command, ours with the pause taken out */
	memmove(strstr(rec, "sleep 0.1; "), strstr(rec, "sleep 0.1; ") + 11,
		strlen(strstr(rec, "sleep 0.1; ") + 11) + 1);
	assert_string_equal(rec, want);
	free(rec);
	json_decref(recs);
	/* thread/read: the command's turn holds its item, as 0.169's does. */
	r = tt_call(&f, "thread/read",
		json_pack("{s:s, s:b}", "threadId", f.thread_id, "includeTurns", 1));
	turns = json_object_get(json_object_get(asc_assert_result(r), "thread"), "turns");
	assert_int_equal(json_array_size(turns), 3);
	it = json_array_get(json_object_get(json_array_get(turns, 0), "items"), 0);
	assert_string_equal(json_string_value(json_object_get(it, "source")), "userShell");
	json_decref(r);
	json_decref(methods);
	tt_stop(&f);
}

/* Alongside a turn waiting on an approval: the item is that turn's, the turn goes on. */
static void
test_alongside(void **state)
{
	struct tt f;
	json_t *methods = json_object(), *msgs = json_array(), *req, *it, *recs, *body, *p;
	char *turn_id, *rec;

	(void)state;
	start(&f, "[" CALL_ESCALATED "," ANSWER("done") "]", "read-only", "on-request");
	p = json_pack("{s:s, s:o}", "threadId", f.thread_id, "input", tt_text("run"));
	send(&f, methods, "turn/start", p);
	req = take_until(&f, msgs, methods, "item/commandExecution/requestApproval");
	turn_id = xstrdup(
		json_string_value(json_object_get(json_object_get(req, "params"), "turnId")));
	json_array_clear(msgs);
	send(&f, methods, "thread/shellCommand",
		json_pack("{s:s, s:s}", "threadId", f.thread_id, "command",
			"echo side > side.txt; cat side.txt"));
	take_until(&f, msgs, methods, "item/completed:commandExecution:userShell");
	assert_upstream_order(msgs, methods, "alongside");
	it = user_item(msgs);
	assert_string_equal(json_string_value(json_object_get(it, "aggregatedOutput")), "side\n");
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(json_array_get(msgs, json_array_size(msgs) - 1), "params"),
			"turnId")),
		turn_id);
	json_array_clear(msgs);
	/* The turn goes on: declined, then the model's answer sees the record. */
	asc_send_line(f.c, "{\"id\":0,\"result\":{\"decision\":\"decline\"}}");
	take_until(&f, msgs, methods, "turn/completed");
	recs = mm_records(&f.mm);
	body = tt_request_body(recs, 1);
	rec = record_in(body, "echo side > side.txt; cat side.txt");
	assert_non_null(rec);
	free(rec);
	json_decref(recs);
	json_decref(msgs);
	json_decref(methods);
	free(turn_id);
	tt_stop(&f);
}

/* Interrupt: the item ends before {} (upstream's order), the whole tree is killed. */
static void
test_interrupt(void **state)
{
	struct tt f;
	json_t *methods = json_object(), *msgs = json_array(), *ts, *it, *recs, *body;
	char *rec;
	const char *cmd = "sleep 300 & echo $! > bg.pid; echo start; sleep 30";

	(void)state;
	start(&f, "[" ANSWER("ok") "]", NULL, NULL);
	send(&f, methods, "thread/shellCommand",
		json_pack("{s:s, s:s}", "threadId", f.thread_id, "command", cmd));
	ts = take_until(&f, msgs, methods, "turn/started");
	take_until(&f, msgs, methods, "item/commandExecution/outputDelta");
	send(&f, methods, "turn/interrupt",
		json_pack("{s:s, s:s}", "threadId", f.thread_id, "turnId",
			json_string_value(json_object_get(
				json_object_get(json_object_get(ts, "params"), "turn"), "id"))));
	take_until(&f, msgs, methods, "turn/completed");
	assert_upstream_order(msgs, methods, "interrupt");
	it = user_item(msgs);
	assert_string_equal(json_string_value(json_object_get(it, "status")), "failed");
	assert_int_equal(json_integer_value(json_object_get(it, "exitCode")), -1);
	assert_int_equal(json_integer_value(json_object_get(it, "durationMs")), 0);
	assert_string_equal(json_string_value(json_object_get(it, "aggregatedOutput")),
		"command aborted by user");
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(
				json_object_get(
					json_array_get(msgs, json_array_size(msgs) - 1), "params"),
				"turn"),
			"status")),
		"interrupted");
	assert_gone(&f, "bg.pid");
	json_decref(tt_turn(&f, "next", NULL, NULL, NULL));
	recs = mm_records(&f.mm);
	body = tt_request_body(recs, 0);
	rec = record_in(body, cmd);
	assert_non_null(strstr(rec,
		"Exit code: -1\nDuration: <D> seconds\nOutput:\ncommand "
		"aborted by user\n</result>\n</user_shell_command>"));
	free(rec);
	json_decref(recs);
	json_decref(msgs);
	json_decref(methods);
	tt_stop(&f);
}

/* Timeout: upstream's execution error, the tree killed; timeoutMs 0 times out at once. */
static void
test_timeout(void **state)
{
	struct tt f;
	json_t *methods = json_object(), *msgs, *it;
	const char *out;

	(void)state;
	start(&f, "[" ANSWER("ok") "]", NULL, NULL);
	msgs = shell(&f, methods, "sleep 300 & echo $! > bg.pid; echo t; sleep 5; echo never", 500);
	assert_upstream_order(msgs, methods, "timeout");
	it = user_item(msgs);
	out = json_string_value(json_object_get(it, "aggregatedOutput"));
	assert_int_equal(json_integer_value(json_object_get(it, "exitCode")), -1);
	assert_string_equal(json_string_value(json_object_get(it, "status")), "failed");
	assert_non_null(strstr(out,
		"execution error: Sandbox(Timeout { output: ExecToolCallOutput "
		"{ exit_code: 124, stdout: StreamOutput { text: \"t\\n\", "
		"truncated_after_lines: None }, stderr: StreamOutput { text: "
		"\"\", truncated_after_lines: None }, aggregated_output: "
		"StreamOutput { text: \"t\\n\", truncated_after_lines: None }, "
		"duration: "));
	assert_non_null(strstr(out, "ms, timed_out: true } })"));
	assert_gone(&f, "bg.pid");
	json_decref(msgs);
	msgs = shell(&f, methods, "echo zero", 0);
	assert_upstream_order(msgs, methods, "timeout_zero");
	json_decref(msgs);
	/* A command exiting 124 by itself, well within its timeout, is no timeout: its own
	 * exit code and output, as any failed command (the kill is what makes a timeout). */
	msgs = shell(&f, methods, "echo own; exit 124", 60000);
	it = user_item(msgs);
	assert_string_equal(json_string_value(json_object_get(it, "status")), "failed");
	assert_int_equal(json_integer_value(json_object_get(it, "exitCode")), 124);
	assert_string_equal(json_string_value(json_object_get(it, "aggregatedOutput")), "own\n");
	json_decref(msgs);
	json_decref(methods);
	tt_stop(&f);
}

/* turn/start during a command: it joins the command's turn, recorded, not answered (0.169). */
static void
test_turn_start_during(void **state)
{
	struct tt f;
	json_t *methods = json_object(), *msgs = json_array(), *recs;

	(void)state;
	start(&f, "[" ANSWER("ok") "]", NULL, NULL);
	send(&f, methods, "thread/shellCommand",
		json_pack("{s:s, s:s}", "threadId", f.thread_id, "command", "sleep 1; echo slow"));
	take_until(&f, msgs, methods, "item/started:commandExecution:userShell");
	send(&f, methods, "turn/start",
		json_pack("{s:s, s:o}", "threadId", f.thread_id, "input", tt_text("during")));
	take_until(&f, msgs, methods, "turn/completed");
	assert_upstream_order(msgs, methods, "turn_start_during");
	recs = mm_records(&f.mm);
	assert_int_equal(json_array_size(recs), 0); /* the model was not asked */
	json_decref(recs);
	json_decref(msgs);
	json_decref(methods);
	tt_stop(&f);
}

/* Two at once: one turn, both items in it, both records. */
static void
test_two_at_once(void **state)
{
	struct tt f;
	json_t *methods = json_object(), *msgs = json_array();

	(void)state;
	start(&f, "[" ANSWER("ok") "]", NULL, NULL);
	send(&f, methods, "thread/shellCommand",
		json_pack("{s:s, s:s}", "threadId", f.thread_id, "command", "sleep 0.3; echo one"));
	send(&f, methods, "thread/shellCommand",
		json_pack("{s:s, s:s}", "threadId", f.thread_id, "command", "echo two"));
	take_until(&f, msgs, methods, "turn/completed");
	assert_int_equal(tt_count(msgs, "turn/started"), 1);
	assert_int_equal(tt_count(msgs, "item/completed"), 2);
	assert_int_equal(tt_count(msgs, "turn/completed"), 1);
	json_decref(msgs);
	json_decref(methods);
	tt_stop(&f);
}

/* kill -9 while a command runs: after a restart its turn is there once, the next one runs. */
static void
test_kill_9_resume(void **state)
{
	struct tt f;
	json_t *methods = json_object(), *msgs = json_array(), *r, *turns;

	(void)state;
	start(&f, "[" ANSWER("first") "," ANSWER("after the crash") "]", NULL, NULL);
	json_decref(tt_turn(&f, "before", NULL, NULL, NULL));
	send(&f, methods, "thread/shellCommand",
		json_pack("{s:s, s:s}", "threadId", f.thread_id, "command", "echo x; sleep 30"));
	take_until(&f, msgs, methods, "item/commandExecution/outputDelta");
	kill(asc_pid(f.c), SIGKILL);
	asc_free_killed(f.c, SIGKILL);
	tt_respawn(&f);
	r = tt_call(&f, "thread/resume", json_pack("{s:s}", "threadId", f.thread_id));
	turns = json_object_get(json_object_get(asc_assert_result(r), "thread"), "turns");
	assert_int_equal(json_array_size(turns), 2);
	assert_string_not_equal(
		json_string_value(json_object_get(json_array_get(turns, 1), "status")),
		"inProgress");
	json_decref(r);
	json_decref(msgs);
	msgs = tt_turn(&f, "again", NULL, NULL, NULL);
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(msgs), "status")), "completed");
	json_decref(msgs);
	r = tt_call(&f, "thread/read",
		json_pack("{s:s, s:b}", "threadId", f.thread_id, "includeTurns", 1));
	assert_int_equal(json_array_size(json_object_get(
				 json_object_get(asc_assert_result(r), "thread"), "turns")),
		3);
	json_decref(r);
	json_decref(methods);
	tt_stop(&f);
}

/* An error answer with this code and exact message. */
static void
expect_error(json_t *r, int code, const char *message)
{
	asc_assert_error(r, code, NULL);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(r, "error"), "message")),
		message);
	json_decref(r);
}

/* Upstream's errors, in its words and codes. */
static void
test_errors(void **state)
{
	struct tt f;
	json_t *r;

	(void)state;
	start(&f, "[" ANSWER("x") "]", NULL, NULL);
	r = tt_call(&f, "thread/shellCommand",
		json_pack("{s:s, s:s}", "threadId", f.thread_id, "command", ""));
	expect_error(r, -32600, "command must not be empty");
	r = tt_call(&f, "thread/shellCommand",
		json_pack("{s:s, s:s}", "threadId", "00000000-0000-0000-0000-000000000000",
			"command", "true"));
	expect_error(r, -32600, "thread not found: 00000000-0000-0000-0000-000000000000");
	r = tt_call(&f, "thread/shellCommand",
		json_pack("{s:s, s:s}", "threadId", "bogus", "command", "true"));
	expect_error(r, -32600,
		"invalid thread id: invalid character: expected an optional prefix of `urn:uuid:` "
		"followed by [0-9a-fA-F-], found `o` at 2");
	r = tt_call(&f, "thread/shellCommand",
		json_pack("{s:s, s:s, s:i}", "threadId", f.thread_id, "command", "true",
			"timeoutMs", -1));
	expect_error(r, -32602, "thread/shellCommand timeoutMs must be non-negative, got -1");
	tt_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle),
		cmocka_unit_test(test_alongside),
		cmocka_unit_test(test_interrupt),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_turn_start_during),
		cmocka_unit_test(test_two_at_once),
		cmocka_unit_test(test_kill_9_resume),
		cmocka_unit_test(test_errors),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	json_decref(fixture);
	return r;
}
