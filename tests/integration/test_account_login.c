/*
 * account/login/start {type:"chatgpt"}: the browser sign-in end to end against
 * tests/integration/mock_chatgpt.py as the issuer (CODEX_APP_SERVER_LOGIN_ISSUER, upstream's
 * override). The test plays the browser (the mock's --browse: urllib follows authUrl, the
 * issuer redirects to our callback with a code and the state, we exchange the code with the
 * PKCE verifier the mock checks, then redirect to /success). Cancel frees the port, a second
 * start drops the first, a wrong state is refused and the flow goes on, the issuer's errors
 * end it with upstream's sentences, and the default port falls back to 1457 after sending
 * /cancel to whoever holds 1455. The callback port is APP_SERVER_LOGIN_PORT (a free one), so
 * this suite does not race other users of 1455 but in the one test about 1455 itself.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "mock_chatgpt_util.h"
#include "tests/helpers/skip_note.h"
#include "protocol/xmalloc.h"

#define T 10000

/* A loopback port nobody listens on now. */
static int
free_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	getsockname(fd, (struct sockaddr *)&sa, &len);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* A listener on 127.0.0.1:port (-1 when taken). */
static int
listen_on(int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 4) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A daemon whose sign-in goes to the mock; port 0: the default (no override). */
static struct asc *
spawn(const struct mc_mock *m, int port)
{
	char *env[4];
	struct asc_opts o = {0};
	struct asc *c;

	env[0] = xasprintf("CODEX_APP_SERVER_LOGIN_ISSUER=http://127.0.0.1:%d", m->port);
	env[1] = "APP_SERVER_LOG=debug";
	env[2] = port != 0 ? xasprintf("APP_SERVER_LOGIN_PORT=%d", port) : NULL;
	env[3] = NULL;
	o.env = (const char *const *)env;
	o.capture_stderr = 1;
	c = asc_spawn(&o);
	mc_initialize(c);
	free(env[0]);
	free(env[2]);
	return c;
}

/* login/start chatgpt: its result (the caller frees the message in *msg). */
static const json_t *
start(struct asc *c, json_t **msg)
{
	*msg = asc_wait_response(
		c, asc_request(c, "account/login/start", json_pack("{s:s}", "type", "chatgpt")), T);
	return asc_assert_result(*msg);
}

static void
expect_completed(struct asc *c, const char *id, const char *error)
{
	json_t *n = asc_wait_notification(c, "account/login/completed", T),
	       *p = json_object_get(n, "params");

	assert_non_null(n);
	assert_string_equal(json_string_value(json_object_get(p, "loginId")), id);
	assert_int_equal(json_is_true(json_object_get(p, "success")), error == NULL);
	if (error != NULL)
		assert_string_equal(json_string_value(json_object_get(p, "error")), error);
	else
		assert_true(json_is_null(json_object_get(p, "error")));
	json_decref(n);
}

/* The whole flow: authUrl as upstream's, the code exchanged with PKCE, auth.json, the
 * notifications, the port freed, no secret in stderr. */
