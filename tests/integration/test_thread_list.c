/*
 * The thread methods against the real daemon, continued (test_thread.c has the rest):
 * ephemeral threads, list pages that stay stable while threads are started in between, an
 * index deleted or corrupted or behind a rollout added by someone else, two daemons on one
 * CODEX_HOME, config overrides, a thread unloaded once idle and unsubscribed, and the first
 * page of a new CODEX_HOME.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "th_util.h"

static const char *th_needle;
static int th_found;

/* A file whose name holds th_needle. */
static int
th_find_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	th_found += strstr(path, th_needle) != NULL;
	return 0;
}

static void
test_ephemeral(void **state)
{
	struct th t;
	json_t *r, *thread;
	char *id;

	(void)state;
	th_start(&t, 0);
	r = th_call(t.c, "thread/start", json_pack("{s:s, s:b}", "cwd", t.h.ws, "ephemeral", 1));
	thread = json_object_get(asc_assert_result(r), "thread");
	assert_true(json_is_null(json_object_get(thread, "path")));
	assert_true(json_is_true(json_object_get(thread, "ephemeral")));
	id = xstrdup(json_string_value(json_object_get(thread, "id")));
	json_decref(r);
	json_decref(asc_wait_notification(t.c, "thread/started", asc_timeout(TH_MS)));
	th_turn(&t, id, "nothing kept");
	asc_free(t.c);
	t.c = th_daemon(&t);
	r = th_call(t.c, "thread/resume", json_pack("{s:s}", "threadId", id));
	th_error(r, -32600, "no rollout found");
	json_decref(r);
	/* Nothing under the home names it. */
	th_needle = id;
	th_found = 0;
	nftw(t.h.home, th_find_cb, 16, FTW_PHYS);
	assert_int_equal(th_found, 0);
	free(id);
	th_stop(&t);
}

/* thread/list pages of `limit` until the end; the ids seen, in order (heap, space-separated). */
static char *
th_all_pages(struct th *t, int limit, struct th *other, int *pages)
{
	struct buf b;
	json_t *r, *res;
	char *cursor = NULL, *ids;

	buf_init(&b, 1 << 20);
	*pages = 0;
	for (;;) {
		json_t *p = json_pack("{s:i}", "limit", limit);

		if (cursor != NULL)
			json_object_set_new(p, "cursor", json_string(cursor));
		r = th_call(t->c, "thread/list", p);
		res = asc_assert_result(r);
		ids = th_ids(res);
		if (*ids != '\0')
			buf_printf(&b, "%s%s", b.len ? " " : "", ids);
		free(ids);
		free(cursor);
		cursor = json_is_string(json_object_get(res, "nextCursor"))
			? xstrdup(json_string_value(json_object_get(res, "nextCursor")))
			: NULL;
		json_decref(r);
		(*pages)++;
		if (cursor == NULL)
			break;
		/* Meanwhile, new threads (with a turn, so listed) on the same daemon. */
		if (other != NULL) {
			char *id = th_new(other, NULL);

			th_turn(other, id, "in between");
			free(id);
		}
	}
	return buf_steal(&b, NULL);
}

static void
test_list_pages_stable(void **state)
{
	struct th t;
	char *before, *during;
	int pages, n = (int)asc_load(250);

	(void)state;
	th_start(&t, 0);
	for (int i = 0; i < n; i++) {
		char *id = th_new(&t, NULL);

		th_turn(&t, id, "listed");
		free(id);
	}
	before = th_all_pages(&t, 1000, NULL, &pages);
	/* Pages of 17 with threads started between pages: every earlier thread once, same order. */
	during = th_all_pages(&t, 17, &t, &pages);
	assert_true(pages >= n / 17);
	/* The new threads are newer than the cursor's position: none of them enters a later page.
	 */
	assert_string_equal(during, before);
	free(before);
	free(during);
	th_stop(&t);
}

static void
test_index_rebuilt(void **state)
{
	struct th t;
	json_t *r;
	char *want, *got, *idx, *wal;
	FILE *f;

	(void)state;
	th_start(&t, 1);
	r = th_call(t.c, "thread/list", json_object());
	want = th_ids(asc_assert_result(r));
	json_decref(r);
	asc_free(t.c);
	/* Deleted, then corrupted: the same answer after the rebuild. */
	idx = xasprintf("%s/app-server-threads.sqlite", t.h.home);
	wal = xasprintf("%s-wal", idx);
	for (int round = 0; round < 2; round++) {
		unlink(wal);
		if (round == 0)
			assert_int_equal(unlink(idx), 0);
		else {
			f = fopen(idx, "w");
			fputs("this is not a database", f);
			fclose(f);
		}
		t.c = th_daemon(&t);
		r = th_call(t.c, "thread/list", json_object());
		got = th_ids(asc_assert_result(r));
		assert_string_equal(got, want);
		free(got);
		json_decref(r);
		asc_free(t.c);
	}
	t.c = th_daemon(&t);
	free(idx);
	free(wal);
	free(want);
	th_stop(&t);
}

