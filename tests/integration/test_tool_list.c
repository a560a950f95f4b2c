/*
 * The tools offered to the model, compared with upstream 0.169's requests to the same mock
 * model for the same config.toml (tests/fixtures/tools/upstream/<case>.json, recorded by
 * tests/fixtures/tools/record.py; upstream is not needed here). Per case the daemon runs one
 * turn against `app-server mock-model` and the first request's `tools` is checked:
 *
 * - a model unknown to the catalogue (a custom provider's model, upstream's "fallback
 *   metadata"), and gpt-5.5 (the one catalogue model 0.169 gives classic tools): every tool
 *   we offer is upstream's, byte for byte (name, description, schema), in upstream's order,
 *   and each tool upstream offers that we do not is one we do not run (NOT_RUN below), so a
 *   new difference fails here;
 * - every other catalogue model (upstream's default and its families, all recorded): upstream's
 *   "code mode": the request has no `tools`, its first input item is additional_tools, whose
 *   `functions` namespace holds exec, wait and request_user_input as upstream's; exec's
 *   description has a section for each nested tool we run (and none for another), each
 *   byte for byte upstream's, and nothing is offered directly;
 * - [features] code_mode = false: a catalogue model gets the nested tools we run as plain
 *   tools, with the schemas upstream gives them as plain functions; = true: a custom model
 *   gets code mode.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

#define FIXTURES "tests/fixtures/tools/upstream/"

/* Upstream's tools nothing here runs, so they are not offered (docs/protocol.md). */
static const char *const not_run[] = {"request_user_input_async", "multi_agent_v1", "web_search",
	"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource", "tool_search",
	NULL};

struct tl_case {
	const char *name;   /* the fixture */
	const char *config; /* config.toml before the provider table, as record.py writes it */
	int known;	    /* a catalogue model of the code-mode family */
	const char *model;  /* the request's model; NULL: gpt-6.1-sol when known, else mock-model */
};

static const struct tl_case cases[] = {
	{"default_model", "", 1},
	{"default_model_update_plan", "[tools.update_plan]\nenabled = true", 1},
	{"custom_model", "model = \"mock-model\"", 0},
	{"custom_model_update_plan", "model = \"mock-model\"\n[tools.update_plan]\nenabled = true",
		0},
	{"custom_model_web_search_off", "model = \"mock-model\"\nweb_search = \"disabled\"", 0},
	{"custom_model_view_image_off", "model = \"mock-model\"\n[tools]\nview_image = false", 0},
	{"custom_model_goals_off", "model = \"mock-model\"\n[features]\ngoals = false", 0},
	{"default_model_goals_off", "[features]\ngoals = false", 1},
	/* the rest of 0.169's catalogue: every family but gpt-5.5 gets code mode */
	{"model_gpt_6_astra", "model = \"gpt-6-astra\"", 1, "gpt-6-astra"},
	{"model_gpt_6_sol", "model = \"gpt-6-sol\"", 1, "gpt-6-sol"},
	{"model_gpt_6_luna", "model = \"gpt-6-luna\"", 1, "gpt-6-luna"},
	{"model_gpt_5_6_sol", "model = \"gpt-5.6-sol\"", 1, "gpt-5.6-sol"},
	{"model_gpt_6_1_terra", "model = \"gpt-6.1-terra\"", 1, "gpt-6.1-terra"},
	{"model_gpt_5_6_terra", "model = \"gpt-5.6-terra\"", 1, "gpt-5.6-terra"},
	{"model_gpt_5_6_luna", "model = \"gpt-5.6-luna\"", 1, "gpt-5.6-luna"},
	{"model_gpt_5_5", "model = \"gpt-5.5\"", 0, "gpt-5.5"},
};

/* Code mode off by the feature: upstream's default model's recording, the classic list. */
static const struct tl_case code_mode_off = {"default_model", "[features]\ncode_mode = false", 1};

static int
tl_not_run(const char *name)
{
	for (size_t i = 0; not_run[i] != NULL; i++)
		if (strcmp(not_run[i], name) == 0)
			return 1;
	return 0;
}

