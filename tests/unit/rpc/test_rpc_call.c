/*
 * Tests for server/rpc/ without the daemon: a fake client feeds lines to rpc_line and reads
 * what the connection writes to a pipe. Rules under test: server requests get ids from 0 and
 * are resolved exactly once (the client's result or error, rpc_call_cancel, or the connection
 * closing); a response with an unknown, repeated or cancelled id is ignored; requests go to
 * the handler of the tables given, with the session given; one unanswered at close is
 * answered by rpc_free.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "io/outq.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"

/* What a test sees: the connection, the pipe it writes to, and the callbacks' record. */
struct fake {
	struct ev_loop *loop;
	struct outq *q;
	struct rpc *r;
	int rd, wr;
	char got[65536];
	size_t len;
};

/* One server request's outcome, as the callback saw it. */
struct outcome {
	int calls;
	enum rpc_call_status st;
	char *value; /* the result or error, as JSON text */
};

static struct session *seen_session;
static struct rpc_req *held;

/* A handler that answers {"echo": params}. */
static void
echo_cb(struct session *s, struct rpc_req *req, json_t *params)
{
	seen_session = s;
	rpc_reply(req, json_pack("{s:O?}", "echo", params));
}

/* A handler that keeps its request unanswered. */
static void
hold_cb(struct session *s, struct rpc_req *req, json_t *params)
{
	held = req;
}

static const struct rpc_method test_methods[] = {
	{"initialize", echo_cb, RPC_BEFORE_INIT},
	{"config/read", hold_cb, 0},
	{NULL, NULL, 0},
};
static const struct rpc_method *const test_tables[] = {test_methods, NULL};

static void
record_cb(void *arg, enum rpc_call_status st, const json_t *value)
{
	struct outcome *o = arg;

	o->calls++;
	o->st = st;
	free(o->value);
	o->value = value != NULL ? json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
}

static int
setup(void **state)
{
	struct fake *f = xcalloc(1, sizeof *f);
	struct rpc_opts o = {.max_inflight = 100};
	int p[2];
	char *cause = NULL;

	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	f->rd = p[0];
	f->wr = p[1];
	f->loop = ev_loop_new(EVFLAG_AUTO);
	f->q = outq_new(f->loop, f->wr, 1 << 20, 1 << 18);
	f->r = rpc_new(f->loop, f->q, &o, test_tables, &cause);
	if (f->r == NULL)
		return -1;
	rpc_set_session(f->r, (struct session *)f); /* any pointer: rpc never looks inside */
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fake *f = *state;

	rpc_free(f->r);
	outq_free(f->q);
	ev_loop_destroy(f->loop);
	close(f->rd);
	close(f->wr);
	free(f);
	return 0;
}

/* Feed one line. */
static void
feed(struct fake *f, const char *line)
{
	rpc_line(f->r, line, strlen(line), 0);
}

/* Everything written since the last call, as lines joined by '\n' (borrowed). */
static const char *
drain(struct fake *f)
{
	ssize_t n;

	outq_flush(f->q);
	f->len = 0;
	while ((n = read(f->rd, f->got + f->len, sizeof f->got - 1 - f->len)) > 0)
		f->len += (size_t)n;
	f->got[f->len] = '\0';
	return f->got;
}

