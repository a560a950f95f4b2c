/*
 * Code mode's exec and wait against the real daemon, node as the host: each scenario
 * recorded from upstream 0.169 (tests/fixtures/codemode/upstream/, record.py) is played
 * by the mock model and what the model gets back must be upstream's (wall times, chunk ids
 * normalised); an interrupt during a running cell and a runaway `while (true) {}` (ended by
 * wait {terminate: true} and by an interrupt) leave no host process behind; without node on
 * PATH exec answers a clear error and the turn ends. Skipped, with a count, where node is
 * missing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/codemode/codemode_host.h"
#include "exec_util.h"
#include "harness.h"
#include "protocol/xmalloc.h"
#include "tests/helpers/skip_note.h"
#include "mcp_util.h"
#include "turn_util.h"

#define CM_FIXTURES "tests/fixtures/codemode/upstream/"

/* Whether node is on our PATH (else every case is skipped, said so). */
static int
have_node(void)
{
	char *p = codemode_node_path(getenv("PATH"));

	free(p);
	return p != NULL;
}

/* The mock's script for a fixture's steps: exec as custom_tool_call, wait as function_call,
 * then a final message (JSON text, heap). */
static char *
script_for(const json_t *steps)
{
	json_t *items = json_array(), *st, *item;
	char id[32], *args, *text;
	size_t i;

	json_array_foreach(steps, i, st)
	{
		snprintf(id, sizeof id, "call-%zu", i + 1);
		if (strcmp(json_string_value(json_object_get(st, "kind")), "exec") == 0)
			item = json_pack("{s:s, s:s, s:s, s:O}", "type", "custom_tool_call",
				"call_id", id, "name", "exec", "input",
				json_object_get(st, "input"));
		else {
			args = json_dumps(json_object_get(st, "input"), JSON_COMPACT);
			item = json_pack("{s:s, s:s, s:s, s:s}", "type", "function_call", "call_id",
				id, "name", "wait", "arguments", args);
			free(args);
		}
		json_array_append_new(items, item);
	}
	text = tt_calls_script(items);
	return text;
}

/* Replace what follows each marker in s (chars of set) with rep (s is rewritten). */
static char *
subst(char *s, const char *marker, const char *set, const char *rep)
{
	char *at, *out;
	size_t n, from = 0;

	while ((at = strstr(s + from, marker)) != NULL) {
		at += strlen(marker);
		n = strspn(at, set);
		out = xasprintf("%.*s%s%s", (int)(at - s), s, rep, at + n);
		from = (size_t)(at - s) + strlen(rep);
		free(s);
		s = out;
	}
	return s;
}

/* A model-visible output item as the fixtures keep it: no id, times and chunk ids normalised. */
static json_t *
normalise(const json_t *item)
{
	json_t *copy = json_deep_copy(item), *back;
	char *s;

	json_object_del(copy, "id");
	s = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(copy);
	s = subst(s, "Wall time ", "0123456789.N", "N");
	s = subst(s, "Wall time: ", "0123456789.N", "N");
	s = subst(s, "Chunk ID: ", "0123456789abcdefX", "X");
	s = subst(s, "\\\"chunk_id\\\":\\\"", "0123456789abcdefX", "X");
	s = subst(s, "\\\"wall_time_seconds\\\":", "0123456789.", "0");
	back = json_loads(s, 0, NULL);
	free(s);
	return back;
}

