/*
 * The model client: one streamed sampling request to a provider, over the Responses API
 * (POST {base_url}/responses) or Chat Completions (POST {base_url}/chat/completions), decoded
 * into one event interface whatever the wire. Built on http.h, so it never blocks the loop.
 *
 * Life of a request: model_stream starts it; events arrive through the callback; exactly one
 * terminal event (MODEL_EV_COMPLETED or MODEL_EV_FAILED) ends it, after which the request is
 * freed by this module. model_cancel ends it early with no further event (also from inside
 * the callback). A response is complete only when response.completed (chat: [DONE] or a
 * finish_reason) arrived AND the body ended; anything else is an error.
 *
 * Retries: connect errors, 429 and 5xx are retried up to the provider's request_max_retries;
 * a stream that breaks after 200 OK (cut, idle, response.failed that is not final) up to its
 * stream_max_retries. Each retry is announced with MODEL_EV_RETRY before the backoff
 * (200 ms x 2^(n-1), jitter 0.9-1.1, or the server's Retry-After / "try again in"); what the
 * failed attempt delivered must then be discarded by the caller. Limits are capped at 100:
 * a request never retries forever.
 */
#ifndef MODEL_H
#define MODEL_H

#include <stddef.h>

#include <ev.h>
#include <jansson.h>

#include "config/config.h"

struct http;
struct model_req;

enum model_ev_kind {
	MODEL_EV_CREATED,		  /* response.created: resp_id */
	MODEL_EV_ITEM_ADDED,		  /* output_item.added: item */
	MODEL_EV_ITEM_DONE,		  /* output_item.done: item */
	MODEL_EV_TEXT_DELTA,		  /* output_text.delta: delta, item_id, index */
	MODEL_EV_REASONING_SUMMARY_DELTA, /* delta, item_id, index = summary_index */
	MODEL_EV_REASONING_SUMMARY_PART,  /* item_id, index = summary_index */
	MODEL_EV_REASONING_TEXT_DELTA,	  /* delta, item_id, index = content_index */
	MODEL_EV_RETRY,			  /* error, attempt of max_attempts, delay_ms */
	MODEL_EV_RATE_LIMITS, /* item: a RateLimitSnapshot (the response's headers, or an event) */
	MODEL_EV_COMPLETED,   /* terminal: resp_id, usage */
	MODEL_EV_FAILED,      /* terminal: error */
};

enum model_err {
	MODEL_ERR_CONNECT,	      /* no connection could be made */
	MODEL_ERR_HTTP,		      /* an unexpected 4xx status */
	MODEL_ERR_UNAUTHORIZED,	      /* 401 or 403 */
	MODEL_ERR_BAD_REQUEST,	      /* 400 */
	MODEL_ERR_RATE_LIMIT,	      /* 429 / rate_limit_exceeded, retries exhausted */
	MODEL_ERR_SERVER,	      /* 5xx, retries exhausted */
	MODEL_ERR_CONTEXT_WINDOW,     /* context_length_exceeded */
	MODEL_ERR_QUOTA,	      /* insufficient_quota */
	MODEL_ERR_USAGE_NOT_INCLUDED, /* usage_not_included */
	MODEL_ERR_FAILED,	      /* response.failed with another code */
	MODEL_ERR_STREAM,	      /* closed before completion, or unreadable */
	MODEL_ERR_IDLE_TIMEOUT,	      /* nothing arrived for stream_idle_timeout_ms */
	MODEL_ERR_INTERNAL,	      /* the request could not be sent at all */
};

struct model_error {
	enum model_err kind;
	long http_status; /* 0 when there was no HTTP status */
	const char *code; /* response.failed's error code, or NULL */
	const char
		*message; /* upstream's wording, e.g. "unexpected status 401 Unauthorized: ..." */
	long retry_after_ms; /* the server's hint, -1 when none */
};

struct model_usage {
	long long input_tokens;
	long long cached_input_tokens;
	long long output_tokens;
	long long reasoning_output_tokens;
	long long total_tokens;
	int present; /* the response carried usage */
};

