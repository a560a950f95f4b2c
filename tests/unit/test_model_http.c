/*
 * The model client over real HTTP: server/http.c + server/model.c on a libev loop against the
 * mock model server (server/mockmodel.c, run in a forked child on an ephemeral loopback port).
 * Covered: a streamed response, retries (500 then 200, connect refused, 429 with Retry-After,
 * a cut stream), errors that must not be retried (401, context_length_exceeded), the idle
 * timeout, cancellation mid-stream and during a backoff, 20 concurrent streams, backpressure
 * (pause while congested, resume after), and the Chat Completions wire. Every request the
 * client sent is read back from the mock's record file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "http.h"
#include "mockmodel.h"
#include "model.h"
#include "xmalloc.h"

#define DEADLINE 20.0 /* seconds any one test may run its loop */

/* The mock server, in a child process. */
struct mock {
	pid_t pid;
	char dir[64];
	char *record;
	int port;
};

/* Start the mock with a script (JSON text). */
static void
mock_start(struct mock *m, const char *script)
{
	char *spath, *ppath;
	FILE *f;
	int fd;

	memset(m, 0, sizeof *m);
	snprintf(m->dir, sizeof m->dir, "/tmp/test_model_http.XXXXXX");
	assert_non_null(mkdtemp(m->dir));
	spath = xasprintf("%s/script.json", m->dir);
	ppath = xasprintf("%s/port", m->dir);
	m->record = xasprintf("%s/record.jsonl", m->dir);
	f = fopen(spath, "w");
	assert_non_null(f);
	fputs(script, f);
	fclose(f);
	m->pid = fork();
	assert_true(m->pid >= 0);
	if (m->pid == 0) {
		char *argv[] = {"mock-model", "--script", spath, "--record", m->record,
			"--port-file", ppath, NULL};

		fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		_exit(mockmodel_main(7, argv));
	}
	for (int i = 0; i < 2000 && m->port == 0; i++) {
		if ((f = fopen(ppath, "r")) != NULL) {
			if (fscanf(f, "%d", &m->port) != 1)
				m->port = 0;
			fclose(f);
		}
		if (m->port == 0)
			usleep(5000);
	}
	assert_true(m->port > 0);
	free(spath);
	free(ppath);
}

