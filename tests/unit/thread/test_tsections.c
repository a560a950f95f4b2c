/*
 * Tests for thread sections in SQLite (index/tsections.c) on a real index file: the order
 * beforeThreadId gives, also after 60 insertions at the front use up the gaps between
 * positions and the section is renumbered; the refusals leave the file as it was (their
 * transaction rolled back, the next write works); a move within a section keeps its entered
 * time; deleting a section empties it; everything is there for a second connection.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thread/index/tindex.h"
#include "thread/index/tsections.h"
#include "thread_util.h"

#define NTHREADS 5

struct fx {
	char *dir;
	struct tindex *x;
	char ids[NTHREADS][37];
};

static int
fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof *f);
	char *cause = NULL;
	int fresh;

	f->dir = tu_tmpdir("tsections");
	assert_int_equal(tindex_open(f->dir, &f->x, &fresh, &cause), 0);
	for (int i = 0; i < NTHREADS; i++) {
		struct thread_meta m = {0};

		snprintf(f->ids[i], sizeof f->ids[i], "01a21d90-0000-7000-8000-%012d", i);
		memcpy(m.id, f->ids[i], sizeof m.id);
		m.path = xasprintf("%s/r%d.jsonl", f->dir, i);
		m.created_ms = m.updated_ms = m.recency_ms = 1000 + i;
		m.model_provider = xstrdup("p");
		m.source = xstrdup("\"vscode\"");
		assert_int_equal(tindex_put(f->x, &m, 0, 1), 0);
		thread_meta_clear(&m);
	}
	*state = f;
	return 0;
}

static int
fx_teardown(void **state)
{
	struct fx *f = *state;

	tindex_close(f->x);
	tu_rmrf(f->dir);
	free(f->dir);
	free(f);
	return 0;
}

/* The section's threads in position order, as indexes into f->ids ("3 0 1"). */
static char *
fx_order(struct fx *f, const char *section)
{
	struct tindex_query q = {.sort_updated = 3,
		.ascending = 1,
		.limit = 100,
		.default_provider = "p",
		.section_mode = 2,
		.section_id = section};
	struct tindex_page page;
	char *cause = NULL, out[256] = "";

	assert_int_equal(tindex_list(f->x, &q, &page, &cause), 0);
	for (size_t i = 0; i < page.n; i++)
		for (int k = 0; k < NTHREADS; k++)
			if (strcmp(page.rows[i].id, f->ids[k]) == 0)
				snprintf(out + strlen(out), sizeof out - strlen(out), "%s%d",
					i ? " " : "", k);
	tindex_page_free(&page);
	return xstrdup(out);
}

static void
fx_move(struct fx *f, int thread, const char *section, int before, int64_t now)
{
	int64_t entered;
	char *cause = NULL;

	assert_int_equal(tsections_move(f->x, f->ids[thread], section,
				 before >= 0 ? f->ids[before] : NULL, now, &entered, &cause),
		0);
}

static void
fx_expect_order(struct fx *f, const char *section, const char *want)
{
	char *got = fx_order(f, section);

	assert_string_equal(got, want);
	free(got);
}

static void
test_order_and_renumber(void **state)
{
	struct fx *f = *state;
	const char *a = "01a21d90-0000-7000-8000-00000000000a";
	int order[4] = {1, 0, 2, 3};

	assert_int_equal(tsections_create(f->x, a, "A", NULL, 1), 0);
	for (int i = 0; i < 4; i++)
		fx_move(f, i, a, -1, 1);
	fx_expect_order(f, a, "0 1 2 3");
	fx_move(f, 3, a, 0, 2);
	fx_move(f, 1, a, 0, 2);
	fx_expect_order(f, a, "3 1 0 2");
	fx_move(f, 3, a, -1, 3); /* within the section, no before: to the end */
	fx_expect_order(f, a, "1 0 2 3");
	/*
	 * The front's gap halves at each insertion: 1,000,000 is used up after about twenty,
	 * then the section is renumbered and the order must hold all the same. Each round
	 * moves the last thread before the first.
	 */
	for (int i = 0; i < 60; i++) {
		int last = order[3];
		char want[32];

		fx_move(f, last, a, order[0], 4);
		memmove(order + 1, order, 3 * sizeof *order);
		order[0] = last;
		snprintf(want, sizeof want, "%d %d %d %d", order[0], order[1], order[2], order[3]);
		fx_expect_order(f, a, want);
	}
}

