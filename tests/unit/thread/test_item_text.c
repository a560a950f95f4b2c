/*
 * Tests for server/thread/history/item_text.c: item_text_from_core (text to text) gives exactly
 * what item_from_core gives (tree to tree, then dumped), key order included, for every core item of
 * upstream's fixture rollouts (compact and pretty-printed) and for hand-written items that take
 * each branch: escapes, a file:// cwd, argv that needs quoting, parsed commands, each duration
 * shape, multi-part agent text, missing and mistyped members, variants only the slow path
 * knows, and text the strict scanner refuses (reals, \u0000, deep nesting).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>

#include "thread_util.h"
#include "protocol/buf.h"
#include "thread/history/item.h"

/* The reference: item_from_core with the times history puts on it, dumped; NULL: no item. */
static char *
reference(const char *core, const long long *started, const long long *completed, char **id)
{
	json_t *c = json_loads(core, 0, NULL), *item = c != NULL ? item_from_core(c) : NULL;
	char *s;

	json_decref(c);
	*id = NULL;
	if (item == NULL)
		return NULL;
	json_object_set_new(item, "startedAtMs", started ? json_integer(*started) : json_null());
	json_object_set_new(
		item, "completedAtMs", completed ? json_integer(*completed) : json_null());
	*id = item_id(item) != NULL ? xstrdup(item_id(item)) : NULL;
	s = json_dumps(item, JSON_COMPACT);
	json_decref(item);
	return s;
}

/* One core item both ways; returns whether it was an item. */
static int
same(const char *core, const long long *started, const long long *completed)
{
	struct buf out;
	char *id = NULL, *ref_id, *want = reference(core, started, completed, &ref_id), *got;
	json_t *parsed;
	int r;

	buf_init(&out, 1u << 26);
	buf_adds(&out, "prefix"); /* appended after what is there; a failure leaves it */
	r = item_text_from_core(core, strlen(core), started, completed, &out, &id);
	if (want == NULL) {
		if (r != -1)
			fail_msg("not an item, yet %d for %s", r, core);
		assert_string_equal(buf_str(&out), "prefix");
		assert_null(id);
		buf_free(&out);
		return 0;
	}
	if (r != 0)
		fail_msg("%d for %s", r, core);
	assert_memory_equal(out.ptr, "prefix", 6);
	parsed = json_loads(out.ptr + 6, 0, NULL);
	if (parsed == NULL)
		fail_msg("invalid JSON %s for %s", out.ptr + 6, core);
	got = json_dumps(parsed, JSON_COMPACT);
	if (strcmp(got, want) != 0)
		fail_msg("for %s\n want %s\n  got %s", core, want, got);
	if (ref_id == NULL)
		assert_null(id);
	else
		assert_string_equal(id, ref_id);
	free(got);
	free(want);
	free(id);
	free(ref_id);
	json_decref(parsed);
	buf_free(&out);
	return 1;
}

