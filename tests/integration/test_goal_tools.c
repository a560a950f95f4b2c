/*
 * The goal tools against the real daemon: each scenario recorded from upstream 0.169
 * (tests/fixtures/goals/upstream/, record.py) is played by the mock model, the goal set first
 * by thread/goal/set as upstream's was; what the model gets back and the thread/goal/updated
 * notifications of the turn must be upstream's (ids and times normalised). Direct calls with
 * the custom model (mock-model), `tools.<name>(...)` in code mode's exec with a catalogue
 * model (skipped, with a count, where node is missing). Upstream goes on with turns of its
 * own toward an active goal after the turn (docs/agent_tools.md): not compared, not done here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/codemode/codemode_host.h"
#include "harness.h"
#include "protocol/xmalloc.h"
#include "tests/helpers/skip_note.h"
#include "turn_util.h"

#define FIXTURES "tests/fixtures/goals/upstream/"

/* The mock's script: one response per step (a function call, or exec's custom call), then a
 * message (JSON text, heap). */
static char *
gt_script(const json_t *steps)
{
	json_t *items = json_array(), *st, *item, *a;
	const char *tool;
	char id[32], *args, *text;
	size_t i;

	json_array_foreach(steps, i, st)
	{
		snprintf(id, sizeof id, "call-%zu", i + 1);
		tool = json_string_value(json_object_get(st, "tool"));
		a = json_object_get(st, "arguments");
		if (strcmp(tool, "exec") == 0)
			item = json_pack("{s:s, s:s, s:s, s:O}", "type", "custom_tool_call",
				"call_id", id, "name", "exec", "input", a);
		else {
			/* record.py sent json.dumps(arguments): jansson's default separators */
			args = json_is_string(a) ? xstrdup(json_string_value(a)) : json_dumps(a, 0);
			item = json_pack("{s:s, s:s, s:s, s:s}", "type", "function_call", "call_id",
				id, "name", tool, "arguments", args);
			free(args);
		}
		json_array_append_new(items, item);
	}
	text = tt_calls_script(items);
	return text;
}

/* Replace the digits after each marker with 0 (s freed; heap). */
static char *
gt_zero(char *s, const char *marker)
{
	char *at, *out;
	size_t from = 0, n;

	while ((at = strstr(s + from, marker)) != NULL) {
		at += strlen(marker);
		n = strspn(at, "0123456789");
		out = xasprintf("%.*s0%s", (int)(at - s), s, at + n);
		from = (size_t)(at - s) + 1;
		free(s);
		s = out;
	}
	return s;
}

/* Every "Wall time <seconds> seconds" as the fixtures keep it, "Wall time N seconds" (s freed;
 * heap): a loaded machine or a sanitized daemon takes longer than upstream's 0.0 or 0.1. */
static char *
gt_wall(char *s)
{
	static const char mark[] = "Wall time ";
	char *at, *out;
	size_t from = 0, n;

	while ((at = strstr(s + from, mark)) != NULL) {
		at += sizeof mark - 1;
		n = strspn(at, "0123456789.");
		if (n == 0 || strncmp(at + n, " seconds", 8) != 0) {
			from = (size_t)(at - s);
			continue;
		}
		out = xasprintf("%.*sN%s", (int)(at - s), s, at + n);
		from = (size_t)(at - s) + 1;
		free(s);
		s = out;
	}
	return s;
}

/* v as the fixtures keep it: ids "UUID", times 0, no item id, wall times N (new reference). */
static json_t *
gt_norm(const json_t *v, const struct tt *f, const char *turn_id)
{
	json_t *copy = json_deep_copy(v), *back;
	char *s;

	json_object_del(copy, "id");
	s = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	json_decref(copy);
	s = tt_replace(s, f->thread_id, "UUID");
	if (turn_id != NULL)
		s = tt_replace(s, turn_id, "UUID");
	s = gt_zero(s, "\"createdAt\":");
	s = gt_zero(s, "\"updatedAt\":");
	s = gt_zero(s, "\\\"createdAt\\\":");
	s = gt_zero(s, "\\\"updatedAt\\\":");
	s = gt_wall(s);
	back = json_loads(s, JSON_DECODE_ANY, NULL);
	free(s);
	return back;
}