/* Stop the mock (it must exit 0 on SIGTERM) and remove its files. */
static void
mock_stop(struct mock *m)
{
	int status;
	char *cmd;

	kill(m->pid, SIGTERM);
	assert_int_equal(waitpid(m->pid, &status, 0), m->pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	cmd = xasprintf("%s/script.json", m->dir);
	unlink(cmd);
	free(cmd);
	cmd = xasprintf("%s/port", m->dir);
	unlink(cmd);
	free(cmd);
	unlink(m->record);
	rmdir(m->dir);
	free(m->record);
}

/* The requests the mock recorded. */
static json_t *
mock_records(struct mock *m)
{
	json_t *all = json_array(), *v;
	char line[1 << 16];
	FILE *f = fopen(m->record, "r");

	while (f != NULL && fgets(line, sizeof line, f) != NULL) {
		v = json_loads(line, 0, NULL);
		assert_non_null(v);
		json_array_append_new(all, v);
	}
	if (f != NULL)
		fclose(f);
	return all;
}

/* A provider pointing at the mock. */
static struct model_provider *
mock_provider(const struct mock *m, enum model_wire wire, int req_retries, int stream_retries)
{
	struct model_provider *p = xcalloc(1, sizeof *p);

	p->id = xstrdup("mock_provider");
	p->name = xstrdup("Mock provider for test");
	p->base_url = xasprintf("http://127.0.0.1:%d/v1", m->port);
	p->wire = wire;
	p->env_key = xstrdup("MOCK_KEY");
	p->http_headers = json_pack("{s:s}", "X-Extra", "1");
	p->env_http_headers = json_object();
	p->query_params = json_object();
	p->request_max_retries = req_retries;
	p->stream_max_retries = stream_retries;
	p->stream_idle_timeout_ms = 5000;
	p->connect_timeout_ms = 5000;
	return p;
}

/* One request's observer. */
struct client {
	struct run *run;
	struct model_req *req;
	json_t *events; /* compact descriptions */
	int terminal;
	size_t cancel_after; /* cancel from the callback after this many events; 0 = never */
	int cancel_on_retry;
	char text[256]; /* text deltas joined */
};

struct run {
	struct ev_loop *loop;
	struct http *h;
	ev_timer deadline;
	int outstanding;
	int congested;
	double t0;
};

static const char *const kind_names[] = {"created", "item_added", "item_done", "text_delta",
	"summary_delta", "summary_part", "reasoning_delta", "retry", "completed", "failed"};

static void
client_cb(void *arg, const struct model_event *ev)
{
	struct client *c = arg;
	json_t *e = json_pack(
		"{s:s, s:f}", "kind", kind_names[ev->kind], "t", ev_now(c->run->loop) - c->run->t0);

	assert_false(c->terminal);
	if (ev->item != NULL)
		json_object_set(e, "item", ev->item);
	if (ev->kind == MODEL_EV_TEXT_DELTA) {
		strncat(c->text, ev->delta, sizeof c->text - strlen(c->text) - 1);
		json_object_set_new(e, "delta", json_string(ev->delta));
	}
	if (ev->error != NULL)
		json_object_set_new(e, "error",
			json_pack("{s:s, s:s, s:o, s:i}", "kind", model_err_name(ev->error->kind),
				"message", ev->error->message, "info", model_error_info(ev->error),
				"status", (int)ev->error->http_status));
	if (ev->kind == MODEL_EV_RETRY)
		json_object_set_new(e, "retry",
			json_pack("{s:i, s:i, s:I}", "attempt", ev->attempt, "max",
				ev->max_attempts, "delay", (json_int_t)ev->delay_ms));
	if (ev->usage != NULL && ev->usage->present)
		json_object_set_new(e, "usage",
			json_pack("{s:I, s:I, s:I, s:I, s:I}", "input", ev->usage->input_tokens,
				"cached", ev->usage->cached_input_tokens, "output",
				ev->usage->output_tokens, "reasoning",
				ev->usage->reasoning_output_tokens, "total",
				ev->usage->total_tokens));
	json_array_append_new(c->events, e);
	if (ev->kind == MODEL_EV_COMPLETED || ev->kind == MODEL_EV_FAILED) {
		c->terminal = 1;
		c->req = NULL;
		if (--c->run->outstanding == 0)
			ev_break(c->run->loop, EVBREAK_ALL);
		return;
	}
	if ((c->cancel_after != 0 && json_array_size(c->events) >= c->cancel_after) ||
		(c->cancel_on_retry && ev->kind == MODEL_EV_RETRY)) {
		model_cancel(c->req);
		c->req = NULL;
		c->terminal = 1;
		if (--c->run->outstanding == 0)
			ev_break(c->run->loop, EVBREAK_ALL);
	}
}

static void
deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	ev_break(loop, EVBREAK_ALL);
}

static int
run_congested(void *arg)
{
	return ((struct run *)arg)->congested;
}

static void
run_init(struct run *r)
{
	memset(r, 0, sizeof *r);
	r->loop = ev_loop_new(EVFLAG_AUTO);
	r->h = http_new(r->loop);
	http_set_congested(r->h, run_congested, r);
	ev_timer_init(&r->deadline, deadline_cb, DEADLINE, 0.);
	ev_timer_start(r->loop, &r->deadline);
	ev_now_update(r->loop);
	r->t0 = ev_now(r->loop);
}

static void
run_free(struct run *r)
{
	ev_timer_stop(r->loop, &r->deadline);
	http_free(r->h);
	ev_loop_destroy(r->loop);
}

