/*
 * Shell snapshots against the real daemon (agent/shell/shell_snapshot.h): a HOME whose
 * ~/.profile sleeps 0.2 s, exports a variable and counts its runs in a file. The thread's
 * snapshot is taken at thread/start; once it is there, a -lc tool call sees the profile's
 * variables without running the profile again (the count stays) and without its sleep. The
 * file is upstream's ($CODEX_HOME/shell_snapshots/<thread>.<nanos>.sh, its sections), taken
 * again when turn/start changes the cwd (the old one removed then), and removed when the
 * thread is unloaded and when the daemon exits. `[features] shell_snapshot = false` turns
 * it off. A profile that hangs does not hold the daemon's exit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

#define ANSWER_DONE                                                                                \
	"{`events`:[{`ev`:`created`},{`ev`:`message`,`id`:`m-end`,`text`:`done`},{`ev`:`completed`}]}"
/* One exec_command turn (login by default: /bin/bash -lc). */
#define TOOL_TURN(id, cmd)                                                                         \
	"{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`" id "`,"                    \
	"`name`:`exec_command`,`arguments`:{`cmd`:`" cmd "`,`yield_time_ms`:10000}},"              \
	"{`ev`:`completed`}]}," ANSWER_DONE
#define ECHO_VARS "echo $SNAP_VAR:$SNAP_RC:$TERM"

struct fx {
	struct tt f;
	char *home; /* HOME of the daemon (and of the login shell) */
	char *runs; /* the profile appends a line here each time it runs */
	char *dir;  /* CODEX_HOME/shell_snapshots */
};

/*
 * The fixture: a HOME with a slow profile, a daemon with HOME set (and the two entries of
 * env_extra, when given), a thread started under sandbox (NULL: danger-full-access).
 */
static void
fx_start_in(struct fx *x, const char *script, const char *config_extra, const char *profile,
	const char *sandbox, const char *const *env_extra)
{
	char tmpl[] = "/tmp/test_snap_home.XXXXXX", *p, *s = tt_script(script), *env_home;
	FILE *f;

	assert_non_null(mkdtemp(tmpl));
	x->home = xstrdup(tmpl);
	x->runs = xasprintf("%s/profile-runs", x->home);
	p = xasprintf("%s/.profile", x->home);
	assert_non_null(f = fopen(p, "w"));
	fprintf(f, "%s",
		profile != NULL ? profile
				: "echo run >> \"$HOME/profile-runs\"\nsleep 0.2\n"
				  "export SNAP_VAR=from-profile\n. \"$HOME/.bashrc\"\n");
	fclose(f);
	free(p);
	p = xasprintf("%s/.bashrc", x->home);
	assert_non_null(f = fopen(p, "w"));
	fprintf(f, "export SNAP_RC=from-rc\nalias ll='ls -l'\nsnap_fn() { echo fn; }\n");
	fclose(f);
	free(p);
	env_home = xasprintf("HOME=%s", x->home);
	const char *env[] = {env_home, "APP_SERVER_THREAD_IDLE_SECS=0.2",
		env_extra != NULL ? env_extra[0] : NULL, env_extra != NULL ? env_extra[1] : NULL,
		NULL};
	struct tt_opts o = {
		.script = s, .config_extra = config_extra, .env = env, .sandbox = sandbox};

	tt_start(&x->f, &o);
	x->dir = xasprintf("%s/shell_snapshots", x->f.home);
	free(env_home);
	free(s);
}

static void
fx_start(struct fx *x, const char *script, const char *config_extra, const char *profile)
{
	fx_start_in(x, script, config_extra, profile, NULL, NULL);
}

static void
fx_stop(struct fx *x)
{
	char *const rm[] = {"rm", "-rf", x->home, NULL};
	pid_t pid;
	int st;

	tt_stop(&x->f);
	if ((pid = fork()) == 0) {
		execvp("rm", rm);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	free(x->home);
	free(x->runs);
	free(x->dir);
}

/* Names in the snapshot folder: how many, and the first .sh one (heap) if any. */
static int
snap_files(const struct fx *x, char **sh, int *tmps)
{
	DIR *d = opendir(x->dir);
	struct dirent *e;
	int n = 0;

	if (sh != NULL)
		*sh = NULL;
	if (tmps != NULL)
		*tmps = 0;
	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);

		if (e->d_name[0] == '.')
			continue;
		n++;
		if (tmps != NULL && strstr(e->d_name, ".tmp-") != NULL)
			(*tmps)++;
		if (sh != NULL && *sh == NULL && l > 3 && strcmp(e->d_name + l - 3, ".sh") == 0)
			*sh = xasprintf("%s/%s", x->dir, e->d_name);
	}
	closedir(d);
	return n;
}

