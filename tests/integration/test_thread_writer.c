/*
 * One writer per thread across daemons (issue 21, item 12): a second daemon's thread/resume of
 * a thread another daemon has loaded fails with upstream's "already has an active writer",
 * naming that process; the moment the first daemon stops (kill -9 included) the second one
 * resumes it, and its turns read back completed, not interleaved nor interrupted. A killed
 * daemon's lock held on by a child it started (between its fork and its exec) makes a resume
 * wait for it, two seconds at most, instead of failing at once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "th_util.h"
#include "thread/rollout/rollout_lock.h"

/* thread/read's turn statuses, space-separated (heap). */
static char *
tw_statuses(struct asc *c, const char *id)
{
	json_t *r = th_call(
		c, "thread/read", json_pack("{s:s, s:b}", "threadId", id, "includeTurns", 1));
	json_t *turns = json_object_get(json_object_get(asc_assert_result(r), "thread"), "turns");
	struct buf b;
	json_t *v;
	size_t i;

	buf_init(&b, 1 << 16);
	json_array_foreach(turns, i, v)
	{
		buf_printf(
			&b, "%s%s", i ? " " : "", json_string_value(json_object_get(v, "status")));
	}
	json_decref(r);
	return buf_steal(&b, NULL);
}

static void
test_second_daemon(void **state)
{
	struct th t;
	struct asc *b;
	json_t *r;
	char *id, *want, *st;

	(void)state;
	th_start(&t, 0);
	id = th_new(&t, NULL);
	th_turn(&t, id, "first daemon");
	b = th_daemon(&t);
	r = th_call(b, "thread/resume", json_pack("{s:s}", "threadId", id));
	want = xasprintf(
		"thread %s already has an active writer: process %d (", id, (int)asc_pid(t.c));
	th_error(r, -32600, want);
	json_decref(r);
	free(want);
	/* The first daemon dies: its lock goes with it, at once. */
	asc_free_killed(t.c, SIGKILL);
	t.c = b;
	r = th_call(b, "thread/resume", json_pack("{s:s}", "threadId", id));
	asc_assert_result(r);
	json_decref(r);
	th_turn(&t, id, "second daemon");
	st = tw_statuses(b, id);
	assert_string_equal(st, "completed completed");
	free(st);
	free(id);
	th_stop(&t);
}

/* A daemon that unloads the thread (archive) lets the other write it. */
static void
test_released_on_unload(void **state)
{
	struct th t;
	struct asc *b;
	json_t *r;
	char *id;

	(void)state;
	th_start(&t, 0);
	id = th_new(&t, NULL);
	th_turn(&t, id, "first daemon");
	b = th_daemon(&t);
	r = th_call(b, "thread/resume", json_pack("{s:s}", "threadId", id));
	th_error(r, -32600, "thread ");
	json_decref(r);
	r = th_call(t.c, "thread/archive", json_pack("{s:s}", "threadId", id));
	asc_assert_result(r);
	json_decref(r);
	r = th_call(t.c, "thread/unarchive", json_pack("{s:s}", "threadId", id));
	asc_assert_result(r);
	json_decref(r);
	r = th_call(b, "thread/resume", json_pack("{s:s}", "threadId", id));
	asc_assert_result(r);
	json_decref(r);
	asc_free(b);
	free(id);
	th_stop(&t);
}

/* A pid no process has now (a child's, reaped). */
static pid_t
tw_dead_pid(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(0);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return pid;
}

/*
 * A process holding path's writer lock as a daemon `dead` would (its pid byte and the mutex)
 * for ms milliseconds: what a killed daemon's forked, not yet exec'd child leaves. Returns
 * once the lock is held.
 */
static pid_t
tw_hold(const char *path, pid_t dead, int ms)
{
	int p[2], fd;
	pid_t pid;
	char c;

	assert_int_equal(pipe(p), 0);
	if ((pid = fork()) == 0) {
		struct flock a = {.l_type = F_WRLCK,
			.l_whence = SEEK_SET,
			.l_start = ROLLOUT_LOCK_BASE + dead,
			.l_len = 1};
		struct flock m = {.l_type = F_WRLCK,
			.l_whence = SEEK_SET,
			.l_start = ROLLOUT_LOCK_BASE - 1,
			.l_len = 1};
		struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

		if ((fd = open(path, O_RDWR | O_CLOEXEC)) < 0 || fcntl(fd, F_OFD_SETLK, &a) != 0 ||
			fcntl(fd, F_OFD_SETLK, &m) != 0)
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		nanosleep(&ts, NULL);
		_exit(0);
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void
test_dead_writers_child(void **state)
{
	struct th t;
	struct asc *b;
	json_t *r;
	char *id, *path, *want;
	pid_t dead = tw_dead_pid(), holder;
	int st;

	(void)state;
	th_start(&t, 0);
	id = th_new(&t, NULL);
	th_turn(&t, id, "first daemon");
	r = th_call(t.c, "thread/read", json_pack("{s:s}", "threadId", id));
	path = xstrdup(json_string_value(
		json_object_get(json_object_get(asc_assert_result(r), "thread"), "path")));
	json_decref(r);
	asc_free(t.c);
	b = t.c = th_daemon(&t);
	/* held 0.3 s: the resume waits and succeeds */
	holder = tw_hold(path, dead, 300);
	r = th_call(b, "thread/resume", json_pack("{s:s}", "threadId", id));
	asc_assert_result(r);
	json_decref(r);
	assert_int_equal(waitpid(holder, &st, 0), holder);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	asc_free(b);
	/* held past the two seconds: the error, naming the dead writer */
	b = t.c = th_daemon(&t);
	holder = tw_hold(path, dead, 4000);
	r = th_call(b, "thread/resume", json_pack("{s:s}", "threadId", id));
	want = xasprintf(
		"thread %s already has an active writer: process %d is writing", id, (int)dead);
	th_error(r, -32600, want);
	json_decref(r);
	kill(holder, SIGKILL);
	assert_int_equal(waitpid(holder, &st, 0), holder);
	free(want);
	free(path);
	free(id);
	th_stop(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_second_daemon),
		cmocka_unit_test(test_released_on_unload),
		cmocka_unit_test(test_dead_writers_child),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
