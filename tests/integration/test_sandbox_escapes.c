/*
 * The sandbox escapes found by the attack pass (issue 9, items 1-4), each replayed end to end
 * against the real daemon: the attack runs inside a real sandbox and the host is checked
 * afterwards. Every test here failed on the daemon before the protected-path rules
 * (sandbox/protect.c, docs/sandbox.md "Protected paths"):
 *  - a writable root (or cwd) inside .git or .codex no longer opens them;
 *  - a `gitdir:` target cannot be swapped by renaming its ancestors, and a gitdir through a
 *    symlink in the workspace is refused;
 *  - CODEX_HOME stays read-only, so a command cannot rewrite the daemon's configuration;
 *  - a symlink planted by one command does not widen the next one's writable roots.
 * And the hardening issue's race (issue 15): an outside process removing a protected name
 * detaches the sandbox's read-only cover of it (the kernel does that for mounts in other
 * namespaces), so the command could create it on the host. Before the guard (sandbox/guard.c)
 * the command below ran on with `.git` gone and `mkdir .git` succeeded.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sandbox_util.h"
#include "protocol/xmalloc.h"

/* mkdir -p of dir/rel. */
static void
mkdirs(const char *dir, const char *rel)
{
	char *p = xasprintf("%s/%s", dir, rel), *s;

	for (s = p + strlen(dir) + 1; (s = strchr(s, '/')) != NULL; s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
	free(p);
}

/* Item 1: roots inside protected directories do not open them. */
static void
test_root_inside_protected(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *ws = sbt_mkdir_in(c, "ws"), *extra, *cwd;
	const char *attack = "{ echo PWN >> .git/config; } 2>/dev/null && echo git; "
			     "{ echo PWN >> .codex/config.toml; } 2>/dev/null && echo codex; "
			     "{ echo hook > .git/hooks/post-checkout; } 2>/dev/null && echo hook; "
			     "echo done";

	mkdirs(ws, ".git/hooks");
	mkdirs(ws, ".codex");
	sbt_put(xasprintf("%s/.git/config", ws), "original");
	sbt_put(xasprintf("%s/.codex/config.toml", ws), "original");
	/* A root that does not exist, inside .git, then inside .codex. */
	extra = xasprintf("{'sandboxPolicy':{'type':'workspaceWrite','writableRoots':["
			  "'%s/.git/x-nonexistent','%s/.codex/y']}}",
		ws, ws);
	sbt_expect(c, ws, extra, attack, 0, "done\n");
	free(extra);
	/* .git/hooks itself as a root. */
	extra = xasprintf(
		"{'sandboxPolicy':{'type':'workspaceWrite','writableRoots':['%s/.git/hooks']}}",
		ws);
	sbt_expect(c, ws, extra, attack, 0, "done\n");
	free(extra);
	/* The cwd under .git, with the workspace as a root: still read-only there. */
	cwd = xasprintf("%s/.git/hooks", ws);
	extra = xasprintf("{'sandboxPolicy':{'type':'workspaceWrite','writableRoots':['%s']}}", ws);
	sbt_expect(c, cwd, extra,
		"{ echo hook > post-checkout; } 2>/dev/null && echo hook; "
		"{ echo PWN >> ../config; } 2>/dev/null && echo git; echo done",
		0, "done\n");
	sbt_assert_file(xasprintf("%s/.git/config", ws), "original");
	sbt_assert_file(xasprintf("%s/.codex/config.toml", ws), "original");
	assert_false(sbt_present(cwd, "post-checkout"));
	assert_false(sbt_present(ws, ".git/x-nonexistent"));
	assert_false(sbt_present(ws, ".agents")); /* its placeholder is gone */
	free(extra);
	free(cwd);
	free(ws);
	asc_free(c);
}

/* Item 2: the git directory of a `gitdir:` file, and every ancestor of it, stays put. */
static void
test_gitdir_target(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *ws = sbt_mkdir_in(c, "ws"), *link, *msg, *want;
	struct sbt_out o;

	mkdirs(ws, "meta/realgit/hooks");
	sbt_put(xasprintf("%s/meta/realgit/config", ws), "original");
	sbt_put(xasprintf("%s/.git", ws), "gitdir: meta/realgit\n");
	/* Rename the ancestor, build a look-alike with a hooksPath the host would run. */
	sbt_exec_ok(c,
		sbt_sh(ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}",
			"mv meta meta2 2>/dev/null && echo moved; "
			"rm -rf meta 2>/dev/null && echo removed; "
			"{ printf '[core]\\n\\thooksPath = /tmp\\n' > meta/realgit/config; } "
			"2>/dev/null && echo wrote; "
			"{ echo x > meta/realgit/hooks/post-checkout; } 2>/dev/null && echo hook; "
			"echo ok > meta/other && echo sibling-ok"),
		&o);
	assert_string_equal(o.out, "sibling-ok\n");
	sbt_out_free(&o);
	sbt_assert_file(xasprintf("%s/meta/realgit/config", ws), "original");
	assert_false(sbt_present(ws, "meta2"));
	assert_false(sbt_present(ws, "meta/realgit/hooks/post-checkout"));

	/* A gitdir that does not exist yet cannot be created. */
	sbt_put(xasprintf("%s/.git", ws), "gitdir: later/realgit\n");
	sbt_expect(c, ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}",
		"mkdir -p later/realgit 2>/dev/null && echo made; echo done", 0, "done\n");
	assert_false(sbt_present(ws, "later"));

	/* A gitdir reached through a symlink in the workspace: refused, nothing runs. */
	link = xasprintf("%s/lnk", ws);
	assert_int_equal(symlink("meta", link), 0);
	sbt_put(xasprintf("%s/.git", ws), "gitdir: lnk/realgit\n");
	msg = sbt_exec_err(c,
		sbt_sh(ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}", "echo ran > ran"),
		-32603);
	want = xasprintf("sandbox setup failed: cannot enforce sandbox read-only path "
			 "%s/lnk/realgit because it crosses writable symlink %s",
		ws, link);
	assert_string_equal(msg, want);
	assert_false(sbt_present(ws, "ran"));
	free(want);
	free(msg);
	free(link);
	free(ws);
	asc_free(c);
}

