/*
 * app-client --connect (issue 27): app-client against a daemon started with --listen, over
 * ws://127.0.0.1:PORT and over unix:///PATH, instead of spawning one. Checked: `exec` prints the
 * command's output and exits with its status, stdin goes through; the daemon serves the next
 * client after app-client's close handshake; with --ws-auth capability-token the missing and the
 * wrong token are refused with the daemon's 401 words (exit 125) and --token-file or
 * $APP_SERVER_TOKEN gets through; a daemon that is not there is a one-line error (125).
 *
 * app-client is $APP_CLIENT_BIN, else beside $APP_SERVER_BIN, else build/app-client (skipped,
 * saying so, when there is none). The daemon is $APP_SERVER_BIN.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

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
#include "term_util.h"
#include "tests/helpers/skip_note.h"

/* A daemon listening, in a scratch directory. */
struct lsd {
	pid_t pid;
	char dir[64];
	char *err;
	char url[256];
};

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *s = xcalloc(1, 1 << 16);
	size_t n = 0;

	if (f != NULL) {
		n = fread(s, 1, (1 << 16) - 1, f);
		fclose(f);
	}
	s[n] = '\0';
	return s;
}

/* Run argv with stdin from `in` (or /dev/null), stdout and stderr into files, env added. */
static pid_t
run(char *const argv[], const char *in, const char *out, const char *err, char *const env[])
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int i = open(in != NULL ? in : "/dev/null", O_RDONLY);
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(i, 0);
		dup2(o, 1);
		dup2(e, 2);
		for (int k = 0; env != NULL && env[k] != NULL; k++)
			putenv(env[k]);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Wait for pid up to secs: its exit status, or -1 (killed). */
