/*
 * bench_mcp: MCP servers in threads, through the real daemon against `app-server mock-model`
 * and our test MCP server (tests/fixtures/mcp/mcp_server.py), side by side with upstream when
 * BENCH_MCP_UPSTREAM names its codex binary (issue 26's figures).
 *
 *   call     one MCP tool call (echo) inside a turn, over the server's own time: from the answer
 *            about to be written by the server to the item/completed read by the client, plus
 *            from the
 *            item/started read to the request read by the server when that comes later (the
 *            request usually reaches the server first); one CLOCK_MONOTONIC for the bench and
 *            the server (--timing); median over --runs; goal 0.5 ms
 *   startup  5 stdio servers: thread/start's answer (it must not wait for them) and the last
 *            `ready` after the request, median over 5 threads
 *   rss      the daemon's RSS with a thread of 5 connected servers less that with a thread of
 *            none, per server (the servers' own processes are not counted: they are the user's)
 *
 * Every turn must end completed with its item completed: anything else is a failure (exit 1).
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/benchlib.h"
#include "lib/lineconn.h"
#include "protocol/xmalloc.h"

#define BM_SERVER "tests/fixtures/mcp/mcp_server.py"

struct bm_opts {
	struct bench_target t;
	long runs;
	int json;
	const char *upstream;
};

/*
 * Each turn: the model calls echo on server `test`, then answers. The mock repeats only its
 * last response, so the script holds one such pair per turn (pairs of them, then the answer).
 */
#define BM_CALL                                                                                    \
	"{\"events\":[{\"ev\":\"created\",\"id\":\"r0\"},{\"type\":\"response.output_item.done\"," \
	"\"item\":{\"type\":\"function_call\",\"call_id\":\"call-1\",\"name\":\"echo\","           \
	"\"namespace\":\"mcp__test\",\"arguments\":\"{\\\"text\\\":\\\"hi\\\"}\"}},{\"ev\":"       \
	"\"completed\",\"id\":\"r0\"}]}"
#define BM_ANSWER                                                                                  \
	"{\"events\":[{\"ev\":\"created\",\"id\":\"r1\"},{\"ev\":\"message\",\"id\":\"m1\","       \
	"\"text\":\"done\"},{\"ev\":\"completed\",\"id\":\"r1\"}]}"

/* The script for that many turns (heap). */
static char *
bm_script(long pairs)
{
	char *s = xstrdup("{\"responses\":["), *t;

	for (long i = 0; i < pairs; i++) {
		t = xasprintf("%s" BM_CALL "," BM_ANSWER ",", s);
		free(s);
		s = t;
	}
	t = xasprintf("%s" BM_ANSWER "],\"repeat\":true}", s);
	free(s);
	return t;
}

/* The mock on a script of pairs call-and-answer turns. */
static int
bm_mock_start(struct bench_mock *m, const char *bin, long pairs)
{
	char *script = bm_script(pairs);
	int r = bench_mock_model(m, bin, "/tmp/bench_mcp_mm.XXXXXX", script);

	free(script);
	return r;
}

/* config.toml: the mock, and n servers (test when n is 1, else s0..), timing into tfile. */
static void
bm_config(int port, int n, const char *tfile)
{
	char *p = xasprintf("%s/config.toml", getenv("CODEX_HOME")), path[PATH_MAX];
	FILE *f = fopen(p, "w");

	if (f == NULL || realpath(BM_SERVER, path) == NULL) {
		free(p);
		if (f != NULL)
			fclose(f);
		return;
	}
	fprintf(f,
		"model = \"mock-model\"\napproval_policy = \"never\"\nsandbox_mode = \"read-only\"\n"
		"model_provider = \"mock_provider\"\n[features]\nremote_models = false\n"
		"[model_providers.mock_provider]\nname = \"mock\"\n"
		"base_url = \"http://127.0.0.1:%d/v1\"\nwire_api = \"responses\"\n"
		"request_max_retries = 0\nstream_max_retries = 0\n",
		port);
	for (int i = 0; i < n; i++)
		fprintf(f,
			"[mcp_servers.%s%.0d]\ncommand = \"python3\"\nargs = [\"%s\", \"--timing\", "
			"\"%s\"]\n",
			n == 1 ? "test" : "s", n == 1 ? 0 : i + 1, path, tfile);
	fclose(f);
	free(p);
}

/* thread/start; its id in tid; the seconds to its answer in *ans. 0 or -1. */
static int
bm_thread(struct bench_lc *c, char tid[64], double *ans)
{
	char *params =
		xasprintf("{\"cwd\":\"%s\",\"approvalPolicy\":\"never\"}", getenv("CODEX_HOME"));
	double t0 = bench_now();
	char *line = bench_lc_call(c, "thread/start", params, 30), *p;
	int r = -1;

	*ans = bench_now() - t0;
	if (line != NULL && (p = strstr(line, "\"thread\":{\"id\":\"")) != NULL) {
		snprintf(tid, 64, "%.36s", p + 16);
		r = 0;
	}
	free(line);
	free(params);
	return r;
}