/* Start one request for client c with a one-message prompt. */
static void
client_start(struct client *c, struct run *r, const struct model_provider *p, const char *text)
{
	json_t *input = json_pack("[{s:s, s:s, s:[{s:s, s:s}]}]", "type", "message", "role", "user",
		"content", "type", "input_text", "text", text);
	struct model_prompt pr = {.model = "mock-model", .input = input, .parallel_tool_calls = 1};
	char *cause = NULL;

	memset(c, 0, sizeof *c);
	c->run = r;
	c->events = json_array();
	c->req = model_stream(r->loop, r->h, p, &pr, client_cb, c, &cause);
	if (c->req == NULL)
		fail_msg("model_stream: %s", cause);
	r->outstanding++;
	json_decref(input);
}

/* Run the loop until every client ended (fails on the deadline). */
static void
run_until_done(struct run *r)
{
	ev_run(r->loop, 0);
	if (r->outstanding != 0)
		fail_msg("%d requests still running at the deadline", r->outstanding);
}

/* The kinds of a client's events, space-separated. */
static char *
client_kinds(const struct client *c)
{
	char *s = xstrdup(""), *old;
	json_t *e;
	size_t i;

	json_array_foreach(c->events, i, e)
	{
		old = s;
		s = xasprintf("%s%s%s", old, i > 0 ? " " : "",
			json_string_value(json_object_get(e, "kind")));
		free(old);
	}
	return s;
}

/* Assert the kinds of a client's events. */
static void
assert_kinds(const struct client *c, const char *want)
{
	char *got = client_kinds(c), *dump;

	if (strcmp(got, want) != 0) {
		dump = json_dumps(c->events, JSON_COMPACT);
		fail_msg("events: %s\nwant:   %s\n%s", got, want, dump);
	}
	free(got);
}

/* Assert v equals want (stolen). */
static void
assert_jeq(const json_t *v, json_t *want)
{
	char *a, *b;

	if (!json_equal((json_t *)v, want)) {
		a = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		b = json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY);
		fail_msg("got %s, want %s", a != NULL ? a : "(null)", b);
	}
	json_decref(want);
}

/* The last event of a client. */
static json_t *
last_event(const struct client *c)
{
	return json_array_get(c->events, json_array_size(c->events) - 1);
}

#define OK_RESPONSE                                                                                \
	"{\"events\":[{\"ev\":\"created\",\"id\":\"resp-ok\"},{\"ev\":\"message_added\"},"         \
	"{\"ev\":\"text_delta\",\"delta\":\"Hel\"},{\"ev\":\"text_delta\",\"delta\":\"lo\"},"      \
	"{\"ev\":\"message\",\"text\":\"Hello\"},{\"ev\":\"completed\",\"id\":\"resp-ok\","        \
	"\"input_tokens\":100,\"cached_tokens\":40,\"output_tokens\":20,\"reasoning_tokens\":7}]}"

static void
test_stream(void **state)
{
	struct mock m = {0};
	struct run r;
	struct client c;
	struct model_provider *p;
	json_t *rec, *req, *hdrs, *body;

	setenv("MOCK_KEY", "sk-mock", 1);
	mock_start(&m, "{\"responses\":[" OK_RESPONSE "]}");
	p = mock_provider(&m, MODEL_WIRE_RESPONSES, 0, 0);
	run_init(&r);
	client_start(&c, &r, p, "hi");
	run_until_done(&r);
	assert_kinds(&c, "created item_added text_delta text_delta item_done completed");
	assert_string_equal(c.text, "Hello");
	assert_jeq(json_object_get(last_event(&c), "usage"),
		json_pack("{s:i, s:i, s:i, s:i, s:i}", "input", 100, "cached", 40, "output", 20,
			"reasoning", 7, "total", 120));
	assert_int_equal(http_active(r.h), 0);

	rec = mock_records(&m);
	assert_int_equal(json_array_size(rec), 1);
	req = json_array_get(rec, 0);
	assert_string_equal(json_string_value(json_object_get(req, "path")), "/v1/responses");
	hdrs = json_object_get(req, "headers");
	assert_string_equal(
		json_string_value(json_object_get(hdrs, "authorization")), "Bearer sk-mock");
	assert_string_equal(
		json_string_value(json_object_get(hdrs, "accept")), "text/event-stream");
	assert_string_equal(
		json_string_value(json_object_get(hdrs, "content-type")), "application/json");
	assert_string_equal(json_string_value(json_object_get(hdrs, "x-extra")), "1");
	assert_null(json_object_get(hdrs, "expect"));
	body = json_object_get(req, "body");
	assert_string_equal(json_string_value(json_object_get(body, "model")), "mock-model");
	assert_true(json_is_true(json_object_get(body, "stream")));
	assert_true(json_is_false(json_object_get(body, "store")));
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(
				json_object_get(json_array_get(json_object_get(body, "input"), 0),
					"content"),
				0),
			"text")),
		"hi");
	json_decref(rec);
	json_decref(c.events);
	run_free(&r);
	model_provider_free(p);
	mock_stop(&m);
}

