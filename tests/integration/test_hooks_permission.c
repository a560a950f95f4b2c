/*
 * PermissionRequest hooks, replayed from upstream 0.169's recordings
 * (tests/fixtures/hooks/upstream/permission.json, recorded by
 * tests/fixtures/hooks/record_permission.py; upstream is not needed here). Per recorded case the
 * same PreToolUse, PermissionRequest and PostToolUse hooks, the same PermissionRequest answer
 * (stdout, stderr, exit code, a delay past the timeout), the same call and thread settings, and
 * approvals declined; then the sequence of hook runs (event, status, entries), command and
 * fileChange items and approval requests must be upstream's, the model must hear what upstream's
 * heard, the hook's stdin must carry upstream's fields, and the command must have run exactly
 * when upstream's did (an allow runs it without asking; a deny answers the model without an
 * item; no decision, a failed or timed-out hook leave the approval to the client). The
 * "session" cases make the call twice, the client accepting the first for the session: the
 * second runs the hook again but is not asked about.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

#define FIXTURE "tests/fixtures/hooks/upstream/permission.json"

/* Our patch confinement refuses upstream's file outside the workspace: the patch cases add a
 * file in it instead (untrusted asks for every patch alike). */
#define PATCH_BODY "*** Begin Patch\n*** Add File: made-by-tool\n+hi\n*** End Patch"

static json_t *cases;

static int
setup(void **state)
{
	(void)state;
	cases = json_object_get(json_load_file(FIXTURE, 0, NULL), "cases");
	assert_non_null(cases);
	return 0;
}

static const json_t *
find_case(const char *name)
{
	const json_t *c;
	size_t i;

	json_array_foreach(cases, i, c)
	{
		if (strcmp(json_string_value(json_object_get(c, "name")), name) == 0)
			return c;
	}
	fail_msg("no recorded case %s", name);
	return NULL;
}

static json_t *
decline(void *arg, const json_t *request)
{
	(void)arg;
	(void)request;
	return json_pack("{s:s}", "decision", "decline");
}

/* The recorded client's answer: arg names it (acceptForSession where the call comes twice). */
static json_t *
answer(void *arg, const json_t *request)
{
	(void)request;
	return json_pack("{s:s}", "decision", (const char *)arg);
}

/* The function_call_output of call_id in a recorded request's input (NULL: none). */
static const char *
recorded_output(const json_t *input, const char *call_id)
{
	const json_t *x;
	size_t i;

	json_array_foreach(input, i, x)
	{
		if (strcmp(json_string_value(json_object_get(x, "type")), "function_call_output") ==
				0 &&
			strcmp(json_string_value(json_object_get(x, "call_id")), call_id) == 0)
			return json_string_value(json_object_get(x, "output"));
	}
	return NULL;
}

/* Write text to path. */
static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/*
 * The turn as compared: hook runs (event, status, entries), command and file items (method,
 * type, status), server requests (method), turn/completed. Works on both the recording
 * ({method, run|item|params}) and our messages ({method, params}).
 */
static char *
sequence(const json_t *events, int recorded)
{
	struct buf b;
	const json_t *m, *p, *x;
	const char *meth, *type;
	char *s;
	size_t i;

	buf_init(&b, SIZE_MAX);
	json_array_foreach(events, i, m)
	{
		meth = json_string_value(json_object_get(m, "method"));
		p = recorded ? m : json_object_get(m, "params");
		if (meth == NULL)
			continue;
		if ((x = json_object_get(p, "run")) != NULL) {
			s = json_dumps(json_object_get(x, "entries"), JSON_COMPACT);
			buf_printf(&b, "%s %s %s %s\n", meth,
				json_string_value(json_object_get(x, "eventName")),
				json_string_value(json_object_get(x, "status")), s);
			free(s);
		} else if ((x = json_object_get(p, "item")) != NULL) {
			type = json_string_value(json_object_get(x, "type"));
			if (strcmp(type, "commandExecution") == 0 ||
				strcmp(type, "fileChange") == 0)
				buf_printf(&b, "%s %s %s\n", meth, type,
					json_string_value(json_object_get(x, "status")));
		} else if (strstr(meth, "/requestApproval") != NULL)
			buf_printf(&b, "%s\n", meth);
		else if (strcmp(meth, "turn/completed") == 0)
			buf_printf(&b, "%s\n", meth);
	}
	s = xstrdup(buf_str(&b));
	buf_free(&b);
	return s;
}

