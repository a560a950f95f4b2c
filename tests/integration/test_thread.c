/*
 * The thread methods against the real daemon: result shapes and the order of their notifications
 * (notes §3, §8), errors in upstream's words, upstream's own CODEX_HOME read over the wire
 * (list, archived list, read of every thread as upstream-answers.json records them), what
 * survives a restart (our rollouts, zero-turn threads, names), fork, archive / unarchive /
 * delete and unsubscribe. Listing, ephemeral threads, the index and overrides are in
 * test_thread_list.c; the store itself is tested in tests/unit/thread/; this is the wire.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "th_util.h"

static void
test_start_shapes_and_errors(void **state)
{
	struct th t;
	json_t *r, *res, *thread;
	char *id;
	long long rid;

	(void)state;
	th_start(&t, 0);
	rid = asc_request(t.c, "thread/start",
		json_pack("{s:s, s:s, s:s}", "cwd", t.h.ws, "sandbox", "workspace-write",
			"approvalPolicy", "untrusted"));
	/* The answer comes first, then thread/started. */
	r = asc_next(t.c, asc_timeout(TH_MS));
	res = asc_assert_result(r);
	assert_int_equal(json_integer_value(json_object_get(r, "id")), rid);
	thread = json_object_get(res, "thread");
	id = xstrdup(json_string_value(json_object_get(thread, "id")));
	assert_string_equal(json_string_value(json_object_get(res, "approvalPolicy")), "untrusted");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(res, "sandbox"), "type")),
		"workspaceWrite");
	assert_string_equal(json_string_value(json_object_get(res, "cwd")), t.h.ws);
	assert_string_equal(json_string_value(json_object_get(res, "model")), "mock-model");
	assert_string_equal(
		json_string_value(json_object_get(res, "modelProvider")), "mock_provider");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(thread, "status"), "type")),
		"idle");
	/* Ours: the rollout exists at once (upstream writes it at the first turn). */
	assert_int_equal(access(json_string_value(json_object_get(thread, "path")), F_OK), 0);
	json_decref(r);
	json_decref(asc_wait_notification(t.c, "thread/started", asc_timeout(TH_MS)));
	/* A zero-turn thread: read works (turns []), list does not show it, loaded/list does. */
	r = th_call(t.c, "thread/read", json_pack("{s:s, s:b}", "threadId", id, "includeTurns", 1));
	assert_int_equal(json_array_size(json_object_get(
				 json_object_get(asc_assert_result(r), "thread"), "turns")),
		0);
	json_decref(r);
	r = th_call(t.c, "thread/list", json_object());
	assert_int_equal(json_array_size(json_object_get(asc_assert_result(r), "data")), 0);
	json_decref(r);
	r = th_call(t.c, "thread/loaded/list", json_object());
	assert_string_equal(
		json_string_value(json_array_get(json_object_get(asc_assert_result(r), "data"), 0)),
		id);
	json_decref(r);
	/* Errors in upstream's words. */
	r = th_call(t.c, "thread/read", json_pack("{s:s}", "threadId", "not-a-uuid"));
	th_error(r, -32600, "invalid thread id: ");
	json_decref(r);
	r = th_call(t.c, "thread/resume",
		json_pack("{s:s}", "threadId", "01a20a0c-0000-7000-8000-0000000000aa"));
	th_error(r, -32600, "no rollout found for thread id 01a20a0c-0000-7000-8000-0000000000aa");
	json_decref(r);
	r = th_call(t.c, "thread/list", json_pack("{s:s}", "cursor", "garbage"));
	asc_assert_error(r, -32602, NULL);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(r, "error"), "data")
				? json_object_get(
					  json_object_get(json_object_get(r, "error"), "data"),
					  "cursor")
				: NULL),
		"garbage");
	json_decref(r);
	r = th_call(t.c, "thread/unsubscribe",
		json_pack("{s:s}", "threadId", "01a20a0c-0000-7000-8000-0000000000aa"));
	assert_string_equal(
		json_string_value(json_object_get(asc_assert_result(r), "status")), "notLoaded");
	json_decref(r);
	free(id);
	th_stop(&t);
}

