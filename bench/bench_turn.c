/*
 * bench_turn: turns through the real daemon against `app-server mock-model` (instant,
 * loopback), side by side with upstream when BENCH_TURN_UPSTREAM names its codex binary.
 *
 *   text   turn/start -> turn/completed of a text turn with 2 deltas, and turn/start -> the
 *          first item/agentMessage/delta (median over --turns)
 *   tool   a turn with one exec_command `echo hi` (login: false: a login shell's profile
 *          costs what this machine's /etc/profile costs, 150 ms here, on both sides), under
 *          danger-full-access and under workspace-write (median over --turns, at most 100)
 *   profile  the default tool turn (`echo $BT_PROFILE_VAR`, a login shell) with a HOME whose
 *          ~/.profile takes 150 ms and exports a variable, as nvm or conda profiles do:
 *          measured once the thread's shell snapshot is in $CODEX_HOME/shell_snapshots
 *          (both sides take one at thread start), danger-full-access (median over --turns,
 *          at most 100; 30 for upstream); the output must carry the variable
 *   rss    the daemon's anonymous RSS after --rss-turns text turns on one thread (upstream:
 *          40), total RSS and the shared libraries' share beside it
 *   relay  the mock stamps each delta with CLOCK_MONOTONIC as it writes it; the time from the
 *          stamp to our read of the notification line (20 deltas a turn, 5 ms apart)
 *
 * Every turn must end with exactly one turn/completed (completed) and no error: anything else
 * is a failure (exit 1). A missed goal prints MISS.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/benchlib.h"
#include "lib/lineconn.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

struct bt_opts {
	struct bench_target t;
	long turns, rss_turns;
	int json;
	const char *upstream;
};

/* The default tool turn: a login shell, which must see the profile's variable. */
static const char bt_profile_resp[] =
	"{\"events\":[{\"ev\":\"created\"},{\"ev\":\"function_call\",\"call_id\":\"call-%ld\","
	"\"name\":\"exec_command\",\"arguments\":{\"cmd\":\"echo $BT_PROFILE_VAR\","
	"\"yield_time_ms\":10000}},"
	"{\"ev\":\"completed\"}]}";

static const char bt_text_resp[] =
	"{\"events\":[{\"ev\":\"created\"},{\"ev\":\"message_added\",\"id\":\"msg-1\"},"
	"{\"ev\":\"text_delta\",\"delta\":\"Hel\"},{\"ev\":\"text_delta\",\"delta\":\"lo\"},"
	"{\"ev\":\"message\",\"id\":\"msg-1\",\"text\":\"Hello\"},{\"ev\":\"completed\","
	"\"input_tokens\":10,\"output_tokens\":5,\"total_tokens\":15}]}";
static const char bt_tool_resp[] =
	"{\"events\":[{\"ev\":\"created\"},{\"ev\":\"function_call\",\"call_id\":\"call-%ld\","
	"\"name\":\"exec_command\",\"arguments\":{\"cmd\":\"echo hi\",\"login\":false,"
	"\"yield_time_ms\":10000}},"
	"{\"ev\":\"completed\"}]}";

/* One daemon with a thread in sandbox mode `sandbox`; its thread id in tid. */
static int
bt_open(struct bench_lc *c, const struct bench_target *t, const char *sandbox, char tid[64])
{
	char *params, *line, *p;
	int r = -1;

	if (bench_lc_start(c, t, "bench_turn") != 0)
		return -1;
	params = xasprintf("{\"cwd\":\"%s/ws\",\"approvalPolicy\":\"never\",\"sandbox\":\"%s\"}",
		getenv("CODEX_HOME"), sandbox);
	line = bench_lc_call(c, "thread/start", params, 30);
	if (line != NULL && (p = strstr(line, "\"thread\":{\"id\":\"")) != NULL) {
		snprintf(tid, 64, "%.36s", p + 16);
		r = 0;
	}
	free(line);
	free(params);
	return r;
}

