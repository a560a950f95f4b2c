/*
 * Pure pieces the agent's top moved into its rooms: the history's rules for rollout records
 * and a compaction's kept messages (prompt/history_items.c), the usage breakdown
 * (prompt/model_items.c), a call's workdir (shell/shell_env.c) and the UTF-8 sequence a
 * delta holds back (tools/tool_output.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agent/prompt/history_items.h"
#include "agent/prompt/model_items.h"
#include "agent/shell/shell_env.h"
#include "agent/tools/tool_output.h"
#include "model/model.h"
#include "thread/rollout/rollout_summary.h"

/* A message item with one text. */
static json_t *
msg(const char *role, const char *text)
{
	return json_pack("{s:s, s:s, s:[{s:s, s:s}]}", "type", "message", "role", role, "content",
		"type", "input_text", "text", text);
}

static void
test_wanted_and_context(void **state)
{
	json_t *m;

	(void)state;
	assert_true(history_items_wanted("response_item", NULL));
	assert_true(history_items_wanted("compacted", NULL));
	assert_true(history_items_wanted("session_meta", NULL));
	assert_false(history_items_wanted("event_msg", NULL));
	m = msg("developer", "<collaboration_mode>plan");
	assert_false(history_items_is_context(m)); /* history: sent once */
	json_decref(m);
	m = msg("developer", "anything");
	assert_true(history_items_is_context(m));
	json_decref(m);
	m = msg("user", "<environment_context>x");
	assert_true(history_items_is_context(m));
	json_decref(m);
	m = msg("user", "hello");
	assert_false(history_items_is_context(m));
	json_decref(m);
}

static void
test_compacted(void **state)
{
	json_t *items = json_pack("[o, o]", msg("user", "a"), msg("assistant", "b"));
	json_t *payload = json_pack("{s:s}", "message", "summary");

	(void)state;
	history_items_compacted(items, payload); /* no replacement: users' messages + summary */
	assert_int_equal(json_array_size(items), 2);
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(json_array_get(items, 1), "content"), 0),
			"text")),
		"summary");
	json_decref(payload);
	payload = json_pack(
		"{s:[o, o]}", "replacement_history", msg("developer", "ctx"), msg("user", "kept"));
	history_items_compacted(items, payload); /* the replacement without its context */
	assert_int_equal(json_array_size(items), 1);
	json_decref(payload);
	json_decref(items);
}

static void
test_compact_keep(void **state)
{
	json_t *h = json_pack("[o, o, o, o]", msg("user", "aaaa"), msg("assistant", "x"),
		msg("user", "bbbb"), msg("user", "cc"));
	json_t *kept = json_array();

	(void)state;
	history_items_compact_keep(h, 6, kept); /* the newest within 6 bytes: cc, bbbb */
	assert_int_equal(json_array_size(kept), 2);
	json_array_clear(kept);
	history_items_compact_keep(h, 1, kept); /* at least one, even past the bound */
	assert_int_equal(json_array_size(kept), 1);
	json_decref(kept);
	json_decref(h);
}

/* A compaction's summary: the messages' texts, in order, within the bound; nothing else. */
static void
test_text(void **state)
{
	json_t *items = json_pack("[o, {s:s}, o]", msg("assistant", "sum"), "type", "reasoning",
		msg("assistant", "mary"));
	char *t;

	(void)state;
	t = history_items_text(items, 100);
	assert_string_equal(t, "summary");
	free(t);
	t = history_items_text(items, 4); /* "mary" would pass the bound: left out */
	assert_string_equal(t, "sum");
	free(t);
	json_decref(items);
}

static void
test_small_helpers(void **state)
{
	struct token_totals u = {0};
	json_t *j;
	char *w;

	(void)state;
	u.total = 7;
	u.reasoning = 2;
	j = model_items_usage(&u);
	assert_int_equal(json_integer_value(json_object_get(j, "totalTokens")), 7);
	assert_int_equal(json_integer_value(json_object_get(j, "reasoningOutputTokens")), 2);
	assert_int_equal(json_integer_value(json_object_get(j, "cacheWriteInputTokens")), 0);
	json_decref(j);
	w = shell_workdir("/ws", NULL);
	assert_string_equal(w, "/ws");
	free(w);
	w = shell_workdir("/ws", "sub");
	assert_string_equal(w, "/ws/sub");
	free(w);
	w = shell_workdir("/ws", "/abs");
	assert_string_equal(w, "/abs");
	free(w);
	assert_int_equal(tool_output_utf8_cut("ab", 2), 0);
	assert_int_equal(tool_output_utf8_cut("a\xc3", 2), 1);	      /* é's lead alone */
	assert_int_equal(tool_output_utf8_cut("a\xc3\xa9", 3), 0);    /* é whole */
	assert_int_equal(tool_output_utf8_cut("a\xe2\x82", 3), 2);    /* € cut after 2 */
	assert_int_equal(tool_output_utf8_cut("\xf0\x9f\x98", 3), 3); /* an emoji's 3 of 4 */
}

/* The compaction's summary, a delta's notification, a model error and a usage's sums (moved
 * out of agent_tools.c and agent_model.c). */
static void
test_moved(void **state)
{
	json_t *items = json_loads("[{\"type\":\"reasoning\"},{\"type\":\"message\",\"content\":"
				   "[{\"text\":\"a\"},{\"text\":\"b\"}]},{\"type\":\"message\","
				   "\"content\":[{\"text\":\"c\"}]}]",
		0, NULL);
	struct model_event ev = {.kind = MODEL_EV_REASONING_SUMMARY_DELTA,
		.delta = "xy",
		.delta_len = 1,
		.index = 2};
	struct model_error e = {.message = NULL};
	struct model_usage u = {
		.input_tokens = 3, .output_tokens = 4, .total_tokens = 7, .present = 1};
	struct token_totals last, total = {.input = 1};
	const char *method;
	char *s = history_items_text(items, 1024), *d;
	json_t *p;

	(void)state;
	assert_string_equal(s, "abc");
	free(s);
	json_decref(items);
	p = model_items_delta(&ev, "r1", &method);
	assert_string_equal(method, "item/reasoning/summaryTextDelta");
	d = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(d, "{\"delta\":\"x\",\"itemId\":\"r1\",\"summaryIndex\":2}");
	free(d);
	json_decref(p);
	ev.kind = MODEL_EV_TEXT_DELTA;
	json_decref(model_items_delta(&ev, "m1", &method));
	assert_string_equal(method, "item/agentMessage/delta");
	p = model_items_turn_error(&e);
	assert_string_equal(json_string_value(json_object_get(p, "message")), "model error");
	json_decref(p);
	model_items_add_usage(&u, &last, &total);
	assert_int_equal(last.input, 3);
	assert_int_equal(total.input, 4);
	assert_int_equal(total.total, 7);
	model_items_add_usage(NULL, &last, &total);
	assert_int_equal(last.total, 0);
	assert_int_equal(total.total, 7);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_moved),
		cmocka_unit_test(test_wanted_and_context),
		cmocka_unit_test(test_compacted),
		cmocka_unit_test(test_compact_keep),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_small_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