static void
test_browser_flow(void **state)
{
	struct mc_mock m;
	int port = free_port(), fd;
	struct asc *c;
	json_t *msg, *b, *auth, *n;
	const json_t *res;
	char *want, *path, *err;
	struct stat st;

	(void)state;
	mc_start(&m, "login", "--api-key", "sk-exchanged");
	c = spawn(&m, port);
	res = start(c, &msg);
	assert_string_equal(json_string_value(json_object_get(res, "type")), "chatgpt");
	assert_int_equal(strlen(json_string_value(json_object_get(res, "loginId"))), 36);
	want = xasprintf("http://127.0.0.1:%d/oauth/authorize?response_type=code&client_id="
			 "app_EMoamEEZ73f0CkXaXp7hrann&redirect_uri=http%%3A%%2F%%2F127.0.0.1%%3A%d"
			 "%%2Fauth%%2Fcallback&code_challenge=",
		m.port, port);
	assert_memory_equal(json_string_value(json_object_get(res, "authUrl")), want, strlen(want));
	assert_non_null(strstr(json_string_value(json_object_get(res, "authUrl")),
		"&code_challenge_method=S256&state="));
	assert_non_null(strstr(json_string_value(json_object_get(res, "authUrl")),
		"&scope=openid+profile+email+offline_access+api.connectors.read+"
		"api.connectors.invoke&id_token_add_organizations=true&codex_cli_simplified_flow="
		"true&originator=t"));
	b = mc_browse(&m, json_string_value(json_object_get(res, "authUrl")), 1);
	assert_int_equal(json_integer_value(json_object_get(b, "status")), 200);
	free(want);
	want = xasprintf("http://127.0.0.1:%d/success?id_token=", port);
	assert_memory_equal(json_string_value(json_object_get(b, "url")), want, strlen(want));
	assert_non_null(strstr(json_string_value(json_object_get(b, "url")),
		"&needs_setup=false&org_id=&project_id=&plan_type=plus&platform_url=https%3A%2F%2F"
		"platform.api.openai.org"));
	assert_non_null(
		strstr(json_string_value(json_object_get(b, "body")), "Signed in to Codex"));
	expect_completed(c, json_string_value(json_object_get(res, "loginId")), NULL);
	n = asc_wait_notification(c, "account/updated", T);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(n, "params"), "authMode")),
		"chatgpt");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(n, "params"), "planType")),
		"plus");
	json_decref(n);
	/* auth.json as upstream writes it after a browser sign-in */
	path = xasprintf("%s/auth.json", asc_codex_home(c));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	auth = json_load_file(path, 0, NULL);
	assert_string_equal(json_string_value(json_object_get(auth, "auth_mode")), "chatgpt");
	assert_string_equal(
		json_string_value(json_object_get(auth, "OPENAI_API_KEY")), "sk-exchanged");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(auth, "tokens"), "account_id")),
		"acct-1");
	assert_non_null(
		strstr(json_string_value(json_object_get(
			       json_object_get(json_object_get(auth, "tokens"), "oauth_provenance"),
			       "issuer")),
			"http://127.0.0.1:"));
	/* the port is given back */
	assert_true((fd = listen_on(port)) >= 0);
	close(fd);
	/* nothing secret reached the log: the code, the tokens, the exchanged key */
	err = asc_stderr(c);
	assert_null(strstr(err, "code-"));
	assert_null(strstr(err, "rt-refreshed"));
	assert_null(strstr(err, "sk-exchanged"));
	assert_null(strstr(err, "eyJ"));
	free(err);
	asc_free(c);
	json_decref(auth);
	json_decref(b);
	json_decref(msg);
	free(path);
	free(want);
	mc_stop(&m);
}

/* Cancel: {status:"canceled"}, login/completed after it, the port free at once; again:
 * notFound. */
static void
test_cancel(void **state)
{
	struct mc_mock m;
	int port = free_port(), fd;
	struct asc *c;
	json_t *msg, *r;
	const json_t *res;
	char *id;

	(void)state;
	mc_start(&m, "login", NULL, NULL);
	c = spawn(&m, port);
	res = start(c, &msg);
	id = xstrdup(json_string_value(json_object_get(res, "loginId")));
	assert_int_equal(listen_on(port), -1); /* held while pending */
	r = asc_wait_response(
		c, asc_request(c, "account/login/cancel", json_pack("{s:s}", "loginId", id)), T);
	assert_string_equal(
		json_string_value(json_object_get(asc_assert_result(r), "status")), "canceled");
	json_decref(r);
	expect_completed(c, id, "Login server error: Login was not completed");
	assert_true((fd = listen_on(port)) >= 0);
	close(fd);
	r = asc_wait_response(
		c, asc_request(c, "account/login/cancel", json_pack("{s:s}", "loginId", id)), T);
	assert_string_equal(
		json_string_value(json_object_get(asc_assert_result(r), "status")), "notFound");
	json_decref(r);
	json_decref(msg);
	free(id);
	asc_free(c);
	mc_stop(&m);
}

/* A second start drops the first (told before the second's answer); the first's URL is now
 * refused with "State mismatch", the second's signs in. */
static void
test_second_start(void **state)
{
	struct mc_mock m;
	struct asc *c;
	json_t *m1, *m2, *b;
	const json_t *r1, *r2;
	long long id2;

	(void)state;
	mc_start(&m, "login", NULL, NULL);
	c = spawn(&m, free_port());
	r1 = start(c, &m1);
	id2 = asc_request(c, "account/login/start", json_pack("{s:s}", "type", "chatgpt"));
	expect_completed(c, json_string_value(json_object_get(r1, "loginId")),
		"Login server error: Login cancelled");
	m2 = asc_wait_response(c, id2, T);
	r2 = asc_assert_result(m2);
	assert_string_not_equal(json_string_value(json_object_get(r1, "loginId")),
		json_string_value(json_object_get(r2, "loginId")));
	b = mc_browse(&m, json_string_value(json_object_get(r1, "authUrl")), 1);
	assert_int_equal(json_integer_value(json_object_get(b, "status")), 400);
	assert_string_equal(json_string_value(json_object_get(b, "body")), "State mismatch");
	json_decref(b);
	b = mc_browse(&m, json_string_value(json_object_get(r2, "authUrl")), 1);
	assert_int_equal(json_integer_value(json_object_get(b, "status")), 200);
	expect_completed(c, json_string_value(json_object_get(r2, "loginId")), NULL);
	json_decref(b);
	json_decref(m1);
	json_decref(m2);
	asc_free(c);
	mc_stop(&m);
}

/* A callback whose state is not ours: 400 "State mismatch", nothing written, the sign-in
 * still pending (a cancel finds it). */