static void
test_ids_and_results(void **state)
{
	struct fake *f = *state;
	struct outcome a = {0}, b = {0}, c = {0};

	assert_int_equal(rpc_call(f->r, "item/commandExecution/requestApproval",
				 json_pack("{s:s}", "itemId", "x"), record_cb, &a),
		0);
	assert_int_equal(rpc_call(f->r, "item/fileChange/requestApproval", NULL, record_cb, &b), 1);
	assert_int_equal(
		rpc_call(f->r, "item/commandExecution/requestApproval", NULL, record_cb, &c), 2);
	assert_string_equal(drain(f),
		"{\"id\":0,\"method\":\"item/commandExecution/requestApproval\",\"params\":{"
		"\"itemId\":\"x\"}}\n{\"id\":1,\"method\":\"item/fileChange/requestApproval\"}\n"
		"{\"id\":2,\"method\":\"item/commandExecution/requestApproval\"}\n");
	assert_int_equal(rpc_calls_pending(f->r), 3);
	/* Answers in any order, each routed to its own callback. */
	feed(f, "{\"id\":1,\"result\":{\"decision\":\"accept\"}}");
	feed(f, "{\"id\":0,\"error\":{\"code\":-1,\"message\":\"no\"}}");
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.st, RPC_CALL_RESULT);
	assert_string_equal(b.value, "{\"decision\":\"accept\"}");
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.st, RPC_CALL_ERROR);
	assert_string_equal(a.value, "{\"code\":-1,\"message\":\"no\"}");
	/* A repeated answer, an unknown id, a string id: ignored, nothing written back. */
	feed(f, "{\"id\":1,\"result\":{}}");
	feed(f, "{\"id\":77,\"result\":{}}");
	feed(f, "{\"id\":\"2\",\"result\":{}}");
	assert_int_equal(b.calls, 1);
	assert_int_equal(c.calls, 0);
	assert_string_equal(drain(f), "");
	/* Cancelled: resolved at once; its late answer is ignored. */
	assert_int_equal(rpc_call_cancel(f->r, 2), 0);
	assert_int_equal(c.calls, 1);
	assert_int_equal(c.st, RPC_CALL_CANCELLED);
	assert_null(c.value);
	assert_int_equal(rpc_call_cancel(f->r, 2), -1);
	feed(f, "{\"id\":2,\"result\":{}}");
	assert_int_equal(c.calls, 1);
	assert_int_equal(rpc_calls_pending(f->r), 0);
	free(a.value);
	free(b.value);
}

static void
test_close_cancels_and_answers(void **state)
{
	struct fake *f = *state;
	struct outcome a = {0}, b = {0};
	const char *out;

	feed(f,
		"{\"id\":\"i\",\"method\":\"initialize\",\"params\":{\"clientInfo\":{\"name\":\"t\","
		"\"version\":\"1\"}}}");
	out = drain(f);
	assert_non_null(strstr(out, "\"id\":\"i\""));
	assert_ptr_equal(seen_session, (struct session *)f);
	/* A request kept unanswered and two server requests pending when the connection ends. */
	rpc_set_initialized(f->r, 0, NULL);
	feed(f, "{\"id\":5,\"method\":\"config/read\",\"params\":{}}");
	assert_non_null(held);
	rpc_call(f->r, "item/fileChange/requestApproval", NULL, record_cb, &a);
	rpc_call(f->r, "item/fileChange/requestApproval", NULL, record_cb, &b);
	drain(f);
	rpc_free(f->r);
	f->r = NULL;
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.st, RPC_CALL_CANCELLED);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.st, RPC_CALL_CANCELLED);
	out = drain(f);
	assert_string_equal(out,
		"{\"error\":{\"code\":-32603,\"message\":\"server is shutting "
		"down\"},\"id\":5}\n");
	{
		char *cause = NULL;

		f->r = rpc_new(
			f->loop, f->q, &(struct rpc_opts){.max_inflight = 1}, test_tables, &cause);
	}
}

/*
 * A notification serialized once for many connections (rpc_notify_text, rpc_notify_line): the
 * bytes rpc_notify writes (emittedAtMs aside), and a connection that opted out gets nothing.
 */
static void
test_notify_line(void **state)
{
	struct fake *f = *state;
	char *line, *want, *p;
	json_t *optouts;
	size_t len;

	line = rpc_notify_text("thread/started", json_pack("{s:s}", "threadId", "t1"), &len);
	assert_non_null(line);
	assert_int_equal(strlen(line), len);
	rpc_notify_line(f->r, "thread/started", line, len);
	assert_string_equal(drain(f), line);
	rpc_notify(f->r, "thread/started", json_pack("{s:s}", "threadId", "t1"));
	want = xstrdup(drain(f));
	/* the same up to emittedAtMs, a clock reading */
	assert_non_null(p = strstr(want, "\"emittedAtMs\":"));
	assert_int_equal(strncmp(want, line, (size_t)(p - want)), 0);
	assert_string_equal(strrchr(line, '\n'), "\n");
	optouts = json_pack("[s]", "thread/started");
	rpc_set_initialized(f->r, 0, optouts);
	json_decref(optouts);
	rpc_notify_line(f->r, "thread/started", line, len);
	assert_string_equal(drain(f), "");
	free(want);
	free(line);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ids_and_results, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_cancels_and_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_notify_line, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
