/*
 * `app-server mock-model` as users run it: a separate process on an ephemeral loopback port
 * (printed on the first line of stdout and written to --port-file), answering POST
 * .../responses and .../chat/completions from a script, recording every request as a JSON
 * line, serving several clients at once, and exiting 0 on SIGTERM (under ASan that exit also
 * proves it leaked nothing). Requests are made with libcurl's easy and multi interfaces.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "harness.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

struct mm {
	pid_t pid;
	char dir[64];
	char *record, *port_file;
	int port;
	FILE *out; /* its stdout */
};

/* Start `app-server mock-model` with a script (JSON text; NULL: no --script), recording
 * every request unless norecord. */
static void
mm_spawn(struct mm *m, const char *script, int norecord)
{
	const char *bin = getenv("APP_SERVER_BIN");
	char *spath = NULL, line[64];
	int pfd[2], fd;
	FILE *f;

	memset(m, 0, sizeof *m);
	if (bin == NULL)
		bin = "build/app-server";
	snprintf(m->dir, sizeof m->dir, "/tmp/test_model.XXXXXX");
	assert_non_null(mkdtemp(m->dir));
	m->record = xasprintf("%s/record.jsonl", m->dir);
	m->port_file = xasprintf("%s/port", m->dir);
	if (script != NULL) {
		spath = xasprintf("%s/script.json", m->dir);
		f = fopen(spath, "w");
		fputs(script, f);
		fclose(f);
	}
	assert_int_equal(pipe(pfd), 0);
	m->pid = fork();
	assert_true(m->pid >= 0);
	if (m->pid == 0) {
		fd = open("/dev/null", O_RDWR);
		dup2(fd, 0);
		dup2(pfd[1], 1);
		if (getenv("TEST_MODEL_VERBOSE") == NULL)
			dup2(fd, 2);
		close(pfd[0]);
		if (norecord)
			execl(bin, bin, "mock-model", "--port-file", m->port_file, (char *)NULL);
		else if (spath != NULL)
			execl(bin, bin, "mock-model", "--listen", "127.0.0.1:0", "--script", spath,
				"--record", m->record, "--port-file", m->port_file, (char *)NULL);
		else
			execl(bin, bin, "mock-model", "--record", m->record, "--port-file",
				m->port_file, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	m->out = fdopen(pfd[0], "r");
	assert_non_null(fgets(line, sizeof line, m->out));
	m->port = (int)strtol(line, NULL, 10);
	assert_true(m->port > 0);
	free(spath);
}

static void
mm_start(struct mm *m, const char *script)
{
	mm_spawn(m, script, 0);
}

/* SIGTERM; it must exit 0. Files are removed. */
static void
mm_stop(struct mm *m)
{
	int status;
	char *p;

	kill(m->pid, SIGTERM);
	assert_int_equal(waitpid(m->pid, &status, 0), m->pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("mock-model ended with wait status %#x", status);
	fclose(m->out);
	unlink(m->record);
	unlink(m->port_file);
	p = xasprintf("%s/script.json", m->dir);
	unlink(p);
	free(p);
	rmdir(m->dir);
	free(m->record);
	free(m->port_file);
}

static json_t *
mm_records(struct mm *m)
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

/* A response body collected by curl. */
struct body {
	char *s;
	size_t len;
};

static size_t
body_cb(char *p, size_t size, size_t n, void *arg)
{
	struct body *b = arg;

	b->s = xrealloc(b->s, b->len + size * n + 1);
	memcpy(b->s + b->len, p, size * n);
	b->len += size * n;
	b->s[b->len] = '\0';
	return size * n;
}

/* An easy handle for METHOD path with body (NULL: GET). */
static CURL *
request(const struct mm *m, const char *path, const char *post, struct body *b,
	struct curl_slist **hdrs)
{
	CURL *e = curl_easy_init();
	char *url = xasprintf("http://127.0.0.1:%d%s", m->port, path);

	memset(b, 0, sizeof *b);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, body_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(e, CURLOPT_TIMEOUT, 20L);
	*hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	*hdrs = curl_slist_append(*hdrs, "Authorization: Bearer sk-recorded");
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, *hdrs);
	if (post != NULL)
		curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, post);
	free(url);
	return e;
}

/* Make one request; returns the status, fills the body. */
static long
fetch(const struct mm *m, const char *path, const char *post, struct body *b)
{
	struct curl_slist *h;
	CURL *e = request(m, path, post, b, &h);
	long status = 0;

	assert_int_equal(curl_easy_perform(e), CURLE_OK);
	curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(e);
	curl_slist_free_all(h);
	return status;
}

static void
test_responses_and_record(void **state)
{
	struct mm m;
	struct body b;
	json_t *rec, *r0;
	char port[32];
	FILE *f;

	mm_start(&m,
		"{\"responses\":[{\"events\":[{\"ev\":\"created\",\"id\":\"resp-1\"},"
		"{\"ev\":\"message\",\"id\":\"msg-1\",\"text\":\"Done\"},{\"ev\":\"completed\","
		"\"id\":\"resp-1\"}]},{\"status\":500,\"body\":{\"error\":{\"message\":\"x\"}}}]}");
	/* The port file says the same as stdout. */
	f = fopen(m.port_file, "r");
	assert_non_null(f);
	assert_non_null(fgets(port, sizeof port, f));
	fclose(f);
	assert_int_equal(strtol(port, NULL, 10), m.port);

	assert_int_equal(
		fetch(&m, "/v1/responses", "{\"model\":\"mock-model\",\"input\":[]}", &b), 200);
	assert_string_equal(b.s,
		"event: response.created\n"
		"data: {\"type\":\"response.created\",\"response\":{\"id\":\"resp-1\"}}\n\n"
		"event: response.output_item.done\n"
		"data: {\"type\":\"response.output_item.done\",\"item\":{\"type\":\"message\","
		"\"role\":\"assistant\",\"id\":\"msg-1\",\"content\":[{\"type\":\"output_text\","
		"\"text\":\"Done\"}]}}\n\n"
		"event: response.completed\n"
		"data: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp-1\",\"usage\":"
		"{\"input_tokens\":0,\"input_tokens_details\":null,\"output_tokens\":0,"
		"\"output_tokens_details\":null,\"total_tokens\":0}}}\n\n");
	free(b.s);
	assert_int_equal(fetch(&m, "/api/v2/responses?api-version=1", "{}", &b), 500);
	free(b.s);
	/* Past the script: a 404 that says so. */
	assert_int_equal(fetch(&m, "/v1/responses", "{}", &b), 404);
	assert_non_null(strstr(b.s, "no scripted response for request 3"));
	free(b.s);
	/* Other endpoints do not consume the script. */
	assert_int_equal(fetch(&m, "/v1/models", NULL, &b), 200);
	free(b.s);
	assert_int_equal(fetch(&m, "/v1/other", "{}", &b), 404);
	free(b.s);

	rec = mm_records(&m);
	assert_int_equal(json_array_size(rec), 5);
	r0 = json_array_get(rec, 0);
	assert_string_equal(json_string_value(json_object_get(r0, "method")), "POST");
	assert_string_equal(json_string_value(json_object_get(r0, "path")), "/v1/responses");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(r0, "headers"), "authorization")),
		"Bearer sk-recorded");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(r0, "body"), "model")),
		"mock-model");
	assert_int_equal(json_integer_value(json_object_get(r0, "response")), 0);
	assert_string_equal(json_string_value(json_object_get(json_array_get(rec, 1), "path")),
		"/api/v2/responses?api-version=1");
	assert_true(json_is_null(json_object_get(json_array_get(rec, 2), "response")));
	json_decref(rec);
	mm_stop(&m);
}

