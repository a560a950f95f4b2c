/*
 * The tool hooks beyond exec_command's PreToolUse and PostToolUse, replaying upstream 0.169's
 * recording tests/fixtures/hooks/upstream/tools.json (record_tools.py; upstream is not needed
 * here): per case the same hook handlers (answering as recorded) and the same call, then the
 * hook runs (event, status, entries), the model's last request after the user's message (the
 * call, the contexts, the call's answer; wall times aside), the hooks' stdin (tool_name,
 * tool_input, tool_response, tool_use_id) and whether the tool's effect happened must be
 * upstream's, and around an MCP call the order of the hooks, its item and the user's approval
 * request (the client declines, as the recording's). Covers the apply_patch tool, MCP tools,
 * PostToolUse blocks, the matchers and an MCP call's PermissionRequest (deny, allow, none; and
 * a call made twice whose first elicitation the client accepts for the session: the second
 * runs no PermissionRequest, even a denying one); and (ours, not recorded) a turn/interrupt
 * while that PermissionRequest hook runs.
 * (Not replayed: "shell_command" and "shell", which 0.169 no longer runs while we do.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "mcp_util.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

#define TOOLS_JSON "tests/fixtures/hooks/upstream/tools.json"
static const char *const events[] = {"PreToolUse", "PermissionRequest", "PostToolUse"};

static void
hm_write(const char *dir, const char *kind, const char *event, const char *text)
{
	char *path = xasprintf("%s/%s_%s", dir, kind, event);
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

static void
hm_clean(const char *dir)
{
	const char *kinds[] = {"in", "out", "err"};
	char *path;
	size_t i, k;

	for (i = 0; i < 3; i++)
		for (k = 0; k < 3; k++) {
			path = xasprintf("%s/%s_%s", dir, kinds[i], events[k]);
			unlink(path);
			free(path);
		}
	rmdir(dir);
}

static json_t *
hm_case(const char *name)
{
	json_t *all = json_load_file(TOOLS_JSON, 0, NULL), *c, *found = NULL;
	size_t i;

	assert_non_null(all);
	json_array_foreach(json_object_get(all, "cases"), i,
		c) if (strcmp(json_string_value(json_object_get(c, "name")), name) == 0) found =
		json_incref(c);
	json_decref(all);
	assert_non_null(found);
	return found;
}

/* A text with its wall times as "<n>" (heap): they differ from run to run. */
static char *
hm_norm(const char *s)
{
	char *out = xstrdup(s != NULL ? s : ""), *p = out, *end;

	while ((p = strstr(p, "Wall time: ")) != NULL && (end = strstr(p, " seconds")) != NULL) {
		p += strlen("Wall time: ");
		memmove(p + 3, end, strlen(end) + 1);
		memcpy(p, "<n>", 3);
	}
	return out;
}

/* An input item as compared: its type, call id, role, texts and output (new reference). */
static json_t *
hm_item(const json_t *it)
{
	json_t *o = json_object(), *texts = json_array(), *v;
	const json_t *out = json_object_get(it, "output"), *c;
	const char *keys[] = {"type", "call_id", "role", "name", "namespace", "input"};
	size_t i;
	char *n;

	for (i = 0; i < sizeof keys / sizeof *keys; i++)
		if ((v = json_object_get(it, keys[i])) != NULL)
			json_object_set(o, keys[i], v);
	json_array_foreach(json_object_get(it, "content"), i, c)
		json_array_append(texts, json_object_get(c, "text"));
	if (json_is_string(out))
		json_array_append_new(texts, json_string(n = hm_norm(json_string_value(out))));
	else
		n = NULL;
	free(n);
	json_array_foreach(out, i, c)
	{
		json_array_append_new(texts,
			json_string(n = hm_norm(json_string_value(json_object_get(c, "text")))));
		free(n);
	}
	json_object_set_new(o, "texts", texts);
	return o;
}

/* A hook's stdin as compared: the tool's fields, wall times aside (new reference). */
static json_t *
hm_stdin(const json_t *in)
{
	const json_t *r = json_object_get(in, "tool_response");
	char *n = json_is_string(r) ? hm_norm(json_string_value(r)) : NULL;
	json_t *o = json_pack("{s:O?, s:O?, s:O?, s:O?}", "tool_name",
		json_object_get(in, "tool_name"), "tool_input", json_object_get(in, "tool_input"),
		"tool_response", r, "tool_use_id", json_object_get(in, "tool_use_id"));

	if (n != NULL)
		json_object_set_new(o, "tool_response", json_string(n));
	free(n);
	return o;
}

