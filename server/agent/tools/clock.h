/*
 * The `clock` tools of 0.169's gpt-6 families (recorded: tests/fixtures/image_clock/upstream/
 * cm_sleep*.json, cm_curr_time.json): `clock.sleep {duration_ms}`, a direct tool beside exec,
 * and `clock__curr_time`, nested in exec. A sleep is a timer on the loop (never a blocking
 * call) that ends when it is due, when new input arrives for the turn, or with the turn.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <time.h>

#include <ev.h>

#define CLOCK_SLEEP_MAX_MS 43200000LL
#define CLOCK_NS	   "clock"

/*
 * sleep's arguments: 0 and *ms, or -1 and *cause, the model's text in upstream's words
 * ("failed to parse function arguments: unknown field `ms`, expected `duration_ms` at line 1
 * column 5", "duration_ms must be between 1 and 43200000").
 */
int clock_sleep_args(const char *args, long long *ms, char **cause);

/* How a sleep ended. */
enum clock_end { CLOCK_DUE, CLOCK_INPUT, CLOCK_ABORTED };

/* What the model hears: "Wall time: 0.3058 seconds\nSleep completed." (heap). */
char *clock_sleep_text(double seconds, enum clock_end how);

struct clock_sleep;

/*
 * Sleep ms on loop; done(arg, how, seconds) runs once, from the loop or from clock_sleep_end,
 * after which the sleep is freed.
 */
struct clock_sleep *clock_sleep_start(struct ev_loop *loop, long long ms,
	void (*done)(void *arg, enum clock_end how, double seconds), void *arg);

/* End it now (NULL: nothing sleeps). */
void clock_sleep_end(struct clock_sleep *s, enum clock_end how);

/* clock__curr_time's answer for now: "YYYY-MM-DD HH:MM:SS UTC" in out. */
void clock_curr_time(time_t now, char out[32]);

#endif