/* Upstream's fixture thread named `key` read over the wire, compared with upstream's answer. */
static void
th_compare_read(struct th *t, const json_t *answers, const char *key)
{
	const char *id = json_string_value(json_object_get(json_object_get(answers, "ids"), key));
	char *akey = xasprintf("thread/read %s", key);
	json_t *want = json_object_get(
		json_object_get(json_object_get(answers, akey), "result"), "thread");
	json_t *r = th_call(
		t->c, "thread/read", json_pack("{s:s, s:b}", "threadId", id, "includeTurns", 1));
	json_t *got = json_object_get(asc_assert_result(r), "thread"), *wt, *gt;
	size_t i;

	assert_non_null(want);
	assert_string_equal(json_string_value(json_object_get(got, "preview")),
		json_string_value(json_object_get(want, "preview")));
	assert_true(json_equal(json_object_get(got, "name"), json_object_get(want, "name")));
	assert_int_equal(json_integer_value(json_object_get(got, "createdAt")),
		json_integer_value(json_object_get(want, "createdAt")));
	wt = json_object_get(want, "turns");
	gt = json_object_get(got, "turns");
	assert_int_equal(json_array_size(gt), json_array_size(wt));
	for (i = 0; i < json_array_size(wt); i++) {
		json_t *w = json_array_get(wt, i), *g = json_array_get(gt, i);

		assert_string_equal(json_string_value(json_object_get(g, "id")),
			json_string_value(json_object_get(w, "id")));
		assert_string_equal(json_string_value(json_object_get(g, "status")),
			json_string_value(json_object_get(w, "status")));
		/* Every item, as upstream shows it. */
		if (!json_equal(json_object_get(g, "items"), json_object_get(w, "items"))) {
			char *a = json_dumps(json_object_get(g, "items"), JSON_COMPACT);
			char *b = json_dumps(json_object_get(w, "items"), JSON_COMPACT);

			fail_msg("%s turn %zu items:\n ours     %.2000s\n upstream %.2000s", key, i,
				a, b);
		}
	}
	json_decref(r);
	free(akey);
}

static void
test_upstream_home(void **state)
{
	static const char *const keys[] = {"text_two_turns", "shell_tool", "apply_patch", "named"};
	struct th t;
	json_t *answers, *r;
	char *want, *got;

	(void)state;
	th_start(&t, 1);
	answers = tu_answers(&t.h);
	r = th_call(t.c, "thread/list", json_object());
	want = th_ids(json_object_get(json_object_get(answers, "thread/list"), "result"));
	got = th_ids(asc_assert_result(r));
	assert_string_equal(got, want);
	free(want);
	free(got);
	json_decref(r);
	r = th_call(t.c, "thread/list", json_pack("{s:b}", "archived", 1));
	want = th_ids(json_object_get(json_object_get(answers, "thread/list archived"), "result"));
	got = th_ids(asc_assert_result(r));
	assert_string_equal(got, want);
	free(want);
	free(got);
	json_decref(r);
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		th_compare_read(&t, answers, keys[i]);
	/* Resume an upstream thread and run a turn on it: its history goes to the model. */
	r = th_call(t.c, "thread/resume",
		json_pack("{s:s}", "threadId",
			json_string_value(json_object_get(
				json_object_get(answers, "ids"), "text_two_turns"))));
	assert_int_equal(json_array_size(json_object_get(
				 json_object_get(asc_assert_result(r), "thread"), "turns")),
		2);
	json_decref(r);
	th_turn(&t,
		json_string_value(
			json_object_get(json_object_get(answers, "ids"), "text_two_turns")),
		"third question");
	r = mm_records(&t.mm);
	assert_true(tt_body_has_text(tt_request_body(r, 0), "third question"));
	assert_true(tt_body_has_text(tt_request_body(r, 0), "hi"));
	json_decref(r);
	json_decref(answers);
	th_stop(&t);
}

