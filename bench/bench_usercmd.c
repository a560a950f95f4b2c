/*
 * bench_usercmd: the user's own commands in a thread, through the real daemon against
 * `app-server mock-model` (instant, loopback), side by side with upstream when
 * BENCH_USERCMD_UPSTREAM names its codex binary (issue 25's figures).
 *
 *   shell   thread/shellCommand of `true` on an idle thread: from its acknowledgement (the
 *           `{}` answer) to the commandExecution's item/completed and to turn/completed, and
 *           from the request to turn/completed (median over --runs)
 *   review  review/start {uncommittedChanges} on a git repository with one modified file,
 *           against a text turn with the same mock reply (two deltas, "Hello"), each on a
 *           fresh thread so neither carries history: both medians, the review's overhead
 *           (review - text), and git's own time for what the review runs (`git rev-parse
 *           --show-toplevel` in the workspace, timed here by fork/exec, median); the goal is
 *           on the overhead less git's time
 *
 * HOME is the bench's scratch CODEX_HOME (no ~/.profile): a login shell then costs what the
 * machine's /etc/profile costs, on both sides.
 *
 * Every command and turn must end with exactly one turn/completed (completed) and no error:
 * anything else is a failure (exit 1). A missed goal prints MISS.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/benchlib.h"
#include "lib/lineconn.h"
#include "protocol/xmalloc.h"

struct bu_opts {
	struct bench_target t;
	long runs;
	int json;
	const char *upstream;
};

/* The reply of every model request: a short text in two deltas. */
static const char bu_script[] =
	"{\"responses\":[{\"events\":[{\"ev\":\"created\"},{\"ev\":\"message_added\",\"id\":"
	"\"msg-1\"},{\"ev\":\"text_delta\",\"delta\":\"Hel\"},{\"ev\":\"text_delta\",\"delta\":"
	"\"lo\"},{\"ev\":\"message\",\"id\":\"msg-1\",\"text\":\"Hello\"},{\"ev\":\"completed\","
	"\"input_tokens\":10,\"output_tokens\":5,\"total_tokens\":15}]}],\"repeat\":true}";

