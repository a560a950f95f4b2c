/*
 * thread/revert and thread/inject_items end to end (issue 25), against upstream 0.169's
 * answers recorded with the same mock model: the next model request shows the history without
 * the reverted turns (or with the injected items, in order), thread/read, thread/turns/list and
 * thread/resume show the same turns before and after a daemon restart, and the errors are
 * upstream's words. Every message is checked against upstream's (experimental) schema by the
 * harness.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "th_util.h"

/* A fast answer, then one that waits 5 s before its text (a turn to catch running). */
#define RV_SCRIPT                                                                                  \
	"{\"responses\":[{\"events\":[{\"ev\":\"created\"},{\"ev\":\"message\",\"id\":\"m\","      \
	"\"text\":\"done\"},{\"ev\":\"completed\"}]},{\"events\":[{\"ev\":\"created\"},"           \
	"{\"ev\":\"message\",\"id\":\"slow\",\"text\":\"late\",\"delay_ms\":5000},"                \
	"{\"ev\":\"completed\"}]},{\"events\":[{\"ev\":\"created\"},{\"ev\":\"message\","          \
	"\"id\":\"m2\",\"text\":\"done\"},{\"ev\":\"completed\"}]}],\"repeat\":true}"

/* A thread's turn ids by thread/read (loaded or not), space-separated (heap). */
static char *
rv_read_turns(struct asc *c, const char *id)
{
	json_t *r = th_call(
		c, "thread/read", json_pack("{s:s, s:b}", "threadId", id, "includeTurns", 1));
	json_t *th = json_object_get(asc_assert_result(r), "thread"), *v;
	struct buf b;
	size_t i;

	buf_init(&b, 1 << 16);
	json_array_foreach(json_object_get(th, "turns"), i, v)
	{
		buf_printf(&b, "%s%s", i ? " " : "", json_string_value(json_object_get(v, "id")));
	}
	json_decref(r);
	return buf_steal(&b, NULL);
}

/* The same by thread/turns/list, oldest first. */
static char *
rv_list_turns(struct asc *c, const char *id)
{
	json_t *r = th_call(c, "thread/turns/list",
		json_pack("{s:s, s:s}", "threadId", id, "sortDirection", "asc"));
	char *ids = th_ids(asc_assert_result(r));

	json_decref(r);
	return ids;
}

static void
rv_start(struct th *t)
{
	memset(t, 0, sizeof *t);
	tu_empty_home(&t->h, "api");
	mm_start(&t->mm, RV_SCRIPT);
	t->mock = 1;
	th_config(t);
	t->c = th_daemon(t);
}

/* One more turn on the first daemon, then the daemon restarts (nothing loaded). */
static void
rv_restart(struct th *t)
{
	asc_free(t->c);
	t->c = th_daemon(t);
}

