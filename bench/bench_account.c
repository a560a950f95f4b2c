/*
 * bench_account: a turn on ChatGPT tokens against a turn on an API key, side by side, and the
 * cost of a token refresh (issue 24's figures), through the real daemon against
 * tests/integration/mock_chatgpt.py (loopback; the same backend answer for both logins).
 *
 *   turn     two daemons on one CODEX_HOME whose auth.json holds a live ChatGPT login: one
 *            with OPENAI_API_KEY=sk-mock (the key wins: bearer sk-mock, no account header),
 *            one without (bearer access token, chatgpt-account-id); a text turn each in turn
 *            (interleaved, so a drift of the machine weighs on both), turn/start sent to
 *            turn/completed, fresh thread each time; both medians and the ChatGPT overhead
 *            (goal: no more than the key's, within 1 ms)
 *   refresh  the ChatGPT daemon again, every other turn preceded by an auth.json whose access
 *            token expired: such a turn refreshes first; the stale and the live turns'
 *            medians, their difference (the refresh's round trip), and the issuer's count of
 *            refreshes, which must be one per stale turn and none for the others
 *
 * Every turn must end completed; anything else is a failure (exit 1).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/benchlib.h"
#include "lib/lineconn.h"
#include "protocol/base64.h"
#include "protocol/xmalloc.h"

struct ba_opts {
	struct bench_target t;
	long runs;
	int json;
};

/* Start mock_chatgpt.py (from the repository's root); 0 or -1. */
static int
ba_mock_start(struct bench_mock *m)
{
	char *pfile, *log;
	int r;

	if (bench_mock_dir(m, "/tmp/bench_account_mock.XXXXXX") != 0)
		return -1;
	pfile = xasprintf("%s/port", m->dir);
	log = xasprintf("%s/log.jsonl", m->dir);
	r = bench_mock_exec(m,
		(char *const[]){"python3", "tests/integration/mock_chatgpt.py", "--port-file",
			pfile, "--log", log, NULL});
	free(pfile);
	free(log);
	return r;
}

/* Requests the mock saw whose path ends with suffix. */
static long
ba_mock_count(const struct bench_mock *m, const char *suffix)
{
	char *path = xasprintf("%s/log.jsonl", m->dir), line[1 << 16], *want;
	FILE *f = fopen(path, "r");
	long n = 0;

	want = xasprintf("\"path\": \"%s\"", suffix);
	while (f != NULL && fgets(line, sizeof line, f) != NULL)
		n += strstr(line, want) != NULL;
	if (f != NULL)
		fclose(f);
	free(want);
	free(path);
	return n;
}

/* A fake JWT of the mock's account expiring exp_in seconds from now (heap). */
static char *
ba_jwt(long exp_in)
{
	char *raw = xasprintf("{\"exp\":%lld,\"email\":\"me@example.com\",\"https://api.openai."
			      "com/auth\":{\"chatgpt_account_id\":\"acct-1\",\"chatgpt_plan_"
			      "type\":\"plus\"}}",
		     (long long)time(NULL) + exp_in),
	     *b = xmalloc(base64_encoded_len(strlen(raw)) + 1), *out;

	base64_encode(raw, strlen(raw), b);
	b[base64_encoded_len(strlen(raw))] = '\0';
	for (char *p = b; *p != '\0'; p++)
		*p = *p == '+' ? '-' : *p == '/' ? '_' : *p == '=' ? '\0' : *p;
	out = xasprintf("eyJhbGciOiJub25lIn0.%s.sig", b);
	free(raw);
	free(b);
	return out;
}

/* auth.json: a ChatGPT login whose access token is live (or expired). */
static int
ba_auth(int expired)
{
	char *path = xasprintf("%s/auth.json", getenv("CODEX_HOME")), *tmp,
	     *acc = ba_jwt(expired ? -60 : 3600);
	FILE *f;
	int r = -1;

	tmp = xasprintf("%s.bench", path);
	if ((f = fopen(tmp, "w")) != NULL) {
		fprintf(f,
			"{\"auth_mode\":\"chatgpt\",\"OPENAI_API_KEY\":null,\"tokens\":{\"id_token\":"
			"\"%s\",\"access_token\":\"%s\",\"refresh_token\":\"rt-bench\",\"account_id"
			"\":\"acct-1\"},\"last_refresh\":\"2026-01-01T00:00:00Z\"}",
			acc, acc);
		r = fclose(f) == 0 && chmod(tmp, 0600) == 0 && rename(tmp, path) == 0 ? 0 : -1;
	}
	free(tmp);
	free(acc);
	free(path);
	return r;
}

