/*
 * Tests for the sandbox executor without the daemon, running real commands through
 * spawn_start (reaped here with waitpid): exit statuses through the init, the supervised kill,
 * every layer's forced failure, a writable root replaced during setup, placeholders that
 * leave nothing behind, restricted-read views and deny masks. The plan alone is
 * test_sandbox_plan.c.
 */
#include "sandbox_test_util.h"

/* Run `sh -c script` under a policy (stolen) in cwd; -1 with *cause when the spawn failed. */
static int
run(json_t *j, const char *cwd, const char *script, struct result *res, char **cause)
{
	char *argv[] = {"sh", "-c", (char *)script, NULL};
	char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", NULL};
	struct spawn_opts so;
	struct spawn_proc sp;
	struct pollfd pfd[2];
	size_t got[2] = {0, 0};
	char *bufs[2] = {res->out, res->err};
	ssize_t n;
	int st, i, r;

	memset(res, 0, sizeof *res);
	memset(&so, 0, sizeof so);
	so.argv = argv;
	so.envp = envp;
	so.cwd = cwd;
	r = sandbox_spawn_prepare(j, &so, cause);
	json_decref(j);
	if (r != 0)
		return -1;
	r = spawn_start(&so, &sp, cause);
	sandbox_spawn_done(&so, NULL);
	if (r != 0)
		return -1;
	pfd[0].fd = sp.out_fd;
	pfd[1].fd = sp.err_fd;
	while (pfd[0].fd >= 0 || pfd[1].fd >= 0) {
		pfd[0].events = pfd[1].events = POLLIN;
		if (poll(pfd, 2, 10000) <= 0)
			fail_msg("no output within 10 s: %s", script);
		for (i = 0; i < 2; i++) {
			if (pfd[i].fd < 0 || pfd[i].revents == 0)
				continue;
			n = read(pfd[i].fd, bufs[i] + got[i], sizeof res->out - 1 - got[i]);
			if (n > 0)
				got[i] += (size_t)n;
			else if (n == 0 || errno != EAGAIN) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
			}
		}
	}
	sp.out_fd = sp.err_fd = -1;
	spawn_proc_close(&sp);
	assert_int_equal(waitpid(sp.pid, &st, 0), sp.pid);
	res->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

/* Run and require a spawn; fail the test with the cause otherwise. */
static void
run_ok(json_t *j, const char *cwd, const char *script, struct result *res)
{
	char *cause = NULL;

	if (run(j, cwd, script, res, &cause) != 0)
		fail_msg("%s: %s", script, cause);
}

static void
test_run_root_replaced(void **state)
{
	struct fixture *f = *state;
	char *argv[] = {"true", NULL}, *root = xasprintf("%s/root", f->dir);
	char *old = xasprintf("%s/old", f->dir), *cause = NULL, *want;
	struct spawn_opts so;
	struct spawn_proc sp;
	struct sandbox *sb;

	put(f->dir, "root/a", "a\n");
	assert_int_equal(plan(pol("{'type':'workspaceWrite','excludeSlashTmp':true,"
				  "'excludeTmpdirEnvVar':true,'writableRoots':['%s']}",
				      root),
				 f->dir, &sb, &cause),
		0);
	assert_int_equal(rename(root, old), 0);
	put(f->dir, "root", "now a file\n");
	memset(&so, 0, sizeof so);
	so.argv = argv;
	so.cwd = f->dir;
	sandbox_spawn_opts(sb, &so);
	assert_int_not_equal(spawn_start(&so, &sp, &cause), 0);
	want = xasprintf("sandbox setup failed: writable root %s changed during setup: it was "
			 "replaced",
		root);
	assert_string_equal(cause, want);
	free(want);
	free(cause);
	sandbox_free(sb);
	free(root);
	free(old);
}

