/*
 * Tests for the model client's pure parts (server/model_request.c, server/model_decode.c):
 * request bodies and headers for both wires, URLs with query params, and the decoding of whole
 * SSE bodies into model events (no network; test_model_http.c drives the real transfers
 * against the mock).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/model_int.h"
#include "protocol/xmalloc.h"

/* A provider for the tests (wire as given). */
static struct model_provider *
provider(enum model_wire wire)
{
	struct model_provider *p = xcalloc(1, sizeof *p);

	p->id = xstrdup("mock_provider");
	p->name = xstrdup("Mock");
	p->base_url = xstrdup("http://127.0.0.1:9/v1");
	p->wire = wire;
	p->http_headers = json_pack("{s:s}", "X-Extra", "yes");
	p->env_http_headers = json_pack(
		"{s:s, s:s}", "X-From-Env", "TEST_MODEL_HDR", "X-Unset", "TEST_MODEL_UNSET_VAR");
	p->query_params = json_object();
	p->request_max_retries = 0;
	p->stream_max_retries = 0;
	p->stream_idle_timeout_ms = 1000;
	return p;
}

/* Everything the callback saw, as a JSON array of compact event descriptions. */
struct log {
	json_t *events;
};

static void
log_cb(void *arg, const struct model_event *ev)
{
	struct log *l = arg;
	json_t *e = json_object();

	static const char *const kinds[] = {
		[MODEL_EV_CREATED] = "created",
		[MODEL_EV_ITEM_ADDED] = "item_added",
		[MODEL_EV_ITEM_DONE] = "item_done",
		[MODEL_EV_TEXT_DELTA] = "text_delta",
		[MODEL_EV_REASONING_SUMMARY_DELTA] = "summary_delta",
		[MODEL_EV_REASONING_SUMMARY_PART] = "summary_part",
		[MODEL_EV_REASONING_TEXT_DELTA] = "reasoning_delta",
		[MODEL_EV_RETRY] = "retry",
		[MODEL_EV_RATE_LIMITS] = "rate_limits",
		[MODEL_EV_COMPLETED] = "completed",
		[MODEL_EV_FAILED] = "failed",
	};

	json_object_set_new(e, "kind", json_string(kinds[ev->kind]));
	if (ev->resp_id != NULL)
		json_object_set_new(e, "resp_id", json_string(ev->resp_id));
	if (ev->item != NULL)
		json_object_set(e, "item", ev->item);
	if (ev->delta != NULL)
		json_object_set_new(e, "delta", json_stringn(ev->delta, ev->delta_len));
	if (ev->kind == MODEL_EV_TEXT_DELTA || ev->kind == MODEL_EV_REASONING_SUMMARY_DELTA ||
		ev->kind == MODEL_EV_REASONING_SUMMARY_PART ||
		ev->kind == MODEL_EV_REASONING_TEXT_DELTA)
		json_object_set_new(e, "index", json_integer(ev->index));
	if (ev->usage != NULL && ev->usage->present)
		json_object_set_new(e, "usage",
			json_pack("{s:I, s:I, s:I, s:I, s:I}", "input", ev->usage->input_tokens,
				"cached", ev->usage->cached_input_tokens, "output",
				ev->usage->output_tokens, "reasoning",
				ev->usage->reasoning_output_tokens, "total",
				ev->usage->total_tokens));
	if (ev->error != NULL) {
		json_object_set_new(e, "error", json_string(model_err_name(ev->error->kind)));
		json_object_set_new(e, "message", json_string(ev->error->message));
		json_object_set_new(e, "info", model_error_info(ev->error));
	}
	json_array_append_new(l->events, e);
}

/* Decode body and return the events (caller frees). */
static json_t *
decode(enum model_wire wire, const char *body)
{
	struct log l = {json_array()};

	model_decode_body(wire, body, strlen(body), log_cb, &l);
	return l.events;
}

/* The kinds of the events, space-separated. */
static char *
kinds(const json_t *events)
{
	char *s = xstrdup(""), *old;
	json_t *e;
	size_t i;

	json_array_foreach(events, i, e)
	{
		old = s;
		s = xasprintf("%s%s%s", old, i > 0 ? " " : "",
			json_string_value(json_object_get(e, "kind")));
		free(old);
	}
	return s;
}

