/*
 * Lifecycle hooks in turns, as upstream 0.169 runs them (tests/fixtures/hooks/upstream/
 * turns.json, recorded by tests/fixtures/hooks/record.py; upstream is not needed here):
 * SessionStart and UserPromptSubmit before the user message item with their contexts as
 * developer messages around it, a UserPromptSubmit block ending the turn with no item and no
 * model request, a Stop block asking the model again with a hookPrompt item, a failing hook
 * and a timed-out one reported as upstream words them, and untrusted hooks never run. The
 * hooks run under `bypass_hook_trust` (upstream's session flag) unless said.
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

/* A [hooks] table with one command hook per event given (event, command, ...; NULL ends). */
static char *
hk_config(int bypass, ...)
{
	va_list ap;
	const char *ev, *cmd;
	char *s = xstrdup(bypass ? "bypass_hook_trust = true\n" : ""), *n;

	va_start(ap, bypass);
	while ((ev = va_arg(ap, const char *)) != NULL) {
		cmd = va_arg(ap, const char *);
		n = xasprintf("%s[[hooks.%s]]\n[[hooks.%s.hooks]]\ntype = \"command\"\ncommand = "
			      "'%s'\ntimeout = %d\n",
			s, ev, ev, cmd, strstr(cmd, "sleep") != NULL ? 1 : 5);
		free(s);
		s = n;
	}
	va_end(ap);
	return s;
}

#define TWO_SCRIPT                                                                                 \
	"{`responses`: [{`events`: [{`ev`: `created`}, {`ev`: `message`, `id`: `m1`, `text`: "     \
	"`ok`}, {`ev`: `completed`}]}, {`events`: [{`ev`: `created`}, {`ev`: `message`, `id`: "    \
	"`m2`, `text`: `ok`}, {`ev`: `completed`}]}]}"

static void
hk_start_script(struct tt *f, char *config, const char *text)
{
	char *script = tt_script(text);
	struct tt_opts o = {.script = script, .config_extra = config, .experimental = 1};

	tt_start(f, &o);
	free(script);
	free(config);
}

static void
hk_start(struct tt *f, char *config)
{
	hk_start_script(f, config, OK_SCRIPT);
}

/* The n-th hook/completed's run. */
static const json_t *
hk_completed(const json_t *msgs, size_t n)
{
	const json_t *m = tt_find(msgs, "hook/completed", n);

	assert_non_null(m);
	return json_object_get(json_object_get(m, "params"), "run");
}

static size_t
hk_index(const json_t *msgs, const char *method, const char *item_type)
{
	const json_t *m;
	size_t i;

	json_array_foreach(msgs, i, m)
	{
		const char *meth = json_string_value(json_object_get(m, "method"));
		const json_t *it = json_object_get(json_object_get(m, "params"), "item");

		if (meth != NULL && strcmp(meth, method) == 0 &&
			(item_type == NULL ||
				strcmp(json_string_value(json_object_get(it, "type")), item_type) ==
					0))
			return i;
	}
	fail_msg("no %s %s", method, item_type != NULL ? item_type : "");
	return 0;
}

/* Where the text is in the request's input (its index), or -1. */
static int
hk_input_at(const json_t *body, const char *role, const char *text)
{
	const json_t *it;
	size_t i;

	json_array_foreach(json_object_get(body, "input"), i, it)
	{
		const json_t *part = json_array_get(json_object_get(it, "content"), 0);

		if (json_is_string(json_object_get(it, "role")) &&
			strcmp(json_string_value(json_object_get(it, "role")), role) == 0 &&
			json_is_string(json_object_get(part, "text")) &&
			strcmp(json_string_value(json_object_get(part, "text")), text) == 0)
			return (int)i;
	}
	return -1;
}

/* turns.json "ctx": plain stdout and additionalContext become developer messages. */
static void
test_context(void **state)
{
	struct tt f;
	json_t *msgs, *recs, *body;
	const json_t *run;
	int u;

	(void)state;
	hk_start(&f,
		hk_config(1, "SessionStart", "cat >/dev/null; echo CTX-SS plain",
			"UserPromptSubmit",
			"cat >/dev/null; echo "
			"\"{\\\"hookSpecificOutput\\\":{\\\"hookEventName\\\":"
			"\\\"UserPromptSubmit\\\",\\\"additionalContext\\\":\\\"CTX-UPS\\\"}}\"",
			NULL));
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	/* hook/started, hook/completed for each, then the user's item */
	assert_true(hk_index(msgs, "hook/started", NULL) < hk_index(msgs, "hook/completed", NULL));
	assert_true(hk_index(msgs, "hook/completed", NULL) <
		hk_index(msgs, "item/started", "userMessage"));
	run = hk_completed(msgs, 0);
	assert_string_equal(json_string_value(json_object_get(run, "eventName")), "sessionStart");
	assert_string_equal(json_string_value(json_object_get(run, "scope")), "thread");
	assert_string_equal(json_string_value(json_object_get(run, "status")), "completed");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(run, "entries"), 0), "text")),
		"CTX-SS plain");
	assert_int_equal(
		strncmp(json_string_value(json_object_get(run, "id")), "session-start:", 14), 0);
	run = hk_completed(msgs, 1);
	assert_string_equal(
		json_string_value(json_object_get(run, "eventName")), "userPromptSubmit");
	assert_string_equal(json_string_value(json_object_get(run, "scope")), "turn");
	recs = mm_records(&f.mm);
	body = tt_request_body(recs, 0);
	u = hk_input_at(body, "user", "hi");
	assert_true(u > 0);
	assert_int_equal(hk_input_at(body, "developer", "CTX-SS plain"), u - 1);
	assert_int_equal(hk_input_at(body, "developer", "CTX-UPS"), u + 1);
	json_decref(recs);
	json_decref(msgs);
	/* the second turn: no SessionStart again */
	msgs = tt_turn(&f, "again", NULL, NULL, NULL);
	assert_string_equal(json_string_value(json_object_get(hk_completed(msgs, 0), "eventName")),
		"userPromptSubmit");
	assert_null(tt_find(msgs, "hook/completed", 1));
	json_decref(msgs);
	tt_stop(&f);
}

