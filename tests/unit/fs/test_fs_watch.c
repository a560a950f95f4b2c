/*
 * The fs/watch engine (fs_watch.h) on a real loop and real folders: what a watch reports
 * (children of a folder but not deeper, a file itself, a path that appears later, names under
 * a symlink as given), the debounce into one sorted report, renames, unwatch, a burst of
 * 10,000 files giving a bounded number of reports, and the kernel's queue overflow reported.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ev.h>
#include <time.h>

#include "fs/fs_watch.h"
#include "fs_test_util.h"
#include "tests/helpers/skip_note.h"

#define MAXREP 512

struct report {
	char id[32];
	char **paths;
	size_t n;
};

struct ctx {
	struct ev_loop *loop;
	struct fs_watch *w;
	struct report rep[MAXREP];
	size_t nrep;
	char *d;
};

/* Keep a copy of each report. */
static void
changed_cb(void *arg, const char *id, const char *const *paths, size_t n)
{
	struct ctx *c = arg;

	if (c->nrep == MAXREP)
		return;
	struct report *r = &c->rep[c->nrep++];
	snprintf(r->id, sizeof(r->id), "%s", id);
	r->paths = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		r->paths[i] = xstrdup(paths[i]);
	r->n = n;
}

/* Stop the loop. */
static void
stop_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
	ev_break(loop, EVBREAK_ONE);
}

/* Run the loop for a while. */
static void
run_for(struct ctx *c, double seconds)
{
	ev_timer t;

	ev_now_update(c->loop); /* the loop did not run while the test changed files */
	ev_timer_init(&t, stop_cb, seconds, 0.);
	ev_timer_start(c->loop, &t);
	ev_run(c->loop, 0);
	ev_timer_stop(c->loop, &t);
}

/* Forget the reports. */
static void
clear(struct ctx *c)
{
	for (size_t i = 0; i < c->nrep; i++) {
		for (size_t k = 0; k < c->rep[i].n; k++)
			free(c->rep[i].paths[k]);
		free(c->rep[i].paths);
	}
	c->nrep = 0;
}

static int
setup(void **state)
{
	struct ctx *c = xcalloc(1, sizeof(*c));
	struct fs_watch_cbs cbs = {changed_cb, c};

	c->loop = ev_loop_new(EVFLAG_AUTO);
	c->w = fs_watch_new(c->loop, &cbs);
	c->d = tu_mkdtemp();
	*state = c;
	return 0;
}

static int
teardown(void **state)
{
	struct ctx *c = *state;

	clear(c);
	fs_watch_free(c->w);
	ev_loop_destroy(c->loop);
	tu_rmtree(c->d);
	free(c->d);
	free(c);
	return 0;
}

/* The report's paths joined by spaces, relative to the test folder. */
static char *
joined(const struct ctx *c, const struct report *r)
{
	size_t dl = strlen(c->d);
	char *s = xstrdup("");

	for (size_t i = 0; i < r->n; i++) {
		const char *p =
			strncmp(r->paths[i], c->d, dl) == 0 ? r->paths[i] + dl : r->paths[i];
		char *t = xasprintf("%s%s%s", s, i ? " " : "", p);
		free(s);
		s = t;
	}
	return s;
}

/* Exactly one report, with these paths. */
static void
expect_one(struct ctx *c, const char *want)
{
	if (c->nrep != 1)
		fail_msg("%zu reports, want 1 (%s)", c->nrep, want);
	char *got = joined(c, &c->rep[0]);
	assert_string_equal(got, want);
	free(got);
	clear(c);
}

/* Children of a watched folder, debounced into one sorted report; a subfolder's not. */
static void
test_watch_folder(void **state)
{
	struct ctx *c = *state;
	char *p, *cause = NULL;

	p = tu_path(c->d, "w/sub");
	tu_mkdirs(p), free(p);
	p = tu_path(c->d, "w");
	assert_int_equal(fs_watch_add(c->w, "w1", p, &cause), 0);
	assert_int_equal(fs_watch_add(c->w, "w1", p, &cause), -EEXIST);
	free(p);
	for (int i = 19; i >= 0; i--) {
		p = tu_path(c->d, "w/f%02d", i);
		tu_write(p, "x"), free(p);
	}
	p = tu_path(c->d, "w/sub/deep");
	tu_write(p, "x"), free(p);
	run_for(c, 0.5);
	assert_int_equal(c->nrep, 1);
	assert_int_equal(c->rep[0].n, 20); /* sub/deep is not reported */
	assert_string_equal(c->rep[0].id, "w1");
	char *first = tu_path(c->d, "w/f00");
	assert_string_equal(c->rep[0].paths[0], first);
	free(first);
	clear(c);

	/* a rename reports both names; a deletion its name */
	p = tu_path(c->d, "w/f00");
	char *q = tu_path(c->d, "w/renamed");
	assert_int_equal(rename(p, q), 0);
	free(p), free(q);
	p = tu_path(c->d, "w/f01");
	assert_int_equal(unlink(p), 0), free(p);
	run_for(c, 0.4);
	expect_one(c, "/w/f00 /w/f01 /w/renamed");

	/* unwatch: nothing more */
	assert_int_equal(fs_watch_remove(c->w, "w1"), 0);
	assert_int_equal(fs_watch_remove(c->w, "w1"), -ENOENT);
	p = tu_path(c->d, "w/after");
	tu_write(p, ""), free(p);
	run_for(c, 0.4);
	assert_int_equal(c->nrep, 0);
	assert_int_equal(fs_watch_count(c->w), 0);
}