/* Play one recorded scenario: the model's answers and the turn's goal notifications. */
static void
gt_play(const char *name)
{
	char path[256], *script, id[32];
	static const char *const cm_args[] = {"-c", "model=gpt-6.1-sol", NULL};
	json_t *fx, *want = json_array(), *got = json_array(), *recs, *r, *it, *msgs, *set, *m;
	const char *turn_id;
	struct tt f;
	struct tt_opts o = {0};
	size_t i, k;
	int in_turn = 0;

	snprintf(path, sizeof path, FIXTURES "%s.json", name);
	fx = json_load_file(path, 0, NULL);
	assert_non_null(fx);
	script = gt_script(json_object_get(fx, "steps"));
	o.script = script;
	o.sandbox = "read-only";
	if (strncmp(name, "cm_", 3) == 0)
		o.args = cm_args; /* upstream's default model: code mode */
	tt_start(&f, &o);
	if (json_is_object(set = json_object_get(fx, "goal_set"))) {
		set = json_deep_copy(set);
		json_object_set_new(set, "threadId", json_string(f.thread_id));
		json_decref(tt_call(&f, "thread/goal/set", set));
	}
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	turn_id = json_string_value(json_object_get(tt_completed(msgs), "id"));
	recs = mm_records(&f.mm);
	for (k = 0; k < json_array_size(json_object_get(fx, "steps")); k++) {
		r = tt_request_body(recs, k + 1);
		assert_non_null(r);
		snprintf(id, sizeof id, "call-%zu", k + 1);
		json_array_foreach(json_object_get(r, "input"), i, it)
		{
			if (strcmp(json_string_value(json_object_get(it, "call_id")) ?: "", id) ==
					0 &&
				strstr(json_string_value(json_object_get(it, "type")) ?: "",
					"_output") != NULL)
				json_array_append_new(got, gt_norm(it, &f, turn_id));
		}
	}
	json_array_foreach(json_object_get(fx, "model_saw"), i, it)
		json_array_append_new(want, gt_norm(it, &f, NULL));
	tt_assert_upstream(name, want, got);
	json_array_clear(want);
	json_array_clear(got);
	/* the goal notifications between turn/started and turn/completed */
	json_array_foreach(json_object_get(fx, "client"), i, it)
	{
		if (json_is_string(it))
			in_turn = strcmp(json_string_value(it), "turn/started") == 0;
		else if (in_turn)
			json_array_append(want, it);
	}
	json_array_foreach(msgs, i, m)
	{
		const char *meth = json_string_value(json_object_get(m, "method")) ?: "";

		/* (the client's thread/goal/set, before the turn, has no turnId) */
		if (strncmp(meth, "thread/goal/", 12) == 0 &&
			json_is_string(json_object_get(json_object_get(m, "params"), "turnId")))
			json_array_append_new(got,
				gt_norm(json_pack("{s:O}", meth, json_object_get(m, "params")), &f,
					turn_id));
	}
	tt_assert_upstream(name, want, got);
	json_decref(want);
	json_decref(got);
	json_decref(recs);
	json_decref(msgs);
	json_decref(fx);
	free(script);
	tt_stop(&f);
}

/* Whether node is on our PATH (code mode's scenarios need it). */
static int
have_node(void)
{
	char *p = codemode_node_path(getenv("PATH"));

	free(p);
	return p != NULL;
}

#define SCENARIO(n)                                                                                \
	static void test_##n(void **state)                                                         \
	{                                                                                          \
		(void)state;                                                                       \
		if (strncmp(#n, "cm_", 3) == 0 && !have_node()) {                                  \
			skip_test("node is not on PATH: code mode is not offered");                \
			return;                                                                    \
		}                                                                                  \
		gt_play(#n);                                                                       \
	}
SCENARIO(get_none)
SCENARIO(get_set)
SCENARIO(create)
SCENARIO(create_budget)
SCENARIO(create_exists)
SCENARIO(create_after_complete)
SCENARIO(create_missing)
SCENARIO(update_complete_budget)
SCENARIO(update_paused)
SCENARIO(update_active)
SCENARIO(update_none)
SCENARIO(cm_get_none)
SCENARIO(cm_create)
SCENARIO(cm_create_exists)
SCENARIO(cm_update)

/* The feature off: no goal tool runs (upstream offers none: test_tool_list), nothing changes. */
static void
test_feature_off(void **state)
{
	char *script =
		tt_script("[{`events`:[{`ev`:`created`},{`type`:`response.output_item.done`,"
			  "`item`:{`type`:`function_call`,`call_id`:`c1`,`name`:`create_goal`,"
			  "`arguments`:`{\\`objective\\`:\\`x\\`}`}},{`ev`:`completed`}]},"
			  "{`events`:[{`ev`:`created`},{`ev`:`message`,`id`:`m`,`text`:`ok`},"
			  "{`ev`:`completed`}]}]");
	struct tt f;
	struct tt_opts o = {.script = script, .config_extra = "[features]\ngoals = false\n"};
	json_t *msgs, *recs;

	(void)state;
	tt_start(&f, &o);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	assert_int_equal(tt_count(msgs, "thread/goal/updated"), 0);
	recs = mm_records(&f.mm);
	assert_non_null(strstr(tt_call_output(tt_request_body(recs, 1), "c1"), "unsupported"));
	json_decref(recs);
	json_decref(msgs);
	free(script);
	tt_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_none),
		cmocka_unit_test(test_get_set),
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_create_budget),
		cmocka_unit_test(test_create_exists),
		cmocka_unit_test(test_create_after_complete),
		cmocka_unit_test(test_create_missing),
		cmocka_unit_test(test_update_complete_budget),
		cmocka_unit_test(test_update_paused),
		cmocka_unit_test(test_update_active),
		cmocka_unit_test(test_update_none),
		cmocka_unit_test(test_cm_get_none),
		cmocka_unit_test(test_cm_create),
		cmocka_unit_test(test_cm_create_exists),
		cmocka_unit_test(test_cm_update),
		cmocka_unit_test(test_feature_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
