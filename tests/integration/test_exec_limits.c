/*
 * Bounds and lifetimes of command/exec (issue 9, items 7, 8 and 9), against the real binary:
 *  - a buffered answer is one line of at most 64 MiB whatever the client asks (a cap near
 *    INT64_MAX, or bytes that take six once escaped), clipped with a note in stderr;
 *  - a command cannot start more processes than [app_server] max_processes (default 1024),
 *    sandboxed or not: a fork bomb stops at the cap, also where the daemon can make no
 *    cgroup (a user's ssh session): then RLIMIT_NPROC holds it (issue 22);
 *  - no descendant outlives its request, even one that left the session with setsid, under
 *    dangerFullAccess and externalSandbox: at completion, terminate, timeout and exit.
 * Each failed against the daemon before cgroups per command and the answer ceiling.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec_util.h"
#include "sandbox_util.h"
#include "tests/helpers/skip_note.h"
#include "protocol/xmalloc.h"

#define ANSWER_MAX (64 * 1024 * 1024)

/*
 * A process that must be gone within a few seconds: killed, and reaped by the daemon. Dead
 * is 'Z' (not reaped yet) or 'X' (being reaped right now); one reading decides, since a
 * second one could catch the Z -> X step of the reaper (it did, once, in CI).
 */
static void
assert_gone(pid_t pid)
{
	long long t0 = asc_now_ms();
	char state = '?';
	pid_t ppid, pgid;
	int alive;

	for (;;) {
		alive = xt_proc_stat(pid, &state, &ppid, &pgid) == 0 && state != 'Z' &&
			state != 'X';
		if (!alive || asc_now_ms() - t0 >= asc_timeout(5000))
			break;
		usleep(10000);
	}
	if (alive)
		fail_msg("pid %d outlived its request (state %c)", (int)pid, state);
}

/* The pid a script wrote to dir/name. */
static pid_t
read_pid(const char *dir, const char *name)
{
	char *path = xasprintf("%s/%s", dir, name), *text;
	long long t0 = asc_now_ms();
	size_t len;
	pid_t pid;

	while (asc_now_ms() - t0 < asc_timeout(5000)) {
		if (access(path, F_OK) == 0 && (text = xt_read_file(path, &len)) != NULL) {
			pid = (pid_t)strtol(text, NULL, 10);
			free(text);
			if (pid > 1) {
				free(path);
				return pid;
			}
		}
		usleep(10000);
	}
	fail_msg("no pid in %s", path);
	return -1;
}

/* Item 7: the answer line has a ceiling the client cannot raise. */
static void
test_answer_ceiling(void **state)
{
	struct asc *c = xt_ready();
	json_t *m, *r;
	const char *out;
	size_t i, n;

	/* 12 MB of NUL bytes: 72 MB once escaped. */
	m = xt_call(c, "command/exec",
		xt_with(xt_sh("head -c 12000000 /dev/zero"), "{'disableOutputCap':true}"),
		asc_timeout(30000));
	r = asc_assert_result(m);
	assert_true(strlen(asc_raw(c)) <= ANSWER_MAX);
	out = json_string_value(json_object_get(r, "stdout"));
	n = json_string_length(json_object_get(r, "stdout"));
	assert_true(n > 10000000 && n < 12000000);
	for (i = 0; i < n; i++)
		if (out[i] != '\0')
			fail_msg("byte %zu is %d", i, out[i]);
	assert_non_null(strstr(json_string_value(json_object_get(r, "stderr")), "truncated"));
	json_decref(m);
	/* A cap near INT64_MAX is no way past it either. */
	m = xt_call(c, "command/exec",
		xt_with(xt_sh("head -c 80000000 /dev/zero | tr '\\0' a"),
			"{'outputBytesCap':9223372036854775807}"),
		asc_timeout(30000));
	r = asc_assert_result(m);
	assert_true(strlen(asc_raw(c)) <= ANSWER_MAX);
	assert_true(json_string_length(json_object_get(r, "stdout")) > 60000000);
	json_decref(m);
	asc_free(c);
}

/* Forks until refused; prints how many it made and the errno. */
#define FORK_BOMB                                                                                  \
	"import os, time\n"                                                                        \
	"n = 0\n"                                                                                  \
	"try:\n"                                                                                   \
	"    for i in range(%d):\n"                                                                \
	"        if os.fork() == 0:\n"                                                             \
	"            time.sleep(5); os._exit(0)\n"                                                 \
	"        n += 1\n"                                                                         \
	"    print('all', n)\n"                                                                    \
	"except OSError as e:\n"                                                                   \
	"    print('stopped', n, e.errno)\n"