static void
test_chat_endpoint(void **state)
{
	struct mm m;
	struct body b;

	mm_start(&m,
		"[{\"events\":[{\"ev\":\"created\"},{\"ev\":\"text_delta\",\"delta\":\"Hi\"},"
		"{\"ev\":\"message\",\"text\":\"Hi\"},{\"ev\":\"completed\",\"input_tokens\":3,"
		"\"output_tokens\":1}]}]");
	assert_int_equal(
		fetch(&m, "/v1/chat/completions", "{\"model\":\"m\",\"messages\":[]}", &b), 200);
	assert_non_null(strstr(b.s, "\"delta\":{\"role\":\"assistant\"}"));
	assert_non_null(strstr(b.s, "\"delta\":{\"content\":\"Hi\"}"));
	assert_non_null(strstr(b.s, "\"finish_reason\":\"stop\""));
	assert_non_null(strstr(b.s,
		"\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,"
		"\"total_tokens\":4}"));
	assert_non_null(strstr(b.s, "data: [DONE]\n\n"));
	/* The message's full text is not sent again after its deltas. */
	assert_null(strstr(strstr(b.s, "\"content\":\"Hi\"") + 1, "\"content\":\"Hi\""));
	free(b.s);
	mm_stop(&m);
}

static void
test_default_script(void **state)
{
	struct mm m;
	struct body b;

	mm_start(&m, NULL);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(fetch(&m, "/v1/responses", "{}", &b), 200);
		assert_non_null(strstr(b.s, "Hello from mock-model."));
		assert_non_null(strstr(b.s, "response.completed"));
		free(b.s);
	}
	mm_stop(&m);
}

