/*
 * `login` (the browser sign-in) and `login --device-auth` from the command line against
 * tests/integration/mock_chatgpt.py as the issuer (CODEX_APP_SERVER_LOGIN_ISSUER): upstream
 * 0.169's lines on stdout and stderr and its exit statuses; the device prompt with the URL
 * and code; the browser sign-in followed to /success; a /cancel (another sign-in wanting the
 * port) ends it with "Login cancelled" and status 1.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec_util.h"
#include "harness.h"
#include "protocol/xmalloc.h"

#define T 10000

struct mock {
	pid_t pid;
	int port;
	char dir[64];
	char *log;
};

static void
mock_start(struct mock *m, const char *a1, const char *a2)
{
	char *pf;
	FILE *f;

	snprintf(m->dir, sizeof m->dir, "/tmp/login-cli-mock-XXXXXX");
	assert_non_null(mkdtemp(m->dir));
	pf = xasprintf("%s/port", m->dir);
	m->log = xasprintf("%s/log.jsonl", m->dir);
	m->pid = fork();
	assert_true(m->pid >= 0);
	if (m->pid == 0) {
		int null = open("/dev/null", O_RDWR);

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(null, 1);
		dup2(null, 2);
		execlp("python3", "python3", "tests/integration/mock_chatgpt.py", "--port-file", pf,
			"--log", m->log, a1, a2, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500 && (f = fopen(pf, "re")) == NULL; i++)
		usleep(10000);
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &m->port), 1);
	fclose(f);
	free(pf);
}

static int
rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (type == FTW_DP ? rmdir(path) : unlink(path)) == 0 ? 0 : -1;
}

static void
mock_stop(struct mock *m)
{
	kill(m->pid, SIGTERM);
	waitpid(m->pid, NULL, 0);
	assert_int_equal(nftw(m->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
	free(m->log);
}

/* The browser (the mock's --browse): follow url to its end; {status, url, ctype, body}. */
static json_t *
browse_url(const struct mock *m, const char *url)
{
	char *out = xasprintf("%s/browse.json", m->dir);
	int st = 0;
	pid_t pid = fork();
	json_t *r;

	assert_true(pid >= 0);
	if (pid == 0) {
		execlp("python3", "python3", "tests/integration/mock_chatgpt.py", "--browse", url,
			"--out", out, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	r = json_load_file(out, 0, NULL);
	assert_non_null(r);
	unlink(out);
	free(out);
	return r;
}

/* Run `app-server login ARG` (ARG NULL: none) with the mock as issuer, its stdout and stderr
 * in files of the mock's folder; the pid. */
static pid_t
cli_start(const struct mock *m, const char *home, const char *arg)
{
	char *out = xasprintf("%s/cli.out", m->dir), *err = xasprintf("%s/cli.err", m->dir),
	     *issuer = xasprintf("http://127.0.0.1:%d", m->port);
	pid_t pid;

	unlink(out); /* cli_url must not read the last run's */
	unlink(err);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600),
		    e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600),
		    null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(o, 1);
		dup2(e, 2);
		setenv("CODEX_HOME", home, 1);
		setenv("CODEX_APP_SERVER_LOGIN_ISSUER", issuer, 1);
		setenv("APP_SERVER_LOGIN_PORT", "0", 1);
		execl(getenv("APP_SERVER_BIN"), "app-server", "login", arg, (char *)NULL);
		_exit(127);
	}
	free(out);
	free(err);
	free(issuer);
	return pid;
}

/* A file's text ("" when empty), or NULL when there is none yet. */
static char *
slurp(const char *path)
{
	size_t len;
	char *t;

	if (access(path, R_OK) != 0)
		return NULL;
	t = xt_read_file(path, &len);
	return t != NULL ? t : xstrdup("");
}

/* The CLI's exit status, its stdout and stderr (heap). */
static int
cli_wait(const struct mock *m, pid_t pid, char **out, char **err)
{
	char *po = xasprintf("%s/cli.out", m->dir), *pe = xasprintf("%s/cli.err", m->dir);
	int st = 0;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	*out = slurp(po);
	*err = slurp(pe);
	free(po);
	free(pe);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* The authorize URL the CLI printed on stderr, once it did (heap). */
static char *
cli_url(const struct mock *m)
{
	char *pe = xasprintf("%s/cli.err", m->dir), *text = NULL, *u, *end;

	for (int i = 0; i < 500; i++, usleep(10000)) {
		free(text);
		if ((text = slurp(pe)) != NULL && (u = strstr(text, "\n\nhttp")) != NULL &&
			(end = strchr(u + 2, '\n')) != NULL) {
			u = xasprintf("%.*s", (int)(end - u - 2), u + 2);
			free(text);
			free(pe);
			return u;
		}
	}
	fail_msg("the CLI printed no URL");
	return NULL;
}

/* `login --device-auth` and `login` (followed, then cancelled), as upstream's CLI ends them. */
static void
test_cli_login(void **state)
{
	struct mock m;
	char home[] = "/tmp/device-cli-XXXXXX", *out, *err, *url, *path, *cancel, *port;
	struct stat st;
	json_t *b;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(home));
	mock_start(&m, "--device-pending", "1");
	pid = cli_start(&m, home, "--device-auth");
	assert_int_equal(cli_wait(&m, pid, &out, &err), 0);
	assert_non_null(
		strstr(out, "Follow these steps to sign in with ChatGPT using device code"));
	assert_non_null(strstr(out, "/codex/device\x1b[0m\n\n2. Enter this one-time code"));
	assert_non_null(strstr(out, "\x1b[94mMOCK-1234\x1b[0m"));
	assert_string_equal(err, "Successfully logged in\n");
	path = xasprintf("%s/auth.json", home);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	unlink(path);
	free(out);
	free(err);

	/* the browser sign-in: the URL on stderr, followed to /success */
	pid = cli_start(&m, home, NULL);
	url = cli_url(&m);
	assert_non_null(strstr(url, "/oauth/authorize?response_type=code&client_id="));
	assert_non_null(strstr(url, "&originator=codex_cli_rs"));
	b = browse_url(&m, url);
	assert_int_equal(json_integer_value(json_object_get(b, "status")), 200);
	json_decref(b);
	assert_int_equal(cli_wait(&m, pid, &out, &err), 0);
	assert_non_null(strstr(err, "Starting local login server on http://localhost:"));
	assert_non_null(strstr(err,
		"\n\nOn a remote or headless machine? Use `codex login "
		"--device-auth` instead.\nSuccessfully logged in\n"));
	assert_string_equal(out, "");
	assert_int_equal(stat(path, &st), 0);
	free(out);
	free(err);
	free(url);

	/* another sign-in asks for the port: this one gives up */
	pid = cli_start(&m, home, NULL);
	url = cli_url(&m);
	port = strstr(url, "127.0.0.1%3A") + 12;
	cancel = xasprintf("http://127.0.0.1:%d/cancel", (int)strtol(port, NULL, 10));
	b = browse_url(&m, cancel);
	json_decref(b);
	assert_int_equal(cli_wait(&m, pid, &out, &err), 1);
	assert_non_null(strstr(err, "instead.\nError logging in: Login cancelled\n"));
	free(out);
	free(err);
	free(url);
	free(cancel);
	unlink(path);
	free(path);
	rmdir(home);
	mock_stop(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_login),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