/* Run the fork bomb under a policy; the number of processes it made. */
static int
fork_bomb(struct asc *c, int tries, const char *policy)
{
	char *prog = xasprintf(FORK_BOMB, tries);
	json_t *p = xt_argv_params("python3", "-c", prog, NULL), *m;
	const char *out;
	int made = -1, err = 0;

	/* A permission profile stands instead of the default policy, never beside it. */
	if (strstr(policy, "permissionProfile") != NULL)
		json_object_del(p, "sandboxPolicy");
	m = xt_call(c, "command/exec", xt_with(p, "%s", policy), asc_timeout(30000));
	out = json_string_value(json_object_get(asc_assert_result(m), "stdout"));

	if (sscanf(out, "stopped %d %d", &made, &err) != 2)
		fail_msg("the fork bomb was not stopped: %s", out);
	assert_int_equal(err, 11); /* EAGAIN */
	json_decref(m);
	free(prog);
	return made;
}

/* Item 8: a per-command process cap, configurable, sandboxed or not. */
static void
test_process_cap(void **state)
{
	struct asc *c = xt_ready();
	char *cfg = xasprintf("%s/config.toml", asc_codex_home(c));
	int made;

	made = fork_bomb(c, 2000, "{'sandboxPolicy':{'type':'readOnly'}}");
	assert_true(made > 900 && made < 1024); /* the default cap, 1024 */
	mkdir(asc_codex_home(c), 0700);
	sbt_put(cfg, "[app_server]\nmax_processes = 20\n");
	made = fork_bomb(c, 100, "{'sandboxPolicy':{'type':'readOnly'}}");
	assert_true(made > 5 && made < 20);
	made = fork_bomb(c, 100, "{'sandboxPolicy':{'type':'dangerFullAccess'}}");
	assert_true(made > 5 && made < 20);
	free(cfg);
	asc_free(c);
}

/*
 * The cap without cgroups (none writable, as in a user's ssh session; played with
 * APP_SERVER_NO_CGROUPS=1): RLIMIT_NPROC sized from the uid's count holds it, under every
 * policy, unsandboxed and seccomp-only too. The kernel exempts root from RLIMIT_NPROC, so
 * when the tests run as root the daemon runs as nobody (setpriv), as a user's would.
 */
static void
test_process_cap_fallback(void **state)
{
	static const char *const policies[] = {
		"{'sandboxPolicy':{'type':'dangerFullAccess'},'cwd':'/tmp'}",
		"{'sandboxPolicy':{'type':'readOnly'},'cwd':'/tmp'}",
		"{'permissionProfile':{'type':'managed','fileSystem':{'type':'unrestricted'},"
		"'network':'restricted'},'cwd':'/tmp'}",
	};
	static const char *const env[] = {"APP_SERVER_NO_CGROUPS=1", NULL};
	static const char *const cap[] = {"-c", "app_server.max_processes=20", NULL};
	const char *bin = getenv("APP_SERVER_BIN");
	char *real = xstrdup(bin != NULL && *bin != '\0' ? bin : "build/app-server");
	const char *as_nobody[] = {"--reuid=65534", "--regid=65534", "--clear-groups", real, "-c",
		"app_server.max_processes=20", NULL};
	struct asc_opts o = {.env = env, .args = cap};
	struct asc *c;
	pid_t others[19];
	const char *bad = NULL;
	long long id;
	json_t *m;
	int made;

	if (geteuid() == 0) {
		if (access("/usr/bin/setpriv", X_OK) != 0)
			skip_test(
				"as root, the daemon runs as nobody through setpriv (util-linux), "
				"which is not installed");
		setenv("APP_SERVER_BIN", "/usr/bin/setpriv", 1);
		o.args = as_nobody;
	}
	c = asc_spawn(&o);
	setenv("APP_SERVER_BIN", real, 1);
	/* permissionProfile is experimental. */
	id = asc_request(c, "initialize",
		json_pack("{s:{s:s, s:s}, s:{s:b}}", "clientInfo", "name", "asc-test", "version",
			"0.1", "capabilities", "experimentalApi", 1));
	m = asc_wait_response(c, id, asc_timeout(T_REPLY));
	asc_assert_result(m);
	json_decref(m);
	/*
	 * The uid runs 19 more tasks meanwhile: the cap is the command's own, not a count of the
	 * whole uid's (as RLIMIT_NPROC alone would be).
	 */
	for (size_t i = 0; i < nitems(others); i++)
		if ((others[i] = fork()) == 0) {
			if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
				_exit(1);
			pause();
			_exit(0);
		}
	for (size_t i = 0; i < nitems(policies) && bad == NULL; i++) {
		made = fork_bomb(c, 100, policies[i]);
		if (made <= 5 || made >= 20)
			bad = policies[i];
	}
	/* Before any verdict: left behind, they would hold the uid's count (and our stdout). */
	for (size_t i = 0; i < nitems(others); i++) {
		kill(others[i], SIGKILL);
		waitpid(others[i], NULL, 0);
	}
	if (bad != NULL)
		fail_msg("%s: %d processes made, the cap is 20", bad, made);
	asc_free(c);
	free(real);
}