/* Item 3: CODEX_HOME is read-only in every sandbox; the next exec keeps its sandbox. */
static void
test_codex_home(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *ws = sbt_mkdir_in(c, "ws"), *script, *cfg;
	const char *home = asc_codex_home(c);

	/* CODEX_HOME is under /tmp, writable by default in workspaceWrite. */
	mkdir(home, 0700);
	script =
		xasprintf("{ printf 'sandbox_mode = \"danger-full-access\"\\n' > '%s/config.toml'; "
			  "} 2>/dev/null && echo wrote; mv '%s' '%s.x' 2>/dev/null && echo moved; "
			  "mkdir '%s/sessions' 2>/dev/null && echo mkdir; echo done",
			home, home, home, home);
	sbt_expect(c, ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}", script, 0, "done\n");
	free(script);
	cfg = xasprintf("%s/config.toml", home);
	assert_int_equal(access(cfg, F_OK), -1);
	/* No policy: still the configured default (readOnly), with no_new_privs and seccomp. */
	sbt_expect(c, ws, NULL, "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status", 0,
		"NoNewPrivs:\t1\nSeccomp:\t2\n");
	free(cfg);
	free(ws);
	asc_free(c);
}

/* Item 4: a symlink planted by one command does not widen the next one. */
static void
test_planted_symlink(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *ws = sbt_mkdir_in(c, "ws"), *outside = sbt_mkdir_in(c, "outside");
	char *extra, *msg, *sub = xasprintf("%s/sub", ws);

	extra = xasprintf("ln -s '%s' sub && echo planted", outside);
	sbt_expect(c, ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}", extra, 0, "planted\n");
	free(extra);
	/* The planted link as a writable root... */
	extra = xasprintf("{'sandboxPolicy':{'type':'workspaceWrite','excludeSlashTmp':true,"
			  "'writableRoots':['%s']}}",
		sub);
	msg = sbt_exec_err(c, sbt_sh(ws, extra, "echo PWN > sub/pwn"), -32603);
	assert_non_null(strstr(msg, "resolves through symlink"));
	free(msg);
	free(extra);
	/* ... or as the cwd, with the workspace it was planted in writable. */
	extra = xasprintf("{'sandboxPolicy':{'type':'workspaceWrite','excludeSlashTmp':true,"
			  "'writableRoots':['%s']}}",
		ws);
	msg = sbt_exec_err(c, sbt_sh(sub, extra, "echo PWN > pwn"), -32603);
	assert_non_null(strstr(msg, "resolves through symlink"));
	free(msg);
	free(extra);
	assert_false(sbt_present(outside, "pwn"));
	free(sub);
	free(outside);
	free(ws);
	asc_free(c);
}