/* A tool's name (a hosted tool has only a type). */
static const char *
tl_name(const json_t *tool)
{
	const char *n = json_string_value(json_object_get(tool, "name"));

	return n != NULL ? n : json_string_value(json_object_get(tool, "type"));
}

/* The tool named name in a tools array, or NULL. */
static json_t *
tl_find(const json_t *tools, const char *name)
{
	json_t *t;
	size_t i;

	json_array_foreach(tools, i, t)
	{
		if (strcmp(tl_name(t), name) == 0)
			return t;
	}
	return NULL;
}

/* Run one turn of our daemon on this config; the first model request's body (new ref). */
static json_t *
tl_our_body(const struct tl_case *c)
{
	char tmpl[] = "/tmp/test_tools.XXXXXX", *home, *ws, *path, *env0;
	const char *env[2];
	struct asc_opts ao = {0};
	struct mm m;
	struct asc *a;
	json_t *r, *recs, *rec, *body = NULL;
	long long id;
	FILE *f;
	size_t i;

	assert_non_null(mkdtemp(tmpl));
	home = xasprintf("%s/home", tmpl);
	ws = xasprintf("%s/ws", tmpl);
	assert_int_equal(mkdir(home, 0700), 0);
	assert_int_equal(mkdir(ws, 0700), 0);
	mm_start(&m,
		"{\"responses\":[{\"events\":[{\"ev\":\"created\"},{\"ev\":\"message\","
		"\"id\":\"m1\",\"text\":\"ok\"},{\"ev\":\"completed\"}]}],\"repeat\":true}");
	path = xasprintf("%s/config.toml", home);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"model_provider = \"mock_provider\"\napproval_policy = \"never\"\n"
		"sandbox_mode = \"read-only\"\n%s\n[model_providers.mock_provider]\n"
		"name = \"Mock provider\"\nbase_url = \"http://127.0.0.1:%d/v1\"\n"
		"wire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n",
		c->config, m.port);
	fclose(f);
	env[0] = env0 = xasprintf("CODEX_HOME=%s", home);
	env[1] = NULL;
	ao.env = env;
	ao.inherit_codex_home = 1;
	ao.capture_stderr = 1;
	a = asc_spawn(&ao);
	asc_initialize(a);
	r = asc_wait_response(a, asc_request(a, "thread/start", json_pack("{s:s}", "cwd", ws)),
		asc_timeout(5000));
	id = asc_request(a, "turn/start",
		json_pack("{s:O, s:[{s:s, s:s}]}", "threadId",
			json_object_get(json_object_get(asc_assert_result(r), "thread"), "id"),
			"input", "type", "text", "text", "hi"));
	json_decref(r);
	r = asc_wait_response(a, id, asc_timeout(5000));
	asc_assert_result(r);
	json_decref(r);
	json_decref(asc_wait_notification(a, "turn/completed", asc_timeout(20000)));
	asc_free(a);
	recs = mm_records(&m);
	json_array_foreach(recs, i, rec)
	{
		const char *p = json_string_value(json_object_get(rec, "path"));

		if (body == NULL && p != NULL && strstr(p, "/responses") != NULL)
			body = json_incref(json_object_get(rec, "body"));
	}
	assert_non_null(body);
	json_decref(recs);
	mm_stop(&m);
	unlink(path);
	rmdir(ws);
	rmdir(home);
	rmdir(tmpl);
	free(path);
	free(env0);
	free(home);
	free(ws);
	return body;
}

/* The tools array of the first request (new ref). */
static json_t *
tl_our_tools(const struct tl_case *c)
{
	json_t *body = tl_our_body(c), *tools = json_incref(json_object_get(body, "tools"));

	assert_non_null(tools);
	json_decref(body);
	return tools;
}

/* Upstream's recorded request for a case (new reference). */
static json_t *
tl_upstream(const char *name)
{
	char *path = xasprintf(FIXTURES "%s.json", name);
	json_error_t e;
	json_t *v = json_load_file(path, 0, &e);

	if (v == NULL)
		fail_msg("%s: %s", path, e.text);
	free(path);
	return v;
}