/* Read until n servers of the thread are ready (or failed: -1); the time of the last. */
static int
bm_ready(struct bench_lc *c, int n, double *at)
{
	char *line;
	double when;

	while (n > 0 && (line = bench_lc_line(c, 30, &when)) != NULL) {
		if (strstr(line, "mcpServer/startupStatus/updated") != NULL) {
			if (strstr(line, "\"status\":\"failed\"") != NULL) {
				free(line);
				return -1;
			}
			if (strstr(line, "\"status\":\"ready\"") != NULL) {
				n--;
				*at = when;
			}
		}
		free(line);
	}
	return n == 0 ? 0 : -1;
}

/* The last line of the timing file: when the request was read and its answer written. */
static int
bm_server_time(const char *tfile, double *recv, double *sent)
{
	FILE *f = fopen(tfile, "r");
	char buf[96];
	int r = -1;

	while (f != NULL && fgets(buf, sizeof buf, f) != NULL)
		r = sscanf(buf, "%lf %lf", recv, sent) == 2 ? 0 : -1;
	if (f != NULL)
		fclose(f);
	return r;
}

static void
bm_call(const struct bm_opts *o, struct bench_report *rep, const struct bench_target *t,
	const char *who, int port, int upstream)
{
	char tid[64], *tfile = xasprintf("%s/timing", getenv("CODEX_HOME")), *line, *params, *name;
	double *v = xcalloc((size_t)o->runs, sizeof *v), ans, at, started, done, recv, sent;
	struct bench_lc c;
	long k = 0, missed = 0;

	unlink(tfile);
	bm_config(port, 1, tfile);
	if (bench_lc_start(&c, t, "bench_mcp") != 0 || bm_thread(&c, tid, &ans) != 0 ||
		bm_ready(&c, 1, &at) != 0) {
		bench_fail(rep, "call", "no thread with its MCP server ready", -1);
		goto out;
	}
	params = xasprintf(
		"{\"threadId\":\"%s\",\"input\":[{\"type\":\"text\",\"text\":\"hi\"}]}", tid);
	for (long i = 0; i < o->runs; i++) {
		started = done = -1;
		if (bench_lc_send(&c, "turn/start", params) < 0)
			break;
		while ((line = bench_lc_line(&c, 30, &at)) != NULL) {
			int end = strstr(line, "\"method\":\"turn/completed\"") != NULL;

			if (strstr(line, "\"type\":\"mcpToolCall\"") != NULL &&
				strstr(line, "\"method\":\"item/started\"") != NULL)
				started = at;
			if (strstr(line, "\"type\":\"mcpToolCall\"") != NULL &&
				strstr(line, "\"method\":\"item/completed\"") != NULL &&
				strstr(line, "\"status\":\"completed\"") != NULL)
				done = at;
			free(line);
			if (end)
				break;
		}
		if (started < 0 || done < 0 || bm_server_time(tfile, &recv, &sent) != 0) {
			/* an extra model request (upstream's own, or a retry) shifts the mock's
			 * script by one: that turn has no call; more than a quarter of them is a
			 * failure */
			if (upstream || ++missed <= o->runs / 4)
				continue;
			bench_fail(rep, "call", "turns without their completed mcpToolCall", -1);
			break;
		}
		v[k++] = ((done - sent) + (recv > started ? recv - started : 0)) * 1e3;
	}
	free(params);
	bench_lc_stop(&c);
	if (missed > 0)
		fprintf(stderr, "bench_mcp: %ld of our turns had no completed call\n", missed);
	name = xasprintf("call: MCP tool call overhead over the server's time (%s)", who);
	if (k > 0)
		bench_val(
			rep, name, bench_median(v, (size_t)k), "ms", upstream ? 0 : '<', 0.5, NULL);
	free(name);
out:
	free(v);
	free(tfile);
}

static void
bm_startup(const struct bm_opts *o, struct bench_report *rep, const struct bench_target *t,
	const char *who, int port, int upstream)
{
	char tid[64], *tfile = xasprintf("%s/timing", getenv("CODEX_HOME")), *name;
	double a[5], r[5], t0, ans, at;
	struct bench_lc c;
	size_t k = 0;

	(void)o;
	bm_config(port, 5, tfile);
	if (bench_lc_start(&c, t, "bench_mcp") != 0) {
		bench_fail(rep, "startup", "no daemon", -1);
		free(tfile);
		return;
	}
	for (int i = 0; i < 5; i++) {
		t0 = bench_now();
		if (bm_thread(&c, tid, &ans) != 0 || bm_ready(&c, 5, &at) != 0) {
			bench_fail(rep, "startup", "a thread whose 5 servers were not ready", -1);
			break;
		}
		a[k] = ans * 1e3;
		r[k++] = (at - t0) * 1e3;
	}
	bench_lc_stop(&c);
	if (k > 0) {
		name = xasprintf("startup: thread/start answer, 5 stdio servers (%s)", who);
		bench_val(rep, name, bench_median(a, k), "ms", 0, 0, NULL);
		free(name);
		name = xasprintf("startup: the 5 servers ready after the request (%s)", who);
		bench_val(rep, name, bench_median(r, k), "ms", 0, 0, NULL);
		free(name);
	}
	(void)upstream;
	free(tfile);
}

