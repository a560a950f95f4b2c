/*
 * Approvals in turns against the real daemon: item/commandExecution/requestApproval with the
 * reference params, and what each decision does (notes §4, §8): accept, acceptForSession (the
 * same command is not asked again, another one is), decline (item declined, the model is
 * told, the turn goes on), cancel (the turn ends interrupted), an error reply (item failed);
 * known-safe commands under untrusted run without asking, and look-alikes that write are asked
 * about; a sandbox denial leads to the "retry without sandbox?" request (test_turn_escalation.c
 * has the rest of that story); an interrupt while a request is pending resolves it after
 * turn/completed.
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

#define ANSWER_DONE                                                                                \
	"{`events`:[{`ev`:`created`},{`ev`:`message`,`id`:`m-end`,`text`:`done`},{`ev`:`completed`}]}"
#define CALL(id, cmd)                                                                              \
	"{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`" id                         \
	"`,`name`:`exec_command`,`arguments`:{`cmd`:`" cmd "`}},{`ev`:`completed`}]}"

static void
start(struct tt *f, const char *script, const char *approval, const char *sandbox)
{
	char *s = tt_script(script);
	struct tt_opts o = {.script = s, .approval_policy = approval, .sandbox = sandbox};

	tt_start(f, &o);
	free(s);
}

/* Answer every request with the decision in arg ("error": a JSON-RPC error). */
static json_t *
decide(void *arg, const json_t *request)
{
	(void)request;
	if (strcmp(arg, "error") == 0)
		return NULL;
	return json_pack("{s:s}", "decision", (const char *)arg);
}

/* The output the model got for a call, from the mock's records. */
static char *
model_output(struct tt *f, const char *call_id)
{
	json_t *recs = mm_records(&f->mm), *r;
	const char *out = NULL;
	char *copy;
	size_t i;

	json_array_foreach(recs, i, r) if (out == NULL) out =
		tt_call_output(json_object_get(r, "body"), call_id);
	copy = out != NULL ? xstrdup(out) : NULL;
	json_decref(recs);
	return copy;
}

