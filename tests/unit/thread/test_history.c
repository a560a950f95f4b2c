/*
 * Tests for server/thread/history.c and item.c: upstream's own rollouts turn into exactly the
 * turns upstream's thread/read {includeTurns:true} answered; old-style event records; items
 * survive core -> v2 -> core -> v2; shell quoting round-trips.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "thread/history.h"
#include "thread/item.h"
#include "thread/rollout_reader.h"
#include "thread_util.h"

/* Build the turns of one rollout file. */
static json_t *
turns_of(const char *path, int live)
{
	struct rollout_reader *r;
	struct rollout_rec rec;
	struct history *h = history_new();
	json_t *turns;

	assert_int_equal(rollout_reader_open(path, 0, -1, &r), 0);
	history_reader(r);
	while (rollout_reader_next(r, &rec) == 1)
		history_feed(h, &rec);
	rollout_reader_close(r);
	turns = history_finish(h, live);
	history_free(h);
	return turns;
}

/* Each fixture thread's turns equal upstream's answer. */
static void
test_fixture_turns(void **state)
{
	struct tu_home h;
	json_t *answers, *ids;
	const char *name;
	json_t *id;

	tu_fixture_home(&h);
	answers = tu_answers(&h);
	ids = json_object_get(answers, "ids");
	int checked = 0;
	json_object_foreach(ids, name, id)
	{
		char *key = xasprintf("thread/read %s", name);
		json_t *want = json_object_get(
			json_object_get(json_object_get(answers, key), "result"), "thread");
		char *path = tu_find_rollout(h.home, json_string_value(id));

		free(key);
		if (want == NULL) {
			assert_null(path); /* zero_turns: upstream never wrote it */
			continue;
		}
		assert_non_null(path);
		json_t *got = turns_of(path, 0);
		assert_true(tu_json_same(json_object_get(want, "turns"), got));
		json_decref(got);
		free(path);
		checked++;
	}
	assert_int_equal(checked, 5);
	json_decref(answers);
	tu_home_free(&h);
}

/* Write lines to a temp file and build its turns. */
static json_t *
turns_of_text(const char *text, int live)
{
	char *dir = tu_tmpdir("hist"), *p = xasprintf("%s/r.jsonl", dir);
	json_t *t;

	tu_write(p, text, strlen(text));
	t = turns_of(p, live);
	tu_rmrf(dir);
	free(dir);
	free(p);
	return t;
}

/* Rollouts from before item_completed: turns from user_message, old tool events. */
static void
test_legacy_events(void **state)
{
	const char *text =
		"{\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"type\":\"session_meta\",\"payload\":{\"id\":\"01a20a0c-0000-7000-8000-000000000001\"}}\n"
		"{\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"user_message\",\"message\":\"first\",\"images\":[]}}\n"
		"{\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"agent_reasoning\",\"text\":\"think\"}}\n"
		"{\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"agent_reasoning_raw_content\",\"text\":\"raw\"}}\n"
		"{\"timestamp\":\"2025-01-01T00:00:03.000Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"exec_command_end\",\"call_id\":\"c1\",\"command\":[\"ls\",\"-l a\"],\"cwd\":\"/w\",\"parsed_cmd\":[],\"exit_code\":1,\"aggregated_output\":\"x\",\"duration\":{\"secs\":1,\"nanos\":5000000}}}\n"
		"{\"timestamp\":\"2025-01-01T00:00:04.000Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"agent_message\",\"message\":\"done\"}}\n"
		"this is not json\n"
		"{\"timestamp\":\"2025-01-01T00:00:05.000Z\",\"type\":\"some_future_record\",\"payload\":{}}\n"
		"{\"timestamp\":\"2025-01-01T00:00:06.000Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"user_message\",\"message\":\"second\"}}\n"
		"{\"timestamp\":\"2025-01-01T00:00:07.000Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"turn_aborted\",\"reason\":\"interrupted\"}}\n"
		"{\"timestamp\":\"2025-01-01T00:00:08.000Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"user_mes";
	json_t *turns = turns_of_text(text, 0), *items, *cmd;

	assert_int_equal(json_array_size(turns), 2);
	items = json_object_get(json_array_get(turns, 0), "items");
	assert_int_equal(json_array_size(items), 4);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(items, 0), "id")), "item-1");
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(items, 1), "type")), "reasoning");
	assert_int_equal(json_array_size(json_object_get(json_array_get(items, 1), "content")), 1);
	cmd = json_array_get(items, 2);
	assert_string_equal(json_string_value(json_object_get(cmd, "command")), "ls '-l a'");
	assert_string_equal(json_string_value(json_object_get(cmd, "status")), "failed");
	assert_int_equal(json_integer_value(json_object_get(cmd, "durationMs")), 1005);
	assert_string_equal(json_string_value(json_object_get(json_array_get(turns, 1), "status")),
		"interrupted");
	/* Same ids on a second read (cursors depend on it). */
	json_t *again = turns_of_text(text, 0);
	assert_true(json_equal(turns, again));
	json_decref(again);
	json_decref(turns);
}