/* Play one recorded scenario and compare every output of its calls with upstream's. */
static void
play(const char *name)
{
	char path[256], *script, id[32];
	json_t *fx, *want, *got = json_array(), *recs, *r, *it, *msgs;
	struct tt f;
	struct tt_opts o = {0};
	size_t i, j, k;

	snprintf(path, sizeof path, CM_FIXTURES "%s.json", name);
	fx = json_load_file(path, 0, NULL);
	assert_non_null(fx);
	script = script_for(json_object_get(fx, "steps"));
	static const char *const args[] = {"-c", "model=gpt-6.1-sol", NULL};
	char server[PATH_MAX], *mcp = NULL;
	int with_mcp = strncmp(name, "mcp_", 4) == 0;

	o.script = script;
	o.sandbox = "workspace-write";
	/* upstream was recorded with its default model, a code-mode one (apply_patch nested) */
	o.args = args;
	if (with_mcp) /* the recording's MCP server `test` */
		o.config_extra = mcp =
			xasprintf("[mcp_servers.test]\ncommand = \"python3\"\nargs = [\"%s\"]\n",
				realpath(SERVER, server));
	tt_start(&f, &o);
	if (with_mcp)
		mcp_ready(&f);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(msgs), "status")), "completed");
	recs = mm_records(&f.mm);
	/* request k+1 carries the answer of call k+1 (and notify()'s items after it) */
	for (k = 0; k < json_array_size(json_object_get(fx, "steps")); k++) {
		r = tt_request_body(recs, k + 1);
		assert_non_null(r);
		snprintf(id, sizeof id, "call-%zu", k + 1);
		json_array_foreach(json_object_get(r, "input"), i, it)
		{
			const char *type = json_string_value(json_object_get(it, "type")) ?: "";
			size_t tl = strlen(type);

			if (tl > 7 && strcmp(type + tl - 7, "_output") == 0 &&
				strcmp(json_string_value(json_object_get(it, "call_id")) ?: "",
					id) == 0)
				json_array_append_new(got, normalise(it));
		}
	}
	want = json_array();
	json_array_foreach(json_object_get(fx, "model_saw"), j, it)
		json_array_append_new(want, normalise(it));
	tt_assert_upstream(name, want, got);
	json_decref(want);
	json_decref(got);
	json_decref(recs);
	json_decref(msgs);
	json_decref(fx);
	free(script);
	free(mcp);
	tt_stop(&f);
}

#define SCENARIO(n)                                                                                \
	static void test_##n(void **state)                                                         \
	{                                                                                          \
		(void)state;                                                                       \
		if (!have_node()) {                                                                \
			skip_test("node is not on PATH: code mode is not offered");                \
			return;                                                                    \
		}                                                                                  \
		play(#n);                                                                          \
	}
SCENARIO(text)
SCENARIO(exec_command)
SCENARIO(exec_fail)
SCENARIO(tool_error)
SCENARIO(throw)
SCENARIO(syntax)
SCENARIO(return )
SCENARIO(yield)
SCENARIO(terminate)
SCENARIO(wait_unknown)
SCENARIO(store)
SCENARIO(notify)
SCENARIO(notify_twice)
SCENARIO(exit)
SCENARIO(truncate)
SCENARIO(apply_patch)
SCENARIO(unknown_tool)
SCENARIO(timeout)
SCENARIO(mcp_call)
SCENARIO(mcp_fail)
SCENARIO(mcp_structured)

/* Whether pid runs the host (node with our flags) and descends from the daemon. */
static int
is_our_host(pid_t pid, pid_t daemon)
{
	char path[64], cmd[256];
	FILE *fp;
	size_t n;
	pid_t ppid = pid, pgid;
	char st;

	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	n = fread(cmd, 1, sizeof cmd - 1, fp);
	fclose(fp);
	for (size_t i = 0; i < n; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	cmd[n] = '\0';
	if (strstr(cmd, "--experimental-vm-modules") == NULL)
		return 0;
	for (int up = 0; up < 6 && ppid > 1; up++) {
		if (xt_proc_stat(ppid, &st, &ppid, &pgid) != 0)
			return 0;
		if (ppid == daemon)
			return 1;
	}
	return 0;
}

/* The process group of the daemon's host, waited for up to 10 s (0: none seen). */
static pid_t
host_pgid(pid_t daemon)
{
	long long end = asc_now_ms() + asc_timeout(10000);
	DIR *d;
	struct dirent *e;
	pid_t pid, pgid = 0, ppid;
	char st;

	while (pgid == 0 && asc_now_ms() < end) {
		if ((d = opendir("/proc")) == NULL)
			break;
		while ((e = readdir(d)) != NULL && pgid == 0) {
			pid = (pid_t)strtol(e->d_name, NULL, 10);
			if (pid > 0 && is_our_host(pid, daemon))
				xt_proc_stat(pid, &st, &ppid, &pgid);
		}
		closedir(d);
		if (pgid == 0)
			usleep(20000);
	}
	return pgid;
}

/* A cell that runs on (code), interrupted once its host is up: the host's group dies. */
static void
interrupt_cell(const char *code)
{
	json_t *item = json_pack("{s:s, s:s, s:s, s:s}", "type", "custom_tool_call", "call_id",
		"call-1", "name", "exec", "input", code);
	json_t *resps = json_pack("[{s:[{s:s}, {s:s, s:o}, {s:s}]}]", "events", "ev", "created",
		"type", "response.output_item.done", "item", item, "ev", "completed");
	char *script = json_dumps(resps, JSON_COMPACT), *turn;
	struct tt f;
	struct tt_opts o = {.script = script, .config_extra = "[features]\ncode_mode = true\n"};
	json_t *r, *msgs;
	pid_t pgid;

	tt_start(&f, &o);
	r = tt_call(&f, "turn/start",
		json_pack("{s:s, s:o}", "threadId", f.thread_id, "input", tt_text("go")));
	turn = xstrdup(json_string_value(
		json_object_get(json_object_get(asc_assert_result(r), "turn"), "id")));
	json_decref(r);
	pgid = host_pgid(asc_pid(f.c));
	assert_true(pgid > 0);
	usleep(200000); /* the script is running (or spinning) now */
	asc_request(f.c, "turn/interrupt",
		json_pack("{s:s, s:s}", "threadId", f.thread_id, "turnId", turn));
	msgs = tt_collect(&f, NULL, NULL);
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(msgs), "status")), "interrupted");
	assert_int_equal(xt_pgid_wait(pgid, 0, asc_timeout(3000)), 0);
	json_decref(msgs);
	json_decref(resps);
	free(script);
	free(turn);
	tt_stop(&f);
}