static void
hm_equal(const char *what, const json_t *want, const json_t *got)
{
	char *w, *g;

	if (json_equal(want, got))
		return;
	w = json_dumps(want, JSON_SORT_KEYS);
	g = json_dumps(got, JSON_SORT_KEYS);
	fail_msg("%s: upstream %s, here %s", what, w, g);
}

/* The recording's client declines every request it is sent. */
static json_t *
hm_decline(void *arg, const json_t *req)
{
	(void)arg;
	if (strcmp(json_string_value(json_object_get(req, "method")) ?: "",
		    "mcpServer/elicitation/request") == 0)
		return json_pack("{s:s, s:n, s:n}", "action", "decline", "content", "_meta");
	return json_pack("{s:s}", "decision", "decline");
}

/*
 * The mcp_perm_session cases' client: it accepts the first call's elicitation for the
 * session; in "mcp_perm_session_deny" the PermissionRequest hook then turns to denying (arg:
 * the hooks' folder), as the recording's did.
 */
static json_t *
hm_session(void *arg, const json_t *req)
{
	const char *dir = arg;

	if (strcmp(json_string_value(json_object_get(req, "method")) ?: "",
		    "mcpServer/elicitation/request") != 0)
		return json_pack("{s:s}", "decision", "decline");
	if (dir != NULL)
		hm_write(dir, "out", "PermissionRequest",
			"{\"hookSpecificOutput\": {\"hookEventName\": \"PermissionRequest\", "
			"\"decision\": {\"behavior\": \"deny\", \"message\": \"NO-PERM\"}}}");
	return json_pack("{s:s, s:{}, s:{s:s}}", "action", "accept", "content", "_meta", "persist",
		"session");
}

/*
 * Append the steps of a turn around its MCP call, in order: each hook run's event and
 * status, the mcpToolCall item started and completed (status, error), the user asked. ev: a
 * recorded event ({method, run|item}) or one of our messages ({method, params}).
 */
static void
hm_step(json_t *steps, const json_t *ev)
{
	const char *m = json_string_value(json_object_get(ev, "method")) ?: "";
	const json_t *p = json_object_get(ev, "params") ?: ev;
	const json_t *run = json_object_get(p, "run"), *item = json_object_get(p, "item");
	const char *id = json_string_value(json_object_get(run, "id"));

	if (strcmp(m, "hook/completed") == 0 && id != NULL && strstr(id, ":call-") != NULL)
		json_array_append_new(steps,
			json_sprintf("%s %s %s",
				json_string_value(json_object_get(run, "eventName")),
				json_string_value(json_object_get(run, "status")),
				strstr(id, ":call-") + 1));
	else if (strncmp(m, "item/", 5) == 0 &&
		strcmp(json_string_value(json_object_get(item, "type")) ?: "", "mcpToolCall") == 0)
		json_array_append_new(steps,
			json_sprintf("%s %s %s", m,
				json_string_value(json_object_get(item, "status")),
				json_string_value(
					json_object_get(json_object_get(item, "error"), "message"))
					?: "-"));
	else if (strcmp(m, "mcpServer/elicitation/request") == 0)
		json_array_append_new(steps, json_string(m));
}

