/*
 * OAuth for streamable-HTTP MCP servers end to end: the real binary, the mock model, and
 * tests/integration/mock_mcp_oauth.py (an authorization server: RFC 9728 and 8414 metadata,
 * RFC 7591 registration, /authorize, /token with PKCE S256 checked and rotating refresh
 * tokens; and an MCP endpoint answering 401 without a valid bearer). The test plays the
 * browser: it fetches authorizationUrl itself and follows the redirect to our loopback
 * callback. Then: the tokens stored as upstream's file store keeps them, sent as the bearer in
 * a turn's tool call, refreshed when expired and after a 401 (one refresh for concurrent
 * calls), a refused refresh failing the call and the status saying login is needed; the
 * errors of the login; no secret (code, verifier, tokens) in our stderr or the rollout.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "mcp_oauth_util.h"
#include "turn_util.h"

/* The whole login as upstream's, the stored file in upstream's shape, the bearer in a turn's
 * tool call, a wrong state refused while the login waits on, no secret anywhere. */
static void
test_login_and_call(void **state)
{
	struct om m;
	struct tt f;
	json_t *p, *store, *e, *msgs;
	char *id, *url, *cb, *bad, *body = NULL, *st;
	const char *k, *text;
	size_t n = 0;
	int failed;

	(void)state;
	om_start(&m);
	oa_start(&f, &m, SCRIPT(CALL("call-1")));
	p = oa_settled(&f); /* no token yet: the server refuses */
	assert_string_equal(json_string_value(json_object_get(p, "status")), "failed");
	assert_non_null(strstr(json_string_value(json_object_get(p, "error")), "401"));
	json_decref(p);
	st = oa_auth_status(&f, "oa");
	assert_string_equal(st, "notLoggedIn");
	free(st);
	url = oa_login_start(&f, &id);
	assert_non_null(strstr(url, "code_challenge_method=S256"));
	assert_non_null(strstr(url, "client_id=client-1"));
	assert_non_null(strstr(url, "scope=mcp.read%20mcp.write"));
	assert_non_null(strstr(url, "redirect_uri=http%3A%2F%2F127.0.0.1%3A"));
	/* the browser comes back with a state that is not this login's: 400, the login waits */
	assert_int_equal(om_browse(url, &cb, NULL), 302);
	bad = xstrdup(cb);
	memcpy(strstr(bad, "state=") + 6, "XXXX", 4);
	assert_int_equal(om_browse(bad, NULL, &body), 400);
	assert_string_equal(body, "OAuth callback state does not match this login");
	assert_int_equal(asc_sync(f.c, asc_timeout(2000)), 0); /* no completed yet */
	assert_int_equal(om_browse(cb, NULL, NULL), 200);
	p = oa_completed(&f);
	assert_true(json_is_true(json_object_get(p, "success")));
	assert_string_equal(json_string_value(json_object_get(p, "name")), "oa");
	assert_string_equal(json_string_value(json_object_get(p, "loginId")), id);
	assert_null(json_object_get(p, "error")); /* as upstream's */
	json_decref(p);
	/* upstream's file store: one compact object, "<name>|<16 hex>" -> the entry */
	store = oa_store(&f);
	json_object_foreach(store, k, e) n++;
	assert_int_equal(n, 1);
	e = oa_entry(store);
	assert_non_null(e);
	assert_int_equal(json_object_size(e), 8); /* upstream 0.169's members, issuer included */
	assert_non_null(json_string_value(json_object_get(e, "issuer")));
	assert_string_equal(json_string_value(json_object_get(e, "server_name")), "oa");
	assert_non_null(strstr(json_string_value(json_object_get(e, "server_url")), "/mcp"));
	assert_string_equal(json_string_value(json_object_get(e, "client_id")), "client-1");
	assert_int_equal(
		strncmp(json_string_value(json_object_get(e, "access_token")), "at-1-", 5), 0);
	assert_int_equal(
		strncmp(json_string_value(json_object_get(e, "refresh_token")), "rt-1-", 5), 0);
	assert_true(json_integer_value(json_object_get(e, "expires_at")) > 1700000000000LL);
	assert_int_equal(json_array_size(json_object_get(e, "scopes")), 2);
	st = oa_auth_status(&f, "oa");
	assert_string_equal(st, "oAuth");
	free(st);
	st = oa_auth_status(&f, "local");
	assert_string_equal(st, "unsupported");
	free(st);
	st = oa_auth_status(&f, "tok");
	assert_string_equal(st, "bearerToken");
	free(st);
	/* a thread started now sends the stored token as its bearer */
	oa_thread(&f, "ready");
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	text = oa_item_text(msgs, 0, &failed);
	assert_false(failed);
	assert_string_equal(text, "echo: hi");
	json_decref(msgs);
	assert_int_equal(
		om_calls_with(&m, json_string_value(json_object_get(e, "access_token"))), 1);
	oa_no_secrets(&f, &m);
	json_decref(store);
	tt_stop(&f);
	om_stop(&m);
	free(bad);
	free(body);
	free(cb);
	free(url);
	free(id);
}

/* Upstream's errors for an unknown and a stdio server; the issuer refusing the code ends the
 * login with success false and the provider's words, nothing stored. */
static void
test_login_errors(void **state)
{
	struct om m;
	struct tt f;
	json_t *r, *p;
	char *id, *url, *cb, *path;

	(void)state;
	om_start(&m);
	oa_start(&f, &m, SCRIPT(CALL("call-1")));
	json_decref(oa_settled(&f));
	r = tt_call(&f, "mcpServer/oauth/login", json_pack("{s:s}", "name", "nope"));
	asc_assert_error(r, -32600, "No MCP server named 'nope' found.");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(r, "error"), "message")),
		"No MCP server named 'nope' found.");
	json_decref(r);
	r = tt_call(&f, "mcpServer/oauth/login", json_pack("{s:s}", "name", "local"));
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(r, "error"), "message")),
		"OAuth login is only supported for streamable HTTP servers.");
	asc_assert_error(r, -32600, NULL);
	json_decref(r);
	om_ctl(&m, "refuse-code");
	url = oa_login_start(&f, &id);
	oa_browse(url, &cb);
	p = oa_completed(&f);
	assert_false(json_is_true(json_object_get(p, "success")));
	assert_string_equal(json_string_value(json_object_get(p, "loginId")), id);
	assert_non_null(strstr(json_string_value(json_object_get(p, "error")), "invalid_grant"));
	json_decref(p);
	path = xasprintf("%s/.credentials.json", f.home);
	assert_int_not_equal(access(path, F_OK), 0);
	tt_stop(&f);
	om_stop(&m);
	free(path);
	free(cb);
	free(url);
	free(id);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_login_and_call, om_teardown),
		cmocka_unit_test_teardown(test_login_errors, om_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