static void
test_retry_500_then_200(void **state)
{
	struct mock m = {0};
	struct run r;
	struct client c;
	struct model_provider *p;
	json_t *rec, *retry;

	mock_start(&m,
		"{\"responses\":[{\"status\":500,\"body\":{\"error\":{\"message\":\"oops\"}}}," OK_RESPONSE
		"]}");
	p = mock_provider(&m, MODEL_WIRE_RESPONSES, 2, 0);
	run_init(&r);
	client_start(&c, &r, p, "hi");
	run_until_done(&r);
	assert_kinds(&c, "retry created item_added text_delta text_delta item_done completed");
	retry = json_array_get(c.events, 0);
	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(retry, "retry"), "attempt")), 1);
	assert_int_equal(
		json_integer_value(json_object_get(json_object_get(retry, "retry"), "max")), 2);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(retry, "error"), "info")),
		"internalServerError");
	/* 200 ms x jitter 0.9-1.1 before the second attempt. */
	assert_true(json_real_value(json_object_get(json_array_get(c.events, 1), "t")) >= 0.17);
	rec = mock_records(&m);
	assert_int_equal(json_array_size(rec), 2);
	json_decref(rec);
	json_decref(c.events);
	run_free(&r);
	model_provider_free(p);
	mock_stop(&m);
}

static void
test_401_not_retried(void **state)
{
	struct mock m = {0};
	struct run r;
	struct client c;
	struct model_provider *p;
	json_t *rec, *err;
	const char *msg;
	char *want;

	mock_start(&m, "{\"responses\":[{\"status\":401,\"body\":\"bad key\"}," OK_RESPONSE "]}");
	p = mock_provider(&m, MODEL_WIRE_RESPONSES, 3, 3);
	run_init(&r);
	client_start(&c, &r, p, "hi");
	run_until_done(&r);
	assert_kinds(&c, "failed");
	err = json_object_get(last_event(&c), "error");
	assert_string_equal(json_string_value(json_object_get(err, "kind")), "unauthorized");
	msg = json_string_value(json_object_get(err, "message"));
	want = xasprintf("unexpected status 401 Unauthorized: bad key, url: "
			 "http://127.0.0.1:%d/v1/responses",
		m.port);
	assert_string_equal(msg, want);
	free(want);
	assert_jeq(json_object_get(err, "info"),
		json_pack("{s:{s:i}}", "httpConnectionFailed", "httpStatusCode", 401));
	rec = mock_records(&m);
	assert_int_equal(json_array_size(rec), 1);
	json_decref(rec);
	json_decref(c.events);
	run_free(&r);
	model_provider_free(p);
	mock_stop(&m);
}

