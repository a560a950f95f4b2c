/*
 * Tests for thread attachments in SQLite (index/tattach.c) on a real index file: an identity
 * is added once (a second add finds it, payload untouched); the hundredth is the last a thread
 * takes and the refusal leaves nothing behind; pages follow creation order and refuse a cursor
 * that is not theirs; owners come in thread id order with the index's archived flag and its
 * filter; removing and forgetting a thread.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thread/index/tattach.h"
#include "thread/index/tindex.h"
#include "thread/uuidv7.h"
#include "thread_util.h"

struct fx {
	char *dir;
	struct tindex *x;
	char t[3][37]; /* threads; the second one archived */
};

static int
fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof *f);
	char *cause = NULL;
	int fresh;

	f->dir = tu_tmpdir("tattach");
	assert_int_equal(tindex_open(f->dir, &f->x, &fresh, &cause), 0);
	for (int i = 0; i < 3; i++) {
		struct thread_meta m = {0};

		snprintf(f->t[i], sizeof f->t[i], "01a21d90-0000-7000-8000-%012d", 3 - i);
		memcpy(m.id, f->t[i], sizeof m.id);
		m.path = xasprintf("%s/r%d.jsonl", f->dir, i);
		m.created_ms = m.updated_ms = m.recency_ms = 1000 + i;
		m.source = xstrdup("\"vscode\"");
		m.archived = i == 1;
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

/* Add (thread, type, key) with payload text; returns created, the attachment to *out. */
static int
fx_add(struct fx *f, int t, const char *type, const char *key, const char *payload, json_t **out)
{
	char id[37];
	json_t *att;
	int created;

	uuidv7_new(id);
	assert_int_equal(
		tattach_add(f->x, f->t[t], type, key, id, payload, 5000, &att, &created), 0);
	if (out != NULL)
		*out = att;
	else
		json_decref(att);
	return created;
}

static void
test_add_once_and_the_limit(void **state)
{
	struct fx *f = *state;
	json_t *a, *b, *data;
	char key[16], id[37], *next;
	int created = 1;

	assert_true(fx_add(f, 0, "pr", "k", "{\"url\":\"x\",\"n\":1}", &a));
	assert_false(fx_add(f, 0, "pr", "k", "{\"url\":\"y\"}", &b));
	assert_true(json_equal(a, b)); /* the first payload, the same id */
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(b, "payload"), "url")), "x");
	assert_int_equal(json_integer_value(json_object_get(b, "createdAt")), 5);
	json_decref(a);
	json_decref(b);
	for (int i = 1; i < TATTACH_PER_THREAD; i++) {
		snprintf(key, sizeof key, "f%03d", i);
		assert_true(fx_add(f, 0, "f", key, "1", NULL));
	}
	uuidv7_new(id);
	b = NULL;
	assert_int_equal(
		tattach_add(f->x, f->t[0], "f", "over", id, "1", 6000, &b, &created), -EMLINK);
	assert_null(b);
	assert_int_equal(created, 0);
	/* an identity it holds is still found at the limit, and nothing was added */
	assert_false(fx_add(f, 0, "f", "f001", "2", NULL));
	assert_int_equal(tattach_list(f->x, f->t[0], NULL, 100, &data, &next), 0);
	assert_int_equal(json_array_size(data), TATTACH_PER_THREAD);
	assert_null(next);
	json_decref(data);
}

static void
test_pages_in_creation_order(void **state)
{
	struct fx *f = *state;
	json_t *data, *all = json_array();
	char key[16], *next = NULL, *cursor = NULL;

	/* keys descending: the order must be creation, not the key */
	for (int i = 0; i < 7; i++) {
		snprintf(key, sizeof key, "z%d", 9 - i);
		fx_add(f, 2, "n", key, "null", NULL);
	}
	do {
		assert_int_equal(tattach_list(f->x, f->t[2], cursor, 3, &data, &next), 0);
		json_array_extend(all, data);
		json_decref(data);
		free(cursor);
		cursor = next;
	} while (cursor != NULL);
	assert_int_equal(json_array_size(all), 7);
	for (int i = 0; i < 7; i++) {
		snprintf(key, sizeof key, "z%d", 9 - i);
		assert_string_equal(json_string_value(json_object_get(
					    json_array_get(all, (size_t)i), "identityKey")),
			key);
	}
	json_decref(all);
	assert_int_equal(tattach_list(f->x, f->t[2], "bogus", 3, &data, &next), -ERANGE);
	assert_int_equal(tattach_owners(f->x, "n", "z9", -1, "bogus", 3, &data, &next), -ERANGE);
}

static void
test_owners_remove_forget(void **state)
{
	struct fx *f = *state;
	json_t *data;
	char *next, *id;

	for (int t = 2; t >= 0; t--)
		fx_add(f, t, "pr", "k1", "1", NULL);
	assert_int_equal(tattach_owners(f->x, "pr", "k1", -1, NULL, 10, &data, &next), 0);
	/* thread id order: t[2] has the smallest id */
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(data, 0), "threadId")), f->t[2]);
	assert_true(json_is_true(json_object_get(json_array_get(data, 1), "archived")));
	json_decref(data);
	assert_int_equal(tattach_owners(f->x, "pr", "k1", 1, NULL, 10, &data, &next), 0);
	assert_int_equal(json_array_size(data), 1);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(data, 0), "threadId")), f->t[1]);
	json_decref(data);
	assert_int_equal(tattach_owners(f->x, "pr", "k1", 0, NULL, 1, &data, &next), 0);
	assert_int_equal(json_array_size(data), 1);
	assert_string_equal(next, f->t[2]);
	json_decref(data);
	assert_int_equal(tattach_owners(f->x, "pr", "k1", 0, next, 1, &data, &id), 0);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(data, 0), "threadId")), f->t[0]);
	assert_null(id);
	json_decref(data);
	free(next);
	assert_int_equal(tattach_remove(f->x, f->t[0], "pr", "k1", &id), 0);
	assert_non_null(id);
	free(id);
	assert_int_equal(tattach_remove(f->x, f->t[0], "pr", "k1", &id), 0);
	assert_null(id);
	assert_int_equal(tattach_forget(f->x, f->t[2]), 0);
	assert_int_equal(tattach_owners(f->x, "pr", "k1", -1, NULL, 10, &data, &next), 0);
	assert_int_equal(json_array_size(data), 1); /* t[1] alone */
	json_decref(data);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_add_once_and_the_limit, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(
			test_pages_in_creation_order, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_owners_remove_forget, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