/* Wait (10 s at most) for a ready snapshot other than `not`; its path (heap). */
static char *
snap_wait(const struct fx *x, const char * not )
{
	char *sh = NULL;

	for (int i = 0; i < 1000; i++) {
		int tmps;

		snap_files(x, &sh, &tmps);
		if (sh != NULL && tmps == 0 && (not == NULL || strcmp(sh, not ) != 0))
			return sh;
		free(sh);
		usleep(10000);
	}
	fail_msg("no shell snapshot in %s", x->dir);
	return NULL;
}

/* Lines in the profile's run log. */
static int
profile_runs(const struct fx *x)
{
	char *t = tt_read(x->runs);
	int n = 0;

	for (const char *p = t; p != NULL && (p = strchr(p, '\n')) != NULL; p++)
		n++;
	free(t);
	return n;
}

/* The commandExecution item of a turn's messages (borrowed). */
static json_t *
cmd_item(const json_t *msgs)
{
	json_t *item = tt_item(msgs, "commandExecution", 0);

	assert_non_null(item);
	assert_string_equal(json_string_value(json_object_get(item, "status")), "completed");
	return item;
}

static void
test_snapshot_serves_later_calls(void **state)
{
	struct fx x;
	json_t *msgs, *item;
	char *sh, *text, *name, *want;
	int runs;

	(void)state;
	fx_start(&x,
		"[" TOOL_TURN("c1", ECHO_VARS) "," TOOL_TURN("c2", ECHO_VARS) "," TOOL_TURN(
			"c3", "echo $SNAP_VAR; type snap_fn >/dev/null 2>&1 || echo no-fn") "]",
		NULL, NULL);
	/* The first call may come before the snapshot: it runs bash -lc, and sees the same. */
	msgs = tt_turn(&x.f, "one", NULL, NULL, NULL);
	assert_string_equal(json_string_value(json_object_get(cmd_item(msgs), "aggregatedOutput")),
		"from-profile:from-rc:dumb\n");
	json_decref(msgs);

	sh = snap_wait(&x, NULL);
	name = xasprintf("%s/%s.", x.dir, x.f.thread_id);
	assert_true(strncmp(sh, name, strlen(name)) == 0); /* <thread-id>.<nanos>.sh */
	assert_true(strspn(sh + strlen(name), "0123456789") == strlen(sh + strlen(name)) - 3);
	text = tt_read(sh);
	assert_non_null(text);
	assert_true(strncmp(text,
			    "# Snapshot file\n# Unset all aliases to avoid conflicts with "
			    "functions\nunalias -a 2>/dev/null || true\nshopt -",
			    105) == 0);
	assert_non_null(strstr(text, "\n# Functions\nsnap_fn () \n{ \n    echo fn\n}\n"));
	assert_non_null(strstr(text, "\n# setopts "));
	assert_non_null(strstr(text, "\n# aliases 1\nalias ll='ls -l'\n\n"));
	assert_non_null(strstr(text, "\n# exports (native declarations)\n"));
	assert_non_null(strstr(text, "\ndeclare -x SNAP_VAR=\"from-profile\"\n"));
	assert_null(strstr(text, "declare -x PWD="));
	assert_null(strstr(text, "declare -x OLDPWD="));
	want = xasprintf("\ndeclare -x HOME=\"%s\"\n", x.home);
	assert_non_null(strstr(text, want));
	free(want);

	/* Later calls source it: the profile does not run again, its sleep is not paid. */
	runs = profile_runs(&x);
	msgs = tt_turn(&x.f, "two", NULL, NULL, NULL);
	item = cmd_item(msgs);
	assert_string_equal(json_string_value(json_object_get(item, "aggregatedOutput")),
		"from-profile:from-rc:dumb\n"); /* TERM: the call's own value wins */
	assert_string_equal(json_string_value(json_object_get(item, "command")),
		"/bin/bash -lc 'echo $SNAP_VAR:$SNAP_RC:$TERM'");
	assert_true(json_integer_value(json_object_get(item, "durationMs")) < 200);
	json_decref(msgs);
	/* What survives the exec into the call's own shell is the environment, as upstream. */
	msgs = tt_turn(&x.f, "three", NULL, NULL, NULL);
	assert_string_equal(json_string_value(json_object_get(cmd_item(msgs), "aggregatedOutput")),
		"from-profile\nno-fn\n");
	assert_true(json_integer_value(json_object_get(cmd_item(msgs), "durationMs")) < 200);
	json_decref(msgs);
	assert_int_equal(profile_runs(&x), runs);

	/* The daemon's exit removes it. */
	asc_free(x.f.c);
	assert_int_equal(snap_files(&x, NULL, NULL), 0);
	tt_respawn(&x.f);
	free(text);
	free(name);
	free(sh);
	fx_stop(&x);
}

