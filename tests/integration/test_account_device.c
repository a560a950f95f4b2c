/*
 * Device-code sign-in and externally managed tokens, end to end against
 * tests/integration/mock_chatgpt.py (issuer and backend), in the words upstream 0.169 used
 * against the same mock (docs/accounts.md):
 *   device   the user code and verification URL in the answer, the poll at the issuer's
 *            interval until the user is done, the code exchanged with the poll's PKCE pair and
 *            {issuer}/deviceauth/callback, auth.json written 0600, login/completed and
 *            account/updated; the issuer without device login, a refused poll, a refused
 *            exchange, cancel, a second start, the poll's time cap
 *   tokens   chatgptAuthTokens held in memory only; a turn whose token the backend refuses
 *            asks account/chatgptAuthTokens/refresh once and goes on with the answer; an error
 *            answer ends the turn with upstream's sentence; other logins refused meanwhile;
 *            logout forgets them. No token in stderr or CODEX_HOME.
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
#include "protocol/base64.h"
#include "protocol/xmalloc.h"

#define T 10000

/* The mock's log lines whose path is path, in order (a new array). */
static json_t *
mock_requests(const struct mc_mock *m, const char *path)
{
	FILE *f = fopen(m->log, "re");
	char line[1 << 16];
	json_t *out = json_array();

	while (f != NULL && fgets(line, sizeof line, f) != NULL) {
		json_t *j = json_loads(line, 0, NULL);

		if (strcmp(json_string_value(json_object_get(j, "path")), path) == 0)
			json_array_append(out, j);
		json_decref(j);
	}
	if (f != NULL)
		fclose(f);
	return out;
}

/* An access token of the mock's account, expiring in exp_in seconds (negative: expired). */
static char *
access_token(long exp_in, const char *marker)
{
	return mc_jwt(json_pack("{s:I, s:s, s:s, s:{s:s, s:s, s:s}}", "exp",
		(json_int_t)(time(NULL) + exp_in), "email", "ext@example.com", "marker", marker,
		"https://api.openai.com/auth", "chatgpt_account_id", "acct-1", "chatgpt_plan_type",
		"pro", "chatgpt_user_id", "user-1"));
}

/* A daemon whose issuer, backend and model requests are the mock's; extra: one more
 * environment entry or NULL. */
static struct asc *
spawn(const struct mc_mock *m, const char *extra)
{
	char *env[4];
	struct asc_opts o = {0};
	struct asc *c;

	env[0] = xasprintf("CODEX_APP_SERVER_LOGIN_ISSUER=http://127.0.0.1:%d", m->port);
	env[1] = "APP_SERVER_LOG=debug";
	env[2] = (char *)extra;
	env[3] = NULL;
	o.env = (const char *const *)env;
	o.capture_stderr = 1;
	c = asc_spawn(&o);
	mkdir(asc_codex_home(c), 0700);
	mc_write_config(m, asc_codex_home(c));
	mc_initialize(c);
	free(env[0]);
	return c;
}

/* The next server request named method (messages before it are dropped). */
static json_t *
server_request(struct asc *c, const char *method)
{
	json_t *m;

	while ((m = asc_next(c, T)) != NULL) {
		if (json_object_get(m, "id") != NULL &&
			json_is_string(json_object_get(m, "method")) &&
			strcmp(json_string_value(json_object_get(m, "method")), method) == 0)
			return m;
		json_decref(m);
	}
	fail_msg("no server request %s", method);
	return NULL;
}

static json_t *
login_start(struct asc *c, json_t *params)
{
	return asc_wait_response(c, asc_request(c, "account/login/start", params), T);
}

static json_t *
device_start(struct asc *c)
{
	return login_start(c, json_pack("{s:s}", "type", "chatgptDeviceCode"));
}

/* The next login/completed: its loginId (NULL allowed) and error (NULL: success). */
static void
expect_completed(struct asc *c, const char *id, const char *error, int timeout)
{
	json_t *n = asc_wait_notification(c, "account/login/completed", timeout),
	       *p = json_object_get(n, "params");

	assert_non_null(n);
	if (id != NULL)
		assert_string_equal(json_string_value(json_object_get(p, "loginId")), id);
	else
		assert_true(json_is_null(json_object_get(p, "loginId")));
	assert_int_equal(json_is_true(json_object_get(p, "success")), error == NULL);
	if (error != NULL)
		assert_string_equal(json_string_value(json_object_get(p, "error")), error);
	else
		assert_true(json_is_null(json_object_get(p, "error")));
	json_decref(n);
}