/* The daemon's RSS (KiB) with one thread of n connected servers; -1 on failure. */
static long
bm_rss_with(const struct bench_target *t, int port, int n)
{
	char tid[64], *tfile = xasprintf("%s/timing", getenv("CODEX_HOME"));
	double ans, at;
	struct bench_lc c;
	long rss = -1, hwm;

	bm_config(port, n, tfile);
	if (bench_lc_start(&c, t, "bench_mcp") == 0) {
		if (bm_thread(&c, tid, &ans) == 0 && (n == 0 || bm_ready(&c, n, &at) == 0)) {
			bench_sleep(0.5);
			bench_mem(c.d.pid, &rss, &hwm);
		}
		bench_lc_stop(&c);
	}
	free(tfile);
	return rss;
}

static void
bm_rss(struct bench_report *rep, const struct bench_target *t, const char *who, int port)
{
	long none = bm_rss_with(t, port, 0), five = bm_rss_with(t, port, 5);
	char *name = xasprintf("rss: the daemon's RSS per connected stdio server (%s)", who);

	if (none < 0 || five < 0)
		bench_fail(rep, "rss", "no thread with its servers", -1);
	else
		bench_val(rep, name, (double)(five - none) / 5.0, "KiB", 0, 0, NULL);
	free(name);
}

static const char bm_usage[] =
	"usage: bench_mcp [--bin PATH] [--runs N] [--only call,startup,rss] [--json]\n"
	"  BENCH_MCP_UPSTREAM  upstream's codex binary: the same flows against it\n";

int
main(int argc, char **argv)
{
	enum { P_CALL = 1, P_STARTUP = 2, P_RSS = 4 };
	static const struct bench_part parts[] = {
		{"call", P_CALL}, {"startup", P_STARTUP}, {"rss", P_RSS}, {NULL, 0}};
	struct bm_opts o = {.runs = 100, .upstream = getenv("BENCH_MCP_UPSTREAM")};
	unsigned only = 7;
	const struct bench_opt opts[] = {{"--json", .flag = &o.json}, {"--runs", .count = &o.runs},
		{"--only", .mask = &only, .parts = parts}};
	struct bench_report rep = {.values = 1, .width = {62, 10, 5, 8}};
	struct bench_target up;
	char home[] = "/tmp/bench_mcp.XXXXXX", bindir[64] = "", load[64], *upargv[3];
	struct bench_mock m = {0};
	int status = 2, have_up;

	signal(SIGPIPE, SIG_IGN);
	if (bench_begin(&o.t, argc, argv, opts, nitems(opts), bm_usage, home, &status) != 0)
		goto out;
	rep.json = o.json;
	setenv("HOME", o.t.home, 1);
	have_up = bench_upstream(
			  &o.t, o.upstream, "/tmp/bench_mcp_bin.XXXXXX", &up, upargv, bindir) == 0;
	bench_load(load, sizeof load);
	if (!o.json)
		printf("bench_mcp: %s%s%s, load %s\n", o.t.bin, have_up ? " vs " : "",
			have_up ? o.upstream : "", load);
	if (bm_mock_start(&m, o.t.bin, o.runs + 10) != 0) {
		bench_fail(&rep, "setup", "no mock model", -1);
		goto done;
	}
	if (only & P_CALL) {
		bm_call(&o, &rep, &o.t, "ours", m.port, 0);
		if (have_up) { /* a fresh mock: upstream's own requests must not shift the script */
			bench_mock_stop(&m);
			if (bm_mock_start(&m, o.t.bin, o.runs + 10) != 0) {
				bench_fail(&rep, "setup", "no mock model", -1);
				goto done;
			}
			bm_call(&o, &rep, &up, "upstream", m.port, 1);
		}
	}
	if (only & P_STARTUP) {
		bm_startup(&o, &rep, &o.t, "ours", m.port, 0);
		if (have_up)
			bm_startup(&o, &rep, &up, "upstream", m.port, 1);
	}
	if (only & P_RSS) {
		bm_rss(&rep, &o.t, "ours", m.port);
		if (have_up)
			bm_rss(&rep, &up, "upstream", m.port);
	}
done:
	if (m.pid > 0)
		bench_mock_stop(&m);
	bench_print(&rep);
	if (o.json)
		bench_report_json(&rep, json_pack("{s:s}", "bin", o.t.bin));
	status = rep.failed;
out:
	if (bindir[0] != '\0')
		bench_rmtree(bindir);
	bench_report_free(&rep);
	bench_end(&o.t);
	return status;
}
