/*
 * File descriptors against the real binary (issue 21, item 9): ~1,000 turns waiting on an
 * approval used to hold one fd each (the thread's rollout, kept open while a turn runs), so
 * a 1,024-fd limit ran out and thread/start, command/exec and fs/readFile failed. Now the
 * idlest writers give their fd back whatever their turn does, and the daemon raises its soft
 * limit at start-up.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/resource.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_util.h"
#include "protocol/xmalloc.h"
#include "tests/helpers/skip_note.h"
#include "turn_util.h"

#define WAITING	 300 /* turns left waiting on an approval */
#define FD_LIMIT 256 /* the daemon's fd limit meanwhile, soft and hard */
#define APPROVAL "item/commandExecution/requestApproval"
#define CALL_ONCE                                                                                  \
	"{`responses`:[{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`c1`,`name`:"   \
	"`exec_command`,`arguments`:{`cmd`:`touch asked.txt`}},{`ev`:`completed`}]}],"             \
	"`repeat`:true}"

/* A new thread of the fixture's settings; its id (heap). */
static char *
new_thread(struct tt *f)
{
	json_t *r = tt_call(f, "thread/start",
		json_pack("{s:s, s:s, s:s}", "cwd", f->workspace, "approvalPolicy", "untrusted",
			"sandbox", "danger-full-access"));
	char *id = xstrdup(json_string_value(
		json_object_get(json_object_get(asc_assert_result(r), "thread"), "id")));

	json_decref(r);
	return id;
}

/* Start a turn on a thread and wait for its approval request (messages before it dropped). */
static void
turn_until_approval(struct tt *f, const char *thread_id)
{
	json_t *r = tt_call(f, "turn/start",
		json_pack("{s:s, s:o}", "threadId", thread_id, "input", tt_text("go")));
	const char *method;
	json_t *m;

	asc_assert_result(r);
	json_decref(r);
	for (;;) {
		m = asc_next(f->c, asc_timeout(10000));
		if (m == NULL)
			fail_msg("no approval request for thread %s", thread_id);
		method = json_string_value(json_object_get(m, "method"));
		if (method != NULL && strcmp(method, APPROVAL) == 0 &&
			json_object_get(m, "id") != NULL) {
			json_decref(m);
			return;
		}
		json_decref(m);
	}
}

/* Item 9: turns waiting on approvals do not use up the daemon's fds. */
static void
test_waiting_turns_hold_no_fd(void **state)
{
	struct rlimit rl = {FD_LIMIT, FD_LIMIT};
	struct tt_opts o = {.approval_policy = "untrusted"};
	char *script = tt_script(CALL_ONCE), *id, *path;
	struct tt f;
	json_t *r;
	FILE *fp;
	int fds;

	(void)state;
	o.script = script;
	tt_start(&f, &o);
	/* As if started under a 256-fd hard limit (the raise at start-up cannot help then). */
	assert_int_equal(prlimit(asc_pid(f.c), RLIMIT_NOFILE, &rl, NULL), 0);
	turn_until_approval(&f, f.thread_id);
	for (int i = 1; i < WAITING; i++) {
		id = new_thread(&f);
		turn_until_approval(&f, id);
		free(id);
	}
	/* Each new rollout's first sync holds a duplicate fd until the worker has run it. */
	for (long long t0 = asc_now_ms();; usleep(20000)) {
		fds = asc_fd_count(asc_pid(f.c));
		if (fds < FD_LIMIT - 64 || asc_now_ms() - t0 > asc_timeout(10000))
			break;
	}
	print_message("%d turns waiting on an approval: %d fds open\n", WAITING, fds);
	assert_true(fds < FD_LIMIT - 64);
	/* Everything that needs a new fd still works. */
	free(new_thread(&f));
	xt_exec_expect(f.c, xt_sh("echo fine"), asc_timeout(T_REPLY), 0, "fine\n", "");
	path = tt_path(&f, "read-me.txt");
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("hello", fp);
	fclose(fp);
	r = tt_call(&f, "fs/readFile", json_pack("{s:s}", "path", path));
	assert_string_equal(
		json_string_value(json_object_get(asc_assert_result(r), "dataBase64")), "aGVsbG8=");
	json_decref(r);
	tt_stop(&f);
	free(path);
	free(script);
}

/* The daemon's soft fd limit, from /proc/PID/limits; -1 when unreadable. */
static long long
soft_nofile(pid_t pid)
{
	char path[64], line[256];
	long long soft = -1;
	FILE *fp;

	snprintf(path, sizeof path, "/proc/%d/limits", (int)pid);
	if ((fp = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, fp) != NULL)
		if (strncmp(line, "Max open files", 14) == 0)
			soft = strtoll(line + 14, NULL, 10);
	fclose(fp);
	return soft;
}

/*
 * Item 9: the daemon's soft limit is raised to the hard one; commands get the soft limit the
 * daemon was started with, sandboxed or not.
 */
static void
test_soft_limit_raised(void **state)
{
	struct rlimit saved, low;
	struct asc *c;
	rlim_t want;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	if (saved.rlim_max < 256)
		skip_test("the hard fd limit is below 256: nothing to raise");
	low = saved;
	low.rlim_cur = 128;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	c = xt_ready();
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	want = saved.rlim_max;
	assert_int_equal(soft_nofile(asc_pid(c)), (long long)want);
	xt_exec_expect(c, xt_sh("ulimit -Sn"), asc_timeout(5000), 0, "128\n", "");
	xt_exec_expect(c, xt_with(xt_sh("ulimit -Sn"), "{'sandboxPolicy':{'type':'readOnly'}}"),
		asc_timeout(5000), 0, "128\n", "");
	asc_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waiting_turns_hold_no_fd),
		cmocka_unit_test(test_soft_limit_raised),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
