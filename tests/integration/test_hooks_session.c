/*
 * The hooks' session surface, as upstream 0.169 behaves (recorded with
 * tests/fixtures/hooks/record.py, tests/fixtures/hooks/upstream/continue.json; upstream is not
 * needed here): `continue: false` per event (SessionStart and UserPromptSubmit end the turn
 * with no item and no model request, PreToolUse's is refused as unsupported and the command
 * runs, PostToolUse's stopReason replaces the call's output, Stop's ends the turn without
 * asking again), `--dangerously-bypass-hook-trust` before `app-server` and `bypass_hook_trust`
 * in thread/start's `config` running untrusted hooks, and SessionStart's `source: "resume"`
 * on the first turn of a thread read back by thread/resume.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

#define OK_SCRIPT                                                                                  \
	"{`responses`: [{`events`: [{`ev`: `created`}, {`ev`: `message`, `id`: `m1`, `text`: "     \
	"`ok`}, {`ev`: `completed`}]}], `repeat`: true}"
#define TOOL_SCRIPT                                                                                \
	"{`responses`: [{`events`: [{`ev`: `created`}, {`ev`: `function_call`, `call_id`: "        \
	"`call-1`, `name`: `exec_command`, `arguments`: {`cmd`: `echo hi`}}, {`ev`: "              \
	"`completed`}]}, {`events`: [{`ev`: `created`}, {`ev`: `message`, `id`: `m1`, `text`: "    \
	"`ok`}, {`ev`: `completed`}]}], `repeat`: true}"
#define STOP_OUT(ev)                                                                               \
	"cat >/dev/null; echo \"{\\\"continue\\\":false,\\\"stopReason\\\":\\\"STOP-" ev "\\\"}\""

/* One handler of an event (trusted only by bypass: bypass_hook_trust in config.toml if set). */
static char *
hs_hook(char *config, const char *event, const char *command)
{
	char *s = xasprintf("%s[[hooks.%s]]\n[[hooks.%s.hooks]]\ntype = \"command\"\ncommand = "
			    "'%s'\ntimeout = 5\n",
		config, event, event, command);

	free(config);
	return s;
}

static void
hs_start(struct tt *f, char *config, const char *script, const char *const *args)
{
	char *s = tt_script(script);
	struct tt_opts o = {.script = s, .config_extra = config, .experimental = 1, .args = args};

	tt_start(f, &o);
	free(s);
	free(config);
}

/* The status of the n-th hook/completed whose run is of the event, or NULL. */
static const char *
hs_status(const json_t *msgs, const char *event)
{
	const json_t *m, *run;
	size_t i;

	json_array_foreach(msgs, i, m)
	{
		run = json_object_get(json_object_get(m, "params"), "run");
		if (strcmp(json_string_value(json_object_get(m, "method")) ?: "",
			    "hook/completed") == 0 &&
			strcmp(json_string_value(json_object_get(run, "eventName")), event) == 0)
			return json_string_value(json_object_get(run, "status"));
	}
	return NULL;
}

static size_t
hs_requests(struct tt *f)
{
	json_t *recs = mm_records(&f->mm);
	size_t n = json_array_size(recs);

	json_decref(recs);
	return n;
}

/* continue:false from the prompt hooks: "stopped", the turn ends with no item, no request. */
static void
test_continue_prompt(void **state)
{
	struct tt f;
	json_t *msgs;

	(void)state;
	hs_start(&f, hs_hook(xstrdup("bypass_hook_trust = true\n"), "SessionStart", STOP_OUT("SS")),
		OK_SCRIPT, NULL);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	assert_string_equal(hs_status(msgs, "sessionStart"), "stopped");
	assert_null(tt_find(msgs, "item/started", 0));
	assert_int_equal(hs_requests(&f), 0);
	json_decref(msgs);
	tt_stop(&f);

	hs_start(&f,
		hs_hook(xstrdup("bypass_hook_trust = true\n"), "UserPromptSubmit", STOP_OUT("UPS")),
		OK_SCRIPT, NULL);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	assert_string_equal(hs_status(msgs, "userPromptSubmit"), "stopped");
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(
				json_object_get(
					json_object_get(
						json_object_get(tt_find(msgs, "hook/completed", 0),
							"params"),
						"run"),
					"entries"),
				0),
			"kind")),
		"stop");
	assert_null(tt_find(msgs, "item/started", 0));
	assert_int_equal(hs_requests(&f), 0);
	json_decref(msgs);
	tt_stop(&f);
}

/* continue:false around a tool: PreToolUse's refused (the command runs), PostToolUse's
 * stopReason is the call's output, Stop's ends the turn (no second answer asked). */
