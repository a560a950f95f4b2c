/*
 * One writer per thread across daemons (issue 21, item 12): a second daemon's thread/resume of
 * a thread another daemon has loaded fails with upstream's "already has an active writer",
 * naming that process; the moment the first daemon stops (kill -9 included) the second one
 * resumes it, and its turns read back completed, not interleaved nor interrupted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>

#include "th_util.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_second_daemon),
		cmocka_unit_test(test_released_on_unload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
