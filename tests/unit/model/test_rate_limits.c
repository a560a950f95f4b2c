/*
 * Rate limits as upstream 0.169 reads them: the x-codex-* headers of a response and the
 * codex.rate_limits event (model/model_rate_limits.c), the rolling merge, and the usage
 * endpoint's payload and URL (account/usage.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "account/usage.h"
#include "model/model.h"

/* The snapshot as compact text (members in their order), for whole-value checks. */
static void
expect_json(json_t *j, const char *want)
{
	char *got = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);

	assert_string_equal(got, want);
	free(got);
	json_decref(j);
}

static void
test_headers(void **state)
{
	json_t *h = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}",
		"x-codex-primary-used-percent", "12.5", "x-codex-primary-window-minutes", "60",
		"x-codex-primary-reset-at", "1704069000", "x-codex-secondary-used-percent", "0",
		"x-codex-credits-has-credits", "true", "x-codex-credits-unlimited", "0",
		"x-codex-credits-balance", " 9.99 ", "x-codex-limit-name", "Codex");

	(void)state;
	/* a secondary at 0 % with nothing else set is no window, as upstream keeps it */
	expect_json(model_rate_limits_headers(h),
		"{\"limitId\":\"codex\",\"limitName\":\"Codex\",\"normalModelSlug\":null,"
		"\"primary\":{\"usedPercent\":13,\"windowDurationMins\":60,\"resetsAt\":1704069000},"
		"\"secondary\":null,\"credits\":{\"hasCredits\":true,\"unlimited\":false,"
		"\"balance\":\"9.99\"},\"individualLimit\":null,\"spendControlReached\":null,"
		"\"planType\":null,\"rateLimitReachedType\":null}");
	json_decref(h);
}

static void
test_no_headers(void **state)
{
	json_t *h = json_pack("{s:s, s:s}", "x-codex-primary-used-percent", "nan",
		"x-codex-credits-has-credits", "yes");

	(void)state;
	/* the codex snapshot is there with nulls: upstream reports it after every response */
	expect_json(model_rate_limits_headers(h),
		"{\"limitId\":\"codex\",\"limitName\":null,\"normalModelSlug\":null,"
		"\"primary\":null,\"secondary\":null,\"credits\":null,\"individualLimit\":null,"
		"\"spendControlReached\":null,\"planType\":null,\"rateLimitReachedType\":null}");
	expect_json(model_rate_limits_headers(NULL),
		"{\"limitId\":\"codex\",\"limitName\":null,\"normalModelSlug\":null,"
		"\"primary\":null,\"secondary\":null,\"credits\":null,\"individualLimit\":null,"
		"\"spendControlReached\":null,\"planType\":null,\"rateLimitReachedType\":null}");
	json_decref(h);
}

static void
test_event_and_merge(void **state)
{
	json_t *ev =
		json_loads("{\"type\":\"codex.rate_limits\",\"plan_type\":\"plus\","
			   "\"metered_limit_name\":\"Codex-Other\",\"rate_limits\":{\"primary\":"
			   "{\"used_percent\":42.4,\"window_minutes\":300,\"reset_at\":7}},"
			   "\"credits\":{\"has_credits\":false,\"unlimited\":true}}",
			0, NULL);
	json_t *snap = model_rate_limits_event(ev), *next;

	(void)state;
	assert_string_equal(json_string_value(json_object_get(snap, "limitId")), "codex_other");
	assert_string_equal(json_string_value(json_object_get(snap, "planType")), "plus");
	assert_int_equal(json_integer_value(
				 json_object_get(json_object_get(snap, "primary"), "usedPercent")),
		42);
	/* headers without credits or plan keep what the event told */
	next = model_rate_limits_headers(NULL);
	model_rate_limits_merge(snap, next);
	assert_true(json_is_null(json_object_get(snap, "primary")));
	assert_string_equal(json_string_value(json_object_get(snap, "planType")), "plus");
	assert_true(json_is_true(json_object_get(json_object_get(snap, "credits"), "unlimited")));
	json_decref(next);
	json_decref(snap);
	json_decref(ev);
}

static void
test_usage_url(void **state)
{
	char *u;

	(void)state;
	u = account_usage_url(NULL);
	assert_string_equal(u, "https://chatgpt.com/backend-api/wham/usage");
	free(u);
	u = account_usage_url("https://chatgpt.com//");
	assert_string_equal(u, "https://chatgpt.com/backend-api/wham/usage");
	free(u);
	u = account_usage_url("http://127.0.0.1:9/backend-api/");
	assert_string_equal(u, "http://127.0.0.1:9/backend-api/wham/usage");
	free(u);
	u = account_usage_url("http://127.0.0.1:9");
	assert_string_equal(u, "http://127.0.0.1:9/api/codex/usage");
	free(u);
}

static void
test_usage_result(void **state)
{
	json_t *p = json_loads(
		"{\"plan_type\":\"education\",\"account_id\":null,\"rate_limit\":{"
		"\"primary_window\":{\"used_percent\":42,\"limit_window_seconds\":301,"
		"\"reset_after_seconds\":0,\"reset_at\":123},\"secondary_window\":null},"
		"\"rate_limit_reached_type\":{\"type\":\"unknown\"},"
		"\"additional_rate_limits\":[{\"limit_name\":\"Other\",\"metered_feature\":"
		"\"codex_other\",\"rate_limit\":null}]}",
		0, NULL);
	json_t *r = account_usage_result(p);

	(void)state;
	/* 301 s is a 6-minute window (rounded up); education is edu; unknown is no type */
	expect_json(json_incref(json_object_get(r, "rateLimits")),
		"{\"limitId\":\"codex\",\"limitName\":null,\"normalModelSlug\":null,"
		"\"primary\":{\"usedPercent\":42,\"windowDurationMins\":6,\"resetsAt\":123},"
		"\"secondary\":null,\"credits\":null,\"individualLimit\":null,"
		"\"spendControlReached\":null,\"planType\":\"edu\",\"rateLimitReachedType\":null}");
	expect_json(json_incref(json_object_get(
			    json_object_get(r, "rateLimitsByLimitId"), "codex_other")),
		"{\"limitId\":\"codex_other\",\"limitName\":\"Other\",\"normalModelSlug\":null,"
		"\"primary\":null,\"secondary\":null,\"credits\":null,\"individualLimit\":null,"
		"\"spendControlReached\":null,\"planType\":\"edu\",\"rateLimitReachedType\":null}");
	assert_true(json_is_null(json_object_get(r, "accountId")));
	json_decref(r);
	json_decref(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_no_headers),
		cmocka_unit_test(test_event_and_merge),
		cmocka_unit_test(test_usage_url),
		cmocka_unit_test(test_usage_result),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