static void
test_idle_timeout(void **state)
{
	struct mock m = {0};
	struct run r;
	struct client c;
	struct model_provider *p;
	json_t *err;
	double t;

	mock_start(&m, "{\"responses\":[{\"events\":[{\"ev\":\"created\"}],\"stall_ms\":-1}]}");
	p = mock_provider(&m, MODEL_WIRE_RESPONSES, 0, 0);
	p->stream_idle_timeout_ms = 300;
	run_init(&r);
	client_start(&c, &r, p, "hi");
	run_until_done(&r);
	assert_kinds(&c, "created failed");
	err = json_object_get(last_event(&c), "error");
	assert_string_equal(json_string_value(json_object_get(err, "kind")), "idle_timeout");
	assert_non_null(strstr(json_string_value(json_object_get(err, "message")),
		"idle timeout waiting for SSE"));
	t = json_real_value(json_object_get(last_event(&c), "t"));
	assert_true(t >= 0.29 && t < 5.0);
	json_decref(c.events);
	run_free(&r);
	model_provider_free(p);
	mock_stop(&m);
}

static void
test_cut_stream_retried(void **state)
{
	struct mock m = {0};
	struct run r;
	struct client c;
	struct model_provider *p;
	json_t *retry;

	mock_start(&m,
		"{\"responses\":[{\"events\":[{\"ev\":\"created\"},{\"ev\":\"text_delta\","
		"\"delta\":\"par\"}],\"close\":true},"
		"{\"events\":[{\"ev\":\"created\"},{\"ev\":\"message\",\"text\":\"x\"}]}," OK_RESPONSE
		"]}");
	p = mock_provider(&m, MODEL_WIRE_RESPONSES, 0, 2);
	run_init(&r);
	client_start(&c, &r, p, "hi");
	run_until_done(&r);
	/* Cut mid-body, then a body that ends without completed, then a good one. */
	assert_kinds(&c,
		"created text_delta retry created item_done retry created item_added "
		"text_delta text_delta item_done completed");
	retry = json_array_get(c.events, 5);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(retry, "error"), "message")),
		"stream disconnected before completion: stream closed before response.completed");
	assert_jeq(json_object_get(json_object_get(retry, "error"), "info"),
		json_pack("{s:{s:n}}", "responseStreamDisconnected", "httpStatusCode"));
	json_decref(c.events);
	run_free(&r);
	model_provider_free(p);
	mock_stop(&m);
}

static void
test_connect_refused(void **state)
{
	struct mock m = {0};
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sin;
	struct model_provider *p;
	struct client c;
	struct run r;
	json_t *err;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	/* A port nobody listens on: bind one, note it, close it. */
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
	m.port = ntohs(sin.sin_port);
	close(fd);
	p = mock_provider(&m, MODEL_WIRE_RESPONSES, 2, 5);
	run_init(&r);
	client_start(&c, &r, p, "hi");
	run_until_done(&r);
	assert_kinds(&c, "retry retry failed");
	err = json_object_get(last_event(&c), "error");
	assert_string_equal(json_string_value(json_object_get(err, "kind")), "connect");
	assert_non_null(strstr(json_string_value(json_object_get(err, "message")),
		"error sending request for url"));
	assert_jeq(json_object_get(err, "info"),
		json_pack("{s:{s:n}}", "httpConnectionFailed", "httpStatusCode"));
	json_decref(c.events);
	run_free(&r);
	model_provider_free(p);
}

static void
test_429_retry_after(void **state)
{
	struct mock m = {0};
	struct run r;
	struct client c;
	struct model_provider *p;

	mock_start(&m,
		"{\"responses\":[{\"status\":429,\"headers\":{\"retry-after-ms\":\"10\"},"
		"\"body\":{\"error\":{\"message\":\"slow down\"}}},"
		"{\"status\":429,\"body\":{\"error\":{\"message\":\"Please try again in 20ms\"}}},"
		"{\"status\":429,\"body\":{\"error\":{\"message\":\"again\"}}}]}");
	p = mock_provider(&m, MODEL_WIRE_RESPONSES, 2, 0);
	run_init(&r);
	client_start(&c, &r, p, "hi");
	run_until_done(&r);
	assert_kinds(&c, "retry retry failed");
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(json_array_get(c.events, 0), "retry"), "delay")),
		10);
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(json_array_get(c.events, 1), "retry"), "delay")),
		20);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(last_event(&c), "error"), "message")),
		"exceeded retry limit, last status: 429 Too Many Requests");
	json_decref(c.events);
	run_free(&r);
	model_provider_free(p);
	mock_stop(&m);
}

