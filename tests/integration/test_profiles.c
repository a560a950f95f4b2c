/*
 * Permission profiles and collaboration modes on the real daemon: permissionProfile/list and
 * collaborationMode/list answer what upstream 0.169 answered for the same config.toml
 * (recorded side by side, expectations below), a turn that selects a [permissions] profile
 * runs its command under that profile's sandbox, and a turn in plan mode sends the model
 * upstream's plan instructions, with the mode's model and effort. The harness checks every
 * answer against the reference schema (collaborationMode/list's against the experimental one).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "turn_util.h"
#include "protocol/xmalloc.h"

#define T_REPLY 5000

/* The config.toml both daemons were given (profiles out of order: the list sorts them). */
static const char profiles_toml[] = "model = \"gpt-5.5\"\n"
				    "default_permissions = \"locked\"\n"
				    "\n"
				    "[permissions.locked]\n"
				    "description = \"Locked down\"\n"
				    "[permissions.locked.filesystem]\n"
				    "\":minimal\" = \"read\"\n"
				    "\n"
				    "[permissions.dev]\n"
				    "[permissions.dev.filesystem]\n"
				    "\":workspace_roots\" = \"write\"\n";

/* The answer of a request (new reference). */
static json_t *
answer(struct asc *c, const char *method, const char *params)
{
	return asc_wait_response(
		c, asc_request(c, method, json_loads(params, 0, NULL)), asc_timeout(T_REPLY));
}

/* Assert an answer's result (or error) equals the JSON text upstream answered. */
static void
expect(struct asc *c, const char *method, const char *params, const char *want_text)
{
	json_t *m = answer(c, method, params), *want = json_loads(want_text, 0, NULL);
	json_t *got =
		json_object_get(m, json_object_get(want, "code") != NULL ? "error" : "result");

	assert_non_null(want);
	if (!json_equal(got, want)) {
		char *s = json_dumps(m, JSON_COMPACT);

		fail_msg("%s %s: got %s, upstream answered %s", method, params, s, want_text);
	}
	json_decref(want);
	json_decref(m);
}

#define P(id, desc) "{\"id\":\"" id "\",\"description\":" desc ",\"allowed\":true}"

static void
test_permission_profile_list(void **state)
{
	struct asc *c = asc_spawn_config(profiles_toml, 1);

	(void)state;
	expect(c, "permissionProfile/list", "{}",
		"{\"data\":[" P(":read-only", "null") "," P(":workspace", "null") "," P(
			":danger-full-access", "null") "," P("dev", "null") "," P("locked",
			"\"Locked down\"") "],\"nextCursor\":null}");
	expect(c, "permissionProfile/list", "{\"limit\":2}",
		"{\"data\":[" P(":read-only", "null") "," P(
			":workspace", "null") "],\"nextCursor\":\"2\"}");
	expect(c, "permissionProfile/list", "{\"limit\":2,\"cursor\":\"2\"}",
		"{\"data\":[" P(":danger-full-access", "null") "," P(
			"dev", "null") "],\"nextCursor\":\"4\"}");
	expect(c, "permissionProfile/list", "{\"limit\":0}",
		"{\"data\":[" P(":read-only", "null") "],\"nextCursor\":\"1\"}");
	expect(c, "permissionProfile/list", "{\"cursor\":\"5\"}",
		"{\"data\":[],\"nextCursor\":null}");
	expect(c, "permissionProfile/list", "{\"cursor\":\"zz\"}",
		"{\"code\":-32600,\"message\":\"invalid cursor: zz\"}");
	expect(c, "permissionProfile/list", "{\"cursor\":\"100\"}",
		"{\"code\":-32600,\"message\":\"cursor 100 exceeds total permission profiles 5\"}");
	asc_free(c);
	/* No config: the built-ins alone, and no experimentalApi needed (a stable method). */
	c = asc_spawn_config("", 0);
	expect(c, "permissionProfile/list", "{}",
		"{\"data\":[" P(":read-only", "null") "," P(":workspace", "null") "," P(
			":danger-full-access", "null") "],\"nextCursor\":null}");
	asc_free(c);
}

static void
test_collaboration_mode_list(void **state)
{
	struct asc *c;

	/* Without the experimental reference beside the stable one, the harness counts this
	 * answer as unchecked against it (harness_check.c) and the test still checks its text. */
	(void)state;
	/* plan_mode_reasoning_effort does not change the presets upstream lists */
	c = asc_spawn_config("plan_mode_reasoning_effort = \"high\"\n", 1);
	expect(c, "collaborationMode/list", "{}",
		"{\"data\":[{\"name\":\"Plan\",\"mode\":\"plan\",\"model\":null,"
		"\"reasoning_effort\":\"medium\"},{\"name\":\"Default\",\"mode\":\"default\","
		"\"model\":null,\"reasoning_effort\":null}]}");
	asc_free(c);
	c = asc_spawn_config("", 0);
	expect(c, "collaborationMode/list", "{}",
		"{\"code\":-32600,\"message\":\"collaborationMode/list requires experimentalApi "
		"capability\"}");
	asc_free(c);
}

