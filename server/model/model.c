/*
 * Model requests (model.h): one HTTP transfer per attempt, the decoder fed with its body, and
 * the retry policy between attempts.
 *
 * Ownership and re-entrancy: the consumer's callback may call model_cancel on its own request
 * at any event. Events are delivered through model_emit, which counts the nesting (in_cb); a
 * cancel inside a callback only marks the request, and the code that delivered the event frees
 * it once the callback has returned. The terminal event is always the last thing the request
 * does before it is freed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/http.h"
#include "io/log.h"
#include "model_int.h"
#include "protocol/xmalloc.h"

#define MODEL_BACKOFF_BASE_MS 200
#define MODEL_BACKOFF_MAX_MS  60000

struct model_req {
	struct ev_loop *loop;
	struct http *h;
	struct model_provider *prov;
	char *url;
	char **headers;
	char *body;
	size_t body_len;
	model_cb cb;
	void *arg;
	struct http_req *xfer; /* the attempt in flight, or NULL */
	ev_timer backoff;      /* the wait before the next attempt */
	int req_retries;       /* request-class retries used */
	int stream_retries;    /* stream-class retries used */
	struct model_dec dec;
	int have_dec;
	long status;
	struct buf errbody; /* a non-2xx body: its first MODEL_MAX_ERR_BODY bytes */
	int in_cb;
	int cancelled;
	int heard; /* this attempt's headers were read */
};

static void model_backoff_cb(struct ev_loop *, ev_timer *, int);
static int model_attempt(struct model_req *r, char **cause);

/* An error kind's name, for logs and tests. */
const char *
model_err_name(enum model_err kind)
{
	static const char *const names[] = {
		[MODEL_ERR_CONNECT] = "connect",
		[MODEL_ERR_HTTP] = "http",
		[MODEL_ERR_UNAUTHORIZED] = "unauthorized",
		[MODEL_ERR_BAD_REQUEST] = "bad_request",
		[MODEL_ERR_RATE_LIMIT] = "rate_limit",
		[MODEL_ERR_SERVER] = "server",
		[MODEL_ERR_CONTEXT_WINDOW] = "context_window",
		[MODEL_ERR_QUOTA] = "quota",
		[MODEL_ERR_USAGE_NOT_INCLUDED] = "usage_not_included",
		[MODEL_ERR_FAILED] = "failed",
		[MODEL_ERR_STREAM] = "stream",
		[MODEL_ERR_IDLE_TIMEOUT] = "idle_timeout",
		[MODEL_ERR_INTERNAL] = "internal",
	};

	return (size_t)kind < nitems(names) && names[kind] != NULL ? names[kind] : "unknown";
}

/* {"<name>": {"httpStatusCode": status or null}}, a CodexErrorInfo object form. */
static json_t *
model_info_status(const char *name, long status)
{
	return json_pack("{s:{s:o}}", name, "httpStatusCode",
		status > 0 ? json_integer(status) : json_null());
}

/* The CodexErrorInfo wire value of an error. */
json_t *
model_error_info(const struct model_error *e)
{
	switch (e->kind) {
	case MODEL_ERR_CONNECT:
	case MODEL_ERR_HTTP:
	case MODEL_ERR_UNAUTHORIZED:
		return model_info_status("httpConnectionFailed", e->http_status);
	case MODEL_ERR_BAD_REQUEST:
		return json_string("badRequest");
	case MODEL_ERR_RATE_LIMIT:
		return e->http_status > 0
			? model_info_status("responseTooManyFailedAttempts", e->http_status)
			: json_string("rateLimitExceeded");
	case MODEL_ERR_SERVER:
		return e->http_status == 500
			? json_string("internalServerError")
			: model_info_status("responseTooManyFailedAttempts", e->http_status);
	case MODEL_ERR_CONTEXT_WINDOW:
		return json_string("contextWindowExceeded");
	case MODEL_ERR_QUOTA:
	case MODEL_ERR_USAGE_NOT_INCLUDED:
		return json_string("usageLimitExceeded");
	case MODEL_ERR_STREAM:
	case MODEL_ERR_IDLE_TIMEOUT:
		return model_info_status("responseStreamDisconnected", 0);
	case MODEL_ERR_FAILED:
	case MODEL_ERR_INTERNAL:
		break;
	}
	return json_string("other");
}

