/*
 * fs/watch and fs/unwatch on the real daemon: the answer ({"path"}), fs/changed after a change
 * (created, modified, deleted, renamed; a new folder reported but not what is made inside it),
 * one notification for a quick series, a missing path, upstream's errors (duplicate watchId)
 * and {} for an unknown unwatch, nothing after unwatch, a burst of files giving a bounded number
 * of notifications, and an inotify overflow (the daemon stopped while thousands of events
 * queue) reported as the watched paths. The harness checks each fs/changed against the
 * reference FsChangedNotification.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "sandbox_util.h"
#include "protocol/xmalloc.h"
#include "tests/helpers/skip_note.h"

#define T_REPLY	 10000
#define T_CHANGE 3000

/* mkdir -p. */
static void
mkdir_p(const char *path)
{
	char *p = xstrdup(path);

	for (char *s = p + 1; *s != '\0'; s++) {
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	}
	assert_int_equal(mkdir(p, 0755), 0);
	free(p);
}

/* Inotify watches the daemon holds (the "inotify wd:" lines of its fds' fdinfo). */
static int
inotify_watches(pid_t pid)
{
	char *dir = xasprintf("/proc/%d/fdinfo", (int)pid), line[512];
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		char *p = xasprintf("%s/%s", dir, de->d_name);
		FILE *f = de->d_name[0] != '.' ? fopen(p, "re") : NULL;
		while (f != NULL && fgets(line, sizeof(line), f) != NULL)
			n += strncmp(line, "inotify wd:", 11) == 0;
		if (f != NULL)
			fclose(f);
		free(p);
	}
	closedir(d);
	free(dir);
	return n;
}

/* Start a watch; the answer must echo the path. */
static void
watch(struct asc *c, const char *id, const char *path)
{
	long long rid =
		asc_request(c, "fs/watch", json_pack("{s:s, s:s}", "watchId", id, "path", path));
	json_t *m = asc_wait_response(c, rid, asc_timeout(T_REPLY));

	assert_string_equal(json_string_value(json_object_get(asc_assert_result(m), "path")), path);
	json_decref(m);
}

/* Unwatch; always {}. */
static void
unwatch(struct asc *c, const char *id)
{
	long long rid = asc_request(c, "fs/unwatch", json_pack("{s:s}", "watchId", id));
	json_t *m = asc_wait_response(c, rid, asc_timeout(T_REPLY));

	assert_int_equal(json_object_size(asc_assert_result(m)), 0);
	json_decref(m);
}

/* The next fs/changed: its paths relative to base, joined by spaces (heap); checks the id. */
static char *
next_change(struct asc *c, const char *id, const char *base)
{
	json_t *m = asc_wait_notification(c, "fs/changed", asc_timeout(T_CHANGE));
	json_t *p = json_object_get(m, "params"), *v;
	size_t i, bl = strlen(base);
	char *s = xstrdup("");

	assert_string_equal(json_string_value(json_object_get(p, "watchId")), id);
	json_array_foreach(json_object_get(p, "changedPaths"), i, v)
	{
		const char *path = json_string_value(v);
		char *t = xasprintf(
			"%s%s%s", s, i ? " " : "", strncmp(path, base, bl) == 0 ? path + bl : path);
		free(s);
		s = t;
	}
	json_decref(m);
	return s;
}

/* Expect one fs/changed with exactly these paths. */
static void
expect_change(struct asc *c, const char *id, const char *base, const char *want)
{
	char *got = next_change(c, id, base);

	assert_string_equal(got, want);
	free(got);
}

/* Nothing arrives within ms. */
static void
expect_quiet(struct asc *c, int ms)
{
	usleep((useconds_t)ms * 1000);
	assert_int_equal(asc_sync(c, asc_timeout(T_REPLY)), 0);
}

/* Create, modify, delete, rename; new folders reported, their insides not. */
static void
test_watch_changes(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *d = sbt_mkdir_in(c, "w"), *p, *q;

	watch(c, "w1", d);
	p = xasprintf("%s/new.txt", d);
	sbt_put(p, "1");
	expect_change(c, "w1", d, "/new.txt");
	sbt_put(p, "2");
	expect_change(c, "w1", d, "/new.txt");
	q = xasprintf("%s/renamed.txt", d);
	assert_int_equal(rename(p, q), 0);
	expect_change(c, "w1", d, "/new.txt /renamed.txt");
	assert_int_equal(unlink(q), 0);
	expect_change(c, "w1", d, "/renamed.txt");
	free(p);
	free(q);
	/* a new folder, and a file in it: only the folder (the watch is not recursive) */
	p = xasprintf("%s/sub/deeper", d);
	mkdir_p(p);
	expect_change(c, "w1", d, "/sub");
	free(p);
	p = xasprintf("%s/sub/deeper/f", d);
	sbt_put(p, "x");
	free(p);
	expect_quiet(c, 500);
	/* twenty quick creations: one notification, sorted */
	for (int i = 19; i >= 0; i--) {
		p = xasprintf("%s/q%02d", d, i);
		sbt_put(p, "");
		free(p);
	}
	char *got = next_change(c, "w1", d);
	assert_true(strncmp(got, "/q00 /q01 /q02", 14) == 0);
	assert_int_equal(strlen(got), 20 * 4 + 19);
	free(got);
	/* errors and unwatch */
	long long rid =
		asc_request(c, "fs/watch", json_pack("{s:s, s:s}", "watchId", "w1", "path", d));
	json_t *m = asc_wait_response(c, rid, asc_timeout(T_REPLY));
	asc_assert_error(m, -32600, NULL);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(m, "error"), "message")),
		"watchId already exists: w1");
	json_decref(m);
	unwatch(c, "nope");
	assert_true(inotify_watches(asc_pid(c)) >= 1);
	unwatch(c, "w1");
	assert_int_equal(inotify_watches(asc_pid(c)), 0); /* every watch dropped */
	p = xasprintf("%s/after", d);
	sbt_put(p, "");
	free(p);
	expect_quiet(c, 500);
	free(d);
	asc_free(c);
}

