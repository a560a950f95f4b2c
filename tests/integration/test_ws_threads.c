/*
 * Threads shared between WebSocket connections, and the listener's exit while a thread's
 * sandboxed command runs (issue 27), against the real binary: tests/integration/ws/
 * ws_threads.py drives the clients against a daemon whose model is the mock
 * (docs/transports.md records upstream 0.169's rules these cases check).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "protocol/xmalloc.h"
#include "sandbox_util.h"
#include "turn_util.h"
#include "ws_util.h"

#define WS_THREADS "tests/integration/ws/ws_threads.py"

/*
 * Our children but the mock (pid keep), killed and reaped: what the daemon left running once
 * gone comes to us, its subreaper (ws_case). How many there were.
 */
static int
left_children(pid_t keep)
{
	char path[64], buf[4096], *t, *end;
	FILE *f;
	size_t n = 0;
	int left = 0;

	snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
	if ((f = fopen(path, "re")) != NULL) {
		n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	for (t = buf; *t != '\0'; t = end) {
		pid_t pid = (pid_t)strtol(t, &end, 10);

		if (end == t)
			break;
		if (pid > 0 && pid != keep) {
			char stat[256] = "", *sp = xasprintf("/proc/%d/stat", (int)pid);
			FILE *g = fopen(sp, "re");
			size_t k = 0;

			if (g != NULL) { /* its name and state: a zombie has no command line */
				k = fread(stat, 1, sizeof stat - 1, g);
				fclose(g);
			}
			stat[k] = '\0';
			print_message("left running after the daemon's exit: %s\n", stat);
			free(sp);
			left++;
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
	}
	return left;
}

/*
 * ws_threads.py's case against a daemon whose model is the mock playing script (` for ").
 * With exits, the case makes the daemon exit (SIGTERM, its pid given): it must exit 0 by
 * itself, and leave neither a sandbox's placeholder in the workspace nor a process (we are
 * its subreaper meanwhile); exits is extra environment for the daemon.
 */
static void
ws_case(const char *name, const char *script, const char *sandbox, const char *exits)
{
	struct mm m;
	struct wsd d = {0};
	char *s = tt_script(script), *ws, *o, *e, home_dir[] = "/tmp/test_ws_home.XXXXXX";
	char *home_env[3] = {NULL, (char *)exits, NULL}, pid[16];
	int st;

	mm_start(&m, s);
	free(s);
	d.config = xasprintf("model = \"mock-model\"\nmodel_provider = \"mock\"\n"
			     "[model_providers.mock]\nname = \"mock\"\n"
			     "base_url = \"http://127.0.0.1:%d/v1\"\nwire_api = \"responses\"\n"
			     "request_max_retries = 0\nstream_max_retries = 0\n",
		m.port);
	/* a HOME of its own, as the harness gives: the machine's login profile stays out */
	assert_non_null(mkdtemp(home_dir));
	home_env[0] = xasprintf("HOME=%s", home_dir);
	if (exits != NULL)
		assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	wst_start(&d, "ws://127.0.0.1:0", NULL, home_env);
	ws = xasprintf("%s/work", d.dir);
	assert_int_equal(mkdir(ws, 0700), 0);
	o = xasprintf("%s/threads.out", d.dir);
	e = xasprintf("%s/threads.err", d.dir);
	snprintf(pid, sizeof pid, "%d", (int)d.pid);
	char *argv[] = {"python3", WS_THREADS, (char *)name, "--addr", d.url, "--workspace", ws,
		"--sandbox", (char *)sandbox, "--pid", pid, NULL};
	st = wst_wait(wst_spawn(argv, o, e, NULL), 60);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char *t = wst_slurp(e), *log = wst_slurp(d.err);

		fail_msg("%s: status %d: %s\ndaemon: %s", name, st, t, log);
	}
	if (exits != NULL) {
		char *said = wst_slurp(o), *at = strstr(said, "sigterm_at ");

		st = wst_wait(d.pid, 15);
		if (at != NULL) /* within wst_wait's 20 ms polls */
			print_message("%s: the daemon exited %.0f ms after SIGTERM\n", name,
				(wst_now() - strtod(at + 11, NULL)) * 1e3);
		free(said);
		if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			char *log = wst_slurp(d.err);

			fail_msg("%s: the daemon's exit: status %d: %s", name, st, log);
		}
		sbt_assert_no_residue(ws);
		assert_int_equal(left_children(m.pid), 0);
		prctl(PR_SET_CHILD_SUBREAPER, 0);
		nftw(d.dir, wst_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
		free(d.err);
		free(d.out);
	} else
		wst_stop(&d);
	free(o);
	free(e);
	free(ws);
	free(d.config);
	mm_stop(&m);
	nftw(home_dir, wst_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(home_env[0]);
}

static void
shared_thread(const char *name, const char *script)
{
	ws_case(name, script, "danger-full-access", NULL);
}

#define FIRST                                                                                      \
	"{`events`:[{`ev`:`created`},{`ev`:`message`,`id`:`m0`,`text`:`first`},{`ev`:`completed`}]}"
#define CALL_TOUCH                                                                                 \
	"{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`c1`,`name`:`exec_command`,"  \
	"`arguments`:{`cmd`:`touch a.txt && echo hi`}},{`ev`:`completed`}]}"
#define DONE                                                                                       \
	"{`events`:[{`ev`:`created`},{`ev`:`message`,`id`:`m1`,`text`:`done`},{`ev`:`completed`}]}"

/* Both clients see every event; the approval reaches both and the other one answers it. */
static void
test_shared_thread_events(void **state)
{
	shared_thread("share", "[" FIRST "," CALL_TOUCH "," DONE "]");
}

/* A subscriber that did not start the turn goes mid-turn: the turn completes for the other. */
static void
test_shared_thread_drop_other(void **state)
{
	shared_thread("drop_other",
		"[" FIRST ",{`events`:[{`ev`:`created`},{`ev`:`message`,`id`:`m1`,`text`:`slow "
		"answer`,`delay_ms`:1500},{`ev`:`completed`}]}]");
}

/* The one that started the turn goes while its approval waits: the other answers it. */
static void
test_shared_thread_drop_starter(void **state)
{
	shared_thread("drop_starter", "[" FIRST "," CALL_TOUCH "," DONE "]");
}

/* B resumes the thread while A's turn waits on an approval: B gets it too and answers it. */
static void
test_shared_thread_resume_pending(void **state)
{
	shared_thread("resume_pending", "[" FIRST "," CALL_TOUCH "," DONE "]");
}

/* The same, but A answers its own copy: B's replayed copy is resolved with B's id. */
static void
test_shared_thread_resume_pending_starter(void **state)
{
	shared_thread("resume_pending_starter", "[" FIRST "," CALL_TOUCH "," DONE "]");
}

/*
 * A turn's command is in its sandbox's setup (workspace-write: a placeholder for the
 * workspace's .git is on the host meanwhile; the setup paused for 1.5 s) when the listener
 * gets SIGTERM: the thread unloads and frees the sandbox, whose init tears down once its
 * setup is done. The daemon exits 0 after that teardown removed the placeholder, and nothing
 * of the sandbox is left running.
 */
static void
test_sigterm_sandboxed_turn(void **state)
{
	ws_case("sigterm",
		"[{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`c1`,`name`:"
		"`exec_command`,`arguments`:{`cmd`:`sleep 37.25`,`login`:false,`yield_time_ms`:"
		"30000}},{`ev`:`completed`}]}]",
		"workspace-write", "APP_SERVER_SANDBOX_PAUSE_MS=1500");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_thread_events),
		cmocka_unit_test(test_shared_thread_drop_other),
		cmocka_unit_test(test_shared_thread_drop_starter),
		cmocka_unit_test(test_shared_thread_resume_pending),
		cmocka_unit_test(test_shared_thread_resume_pending_starter),
		cmocka_unit_test(test_sigterm_sandboxed_turn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
