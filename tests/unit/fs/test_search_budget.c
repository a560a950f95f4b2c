/*
 * One budget for every search index of a runner (search_runner.c, search_live.c): the bytes
 * the indexes hold and the inotify watches they place (counted from /proc/self/fdinfo, the
 * kernel's own count) never pass it, sessions and one-shot searches alike; the least recently
 * used index is the one evicted, and an evicted session still answers in full (it walks again).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <ev.h>

#include "fs_test_util.h"
#include "fs/search/search.h"

#define DIRS  40 /* folders per tree: 41 watches with its root */
#define FILES 30 /* files per folder */

static char *trees[5];
static struct ev_loop *loop;

struct ctx {
	int completed;
	size_t hits;
};

static void
updated_cb(void *arg, const char *id, const char *query, const struct search_result *res,
	const char *const *roots)
{
	((struct ctx *)arg)->hits = res->n;
}

static void
completed_cb(void *arg, const char *id)
{
	((struct ctx *)arg)->completed++;
}

static void
done_cb(void *arg, const struct search_result *res, const char *const *roots)
{
	struct ctx *c = arg;

	c->hits = res->n;
	c->completed++;
}

/* Inotify watches this process holds, as the kernel lists them. */
static size_t
kernel_watches(void)
{
	DIR *d = opendir("/proc/self/fdinfo");
	struct dirent *de;
	size_t n = 0;
	char line[512];

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		char *p = xasprintf("/proc/self/fdinfo/%s", de->d_name);
		FILE *f = fopen(p, "re");
		free(p);
		while (f != NULL && fgets(line, sizeof(line), f) != NULL)
			n += strncmp(line, "inotify wd:", 11) == 0;
		if (f != NULL)
			fclose(f);
	}
	closedir(d);
	return n;
}

static int
setup(void **state)
{
	for (size_t t = 0; t < nitems(trees); t++) {
		trees[t] = tu_mkdtemp();
		for (int i = 0; i < DIRS; i++) {
			for (int k = 0; k < FILES; k++) {
				char *p = tu_path(trees[t], "dir%02d", i);
				tu_mkdirs(p);
				free(p);
				p = tu_path(trees[t], "dir%02d/file%02d.txt", i, k);
				tu_write(p, "");
				free(p);
			}
		}
	}
	loop = ev_loop_new(EVFLAG_AUTO);
	return 0;
}

static int
teardown(void **state)
{
	for (size_t t = 0; t < nitems(trees); t++) {
		tu_rmtree(trees[t]);
		free(trees[t]);
	}
	ev_loop_destroy(loop);
	return 0;
}

/* Query session id ("file07": one hit per folder); the hits. */
static size_t
session_query(struct search_runner *r, const char *id, struct ctx *c)
{
	char *cause = NULL;
	int want = c->completed + 1;

	assert_int_equal(search_session_update(r, id, "file07", &cause), 0);
	while (c->completed < want)
		ev_run(loop, EVRUN_ONCE);
	return c->hits;
}

/* Start a session over tree t and query it. */
static size_t
session_open(struct search_runner *r, const char *id, size_t t, struct ctx *c)
{
	struct search_session_cbs cbs = {updated_cb, completed_cb, c};
	const char *roots[] = {trees[t]};
	char *cause = NULL;

	assert_int_equal(search_session_start(r, id, roots, 1, &cbs, &cause), 0);
	return session_query(r, id, c);
}

/* Usage within the budget, by the runner's count and by the kernel's. */
static void
assert_within(struct search_runner *r, size_t max_bytes, size_t max_watches)
{
	size_t bytes, watches, kw = kernel_watches();

	search_runner_usage(r, &bytes, &watches);
	print_message("  usage: %zu bytes (budget %zu), %zu watches (kernel %zu, budget %zu)\n",
		bytes, max_bytes, watches, kw, max_watches);
	assert_true(bytes <= max_bytes);
	assert_true(watches <= max_watches);
	assert_true(kw <= max_watches);
	assert_int_equal(kw, watches);
}

/* Watches: two trees fit, a third evicts the least recently used; answers stay whole. */
static void
test_budget_watches(void **state)
{
	struct search_runner *r = search_runner_new(loop);
	struct ctx a = {0}, b = {0}, c = {0};
	size_t bytes, w;

	search_runner_set_budget(r, SEARCH_BUDGET_BYTES, 100);
	assert_int_equal(session_open(r, "a", 0, &a), DIRS);
	assert_int_equal(session_open(r, "b", 1, &b), DIRS);
	search_runner_usage(r, &bytes, &w);
	assert_int_equal(w, 2 * (DIRS + 1));
	assert_within(r, SEARCH_BUDGET_BYTES, 100);
	assert_int_equal(session_query(r, "a", &a), DIRS); /* a is now the most recent */
	assert_int_equal(session_open(r, "c", 2, &c), DIRS);
	assert_within(r, SEARCH_BUDGET_BYTES, 100);
	search_runner_usage(r, &bytes, &w);
	assert_int_equal(w, 2 * (DIRS + 1)); /* one index went for c, not two */
	/* b went (least recently used): its next query walks again, and answers in full */
	assert_int_equal(session_query(r, "b", &b), DIRS);
	assert_within(r, SEARCH_BUDGET_BYTES, 100);
	assert_int_equal(session_query(r, "a", &a), DIRS);
	assert_int_equal(session_query(r, "c", &c), DIRS);
	assert_within(r, SEARCH_BUDGET_BYTES, 100);
	search_runner_free(r);
	assert_int_equal(kernel_watches(), 0);
}

/* Bytes: sessions and one-shot searches over five trees stay within 1.5 trees' worth. */
static void
test_budget_bytes(void **state)
{
	struct search_runner *r = search_runner_new(loop);
	struct ctx a = {0}, o = {0};
	size_t one, w;

	assert_int_equal(session_open(r, "a", 0, &a), DIRS);
	search_runner_usage(r, &one, &w);
	search_session_stop(r, "a");
	search_runner_free(r);
	print_message("  one tree's index: %zu bytes, %zu watches\n", one, w);

	size_t max = one + one / 2;
	r = search_runner_new(loop);
	search_runner_set_budget(r, max, SEARCH_BUDGET_WATCHES);
	assert_int_equal(session_open(r, "a", 0, &a), DIRS);
	for (size_t t = 1; t < nitems(trees); t++) {
		const char *roots[] = {trees[t]};
		int want = o.completed + 1;
		assert_int_equal(search_run(r, "file07", roots, 1, NULL, done_cb, &o), 0);
		while (o.completed < want)
			ev_run(loop, EVRUN_ONCE);
		assert_int_equal(o.hits, DIRS);
		assert_within(r, max, SEARCH_BUDGET_WATCHES);
	}
	assert_int_equal(session_query(r, "a", &a), DIRS);
	assert_within(r, max, SEARCH_BUDGET_WATCHES);
	search_runner_free(r);
}

/* A tree bigger than the whole budget: cut short (some answers missing), never over it. */
static void
test_budget_one_tree_too_big(void **state)
{
	struct search_runner *r = search_runner_new(loop);
	struct ctx a = {0};

	search_runner_set_budget(r, 40 * 1024, 10);
	size_t hits = session_open(r, "a", 0, &a);
	assert_true(hits < DIRS);
	assert_within(r, 40 * 1024, 10);
	search_runner_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_watches),
		cmocka_unit_test(test_budget_bytes),
		cmocka_unit_test(test_budget_one_tree_too_big),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