static void
test_wrong_state(void **state)
{
	struct mc_mock m;
	struct asc *c;
	json_t *msg, *b, *r;
	const json_t *res;
	char *path;

	(void)state;
	mc_start(&m, "login", "--wrong-state", NULL);
	c = spawn(&m, free_port());
	res = start(c, &msg);
	b = mc_browse(&m, json_string_value(json_object_get(res, "authUrl")), 1);
	assert_int_equal(json_integer_value(json_object_get(b, "status")), 400);
	assert_string_equal(json_string_value(json_object_get(b, "body")), "State mismatch");
	path = xasprintf("%s/auth.json", asc_codex_home(c));
	assert_int_equal(access(path, F_OK), -1);
	r = asc_wait_response(c,
		asc_request(c, "account/login/cancel",
			json_pack("{s:O}", "loginId", json_object_get(res, "loginId"))),
		T);
	assert_string_equal(
		json_string_value(json_object_get(asc_assert_result(r), "status")), "canceled");
	json_decref(r);
	json_decref(b);
	json_decref(msg);
	free(path);
	asc_free(c);
	mc_stop(&m);
}

/* The issuer's refusals end the sign-in with upstream's sentences and its error page. */
static void
issuer_error(const char *a1, const char *a2, const char *page, const char *error)
{
	struct mc_mock m;
	struct asc *c;
	json_t *msg, *b;
	const json_t *res;
	char *path;

	mc_start(&m, "login", a1, a2);
	c = spawn(&m, free_port());
	res = start(c, &msg);
	b = mc_browse(&m, json_string_value(json_object_get(res, "authUrl")), 1);
	assert_int_equal(json_integer_value(json_object_get(b, "status")), 200);
	assert_string_equal(
		json_string_value(json_object_get(b, "ctype")), "text/html; charset=utf-8");
	assert_non_null(strstr(json_string_value(json_object_get(b, "body")), page));
	assert_non_null(strstr(
		json_string_value(json_object_get(b, "body")), "Sign-in could not be completed"));
	expect_completed(c, json_string_value(json_object_get(res, "loginId")), error);
	path = xasprintf("%s/auth.json", asc_codex_home(c));
	assert_int_equal(access(path, F_OK), -1);
	json_decref(b);
	json_decref(msg);
	free(path);
	asc_free(c);
	mc_stop(&m);
}

static void
test_issuer_errors(void **state)
{
	(void)state;
	issuer_error("--authorize-error", "access_denied", "Sign-in failed: no entry",
		"Login server error: Sign-in failed: no entry");
	issuer_error("--exchange-fail", "invalid_grant",
		"Token exchange failed: token endpoint returned status 400 Bad Request: code refused",
		"Login server error: Token exchange failed: token endpoint returned status 400 Bad "
		"Request: code refused");
}

/* Upstream's port and its fallback: with 1455 held, `GET /cancel` goes to its holder, then
 * after 10 attempts 200 ms apart the server listens on 1457. */
static void
test_default_port_fallback(void **state)
{
	struct mc_mock m;
	struct asc *c;
	json_t *msg;
	const json_t *res;
	int fd = listen_on(1455), fd2 = listen_on(1457), conn;
	struct pollfd pfd;
	char req[256] = "";
	ssize_t n;
	long long t0;

	(void)state;
	if (fd < 0 || fd2 < 0) {
		if (fd >= 0)
			close(fd);
		if (fd2 >= 0)
			close(fd2);
		skip_test("ports 1455 or 1457 are in use by someone else on this machine");
		return;
	}
	close(fd2);
	mc_start(&m, "login", NULL, NULL);
	c = spawn(&m, 0);
	t0 = asc_now_ms();
	msg = asc_wait_response(
		c, asc_request(c, "account/login/start", json_pack("{s:s}", "type", "chatgpt")), T);
	res = asc_assert_result(msg);
	assert_true(asc_now_ms() - t0 >= 1500); /* the 10 attempts */
	assert_non_null(strstr(json_string_value(json_object_get(res, "authUrl")),
		"redirect_uri=http%3A%2F%2F127.0.0.1%3A1457%2Fauth%2Fcallback"));
	/* the holder of 1455 was asked to give it up, as upstream asks */
	pfd.fd = fd;
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 0), 1);
	conn = accept(fd, NULL, NULL);
	assert_true(conn >= 0);
	n = read(conn, req, sizeof req - 1);
	assert_true(n > 0);
	assert_memory_equal(req, "GET /cancel HTTP/1.1\r\n", 22);
	close(conn);
	close(fd);
	json_decref(msg);
	asc_free(c);
	mc_stop(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_browser_flow),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_second_start),
		cmocka_unit_test(test_wrong_state),
		cmocka_unit_test(test_issuer_errors),
		cmocka_unit_test(test_default_port_fallback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
