/*
 * MCP over streamable HTTP end to end: the real binary, the mock model and our MCP server in
 * its HTTP mode (tests/fixtures/mcp/mcp_server.py --http), then @modelcontextprotocol/
 * server-everything in streamableHttp mode from npm (installed into $BUILD/mcp-npm; skipped and
 * counted where npm cannot). What upstream 0.169 sent and did with the same server is recorded
 * in tests/fixtures/mcp/upstream/http_sse.json and http_json.json (record.py): its headers
 * (Accept, User-Agent, the config's http_headers, env_http_headers and bearer token,
 * Mcp-Session-Id and MCP-Protocol-Version after initialize), the GET stream it opens, the
 * DELETE of the session at the end, and the items.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "mcp_util.h"
#include "tests/helpers/skip_note.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

/* Our MCP server in HTTP mode, its port and log. */
struct hs {
	pid_t pid;
	int port;
	char dir[64], log[96];
};

static pid_t hs_live; /* a server of the running test: killed by the teardown when it fails */

static int
hs_teardown(void **state)
{
	(void)state;
	if (hs_live > 0) {
		kill(hs_live, SIGTERM);
		waitpid(hs_live, NULL, 0);
		hs_live = 0;
	}
	return 0;
}

static void
hs_start(struct hs *h, const char *const *more)
{
	char pf[128], path[PATH_MAX];
	const char *argv[24];
	size_t n = 0;
	FILE *fp;

	assert_non_null(realpath(SERVER, path));
	snprintf(h->dir, sizeof h->dir, "/tmp/mcphttp.XXXXXX");
	assert_non_null(mkdtemp(h->dir));
	snprintf(h->log, sizeof h->log, "%s/log", h->dir);
	snprintf(pf, sizeof pf, "%s/port", h->dir);
	argv[n++] = "python3";
	argv[n++] = path;
	argv[n++] = "--http";
	argv[n++] = pf;
	argv[n++] = "--log";
	argv[n++] = h->log;
	for (size_t i = 0; more != NULL && more[i] != NULL; i++)
		argv[n++] = more[i];
	argv[n] = NULL;
	h->pid = fork();
	assert_true(h->pid >= 0);
	if (h->pid == 0) {
		execvp("python3", (char *const *)argv);
		_exit(127);
	}
	hs_live = h->pid;
	for (int i = 0; i < 200 && (fp = fopen(pf, "r")) == NULL; i++)
		usleep(25000);
	assert_non_null(fp);
	assert_int_equal(fscanf(fp, "%d", &h->port), 1);
	fclose(fp);
}

static void
hs_stop(struct hs *h)
{
	char cmd[128];

	kill(h->pid, SIGTERM);
	waitpid(h->pid, NULL, 0);
	hs_live = 0;
	snprintf(cmd, sizeof cmd, "%s/port", h->dir);
	unlink(cmd);
	unlink(h->log);
	rmdir(h->dir);
}

/* Every line of the server's log (new reference). */
static json_t *
hs_log(const struct hs *h)
{
	json_t *a = json_array(), *m;
	char *line = NULL;
	size_t cap = 0;
	FILE *fp = fopen(h->log, "r");

	assert_non_null(fp);
	while (getline(&line, &cap, fp) > 0)
		if ((m = json_loads(line, 0, NULL)) != NULL)
			json_array_append_new(a, m);
	fclose(fp);
	free(line);
	return a;
}

/* A daemon whose config has [mcp_servers.test] at url with extra TOML; env more variables. */
static void
http_start(struct tt *f, const char *script, int port, const char *extra, const char *const *env)
{
	struct tt_opts o = {0};
	char *cfg = xasprintf(
		"[mcp_servers.test]\nurl = \"http://127.0.0.1:%d/mcp\"\n%s\n", port, extra ?: "");
	char *s = tt_script(script);

	o.script = s;
	o.config_extra = cfg;
	o.env = env;
	o.experimental = 1;
	tt_start(f, &o);
	free(cfg);
	free(s);
}

/* The next startupStatus that is not `starting` (new reference). */
static json_t *
http_settled(struct tt *f)
{
	json_t *m, *p;

	for (;;) {
		m = asc_wait_notification(
			f->c, "mcpServer/startupStatus/updated", asc_timeout(10000));
		assert_non_null(m);
		p = json_incref(json_object_get(m, "params"));
		json_decref(m);
		if (strcmp(json_string_value(json_object_get(p, "status")), "starting") != 0)
			return p;
		json_decref(p);
	}
}

/* The mcpToolCall items of a turn against a fixture's (times aside). */
static void
http_items(const json_t *msgs, const char *fixture)
{
	json_t *want = mcp_fixture(fixture);

	mcp_compare_items(msgs, want);
	json_decref(want);
}