static int
ba_config(int port)
{
	char *p = xasprintf("%s/config.toml", getenv("CODEX_HOME"));
	FILE *f = fopen(p, "w");

	free(p);
	if (f == NULL)
		return -1;
	fprintf(f,
		"model = \"gpt-5\"\nopenai_base_url = \"http://127.0.0.1:%d/backend-api/codex\"\n"
		"chatgpt_base_url = \"http://127.0.0.1:%d/backend-api/\"\n"
		"[features]\nremote_models = false\n",
		port, port);
	return fclose(f);
}

/* One text turn on a fresh thread, turn/start to turn/completed (ms); -1 after bench_fail. */
static double
ba_turn(struct bench_lc *c, struct bench_report *rep, const char *part)
{
	char *line = bench_lc_call(c, "thread/start", "{\"cwd\":\"/tmp\"}", 30), *p, *params;
	double t0, at, end = -1;
	char tid[64];

	if (line == NULL || (p = strstr(line, "\"thread\":{\"id\":\"")) == NULL) {
		free(line);
		bench_fail(rep, part, "no thread", -1);
		return -1;
	}
	snprintf(tid, sizeof tid, "%.36s", p + 16);
	free(line);
	params = xasprintf(
		"{\"threadId\":\"%s\",\"input\":[{\"type\":\"text\",\"text\":\"hi\"}]}", tid);
	t0 = bench_now();
	if (bench_lc_send(c, "turn/start", params) < 0)
		bench_fail(rep, part, "turn/start could not be written", -1);
	while (end < 0 && (line = bench_lc_line(c, 30, &at)) != NULL) {
		if (strstr(line, "\"turn/completed\"") != NULL) {
			end = at;
			if (strstr(line, "\"status\":\"completed\"") == NULL)
				bench_fail(rep, part, "the turn did not complete", -1);
		}
		free(line);
	}
	free(params);
	if (end < 0) {
		bench_fail(rep, part, "no turn/completed within 30 s", -1);
		return -1;
	}
	return (end - t0) * 1e3;
}

/* A daemon with or without the API key in its environment. */
static int
ba_start(struct bench_lc *c, const struct bench_target *t, int key)
{
	int r;

	if (key)
		setenv("OPENAI_API_KEY", "sk-mock", 1);
	else
		unsetenv("OPENAI_API_KEY");
	r = bench_lc_start(c, t, "bench_account");
	unsetenv("OPENAI_API_KEY");
	return r;
}

/* turn: ChatGPT tokens against an API key, interleaved. */
static void
ba_turns(const struct ba_opts *o, struct bench_report *rep, const struct bench_mock *m)
{
	double *key = xcalloc((size_t)o->runs, sizeof *key),
	       *tok = xcalloc((size_t)o->runs, sizeof *tok), km, tm;
	struct bench_lc ck, ct;
	long k = 0, refreshes = ba_mock_count(m, "/oauth/token");

	if (ba_auth(0) != 0 || ba_start(&ck, &o->t, 1) != 0 || ba_start(&ct, &o->t, 0) != 0) {
		bench_fail(rep, "turn", "no daemons", -1);
		goto out;
	}
	for (long i = 0; i < o->runs; i++) {
		/* who goes first alternates: the one after pays for the other's tail */
		if (i % 2 == 0 &&
			((key[k] = ba_turn(&ck, rep, "turn")) < 0 ||
				(tok[k] = ba_turn(&ct, rep, "turn")) < 0))
			break;
		if (i % 2 == 1 &&
			((tok[k] = ba_turn(&ct, rep, "turn")) < 0 ||
				(key[k] = ba_turn(&ck, rep, "turn")) < 0))
			break;
		k++;
	}
	bench_lc_stop(&ck);
	bench_lc_stop(&ct);
	if (ba_mock_count(m, "/oauth/token") != refreshes)
		bench_fail(rep, "turn", "a live token was refreshed", -1);
	if (k == 0)
		goto out;
	km = bench_median(key, (size_t)k);
	tm = bench_median(tok, (size_t)k);
	bench_val(
		rep, "turn on an API key (sk-mock), turn/start -> completed", km, "ms", 0, 0, NULL);
	bench_val(rep, "turn on ChatGPT tokens, turn/start -> completed", tm, "ms", 0, 0, NULL);
	bench_val(rep, "ChatGPT tokens' overhead over the key (medians)", tm - km, "ms", '<', 1,
		NULL);
out:
	free(key);
	free(tok);
}