static void
hm_replay(const char *name)
{
	json_t *c = hm_case(name), *msgs, *recs, *want, *got, *in;
	const json_t *tool = json_object_get(c, "tool"), *ev, *w, *h, *body, *items;
	const char *matcher = json_string_value(json_object_get(c, "matcher"));
	char dir[] = "/tmp/hk-more-XXXXXX", *cfg, *t, *path, *script, *s;
	char server[PATH_MAX];
	struct tt_opts o = {0};
	struct tt f;
	size_t i, k = 0, first;
	int twice = strncmp(name, "mcp_perm_session", 16) == 0;

	assert_non_null(mkdtemp(dir));
	cfg = xstrdup("");
	for (k = 0; k < 3; k++) {
		h = json_object_get(json_object_get(c, "hooks"), events[k]);
		hm_write(dir, "out", events[k],
			json_string_value(json_object_get(h, "stdout")) ?: "");
		hm_write(dir, "err", events[k],
			json_string_value(json_object_get(h, "stderr")) ?: "");
		t = xasprintf("%s[[hooks.%s]]\nmatcher = \"%s\"\n[[hooks.%s.hooks]]\ntype = "
			      "\"command\"\ncommand = 'cat | tr -d \"\\\\n\" >> %s/in_%s; echo >> "
			      "%s/in_%s; cat %s/out_%s; cat %s/err_%s >&2; exit %d'\ntimeout = 5\n",
			cfg, events[k], matcher, events[k], dir, events[k], dir, events[k], dir,
			events[k], dir, events[k],
			(int)json_integer_value(json_object_get(h, "exit")));
		free(cfg);
		cfg = t;
	}
	s = json_dumps(tool, JSON_COMPACT);
	if (twice) {
		/* the same call again as call-2, in a response of its own */
		json_t *again = json_deep_copy(tool);

		json_object_set_new(
			json_object_get(again, "item"), "call_id", json_string("call-2"));
		t = json_dumps(again, JSON_COMPACT);
		json_decref(again);
		script = xasprintf(
			"{\"responses\": [{\"events\": [{\"ev\": \"created\"}, %s, {\"ev\": "
			"\"completed\"}]}, {\"events\": [{\"ev\": \"created\"}, %s, {\"ev\": "
			"\"completed\"}]}, {\"events\": [{\"ev\": \"created\"}, {\"ev\": "
			"\"message\", \"id\": \"m1\", \"text\": \"done\"}, {\"ev\": "
			"\"completed\"}]}], \"repeat\": true}",
			s, t);
		free(t);
	} else
		script = xasprintf(
			"{\"responses\": [{\"events\": [{\"ev\": \"created\"}, %s, {\"ev\": "
			"\"completed\"}]}, {\"events\": [{\"ev\": \"created\"}, {\"ev\": "
			"\"message\", \"id\": \"m1\", \"text\": \"done\"}, {\"ev\": "
			"\"completed\"}]}], \"repeat\": true}",
			s);
	free(s);
	/* bypass_hook_trust first: a top-level key, before any table */
	t = xasprintf("bypass_hook_trust = true\n%s[mcp_servers.test]\ncommand = \"python3\"\nargs "
		      "= [\"%s\"]\n",
		cfg, realpath(SERVER, server));
	free(cfg);
	cfg = t;
	o.script = s = tt_script(script);
	o.config_extra = cfg;
	o.approval_policy = json_string_value(
		json_object_get(json_object_get(c, "thread_start"), "approvalPolicy"));
	o.sandbox =
		json_string_value(json_object_get(json_object_get(c, "thread_start"), "sandbox"));
	tt_start(&f, &o);
	free(s);
	mcp_ready(&f);
	msgs = twice ? tt_turn(&f, "hi", NULL, hm_session,
			       strcmp(name, "mcp_perm_session_deny") == 0 ? dir : NULL)
		     : tt_turn(&f, "hi", NULL, hm_decline, NULL);

	/* around the MCP call: the hooks, its item, the user asked (or not), in order */
	want = json_array();
	got = json_array();
	json_array_foreach(json_object_get(c, "events"), i, ev) hm_step(want, ev);
	json_array_foreach(msgs, i, ev) hm_step(got, ev);
	hm_equal("the steps around the call", want, got);
	json_decref(want);
	json_decref(got);

	/* the hook runs: event, status, entries, the run id's call */
	want = json_array();
	got = json_array();
	json_array_foreach(json_object_get(c, "events"), i,
		ev) if (strcmp(json_string_value(json_object_get(ev, "method")),
				"hook/completed") == 0) json_array_append_new(want,
		json_pack("{s:O, s:O, s:O}", "event",
			json_object_get(json_object_get(ev, "run"), "eventName"), "status",
			json_object_get(json_object_get(ev, "run"), "status"), "entries",
			json_object_get(json_object_get(ev, "run"), "entries")));
	json_array_foreach(msgs, i, ev)
	{
		const json_t *run = json_object_get(json_object_get(ev, "params"), "run");

		if (strcmp(json_string_value(json_object_get(ev, "method")) ?: "",
			    "hook/completed") == 0 &&
			strstr(json_string_value(json_object_get(run, "id")), ":call-") != NULL)
			json_array_append_new(got,
				json_pack("{s:O, s:O, s:O}", "event",
					json_object_get(run, "eventName"), "status",
					json_object_get(run, "status"), "entries",
					json_object_get(run, "entries")));
	}
	hm_equal("the tool hooks' runs", want, got);
	json_decref(want);
	json_decref(got);

	/* the last model request, after the user's message */
	recs = mm_records(&f.mm);
	body = tt_request_body(recs, json_array_size(recs) - 1);
	items = json_array_get(json_object_get(c, "requests"),
		json_array_size(json_object_get(c, "requests")) - 1);
	want = json_array();
	got = json_array();
	json_array_foreach(items, i, w) if (i > 0) json_array_append_new(want, hm_item(w));
	for (first = 0; first < json_array_size(json_object_get(body, "input")); first++)
		if (strcmp(json_string_value(json_object_get(
				   json_array_get(json_object_get(body, "input"), first), "role"))
				    ?: "",
			    "user") == 0)
			k = first;
	json_array_foreach(json_object_get(body, "input"), i, w) if (i > k)
		json_array_append_new(got, hm_item(w));
	hm_equal("the model's last request", want, got);
	json_decref(want);
	json_decref(got);
	json_decref(recs);
	json_decref(msgs);

	/* the hooks' stdin */
	for (k = 0; k < 3; k++) {
		const json_t *wl = json_object_get(json_object_get(c, "stdin"), events[k]);

		path = xasprintf("%s/in_%s", dir, events[k]);
		t = tt_read(path);
		free(path);
		want = json_array();
		got = json_array();
		json_array_foreach(wl, i, w) json_array_append_new(want, hm_stdin(w));
		for (s = t; s != NULL && *s != '\0';
			s = strchr(s, '\n') != NULL ? strchr(s, '\n') + 1 : NULL) {
			if (*s == '\n')
				continue;
			in = json_loadb(s, strcspn(s, "\n"), 0, NULL);
			assert_non_null(in);
			json_array_append_new(got, hm_stdin(in));
			json_decref(in);
		}
		free(t);
		hm_equal(events[k], want, got);
		json_decref(want);
		json_decref(got);
	}
	path = xasprintf("%s/made-by-tool", f.workspace);
	assert_int_equal(access(path, F_OK) == 0, json_is_true(json_object_get(c, "file_made")));
	free(path);
	tt_stop(&f);
	hm_clean(dir);
	free(cfg);
	free(script);
	json_decref(c);
}