/* A turn; *first: seconds to the first agent delta (or -1), returns seconds to the end. */
static double
bt_turn(struct bench_lc *c, const char *tid, double *first, struct bench_report *rep,
	void (*on_line)(const char *line, double at, void *arg), void *arg)
{
	char *params = xasprintf("{\"threadId\":\"%s\",\"input\":[{\"type\":\"text\","
				 "\"text\":\"hi\"}]}",
		tid);
	double t0 = bench_now(), at, end = -1;
	char *line;

	*first = -1;
	if (bench_lc_send(c, "turn/start", params) < 0)
		bench_fail(rep, "turn", "turn/start could not be written", -1);
	while ((line = bench_lc_line(c, 30, &at)) != NULL) {
		if (*first < 0 && strstr(line, "\"item/agentMessage/delta\"") != NULL)
			*first = at - t0;
		if (on_line != NULL)
			on_line(line, at, arg);
		if (strstr(line, "\"method\":\"error\"") != NULL)
			bench_fail(rep, "turn", "an error notification", -1);
		if (strstr(line, "\"turn/completed\"") != NULL) {
			end = at - t0;
			if (strstr(line, "\"status\":\"completed\"") == NULL)
				bench_fail(rep, "turn", "the turn did not complete", -1);
			free(line);
			break;
		}
		free(line);
	}
	if (end < 0)
		bench_fail(rep, "turn", "no turn/completed within 30 s", -1);
	free(params);
	return end;
}

/* text: turn latency and first delta, then RSS after many turns on the same thread. */
static void
bt_text(const struct bt_opts *o, struct bench_report *rep, const struct bench_target *t,
	const char *who, int upstream)
{
	char *script = xasprintf("{\"responses\":[%s],\"repeat\":true}", bt_text_resp), tid[64],
	     name[96];
	long n = upstream && o->turns > 40 ? 40 : o->turns, rss_n = upstream ? 40 : o->rss_turns;
	double *all = xcalloc((size_t)n, sizeof *all), *firsts = xcalloc((size_t)n, sizeof *firsts);
	struct bench_mock m;
	struct bench_lc c;
	struct bench_rollup ru;

	if (bench_mock_model(&m, o->t.bin, "/tmp/bench_turn_mm.XXXXXX", script) != 0) {
		bench_fail(rep, "text", "the mock model did not start", -1);
		goto out;
	}
	bench_mock_home(getenv("CODEX_HOME"), m.port);
	if (bt_open(&c, t, "danger-full-access", tid) != 0) {
		bench_fail(rep, "text", "no thread", -1);
		bench_mock_stop(&m);
		goto out;
	}
	/* the files mapped before any model request: the libraries loaded later are libcurl's */
	char *idle_files = NULL;

	bench_rss_files(c.d.pid, NULL, &idle_files);
	for (long i = 0; i < n; i++)
		all[i] = bt_turn(&c, tid, &firsts[i], rep, NULL, NULL) * 1e3;
	for (long i = 0; i < n; i++)
		firsts[i] *= 1e3;
	snprintf(name, sizeof name, "%s text turn, median", who);
	bench_val(rep, name, bench_median(all, (size_t)n), "ms", upstream ? 0 : '<', 3, NULL);
	snprintf(name, sizeof name, "%s text turn, p95", who);
	bench_sort(all, (size_t)n);
	bench_val(rep, name, bench_pct(all, (size_t)n, 95), "ms", 0, 0, NULL);
	snprintf(name, sizeof name, "%s turn/start -> first delta, median", who);
	bench_val(rep, name, bench_median(firsts, (size_t)n), "ms", upstream ? 0 : '<', 2, NULL);
	for (long i = n; i < rss_n; i++) {
		double f;

		bt_turn(&c, tid, &f, rep, NULL, NULL);
	}
	/*
	 * The goal is on what the daemon itself holds (anonymous pages): the libraries' file
	 * pages are shared with every other process that maps them (libc, OpenSSL, ...).
	 */
	bench_rollup(c.d.pid, &ru);
	snprintf(name, sizeof name, "%s anonymous RSS after %ld turns", who, rss_n > n ? rss_n : n);
	bench_val(rep, name, (double)ru.anon / 1024.0, "MiB", upstream ? 0 : '<', 4,
		"smaps_rollup Anonymous: heap, stacks, libraries' written data");
	snprintf(name, sizeof name, "%s ... total RSS beside it", who);
	bench_val(rep, name, (double)ru.rss / 1024.0, "MiB", 0, 0, NULL);
	snprintf(name, sizeof name, "%s ... of which file pages (binary, libraries)", who);
	bench_val(rep, name, (double)(ru.rss - ru.anon) / 1024.0, "MiB", 0, 0,
		"read from the files, shareable with any process mapping them, reclaimable");
	snprintf(name, sizeof name, "%s ... of which mapped by another process now", who);
	bench_val(
		rep, name, (double)ru.shared / 1024.0, "MiB", 0, 0, "Shared_Clean + Shared_Dirty");
	snprintf(name, sizeof name, "%s ... of which libraries mapped since the first turn", who);
	bench_val(rep, name, (double)bench_rss_files(c.d.pid, idle_files, NULL) / 1024.0, "MiB", 0,
		0, upstream ? NULL : "libcurl, OpenSSL and their dependencies");
	free(idle_files);
	bench_lc_stop(&c);
	bench_mock_stop(&m);
out:
	free(all);
	free(firsts);
	free(script);
}