static void
test_revert_then_resume_after_restart(void **state)
{
	struct th t;
	json_t *r, *res, *n;
	char *id, *turns, *want, *req, *t1, *t2, *t3;

	(void)state;
	rv_start(&t);
	id = th_new(&t, NULL);
	th_turn(&t, id, "first");
	th_turn(&t, id, "second"); /* the slow answer: 5 s */
	th_turn(&t, id, "third");
	turns = rv_read_turns(t.c, id);
	t1 = xstrndup(turns, 36);
	t2 = xstrndup(turns + 37, 36);
	t3 = xstrdup(turns + 74);

	/* upstream's errors: an unknown turn, an unknown thread, a bad id */
	r = th_call(t.c, "thread/revert",
		json_pack("{s:s, s:s}", "threadId", id, "beforeTurnId", "missing-turn"));
	th_error(r, -32600, "turn not found: missing-turn");
	json_decref(r);
	r = th_call(t.c, "thread/revert",
		json_pack("{s:s, s:s}", "threadId", "019a0000-0000-7000-8000-000000000000",
			"beforeTurnId", t1));
	th_error(r, -32600, "thread not found: 019a0000-0000-7000-8000-000000000000");
	json_decref(r);
	r = th_call(t.c, "thread/revert",
		json_pack("{s:s, s:s}", "threadId", "abc", "beforeTurnId", t1));
	th_error(r, -32600, "invalid thread id: ");
	json_decref(r);

	/* revert before the second turn: {thread (no turns), cursors}, then thread/reverted */
	r = th_call(
		t.c, "thread/revert", json_pack("{s:s, s:s}", "threadId", id, "beforeTurnId", t2));
	res = asc_assert_result(r);
	assert_int_equal(
		json_array_size(json_object_get(json_object_get(res, "thread"), "turns")), 0);
	want = xasprintf("t:%s:i", t1);
	assert_string_equal(json_string_value(json_object_get(res, "turnsBackwardsCursor")), want);
	free(want);
	assert_true(json_is_string(json_object_get(res, "itemsBackwardsCursor")));
	json_decref(r);
	n = asc_wait_notification(t.c, "thread/reverted", asc_timeout(TH_MS));
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(n, "params"), "threadId")), id);
	json_decref(n);
	free(turns);
	turns = rv_read_turns(t.c, id);
	assert_string_equal(turns, t1);
	free(turns);
	turns = rv_list_turns(t.c, id);
	assert_string_equal(turns, t1);
	free(turns);
	/* a reverted turn is gone: reverting before it again is upstream's "turn not found" */
	r = th_call(
		t.c, "thread/revert", json_pack("{s:s, s:s}", "threadId", id, "beforeTurnId", t3));
	want = xasprintf("turn not found: %s", t3);
	th_error(r, -32600, want);
	free(want);
	json_decref(r);

	/* the next model request carries the first turn only, then the new one */
	th_turn(&t, id, "fourth");
	req = th_last_request(&t);
	assert_string_equal(req, "first|done|fourth");
	free(req);
	turns = rv_read_turns(t.c, id);

	/* after a restart: the same turns, read unloaded, resumed, and sent to the model */
	rv_restart(&t);
	want = rv_read_turns(t.c, id);
	assert_string_equal(want, turns);
	free(want);
	want = rv_list_turns(t.c, id);
	assert_string_equal(want, turns);
	free(want);
	r = th_call(
		t.c, "thread/revert", json_pack("{s:s, s:s}", "threadId", id, "beforeTurnId", t1));
	want = xasprintf("thread not found: %s", id);
	th_error(r, -32600, want);
	free(want);
	json_decref(r);
	r = th_call(t.c, "thread/resume", json_pack("{s:s}", "threadId", id));
	asc_assert_result(r);
	json_decref(r);
	want = rv_read_turns(t.c, id);
	assert_string_equal(want, turns);
	free(want);
	th_turn(&t, id, "fifth");
	req = th_last_request(&t);
	assert_string_equal(req, "first|done|fourth|done|fifth");
	free(req);

	/* before the first turn: nothing is left, and the cursors are null */
	r = th_call(
		t.c, "thread/revert", json_pack("{s:s, s:s}", "threadId", id, "beforeTurnId", t1));
	res = asc_assert_result(r);
	assert_true(json_is_null(json_object_get(res, "turnsBackwardsCursor")));
	assert_true(json_is_null(json_object_get(res, "itemsBackwardsCursor")));
	json_decref(r);
	json_decref(asc_wait_notification(t.c, "thread/reverted", asc_timeout(TH_MS)));
	th_turn(&t, id, "sixth");
	req = th_last_request(&t);
	assert_string_equal(req, "sixth");
	free(req);
	free(turns);
	free(t1);
	free(t2);
	free(t3);
	free(id);
	th_stop(&t);
}