/* The whole device sign-in: code, polls, exchange, auth.json, notifications. */
static void
test_device_signs_in(void **state)
{
	struct mc_mock m;
	struct asc *c;
	json_t *r, *res, *polls, *ex, *n;
	char *path, *text, *err, *want;
	struct stat st;
	size_t len;
	double gap;

	(void)state;
	mc_start(&m, "device", "--device-pending", "2");
	c = spawn(&m, NULL);
	r = device_start(c);
	res = asc_assert_result(r);
	assert_string_equal(json_string_value(json_object_get(res, "type")), "chatgptDeviceCode");
	assert_string_equal(json_string_value(json_object_get(res, "userCode")), "MOCK-1234");
	want = xasprintf("http://127.0.0.1:%d/codex/device", m.port);
	assert_string_equal(json_string_value(json_object_get(res, "verificationUrl")), want);
	assert_int_equal(strlen(json_string_value(json_object_get(res, "loginId"))), 36);
	expect_completed(c, json_string_value(json_object_get(res, "loginId")), NULL, T);
	n = asc_wait_notification(c, "account/updated", T);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(n, "params"), "authMode")),
		"chatgpt");
	json_decref(n);

	/* two pending polls, then the code: three polls about a second apart (interval "1") */
	polls = mock_requests(&m, "/api/accounts/deviceauth/token");
	assert_int_equal(json_array_size(polls), 3);
	gap = json_real_value(json_object_get(json_array_get(polls, 1), "t")) -
		json_real_value(json_object_get(json_array_get(polls, 0), "t"));
	assert_true(gap > 0.8 && gap < 3.0);
	assert_string_equal(json_string_value(json_object_get(json_array_get(polls, 0), "body")),
		"{\"device_auth_id\":\"dev-auth-1\",\"user_code\":\"MOCK-1234\"}");
	ex = mock_requests(&m, "/oauth/token");
	assert_int_equal(json_array_size(ex), 1);
	free(want);
	want = xasprintf("grant_type=authorization_code&client_id=app_EMoamEEZ73f0CkXaXp7hrann"
			 "&code=device-code-3&redirect_uri=http%%3A%%2F%%2F127.0.0.1%%3A%d%%2F"
			 "deviceauth%%2Fcallback&code_verifier=device-verifier-3",
		m.port);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(ex, 0), "body")), want);

	path = xasprintf("%s/auth.json", asc_codex_home(c));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	text = xt_read_file(path, &len);
	assert_non_null(strstr(text, "\"auth_mode\": \"chatgpt\""));
	assert_non_null(strstr(text, "\"OPENAI_API_KEY\": null"));
	assert_non_null(strstr(text, "\"refresh_token\": \"rt-refreshed-"));
	err = asc_stderr(c);
	assert_null(strstr(err, "rt-refreshed"));
	assert_null(strstr(err, "device-verifier"));
	assert_null(strstr(err, "device-code-"));
	assert_null(strstr(err, "eyJ"));
	free(err);
	free(text);
	free(path);
	free(want);
	json_decref(polls);
	json_decref(ex);
	json_decref(r);
	asc_free(c);
	mc_stop(&m);
}

/* The issuer's refusals, each with upstream's sentence and code. */
static void
test_device_failures(void **state)
{
	struct mc_mock m;
	struct asc *c;
	json_t *r;
	char *id;

	(void)state;
	mc_start(&m, "device", "--device-usercode-status", "404");
	c = spawn(&m, NULL);
	r = device_start(c);
	asc_assert_error(r, -32600,
		"device code login is not enabled for this Codex server. Use the browser login "
		"or verify the server URL.");
	json_decref(r);
	asc_free(c);
	mc_stop(&m);

	mc_start(&m, "device", "--device-usercode-status", "500");
	c = spawn(&m, NULL);
	r = device_start(c);
	asc_assert_error(r, -32603,
		"failed to request device code: device code request failed with status 500 "
		"Internal Server Error");
	json_decref(r);
	asc_free(c);
	mc_stop(&m);

	mc_start(&m, "device", "--device-poll-status", "500");
	c = spawn(&m, NULL);
	r = device_start(c);
	id = xstrdup(json_string_value(json_object_get(asc_assert_result(r), "loginId")));
	expect_completed(c, id, "device auth failed with status 500 Internal Server Error", T);
	free(id);
	json_decref(r);
	asc_free(c);
	mc_stop(&m);

	mc_start(&m, "device", "--exchange-fail", "invalid_grant");
	c = spawn(&m, NULL);
	r = device_start(c);
	id = xstrdup(json_string_value(json_object_get(asc_assert_result(r), "loginId")));
	expect_completed(c, id,
		"device code exchange failed: token endpoint returned status 400 Bad Request: code "
		"refused",
		T);
	free(id);
	json_decref(r);
	asc_free(c);
	mc_stop(&m);
}