static void
test_accept(void **state)
{
	struct tt f;
	json_t *msgs, *req, *p, *item;
	char *path;
	long a, r, s;

	(void)state;
	start(&f, "[" CALL("call-1", "touch approved.txt && echo hi") "," ANSWER_DONE "]",
		"untrusted", NULL);
	msgs = tt_turn(&f, "go", NULL, decide, "accept");
	req = tt_find(msgs, "item/commandExecution/requestApproval", 0);
	assert_non_null(req);
	assert_int_equal(json_integer_value(json_object_get(req, "id")), 0);
	p = json_object_get(req, "params");
	assert_string_equal(json_string_value(json_object_get(p, "itemId")), "call-1");
	assert_string_equal(json_string_value(json_object_get(p, "threadId")), f.thread_id);
	assert_string_equal(json_string_value(json_object_get(p, "command")),
		"/bin/bash -lc 'touch approved.txt && echo hi'");
	assert_string_equal(json_string_value(json_array_get(
				    json_object_get(p, "proposedExecpolicyAmendment"), 1)),
		"approved.txt");
	assert_true(json_is_integer(json_object_get(p, "startedAtMs")));
	/* item/started first, then the request; resolved before the output. */
	a = tt_index(msgs, "item/commandExecution/requestApproval");
	r = tt_index(msgs, "serverRequest/resolved");
	s = tt_index(msgs, "item/commandExecution/outputDelta");
	assert_true(tt_index(msgs, "item/started") < a);
	assert_true(a < r && r < s);
	item = tt_item(msgs, "commandExecution", 0);
	assert_string_equal(json_string_value(json_object_get(item, "status")), "completed");
	assert_string_equal(json_string_value(json_object_get(item, "aggregatedOutput")), "hi\n");
	path = tt_path(&f, "approved.txt");
	assert_int_equal(access(path, F_OK), 0);
	free(path);
	/* waitingOnApproval while it waited. */
	p = json_object_get(tt_find(msgs, "thread/status/changed", 1), "params");
	assert_string_equal(
		json_string_value(json_array_get(
			json_object_get(json_object_get(p, "status"), "activeFlags"), 0)),
		"waitingOnApproval");
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_accept_for_session(void **state)
{
	struct tt f;
	json_t *msgs;

	(void)state;
	start(&f,
		"[" CALL("c1", "touch s.txt") "," CALL("c2", "touch s.txt") "," CALL(
			"c3", "touch other.txt") "," ANSWER_DONE "]",
		"untrusted", NULL);
	msgs = tt_turn(&f, "go", NULL, decide, "acceptForSession");
	/* c1 asked, c2 (the same command) not, c3 (another one) asked again. */
	assert_int_equal(tt_count(msgs, "item/commandExecution/requestApproval"), 2);
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(tt_find(msgs, "item/commandExecution/requestApproval", 1),
				"params"),
			"itemId")),
		"c3");
	assert_int_equal(tt_count(msgs, "serverRequest/resolved"), 2);
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_decline(void **state)
{
	struct tt f;
	json_t *msgs;
	char *out, *path;

	(void)state;
	start(&f, "[" CALL("call-1", "touch declined.txt") "," ANSWER_DONE "]", "untrusted", NULL);
	msgs = tt_turn(&f, "go", NULL, decide, "decline");
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "commandExecution", 0), "status")),
		"declined");
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(msgs), "status")), "completed");
	out = model_output(&f, "call-1");
	assert_non_null(out);
	assert_string_equal(out,
		"exec_command failed: CreateProcess { message: \"Rejected(\\\"rejected by user\\\")\" "
		"}");
	path = tt_path(&f, "declined.txt");
	assert_int_not_equal(access(path, F_OK), 0);
	free(path);
	free(out);
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_cancel(void **state)
{
	struct tt f;
	json_t *msgs;

	(void)state;
	start(&f, "[" CALL("call-1", "touch cancelled.txt") "," ANSWER_DONE "]", "untrusted", NULL);
	msgs = tt_turn(&f, "go", NULL, decide, "cancel");
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "commandExecution", 0), "status")),
		"declined");
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(msgs), "status")), "interrupted");
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_error_reply(void **state)
{
	struct tt f;
	json_t *msgs;
	char *out;

	(void)state;
	start(&f, "[" CALL("call-1", "touch err.txt") "," ANSWER_DONE "]", "untrusted", NULL);
	msgs = tt_turn(&f, "go", NULL, decide, "error");
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "commandExecution", 0), "status")),
		"failed");
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(msgs), "status")), "completed");
	out = model_output(&f, "call-1");
	assert_non_null(strstr(out, "approval request failed"));
	free(out);
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_known_safe_not_asked(void **state)
{
	struct tt f;
	json_t *msgs;

	(void)state;
	start(&f, "[" CALL("call-1", "ls -la") "," ANSWER_DONE "]", "untrusted", NULL);
	msgs = tt_turn(&f, "go", NULL, decide, "decline");
	assert_int_equal(tt_count(msgs, "item/commandExecution/requestApproval"), 0);
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "commandExecution", 0), "status")),
		"completed");
	json_decref(msgs);
	tt_stop(&f);
}

/*
 * Issue 21: `uniq IN OUT` writes OUT and sed's "file" --expression=1e... makes 1p a file and
 * runs a command; once looked as known safe, they ran unsandboxed (danger-full-access) with
 * no request. Now the chain is asked about, and declining it leaves both files unwritten.
 */
static void
test_writing_look_alikes_asked(void **state)
{
	struct tt f;
	json_t *msgs;
	char *target = xasprintf("/var/tmp/app-server-sed-e-%d", (int)getpid()), *script, *out;

	(void)state;
	unlink(target);
	script = xasprintf("[" CALL("call-1",
				   "uniq /etc/hostname 1p && sed -n 1p "
				   "'--expression=1e touch %s'") "," ANSWER_DONE "]",
		target);
	start(&f, script, "untrusted", "danger-full-access");
	free(script);
	msgs = tt_turn(&f, "go", NULL, decide, "decline");
	assert_int_equal(tt_count(msgs, "item/commandExecution/requestApproval"), 1);
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "commandExecution", 0), "status")),
		"declined");
	assert_int_not_equal(access(target, F_OK), 0);
	out = tt_path(&f, "1p");
	assert_int_not_equal(access(out, F_OK), 0);
	free(out);
	unlink(target);
	free(target);
	json_decref(msgs);
	tt_stop(&f);
}

/* Write text to a workspace file. */
static void
put(struct tt *f, const char *name, const char *text)
{
	char *path = tt_path(f, name);
	FILE *fp = fopen(path, "we");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	free(path);
}