/*
 * Found by tests/soak/lifecycle_soak.py: while the index was rebuilt, thread/read answered
 * name null for threads whose rows were in and names not yet (a scan writes names last).
 */
static void
test_names_while_rebuilding(void **state)
{
	enum { N = 200 };
	struct th t;
	char *ids[N], *idx;
	long long rid[N];
	json_t *r;

	(void)state;
	th_start(&t, 0);
	for (int i = 0; i < N; i++) {
		ids[i] = th_new(&t, NULL);
		r = th_call(t.c, "thread/name/set",
			json_pack("{s:s, s:s+}", "threadId", ids[i], "name", "name-", ids[i]));
		asc_assert_result(r);
		json_decref(r);
	}
	asc_free(t.c);
	idx = xasprintf("%s/app-server-threads.sqlite", t.h.home);
	assert_int_equal(unlink(idx), 0);
	t.c = th_daemon(&t);
	/* all at once, while the new daemon rebuilds its index */
	for (int i = 0; i < N; i++)
		rid[i] = asc_request(t.c, "thread/read", json_pack("{s:s}", "threadId", ids[i]));
	for (int i = 0; i < N; i++) {
		json_t *th;
		char *want = xasprintf("name-%s", ids[i]);

		r = asc_wait_response(t.c, rid[i], asc_timeout(TH_MS));
		th = json_object_get(asc_assert_result(r), "thread");
		if (!json_is_string(json_object_get(th, "name")))
			fail_msg("read %d of %d: no name for %s", i + 1, N, ids[i]);
		assert_string_equal(json_string_value(json_object_get(th, "name")), want);
		json_decref(r);
		free(want);
		free(ids[i]);
	}
	free(idx);
	th_stop(&t);
}

static void
test_two_daemons(void **state)
{
	struct th t;
	struct asc *b;
	json_t *r;
	char *id, *ids;

	(void)state;
	th_start(&t, 0);
	b = th_daemon(&t);
	id = th_new(&t, NULL);
	th_turn(&t, id, "from daemon A");
	/* B finds A's thread (a rollout added behind its back: the list rescans). */
	usleep(600 * 1000);
	r = th_call(b, "thread/list", json_object());
	ids = th_ids(asc_assert_result(r));
	json_decref(r);
	if (strstr(ids, id) == NULL) {
		/* What a rescan found shows in the next answer. */
		free(ids);
		usleep(200 * 1000);
		r = th_call(b, "thread/list", json_object());
		ids = th_ids(asc_assert_result(r));
		json_decref(r);
	}
	assert_non_null(strstr(ids, id));
	r = th_call(b, "thread/read", json_pack("{s:s, s:b}", "threadId", id, "includeTurns", 1));
	assert_int_equal(json_array_size(json_object_get(
				 json_object_get(asc_assert_result(r), "thread"), "turns")),
		1);
	json_decref(r);
	free(ids);
	free(id);
	asc_free(b);
	th_stop(&t);
}

static void
test_config_overrides(void **state)
{
	struct th t;
	json_t *r, *res;

	(void)state;
	th_start(&t, 0);
	r = th_call(t.c, "thread/start",
		json_pack("{s:s, s:{s:s, s:s, s:s}}", "cwd", t.h.ws, "config", "model",
			"other-model", "sandbox_mode", "workspace-write", "approval_policy",
			"untrusted"));
	res = asc_assert_result(r);
	assert_string_equal(json_string_value(json_object_get(res, "model")), "other-model");
	assert_string_equal(json_string_value(json_object_get(res, "approvalPolicy")), "untrusted");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(res, "sandbox"), "type")),
		"workspaceWrite");
	json_decref(r);
	json_decref(asc_wait_notification(t.c, "thread/started", asc_timeout(TH_MS)));
	r = th_call(t.c, "thread/start",
		json_pack("{s:s, s:{s:s}}", "cwd", t.h.ws, "config", "approval_policy",
			"on-failure"));
	asc_assert_error(r, -32600, NULL);
	json_decref(r);
	th_stop(&t);
}

/* An answer's approvalPolicy and sandbox type, checked. */
static void
th_settings_are(json_t *r, const char *approval, const char *sandbox)
{
	json_t *res = asc_assert_result(r);

	assert_string_equal(json_string_value(json_object_get(res, "approvalPolicy")), approval);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(res, "sandbox"), "type")),
		sandbox);
	json_decref(r);
}

/*
 * Found by tests/soak/lifecycle_soak.py: resume after a restart and fork ran with upstream's
 * defaults (on-request, readOnly) instead of config.toml's. Now: the request's settings, else
 * a loaded source's (fork), else config.toml's (never, dangerFullAccess here).
 */
