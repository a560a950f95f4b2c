/*
 * MCP resources end to end: the real binary, the mock model and our MCP server
 * (tests/fixtures/mcp/mcp_server.py --resources N). What upstream 0.169 did with the same
 * server and script is recorded in tests/fixtures/mcp/upstream/resources.json and nores.json
 * (record.py): the three resource tools offered (byte for byte, after the shell tools), the
 * mcpToolCall items of their calls (server "codex" when none is named), what the model gets
 * back (the payload, upstream's error texts, no item for an unknown server or a missing
 * argument), every page of a listing of all servers, and mcpServerStatus/list's resources.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

#define FIXTURES "tests/fixtures/mcp/upstream/"
#define SERVER	 "tests/fixtures/mcp/mcp_server.py"

/* A call of the model without a namespace (the resource tools are plain functions). */
#define CALL(id, name, args)                                                                       \
	"{`type`:`response.output_item.done`,`item`:{`type`:`function_call`,`call_id`:`" id        \
	"`,`name`:`" name "`,`arguments`:`" args "`}}"
#define MSG(n)                                                                                     \
	"{`events`:[{`ev`:`created`,`id`:`resp-" n "`},{`ev`:`message`,`id`:`m" n                  \
	"`,`text`:`done`},{`ev`:`completed`,`id`:`resp-" n "`}]}"
#define SCRIPT(calls)                                                                              \
	"{`responses`:[{`events`:[{`ev`:`created`,`id`:`resp-0`}," calls                           \
	",{`ev`:`completed`,`id`:`resp-0`}]}," MSG("1") "],`repeat`:true}"
#define Q "\\`"

/* resources.json's calls (record.py's scenario `resources`) */
#define RESOURCES_SCRIPT                                                                           \
	SCRIPT(CALL("call-1", "list_mcp_resources", "{}") "," CALL("call-2", "list_mcp_resources", \
		"{" Q "server" Q ":" Q "test" Q "}") "," CALL("call-3", "list_mcp_resources",      \
		"{" Q "server" Q ":" Q "test" Q "," Q "cursor" Q ":" Q "2" Q                       \
		"}") "," CALL("call-4", "list_mcp_resource_templates", "{}") "," CALL("call-5",    \
		"list_mcp_resource_templates",                                                     \
		"{" Q "server" Q ":" Q "test" Q "}") "," CALL("call-6", "read_mcp_resource",       \
		"{" Q "server" Q ":" Q "test" Q "," Q "uri" Q ":" Q "test://r1" Q                  \
		"}") "," CALL("call-7", "read_mcp_resource",                                       \
		"{" Q "server" Q ":" Q "test" Q "," Q "uri" Q ":" Q "test://blob" Q                \
		"}") "," CALL("call-8", "read_mcp_resource",                                       \
		"{" Q "server" Q ":" Q "test" Q "," Q "uri" Q ":" Q "nope://x" Q                   \
		"}") "," CALL("call-9", "list_mcp_resources",                                      \
		"{" Q "cursor" Q ":" Q "2" Q "}") "," CALL("call-10", "read_mcp_resource",         \
		"{" Q "server" Q ":" Q "nosuch" Q "," Q "uri" Q ":" Q "x" Q                        \
		"}") "," CALL("call-11", "list_mcp_resources",                                     \
		"{" Q "server" Q ":" Q "nosuch" Q                                                  \
		"}") "," CALL("call-12", "read_mcp_resource", "{" Q "uri" Q ":" Q "x" Q "}"))

/* nores.json's calls: a server without resources */
#define NORES_SCRIPT                                                                               \
	SCRIPT(CALL("call-1", "list_mcp_resources", "{}") "," CALL("call-2", "list_mcp_resources", \
		"{" Q "server" Q ":" Q "test" Q "}") "," CALL("call-3",                            \
		"list_mcp_resource_templates",                                                     \
		"{" Q "server" Q ":" Q "test" Q "}") "," CALL("call-4", "read_mcp_resource",       \
		"{" Q "server" Q ":" Q "test" Q "," Q "uri" Q ":" Q "x" Q "}") "," CALL("call-5",  \
		"list_mcp_resources",                                                              \
		"{" Q "server" Q ":" Q "" Q "}") "," CALL("call-6", "read_mcp_resource",           \
		"{" Q "server" Q ":" Q "test" Q "," Q "uri" Q ":" Q "" Q "}"))

/* Our server as [mcp_servers.test] with more arguments (TOML array items, may be NULL). */
static void
res_start(struct tt *f, const char *script, const char *args)
{
	struct tt_opts o = {0};
	char path[PATH_MAX], *cfg, *s = tt_script(script);
	json_t *m;

	assert_non_null(realpath(SERVER, path));
	cfg = xasprintf("[mcp_servers.test]\ncommand = \"python3\"\nargs = [\"%s\"%s%s]\n", path,
		args != NULL ? ", " : "", args != NULL ? args : "");
	o.script = s;
	o.config_extra = cfg;
	o.experimental = 1;
	tt_start(f, &o);
	free(cfg);
	free(s);
	for (int i = 0; i < 2; i++) { /* starting, then ready */
		m = asc_wait_notification(
			f->c, "mcpServer/startupStatus/updated", asc_timeout(10000));
		assert_non_null(m);
		json_decref(m);
	}
}