/* tool: a turn with one exec_command `echo hi`, in a sandbox mode. */
static void
bt_tool(const struct bt_opts *o, struct bench_report *rep, const struct bench_target *t,
	const char *who, const char *sandbox, double goal)
{
	long n = o->turns > 100 ? 100 : o->turns;
	struct buf script;
	double *all = xcalloc((size_t)n, sizeof *all), f;
	struct bench_mock m;
	struct bench_lc c;
	char tid[64], name[96];

	buf_init(&script, 1 << 24);
	buf_adds(&script, "{\"responses\":[");
	for (long i = 0; i < n; i++) {
		buf_printf(&script, i == 0 ? "" : ",");
		buf_printf(&script, bt_tool_resp, i);
		buf_printf(&script, ",%s", bt_text_resp);
	}
	buf_adds(&script, "]}");
	if (bench_mock_model(&m, o->t.bin, "/tmp/bench_turn_mm.XXXXXX", buf_str(&script)) != 0) {
		bench_fail(rep, "tool", "the mock model did not start", -1);
		goto out;
	}
	bench_mock_home(getenv("CODEX_HOME"), m.port);
	if (bt_open(&c, t, sandbox, tid) != 0) {
		bench_fail(rep, "tool", "no thread", -1);
		bench_mock_stop(&m);
		goto out;
	}
	for (long i = 0; i < n; i++)
		all[i] = bt_turn(&c, tid, &f, rep, NULL, NULL) * 1e3;
	snprintf(name, sizeof name, "%s tool turn (%s), median", who, sandbox);
	bench_val(rep, name, bench_median(all, (size_t)n), "ms", goal > 0 ? '<' : 0, goal, NULL);
	bench_lc_stop(&c);
	bench_mock_stop(&m);
out:
	buf_free(&script);
	free(all);
}

/* A profile's variable seen by a command: the item's output carries it. */
static void
bt_profile_line(const char *line, double at, void *arg)
{
	(void)at;
	if (strstr(line, "\"item/completed\"") != NULL &&
		strstr(line, "\"commandExecution\"") != NULL &&
		strstr(line, "from-profile") != NULL)
		(*(int *)arg)++;
}

/* Wait (10 s at most) for a shell snapshot in CODEX_HOME; 0 when one is there. */
static int
bt_snapshot_wait(void)
{
	char *dir = xasprintf("%s/shell_snapshots", getenv("CODEX_HOME"));
	int found = 0;

	for (int i = 0; i < 1000 && !found; i++) {
		DIR *d = opendir(dir);
		struct dirent *e;

		while (d != NULL && (e = readdir(d)) != NULL) {
			size_t l = strlen(e->d_name);

			found |= l > 3 && strcmp(e->d_name + l - 3, ".sh") == 0;
		}
		if (d != NULL)
			closedir(d);
		if (!found)
			bench_sleep(0.01);
	}
	free(dir);
	return found ? 0 : -1;
}