/* thread/shellCommand `cmd` on the idle thread, to its turn/completed; the item's output (heap). */
static char *
user_shell(struct fx *x, const char *cmd)
{
	json_t *r, *msgs;
	char *out;

	r = tt_call(&x->f, "thread/shellCommand",
		json_pack("{s:s, s:s}", "threadId", x->f.thread_id, "command", cmd));
	asc_assert_result(r);
	json_decref(r);
	msgs = tt_collect(&x->f, NULL, NULL);
	out = xstrdup(json_string_value(json_object_get(cmd_item(msgs), "aggregatedOutput")));
	json_decref(msgs);
	return out;
}

/*
 * The user's commands (nothing of the call's own to keep over the file) start one shell: the
 * environment the wrapper's exec would hand on is the one the check printed, given to
 * `bash -c` directly. What the command sees is the profile's environment, as through the
 * wrapper; the file is not sourced per command, so a line added to it later is not seen
 * (through the wrapper it would be).
 */
static void
test_snapshot_user_shell_one_shell(void **state)
{
	struct fx x;
	char *sh, *out;
	FILE *f;

	(void)state;
	fx_start(&x, "[" ANSWER_DONE "]", NULL, NULL);
	sh = snap_wait(&x, NULL);
	assert_non_null(f = fopen(sh, "a"));
	fputs("export SNAP_LATE=edited\n", f);
	fclose(f);
	out = user_shell(&x, "echo $SNAP_VAR:$SNAP_RC:${SNAP_LATE-unset}:$0");
	assert_string_equal(out, "from-profile:from-rc:unset:/bin/bash\n");
	free(out);
	assert_int_equal(profile_runs(&x), 1);
	free(sh);
	fx_stop(&x);
}

/*
 * The capture thread/start asks for waits (SHELL_SNAPSHOT_DEFER; here a minute), so that the
 * login shell and its sandbox's set-up do not compete with the rest of a client's start-up;
 * a turn or a user's command starts it at once. Without the wait the profile runs within
 * milliseconds of thread/start; without the hurry no snapshot comes within the minute.
 */
static void
test_snapshot_deferred_until_turn(void **state)
{
	const char *env[] = {"APP_SERVER_SNAPSHOT_DEFER_MS=60000", NULL};
	struct fx x;
	json_t *msgs;
	char *sh;

	(void)state;
	fx_start_in(&x, "[" ANSWER_DONE "]", NULL, NULL, NULL, env);
	usleep(500000);
	assert_int_equal(profile_runs(&x), 0);
	assert_int_equal(snap_files(&x, NULL, NULL), 0);
	msgs = tt_turn(&x.f, "hello", NULL, NULL, NULL);
	json_decref(msgs);
	sh = snap_wait(&x, NULL);
	assert_int_equal(profile_runs(&x), 1);
	free(sh);
	fx_stop(&x);
}

static void
test_snapshot_deferred_until_user_shell(void **state)
{
	const char *env[] = {"APP_SERVER_SNAPSHOT_DEFER_MS=60000", NULL};
	struct fx x;
	char *sh, *out;

	(void)state;
	fx_start_in(&x, "[" ANSWER_DONE "]", NULL, NULL, NULL, env);
	out = user_shell(&x, "echo $SNAP_VAR"); /* before the snapshot: the profile runs for it */
	assert_string_equal(out, "from-profile\n");
	free(out);
	sh = snap_wait(&x, NULL);
	assert_int_equal(profile_runs(&x), 2);
	free(sh);
	fx_stop(&x);
}

