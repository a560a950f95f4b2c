/*
 * bench_threads: the thread methods through the real daemon over pipes, side by side with
 * upstream when BENCH_THREADS_UPSTREAM names its codex binary (bench_thread measures the store
 * in-process).
 *
 *   start   thread/start round trip (median of --starts), ephemeral too
 *   home    a CODEX_HOME of --rollouts synthetic rollouts (upstream-shaped): spawn ->
 *           initialize answered, the first thread/list (the index built from nothing), later
 *           pages of 50, the first list of a daemon whose index exists, and its RSS
 *   resume  thread/resume of a 5,000-item thread with all its turns (and excludeTurns), the
 *           peak RSS while serving it and the RSS after
 *   loaded  RSS with 1,000 loaded threads
 *
 * A wrong answer is a failure (exit 1); a missed goal prints MISS.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/benchlib.h"
#include "lib/lineconn.h"
#include "lib/rollgen.h"
#include "protocol/xmalloc.h"
#include "thread/rollout/rollout.h"

struct bs_opts {
	struct bench_target t;
	long starts, rollouts;
	int json;
	const char *upstream;
};

/* config.toml naming the provider the synthetic rollouts were written with. */
static void
bs_config(const char *home)
{
	char *p = xasprintf("%s/config.toml", home);
	FILE *f = fopen(p, "w");

	fputs("model = \"mock-model\"\nmodel_provider = \"mock_provider\"\n[features]\n"
	      "remote_models = false\n[model_providers.mock_provider]\nname = \"mock\"\n"
	      "base_url = \"http://127.0.0.1:1/v1\"\nwire_api = \"responses\"\n",
		f);
	fclose(f);
	free(p);
}

/* A request and its answer; fails the part when it is an error or missing. */
static char *
bs_call(struct bench_lc *c, struct bench_report *rep, const char *part, const char *method,
	const char *params, double *secs)
{
	double t0 = bench_now();
	char *line = bench_lc_call(c, method, params, 120);

	if (secs != NULL)
		*secs = bench_now() - t0;
	if (line == NULL || strstr(line, "\"result\"") == NULL) {
		bench_fail(rep, part, line != NULL ? line : "no answer", -1);
		free(line);
		return NULL;
	}
	return line;
}

/* The RSS of the daemon in MiB. */
static double
bs_rss(struct bench_lc *c)
{
	long rss = 0, hwm = 0;

	bench_mem(c->d.pid, &rss, &hwm);
	return rss / 1024.0;
}

/* start: round trips of thread/start (and ephemeral ones). */
static void
bs_start(const struct bs_opts *o, struct bench_report *rep, const struct bench_target *t,
	const char *who, int upstream)
{
	double *v = xcalloc((size_t)o->starts, sizeof *v),
	       *e = xcalloc((size_t)o->starts, sizeof *e);
	char *params = xasprintf("{\"cwd\":\"%s\"}", getenv("CODEX_HOME")), name[96], *line;
	char *eparams = xasprintf("{\"cwd\":\"%s\",\"ephemeral\":true}", getenv("CODEX_HOME"));
	struct bench_lc c;

	bs_config(getenv("CODEX_HOME"));
	if (bench_lc_start(&c, t, "bench_threads") != 0) {
		bench_fail(rep, "start", "the daemon did not start", -1);
		goto out;
	}
	for (long i = 0; i < o->starts; i++) {
		if ((line = bs_call(&c, rep, "start", "thread/start", params, &v[i])) == NULL)
			break;
		free(line);
		v[i] *= 1e3;
		if ((line = bs_call(&c, rep, "start", "thread/start", eparams, &e[i])) == NULL)
			break;
		free(line);
		e[i] *= 1e3;
	}
	snprintf(name, sizeof name, "%s thread/start, median", who);
	bench_val(rep, name, bench_median(v, (size_t)o->starts), "ms", upstream ? 0 : '<', 1, NULL);
	snprintf(name, sizeof name, "%s thread/start ephemeral, median", who);
	bench_val(
		rep, name, bench_median(e, (size_t)o->starts), "ms", upstream ? 0 : '<', 0.3, NULL);
	bench_lc_stop(&c);
out:
	free(v);
	free(e);
	free(params);
	free(eparams);
}

/* The nextCursor of a list answer (heap), or NULL on the last page. */
static char *
bs_cursor(const char *line)
{
	const char *p = strstr(line, "\"nextCursor\":\"");
	const char *end;

	if (p == NULL)
		return NULL;
	p += 14;
	end = strchr(p, '"');
	return end != NULL ? xstrndup(p, (size_t)(end - p)) : NULL;
}

/* Pages of 50 after the first: their times (ms) into v (at most n); how many. */
static size_t
bs_pages(struct bench_lc *c, struct bench_report *rep, const char *first, double *v, size_t n)
{
	char *cursor = bs_cursor(first), *params, *line;
	size_t k = 0;

	while (cursor != NULL && k < n) {
		params = xasprintf("{\"limit\":50,\"cursor\":\"%s\"}", cursor);
		free(cursor);
		cursor = NULL;
		line = bs_call(c, rep, "home", "thread/list", params, &v[k]);
		free(params);
		if (line == NULL)
			break;
		v[k++] *= 1e3;
		cursor = bs_cursor(line);
		free(line);
	}
	free(cursor);
	return k;
}

