/*
 * The refresh of a streamable-HTTP MCP server's stored OAuth tokens end to end (the fixture
 * of mcp_oauth_util.h): before an expired token is used, after a 401 (one refresh for the
 * calls that meet it), one refresh for every thread of the daemon at once (the mock rotates
 * refresh tokens: a second refresh with the spent one is refused), and a refused refresh.
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

/* A stored token past its expiry is refreshed before the server's first message: no 401, the
 * new tokens stored (0600) in place of the old, used by the call. */
static void
test_refresh_expired(void **state)
{
	struct om m;
	struct tt f;
	json_t *store, *msgs, *log, *e;
	char *old_at, *old_rt;
	const char *at, *text;
	size_t i;
	int failed, refused = 0;

	(void)state;
	om_start(&m);
	oa_start(&f, &m, SCRIPT(CALL("call-1")));
	json_decref(oa_settled(&f));
	oa_login(&f, &m, 1); /* expires in 1 s: within upstream's 30 s skew at once */
	store = oa_store(&f);
	old_at = xstrdup(json_string_value(json_object_get(oa_entry(store), "access_token")));
	old_rt = xstrdup(json_string_value(json_object_get(oa_entry(store), "refresh_token")));
	json_decref(store);
	om_ctl(&m, "expires?s=3600");
	oa_thread(&f, "ready");
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	text = oa_item_text(msgs, 0, &failed);
	assert_false(failed);
	assert_string_equal(text, "echo: hi");
	json_decref(msgs);
	assert_int_equal(om_grants(&m, "refresh_token"), 1);
	log = om_log(&m);
	json_array_foreach(log, i, e) refused +=
		strcmp(json_string_value(json_object_get(e, "ev")), "mcp") == 0 &&
		strstr(json_string_value(json_object_get(e, "authorization")), old_at) != NULL;
	json_decref(log);
	assert_int_equal(refused, 0); /* the expired token was never sent */
	store = oa_store(&f);
	at = json_string_value(json_object_get(oa_entry(store), "access_token"));
	assert_int_equal(strncmp(at, "at-2-", 5), 0);
	assert_string_not_equal(
		json_string_value(json_object_get(oa_entry(store), "refresh_token")), old_rt);
	assert_int_equal(om_calls_with(&m, at), 1);
	oa_no_secrets(&f, &m);
	json_decref(store);
	tt_stop(&f);
	om_stop(&m);
	free(old_at);
	free(old_rt);
}

/* The server refuses the token (401): one refresh for two calls sent at once, both sent again
 * with the new token and answered. */
static void
test_refresh_on_401_single_flight(void **state)
{
	struct om m;
	struct tt f;
	json_t *store, *msgs;
	const char *at, *text;
	int failed;

	(void)state;
	om_start(&m);
	oa_start(&f, &m, SCRIPT(CALL("call-1") "," CALL("call-2")));
	json_decref(oa_settled(&f));
	oa_login(&f, &m, 0);
	oa_thread(&f, "ready");
	om_ctl(&m, "revoke");
	om_ctl(&m, "refresh-delay?s=0.3");
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	for (size_t n = 0; n < 2; n++) {
		text = oa_item_text(msgs, n, &failed);
		assert_false(failed);
		assert_string_equal(text, "echo: hi");
	}
	json_decref(msgs);
	assert_int_equal(om_grants(&m, "refresh_token"), 1);
	store = oa_store(&f);
	at = json_string_value(json_object_get(oa_entry(store), "access_token"));
	assert_int_equal(strncmp(at, "at-2-", 5), 0);
	assert_int_equal(om_calls_with(&m, at), 2);
	json_decref(store);
	tt_stop(&f);
	om_stop(&m);
}

/* A refused refresh fails the call with why and what to do; the tokens are forgotten, so the
 * status says the server needs a login. */