/* Unified exec's varying header fields (chunk id, wall time) out of an output text (heap). */
static char *
plain_output(const char *text)
{
	static const char *const fields[] = {"Chunk ID: ", "Wall time: "};
	struct buf b;
	const char *p = text != NULL ? text : "(none)", *f;
	char *s;

	buf_init(&b, SIZE_MAX);
	for (size_t i = 0; i < 2; i++) {
		if ((f = strstr(p, fields[i])) == NULL)
			continue;
		f += strlen(fields[i]);
		buf_add(&b, p, (size_t)(f - p));
		buf_adds(&b, "<n>");
		p = f + strcspn(f, " \n");
	}
	buf_adds(&b, p);
	s = xstrdup(buf_str(&b));
	buf_free(&b);
	return s;
}

/*
 * One recorded case. The cases with "calls": 2 make the same call twice, the client answering
 * "approval" (acceptForSession): whether the second runs PreToolUse and PermissionRequest and
 * asks again must be upstream's too (each PermissionRequest run is a line of its stdin log).
 */
static void
replay(const char *name)
{
	const json_t *c = find_case(name), *hook = json_object_get(c, "permission_hook");
	const json_t *ts = json_object_get(c, "thread_start"), *want_in, *k, *want_ins;
	int patch = strncmp(name, "patch", 5) == 0;
	size_t calls = json_is_integer(json_object_get(c, "calls"))
		? (size_t)json_integer_value(json_object_get(c, "calls"))
		: 1;
	const char *decision = json_string_value(json_object_get(c, "approval"));
	char *dir = xasprintf("/tmp/hk-perm-%d-%s", (int)getpid(), name), *cfg, *script, *path,
	     *seq, *line;
	char *want_seq, *args, *got_out, *want_out, *cmd, *made, *id;
	json_t *msgs, *recs, *targs, *in, *resp;
	const char *key;
	size_t i, runs = 0;
	struct tt f;
	struct tt_opts o = {.experimental = 1};

	assert_int_equal(mkdir(dir, 0700), 0);
	path = xasprintf("%s/out", dir);
	put(path, json_string_value(json_object_get(hook, "stdout")));
	free(path);
	path = xasprintf("%s/err", dir);
	put(path, json_string_value(json_object_get(hook, "stderr")));
	free(path);
	cfg = xasprintf(
		"bypass_hook_trust = true\n"
		"[[hooks.PreToolUse]]\nmatcher = \"*\"\n[[hooks.PreToolUse.hooks]]\n"
		"type = \"command\"\ncommand = 'cat >/dev/null'\ntimeout = 1\n"
		"[[hooks.PermissionRequest]]\nmatcher = \"*\"\n"
		"[[hooks.PermissionRequest.hooks]]\ntype = \"command\"\n"
		"command = 'cat >> %s/stdin; echo >> %s/stdin; sleep %lld; cat %s/out; cat %s/err >&2; "
		"exit %lld'\n"
		"timeout = 1\n"
		"[[hooks.PostToolUse]]\nmatcher = \"*\"\n[[hooks.PostToolUse.hooks]]\n"
		"type = \"command\"\ncommand = 'cat >/dev/null'\ntimeout = 1\n",
		dir, dir, (long long)json_integer_value(json_object_get(hook, "sleep")), dir, dir,
		(long long)json_integer_value(json_object_get(hook, "exit")));
	targs = json_deep_copy(
		json_object_get(json_object_get(c, "tool"), "arguments")); /* exec_command's */
	if (patch)
		json_object_set_new(
			targs, "cmd", json_string("apply_patch <<'EOF'\n" PATCH_BODY "\nEOF\n"));
	args = json_dumps(targs, JSON_COMPACT);
	/* the call (call-1, call-2, ...) per model request, then the final message */
	resp = json_pack("{s:[], s:b}", "responses", "repeat", 1);
	for (i = 1; i <= calls + 1; i++) {
		id = xasprintf("call-%zu", i);
		json_array_append_new(json_object_get(resp, "responses"),
			i <= calls ? json_pack("{s:[{s:s}, {s:s, s:s, s:s, s:s}, {s:s}]}", "events",
					     "ev", "created", "ev", "function_call", "call_id", id,
					     "name", "exec_command", "arguments", args, "ev",
					     "completed")
				   : json_pack("{s:[{s:s}, {s:s, s:s, s:s}, {s:s}]}", "events",
					     "ev", "created", "ev", "message", "id", "m1", "text",
					     "done", "ev", "completed"));
		free(id);
	}
	script = json_dumps(resp, JSON_COMPACT);
	json_decref(resp);
	o.script = script;
	o.config_extra = cfg;
	o.approval_policy = json_string_value(json_object_get(ts, "approvalPolicy"));
	o.sandbox = json_string_value(json_object_get(ts, "sandbox"));
	tt_start(&f, &o);
	msgs = decision != NULL ? tt_turn(&f, "hi", NULL, answer, (void *)decision)
				: tt_turn(&f, "hi", NULL, decline, NULL);

	/* upstream's sequence: hook runs, items, approval requests */
	seq = sequence(msgs, 0);
	want_seq = sequence(json_object_get(c, "events"), 1);
	assert_string_equal(seq, want_seq);

	/* what the model heard for each call */
	recs = mm_records(&f.mm);
	assert_int_equal(json_array_size(recs), calls + 1);
	for (i = 1; i <= calls; i++) {
		id = xasprintf("call-%zu", i);
		got_out = plain_output(tt_call_output(tt_request_body(recs, i), id));
		want_out = plain_output(
			recorded_output(json_array_get(json_object_get(c, "requests"), i), id));
		if (patch && strstr(want_out, "Success.") != NULL)
			assert_non_null(
				strstr(got_out, "Success. Updated the following files:\nA "));
		else
			assert_string_equal(got_out, want_out);
		free(got_out);
		free(want_out);
		free(id);
	}

	/* the hook's stdin, a line a run, as many as upstream's: its fields, tool and input */
	path = xasprintf("%s/stdin", dir);
	cmd = tt_read(path);
	assert_non_null(cmd);
	want_ins = json_object_get(json_object_get(c, "stdin"), "PermissionRequest");
	for (line = cmd; *line != '\0';
		line += strcspn(line, "\n") + (line[strcspn(line, "\n")] != 0)) {
		if (*line == '\n')
			continue;
		in = json_loadb(line, strcspn(line, "\n"), 0, NULL);
		assert_non_null(in);
		want_in = json_array_get(want_ins, runs);
		assert_non_null(want_in);
		json_object_foreach((json_t *)want_in, key, k)
			assert_non_null(json_object_get(in, key));
		json_object_foreach(in, key, k) assert_non_null(json_object_get(want_in, key));
		assert_string_equal(json_string_value(json_object_get(in, "tool_name")),
			json_string_value(json_object_get(want_in, "tool_name")));
		assert_string_equal(
			json_string_value(json_object_get(in, "permission_mode")), "default");
		if (patch)
			assert_string_equal(json_string_value(json_object_get(
						    json_object_get(in, "tool_input"), "command")),
				PATCH_BODY);
		else
			assert_true(json_equal(json_object_get(in, "tool_input"),
				json_object_get(want_in, "tool_input")));
		json_decref(in);
		runs++;
	}
	assert_int_equal(runs, json_array_size(want_ins));
	free(cmd);
	unlink(path);
	free(path);

	/* the command ran exactly when upstream's did */
	made = tt_path(&f, "made-by-tool");
	assert_int_equal(access(made, F_OK) == 0, json_is_true(json_object_get(c, "file_made")));
	free(made);

	json_decref(recs);
	json_decref(msgs);
	json_decref(targs);
	tt_stop(&f);
	path = xasprintf("%s/out", dir);
	unlink(path);
	free(path);
	path = xasprintf("%s/err", dir);
	unlink(path);
	free(path);
	rmdir(dir);
	free(seq);
	free(want_seq);
	free(args);
	free(script);
	free(cfg);
	free(dir);
}