/* Free a request; the transfer and the timer must already be stopped. */
static void
model_free(struct model_req *r)
{
	ev_timer_stop(r->loop, &r->backoff);
	if (r->xfer != NULL)
		http_cancel(r->xfer);
	if (r->have_dec)
		model_decode_clear(&r->dec);
	config_provider_free(r->prov);
	model_request_headers_free(r->headers);
	free(r->url);
	free(r->body);
	buf_free(&r->errbody);
	free(r);
}

/* Deliver an event; returns nonzero when the consumer cancelled the request meanwhile. */
static int
model_emit(void *arg, const struct model_event *ev)
{
	struct model_req *r = arg;

	if (r->cancelled)
		return 1;
	r->in_cb++;
	r->cb(r->arg, ev);
	r->in_cb--;
	return r->cancelled;
}

/* The terminal failure; frees the request. */
static void
model_fail(struct model_req *r, const struct model_error *e)
{
	struct model_event ev = {.kind = MODEL_EV_FAILED, .error = e};

	model_emit(r, &ev);
	model_free(r);
}

/* The delay before retry number n (1-based): exponential with jitter, or the server's hint. */
static long
model_backoff_ms(int n, long hint_ms)
{
	double jitter = 0.9 + (double)arc4random_uniform(2001) / 10000.0;
	double ms;

	if (hint_ms >= 0)
		return hint_ms < MODEL_BACKOFF_MAX_MS ? hint_ms : MODEL_BACKOFF_MAX_MS;
	ms = MODEL_BACKOFF_BASE_MS * (double)(1L << (n - 1 < 16 ? n - 1 : 16)) * jitter;
	return ms < MODEL_BACKOFF_MAX_MS ? (long)ms : MODEL_BACKOFF_MAX_MS;
}

/*
 * A failed attempt: retry when its class has retries left (announcing it first), else end
 * with the error. stream = 1 for the stream class, 0 for the request class.
 */
static void
model_retry_or_fail(struct model_req *r, const struct model_error *e, int stream, int retryable)
{
	int *used = stream ? &r->stream_retries : &r->req_retries;
	int max = stream ? r->prov->stream_max_retries : r->prov->request_max_retries;
	struct model_event ev = {.kind = MODEL_EV_RETRY, .error = e};

	if (!retryable || *used >= max) {
		model_fail(r, e);
		return;
	}
	(*used)++;
	ev.attempt = *used;
	ev.max_attempts = max;
	ev.delay_ms = model_backoff_ms(*used, e->retry_after_ms);
	log_info("model: %s (%s); retry %d/%d in %ld ms", e->message, model_err_name(e->kind),
		*used, max, ev.delay_ms);
	if (model_emit(r, &ev) != 0) {
		model_free(r);
		return;
	}
	ev_timer_set(&r->backoff, ev.delay_ms / 1000.0, 0.);
	ev_timer_start(r->loop, &r->backoff);
}

/* The wait is over: start the next attempt. */
static void
model_backoff_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct model_req *r = container_of(w, struct model_req, backoff);
	struct model_error e = {.kind = MODEL_ERR_INTERNAL, .retry_after_ms = -1};
	char *cause = NULL;

	if (model_attempt(r, &cause) != 0) {
		e.message = cause;
		model_fail(r, &e);
		free(cause);
	}
}

/* The message of an unexpected status, as upstream words it. */
static char *
model_status_message(struct model_req *r, long status, const char *url)
{
	if (status == 500)
		return xstrdup("We\xe2\x80\x99re currently experiencing high demand, which may "
			       "cause temporary errors.");
	return xasprintf("unexpected status %ld %s: %.*s, url: %s", status, http_reason(status),
		(int)r->errbody.len, buf_str(&r->errbody), url);
}