static void
res_equal(const char *what, const json_t *want, const json_t *got)
{
	char *w, *g;

	if (json_equal((json_t *)want, (json_t *)got))
		return;
	w = json_dumps(want, JSON_SORT_KEYS | JSON_ENCODE_ANY);
	g = json_dumps(got, JSON_SORT_KEYS | JSON_ENCODE_ANY);
	fprintf(stderr, "%s differs\n want: %.3000s\n  got: %.3000s\n", what, w, g);
	free(w);
	free(g);
	fail();
}

/* An item without its times. */
static json_t *
res_norm(const json_t *it)
{
	json_t *c = json_deep_copy(it);

	json_object_del(c, "startedAtMs");
	json_object_del(c, "completedAtMs");
	json_object_del(c, "durationMs");
	return c;
}

/* The index of the tool `name` in a request body's tools, or -1. */
static int
res_tool_at(const json_t *body, const char *name)
{
	json_t *t;
	size_t i;

	json_array_foreach(json_object_get(body, "tools"), i, t)
	{
		if (strcmp(json_string_value(json_object_get(t, "name")) ?: "", name) == 0)
			return (int)i;
	}
	return -1;
}

/* One recorded scenario: tools offered, items (and only those), outputs as upstream's. */
static void
res_scenario(const char *name, const char *script, const char *args)
{
	char *path = xasprintf(FIXTURES "%s.json", name);
	json_t *want = json_load_file(path, 0, NULL), *msgs, *recs, *body, *w, *g, *n1, *n2, *it;
	struct tt f;
	size_t i, j;
	int at;

	assert_non_null(want);
	res_start(&f, script, args);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	recs = mm_records(&f.mm);
	assert_int_equal(json_array_size(recs), 2);
	body = tt_request_body(recs, 0);
	/* the three tools, byte for byte and in upstream's place: after the shell tools */
	at = res_tool_at(body, "list_mcp_resources");
	assert_true(at > 0);
	assert_int_equal(at, res_tool_at(body, "write_stdin") + 1);
	for (i = 0; i < 3; i++)
		res_equal("a resource tool as offered",
			json_array_get(json_object_get(want, "tools"), i),
			json_array_get(json_object_get(body, "tools"), (size_t)at + i));
	/* the items: those upstream completed, no others */
	for (j = 0; tt_item(msgs, "mcpToolCall", j) != NULL; j++)
		;
	assert_int_equal(j, json_array_size(json_object_get(want, "items")));
	json_array_foreach(json_object_get(want, "items"), i, w)
	{
		for (j = 0; (g = tt_item(msgs, "mcpToolCall", j)) != NULL; j++)
			if (json_equal(json_object_get(g, "id"), json_object_get(w, "id")))
				break;
		assert_non_null(g);
		n1 = res_norm(w);
		n2 = res_norm(g);
		res_equal("the mcpToolCall item", n1, n2);
		json_decref(n1);
		json_decref(n2);
	}
	/* what the model got back, for every call */
	body = tt_request_body(recs, 1);
	json_array_foreach(json_object_get(want, "outputs"), i, w)
	{
		g = NULL;
		json_array_foreach(json_object_get(body, "input"), j, it)
		{
			if (json_equal(json_object_get(it, "call_id"),
				    json_object_get(w, "call_id")) &&
				strcmp(json_string_value(json_object_get(it, "type")) ?: "",
					"function_call_output") == 0)
				g = it;
		}
		assert_non_null(g);
		res_equal("the function_call_output", json_object_get(w, "output"),
			json_object_get(g, "output"));
	}
	json_decref(recs);
	json_decref(msgs);
	json_decref(want);
	free(path);
	tt_stop(&f);
}

static void
test_resource_tools_as_upstream(void **state)
{
	(void)state;
	res_scenario("resources", RESOURCES_SCRIPT, "\"--resources\", \"3\", \"--page\", \"2\"");
}

static void
test_server_without_resources_as_upstream(void **state)
{
	(void)state;
	res_scenario("nores", NORES_SCRIPT, NULL);
}

/* mcpServerStatus/list shows every page of the resources and templates, with or without a
 * thread, as upstream listed them (recorded without one). */
static void
test_status_lists_resources(void **state)
{
	struct tt f;
	char *path = xasprintf(FIXTURES "resources.json");
	json_t *want = json_load_file(path, 0, NULL), *w, *r, *p, *e;

	(void)state;
	assert_non_null(want);
	w = json_array_get(json_object_get(json_object_get(want, "status"), "data"), 0);
	res_start(&f, "{`responses`:[" MSG("0") "],`repeat`:true}",
		"\"--resources\", \"3\", \"--page\", \"2\"");
	for (int k = 0; k < 2; k++) {
		p = k == 0 ? json_object() : json_pack("{s:s}", "threadId", f.thread_id);
		r = tt_call(&f, "mcpServerStatus/list", p);
		e = json_array_get(json_object_get(json_object_get(r, "result"), "data"), 0);
		assert_non_null(e);
		res_equal("resources", json_object_get(w, "resources"),
			json_object_get(e, "resources"));
		res_equal("resourceTemplates", json_object_get(w, "resourceTemplates"),
			json_object_get(e, "resourceTemplates"));
		json_decref(r);
	}
	json_decref(want);
	free(path);
	tt_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resource_tools_as_upstream),
		cmocka_unit_test(test_server_without_resources_as_upstream),
		cmocka_unit_test(test_status_lists_resources),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