/* An explicit turn left open: inProgress while live, interrupted otherwise. */
static void
test_open_turn(void **state)
{
	const char *text =
		"{\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"ordinal\":0,\"type\":\"event_msg\",\"payload\":{\"type\":\"task_started\",\"turn_id\":\"t1\",\"started_at\":5}}\n";
	json_t *live = turns_of_text(text, 1), *dead = turns_of_text(text, 0);

	assert_string_equal(json_string_value(json_object_get(json_array_get(live, 0), "status")),
		"inProgress");
	assert_string_equal(json_string_value(json_object_get(json_array_get(dead, 0), "status")),
		"interrupted");
	assert_int_equal(
		json_integer_value(json_object_get(json_array_get(dead, 0), "startedAt")), 5);
	json_decref(live);
	json_decref(dead);
	/* A turn cut short by the next one (a crash mid-turn, then a new turn) was interrupted. */
	const char *two =
		"{\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"ordinal\":0,\"type\":\"event_msg\",\"payload\":{\"type\":\"task_started\",\"turn_id\":\"t1\"}}\n"
		"{\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"ordinal\":1,\"type\":\"event_msg\",\"payload\":{\"type\":\"task_started\",\"turn_id\":\"t2\"}}\n"
		"{\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"ordinal\":2,\"type\":\"event_msg\",\"payload\":{\"type\":\"task_complete\",\"turn_id\":\"t2\",\"duration_ms\":7}}\n";
	json_t *both = turns_of_text(two, 1);
	assert_int_equal(json_array_size(both), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(both, 0), "status")),
		"interrupted");
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(both, 1), "status")), "completed");
	assert_int_equal(
		json_integer_value(json_object_get(json_array_get(both, 1), "durationMs")), 7);
	json_decref(both);
}

/* v2 -> core -> v2 keeps every item kind we write. */
static void
test_item_round_trip(void **state)
{
	const char *items[] = {
		"{\"type\":\"userMessage\",\"id\":\"u\",\"clientId\":null,\"content\":[{\"type\":\"text\",\"text\":\"hi\",\"text_elements\":[]}]}",
		"{\"type\":\"agentMessage\",\"moderation\":null,\"id\":\"m\",\"text\":\"yo\",\"phase\":null,\"memoryCitation\":null,\"delivery\":null,\"questions\":null}",
		"{\"type\":\"reasoning\",\"id\":\"r\",\"summary\":[\"a\"],\"content\":[\"b\"]}",
		"{\"type\":\"commandExecution\",\"id\":\"c\",\"pluginId\":null,\"scriptPath\":null,\"command\":\"/bin/bash -lc 'echo it'\\\\''s'\",\"cwd\":\"/w\",\"processId\":\"7\",\"source\":\"unifiedExecStartup\",\"status\":\"completed\",\"commandActions\":[{\"type\":\"read\",\"command\":\"cat x\",\"name\":\"x\",\"path\":\"x\"}],\"aggregatedOutput\":\"o\",\"exitCode\":0,\"durationMs\":301}",
		"{\"type\":\"fileChange\",\"id\":\"f\",\"changes\":[{\"path\":\"/a\",\"kind\":{\"type\":\"add\"},\"diff\":\"x\\n\"},{\"path\":\"/b\",\"kind\":{\"type\":\"update\",\"move_path\":null},\"diff\":\"@@\"}],\"status\":\"completed\"}",
		"{\"type\":\"plan\",\"id\":\"p\",\"text\":\"do it\"}",
	};

	for (size_t i = 0; i < nitems(items); i++) {
		json_t *v = json_loads(items[i], 0, NULL), *core, *back;

		assert_non_null(v);
		core = item_to_core(v);
		assert_non_null(core);
		back = item_from_core(core);
		assert_true(tu_json_same(v, back));
		json_decref(v);
		json_decref(core);
		json_decref(back);
	}
}

/* Join and split are inverse. */
static void
test_shell_quote(void **state)
{
	json_t *argv = json_pack("[s,s,s,s,s]", "/bin/bash", "-lc", "echo 'a b' \"c\"", "", "x$y");
	char *joined = item_shell_join(argv);
	json_t *back = item_shell_split(joined);

	assert_string_equal(joined, "/bin/bash -lc 'echo '\\''a b'\\'' \"c\"' '' 'x$y'");
	assert_true(json_equal(argv, back));
	assert_null(item_shell_split("echo 'unbalanced"));
	free(joined);
	json_decref(argv);
	json_decref(back);
}

/* jansson allocations not yet freed, while the counting allocator is installed. */
static long live_allocs;

static void *
count_malloc(size_t n)
{
	live_allocs++;
	return malloc(n);
}

static void
count_free(void *p)
{
	if (p != NULL)
		live_allocs--;
	free(p);
}

/*
 * Found by tests/fuzz/fuzz_rollout.c: an old user_message after a canonical message (the
 * legacy events are ignored from then on) leaked the content array it built first.
 */
static void
test_legacy_after_canonical_no_leak(void **state)
{
	const char *text =
		"{\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"type\":\"event_msg\",\"payload\":{"
		"\"type\":\"item_completed\",\"turn_id\":\"t1\",\"item\":{\"type\":\"UserMessage\","
		"\"id\":\"u1\",\"content\":[{\"type\":\"text\",\"text\":\"new\"}]}}}\n"
		"{\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"type\":\"event_msg\",\"payload\":{"
		"\"type\":\"user_message\",\"message\":\"old\",\"images\":[]}}\n";
	char *dir = tu_tmpdir("hist"), *p = xasprintf("%s/r.jsonl", dir);
	json_t *t;

	tu_write(p, text, strlen(text));
	live_allocs = 0;
	json_set_alloc_funcs(count_malloc, count_free);
	t = turns_of(p, 0);
	assert_int_equal(json_array_size(t), 1);
	json_decref(t);
	json_set_alloc_funcs(malloc, free);
	assert_int_equal(live_allocs, 0);
	tu_rmrf(dir);
	free(dir);
	free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_turns),
		cmocka_unit_test(test_legacy_events),
		cmocka_unit_test(test_open_turn),
		cmocka_unit_test(test_item_round_trip),
		cmocka_unit_test(test_shell_quote),
		cmocka_unit_test(test_legacy_after_canonical_no_leak),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