/* Wait until dir/name exists (a sandbox's placeholder appeared on the host). */
static void
wait_present(const char *dir, const char *name)
{
	for (int i = 0; !sbt_present(dir, name); i++) {
		if (i == 1000)
			fail_msg("%s/%s never appeared", dir, name);
		usleep(10000);
	}
}

/* A protected name removed from outside during setup: the request fails, nothing runs. */
static void
test_protected_removed_during_setup(void **state)
{
	const char *env[] = {"APP_SERVER_SANDBOX_PAUSE_MS=1500", NULL};
	struct asc *c = sbt_daemon(0, env);
	char *ws = sbt_mkdir_in(c, "ws"), *git = xasprintf("%s/.git", ws), *want;
	long long id;
	json_t *m;

	id = asc_request(c, "command/exec",
		sbt_sh(ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}",
			"mkdir .git && echo MADE > .git/made"));
	wait_present(ws, ".git"); /* the placeholder, during the pause */
	assert_int_equal(rmdir(git), 0);
	m = asc_wait_response(c, id, asc_timeout(SBT_REPLY));
	asc_assert_error(m, -32603, "changed during setup");
	want = xasprintf("sandbox setup failed: protected path %s changed during setup: it was "
			 "removed; refusing to run",
		git);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(m, "error"), "message")), want);
	json_decref(m);
	assert_false(sbt_present(ws, ".git"));
	free(want);
	free(git);
	free(ws);
	asc_free(c);
}

/* Removed from outside while the command runs: the whole sandbox is killed at once. */
static void
test_protected_removed_while_running(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	char *ws = sbt_mkdir_in(c, "ws"), *git = xasprintf("%s/.git", ws), *want;
	struct timespec t0, t1;
	json_t *m, *r;
	long long id;

	id = asc_request(c, "command/exec",
		sbt_sh(ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}",
			"sleep 8; mkdir .git && echo MADE"));
	wait_present(ws, ".git");
	usleep(200000); /* the command is running */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(rmdir(git), 0);
	m = asc_wait_response(c, id, asc_timeout(SBT_REPLY));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r = asc_assert_result(m);
	assert_int_equal(json_integer_value(json_object_get(r, "exitCode")), 137);
	want = xasprintf("app-server sandbox: protected path %s was removed or replaced from "
			 "outside the sandbox: the command was killed",
		git);
	if (strstr(json_string_value(json_object_get(r, "stderr")), want) == NULL)
		fail_msg("stderr: %s", json_string_value(json_object_get(r, "stderr")));
	assert_true(t1.tv_sec - t0.tv_sec < 5); /* killed, not left to finish its sleep */
	json_decref(m);
	assert_false(sbt_present(ws, ".git"));
	free(want);
	free(git);
	free(ws);
	asc_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_inside_protected),
		cmocka_unit_test(test_gitdir_target),
		cmocka_unit_test(test_codex_home),
		cmocka_unit_test(test_planted_symlink),
		cmocka_unit_test(test_protected_removed_during_setup),
		cmocka_unit_test(test_protected_removed_while_running),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