/* The headers upstream sent, as ours: every POST after initialize has the session and version. */
static void
http_check_headers(const json_t *log)
{
	json_t *m, *hd;
	size_t i;
	int posts = 0, gets = 0, deletes = 0, later = 0;

	json_array_foreach(log, i, m)
	{
		const char *meth = json_string_value(json_object_get(m, "http"));

		if (meth == NULL)
			continue;
		hd = json_object_get(m, "headers");
		assert_string_equal(json_string_value(json_object_get(hd, "user-agent")),
			"codex-mcp-client/0.169.0");
		assert_string_equal(
			json_string_value(json_object_get(hd, "authorization")), "Bearer tok");
		assert_string_equal(json_string_value(json_object_get(hd, "x-static")), "s");
		assert_string_equal(json_string_value(json_object_get(hd, "x-env")), "e");
		if (strcmp(meth, "POST") == 0) {
			const char *what = json_string_value(
				json_object_get(json_array_get(log, i + 1), "method"));

			assert_string_equal(json_string_value(json_object_get(hd, "accept")),
				"text/event-stream, application/json");
			assert_string_equal(json_string_value(json_object_get(hd, "content-type")),
				"application/json");
			posts++;
			if (strcmp(what ?: "", "initialize") != 0) { /* after initialize */
				assert_non_null(json_object_get(hd, "mcp-session-id"));
				assert_string_equal(json_string_value(json_object_get(
							    hd, "mcp-protocol-version")),
					"2025-06-18");
				later++;
			}
		} else if (strcmp(meth, "GET") == 0) {
			gets++;
			assert_string_equal(json_string_value(json_object_get(hd, "accept")),
				"text/event-stream, application/json");
			assert_non_null(json_object_get(hd, "mcp-session-id"));
		} else if (strcmp(meth, "DELETE") == 0) {
			deletes++;
			assert_non_null(json_object_get(hd, "mcp-session-id"));
		}
	}
	assert_true(later >= 2); /* notifications/initialized, tools/list, the calls */
	assert_true(gets >= 1);
	assert_true(deletes >= 1);
}

static const char *const env_tok[] = {"MCP_TOKEN=tok", "MCP_HDR=e", NULL};
#define HTTP_TOML                                                                                  \
	"bearer_token_env_var = \"MCP_TOKEN\"\nhttp_headers = { \"X-Static\" = \"s\" }\n"          \
	"env_http_headers = { \"X-Env\" = \"MCP_HDR\" }\n"

/* Answers as event streams: the items as upstream's, progress on the call's stream, the
 * headers as upstream's, a session DELETEd when its servers stop. */
static void
test_sse_as_upstream(void **state)
{
	static const char *const more[] = {
		"--sse", "--get-stream", "--need-header", "Authorization=Bearer tok", NULL};
	struct hs h;
	struct tt f;
	json_t *msgs, *p, *log;

	(void)state;
	hs_start(&h, more);
	http_start(&f,
		SCRIPT(CALL("call-1", "echo", "{\\`text\\`:\\`hi\\`}") "," CALL(
			"call-2", "progress", "{\\`steps\\`:2}")),
		h.port, HTTP_TOML, env_tok);
	p = http_settled(&f);
	assert_string_equal(json_string_value(json_object_get(p, "status")), "ready");
	json_decref(p);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	http_items(msgs, "http_sse");
	assert_int_equal(tt_count(msgs, "item/mcpToolCall/progress"), 2);
	json_decref(msgs);
	/* servers started for one request and stopped after it: their session is DELETEd */
	json_decref(tt_call(&f, "mcpServerStatus/list", json_object()));
	usleep(500000);
	tt_stop(&f);
	log = hs_log(&h);
	http_check_headers(log);
	json_decref(log);
	hs_stop(&h);
}

/* Answers as JSON, and what the server sends on its GET stream (tools/list_changed): the next
 * model request offers the new tool. */
static void
test_json_and_server_stream(void **state)
{
	static const char *const more[] = {"--get-stream", NULL};
	struct hs h;
	struct tt f;
	json_t *msgs, *p, *recs, *ns, *t;
	size_t i;
	int added = 0;

	(void)state;
	hs_start(&h, more);
	http_start(&f,
		"{`responses`:[" RESP("0",
			CALL("call-1", "echo", "{\\`text\\`:\\`hi\\`}") "," CALL(
				"call-2", "change", "{}")) "," MSG("1") "," MSG("2") "]}",
		h.port, HTTP_TOML, env_tok);
	p = http_settled(&f);
	assert_string_equal(json_string_value(json_object_get(p, "status")), "ready");
	json_decref(p);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	http_items(msgs, "http_json");
	json_decref(msgs);
	msgs = tt_turn(&f, "again", NULL, NULL, NULL);
	json_decref(msgs);
	recs = mm_records(&f.mm);
	ns = NULL;
	json_array_foreach(
		json_object_get(tt_request_body(recs, json_array_size(recs) - 1), "tools"), i,
		t) if (strcmp(json_string_value(json_object_get(t, "name")) ?: "", "mcp__test") ==
		0) ns = t;
	assert_non_null(ns);
	json_array_foreach(json_object_get(ns, "tools"), i, t) added |=
		strcmp(json_string_value(json_object_get(t, "name")), "added") == 0;
	assert_true(added);
	json_decref(recs);
	tt_stop(&f);
	hs_stop(&h);
}

