/*
 * Thread-level permission profiles on the real daemon: thread/start, resume and fork with
 * `permissions`, `default_permissions` for threads started without a sandbox or profile, and
 * the activePermissionProfile and sandbox their answers report, all against upstream 0.169's
 * answers for the same config.toml (recorded side by side; the expected texts below are its).
 * Then the behaviour behind them: a thread started (or forked) with a profile runs its
 * commands under that profile's sandbox, whatever the thread's own sandbox mode would be.
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

/* The profiles of upstream's recording. */
#define PROFILES                                                                                   \
	"[permissions.dev]\ndescription = \"Dev\"\nextends = \":workspace\"\n"                     \
	"[permissions.dev.network]\nenabled = true\n"                                              \
	"[permissions.ro2]\nextends = \":read-only\"\n"                                            \
	"[permissions.fs]\n[permissions.fs.filesystem]\n\":minimal\" = \"read\"\n"                 \
	"\"/opt\" = \"read\"\n\":workspace_roots\" = \"write\"\n"

/* Upstream's SandboxPolicy answers. */
#define SB_RO "{\"type\":\"readOnly\",\"networkAccess\":false}"
#define SB_WS(net, ex)                                                                             \
	"{\"type\":\"workspaceWrite\",\"writableRoots\":[],\"networkAccess\":" net                 \
	",\"excludeTmpdirEnvVar\":" ex ",\"excludeSlashTmp\":" ex "}"
#define SB_FULL	    "{\"type\":\"dangerFullAccess\"}"
#define AP(id, ext) "{\"id\":\"" id "\",\"extends\":" ext "}"

/* The answer of a request whose params are JSON text with "%s" for the daemon's dir. */
static json_t *
answer(struct asc *c, const char *method, const char *params)
{
	char *text = xstrdup(params), *at;
	json_t *p, *m;

	while ((at = strstr(text, "%s")) != NULL) {
		char *old = text;

		*at = '\0';
		text = xasprintf("%s%s%s", old, asc_dir(c), at + 2);
		free(old);
	}
	assert_non_null(p = json_loads(text, 0, NULL));
	free(text);
	m = asc_wait_response(c, asc_request(c, method, p), asc_timeout(T_REPLY));
	return m;
}

/* A start/resume/fork answer's sandbox and activePermissionProfile are upstream's. */
static void
expect_thread(json_t *m, const char *sandbox, const char *profile)
{
	json_t *r = asc_assert_result(m), *want_sb = json_loads(sandbox, 0, NULL),
	       *want_ap = json_loads(profile, JSON_DECODE_ANY, NULL);

	if (!json_equal(json_object_get(r, "sandbox"), want_sb) ||
		!json_equal(json_object_get(r, "activePermissionProfile"), want_ap)) {
		char *got = json_dumps(r, JSON_COMPACT);

		fail_msg("got %s; upstream answered sandbox %s, activePermissionProfile %s", got,
			sandbox, profile);
	}
	json_decref(want_sb);
	json_decref(want_ap);
	json_decref(m);
}

/* An answer is upstream's -32600 with this message. */
static void
expect_error(json_t *m, const char *message)
{
	asc_assert_error(m, -32600, message);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(m, "error"), "message")),
		message);
	json_decref(m);
}