/* Assert a JSON value (by pointer-ish path of keys) equals the JSON text want. */
static void
assert_json(const json_t *v, const char *want)
{
	json_t *w = json_loads(want, JSON_DECODE_ANY, NULL);
	char *got = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	assert_non_null(w);
	if (!json_equal((json_t *)v, w))
		fail_msg("got  %s\nwant %s", got != NULL ? got : "(null)", want);
	free(got);
	json_decref(w);
}

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

/* The SSE text of events, as upstream's helper writes them. */
static char *
sse(const char *const *events)
{
	char *s = xstrdup(""), *old;
	json_t *e;

	for (size_t i = 0; events[i] != NULL; i++) {
		e = json_loads(events[i], 0, NULL);
		assert_non_null(e);
		old = s;
		s = xasprintf("%sevent: %s\ndata: %s\n\n", old,
			json_string_value(json_object_get(e, "type")), events[i]);
		free(old);
		json_decref(e);
	}
	return s;
}

static void
test_decode_responses(void **state)
{
	static const char *const events[] = {
		"{\"type\":\"response.created\",\"response\":{\"id\":\"resp-1\"}}",
		"{\"type\":\"response.in_progress\",\"response\":{}}",
		"{\"type\":\"response.output_item.added\",\"item\":{\"type\":\"reasoning\",\"id\":"
		"\"rs-1\",\"summary\":[]}}",
		"{\"type\":\"response.reasoning_summary_part.added\",\"item_id\":\"rs-1\","
		"\"summary_index\":0}",
		"{\"type\":\"response.reasoning_summary_text.delta\",\"item_id\":\"rs-1\",\"delta\":"
		"\"Think\",\"summary_index\":0}",
		"{\"type\":\"response.reasoning_text.delta\",\"item_id\":\"rs-1\",\"delta\":\"raw\","
		"\"content_index\":2}",
		"{\"type\":\"response.output_item.done\",\"item\":{\"type\":\"reasoning\",\"id\":"
		"\"rs-1\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"Think\"}]}}",
		"{\"type\":\"response.output_item.added\",\"item\":{\"type\":\"message\",\"role\":"
		"\"assistant\",\"id\":\"msg-1\",\"content\":[{\"type\":\"output_text\",\"text\":\"\"}]}}",
		"{\"type\":\"response.output_text.delta\",\"item_id\":\"msg-1\",\"delta\":\"Hel\"}",
		"{\"type\":\"response.content_part.done\"}",
		"{\"type\":\"response.output_text.delta\",\"delta\":\"lo\"}",
		"{\"type\":\"response.output_item.done\",\"item\":{\"type\":\"message\",\"role\":"
		"\"assistant\",\"id\":\"msg-1\",\"content\":[{\"type\":\"output_text\",\"text\":"
		"\"Hello\"}]}}",
		"{\"type\":\"response.output_item.done\",\"item\":{\"type\":\"function_call\","
		"\"call_id\":\"call-1\",\"name\":\"shell_command\",\"arguments\":\"{}\"}}",
		"{\"type\":\"response.output_item.done\",\"item\":{\"type\":\"custom_tool_call\","
		"\"name\":\"apply_patch\",\"input\":\"*** Begin Patch\",\"call_id\":\"c\"}}",
		"{\"type\":\"response.output_item.done\",\"item\":{\"type\":\"local_shell_call\","
		"\"call_id\":\"c\",\"status\":\"completed\",\"action\":{\"type\":\"exec\","
		"\"command\":[\"echo\",\"hi\"]}}}",
		"{\"type\":\"response.output_item.done\",\"item\":{\"type\":\"web_search_call\",\"id\":"
		"\"ws-1\",\"status\":\"completed\",\"action\":{\"type\":\"search\",\"query\":\"q\"}}}",
		"{\"type\":\"response.brand_new_event\",\"x\":1}",
		"{\"type\":\"response.completed\",\"response\":{\"id\":\"resp-1\",\"usage\":{"
		"\"input_tokens\":100,\"input_tokens_details\":{\"cached_tokens\":40},"
		"\"output_tokens\":20,\"output_tokens_details\":{\"reasoning_tokens\":7},"
		"\"total_tokens\":120}}}",
		NULL};
	char *body = sse(events), *k;
	json_t *ev = decode(MODEL_WIRE_RESPONSES, body);

	k = kinds(ev);
	assert_string_equal(k,
		"created item_added summary_part summary_delta reasoning_delta "
		"item_done item_added text_delta text_delta item_done item_done "
		"item_done item_done item_done completed");
	assert_json(json_array_get(ev, 0), "{\"kind\":\"created\",\"resp_id\":\"resp-1\"}");
	assert_json(json_object_get(json_array_get(ev, 3), "index"), "0");
	assert_json(json_object_get(json_array_get(ev, 4), "index"), "2");
	assert_json(json_object_get(json_array_get(ev, 7), "delta"), "\"Hel\"");
	assert_json(json_object_get(json_array_get(ev, 14), "usage"),
		"{\"input\":100,\"cached\":40,\"output\":20,\"reasoning\":7,\"total\":120}");
	assert_json(json_object_get(json_array_get(ev, 14), "resp_id"), "\"resp-1\"");
	free(k);
	free(body);
	json_decref(ev);
}