/*
 * A 50 MB result over HTTP (a JSON body, or one event of a stream) is parsed beside the loop:
 * a request sent once the daemon's log says the parse started is answered before the call's
 * item completes (parsed on the loop, the item completed first: the request was read only
 * after the parse). No timing: the log marks the parse's start, the order shows the loop free.
 */
static void
http_big(const char *mode)
{
	/* the parse waits first (2 s, 8 under ASan): the request below is surely read during it,
	 * however slow this test is to see the log line (a 50 MB parse alone takes less) */
	char pause[64];
	const char *const env[] = {"APP_SERVER_LOG=info", pause, NULL};
	const char *const more[] = {mode, NULL};
	struct hs h;
	struct tt f;
	json_t *p, *msgs, *it;
	long long id, deadline;
	char *err = NULL;
	size_t at, done;

	snprintf(pause, sizeof pause, "APP_SERVER_MCP_PARSE_PAUSE_MS=%d",
		asc_sanitized() ? 8000 : 2000);
	hs_start(&h, more);
	http_start(&f, SCRIPT(CALL("call-1", "big", "{\\`mb\\`:50}")), h.port, NULL, env);
	json_decref(http_settled(&f));
	p = json_pack("{s:s, s:o}", "threadId", f.thread_id, "input", tt_text("hi"));
	id = asc_request(f.c, "turn/start", p);
	asc_assert_result(asc_wait_response(f.c, id, asc_timeout(5000)));
	deadline = asc_now_ms() + asc_timeout(30000);
	do {
		free(err);
		usleep(2000);
		err = asc_stderr(f.c);
	} while (strstr(err, "-byte message beside the loop") == NULL && asc_now_ms() < deadline);
	assert_non_null(strstr(err, "-byte message beside the loop"));
	id = asc_request(f.c, "thread/loaded/list", json_object());
	msgs = tt_collect(&f, NULL, NULL);
	at = mcp_answer_at(msgs, id);
	done = mcp_completed_at(msgs, "mcpToolCall");
	fprintf(stderr, "%s: thread/loaded/list answered at %zu, the big item completed at %zu\n",
		mode, at, done);
	assert_true(at != SIZE_MAX && done != SIZE_MAX);
	assert_true(at < done);
	it = tt_item(msgs, "mcpToolCall", 0);
	assert_string_equal(json_string_value(json_object_get(it, "status")), "completed");
	free(err);
	json_decref(msgs);
	tt_stop(&f);
	hs_stop(&h);
}

static void
test_big_result_beside_the_loop(void **state)
{
	(void)state;
	http_big("--sse");
	http_big("--get-stream"); /* answers as JSON bodies */
}

/* The server's own request on a call's event stream (ping) is answered by a POST. */
static void
test_server_request_on_stream(void **state)
{
	static const char *const more[] = {"--sse", NULL};
	struct hs h;
	struct tt f;
	json_t *msgs, *it, *p;

	(void)state;
	hs_start(&h, more);
	http_start(&f, SCRIPT(CALL("call-1", "pingme", "{}")), h.port, NULL, NULL);
	p = http_settled(&f);
	json_decref(p);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	it = tt_item(msgs, "mcpToolCall", 0);
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(
				json_object_get(json_object_get(it, "result"), "content"), 0),
			"text")),
		"pinged");
	json_decref(msgs);
	tt_stop(&f);
	hs_stop(&h);
}

/* A server that refuses (401), one that is not there, a token that is not set: failed, with
 * why, and thread/start answered anyway. */