static void
test_refusals_roll_back(void **state)
{
	struct fx *f = *state;
	const char *a = "01a21d90-0000-7000-8000-00000000000a";
	const char *b = "01a21d90-0000-7000-8000-00000000000b";
	json_t *sections, *members;
	int64_t entered = 0;
	char *cause = NULL;

	assert_int_equal(tsections_create(f->x, a, "A", NULL, 1), 0);
	assert_int_equal(tsections_create(f->x, b, "B", "{\"icon\":null,\"color\":\"red\"}", 1), 0);
	fx_move(f, 0, a, -1, 5000);
	fx_move(f, 1, b, -1, 5000);
	assert_int_equal(
		tsections_move(f->x, f->ids[2], "nope", NULL, 6000, &entered, &cause), -EINVAL);
	assert_string_equal(cause, "section nope does not exist");
	free(cause);
	cause = NULL;
	assert_int_equal(
		tsections_move(f->x, f->ids[0], a, f->ids[0], 6000, &entered, &cause), -EINVAL);
	free(cause);
	cause = NULL;
	/* before a thread of another section: refused, and thread 0 stays where it was */
	assert_int_equal(
		tsections_move(f->x, f->ids[0], b, f->ids[2], 6000, &entered, &cause), -EINVAL);
	assert_non_null(strstr(cause, "is not in section"));
	free(cause);
	/* within its section: the entered time stays; into another: a new one */
	fx_move(f, 0, a, -1, 7000);
	fx_move(f, 1, a, 0, 8000);
	assert_int_equal(tsections_load(f->x, &sections, &members), 0);
	assert_int_equal(
		json_integer_value(json_array_get(json_object_get(members, f->ids[0]), 1)), 5000);
	assert_int_equal(
		json_integer_value(json_array_get(json_object_get(members, f->ids[1]), 1)), 8000);
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(json_object_get(sections, b), "appearance"), "color")),
		"red");
	assert_non_null(json_object_get(sections, TSECTIONS_PINNED_ID));
	json_decref(sections);
	json_decref(members);
	fx_expect_order(f, a, "1 0");
	/* update and delete of what is not there */
	assert_int_equal(tsections_update(f->x, "nope", "x", 0, NULL), -ENOENT);
	assert_int_equal(tsections_delete(f->x, "nope"), -ENOENT);
	/* delete: the section and its memberships go together */
	assert_int_equal(tsections_delete(f->x, a), 0);
	assert_int_equal(tsections_load(f->x, &sections, &members), 0);
	assert_null(json_object_get(sections, a));
	assert_int_equal(json_object_size(members), 0);
	json_decref(sections);
	json_decref(members);
}

/* What one connection committed, another (the next daemon) reads. */
static void
test_second_connection_sees_it(void **state)
{
	struct fx *f = *state;
	const char *a = "01a21d90-0000-7000-8000-00000000000a";
	struct tindex *y;
	json_t *data, *sections, *members;
	char *next = NULL, *cause = NULL;
	int fresh;

	assert_int_equal(tsections_create(f->x, a, "A", NULL, 1), 0);
	fx_move(f, 4, a, -1, 9000);
	assert_int_equal(tindex_open(f->dir, &y, &fresh, &cause), 0);
	assert_int_equal(fresh, 0);
	assert_int_equal(tsections_page(y, NULL, 1, &data, &next), 0);
	assert_int_equal(json_array_size(data), 1);
	assert_string_equal(next, TSECTIONS_PINNED_ID);
	json_decref(data);
	assert_int_equal(tsections_page(y, next, 10, &data, &cause), 0);
	assert_null(cause);
	assert_string_equal(json_string_value(json_object_get(json_array_get(data, 0), "id")), a);
	json_decref(data);
	free(next);
	assert_int_equal(tsections_load(y, &sections, &members), 0);
	assert_string_equal(
		json_string_value(json_array_get(json_object_get(members, f->ids[4]), 0)), a);
	json_decref(sections);
	json_decref(members);
	tindex_close(y);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_order_and_renumber, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_refusals_roll_back, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_second_connection_sees_it, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