/* A process's VmRSS in KiB (0 when unreadable). */
static long
rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f != NULL && fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, "VmRSS:", 6) == 0)
			kib = strtol(line + 6, NULL, 10);
	if (f != NULL)
		fclose(f);
	return kib;
}

/*
 * Without --record, a request's body is not kept: 30 requests of 256 KiB of small JSON
 * objects leave the mock's RSS where it was (the body used to be parsed, and leaked, before
 * the check for --record: ~4.5 MiB of jansson objects per request, found by tests/soak).
 * Under ASan the leak makes mm_stop's exit status check fail instead.
 */
static void
test_no_record_keeps_nothing(void **state)
{
	struct buf big = {0};
	struct mm m;
	struct body b;
	long before, after;

	(void)state;
	buf_init(&big, 1 << 20);
	buf_adds(&big, "{\"model\":\"mock-model\",\"input\":[");
	for (int i = 0; big.len < (256 << 10); i++)
		buf_printf(&big, "%s{\"type\":\"message\",\"n\":%d}", i ? "," : "", i);
	buf_adds(&big, "]}");
	mm_spawn(&m, NULL, 1);
	assert_int_equal(fetch(&m, "/v1/responses", big.ptr, &b), 200);
	free(b.s);
	before = rss_kib(m.pid);
	for (int i = 0; i < 30; i++) {
		assert_int_equal(fetch(&m, "/v1/responses", big.ptr, &b), 200);
		assert_non_null(strstr(b.s, "Hello from mock-model."));
		free(b.s);
	}
	after = rss_kib(m.pid);
	mm_stop(&m); /* first: a failed check must not leave the mock running */
	buf_free(&big);
	/* ASan keeps freed memory in quarantine: there LeakSanitizer's exit status tells. */
	if (!asc_sanitized() && after - before > 16 * 1024)
		fail_msg("mock-model RSS grew from %ld to %ld KiB over 30 requests", before, after);
}

