/*
 * An MCP tool call's approval remembered, end to end (the real binary, our MCP server in its
 * --elicit mode): the client accepts with `_meta.persist` "session" and the thread's later
 * calls of that tool are not asked again (another tool still is; a tool whose approval_mode is
 * "prompt" always is), as upstream's session store of approved tools; "always" also writes
 * `approval_mode = "approve"` under the server's table of config.toml, as upstream persists it,
 * so a new thread runs the tool without asking.
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
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

#define SERVER "tests/fixtures/mcp/mcp_server.py"
#define CALL(id, name)                                                                             \
	"{`type`:`response.output_item.done`,`item`:{`type`:`function_call`,`call_id`:`" id        \
	"`,`name`:`" name "`,`namespace`:`mcp__test`,`arguments`:`{}`}}"
#define RESP(n, calls)                                                                             \
	"{`events`:[{`ev`:`created`,`id`:`resp-" n "`}," calls ",{`ev`:`completed`,`id`:`resp-" n  \
	"`}]}"
#define MSG(n)                                                                                     \
	"{`events`:[{`ev`:`created`,`id`:`resp-" n "`},{`ev`:`message`,`id`:`m" n                  \
	"`,`text`:`done`},{`ev`:`completed`,`id`:`resp-" n "`}]}"

/* Turn 1 calls write; turn 2 write again, destructive and closed; turn 3 write. */
#define SCRIPT                                                                                     \
	"{`responses`:[" RESP("0", CALL("c1", "write")) "," MSG("1") "," RESP("2",                 \
		CALL("c2", "write") "," CALL("c3", "destructive") "," CALL(                        \
			"c4", "closed")) "," MSG("3") "," RESP("4",                                \
		CALL("c5", "write")) "," MSG("5") "]}"

/* The questions asked (their _meta.tool_name, in order) and the persist to answer with. */
struct ps {
	json_t *asked;
	const char *persist;
};

static json_t *
ps_answer(void *arg, const json_t *request)
{
	struct ps *p = arg;
	const json_t *meta = json_object_get(json_object_get(request, "params"), "_meta");
	const char *tool = json_string_value(json_object_get(meta, "tool_name"));

	assert_non_null(tool);
	json_array_append_new(p->asked, json_string(tool));
	if (strcmp(tool, "write") == 0)
		return json_pack("{s:s, s:n, s:{s:s}}", "action", "accept", "content", "_meta",
			"persist", p->persist);
	return json_pack("{s:s, s:n}", "action", "accept", "content");
}

/* The questions of one turn, as "a,b" (heap); every mcpToolCall of it completed. */
static char *
ps_turn(struct tt *f, struct ps *p)
{
	json_t *msgs, *it;
	char *s = xstrdup(""), *t;
	size_t i;

	json_array_clear(p->asked);
	msgs = tt_turn(f, "hi", NULL, ps_answer, p);
	for (i = 0; (it = tt_item(msgs, "mcpToolCall", i)) != NULL; i++)
		assert_string_equal(json_string_value(json_object_get(it, "status")), "completed");
	json_decref(msgs);
	json_array_foreach(p->asked, i, it)
	{
		t = xasprintf("%s%s%s", s, i > 0 ? "," : "", json_string_value(it));
		free(s);
		s = t;
	}
	return s;
}

/* A daemon with [mcp_servers.test] (closed's approval_mode "prompt"), the server ready. */
static void
ps_start(struct tt *f, char **script)
{
	struct tt_opts o = {0};
	char path[PATH_MAX], *cfg;

	assert_non_null(realpath(SERVER, path));
	cfg = xasprintf("[mcp_servers.test]\ncommand = \"python3\"\nargs = [\"%s\", \"--elicit\"]\n"
			"[mcp_servers.test.tools.closed]\napproval_mode = \"prompt\"\n",
		path);
	o.script = *script = tt_script(SCRIPT);
	o.config_extra = cfg;
	o.approval_policy = "on-request";
	o.experimental = 1;
	tt_start(f, &o);
	free(cfg);
	for (int k = 0; k < 2; k++)
		json_decref(asc_wait_notification(
			f->c, "mcpServer/startupStatus/updated", asc_timeout(10000)));
}

static void
test_persist_session(void **state)
{
	struct tt f;
	struct ps p = {json_array(), "session"};
	char *script, *q, *cfg, *path;

	(void)state;
	ps_start(&f, &script);
	q = ps_turn(&f, &p);
	assert_string_equal(q, "write");
	free(q);
	/* write is remembered; destructive is another tool; closed is always asked (prompt) */
	q = ps_turn(&f, &p);
	assert_string_equal(q, "destructive,closed");
	free(q);
	/* "session" writes nothing */
	path = xasprintf("%s/config.toml", f.home);
	cfg = tt_read(path);
	assert_non_null(cfg);
	assert_null(strstr(cfg, "approve"));
	free(cfg);
	free(path);
	json_decref(p.asked);
	free(script);
	tt_stop(&f);
}

static void
test_persist_always(void **state)
{
	struct tt f;
	struct ps p = {json_array(), "always"};
	char *script, *q, *cfg, *path;
	json_t *r;

	(void)state;
	ps_start(&f, &script);
	q = ps_turn(&f, &p);
	assert_string_equal(q, "write");
	free(q);
	/* written where upstream writes it: the user's config.toml defines the server */
	path = xasprintf("%s/config.toml", f.home);
	cfg = tt_read(path);
	assert_non_null(cfg);
	assert_non_null(strstr(cfg, "[mcp_servers.test.tools.write]\napproval_mode = \"approve\""));
	free(cfg);
	free(path);
	q = ps_turn(&f, &p);
	assert_string_equal(q, "destructive,closed");
	free(q);
	/* a new thread takes the approval from config.toml: write runs without a question */
	r = tt_call(&f, "thread/start",
		json_pack("{s:s, s:s, s:s}", "cwd", f.workspace, "approvalPolicy", "on-request",
			"sandbox", "danger-full-access"));
	free(f.thread_id);
	f.thread_id = xstrdup(json_string_value(
		json_object_get(json_object_get(json_object_get(r, "result"), "thread"), "id")));
	json_decref(r);
	for (int k = 0; k < 2; k++)
		json_decref(asc_wait_notification(
			f.c, "mcpServer/startupStatus/updated", asc_timeout(10000)));
	q = ps_turn(&f, &p);
	assert_string_equal(q, "");
	free(q);
	json_decref(p.asked);
	free(script);
	tt_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_persist_session),
		cmocka_unit_test(test_persist_always),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