/* refresh: a stale token's turn against a live one's, and the issuer's count. */
static void
ba_refresh(const struct ba_opts *o, struct bench_report *rep, const struct bench_mock *m)
{
	double *stale = xcalloc((size_t)o->runs, sizeof *stale),
	       *live = xcalloc((size_t)o->runs, sizeof *live), sm, lm;
	long k = 0, before = ba_mock_count(m, "/oauth/token"), n;
	struct bench_lc c;
	char note[96];

	if (ba_start(&c, &o->t, 0) != 0) {
		bench_fail(rep, "refresh", "no daemon", -1);
		goto out;
	}
	for (long i = 0; i < o->runs; i++) {
		if (ba_auth(1) != 0 || (stale[k] = ba_turn(&c, rep, "refresh")) < 0)
			break;
		/* the refresh stored a live token: this turn must not ask the issuer */
		if ((live[k] = ba_turn(&c, rep, "refresh")) < 0)
			break;
		k++;
	}
	bench_lc_stop(&c);
	n = ba_mock_count(m, "/oauth/token") - before;
	snprintf(note, sizeof note, "%ld stale turns, %ld live turns", k, k);
	bench_val(rep, "refreshes the issuer saw", (double)n, "", 0, 0, note);
	if (n != k)
		bench_fail(rep, "refresh", "not one refresh per stale turn", -1);
	if (k == 0)
		goto out;
	sm = bench_median(stale, (size_t)k);
	lm = bench_median(live, (size_t)k);
	bench_val(rep, "turn on a stale token (refresh first)", sm, "ms", 0, 0, NULL);
	bench_val(rep, "turn on the live token after it", lm, "ms", 0, 0, NULL);
	bench_val(rep, "the refresh's cost (medians' difference)", sm - lm, "ms", 0, 0, NULL);
out:
	free(stale);
	free(live);
}

static const char ba_usage[] = "usage: bench_account [--bin PATH] [--runs N] [--only turn,refresh] "
			       "[--json]\n  (run from the repository's root: it starts "
			       "tests/integration/mock_chatgpt.py)\n";

int
main(int argc, char **argv)
{
	enum { P_TURN = 1, P_REFRESH = 2 };
	static const struct bench_part parts[] = {
		{"turn", P_TURN}, {"refresh", P_REFRESH}, {NULL, 0}};
	struct ba_opts o = {.runs = 100};
	unsigned only = 3;
	const struct bench_opt opts[] = {{"--json", .flag = &o.json}, {"--runs", .count = &o.runs},
		{"--only", .mask = &only, .parts = parts}};
	struct bench_report rep = {.values = 1, .width = {56, 10, 5, 8}};
	char home[] = "/tmp/bench_account.XXXXXX", load[64], *url;
	struct bench_mock m = {0};
	int status = 2;

	signal(SIGPIPE, SIG_IGN);
	if (bench_begin(&o.t, argc, argv, opts, nitems(opts), ba_usage, home, &status) != 0)
		goto out;
	rep.json = o.json;
	unsetenv("OPENAI_API_KEY");
	bench_load(load, sizeof load);
	if (!o.json)
		printf("bench_account: %s, load %s\n", o.t.bin, load);
	if (ba_mock_start(&m) != 0 || ba_config(m.port) != 0) {
		bench_fail(&rep, "setup", "no mock backend", -1);
		goto done;
	}
	url = xasprintf("http://127.0.0.1:%d/oauth/token", m.port);
	setenv("CODEX_REFRESH_TOKEN_URL_OVERRIDE", url, 1); /* the daemons' issuer */
	free(url);
	if (only & P_TURN)
		ba_turns(&o, &rep, &m);
	if (only & P_REFRESH)
		ba_refresh(&o, &rep, &m);
done:
	if (m.pid > 0)
		bench_mock_stop(&m);
	bench_print(&rep);
	if (o.json)
		bench_report_json(&rep, json_pack("{s:s}", "bin", o.t.bin));
	status = rep.failed;
out:
	bench_report_free(&rep);
	bench_end(&o.t);
	return status;
}