/* Completed needs the body to end after it; its absence is the upstream error. */
static void
test_decode_no_completed(void **state)
{
	static const char *const events[] = {
		"{\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}",
		"{\"type\":\"response.output_text.delta\",\"delta\":\"x\"}", NULL};
	char *body = sse(events);
	json_t *ev = decode(MODEL_WIRE_RESPONSES, body), *last;

	last = json_array_get(ev, json_array_size(ev) - 1);
	assert_json(json_object_get(last, "kind"), "\"failed\"");
	assert_json(json_object_get(last, "error"), "\"stream\"");
	assert_json(json_object_get(last, "message"),
		"\"stream disconnected before completion: stream closed before "
		"response.completed\"");
	assert_json(json_object_get(last, "info"),
		"{\"responseStreamDisconnected\":{\"httpStatusCode\":null}}");
	free(body);
	json_decref(ev);
}

/* response.failed codes map to typed errors. */
static void
test_decode_failed(void **state)
{
	static const struct {
		const char *code, *message, *kind, *info, *text;
	} cases[] = {
		{"context_length_exceeded", "too long", "context_window",
			"\"contextWindowExceeded\"", "Your input exceeds the context window"},
		{"insufficient_quota", "pay", "quota", "\"usageLimitExceeded\"", "Quota exceeded"},
		{"usage_not_included", "plan", "usage_not_included", "\"usageLimitExceeded\"",
			"not included"},
		{"rate_limit_exceeded", "Rate limit reached. Please try again in 1.5s.",
			"rate_limit", "\"rateLimitExceeded\"", "try again in 1.5s"},
		{"server_error", "failed hard", "failed", "\"other\"",
			"stream disconnected before completion: failed hard"},
	};

	for (size_t i = 0; i < nitems(cases); i++) {
		char *events =
			xasprintf("data: {\"type\":\"response.created\",\"response\":{\"id\":"
				  "\"r\"}}\n\ndata: {\"type\":\"response.failed\","
				  "\"response\":{\"id\":\"r\",\"error\":{\"code\":\"%s\","
				  "\"message\":\"%s\"}}}\n\ndata: {\"type\":"
				  "\"response.completed\",\"response\":{\"id\":\"r\"}}\n\n",
				cases[i].code, cases[i].message);
		json_t *ev = decode(MODEL_WIRE_RESPONSES, events), *last;
		char *k = kinds(ev);

		/* Nothing after response.failed is read. */
		assert_string_equal(k, "created failed");
		last = json_array_get(ev, 1);
		char *want = xasprintf("\"%s\"", cases[i].kind);

		assert_json(json_object_get(last, "error"), want);
		free(want);
		assert_json(json_object_get(last, "info"), cases[i].info);
		assert_non_null(
			strstr(json_string_value(json_object_get(last, "message")), cases[i].text));
		free(k);
		free(events);
		json_decref(ev);
	}
	assert_int_equal(model_decode_retry_hint("Please try again in 1.5s."), 1500);
	assert_int_equal(model_decode_retry_hint("try again in 20ms"), 20);
	assert_int_equal(model_decode_retry_hint("no hint"), -1);
}