static void
test_settings_resume_fork(void **state)
{
	struct th t;
	char *id, *explicit;

	(void)state;
	th_start(&t, 0);
	id = th_new(&t, NULL);
	th_turn(&t, id, "hello");
	explicit = th_new(&t,
		json_pack(
			"{s:s, s:s}", "approvalPolicy", "untrusted", "sandbox", "workspace-write"));
	/* a fork of a loaded thread runs with its settings; the request's win */
	th_settings_are(th_call(t.c, "thread/fork", json_pack("{s:s}", "threadId", explicit)),
		"untrusted", "workspaceWrite");
	json_decref(asc_wait_notification(t.c, "thread/started", asc_timeout(TH_MS)));
	th_settings_are(
		th_call(t.c, "thread/fork",
			json_pack("{s:s, s:s}", "threadId", explicit, "sandbox", "read-only")),
		"untrusted", "readOnly");
	json_decref(asc_wait_notification(t.c, "thread/started", asc_timeout(TH_MS)));
	/* after a restart nothing is loaded: config.toml's */
	asc_free(t.c);
	t.c = th_daemon(&t);
	th_settings_are(th_call(t.c, "thread/fork", json_pack("{s:s}", "threadId", id)), "never",
		"dangerFullAccess");
	json_decref(asc_wait_notification(t.c, "thread/started", asc_timeout(TH_MS)));
	th_settings_are(th_call(t.c, "thread/resume", json_pack("{s:s}", "threadId", id)), "never",
		"dangerFullAccess");
	/* resuming a loaded thread keeps what it runs with */
	th_settings_are(
		th_call(t.c, "thread/resume",
			json_pack("{s:s, s:s}", "threadId", id, "approvalPolicy", "untrusted")),
		"untrusted", "dangerFullAccess");
	th_settings_are(th_call(t.c, "thread/resume", json_pack("{s:s}", "threadId", id)),
		"untrusted", "dangerFullAccess");
	free(id);
	free(explicit);
	th_stop(&t);
}

static void
test_idle_unsubscribed_closes(void **state)
{
	struct th t;
	json_t *r, *n;
	char *id;

	(void)state;
	th_start(&t, 0);
	asc_free(t.c);
	t.c = th_daemon_env(&t, "APP_SERVER_THREAD_IDLE_SECS=0.3");
	id = th_new(&t, NULL);
	r = th_call(t.c, "thread/unsubscribe", json_pack("{s:s}", "threadId", id));
	asc_assert_result(r);
	json_decref(r);
	/* Nobody wants it any more: once idle, it unloads with thread/closed. */
	n = asc_wait_notification(t.c, "thread/closed", asc_timeout(5000));
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(n, "params"), "threadId")), id);
	json_decref(n);
	r = th_call(t.c, "thread/loaded/list", json_object());
	assert_int_equal(json_array_size(json_object_get(asc_assert_result(r), "data")), 0);
	json_decref(r);
	/* Still on disk: resume brings it back. */
	r = th_call(t.c, "thread/resume", json_pack("{s:s}", "threadId", id));
	asc_assert_result(r);
	json_decref(r);
	free(id);
	th_stop(&t);
}

/*
 * A new CODEX_HOME (no sessions/ nor archived_sessions/ folder) lists its threads, none, at
 * once: the first page does not wait for the index to be made. Shown with an index that
 * cannot be made (a folder in its place): the page is still the empty one upstream answers,
 * where waiting for the index answered "thread index unavailable".
 */
static void
test_new_home_lists_at_once(void **state)
{
	struct th t;
	json_t *r;
	char *ix;

	(void)state;
	th_start(&t, 0);
	ix = xasprintf("%s/app-server-threads.sqlite", t.h.home);
	assert_int_equal(mkdir(ix, 0700), 0);
	r = th_call(t.c, "thread/list", json_object());
	assert_int_equal(json_array_size(json_object_get(asc_assert_result(r), "data")), 0);
	assert_true(json_is_null(json_object_get(asc_assert_result(r), "nextCursor")));
	assert_true(json_is_null(json_object_get(asc_assert_result(r), "backwardsCursor")));
	json_decref(r);
	rmdir(ix);
	free(ix);
	th_stop(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ephemeral),
		cmocka_unit_test(test_list_pages_stable),
		cmocka_unit_test(test_index_rebuilt),
		cmocka_unit_test(test_names_while_rebuilding),
		cmocka_unit_test(test_two_daemons),
		cmocka_unit_test(test_config_overrides),
		cmocka_unit_test(test_settings_resume_fork),
		cmocka_unit_test(test_idle_unsubscribed_closes),
		cmocka_unit_test(test_new_home_lists_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
