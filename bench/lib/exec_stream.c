/*
 * bench_exec's streaming parts: a command's stdout streamed through the daemon (processId,
 * streamStdoutStderr, disableOutputCap, disableTimeout), on a pipe or with tty:true, read as
 * fast as possible or at a fixed rate; every byte is checked. Each run also reports where the
 * work went (CPU of the daemon, of the command and of this client, the daemon's system calls
 * and sleeps, how busy the machine was), and the same bytes read straight from a pipe or a PTY
 * by this client give the kernel's own speed for context.
 */
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_bench.h"
#include "protocol/xmalloc.h"

#define BENCH_PAT_ZERO (64 * 1024)

/* One streaming flavour: what runs, and what its stdout must be. */
struct bench_stream {
	const char *name; /* figure prefix */
	int tty;
	int random; /* the random pattern file replayed, else zeros */
};

/* The command for a stream of about `bytes` bytes, and the exact count it prints. */
static json_t *
bench_stream_argv(const struct bench_exec_opts *o, const struct bench_stream *k, long long bytes,
	long long *expect)
{
	char num[32];
	long long reps;

	if (!k->random) {
		snprintf(num, sizeof num, "%lld", bytes);
		*expect = bytes;
		return json_pack("[s, s, s, s]", "head", "-c", num, "/dev/zero");
	}
	reps = (bytes + BENCH_PAT_RAND - 1) / BENCH_PAT_RAND;
	*expect = reps * BENCH_PAT_RAND;
	snprintf(num, sizeof num, "%lld", reps);
	return json_pack("[s, s, s, s, s]", "sh", "-c",
		"i=0; while [ $i -lt \"$1\" ]; do cat \"$0\" || exit 1; i=$((i+1)); done",
		o->pattern_path, num);
}

/* Check a stream's bytes; the percentage of the expected bytes that arrived intact. */
static double
bench_stream_verify(const struct bench_sink *k, long long expect, char *note, size_t len)
{
	double ok = 100;

	if (k->mismatch >= 0)
		ok = 100.0 * (double)k->mismatch / (double)expect;
	else if ((long long)k->pos != expect)
		ok = 100.0 * (double)(k->pos < (unsigned long long)expect ? k->pos : 0) /
			(double)expect;
	if (k->err_bytes > 0 || k->bad > 0 || k->caps > 0)
		ok = 0;
	snprintf(note, len,
		"%llu of %lld bytes%s, first difference at %lld, %llu on stderr, %llu undecodable, "
		"%llu capReached",
		k->pos, expect, k->count_only ? " (counted, not decoded)" : "", k->mismatch,
		k->err_bytes, k->bad, k->caps);
	return ok;
}

/*
 * Stream `bytes` through the daemon and read them at `rate` MB/s (0: as fast as possible).
 * Records <prefix>_* figures; returns the decoded MB/s from request to answer, or -1.
 */