/* An error status: which error, retried or not. */
static void
model_status_failed(struct model_req *r, const struct http_result *res)
{
	struct model_error e = {.http_status = res->status, .retry_after_ms = res->retry_after_ms};
	json_t *body =
		r->errbody.len > 0 ? json_loadb(r->errbody.ptr, r->errbody.len, 0, NULL) : NULL;
	const char *code =
		json_string_value(json_object_get(json_object_get(body, "error"), "code"));
	const char *emsg =
		json_string_value(json_object_get(json_object_get(body, "error"), "message"));
	char *msg;
	int retryable = 0;

	if (code == NULL)
		code = json_string_value(json_object_get(json_object_get(body, "error"), "type"));
	if (res->status == 401 || res->status == 403)
		e.kind = MODEL_ERR_UNAUTHORIZED;
	else if (res->status == 400)
		e.kind = MODEL_ERR_BAD_REQUEST;
	else if (res->status == 429) {
		e.kind = MODEL_ERR_RATE_LIMIT;
		retryable = 1;
		if (code != NULL && strcmp(code, "insufficient_quota") == 0) {
			e.kind = MODEL_ERR_QUOTA;
			retryable = 0;
		} else if (code != NULL && strcmp(code, "usage_not_included") == 0) {
			e.kind = MODEL_ERR_USAGE_NOT_INCLUDED;
			retryable = 0;
		} else if (e.retry_after_ms < 0)
			e.retry_after_ms = model_decode_retry_hint(emsg);
	} else if (res->status >= 500) {
		e.kind = MODEL_ERR_SERVER;
		retryable = 1;
	} else
		e.kind = MODEL_ERR_HTTP;
	e.code = code;
	msg = model_status_message(r, res->status, res->url);
	if (e.kind == MODEL_ERR_RATE_LIMIT && r->req_retries >= r->prov->request_max_retries &&
		r->prov->request_max_retries > 0) {
		free(msg);
		msg = xstrdup("exceeded retry limit, last status: 429 Too Many Requests");
	}
	e.message = msg;
	model_retry_or_fail(r, &e, 0, retryable);
	free(msg);
	json_decref(body);
}

/* The request never got an HTTP answer: retry, or fail as a connect error. */
static void
model_connect_failed(struct model_req *r, const struct http_result *res)
{
	struct model_error e = {.retry_after_ms = -1, .kind = MODEL_ERR_CONNECT};
	char *msg = xasprintf("error sending request for url (%s): %s", res->url, res->error);

	e.message = msg;
	model_retry_or_fail(r, &e, 0, 1);
	free(msg);
}

/* http done: the attempt ended; decide what it means. */
static void
model_xfer_done(void *arg, const struct http_result *res)
{
	struct model_req *r = arg;
	struct model_error e = {.retry_after_ms = -1};
	struct model_event ev = {0};
	int verdict;

	r->xfer = NULL;
	if (res->connect_failed) {
		model_connect_failed(r, res);
		return;
	}
	if (res->status != 0 && (res->status < 200 || res->status > 299)) {
		model_status_failed(r, res);
		return;
	}
	if (res->idle_timeout && !r->dec.failed) {
		e.kind = MODEL_ERR_IDLE_TIMEOUT;
		e.message = "stream disconnected before completion: idle timeout waiting for SSE";
		model_retry_or_fail(r, &e, 1, 1);
		return;
	}
	if (res->curl_code != 0 && res->status == 0) {
		model_connect_failed(r, res);
		return;
	}
	if (res->curl_code == 0 && model_decode_finish(&r->dec) != 0) {
		model_free(r); /* cancelled while the last items were delivered */
		return;
	}
	verdict = model_decode_outcome(&r->dec, &e);
	e.http_status = 0;
	if (verdict == 0 && res->curl_code != 0) {
		/* response.completed arrived but the body did not end cleanly. */
		e.kind = MODEL_ERR_STREAM;
		e.message = "stream disconnected before completion: the response body was cut";
		verdict = 1;
	}
	if (verdict != 0) {
		model_retry_or_fail(r, &e, 1, verdict == 1);
		return;
	}
	ev.kind = MODEL_EV_COMPLETED;
	ev.resp_id = r->dec.resp_id;
	ev.usage = &r->dec.usage;
	model_emit(r, &ev);
	model_free(r);
}

