/*
 * Decoding a streamed response into model events (model_int.h).
 *
 * Responses: every SSE event's data is JSON whose "type" says what it is; the event: line is
 * ignored, unknown types are skipped, JSON that does not parse is skipped (as upstream does).
 * response.completed only marks the response complete; the caller acts on it once the body
 * has ended.
 *
 * Chat Completions: chunks carry deltas of one assistant message, of its reasoning
 * (reasoning_content, as Ollama, vLLM and llama.cpp send it) and of tool calls by index. The
 * decoder announces the message and reasoning items when their first delta arrives and emits
 * the finished items (reasoning, message, then one function_call per tool call) when the body
 * ends, so a Chat response reads like a Responses one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/log.h"
#include "model_int.h"
#include "protocol/sse.h"
#include "protocol/xmalloc.h"

/* Deliver an event unless stopped; nonzero once the consumer cancelled. */
static int
model_decode_emit(struct model_dec *d, struct model_event *ev)
{
	if (d->stopped)
		return 1;
	if (d->emit(d->arg, ev) != 0)
		d->stopped = 1;
	return d->stopped;
}

/* An integer member, or dflt. */
static long long
model_decode_int(const json_t *o, const char *k, long long dflt)
{
	json_t *v = json_object_get(o, k);

	return json_is_integer(v) ? json_integer_value(v) : dflt;
}

/* The delay a "try again in N s" message asks for, in ms; -1 when none. */
long
model_decode_retry_hint(const char *message)
{
	const char *p;
	char *end;
	double v;

	if (message == NULL || (p = strcasestr(message, "try again in")) == NULL)
		return -1;
	p += strlen("try again in");
	while (*p == ' ')
		p++;
	v = strtod(p, &end);
	if (end == p || v < 0)
		return -1;
	while (*end == ' ')
		end++;
	if (strncasecmp(end, "ms", 2) == 0)
		return (long)v;
	if (*end == 's' || *end == 'S' || strncasecmp(end, "sec", 3) == 0)
		return (long)(v * 1000);
	return -1;
}

/* Record a failure carried by the stream (response.failed, chat error chunk). */
static void
model_decode_fail(struct model_dec *d, const char *code, const char *message)
{
	d->failed = 1;
	free(d->fail_code);
	free(d->fail_message);
	d->fail_code = code != NULL ? xstrdup(code) : NULL;
	d->fail_retry_after_ms = -1;
	if (code != NULL && strcmp(code, "context_length_exceeded") == 0) {
		d->fail_kind = MODEL_ERR_CONTEXT_WINDOW;
		d->fail_message = xstrdup("Your input exceeds the context window of this model. "
					  "Please adjust your input and try again.");
	} else if (code != NULL && strcmp(code, "insufficient_quota") == 0) {
		d->fail_kind = MODEL_ERR_QUOTA;
		d->fail_message = xstrdup("Quota exceeded. Check your plan and billing details.");
	} else if (code != NULL && strcmp(code, "usage_not_included") == 0) {
		d->fail_kind = MODEL_ERR_USAGE_NOT_INCLUDED;
		d->fail_message = xstrdup("Usage is not included in your plan.");
	} else if (code != NULL && strcmp(code, "rate_limit_exceeded") == 0) {
		d->fail_kind = MODEL_ERR_RATE_LIMIT;
		d->fail_retry_after_ms = model_decode_retry_hint(message);
		d->fail_message = xasprintf("stream disconnected before completion: %s",
			message != NULL ? message : "rate limit exceeded");
	} else {
		d->fail_kind = MODEL_ERR_FAILED;
		d->fail_message = xasprintf("stream disconnected before completion: %s",
			message != NULL ? message : "response.failed");
	}
}

