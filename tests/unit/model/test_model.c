/*
 * Tests for the model client's request side (server/model/model_request.c): request bodies
 * and headers for both wires, URLs with query params, the ceilings and the history's splice
 * (no network; test_model_decode.c decodes the answers, test_model_http.c drives the real
 * transfers against the mock).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "model_test_util.h"

static void
test_responses_body(void **state)
{
	struct model_provider *p = provider(MODEL_WIRE_RESPONSES);
	json_t *input = json_loads("[{\"type\":\"message\",\"role\":\"user\",\"content\":"
				   "[{\"type\":\"input_text\",\"text\":\"hi\"}]}]",
		0, NULL);
	json_t *tools = json_loads("[{\"type\":\"function\",\"name\":\"exec_command\"}]", 0, NULL);
	json_t *reasoning = json_pack("{s:s}", "summary", "auto");
	struct model_prompt pr = {.model = "mock-model",
		.input = input,
		.tools = tools,
		.reasoning = reasoning,
		.parallel_tool_calls = 1,
		.prompt_cache_key = "thread-1"};
	char *cause = NULL;
	json_t *body = model_request_body(p, &pr, &cause);
	char *url = model_request_url(p, &cause);

	assert_string_equal(url, "http://127.0.0.1:9/v1/responses");
	assert_json(json_object_get(body, "model"), "\"mock-model\"");
	assert_json(json_object_get(body, "stream"), "true");
	assert_json(json_object_get(body, "store"), "false");
	assert_json(json_object_get(body, "tool_choice"), "\"auto\"");
	assert_json(json_object_get(body, "parallel_tool_calls"), "true");
	assert_json(json_object_get(body, "include"), "[\"reasoning.encrypted_content\"]");
	assert_json(json_object_get(body, "reasoning"), "{\"summary\":\"auto\"}");
	assert_json(json_object_get(body, "prompt_cache_key"), "\"thread-1\"");
	assert_true(json_equal(json_object_get(body, "input"), input));
	assert_true(json_equal(json_object_get(body, "tools"), tools));
	assert_null(json_object_get(body, "instructions")); /* 0.169 sends none */
	json_decref(body);

	/* No tools, no reasoning: empty arrays; instructions when given; extra merged last. */
	pr.tools = NULL;
	pr.reasoning = NULL;
	pr.instructions = "be brief";
	pr.extra = json_pack("{s:s, s:b}", "service_tier", "flex", "store", 1);
	body = model_request_body(p, &pr, &cause);
	assert_json(json_object_get(body, "tools"), "[]");
	assert_json(json_object_get(body, "include"), "[]");
	assert_json(json_object_get(body, "instructions"), "\"be brief\"");
	assert_json(json_object_get(body, "service_tier"), "\"flex\"");
	assert_json(json_object_get(body, "store"), "true");
	json_decref(pr.extra);
	json_decref(body);
	free(url);
	json_decref(input);
	json_decref(tools);
	json_decref(reasoning);
	config_provider_free(p);
}