/* An interrupt while PermissionRequest runs: its process group is killed, the turn ends
 * interrupted once, nothing is asked and the command never runs. */
static void
test_interrupt_during_hook(void **state)
{
	char *dir = xasprintf("/tmp/hk-perm-%d-int", (int)getpid()), *cfg, *script, *path, *text;
	struct tt_opts o = {
		.experimental = 1, .approval_policy = "untrusted", .sandbox = "workspace-write"};
	json_t *ans, *n, *msgs;
	long long id;
	pid_t pid;
	struct tt f;
	int i;

	(void)state;
	mkdir(dir, 0700);
	cfg = xasprintf("bypass_hook_trust = true\n[[hooks.PermissionRequest]]\n"
			"[[hooks.PermissionRequest.hooks]]\ntype = \"command\"\n"
			"command = 'echo $$ > %s/pid; exec sleep 30'\ntimeout = 60\n",
		dir);
	script = tt_script("{`responses`: [{`events`: [{`ev`: `created`}, {`ev`: "
			   "`function_call`, `call_id`: `call-1`, `name`: `exec_command`, "
			   "`arguments`: {`cmd`: `touch made-by-tool`}}, {`ev`: `completed`}]}, "
			   "{`events`: [{`ev`: `created`}, {`ev`: `message`, `id`: `m1`, `text`: "
			   "`done`}, {`ev`: `completed`}]}], `repeat`: true}");
	o.script = script;
	o.config_extra = cfg;
	tt_start(&f, &o);
	id = asc_request(f.c, "turn/start",
		json_pack("{s:s, s:o}", "threadId", f.thread_id, "input", tt_text("hi")));
	ans = asc_wait_response(f.c, id, 10000);
	assert_non_null(ans);
	do {
		n = asc_wait_notification(f.c, "hook/started", 10000);
		assert_non_null(n);
		text = xstrdup(json_string_value(json_object_get(
			json_object_get(json_object_get(n, "params"), "run"), "eventName")));
		json_decref(n);
		i = strcmp(text, "permissionRequest") == 0;
		free(text);
	} while (!i);
	path = xasprintf("%s/pid", dir);
	for (i = 0; i < 100 && (text = tt_read(path)) == NULL; i++)
		usleep(20000);
	assert_non_null(text);
	pid = (pid_t)strtol(text, NULL, 10);
	free(text);
	assert_true(pid > 0);
	asc_request(f.c, "turn/interrupt",
		json_pack("{s:s, s:s}", "threadId", f.thread_id, "turnId",
			json_string_value(json_object_get(
				json_object_get(json_object_get(ans, "result"), "turn"), "id"))));
	msgs = tt_collect(&f, decline, NULL);
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(msgs), "status")), "interrupted");
	assert_int_equal(tt_count(msgs, "turn/completed"), 1);
	assert_int_equal(tt_count(msgs, "item/commandExecution/requestApproval"), 0);
	assert_null(tt_item(msgs, "commandExecution", 0));
	for (i = 0; i < 100 && kill(pid, 0) == 0; i++) /* killed with its group, and reaped */
		usleep(20000);
	assert_int_not_equal(kill(pid, 0), 0);
	text = tt_path(&f, "made-by-tool");
	assert_int_not_equal(access(text, F_OK), 0);
	free(text);
	json_decref(msgs);
	json_decref(ans);
	tt_stop(&f);
	unlink(path);
	rmdir(dir);
	free(path);
	free(script);
	free(cfg);
	free(dir);
}