static void
test_restart_zero_turn_and_names(void **state)
{
	struct th t;
	json_t *r, *n;
	char *zero, *named;
	long idx_status, idx_answer;

	(void)state;
	th_start(&t, 0);
	zero = th_new(&t, NULL);
	named = th_new(&t, NULL);
	th_turn(&t, named, "a question");
	/* Issue 21: a 3 MiB name is refused, not appended to session_index.jsonl. */
	char *big = xmalloc(3 << 20);
	memset(big, 'n', 3 << 20);
	big[(3 << 20) - 1] = '\0';
	r = th_call(
		t.c, "thread/name/set", json_pack("{s:s, s:s}", "threadId", named, "name", big));
	th_error(r, -32600, "thread name must not be longer than 1024 bytes");
	json_decref(r);
	free(big);
	r = th_call(t.c, "thread/name/set",
		json_pack("{s:s, s:s}", "threadId", named, "name", "  My thread \n"));
	asc_assert_result(r);
	json_decref(r);
	n = asc_wait_notification(t.c, "thread/name/updated", asc_timeout(TH_MS));
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(n, "params"), "threadName")),
		"My thread");
	json_decref(n);
	asc_free(t.c);
	t.c = th_daemon(&t);
	/* A zero-turn thread resumes after a restart (upstream: no rollout found, #42099). */
	asc_request(t.c, "thread/resume", json_pack("{s:s}", "threadId", zero));
	idx_status = idx_answer = -1;
	for (long i = 0; i < 2; i++) {
		r = asc_next(t.c, asc_timeout(TH_MS));
		assert_non_null(r);
		if (json_object_get(r, "method") != NULL)
			idx_status = i;
		else {
			idx_answer = i;
			assert_int_equal(
				json_array_size(json_object_get(
					json_object_get(asc_assert_result(r), "thread"), "turns")),
				0);
		}
		json_decref(r);
	}
	assert_true(idx_status == 0 && idx_answer == 1); /* status changed, then the answer */
	/* The name survived, and the turn. */
	r = th_call(
		t.c, "thread/read", json_pack("{s:s, s:b}", "threadId", named, "includeTurns", 1));
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(asc_assert_result(r), "thread"), "name")),
		"My thread");
	assert_int_equal(json_array_size(json_object_get(
				 json_object_get(asc_assert_result(r), "thread"), "turns")),
		1);
	json_decref(r);
	free(zero);
	free(named);
	th_stop(&t);
}

static void
test_archive_unarchive_delete(void **state)
{
	struct th t;
	json_t *r, *m;
	char *id;

	(void)state;
	th_start(&t, 0);
	id = th_new(&t, NULL);
	th_turn(&t, id, "keep me");
	/* Loaded: status notLoaded first, then {}, then thread/archived. */
	asc_request(t.c, "thread/archive", json_pack("{s:s}", "threadId", id));
	m = asc_next(t.c, asc_timeout(TH_MS));
	assert_string_equal(
		json_string_value(json_object_get(m, "method")), "thread/status/changed");
	json_decref(m);
	m = asc_next(t.c, asc_timeout(TH_MS));
	assert_int_equal(json_object_size(asc_assert_result(m)), 0);
	json_decref(m);
	m = asc_next(t.c, asc_timeout(TH_MS));
	assert_string_equal(json_string_value(json_object_get(m, "method")), "thread/archived");
	json_decref(m);
	r = th_call(t.c, "thread/list", json_pack("{s:b}", "archived", 1));
	assert_int_equal(json_array_size(json_object_get(asc_assert_result(r), "data")), 1);
	json_decref(r);
	r = th_call(
		t.c, "turn/start", json_pack("{s:s, s:o}", "threadId", id, "input", tt_text("x")));
	th_error(r, -32600, "thread not found");
	json_decref(r);
	r = th_call(t.c, "thread/unarchive", json_pack("{s:s}", "threadId", id));
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(asc_assert_result(r), "thread"), "id")),
		id);
	json_decref(r);
	json_decref(asc_wait_notification(t.c, "thread/unarchived", asc_timeout(TH_MS)));
	r = th_call(t.c, "thread/list", json_object());
	assert_int_equal(json_array_size(json_object_get(asc_assert_result(r), "data")), 1);
	json_decref(r);
	r = th_call(t.c, "thread/delete", json_pack("{s:s}", "threadId", id));
	asc_assert_result(r);
	json_decref(r);
	json_decref(asc_wait_notification(t.c, "thread/deleted", asc_timeout(TH_MS)));
	r = th_call(t.c, "thread/read", json_pack("{s:s}", "threadId", id));
	th_error(r, -32600, "thread not loaded: "); /* upstream's words for an unknown thread */
	json_decref(r);
	free(id);
	th_stop(&t);
}