/* A model upstream runs on fallback metadata: the same tools, in the same order, but NOT_RUN. */
static void
tl_check_fallback(const struct tl_case *c, const json_t *ours, const json_t *up)
{
	json_t *t;
	size_t i, k = 0;

	json_array_foreach(json_object_get(up, "tools"), i, t)
	{
		const char *name = tl_name(t);
		json_t *mine = json_array_get(ours, k);

		if (tl_not_run(name)) {
			if (tl_find(ours, name) != NULL)
				fail_msg("%s: %s is offered, but nothing here runs it", c->name,
					name);
			continue;
		}
		if (mine == NULL || strcmp(tl_name(mine), name) != 0)
			fail_msg("%s: upstream's tool %zu is %s, ours is %s", c->name, k, name,
				mine != NULL ? tl_name(mine) : "(none)");
		if (!json_equal(mine, t)) {
			char *a = json_dumps(mine, JSON_SORT_KEYS),
			     *b = json_dumps(t, JSON_SORT_KEYS);

			fail_msg("%s: %s differs\n ours:     %s\n upstream: %s", c->name, name, a,
				b);
		}
		k++;
	}
	if (k != json_array_size(ours))
		fail_msg("%s: we offer %zu tools, upstream %zu of those we run", c->name,
			json_array_size(ours), k);
}

/* Code mode off: ours are the nested code-mode tools we run, as plain tools. */
static void
tl_check_classic(const struct tl_case *c, const json_t *ours, const json_t *up)
{
	static const char *const ran[] = {"exec_command", "write_stdin", "update_plan",
		"apply_patch", "view_image", "get_goal", "create_goal", "update_goal", NULL};
	json_t *at = json_array_get(json_object_get(up, "additional_tools"), 0);
	json_t *fns = tl_find(json_object_get(at, "tools"), "functions");
	const char *desc = json_string_value(
		json_object_get(tl_find(json_object_get(fns, "tools"), "exec"), "description"));
	json_t *plain = tl_upstream("custom_model_update_plan"), *t;
	size_t i, n = 0;
	char heading[64];

	assert_non_null(desc);
	assert_int_equal(json_array_size(json_object_get(up, "tools")), 0);
	for (i = 0; ran[i] != NULL; i++) {
		snprintf(heading, sizeof heading, "### `%s`", ran[i]);
		t = tl_find(ours, ran[i]);
		if ((strstr(desc, heading) != NULL) != (t != NULL))
			fail_msg("%s: upstream %s %s, we %s", c->name,
				strstr(desc, heading) != NULL ? "offers" : "does not offer", ran[i],
				t != NULL ? "do" : "do not");
		n += t != NULL;
		/* the same tool upstream gives a fallback model as a plain function */
		if (t != NULL && tl_find(json_object_get(plain, "tools"), ran[i]) != NULL)
			assert_true(
				json_equal(t, tl_find(json_object_get(plain, "tools"), ran[i])));
	}
	/* request_user_input: a plain function of upstream's `functions` namespace, as ours */
	t = tl_find(json_object_get(fns, "tools"), "request_user_input");
	assert_non_null(t);
	if (!json_equal(t, tl_find(ours, "request_user_input")))
		fail_msg("%s: request_user_input is not offered as upstream's", c->name);
	n++;
	assert_int_equal(n, json_array_size(ours));
	json_decref(plain);
}

/* The "### `name`" section of an exec description (heap), or NULL. */
static char *
tl_section(const char *desc, const char *name)
{
	char *h = xasprintf("\n\n### `%s`\n", name);
	const char *p = strstr(desc, h), *e, *ns;

	free(h);
	if (p == NULL)
		return NULL;
	e = strstr(p + 2, "\n\n### `");
	ns = strstr(p + 2, "\n\n## ");
	if (e == NULL || (ns != NULL && ns < e))
		e = ns;
	return e != NULL ? strndup(p, (size_t)(e - p)) : strdup(p);
}