static void
test_thread_start_permissions(void **state)
{
	struct asc *c;

	(void)state;
	c = asc_spawn_config("model = \"m\"\n" PROFILES, 1);
	/* profiles without default_permissions: a start naming neither is refused */
	expect_error(answer(c, "thread/start", "{\"cwd\":\"%s\"}"),
		"failed to load configuration: config defines `[permissions]` profiles but does "
		"not set `default_permissions`");
	expect_thread(answer(c, "thread/start", "{\"cwd\":\"%s\",\"permissions\":\":workspace\"}"),
		SB_WS("false", "false"), AP(":workspace", "null"));
	expect_thread(answer(c, "thread/start", "{\"cwd\":\"%s\",\"permissions\":\"dev\"}"),
		SB_WS("true", "false"), AP("dev", "\":workspace\""));
	expect_thread(answer(c, "thread/start", "{\"cwd\":\"%s\",\"permissions\":\"fs\"}"),
		SB_WS("false", "true"), AP("fs", "null"));
	expect_error(answer(c, "thread/start",
			     "{\"cwd\":\"%s\",\"permissions\":\"dev\",\"sandbox\":\"read-only\"}"),
		"`permissions` cannot be combined with `sandbox`");
	expect_error(answer(c, "thread/start", "{\"cwd\":\"%s\",\"permissions\":\"nope\"}"),
		"failed to load configuration: default_permissions refers to undefined profile "
		"`nope`");
	expect_thread(answer(c, "thread/start", "{\"cwd\":\"%s\",\"sandbox\":\"workspace-write\"}"),
		SB_WS("false", "false"), "null");
	expect_thread(answer(c, "thread/start",
			      "{\"cwd\":\"%s\",\"permissions\":\":danger-full-access\"}"),
		SB_FULL, AP(":danger-full-access", "null"));
	expect_thread(answer(c, "thread/start", "{\"cwd\":\"%s\",\"permissions\":\":read-only\"}"),
		SB_RO, AP(":read-only", "null"));
	asc_free(c);

	/* default_permissions: the profile of a thread that chose no sandbox mode */
	c = asc_spawn_config("model = \"m\"\ndefault_permissions = \"ro2\"\n" PROFILES, 1);
	expect_thread(
		answer(c, "thread/start", "{\"cwd\":\"%s\"}"), SB_RO, AP("ro2", "\":read-only\""));
	expect_thread(
		answer(c, "thread/start", "{\"cwd\":\"%s\",\"sandbox\":\"danger-full-access\"}"),
		SB_FULL, "null");
	expect_thread(answer(c, "thread/start",
			      "{\"cwd\":\"%s\",\"config\":{\"sandbox_mode\":\"workspace-write\"}}"),
		SB_WS("false", "false"), "null");
	expect_thread(
		answer(c, "thread/start",
			"{\"cwd\":\"%s\",\"permissions\":\"dev\",\"config\":{\"sandbox_mode\":"
			"\"workspace-write\"}}"),
		SB_WS("true", "false"), AP("dev", "\":workspace\""));
	asc_free(c);

	/* a sandbox_mode in config.toml: no profile, and profiles without a default are fine */
	c = asc_spawn_config("model = \"m\"\nsandbox_mode = \"workspace-write\"\n" PROFILES, 1);
	expect_thread(
		answer(c, "thread/start", "{\"cwd\":\"%s\"}"), SB_WS("false", "false"), "null");
	asc_free(c);

	/* an experimental member: refused without the capability, in upstream's words */
	c = asc_spawn_config("model = \"m\"\n" PROFILES, 0);
	expect_error(answer(c, "thread/start", "{\"cwd\":\"%s\",\"permissions\":\"dev\"}"),
		"thread/start.permissions requires experimentalApi capability");
	asc_free(c);
}

/* One turn running `cmd` (sh -c), then a closing answer: a mock script's two responses. */
#define CMD_TURN(id, cmd)                                                                          \
	"{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`" id "`,"                    \
	"`name`:`exec_command`,`arguments`:{`cmd`:`" cmd "`,`login`:false,"                        \
	"`yield_time_ms`:5000}},{`ev`:`completed`}]},"                                             \
	"{`events`:[{`ev`:`created`},{`ev`:`message`,`id`:`m-" id "`,`text`:`done`},"              \
	"{`ev`:`completed`}]}"
#define WRITE_CMD "touch in.txt; echo in=$?; touch ../out.txt; echo out=$?; rm -f in.txt"

/* The output of the turn's command on thread id (the fixture's thread is switched to it). */
static char *
run_writer(struct tt *f, const char *id)
{
	json_t *msgs, *item;
	char *out;

	free(f->thread_id);
	f->thread_id = xstrdup(id);
	msgs = tt_turn(f, "write", NULL, NULL, NULL);
	item = tt_item(msgs, "commandExecution", 0);
	assert_non_null(item);
	out = xstrdup(json_string_value(json_object_get(item, "aggregatedOutput")));
	json_decref(msgs);
	return out;
}

/* A thread/start|fork|resume answer's thread id (heap); the answer is checked and freed. */
static char *
thread_of(json_t *m, const char *sandbox, const char *profile)
{
	char *id = xstrdup(json_string_value(
		json_object_get(json_object_get(asc_assert_result(m), "thread"), "id")));

	expect_thread(m, sandbox, profile);
	return id;
}