/* Usage of a Responses usage object. */
static void
model_decode_usage(struct model_usage *u, const json_t *o)
{
	if (!json_is_object(o))
		return;
	u->present = 1;
	u->input_tokens = model_decode_int(o, "input_tokens", 0);
	u->cached_input_tokens =
		model_decode_int(json_object_get(o, "input_tokens_details"), "cached_tokens", 0);
	u->output_tokens = model_decode_int(o, "output_tokens", 0);
	u->reasoning_output_tokens = model_decode_int(
		json_object_get(o, "output_tokens_details"), "reasoning_tokens", 0);
	u->total_tokens = model_decode_int(o, "total_tokens", 0);
}

/* One Responses event; nonzero stops the stream. */
static int
model_decode_responses_event(struct model_dec *d, json_t *ev)
{
	const char *type = json_string_value(json_object_get(ev, "type"));
	json_t *resp = json_object_get(ev, "response"), *item = json_object_get(ev, "item");
	json_t *delta = json_object_get(ev, "delta"), *err;
	struct model_event me = {0};
	const char *id;

	if (type == NULL)
		return 0;
	me.item_id = json_string_value(json_object_get(ev, "item_id"));
	if (strcmp(type, "response.created") == 0) {
		if ((id = json_string_value(json_object_get(resp, "id"))) != NULL) {
			free(d->resp_id);
			d->resp_id = xstrdup(id);
		}
		me.kind = MODEL_EV_CREATED;
		me.resp_id = d->resp_id;
		return model_decode_emit(d, &me);
	}
	if (strcmp(type, "response.output_item.added") == 0 ||
		strcmp(type, "response.output_item.done") == 0) {
		if (!json_is_object(item))
			return 0;
		me.kind = type[21] == 'a' ? MODEL_EV_ITEM_ADDED : MODEL_EV_ITEM_DONE;
		me.item = item;
		return model_decode_emit(d, &me);
	}
	if (strcmp(type, "response.output_text.delta") == 0 ||
		strcmp(type, "response.reasoning_summary_text.delta") == 0 ||
		strcmp(type, "response.reasoning_text.delta") == 0) {
		if (!json_is_string(delta))
			return 0;
		me.delta = json_string_value(delta);
		me.delta_len = json_string_length(delta);
		if (type[9] == 'o') {
			me.kind = MODEL_EV_TEXT_DELTA;
			me.index = model_decode_int(ev, "content_index", 0);
		} else if (strstr(type, "summary") != NULL) {
			me.kind = MODEL_EV_REASONING_SUMMARY_DELTA;
			me.index = model_decode_int(ev, "summary_index", 0);
		} else {
			me.kind = MODEL_EV_REASONING_TEXT_DELTA;
			me.index = model_decode_int(ev, "content_index", 0);
		}
		return model_decode_emit(d, &me);
	}
	if (strcmp(type, "codex.rate_limits") == 0) {
		int stop;

		me.kind = MODEL_EV_RATE_LIMITS;
		me.item = model_rate_limits_event(ev);
		stop = model_decode_emit(d, &me);
		json_decref(me.item);
		return stop;
	}
	if (strcmp(type, "response.reasoning_summary_part.added") == 0) {
		me.kind = MODEL_EV_REASONING_SUMMARY_PART;
		me.index = model_decode_int(ev, "summary_index", 0);
		return model_decode_emit(d, &me);
	}
	if (strcmp(type, "response.completed") == 0) {
		if ((id = json_string_value(json_object_get(resp, "id"))) != NULL) {
			free(d->resp_id);
			d->resp_id = xstrdup(id);
		}
		model_decode_usage(&d->usage, json_object_get(resp, "usage"));
		d->completed = 1;
		return 0;
	}
	if (strcmp(type, "response.failed") == 0) {
		err = json_object_get(resp, "error");
		model_decode_fail(d, json_string_value(json_object_get(err, "code")),
			json_string_value(json_object_get(err, "message")));
		return 1;
	}
	if (strcmp(type, "response.incomplete") == 0) {
		const char *why = json_string_value(
			json_object_get(json_object_get(resp, "incomplete_details"), "reason"));
		char *msg = xasprintf(
			"Incomplete response returned, reason: %s", why != NULL ? why : "unknown");

		model_decode_fail(d, NULL, NULL);
		free(d->fail_message);
		d->fail_message = msg;
		return 1;
	}
	return 0;
}