static void
test_run_exit_status(void **state)
{
	struct fixture *f = *state;
	struct result r;

	run_ok(pol("{'type':'readOnly'}"), f->dir, "echo out; echo err >&2; exit 7", &r);
	assert_int_equal(r.status, 7);
	assert_string_equal(r.out, "out\n");
	assert_string_equal(r.err, "err\n");
	run_ok(pol("{'type':'readOnly'}"), f->dir, "kill -TERM $$", &r);
	assert_int_equal(r.status, 143);
	/* The command is pid 2 under our init, in a fresh /proc. */
	run_ok(pol("{'type':'readOnly'}"), f->dir, "echo $$; cat /proc/1/cmdline | tr '\\0' ' '",
		&r);
	assert_int_equal(r.status, 0);
	assert_int_equal(strncmp(r.out, "2\n", 2), 0);
	run_ok(pol("{'type':'readOnly'}"), f->dir,
		"grep -E '^(NoNewPrivs|CapEff|CapPrm|CapBnd|CapAmb):' /proc/self/status", &r);
	assert_string_equal(r.out,
		"CapPrm:\t0000000000000000\n"
		"CapEff:\t0000000000000000\n"
		"CapBnd:\t0000000000000000\n"
		"CapAmb:\t0000000000000000\n"
		"NoNewPrivs:\t1\n");
	/* Seccomp only (full disk write, network off). */
	run_ok(pol("{'type':'managed','fileSystem':{'type':'unrestricted'}}"), f->dir,
		"grep NoNewPrivs /proc/self/status; python3 -c 'import socket; socket.socket()' "
		"2>/dev/null || echo blocked",
		&r);
	assert_non_null(strstr(r.out, "NoNewPrivs:\t1\n"));
	assert_non_null(strstr(r.out, "blocked"));
}

static void
test_run_faults(void **state)
{
	static const struct {
		const char *fault, *step;
	} faults[] = {
		{"userns", "user namespace"},
		{"mounts", "mounts"},
		{"dev", "/dev"},
		{"protect", "protected paths"},
		{"cwd", "cwd"},
		{"landlock", "landlock"},
		{"init", "init"},
		{"caps", "capabilities"},
		{"nnp", "no_new_privs"},
		{"seccomp", "seccomp"},
	};
	struct fixture *f = *state;
	struct result r;
	char *cause, *want, *script = xasprintf("echo ran > '%s/marker'", f->dir);

	for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
		setenv("APP_SERVER_SANDBOX_FAULT", faults[i].fault, 1);
		cause = NULL;
		assert_int_equal(
			run(pol("{'type':'workspaceWrite'}"), f->dir, script, &r, &cause), -1);
		want = xasprintf("sandbox setup failed: %s: Operation not permitted (os error 1)",
			faults[i].step);
		if (cause == NULL || strcmp(cause, want) != 0)
			fail_msg("fault %s: expected \"%s\", got \"%s\"", faults[i].fault, want,
				cause != NULL ? cause : "(none)");
		free(want);
		free(cause);
		/* The command never ran and nothing was left behind. */
		assert_false(exists(f->dir, "marker"));
		assert_false(exists(f->dir, ".codex"));
		assert_false(exists(f->dir, ".git"));
	}
	unsetenv("APP_SERVER_SANDBOX_FAULT");
	run_ok(pol("{'type':'workspaceWrite'}"), f->dir, script, &r);
	assert_int_equal(r.status, 0);
	assert_true(exists(f->dir, "marker"));
	free(script);
}

static void
test_run_proc_fallback(void **state)
{
	struct fixture *f = *state;
	struct result r;

	/* A kernel that refuses a new /proc (masked /proc in a container): the host's, read-only.
	 */
	setenv("APP_SERVER_SANDBOX_FAULT", "proc", 1);
	run_ok(pol("{'type':'readOnly'}"), f->dir,
		"test $(ls /proc | grep -c '^[0-9]*$') -gt 8 && echo host-proc; "
		"echo 1 > /proc/self/oom_score_adj 2>/dev/null || echo read-only",
		&r);
	unsetenv("APP_SERVER_SANDBOX_FAULT");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "host-proc\nread-only\n");
	/* The fresh one otherwise: only the sandbox's few processes. */
	run_ok(pol("{'type':'readOnly'}"), f->dir,
		"test $(ls /proc | grep -c '^[0-9]*$') -le 8 && echo own-proc", &r);
	assert_string_equal(r.out, "own-proc\n");
}

