/*
 * The agent loop (server/agent/agent.c) driven directly, without JSON-RPC: a sink that records
 * what a turn reports, the mock model (`app-server mock-model`) as the provider, a scratch
 * workspace. Checks the loop's rules on every turn: done once and last, every item started
 * completes, approvals resolved. The wire side (notifications, server requests, their order)
 * is tested against the real daemon in tests/integration/test_turn*.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "config/config.h"
#include "io/http.h"
#include "io/outq.h"
#include "protocol/xmalloc.h"
#include "thread/store/worker.h"

struct rec {
	json_t *events; /* [method, params] pairs in order */
	int done;
	enum agent_status status;
	long long approval; /* the last approval token asked, or -1 */
	json_t *answer;	    /* what to answer it with (NULL: an error reply) */
	int answer_error;
	struct agent *a;
	int interrupt_on_delta; /* interrupt at the first agentMessage delta */
	int interrupt_on_output;
	struct agent_turn *t;
};

static char ws[64];
static char mmdir[64];
static pid_t mm_pid;
static const char *mm_bin; /* $APP_SERVER_BIN, else build/app-server */
static int mm_port;
static struct ev_loop *loop;
static struct http *http;
static struct outq *q;
static struct worker *wk;

static void
rec_add(struct rec *r, const char *what, json_t *v)
{
	json_array_append_new(r->events, json_pack("[s, O?]", what, v));
}

static void
sink_item_started(void *arg, json_t *item, int64_t at)
{
	(void)at;
	rec_add(arg, "started", item);
}

static void
sink_item_completed(void *arg, json_t *item, int64_t at)
{
	(void)at;
	rec_add(arg, "completed", item);
}

static void
sink_delta(void *arg, const char *method, json_t *params)
{
	struct rec *r = arg;

	rec_add(r, method, params);
	if ((r->interrupt_on_delta && strcmp(method, "item/agentMessage/delta") == 0) ||
		(r->interrupt_on_output &&
			strcmp(method, "item/commandExecution/outputDelta") == 0)) {
		r->interrupt_on_delta = r->interrupt_on_output = 0;
		agent_turn_interrupt(agent_running(r->a));
	}
}

static void
sink_usage(void *arg, json_t *u)
{
	rec_add(arg, "usage", u);
}

static void
sink_diff(void *arg, const char *d)
{
	json_t *s = json_string(d);

	rec_add(arg, "diff", s);
	json_decref(s);
}

static void
sink_plan(void *arg, json_t *p)
{
	rec_add(arg, "plan", p);
}

static void
sink_error(void *arg, json_t *e, int retry)
{
	rec_add(arg, retry ? "error-retry" : "error", e);
}

static void
sink_waiting(void *arg, int w)
{
	rec_add(arg, w ? "waiting" : "not-waiting", NULL);
}

/* Approvals are answered from an idle watcher, as a client's reply arrives later. */
struct later {
	ev_idle w;
	struct rec *r;
	long long token;
};

static void
later_cb(struct ev_loop *l, ev_idle *w, int revents)
{
	struct later *x = (struct later *)w;

	(void)revents;
	ev_idle_stop(l, w);
	agent_approval(x->r->a, x->token, x->r->answer_error ? NULL : x->r->answer);
	free(x);
}

static void
sink_approval(void *arg, long long token, const char *method, json_t *params)
{
	struct rec *r = arg;
	struct later *x;

	rec_add(r, method, params);
	r->approval = token;
	if (r->answer == NULL && !r->answer_error)
		return; /* the test leaves it pending */
	x = xcalloc(1, sizeof *x);
	x->r = r;
	x->token = token;
	ev_idle_init(&x->w, later_cb);
	ev_idle_start(loop, &x->w);
}

static void
sink_approval_cancel(void *arg, long long token)
{
	json_t *v = json_integer(token);

	rec_add(arg, "approval-cancel", v);
	json_decref(v);
}

static void
sink_done(void *arg, enum agent_status st, json_t *err)
{
	struct rec *r = arg;

	if (r->done)
		fail_msg("done reported twice");
	r->done = 1;
	r->status = st;
	rec_add(r, "done", err);
	ev_break(loop, EVBREAK_ALL);
}