/* The chat item announcements: a message or reasoning item starts with its first delta. */
static int
model_decode_chat_start(struct model_dec *d, int reasoning)
{
	struct model_event me = {.kind = MODEL_EV_ITEM_ADDED};
	int r;

	if (reasoning) {
		d->reasoning_started = 1;
		me.item = json_pack("{s:s, s:s, s:[], s:[]}", "type", "reasoning", "id", "rs-0",
			"summary", "content");
	} else {
		d->text_started = 1;
		me.item = json_pack("{s:s, s:s, s:s, s:[{s:s, s:s}]}", "type", "message", "role",
			"assistant", "id", "msg-0", "content", "type", "output_text", "text", "");
	}
	r = model_decode_emit(d, &me);
	json_decref(me.item);
	return r;
}

/* Accumulate one tool-call delta by its index; -E2BIG when its arguments pass MODEL_MAX_TEXT. */
static int
model_decode_chat_call_delta(struct model_dec *d, const json_t *tc)
{
	long long idx = model_decode_int(tc, "index", 0);
	json_t *fn = json_object_get(tc, "function");
	struct model_call *call;
	const char *s;

	if (idx < 0 || idx >= MODEL_MAX_CALLS)
		return 0;
	if ((size_t)idx >= d->ncalls) {
		d->calls = xrealloc(d->calls, ((size_t)idx + 1) * sizeof *d->calls);
		for (; d->ncalls <= (size_t)idx; d->ncalls++) {
			call = &d->calls[d->ncalls];
			call->call_id = call->name = NULL;
			buf_init(&call->arguments, MODEL_MAX_TEXT);
		}
	}
	call = &d->calls[idx];
	if ((s = json_string_value(json_object_get(tc, "id"))) != NULL && *s != '\0') {
		free(call->call_id);
		call->call_id = xstrdup(s);
	}
	if ((s = json_string_value(json_object_get(fn, "name"))) != NULL && *s != '\0') {
		free(call->name);
		call->name = xstrdup(s);
	}
	if ((s = json_string_value(json_object_get(fn, "arguments"))) != NULL)
		return buf_adds(&call->arguments, s);
	return 0;
}

/* One Chat chunk; nonzero stops the stream. */
static int
model_decode_chat_chunk(struct model_dec *d, json_t *chunk)
{
	json_t *choice = json_array_get(json_object_get(chunk, "choices"), 0);
	json_t *delta = json_object_get(choice, "delta"), *err = json_object_get(chunk, "error");
	json_t *u = json_object_get(chunk, "usage"), *tc;
	struct model_event me = {0};
	const char *s, *fr;
	size_t i;

	if (err != NULL) {
		s = json_string_value(json_object_get(err, "code"));
		if (s == NULL)
			s = json_string_value(json_object_get(err, "type"));
		model_decode_fail(d, s,
			json_is_string(err) ? json_string_value(err)
					    : json_string_value(json_object_get(err, "message")));
		return 1;
	}
	if (!d->created) {
		d->created = 1;
		if ((s = json_string_value(json_object_get(chunk, "id"))) != NULL)
			d->resp_id = xstrdup(s);
		me.kind = MODEL_EV_CREATED;
		me.resp_id = d->resp_id;
		if (model_decode_emit(d, &me) != 0)
			return 1;
	}
	if (json_is_object(u)) {
		d->usage.present = 1;
		d->usage.input_tokens = model_decode_int(u, "prompt_tokens", 0);
		d->usage.cached_input_tokens = model_decode_int(
			json_object_get(u, "prompt_tokens_details"), "cached_tokens", 0);
		d->usage.output_tokens = model_decode_int(u, "completion_tokens", 0);
		d->usage.reasoning_output_tokens = model_decode_int(
			json_object_get(u, "completion_tokens_details"), "reasoning_tokens", 0);
		d->usage.total_tokens = model_decode_int(u, "total_tokens", 0);
	}
	s = json_string_value(json_object_get(delta, "reasoning_content"));
	if (s == NULL)
		s = json_string_value(json_object_get(delta, "reasoning"));
	if (s != NULL && *s != '\0') {
		if (!d->reasoning_started && model_decode_chat_start(d, 1) != 0)
			return 1;
		if (buf_adds(&d->reasoning, s) != 0)
			goto toobig;
		me = (struct model_event){.kind = MODEL_EV_REASONING_TEXT_DELTA,
			.delta = s,
			.delta_len = strlen(s),
			.item_id = "rs-0"};
		if (model_decode_emit(d, &me) != 0)
			return 1;
	}
	if ((s = json_string_value(json_object_get(delta, "content"))) != NULL && *s != '\0') {
		if (!d->text_started && model_decode_chat_start(d, 0) != 0)
			return 1;
		if (buf_adds(&d->text, s) != 0)
			goto toobig;
		me = (struct model_event){.kind = MODEL_EV_TEXT_DELTA,
			.delta = s,
			.delta_len = strlen(s),
			.item_id = "msg-0"};
		if (model_decode_emit(d, &me) != 0)
			return 1;
	}
	json_array_foreach(json_object_get(delta, "tool_calls"), i, tc)
	{
		if (model_decode_chat_call_delta(d, tc) != 0)
			goto toobig;
	}
	if ((fr = json_string_value(json_object_get(choice, "finish_reason"))) != NULL) {
		free(d->finish_reason);
		d->finish_reason = xstrdup(fr);
	}
	return 0;
toobig:
	free(d->stream_error);
	d->stream_error = xasprintf("response text larger than %d bytes", MODEL_MAX_TEXT);
	return 1;
}

