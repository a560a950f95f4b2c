/*
 * The live index (search_live.h): changes on disk reach the index in place (no second walk) —
 * creations in new nested folders, deletions, renames of folders — while a change of the
 * ignore rules or an inotify overflow re-walks. Driven directly, without the runner: the test
 * plays both the loop thread (drain) and the worker (refresh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <ev.h>

#include "fs_test_util.h"
#include "fs/search/search.h"
#include "fs/search/search_live.h"
#include "tests/helpers/skip_note.h"

/* Is rel in the index (and a folder when is_dir)? -1 absent, 0 file, 1 folder. */
static int
in_index(struct search_live *l, const char *rel)
{
	struct search_index *ix = (struct search_index *)search_live_index(l);

	return search_index_lookup(ix, 0, rel, strlen(rel));
}

/* What the loop and the worker would do before a query. */
static void
sync_live(struct search_live *l)
{
	search_live_drain(l);
	assert_int_equal(search_live_refresh(l, NULL), 0);
}

/* Full walks so far. */
static size_t
walks(struct search_live *l)
{
	struct search_live_stats st;

	search_live_stats(l, &st);
	return st.walks;
}

/* Create, delete and rename, nested and new folders included: all applied in place. */
static void
test_live_in_place(void **state)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	char *d = tu_mkdtemp(), *p, *q;
	const char *roots[] = {d};
	struct search_live_stats st;

	p = tu_path(d, "a");
	tu_mkdirs(p), free(p);
	p = tu_path(d, "a/old.txt");
	tu_write(p, "x"), free(p);
	struct search_live *l = search_live_new(loop, roots, 1);
	sync_live(l);
	assert_int_equal(walks(l), 1);
	assert_int_equal(in_index(l, ""), 1);
	assert_int_equal(in_index(l, "a/old.txt"), 0);
	search_live_stats(l, &st);
	assert_true(st.watched);
	assert_int_equal(st.watches, 2);

	/* a file, and a new folder holding a folder holding a file */
	p = tu_path(d, "a/new.txt");
	tu_write(p, ""), free(p);
	p = tu_path(d, "b/c");
	tu_mkdirs(p), free(p);
	p = tu_path(d, "b/c/deep.md");
	tu_write(p, ""), free(p);
	sync_live(l);
	assert_int_equal(in_index(l, "a/new.txt"), 0);
	assert_int_equal(in_index(l, "b"), 1);
	assert_int_equal(in_index(l, "b/c"), 1);
	assert_int_equal(in_index(l, "b/c/deep.md"), 0);
	/* the new folders are watched now */
	p = tu_path(d, "b/c/later.md");
	tu_write(p, ""), free(p);
	sync_live(l);
	assert_int_equal(in_index(l, "b/c/later.md"), 0);

	/* a folder renamed: the old paths go, the new ones come, and stay watched */
	p = tu_path(d, "b");
	q = tu_path(d, "moved");
	assert_int_equal(rename(p, q), 0);
	free(p), free(q);
	sync_live(l);
	assert_int_equal(in_index(l, "b"), -1);
	assert_int_equal(in_index(l, "b/c/deep.md"), -1);
	assert_int_equal(in_index(l, "moved/c/deep.md"), 0);
	p = tu_path(d, "moved/c/after-move");
	tu_write(p, ""), free(p);
	sync_live(l);
	assert_int_equal(in_index(l, "moved/c/after-move"), 0);

	/* deletions */
	p = tu_path(d, "a/old.txt");
	assert_int_equal(unlink(p), 0), free(p);
	p = tu_path(d, "moved");
	tu_rmtree(p), free(p);
	sync_live(l);
	assert_int_equal(in_index(l, "a/old.txt"), -1);
	assert_int_equal(in_index(l, "moved"), -1);
	assert_int_equal(in_index(l, "moved/c/after-move"), -1);
	assert_int_equal(search_index_count(search_live_index(l)), 3); /* "", a, a/new.txt */
	assert_int_equal(walks(l), 1);

	search_live_free(l);
	ev_loop_destroy(loop);
	tu_rmtree(d);
	free(d);
}

/* A new ignore rule re-walks (so the rule applies); a created ignored file stays out. */
static void
test_live_rules(void **state)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	char *d = tu_mkdtemp(), *p;
	const char *roots[] = {d};

	p = tu_path(d, ".git");
	tu_mkdirs(p), free(p);
	p = tu_path(d, "keep.c");
	tu_write(p, ""), free(p);
	p = tu_path(d, "drop.log");
	tu_write(p, ""), free(p);
	struct search_live *l = search_live_new(loop, roots, 1);
	sync_live(l);
	assert_int_equal(in_index(l, "drop.log"), 0);
	p = tu_path(d, ".gitignore");
	tu_write(p, "*.log\n"), free(p);
	sync_live(l);
	assert_int_equal(walks(l), 2);
	assert_int_equal(in_index(l, "drop.log"), -1);
	assert_int_equal(in_index(l, "keep.c"), 0);
	/* applied in place from now on, with the rule */
	p = tu_path(d, "new.log");
	tu_write(p, ""), free(p);
	p = tu_path(d, "new.c");
	tu_write(p, ""), free(p);
	sync_live(l);
	assert_int_equal(walks(l), 2);
	assert_int_equal(in_index(l, "new.log"), -1);
	assert_int_equal(in_index(l, "new.c"), 0);
	search_live_free(l);
	ev_loop_destroy(loop);
	tu_rmtree(d);
	free(d);
}

/* More events than the kernel queues: IN_Q_OVERFLOW re-walks, and nothing is lost. */
static void
test_live_overflow(void **state)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	char *d = tu_mkdtemp(), *p;
	const char *roots[] = {d};
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
	struct search_live *l = search_live_new(loop, roots, 1);
	sync_live(l);
	/* each file is two events (create, close-write); no drain meanwhile */
	for (long i = 0; i < max / 2 + 100; i++) {
		p = xasprintf("%s/f%06ld", d, i);
		tu_write(p, ""), free(p);
	}
	sync_live(l);
	assert_int_equal(walks(l), 2);
	assert_int_equal(search_index_count(search_live_index(l)), (size_t)(max / 2 + 101));
	search_live_free(l);
	ev_loop_destroy(loop);
	tu_rmtree(d);
	free(d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_in_place),
		cmocka_unit_test(test_live_rules),
		cmocka_unit_test(test_live_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