static void
test_run_exec_failure(void **state)
{
	struct fixture *f = *state;
	char *argv[] = {"/nonexistent/command", NULL};
	struct spawn_opts so;
	struct spawn_proc sp;
	char *cause = NULL;
	json_t *j = pol("{'type':'readOnly'}");

	memset(&so, 0, sizeof so);
	so.argv = argv;
	so.cwd = f->dir;
	assert_int_equal(sandbox_spawn_prepare(j, &so, &cause), 0);
	/* The command's execve fails below the init: the report still reaches us. */
	assert_int_equal(spawn_start(&so, &sp, &cause), -ENOENT);
	assert_string_equal(
		cause, "failed to spawn command: No such file or directory (os error 2)");
	sandbox_spawn_done(&so, NULL);
	free(cause);
	json_decref(j);
}

static void
test_run_supervised_kill(void **state)
{
	struct fixture *f = *state;
	char *argv[] = {"sh", "-c", "sleep 30 & sleep 30", NULL};
	struct spawn_opts so;
	struct spawn_proc sp;
	char *cause = NULL;
	json_t *j = pol("{'type':'workspaceWrite'}");
	int st;

	memset(&so, 0, sizeof so);
	so.argv = argv;
	so.cwd = f->dir;
	assert_int_equal(sandbox_spawn_prepare(j, &so, &cause), 0);
	assert_int_equal(spawn_start(&so, &sp, &cause), 0);
	sandbox_spawn_done(&so, NULL);
	usleep(100000);
	assert_true(exists(f->dir, ".codex")); /* the placeholder, while it runs */
	assert_int_equal(spawn_kill(&sp, SIGKILL), 0);
	assert_int_equal(waitpid(sp.pid, &st, 0), sp.pid);
	/* The init tore everything down, cleaned up, and reported a kill. */
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 137);
	assert_false(exists(f->dir, ".codex"));
	assert_false(exists(f->dir, ".agents"));
	assert_false(exists(f->dir, ".git"));
	spawn_proc_close(&sp);
	json_decref(j);

	/* TERM is passed on to the command. */
	j = pol("{'type':'readOnly'}");
	memset(&so, 0, sizeof so);
	so.argv = (char *[]){"sleep", "30", NULL};
	so.cwd = f->dir;
	assert_int_equal(sandbox_spawn_prepare(j, &so, &cause), 0);
	assert_int_equal(spawn_start(&so, &sp, &cause), 0);
	sandbox_spawn_done(&so, NULL);
	usleep(100000);
	assert_int_equal(kill(sp.pid, SIGTERM), 0);
	assert_int_equal(waitpid(sp.pid, &st, 0), sp.pid);
	assert_int_equal(WEXITSTATUS(st), 143);
	spawn_proc_close(&sp);
	json_decref(j);
}

static void
test_run_workspace(void **state)
{
	struct fixture *f = *state;
	struct result r;
	char *out;

	put(f->dir, ".git/config", "original\n");
	put(f->dir, ".codex/config.toml", "original\n");
	run_ok(pol("{'type':'workspaceWrite','excludeSlashTmp':true,'excludeTmpdirEnvVar':true}"),
		f->dir,
		"printf permitted > allowed && "
		"{ printf changed > .git/config || printf changed > .codex/config.toml || "
		"mv .git g2 || mkdir .agents/x || rmdir .codex; } 2>/dev/null || printf protected; "
		"printf x > /tmp/app-server-test-outside 2>/dev/null || printf ' outside-denied'",
		&r);
	assert_string_equal(r.out, "protected outside-denied");
	out = get(f->dir, "allowed");
	assert_string_equal(out, "permitted");
	free(out);
	out = get(f->dir, ".git/config");
	assert_string_equal(out, "original\n");
	free(out);
	out = get(f->dir, ".codex/config.toml");
	assert_string_equal(out, "original\n");
	free(out);
	assert_false(exists(f->dir, ".agents"));
	assert_false(exists(f->dir, "g2"));
}