static void
test_snapshot_cwd_change_and_unload(void **state)
{
	struct fx x;
	json_t *msgs, *r, *params;
	char *old, *now, *sub;
	struct stat st;

	(void)state;
	fx_start(&x, "[" TOOL_TURN("c1", "echo $SNAP_VAR; pwd") "]", NULL, NULL);
	old = snap_wait(&x, NULL);
	sub = tt_path(&x.f, "sub");
	assert_int_equal(mkdir(sub, 0700), 0);
	/* turn/start with another cwd: a new snapshot for it, the old file removed then. */
	params = json_pack("{s:s}", "cwd", sub);
	msgs = tt_turn(&x.f, "elsewhere", params, NULL, NULL);
	json_decref(msgs);
	now = snap_wait(&x, old);
	for (int i = 0; i < 500 && stat(old, &st) == 0; i++)
		usleep(10000);
	assert_int_not_equal(stat(old, &st), 0);
	assert_int_equal(snap_files(&x, NULL, NULL), 1);
	/* Unsubscribed and idle: the thread unloads (thread/closed), its snapshot goes. */
	r = tt_call(&x.f, "thread/unsubscribe", json_pack("{s:s}", "threadId", x.f.thread_id));
	json_decref(r);
	json_decref(asc_wait_notification(x.f.c, "thread/closed", asc_timeout(5000)));
	assert_int_not_equal(stat(now, &st), 0);
	assert_int_equal(snap_files(&x, NULL, NULL), 0);
	free(old);
	free(now);
	free(sub);
	fx_stop(&x);
}

static void
test_snapshot_feature_off(void **state)
{
	struct fx x;
	json_t *msgs;
	struct stat st;

	(void)state;
	fx_start(&x, "[" TOOL_TURN("c1", ECHO_VARS) "]", "[features]\nshell_snapshot = false\n",
		NULL);
	msgs = tt_turn(&x.f, "one", NULL, NULL, NULL);
	assert_string_equal(json_string_value(json_object_get(cmd_item(msgs), "aggregatedOutput")),
		"from-profile:from-rc:dumb\n");
	json_decref(msgs);
	usleep(300000);
	assert_int_not_equal(stat(x.dir, &st), 0);
	assert_int_equal(profile_runs(&x), 1); /* the call's own login shell only */
	fx_stop(&x);
}

static void
test_snapshot_hanging_profile(void **state)
{
	struct fx x;
	struct timespec a, b;

	(void)state;
	/* A profile that never ends: the daemon's exit kills it, no file is left. */
	fx_start(&x, "[]", NULL, "echo run >> \"$HOME/profile-runs\"\nexec sleep 60\n");
	for (int i = 0; i < 500 && profile_runs(&x) == 0; i++)
		usleep(10000);
	assert_int_equal(profile_runs(&x), 1);
	/* The folder is made with the first file, not at thread/start (a mkdir it waited for). */
	assert_int_equal(access(x.dir, F_OK), -1);
	clock_gettime(CLOCK_MONOTONIC, &a);
	asc_free(x.f.c); /* stdin EOF: the daemon must exit 0 within its deadline */
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true(b.tv_sec - a.tv_sec < 3);
	assert_int_equal(snap_files(&x, NULL, NULL), 0);
	tt_respawn(&x.f);
	fx_stop(&x);
}

/* Milliseconds since a. */
static long
ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (b.tv_sec - a->tv_sec) * 1000 + (b.tv_nsec - a->tv_nsec) / 1000000;
}

/*
 * A sandboxed snapshot's setup (mounts, Landlock, the cgroup: 5-50 ms, 1.5 s here through
 * APP_SERVER_SANDBOX_PAUSE_MS) runs beside the loop: thread/start is answered, and the next
 * request too, before it ends; the snapshot is still taken. A daemon told to exit during
 * such a setup exits, and leaves no file, nor the sandbox's placeholder in the workspace.
 */