/* A command that leaves a setsid'd sleeper behind; the sleeper's pid. */
static pid_t
leave_sleeper(struct asc *c, const char *extra, long long *id)
{
	char *script = xasprintf("setsid sleep 100 </dev/null >/dev/null 2>&1 & echo $! > '%s/p'; "
				 "sleep %s",
		asc_dir(c), strstr(extra, "processId") != NULL ? "30" : "0.1");
	char *path = xasprintf("%s/p", asc_dir(c));
	pid_t pid;

	unlink(path);
	*id = asc_request(c, "command/exec", xt_with(xt_sh(script), "%s", extra));
	pid = read_pid(asc_dir(c), "p");
	free(path);
	free(script);
	return pid;
}

/* Item 9: no descendant outlives its request, whatever the policy. */
static void
setsid_descendants(const char *const *env)
{
	static const char *const policies[] = {
		"{'sandboxPolicy':{'type':'dangerFullAccess'}}",
		"{'sandboxPolicy':{'type':'externalSandbox'}}",
	};
	struct asc_opts o = {.env = env};
	struct asc *c = xt_ready_opts(&o);
	long long id;
	json_t *m;
	char *extra;
	pid_t pid;

	for (size_t i = 0; i < nitems(policies); i++) {
		/* The command completes: its request is over. */
		pid = leave_sleeper(c, policies[i], &id);
		json_decref(asc_wait_response(c, id, asc_timeout(T_REPLY)));
		assert_gone(pid);
		/* Terminate. */
		extra = xasprintf(
			"%.*s,'processId':'t%zu'}", (int)strlen(policies[i]) - 1, policies[i], i);
		pid = leave_sleeper(c, extra, &id);
		m = xt_call(c, "command/exec/terminate",
			xt_with(json_object(), "{'processId':'t%zu'}", i), asc_timeout(T_REPLY));
		asc_assert_result(m);
		json_decref(m);
		json_decref(asc_wait_response(c, id, asc_timeout(T_REPLY)));
		assert_gone(pid);
		free(extra);
		/* Timeout. */
		extra = xasprintf("%.*s,'processId':'o%zu','timeoutMs':300}",
			(int)strlen(policies[i]) - 1, policies[i], i);
		pid = leave_sleeper(c, extra, &id);
		m = asc_wait_response(c, id, asc_timeout(T_REPLY));
		assert_int_equal(
			json_integer_value(json_object_get(asc_assert_result(m), "exitCode")), 124);
		json_decref(m);
		assert_gone(pid);
		free(extra);
	}
	/* The daemon's exit. */
	pid = leave_sleeper(
		c, "{'sandboxPolicy':{'type':'dangerFullAccess'},'processId':'x'}", &id);
	asc_free(c);
	assert_gone(pid);
}

/* With a cgroup per command. */
static void
test_setsid_descendants(void **state)
{
	setsid_descendants(NULL);
}

/* Without cgroups: adopted orphans die once no command is left (one at a time here). */
static void
test_setsid_descendants_fallback(void **state)
{
	static const char *const env[] = {"APP_SERVER_NO_CGROUPS=1", NULL};

	setsid_descendants(env);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer_ceiling),
		cmocka_unit_test(test_process_cap),
		cmocka_unit_test(test_process_cap_fallback),
		cmocka_unit_test(test_setsid_descendants),
		cmocka_unit_test(test_setsid_descendants_fallback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
