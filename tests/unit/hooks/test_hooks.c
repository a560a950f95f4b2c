/*
 * Tests for server/hooks/: discovery and upstream's trust hash against upstream 0.169's own
 * hooks/list answer for the same config.toml (tests/fixtures/hooks/upstream/list.json: keys,
 * display order, matchers, the SessionEnd clamp and its warning, every currentHash), trust
 * states, and each hook answer's outcome as upstream reported it in hook/completed
 * (tests/fixtures/hooks/upstream/outcomes.json).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "hooks/hooks.h"

static json_t *
fixture(const char *name)
{
	char path[256];
	json_t *j;

	snprintf(path, sizeof path, "tests/fixtures/hooks/upstream/%s", name);
	j = json_load_file(path, 0, NULL);
	assert_non_null(j);
	return j;
}

/* The layers config/read would give for a CODEX_HOME at TMP/home with the fixture's hooks. */
static json_t *
user_layers(const json_t *hooks)
{
	return json_pack("[{s:{s:s, s:s}, s:{s:O}}]", "name", "type", "user", "file",
		"TMP/home/config.toml", "config", "hooks", hooks);
}

static int
event_of(const char *wire)
{
	for (int e = 0; e < HOOK_EVENTS; e++)
		if (strcmp(hooks_event_wire_name(e), wire) == 0)
			return e;
	return -1;
}

static void
test_list_as_upstream(void **state)
{
	json_t *fx = fixture("list.json"), *entry = json_object_get(fx, "entry");
	json_t *layers = user_layers(json_object_get(fx, "hooks_toml"));
	struct hook_set *s = hooks_discover_layers(layers, NULL);
	json_t *got = hooks_list_entries(s), *warn = hooks_list_warnings(s);

	(void)state;
	assert_true(json_equal(got, json_object_get(entry, "hooks")));
	assert_true(json_equal(warn, json_object_get(entry, "warnings")));
	assert_int_equal(hooks_count(s, HOOK_STOP), 0); /* untrusted: listed, never run */
	json_decref(got);
	json_decref(warn);
	hooks_unref(s);
	json_decref(layers);
	json_decref(fx);
}

static void
test_hash_as_upstream(void **state)
{
	json_t *fx = fixture("list.json"), *h;
	size_t i;

	(void)state;
	json_array_foreach(json_object_get(json_object_get(fx, "entry"), "hooks"), i, h)
	{
		int e = event_of(json_string_value(json_object_get(h, "eventName")));
		char *hash;

		assert_true(e >= 0);
		hash = hooks_hash(e, json_string_value(json_object_get(h, "matcher")),
			json_string_value(json_object_get(h, "command")),
			json_integer_value(json_object_get(h, "timeoutSec")), 0, NULL);
		assert_non_null(hash);
		assert_string_equal(hash, json_string_value(json_object_get(h, "currentHash")));
		free(hash);
	}
	json_decref(fx);
}

/* A trusted_hash equal to the current one runs the hook; another is "modified"; disabled. */
static void
test_trust_states(void **state)
{
	json_t *fx = fixture("list.json");
	json_t *layers = user_layers(json_object_get(fx, "hooks_toml"));
	json_t *states = json_object(), *got;
	struct hook_set *s;
	char *stop = hooks_hash(HOOK_STOP, NULL, "/tmp/hookexp/hook.sh Stop", 5, 0, NULL);

	(void)state;
	json_object_set_new(
		states, "TMP/home/config.toml:stop:0:0", json_pack("{s:s}", "trusted_hash", stop));
	json_object_set_new(states, "TMP/home/config.toml:session_start:0:0",
		json_pack("{s:s}", "trusted_hash", "sha256:00"));
	json_object_set_new(states, "TMP/home/config.toml:user_prompt_submit:0:0",
		json_pack("{s:s, s:b}", "trusted_hash",
			"sha256:1722985d0fe99a3d3289286ed8d5f5d13e6092652e032d7930cef1c0ab0c730d",
			"enabled", 0));
	s = hooks_discover_layers(layers, states);
	got = hooks_list_entries(s);
	assert_int_equal(hooks_count(s, HOOK_STOP), 1);
	assert_int_equal(hooks_count(s, HOOK_SESSION_START), 0);
	assert_int_equal(hooks_count(s, HOOK_USER_PROMPT_SUBMIT), 0);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(got, 10), "trustStatus")),
		"trusted");
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(got, 5), "trustStatus")),
		"modified");
	assert_true(json_is_false(json_object_get(json_array_get(got, 7), "enabled")));
	free(stop);
	json_decref(got);
	hooks_unref(s);
	json_decref(states);
	json_decref(layers);
	json_decref(fx);
}