#define CASE(n)                                                                                    \
	static void test_##n(void **state)                                                         \
	{                                                                                          \
		(void)state;                                                                       \
		replay(#n);                                                                        \
	}
CASE(allow)
CASE(deny)
CASE(deny_nomessage)
CASE(exit2)
CASE(exit2_silent)
CASE(exit1)
CASE(invalid)
CASE(plain)
CASE(nodecision)
CASE(interrupt)
CASE(continue_false)
CASE(timeout)
CASE(unknown_field)
CASE(deny_spaces_sysmsg)
CASE(other_event_name)
CASE(onrequest_allow)
CASE(patch_allow)
CASE(patch_deny)
CASE(patch_none)
CASE(session)
CASE(onrequest_session)
CASE(patch_session)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allow),
		cmocka_unit_test(test_deny),
		cmocka_unit_test(test_deny_nomessage),
		cmocka_unit_test(test_exit2),
		cmocka_unit_test(test_exit2_silent),
		cmocka_unit_test(test_exit1),
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_nodecision),
		cmocka_unit_test(test_interrupt),
		cmocka_unit_test(test_continue_false),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_unknown_field),
		cmocka_unit_test(test_deny_spaces_sysmsg),
		cmocka_unit_test(test_other_event_name),
		cmocka_unit_test(test_onrequest_allow),
		cmocka_unit_test(test_patch_allow),
		cmocka_unit_test(test_patch_deny),
		cmocka_unit_test(test_patch_none),
		cmocka_unit_test(test_session),
		cmocka_unit_test(test_onrequest_session),
		cmocka_unit_test(test_patch_session),
		cmocka_unit_test(test_interrupt_during_hook),
	};
	asc_ref_load();
	return cmocka_run_group_tests(tests, setup, NULL);
}
