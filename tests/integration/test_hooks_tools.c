/*
 * PreToolUse and PostToolUse around exec_command, as upstream 0.169 runs them
 * (tests/fixtures/hooks/upstream/turns.json "toolctx" and "toolblock", recorded by
 * tests/fixtures/hooks/record.py; upstream is not needed here): tool "Bash" with
 * {command}, run ids ending in ":<call id>", the stdin fields, both contexts as developer
 * messages after the call and before its output, matchers selecting the handlers, and a block
 * answering the model "Command blocked by PreToolUse hook: <reason>. Command: <cmd>" with the
 * command never run and no commandExecution item.
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

/* record.py's TOOL=exec_command {cmd}, then the final answer. */
#define TOOL_SCRIPT(cmd)                                                                           \
	"{`responses`: [{`events`: [{`ev`: `created`}, {`ev`: `function_call`, `call_id`: "        \
	"`call-1`, `name`: `exec_command`, `arguments`: {`cmd`: `" cmd "`}}, {`ev`: "              \
	"`completed`}]}, {`events`: [{`ev`: `created`}, {`ev`: `message`, `id`: `m1`, `text`: "    \
	"`ok`}, {`ev`: `completed`}]}], `repeat`: true}"

/* One handler of an event with a matcher, run under bypass_hook_trust. */
static char *
ht_hook(char *config, const char *event, const char *matcher, const char *command)
{
	char *s = xasprintf("%s[[hooks.%s]]\nmatcher = \"%s\"\n[[hooks.%s.hooks]]\ntype = "
			    "\"command\"\ncommand = '%s'\ntimeout = 5\n",
		config != NULL ? config : "bypass_hook_trust = true\n", event, matcher, event,
		command);

	free(config);
	return s;
}

static void
ht_start(struct tt *f, char *config, const char *script)
{
	char *s = tt_script(script);
	struct tt_opts o = {.script = s, .config_extra = config, .experimental = 1};

	tt_start(f, &o);
	free(s);
	free(config);
}

/* The index in msgs of the first message of a method (and item type), or -1. */
static long
ht_index(const json_t *msgs, const char *method, const char *type)
{
	const json_t *m;
	size_t i;

	json_array_foreach(msgs, i, m)
	{
		const json_t *p = json_object_get(m, "params");
		const char *t =
			json_string_value(json_object_get(json_object_get(p, "item"), "type"));

		if (strcmp(json_string_value(json_object_get(m, "method")) ?: "", method) == 0 &&
			(type == NULL || (t != NULL && strcmp(t, type) == 0)))
			return (long)i;
	}
	return -1;
}

static const json_t *
ht_run(const json_t *msgs, size_t n)
{
	const json_t *m = tt_find(msgs, "hook/completed", n);

	assert_non_null(m);
	return json_object_get(json_object_get(m, "params"), "run");
}

/* The i-th input item of a request body. */
static const json_t *
ht_input(const json_t *body, size_t i)
{
	return json_array_get(json_object_get(body, "input"), i);
}

static const char *
ht_text(const json_t *it)
{
	return json_string_value(
		json_object_get(json_array_get(json_object_get(it, "content"), 0), "text"));
}

/* The stdin a hook logged (one JSON object a line), n-th line. */
static json_t *
ht_stdin(const char *path, int n)
{
	char *text = tt_read(path), *line, *nl;
	json_t *j = NULL;

	assert_non_null(text);
	for (line = text; line != NULL && j == NULL; line = nl != NULL ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (nl != NULL)
			*nl = '\0';
		if (*line != '\0' && n-- == 0)
			j = json_loads(line, 0, NULL);
	}
	free(text);
	assert_non_null(j);
	return j;
}