static double
bench_stream_run(const struct bench_exec_opts *o, struct bench_report *rep,
	const struct bench_stream *k, const char *prefix, long long bytes, double rate)
{
	static const unsigned char zeros[BENCH_PAT_ZERO];
	struct bench_sink sink = {.mismatch = -1};
	struct bench_conn c;
	long long expect;
	double t0, t1, mbps = -1, cpu0, cpu1, ch0, ch1, self, ok;
	json_t *argv = bench_stream_argv(o, k, bytes, &expect);
	char *req = bench_exec_req(1, argv, "bench", k->tty), name[64], note[256];
	long long rd0, wr0, rd1, wr1, sl0, sl1;
	unsigned long long busy0, total0;
	double busy;
	long rss, hwm, rss0, hwm0;
	int r;

	sink.pat = k->random ? o->rand : zeros;
	sink.patlen = k->random ? BENCH_PAT_RAND : sizeof zeros;
	sink.count_only = o->count_only;
	if ((r = bench_conn_start(o, &c, 1)) != 0) {
		bench_fail(rep, prefix, "start", r);
		bench_conn_close(&c, o->timeout);
		goto out;
	}
	c.sink = &sink;
	bench_mem(c.d.pid, &rss0, &hwm0);
	bench_cpu(c.d.pid, &cpu0, &ch0);
	bench_io(c.d.pid, &rd0, &wr0);
	sl0 = bench_sleeps(c.d.pid);
	bench_stat(&busy0, &total0);
	self = bench_self_cpu();
	t0 = bench_now();
	if ((r = bench_conn_send(&c, req, strlen(req), o->timeout)) != 0 ||
		(r = bench_conn_wait(&c, 2, o->timeout, rate)) != 0) {
		bench_fail(rep, prefix, "no answer", r);
		bench_conn_close(&c, o->timeout);
		goto out;
	}
	t1 = c.ans[1].t;
	self = bench_self_cpu() - self;
	busy = bench_busy(busy0, total0);
	bench_cpu(c.d.pid, &cpu1, &ch1);
	bench_io(c.d.pid, &rd1, &wr1);
	sl1 = bench_sleeps(c.d.pid);
	bench_conn_sample(&c, bench_now(), 1);
	bench_mem(c.d.pid, &rss, &hwm);
	mbps = (double)sink.pos / (t1 - t0) / 1e6;
	snprintf(note, sizeof note, "%.0f MB in %.3f s, request -> answer%s",
		(double)sink.pos / 1e6, t1 - t0,
		rate > 0 ? "; the client reads --slow-rate MB/s of wire bytes" : "");
	snprintf(name, sizeof name, "%s_throughput", prefix);
	bench_val(rep, name, mbps, "MB/s", !k->tty && rate == 0 ? '>' : 0, 900, note);
	ok = bench_stream_verify(&sink, expect, note, sizeof note);
	snprintf(name, sizeof name, "%s_intact", prefix);
	bench_val(rep, name, ok, "%", '>', 100, note);
	snprintf(name, sizeof name, "%s_deltas", prefix);
	bench_val(rep, name, (double)sink.deltas, "", 0, 0, "outputDelta notifications");
	snprintf(name, sizeof name, "%s_frame_avg", prefix);
	snprintf(note, sizeof note, "decoded bytes per delta; %.2f wire bytes per decoded byte",
		(double)sink.wire / (double)(sink.pos + (sink.pos == 0)));
	bench_val(rep, name, (double)sink.pos / 1024 / (double)(sink.deltas + (sink.deltas == 0)),
		"KiB", 0, 0, note);
	snprintf(name, sizeof name, "%s_peak_rss", prefix);
	bench_val(rep, name, (double)c.peak.kb / 1024, "MiB", '<', 16,
		"the daemon: max of VmRSS sampled every 10 ms and VmHWM");
	snprintf(name, sizeof name, "%s_vmhwm", prefix);
	bench_val(rep, name, (double)hwm / 1024, "MiB", 0, 0,
		"VmHWM after the answer (refreshed lazily: can miss the peak)");
	snprintf(name, sizeof name, "%s_rss_before", prefix);
	bench_val(rep, name, (double)rss0 / 1024, "MiB", 0, 0,
		"VmRSS after initialize, before the command: the streaming cost is the difference");
	snprintf(name, sizeof name, "%s_daemon_cpu", prefix);
	bench_val(rep, name, cpu1 - cpu0, "s", 0, 0, "the daemon's user+system CPU");
	snprintf(name, sizeof name, "%s_child_cpu", prefix);
	bench_val(rep, name, ch1 - ch0, "s", 0, 0, "the command's CPU (reaped by the daemon)");
	snprintf(name, sizeof name, "%s_client_cpu", prefix);
	bench_val(rep, name, self, "s", 0, 0, "this client: read, scan, decode, compare");
	snprintf(name, sizeof name, "%s_daemon_reads", prefix);
	snprintf(note, sizeof note, "read(2) calls by the daemon, %.1f KiB each on average",
		(double)sink.pos / 1024 / (double)(rd1 - rd0 > 0 ? rd1 - rd0 : 1));
	bench_val(rep, name, (double)(rd1 - rd0), "", 0, 0, note);
	snprintf(name, sizeof name, "%s_daemon_writes", prefix);
	bench_val(rep, name, (double)(wr1 - wr0), "", 0, 0,
		"write(2)/writev(2) calls by the daemon (EAGAIN included)");
	snprintf(name, sizeof name, "%s_daemon_sleeps", prefix);
	bench_val(rep, name, (double)(sl1 - sl0), "", 0, 0,
		"times the daemon's main thread slept (voluntary context switches)");
	snprintf(name, sizeof name, "%s_machine_busy", prefix);
	bench_val(rep, name, busy, "%", 0, 0,
		"busy share of both CPUs during the run, every process on the machine");
	if (ok < 100)
		bench_fail(rep, prefix, "output lost or altered", 0);
	if (c.ans[1].code != 0 || c.ans[1].exit_code != 0 || c.strays + c.dups > 0)
		bench_fail(rep, prefix, "wrong answer", 0);
	if (bench_conn_close(&c, o->timeout) != 0)
		bench_fail(rep, prefix, "the daemon did not exit cleanly after EOF", 0);
out:
	free(req);
	free(sink.dec);
	return mbps;
}

