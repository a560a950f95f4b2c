/*
 * Tests for the thread index as a cache of the rollouts: keyset pagination over 250 threads
 * stays exact while threads are added between pages; the index deleted, corrupted or stale
 * (a rollout added behind our back) is rebuilt and answers the same; filters; two processes
 * writing one home at once leave a sound index that lists every thread of both; a new file
 * is made at the last version and left synchronous=NORMAL, and an old one is brought up to it
 * with its rows kept.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sqlite3.h>
#include <sys/wait.h>

#include "store_util.h"
#include "thread/index/tindex.h"
#include "thread/index/tsections.h"
#include "thread/rollout/rollout_writer.h"

/* n threads with one turn each, user text "topic <i>". */
static void
make_threads(struct store *s, int n, const char *tag)
{
	char text[64], *cause = NULL;

	for (int i = 0; i < n; i++) {
		struct store_thread *t;

		if (store_create(s, NULL, &t, &cause) != 0)
			abort();
		snprintf(text, sizeof text, "%s %d", tag, i);
		su_turn(t, text, "ok");
		store_unload(t);
	}
	store_drain(s);
}

/* Every page of a list (limit per page) concatenated: the full ordered id list. */
static json_t *
list_everything(struct store *s, struct store_list_params *p)
{
	json_t *all = json_array();
	char *cursor = NULL;
	int r;

	do {
		json_t *res, *ids;

		p->cursor = cursor;
		res = su_list(s, p, &r);
		assert_int_equal(r, 0);
		ids = su_ids(res);
		json_array_extend(all, ids);
		json_decref(ids);
		free(cursor);
		cursor = json_is_string(json_object_get(res, "nextCursor"))
			? xstrdup(json_string_value(json_object_get(res, "nextCursor")))
			: NULL;
		json_decref(res);
	} while (cursor != NULL);
	p->cursor = NULL;
	return all;
}

/* 250 threads paged 50 at a time while 10 more start between pages: each old one once, in order. */
static void
test_pagination_with_inserts(void **state)
{
	struct tu_home h;
	struct store *s;
	struct store_list_params p = {.limit = 50};
	json_t *before, *seen = json_array(), *counts = json_object();
	char *cursor = NULL;
	int r, pages = 0;

	tu_empty_home(&h, "pag");
	s = su_open(h.home, "prov");
	make_threads(s, 250, "topic");
	p.limit = 100;
	before = list_everything(s, &p);
	assert_int_equal(json_array_size(before), 250);
	p.limit = 50;
	do {
		json_t *res, *ids;

		p.cursor = cursor;
		res = su_list(s, &p, &r);
		assert_int_equal(r, 0);
		ids = su_ids(res);
		json_array_extend(seen, ids);
		json_decref(ids);
		free(cursor);
		cursor = json_is_string(json_object_get(res, "nextCursor"))
			? xstrdup(json_string_value(json_object_get(res, "nextCursor")))
			: NULL;
		json_decref(res);
		make_threads(s, 10, "late"); /* newer than every page still to come */
		pages++;
	} while (cursor != NULL);
	assert_int_equal(pages, 5);
	assert_true(tu_json_same(before, seen));
	size_t i;
	json_t *id;
	json_array_foreach(seen, i, id)
	{
		assert_null(json_object_get(counts, json_string_value(id)));
		json_object_set_new(counts, json_string_value(id), json_true());
	}
	/* Ascending from the start, and the backwards cursor turns around on its anchor. */
	p.cursor = NULL;
	p.sort_direction = "asc";
	p.limit = 3;
	json_t *res = su_list(s, &p, &r);
	json_t *asc = su_ids(res);
	assert_true(json_equal(json_array_get(asc, 0), json_array_get(before, 249)));
	p.cursor = json_string_value(json_object_get(res, "backwardsCursor"));
	p.sort_direction = "desc";
	json_t *res2 = su_list(s, &p, &r);
	json_t *back = su_ids(res2);
	assert_int_equal(json_array_size(back), 1); /* only the anchor is that old */
	assert_true(json_equal(json_array_get(back, 0), json_array_get(asc, 0)));
	json_decref(back);
	json_decref(res2);
	/* The cursor of one sort key is refused by another. */
	p.cursor = json_string_value(json_object_get(res, "nextCursor"));
	p.sort_key = "updated_at";
	assert_null(su_list(s, &p, &r));
	assert_int_equal(r, -ERANGE);
	json_decref(res);
	json_decref(asc);
	json_decref(before);
	json_decref(seen);
	json_decref(counts);
	store_free(s);
	tu_home_free(&h);
}

