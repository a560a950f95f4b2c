/*
 * Tests for the model client's decoding (server/model/model_decode.c): whole SSE bodies of both
 * wires into model events, upstream's errors for a missing completion, failures and oversized
 * text, and the error info clients see (no network).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "model_test_util.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_responses),
		cmocka_unit_test(test_decode_no_completed),
		cmocka_unit_test(test_decode_failed),
		cmocka_unit_test(test_decode_tolerant),
		cmocka_unit_test(test_decode_chat),
		cmocka_unit_test(test_error_info),
		cmocka_unit_test(test_decode_chat_ceiling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