static void
test_continue_tools(void **state)
{
	struct tt f;
	json_t *msgs, *recs;
	const json_t *run;

	(void)state;
	hs_start(&f,
		hs_hook(hs_hook(hs_hook(xstrdup("bypass_hook_trust = true\n"), "PreToolUse",
					STOP_OUT("PRE")),
				"PostToolUse", STOP_OUT("POST")),
			"Stop", STOP_OUT("STOP")),
		TOOL_SCRIPT, NULL);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	run = json_object_get(json_object_get(tt_find(msgs, "hook/completed", 0), "params"), "run");
	assert_string_equal(json_string_value(json_object_get(run, "status")), "failed");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(run, "entries"), 0), "text")),
		"PreToolUse hook returned unsupported continue:false");
	assert_non_null(tt_item(msgs, "commandExecution", 0)); /* it ran */
	assert_string_equal(hs_status(msgs, "postToolUse"), "stopped");
	assert_string_equal(hs_status(msgs, "stop"), "stopped");
	recs = mm_records(&f.mm);
	assert_int_equal(json_array_size(recs), 2);
	assert_string_equal(tt_call_output(tt_request_body(recs, 1), "call-1"), "STOP-POST");
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
}

/* Untrusted hooks run under upstream's top-level flag, given before `app-server`. */
static void
test_bypass_flag(void **state)
{
	static const char *const args[] = {"--dangerously-bypass-hook-trust", "app-server", NULL};
	struct tt f;
	json_t *msgs;

	(void)state;
	hs_start(&f, hs_hook(xstrdup(""), "UserPromptSubmit", "cat >/dev/null"), OK_SCRIPT, args);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	assert_string_equal(hs_status(msgs, "userPromptSubmit"), "completed");
	json_decref(msgs);
	tt_stop(&f);
}

/* ... and for a thread started with bypass_hook_trust in its `config`, not for the others. */
static void
test_bypass_thread_config(void **state)
{
	struct tt f;
	json_t *msgs, *r;

	(void)state;
	hs_start(&f, hs_hook(xstrdup(""), "UserPromptSubmit", "cat >/dev/null"), OK_SCRIPT, NULL);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	assert_null(hs_status(msgs, "userPromptSubmit")); /* untrusted */
	json_decref(msgs);
	r = tt_call(&f, "thread/start",
		json_pack("{s:s, s:s, s:s, s:{s:b}}", "cwd", f.workspace, "approvalPolicy", "never",
			"sandbox", "danger-full-access", "config", "bypass_hook_trust", 1));
	free(f.thread_id);
	f.thread_id = xstrdup(json_string_value(
		json_object_get(json_object_get(json_object_get(r, "result"), "thread"), "id")));
	json_decref(r);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	assert_string_equal(hs_status(msgs, "userPromptSubmit"), "completed");
	json_decref(msgs);
	tt_stop(&f);
}

/* A thread read back by thread/resume in a new daemon: SessionStart's source is "resume". */
static void
test_resume_source(void **state)
{
	struct tt f;
	char *log = xasprintf("/tmp/hk-session-%d.in", (int)getpid()), *cmd, *text;
	json_t *msgs, *r;

	(void)state;
	unlink(log);
	cmd = xasprintf("cat >> %s; echo >> %s", log, log);
	hs_start(&f, hs_hook(xstrdup("bypass_hook_trust = true\n"), "SessionStart", cmd), OK_SCRIPT,
		NULL);
	free(cmd);
	json_decref(tt_turn(&f, "hi", NULL, NULL, NULL));
	asc_free(f.c);
	tt_respawn(&f);
	r = tt_call(&f, "thread/resume", json_pack("{s:s}", "threadId", f.thread_id));
	assert_non_null(json_object_get(r, "result"));
	json_decref(r);
	msgs = tt_turn(&f, "again", NULL, NULL, NULL);
	assert_string_equal(hs_status(msgs, "sessionStart"), "completed");
	json_decref(msgs);
	tt_stop(&f);
	text = tt_read(log);
	assert_non_null(text);
	assert_non_null(strstr(text, "\"source\":\"startup\""));
	assert_non_null(strstr(strstr(text, "\"source\":\"startup\""), "\"source\":\"resume\""));
	free(text);
	unlink(log);
	free(log);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_continue_prompt),
		cmocka_unit_test(test_continue_tools),
		cmocka_unit_test(test_bypass_flag),
		cmocka_unit_test(test_bypass_thread_config),
		cmocka_unit_test(test_resume_source),
	};
	asc_ref_load();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