/* profile: the default tool turn with a slow ~/.profile, once the snapshot is there. */
static double
bt_profile(const struct bt_opts *o, struct bench_report *rep, const struct bench_target *t,
	const char *who, int upstream)
{
	long n = o->turns > 100 ? 100 : o->turns, seen = 0;
	struct buf script;
	double *all, f, med = -1;
	struct bench_mock m;
	struct bench_lc c;
	char tid[64], name[96], home[] = "/tmp/bench_turn_home.XXXXXX", *p, *old = NULL;
	int vars = 0;
	FILE *pf;

	if (upstream && n > 30)
		n = 30;
	all = xcalloc((size_t)n, sizeof *all);
	buf_init(&script, 1 << 24);
	buf_adds(&script, "{\"responses\":[");
	for (long i = 0; i < n; i++) {
		buf_printf(&script, i == 0 ? "" : ",");
		buf_printf(&script, bt_profile_resp, i);
		buf_printf(&script, ",%s", bt_text_resp);
	}
	buf_adds(&script, "]}");
	if (mkdtemp(home) == NULL ||
		bench_mock_model(&m, o->t.bin, "/tmp/bench_turn_mm.XXXXXX", buf_str(&script)) !=
			0) {
		bench_fail(rep, "profile", "the mock model did not start", -1);
		goto out;
	}
	p = xasprintf("%s/.profile", home);
	if ((pf = fopen(p, "w")) != NULL) {
		fputs("sleep 0.15\nexport BT_PROFILE_VAR=from-profile\n", pf);
		fclose(pf);
	}
	free(p);
	old = getenv("HOME") != NULL ? xstrdup(getenv("HOME")) : NULL;
	setenv("HOME", home, 1);
	bench_mock_home(getenv("CODEX_HOME"), m.port);
	if (bt_open(&c, t, "danger-full-access", tid) != 0) {
		bench_fail(rep, "profile", "no thread", -1);
		bench_mock_stop(&m);
		goto out;
	}
	if (bt_snapshot_wait() != 0)
		bench_fail(rep, "profile", "no shell snapshot within 10 s", -1);
	for (long i = 0; i < n; i++, seen++)
		all[i] = bt_turn(&c, tid, &f, rep, bt_profile_line, &vars) * 1e3;
	if (vars != seen)
		bench_fail(rep, "profile", "a command did not see the profile's variable", -1);
	med = bench_median(all, (size_t)n);
	snprintf(name, sizeof name, "%s tool turn, 150 ms profile, login, median", who);
	bench_val(rep, name, med, "ms", 0, 0, NULL);
	bench_lc_stop(&c);
	bench_mock_stop(&m);
out:
	if (old != NULL)
		setenv("HOME", old, 1);
	free(old);
	bench_rmtree(home);
	buf_free(&script);
	free(all);
	return med;
}

/* relay: each delta's stamp against the time its line was read. */
struct bt_relay {
	double *v;
	size_t n, cap;
};

static void
bt_relay_line(const char *line, double at, void *arg)
{
	struct bt_relay *r = arg;
	const char *p = strstr(line, "\"delta\":\"");

	if (p == NULL || strstr(line, "item/agentMessage/delta") == NULL || r->n == r->cap)
		return;
	r->v[r->n++] = at * 1e6 - strtod(p + 9, NULL); /* µs */
	if (getenv("BT_DEBUG") != NULL)
		fprintf(stderr, "delta %zu: %.0f us\n", r->n, r->v[r->n - 1]);
}