/* A fixture whose model runs one command writing inside and outside the workspace. */
static void
start_writer(struct tt *f, const char *config_extra)
{
	char *s =
		tt_script("[{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`w-1`,"
			  "`name`:`exec_command`,`arguments`:{`cmd`:`touch in.txt; echo in=$?; "
			  "touch ../out.txt; echo out=$?`,`login`:false,`yield_time_ms`:5000}},"
			  "{`ev`:`completed`}]},"
			  "{`events`:[{`ev`:`created`},{`ev`:`message`,`id`:`m-end`,`text`:`done`},"
			  "{`ev`:`completed`}]}]");
	struct tt_opts o = {.script = s, .config_extra = config_extra, .experimental = 1};

	tt_start(f, &o); /* the thread itself runs with danger-full-access */
	free(s);
}

/* The path beside the workspace the command tries to write (heap). */
static char *
outside(const struct tt *f)
{
	char *ws = xstrdup(f->workspace), *p = xasprintf("%s/out.txt", dirname(ws));

	free(ws);
	return p;
}

static const char dev_profile[] = "\n[permissions.dev]\n"
				  "description = \"workspace only\"\n"
				  "[permissions.dev.filesystem]\n"
				  "\":minimal\" = \"read\"\n"
				  "\":workspace_roots\" = \"write\"\n";

static void
test_turn_with_profile_is_sandboxed(void **state)
{
	struct tt f;
	json_t *msgs, *item;
	const char *text;
	char *in, *out;

	(void)state;
	start_writer(&f, dev_profile);
	msgs = tt_turn(&f, "write", json_pack("{s:s}", "permissions", "dev"), NULL, NULL);
	item = tt_item(msgs, "commandExecution", 0);
	assert_non_null(item);
	/* the profile writes the workspace and nothing else, though the thread is full access */
	text = json_string_value(json_object_get(item, "aggregatedOutput"));
	assert_non_null(strstr(text, "in=0\n"));
	assert_non_null(strstr(text, "out=1\n"));
	in = tt_path(&f, "in.txt");
	out = outside(&f);
	assert_int_equal(access(in, F_OK), 0);
	assert_int_not_equal(access(out, F_OK), 0);
	free(in);
	free(out);
	json_decref(msgs);
	/* an unknown profile and a profile beside a sandboxPolicy: upstream's errors */
	msgs = tt_call(&f, "turn/start",
		json_pack("{s:s, s:o, s:s}", "threadId", f.thread_id, "input", tt_text("x"),
			"permissions", "nope"));
	asc_assert_error(msgs, -32600,
		"failed to load configuration: default_permissions refers to undefined profile "
		"`nope`");
	json_decref(msgs);
	msgs = tt_call(&f, "turn/start",
		json_pack("{s:s, s:o, s:s, s:{s:s}}", "threadId", f.thread_id, "input",
			tt_text("x"), "permissions", ":workspace", "sandboxPolicy", "type",
			"readOnly"));
	asc_assert_error(msgs, -32600, "`permissions` cannot be combined with `sandboxPolicy`");
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_turn_in_plan_mode(void **state)
{
	struct tt f;
	json_t *msgs, *recs, *body;
	char *s = tt_script("[{`events`:[{`ev`:`created`},{`ev`:`message`,`id`:`m-1`,"
			    "`text`:`a plan`},{`ev`:`completed`}]},"
			    "{`events`:[{`ev`:`created`},{`ev`:`message`,`id`:`m-2`,"
			    "`text`:`again`},{`ev`:`completed`}]}]");
	struct tt_opts o = {.script = s, .experimental = 1};

	(void)state;
	tt_start(&f, &o);
	free(s);
	msgs = tt_turn(&f, "plan it",
		json_pack("{s:{s:s, s:{s:s, s:s, s:n}}}", "collaborationMode", "mode", "plan",
			"settings", "model", "plan-model", "reasoning_effort", "high",
			"developer_instructions"),
		NULL, NULL);
	json_decref(msgs);
	/* the same mode again: its instructions are not repeated */
	msgs = tt_turn(&f, "more",
		json_pack("{s:{s:s, s:{s:s}}}", "collaborationMode", "mode", "plan", "settings",
			"model", "plan-model"),
		NULL, NULL);
	json_decref(msgs);
	recs = mm_records(&f.mm);
	assert_int_equal(json_array_size(recs), 2);
	body = tt_request_body(recs, 0);
	assert_string_equal(json_string_value(json_object_get(body, "model")), "plan-model");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(body, "reasoning"), "effort")),
		"high");
	/* upstream's words, recorded from its request in plan mode */
	assert_true(tt_body_has_text(body, "<collaboration_mode># Plan Mode (Conversational)\n"));
	assert_true(tt_body_has_text(body,
		"You are in **Plan Mode** until a developer message "
		"explicitly ends it."));
	body = tt_request_body(recs, 1);
	assert_int_equal(json_array_size(json_object_get(body, "input")),
		json_array_size(json_object_get(tt_request_body(recs, 0), "input")) + 2);
	json_decref(recs);
	tt_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_permission_profile_list),
		cmocka_unit_test(test_collaboration_mode_list),
		cmocka_unit_test(test_turn_with_profile_is_sandboxed),
		cmocka_unit_test(test_turn_in_plan_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