static void
test_interrupt_waiting_cell(void **state)
{
	(void)state;
	if (!have_node()) {
		skip_test("node is not on PATH: code mode is not offered");
		return;
	}
	interrupt_cell("text(\"x\");\nawait new Promise(r => setTimeout(r, 60000));\n");
}

static void
test_interrupt_runaway(void **state)
{
	(void)state;
	if (!have_node()) {
		skip_test("node is not on PATH: code mode is not offered");
		return;
	}
	interrupt_cell("while (true) {}\n");
}

/* wait {terminate: true} on a spinning cell: its host's process group is gone after it. */
static void
test_terminate_kills(void **state)
{
	char *script;
	struct tt f;
	struct tt_opts o = {.config_extra = "[features]\ncode_mode = true\n"};
	json_t *msgs, *recs,
		*steps = json_pack("[{s:s, s:s}, {s:s, s:{s:s, s:b}}]", "kind", "exec", "input",
			"// @exec: {\"yield_time_ms\": 300}\nwhile (true) {}\n", "kind", "wait",
			"input", "cell_id", "1", "terminate", 1);

	(void)state;
	if (!have_node()) {
		skip_test("node is not on PATH: code mode is not offered");
		json_decref(steps);
		return;
	}
	o.script = script = script_for(steps);
	tt_start(&f, &o);
	msgs = tt_turn(&f, "spin", NULL, NULL, NULL);
	recs = mm_records(&f.mm);
	assert_non_null(strstr(tt_call_output(tt_request_body(recs, 2), "call-2") ?: "",
		"Script terminated\nWall time "));
	json_decref(recs);
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(msgs), "status")), "completed");
	assert_int_equal(host_pgid(asc_pid(f.c)) == 0 ? 0 : 1, 0);
	json_decref(msgs);
	json_decref(steps);
	free(script);
	tt_stop(&f);
}

/*
 * Without node on PATH code mode is not offered: the request has the classic tools (no
 * additional_tools item), and a call of exec is an unsupported call, as for any model upstream
 * does not give code mode; the turn ends as usual.
 */
static void
test_node_missing(void **state)
{
	static const char *const env[] = {"PATH=/nonexistent", NULL};
	json_t *steps = json_pack("[{s:s, s:s}]", "kind", "exec", "input", "text(1);\n");
	char *script = script_for(steps);
	struct tt f;
	struct tt_opts o = {
		.script = script, .config_extra = "[features]\ncode_mode = true\n", .env = env};
	json_t *msgs, *recs, *out;
	char *text;

	(void)state;
	tt_start(&f, &o);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(msgs), "status")), "completed");
	recs = mm_records(&f.mm);
	out = json_object_get(
		json_array_get(json_object_get(tt_request_body(recs, 1), "input"),
			json_array_size(json_object_get(tt_request_body(recs, 1), "input")) - 1),
		"output");
	text = json_dumps(out, JSON_COMPACT | JSON_ENCODE_ANY);
	assert_non_null(strstr(text, "unsupported custom tool call: exec"));
	free(text);
	assert_non_null(json_object_get(tt_request_body(recs, 0), "tools"));
	assert_string_not_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(tt_request_body(recs, 0), "input"), 0),
			"type"))
			?: "",
		"additional_tools");
	json_decref(recs);
	json_decref(msgs);
	json_decref(steps);
	free(script);
	tt_stop(&f);
}