static void
test_failed_not_retried(void **state)
{
	struct mock m = {0};
	struct run r;
	struct client c;
	struct model_provider *p;
	json_t *rec;

	mock_start(&m,
		"{\"responses\":[{\"events\":[{\"ev\":\"created\"},{\"ev\":\"failed\","
		"\"code\":\"context_length_exceeded\",\"message\":\"too long\"}]}," OK_RESPONSE
		"]}");
	p = mock_provider(&m, MODEL_WIRE_RESPONSES, 3, 3);
	run_init(&r);
	client_start(&c, &r, p, "hi");
	run_until_done(&r);
	assert_kinds(&c, "created failed");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(last_event(&c), "error"), "kind")),
		"context_window");
	rec = mock_records(&m);
	assert_int_equal(json_array_size(rec), 1);
	json_decref(rec);
	json_decref(c.events);
	run_free(&r);
	model_provider_free(p);
	mock_stop(&m);
}

static void
stop_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	ev_break(loop, EVBREAK_ALL);
}

/* Run the loop for `s` seconds. */
static void
run_for(struct run *r, double s)
{
	ev_timer t;

	ev_timer_init(&t, stop_cb, s, 0.);
	ev_timer_start(r->loop, &t);
	ev_run(r->loop, 0);
	ev_timer_stop(r->loop, &t);
}

static void
cancel_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct client *c = w->data;

	model_cancel(c->req);
	c->req = NULL;
	c->terminal = 1;
	if (--c->run->outstanding == 0)
		ev_break(loop, EVBREAK_ALL);
}

static void
test_cancel(void **state)
{
	struct mock m = {0};
	struct run r;
	struct client a, b, d;
	struct model_provider *p;
	ev_timer t;
	char *script, *events = xstrdup(""), *old;

	for (int i = 0; i < 20; i++) {
		old = events;
		events = xasprintf(
			"%s,{\"ev\":\"text_delta\",\"delta\":\"%d \",\"delay_ms\":40}", old, i);
		free(old);
	}
	script = xasprintf("{\"repeat\":true,\"responses\":[{\"events\":[{\"ev\":\"created\"}%s,"
			   "{\"ev\":\"completed\"}]}]}",
		events);
	mock_start(&m, script);
	p = mock_provider(&m, MODEL_WIRE_RESPONSES, 0, 0);
	run_init(&r);
	/* a: cancelled from its own callback after three events. */
	client_start(&a, &r, p, "a");
	a.cancel_after = 3;
	/* b: cancelled from outside (a timer) mid-stream. */
	client_start(&b, &r, p, "b");
	ev_timer_init(&t, cancel_timer_cb, 0.15, 0.);
	t.data = &b;
	ev_timer_start(r.loop, &t);
	run_until_done(&r);
	assert_int_equal(json_array_size(a.events), 3);
	assert_true(json_array_size(b.events) >= 1 && json_array_size(b.events) < 20);
	run_for(&r, 0.3); /* nothing more may arrive */
	assert_int_equal(json_array_size(a.events), 3);
	assert_int_equal(http_active(r.h), 0);
	assert_int_equal(http_paused(r.h), 0);

	json_decref(a.events);
	json_decref(b.events);
	ev_timer_stop(r.loop, &t);
	run_free(&r);
	model_provider_free(p);
	mock_stop(&m);

	/* d: cancelled when its retry is announced, during the backoff. */
	mock_start(&m, "{\"responses\":[{\"status\":503,\"body\":\"busy\"}," OK_RESPONSE "]}");
	p = mock_provider(&m, MODEL_WIRE_RESPONSES, 5, 0);
	run_init(&r);
	client_start(&d, &r, p, "d");
	d.cancel_on_retry = 1;
	run_until_done(&r);
	run_for(&r, 0.5); /* the backoff (~200 ms) passes: no second request */
	assert_int_equal(json_array_size(d.events), 1);
	{
		json_t *rec = mock_records(&m);

		assert_int_equal(json_array_size(rec), 1);
		json_decref(rec);
	}
	json_decref(d.events);
	run_free(&r);
	model_provider_free(p);
	mock_stop(&m);
	free(script);
	free(events);
}

