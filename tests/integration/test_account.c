/*
 * Accounts without a network: account/login/start with an API key, account/logout,
 * account/login/cancel, account/rateLimits/read without a ChatGPT login, and the CLI's
 * `login --with-api-key` and `logout`, each compared with what upstream 0.169 answered and
 * wrote (observed side by side): the same answers and notifications in the same order, and
 * the same auth.json, byte for byte, mode 0600.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"

#define T 5000

/* The auth.json upstream 0.169 writes for `login --with-api-key` of this key. */
#define UPSTREAM_APIKEY_FILE "{\n  \"auth_mode\": \"apikey\",\n  \"OPENAI_API_KEY\": \"%s\"\n}"

/* A file's whole text (heap), or NULL when it does not exist. */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *b;
	size_t n;

	if (f == NULL)
		return NULL;
	b = xmalloc(1 << 16);
	n = fread(b, 1, (1 << 16) - 1, f);
	b[n] = '\0';
	fclose(f);
	return b;
}

/* Assert home/auth.json is exactly want (printf-formatted) with mode 0600. */
static void
expect_auth_file(const char *home, const char *want)
{
	char *path = xasprintf("%s/auth.json", home), *text = slurp(path);
	struct stat st;

	assert_non_null(text);
	assert_string_equal(text, want);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	free(text);
	free(path);
}

/* Assert an error answer with exactly this code and message. */
static void
expect_error(const json_t *m, int code, const char *message)
{
	asc_assert_error(m, code, message);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(m, "error"), "message")),
		message);
}

/* Run `app-server args...` with CODEX_HOME=home and input on stdin; stderr, *status. */
static char *
run_cli(const char *home, const char *input, int *status, const char *a1, const char *a2)
{
	const char *bin = getenv("APP_SERVER_BIN");
	int in[2], err[2];
	char buf[4096], *out = xstrdup("");
	ssize_t k;
	pid_t pid;

	if (bin == NULL)
		bin = "build/app-server";
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(err, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(err[1], 2);
		setenv("CODEX_HOME", home, 1);
		execl(bin, bin, a1, a2, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(err[1]);
	if (input != NULL)
		assert_int_equal(write(in[1], input, strlen(input)), (ssize_t)strlen(input));
	close(in[1]);
	while ((k = read(err[0], buf, sizeof buf - 1)) > 0) {
		char *n;

		buf[k] = '\0';
		n = xasprintf("%s%s", out, buf);
		free(out);
		out = n;
	}
	close(err[0]);
	assert_int_equal(waitpid(pid, status, 0), pid);
	return out;
}

/* login/start apiKey: the answer, login/completed, account/updated, in upstream's order. */
static void
test_login_api_key(void **state)
{
	struct asc *c = asc_spawn_config("", 1);
	json_t *m, *p;
	char *want;

	(void)state;
	m = asc_wait_response(c,
		asc_request(c, "account/login/start",
			json_pack("{s:s, s:s}", "type", "apiKey", "apiKey", "sk-test-0123456789")),
		T);
	assert_string_equal(
		json_string_value(json_object_get(asc_assert_result(m), "type")), "apiKey");
	json_decref(m);
	m = asc_next(c, T);
	assert_string_equal(
		json_string_value(json_object_get(m, "method")), "account/login/completed");
	p = json_object_get(m, "params");
	assert_true(json_is_true(json_object_get(p, "success")));
	assert_true(json_is_null(json_object_get(p, "loginId")));
	assert_true(json_is_null(json_object_get(p, "error")));
	json_decref(m);
	m = asc_next(c, T);
	assert_string_equal(json_string_value(json_object_get(m, "method")), "account/updated");
	p = json_object_get(m, "params");
	assert_string_equal(json_string_value(json_object_get(p, "authMode")), "apikey");
	assert_true(json_is_null(json_object_get(p, "planType")));
	json_decref(m);
	want = xasprintf(UPSTREAM_APIKEY_FILE, "sk-test-0123456789");
	expect_auth_file(asc_codex_home(c), want);
	free(want);
	/* account/read says there is a key, never which */
	m = asc_wait_response(c, asc_request(c, "account/read", json_object()), T);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(asc_assert_result(m), "account"), "type")),
		"apiKey");
	assert_null(strstr(asc_raw(c), "sk-test"));
	json_decref(m);
	asc_free(c);
}

