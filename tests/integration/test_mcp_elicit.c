/*
 * MCP approvals and elicitations end to end: the real binary, the mock model and our MCP server
 * (tests/fixtures/mcp/mcp_server.py --elicit). What upstream 0.169 did in each case is recorded
 * in tests/fixtures/mcp/upstream/elicit.json (record_elicit.py): the mcpServer/elicitation/request
 * params (a tool's approval by its annotations, its approval_mode and the approval policy; a
 * server's elicitation/create forwarded), serverRequest/resolved, the mcpToolCall items, what
 * the model got back and what the MCP server was answered, for accept, decline, cancel, an
 * error answer (-32601: declined) and an interrupt while the client is asked. Where upstream
 * leaves the interrupted item started, ours completes (failed, "cancelled").
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

#define FIXTURE "tests/fixtures/mcp/upstream/elicit.json"
#define SERVER	"tests/fixtures/mcp/mcp_server.py"

/* How the client answers in a case: the recorded answer, or an interrupt. */
struct el_case {
	struct tt *f;
	const json_t *rec;
	int asked;
};

static json_t *
el_answer(void *arg, const json_t *request)
{
	struct el_case *c = arg;
	const json_t *a = json_array_get(json_object_get(c->rec, "answers"), 0);
	const json_t *p = json_object_get(request, "params");
	json_t *reply;
	char *line;

	c->asked++;
	assert_string_equal(json_string_value(json_object_get(request, "method")),
		"mcpServer/elicitation/request");
	assert_string_equal(json_string_value(json_object_get(p, "threadId")), c->f->thread_id);
	assert_non_null(json_string_value(json_object_get(p, "turnId")));
	if (a == NULL) { /* the recording interrupted the turn instead */
		asc_request(c->f->c, "turn/interrupt",
			json_pack("{s:s, s:O}", "threadId", c->f->thread_id, "turnId",
				json_object_get(p, "turnId")));
		return TT_NO_ANSWER;
	}
	if (json_object_get(a, "error") != NULL) { /* upstream's exact error answer */
		reply = json_pack("{s:O, s:O}", "id", json_object_get(request, "id"), "error",
			json_object_get(a, "error"));
		line = json_dumps(reply, JSON_COMPACT);
		assert_int_equal(asc_send_line(c->f->c, line), 0);
		free(line);
		json_decref(reply);
		return TT_NO_ANSWER;
	}
	return json_deep_copy(json_object_get(a, "result"));
}

static void
el_equal(const char *name, const char *what, const json_t *want, const json_t *got)
{
	char *w, *g;

	if (json_equal((json_t *)want, (json_t *)got))
		return;
	w = json_dumps(want, JSON_SORT_KEYS | JSON_ENCODE_ANY);
	g = json_dumps(got, JSON_SORT_KEYS | JSON_ENCODE_ANY);
	fprintf(stderr, "%s: %s differs\n want: %.2000s\n  got: %.2000s\n", name, what, w, g);
	free(w);
	free(g);
	fail();
}

/* A copy without the keys that differ by run (ids, times, wall time). */
static json_t *
el_norm(const json_t *v)
{
	json_t *c = json_deep_copy(v), *o, *p;
	static const char *const drop[] = {
		"startedAtMs", "completedAtMs", "durationMs", "threadId", "turnId", "id"};
	size_t i;

	for (i = 0; i < sizeof drop / sizeof *drop; i++)
		json_object_del(c, drop[i]);
	json_object_del(json_object_get(c, "params"), "threadId");
	json_object_del(json_object_get(c, "params"), "turnId");
	json_array_foreach(json_object_get(c, "output"), i, p)
	{
		o = json_object_get(p, "text");
		if (json_is_string(o) && strncmp(json_string_value(o), "Wall time: ", 11) == 0)
			json_string_set(o, "W");
	}
	return c;
}

/* The messages the MCP server got after tools/list: the tools/call's name and what it was
 * answered (the _meta of tools/call differs from upstream's: not compared). */
static json_t *
el_mcp(const json_t *msgs)
{
	json_t *out = json_array(), *m;
	size_t i;

	json_array_foreach(msgs, i, m)
	{
		const char *meth = json_string_value(json_object_get(m, "method"));

		if (meth != NULL && strcmp(meth, "tools/call") == 0)
			json_array_append_new(out,
				json_pack("{s:s, s:O}", "call",
					json_string_value(json_object_get(
						json_object_get(m, "params"), "name")),
					"arguments",
					json_object_get(
						json_object_get(m, "params"), "arguments")));
		else if (meth != NULL && strcmp(meth, "notifications/cancelled") == 0)
			json_array_append_new(out, json_pack("{s:s}", "cancelled", "yes"));
		else if (meth == NULL && json_object_get(m, "result") != NULL)
			json_array_append_new(
				out, json_pack("{s:O}", "answered", json_object_get(m, "result")));
	}
	return out;
}

/* The MCP server's log: every message it received (new reference). */
static json_t *
el_log(const char *path)
{
	json_t *a = json_array(), *m;
	char *line = NULL;
	size_t cap = 0;
	FILE *fp = fopen(path, "r");

	assert_non_null(fp);
	while (getline(&line, &cap, fp) > 0)
		if ((m = json_loads(line, 0, NULL)) != NULL)
			json_array_append_new(a, m);
	fclose(fp);
	free(line);
	return a;
}

