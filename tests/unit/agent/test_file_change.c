/*
 * A verified patch as the protocol shows it (server/agent/tools/file_change.c): the fileChange
 * item's changes (kind, move_path, diff) sorted by path, and acceptForSession covering a patch
 * only when every path and move target was remembered.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agent/tools/file_change.h"

static struct apply_patch_change changes[] = {
	{.kind = APPLY_PATCH_UPDATE, .path = "/w/b.txt", .move_path = "/w/c.txt", .diff = "@@"},
	{.kind = APPLY_PATCH_ADD, .path = "/w/a.txt", .diff = "hi\n"},
	{.kind = APPLY_PATCH_DELETE, .path = "/w/z.txt", .diff = "old\n"},
};

static void
test_item(void **state)
{
	struct apply_patch_change mine[3];
	struct apply_patch_result r = {.changes = mine, .nchanges = 3};
	json_t *it;
	char *s;

	(void)state;
	memcpy(mine, changes, sizeof mine);
	it = file_change_item(&r, "call-1");
	s = json_dumps(it, JSON_COMPACT);
	assert_string_equal(s,
		"{\"type\":\"fileChange\",\"id\":\"call-1\",\"changes\":["
		"{\"path\":\"/w/a.txt\",\"kind\":{\"type\":\"add\"},\"diff\":\"hi\\n\"},"
		"{\"path\":\"/w/b.txt\",\"kind\":{\"type\":\"update\",\"move_path\":\"/w/c.txt\"},"
		"\"diff\":\"@@\"},"
		"{\"path\":\"/w/z.txt\",\"kind\":{\"type\":\"delete\"},\"diff\":\"old\\n\"}],"
		"\"status\":\"inProgress\"}");
	free(s);
	json_decref(it);
}

static void
test_session(void **state)
{
	struct apply_patch_result r = {.changes = changes, .nchanges = 3};
	struct apply_patch_result one = {.changes = changes, .nchanges = 1}, none = {0};
	struct approval_cache *c = approval_cache_new();

	(void)state;
	assert_false(file_change_approved(c, &r));
	assert_false(file_change_approved(c, &none)); /* nothing to cover: never approved */
	approval_cache_add(c, "patch:/w/b.txt");
	assert_false(file_change_approved(c, &one)); /* the move's target is not covered */
	file_change_remember(c, &one);
	assert_true(approval_cache_has(c, "patch:/w/c.txt"));
	assert_true(file_change_approved(c, &one));
	assert_false(file_change_approved(c, &r));
	file_change_remember(c, &r);
	assert_true(file_change_approved(c, &r));
	approval_cache_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_item),
		cmocka_unit_test(test_session),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