/* http_req_headers: keep an x-* header, its name lowercase. */
static void
model_header_cb(void *arg, const char *name, const char *value)
{
	char low[128];
	size_t i;

	for (i = 0; name[i] != '\0' && i < sizeof low - 1; i++)
		low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
	low[i] = '\0';
	json_object_set_new(arg, low, json_string(value));
}

/*
 * A successful response's first bytes: its rate-limit headers, reported before any event of
 * the body (upstream reads them when the stream opens); nonzero stops.
 */
static int
model_headers(struct model_req *r)
{
	struct model_event ev = {.kind = MODEL_EV_RATE_LIMITS};
	json_t *h = json_object();
	int stop;

	r->heard = 1;
	if (http_req_headers(r->xfer, "x-", model_header_cb, h) != 0) {
		json_decref(h);
		return 0;
	}
	ev.item = model_rate_limits_headers(h);
	json_decref(h);
	stop = model_emit(r, &ev);
	json_decref(ev.item);
	return stop;
}

/* http data: body bytes of the attempt. */
static int
model_xfer_data(void *arg, long status, const char *buf, size_t len)
{
	struct model_req *r = arg;
	size_t room;
	int stop;

	if (r->cancelled)
		return 1;
	r->status = status;
	if (status < 200 || status > 299) {
		/* Keep what fits for the message; the rest of the body is dropped. */
		room = r->errbody.max - r->errbody.len;
		buf_add(&r->errbody, buf, len < room ? len : room);
		return 0;
	}
	r->in_cb++; /* a cancel from an event callback is finished here, not deeper */
	stop = r->heard ? 0 : model_headers(r);
	if (!stop && !r->cancelled)
		stop = model_decode_feed(&r->dec, buf, len);
	r->in_cb--;
	if (r->cancelled) {
		http_cancel(r->xfer);
		r->xfer = NULL;
		model_free(r);
		return 1;
	}
	return stop;
}

/* Start one attempt: a fresh decoder and transfer. */
static int
model_attempt(struct model_req *r, char **cause)
{
	static const struct http_cbs cbs = {model_xfer_data, model_xfer_done};
	struct http_req_opts o = {
		.method = "POST",
		.url = r->url,
		.headers = (const char *const *)r->headers,
		.body = r->body,
		.body_len = r->body_len,
		.connect_timeout_ms = r->prov->connect_timeout_ms,
		.idle_timeout_ms = r->prov->stream_idle_timeout_ms,
	};

	if (r->have_dec)
		model_decode_clear(&r->dec);
	model_decode_init(&r->dec, r->prov->wire, model_emit, r);
	r->have_dec = 1;
	buf_free(&r->errbody);
	r->status = 0;
	r->heard = 0;
	r->xfer = http_start(r->h, &o, &cbs, r, cause);
	return r->xfer != NULL ? 0 : -1;
}

/* The body text being dumped, and whether its ceiling refused a piece. */
struct model_body_sink {
	struct buf text; /* at most MODEL_MAX_BODY */
	int toobig;
};

/* json_dump_callback's sink: the body text, refused past MODEL_MAX_BODY. */
static int
model_body_cb(const char *p, size_t n, void *arg)
{
	struct model_body_sink *k = arg;

	if (buf_add(&k->text, p, n) == 0)
		return 0;
	k->toobig = 1;
	return -1;
}

/* The body as compact JSON text into r->body; -1 with *cause. */
static int
model_body_text(struct model_req *r, const json_t *body, char **cause)
{
	struct model_body_sink k = {.toobig = 0};

	buf_init(&k.text, MODEL_MAX_BODY);
	if (json_dump_callback(body, model_body_cb, &k, JSON_COMPACT) != 0) {
		buf_free(&k.text);
		*cause = k.toobig ? xasprintf("request larger than %d bytes", MODEL_MAX_BODY)
				  : xstrdup("cannot encode the request body");
		return -1;
	}
	r->body = buf_steal(&k.text, &r->body_len);
	return 0;
}