/* The SSE callback: one event's data. */
static int
model_decode_sse_cb(void *arg, const char *event, const char *data, size_t len)
{
	struct model_dec *d = arg;
	json_error_t je;
	json_t *ev;
	int r;

	if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
		if (d->wire == MODEL_WIRE_CHAT)
			d->completed = 1;
		return 0;
	}
	if ((ev = json_loadb(data, len, 0, &je)) == NULL) {
		log_debug("model: skipping an SSE event that is not JSON: %s", je.text);
		return 0;
	}
	r = d->wire == MODEL_WIRE_CHAT ? model_decode_chat_chunk(d, ev)
				       : model_decode_responses_event(d, ev);
	json_decref(ev);
	return r;
}

/* Set up a decoder for one response body. */
void
model_decode_init(struct model_dec *d, enum model_wire wire, model_emit_fn emit, void *arg)
{
	memset(d, 0, sizeof *d);
	d->wire = wire;
	d->emit = emit;
	d->arg = arg;
	d->fail_retry_after_ms = -1;
	d->sse = sse_new(MODEL_MAX_EVENT, model_decode_sse_cb, d);
	buf_init(&d->text, MODEL_MAX_TEXT);
	buf_init(&d->reasoning, MODEL_MAX_TEXT);
}

/* Free what a decoder holds. */
void
model_decode_clear(struct model_dec *d)
{
	sse_free(d->sse);
	free(d->resp_id);
	free(d->fail_code);
	free(d->fail_message);
	free(d->stream_error);
	free(d->finish_reason);
	buf_free(&d->text);
	buf_free(&d->reasoning);
	for (size_t i = 0; i < d->ncalls; i++) {
		free(d->calls[i].call_id);
		free(d->calls[i].name);
		buf_free(&d->calls[i].arguments);
	}
	free(d->calls);
	memset(d, 0, sizeof *d);
}

/* Feed body bytes through the SSE parser into the decoder. */
int
model_decode_feed(struct model_dec *d, const char *buf, size_t len)
{
	char *cause = NULL;
	int r;

	if (d->stopped || d->failed || d->stream_error != NULL)
		return 1;
	r = sse_feed(d->sse, buf, len, &cause);
	if (r < 0) {
		free(d->stream_error);
		d->stream_error = cause;
		return 1;
	}
	return r != 0 || d->stopped;
}