/* turns.json "upsblock": the turn completes with no item and no model request. */
static void
test_prompt_block(void **state)
{
	struct tt f;
	json_t *msgs, *recs, *done;

	(void)state;
	hk_start(&f,
		hk_config(1, "UserPromptSubmit",
			"cat >/dev/null; echo "
			"\"{\\\"decision\\\":\\\"block\\\",\\\"reason\\\":\\\"BLOCKED-UPS\\\"}\"",
			NULL));
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	assert_string_equal(
		json_string_value(json_object_get(hk_completed(msgs, 0), "status")), "blocked");
	assert_null(tt_find(msgs, "item/started", 0));
	done = tt_find(msgs, "turn/completed", 0);
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(json_object_get(done, "params"), "turn"), "status")),
		"completed");
	recs = mm_records(&f.mm);
	assert_int_equal(json_array_size(recs), 0);
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
}

/* turns.json "stopblock": a hookPrompt item, the model asked again, Stop active next. */
static void
test_stop_block(void **state)
{
	struct tt f;
	json_t *msgs, *recs;
	const json_t *run, *it;
	char *marker = xasprintf("/tmp/hk-stop-%d", (int)getpid()), *cmd, *want;

	(void)state;
	unlink(marker);
	cmd = xasprintf(
		"cat >> %s.in; echo >> %s.in; if [ -f %s ]; then exit 0; fi; touch %s; echo "
		"\"{\\\"decision\\\":\\\"block\\\",\\\"reason\\\":\\\"again please\\\"}\"",
		marker, marker, marker, marker);
	hk_start_script(&f, hk_config(1, "Stop", cmd, NULL), TWO_SCRIPT);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	run = hk_completed(msgs, 0);
	assert_string_equal(json_string_value(json_object_get(run, "status")), "blocked");
	assert_string_equal(
		json_string_value(json_object_get(hk_completed(msgs, 1), "status")), "completed");
	it = json_object_get(
		json_object_get(
			json_array_get(msgs, hk_index(msgs, "item/completed", "hookPrompt")),
			"params"),
		"item");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(it, "fragments"), 0), "text")),
		"again please");
	recs = mm_records(&f.mm);
	assert_int_equal(json_array_size(recs), 2);
	want = xasprintf("<hook_prompt hook_run_id=\"%s\">again please</hook_prompt>",
		json_string_value(json_object_get(run, "id")));
	assert_true(hk_input_at(tt_request_body(recs, 1), "user", want) > 0);
	free(want);
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
	/* the second Stop was told stop_hook_active */
	free(cmd);
	cmd = xasprintf("%s.in", marker);
	{
		FILE *in = fopen(cmd, "r");
		char line[8192];
		int n = 0, active = 0;

		assert_non_null(in);
		while (fgets(line, sizeof line, in) != NULL) {
			json_t *j = json_loads(line, 0, NULL);

			n += j != NULL;
			active += json_is_true(json_object_get(j, "stop_hook_active"));
			if (j != NULL)
				assert_string_equal(json_string_value(json_object_get(
							    j, "last_assistant_message")),
					"ok");
			json_decref(j);
		}
		fclose(in);
		assert_int_equal(n, 2);
		assert_int_equal(active, 1);
	}
	unlink(cmd);
	unlink(marker);
	free(cmd);
	free(marker);
}

/* turns.json "fail" and "timeout": reported as upstream words them; the turn goes on. */
static void
test_fail_and_timeout(void **state)
{
	struct tt f;
	json_t *msgs, *recs;
	const json_t *run;

	(void)state;
	hk_start(&f,
		hk_config(1, "SessionStart", "cat >/dev/null; echo SS-ERR >&2; exit 1",
			"UserPromptSubmit", "sleep 30", NULL));
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	run = hk_completed(msgs, 0);
	assert_string_equal(json_string_value(json_object_get(run, "status")), "failed");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(run, "entries"), 0), "text")),
		"hook exited with code 1");
	run = hk_completed(msgs, 1);
	assert_string_equal(json_string_value(json_object_get(run, "status")), "failed");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(run, "entries"), 0), "text")),
		"hook timed out after 1s");
	assert_true(json_integer_value(json_object_get(run, "durationMs")) >= 1000);
	assert_true(json_integer_value(json_object_get(run, "durationMs")) < 5000);
	recs = mm_records(&f.mm);
	assert_int_equal(json_array_size(recs), 1);
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
}

/* turns.json "untrusted": without trust (or bypass_hook_trust) nothing runs. */
static void
test_untrusted(void **state)
{
	struct tt f;
	json_t *msgs;

	(void)state;
	hk_start(&f,
		hk_config(0, "UserPromptSubmit", "cat >/dev/null; echo CTX", "Stop",
			"cat >/dev/null", NULL));
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	assert_null(tt_find(msgs, "hook/started", 0));
	json_decref(msgs);
	tt_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_context),
		cmocka_unit_test(test_prompt_block),
		cmocka_unit_test(test_stop_block),
		cmocka_unit_test(test_fail_and_timeout),
		cmocka_unit_test(test_untrusted),
	};

	asc_ref_load();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