/* A catalogue model: upstream's code mode, with the nested tools we run. */
static void
tl_check_code_mode(const struct tl_case *c, const json_t *body, const json_t *up)
{
	static const char *const ran[] = {"exec_command", "write_stdin", "update_plan",
		"apply_patch", "view_image", "clock__curr_time", "get_goal", "create_goal",
		"update_goal", NULL};
	json_t *uat = json_array_get(json_object_get(up, "additional_tools"), 0);
	json_t *uclock = tl_find(json_object_get(uat, "tools"), "clock");
	json_t *ufns =
		json_object_get(tl_find(json_object_get(uat, "tools"), "functions"), "tools");
	json_t *at = json_array_get(json_object_get(body, "input"), 0), *fns, *exec;
	const char *udesc =
		json_string_value(json_object_get(tl_find(ufns, "exec"), "description"));
	const char *desc, *p;
	char *a, *b;

	assert_null(json_object_get(body, "tools")); /* upstream sends none */
	assert_string_equal(json_string_value(json_object_get(at, "type")), "additional_tools");
	assert_string_equal(json_string_value(json_object_get(at, "role")), "developer");
	/* functions, and the clock namespace (its sleep) where upstream has it, as upstream's */
	assert_int_equal(json_array_size(json_object_get(at, "tools")), uclock != NULL ? 2 : 1);
	if (uclock != NULL && !json_equal(uclock, tl_find(json_object_get(at, "tools"), "clock")))
		fail_msg("%s: the clock namespace differs from upstream's", c->name);
	fns = json_array_get(json_object_get(at, "tools"), 0);
	assert_string_equal(json_string_value(json_object_get(fns, "name")), "functions");
	fns = json_object_get(fns, "tools");
	assert_int_equal(json_array_size(fns), 3);
	exec = json_array_get(fns, 0);
	assert_string_equal(tl_name(exec), "exec");
	assert_true(json_equal(
		json_object_get(exec, "format"), json_object_get(tl_find(ufns, "exec"), "format")));
	assert_true(json_equal(json_array_get(fns, 1), tl_find(ufns, "wait")));
	assert_true(json_equal(json_array_get(fns, 2), tl_find(ufns, "request_user_input")));
	desc = json_string_value(json_object_get(exec, "description"));
	/* the same preamble, then a section per tool we run, each upstream's */
	p = strstr(udesc, "\n\n### `");
	assert_non_null(p);
	assert_int_equal(strncmp(desc, udesc, (size_t)(p - udesc) + 2), 0);
	for (size_t i = 0; ran[i] != NULL; i++) {
		a = tl_section(desc, ran[i]);
		b = tl_section(udesc, ran[i]);
		if ((a == NULL) != (b == NULL))
			fail_msg("%s: upstream %s %s, we %s", c->name,
				b != NULL ? "nests" : "does not nest", ran[i],
				a != NULL ? "do" : "do not");
		if (a != NULL && strcmp(a, b) != 0)
			fail_msg("%s: %s's section differs\n ours: %s\n upstream: %s", c->name,
				ran[i], a, b);
		free(a);
		free(b);
	}
	/* no section for a tool nothing here runs */
	for (size_t i = 0; not_run[i] != NULL; i++) {
		a = tl_section(desc, not_run[i]);
		if (a != NULL)
			fail_msg("%s: %s is nested, but nothing here runs it", c->name, not_run[i]);
	}
	/* and nothing offered directly: exec_command only through exec */
	a = json_dumps(fns, JSON_COMPACT);
	assert_null(strstr(a, "\"name\":\"exec_command\""));
	free(a);
}

static void
test_case(void **state)
{
	const struct tl_case *c = *state;
	json_t *ours = tl_our_body(c), *up = tl_upstream(c->name);

	assert_string_equal(json_string_value(json_object_get(up, "model")),
		c->model != NULL   ? c->model
			: c->known ? "gpt-6.1-sol"
				   : "mock-model");
	if (c->known)
		tl_check_code_mode(c, ours, up);
	else
		tl_check_fallback(c, json_object_get(ours, "tools"), up);
	json_decref(ours);
	json_decref(up);
}