/* Filters: search over preview and name, cwd, source kinds, exclusions. */
static void
test_filters(void **state)
{
	struct tu_home h;
	struct store *s;
	struct store_thread *t;
	struct store_params sp = {.cwd = "/elsewhere"};
	struct store_list_params p = {.limit = 100};
	char *cause = NULL;
	json_t *res, *ids;
	int r;

	tu_empty_home(&h, "filt");
	s = su_open(h.home, "prov");
	make_threads(s, 5, "alpha");
	assert_int_equal(store_create(s, &sp, &t, &cause), 0);
	su_turn(t, "beta question", "ok");
	p.search_term = "beta";
	res = su_list(s, &p, &r);
	assert_int_equal(json_array_size(json_object_get(res, "data")), 1);
	json_decref(res);
	assert_int_equal(store_set_name(s, store_thread_id(t), "gamma name", &cause), 0);
	p.search_term = "gamma";
	res = su_list(s, &p, &r);
	assert_int_equal(json_array_size(json_object_get(res, "data")), 1);
	json_decref(res);
	p.search_term = NULL;
	p.cwd = json_string("/elsewhere");
	res = su_list(s, &p, &r);
	assert_int_equal(json_array_size(json_object_get(res, "data")), 1);
	json_decref(res);
	json_decref(p.cwd);
	p.cwd = NULL;
	p.excluded_ids = json_pack("[s]", store_thread_id(t));
	res = su_list(s, &p, &r);
	ids = su_ids(res);
	assert_int_equal(json_array_size(ids), 5);
	json_decref(ids);
	json_decref(res);
	json_decref(p.excluded_ids);
	p.excluded_ids = json_pack("[s]", "not-an-id");
	assert_null(su_list(s, &p, &r));
	assert_int_equal(r, -ERANGE);
	json_decref(p.excluded_ids);
	p.excluded_ids = NULL;
	p.source_kinds = json_pack("[s]", "exec");
	res = su_list(s, &p, &r);
	assert_int_equal(json_array_size(json_object_get(res, "data")), 0);
	json_decref(res);
	json_decref(p.source_kinds);
	store_free(s);
	tu_home_free(&h);
}

/* All ids listed with the given provider, across pages. */
static json_t *
all_ids(const char *home)
{
	struct store *s = su_open(home, "prov");
	struct store_list_params p = {.limit = 100};
	json_t *ids = list_everything(s, &p);

	store_free(s);
	return ids;
}

/* The index deleted, corrupted, or missing a file that appeared behind our back: rebuilt. */
static void
test_rebuild(void **state)
{
	struct tu_home h;
	struct store *s;
	char *db, *cause = NULL;
	json_t *want, *got;

	tu_empty_home(&h, "rebuild");
	s = su_open(h.home, "prov");
	make_threads(s, 40, "t");
	store_free(s);
	want = all_ids(h.home);
	assert_int_equal(json_array_size(want), 40);
	db = xasprintf("%s/app-server-threads.sqlite", h.home);

	unlink(db); /* deleted */
	got = all_ids(h.home);
	assert_true(tu_json_same(want, got));
	json_decref(got);

	tu_write(db, "this is not a database, not at all; SQLite will say so......", 60);
	char *wal = xasprintf("%s-wal", db);
	unlink(wal);
	free(wal);
	got = all_ids(h.home); /* corrupted */
	assert_true(tu_json_same(want, got));
	json_decref(got);

	/* Stale: a rollout written by someone else after our index was built. */
	s = su_open(h.home, "prov");
	struct store_thread *t;
	struct tu_home other = {.home = h.home};
	(void)other;
	{
		struct store *s2;
		struct store_config cfg = {.home = h.home, .default_provider = "prov"};

		/* A second store stands in for another process: same files, its own connection. */
		assert_int_equal(store_open(&cfg, &s2, &cause), 0);
		store_drain(s2);
		assert_int_equal(store_create(s2, NULL, &t, &cause), 0);
		su_turn(t, "from the other side", "ok");
		store_free(s2);
	}
	/* Wipe the row the other store wrote: only the file tells about the thread now. */
	sqlite3 *raw;
	assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
	sqlite3_exec(
		raw, "DELETE FROM threads WHERE preview = 'from the other side'", NULL, NULL, NULL);
	sqlite3_close(raw);
	struct store_list_params p = {.limit = 100};
	int r;
	json_t *res = su_list(s, &p, &r);
	assert_int_equal(json_array_size(json_object_get(res, "data")), 40);
	json_decref(res);
	store_rescan(s, 0, NULL, NULL);
	store_drain(s);
	res = su_list(s, &p, &r);
	assert_int_equal(json_array_size(json_object_get(res, "data")), 41);
	json_decref(res);
	/* A rollout deleted behind our back disappears at the next scan too. */
	json_t *th;
	assert_int_equal(
		store_read(s, json_string_value(json_array_get(want, 0)), 0, &th, &cause), 0);
	/* The read's index write lands first (applied after the scan, it would bring the row
	 * back until the next scan). */
	store_drain(s);
	unlink(json_string_value(json_object_get(th, "path")));
	json_decref(th);
	store_rescan(s, 0, NULL, NULL);
	store_drain(s);
	res = su_list(s, &p, &r);
	assert_int_equal(json_array_size(json_object_get(res, "data")), 40);
	json_decref(res);
	store_free(s);
	free(db);
	json_decref(want);
	tu_home_free(&h);
}