static void
test_snapshot_setup_beside_the_loop(void **state)
{
	struct fx x;
	struct timespec a;
	struct stat st;
	char *first, *git;
	json_t *r;
	long long id;

	(void)state;
	/* The threads stay loaded while their snapshots take seconds. */
	const char *const env[] = {
		"APP_SERVER_SANDBOX_PAUSE_MS=1500", "APP_SERVER_THREAD_IDLE_SECS=60"};

	fx_start_in(&x, "[]", NULL, NULL, "workspace-write", env);
	first = snap_wait(&x, NULL);
	clock_gettime(CLOCK_MONOTONIC, &a);
	id = asc_request(x.f.c, "thread/start",
		json_pack("{s:s, s:s}", "cwd", x.f.workspace, "sandbox", "workspace-write"));
	r = asc_wait_response(x.f.c, id, asc_timeout(5000));
	asc_assert_result(r);
	json_decref(r);
	id = asc_request(x.f.c, "thread/loaded/list", json_object());
	r = asc_wait_response(x.f.c, id, asc_timeout(5000));
	asc_assert_result(r);
	json_decref(r);
	/* Both answers while the new snapshot's sandbox still pauses in its setup. */
	assert_in_range(ms_since(&a), 0, 750);
	/* The first thread's file stays: the new one is the second .sh, whole (no .tmp- left). */
	for (int i = 0, tmps = 1; i < 1000 && (snap_files(&x, NULL, &tmps) != 2 || tmps != 0); i++)
		usleep(10000);
	assert_int_equal(snap_files(&x, NULL, NULL), 2);
	assert_true(ms_since(&a) >= 1500);
	/* A third thread, and the daemon's exit during its snapshot's setup. */
	id = asc_request(x.f.c, "thread/start",
		json_pack("{s:s, s:s}", "cwd", x.f.workspace, "sandbox", "workspace-write"));
	r = asc_wait_response(x.f.c, id, asc_timeout(5000));
	asc_assert_result(r);
	json_decref(r);
	clock_gettime(CLOCK_MONOTONIC, &a);
	asc_free(x.f.c); /* stdin EOF: the daemon must exit 0 within its deadline */
	assert_in_range(ms_since(&a), 0, 3500);
	assert_int_equal(snap_files(&x, NULL, NULL), 0);
	/*
	 * The sandbox's placeholder for the workspace's .git goes with it (its init's teardown,
	 * which the daemon's exit waits for within its grace; on a loaded machine the setup can
	 * outlast that, and the init still tears down once it is done).
	 */
	git = xasprintf("%s/.git", x.f.workspace);
	for (long long t0 = asc_now_ms();
		lstat(git, &st) == 0 && asc_now_ms() - t0 < asc_timeout(5000);)
		usleep(20000);
	assert_int_not_equal(lstat(git, &st), 0);
	free(git);
	tt_respawn(&x.f);
	free(first);
	fx_stop(&x);
}

/*
 * Files a dead daemon left (a kill -9: no exit to remove them) are swept by the next daemon's
 * first snapshot once they are days old and their thread was not written since; a recent
 * one, maybe a live thread's of another daemon, stays.
 */
static void
test_snapshot_stale_swept(void **state)
{
	struct fx x;
	struct timespec old[2];
	char *stale, *fresh, *sh;
	json_t *r;
	long long id;
	struct stat st;
	FILE *f;

	(void)state;
	fx_start(&x, "[]", NULL, NULL);
	sh = snap_wait(&x, NULL);
	free(sh);
	asc_free(x.f.c); /* this daemon's files go with it */
	stale = xasprintf("%s/019a0000-0000-7000-8000-00000000dead.111.sh", x.dir);
	fresh = xasprintf("%s/019a0000-0000-7000-8000-00000000beef.222.sh", x.dir);
	assert_non_null(f = fopen(stale, "w"));
	fclose(f);
	assert_non_null(f = fopen(fresh, "w"));
	fclose(f);
	old[0].tv_sec = old[1].tv_sec = time(NULL) - 4 * 24 * 3600;
	old[0].tv_nsec = old[1].tv_nsec = 0;
	assert_int_equal(utimensat(AT_FDCWD, stale, old, 0), 0);
	tt_respawn(&x.f);
	id = asc_request(x.f.c, "thread/start", json_pack("{s:s}", "cwd", x.f.workspace));
	r = asc_wait_response(x.f.c, id, asc_timeout(5000));
	asc_assert_result(r);
	json_decref(r);
	for (int i = 0; i < 500 && stat(stale, &st) == 0; i++)
		usleep(10000);
	assert_int_not_equal(stat(stale, &st), 0);
	assert_int_equal(stat(fresh, &st), 0);
	free(stale);
	free(fresh);
	fx_stop(&x);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshot_serves_later_calls),
		cmocka_unit_test(test_snapshot_user_shell_one_shell),
		cmocka_unit_test(test_snapshot_deferred_until_turn),
		cmocka_unit_test(test_snapshot_deferred_until_user_shell),
		cmocka_unit_test(test_snapshot_cwd_change_and_unload),
		cmocka_unit_test(test_snapshot_feature_off),
		cmocka_unit_test(test_snapshot_hanging_profile),
		cmocka_unit_test(test_snapshot_stale_swept),
		cmocka_unit_test(test_snapshot_setup_beside_the_loop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