static void
el_run(const char *name, const json_t *rec)
{
	const char *tool = json_string_value(json_object_get(rec, "tool"));
	const json_t *started = json_array_get(json_object_get(rec, "started"), 0);
	struct tt f;
	struct tt_opts o = {0};
	struct el_case c = {&f, rec, 0};
	char path[PATH_MAX], *cfg, *script, *args, *log, *extra = NULL;
	json_t *msgs, *recs, *body, *w, *g, *got, *n1, *n2, *it;
	size_t i, j;

	assert_non_null(realpath(SERVER, path));
	/* the case's extra TOML: a tool's approval_mode, as record_elicit.py writes it */
	if (strstr(name, "prompt_mode") != NULL)
		extra = xasprintf(
			"[mcp_servers.test.tools.%s]\napproval_mode = \"prompt\"\n", tool);
	else if (strstr(name, "approve_mode") != NULL)
		extra = xasprintf(
			"[mcp_servers.test.tools.%s]\napproval_mode = \"approve\"\n", tool);
	log = xasprintf("/tmp/mcp_elicit.%d.log", (int)getpid());
	unlink(log);
	cfg = xasprintf("[mcp_servers.test]\ncommand = \"python3\"\nargs = [\"%s\", \"--elicit\", "
			"\"--log\", \"%s\"]\n%s",
		path, log, extra != NULL ? extra : "");
	/* the recording's call, then a message */
	args = json_dumps(json_object_get(started, "arguments"), JSON_COMPACT);
	w = json_pack("{s:[{s:[{s:s, s:s}, {s:s, s:{s:s, s:s, s:s, s:s, s:s}}, {s:s, s:s}]},"
		      " {s:[{s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s}]}], s:b}",
		"responses", "events", "ev", "created", "id", "resp-0", "type",
		"response.output_item.done", "item", "type", "function_call", "call_id", "call-1",
		"name", tool, "namespace", "mcp__test", "arguments", args, "ev", "completed", "id",
		"resp-0", "events", "ev", "created", "id", "resp-1", "ev", "message", "id", "m1",
		"text", "done", "ev", "completed", "id", "resp-1", "repeat", 1);
	script = json_dumps(w, JSON_COMPACT);
	json_decref(w);
	free(args);
	o.script = script;
	o.config_extra = cfg;
	o.approval_policy = json_string_value(json_object_get(rec, "policy"));
	o.experimental = 1;
	tt_start(&f, &o);
	for (int k = 0; k < 2; k++)
		json_decref(asc_wait_notification(
			f.c, "mcpServer/startupStatus/updated", asc_timeout(10000)));
	msgs = tt_turn(&f, "hi", NULL, el_answer, &c);
	/* the questions, as upstream asked them */
	assert_int_equal(c.asked, json_array_size(json_object_get(rec, "requests")));
	i = 0;
	json_array_foreach(msgs, j, it)
	{
		if (json_object_get(it, "method") == NULL || json_object_get(it, "id") == NULL)
			continue;
		n1 = el_norm(json_array_get(json_object_get(rec, "requests"), i++));
		n2 = json_pack("{s:O, s:O}", "method", json_object_get(it, "method"), "params",
			json_object_get(it, "params"));
		got = el_norm(n2);
		el_equal(name, "the request", n1, got);
		json_decref(n1);
		json_decref(n2);
		json_decref(got);
	}
	assert_int_equal(i, json_array_size(json_object_get(rec, "requests")));
	assert_int_equal(tt_count(msgs, "serverRequest/resolved"),
		json_array_size(json_object_get(rec, "resolved")));
	/* the items as upstream's; an interrupted one completes here (upstream leaves it) */
	it = tt_item(msgs, "mcpToolCall", 0);
	assert_non_null(it);
	if (json_array_size(json_object_get(rec, "completed")) == 0) {
		assert_string_equal(json_string_value(json_object_get(it, "status")), "failed");
	} else {
		n1 = el_norm(json_array_get(json_object_get(rec, "completed"), 0));
		n2 = el_norm(it);
		el_equal(name, "the item", n1, n2);
		json_decref(n1);
		json_decref(n2);
	}
	/* what the model got back */
	recs = mm_records(&f.mm);
	body = tt_request_body(recs, json_array_size(recs) - 1);
	json_array_foreach(json_object_get(rec, "outputs"), i, w)
	{
		g = NULL;
		json_array_foreach(json_object_get(body, "input"), j, it)
		{
			if (strcmp(json_string_value(json_object_get(it, "type")) ?: "",
				    "function_call_output") == 0)
				g = it;
		}
		assert_non_null(g);
		n1 = el_norm(w);
		n2 = el_norm(g);
		el_equal(name, "the function_call_output", n1, n2);
		json_decref(n1);
		json_decref(n2);
	}
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
	/* what the MCP server got: the call (or none) and the answer to its elicitation */
	n1 = el_mcp(json_object_get(rec, "mcp"));
	w = el_log(log);
	n2 = el_mcp(w);
	/* the log holds initialize..tools/list first: el_mcp keeps only the rest */
	el_equal(name, "what the MCP server got", n1, n2);
	json_decref(w);
	json_decref(n1);
	json_decref(n2);
	unlink(log);
	free(log);
	free(cfg);
	free(script);
	free(extra);
}

static void
test_elicitations_as_upstream(void **state)
{
	json_t *all = json_load_file(FIXTURE, 0, NULL), *rec;
	const char *name;

	(void)state;
	assert_non_null(all);
	json_object_foreach(all, name, rec)
	{
		fprintf(stderr, "case %s\n", name);
		el_run(name, rec);
	}
	json_decref(all);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elicitations_as_upstream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
