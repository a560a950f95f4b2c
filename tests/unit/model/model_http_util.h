/*
 * Helpers shared by the model client's HTTP tests (test_model_http.c, test_model_http_flow.c):
 * the mock model server (`app-server mock-model`) in a child on an ephemeral loopback port,
 * its record file read back, a provider pointing at it, a libev loop with a deadline, and
 * clients that record every event they get. Unit tests link only libcore.a, so this is a
 * header of static functions, included once per test binary; `inline` keeps a binary that
 * does not use one of them free of warnings.
 */
#ifndef MODEL_HTTP_UTIL_H
#define MODEL_HTTP_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/wait.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "io/http.h"
#include "model/model.h"
#include "protocol/xmalloc.h"

#define DEADLINE 20.0 /* seconds any one test may run its loop */

/* The mock server, in a child process. */
struct mock {
	pid_t pid;
	char dir[64];
	char *record;
	int port;
};

/* Start the mock with a script (JSON text). */
static inline void
mock_start(struct mock *m, const char *script)
{
	const char *bin;
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
	/*
	 * `app-server mock-model` exec'd, not mockmodel_main in a forked copy of this process: a
	 * thread of ours holding malloc's lock at the fork would leave the child waiting on it
	 * forever (seen in test_agent_loop under ASan).
	 */
	if ((bin = getenv("APP_SERVER_BIN")) == NULL)
		bin = "build/app-server";
	m->pid = fork();
	assert_true(m->pid >= 0);
	if (m->pid == 0) {
		char *argv[] = {(char *)bin, "mock-model", "--script", spath, "--record", m->record,
			"--port-file", ppath, NULL};

		fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(bin, argv);
		_exit(127);
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
static inline void
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
static inline json_t *
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
static inline struct model_provider *
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

/* One loop with its HTTP client and a deadline; outstanding counts the clients still running. */
struct run {
	struct ev_loop *loop;
	struct http *h;
	ev_timer deadline;
	int outstanding;
	int congested;
	double t0;
};

static const char *const kind_names[] = {
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

/* Record each event compactly; end the client on a terminal event or when it wants to cancel. */
static inline void
client_cb(void *arg, const struct model_event *ev)
{
	struct client *c = arg;
	json_t *e;

	/* Every response's rate-limit snapshot (test_rate_limits): not what these tests count. */
	if (ev->kind == MODEL_EV_RATE_LIMITS)
		return;
	e = json_pack(
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

/* The test took too long: stop the loop (run_until_done fails). */
static inline void
deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	ev_break(loop, EVBREAK_ALL);
}

/* The http congestion hook: what the test set in run->congested. */
static inline int
run_congested(void *arg)
{
	return ((struct run *)arg)->congested;
}

/* A fresh loop, HTTP client and deadline timer. */
static inline void
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

/* Free what run_init made. */
static inline void
run_free(struct run *r)
{
	ev_timer_stop(r->loop, &r->deadline);
	http_free(r->h);
	ev_loop_destroy(r->loop);
}

/* Start one request for client c with a one-message prompt. */
static inline void
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
static inline void
run_until_done(struct run *r)
{
	ev_run(r->loop, 0);
	if (r->outstanding != 0)
		fail_msg("%d requests still running at the deadline", r->outstanding);
}

/* The last event of a client. */
static inline json_t *
last_event(const struct client *c)
{
	return json_array_get(c->events, json_array_size(c->events) - 1);
}

#define OK_RESPONSE                                                                                \
	"{\"events\":[{\"ev\":\"created\",\"id\":\"resp-ok\"},{\"ev\":\"message_added\"},"         \
	"{\"ev\":\"text_delta\",\"delta\":\"Hel\"},{\"ev\":\"text_delta\",\"delta\":\"lo\"},"      \
	"{\"ev\":\"message\",\"text\":\"Hello\"},{\"ev\":\"completed\",\"id\":\"resp-ok\","        \
	"\"input_tokens\":100,\"cached_tokens\":40,\"output_tokens\":20,\"reasoning_tokens\":7}]}"

/* One test's world: the mock, a provider pointing at it, and a loop. */
struct world {
	struct mock m;
	struct model_provider *p;
	struct run r;
};

/* Start the mock with a script, a provider for it (wire, retry budgets) and a loop. */
static inline void
world_start(struct world *w, const char *script, enum model_wire wire, int req_retries,
	int stream_retries)
{
	mock_start(&w->m, script);
	w->p = mock_provider(&w->m, wire, req_retries, stream_retries);
	run_init(&w->r);
}

/* Free the loop and the provider, then stop the mock (it must exit 0). */
static inline void
world_stop(struct world *w)
{
	run_free(&w->r);
	config_provider_free(w->p);
	mock_stop(&w->m);
}

/* Start client c with a one-message prompt and run the loop until it ended. */
static inline void
world_ask(struct world *w, struct client *c, const char *text)
{
	client_start(c, &w->r, w->p, text);
	run_until_done(&w->r);
}

/* Assert the mock recorded n requests. */
static inline void
world_assert_requests(struct world *w, size_t n)
{
	json_t *rec = mock_records(&w->m);

	assert_int_equal(json_array_size(rec), n);
	json_decref(rec);
}

#endif