/* What the kernel alone delivers to a reader (bench_raw). */
struct bench_raw_run {
	double mbps;
	long long got;	  /* bytes read */
	long long reads;  /* read(2) calls that returned data */
	long long sleeps; /* times this reader slept */
	double cpu;	  /* this reader's CPU, seconds */
	double child;	  /* head's CPU */
	double busy;	  /* the machine's busy share, % */
};

/*
 * Run `head -c bytes /dev/zero` on a pipe or a PTY slave and read it here as fast as possible:
 * what the kernel alone delivers, with no daemon and no base64. Returns MB/s, or -1.
 */
static double
bench_raw(long long bytes, int tty, struct bench_raw_run *res)
{
	char num[32], *buf = xmalloc(BENCH_FRAME);
	int fds[2] = {-1, -1}, rd, wr, status;
	unsigned long long busy0, total0;
	struct rusage ru, me0, me1;
	double t0, t1, self;
	ssize_t n;
	pid_t pid;

	memset(res, 0, sizeof *res);
	res->mbps = -1;
	snprintf(num, sizeof num, "%lld", bytes);
	if (tty ? openpty(&fds[0], &fds[1], NULL, NULL, NULL) != 0 : pipe(fds) != 0) {
		free(buf);
		return -1;
	}
	rd = fds[0];
	wr = fds[1];
	bench_stat(&busy0, &total0);
	getrusage(RUSAGE_SELF, &me0);
	self = bench_self_cpu();
	t0 = bench_now();
	if ((pid = fork()) == 0) {
		if (tty && (setsid() < 0 || ioctl(wr, TIOCSCTTY, 0) < 0))
			_exit(126);
		dup2(wr, STDOUT_FILENO);
		if (tty) {
			dup2(wr, STDIN_FILENO);
			dup2(wr, STDERR_FILENO);
		}
		close(rd);
		close(wr);
		execlp("head", "head", "-c", num, "/dev/zero", (char *)NULL);
		_exit(127);
	}
	close(wr);
	while (pid > 0) {
		n = read(rd, buf, BENCH_FRAME);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EOF, or EIO once the PTY slave is closed */
		res->got += n;
		res->reads++;
	}
	t1 = bench_now();
	res->cpu = bench_self_cpu() - self;
	getrusage(RUSAGE_SELF, &me1);
	res->sleeps = me1.ru_nvcsw - me0.ru_nvcsw;
	res->busy = bench_busy(busy0, total0);
	close(rd);
	while (pid > 0 && wait4(pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	if (pid > 0)
		res->child = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	free(buf);
	if (pid > 0)
		res->mbps = (double)res->got / (t1 - t0) / 1e6;
	return res->mbps;
}

/* Record a raw run's figures under prefix. */
static void
bench_raw_figs(struct bench_report *rep, const char *prefix, const struct bench_raw_run *x,
	const char *note)
{
	char name[64], buf[128];

	snprintf(name, sizeof name, "%s_throughput", prefix);
	bench_val(rep, name, x->mbps, "MB/s", 0, 0, note);
	snprintf(name, sizeof name, "%s_reads", prefix);
	snprintf(buf, sizeof buf, "read(2) calls, %.1f KiB each on average",
		(double)x->got / 1024 / (double)(x->reads > 0 ? x->reads : 1));
	bench_val(rep, name, (double)x->reads, "", 0, 0, buf);
	snprintf(name, sizeof name, "%s_reader_sleeps", prefix);
	bench_val(rep, name, (double)x->sleeps, "", 0, 0, "times this reader slept");
	snprintf(name, sizeof name, "%s_reader_cpu", prefix);
	bench_val(rep, name, x->cpu, "s", 0, 0, "this client's CPU reading");
	snprintf(name, sizeof name, "%s_child_cpu", prefix);
	bench_val(rep, name, x->child, "s", 0, 0, "head's CPU");
	snprintf(name, sizeof name, "%s_machine_busy", prefix);
	bench_val(rep, name, x->busy, "%", 0, 0, NULL);
}

/*
 * Fast streaming over pipes: zeros and the random pattern, between two raw pipe reads (no
 * daemon). Each run is compared with the mean of the raw reads around it, so a regression
 * shows as a ratio, whatever else the machine is doing at the time.
 */
void
bench_stream_pipe(const struct bench_exec_opts *o, struct bench_report *rep)
{
	static const struct bench_stream zero = {"pipe_zero", 0, 0}, rnd = {"pipe_random", 0, 1};
	struct bench_raw_run x;
	double raw[2] = {-1, -1}, z = -1, r = -1;

	for (int i = 0; i < 2; i++) {
		if (i == 1) {
			z = bench_stream_run(o, rep, &zero, zero.name, o->bytes, 0);
			r = bench_stream_run(o, rep, &rnd, rnd.name, o->bytes, 0);
		}
		raw[i] = bench_raw(o->bytes, 0, &x);
		bench_raw_figs(rep, "pipe_raw", &x,
			"head -c N /dev/zero | this client, no daemon; run before and after the "
			"daemon's runs");
		if (x.got != o->bytes)
			bench_fail(rep, "pipe_raw", "short read", 0);
	}
	if (raw[0] <= 0 || raw[1] <= 0)
		return;
	if (z > 0)
		bench_val(rep, "pipe_zero_vs_raw", 200 * z / (raw[0] + raw[1]), "%", '>', 90,
			"zeros through the daemon / the mean of the raw pipe reads around them");
	if (r > 0)
		bench_val(rep, "pipe_random_vs_raw", 200 * r / (raw[0] + raw[1]), "%", 0, 0,
			"random bytes (base64 of them is 33 % more wire bytes) / the same raw reads");
}

/*
 * The best pipe_zero_vs_raw these runs' CPU allows on this machine's CPUs: the raw pair runs
 * one process per CPU, so it takes at least its busier process's CPU time; the daemon path is
 * three processes (the command, the daemon, this client), at least their sum over the CPUs
 * and at least the busiest one. A ratio far below this ceiling points at waiting (the daemon
 * or the client idle while the other works), one near it at the machine.
 */
void
bench_stream_pipe_ceiling(struct bench_report *rep)
{
	double head = bench_median_of(rep, "pipe_raw_child_cpu");
	double reader = bench_median_of(rep, "pipe_raw_reader_cpu");
	double child = bench_median_of(rep, "pipe_zero_child_cpu");
	double daemon = bench_median_of(rep, "pipe_zero_daemon_cpu");
	double client = bench_median_of(rep, "pipe_zero_client_cpu");
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	double raw, path;
	char note[160];

	if (head <= 0 || reader <= 0 || child <= 0 || daemon <= 0 || client <= 0 || ncpu < 1)
		return;
	raw = head > reader ? head : reader;
	path = (child + daemon + client) / (double)(ncpu < 3 ? ncpu : 3);
	path = path > child ? path : child;
	path = path > daemon ? path : daemon;
	path = path > client ? path : client;
	snprintf(note, sizeof note,
		"the best zeros/raw ratio the medians' CPU allows on %ld CPU%s (raw %.3f s, daemon path "
		"%.3f s)",
		ncpu, ncpu == 1 ? "" : "s", raw, path);
	bench_val(rep, "pipe_zero_cpu_ceiling", 100 * raw / path, "%", 0, 0, note);
}

/* PTY streaming (tty:true) against a PTY read straight by this client. */
void
bench_stream_pty(const struct bench_exec_opts *o, struct bench_report *rep)
{
	static const struct bench_stream zero = {"pty_zero", 1, 0};
	struct bench_raw_run x;
	double raw[2] = {-1, -1}, via = -1;

	/* Raw PTY speed swings with where the kernel's flip-buffer worker runs: measure it
	 * before and after the daemon's run, and compare the run with those two. */
	for (int i = 0; i < 2; i++) {
		if (i == 1)
			via = bench_stream_run(o, rep, &zero, zero.name, o->bytes, 0);
		raw[i] = bench_raw(o->bytes, 1, &x);
		bench_raw_figs(rep, "pty_raw", &x,
			"openpty, head -c N /dev/zero on the slave, master read here; run before "
			"and after each tty:true run");
		if (x.got != o->bytes)
			bench_fail(rep, "pty_raw", "short read", 0);
	}
	if (raw[0] > 0 && raw[1] > 0 && via > 0)
		bench_val(rep, "pty_vs_raw_paired", 200 * via / (raw[0] + raw[1]), "%", '>', 80,
			"each tty:true run / the mean of the raw runs just before and after it");
}

/* tty:true against the raw PTY, from the medians (each run alone is too noisy). */
void
bench_stream_pty_ratio(struct bench_report *rep)
{
	double raw = bench_median_of(rep, "pty_raw_throughput");
	double via = bench_median_of(rep, "pty_zero_throughput");

	if (raw > 0 && via > 0)
		bench_val(rep, "pty_vs_raw", 100 * via / raw, "%", '>', 80,
			"median tty:true throughput / median raw PTY throughput");
}

/* A slow client: memory must stay bounded and every byte arrive. */
void
bench_stream_slow(const struct bench_exec_opts *o, struct bench_report *rep)
{
	static const struct bench_stream zero = {"slow", 0, 0};

	bench_stream_run(o, rep, &zero, "slow", o->slow_bytes, o->slow_rate);
}