static void
test_run_restricted_read(void **state)
{
	struct fixture *f = *state;
	struct result r;
	char *out;

	put(f->dir, "blocked/secret.txt", "secret\n");
	put(f->dir, "blocked/allowed/keep", "");
	run_ok(pol("{'type':'managed','fileSystem':{'type':'restricted','entries':["
		   "{'path':{'type':'special','value':{'kind':'minimal'}},'access':'read'},"
		   "{'path':{'type':'path','path':'%s'},'access':'write'},"
		   "{'path':{'type':'path','path':'%s/blocked'},'access':'deny'},"
		   "{'path':{'type':'path','path':'%s/blocked/allowed'},'access':'write'}]}}",
		       f->dir, f->dir, f->dir),
		f->dir,
		"test -e /home && echo home-visible; cat blocked/secret.txt 2>/dev/null || echo "
		"secret-denied; printf allowed > blocked/allowed/note.txt && cat "
		"blocked/allowed/note.txt; echo; ls /usr/bin/sh >/dev/null && echo usr-ok",
		&r);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "secret-denied\nallowed\nusr-ok\n");
	out = get(f->dir, "blocked/allowed/note.txt");
	assert_string_equal(out, "allowed");
	free(out);
	/* Root readable, one directory denied. */
	run_ok(pol("{'type':'managed','fileSystem':{'type':'restricted','entries':["
		   "{'path':{'type':'special','value':{'kind':'root'}},'access':'read'},"
		   "{'path':{'type':'path','path':'%s/blocked'},'access':'deny'}]}}",
		       f->dir),
		f->dir, "cat blocked/secret.txt || echo denied; test -e /etc/hostname && echo etc",
		&r);
	assert_string_equal(r.out, "denied\netc\n");
}

static void
test_run_concurrent(void **state)
{
	struct fixture *f = *state;
	char *argv[] = {"sh", "-c", "sleep 0.3; mkdir .codex 2>/dev/null || printf held", NULL};
	struct spawn_proc sp[4];
	struct spawn_opts so;
	char *cause = NULL, buf[16];
	json_t *j = pol("{'type':'workspaceWrite','excludeSlashTmp':true}");
	int st, i;

	/* Several sandboxes share the placeholders; the last one out removes them. */
	for (i = 0; i < 4; i++) {
		memset(&so, 0, sizeof so);
		so.argv = argv;
		so.cwd = f->dir;
		assert_int_equal(sandbox_spawn_prepare(j, &so, &cause), 0);
		assert_int_equal(spawn_start(&so, &sp[i], &cause), 0);
		sandbox_spawn_done(&so, NULL);
		usleep(50000 * (i % 2));
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(waitpid(sp[i].pid, &st, 0), sp[i].pid);
		assert_int_equal(WEXITSTATUS(st), 0);
		fcntl(sp[i].out_fd, F_SETFL, 0);
		assert_int_equal(read(sp[i].out_fd, buf, sizeof buf), 4);
		assert_int_equal(memcmp(buf, "held", 4), 0);
		spawn_proc_close(&sp[i]);
	}
	assert_false(exists(f->dir, ".codex"));
	assert_false(exists(f->dir, ".git"));
	assert_false(exists(f->dir, ".agents"));
	json_decref(j);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_run_root_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_exit_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_faults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_proc_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_exec_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_supervised_kill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_workspace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_restricted_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_concurrent, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