/* Run argv in dir, quietly; its exit status (-1: not run). */
static int
bu_run(const char *dir, char *const argv[])
{
	pid_t pid;
	int st;

	fflush(stdout);
	if ((pid = fork()) == 0) {
		if (chdir(dir) != 0)
			_exit(127);
		freopen("/dev/null", "w", stdout);
		freopen("/dev/null", "w", stderr);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* CODEX_HOME's config.toml on the mock; the workspace a repository with a modified file. */
static int
bu_home(int port)
{
	const char *home = getenv("CODEX_HOME");
	char *ws = xasprintf("%s/ws", home), *file;
	char *init[] = {"git", "init", "-q", NULL}, *add[] = {"git", "add", "a.txt", NULL};
	char *commit[] = {
		"git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "one", NULL};
	FILE *f;
	int r = -1;

	bench_mock_home(home, port);
	file = xasprintf("%s/a.txt", ws);
	if ((f = fopen(file, "w")) != NULL) {
		fputs("one\ntwo\n", f);
		fclose(f);
	}
	if (bu_run(ws, init) == 0 && bu_run(ws, add) == 0 && bu_run(ws, commit) == 0 &&
		(f = fopen(file, "a")) != NULL) {
		fputs("three\n", f); /* the uncommitted change under review */
		fclose(f);
		r = 0;
	}
	free(file);
	free(ws);
	return r;
}

/* A new thread on the workspace; its id in tid, 0 or -1. */
static int
bu_thread(struct bench_lc *c, char tid[64])
{
	char *params = xasprintf("{\"cwd\":\"%s/ws\",\"approvalPolicy\":\"never\",\"sandbox\":"
				 "\"danger-full-access\"}",
		getenv("CODEX_HOME"));
	char *line = bench_lc_call(c, "thread/start", params, 30), *p;
	int r = -1;

	if (line != NULL && (p = strstr(line, "\"thread\":{\"id\":\"")) != NULL) {
		snprintf(tid, 64, "%.36s", p + 16);
		r = 0;
	}
	free(line);
	free(params);
	return r;
}

/* When each step of one request came (bench_now() seconds; -1: not seen). */
struct bu_times {
	double sent, ack, item, end;
};

/*
 * Send method (params: JSON text) and read to its turn/completed, noting the answer and the
 * completion of the first commandExecution item; 0, or -1 after bench_fail.
 */
static int
bu_flow(struct bench_lc *c, const char *method, const char *params, struct bench_report *rep,
	const char *part, struct bu_times *t)
{
	long long id;
	char *line, idtext[32];
	double at;

	t->ack = t->item = t->end = -1;
	t->sent = bench_now();
	if ((id = bench_lc_send(c, method, params)) < 0) {
		bench_fail(rep, part, "the request could not be written", -1);
		return -1;
	}
	snprintf(idtext, sizeof idtext, "\"id\":%lld,", id);
	while (t->end < 0 && (line = bench_lc_line(c, 30, &at)) != NULL) {
		if (t->ack < 0 && strstr(line, idtext) != NULL) {
			t->ack = at;
			if (strstr(line, "\"result\"") == NULL)
				bench_fail(rep, part, "the request was refused", -1);
		}
		if (t->item < 0 && strstr(line, "\"item/completed\"") != NULL &&
			strstr(line, "\"commandExecution\"") != NULL)
			t->item = at;
		if (strstr(line, "\"method\":\"error\"") != NULL)
			bench_fail(rep, part, "an error notification", -1);
		if (strstr(line, "\"turn/completed\"") != NULL) {
			t->end = at;
			if (strstr(line, "\"status\":\"completed\"") == NULL)
				bench_fail(rep, part, "the turn did not complete", -1);
		}
		free(line);
	}
	if (t->end < 0 || t->ack < 0) {
		bench_fail(rep, part, "no answer or no turn/completed within 30 s", -1);
		return -1;
	}
	return 0;
}

/* shell: thread/shellCommand `true`, acknowledgement to completion. */
static void
bu_shell(const struct bu_opts *o, struct bench_report *rep, const struct bench_target *t,
	const char *who, int upstream)
{
	long n = upstream && o->runs > 100 ? 100 : o->runs, k = 0;
	double *item = xcalloc((size_t)n, sizeof *item), *end = xcalloc((size_t)n, sizeof *end),
	       *all = xcalloc((size_t)n, sizeof *all);
	struct bench_lc c;
	struct bu_times tm;
	char tid[64], name[96], *params;

	if (bench_lc_start(&c, t, "bench_usercmd") != 0 || bu_thread(&c, tid) != 0) {
		bench_fail(rep, "shell", "no daemon or no thread", -1);
		goto out;
	}
	params = xasprintf("{\"threadId\":\"%s\",\"command\":\"true\"}", tid);
	for (long i = 0; i < n; i++) {
		if (bu_flow(&c, "thread/shellCommand", params, rep, "shell", &tm) != 0)
			break;
		if (tm.item < 0) {
			bench_fail(rep, "shell", "no commandExecution item completed", -1);
			break;
		}
		item[k] = (tm.item - tm.ack) * 1e3;
		end[k] = (tm.end - tm.ack) * 1e3;
		all[k++] = (tm.end - tm.sent) * 1e3;
	}
	free(params);
	bench_lc_stop(&c);
	if (k == 0)
		goto out;
	snprintf(name, sizeof name, "%s shellCommand `true`, ack -> item/completed", who);
	bench_val(rep, name, bench_median(item, (size_t)k), "ms", 0, 0, NULL);
	snprintf(name, sizeof name, "%s shellCommand `true`, ack -> turn/completed", who);
	bench_val(rep, name, bench_median(end, (size_t)k), "ms", upstream ? 0 : '<', 2, NULL);
	snprintf(name, sizeof name, "%s shellCommand `true`, request -> turn/completed", who);
	bench_val(rep, name, bench_median(all, (size_t)k), "ms", 0, 0, NULL);
	bench_sort(end, (size_t)k);
	snprintf(name, sizeof name, "%s ... ack -> turn/completed, p95", who);
	bench_val(rep, name, bench_pct(end, (size_t)k, 95), "ms", 0, 0, NULL);
out:
	free(item);
	free(end);
	free(all);
}

/* git's own time for the review's step: `git rev-parse --show-toplevel` (median, ms). */
static double
bu_git_ms(long n)
{
	char *ws = xasprintf("%s/ws", getenv("CODEX_HOME"));
	char *argv[] = {"git", "rev-parse", "--show-toplevel", NULL};
	double *v = xcalloc((size_t)n, sizeof *v), t0, med;

	for (long i = 0; i < n; i++) {
		t0 = bench_now();
		bu_run(ws, argv);
		v[i] = (bench_now() - t0) * 1e3;
	}
	med = bench_median(v, (size_t)n);
	free(v);
	free(ws);
	return med;
}

/* review: a review turn against a text turn of the same reply, fresh threads each. */
static void
bu_review(const struct bu_opts *o, struct bench_report *rep, const struct bench_target *t,
	const char *who, int upstream)
{
	long n = upstream && o->runs > 40 ? 40 : o->runs, k = 0;
	double *text = xcalloc((size_t)n, sizeof *text), *rev = xcalloc((size_t)n, sizeof *rev);
	double tmed, rmed, git;
	struct bench_lc c;
	struct bu_times tm;
	char tid[64], name[96], *params;

	if (bench_lc_start(&c, t, "bench_usercmd") != 0) {
		bench_fail(rep, "review", "no daemon", -1);
		goto out;
	}
	for (long i = 0; i < n; i++) {
		/* interleaved, so a drift of the machine weighs on both alike */
		if (bu_thread(&c, tid) != 0)
			break;
		params = xasprintf("{\"threadId\":\"%s\",\"input\":[{\"type\":\"text\","
				   "\"text\":\"hi\"}]}",
			tid);
		if (bu_flow(&c, "turn/start", params, rep, "review", &tm) != 0) {
			free(params);
			break;
		}
		text[k] = (tm.end - tm.sent) * 1e3;
		free(params);
		if (bu_thread(&c, tid) != 0)
			break;
		params = xasprintf("{\"threadId\":\"%s\",\"target\":{\"type\":"
				   "\"uncommittedChanges\"}}",
			tid);
		if (bu_flow(&c, "review/start", params, rep, "review", &tm) != 0) {
			free(params);
			break;
		}
		rev[k++] = (tm.end - tm.sent) * 1e3;
		free(params);
	}
	bench_lc_stop(&c);
	if (k == 0) {
		bench_fail(rep, "review", "no turn ran", -1);
		goto out;
	}
	tmed = bench_median(text, (size_t)k);
	rmed = bench_median(rev, (size_t)k);
	git = bu_git_ms(k);
	snprintf(name, sizeof name, "%s text turn (fresh thread), median", who);
	bench_val(rep, name, tmed, "ms", 0, 0, NULL);
	snprintf(name, sizeof name, "%s review turn (uncommittedChanges), median", who);
	bench_val(rep, name, rmed, "ms", 0, 0, NULL);
	snprintf(name, sizeof name, "%s review overhead (review - text)", who);
	bench_val(rep, name, rmed - tmed, "ms", 0, 0, NULL);
	snprintf(name, sizeof name, "%s ... git rev-parse on its own (here)", who);
	bench_val(rep, name, git, "ms", 0, 0, NULL);
	snprintf(name, sizeof name, "%s review overhead less git's time", who);
	bench_val(rep, name, rmed - tmed - git, "ms", upstream ? 0 : '<', 1, NULL);
out:
	free(text);
	free(rev);
}

static const char bu_usage[] =
	"usage: bench_usercmd [--bin PATH] [--runs N] [--only shell,review] [--json]\n"
	"  BENCH_USERCMD_UPSTREAM  upstream's codex binary: the same flows against it\n";

int
main(int argc, char **argv)
{
	enum { P_SHELL = 1, P_REVIEW = 2 };
	static const struct bench_part parts[] = {
		{"shell", P_SHELL}, {"review", P_REVIEW}, {NULL, 0}};
	struct bu_opts o = {.runs = 200, .upstream = getenv("BENCH_USERCMD_UPSTREAM")};
	unsigned only = 3;
	const struct bench_opt opts[] = {{"--json", .flag = &o.json}, {"--runs", .count = &o.runs},
		{"--only", .mask = &only, .parts = parts}};
	struct bench_report rep = {.values = 1, .width = {56, 10, 5, 8}};
	struct bench_target up;
	char home[] = "/tmp/bench_usercmd.XXXXXX", bindir[64] = "", load[64], *upargv[3];
	struct bench_mock m = {0};
	int status = 2, have_up;

	signal(SIGPIPE, SIG_IGN);
	if (bench_begin(&o.t, argc, argv, opts, nitems(opts), bu_usage, home, &status) != 0)
		goto out;
	rep.json = o.json;
	/* a HOME of its own: the user's ~/.profile (pyenv, nvm, ...) is not what is measured */
	setenv("HOME", o.t.home, 1);
	have_up = bench_upstream(&o.t, o.upstream, "/tmp/bench_usercmd_bin.XXXXXX", &up, upargv,
			  bindir) == 0;
	bench_load(load, sizeof load);
	if (!o.json)
		printf("bench_usercmd: %s%s%s, load %s\n", o.t.bin, have_up ? " vs " : "",
			have_up ? o.upstream : "", load);
	if (bench_mock_model(&m, o.t.bin, "/tmp/bench_usercmd_mm.XXXXXX", bu_script) != 0 ||
		bu_home(m.port) != 0) {
		bench_fail(&rep, "setup", "no mock model or no git repository", -1);
		goto done;
	}
	if (only & P_SHELL) {
		bu_shell(&o, &rep, &o.t, "ours", 0);
		if (have_up)
			bu_shell(&o, &rep, &up, "upstream", 1);
	}
	if (only & P_REVIEW) {
		bu_review(&o, &rep, &o.t, "ours", 0);
		if (have_up)
			bu_review(&o, &rep, &up, "upstream", 1);
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