/* [features] code_mode = false: a catalogue model gets the classic list. */
static void
test_code_mode_off(void **state)
{
	json_t *ours = tl_our_tools(&code_mode_off), *up = tl_upstream("default_model");

	(void)state;
	tl_check_classic(&code_mode_off, ours, up);
	json_decref(ours);
	json_decref(up);
}

/*
 * An MCP server in code mode (tests/fixtures/codemode/upstream/mcp.json, record_mcp.py): its
 * tools are deferred, not described in exec, whose resource tools' sections are upstream's;
 * the developer message names the server's namespace in upstream's words.
 */
static void
test_code_mode_mcp(void **state)
{
	static const char *const ran[] = {"exec_command", "write_stdin", "apply_patch",
		"list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource",
		"view_image", NULL};
	char *server = realpath("tests/fixtures/mcp/mcp_server.py", NULL);
	char *config =
		xasprintf("[mcp_servers.test]\ncommand = \"python3\"\nargs = [\"%s\"]", server);
	struct tl_case mcp = {"mcp", config, 1};
	json_t *up = json_load_file("tests/fixtures/codemode/upstream/mcp.json", 0, NULL);
	json_t *body, *dev, *part;
	const char *desc, *udesc, *want;
	char *a, *b;
	size_t i;
	int found = 0;

	(void)state;
	assert_non_null(up);
	body = tl_our_body(&mcp);
	udesc = json_string_value(json_object_get(
		tl_find(json_object_get(
				tl_find(json_object_get(
						json_object_get(up, "additional_tools"), "tools"),
					"functions"),
				"tools"),
			"exec"),
		"description"));
	desc = json_string_value(json_object_get(
		json_array_get(
			json_object_get(
				json_array_get(
					json_object_get(
						json_array_get(json_object_get(body, "input"), 0),
						"tools"),
					0),
				"tools"),
			0),
		"description"));
	assert_non_null(udesc);
	assert_non_null(desc);
	assert_null(strstr(desc, "mcp__test"));
	assert_null(strstr(udesc, "mcp__test"));
	for (i = 0; ran[i] != NULL; i++) {
		a = tl_section(desc, ran[i]);
		b = tl_section(udesc, ran[i]);
		assert_non_null(a);
		assert_non_null(b);
		assert_string_equal(a, b);
		free(a);
		free(b);
	}
	want = json_string_value(json_array_get(json_object_get(up, "deferred"), 0));
	assert_non_null(want);
	dev = json_object_get(json_array_get(json_object_get(body, "input"), 1), "content");
	json_array_foreach(dev, i, part)
	{
		found |= strcmp(json_string_value(json_object_get(part, "text")) ?: "", want) == 0;
	}
	assert_true(found);
	json_decref(body);
	json_decref(up);
	free(config);
	free(server);
}

/* [features] code_mode = true: a custom model gets code mode too. */
static void
test_code_mode_forced(void **state)
{
	static const struct tl_case forced = {
		"custom_model", "model = \"mock-model\"\n[features]\ncode_mode = true", 0};
	json_t *body = tl_our_body(&forced),
	       *at = json_array_get(json_object_get(body, "input"), 0);

	(void)state;
	assert_null(json_object_get(body, "tools"));
	assert_string_equal(json_string_value(json_object_get(at, "type")), "additional_tools");
	json_decref(body);
}

/* The case by name: no [tools] config, a custom model, and no update_plan. */
static void
test_no_update_plan_by_default(void **state)
{
	json_t *ours = tl_our_tools(&cases[2]);

	(void)state;
	assert_null(tl_find(ours, "update_plan"));
	assert_null(tl_find(ours, "apply_patch"));
	json_decref(ours);
}

int
main(void)
{
	struct CMUnitTest tests[sizeof cases / sizeof cases[0] + 4];
	size_t n = 0;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		tests[n++] = (struct CMUnitTest){.name = cases[i].name,
			.test_func = test_case,
			.initial_state = (void *)&cases[i]};
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_no_update_plan_by_default);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_code_mode_off);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_code_mode_forced);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_code_mode_mcp);
	return _cmocka_run_group_tests("tool_list", tests, n, NULL, NULL);
}