static void
test_revert_running_turn(void **state)
{
	struct th t;
	json_t *r, *m;
	char *id, *turns, *req;
	const char *slow;
	long reverted = -1, completed = -1, answer = -1, k = 0;
	long long rid;

	(void)state;
	rv_start(&t);
	id = th_new(&t, NULL);
	th_turn(&t, id, "first");
	turns = rv_read_turns(t.c, id);
	r = th_call(t.c, "turn/start",
		json_pack("{s:s, s:o}", "threadId", id, "input", tt_text("slow")));
	slow = json_string_value(
		json_object_get(json_object_get(asc_assert_result(r), "turn"), "id"));
	json_decref(asc_wait_notification(t.c, "turn/started", asc_timeout(TH_MS)));
	/* upstream interrupts the running turn (turn/completed "interrupted"), then reverts */
	rid = asc_request(t.c, "thread/revert",
		json_pack("{s:s, s:s}", "threadId", id, "beforeTurnId", slow));
	json_decref(r);
	while ((reverted < 0 || answer < 0) && (m = asc_next(t.c, asc_timeout(TH_MS))) != NULL) {
		const char *method = json_string_value(json_object_get(m, "method"));

		if (method != NULL && strcmp(method, "turn/completed") == 0) {
			completed = k;
			assert_string_equal(
				json_string_value(json_object_get(
					json_object_get(json_object_get(m, "params"), "turn"),
					"status")),
				"interrupted");
		} else if (method != NULL && strcmp(method, "thread/reverted") == 0) {
			reverted = k;
		} else if (method == NULL &&
			json_integer_value(json_object_get(m, "id")) == (json_int_t)rid) {
			asc_assert_result(m);
			answer = k;
		}
		k++;
		json_decref(m);
	}
	assert_true(completed >= 0 && completed < answer && answer < reverted);
	req = rv_read_turns(t.c, id);
	assert_string_equal(req, turns);
	free(req);
	th_turn(&t, id, "third");
	req = th_last_request(&t);
	assert_string_equal(req, "first|done|third");
	free(req);
	free(turns);
	free(id);
	th_stop(&t);
}

static void
test_inject_items_then_turn_and_restart(void **state)
{
	struct th t;
	json_t *r, *items;
	char *id, *req, *want;

	(void)state;
	rv_start(&t);
	id = th_new(&t, NULL);
	th_turn(&t, id, "first");
	/* upstream's errors */
	r = th_call(t.c, "thread/inject_items", json_pack("{s:s, s:[]}", "threadId", id, "items"));
	th_error(r, -32600, "items must not be empty");
	json_decref(r);
	r = th_call(t.c, "thread/inject_items",
		json_pack("{s:s, s:[{s:i}]}", "threadId", id, "items", "foo", 1));
	th_error(r, -32600, "items[0] is not a valid response item: missing field `type`");
	json_decref(r);
	r = th_call(
		t.c, "thread/inject_items", json_pack("{s:s, s:[i]}", "threadId", id, "items", 42));
	th_error(r, -32600,
		"items[0] is not a valid response item: invalid type: integer `42`, expected "
		"internally tagged enum ResponseItem");
	json_decref(r);
	r = th_call(t.c, "thread/inject_items",
		json_pack("{s:s, s:[]}", "threadId", "019a0000-0000-7000-8000-000000000000",
			"items"));
	th_error(r, -32600, "thread not found: 019a0000-0000-7000-8000-000000000000");
	json_decref(r);

	items = json_pack("[{s:s, s:s, s:[{s:s, s:s}]}, {s:s, s:s, s:[{s:s, s:s}]}]", "type",
		"message", "role", "user", "content", "type", "input_text", "text", "injected one",
		"type", "message", "role", "assistant", "content", "type", "output_text", "text",
		"injected two");
	r = th_call(t.c, "thread/inject_items",
		json_pack("{s:s, s:o}", "threadId", id, "items", items));
	assert_int_equal(json_object_size(asc_assert_result(r)), 0);
	json_decref(r);
	th_turn(&t, id, "second");
	req = th_last_request(&t);
	assert_string_equal(req, "first|done|injected one|injected two|second");
	free(req);

	/* kept across a restart: in the rollout, read back by the resumed thread's first turn */
	rv_restart(&t);
	r = th_call(t.c, "thread/inject_items",
		json_pack("{s:s, s:[{s:s}]}", "threadId", id, "items", "type", "message"));
	want = xasprintf("thread not found: %s", id);
	th_error(r, -32600, want);
	free(want);
	json_decref(r);
	r = th_call(t.c, "thread/resume", json_pack("{s:s}", "threadId", id));
	asc_assert_result(r);
	json_decref(r);
	th_turn(&t, id, "third");
	req = th_last_request(&t);
	assert_string_equal(req, "first|done|injected one|injected two|second|late|third");
	free(req);
	free(id);
	th_stop(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_revert_then_resume_after_restart),
		cmocka_unit_test(test_revert_running_turn),
		cmocka_unit_test(test_inject_items_then_turn_and_restart),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