/* A file: its changes, its replacement by rename, and changes of the new file. */
static void
test_watch_file(void **state)
{
	struct ctx *c = *state;
	char *p = tu_path(c->d, "f.txt"), *tmp = tu_path(c->d, "f.tmp"), *cause = NULL;

	tu_write(p, "1");
	assert_int_equal(fs_watch_add(c->w, "f", p, &cause), 0);
	tu_write(p, "2");
	run_for(c, 0.4);
	expect_one(c, "/f.txt");
	tu_write(tmp, "3");
	assert_int_equal(rename(tmp, p), 0);
	run_for(c, 0.4);
	expect_one(c, "/f.txt");
	tu_write(p, "4");
	run_for(c, 0.4);
	expect_one(c, "/f.txt");
	free(p);
	free(tmp);
}

/* A missing path: its creation is reported, then its children. */
static void
test_watch_missing(void **state)
{
	struct ctx *c = *state;
	char *p = tu_path(c->d, "later/inner"), *q, *cause = NULL;

	assert_int_equal(fs_watch_add(c->w, "m", p, &cause), 0);
	q = tu_path(c->d, "later");
	tu_mkdirs(q), free(q);
	run_for(c, 0.4);
	assert_int_equal(c->nrep, 0); /* a folder on the way is not the path */
	tu_mkdirs(p);
	run_for(c, 0.4);
	expect_one(c, "/later/inner");
	q = tu_path(c->d, "later/inner/child");
	tu_write(q, ""), free(q);
	run_for(c, 0.4);
	expect_one(c, "/later/inner/child");
	/* deleted (its child first) and made again: still watched */
	q = tu_path(c->d, "later");
	tu_rmtree(q), free(q);
	run_for(c, 0.4);
	expect_one(c, "/later/inner /later/inner/child");
	tu_mkdirs(p);
	run_for(c, 0.4);
	expect_one(c, "/later/inner");
	q = tu_path(c->d, "later/inner/again");
	tu_write(q, ""), free(q);
	run_for(c, 0.4);
	expect_one(c, "/later/inner/again");
	free(p);
}

/* Paths under a symlinked folder are reported as given, not resolved. */
static void
test_watch_symlink(void **state)
{
	struct ctx *c = *state;
	char *real = tu_path(c->d, "real"), *link = tu_path(c->d, "link"), *p, *cause = NULL;

	tu_mkdirs(real);
	assert_int_equal(symlink(real, link), 0);
	assert_int_equal(fs_watch_add(c->w, "l", link, &cause), 0);
	p = tu_path(c->d, "real/x");
	tu_write(p, ""), free(p);
	run_for(c, 0.4);
	expect_one(c, "/link/x");
	free(real);
	free(link);
}

/* 10,000 files: a bounded number of reports, the big ones as the path alone. */
static void
test_watch_burst(void **state)
{
	struct ctx *c = *state;
	char *p = tu_path(c->d, "burst"), *cause = NULL;
	struct timespec t0, t1;

	tu_mkdirs(p);
	assert_int_equal(fs_watch_add(c->w, "b", p, &cause), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 10000; i++) {
		char *f = xasprintf("%s/f%05d", p, i);
		tu_write(f, "");
		free(f);
		if (i % 500 == 0)
			ev_run(c->loop, EVRUN_NOWAIT);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	run_for(c, 0.5);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	print_message("10,000 files in %.2f s: %zu reports\n", secs, c->nrep);
	assert_true(c->nrep >= 1);
	assert_true((double)c->nrep <= secs / FS_WATCH_DEBOUNCE + 3);
	size_t total = 0;
	for (size_t i = 0; i < c->nrep; i++) {
		assert_true(c->rep[i].n <= FS_WATCH_PATHS_MAX);
		total += c->rep[i].n;
		if (c->rep[i].n == 1 && strcmp(c->rep[i].paths[0], p) == 0)
			total += 10000; /* collapsed: "rescan the path" covers everything */
	}
	assert_true(total >= 10000);
	clear(c);
	free(p);
}

/* The kernel's queue overflows: every watch reports its own path, even a quiet one. */
static void
test_watch_overflow(void **state)
{
	struct ctx *c = *state;
	char *busy = tu_path(c->d, "busy"), *quiet = tu_path(c->d, "quiet"), *cause = NULL;
	long max = 16384;
	FILE *f = fopen("/proc/sys/fs/inotify/max_queued_events", "re");

	if (f != NULL) {
		if (fscanf(f, "%ld", &max) != 1)
			max = 16384;
		fclose(f);
	}
	if (max > 100000)
		skip_test(
			"fs.inotify.max_user_watches is above 100,000: the limit cannot be reached");
	tu_mkdirs(busy);
	tu_mkdirs(quiet);
	assert_int_equal(fs_watch_add(c->w, "busy", busy, &cause), 0);
	assert_int_equal(fs_watch_add(c->w, "quiet", quiet, &cause), 0);
	/* each file is at least two events (create, modify); the loop does not run meanwhile */
	for (long i = 0; i < max / 2 + 100; i++) {
		char *p = xasprintf("%s/f%06ld", busy, i);
		tu_write(p, "x");
		free(p);
	}
	run_for(c, 0.5);
	int quiet_seen = 0;
	for (size_t i = 0; i < c->nrep; i++) {
		print_message("report %s: %zu paths, first %s\n", c->rep[i].id, c->rep[i].n,
			c->rep[i].paths[0]);
		if (strcmp(c->rep[i].id, "quiet") == 0 && c->rep[i].n == 1 &&
			strcmp(c->rep[i].paths[0], quiet) == 0)
			quiet_seen = 1;
	}
	assert_true(quiet_seen);
	clear(c);
	free(busy);
	free(quiet);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_watch_folder, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_symlink, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_burst, setup, teardown),
		cmocka_unit_test_setup_teardown(test_watch_overflow, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