/* How many of msgs are item/started (or item/completed: done) of an mcpToolCall. */
static size_t
hm_mcp_items(const json_t *msgs, int done)
{
	const json_t *m;
	size_t i, n = 0;

	json_array_foreach(msgs, i, m)
	{
		if (strcmp(json_string_value(json_object_get(m, "method")) ?: "",
			    done ? "item/completed" : "item/started") == 0 &&
			strcmp(mcp_msg_item_type(m), "mcpToolCall") == 0)
			n++;
	}
	return n;
}

/*
 * turn/interrupt while an MCP call's PermissionRequest hook sleeps (not recorded: our
 * invariants). The interrupt is answered, the turn completes interrupted once, the call's item
 * completes once, the hook's process group dies (its pid gone, the marker it would write after
 * its sleep never appears), no elicitation is sent, tools/call never reaches the server, and
 * the next turn works.
 */
static void
test_mcp_perm_interrupt(void **state)
{
	char dir[] = "/tmp/hk-mint-XXXXXX", server[PATH_MAX], *cfg, *script, *path, *text;
	struct tt_opts o = {.approval_policy = "on-request", .sandbox = "workspace-write"};
	json_t *ans, *n, *msgs, *next;
	long long id, iid, hook_ms;
	const json_t *m;
	int i, answered = 0;
	pid_t pid;
	size_t k;
	struct tt f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	cfg = xasprintf("bypass_hook_trust = true\n[[hooks.PermissionRequest]]\nmatcher = \"*\"\n"
			"[[hooks.PermissionRequest.hooks]]\ntype = \"command\"\n"
			"command = 'echo $$ > %s/pid; sleep 3; touch %s/after'\ntimeout = 60\n"
			"[mcp_servers.test]\ncommand = \"python3\"\n"
			"args = [\"%s\", \"--log\", \"%s/mcp.log\"]\n",
		dir, dir, realpath(SERVER, server), dir);
	o.script = script = tt_script(SCRIPT(CALL("call-1", "write", "{}")));
	o.config_extra = cfg;
	tt_start(&f, &o);
	mcp_ready(&f);
	id = asc_request(f.c, "turn/start",
		json_pack("{s:s, s:o}", "threadId", f.thread_id, "input", tt_text("hi")));
	ans = asc_wait_response(f.c, id, 10000);
	assert_non_null(ans);
	n = asc_wait_notification(f.c, "hook/started", 10000);
	assert_non_null(n);
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(json_object_get(n, "params"), "run"), "eventName")),
		"permissionRequest");
	json_decref(n);
	path = xasprintf("%s/pid", dir);
	for (i = 0; i < 100 && (text = tt_read(path)) == NULL; i++)
		usleep(20000);
	hook_ms = asc_now_ms();
	assert_non_null(text);
	pid = (pid_t)strtol(text, NULL, 10);
	free(text);
	free(path);
	assert_true(pid > 0);
	iid = asc_request(f.c, "turn/interrupt",
		json_pack("{s:s, s:s}", "threadId", f.thread_id, "turnId",
			json_string_value(json_object_get(
				json_object_get(json_object_get(ans, "result"), "turn"), "id"))));
	msgs = tt_collect(&f, hm_decline, NULL);
	json_array_foreach(msgs, k, m) answered +=
		json_integer_value(json_object_get(m, "id")) == iid &&
		json_object_get(m, "result") != NULL && json_object_get(m, "method") == NULL;
	if (!answered) { /* the answer may follow turn/completed */
		n = asc_wait_response(f.c, iid, 5000);
		answered = n != NULL && json_object_get(n, "result") != NULL;
		json_decref(n);
	}
	assert_true(answered);
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(msgs), "status")), "interrupted");
	assert_int_equal(tt_count(msgs, "turn/completed"), 1);
	assert_int_equal(tt_count(msgs, "mcpServer/elicitation/request"), 0);
	assert_int_equal(hm_mcp_items(msgs, 0), 1);
	assert_int_equal(hm_mcp_items(msgs, 1), 1);
	for (i = 0; i < 100 && kill(pid, 0) == 0; i++) /* killed with its group, and reaped */
		usleep(20000);
	assert_int_not_equal(kill(pid, 0), 0);
	json_decref(msgs);

	/* the daemon goes on: a next turn, nothing more asked */
	next = tt_turn(&f, "again", NULL, hm_decline, NULL);
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(next), "status")), "completed");
	assert_int_equal(tt_count(next, "mcpServer/elicitation/request"), 0);
	assert_int_equal(hm_mcp_items(next, 0), 0);
	json_decref(next);

	/* past the hook's sleep: it never finished, the tool was never called */
	while (asc_now_ms() < hook_ms + 3500)
		usleep(50000);
	path = xasprintf("%s/after", dir);
	assert_int_not_equal(access(path, F_OK), 0);
	free(path);
	text = mcp_log(dir);
	assert_null(strstr(text, "tools/call"));
	free(text);
	json_decref(ans);
	tt_stop(&f);
	for (k = 0; k < 3; k++) {
		path = xasprintf("%s/%s", dir, (const char *[]){"pid", "after", "mcp.log"}[k]);
		unlink(path);
		free(path);
	}
	rmdir(dir);
	free(script);
	free(cfg);
}