static int
wait_exit(pid_t pid, double secs)
{
	double end = now_s() + secs;
	int st;

	while (now_s() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static const char *
server_bin(void)
{
	const char *b = getenv("APP_SERVER_BIN");

	return b != NULL ? b : "build/app-server";
}

/* Start `app-server --listen LISTEN [auth...]` (DIR in LISTEN: the scratch dir); its banner's URL.
 */
static void
lsd_start(struct lsd *d, const char *listen, char *const *auth)
{
	char *argv[12], *home, *url, *text, *p;
	char *env[2] = {NULL, NULL};
	int n = 0;

	snprintf(d->dir, sizeof d->dir, "/tmp/test_acws.XXXXXX");
	assert_non_null(mkdtemp(d->dir));
	d->err = xasprintf("%s/stderr", d->dir);
	home = xasprintf("%s/home", d->dir);
	assert_int_equal(mkdir(home, 0700), 0);
	env[0] = xasprintf("CODEX_HOME=%s", home);
	url = (p = strstr(listen, "DIR")) != NULL
		? xasprintf("%.*s%s%s", (int)(p - listen), listen, d->dir, p + 3)
		: xstrdup(listen);
	argv[n++] = (char *)server_bin();
	argv[n++] = "--listen";
	argv[n++] = url;
	for (; auth != NULL && *auth != NULL && n < 11; auth++)
		argv[n++] = *auth;
	argv[n] = NULL;
	text = xasprintf("%s/stdout", d->dir);
	d->pid = run(argv, NULL, text, d->err, env);
	free(text);
	for (double end = now_s() + 10; now_s() < end; usleep(20000)) {
		text = slurp(d->err);
		if ((p = strstr(text, "listening on: ")) != NULL && strchr(p, '\n') != NULL) {
			p += 14;
			snprintf(d->url, sizeof d->url, "%.*s", (int)(strchr(p, '\n') - p), p);
			free(text);
			free(url);
			free(home);
			free(env[0]);
			return;
		}
		free(text);
	}
	text = slurp(d->err);
	fail_msg("the daemon did not start listening: %s", text);
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* SIGTERM: the daemon exits 0. */
static void
lsd_stop(struct lsd *d)
{
	kill(d->pid, SIGTERM);
	assert_int_equal(wait_exit(d->pid, 15), 0);
	nftw(d->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(d->err);
}

/*
 * `app-client ARGV...` with stdin from `in`; its exit status, stdout in *out and stderr in *err
 * (heap).
 */
static int
client(struct lsd *d, const char *cli, char *const *args, const char *in, char *const env[],
	char **out, char **err)
{
	char *argv[20], *o = xasprintf("%s/c.out", d->dir), *e = xasprintf("%s/c.err", d->dir);
	int n = 0, st;

	argv[n++] = (char *)cli;
	for (; *args != NULL && n < 19; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	st = wait_exit(run(argv, in, o, e, env), 30);
	*out = slurp(o);
	*err = slurp(e);
	free(o);
	free(e);
	return st;
}

/* exec's output, status and stdin through the daemon at d; twice (the daemon serves on). */
static void
exec_through(struct lsd *d, const char *cli)
{
	char *in = xasprintf("%s/stdin", d->dir), *out, *err;
	FILE *f = fopen(in, "we");
	char *a1[] = {"--connect", d->url, "exec", "--no-tty", "--sandbox", "danger-full-access",
		"--", "sh", "-c", "echo out; echo err >&2; exit 3", NULL};
	char *a2[] = {"--connect", d->url, "exec", "--cwd", d->dir, "--", "cat", NULL};

	assert_non_null(f);
	fputs("line one\nline two\n", f);
	fclose(f);
	assert_int_equal(client(d, cli, a1, NULL, NULL, &out, &err), 3);
	assert_string_equal(out, "out\n");
	assert_non_null(strstr(err, "err\n"));
	free(out);
	free(err);
	assert_int_equal(client(d, cli, a2, in, NULL, &out, &err), 0);
	assert_string_equal(out, "line one\nline two\n");
	free(out);
	free(err);
	free(in);
}

static void
connect_case(const char *listen)
{
	char *cli = client_binary();
	struct lsd d = {0};

	if (cli == NULL) {
		skip_test("no app-client binary (make build/app-client)");
		return;
	}
	lsd_start(&d, listen, NULL);
	exec_through(&d, cli);
	lsd_stop(&d);
	free(cli);
}

static void
test_exec_over_ws(void **state)
{
	connect_case("ws://127.0.0.1:0");
}

static void
test_exec_over_unix_socket(void **state)
{
	connect_case("unix://DIR/app.sock");
}

/* --ws-auth capability-token: refusals in the daemon's words, then the token gets through. */
static void
test_bearer_token(void **state)
{
	char *cli = client_binary(), *out, *err, *tok, *auth[5];
	char *env[2] = {NULL, NULL};
	struct lsd d = {0};
	FILE *f;

	if (cli == NULL) {
		skip_test("no app-client binary (make build/app-client)");
		return;
	}
	tok = xasprintf("/tmp/test_acws_tok.%d", (int)getpid());
	assert_non_null(f = fopen(tok, "we"));
	fputs("s3cret\n", f);
	fclose(f);
	auth[0] = "--ws-auth", auth[1] = "capability-token", auth[2] = "--ws-token-file";
	auth[3] = tok, auth[4] = NULL;
	lsd_start(&d, "ws://127.0.0.1:0", auth);
	{
		char *bare[] = {"--connect", d.url, "exec", "--", "echo", "hi", NULL};
		char *file[] = {
			"--connect", d.url, "--token-file", tok, "exec", "--", "echo", "hi", NULL};

		assert_int_equal(client(&d, cli, bare, NULL, NULL, &out, &err), 125);
		assert_non_null(strstr(err, "401 Unauthorized: missing websocket bearer token"));
		free(out);
		free(err);
		env[0] = "APP_SERVER_TOKEN=wrong";
		assert_int_equal(client(&d, cli, bare, NULL, env, &out, &err), 125);
		assert_non_null(strstr(err, "invalid websocket bearer token"));
		free(out);
		free(err);
		env[0] = "APP_SERVER_TOKEN=s3cret";
		assert_int_equal(client(&d, cli, bare, NULL, env, &out, &err), 0);
		assert_string_equal(out, "hi\n");
		free(out);
		free(err);
		assert_int_equal(client(&d, cli, file, NULL, NULL, &out, &err), 0);
		assert_string_equal(out, "hi\n");
		free(out);
		free(err);
	}
	lsd_stop(&d);
	unlink(tok);
	free(tok);
	free(cli);
}

/* Nobody listening: one line naming the URL, exit 125. */
static void
test_nobody_listening(void **state)
{
	char *cli = client_binary(), *out, *err;
	struct lsd d = {0};
	char *args[] = {"--connect", "unix:///nonexistent/app.sock", "exec", "--", "true", NULL};

	if (cli == NULL) {
		skip_test("no app-client binary (make build/app-client)");
		return;
	}
	snprintf(d.dir, sizeof d.dir, "/tmp/test_acws.XXXXXX");
	assert_non_null(mkdtemp(d.dir));
	assert_int_equal(client(&d, cli, args, NULL, NULL, &out, &err), 125);
	assert_non_null(strstr(err, "cannot connect to unix:///nonexistent/app.sock"));
	free(out);
	free(err);
	nftw(d.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(cli);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_over_ws),
		cmocka_unit_test(test_exec_over_unix_socket),
		cmocka_unit_test(test_bearer_token),
		cmocka_unit_test(test_nobody_listening),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