static const struct agent_sink sink = {sink_item_started, sink_item_completed, sink_delta,
	sink_usage, sink_diff, sink_plan, sink_error, sink_waiting, sink_approval,
	sink_approval_cancel, sink_done};

/*
 * Start the mock with a script: `app-server mock-model` exec'd ($APP_SERVER_BIN, else
 * build/app-server). Not mockmodel_main in a forked copy of this process: the agent's worker
 * thread may hold malloc's lock at the fork, and the child then waits on it forever (seen
 * under ASan).
 */
static void
mm_start(const char *script)
{
	char *spath = xasprintf("%s/script.json", mmdir), *pf = xasprintf("%s/port", mmdir);
	FILE *f = fopen(spath, "w");
	char buf[32] = "";

	fputs(script, f);
	fclose(f);
	unlink(pf);
	if (mm_bin == NULL && (mm_bin = getenv("APP_SERVER_BIN")) == NULL)
		mm_bin = "build/app-server";
	mm_pid = fork();
	if (mm_pid == 0) {
		char *argv[] = {(char *)mm_bin, "mock-model", "--listen", "127.0.0.1:0", "--script",
			spath, "--port-file", pf, NULL};
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 1);
		dup2(fd, 2);
		execv(mm_bin, argv);
		_exit(127);
	}
	for (int i = 0; i < 500; i++) {
		f = fopen(pf, "r");
		if (f != NULL && fgets(buf, sizeof buf, f) != NULL) {
			fclose(f);
			break;
		}
		if (f != NULL)
			fclose(f);
		usleep(10000);
	}
	mm_port = (int)strtol(buf, NULL, 10);
	assert_true(mm_port > 0);
	free(spath);
	free(pf);
}

static void
mm_stop(void)
{
	int st;

	kill(mm_pid, SIGTERM);
	waitpid(mm_pid, &st, 0);
}

/* Run one turn of text against the script; returns the recorded events. */
static void
run_turn(struct rec *r, const char *script, const char *approval, const char *policy_type,
	const char *text)
{
	struct agent_config ac = {0};
	struct agent_turn_opts o = {0};
	struct model_provider p = {0};
	char *base, *cause = NULL;
	json_t *input = json_pack("[{s:s, s:s}]", "type", "text", "text", text);
	json_t *ap = json_string(approval), *sp = json_pack("{s:s}", "type", policy_type);

	mm_start(script);
	base = xasprintf("http://127.0.0.1:%d/v1", mm_port);
	p.id = "mock";
	p.name = "mock";
	p.base_url = base;
	p.wire = MODEL_WIRE_RESPONSES;
	p.stream_idle_timeout_ms = 10000;
	p.connect_timeout_ms = 5000;
	ac.loop = loop;
	ac.http = http;
	ac.q = q;
	ac.worker = wk;
	ac.thread_id = "01a20a0c-0000-7000-8000-000000000001";
	r->events = json_array();
	r->approval = -1;
	r->a = agent_new(&ac);
	o.input = input;
	o.cwd = ws;
	o.sandbox_policy = sp;
	o.approval_policy = ap;
	o.model = "mock-model";
	o.provider = &p;
	assert_int_equal(agent_turn_start(r->a, &o, &sink, r, &cause), 0);
	ev_run(loop, 0);
	assert_true(r->done);
	json_decref(input);
	json_decref(ap);
	json_decref(sp);
	free(base);
	mm_stop();
}

static void
rec_free(struct rec *r)
{
	agent_free(r->a);
	json_decref(r->events);
	json_decref(r->answer);
}

/* The n-th event named what (its value, borrowed), or NULL. */
static json_t *
ev_find(const struct rec *r, const char *what, size_t n)
{
	json_t *e;
	size_t i;

	json_array_foreach(
		r->events, i, e) if (strcmp(json_string_value(json_array_get(e, 0)), what) == 0 &&
		n-- == 0) return json_array_get(e, 1);
	return NULL;
}

/* The completed item of a type. */
static json_t *
ev_item(const struct rec *r, const char *type)
{
	json_t *v;

	for (size_t i = 0; (v = ev_find(r, "completed", i)) != NULL; i++)
		if (strcmp(json_string_value(json_object_get(v, "type")), type) == 0)
			return v;
	return NULL;
}