static void
test_outcomes_as_upstream(void **state)
{
	json_t *fx = fixture("outcomes.json"), *c;
	size_t i;

	(void)state;
	json_array_foreach(json_object_get(fx, "cases"), i, c)
	{
		const char *ev = json_string_value(json_object_get(c, "event"));
		struct hook_outcome o;
		int e = -1;

		for (int k = 0; k < HOOK_EVENTS; k++)
			if (strcmp(hooks_event_config_name(k), ev) == 0)
				e = k;
		assert_true(e >= 0);
		hooks_outcome_parse(e, (int)json_integer_value(json_object_get(c, "exit")), 0, 5,
			json_string_value(json_object_get(c, "stdout")),
			json_string_value(json_object_get(c, "stderr")), &o);
		assert_string_equal(o.status, json_string_value(json_object_get(c, "status")));
		if (!json_equal(o.entries, json_object_get(c, "entries")))
			fail_msg("case %zu: entries %s", i, json_dumps(o.entries, 0));
		hooks_outcome_free(&o);
	}
	json_decref(fx);
}

/*
 * PermissionRequest's answers (permission.json, recorded by record_permission.py): each case's
 * stdout, stderr and exit code read as upstream's hook/completed showed them, its strict shape
 * included (unknown or reserved fields, a missing hookEventName, an array), and the verdict:
 * allow, deny with its message as the feedback, or none.
 */
static void
test_permission_as_upstream(void **state)
{
	json_t *fx = fixture("permission.json"), *c, *ev;
	size_t i, k;

	(void)state;
	json_array_foreach(json_object_get(fx, "cases"), i, c)
	{
		const json_t *h = json_object_get(c, "permission_hook"), *run = NULL;
		struct hook_outcome o;

		json_array_foreach(json_object_get(c, "events"), k, ev)
		{
			const json_t *r = json_object_get(ev, "run");

			if (strcmp(json_string_value(json_object_get(ev, "method")),
				    "hook/completed") == 0 &&
				strcmp(json_string_value(json_object_get(r, "eventName")),
					"permissionRequest") == 0)
				run = r;
		}
		assert_non_null(run);
		hooks_outcome_parse(HOOK_PERMISSION_REQUEST,
			(int)json_integer_value(json_object_get(h, "exit")),
			json_integer_value(json_object_get(h, "sleep")) > 1, 1,
			json_string_value(json_object_get(h, "stdout")),
			json_string_value(json_object_get(h, "stderr")), &o);
		if (strcmp(o.status, json_string_value(json_object_get(run, "status"))) != 0 ||
			!json_equal(o.entries, json_object_get(run, "entries")))
			fail_msg("%s: %s %s", json_string_value(json_object_get(c, "name")),
				o.status, json_dumps(o.entries, 0));
		/* an allow ran the command without asking (where the client's approval did not:
		 * the acceptForSession cases); a deny's message is the feedback */
		assert_int_equal(o.allow,
			strcmp(o.status, "completed") == 0 &&
				json_is_true(json_object_get(c, "file_made")) &&
				json_object_get(c, "approval") == NULL);
		if (strcmp(o.status, "blocked") == 0)
			assert_string_equal(o.feedback,
				json_string_value(json_object_get(
					json_array_get(json_object_get(run, "entries"),
						json_array_size(json_object_get(run, "entries")) -
							1),
					"text")));
		hooks_outcome_free(&o);
	}
	json_decref(fx);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_as_upstream),
		cmocka_unit_test(test_hash_as_upstream),
		cmocka_unit_test(test_trust_states),
		cmocka_unit_test(test_outcomes_as_upstream),
		cmocka_unit_test(test_permission_as_upstream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