/*
 * A slow node (its start takes 600 ms here, as on a loaded machine or Debian 12's node 18):
 * exec's yield_time_ms (300) counts from the script's start, not node's, so the first answer
 * still has the text written before the script yields, as upstream's recording ("yield").
 */
static void
test_yield_slow_start(void **state)
{
	char dir[] = "/tmp/cm-slow-XXXXXX", *node, *wrapper, *pathenv, *script, *text;
	const char *env[2];
	json_t *steps = json_pack("[{s:s, s:s}, {s:s, s:{s:s, s:i}}]", "kind", "exec", "input",
		"// @exec: {\"yield_time_ms\": 300}\ntext(\"start\");\nawait new Promise(r => "
		"setTimeout(r, 1500));\ntext(\"end\");\n",
		"kind", "wait", "input", "cell_id", "1", "yield_time_ms", 10000);
	struct tt f;
	struct tt_opts o = {.config_extra = "[features]\ncode_mode = true\n"};
	json_t *msgs, *recs;
	FILE *fp;

	(void)state;
	if ((node = codemode_node_path(getenv("PATH"))) == NULL) {
		skip_test("node is not on PATH: code mode is not offered");
		json_decref(steps);
		return;
	}
	assert_non_null(mkdtemp(dir));
	wrapper = xasprintf("%s/node", dir);
	assert_non_null(fp = fopen(wrapper, "w"));
	fprintf(fp, "#!/bin/sh\nsleep 0.6\nexec %s \"$@\"\n", node);
	fclose(fp);
	chmod(wrapper, 0755);
	pathenv = xasprintf("PATH=%s:%s", dir, getenv("PATH"));
	env[0] = pathenv;
	env[1] = NULL;
	o.env = env;
	o.script = script = script_for(steps);
	tt_start(&f, &o);
	msgs = tt_turn(&f, "slow", NULL, NULL, NULL);
	recs = mm_records(&f.mm);
	text = json_dumps(
		json_object_get(json_array_get(json_object_get(tt_request_body(recs, 1), "input"),
					json_array_size(json_object_get(
						tt_request_body(recs, 1), "input")) -
						1),
			"output"),
		JSON_COMPACT | JSON_ENCODE_ANY);
	assert_non_null(strstr(text, "Script running with cell ID 1"));
	assert_non_null(strstr(text, "\"start\""));
	free(text);
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
	unlink(wrapper);
	rmdir(dir);
	free(wrapper);
	free(pathenv);
	free(node);
	free(script);
	json_decref(steps);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_exec_command),
		cmocka_unit_test(test_exec_fail),
		cmocka_unit_test(test_tool_error),
		cmocka_unit_test(test_throw),
		cmocka_unit_test(test_syntax),
		cmocka_unit_test(test_return),
		cmocka_unit_test(test_yield),
		cmocka_unit_test(test_terminate),
		cmocka_unit_test(test_wait_unknown),
		cmocka_unit_test(test_store),
		cmocka_unit_test(test_notify),
		cmocka_unit_test(test_notify_twice),
		cmocka_unit_test(test_exit),
		cmocka_unit_test(test_truncate),
		cmocka_unit_test(test_apply_patch),
		cmocka_unit_test(test_unknown_tool),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_mcp_call),
		cmocka_unit_test(test_mcp_fail),
		cmocka_unit_test(test_mcp_structured),
		cmocka_unit_test(test_interrupt_waiting_cell),
		cmocka_unit_test(test_interrupt_runaway),
		cmocka_unit_test(test_terminate_kills),
		cmocka_unit_test(test_yield_slow_start),
		cmocka_unit_test(test_node_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
