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
#include "mock_chatgpt_util.h"
#include "protocol/xmalloc.h"

#define T 10000

/* Run `app-server login ARG` (ARG NULL: none) with the mock as issuer, its stdout and stderr
 * in files of the mock's folder; the pid. */
static pid_t
cli_start(const struct mc_mock *m, const char *home, const char *arg)
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
cli_wait(const struct mc_mock *m, pid_t pid, char **out, char **err)
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
cli_url(const struct mc_mock *m)
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
	struct mc_mock m;
	char home[] = "/tmp/device-cli-XXXXXX", *out, *err, *url, *path, *cancel, *port;
	struct stat st;
	json_t *b;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(home));
	mc_start(&m, "login-cli", "--device-pending", "1");
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
	b = mc_browse(&m, url, 0);
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
	b = mc_browse(&m, cancel, 0);
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
	mc_stop(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_login),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