static void
test_concurrent(void **state)
{
	enum { N = 20 };
	struct mock m = {0};
	struct run r;
	struct client c[N];
	struct model_provider *p;
	char *script, *events = xstrdup(""), *old, want[128] = "";
	json_t *rec;

	for (int i = 0; i < 10; i++) {
		old = events;
		events = xasprintf(
			"%s,{\"ev\":\"text_delta\",\"delta\":\"%d\",\"delay_ms\":10}", old, i);
		free(old);
		snprintf(want + strlen(want), sizeof want - strlen(want), "%d", i);
	}
	script = xasprintf("{\"repeat\":true,\"responses\":[{\"events\":[{\"ev\":\"created\"}%s,"
			   "{\"ev\":\"completed\"}]}]}",
		events);
	mock_start(&m, script);
	p = mock_provider(&m, MODEL_WIRE_RESPONSES, 0, 0);
	run_init(&r);
	for (int i = 0; i < N; i++)
		client_start(&c[i], &r, p, "x");
	assert_int_equal(http_active(r.h), N);
	run_until_done(&r);
	for (int i = 0; i < N; i++) {
		assert_string_equal(
			json_string_value(json_object_get(last_event(&c[i]), "kind")), "completed");
		assert_string_equal(c[i].text, want);
		json_decref(c[i].events);
	}
	/* All ran at once: far less than N x 100 ms. */
	assert_true(ev_now(r.loop) - r.t0 < 1.5);
	rec = mock_records(&m);
	assert_int_equal(json_array_size(rec), N);
	json_decref(rec);
	run_free(&r);
	model_provider_free(p);
	mock_stop(&m);
	free(script);
	free(events);
}

/* Backpressure: congestion set after the first delta. */
static struct client *bp_client;
static size_t bp_seen_at_pause;

static void
bp_check_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct run *r = w->data;

	/* 300 ms congested: paused, and nothing delivered since the pause took hold. */
	assert_int_equal(http_paused(r->h), 1);
	assert_int_equal(json_array_size(bp_client->events), bp_seen_at_pause);
	r->congested = 0;
	http_resume(r->h);
}

static void
bp_cb(void *arg, const struct model_event *ev)
{
	struct client *c = arg;

	client_cb(arg, ev);
	if (ev->kind == MODEL_EV_TEXT_DELTA && !c->run->congested && bp_seen_at_pause == 0) {
		c->run->congested = 1;
		bp_seen_at_pause = json_array_size(c->events);
	}
}

