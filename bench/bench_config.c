/*
 * bench_config: config/batchWrite of 10 keys through the real daemon over pipes. Every run is
 * a new daemon on a config.toml with comments, tables and arrays (test_config_write's file);
 * --writes requests one after the other, each setting bench.k0..bench.k9 (new keys at the
 * first, replaced after), timed from the request written to its answer read: median and p95
 * per run. With BENCH_CONFIG_UPSTREAM naming upstream's codex binary, its runs alternate with
 * ours. An error answer, or a file without the keys afterwards, is a failure (exit 1).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/benchlib.h"
#include "lib/lineconn.h"
#include "protocol/xmalloc.h"

#define BF_KEYS 10

static const char bf_toml[] =
	"# top comment\nmodel = \"gpt-5.1\"   # trailing\napproval_policy = \"never\"\n"
	"tui.theme = \"dark\"\n\n[sandbox_workspace_write]\n# inner comment\n"
	"network_access = false\nwritable_roots = [\"/tmp/a\", \"/tmp/b\"]\n\n"
	"[mcp_servers.docs]\ncommand = \"docs-server\"\nargs = [\"--port\", \"4000\"]\n\n"
	"[projects.\"/tmp/x\"]\ntrust_level = \"trusted\"\n";

struct bf_opts {
	struct bench_target t;
	long runs, writes;
	int json;
	const char *upstream;
};

/* The file as the bench starts each run with. */
static void
bf_reset(const char *home)
{
	char *p = xasprintf("%s/config.toml", home);
	FILE *f = fopen(p, "w");

	if (f != NULL) {
		fputs(bf_toml, f);
		fclose(f);
	}
	free(p);
}

/* Whether the file now holds every key with the last value written. */
static int
bf_check(const char *home, long value)
{
	char *p = xasprintf("%s/config.toml", home), buf[8192], want[64];
	FILE *f = fopen(p, "r");
	size_t n = f != NULL ? fread(buf, 1, sizeof buf - 1, f) : 0;
	int ok = 1;

	if (f != NULL)
		fclose(f);
	free(p);
	buf[n] = '\0';
	for (int k = 0; k < BF_KEYS && ok; k++) {
		snprintf(want, sizeof want, "k%d = %ld", k, value + k);
		ok = strstr(buf, want) != NULL;
	}
	return ok;
}

/* One run: a daemon, --writes batch writes; the figures. */
static void
bf_run(const struct bf_opts *o, struct bench_report *rep, const struct bench_target *t,
	const char *who, int upstream)
{
	double *v = xcalloc((size_t)o->writes, sizeof *v), t0;
	char name[96], *line;
	struct bench_lc c;
	size_t n = 0;

	bf_reset(t->home);
	if (bench_lc_start(&c, t, "bench_config") != 0) {
		bench_fail(rep, who, "the daemon did not start", -1);
		free(v);
		return;
	}
	for (long i = 0; i < o->writes; i++) {
		char *params = xstrdup("{\"edits\":["), *next;

		for (int k = 0; k < BF_KEYS; k++) {
			next = xasprintf("%s%s{\"keyPath\":\"bench.k%d\",\"value\":%ld,"
					 "\"mergeStrategy\":\"replace\"}",
				params, k ? "," : "", k, i + k);
			free(params);
			params = next;
		}
		next = xasprintf("%s],\"filePath\":null,\"expectedVersion\":null}", params);
		free(params);
		t0 = bench_now();
		line = bench_lc_call(&c, "config/batchWrite", next, 30);
		v[n] = (bench_now() - t0) * 1e3;
		free(next);
		if (line == NULL || strstr(line, "\"result\"") == NULL) {
			char *what = xasprintf("%s: %.200s", who, line ? line : "no answer");

			bench_fail(rep, "config/batchWrite", what, -1);
			free(what);
			free(line);
			break;
		}
		free(line);
		n++;
	}
	if (n == (size_t)o->writes && !bf_check(t->home, o->writes - 1))
		bench_fail(rep, "config/batchWrite", "the file lacks the keys written", -1);
	bench_lc_stop(&c);
	if (n > 0) {
		snprintf(name, sizeof name, "%s batchWrite of %d keys, median", who, BF_KEYS);
		bench_val(rep, name, bench_median(v, n), "ms", 0, 0, NULL);
		snprintf(name, sizeof name, "%s batchWrite of %d keys, p95", who, BF_KEYS);
		bench_val(rep, name, bench_pct(v, n, 95), "ms", 0, 0, NULL);
	}
	free(v);
}

static const char bf_usage[] =
	"usage: bench_config [--bin PATH] [--runs N] [--writes N] [--json]\n"
	"  BENCH_CONFIG_UPSTREAM  upstream's codex binary: its runs alternate with ours\n";

int
main(int argc, char **argv)
{
	struct bf_opts o = {.runs = 5, .writes = 100, .upstream = getenv("BENCH_CONFIG_UPSTREAM")};
	const struct bench_opt opts[] = {{"--json", .flag = &o.json}, {"--runs", .count = &o.runs},
		{"--writes", .count = &o.writes}};
	struct bench_report rep = {.values = 1, .width = {44, 9, 3, 10}};
	struct bench_target up = {0};
	char home[] = "/tmp/bench_config.XXXXXX", load[64], *upargv[3];
	int status = 2;

	if (bench_begin(&o.t, argc, argv, opts, nitems(opts), bf_usage, home, &status) != 0)
		goto out;
	rep.json = o.json;
	if (o.upstream != NULL) {
		up = o.t;
		upargv[0] = (char *)o.upstream;
		upargv[1] = "app-server";
		upargv[2] = NULL;
		up.bin = o.upstream;
		up.argv = upargv;
		up.argc = 2;
	}
	bench_load(load, sizeof load);
	if (!o.json)
		printf("bench_config: %s%s%s, %ld runs of %ld writes, load %s\n", o.t.bin,
			o.upstream ? " vs " : "", o.upstream ? o.upstream : "", o.runs, o.writes,
			load);
	for (long run = 0; run < o.runs; run++) {
		bf_run(&o, &rep, &o.t, "ours", 0);
		if (o.upstream != NULL)
			bf_run(&o, &rep, &up, "upstream", 1);
	}
	bench_load(load, sizeof load);
	if (!o.json)
		printf("load at the end %s\n", load);
	bench_print(&rep);
	if (o.json)
		bench_report_json(&rep, json_pack("{s:s}", "bin", o.t.bin));
	status = rep.failed;
out:
	bench_report_free(&rep);
	bench_end(&o.t);
	return status;
}