static void
test_fork_and_pages(void **state)
{
	struct th t;
	json_t *r, *res, *answers;
	const char *src;
	char *cursor;

	(void)state;
	th_start(&t, 1);
	answers = tu_answers(&t.h);
	src = json_string_value(json_object_get(json_object_get(answers, "ids"), "text_two_turns"));
	r = th_call(t.c, "thread/fork", json_pack("{s:s}", "threadId", src));
	res = json_object_get(asc_assert_result(r), "thread");
	assert_string_not_equal(json_string_value(json_object_get(res, "id")), src);
	assert_string_equal(json_string_value(json_object_get(res, "forkedFromId")), src);
	assert_int_equal(json_array_size(json_object_get(res, "turns")), 2);
	json_decref(r);
	json_decref(asc_wait_notification(t.c, "thread/started", asc_timeout(TH_MS)));
	/* turns/list: newest first, a page of one, then the next. */
	r = th_call(t.c, "thread/turns/list", json_pack("{s:s, s:i}", "threadId", src, "limit", 1));
	res = asc_assert_result(r);
	assert_int_equal(json_array_size(json_object_get(res, "data")), 1);
	cursor = xstrdup(json_string_value(json_object_get(res, "nextCursor")));
	json_decref(r);
	r = th_call(t.c, "thread/turns/list",
		json_pack("{s:s, s:i, s:s}", "threadId", src, "limit", 1, "cursor", cursor));
	assert_int_equal(json_array_size(json_object_get(asc_assert_result(r), "data")), 1);
	json_decref(r);
	free(cursor);
	r = th_call(t.c, "thread/items/list", json_pack("{s:s}", "threadId", src));
	assert_true(json_array_size(json_object_get(asc_assert_result(r), "data")) >= 4);
	json_decref(r);
	r = th_call(t.c, "thread/turns/list",
		json_pack("{s:s, s:s}", "threadId", src, "cursor", "nonsense"));
	asc_assert_error(r, -32602, NULL);
	json_decref(r);
	/* Git info. */
	r = th_call(t.c, "thread/metadata/update",
		json_pack("{s:s, s:{s:s}}", "threadId", src, "gitInfo", "branch", "main"));
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(json_object_get(asc_assert_result(r), "thread"), "gitInfo"),
			"branch")),
		"main");
	json_decref(r);
	json_decref(answers);
	th_stop(&t);
}

static void
test_unsubscribe(void **state)
{
	struct th t;
	json_t *r, *m;
	char *id;
	int saw_status = 0, saw_other = 0;

	(void)state;
	th_start(&t, 0);
	id = th_new(&t, NULL);
	r = th_call(t.c, "thread/unsubscribe", json_pack("{s:s}", "threadId", id));
	assert_string_equal(
		json_string_value(json_object_get(asc_assert_result(r), "status")), "unsubscribed");
	json_decref(r);
	r = th_call(t.c, "thread/unsubscribe", json_pack("{s:s}", "threadId", id));
	assert_string_equal(json_string_value(json_object_get(asc_assert_result(r), "status")),
		"notSubscribed");
	json_decref(r);
	/* A turn still runs; this connection hears only its status changes. */
	r = th_call(
		t.c, "turn/start", json_pack("{s:s, s:o}", "threadId", id, "input", tt_text("x")));
	asc_assert_result(r);
	json_decref(r);
	while ((m = asc_next(t.c, 500)) != NULL) {
		const char *meth = json_string_value(json_object_get(m, "method"));

		if (meth != NULL && strcmp(meth, "thread/status/changed") == 0)
			saw_status++;
		else if (meth != NULL)
			saw_other++;
		json_decref(m);
	}
	assert_true(saw_status >= 2);
	assert_int_equal(saw_other, 0);
	free(id);
	th_stop(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_shapes_and_errors),
		cmocka_unit_test(test_upstream_home),
		cmocka_unit_test(test_restart_zero_turn_and_names),
		cmocka_unit_test(test_archive_unarchive_delete),
		cmocka_unit_test(test_fork_and_pages),
		cmocka_unit_test(test_unsubscribe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