/* The writer fixture with the profiles (the config.toml's sandbox_mode is read-only). */
static void
start_fixture(struct tt *f, int turns)
{
	char *script = xstrdup("["), *s, *old;

	for (int i = 0; i < turns; i++) {
		old = script;
		script = xasprintf("%s%s" CMD_TURN("w", WRITE_CMD), old, i > 0 ? "," : "");
		free(old);
	}
	old = script;
	script = xasprintf("%s]", old);
	free(old);
	s = tt_script(script);
	struct tt_opts o = {.script = s, .config_extra = PROFILES, .experimental = 1};

	tt_start(f, &o); /* the fixture's own thread runs with danger-full-access */
	free(s);
	free(script);
}

static void
test_profile_sandboxes_thread_commands(void **state)
{
	struct tt f;
	char *id, *out, *outside, *ws;

	(void)state;
	start_fixture(&f, 3);
	ws = xstrdup(f.workspace);
	outside = xasprintf("%s/out.txt", dirname(ws));
	/* a thread started with `fs` writes its workspace and nothing beside it (`dev` would
	 * write beside it: the workspace is under /tmp, which :workspace makes writable) */
	id = thread_of(tt_call(&f, "thread/start",
			       json_pack("{s:s, s:s}", "cwd", f.workspace, "permissions", "fs")),
		SB_WS("false", "true"), AP("fs", "null"));
	out = run_writer(&f, id);
	assert_non_null(strstr(out, "in=0\n"));
	assert_non_null(strstr(out, "out=1\n"));
	assert_int_not_equal(access(outside, F_OK), 0);
	free(out);
	free(id);

	/* :read-only writes nothing */
	id = thread_of(
		tt_call(&f, "thread/start",
			json_pack("{s:s, s:s}", "cwd", f.workspace, "permissions", ":read-only")),
		SB_RO, AP(":read-only", "null"));
	out = run_writer(&f, id);
	assert_non_null(strstr(out, "in=1\n"));
	assert_non_null(strstr(out, "out=1\n"));
	free(out);

	/* a fork with :danger-full-access writes beside the workspace too */
	char *fork = thread_of(tt_call(&f, "thread/fork",
				       json_pack("{s:s, s:s}", "threadId", id, "permissions",
					       ":danger-full-access")),
		SB_FULL, AP(":danger-full-access", "null"));
	out = run_writer(&f, fork);
	assert_non_null(strstr(out, "in=0\n"));
	assert_non_null(strstr(out, "out=0\n"));
	assert_int_equal(access(outside, F_OK), 0);
	unlink(outside);
	free(out);
	free(fork);
	free(id);
	free(outside);
	free(ws);
	tt_stop(&f);
}

static void
test_resume_and_fork_permissions(void **state)
{
	struct tt f;
	json_t *m;
	char *id;

	(void)state;
	start_fixture(&f, 1);
	id = xstrdup(f.thread_id);
	free(run_writer(&f, id)); /* a turn: the thread has a rollout */
	/* a loaded thread keeps its settings: the profile, even a bad one, is not applied */
	expect_thread(tt_call(&f, "thread/resume",
			      json_pack("{s:s, s:s}", "threadId", id, "permissions", "zz")),
		SB_FULL, "null");
	expect_error(tt_call(&f, "thread/resume",
			     json_pack("{s:s, s:s, s:s}", "threadId", id, "permissions", "dev",
				     "sandbox", "read-only")),
		"`permissions` cannot be combined with `sandbox`");
	/* a fork takes it, and checks it */
	expect_error(tt_call(&f, "thread/fork",
			     json_pack("{s:s, s:s}", "threadId", id, "permissions", "zz")),
		"failed to load configuration: default_permissions refers to undefined profile `zz`");
	expect_thread(tt_call(&f, "thread/fork",
			      json_pack("{s:s, s:s}", "threadId", id, "permissions", ":workspace")),
		SB_WS("false", "false"), AP(":workspace", "null"));
	/* a thread loaded by the resume takes the profile */
	asc_free(f.c);
	tt_respawn(&f);
	expect_error(tt_call(&f, "thread/resume",
			     json_pack("{s:s, s:s}", "threadId", id, "permissions", "zz")),
		"failed to load configuration: default_permissions refers to undefined profile `zz`");
	m = tt_call(
		&f, "thread/resume", json_pack("{s:s, s:s}", "threadId", id, "permissions", "dev"));
	expect_thread(m, SB_WS("true", "false"), AP("dev", "\":workspace\""));
	free(id);
	tt_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_start_permissions),
		cmocka_unit_test(test_profile_sandboxes_thread_commands),
		cmocka_unit_test(test_resume_and_fork_permissions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