/* home: a CODEX_HOME of many rollouts, first without an index, then with it. */
static void
bs_home(const struct bs_opts *o, struct bench_report *rep, const struct bench_target *t,
	const char *who, int upstream, const char *home)
{
	double init, first, pages[40], *inits = xcalloc(5, sizeof *inits);
	size_t np;
	struct bench_lc c;
	char name[96], *line;

	setenv("CODEX_HOME", home, 1);
	/* A daemon on the home, never having seen it: its first list waits for the index. */
	init = bench_now();
	if (bench_lc_start(&c, t, "bench_threads") != 0) {
		bench_fail(rep, "home", "the daemon did not start", -1);
		goto out;
	}
	init = bench_now() - init;
	line = bs_call(&c, rep, "home", "thread/list", "{\"limit\":50}", &first);
	snprintf(name, sizeof name, "%s %ld rollouts: spawn -> initialize", who, o->rollouts);
	bench_val(rep, name, init * 1e3, "ms", upstream ? 0 : '<', 2, NULL);
	snprintf(name, sizeof name, "%s first thread/list, no index yet (full build)", who);
	bench_val(rep, name, first * 1e3, "ms", upstream ? 0 : '<', 2000, NULL);
	if (line != NULL) {
		np = bs_pages(&c, rep, line, pages, 40);
		free(line);
		if (np > 0) {
			snprintf(name, sizeof name, "%s later pages of 50, median", who);
			bench_val(rep, name, bench_median(pages, np), "ms", upstream ? 0 : '<', 5,
				NULL);
		}
	}
	snprintf(name, sizeof name, "%s RSS after listing", who);
	bench_val(rep, name, bs_rss(&c), "MiB", 0, 0, NULL);
	bench_lc_stop(&c);
	/* Daemons whose index exists: initialize, and the first page. */
	for (int i = 0; i < 5; i++) {
		double t0 = bench_now();

		if (bench_lc_start(&c, t, "bench_threads") != 0)
			break;
		inits[i] = (bench_now() - t0) * 1e3;
		line = bs_call(&c, rep, "home", "thread/list", "{\"limit\":50}", &first);
		free(line);
		bench_lc_stop(&c);
	}
	snprintf(name, sizeof name, "%s with its index: spawn -> initialize, median", who);
	bench_val(rep, name, bench_median(inits, 5), "ms", upstream ? 0 : '<', 2, NULL);
	snprintf(name, sizeof name, "%s with its index: first page of 50", who);
	bench_val(rep, name, first * 1e3, "ms", upstream ? 0 : '<', 5, NULL);
out:
	free(inits);
}

/* resume: a 5,000-item thread (1,000 turns of 5 items, id), with and without its turns. */
static void
bs_resume(struct bench_report *rep, const struct bench_target *t, const char *who, int upstream,
	const char *home, const char *id)
{
	char *params, *line, name[96];
	struct bench_lc c;
	double secs, ex;
	long rss = 0, hwm = 0;

	setenv("CODEX_HOME", home, 1);
	if (bench_lc_start(&c, t, "bench_threads") != 0) {
		bench_fail(rep, "resume", "the daemon did not start", -1);
		return;
	}
	params = xasprintf("{\"threadId\":\"%s\",\"excludeTurns\":true}", id);
	line = bs_call(&c, rep, "resume", "thread/resume", params, &ex);
	free(line);
	free(params);
	bench_lc_stop(&c);
	if (bench_lc_start(&c, t, "bench_threads") != 0)
		return;
	params = xasprintf("{\"threadId\":\"%s\"}", id);
	line = bs_call(&c, rep, "resume", "thread/resume", params, &secs);
	if (line != NULL && strstr(line, "\"turns\":[{") == NULL)
		bench_fail(rep, "resume", "no turns in the answer", -1);
	snprintf(name, sizeof name, "%s resume 5,000 items, excludeTurns", who);
	bench_val(rep, name, ex * 1e3, "ms", 0, 0, NULL);
	snprintf(name, sizeof name, "%s resume 5,000 items with turns (answer read)", who);
	bench_val(rep, name, secs * 1e3, "ms", upstream ? 0 : '<', 50, NULL);
	/* the daemon was fresh: its peak is the peak of serving this answer */
	bench_mem(c.d.pid, &rss, &hwm);
	snprintf(name, sizeof name, "%s RSS peak while serving it (VmHWM)", who);
	bench_val(rep, name, hwm / 1024.0, "MiB", upstream ? 0 : '<', 16, NULL);
	snprintf(name, sizeof name, "%s RSS after it", who);
	bench_val(rep, name, rss / 1024.0, "MiB", 0, 0, NULL);
	free(line);
	free(params);
	bench_lc_stop(&c);
}