static void
test_hand_written(void **state)
{
	static const char *const items[] = {
		/* the four fast variants, plain */
		"{\"type\":\"UserMessage\",\"id\":\"u1\",\"content\":[{\"type\":\"text\",\"text\":\"hi\","
		"\"text_elements\":[]}]}",
		"{\"type\":\"AgentMessage\",\"id\":\"a1\",\"content\":[{\"type\":\"Text\",\"text\":\"done\"}],"
		"\"phase\":\"final_answer\"}",
		"{\"type\":\"Reasoning\",\"id\":\"r1\",\"summary_text\":[\"a\",\"b\"],\"raw_content\":[\"c\"]}",
		"{\"type\":\"CommandExecution\",\"id\":\"c1\",\"process_id\":null,\"command\":[\"/bin/bash\","
		"\"-lc\",\"make\"],\"cwd\":\"file:///work\",\"parsed_cmd\":[],\"source\":\"agent\","
		"\"status\":\"completed\",\"aggregated_output\":\"ok\\n\",\"exit_code\":0,"
		"\"duration\":{\"secs\":1,\"nanos\":500000000}}",
		/* escapes copied as they are and decoded where changed */
		"{\"type\":\"UserMessage\",\"id\":\"u\\u0032\",\"content\":[{\"type\":\"text\",\"text\":"
		"\"tab\\there \\\"q\\\" \\u00e9 \\ud83d\\ude00 \\/\"}],\"client_id\":\"x\"}",
		"{\"type\":\"CommandExecution\",\"id\":\"c2\",\"command\":[\"echo\",\"it's \\\"x\\\"\","
		"\"a b\",\"\",\"$HOME\",\"\\u00e9\"],\"cwd\":\"/w\\u00e9rk\",\"source\":"
		"\"unified_exec_startup\",\"status\":\"in_progress\",\"aggregated_output\":"
		"\"\\u001b[31mred\\r\\n\",\"exit_code\":-1,\"duration\":1234}",
		"{\"type\":\"CommandExecution\",\"id\":\"c3\",\"command\":\"ls -la\",\"cwd\":"
		"\"file://\\/tmp\",\"parsed_cmd\":[{\"type\":\"read\",\"cmd\":\"cat a\",\"name\":\"a\","
		"\"path\":\"a\"},{\"type\":\"list_files\",\"cmd\":\"ls\",\"path\":null},{\"type\":"
		"\"search\",\"cmd\":\"rg x\",\"query\":\"x\"},{\"type\":\"unknown\",\"cmd\":\"make\"}]}",
		/* duration shapes and mistyped members */
		"{\"type\":\"CommandExecution\",\"id\":\"c4\",\"duration\":{\"secs\":\"1\",\"nanos\":2000000}}",
		"{\"type\":\"CommandExecution\",\"id\":\"c5\",\"duration\":true,\"cwd\":7,\"source\":3,"
		"\"status\":null,\"command\":null,\"exit_code\":\"0\"}",
		"{\"type\":\"CommandExecution\",\"id\":\"c6\",\"duration\":{},\"command\":[]}",
		"{\"type\":\"CommandExecution\",\"id\":\"c7\",\"duration\":{\"secs\":999999999999999999}}",
		"{\"type\":\"CommandExecution\",\"id\":\"c8\",\"command\":[\"a\",1]}",
		"{\"type\":\"CommandExecution\",\"id\":\"c9\",\"parsed_cmd\":\"nope\",\"plugin_id\":\"p\","
		"\"script_path\":\"/s.sh\"}",
		"{\"type\":\"AgentMessage\",\"id\":\"a2\",\"content\":[{\"type\":\"Text\",\"text\":\"one \"},"
		"{\"type\":\"Image\"},{\"type\":\"Text\",\"text\":\"t\\u00e9wo\"},7,{\"text\":1}]}",
		"{\"type\":\"AgentMessage\",\"id\":\"a3\"}",
		"{\"type\":\"AgentMessage\",\"id\":\"a4\",\"content\":{\"text\":\"x\"},\"moderation\":"
		"{\"flagged\":false},\"memory_citation\":[1],\"delivery\":\"d\",\"questions\":[]}",
		"{\"type\":\"AgentMessage\",\"id\":\"a5\",\"content\":[{\"type\":\"Text\",\"text\":\"\"}]}",
		"{\"type\":\"UserMessage\",\"id\":\"u3\",\"content\":\"not a list\"}",
		"{\"type\":\"UserMessage\",\"id\":\"u4\"}",
		"{\"type\":\"Reasoning\",\"id\":\"r2\",\"summary_text\":\"x\"}",
		/* repeated keys: the last one counts, as in jansson */
		"{\"type\":\"AgentMessage\",\"id\":\"x\",\"id\":\"a6\",\"content\":[{\"text\":\"a\","
		"\"text\":\"b\"}]}",
		"{\"type\":\"Reasoning\",\"type\":\"UserMessage\",\"id\":\"u5\"}",
		/* whitespace everywhere */
		" { \"type\" : \"UserMessage\" , \"id\" : \"u6\" , \"content\" : [ 1 , { } ] } ",
		/* variants only item_from_core knows */
		"{\"type\":\"FileChange\",\"id\":\"f1\",\"changes\":{\"b.txt\":{\"type\":\"add\","
		"\"content\":\"x\\n\"},\"a.txt\":{\"type\":\"update\",\"unified_diff\":\"@@\",\"move_path\":"
		"\"c.txt\"}},\"status\":\"completed\"}",
		"{\"type\":\"WebSearch\",\"id\":\"w1\",\"query\":\"q\",\"action\":{\"type\":\"search\"}}",
		"{\"type\":\"ContextCompaction\",\"id\":\"cc\",\"started_at_ms\":5}",
		/* found by fuzz_item: "_id" renamed over "id" leaves an item without an id */
		"{\"type\":\"CommandExecu+ion\",\"id\":\"c0\",\"_id\":null}",
		"{\"type\":\"User\\u004dessage\",\"id\":\"u7\",\"content\":[]}",
		/* what the scanner refuses goes through jansson */
		"{\"type\":\"CommandExecution\",\"id\":\"c10\",\"duration\":{\"secs\":1.5},\"exit_code\":"
		"1e3}",
		"{\"type\":\"CommandExecution\",\"id\":\"c11\",\"exit_code\":123456789012345678}",
		"{\"type\":\"CommandExecution\",\"id\":\"c12\",\"exit_code\":1234567890123456789}",
		"{\"type\":\"UserMessage\",\"id\":\"u9\",\"content\":[],\"k\\u0065y\":1}",
	};
	static const char *const not_items[] = {
		"{\"type\":\"UserMessage\"}",
		"{\"type\":\"UserMessage\",\"id\":7}",
		"{\"id\":\"x\"}",
		"{\"type\":3,\"id\":\"x\"}",
		"[\"UserMessage\"]",
		"{\"type\":\"UserMessage\",\"id\":\"x\"",
		"{\"type\":\"UserMessage\",\"id\":\"x\"} trailing",
		"{\"type\":\"UserMessage\",\"id\":\"\xff\"}",
		/* jansson refuses an integer past 64 bits, and \u0000 (the scanner too) */
		"{\"type\":\"CommandExecution\",\"id\":\"c13\",\"exit_code\":12345678901234567890}",
		/* jansson refuses \u0000 (the scanner too): no item either way */
		"{\"type\":\"AgentMessage\",\"id\":\"a7\",\"content\":[{\"text\":\"a\\u0000b\"}]}",
		"",
	};
	long long st = 1795642524508LL, co = 1795642525000LL, neg = -5;

	for (size_t i = 0; i < sizeof items / sizeof items[0]; i++) {
		if (!same(items[i], &st, &co))
			fail_msg("not an item: %s", items[i]);
		assert_true(same(items[i], NULL, NULL));
		assert_true(same(items[i], &neg, NULL));
	}
	for (size_t i = 0; i < sizeof not_items / sizeof not_items[0]; i++)
		assert_false(same(not_items[i], &st, &co));
	/* nesting past JSCAN_DEPTH: refused by the scanner, read by jansson */
	struct buf deep;

	buf_init(&deep, 4096);
	buf_adds(&deep, "{\"type\":\"UserMessage\",\"id\":\"u8\",\"content\":");
	for (int i = 0; i < 100; i++)
		buf_addc(&deep, '[');
	for (int i = 0; i < 100; i++)
		buf_addc(&deep, ']');
	buf_addc(&deep, '}');
	assert_true(same(buf_str(&deep), &st, NULL));
	buf_free(&deep);
}