static void
bt_relay(const struct bt_opts *o, struct bench_report *rep, const struct bench_target *t,
	const char *who, int upstream)
{
	struct buf script;
	struct bt_relay r = {.cap = 20 * 20};
	struct bench_mock m;
	struct bench_lc c;
	char tid[64], name[96];
	double f;

	r.v = xcalloc(r.cap, sizeof *r.v);
	buf_init(&script, 1 << 20);
	buf_adds(&script,
		"{\"responses\":[{\"events\":[{\"ev\":\"created\"},{\"ev\":"
		"\"message_added\",\"id\":\"msg-1\"}");
	for (int i = 0; i < 20; i++)
		buf_adds(
			&script, ",{\"ev\":\"text_delta\",\"delta\":\"@MONO_US@\",\"delay_ms\":5}");
	buf_adds(&script,
		",{\"ev\":\"message\",\"id\":\"msg-1\",\"text\":\"x\"},{\"ev\":"
		"\"completed\"}]}],\"repeat\":true}");
	if (bench_mock_model(&m, o->t.bin, "/tmp/bench_turn_mm.XXXXXX", buf_str(&script)) != 0) {
		bench_fail(rep, "relay", "the mock model did not start", -1);
		goto out;
	}
	bench_mock_home(getenv("CODEX_HOME"), m.port);
	if (bt_open(&c, t, "danger-full-access", tid) == 0) {
		for (int i = 0; i < 20; i++)
			bt_turn(&c, tid, &f, rep, bt_relay_line, &r);
		bench_lc_stop(&c);
	} else
		bench_fail(rep, "relay", "no thread", -1);
	bench_mock_stop(&m);
	if (r.n == 0) {
		bench_fail(rep, "relay", "no stamped delta arrived", -1);
		goto out;
	}
	snprintf(name, sizeof name, "%s delta relay (mock write -> line read), median", who);
	bench_val(rep, name, bench_median(r.v, r.n) / 1e3, "ms", upstream ? 0 : '<', 0.1, NULL);
	bench_sort(r.v, r.n);
	snprintf(name, sizeof name, "%s delta relay, p95", who);
	bench_val(rep, name, bench_pct(r.v, r.n, 95) / 1e3, "ms", 0, 0, NULL);
out:
	buf_free(&script);
	free(r.v);
}

static const char bt_usage[] =
	"usage: bench_turn [--bin PATH] [--turns N] [--rss-turns N] "
	"[--only text,tool,relay,profile] "
	"[--json]\n"
	"  BENCH_TURN_UPSTREAM  upstream's codex binary: the same turns against it, side by side\n";

int
main(int argc, char **argv)
{
	enum { P_TEXT = 1, P_TOOL = 2, P_RELAY = 4, P_PROFILE = 8 };
	static const struct bench_part parts[] = {{"text", P_TEXT}, {"tool", P_TOOL},
		{"relay", P_RELAY}, {"profile", P_PROFILE}, {NULL, 0}};
	struct bt_opts o = {
		.turns = 200, .rss_turns = 1000, .upstream = getenv("BENCH_TURN_UPSTREAM")};
	unsigned only = 15;
	const struct bench_opt opts[] = {{"--json", .flag = &o.json},
		{"--turns", .count = &o.turns}, {"--rss-turns", .count = &o.rss_turns},
		{"--only", .mask = &only, .parts = parts}};
	struct bench_report rep = {.values = 1, .width = {52, 10, 5, 8}};
	struct bench_target up;
	char home[] = "/tmp/bench_turn.XXXXXX", bindir[64] = "", load[64], *upargv[3];
	int status = 2, have_up;

	signal(SIGPIPE, SIG_IGN);
	if (bench_begin(&o.t, argc, argv, opts, nitems(opts), bt_usage, home, &status) != 0)
		goto out;
	rep.json = o.json;
	have_up = bench_upstream(
			  &o.t, o.upstream, "/tmp/bench_turn_bin.XXXXXX", &up, upargv, bindir) == 0;
	bench_load(load, sizeof load);
	if (!o.json)
		printf("bench_turn: %s%s%s, load %s\n", o.t.bin, have_up ? " vs " : "",
			have_up ? o.upstream : "", load);
	if (only & P_TEXT) {
		bt_text(&o, &rep, &o.t, "ours", 0);
		if (have_up)
			bt_text(&o, &rep, &up, "upstream", 1);
	}
	if (only & P_TOOL) {
		bt_tool(&o, &rep, &o.t, "ours", "danger-full-access", 6);
		bt_tool(&o, &rep, &o.t, "ours", "workspace-write", 8);
		if (have_up) {
			bt_tool(&o, &rep, &up, "upstream", "danger-full-access", 0);
			bt_tool(&o, &rep, &up, "upstream", "workspace-write", 0);
		}
	}
	if (only & P_PROFILE) {
		double ours = bt_profile(&o, &rep, &o.t, "ours", 0), theirs;

		if (have_up && (theirs = bt_profile(&o, &rep, &up, "upstream", 1)) > 0 && ours > 0)
			bench_val(&rep, "upstream / ours, profile tool turn", theirs / ours, "x",
				'>', 20, NULL);
	}
	if (only & P_RELAY) {
		bt_relay(&o, &rep, &o.t, "ours", 0);
		if (have_up)
			bt_relay(&o, &rep, &up, "upstream", 1);
	}
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
