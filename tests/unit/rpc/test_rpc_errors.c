/*
 * Error answers of server/rpc/ without the daemon: a fake client feeds lines to rpc_line and
 * reads what the connection writes to a pipe. Rules under test: an error answer without data
 * is written as text (not through jansson, for speed) and is byte for byte what jansson's
 * compact dump of the same answer gives, whatever the message and id hold; a message that is
 * not UTF-8 still gets its answer, repaired with U+FFFD; the NUL check skips a line without
 * "\u0000" and still refuses a string holding one.
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

/* The connection and the pipe it writes to. */
struct fake {
	struct ev_loop *loop;
	struct outq *q;
	struct rpc *r;
	int rd, wr;
	char got[65536];
	size_t len;
};

static int handled;

/*
 * A handler that fails with params.code and params.message; with params.raw, each U+0080 to
 * U+00FF of the message stands for that byte alone (a path that is not UTF-8).
 */
static void
fail_cb(struct session *s, struct rpc_req *req, json_t *params)
{
	json_t *m = json_object_get(params, "message");
	const unsigned char *text = (const unsigned char *)json_string_value(m);
	size_t n = json_string_length(m), o = 0;
	char *bytes = xmalloc(n + 1);

	handled++;
	for (size_t i = 0; i < n; i++) {
		if (json_is_true(json_object_get(params, "raw")) && (text[i] & 0xfe) == 0xc2 &&
			i + 1 < n) {
			bytes[o++] = (char)(text[i + 1] + (text[i] == 0xc3 ? 0x40 : 0));
			i++;
		} else
			bytes[o++] = (char)text[i];
	}
	bytes[o] = '\0';
	rpc_reply_error(req, (int)json_integer_value(json_object_get(params, "code")), bytes, NULL);
	free(bytes);
}

static const struct rpc_method test_methods[] = {
	{"test/fail", fail_cb, RPC_BEFORE_INIT},
	{NULL, NULL, 0},
};
static const struct rpc_method *const test_tables[] = {test_methods, NULL};

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

/* Feed one line, return everything written since (borrowed). */
static const char *
ask(struct fake *f, const char *line)
{
	ssize_t n;

	rpc_line(f->r, line, strlen(line), 0);
	outq_flush(f->q);
	f->len = 0;
	while ((n = read(f->rd, f->got + f->len, sizeof f->got - 1 - f->len)) > 0)
		f->len += (size_t)n;
	f->got[f->len] = '\0';
	return f->got;
}

/* What jansson writes for {"error":{"code","message"},"id"} (heap, with the newline). */
static char *
jansson_answer(json_t *id, int code, const char *message, size_t mlen)
{
	json_t *msg = json_pack("{s:{s:i, s:s%}, s:O}", "error", "code", code, "message", message,
		mlen, "id", id != NULL ? id : json_null());
	char *text, *line;

	assert_non_null(msg);
	text = json_dumps(msg, JSON_COMPACT);
	line = xasprintf("%s\n", text);
	free(text);
	json_decref(msg);
	return line;
}

/* The line read back by jansson and dumped again gives the same bytes. */
static void
assert_jansson_form(const char *out)
{
	json_error_t je;
	json_t *v = json_loads(out, JSON_ALLOW_NUL, &je);
	char *again;

	assert_non_null(v);
	again = json_dumps(v, JSON_COMPACT);
	assert_int_equal(strlen(out), strlen(again) + 1);
	assert_memory_equal(out, again, strlen(again));
	free(again);
	json_decref(v);
}

