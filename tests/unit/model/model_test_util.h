/*
 * Helpers shared by the model client's pure tests (test_model.c: requests; test_model_decode.c:
 * SSE bodies decoded into events). Unit tests link only libcore.a, so this is a header of
 * static functions, included once per test binary; `inline` keeps a binary that does not use
 * one of them free of warnings.
 */
#ifndef MODEL_TEST_UTIL_H
#define MODEL_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "model/model_int.h"
#include "protocol/xmalloc.h"

/* A provider for the tests (wire as given). */
static inline struct model_provider *
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

static inline void
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
static inline json_t *
decode(enum model_wire wire, const char *body)
{
	struct log l = {json_array()};

	model_decode_body(wire, body, strlen(body), log_cb, &l);
	return l.events;
}

/* The kinds of the events, space-separated. */
static inline char *
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
static inline void
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

/* A text of n 'x' characters (heap). */
static inline char *
xs(size_t n)
{
	char *s = xmalloc(n + 1);

	memset(s, 'x', n);
	s[n] = '\0';
	return s;
}

#endif