static void
test_refresh_refused(void **state)
{
	struct om m;
	struct tt f;
	json_t *msgs, *store;
	const char *text;
	char *st, *path;
	int failed;

	(void)state;
	om_start(&m);
	oa_start(&f, &m, SCRIPT(CALL("call-1")));
	json_decref(oa_settled(&f));
	oa_login(&f, &m, 0);
	oa_thread(&f, "ready");
	om_ctl(&m, "revoke");
	om_ctl(&m, "refuse-refresh");
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	text = oa_item_text(msgs, 0, &failed);
	assert_true(failed);
	assert_non_null(strstr(text, "OAuth token refresh failed"));
	assert_non_null(strstr(text, "invalid_grant"));
	assert_non_null(strstr(text, "mcpServer/oauth/login"));
	json_decref(msgs);
	assert_int_equal(om_grants(&m, "refresh_token"), 1);
	st = oa_auth_status(&f, "oa");
	assert_string_equal(st, "notLoggedIn");
	free(st);
	path = xasprintf("%s/.credentials.json", f.home);
	store = json_load_file(path, 0, NULL); /* the file goes with its last entry */
	assert_null(oa_entry(store));
	json_decref(store);
	free(path);
	tt_stop(&f);
	om_stop(&m);
}

/*
 * Two threads, each with its own connection to the server, meet a revoked token together:
 * one refresh for both (a second, with the refresh token the first spent, is refused by a
 * rotating provider and would throw the new tokens away), and both calls go through.
 */
static void
test_refresh_shared_by_threads(void **state)
{
	struct om m;
	struct tt f;
	json_t *store, *r1, *r2, *msgs, *all;
	const char *at;
	char *first;
	long long id;
	int failed, done = 0;

	(void)state;
	om_start(&m);
	oa_start(&f, &m,
		"{`responses`:[" RESP("0", CALL("call-1")) "," RESP("1", CALL("call-2")) "," MSG(
			"2") "],`repeat`:true}");
	json_decref(oa_settled(&f));
	oa_login(&f, &m, 0);
	oa_thread(&f, "ready");
	first = xstrdup(f.thread_id);
	oa_thread(&f, "ready");
	om_ctl(&m, "revoke");
	om_ctl(&m, "refresh-delay?s=0.3");
	id = asc_request(f.c, "turn/start",
		json_pack("{s:s, s:o}", "threadId", first, "input", tt_text("hi")));
	r1 = asc_wait_response(f.c, id, asc_timeout(5000));
	asc_assert_result(r1);
	id = asc_request(f.c, "turn/start",
		json_pack("{s:s, s:o}", "threadId", f.thread_id, "input", tt_text("hi")));
	r2 = asc_wait_response(f.c, id, asc_timeout(5000));
	asc_assert_result(r2);
	all = json_array();
	while (done < 2) { /* both turns' messages, interleaved (each with its own call) */
		msgs = asc_next(f.c, asc_timeout(10000));
		assert_non_null(msgs);
		done += strcmp(json_string_value(json_object_get(msgs, "method")) ?: "",
				"turn/completed") == 0;
		json_array_append_new(all, msgs);
	}
	assert_int_equal(tt_count(all, "turn/completed"), 2);
	for (size_t n = 0; n < 2; n++) {
		assert_string_equal(oa_item_text(all, n, &failed), "echo: hi");
		assert_false(failed);
	}
	json_decref(all);
	assert_int_equal(om_grants(&m, "refresh_token"), 1);
	store = oa_store(&f);
	at = json_string_value(json_object_get(oa_entry(store), "access_token"));
	assert_int_equal(strncmp(at, "at-2-", 5), 0);
	assert_int_equal(om_calls_with(&m, at), 2);
	json_decref(store);
	json_decref(r1);
	json_decref(r2);
	free(first);
	tt_stop(&f);
	om_stop(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_refresh_expired, om_teardown),
		cmocka_unit_test_teardown(test_refresh_on_401_single_flight, om_teardown),
		cmocka_unit_test_teardown(test_refresh_shared_by_threads, om_teardown),
		cmocka_unit_test_teardown(test_refresh_refused, om_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