/* Bad JSON and [DONE] are skipped on the Responses wire; an oversized event is an error. */
static void
test_decode_tolerant(void **state)
{
	char *big, *body;
	json_t *ev;
	char *k;

	ev = decode(MODEL_WIRE_RESPONSES,
		": ping\n\ndata: not json\n\ndata: [DONE]\n\ndata: {\"no_type\":1}\n\n"
		"data: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\"}}\n\n");
	k = kinds(ev);
	assert_string_equal(k, "completed");
	assert_null(json_object_get(json_array_get(ev, 0), "usage"));
	free(k);
	json_decref(ev);

	big = xmalloc((17 << 20) + 1);
	memset(big, 'x', 17 << 20);
	big[17 << 20] = '\0';
	body = xasprintf("data: %s\n\n", big);
	ev = decode(MODEL_WIRE_RESPONSES, body);
	assert_json(json_object_get(json_array_get(ev, 0), "error"), "\"stream\"");
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(ev, 0), "message")),
		"than 16777216 bytes"));
	json_decref(ev);
	free(body);
	free(big);
}

static void
test_decode_chat(void **state)
{
	const char *body =
		"data: {\"id\":\"chatcmpl-9\",\"choices\":[{\"index\":0,\"delta\":{\"role\":"
		"\"assistant\"}}]}\n\n"
		"data: {\"id\":\"chatcmpl-9\",\"choices\":[{\"index\":0,\"delta\":{"
		"\"reasoning_content\":\"think\"}}]}\n\n"
		"data: {\"id\":\"chatcmpl-9\",\"choices\":[{\"index\":0,\"delta\":{\"content\":"
		"\"Hel\"}}]}\n\n"
		"data: {\"id\":\"chatcmpl-9\",\"choices\":[{\"index\":0,\"delta\":{\"content\":"
		"\"lo\"}}]}\n\n"
		"data: {\"id\":\"chatcmpl-9\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":["
		"{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":"
		"\"exec_command\",\"arguments\":\"{\\\"cmd\\\":\"}}]}}]}\n\n"
		"data: {\"id\":\"chatcmpl-9\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":["
		"{\"index\":0,\"function\":{\"arguments\":\"\\\"ls\\\"}\"}},{\"index\":1,\"id\":"
		"\"call_b\",\"function\":{\"name\":\"view_image\",\"arguments\":\"{}\"}}]}}]}\n\n"
		"data: {\"id\":\"chatcmpl-9\",\"choices\":[{\"index\":0,\"delta\":{},"
		"\"finish_reason\":\"tool_calls\"}]}\n\n"
		"data: {\"id\":\"chatcmpl-9\",\"choices\":[],\"usage\":{\"prompt_tokens\":11,"
		"\"completion_tokens\":5,\"total_tokens\":16,\"prompt_tokens_details\":{"
		"\"cached_tokens\":3}}}\n\n"
		"data: [DONE]\n\n";
	json_t *ev = decode(MODEL_WIRE_CHAT, body);
	char *k = kinds(ev);

	assert_string_equal(k,
		"created item_added reasoning_delta item_added text_delta "
		"text_delta item_done item_done item_done item_done completed");
	assert_json(json_object_get(json_array_get(ev, 0), "resp_id"), "\"chatcmpl-9\"");
	assert_json(json_object_get(json_array_get(ev, 6), "item"),
		"{\"type\":\"reasoning\",\"id\":\"rs-0\",\"summary\":[],\"content\":[{\"type\":"
		"\"reasoning_text\",\"text\":\"think\"}]}");
	assert_json(json_object_get(json_array_get(ev, 7), "item"),
		"{\"type\":\"message\",\"role\":\"assistant\",\"id\":\"msg-0\",\"content\":[{\"type\":"
		"\"output_text\",\"text\":\"Hello\"}]}");
	assert_json(json_object_get(json_array_get(ev, 8), "item"),
		"{\"type\":\"function_call\",\"call_id\":\"call_a\",\"name\":\"exec_command\","
		"\"arguments\":\"{\\\"cmd\\\":\\\"ls\\\"}\"}");
	assert_json(json_object_get(json_array_get(ev, 9), "item"),
		"{\"type\":\"function_call\",\"call_id\":\"call_b\",\"name\":\"view_image\","
		"\"arguments\":\"{}\"}");
	assert_json(json_object_get(json_array_get(ev, 10), "usage"),
		"{\"input\":11,\"cached\":3,\"output\":5,\"reasoning\":0,\"total\":16}");
	free(k);
	json_decref(ev);

	/* Neither [DONE] nor a finish_reason: cut. An error chunk: failed. */
	ev = decode(MODEL_WIRE_CHAT,
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n");
	assert_json(json_object_get(json_array_get(ev, json_array_size(ev) - 1), "error"),
		"\"stream\"");
	json_decref(ev);
	ev = decode(MODEL_WIRE_CHAT,
		"data: {\"error\":{\"message\":\"model not loaded\",\"type\":\"server_error\"}}\n\n");
	k = kinds(ev);
	assert_string_equal(k, "failed");
	assert_non_null(strstr(json_string_value(json_object_get(json_array_get(ev, 0), "message")),
		"model not loaded"));
	free(k);
	json_decref(ev);
}

/* A text of n 'x' characters (heap). */
static char *
xs(size_t n)
{
	char *s = xmalloc(n + 1);

	memset(s, 'x', n);
	s[n] = '\0';
	return s;
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

/* A chat tool call's arguments past MODEL_MAX_TEXT end the stream with an error. */
static void
test_decode_chat_ceiling(void **state)
{
	size_t piece = 12 << 20, n = MODEL_MAX_TEXT / piece + 1, i;
	char *arg = xs(piece), *chunk, *body;
	struct buf b;
	json_t *ev;

	chunk = xasprintf("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
			  "\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":"
			  "\"%s\"}}]}}]}\n\n",
		arg);
	free(arg);
	buf_init(&b, (size_t)-1);
	for (i = 0; i < n; i++)
		assert_int_equal(buf_adds(&b, chunk), 0);
	assert_int_equal(buf_adds(&b, "data: [DONE]\n\n"), 0);
	free(chunk);
	body = buf_steal(&b, NULL);
	ev = decode(MODEL_WIRE_CHAT, body);
	free(body);
	assert_json(json_object_get(json_array_get(ev, json_array_size(ev) - 1), "error"),
		"\"stream\"");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(ev, json_array_size(ev) - 1), "message")),
		"response text larger than 67108864 bytes");
	json_decref(ev);
}

static void
test_error_info(void **state)
{
	struct model_error e = {.kind = MODEL_ERR_UNAUTHORIZED, .http_status = 401};
	json_t *v = model_error_info(&e);

	assert_json(v, "{\"httpConnectionFailed\":{\"httpStatusCode\":401}}");
	json_decref(v);
	e = (struct model_error){.kind = MODEL_ERR_SERVER, .http_status = 500};
	v = model_error_info(&e);
	assert_json(v, "\"internalServerError\"");
	json_decref(v);
	e = (struct model_error){.kind = MODEL_ERR_CONNECT};
	v = model_error_info(&e);
	assert_json(v, "{\"httpConnectionFailed\":{\"httpStatusCode\":null}}");
	json_decref(v);
	e = (struct model_error){.kind = MODEL_ERR_BAD_REQUEST, .http_status = 400};
	v = model_error_info(&e);
	assert_json(v, "\"badRequest\"");
	json_decref(v);
	assert_string_equal(model_err_name(MODEL_ERR_IDLE_TIMEOUT), "idle_timeout");
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
		cmocka_unit_test(test_decode_responses),
		cmocka_unit_test(test_decode_no_completed),
		cmocka_unit_test(test_decode_failed),
		cmocka_unit_test(test_decode_tolerant),
		cmocka_unit_test(test_decode_chat),
		cmocka_unit_test(test_error_info),
		cmocka_unit_test(test_request_ceilings),
		cmocka_unit_test(test_decode_chat_ceiling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
