/*
 * bench_exec: command/exec through the app-server binary over pipes, as a client would. Prints
 * one line per figure (name, value, unit, goal, ok or MISS), or one JSON document with --json.
 * Each part runs --repeat times (the pty part --pty-repeat times, 7 by default: raw PTY speed
 * swings between runs on a VM), a new daemon each time; a figure is the median of the runs,
 * with [min-max] in its note.
 *
 *   base64      this machine's base64 encode and decode speed (64 KiB frames), for context
 *   roundtrip   `true` executed --execs times one after another: request written -> answer
 *               read; plus the floors: a JSON-RPC round trip, and fork/exec/wait in-process
 *   pipe        `head -c --bytes /dev/zero`, and a random 4 MiB file replayed with cat, streamed
 *               (processId, streamStdoutStderr, disableOutputCap): decoded MB/s from request
 *               to answer, deltas, frame size, the daemon's peak memory, CPU per process;
 *               against the same bytes read straight from a pipe by this client
 *   pty         the zeros with tty:true, against a PTY read straight by this client before
 *               and after each run; pty_vs_raw is the ratio of the medians (raw PTY speed
 *               swings with where the kernel's tty flush worker gets scheduled)
 *   concurrent  --concurrent `sleep --sleep` at once (wall time until all answered), then --many
 *   slow        --slow-bytes streamed to a client reading --slow-rate MB/s of the daemon's output:
 *               the daemon's memory must stay bounded and every byte arrive
 *
 * The client side is kept cheap so it is not what is measured: output deltas are found with a
 * byte scanner (no JSON parse), decoded with protocol/base64.c and compared with the expected
 * pattern (--count-only: counted from the base64 length); only other lines go through jansson.
 * Each streaming run also reports where the work went: CPU of the daemon, the command and this
 * client, the daemon's read/write calls and sleeps, and how busy the whole machine was (other
 * people's processes included). MB is 10^6 bytes; MiB is 2^20.
 * Exit status 1 when an answer is wrong or missing, a byte is lost or altered, or the daemon
 * dies or hangs; a missed performance goal is printed as MISS but does not change the status.
 *
 * The client and the streaming parts are in lib/exec_conn.c and lib/exec_stream.c; what every
 * bench shares (spawning, /proc, figures, options) in lib/benchlib.h.
 */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "protocol/base64.h"
#include "bench/lib/exec_bench.h"
#include "protocol/xmalloc.h"

#define BENCH_B64   0x01
#define BENCH_RT    0x02
#define BENCH_PIPE  0x04
#define BENCH_PTY   0x08
#define BENCH_CONC  0x10
#define BENCH_SLOW  0x20
#define BENCH_ALL   0x3f
#define BENCH_PARTS 6

/* base64_encode and base64_decode speed, one core, hot cache, 64 KiB frames. */
static void
bench_base64(const struct bench_exec_opts *o, struct bench_report *rep)
{
	size_t elen = base64_encoded_len(BENCH_FRAME), got = 0;
	long frames = (long)(o->bytes / BENCH_FRAME) + 1;
	unsigned char *in = xmalloc(BENCH_FRAME + 8), *back = xmalloc(BENCH_FRAME + 8);
	char *enc = xmalloc(elen + 8);
	unsigned x = 12345;
	double t0, t1;

	for (size_t i = 0; i < BENCH_FRAME; i++) {
		x = x * 1103515245 + 12345;
		in[i] = (unsigned char)(x >> 16);
	}
	t0 = bench_now();
	for (long i = 0; i < frames; i++)
		base64_encode(in, BENCH_FRAME, enc);
	t1 = bench_now();
	bench_val(rep, "base64_encode", (double)frames * BENCH_FRAME / (t1 - t0) / 1e6, "MB/s", 0,
		0, "protocol/base64.c, 64 KiB frames, MB of input per second, one core");
	t0 = bench_now();
	for (long i = 0; i < frames; i++)
		base64_decode(enc, elen, back, &got, NULL);
	t1 = bench_now();
	bench_val(rep, "base64_decode", (double)frames * BENCH_FRAME / (t1 - t0) / 1e6, "MB/s", 0,
		0, "the client's decoder, MB of output per second");
	if (got != BENCH_FRAME || memcmp(in, back, BENCH_FRAME) != 0)
		bench_fail(rep, "base64", "decode(encode(x)) != x", 0);
	free(in);
	free(back);
	free(enc);
}