/* loaded: RSS with 1,000 loaded threads. */
static void
bs_loaded(struct bench_report *rep, const struct bench_target *t, const char *home)
{
	char *params = xasprintf("{\"cwd\":\"%s\"}", home), *line;
	struct bench_lc c;

	setenv("CODEX_HOME", home, 1);
	if (bench_lc_start(&c, t, "bench_threads") != 0) {
		bench_fail(rep, "loaded", "the daemon did not start", -1);
		free(params);
		return;
	}
	for (int i = 0; i < 1000; i++) {
		if ((line = bs_call(&c, rep, "loaded", "thread/start", params, NULL)) == NULL)
			break;
		free(line);
	}
	bench_val(rep, "ours RSS with 1,000 loaded threads", bs_rss(&c), "MiB", '<', 32, NULL);
	bench_lc_stop(&c);
	free(params);
}

static const char bs_usage[] =
	"usage: bench_threads [--bin PATH] [--starts N] [--rollouts N] "
	"[--only start,home,resume,loaded] [--json]\n"
	"  BENCH_THREADS_UPSTREAM  upstream's codex binary: start, home and resume side by side\n";

int
main(int argc, char **argv)
{
	enum { P_START = 1, P_HOME = 2, P_RESUME = 4, P_LOADED = 8 };
	static const struct bench_part parts[] = {{"start", P_START}, {"home", P_HOME},
		{"resume", P_RESUME}, {"loaded", P_LOADED}, {NULL, 0}};
	struct bs_opts o = {
		.starts = 300, .rollouts = 10000, .upstream = getenv("BENCH_THREADS_UPSTREAM")};
	unsigned only = 15;
	const struct bench_opt opts[] = {{"--json", .flag = &o.json},
		{"--starts", .count = &o.starts}, {"--rollouts", .count = &o.rollouts},
		{"--only", .mask = &only, .parts = parts}};
	struct bench_report rep = {.values = 1, .width = {56, 10, 5, 8}};
	struct bench_target up = {0};
	char home[] = "/tmp/bench_threads.XXXXXX", *sub, *filler, load[64], *upargv[3], id[37];
	int status = 2;

	signal(SIGPIPE, SIG_IGN);
	if (bench_begin(&o.t, argc, argv, opts, nitems(opts), bs_usage, home, &status) != 0)
		goto out;
	rep.json = o.json;
	if (o.upstream != NULL) {
		up = o.t;
		upargv[0] = (char *)o.upstream;
		upargv[1] = "app-server";
		upargv[2] = NULL;
		up.bin = o.upstream;
		up.argv = upargv;
	}
	filler = xmalloc(20001);
	memset(filler, 'x', 20000);
	filler[20000] = '\0';
	setenv("BENCH_ROLLOUT_PROVIDER", "mock_provider", 1);
	bench_load(load, sizeof load);
	if (!o.json)
		printf("bench_threads: %s%s%s, load %s\n", o.t.bin, o.upstream ? " vs " : "",
			o.upstream ? o.upstream : "", load);
	if (only & P_START) {
		bs_start(&o, &rep, &o.t, "ours", 0);
		if (o.upstream != NULL)
			bs_start(&o, &rep, &up, "upstream", 1);
	}
	if (only & P_HOME) {
		int64_t base = rollout_now_ms() - 120LL * 86400 * 1000;

		sub = xasprintf("%s/many", home);
		mkdir(sub, 0700);
		bs_config(sub);
		for (long i = 0; i < o.rollouts; i++)
			bench_rollout_write(sub, base + i * (120LL * 86400 * 1000 / o.rollouts),
				filler, 1, 4, id);
		bs_home(&o, &rep, &o.t, "ours", 0, sub);
		if (o.upstream != NULL) {
			/* A copy without our index, so upstream starts from the rollouts alone. */
			char *idx = xasprintf("%s/app-server-threads.sqlite", sub);

			unlink(idx);
			free(idx);
			bs_home(&o, &rep, &up, "upstream", 1, sub);
		}
		free(sub);
	}
	if (only & P_RESUME) {
		sub = xasprintf("%s/long", home);
		mkdir(sub, 0700);
		bs_config(sub);
		bench_rollout_write(sub, rollout_now_ms(), filler, 1000, 5, id);
		bs_resume(&rep, &o.t, "ours", 0, sub, id);
		if (o.upstream != NULL)
			bs_resume(&rep, &up, "upstream", 1, sub, id);
		free(sub);
	}
	if (only & P_LOADED) {
		sub = xasprintf("%s/loaded", home);
		mkdir(sub, 0700);
		bs_config(sub);
		bs_loaded(&rep, &o.t, sub);
		free(sub);
	}
	setenv("CODEX_HOME", home, 1);
	free(filler);
	bench_print(&rep);
	if (o.json)
		bench_report_json(&rep, json_pack("{s:s}", "bin", o.t.bin));
	status = rep.failed;
out:
	bench_report_free(&rep);
	bench_end(&o.t);
	return status;
}