/* turns.json "toolctx": contexts after the call, stdin as recorded, matchers. */
static void
test_tool_context(void **state)
{
	struct tt f;
	char *log = xasprintf("/tmp/hk-tools-%d.in", (int)getpid()), *cfg, *cmd;
	json_t *msgs, *recs, *in;
	const json_t *body, *run;
	long call = -1;
	size_t i;

	(void)state;
	unlink(log);
	cmd = xasprintf("cat >> %s; echo >> %s; echo "
			"\"{\\\"hookSpecificOutput\\\":{\\\"hookEventName\\\":\\\"PreToolUse\\\","
			"\\\"additionalContext\\\":\\\"CTX-PRE\\\"}}\"",
		log, log);
	cfg = ht_hook(NULL, "PreToolUse", "^Bash$", cmd);
	free(cmd);
	cfg = ht_hook(cfg, "PreToolUse", "apply_patch", "cat >/dev/null; echo NOT-ME");
	cmd = xasprintf("cat >> %s; echo >> %s; echo "
			"\"{\\\"hookSpecificOutput\\\":{\\\"hookEventName\\\":\\\"PostToolUse\\\","
			"\\\"additionalContext\\\":\\\"CTX-POST\\\"}}\"",
		log, log);
	cfg = ht_hook(cfg, "PostToolUse", "*", cmd);
	free(cmd);
	ht_start(&f, cfg, TOOL_SCRIPT("echo hi"));
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);

	/* one PreToolUse (the matcher "apply_patch" selects nothing), before the command's item;
	 * PostToolUse after the item completed */
	assert_int_equal(tt_count(msgs, "hook/completed"), 2);
	run = ht_run(msgs, 0);
	assert_string_equal(json_string_value(json_object_get(run, "eventName")), "preToolUse");
	assert_string_equal(json_string_value(json_object_get(run, "scope")), "turn");
	assert_string_equal(json_string_value(json_object_get(run, "id")) +
			strlen(json_string_value(json_object_get(run, "id"))) - 7,
		":call-1");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(run, "entries"), 0), "text")),
		"CTX-PRE");
	assert_true(ht_index(msgs, "hook/completed", NULL) <
		ht_index(msgs, "item/started", "commandExecution"));
	run = ht_run(msgs, 1);
	assert_string_equal(json_string_value(json_object_get(run, "eventName")), "postToolUse");
	assert_true(ht_index(msgs, "item/completed", "commandExecution") <
		(long)json_array_size(msgs) - 1);
	for (i = 0; i < json_array_size(msgs); i++) /* the last hook/started: PostToolUse's */
		if (strcmp(json_string_value(json_object_get(json_array_get(msgs, i), "method"))
				    ?: "",
			    "hook/started") == 0)
			call = (long)i;
	assert_true(ht_index(msgs, "item/completed", "commandExecution") < call);
	assert_true(call < ht_index(msgs, "item/started", "agentMessage"));
	call = -1;

	/* the model's second request: the call, CTX-PRE, CTX-POST, then the call's output */
	recs = mm_records(&f.mm);
	assert_int_equal(json_array_size(recs), 2);
	body = tt_request_body(recs, 1);
	for (i = 0; i < json_array_size(json_object_get(body, "input")); i++)
		if (strcmp(json_string_value(json_object_get(ht_input(body, i), "type")) ?: "",
			    "function_call") == 0)
			call = (long)i;
	assert_true(call >= 0);
	assert_string_equal(
		json_string_value(json_object_get(ht_input(body, call + 1), "role")), "developer");
	assert_string_equal(ht_text(ht_input(body, call + 1)), "CTX-PRE");
	assert_string_equal(ht_text(ht_input(body, call + 2)), "CTX-POST");
	assert_string_equal(json_string_value(json_object_get(ht_input(body, call + 3), "type")),
		"function_call_output");
	assert_non_null(strstr(tt_call_output(body, "call-1"), "Output:\nhi\n"));
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);

	/* the stdin: tool "Bash" {command}, the call's id, PostToolUse the command's output */
	in = ht_stdin(log, 0);
	assert_string_equal(
		json_string_value(json_object_get(in, "hook_event_name")), "PreToolUse");
	assert_string_equal(json_string_value(json_object_get(in, "tool_name")), "Bash");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(in, "tool_input"), "command")),
		"echo hi");
	assert_string_equal(json_string_value(json_object_get(in, "tool_use_id")), "call-1");
	assert_non_null(json_object_get(in, "turn_id"));
	assert_null(json_object_get(in, "tool_response"));
	json_decref(in);
	in = ht_stdin(log, 1);
	assert_string_equal(
		json_string_value(json_object_get(in, "hook_event_name")), "PostToolUse");
	assert_string_equal(json_string_value(json_object_get(in, "tool_response")), "hi\n");
	assert_string_equal(json_string_value(json_object_get(in, "tool_use_id")), "call-1");
	json_decref(in);
	unlink(log);
	free(log);
}

/* turns.json "toolblock": the model hears the block, the command never runs. */
static void
test_tool_block(void **state)
{
	struct tt f;
	char *marker = xasprintf("/tmp/hk-tools-%d.ran", (int)getpid()), *script, *want;
	json_t *msgs, *recs;
	const json_t *run;

	(void)state;
	unlink(marker);
	script = xasprintf(TOOL_SCRIPT("touch %s"), marker);
	ht_start(&f,
		ht_hook(ht_hook(NULL, "PreToolUse", "*",
				"cat >/dev/null; echo "
				"\"{\\\"decision\\\":\\\"block\\\",\\\"reason\\\":\\\"NO-TOOL\\\"}\""),
			"PostToolUse", "*", "cat >/dev/null; echo CTX-POST"),
		script);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	run = ht_run(msgs, 0);
	assert_string_equal(json_string_value(json_object_get(run, "status")), "blocked");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(run, "entries"), 0), "text")),
		"NO-TOOL");
	assert_int_equal(tt_count(msgs, "hook/completed"), 1); /* no PostToolUse */
	assert_int_equal(ht_index(msgs, "item/started", "commandExecution"), -1);
	assert_int_not_equal(access(marker, F_OK), 0);
	recs = mm_records(&f.mm);
	assert_int_equal(json_array_size(recs), 2);
	want = xasprintf("Command blocked by PreToolUse hook: NO-TOOL. Command: touch %s", marker);
	assert_string_equal(tt_call_output(tt_request_body(recs, 1), "call-1"), want);
	free(want);
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
	free(script);
	free(marker);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tool_context),
		cmocka_unit_test(test_tool_block),
	};
	asc_ref_load();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