static void
test_headers(void **state)
{
	struct model_provider *p = provider(MODEL_WIRE_RESPONSES);
	static const char *const extra[] = {"originator: test", "session-id: s1", NULL};
	struct model_prompt pr = {.model = "m", .headers = extra};
	char **h, *cause = NULL, *all = xstrdup(""), *old;

	setenv("TEST_MODEL_HDR", "from-env", 1);
	unsetenv("TEST_MODEL_UNSET_VAR");
	setenv("TEST_MODEL_KEY", "sk-test", 1);
	p->env_key = xstrdup("TEST_MODEL_KEY");
	h = model_request_headers(p, &pr, &cause);
	assert_non_null(h);
	for (size_t i = 0; h[i] != NULL; i++) {
		old = all;
		all = xasprintf("%s%s\n", old, h[i]);
		free(old);
	}
	assert_string_equal(all,
		"Content-Type: application/json\n"
		"Accept: text/event-stream\n"
		"Authorization: Bearer sk-test\n"
		"X-Extra: yes\n"
		"X-From-Env: from-env\n"
		"originator: test\n"
		"session-id: s1\n");
	model_request_headers_free(h);
	free(all);

	/* env_key set but empty: no Authorization header. */
	setenv("TEST_MODEL_KEY", "", 1);
	h = model_request_headers(p, &pr, &cause);
	for (size_t i = 0; h[i] != NULL; i++)
		assert_null(strstr(h[i], "Authorization"));
	model_request_headers_free(h);

	/* A header that would split the request is refused. */
	{
		static const char *const evil[] = {"X-A: 1\r\nX-B: 2", NULL};

		pr.headers = evil;
		assert_null(model_request_headers(p, &pr, &cause));
		assert_non_null(strstr(cause, "invalid HTTP header"));
		free(cause);
	}
	config_provider_free(p);
}

static void
test_query_params(void **state)
{
	struct model_provider *p = provider(MODEL_WIRE_CHAT);
	char *url, *cause = NULL;

	json_object_set_new(p->query_params, "api-version", json_string("2025-01-01"));
	json_object_set_new(p->query_params, "q w", json_string("a&b=c/d"));
	url = model_request_url(p, &cause);
	assert_string_equal(url,
		"http://127.0.0.1:9/v1/chat/completions?api-version=2025-01-01"
		"&q%20w=a%26b%3Dc%2Fd");
	free(url);
	config_provider_free(p);
}

static void
test_chat_body(void **state)
{
	struct model_provider *p = provider(MODEL_WIRE_CHAT);
	json_t *input = json_loads(
		"[{\"type\":\"message\",\"role\":\"developer\",\"content\":[{\"type\":\"input_text\","
		"\"text\":\"rules\"}]},"
		"{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\","
		"\"text\":\"a\"},{\"type\":\"input_text\",\"text\":\"b\"}]},"
		"{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\","
		"\"text\":\"see\"},{\"type\":\"input_image\",\"image_url\":\"data:image/png;base64,AA\"}]},"
		"{\"type\":\"reasoning\",\"id\":\"rs\",\"summary\":[]},"
		"{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\","
		"\"text\":\"running\"}]},"
		"{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"exec_command\","
		"\"arguments\":\"{\\\"cmd\\\":\\\"ls\\\"}\"},"
		"{\"type\":\"function_call\",\"call_id\":\"c2\",\"name\":\"exec_command\","
		"\"arguments\":\"{}\"},"
		"{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":\"file\"},"
		"{\"type\":\"function_call_output\",\"call_id\":\"c2\",\"output\":[{\"type\":"
		"\"input_text\",\"text\":\"x\"}]}]",
		0, NULL);
	json_t *tools = json_loads(
		"[{\"type\":\"function\",\"name\":\"exec_command\",\"description\":\"run\","
		"\"parameters\":{\"type\":\"object\"},\"strict\":false},"
		"{\"type\":\"web_search\",\"external_web_access\":false}]",
		0, NULL);
	struct model_prompt pr = {
		.model = "llama", .input = input, .tools = tools, .instructions = "base"};
	char *cause = NULL;
	json_t *body = model_request_body(p, &pr, &cause);

	assert_json(json_object_get(body, "model"), "\"llama\"");
	assert_json(json_object_get(body, "stream"), "true");
	assert_json(json_object_get(body, "stream_options"), "{\"include_usage\":true}");
	assert_json(json_object_get(body, "tool_choice"), "\"auto\"");
	assert_json(json_object_get(body, "tools"),
		"[{\"type\":\"function\",\"function\":{\"name\":\"exec_command\",\"description\":"
		"\"run\",\"parameters\":{\"type\":\"object\"}}}]");
	assert_json(json_object_get(body, "messages"),
		"[{\"role\":\"system\",\"content\":\"base\"},"
		"{\"role\":\"system\",\"content\":\"rules\"},"
		"{\"role\":\"user\",\"content\":\"a\\nb\"},"
		"{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"see\"},{\"type\":"
		"\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,AA\"}}]},"
		"{\"role\":\"assistant\",\"content\":\"running\",\"tool_calls\":["
		"{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"exec_command\","
		"\"arguments\":\"{\\\"cmd\\\":\\\"ls\\\"}\"}},"
		"{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"exec_command\","
		"\"arguments\":\"{}\"}}]},"
		"{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"file\"},"
		"{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":\"x\"}]");
	assert_null(json_object_get(body, "input"));
	assert_null(json_object_get(body, "store"));
	json_decref(body);
	json_decref(input);
	json_decref(tools);
	config_provider_free(p);
}