/* Several clients at once, each response stretched by delays: served concurrently. */
static void
test_concurrent_clients(void **state)
{
	enum { N = 8 };
	struct mm m;
	struct body b[N];
	struct curl_slist *h[N];
	CURL *e[N];
	CURLM *multi = curl_multi_init();
	struct timespec t0, t1;
	int running = 1;
	double ms;

	mm_start(&m,
		"{\"repeat\":true,\"responses\":[{\"events\":[{\"ev\":\"created\"},"
		"{\"ev\":\"text_delta\",\"delta\":\"a\",\"delay_ms\":100},{\"ev\":\"text_delta\","
		"\"delta\":\"b\",\"delay_ms\":100},{\"ev\":\"completed\",\"delay_ms\":100}]}]}");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < N; i++) {
		e[i] = request(&m, "/v1/responses", "{}", &b[i], &h[i]);
		curl_multi_add_handle(multi, e[i]);
	}
	while (running) {
		curl_multi_perform(multi, &running);
		if (running)
			curl_multi_poll(multi, NULL, 0, 100, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1000 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	for (int i = 0; i < N; i++) {
		assert_non_null(strstr(b[i].s, "\"delta\":\"a\""));
		assert_non_null(strstr(b[i].s, "response.completed"));
		curl_multi_remove_handle(multi, e[i]);
		curl_easy_cleanup(e[i]);
		curl_slist_free_all(h[i]);
		free(b[i].s);
	}
	curl_multi_cleanup(multi);
	/* One response takes 300 ms; served one after another they would take 2.4 s. */
	assert_true(ms < asc_timeout(1500));
	mm_stop(&m);
}

/* The fixture scripts shipped for users load and play (run from the repository root). */
static void
test_fixture_script(void **state)
{
	struct mm m;
	struct body b;
	FILE *f = fopen("tests/fixtures/mock-model/tool_call_then_answer.json", "r");
	char *text = xcalloc(1, 1 << 16);

	assert_non_null(f);
	assert_true(fread(text, 1, (1 << 16) - 1, f) > 0);
	fclose(f);
	mm_start(&m, text);
	assert_int_equal(fetch(&m, "/v1/responses", "{}", &b), 200);
	assert_non_null(strstr(b.s, "\"type\":\"function_call\""));
	assert_non_null(strstr(b.s, "\"arguments\":\"{\\\"cmd\\\":\\\"ls\\\""));
	free(b.s);
	assert_int_equal(fetch(&m, "/v1/responses", "{}", &b), 200);
	assert_non_null(strstr(b.s, "\"text\":\"Done\""));
	free(b.s);
	mm_stop(&m);
	free(text);
}

/* A bad script is refused at start with a clear message and exit status 1. */
static void
test_bad_script(void **state)
{
	const char *bin = getenv("APP_SERVER_BIN");
	char dir[] = "/tmp/test_model.XXXXXX", *spath, buf[512] = "";
	int pfd[2], status, fd;
	ssize_t n;
	pid_t pid;
	FILE *f;

	if (bin == NULL)
		bin = "build/app-server";
	assert_non_null(mkdtemp(dir));
	spath = xasprintf("%s/script.json", dir);
	f = fopen(spath, "w");
	fputs("{\"responses\":[{\"events\":[{\"ev\":\"no_such_event\"}]}]}", f);
	fclose(f);
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		fd = open("/dev/null", O_RDWR);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(pfd[1], 2);
		execl(bin, bin, "mock-model", "--script", spath, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	for (size_t len = 0; (n = read(pfd[0], buf + len, sizeof buf - len - 1)) > 0;) {
		len += (size_t)n;
		buf[len] = '\0';
	}
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	assert_non_null(strstr(buf, "responses[0].events[0]: unknown event `no_such_event`"));
	unlink(spath);
	rmdir(dir);
	free(spath);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_responses_and_record),
		cmocka_unit_test(test_chat_endpoint),
		cmocka_unit_test(test_default_script),
		cmocka_unit_test(test_no_record_keeps_nothing),
		cmocka_unit_test(test_concurrent_clients),
		cmocka_unit_test(test_fixture_script),
		cmocka_unit_test(test_bad_script),
	};
	int r;

	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return r;
}