static void
test_failures(void **state)
{
	static const char *const more[] = {"--need-header", "X-Env=other", NULL};
	struct hs h;
	struct tt f;
	json_t *p;
	int sock;
	struct sockaddr_in sa = {0};
	socklen_t len = sizeof sa;

	(void)state;
	hs_start(&h, more);
	http_start(&f, "{`responses`:[" MSG("9") "],`repeat`:true}", h.port, HTTP_TOML, env_tok);
	p = http_settled(&f);
	assert_string_equal(json_string_value(json_object_get(p, "status")), "failed");
	assert_non_null(strstr(json_string_value(json_object_get(p, "error")), "HTTP 401"));
	json_decref(p);
	tt_stop(&f);
	hs_stop(&h);
	/* nobody listens on a port just freed */
	sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(sock, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(getsockname(sock, (struct sockaddr *)&sa, &len), 0);
	close(sock);
	http_start(
		&f, "{`responses`:[" MSG("9") "],`repeat`:true}", ntohs(sa.sin_port), NULL, NULL);
	p = http_settled(&f);
	assert_string_equal(json_string_value(json_object_get(p, "status")), "failed");
	json_decref(p);
	tt_stop(&f);
	/* the bearer token's variable is not set */
	http_start(&f, "{`responses`:[" MSG("9") "],`repeat`:true}", ntohs(sa.sin_port), HTTP_TOML,
		NULL);
	p = http_settled(&f);
	assert_string_equal(json_string_value(json_object_get(p, "status")), "failed");
	assert_non_null(strstr(json_string_value(json_object_get(p, "error")), "MCP_TOKEN"));
	json_decref(p);
	tt_stop(&f);
}

/* server-everything over streamable HTTP: the same tools and echo as upstream got over stdio. */
static void
test_server_everything_http(void **state)
{
	char *entry = mcp_everything_entry(), port[16], *cfg, *s, *preload;
	struct sockaddr_in sa = {0};
	socklen_t len = sizeof sa;
	struct tt_opts o = {0};
	struct tt f;
	json_t *msgs, *want, *recs, *t, *got = NULL;
	int sock, up = 0;
	pid_t pid;
	size_t i;

	(void)state;
	if (entry == NULL) {
		skip_test("npm cannot install @modelcontextprotocol/server-everything here");
		return;
	}
	preload = mcp_everything_preload();
	sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(sock, (struct sockaddr *)&sa, sizeof sa), 0);
	assert_int_equal(getsockname(sock, (struct sockaddr *)&sa, &len), 0);
	close(sock);
	snprintf(port, sizeof port, "%d", ntohs(sa.sin_port));
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		setenv("PORT", port, 1);
		execlp("node", "node", "-r", preload, entry, "streamableHttp", (char *)NULL);
		_exit(127);
	}
	hs_live = pid;
	for (int k = 0; k < 200 && !up; k++) { /* until it listens */
		sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		up = connect(sock, (struct sockaddr *)&sa, sizeof sa) == 0;
		close(sock);
		if (!up)
			usleep(50000);
	}
	assert_true(up);
	cfg = xasprintf("[mcp_servers.everything]\nurl = \"http://127.0.0.1:%s/mcp\"\n", port);
	s = tt_script("{`responses`:[" RESP("0",
		"{`type`:`response.output_item.done`,`item`:{`type`:`function_call`,`call_id`:`call-1`,"
		"`name`:`echo`,`namespace`:`mcp__everything`,`arguments`:`{\\`message\\`:\\`hi\\`}`}}") "," MSG("1") "]}");
	o.script = s;
	o.config_extra = cfg;
	tt_start(&f, &o);
	t = http_settled(&f);
	assert_string_equal(json_string_value(json_object_get(t, "status")), "ready");
	json_decref(t);
	msgs = tt_turn(&f, "hi", NULL, NULL, NULL);
	want = json_load_file(FIXTURES "everything.json", 0, NULL);
	assert_non_null(want);
	recs = mm_records(&f.mm);
	json_array_foreach(json_object_get(tt_request_body(recs, 0), "tools"), i,
		t) if (strcmp(json_string_value(json_object_get(t, "name")) ?: "",
			       "mcp__everything") == 0) got = t;
	json_array_foreach(json_object_get(want, "tools"), i,
		t) if (strcmp(json_string_value(json_object_get(t, "name")) ?: "",
			       "mcp__everything") == 0)
		mcp_equal("server-everything's tools over HTTP", t, got);
	http_items(msgs, "everything");
	json_decref(recs);
	json_decref(want);
	json_decref(msgs);
	tt_stop(&f);
	hs_teardown(NULL);
	free(cfg);
	free(s);
	free(entry);
	free(preload);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_sse_as_upstream, hs_teardown),
		cmocka_unit_test_teardown(test_json_and_server_stream, hs_teardown),
		cmocka_unit_test_teardown(test_server_request_on_stream, hs_teardown),
		cmocka_unit_test_teardown(test_big_result_beside_the_loop, hs_teardown),
		cmocka_unit_test_teardown(test_failures, hs_teardown),
		cmocka_unit_test_teardown(test_server_everything_http, hs_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
