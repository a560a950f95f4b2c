/*
 * Running less sandboxed than the policy asks needs its own approval (issue 21 item 5), against
 * the real daemon. Under untrusted + workspace-write a command outside the workspace is asked
 * about, accepted, run in the sandbox and denied; the re-run without the sandbox is then asked
 * about again with upstream's retry request (same item, command and amendment; reason "command
 * failed; retry without sandbox?"): accepted it runs, declined it does not. acceptForSession on
 * that second request covers exactly that command unsandboxed afterwards; acceptForSession on the
 * first one covers only the sandboxed run.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

#define ANSWER_DONE                                                                                \
	"{`events`:[{`ev`:`created`},{`ev`:`message`,`id`:`m-end`,`text`:`done`},{`ev`:`completed`}]}"
#define CALL(id, cmd)                                                                              \
	"{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`" id                         \
	"`,`name`:`exec_command`,`arguments`:{`cmd`:`" cmd "`}},{`ev`:`completed`}]}"
#define RETRY_REASON "command failed; retry without sandbox?"

/* The decisions to give, request after request (the last one repeats). */
struct answers {
	const char *const *d;
	size_t n, next;
};

static json_t *
decide_in_turn(void *arg, const json_t *request)
{
	struct answers *a = arg;
	const char *d = a->d[a->next < a->n ? a->next : a->n - 1];

	(void)request;
	a->next++;
	return json_pack("{s:s}", "decision", d);
}

/* A file outside the workspace, which workspace-write does not let a command write. */
static char *
outside_target(const char *tag)
{
	char *t = xasprintf("/var/tmp/app-server-escalation-%s-%d", tag, (int)getpid());

	unlink(t);
	return t;
}

/* Mock, daemon and thread: untrusted + workspace-write; `calls` touch the target, in order. */
static void
start(struct tt *f, const char *target, int calls)
{
	char *one = xasprintf(CALL("call-%d", "touch %s"), 1, target);
	char *two = xasprintf(CALL("call-%d", "touch %s"), 2, target);
	char *script = xasprintf("[%s,%s%s]", one, calls > 1 ? two : ANSWER_DONE,
		     calls > 1 ? "," ANSWER_DONE : ""),
	     *s = tt_script(script);
	struct tt_opts o = {
		.script = s, .approval_policy = "untrusted", .sandbox = "workspace-write"};

	tt_start(f, &o);
	free(s);
	free(script);
	free(one);
	free(two);
}

/* The n-th approval request's params (borrowed). */
static json_t *
request_params(const json_t *msgs, size_t n)
{
	return json_object_get(tt_find(msgs, "item/commandExecution/requestApproval", n), "params");
}

static const char *
str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* Accept, denied in the sandbox, asked again with the retry's shape; accepted, it runs. */
static void
test_retry_asked_after_accept(void **state)
{
	static const char *const d[] = {"accept", "accept"};
	struct answers a = {d, 2, 0};
	struct tt f;
	json_t *msgs, *first, *retry;
	char *target = outside_target("accept");

	(void)state;
	start(&f, target, 1);
	msgs = tt_turn(&f, "go", NULL, decide_in_turn, &a);
	assert_int_equal(tt_count(msgs, "item/commandExecution/requestApproval"), 2);
	first = request_params(msgs, 0);
	retry = request_params(msgs, 1);
	assert_true(json_is_null(json_object_get(first, "reason")));
	assert_string_equal(str(retry, "reason"), RETRY_REASON);
	/* the same item, command, cwd, actions, amendment and decisions as the first request */
	assert_string_equal(str(retry, "itemId"), "call-1");
	assert_string_equal(str(retry, "kind"), "command");
	assert_string_equal(str(retry, "command"), str(first, "command"));
	assert_string_equal(str(retry, "cwd"), str(first, "cwd"));
	assert_true(json_equal(json_object_get(retry, "commandActions"),
		json_object_get(first, "commandActions")));
	assert_true(json_equal(json_object_get(retry, "proposedExecpolicyAmendment"),
		json_object_get(first, "proposedExecpolicyAmendment")));
	assert_true(json_equal(json_object_get(retry, "availableDecisions"),
		json_object_get(first, "availableDecisions")));
	assert_int_equal(tt_count(msgs, "serverRequest/resolved"), 2);
	assert_string_equal(str(tt_item(msgs, "commandExecution", 0), "status"), "completed");
	assert_int_equal(access(target, F_OK), 0);
	unlink(target);
	free(target);
	json_decref(msgs);
	tt_stop(&f);
}