/* Past its ceiling a URL or a body is refused with a message, never truncated. */
static void
test_request_ceilings(void **state)
{
	struct model_provider *p = provider(MODEL_WIRE_CHAT);
	char *big = xs(MODEL_MAX_URL), *cause = NULL, *url;
	struct model_prompt pr = {.model = "llama"};
	json_t *body;

	json_object_set_new(p->query_params, "k", json_string(big));
	assert_null(model_request_url(p, &cause));
	assert_string_equal(cause, "request URL longer than 65536 bytes");
	free(cause);
	cause = NULL;
	free(big);
	json_object_set_new(p->query_params, "k", json_string("v"));
	url = model_request_url(p, &cause);
	assert_string_equal(url, "http://127.0.0.1:9/v1/chat/completions?k=v");
	free(url);

	/* Two text parts that join past MODEL_MAX_BODY: the chat body cannot be built. */
	big = xs(MODEL_MAX_BODY / 2);
	pr.input = json_pack("[{s:s, s:s, s:[{s:s}, {s:s}]}]", "type", "message", "role", "user",
		"content", "text", big, "text", big);
	free(big);
	assert_null(model_request_body(p, &pr, &cause));
	assert_string_equal(cause, "request larger than 134217728 bytes");
	free(cause);
	cause = NULL;
	/* One byte less joins to exactly the ceiling. */
	big = xs(MODEL_MAX_BODY / 2 - 1);
	json_object_set_new(
		json_array_get(json_object_get(json_array_get(pr.input, 0), "content"), 1), "text",
		json_string(big));
	free(big);
	body = model_request_body(p, &pr, &cause);
	assert_non_null(body);
	json_decref(body);
	json_decref(pr.input);
	config_provider_free(p);
}

/* The history spliced in place of the marker, as text; an empty one takes a comma with it. */
static void
test_request_splice(void **state)
{
	json_t *body = json_pack("{s:s, s:[{s:s}, O, {s:s}]}", "model", "m", "input", "type", "a",
		model_input_marker(), "type", "z");
	char *text = json_dumps(body, JSON_COMPACT), *out;
	size_t len;

	(void)state;
	out = model_request_splice(
		text, strlen(text), "{\"type\":\"h1\"},{\"type\":\"h2\"}", 27, &len);
	assert_non_null(out);
	assert_string_equal(out,
		"{\"model\":\"m\",\"input\":[{\"type\":\"a\"},{\"type\":\"h1\"},"
		"{\"type\":\"h2\"},{\"type\":\"z\"}]}");
	assert_int_equal(len, strlen(out));
	free(out);
	out = model_request_splice(text, strlen(text), "", 0, &len);
	assert_string_equal(out, "{\"model\":\"m\",\"input\":[{\"type\":\"a\"},{\"type\":\"z\"}]}");
	free(out);
	/* No marker: refused. */
	assert_null(model_request_splice("{}", 2, "x", 1, &len));
	free(text);
	json_decref(body);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_splice),
		cmocka_unit_test(test_responses_body),
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_query_params),
		cmocka_unit_test(test_chat_body),
		cmocka_unit_test(test_request_ceilings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