/* Cancel, a second start, and the poll's time cap end a pending sign-in. */
static void
test_device_cancel_replace_timeout(void **state)
{
	struct mc_mock m;
	struct asc *c;
	json_t *r, *r2, *cr;
	char *id, *path;
	struct stat st;

	(void)state;
	mc_start(&m, "device", "--device-pending", "1000");
	c = spawn(&m, NULL);
	r = device_start(c);
	id = xstrdup(json_string_value(json_object_get(asc_assert_result(r), "loginId")));
	cr = asc_wait_response(
		c, asc_request(c, "account/login/cancel", json_pack("{s:s}", "loginId", id)), T);
	assert_string_equal(
		json_string_value(json_object_get(asc_assert_result(cr), "status")), "canceled");
	expect_completed(c, id, "Login was not completed", T);
	json_decref(cr);
	json_decref(r);
	free(id);

	/* a second start: its answer first, then the first one's end */
	r = device_start(c);
	id = xstrdup(json_string_value(json_object_get(asc_assert_result(r), "loginId")));
	r2 = device_start(c);
	assert_string_not_equal(
		json_string_value(json_object_get(asc_assert_result(r2), "loginId")), id);
	expect_completed(c, id, "Login was not completed", T);
	json_decref(r);
	json_decref(r2);
	free(id);
	path = xasprintf("%s/auth.json", asc_codex_home(c));
	assert_int_not_equal(stat(path, &st), 0);
	free(path);
	asc_free(c);

	/* the cap (15 minutes upstream; 1 s here through our test variable) */
	c = spawn(&m, "APP_SERVER_DEVICE_AUTH_TIMEOUT=1");
	r = device_start(c);
	id = xstrdup(json_string_value(json_object_get(asc_assert_result(r), "loginId")));
	expect_completed(c, id, "device auth timed out after 15 minutes", T);
	json_decref(r);
	free(id);
	asc_free(c);
	mc_stop(&m);
}

/* Log in with the client's tokens (an expired access token): answer and notifications. */
static void
external_login(struct asc *c, const char *token)
{
	json_t *r = login_start(c,
		       json_pack("{s:s, s:s, s:s}", "type", "chatgptAuthTokens", "accessToken",
			       token, "chatgptAccountId", "acct-1")),
	       *n;

	assert_string_equal(json_string_value(json_object_get(asc_assert_result(r), "type")),
		"chatgptAuthTokens");
	json_decref(r);
	expect_completed(c, NULL, NULL, T);
	n = asc_wait_notification(c, "account/updated", T);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(n, "params"), "authMode")),
		"chatgptAuthTokens");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(n, "params"), "planType")),
		"pro");
	json_decref(n);
}