/* fork/exec/wait of `true` in this process: the floor under an exec round trip; ms. */
static double
bench_fork_true(void)
{
	static char *const argv[] = {"true", NULL}, *const envp[] = {NULL};
	double t0 = bench_now();
	int status;
	pid_t pid;

	if ((pid = fork()) == 0) {
		execve("/bin/true", argv, envp);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return (bench_now() - t0) * 1e3;
}

/* --execs sequential `true` execs: request written -> answer read. */
static void
bench_roundtrip(const struct bench_exec_opts *o, struct bench_report *rep)
{
	long n = o->execs, warm = 20, bad = 0;
	double *rtt = xcalloc((size_t)n, sizeof *rtt), *rpc = xcalloc((size_t)n, sizeof *rpc);
	double *fk = xcalloc((size_t)n, sizeof *fk), t0, cpu0, cpu1, ch0, ch1;
	json_t *argv = json_pack("[s]", "true");
	struct bench_conn c;
	char *req = NULL, line[128], note[128];
	int r;

	if ((r = bench_conn_start(o, &c, warm + 2 * n)) != 0) {
		bench_fail(rep, "roundtrip", "start", r);
		bench_conn_close(&c, o->timeout);
		goto out;
	}
	for (long id = 1; id <= warm; id++) {
		free(req);
		req = bench_exec_req(id, json_incref(argv), NULL, 0);
		if ((r = bench_conn_send(&c, req, strlen(req), o->timeout)) != 0 ||
			(r = bench_conn_wait(&c, id + 1, o->timeout, 0)) != 0)
			goto fail;
	}
	bench_cpu(c.d.pid, &cpu0, &ch0);
	for (long i = 0; i < n; i++) {
		long id = warm + 1 + i;

		free(req);
		req = bench_exec_req(id, json_incref(argv), NULL, 0);
		t0 = bench_now();
		if ((r = bench_conn_send(&c, req, strlen(req), o->timeout)) != 0 ||
			(r = bench_conn_wait(&c, id + 1, o->timeout, 0)) != 0)
			goto fail;
		rtt[i] = (c.ans[id].t - t0) * 1e3;
		bad += c.ans[id].code != 0 || c.ans[id].exit_code != 0;
	}
	bench_cpu(c.d.pid, &cpu1, &ch1);
	for (long i = 0; i < n; i++) {
		long id = warm + 1 + n + i;
		size_t len = (size_t)snprintf(
			line, sizeof line, "{\"id\":%ld,\"method\":\"bench/unknown\"}\n", id);

		t0 = bench_now();
		if ((r = bench_conn_send(&c, line, len, o->timeout)) != 0 ||
			(r = bench_conn_wait(&c, id + 1, o->timeout, 0)) != 0)
			goto fail;
		rpc[i] = (c.ans[id].t - t0) * 1e3;
	}
	for (long i = 0; i < n; i++)
		fk[i] = bench_fork_true();
	bench_sort(rtt, (size_t)n);
	bench_sort(rpc, (size_t)n);
	bench_sort(fk, (size_t)n);
	snprintf(note, sizeof note, "%ld sequential execs after %ld warm-up, %ld failed", n, warm,
		bad);
	bench_val(rep, "exec_true_rtt_median", bench_pct(rtt, (size_t)n, 50), "ms", '<', 1, note);
	bench_val(rep, "exec_true_rtt_p95", bench_pct(rtt, (size_t)n, 95), "ms", 0, 0, NULL);
	bench_val(rep, "exec_true_rtt_min", rtt[0], "ms", 0, 0, NULL);
	bench_val(rep, "exec_daemon_cpu_per_exec", (cpu1 - cpu0) * 1e3 / (double)n, "ms", 0, 0,
		"the daemon's own CPU (user+system), children excluded");
	bench_val(rep, "exec_child_cpu_per_exec", (ch1 - ch0) * 1e3 / (double)n, "ms", 0, 0,
		"the reaped children's CPU (fork, exec of true)");
	bench_val(rep, "rpc_rtt_median", bench_pct(rpc, (size_t)n, 50), "ms", 0, 0,
		"an unknown method answered (-32601): the JSON-RPC floor");
	bench_val(rep, "fork_exec_wait_true_median", bench_pct(fk, (size_t)n, 50), "ms", 0, 0,
		"fork+execve+waitpid of /bin/true in this client: the process floor");
	if (bad > 0)
		bench_fail(rep, "roundtrip", "an exec of true failed", 0);
	if (c.strays + c.dups > 0)
		bench_fail(rep, "roundtrip", "stray or duplicate answers", 0);
	if (bench_conn_close(&c, o->timeout) != 0)
		bench_fail(rep, "roundtrip", "the daemon did not exit cleanly after EOF", 0);
	goto out;
fail:
	bench_fail(rep, "roundtrip", "no answer", r);
	bench_conn_close(&c, o->timeout);
out:
	json_decref(argv);
	free(req);
	free(rtt);
	free(rpc);
	free(fk);
}

/* n `sleep` processes at once: the wall time until every one is answered. */
static void
bench_many(const struct bench_exec_opts *o, struct bench_report *rep, const char *prefix, long n)
{
	char num[32], *req, *buf = NULL, name[64], note[256];
	size_t len = 0, cap = 0, l;
	struct bench_conn c;
	long ok = 0, hwm = 0, rss;
	double t0, last = 0;
	int r;

	snprintf(num, sizeof num, "%g", o->sleep);
	for (long id = 1; id <= n; id++) {
		req = bench_exec_req(id, json_pack("[s, s]", "sleep", num), NULL, 0);
		l = strlen(req);
		if (len + l > cap) {
			cap = (len + l) * 2;
			buf = xrealloc(buf, cap);
		}
		memcpy(buf + len, req, l);
		len += l;
		free(req);
	}
	if ((r = bench_conn_start(o, &c, n)) != 0) {
		bench_fail(rep, prefix, "start", r);
		bench_conn_close(&c, o->timeout);
		goto out;
	}
	t0 = bench_now();
	if ((r = bench_conn_send(&c, buf, len, o->timeout)) == 0)
		r = bench_conn_wait(&c, n + 1, o->timeout + o->sleep, 0);
	bench_mem(c.d.pid, &rss, &hwm);
	for (long id = 1; id <= n; id++) {
		if (c.ans[id].n == 1 && c.ans[id].code == 0 && c.ans[id].exit_code == 0)
			ok++;
		if (c.ans[id].t > last)
			last = c.ans[id].t;
	}
	snprintf(note, sizeof note, "%ld x `sleep %s` at once; %ld answered, %ld exit 0%s%s%.60s",
		n, num, c.answered - 1, ok, r != 0 ? ", stalled" : "",
		c.first_error != NULL ? "; first error: " : "",
		c.first_error != NULL ? c.first_error : "");
	snprintf(name, sizeof name, "%s_wall", prefix);
	bench_val(rep, name, last > t0 ? last - t0 : -1, "s", 0, 0, note);
	snprintf(name, sizeof name, "%s_ok", prefix);
	bench_val(rep, name, 100.0 * (double)ok / (double)n, "%", '>', 100, NULL);
	snprintf(name, sizeof name, "%s_vmhwm", prefix);
	bench_val(rep, name, (double)hwm / 1024, "MiB", 0, 0, NULL);
	if (r != 0 || ok != n || c.strays + c.dups > 0)
		bench_fail(rep, prefix, "not every process answered with exit 0", r);
	if (bench_conn_close(&c, o->timeout) != 0)
		bench_fail(rep, prefix, "the daemon did not exit cleanly after EOF", 0);
out:
	free(buf);
}

/* --concurrent and --many processes at once. */
static void
bench_concurrent(const struct bench_exec_opts *o, struct bench_report *rep)
{
	char prefix[32];

	snprintf(prefix, sizeof prefix, "concurrent_%ld", o->concurrent);
	bench_many(o, rep, prefix, o->concurrent);
	snprintf(prefix, sizeof prefix, "concurrent_%ld", o->many);
	bench_many(o, rep, prefix, o->many);
}

/* Write the random pattern file; 0 or -errno. */
static int
bench_pattern(struct bench_exec_opts *o)
{
	unsigned long long x = 0x9e3779b97f4a7c15ULL;
	int fd, r = 0;

	o->rand = xmalloc(BENCH_PAT_RAND);
	for (size_t i = 0; i < BENCH_PAT_RAND; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		o->rand[i] = (unsigned char)(x >> 24);
	}
	o->pattern_path = xasprintf("%s/random.bin", o->t.home);
	if ((fd = open(o->pattern_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return -errno;
	if (write(fd, o->rand, BENCH_PAT_RAND) != BENCH_PAT_RAND)
		r = -EIO;
	close(fd);
	return r;
}

static const char bench_usage[] =
	"usage: bench_exec [--bin PATH] [--arg ARG]... [--only LIST] [--repeat N] [--pty-repeat N]\n"
	"                  [--execs N]\n"
	"                  [--bytes N] [--slow-bytes N] [--slow-rate MB/s] [--concurrent N]\n"
	"                  [--many N] [--sleep S] [--pipe-size N] [--timeout S] [--count-only]\n"
	"                  [--json] [--verbose]\n"
	"  --bin        the daemon (default $APP_SERVER_BIN, else build/app-server)\n"
	"  --arg        an argument passed to it (repeat; e.g. --arg app-server for upstream codex)\n"
	"  --only       any of base64,roundtrip,pipe,pty,concurrent,slow (default: all)\n"
	"  --repeat     runs of each part; figures are medians (3)\n"
	"  --pty-repeat runs of the pty part (7): raw PTY speed swings between runs on a VM\n"
	"  --execs      sequential `true` execs per run (1000)\n"
	"  --bytes      bytes streamed per pipe/pty run, K/M/G suffixes (400M)\n"
	"  --slow-bytes bytes streamed to the slow client (200M)\n"
	"  --slow-rate  MB/s of the daemon's output the slow client reads (20)\n"
	"  --concurrent, --many  processes started at once (100, 300)  --sleep  their sleep (0.5)\n"
	"  --pipe-size  F_SETPIPE_SZ on the daemon's stdout pipe (default: the system's, 64 KiB)\n"
	"  --timeout    seconds without progress before a run fails (10)\n"
	"  --count-only count streamed bytes from the base64 length: no decode, no content check\n"
	"  --json       one JSON document {bin, repeat, load_start, load_end, figures, failed}\n"
	"  --verbose    pass the daemon's stderr through\n";

/* Run each chosen part --repeat times, then print the medians; 1 on a correctness failure. */
int
main(int argc, char **argv)
{
	static void (*const runs[BENCH_PARTS])(const struct bench_exec_opts *,
		struct bench_report *) = {bench_base64, bench_roundtrip, bench_stream_pipe,
		bench_stream_pty, bench_concurrent, bench_stream_slow};
	static const struct bench_part parts[] = {{"base64", BENCH_B64}, {"roundtrip", BENCH_RT},
		{"pipe", BENCH_PIPE}, {"pty", BENCH_PTY}, {"concurrent", BENCH_CONC},
		{"slow", BENCH_SLOW}, {NULL, 0}};
	struct bench_exec_opts o = {.repeat = 3,
		.pty_repeat = 7,
		.execs = 1000,
		.bytes = 400LL << 20,
		.slow_bytes = 200LL << 20,
		.slow_rate = 20,
		.concurrent = 100,
		.many = 300,
		.sleep = 0.5,
		.timeout = 10,
		.only = BENCH_ALL};
	const struct bench_opt opts[] = {{"--json", .flag = &o.json},
		{"--count-only", .flag = &o.count_only},
		{"--only", .mask = &o.only, .parts = parts}, {"--bytes", .bytes = &o.bytes},
		{"--slow-bytes", .bytes = &o.slow_bytes}, {"--pipe-size", .size = &o.t.pipe_size},
		{"--repeat", .count = &o.repeat}, {"--pty-repeat", .count = &o.pty_repeat},
		{"--execs", .count = &o.execs}, {"--slow-rate", .num = &o.slow_rate},
		{"--concurrent", .count = &o.concurrent}, {"--many", .count = &o.many},
		{"--sleep", .num = &o.sleep}, {"--timeout", .num = &o.timeout}};
	struct bench_report rep = {.values = 1, .width = {30, 12, 5, 20}};
	char home[] = "/tmp/bench_exec.XXXXXX", load_start[64], load_end[64];
	int status = 2, r;

	if (bench_begin(&o.t, argc, argv, opts, nitems(opts), bench_usage, home, &status) != 0)
		goto out;
	rep.json = o.json;
	if ((r = bench_pattern(&o)) != 0) {
		fprintf(stderr, "bench: cannot write the pattern file: %s\n", strerror(-r));
		goto out;
	}
	bench_load(load_start, sizeof load_start);
	if (!o.json)
		printf("bench_exec: %s (CODEX_HOME=%s), %ld run%s per part (pty: %ld), load %s\n",
			o.t.bin, home, o.repeat, o.repeat == 1 ? "" : "s", o.pty_repeat,
			load_start);
	for (int p = 0; p < BENCH_PARTS; p++) {
		if ((o.only & (1u << p)) == 0)
			continue;
		for (long i = 0; i < ((1u << p) == BENCH_PTY ? o.pty_repeat : o.repeat); i++)
			runs[p](&o, &rep);
		if ((1u << p) == BENCH_PTY)
			bench_stream_pty_ratio(&rep);
		if ((1u << p) == BENCH_PIPE)
			bench_stream_pipe_ceiling(&rep);
		bench_print(&rep);
	}
	bench_load(load_end, sizeof load_end);
	if (o.json)
		bench_report_json(&rep,
			json_pack("{s:s, s:I, s:s, s:s}", "bin", o.t.bin, "repeat",
				(json_int_t)o.repeat, "load_start", load_start, "load_end",
				load_end));
	else
		printf("load at the end: %s\n", load_end);
	status = rep.failed;
out:
	bench_report_free(&rep);
	free(o.pattern_path);
	free(o.rand);
	bench_end(&o.t);
	return status;
}