/* A path that does not exist yet, and a relative one. */
static void
test_watch_missing(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *d = sbt_mkdir_in(c, "m"), *p = xasprintf("%s/later", d), *q;

	watch(c, "m", p);
	mkdir_p(p);
	expect_change(c, "m", d, "/later");
	q = xasprintf("%s/later/child", d);
	sbt_put(q, "");
	expect_change(c, "m", d, "/later/child");
	long long rid = asc_request(
		c, "fs/watch", json_pack("{s:s, s:s}", "watchId", "r", "path", "rel/ative"));
	json_t *m = asc_wait_response(c, rid, asc_timeout(T_REPLY));
	asc_assert_error(m, -32600, NULL);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(m, "error"), "message")),
		"Invalid request: AbsolutePathBuf deserialized without a base path");
	json_decref(m);
	free(q);
	free(p);
	free(d);
	asc_free(c);
}

/* A build writing many files: a bounded number of notifications, nothing lost. */
static void
test_watch_burst(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *d = sbt_mkdir_in(c, "burst");
	size_t n = asc_load(10000), seen = 0, notes = 0;
	long long t0 = asc_now_ms();
	json_t *m;

	watch(c, "b", d);
	for (size_t i = 0; i < n; i++) {
		char *p = xasprintf("%s/f%05zu", d, i);
		sbt_put(p, "");
		free(p);
	}
	long long secs = (asc_now_ms() - t0) / 1000 + 1;
	/* collect until quiet */
	while ((m = asc_next(c, asc_timeout(1000))) != NULL) {
		json_t *paths = json_object_get(json_object_get(m, "params"), "changedPaths");
		notes++;
		if (json_array_size(paths) == 1 &&
			strcmp(json_string_value(json_array_get(paths, 0)), d) == 0)
			seen = n; /* the folder itself: rescan it */
		else
			seen += json_array_size(paths);
		json_decref(m);
	}
	print_message("%zu files in ~%lld s: %zu notifications\n", n, secs, notes);
	assert_true(notes >= 1);
	assert_true(notes <= (size_t)(secs * 5 + 3));
	assert_true(seen >= n);
	free(d);
	asc_free(c);
}

/* The daemon stopped while events pile up past the kernel's queue: the overflow is reported. */
static void
test_watch_overflow(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *busy = sbt_mkdir_in(c, "busy"), *quiet = sbt_mkdir_in(c, "quiet");
	long max = 16384;
	FILE *f = fopen("/proc/sys/fs/inotify/max_queued_events", "re");
	json_t *m;
	int quiet_seen = 0;

	if (f != NULL) {
		if (fscanf(f, "%ld", &max) != 1)
			max = 16384;
		fclose(f);
	}
	if (max > 100000)
		skip_test(
			"fs.inotify.max_user_watches is above 100,000: the limit cannot be reached");
	watch(c, "busy", busy);
	watch(c, "quiet", quiet);
	assert_int_equal(kill(asc_pid(c), SIGSTOP), 0);
	for (long i = 0; i < max / 2 + 100; i++) {
		char *p = xasprintf("%s/f%06ld", busy, i);
		sbt_put(p, "x");
		free(p);
	}
	assert_int_equal(kill(asc_pid(c), SIGCONT), 0);
	while ((m = asc_next(c, asc_timeout(1500))) != NULL) {
		json_t *p = json_object_get(m, "params");
		json_t *paths = json_object_get(p, "changedPaths");
		if (strcmp(json_string_value(json_object_get(p, "watchId")), "quiet") == 0 &&
			json_array_size(paths) == 1 &&
			strcmp(json_string_value(json_array_get(paths, 0)), quiet) == 0)
			quiet_seen = 1;
		json_decref(m);
	}
	assert_true(quiet_seen);
	free(busy);
	free(quiet);
	asc_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watch_changes),
		cmocka_unit_test(test_watch_missing),
		cmocka_unit_test(test_watch_burst),
		cmocka_unit_test(test_watch_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