/* The refused token is renewed by the client once; the turn completes on the new one. */
static void
test_external_tokens_refreshed(void **state)
{
	struct mc_mock m;
	struct asc *c;
	json_t *q, *p, *t, *r, *calls;
	char *old = access_token(-10, "ext-old-secret"), *fresh = access_token(3600, "ext-new"),
	     *tid, *line, *err, *path;
	struct stat st;

	(void)state;
	mc_start(&m, "device", "--device-pending", "0");
	c = spawn(&m, NULL);
	external_login(c, old);
	r = asc_wait_response(c, asc_request(c, "account/read", json_object()), T);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(asc_assert_result(r), "account"), "email")),
		"ext@example.com");
	json_decref(r);

	tid = mc_thread_new(c);
	mc_turn_start(c, tid);
	q = server_request(c, "account/chatgptAuthTokens/refresh");
	assert_non_null(q);
	p = json_object_get(q, "params");
	assert_string_equal(json_string_value(json_object_get(p, "reason")), "unauthorized");
	assert_string_equal(json_string_value(json_object_get(p, "previousAccountId")), "acct-1");
	line = xasprintf("{\"id\":%lld,\"result\":{\"accessToken\":\"%s\",\"chatgptAccountId\":"
			 "\"acct-1\",\"chatgptPlanType\":null}}",
		(long long)json_integer_value(json_object_get(q, "id")), fresh);
	assert_int_equal(asc_send_line(c, line), 0);
	t = asc_wait_notification(c, "turn/completed", T);
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(json_object_get(t, "params"), "turn"), "status")),
		"completed");
	/* the backend saw the old token once, then the new one */
	calls = mock_requests(&m, "/backend-api/codex/responses");
	assert_int_equal(json_array_size(calls), 2);
	json_decref(calls);

	/* other logins are refused while the client's tokens are held */
	r = login_start(c, json_pack("{s:s, s:s}", "type", "apiKey", "apiKey", "sk-x"));
	asc_assert_error(r, -32600,
		"External auth is active. Use account/login/start (chatgptAuthTokens) to update it "
		"or account/logout to clear it.");
	json_decref(r);
	r = asc_wait_response(c, asc_request(c, "account/logout", json_object()), T);
	asc_assert_result(r);
	json_decref(r);
	r = asc_wait_response(c, asc_request(c, "account/read", json_object()), T);
	assert_true(json_is_null(json_object_get(asc_assert_result(r), "account")));
	json_decref(r);

	/* memory only: no auth.json, no token anywhere */
	path = xasprintf("%s/auth.json", asc_codex_home(c));
	assert_int_not_equal(stat(path, &st), 0);
	err = asc_stderr(c);
	assert_null(strstr(err, "eyJ"));
	free(err);
	free(path);
	free(line);
	free(tid);
	free(old);
	free(fresh);
	json_decref(t);
	json_decref(q);
	asc_free(c);
	mc_stop(&m);
}

/* The client refuses to renew, or does not answer in 10 s: the turn ends with upstream's
 * sentence; a bad token at login is refused. */
static void
test_external_refresh_refused(void **state)
{
	struct mc_mock m;
	struct asc *c;
	json_t *q, *t, *r, *err;
	char *old = access_token(-10, "ext-old-secret"), *tid, *line;

	(void)state;
	mc_start(&m, "device", "--device-pending", "0");
	c = spawn(&m, NULL);
	r = login_start(c,
		json_pack("{s:s, s:s, s:s}", "type", "chatgptAuthTokens", "accessToken",
			"not-a-jwt", "chatgptAccountId", "acct-1"));
	asc_assert_error(r, -32603, "failed to set external auth: invalid ID token format");
	json_decref(r);
	external_login(c, old);
	tid = mc_thread_new(c);
	mc_turn_start(c, tid);
	q = server_request(c, "account/chatgptAuthTokens/refresh");
	assert_non_null(q);
	line = xasprintf("{\"id\":%lld,\"error\":{\"code\":-32000,\"message\":\"no token\"}}",
		(long long)json_integer_value(json_object_get(q, "id")));
	assert_int_equal(asc_send_line(c, line), 0);
	t = asc_wait_notification(c, "turn/completed", T);
	err = json_object_get(json_object_get(json_object_get(t, "params"), "turn"), "error");
	assert_string_equal(json_string_value(json_object_get(err, "message")),
		"auth refresh request failed: code=-32000 message=no token");
	json_decref(t);
	json_decref(q);

	/* no answer at all: upstream's 10 s, then the turn ends */
	mc_turn_start(c, tid);
	q = server_request(c, "account/chatgptAuthTokens/refresh");
	t = asc_wait_notification(c, "turn/completed", 15000);
	err = json_object_get(json_object_get(json_object_get(t, "params"), "turn"), "error");
	assert_string_equal(json_string_value(json_object_get(err, "message")),
		"auth refresh request timed out after 10s");
	json_decref(t);
	json_decref(q);
	free(line);
	free(tid);
	free(old);
	asc_free(c);
	mc_stop(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_signs_in),
		cmocka_unit_test(test_device_failures),
		cmocka_unit_test(test_device_cancel_replace_timeout),
		cmocka_unit_test(test_external_tokens_refreshed),
		cmocka_unit_test(test_external_refresh_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