static void
test_backpressure(void **state)
{
	struct mock m = {0};
	struct run r;
	struct client c;
	struct model_provider *p;
	char *script, *events = xstrdup(""), *old;
	json_t *input = json_pack("[]");
	struct model_prompt pr = {.model = "mock-model", .input = input};
	ev_timer t;
	char *cause = NULL;

	for (int i = 0; i < 8; i++) {
		old = events;
		events = xasprintf(
			"%s,{\"ev\":\"text_delta\",\"delta\":\"%d\",\"delay_ms\":20}", old, i);
		free(old);
	}
	script = xasprintf("{\"responses\":[{\"events\":[{\"ev\":\"created\"}%s,"
			   "{\"ev\":\"completed\",\"delay_ms\":20}]}]}",
		events);
	mock_start(&m, script);
	p = mock_provider(&m, MODEL_WIRE_RESPONSES, 0, 0);
	p->stream_idle_timeout_ms = 200; /* shorter than the pause: paused time is not idle */
	run_init(&r);
	memset(&c, 0, sizeof c);
	c.run = &r;
	c.events = json_array();
	bp_client = &c;
	bp_seen_at_pause = 0;
	c.req = model_stream(r.loop, r.h, p, &pr, bp_cb, &c, &cause);
	assert_non_null(c.req);
	r.outstanding = 1;
	ev_timer_init(&t, bp_check_cb, 0.4, 0.);
	t.data = &r;
	ev_timer_start(r.loop, &t);
	run_until_done(&r);
	assert_int_equal(bp_seen_at_pause, 2);
	assert_string_equal(c.text, "01234567");
	assert_string_equal(
		json_string_value(json_object_get(last_event(&c), "kind")), "completed");
	assert_int_equal(http_paused(r.h), 0);
	/* The pause held the stream past the 400 ms check. */
	assert_true(json_real_value(json_object_get(last_event(&c), "t")) >= 0.4);
	ev_timer_stop(r.loop, &t);
	json_decref(c.events);
	json_decref(input);
	run_free(&r);
	model_provider_free(p);
	mock_stop(&m);
	free(script);
	free(events);
}

static void
test_chat_wire(void **state)
{
	struct mock m = {0};
	struct run r;
	struct client c;
	struct model_provider *p;
	json_t *rec, *body, *item;

	mock_start(&m,
		"{\"responses\":[{\"events\":[{\"ev\":\"created\"},{\"ev\":\"text_delta\","
		"\"delta\":\"Hi \"},{\"ev\":\"text_delta\",\"delta\":\"there\"},{\"ev\":"
		"\"message\",\"text\":\"Hi there\"},{\"ev\":\"function_call\",\"call_id\":"
		"\"call-9\",\"name\":\"exec_command\",\"arguments\":{\"cmd\":\"ls\"}},{\"ev\":"
		"\"completed\",\"input_tokens\":12,\"output_tokens\":3}]}]}");
	p = mock_provider(&m, MODEL_WIRE_CHAT, 0, 0);
	run_init(&r);
	client_start(&c, &r, p, "hello");
	run_until_done(&r);
	assert_kinds(&c, "created item_added text_delta text_delta item_done item_done completed");
	assert_string_equal(c.text, "Hi there");
	item = json_object_get(json_array_get(c.events, 5), "item");
	assert_string_equal(json_string_value(json_object_get(item, "type")), "function_call");
	assert_string_equal(json_string_value(json_object_get(item, "call_id")), "call-9");
	assert_string_equal(
		json_string_value(json_object_get(item, "arguments")), "{\"cmd\":\"ls\"}");
	assert_jeq(json_object_get(last_event(&c), "usage"),
		json_pack("{s:i, s:i, s:i, s:i, s:i}", "input", 12, "cached", 0, "output", 3,
			"reasoning", 0, "total", 15));
	rec = mock_records(&m);
	assert_string_equal(json_string_value(json_object_get(json_array_get(rec, 0), "path")),
		"/v1/chat/completions");
	body = json_object_get(json_array_get(rec, 0), "body");
	assert_jeq(json_object_get(body, "messages"),
		json_pack("[{s:s, s:s}]", "role", "user", "content", "hello"));
	assert_true(json_is_true(json_object_get(body, "stream")));
	json_decref(rec);
	json_decref(c.events);
	run_free(&r);
	model_provider_free(p);
	mock_stop(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_retry_500_then_200),
		cmocka_unit_test(test_401_not_retried),
		cmocka_unit_test(test_idle_timeout),
		cmocka_unit_test(test_cut_stream_retried),
		cmocka_unit_test(test_connect_refused),
		cmocka_unit_test(test_429_retry_after),
		cmocka_unit_test(test_failed_not_retried),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_backpressure),
		cmocka_unit_test(test_chat_wire),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