/* `uniq *` is `uniq a b` once bash globs it, which writes b: asked about, not run. */
static void
test_glob_into_output_asked(void **state)
{
	struct tt f;
	json_t *msgs;
	char *path, *text;

	(void)state;
	start(&f, "[" CALL("call-1", "uniq *") "," ANSWER_DONE "]", "untrusted",
		"danger-full-access");
	put(&f, "a", "from a\n");
	put(&f, "b", "keep b\n");
	msgs = tt_turn(&f, "go", NULL, decide, "decline");
	assert_int_equal(tt_count(msgs, "item/commandExecution/requestApproval"), 1);
	path = tt_path(&f, "b");
	text = tt_read(path);
	assert_string_equal(text, "keep b\n");
	free(text);
	free(path);
	json_decref(msgs);
	tt_stop(&f);
}

/* A file outside the workspace, which workspace-write does not let a command write. */
static char *
outside_target(void)
{
	char *t = xasprintf("/var/tmp/app-server-escalated-%d", (int)getpid());

	unlink(t);
	return t;
}

static void
test_sandbox_denial_asks_retry(void **state)
{
	struct tt f;
	json_t *msgs, *p;
	char *target = outside_target(), *script, *out;

	(void)state;
	script = xasprintf(
		"[" CALL("call-1", "touch %s") "," CALL("call-2", "touch %s") "," ANSWER_DONE "]",
		target, target);
	start(&f, script,
		"{\"granular\":{\"sandbox_approval\":true,\"rules\":true,"
		"\"mcp_elicitations\":true}}",
		"workspace-write");
	free(script);
	/* Runs in the sandbox without asking; denied; "retry without sandbox?" declined. */
	msgs = tt_turn(&f, "go", NULL, decide, "decline");
	assert_int_equal(tt_count(msgs, "item/commandExecution/requestApproval"), 2);
	p = json_object_get(tt_find(msgs, "item/commandExecution/requestApproval", 0), "params");
	assert_string_equal(json_string_value(json_object_get(p, "reason")),
		"command failed; retry without sandbox?");
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "commandExecution", 0), "status")),
		"failed");
	assert_int_not_equal(access(target, F_OK), 0);
	/* The model saw the sandbox's refusal. */
	json_t *recs = mm_records(&f.mm);
	out = xstrdup(tt_call_output(tt_request_body(recs, 1), "call-1"));
	json_decref(recs);
	assert_non_null(strstr(out, "Read-only file system"));
	free(out);
	json_decref(msgs);
	tt_stop(&f);
	free(target);
}

struct pending {
	struct tt *f;
	long long request_id;
};

/* Leave the request pending and interrupt the turn instead. */
static json_t *
interrupt_instead(void *arg, const json_t *request)
{
	struct pending *p = arg;
	const char *turn =
		json_string_value(json_object_get(json_object_get(request, "params"), "turnId"));

	p->request_id = (long long)json_integer_value(json_object_get(request, "id"));
	asc_request(p->f->c, "turn/interrupt",
		json_pack("{s:s, s:s}", "threadId", p->f->thread_id, "turnId", turn));
	return TT_NO_ANSWER;
}

static void
test_interrupt_pending_approval(void **state)
{
	struct tt f;
	struct pending p = {&f, -1};
	json_t *msgs;
	char *s;

	(void)state;
	start(&f, "[" CALL("call-1", "touch never.txt") "]", "untrusted", NULL);
	msgs = tt_turn(&f, "go", NULL, interrupt_instead, &p);
	assert_true(p.request_id >= 0);
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(msgs), "status")), "interrupted");
	/* Resolved after turn/completed, for the request nobody answered. */
	assert_true(tt_index(msgs, "serverRequest/resolved") > tt_index(msgs, "turn/completed"));
	assert_int_equal(
		json_integer_value(json_object_get(
			json_object_get(tt_find(msgs, "serverRequest/resolved", 0), "params"),
			"requestId")),
		p.request_id);
	/* The item completes (upstream leaves it open): declined. */
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "commandExecution", 0), "status")),
		"declined");
	/* A late answer is ignored silently. */
	s = xasprintf("{\"id\":%lld,\"result\":{\"decision\":\"accept\"}}", p.request_id);
	asc_send_line(f.c, s);
	free(s);
	assert_int_equal(asc_sync(f.c, asc_timeout(2000)), 0);
	json_decref(msgs);
	tt_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accept),
		cmocka_unit_test(test_accept_for_session),
		cmocka_unit_test(test_decline),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_error_reply),
		cmocka_unit_test(test_known_safe_not_asked),
		cmocka_unit_test(test_writing_look_alikes_asked),
		cmocka_unit_test(test_glob_into_output_asked),
		cmocka_unit_test(test_sandbox_denial_asks_retry),
		cmocka_unit_test(test_interrupt_pending_approval),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
