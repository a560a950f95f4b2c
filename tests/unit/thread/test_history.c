/*
 * Tests for server/thread/history/history.c and item.c: upstream's own rollouts turn into exactly
 * the turns upstream's thread/read {includeTurns:true} answered; old-style event records; items
 * survive core -> v2 -> core -> v2; shell quoting round-trips.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "thread_util.h"
#include "protocol/buf.h"
#include "thread/history/history.h"
#include "thread/history/item.h"
#include "thread/rollout/rollout_reader.h"

/* The turns of one rollout file as the builder gives them: trees, or text (text mode). */
static json_t *
turns_built(const char *path, int live, int text)
{
	struct history *h = history_new();
	char *cause = NULL;
	json_t *turns;

	if (text)
		history_text(h);
	turns = history_read(h, path, 0, -1, live, &cause);
	if (turns == NULL)
		fail_msg("%s", cause);
	history_free(h);
	return turns;
}

/*
 * Build the turns of one rollout file, both ways: text mode (thread/read and resume) must
 * write exactly the turns the tree mode builds, member order included.
 */
static json_t *
turns_of(const char *path, int live)
{
	json_t *tree = turns_built(path, live, 0), *text = turns_built(path, live, 1), *parsed;
	struct buf out;
	char *want, *got;

	buf_init(&out, 1u << 30);
	assert_int_equal(history_turns_text(text, &out), 0);
	parsed = json_loads(buf_str(&out), 0, NULL);
	if (parsed == NULL)
		fail_msg("invalid turns text: %s", buf_str(&out));
	want = json_dumps(tree, JSON_COMPACT);
	got = json_dumps(parsed, JSON_COMPACT);
	if (strcmp(want, got) != 0)
		fail_msg("text mode differs\n want %s\n  got %s", want, got);
	/* the tree mode's own text is the same too */
	buf_reset(&out);
	assert_int_equal(history_turns_text(tree, &out), 0);
	assert_string_equal(buf_str(&out), want);
	free(want);
	free(got);
	buf_free(&out);
	json_decref(parsed);
	json_decref(text);
	return tree;
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

/* One event_msg record line. */
#define EV(ts, payload)                                                                            \
	"{\"timestamp\":\"2025-01-01T00:00:" ts                                                    \
	".000Z\",\"type\":\"event_msg\",\"payload\":" payload "}\n"

/*
 * What text mode does beyond a plain item: items kept as text replaced by id in a turn already
 * closed, a rollback dropping a turn, an old reasoning event extending a reasoning item kept as
 * text, turn ends with errors, records read whole (reals, a spaced-out line, escaped types)
 * and lines that are not JSON. turns_of holds both modes to the same turns.
 */
static void
test_text_mode_records(void **state)
{
	const char *text = EV(
		"01", "{\"type\":\"task_started\",\"turn_id\":\"A\",\"started_at\":10}") EV("02",
		"{\"type\":\"item_completed\",\"turn_id\":\"A\",\"item\":{\"type\":\"Reasoning\","
		"\"id\":\"r1\",\"summary_text\":[\"s1\"],\"raw_content\":[]},\"started_at_ms\":5,"
		"\"completed_at_ms\":0}") EV("03",
		"{\"type\":\"agent_reasoning\",\"text\":\"s2\"}") EV("04",
		"{\"type\":\"task_complete\",\"turn_id\":\"A\",\"completed_at\":11,"
		"\"duration_ms\":900,\"error\":{\"message\":\"boom\",\"codex_error_info\":"
		"\"other\"}}") EV("05",
		"{\"type\":\"task_started\",\"turn_id\":\"B\",\"root_turn_id\":\"A\"}") EV("06",
		"{\"type\":\"item_completed\",\"turn_id\":\"B\",\"item\":{\"type\":\"UserMessage\","
		"\"id\":\"u1\",\"content\":[{\"type\":\"text\",\"text\":\"b\\u00e9\"}]}}")
		/* for the closed turn A: added, then replaced by id */
		EV("07",
			"{\"type\":\"item_completed\",\"turn_id\":\"A\",\"item\":{\"type\":"
			"\"AgentMessage\",\"id\":\"a1\",\"content\":[{\"type\":\"Text\",\"text\":\"v1\"}]}}")
			EV("08",
				"{\"type\":\"item_completed\",\"turn_id\":\"A\",\"item\":{\"type\":"
				"\"AgentMessage\",\"id\":\"a1\",\"content\":[{\"type\":\"Text\",\"text\":\"v2\"}]}}")
				EV("09",
					"{\"type\":\"turn_aborted\",\"turn_id\":\"B\",\"reason\":\"interrupted\"}")
					EV("10", "{\"type\":\"task_started\",\"turn_id\":\"C\"}") EV(
						"11",
						"{\"type\":\"item_completed\",\"turn_id\":\"C\",\"item\":{\"type\":\"UserMessage\","
						"\"id\":\"u2\",\"content\":[]}}") EV("12",
						"{\"type\":\"thread_rolled_back\",\"num_turns\":1}")
		/* read whole: a real, an escaped type, spaces; and two lines that are not JSON */
		EV("13", "{\"type\":\"task_started\",\"turn_id\":\"D\",\"x\":1.5}") EV("14",
			"{\"type\":\"item_completed\",\"turn_id\":\"D\",\"item\":{\"type\":"
			"\"CommandExecution\",\"id\":\"c1\",\"command\":[\"ls\",\"a b\"],\"cwd\":\"file:///w\","
			"\"duration\":{\"secs\":2,\"nanos\":0},\"exit_code\":0}, \"started_at_ms\" : 7 }") "{\"timestamp\":\"2025-01-01T00:00:15.000Z\",\"type\":\"event_msg\",\"payload\":{\"type\":"
													   "\"item_completed\",\"turn_id\":\"D\",\"item\":{\"type\":\"UserMessage\",\"id\":\"u3\"}}} x\n"
													   "{\"timestamp\":\"2025-01-01T00:00:16.000Z\",\"type\":\"event_msg\",\"payload\":{\"type\":"
													   "\"item_completed\",\"turn_id\":\"D\",\"item\":{\"type\":\"UserMessage\",\"id\":\"u4\"\n" EV(
														   "17",
														   "{\"type\":\"item_completed\",\"turn_id\":\"D\",\"item\":{\"type\":\"Agent\\u004dessage\","
														   "\"id\":\"a2\",\"content\":[{\"text\":\"x\"}]},\"completed_at_ms\":3.0}")
														   EV("18",
															   "{\"type\":\"task_complete\",\"turn_id\":\"D\",\"duration_ms\":1}");
	json_t *t = turns_of_text(text, 0), *a, *items;

	/* A, B (aborted); C rolled back; D */
	assert_int_equal(json_array_size(t), 3);
	a = json_array_get(t, 0);
	assert_string_equal(json_string_value(json_object_get(a, "status")), "failed");
	items = json_object_get(a, "items");
	assert_int_equal(json_array_size(items), 2);
	/* the old reasoning event extended the reasoning item */
	assert_int_equal(json_array_size(json_object_get(json_array_get(items, 0), "summary")), 2);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(items, 1), "text")), "v2");
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(t, 1), "status")), "interrupted");
	items = json_object_get(json_array_get(t, 2), "items");
	assert_string_equal(json_string_value(json_object_get(json_array_get(t, 2), "id")), "D");
	assert_int_equal(json_array_size(items), 2); /* c1 and a2; the broken lines are skipped */
	assert_string_equal(json_string_value(json_object_get(json_array_get(items, 0), "command")),
		"ls 'a b'");
	json_decref(t);
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
	for (int mode = 0; mode <= 1; mode++) {
		struct buf out;

		t = turns_built(p, 0, mode);
		assert_int_equal(json_array_size(t), 1);
		buf_init(&out, 1u << 20);
		assert_int_equal(history_turns_text(t, &out), 0);
		buf_free(&out);
		json_decref(t);
	}
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
		cmocka_unit_test(test_text_mode_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