#define CASE(n)                                                                                    \
	static void test_##n(void **state)                                                         \
	{                                                                                          \
		(void)state;                                                                       \
		hm_replay(#n);                                                                     \
	}
CASE(patch_ctx)
CASE(patch_block)
CASE(patch_exit2)
CASE(patch_post_block)
CASE(patch_shell_ctx)
CASE(patch_match_edit)
CASE(patch_match_write)
CASE(patch_match_bash)
CASE(mcp_ctx)
CASE(mcp_block)
CASE(mcp_post_block)
CASE(mcp_match_full)
CASE(mcp_match_prefix)
CASE(mcp_match_bare)
CASE(mcp_match_regex)
CASE(mcp_match_server)
CASE(exec_post_block)
CASE(mcp_perm_deny)
CASE(mcp_perm_allow)
CASE(mcp_perm_none)
CASE(mcp_perm_session)
CASE(mcp_perm_session_deny)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patch_ctx),
		cmocka_unit_test(test_patch_block),
		cmocka_unit_test(test_patch_exit2),
		cmocka_unit_test(test_patch_post_block),
		cmocka_unit_test(test_patch_shell_ctx),
		cmocka_unit_test(test_patch_match_edit),
		cmocka_unit_test(test_patch_match_write),
		cmocka_unit_test(test_patch_match_bash),
		cmocka_unit_test(test_mcp_ctx),
		cmocka_unit_test(test_mcp_block),
		cmocka_unit_test(test_mcp_post_block),
		cmocka_unit_test(test_mcp_match_full),
		cmocka_unit_test(test_mcp_match_prefix),
		cmocka_unit_test(test_mcp_match_bare),
		cmocka_unit_test(test_mcp_match_regex),
		cmocka_unit_test(test_mcp_match_server),
		cmocka_unit_test(test_exec_post_block),
		cmocka_unit_test(test_mcp_perm_deny),
		cmocka_unit_test(test_mcp_perm_allow),
		cmocka_unit_test(test_mcp_perm_none),
		cmocka_unit_test(test_mcp_perm_session),
		cmocka_unit_test(test_mcp_perm_session_deny),
		cmocka_unit_test(test_mcp_perm_interrupt),
	};
	asc_ref_load();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