/* The body ended: for Chat, emit the accumulated items. */
int
model_decode_finish(struct model_dec *d)
{
	struct model_event me = {.kind = MODEL_EV_ITEM_DONE};
	struct model_call *call;
	size_t i;
	int r = 0;

	if (d->wire != MODEL_WIRE_CHAT || d->failed || d->stream_error != NULL || d->stopped)
		return d->stopped;
	if (d->finish_reason != NULL)
		d->completed = 1;
	if (!d->completed)
		return 0;
	if (d->reasoning_started) {
		me.item = json_pack("{s:s, s:s, s:[], s:[{s:s, s:s%}]}", "type", "reasoning", "id",
			"rs-0", "summary", "content", "type", "reasoning_text", "text",
			buf_str(&d->reasoning), d->reasoning.len);
		r = model_decode_emit(d, &me);
		json_decref(me.item);
	}
	if (r == 0 && d->text_started) {
		me.item = json_pack("{s:s, s:s, s:s, s:[{s:s, s:s%}]}", "type", "message", "role",
			"assistant", "id", "msg-0", "content", "type", "output_text", "text",
			buf_str(&d->text), d->text.len);
		r = model_decode_emit(d, &me);
		json_decref(me.item);
	}
	for (i = 0; i < d->ncalls && r == 0; i++) {
		call = &d->calls[i];
		me.item = json_pack("{s:s, s:s, s:s, s:s%}", "type", "function_call", "call_id",
			call->call_id != NULL ? call->call_id : "", "name",
			call->name != NULL ? call->name : "", "arguments",
			buf_str(&call->arguments), call->arguments.len);
		r = model_decode_emit(d, &me);
		json_decref(me.item);
	}
	return r;
}

/* Whether the response is complete, and if not why and whether to retry. */
int
model_decode_outcome(const struct model_dec *d, struct model_error *e)
{
	memset(e, 0, sizeof *e);
	e->retry_after_ms = -1;
	if (d->failed) {
		e->kind = d->fail_kind;
		e->code = d->fail_code;
		e->message = d->fail_message;
		e->retry_after_ms = d->fail_retry_after_ms;
		return d->fail_kind == MODEL_ERR_FAILED || d->fail_kind == MODEL_ERR_RATE_LIMIT ? 1
												: 2;
	}
	if (d->stream_error != NULL) {
		e->kind = MODEL_ERR_STREAM;
		e->message = d->stream_error;
		return 1;
	}
	if (!d->completed) {
		e->kind = MODEL_ERR_STREAM;
		e->message = d->wire == MODEL_WIRE_CHAT
			? "stream disconnected before completion: stream closed before [DONE]"
			: "stream disconnected before completion: stream closed before "
			  "response.completed";
		return 1;
	}
	return 0;
}

/* model_decode_body's emitter: straight to the callback. */
struct model_decode_direct {
	model_cb cb;
	void *arg;
};

/* Hand an event to the callback (no cancellation possible here). */
static int
model_decode_direct_emit(void *arg, const struct model_event *ev)
{
	struct model_decode_direct *w = arg;

	w->cb(w->arg, ev);
	return 0;
}

/* Decode a whole body as if it had arrived over HTTP and ended. */
void
model_decode_body(enum model_wire wire, const char *body, size_t len, model_cb cb, void *arg)
{
	struct model_decode_direct w = {cb, arg};
	struct model_event me = {0};
	struct model_error e;
	struct model_dec d;

	model_decode_init(&d, wire, model_decode_direct_emit, &w);
	if (model_decode_feed(&d, body, len) == 0)
		model_decode_finish(&d);
	if (model_decode_outcome(&d, &e) == 0) {
		me.kind = MODEL_EV_COMPLETED;
		me.resp_id = d.resp_id;
		me.usage = &d.usage;
	} else {
		me.kind = MODEL_EV_FAILED;
		me.error = &e;
	}
	cb(arg, &me);
	model_decode_clear(&d);
}
