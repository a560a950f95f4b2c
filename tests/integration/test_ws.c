/*
 * The WebSocket and Unix-socket listeners (issue 27), against the real binary. The daemon is
 * started with --listen and driven by independent clients: curl for the HTTP probes, a raw
 * Python stdlib client (tests/integration/ws/ws_check.py) for frames a browser never sends,
 * and node's own WebSocket (tests/integration/ws/ws_node.mjs) for RFC 6455 conformance of
 * what we send. Every daemon must stop with exit 0 on SIGTERM and never write to stdout.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "protocol/xmalloc.h"
#include "tests/helpers/skip_note.h"
#include "ws_util.h"

#define WS_CHECK "tests/integration/ws/ws_check.py"
#define WS_NODE	 "tests/integration/ws/ws_node.mjs"

/*
 * Run ws_check.py's case against d (through `app-server proxy` when proxy); fails the test with
 * its output unless it exits 0.
 */
static void
check_via(struct wsd *d, const char *name, const char *file, int proxy)
{
	char pid[16], *o = xasprintf("%s/check.out", d->dir),
		      *e = xasprintf("%s/check.err", d->dir);
	char *argv[] = {"python3", WS_CHECK, (char *)name, "--addr", d->url, "--pid", pid, "--log",
		d->err, "--file", (char *)(file != NULL ? file : "/dev/null"), "--token",
		(char *)(d->token != NULL ? d->token : ""), proxy ? "--proxy" : NULL,
		(char *)wst_bin(), NULL};
	int st;

	snprintf(pid, sizeof pid, "%d", (int)d->pid);
	st = wst_wait(wst_spawn(argv, o, e, NULL), 180);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char *t = wst_slurp(e), *log = wst_slurp(d->err);

		fail_msg("%s: status %d: %s\ndaemon: %s", name, st, t, log);
	}
	/* figures the case measured go to the test's output */
	char *t = wst_slurp(o);
	fputs(t, stderr);
	free(t);
	free(o);
	free(e);
}

static void
check(struct wsd *d, const char *name, const char *file)
{
	check_via(d, name, file, 0);
}