static void
test_errors_as_jansson(void **state)
{
	static const char *const ids[] = {"0", "-5", "9223372036854775807", "-9223372036854775808",
		"\"s\"", "\"\"", "\"q\\\"b\\\\s\\u0001\\u001f\\u007f\\u0000é\"", NULL};
	static const char *const messages[] = {"Already initialized", "", "quote \\\" back \\\\",
		"ctl \\b\\f\\n\\r\\t \\u0001 \\u001b \\u007f", "utf-8 é ✓ 😀 \\u2028",
		"slash / and <>&'", NULL};
	static const int codes[] = {-32600, -32601, -32001, 0, 7};
	struct fake *f = *state;
	json_error_t je;

	for (int i = 0; ids[i] != NULL; i++)
		for (int m = 0; messages[m] != NULL; m++) {
			int code = codes[(i + m) % 5];
			char *line = xasprintf("{\"id\":%s,\"method\":\"test/fail\",\"params\":{"
					       "\"code\":%d,\"message\":\"%s\"}}",
				ids[i], code, messages[m]);
			json_t *req = json_loads(line, JSON_ALLOW_NUL, &je), *msg;
			char *want;

			assert_non_null(req);
			msg = json_object_get(json_object_get(req, "params"), "message");
			want = jansson_answer(json_object_get(req, "id"), code,
				json_string_value(msg), json_string_length(msg));
			assert_string_equal(ask(f, line), want);
			free(want);
			free(line);
			json_decref(req);
		}
	/* Answers the connection writes itself: unknown method, bad line, bad id. */
	assert_string_equal(ask(f, "{\"id\":\"a\\\"b\",\"method\":\"no/such\\tthing\"}"),
		"{\"error\":{\"code\":-32601,\"message\":\"Method not found: "
		"no/such\\tthing\"},\"id\":\"a\\\"b\"}\n");
	assert_jansson_form(ask(f, "{\"id\":1,"));
	assert_non_null(strstr(f->got, "\"code\":-32700"));
	assert_string_equal(ask(f, "{\"id\":1.5,\"method\":\"test/fail\"}"),
		"{\"error\":{\"code\":-32600,\"message\":\"Invalid request: id must be a string or "
		"an integer\"},\"id\":null}\n");
	assert_jansson_form(ask(f, "[1]"));
	assert_jansson_form(ask(f, "{\"id\":\"\\u0000\\u00e9\",\"method\":\"x\\u0000y\"}"));
	assert_non_null(strstr(f->got, "\"code\":-32601"));
}

static void
test_error_not_utf8(void **state)
{
	struct fake *f = *state;
	const char *out;

	handled = 0;
	/* The handler's message is "cannot open /tmp/\xff\xfe.txt": not UTF-8. */
	out = ask(f,
		"{\"id\":3,\"method\":\"test/fail\",\"params\":{\"code\":-32603,\"raw\":true,"
		"\"message\":\"cannot open /tmp/\\u00ff\\u00fe.txt\"}}");
	assert_int_equal(handled, 1);
	assert_string_equal(out,
		"{\"error\":{\"code\":-32603,\"message\":\"cannot open "
		"/tmp/\xef\xbf\xbd\xef\xbf\xbd.txt\"},\"id\":3}\n");
}

static void
test_nul_check(void **state)
{
	struct fake *f = *state;
	const char *out;

	/* A NUL in a value or a key: refused before the handler, naming where. */
	handled = 0;
	out = ask(f,
		"{\"id\":4,\"method\":\"test/fail\",\"params\":{\"code\":1,\"message\":\"a\","
		"\"x\":[\"ok\",\"b\\u0000c\"]}}");
	assert_int_equal(handled, 0);
	assert_non_null(strstr(out, "\"code\":-32602"));
	assert_non_null(strstr(out, "\"path\":\"/params/x/1\""));
	out = ask(f, "{\"id\":5,\"method\":\"test/fail\",\"params\":{\"k\\u0000\":1}}");
	assert_int_equal(handled, 0);
	assert_non_null(strstr(out, "\"path\":\"/params/k\\u0000\""));
	/* "\\u0000" is a backslash and "u0000": no NUL, the handler runs. */
	out = ask(f,
		"{\"id\":6,\"method\":\"test/fail\",\"params\":{\"code\":2,\"message\":"
		"\"\\\\u0000\"}}");
	assert_int_equal(handled, 1);
	assert_string_equal(out, "{\"error\":{\"code\":2,\"message\":\"\\\\u0000\"},\"id\":6}\n");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_errors_as_jansson, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_not_utf8, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nul_check, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