/* logout: the file goes, {} and account/updated with nulls, also when there was none. */
static void
test_logout(void **state)
{
	struct asc *c = asc_spawn_config("", 1);
	char *path;
	json_t *m;

	(void)state;
	json_decref(asc_wait_response(c,
		asc_request(c, "account/login/start",
			json_pack("{s:s, s:s}", "type", "apiKey", "apiKey", "sk-x")),
		T));
	json_decref(asc_wait_notification(c, "account/updated", T));
	path = xasprintf("%s/auth.json", asc_codex_home(c));
	assert_int_equal(access(path, F_OK), 0);
	for (int i = 0; i < 2; i++) {
		m = asc_wait_response(c, asc_request(c, "account/logout", NULL), T);
		assert_int_equal(json_object_size(asc_assert_result(m)), 0);
		json_decref(m);
		m = asc_wait_notification(c, "account/updated", T);
		assert_true(
			json_is_null(json_object_get(json_object_get(m, "params"), "authMode")));
		json_decref(m);
		assert_int_equal(access(path, F_OK), -1);
	}
	m = asc_wait_response(c, asc_request(c, "account/rateLimits/read", NULL), T);
	expect_error(m, -32600, "codex account authentication required to read rate limits");
	json_decref(m);
	free(path);
	asc_free(c);
}

/* login/cancel: upstream's error for a malformed id, notFound for an id not pending. */
static void
test_login_cancel(void **state)
{
	struct asc *c = asc_spawn_config("", 1);
	json_t *m;

	(void)state;
	m = asc_wait_response(c,
		asc_request(c, "account/login/cancel", json_pack("{s:s}", "loginId", "nope")), T);
	expect_error(m, -32600, "invalid login id: nope");
	json_decref(m);
	m = asc_wait_response(c,
		asc_request(c, "account/login/cancel",
			json_pack("{s:s}", "loginId", "6a0e8c1e-0000-4000-8000-000000000000")),
		T);
	assert_string_equal(
		json_string_value(json_object_get(asc_assert_result(m), "status")), "notFound");
	json_decref(m);
	asc_free(c);
}

/* The CLI: upstream's lines on stderr and exit statuses, the same file as upstream's. */
static void
test_cli_login_logout(void **state)
{
	char tmpl[] = "/tmp/account-cli-XXXXXX", *err, *want;
	int st;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	err = run_cli(tmpl, "  sk-cli-0123456789abcdef \n", &st, "login", "--with-api-key");
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_string_equal(err,
		"Reading API key from stdin...\nAPI key saved. Authentication "
		"is checked when you send a request.\n");
	free(err);
	want = xasprintf(UPSTREAM_APIKEY_FILE, "sk-cli-0123456789abcdef");
	expect_auth_file(tmpl, want);
	free(want);
	err = run_cli(tmpl, "", &st, "login", "status");
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_non_null(strstr(err, "API key configured - sk-cli-0***bcdef"));
	free(err);
	err = run_cli(tmpl, "", &st, "logout", NULL);
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_string_equal(err, "Successfully logged out\n");
	free(err);
	err = run_cli(tmpl, "", &st, "logout", NULL);
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_string_equal(err, "Not logged in\n");
	free(err);
	err = run_cli(tmpl, " \n", &st, "login", "--with-api-key");
	assert_int_equal(WEXITSTATUS(st), 1);
	assert_string_equal(err, "Reading API key from stdin...\nNo API key provided via stdin.\n");
	free(err);
	rmdir(tmpl);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_login_api_key),
		cmocka_unit_test(test_logout),
		cmocka_unit_test(test_login_cancel),
		cmocka_unit_test(test_cli_login_logout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