/* Two processes create threads on one home at the same time: nothing lost, nothing corrupt. */
static void
test_two_processes(void **state)
{
	struct tu_home h;
	pid_t pid;
	int status;
	json_t *ids;
	char *db;
	sqlite3 *raw;
	sqlite3_stmt *st;

	tu_empty_home(&h, "two");
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct store *s = su_open(h.home, "prov");

		make_threads(s, 60, "child");
		store_free(s);
		_exit(0);
	}
	struct store *s = su_open(h.home, "prov");
	make_threads(s, 60, "parent");
	store_free(s);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	db = xasprintf("%s/app-server-threads.sqlite", h.home);
	assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
	assert_int_equal(
		sqlite3_prepare_v2(raw, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
	sqlite3_close(raw);
	ids = all_ids(h.home);
	assert_int_equal(json_array_size(ids), 120);
	json_decref(ids);
	free(db);
	tu_home_free(&h);
}

/* One integer (or, with text, a string) from a one-row statement of the index's connection. */
static long long
ix_value(struct tindex *x, const char *sql, char *text, size_t len)
{
	sqlite3_stmt *st = tindex_stmt(x, sql);
	long long v;

	assert_non_null(st);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	if (text != NULL)
		snprintf(text, len, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_reset(st);
	return v;
}

/*
 * A new file: the last version, WAL, and synchronous back to NORMAL after its unsynced making.
 * An index at version 1 (the sections' and attachments' tables gone): migrated in one go to
 * the last version, its rows kept, the Pinned section made.
 */
static void
test_fresh_and_upgrade(void **state)
{
	struct tu_home h;
	struct tindex *x;
	char *cause = NULL, *db, mode[16];
	int fresh = 0;
	sqlite3 *raw;

	tu_empty_home(&h, "migrate");
	assert_int_equal(tindex_open(h.home, &x, &fresh, &cause), 0);
	assert_int_equal(fresh, 1);
	assert_int_equal(ix_value(x, "PRAGMA user_version", NULL, 0), TINDEX_VERSION);
	assert_int_equal(ix_value(x, "PRAGMA synchronous", NULL, 0), 1); /* NORMAL */
	ix_value(x, "PRAGMA journal_mode", mode, sizeof mode);
	assert_string_equal(mode, "wal");
	tindex_close(x);

	db = xasprintf("%s/app-server-threads.sqlite", h.home);
	assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
	assert_int_equal(sqlite3_exec(raw,
				 "DROP TABLE sections; DROP TABLE section_members;"
				 " DROP TABLE attachments; INSERT INTO meta VALUES ('kept', 'yes');"
				 " PRAGMA user_version = 1;",
				 NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(raw);
	assert_int_equal(tindex_open(h.home, &x, &fresh, &cause), 0);
	assert_int_equal(fresh, 0);
	assert_int_equal(ix_value(x, "PRAGMA user_version", NULL, 0), TINDEX_VERSION);
	assert_int_equal(ix_value(x, "PRAGMA synchronous", NULL, 0), 1);
	assert_int_equal(ix_value(x, "SELECT count(*) FROM meta WHERE key = 'kept'", NULL, 0), 1);
	assert_int_equal(
		ix_value(x, "SELECT count(*) FROM sections WHERE id = '" TSECTIONS_PINNED_ID "'",
			NULL, 0),
		1);
	assert_int_equal(ix_value(x, "SELECT count(*) FROM attachments", NULL, 0), 0);
	tindex_close(x);
	free(db);
	tu_home_free(&h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pagination_with_inserts),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_rebuild),
		cmocka_unit_test(test_two_processes),
		cmocka_unit_test(test_fresh_and_upgrade),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