/* Run the binary with args; its exit status and stderr. */
static int
run_cli(const char *a1, const char *a2, const char *a3, char **err)
{
	char *argv[] = {(char *)wst_bin(), (char *)a1, (char *)a2, (char *)a3, NULL};
	char dir[] = "/tmp/test_ws_cli.XXXXXX", *o, *e;
	int st;

	assert_non_null(mkdtemp(dir));
	o = xasprintf("%s/o", dir);
	e = xasprintf("%s/e", dir);
	st = wst_wait(wst_spawn(argv, o, e, NULL), 10);
	*err = wst_slurp(e);
	unlink(o);
	unlink(e);
	rmdir(dir);
	free(o);
	free(e);
	assert_true(st != -1 && WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* upstream 0.169's refusals, word for word (docs/transports.md). */
static void
test_cli_refusals(void **state)
{
	char *err;

	assert_int_equal(run_cli("--listen", "ws://0.0.0.0:1", NULL, &err), 1);
	assert_non_null(strstr(err,
		"Error: refusing to start non-loopback websocket listener "
		"0.0.0.0:1 without auth; configure `--ws-auth capability-token` "
		"or `--ws-auth signed-bearer-token`"));
	free(err);
	assert_int_equal(run_cli("--listen", "off", NULL, &err), 1);
	assert_non_null(strstr(err, "no transport configured; use --listen or enable remote"));
	free(err);
	assert_int_equal(run_cli("--listen", "ws://localhost:1", NULL, &err), 2);
	assert_non_null(strstr(err,
		"invalid websocket --listen URL `ws://localhost:1`; expected "
		"`ws://IP:PORT`"));
	free(err);
	assert_int_equal(run_cli("--listen=stdio://", "--listen", "ws://127.0.0.1:0", &err), 2);
	assert_non_null(strstr(err, "'--listen <URL>' cannot be used multiple times"));
	free(err);
}

static void
test_http_probes(void **state)
{
	struct wsd d = {0};

	wst_start(&d, "ws://127.0.0.1:0", NULL, NULL);
	check(&d, "http", NULL);
	wst_stop(&d);
}

static void
test_frames(void **state)
{
	struct wsd d = {0};

	wst_start(&d, "ws://127.0.0.1:0", NULL, NULL);
	check(&d, "basic", NULL);
	check(&d, "protocol", NULL);
	check(&d, "exec_kill", NULL);
	wst_stop(&d);
}

/*
 * The same without cgroups (a user's session: none writable): one connection's last command
 * ending, or the connection going, killed every child of the daemon, the other connection's
 * command too (all taken for setsid'd orphans).
 */
static void
test_exec_kill_without_cgroups(void **state)
{
	struct wsd d = {0};
	char *env[] = {"APP_SERVER_NO_CGROUPS=1", NULL};

	wst_start(&d, "ws://127.0.0.1:0", NULL, env);
	check(&d, "exec_kill", NULL);
	wst_stop(&d);
}

static void
test_huge_frames(void **state)
{
	struct wsd d = {0};

	wst_start(&d, "ws://127.0.0.1:0", "1M", NULL);
	check(&d, "huge", NULL);
	wst_stop(&d);
}

static void
test_slowloris(void **state)
{
	static char *env[] = {"APP_SERVER_WS_HANDSHAKE_SECS=1", NULL};
	struct wsd d = {0};

	wst_start(&d, "ws://127.0.0.1:0", NULL, env);
	check(&d, "slowloris", NULL);
	wst_stop(&d);
}

static void
test_client_never_reads(void **state)
{
	static char *env[] = {"APP_SERVER_WS_QUEUE_LIMIT=4194304", "APP_SERVER_LOG=info", NULL};
	struct wsd d = {0};
	char *file, *log;
	FILE *f;

	wst_start(&d, "ws://127.0.0.1:0", NULL, env);
	file = xasprintf("%s/1m", d.dir);
	assert_non_null(f = fopen(file, "we"));
	for (int i = 0; i < 1 << 20; i++)
		fputc('a' + i % 26, f);
	fclose(f);
	check(&d, "noread", file);
	log = wst_slurp(d.err);
	assert_non_null(strstr(log,
		"more than 4194304 bytes of output queued for a client that "
		"does not read"));
	free(log);
	wst_stop(&d);
	free(file);
}

static void
test_churn_no_fd_growth(void **state)
{
	struct wsd d = {0};

	wst_start(&d, "ws://127.0.0.1:0", NULL, NULL);
	check(&d, "churn", NULL);
	check(&d, "idle_rss", NULL);
	wst_stop(&d);
}

/* unix://: 0600 in a 0700 directory, a live socket refused, a stale one replaced. */
static void
test_unix_socket(void **state)
{
	struct wsd d = {0}, d2 = {0};
	struct stat st;
	char *sock, *dir, *url, *err;
	int status;

	char top[] = "/tmp/test_ws_unix.XXXXXX";

	assert_non_null(mkdtemp(top));
	dir = xasprintf("%s/run", top);
	sock = xasprintf("%s/app.sock", dir);
	url = xasprintf("unix://%s", sock);
	wst_start(&d, url, NULL, NULL);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(lstat(sock, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	check(&d, "basic", NULL);
	check(&d, "http", NULL);
	/* a second daemon on a live socket is refused, and leaves it alone */
	assert_int_equal(run_cli("--listen", url, NULL, &err), 1);
	assert_non_null(strstr(err, "another app-server is listening on"));
	free(err);
	check(&d, "basic", NULL);
	/* killed with -9: its socket file stays, and the next daemon replaces it */
	kill(d.pid, SIGKILL);
	waitpid(d.pid, &status, 0);
	assert_int_equal(lstat(sock, &st), 0);
	wst_start(&d2, url, NULL, NULL);
	check(&d2, "basic", NULL);
	/* `app-server proxy --sock PATH`: stdio bytes to the socket, WebSocket spoken through it */
	check_via(&d2, "basic", NULL, 1);
	check_via(&d2, "protocol", NULL, 1);
	wst_stop(&d2);
	assert_int_equal(lstat(sock, &st), -1); /* removed at exit */
	nftw(d.dir, wst_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	nftw(top, wst_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(d.err);
	free(d.out);
	free(url);
	free(sock);
	free(dir);
}

/* Bare unix://: upstream's control socket in CODEX_HOME, which `proxy` finds by default. */
static void
test_default_control_socket(void **state)
{
	struct wsd d = {0};
	char *want, *home, *o, *e, *text;
	char *argv[] = {(char *)wst_bin(), "proxy", NULL};
	int st;

	wst_start(&d, "unix://", NULL, NULL);
	want = xasprintf("unix://%s/home/app-server-control/app-server-control.sock", d.dir);
	assert_string_equal(d.url, want);
	check_via(&d, "basic", NULL, 1);
	/* without --sock, with the daemon's CODEX_HOME: it connects; stdin at EOF ends it, 0 */
	home = xasprintf("CODEX_HOME=%s/home", d.dir);
	o = xasprintf("%s/p.out", d.dir);
	e = xasprintf("%s/p.err", d.dir);
	{
		char *env[] = {home, NULL};

		st = wst_wait(wst_spawn(argv, o, e, env), 10);
	}
	text = wst_slurp(e);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("proxy: status %d: %s", st, text);
	free(text);
	wst_stop(&d);
	free(want);
	free(home);
	free(o);
	free(e);
}

/* --ws-auth capability-token: a token file; 401s in upstream's words; non-loopback allowed. */
static void
test_capability_token(void **state)
{
	struct wsd d = {0};
	char tokfile[] = "/tmp/test_ws_token.XXXXXX", *args, *log;
	int fd = mkstemp(tokfile);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "  tok-3f9a7c\n", 13), 13);
	close(fd);
	args = xasprintf("--ws-auth capability-token --ws-token-file %s", tokfile);
	wst_start(&d, "ws://0.0.0.0:0", args, NULL);
	log = wst_slurp(d.err);
	assert_non_null(
		strstr(log, "note: websocket auth is required for non-localhost listeners"));
	free(log);
	/* 0.0.0.0 took a port on every address: the loopback one will do */
	{
		char port[16];

		snprintf(port, sizeof port, "%s", strrchr(d.url, ':') + 1);
		snprintf(d.url, sizeof d.url, "ws://127.0.0.1:%s", port);
	}
	d.token = "tok-3f9a7c";
	check(&d, "auth", NULL);
	check(&d, "basic", NULL);
	log = wst_slurp(d.err);
	assert_null(strstr(log, "tok-3f9a7c")); /* never logged */
	free(log);
	wst_stop(&d);
	unlink(tokfile);
	free(args);
}

/*
 * RFC 6455 from an independent implementation: node's WebSocket (undici). Where node has none
 * (Debian 12's node 18) the npm `ws` client's suite (clients/typescript/test/rfc6455.test.ts,
 * make clients-test) judges the same and more.
 */
static void
test_node_client(void **state)
{
	char *argv[] = {"node", "--experimental-websocket", WS_NODE, NULL, NULL};
	char *probe[] = {"node", "--experimental-websocket", "-e",
		"process.exit(typeof WebSocket === 'function' ? 0 : 1)", NULL};
	struct wsd d = {0};
	char *o, *e;
	int st;

	st = wst_wait(wst_spawn(probe, "/dev/null", "/dev/null", NULL), 20);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		skip_test(
			"node with a built-in WebSocket (node >= 20.10) is not installed (the ws "
			"package's suite, clients/typescript/test/rfc6455.test.ts, runs on node 18)");
	wst_start(&d, "ws://127.0.0.1:0", NULL, NULL);
	o = xasprintf("%s/node.out", d.dir);
	e = xasprintf("%s/node.err", d.dir);
	argv[3] = d.url;
	st = wst_wait(wst_spawn(argv, o, e, NULL), 60);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char *t = wst_slurp(e), *u = wst_slurp(o);

		fail_msg("node client: status %d: %s%s", st, u, t);
	}
	wst_stop(&d);
	free(o);
	free(e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_refusals),
		cmocka_unit_test(test_http_probes),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_exec_kill_without_cgroups),
		cmocka_unit_test(test_huge_frames),
		cmocka_unit_test(test_slowloris),
		cmocka_unit_test(test_client_never_reads),
		cmocka_unit_test(test_churn_no_fd_growth),
		cmocka_unit_test(test_unix_socket),
		cmocka_unit_test(test_default_control_socket),
		cmocka_unit_test(test_capability_token),
		cmocka_unit_test(test_node_client),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