/* Every item_completed item of the rollouts in dir, compact and pretty-printed. */
static int
fixture_dir_items(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char *path = xasprintf("%s/%s", dir, e->d_name);
		json_error_t err;
		FILE *f;
		char line[1 << 16];

		if (e->d_name[0] == '.') {
			free(path);
			continue;
		}
		if (e->d_type == DT_DIR) {
			n += fixture_dir_items(path);
			free(path);
			continue;
		}
		assert_non_null(f = fopen(path, "r"));
		while (fgets(line, sizeof line, f) != NULL) {
			json_t *rec = json_loads(line, 0, &err), *item;
			char *text;

			item = json_object_get(json_object_get(rec, "payload"), "item");
			if (item != NULL) {
				long long st = 1, co = 2;

				text = json_dumps(item, JSON_COMPACT);
				n += same(text, &st, &co);
				free(text);
				text = json_dumps(item, JSON_INDENT(2));
				n += same(text, NULL, &co);
				free(text);
			}
			json_decref(rec);
		}
		fclose(f);
		free(path);
	}
	closedir(d);
	return n;
}

static void
test_fixture_items(void **state)
{
	struct tu_home h;

	tu_fixture_home(&h);
	/* 14 items in upstream's rollouts, each twice */
	assert_int_equal(fixture_dir_items(h.home), 28);
	tu_home_free(&h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_written),
		cmocka_unit_test(test_fixture_items),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