/* input with the marker replaced by the items of input_text (new reference); NULL, *cause. */
static json_t *
model_input_expand(const struct model_prompt *pr, char **cause)
{
	json_t *out = json_array(), *items, *it;
	struct buf text;
	size_t i;

	buf_init(&text, MODEL_MAX_BODY);
	if (buf_addc(&text, '[') != 0 || buf_add(&text, pr->input_text, pr->input_text_len) != 0 ||
		buf_addc(&text, ']') != 0 ||
		(items = json_loadb(text.ptr, text.len, 0, NULL)) == NULL) {
		buf_free(&text);
		json_decref(out);
		*cause = xstrdup("the input items do not parse");
		return NULL;
	}
	buf_free(&text);
	json_array_foreach(pr->input, i, it)
	{
		if (it == model_input_marker())
			json_array_extend(out, items);
		else
			json_array_append(out, it);
	}
	json_decref(items);
	return out;
}

/* The body's text with input_text in place of the marker; -1 with *cause. */
static int
model_body_splice(struct model_req *r, const struct model_prompt *pr, char **cause)
{
	size_t len;
	char *text = model_request_splice(
		r->body, r->body_len, pr->input_text, pr->input_text_len, &len);

	if (text == NULL) {
		*cause = xasprintf("cannot place the input items (no marker in the input, or the "
				   "request passes %d bytes)",
			MODEL_MAX_BODY);
		return -1;
	}
	free(r->body);
	r->body = text;
	r->body_len = len;
	return 0;
}

/* Build the request once (URL, headers, body) and start the first attempt. */
struct model_req *
model_stream(struct ev_loop *loop, struct http *h, const struct model_provider *p,
	const struct model_prompt *pr, model_cb cb, void *arg, char **cause)
{
	struct model_req *r = xcalloc(1, sizeof *r);
	struct model_prompt chat;
	json_t *body, *expanded = NULL;
	int rc;

	r->loop = loop;
	r->h = h;
	r->cb = cb;
	r->arg = arg;
	r->prov = config_provider_dup(p);
	buf_init(&r->errbody, MODEL_MAX_ERR_BODY);
	ev_init(&r->backoff, model_backoff_cb);
	if (pr->model == NULL || *pr->model == '\0') {
		*cause = xstrdup("no model given");
		goto fail;
	}
	if ((r->headers = model_request_headers(p, pr, cause)) == NULL)
		goto fail;
	if (pr->input_text != NULL && p->wire == MODEL_WIRE_CHAT) {
		/* Chat rebuilds every item as a message: the text is parsed back into items. */
		if ((expanded = model_input_expand(pr, cause)) == NULL)
			goto fail;
		chat = *pr;
		chat.input = expanded;
		chat.input_text = NULL;
		pr = &chat;
	}
	if ((r->url = model_request_url(p, cause)) == NULL ||
		(body = model_request_body(p, pr, cause)) == NULL)
		goto fail;
	rc = model_body_text(r, body, cause);
	json_decref(body);
	if (rc == 0 && pr->input_text != NULL)
		rc = model_body_splice(r, pr, cause);
	if (rc != 0 || model_attempt(r, cause) != 0)
		goto fail;
	json_decref(expanded);
	return r;
fail:
	json_decref(expanded);
	model_free(r);
	return NULL;
}

/* Stop a request: no more events; freed now, or after the callback returns. */
void
model_cancel(struct model_req *r)
{
	if (r == NULL || r->cancelled)
		return;
	r->cancelled = 1;
	if (r->xfer != NULL) {
		http_cancel(r->xfer);
		r->xfer = NULL;
	}
	ev_timer_stop(r->loop, &r->backoff);
	if (r->in_cb == 0)
		model_free(r);
}
