/*
 * Turns against the real daemon and `app-server mock-model`: the order of a turn's
 * notifications as upstream sends them (notes §3), what the model is sent, streamed items
 * (agent messages, reasoning), each shell tool form with its answer to the model, write_stdin
 * sessions, update_plan, and the history a second turn carries. turn_util.c checks the turn
 * rules on every turn (one turn/completed, items complete once, requests resolved); the
 * harness validates every message against the reference schema.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

#define ANSWER_DONE                                                                                \
	"{`events`:[{`ev`:`created`},{`ev`:`message`,`id`:`m-end`,`text`:`done`},{`ev`:`completed`}]}"

/* Start a fixture on a script written with ` for ". */
static void
start(struct tt *f, const char *script, const char *approval, const char *sandbox)
{
	char *s = tt_script(script);
	struct tt_opts o = {.script = s, .approval_policy = approval, .sandbox = sandbox};

	tt_start(f, &o);
	free(s);
}

/* The method of message i. */
static const char *
method_at(const json_t *msgs, size_t i)
{
	return json_string_value(json_object_get(json_array_get(msgs, i), "method"));
}

static void
test_text_turn_order(void **state)
{
	struct tt f;
	json_t *msgs, *turn, *p, *recs, *body, *in;
	size_t n;

	(void)state;
	start(&f,
		"[{`events`:[{`ev`:`created`},{`ev`:`message_added`,`id`:`msg-1`},"
		"{`ev`:`text_delta`,`delta`:`Hel`},{`ev`:`text_delta`,`delta`:`lo`},"
		"{`ev`:`message`,`id`:`msg-1`,`text`:`Hello`},{`ev`:`completed`,"
		"`input_tokens`:100,`cached_tokens`:40,`output_tokens`:20,`reasoning_tokens`:7,"
		"`total_tokens`:120}]}]",
		NULL, NULL);
	msgs = tt_turn(&f, "hi there", NULL, NULL, NULL);
	/* The answer: inProgress, nothing loaded yet. */
	turn = json_object_get(asc_assert_result(json_array_get(msgs, 0)), "turn");
	assert_string_equal(json_string_value(json_object_get(turn, "status")), "inProgress");
	assert_string_equal(json_string_value(json_object_get(turn, "itemsView")), "notLoaded");
	assert_true(json_is_null(json_object_get(turn, "startedAt")));
	/* Then upstream's order, message by message. */
	static const char *const order[] = {"thread/status/changed", "turn/started", "item/started",
		"item/completed", "item/started", "item/agentMessage/delta",
		"item/agentMessage/delta", "item/completed", "thread/tokenUsage/updated",
		"account/rateLimits/updated", "thread/status/changed", "turn/completed"};
	n = sizeof order / sizeof order[0];
	assert_int_equal(json_array_size(msgs), n + 1);
	for (size_t i = 0; i < n; i++)
		if (strcmp(method_at(msgs, i + 1), order[i]) != 0)
			fail_msg("message %zu is %s, expected %s", i + 1, method_at(msgs, i + 1),
				order[i]);
	p = json_object_get(json_array_get(msgs, 1), "params");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(p, "status"), "type")), "active");
	p = json_object_get(json_array_get(msgs, 3), "params");
	assert_string_equal(json_string_value(json_object_get(json_object_get(p, "item"), "type")),
		"userMessage");
	p = json_object_get(json_array_get(msgs, 5), "params");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(p, "item"), "text")), "");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(p, "item"), "id")), "msg-1");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_array_get(msgs, 7), "params"), "delta")),
		"lo");
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "agentMessage", 0), "text")),
		"Hello");
	p = json_object_get(json_object_get(json_array_get(msgs, 9), "params"), "tokenUsage");
	assert_int_equal(json_integer_value(
				 json_object_get(json_object_get(p, "total"), "cachedInputTokens")),
		40);
	assert_int_equal(json_integer_value(json_object_get(p, "modelContextWindow")), 258400);
	/* the account's rate limits after the usage: the codex snapshot, nulls without headers */
	p = json_object_get(json_object_get(json_array_get(msgs, 10), "params"), "rateLimits");
	assert_string_equal(json_string_value(json_object_get(p, "limitId")), "codex");
	assert_true(json_is_null(json_object_get(p, "primary")));
	p = json_object_get(json_array_get(msgs, 11), "params");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(p, "status"), "type")), "idle");
	turn = tt_completed(msgs);
	assert_string_equal(json_string_value(json_object_get(turn, "status")), "completed");
	assert_string_equal(json_string_value(json_object_get(turn, "itemsView")), "summary");
	assert_int_equal(json_array_size(json_object_get(turn, "items")), 1);
	assert_true(json_is_integer(json_object_get(turn, "durationMs")));
	assert_true(json_is_null(json_object_get(turn, "error")));
	/* What the model was sent. */
	recs = mm_records(&f.mm);
	assert_int_equal(json_array_size(recs), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(recs, 0), "path")),
		"/v1/responses");
	body = tt_request_body(recs, 0);
	assert_string_equal(json_string_value(json_object_get(body, "model")), "mock-model");
	assert_true(json_is_true(json_object_get(body, "stream")));
	assert_true(json_is_false(json_object_get(body, "store")));
	assert_string_equal(
		json_string_value(json_object_get(body, "prompt_cache_key")), f.thread_id);
	in = json_object_get(body, "input");
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(in, 0), "role")), "developer");
	assert_true(tt_body_has_text(body, "<environment_context>"));
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(json_array_get(in, json_array_size(in) - 1),
					       "content"),
				0),
			"text")),
		"hi there");
	assert_true(json_array_size(json_object_get(body, "tools")) >=
		2); /* exec_command, write_stdin */
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_message_without_deltas(void **state)
{
	struct tt f;
	json_t *msgs, *started;

	(void)state;
	start(&f, "[" ANSWER_DONE "]", NULL, NULL);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	assert_int_equal(tt_count(msgs, "item/agentMessage/delta"), 0);
	started = json_object_get(
		json_object_get(tt_find(msgs, "item/started", 1), "params"), "item");
	assert_string_equal(json_string_value(json_object_get(started, "text")), "done");
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_reasoning(void **state)
{
	struct tt f;
	json_t *msgs, *r;

	(void)state;
	start(&f,
		"[{`events`:[{`ev`:`created`},{`ev`:`reasoning_added`,`id`:`rs-1`},"
		"{`ev`:`reasoning_summary_part`,`summary_index`:0},"
		"{`ev`:`reasoning_summary_delta`,`delta`:`Thinking...`,`summary_index`:0},"
		"{`ev`:`reasoning_text_delta`,`delta`:`raw-think`,`content_index`:0},"
		"{`ev`:`reasoning`,`id`:`rs-1`,`summary`:[`Thinking...`],`content`:[`raw-think`]},"
		"{`ev`:`message`,`id`:`m`,`text`:`ok`},{`ev`:`completed`}]}]",
		NULL, NULL);
	msgs = tt_turn(&f, "think", NULL, NULL, NULL);
	assert_int_equal(tt_count(msgs, "item/reasoning/summaryPartAdded"), 1);
	assert_int_equal(tt_count(msgs, "item/reasoning/summaryTextDelta"), 1);
	assert_int_equal(tt_count(msgs, "item/reasoning/textDelta"), 1);
	r = tt_item(msgs, "reasoning", 0);
	assert_non_null(r);
	assert_string_equal(
		json_string_value(json_array_get(json_object_get(r, "summary"), 0)), "Thinking...");
	assert_string_equal(
		json_string_value(json_array_get(json_object_get(r, "content"), 0)), "raw-think");
	/* turn/completed lists only the agent message. */
	assert_int_equal(json_array_size(json_object_get(tt_completed(msgs), "items")), 1);
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_exec_command(void **state)
{
	struct tt f;
	json_t *msgs, *item, *recs;
	const char *out;

	(void)state;
	start(&f,
		"[{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`call-1`,"
		"`name`:`exec_command`,`arguments`:{`cmd`:`echo hi`,`yield_time_ms`:5000}},"
		"{`ev`:`completed`}]}," ANSWER_DONE "]",
		NULL, NULL);
	msgs = tt_turn(&f, "run", NULL, NULL, NULL);
	item = tt_item(msgs, "commandExecution", 0);
	assert_non_null(item);
	assert_string_equal(json_string_value(json_object_get(item, "id")), "call-1");
	assert_string_equal(
		json_string_value(json_object_get(item, "command")), "/bin/bash -lc 'echo hi'");
	assert_string_equal(json_string_value(json_object_get(item, "cwd")), f.workspace);
	assert_string_equal(json_string_value(json_object_get(item, "status")), "completed");
	assert_string_equal(json_string_value(json_object_get(item, "aggregatedOutput")), "hi\n");
	assert_int_equal(json_integer_value(json_object_get(item, "exitCode")), 0);
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(
				tt_find(msgs, "item/commandExecution/outputDelta", 0), "params"),
			"delta")),
		"hi\n");
	/* Two token usage updates: one per model request. */
	assert_int_equal(tt_count(msgs, "thread/tokenUsage/updated"), 2);
	recs = mm_records(&f.mm);
	assert_int_equal(json_array_size(recs), 2);
	out = tt_call_output(tt_request_body(recs, 1), "call-1");
	assert_non_null(out);
	assert_non_null(strstr(out, "Chunk ID: "));
	assert_non_null(
		strstr(out, "Process exited with code 0\nOriginal token count: 1\nOutput:\nhi\n"));
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_shell_forms(void **state)
{
	struct tt f;
	json_t *msgs, *recs, *body;
	const char *out;

	(void)state;
	start(&f,
		"[{`events`:[{`ev`:`created`},"
		"{`ev`:`function_call`,`call_id`:`c-shell`,`name`:`shell`,"
		"`arguments`:{`command`:[`echo`,`argv`]}},"
		"{`ev`:`function_call`,`call_id`:`c-sc`,`name`:`shell_command`,"
		"`arguments`:{`command`:`echo script; exit 3`}},"
		"{`ev`:`local_shell_call`,`call_id`:`c-local`,`command`:[`echo`,`local`]},"
		"{`ev`:`completed`}]}," ANSWER_DONE "]",
		NULL, NULL);
	msgs = tt_turn(&f, "shells", NULL, NULL, NULL);
	assert_int_equal(tt_count(msgs, "item/started"), 5); /* user, 3 commands, answer */
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "commandExecution", 1), "status")),
		"failed");
	assert_int_equal(json_integer_value(
				 json_object_get(tt_item(msgs, "commandExecution", 1), "exitCode")),
		3);
	recs = mm_records(&f.mm);
	body = tt_request_body(recs, 1);
	out = tt_call_output(body, "c-shell");
	assert_non_null(out);
	assert_non_null(strstr(out, "\"output\":\"argv\\n\""));
	assert_non_null(strstr(out, "\"exit_code\":0"));
	out = tt_call_output(body, "c-sc");
	assert_non_null(out);
	assert_memory_equal(out, "Exit code: 3\nWall time: ", 24);
	assert_non_null(strstr(out, "Output:\nscript\n"));
	out = tt_call_output(body, "c-local");
	assert_non_null(out);
	assert_non_null(strstr(out, "local\n"));
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_write_stdin_session(void **state)
{
	struct tt f;
	json_t *msgs, *recs, *item;
	const char *out;

	(void)state;
	start(&f,
		"[{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`c-read`,"
		"`name`:`exec_command`,`arguments`:{`cmd`:`read x; echo got $x`,"
		"`yield_time_ms`:300}},{`ev`:`completed`}]},"
		"{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`c-write`,"
		"`name`:`write_stdin`,`arguments`:{`session_id`:1,`chars`:`hello\\n`,"
		"`yield_time_ms`:5000}},{`ev`:`completed`}]}," ANSWER_DONE "]",
		NULL, NULL);
	msgs = tt_turn(&f, "interact", NULL, NULL, NULL);
	recs = mm_records(&f.mm);
	assert_int_equal(json_array_size(recs), 3);
	out = tt_call_output(tt_request_body(recs, 1), "c-read");
	assert_non_null(out);
	assert_non_null(strstr(out, "Process running with session ID 1"));
	out = tt_call_output(tt_request_body(recs, 2), "c-write");
	assert_non_null(out);
	assert_non_null(strstr(out, "Process exited with code 0"));
	assert_non_null(strstr(out, "got hello"));
	item = tt_item(msgs, "commandExecution", 0);
	assert_string_equal(
		json_string_value(json_object_get(item, "aggregatedOutput")), "got hello\n");
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_update_plan(void **state)
{
	struct tt f;
	json_t *msgs, *p, *recs;

	(void)state;
	start(&f,
		"[{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`c-plan`,"
		"`name`:`update_plan`,`arguments`:{`explanation`:`two steps`,`plan`:["
		"{`step`:`read`,`status`:`completed`},{`step`:`fix`,`status`:`in_progress`}]}},"
		"{`ev`:`completed`}]}," ANSWER_DONE "]",
		NULL, NULL);
	msgs = tt_turn(&f, "plan", NULL, NULL, NULL);
	p = json_object_get(tt_find(msgs, "turn/plan/updated", 0), "params");
	assert_non_null(p);
	assert_string_equal(json_string_value(json_object_get(p, "explanation")), "two steps");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(p, "plan"), 1), "status")),
		"inProgress");
	assert_non_null(tt_item(msgs, "plan", 0));
	recs = mm_records(&f.mm);
	assert_string_equal(tt_call_output(tt_request_body(recs, 1), "c-plan"), "Plan updated");
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_second_turn_history(void **state)
{
	struct tt f;
	json_t *msgs, *recs, *body;

	(void)state;
	start(&f,
		"{`responses`:[{`events`:[{`ev`:`created`},{`ev`:`message`,`id`:`m`,"
		"`text`:`first answer`},{`ev`:`completed`}]}],`repeat`:true}",
		NULL, NULL);
	json_decref(tt_turn(&f, "first question", NULL, NULL, NULL));
	msgs = tt_turn(&f, "second question", NULL, NULL, NULL);
	recs = mm_records(&f.mm);
	body = tt_request_body(recs, 1);
	assert_true(tt_body_has_text(body, "first question"));
	assert_true(tt_body_has_text(body, "first answer"));
	assert_true(tt_body_has_text(body, "second question"));
	/* Token usage accumulates over the thread. */
	assert_int_equal(tt_count(msgs, "thread/tokenUsage/updated"), 1);
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_chat_wire_tool_call(void **state)
{
	char *s = tt_script(
		"[{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`call-c`,"
		"`name`:`exec_command`,`arguments`:{`cmd`:`echo chat`}},{`ev`:`completed`}]}," ANSWER_DONE
		"]");
	struct tt_opts o = {.script = s, .wire = "chat"};
	struct tt f;
	json_t *msgs, *recs;

	(void)state;
	tt_start(&f, &o);
	free(s);
	msgs = tt_turn(&f, "over chat", NULL, NULL, NULL);
	assert_string_equal(json_string_value(json_object_get(
				    tt_item(msgs, "commandExecution", 0), "aggregatedOutput")),
		"chat\n");
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "agentMessage", 0), "text")),
		"done");
	recs = mm_records(&f.mm);
	assert_string_equal(json_string_value(json_object_get(json_array_get(recs, 0), "path")),
		"/v1/chat/completions");
	/* The tool's answer went back as a chat tool message. */
	s = json_dumps(tt_request_body(recs, 1), JSON_COMPACT);
	assert_non_null(strstr(s, "\"tool_call_id\":\"call-c\""));
	free(s);
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_workdir_outside_refused(void **state)
{
	struct tt f;
	json_t *msgs, *recs;
	const char *out;
	char *link;

	(void)state;
	start(&f,
		"[{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`c-w`,"
		"`name`:`exec_command`,`arguments`:{`cmd`:`touch planted`,`workdir`:`escape`}},"
		"{`ev`:`completed`}]}," ANSWER_DONE "]",
		NULL, "workspace-write");
	/* A symlink the model could have planted, pointing out of the writable roots. */
	link = tt_path(&f, "escape");
	assert_int_equal(symlink("/var/tmp", link), 0);
	msgs = tt_turn(&f, "go", NULL, NULL, NULL);
	assert_null(tt_item(msgs, "commandExecution", 0));
	recs = mm_records(&f.mm);
	out = tt_call_output(tt_request_body(recs, 1), "c-w");
	assert_non_null(out);
	assert_null(strstr(out, "Process exited"));
	assert_int_not_equal(access("/var/tmp/planted", F_OK), 0);
	json_decref(recs);
	free(link);
	json_decref(msgs);
	tt_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_turn_order),
		cmocka_unit_test(test_message_without_deltas),
		cmocka_unit_test(test_reasoning),
		cmocka_unit_test(test_exec_command),
		cmocka_unit_test(test_shell_forms),
		cmocka_unit_test(test_write_stdin_session),
		cmocka_unit_test(test_update_plan),
		cmocka_unit_test(test_second_turn_history),
		cmocka_unit_test(test_chat_wire_tool_call),
		cmocka_unit_test(test_workdir_outside_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