/* Accepting the sandboxed run, then declining the retry: nothing runs outside the sandbox. */
static void
test_retry_declined_not_run(void **state)
{
	static const char *const d[] = {"accept", "decline"};
	struct answers a = {d, 2, 0};
	struct tt f;
	json_t *msgs;
	char *target = outside_target("decline");

	(void)state;
	start(&f, target, 1);
	msgs = tt_turn(&f, "go", NULL, decide_in_turn, &a);
	assert_int_equal(tt_count(msgs, "item/commandExecution/requestApproval"), 2);
	assert_string_equal(str(request_params(msgs, 1), "reason"), RETRY_REASON);
	assert_string_equal(str(tt_item(msgs, "commandExecution", 0), "status"), "failed");
	assert_int_not_equal(access(target, F_OK), 0);
	free(target);
	json_decref(msgs);
	tt_stop(&f);
}

/*
 * acceptForSession on the first request covers the sandboxed run only: the same command again
 * is not asked about, but its unsandboxed retry is.
 */
static void
test_session_covers_sandboxed_only(void **state)
{
	static const char *const d[] = {"acceptForSession", "decline"};
	struct answers a = {d, 2, 0};
	struct tt f;
	json_t *msgs;
	char *target = outside_target("session1");

	(void)state;
	start(&f, target, 2);
	msgs = tt_turn(&f, "go", NULL, decide_in_turn, &a);
	/* call-1: asked, denied, retry asked (declined); call-2: only the retry asked */
	assert_int_equal(tt_count(msgs, "item/commandExecution/requestApproval"), 3);
	assert_true(json_is_null(json_object_get(request_params(msgs, 0), "reason")));
	assert_string_equal(str(request_params(msgs, 1), "reason"), RETRY_REASON);
	assert_string_equal(str(request_params(msgs, 2), "itemId"), "call-2");
	assert_string_equal(str(request_params(msgs, 2), "reason"), RETRY_REASON);
	assert_int_not_equal(access(target, F_OK), 0);
	free(target);
	json_decref(msgs);
	tt_stop(&f);
}

/* acceptForSession on the retry: exactly that command, unsandboxed, is not asked again. */
static void
test_session_retry_covers_unsandboxed(void **state)
{
	static const char *const d[] = {"accept", "acceptForSession", "decline"};
	struct answers a = {d, 3, 0};
	struct tt f;
	json_t *msgs;
	char *target = outside_target("session2");
	struct stat st;

	(void)state;
	start(&f, target, 2);
	msgs = tt_turn(&f, "go", NULL, decide_in_turn, &a);
	/* call-1: asked, retry asked; call-2: asked (the sandboxed run), its retry covered */
	assert_int_equal(tt_count(msgs, "item/commandExecution/requestApproval"), 3);
	assert_string_equal(str(request_params(msgs, 2), "itemId"), "call-2");
	assert_true(json_is_null(json_object_get(request_params(msgs, 2), "reason")));
	assert_int_equal(stat(target, &st), 0);
	unlink(target);
	free(target);
	json_decref(msgs);
	tt_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_retry_asked_after_accept),
		cmocka_unit_test(test_retry_declined_not_run),
		cmocka_unit_test(test_session_covers_sandboxed_only),
		cmocka_unit_test(test_session_retry_covers_unsandboxed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