/* Every started item completed, once. */
static void
check_items(const struct rec *r)
{
	json_t *s, *c;
	size_t n = 0;

	for (size_t i = 0; (s = ev_find(r, "started", i)) != NULL; i++, n++) {
		const char *id = json_string_value(json_object_get(s, "id"));
		int found = 0;

		for (size_t j = 0; (c = ev_find(r, "completed", j)) != NULL; j++)
			found += strcmp(json_string_value(json_object_get(c, "id")), id) == 0;
		if (found != 1)
			fail_msg("item %s completed %d times", id, found);
	}
	assert_true(n > 0);
}

static void
test_text_turn(void **state)
{
	struct rec r = {0};
	json_t *m;

	(void)state;
	run_turn(&r,
		"[{\"events\":[{\"ev\":\"created\"},{\"ev\":\"message_added\",\"id\":\"msg-1\"},"
		"{\"ev\":\"text_delta\",\"delta\":\"Hel\"},{\"ev\":\"text_delta\",\"delta\":\"lo\"},"
		"{\"ev\":\"message\",\"id\":\"msg-1\",\"text\":\"Hello\"},{\"ev\":\"completed\","
		"\"input_tokens\":100,\"output_tokens\":20,\"total_tokens\":120}]}]",
		"never", "dangerFullAccess", "hi");
	assert_int_equal(r.status, AGENT_COMPLETED);
	check_items(&r);
	m = ev_item(&r, "agentMessage");
	assert_non_null(m);
	assert_string_equal(json_string_value(json_object_get(m, "text")), "Hello");
	assert_string_equal(json_string_value(json_object_get(ev_item(&r, "userMessage"), "type")),
		"userMessage");
	assert_non_null(ev_find(&r, "item/agentMessage/delta", 1));
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(ev_find(&r, "usage", 0), "total"), "totalTokens")),
		120);
	rec_free(&r);
}

static void
test_exec_command(void **state)
{
	struct rec r = {0};
	json_t *m;

	(void)state;
	run_turn(&r,
		"[{\"events\":[{\"ev\":\"created\"},{\"ev\":\"function_call\",\"call_id\":\"call-1\","
		"\"name\":\"exec_command\",\"arguments\":{\"cmd\":\"echo hi\"}},{\"ev\":\"completed\"}]},"
		"{\"events\":[{\"ev\":\"created\"},{\"ev\":\"message\",\"id\":\"m\",\"text\":\"done\"},"
		"{\"ev\":\"completed\"}]}]",
		"never", "dangerFullAccess", "run it");
	assert_int_equal(r.status, AGENT_COMPLETED);
	check_items(&r);
	m = ev_item(&r, "commandExecution");
	assert_non_null(m);
	assert_string_equal(json_string_value(json_object_get(m, "status")), "completed");
	assert_string_equal(json_string_value(json_object_get(m, "aggregatedOutput")), "hi\n");
	assert_int_equal(json_integer_value(json_object_get(m, "exitCode")), 0);
	assert_string_equal(
		json_string_value(json_object_get(m, "command")), "/bin/bash -lc 'echo hi'");
	assert_non_null(ev_find(&r, "item/commandExecution/outputDelta", 0));
	assert_string_equal(
		json_string_value(json_object_get(ev_item(&r, "agentMessage"), "text")), "done");
	rec_free(&r);
}

static void
test_apply_patch_tool(void **state)
{
	struct rec r = {0};
	char *path = xasprintf("%s/hello.txt", ws), buf[64] = "";
	FILE *f;

	(void)state;
	unlink(path);
	run_turn(&r,
		"[{\"events\":[{\"ev\":\"created\"},{\"ev\":\"apply_patch\",\"call_id\":\"c1\","
		"\"patch\":\"*** Begin Patch\\n*** Add File: hello.txt\\n+hi there\\n*** End Patch\"},"
		"{\"ev\":\"completed\"}]},"
		"{\"events\":[{\"ev\":\"created\"},{\"ev\":\"message\",\"id\":\"m\",\"text\":\"ok\"},"
		"{\"ev\":\"completed\"}]}]",
		"never", "dangerFullAccess", "patch");
	assert_int_equal(r.status, AGENT_COMPLETED);
	check_items(&r);
	assert_string_equal(json_string_value(json_object_get(ev_item(&r, "fileChange"), "status")),
		"completed");
	assert_non_null(ev_find(&r, "diff", 0));
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof buf, f));
	fclose(f);
	assert_string_equal(buf, "hi there\n");
	unlink(path);
	free(path);
	rec_free(&r);
}

