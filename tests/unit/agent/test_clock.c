/*
 * The clock tools' parts (agent/tools/clock.h): sleep's argument errors in upstream's words
 * (recorded: tests/fixtures/image_clock/upstream/cm_sleep_*.json), its texts, the timer on a
 * real loop (due, ended early by input, ended by the turn) and curr_time's format.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "agent/tools/clock.h"

static void
args_fail(const char *args, const char *want)
{
	long long ms = 0;
	char *cause = NULL;

	assert_int_equal(clock_sleep_args(args, &ms, &cause), -1);
	assert_string_equal(cause, want);
	free(cause);
}

static void
test_args(void **state)
{
	long long ms = 0;
	char *cause = NULL;

	(void)state;
	assert_int_equal(clock_sleep_args("{\"duration_ms\": 300}", &ms, &cause), 0);
	assert_int_equal(ms, 300);
	assert_int_equal(clock_sleep_args("{\"duration_ms\":43200000}", &ms, &cause), 0);
	args_fail("{\"duration_ms\": 0}", "duration_ms must be between 1 and 43200000");
	args_fail("{\"duration_ms\": 43200001}", "duration_ms must be between 1 and 43200000");
	args_fail("{\"duration_ms\": 10.5}",
		"failed to parse function arguments: invalid type: "
		"floating point `10.5`, expected u64 at line 1 column 20");
	args_fail("{\"ms\": 5}",
		"failed to parse function arguments: unknown field `ms`, "
		"expected `duration_ms` at line 1 column 5");
	args_fail("{}",
		"failed to parse function arguments: missing field `duration_ms` at line "
		"1 column 2");
}

static void
test_texts(void **state)
{
	char *s;

	(void)state;
	s = clock_sleep_text(0.30581, CLOCK_DUE);
	assert_string_equal(s, "Wall time: 0.3058 seconds\nSleep completed.");
	free(s);
	s = clock_sleep_text(0.5068, CLOCK_INPUT);
	assert_string_equal(s, "Wall time: 0.5068 seconds\nSleep interrupted by new input.");
	free(s);
	s = clock_sleep_text(0.84, CLOCK_ABORTED);
	assert_string_equal(s, "aborted by user after 0.8s");
	free(s);
}

struct woke {
	int n;
	enum clock_end how;
	double secs;
};

static void
woke_cb(void *arg, enum clock_end how, double secs)
{
	struct woke *w = arg;

	w->n++;
	w->how = how;
	w->secs = secs;
}

static void
end_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
	(void)loop;
	(void)revents;
	clock_sleep_end(t->data, CLOCK_INPUT);
}

static void
test_timer(void **state)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct woke w = {0};
	struct clock_sleep *s;
	ev_timer early;

	(void)state;
	clock_sleep_start(loop, 20, woke_cb, &w);
	ev_run(loop, 0); /* returns once the timer ran: nothing else is active */
	assert_int_equal(w.n, 1);
	assert_int_equal(w.how, CLOCK_DUE);
	assert_true(w.secs >= 0.019 && w.secs < 1.0);

	memset(&w, 0, sizeof w);
	s = clock_sleep_start(loop, 60000, woke_cb, &w);
	ev_timer_init(&early, end_cb, 0.02, 0.);
	early.data = s;
	ev_timer_start(loop, &early);
	ev_run(loop, 0);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.how, CLOCK_INPUT);
	assert_true(w.secs < 1.0);

	memset(&w, 0, sizeof w);
	s = clock_sleep_start(loop, 60000, woke_cb, &w);
	clock_sleep_end(s, CLOCK_ABORTED);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.how, CLOCK_ABORTED);
	clock_sleep_end(NULL, CLOCK_ABORTED); /* nothing sleeps: nothing happens */
	ev_run(loop, 0);
	assert_int_equal(w.n, 1);
	ev_loop_destroy(loop);
}

static void
test_curr_time(void **state)
{
	char out[32];

	(void)state;
	clock_curr_time(0, out);
	assert_string_equal(out, "1970-01-01 00:00:00 UTC");
	clock_curr_time(1795000000, out);
	assert_string_equal(out, "2026-11-18 11:06:40 UTC");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_texts),
		cmocka_unit_test(test_timer),
		cmocka_unit_test(test_curr_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