struct model_event {
	enum model_ev_kind kind;
	const char *resp_id;
	json_t *item; /* borrowed: json_incref to keep */
	const char *delta;
	size_t delta_len;
	const char *item_id; /* may be NULL */
	long long index;
	const struct model_usage *usage;
	const struct model_error *error;
	int attempt, max_attempts; /* MODEL_EV_RETRY: 1-based attempt number of the retry */
	long delay_ms;
};

/* Events of one request; ev and everything it points to live only during the call. */
typedef void (*model_cb)(void *arg, const struct model_event *ev);

/* What to ask. Everything is borrowed and copied by model_stream. */
struct model_prompt {
	const char *model;
	json_t *input;		  /* Responses input items (array) */
	json_t *tools;		  /* Responses tool specs (array), or NULL */
	int no_tools;		  /* Responses: no `tools` key (code mode's requests have none) */
	const char *instructions; /* top-level instructions, or NULL (0.169 sends none) */
	json_t *reasoning;	  /* e.g. {"effort":"medium","summary":"auto"}, or NULL */
	int parallel_tool_calls;  /* sent as given */
	const char *prompt_cache_key; /* the thread id, or NULL */
	json_t *text;		      /* {"format": {...}} for an output schema, or NULL */
	json_t *extra;		      /* more body keys, merged last, or NULL */
	/*
	 * More input items as JSON text (objects joined by commas, no brackets), put where
	 * `input` holds model_input_marker(): a long history is then copied into the body as
	 * the caller keeps it, never rebuilt as objects and encoded again. NULL: none.
	 */
	const char *input_text;
	size_t input_text_len;
	const char *const *headers; /* more "Name: value" headers, NULL-terminated, or NULL */
};

/*
 * Start a streamed request; NULL with *cause when the prompt cannot be sent (bad headers,
 * unsupported URL). The provider is copied.
 */
struct model_req *model_stream(struct ev_loop *loop, struct http *h, const struct model_provider *p,
	const struct model_prompt *pr, model_cb cb, void *arg, char **cause);
/* Stop: no more events; everything is released. Not after the terminal event returned. */
void model_cancel(struct model_req *r);

/* The element of model_prompt.input that input_text replaces (borrowed; never freed). */
json_t *model_input_marker(void);

/* The CodexErrorInfo wire value for an error (new reference). */
json_t *model_error_info(const struct model_error *e);
/* The error's kind as a word, for logs and tests. */
const char *model_err_name(enum model_err kind);

/* --- building blocks (model_request.c, model_decode.c), public for tests ------------------- */

/* The request body for the provider's wire (new reference); NULL with *cause when too large. */
json_t *model_request_body(
	const struct model_provider *p, const struct model_prompt *pr, char **cause);
/*
 * {base_url}/responses or /chat/completions, with the provider's query params (heap); NULL
 * with *cause when longer than MODEL_MAX_URL.
 */
char *model_request_url(const struct model_provider *p, char **cause);
/* The request headers, NULL-terminated (free with model_request_headers_free); NULL with *cause. */
char **model_request_headers(
	const struct model_provider *p, const struct model_prompt *pr, char **cause);
void model_request_headers_free(char **headers);
/*
 * Put items (JSON text without brackets) in place of the marker in a body's text: heap text
 * and its length, or NULL when the marker is missing or the result passes MODEL_MAX_BODY.
 */
char *model_request_splice(
	const char *body, size_t len, const char *items, size_t items_len, size_t *out_len);
/*
 * Decode a whole SSE body as if it had arrived over HTTP with status 200 and then ended:
 * events go to cb, ending with COMPLETED or FAILED (no retries). For tests and tools.
 */
void model_decode_body(enum model_wire wire, const char *body, size_t len, model_cb cb, void *arg);

/* model_rate_limits.c: a v2 RateLimitSnapshot (new reference) from a response's headers (an
 * object of lowercase names to values) or from a `codex.rate_limits` event. */
json_t *model_rate_limits_headers(const json_t *headers);
json_t *model_rate_limits_event(const json_t *event);
/* Put next into prev, keeping prev's credits and planType where next has none. */
void model_rate_limits_merge(json_t *prev, const json_t *next);

#endif