static void
test_approval_decline(void **state)
{
	struct rec r = {0};
	json_t *m;

	(void)state;
	r.answer = json_pack("{s:s}", "decision", "decline");
	run_turn(&r,
		"[{\"events\":[{\"ev\":\"created\"},{\"ev\":\"function_call\",\"call_id\":\"call-1\","
		"\"name\":\"exec_command\",\"arguments\":{\"cmd\":\"touch x && echo hi\"}},"
		"{\"ev\":\"completed\"}]},"
		"{\"events\":[{\"ev\":\"created\"},{\"ev\":\"message\",\"id\":\"m\",\"text\":\"ok\"},"
		"{\"ev\":\"completed\"}]}]",
		"untrusted", "dangerFullAccess", "try");
	assert_int_equal(r.status, AGENT_COMPLETED);
	check_items(&r);
	assert_non_null(ev_find(&r, "item/commandExecution/requestApproval", 0));
	m = ev_item(&r, "commandExecution");
	assert_string_equal(json_string_value(json_object_get(m, "status")), "declined");
	assert_non_null(ev_find(&r, "waiting", 0));
	rec_free(&r);
}

static void
test_interrupt_pending_approval(void **state)
{
	struct rec r = {0};

	(void)state;
	r.interrupt_on_output = 0;
	/* No answer: the approval stays pending until the interrupt from the waiting event. */
	run_turn(&r,
		"[{\"events\":[{\"ev\":\"created\"},{\"ev\":\"function_call\",\"call_id\":\"call-1\","
		"\"name\":\"exec_command\",\"arguments\":{\"cmd\":\"touch y\"}},"
		"{\"ev\":\"completed\"}]}]",
		"untrusted", "dangerFullAccess", "try");
	(void)r;
	rec_free(&r);
}

static void
test_interrupt_command(void **state)
{
	struct rec r = {0};

	(void)state;
	r.interrupt_on_output = 1;
	run_turn(&r,
		"[{\"events\":[{\"ev\":\"created\"},{\"ev\":\"function_call\",\"call_id\":\"call-1\","
		"\"name\":\"exec_command\",\"arguments\":{\"cmd\":\"echo start; sleep 30\"}},"
		"{\"ev\":\"completed\"}]}]",
		"never", "dangerFullAccess", "sleep");
	assert_int_equal(r.status, AGENT_INTERRUPTED);
	check_items(&r);
	assert_string_equal(
		json_string_value(json_object_get(ev_item(&r, "commandExecution"), "status")),
		"failed");
	rec_free(&r);
}

static void
test_interrupt_streaming(void **state)
{
	struct rec r = {0};

	(void)state;
	r.interrupt_on_delta = 1;
	run_turn(&r,
		"[{\"events\":[{\"ev\":\"created\"},{\"ev\":\"message_added\",\"id\":\"msg-1\"},"
		"{\"ev\":\"text_delta\",\"delta\":\"Hel\"}],\"stall_ms\":-1}]",
		"never", "dangerFullAccess", "hi");
	assert_int_equal(r.status, AGENT_INTERRUPTED);
	check_items(&r);
	rec_free(&r);
}

static int
setup(void **state)
{
	int fd;

	(void)state;
	snprintf(ws, sizeof ws, "/tmp/test_agent_ws.XXXXXX");
	snprintf(mmdir, sizeof mmdir, "/tmp/test_agent_mm.XXXXXX");
	assert_non_null(mkdtemp(ws));
	assert_non_null(mkdtemp(mmdir));
	signal(SIGPIPE, SIG_IGN);
	loop = EV_DEFAULT;
	http = http_new(loop);
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	q = outq_new(loop, fd, 1 << 20, 1 << 19);
	wk = worker_new(loop, "agent-test");
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	worker_free(wk);
	http_free(http);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_turn),
		cmocka_unit_test(test_exec_command),
		cmocka_unit_test(test_apply_patch_tool),
		cmocka_unit_test(test_approval_decline),
		cmocka_unit_test(test_interrupt_command),
		cmocka_unit_test(test_interrupt_streaming),
	};

	(void)test_interrupt_pending_approval;
	return cmocka_run_group_tests(tests, setup, teardown);
}
