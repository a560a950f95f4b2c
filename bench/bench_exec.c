/*
 * bench_exec: command/exec through the app-server binary over pipes, as a client would. Prints
 * one line per figure (name, value, unit, goal, ok or MISS), or one JSON document with --json.
 * Each part runs --repeat times (a new daemon each time); a figure is the median of the runs,
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
 */
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base64.h"
#include "xmalloc.h"

#define BENCH_RBUF	(4 * 1024 * 1024)  /* read buffer */
#define BENCH_RBUF_MAX	(64 * 1024 * 1024) /* longest line accepted */
#define BENCH_COMPACT	(512 * 1024)	   /* move the partial line down below this much room */
#define BENCH_SLOW_READ (64 * 1024)	   /* bytes per read while throttled */
#define BENCH_SAMPLE	0.01		   /* seconds between memory samples */
#define BENCH_HEADROOM	512		   /* where "deltaBase64" must appear in a delta line */
#define BENCH_PAT_ZERO	(64 * 1024)
#define BENCH_PAT_RAND	(4 * 1024 * 1024)
#define BENCH_FRAME	(64 * 1024) /* base64 frame size for the base64 part */

#define BENCH_B64   0x01
#define BENCH_RT    0x02
#define BENCH_PIPE  0x04
#define BENCH_PTY   0x08
#define BENCH_CONC  0x10
#define BENCH_SLOW  0x20
#define BENCH_ALL   0x3f
#define BENCH_PARTS 6

/* What to run and against which binary. */
struct bench_opts {
	const char *bin;
	char **argv; /* bin, the --arg values, NULL */
	size_t argc;
	long repeat;
	long execs;
	long long bytes;
	long long slow_bytes;
	double slow_rate; /* MB/s of the daemon's output */
	long concurrent;
	long many;
	double sleep;
	long pipe_size; /* F_SETPIPE_SZ on the daemon's stdout; 0: the system default */
	double timeout;
	unsigned only;
	const char *dir;     /* CODEX_HOME, and the random pattern file */
	char *pattern_path;  /* the random pattern */
	unsigned char *rand; /* its content */
	int count_only;	     /* count streamed bytes without decoding them */
	int json;
	int verbose;
};

/* One figure over the runs; cmp is '<' (value <= goal), '>' (value >= goal) or 0 (no goal). */
struct bench_fig {
	char *name;
	double *v;
	size_t nv;
	const char *unit;
	char cmp;
	double goal;
	char *note;
	int printed;
};

struct bench_report {
	struct bench_fig *figs;
	size_t n;
	int failed; /* a correctness failure */
	int json;
	char load_start[64], load_end[64];
};

/* The answer to one request id. */
struct bench_answer {
	double t;      /* when it arrived */
	int n;	       /* times answered (must end at 1) */
	int code;      /* 0: a result, else the error code */
	int exit_code; /* result.exitCode, or -1 */
};

/* Streamed output: what arrived, checked against the expected bytes. */
struct bench_sink {
	const unsigned char *pat; /* stdout must be pat repeated */
	size_t patlen;
	unsigned long long pos;	      /* stdout bytes decoded so far */
	unsigned long long err_bytes; /* stderr bytes (none expected) */
	unsigned long long deltas;
	unsigned long long wire; /* bytes of delta lines, newline included */
	unsigned long long caps; /* deltas with capReached true */
	unsigned long long bad;	 /* deltas that did not decode */
	long long mismatch;	 /* first stdout offset that differed, -1: none */
	int count_only;		 /* count from the base64 length; no decode, no compare */
	unsigned char *dec;
	size_t deccap;
};

/* The daemon under test and what came back from it. */
struct bench_conn {
	pid_t pid;
	int in_fd;
	int out_fd;
	char *rbuf;
	size_t roff, rlen, rcap;
	size_t scan;		   /* where the search in the line at roff resumes (0: its start) */
	unsigned long long rtotal; /* bytes read */
	struct bench_answer *ans;  /* ids 0..nans-1 */
	long nans;
	long answered; /* distinct ids answered */
	long dups, strays, notes;
	struct bench_sink *sink; /* NULL: deltas are counted, not decoded */
	char *first_error;	 /* the first error answer's code and message, for the report */
	long peak_kb;		 /* largest VmRSS or VmHWM sampled */
	double sampled;
	int sampling; /* the daemon runs (before exec, /proc shows our own fork) */
};

static int bench_rm(const char *, const struct stat *, int, struct FTW *);

/* Seconds on the monotonic clock. */
static double
bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time this client has used so far, seconds. */
static double
bench_self_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleep for s seconds. */
static void
bench_sleep(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

/* Compare doubles for qsort. */
static int
bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile of sorted values. */
static double
bench_pct(const double *v, size_t n, size_t pct)
{
	size_t i = (pct * n + 99) / 100;

	return v[i > 0 ? i - 1 : 0];
}

/* The median of n values (sorted in place). */
static double
bench_median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, bench_cmp);
	return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The 1, 5 and 15 minute load averages. */
static void
bench_load(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "re");
	double a = -1, b = -1, c = -1;

	if (f != NULL) {
		if (fscanf(f, "%lf %lf %lf", &a, &b, &c) != 3)
			a = b = c = -1;
		fclose(f);
	}
	snprintf(buf, len, "%.2f %.2f %.2f", a, b, c);
}

/* Record one run's value of a figure (the note, if given, replaces the previous one). */
static void
bench_val(struct bench_report *rep, const char *name, double value, const char *unit, char cmp,
	double goal, const char *note)
{
	struct bench_fig *f = NULL;

	for (size_t i = 0; i < rep->n; i++)
		if (strcmp(rep->figs[i].name, name) == 0)
			f = &rep->figs[i];
	if (f == NULL) {
		rep->figs = xrealloc(rep->figs, (rep->n + 1) * sizeof *rep->figs);
		f = &rep->figs[rep->n++];
		memset(f, 0, sizeof *f);
		f->name = xstrdup(name);
		f->unit = unit;
		f->cmp = cmp;
		f->goal = goal;
	}
	f->v = xrealloc(f->v, (f->nv + 1) * sizeof *f->v);
	f->v[f->nv++] = value;
	if (note != NULL) {
		free(f->note);
		f->note = xstrdup(note);
	}
}

/* The median of a figure's runs, and whether it meets its goal. */
static double
bench_fig_value(const struct bench_fig *f, double *lo, double *hi, int *ok)
{
	double *v = xcalloc(f->nv, sizeof *v), m;

	memcpy(v, f->v, f->nv * sizeof *v);
	m = bench_median(v, f->nv);
	*lo = v[0];
	*hi = v[f->nv - 1];
	free(v);
	*ok = f->cmp == 0 || (f->cmp == '<' ? m <= f->goal : m >= f->goal);
	return m;
}

/* Print the figures not printed yet (text mode). */
static void
bench_print(struct bench_report *rep)
{
	char gbuf[64], range[64];
	double m, lo, hi;
	int ok;

	for (size_t i = 0; i < rep->n; i++) {
		struct bench_fig *f = &rep->figs[i];

		if (f->printed)
			continue;
		f->printed = 1;
		if (rep->json)
			continue;
		m = bench_fig_value(f, &lo, &hi, &ok);
		gbuf[0] = range[0] = '\0';
		if (f->cmp != 0)
			snprintf(gbuf, sizeof gbuf, "goal %s %g %s",
				f->cmp == '<' ? "<=" : ">=", f->goal, f->unit);
		if (f->nv > 1)
			snprintf(range, sizeof range, "[%.4g-%.4g] ", lo, hi);
		printf("%-30s %12.3f %-5s %-20s %-4s %s%s\n", f->name, m, f->unit, gbuf,
			f->cmp == 0  ? ""
				: ok ? "ok"
				     : "MISS",
			range, f->note != NULL ? f->note : "");
	}
	fflush(stdout);
}

/* Print the collected figures as one JSON document. */
static void
bench_report_json(const struct bench_report *rep, const struct bench_opts *o)
{
	json_t *doc = json_pack("{s:s, s:I, s:s, s:s, s:[], s:b}", "bin", o->bin, "repeat",
		(json_int_t)o->repeat, "load_start", rep->load_start, "load_end", rep->load_end,
		"figures", "failed", rep->failed);
	json_t *arr = json_object_get(doc, "figures"), *f, *vals;
	double m, lo, hi;
	char *s;
	int ok;

	for (size_t i = 0; i < rep->n; i++) {
		const struct bench_fig *g = &rep->figs[i];

		m = bench_fig_value(g, &lo, &hi, &ok);
		vals = json_array();
		for (size_t j = 0; j < g->nv; j++)
			json_array_append_new(vals, json_real(g->v[j]));
		f = json_pack("{s:s, s:f, s:o, s:s}", "name", g->name, "value", m, "values", vals,
			"unit", g->unit);
		if (g->cmp != 0) {
			json_object_set_new(f, "goal", json_real(g->goal));
			json_object_set_new(f, "goal_op", json_string(g->cmp == '<' ? "<=" : ">="));
			json_object_set_new(f, "ok", json_boolean(ok));
		}
		if (g->note != NULL)
			json_object_set_new(f, "note", json_string(g->note));
		json_array_append_new(arr, f);
	}
	s = json_dumps(doc, JSON_INDENT(2));
	if (s != NULL)
		printf("%s\n", s);
	free(s);
	json_decref(doc);
}

static void
bench_report_free(struct bench_report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		free(rep->figs[i].name);
		free(rep->figs[i].v);
		free(rep->figs[i].note);
	}
	free(rep->figs);
}

/* VmRSS and VmHWM (KiB) of one process; 0 when unknown. */
static void
bench_mem(pid_t pid, long *rss, long *hwm)
{
	char path[64], line[256];
	FILE *f;

	*rss = *hwm = 0;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "VmRSS: %ld", rss) == 1 && *hwm != 0)
			break;
		sscanf(line, "VmHWM: %ld", hwm);
	}
	fclose(f);
}

/* Times the main thread of a process has gone to sleep (voluntary context switches). */
static long long
bench_sleeps(pid_t pid)
{
	char path[64], line[256];
	long long v = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "voluntary_ctxt_switches: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* CPU seconds of a process (user + system) and of its reaped children; -1 when unknown. */
static void
bench_cpu(pid_t pid, double *self, double *children)
{
	char path[64], buf[1024], *s;
	unsigned long long ut, st, cut, cst;
	double hz = (double)sysconf(_SC_CLK_TCK);
	FILE *f;
	size_t n;

	*self = *children = -1;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after "pid (comm) ": utime, stime, cutime, cstime are fields 14 to 17 */
	if ((s = strrchr(buf, ')')) == NULL ||
		sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
			&ut, &st, &cut, &cst) != 4)
		return;
	*self = (double)(ut + st) / hz;
	*children = (double)(cut + cst) / hz;
}

/*
 * read(2)- and write(2)-family system calls a process's live threads have made so far: the
 * sum of /proc/PID/task/TID/io. /proc/PID/io would also add the children it has reaped.
 */
static void
bench_io(pid_t pid, long long *reads, long long *writes)
{
	char path[96], line[128];
	struct dirent *de;
	long long r, w;
	DIR *dir;
	FILE *f;

	*reads = *writes = 0;
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if ((dir = opendir(path)) == NULL)
		return;
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%.20s/io", (int)pid, de->d_name);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		r = w = 0;
		while (fgets(line, sizeof line, f) != NULL) {
			sscanf(line, "syscr: %lld", &r);
			sscanf(line, "syscw: %lld", &w);
		}
		fclose(f);
		*reads += r;
		*writes += w;
	}
	closedir(dir);
}

/* Busy and total CPU time of the whole machine so far (jiffies, all CPUs). */
static void
bench_stat(unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[10] = {0};
	FILE *f = fopen("/proc/stat", "re");

	*busy = *total = 0;
	if (f == NULL)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		    &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) >= 8) {
		for (int i = 0; i < 8; i++) /* guest time is already in user */
			*total += v[i];
		*busy = *total - v[3] - v[4]; /* minus idle and iowait */
	}
	fclose(f);
}

/* The share of the machine's CPU time that was busy since (busy0, total0), in %. */
static double
bench_busy(unsigned long long busy0, unsigned long long total0)
{
	unsigned long long busy, total;

	bench_stat(&busy, &total);
	return total > total0 ? 100.0 * (double)(busy - busy0) / (double)(total - total0) : -1;
}

/* fork/exec the daemon with its stdin and stdout on fresh non-blocking pipes; 0 or -errno. */
static int
bench_spawn(const struct bench_opts *o, struct bench_conn *c)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1}, null = -1, r = -1;

	memset(c, 0, sizeof *c);
	c->pid = -1;
	c->in_fd = c->out_fd = -1;
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		goto out;
	if (o->pipe_size > 0 && fcntl(out[0], F_SETPIPE_SZ, (int)o->pipe_size) < 0)
		goto out;
	if (!o->verbose && (null = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
		goto out;
	if ((c->pid = fork()) < 0)
		goto out;
	if (c->pid == 0) {
		if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0 ||
			(null >= 0 && dup2(null, STDERR_FILENO) < 0))
			_exit(126);
		execvp(o->bin, o->argv);
		_exit(127);
	}
	c->in_fd = in[1];
	c->out_fd = out[0];
	in[1] = out[0] = -1; /* transferred */
	fcntl(c->in_fd, F_SETFL, fcntl(c->in_fd, F_GETFL) | O_NONBLOCK);
	fcntl(c->out_fd, F_SETFL, fcntl(c->out_fd, F_GETFL) | O_NONBLOCK);
	c->rcap = BENCH_RBUF;
	c->rbuf = xmalloc(c->rcap);
	r = 0;
out:
	if (r != 0)
		r = -errno;
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	if (null >= 0)
		close(null);
	return r;
}

/* Close stdin and wait for the exit (draining stdout); 0 when it exited 0 within timeout. */
static int
bench_close(struct bench_conn *c, double timeout)
{
	struct pollfd pfd;
	double t0 = bench_now();
	char sink[65536];
	int status = -1, eof = 0, r = -1;
	pid_t w = 0;
	ssize_t n;

	if (c->in_fd >= 0)
		close(c->in_fd);
	c->in_fd = -1;
	while (c->pid > 0 && bench_now() - t0 < timeout) {
		if ((w = waitpid(c->pid, &status, WNOHANG)) == c->pid)
			break;
		if (eof) {
			bench_sleep(0.001);
			continue;
		}
		pfd = (struct pollfd){.fd = c->out_fd, .events = POLLIN};
		if (poll(&pfd, 1, 10) > 0) {
			n = read(c->out_fd, sink, sizeof sink);
			eof = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
		}
	}
	if (c->pid > 0 && w != c->pid) {
		kill(c->pid, SIGKILL);
		while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
			;
	} else if (c->pid > 0)
		r = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
	c->pid = -1;
	if (c->out_fd >= 0)
		close(c->out_fd);
	c->out_fd = -1;
	free(c->rbuf);
	free(c->ans);
	free(c->first_error);
	c->rbuf = NULL;
	c->ans = NULL;
	c->first_error = NULL;
	return r;
}

/* Size the answer table for ids 0..n and reset the counters. */
static void
bench_expect(struct bench_conn *c, long n)
{
	free(c->ans);
	c->ans = xcalloc((size_t)n + 1, sizeof *c->ans);
	c->nans = n + 1;
	c->answered = c->dups = c->strays = c->notes = 0;
}

/* Sample the daemon's memory at most every BENCH_SAMPLE seconds. */
static void
bench_sample(struct bench_conn *c, double now, int force)
{
	long rss, hwm;

	if (!c->sampling || (!force && now - c->sampled < BENCH_SAMPLE))
		return;
	c->sampled = now;
	bench_mem(c->pid, &rss, &hwm);
	if (rss > c->peak_kb)
		c->peak_kb = rss;
	if (hwm > c->peak_kb)
		c->peak_kb = hwm;
}

/* Account decoded stdout bytes, comparing them with the pattern. */
static void
bench_sink_check(struct bench_sink *k, const unsigned char *d, size_t n)
{
	size_t off = 0, at, take, i;

	while (off < n && k->mismatch < 0) {
		at = (size_t)((k->pos + off) % k->patlen);
		take = n - off < k->patlen - at ? n - off : k->patlen - at;
		if (memcmp(d + off, k->pat + at, take) != 0) {
			for (i = 0; d[off + i] == k->pat[at + i]; i++)
				;
			k->mismatch = (long long)(k->pos + off + i);
		}
		off += take;
	}
	k->pos += n;
}

/* One outputDelta line: b..q is the base64 text, nl its newline. */
static void
bench_delta(struct bench_conn *c, const char *s, const char *b, const char *q, const char *nl)
{
	static const char err[] = "\"stream\":\"stderr\"", cap[] = "\"capReached\":true";
	struct bench_sink *k = c->sink;
	size_t n = (size_t)(q - b), got;

	c->notes++;
	if (k == NULL)
		return;
	k->deltas++;
	k->wire += (size_t)(nl - s) + 1;
	if (memmem(q, (size_t)(nl - q), cap, sizeof cap - 1) != NULL)
		k->caps++;
	if (k->count_only) {
		if (n % 4 != 0) {
			k->bad++;
			return;
		}
		got = n / 4 * 3 - (n > 0 && b[n - 1] == '=') - (n > 1 && b[n - 2] == '=');
		if (memmem(s, (size_t)(b - s), err, sizeof err - 1) != NULL)
			k->err_bytes += got;
		else
			k->pos += got;
		return;
	}
	if (k->deccap < base64_decoded_max(n)) {
		k->deccap = base64_decoded_max(n) + 4096;
		k->dec = xrealloc(k->dec, k->deccap);
	}
	if (base64_decode(b, n, k->dec, &got, NULL) != 0) {
		k->bad++;
		return;
	}
	if (memmem(s, (size_t)(b - s), err, sizeof err - 1) != NULL)
		k->err_bytes += got;
	else
		bench_sink_check(k, k->dec, got);
}

/* Any other line: an answer (recorded by id) or a notification (counted). */
static void
bench_other(struct bench_conn *c, const char *line, size_t len)
{
	json_t *j = json_loadb(line, len, 0, NULL), *id, *res, *err;
	struct bench_answer *a;
	json_int_t n;

	if (j == NULL) {
		c->strays++;
		return;
	}
	id = json_object_get(j, "id");
	if (json_object_get(j, "method") != NULL) {
		c->notes++;
	} else if (!json_is_integer(id) || (n = json_integer_value(id)) < 0 || n >= c->nans) {
		c->strays++;
	} else if ((a = &c->ans[n])->n++ > 0) {
		c->dups++;
	} else {
		c->answered++;
		a->t = bench_now();
		res = json_object_get(j, "result");
		err = json_object_get(j, "error");
		a->code = res != NULL ? 0 : (int)json_integer_value(json_object_get(err, "code"));
		if (err != NULL && c->first_error == NULL)
			c->first_error = xasprintf("%d %s", a->code,
				json_string_value(json_object_get(err, "message")) != NULL
					? json_string_value(json_object_get(err, "message"))
					: "");
		a->exit_code = json_is_integer(json_object_get(res, "exitCode"))
			? (int)json_integer_value(json_object_get(res, "exitCode"))
			: -1;
		if (a->code == 0 && err != NULL)
			a->code = -1;
	}
	json_decref(j);
}

/*
 * Hand every complete line in the buffer on. A delta is recognised by its first bytes, and
 * scanned once: to the closing quote of deltaBase64, then to the newline just after it.
 */
static void
bench_lines(struct bench_conn *c)
{
	static const char head[] = "{\"method\":\"command/exec/outputDelta\",";
	static const char key[] = "\"deltaBase64\":\"";
	char *s, *end = c->rbuf + c->rlen, *b, *q, *nl, *from;
	size_t left;

	while (c->roff < c->rlen) {
		s = c->rbuf + c->roff;
		left = (size_t)(end - s);
		from = c->scan > c->roff ? c->rbuf + c->scan : s;
		if (left >= sizeof head - 1 && memcmp(s, head, sizeof head - 1) == 0) {
			b = memmem(s, left < BENCH_HEADROOM ? left : BENCH_HEADROOM, key,
				sizeof key - 1);
			if (b == NULL && left < BENCH_HEADROOM && memchr(s, '\n', left) == NULL)
				break;
			if (b != NULL) {
				b += sizeof key - 1;
				if (from < b)
					from = b;
				if ((q = memchr(from, '"', (size_t)(end - from))) == NULL) {
					c->scan = c->rlen;
					break;
				}
				if ((nl = memchr(q, '\n', (size_t)(end - q))) == NULL) {
					c->scan = (size_t)(q - c->rbuf);
					break;
				}
				bench_delta(c, s, b, q, nl);
				c->roff = (size_t)(nl - c->rbuf) + 1;
				c->scan = 0;
				continue;
			}
		}
		if ((nl = memchr(from, '\n', (size_t)(end - from))) == NULL) {
			c->scan = c->rlen;
			break;
		}
		bench_other(c, s, (size_t)(nl - s));
		c->roff = (size_t)(nl - c->rbuf) + 1;
		c->scan = 0;
	}
}

/* Read once (at most max bytes; 0: all that fits) and dispatch; bytes read, 0, or -errno. */
static ssize_t
bench_read(struct bench_conn *c, size_t max)
{
	size_t room;
	ssize_t n;

	if (c->roff == c->rlen) {
		c->roff = c->rlen = c->scan = 0;
	} else if (c->rcap - c->rlen < BENCH_COMPACT && c->roff > 0) {
		memmove(c->rbuf, c->rbuf + c->roff, c->rlen - c->roff);
		c->rlen -= c->roff;
		c->scan = c->scan > c->roff ? c->scan - c->roff : 0;
		c->roff = 0;
	}
	if (c->rcap - c->rlen < BENCH_COMPACT) {
		if (c->rcap >= BENCH_RBUF_MAX)
			return -EMSGSIZE;
		c->rcap *= 2;
		c->rbuf = xrealloc(c->rbuf, c->rcap);
	}
	room = c->rcap - c->rlen;
	if (max > 0 && room > max)
		room = max;
	n = read(c->out_fd, c->rbuf + c->rlen, room);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -EPIPE;
	c->rlen += (size_t)n;
	c->rtotal += (unsigned long long)n;
	bench_lines(c);
	return n;
}

/*
 * Read until `want` distinct ids are answered. rate > 0 reads at most rate MB/s of output.
 * Returns 0, -ETIMEDOUT after timeout seconds without a byte, or -errno (-EPIPE: EOF).
 */
static int
bench_wait(struct bench_conn *c, long want, double timeout, double rate)
{
	struct pollfd pfd = {.fd = c->out_fd, .events = POLLIN};
	double t0 = bench_now(), last = t0, now, ahead;
	unsigned long long base = c->rtotal;
	ssize_t n;

	while (c->answered < want) {
		now = bench_now();
		bench_sample(c, now, 0);
		if (now - last > timeout)
			return -ETIMEDOUT;
		if (rate > 0) {
			ahead = (double)(c->rtotal - base) / (rate * 1e6) - (now - t0);
			if (ahead > 0) {
				bench_sleep(ahead < BENCH_SAMPLE ? ahead : BENCH_SAMPLE);
				last = bench_now(); /* our own pause is not a stall */
				continue;
			}
		}
		n = bench_read(c, rate > 0 ? BENCH_SLOW_READ : 0);
		if (n > 0) {
			last = now;
			continue;
		}
		if (n < 0)
			return (int)n;
		if (poll(&pfd, 1, (int)(BENCH_SAMPLE * 1000)) < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

/* Write all of buf, reading the daemon's output meanwhile; 0 or -errno. */
static int
bench_send(struct bench_conn *c, const char *buf, size_t len, double timeout)
{
	struct pollfd pfd[2];
	double last = bench_now();
	ssize_t n;

	while (len > 0) {
		n = write(c->in_fd, buf, len);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			last = bench_now();
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (bench_now() - last > timeout)
			return -ETIMEDOUT;
		pfd[0] = (struct pollfd){.fd = c->in_fd, .events = POLLOUT};
		pfd[1] = (struct pollfd){.fd = c->out_fd, .events = POLLIN};
		if (poll(pfd, 2, 100) < 0 && errno != EINTR)
			return -errno;
		if (pfd[1].revents != 0 && (n = bench_read(c, 0)) < 0)
			return (int)n;
	}
	return 0;
}

/* Start a daemon and initialize it (id 0), expecting ids up to n later; 0 or -errno. */
static int
bench_start(const struct bench_opts *o, struct bench_conn *c, long n)
{
	static const char req[] = "{\"id\":0,\"method\":\"initialize\",\"params\":{\"clientInfo\":"
				  "{\"name\":\"bench_exec\",\"title\":null,\"version\":\"1.0\"},"
				  "\"capabilities\":null}}\n";
	int r;

	if ((r = bench_spawn(o, c)) != 0)
		return r;
	bench_expect(c, n);
	if ((r = bench_send(c, req, sizeof req - 1, o->timeout)) != 0 ||
		(r = bench_wait(c, 1, o->timeout, 0)) != 0)
		return r;
	c->sampling = 1;
	return c->ans[0].code == 0 ? 0 : -EPROTO;
}

/* A command/exec request line (with its newline) for argv, as a heap string. */
static char *
bench_exec_req(long id, json_t *argv, const char *process_id, int tty)
{
	json_t *params = json_pack(
		"{s:o, s:{s:s}}", "command", argv, "sandboxPolicy", "type", "dangerFullAccess");
	json_t *req;
	char *s, *line;

	if (process_id != NULL) {
		json_object_set_new(params, "processId", json_string(process_id));
		json_object_set_new(params, "streamStdoutStderr", json_true());
		json_object_set_new(params, "disableOutputCap", json_true());
		json_object_set_new(params, "disableTimeout", json_true());
		if (tty)
			json_object_set_new(params, "tty", json_true());
	}
	req = json_pack("{s:I, s:s, s:o}", "id", (json_int_t)id, "method", "command/exec", "params",
		params);
	s = json_dumps(req, JSON_COMPACT);
	line = xasprintf("%s\n", s);
	free(s);
	json_decref(req);
	return line;
}

/* Report a failed run and mark the report failed. */
static void
bench_fail(struct bench_report *rep, const char *part, const char *what, int r)
{
	fprintf(stderr, "bench: %s: %s%s%s\n", part, what, r != 0 ? ": " : "",
		r != 0 ? strerror(-r) : "");
	rep->failed = 1;
}

/* base64_encode and base64_decode speed, one core, hot cache, 64 KiB frames. */
static void
bench_base64(const struct bench_opts *o, struct bench_report *rep)
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
bench_roundtrip(const struct bench_opts *o, struct bench_report *rep)
{
	long n = o->execs, warm = 20, bad = 0;
	double *rtt = xcalloc((size_t)n, sizeof *rtt), *rpc = xcalloc((size_t)n, sizeof *rpc);
	double *fk = xcalloc((size_t)n, sizeof *fk), t0, cpu0, cpu1, ch0, ch1;
	json_t *argv = json_pack("[s]", "true");
	struct bench_conn c;
	char *req = NULL, line[128], note[128];
	int r;

	if ((r = bench_start(o, &c, warm + 2 * n)) != 0) {
		bench_fail(rep, "roundtrip", "start", r);
		goto out;
	}
	for (long id = 1; id <= warm; id++) {
		free(req);
		req = bench_exec_req(id, json_incref(argv), NULL, 0);
		if ((r = bench_send(&c, req, strlen(req), o->timeout)) != 0 ||
			(r = bench_wait(&c, id + 1, o->timeout, 0)) != 0)
			goto fail;
	}
	bench_cpu(c.pid, &cpu0, &ch0);
	for (long i = 0; i < n; i++) {
		long id = warm + 1 + i;

		free(req);
		req = bench_exec_req(id, json_incref(argv), NULL, 0);
		t0 = bench_now();
		if ((r = bench_send(&c, req, strlen(req), o->timeout)) != 0 ||
			(r = bench_wait(&c, id + 1, o->timeout, 0)) != 0)
			goto fail;
		rtt[i] = (c.ans[id].t - t0) * 1e3;
		bad += c.ans[id].code != 0 || c.ans[id].exit_code != 0;
	}
	bench_cpu(c.pid, &cpu1, &ch1);
	for (long i = 0; i < n; i++) {
		long id = warm + 1 + n + i;
		size_t len = (size_t)snprintf(
			line, sizeof line, "{\"id\":%ld,\"method\":\"bench/unknown\"}\n", id);

		t0 = bench_now();
		if ((r = bench_send(&c, line, len, o->timeout)) != 0 ||
			(r = bench_wait(&c, id + 1, o->timeout, 0)) != 0)
			goto fail;
		rpc[i] = (c.ans[id].t - t0) * 1e3;
	}
	for (long i = 0; i < n; i++)
		fk[i] = bench_fork_true();
	qsort(rtt, (size_t)n, sizeof *rtt, bench_cmp);
	qsort(rpc, (size_t)n, sizeof *rpc, bench_cmp);
	qsort(fk, (size_t)n, sizeof *fk, bench_cmp);
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
	if (bench_close(&c, o->timeout) != 0)
		bench_fail(rep, "roundtrip", "the daemon did not exit cleanly after EOF", 0);
	goto out;
fail:
	bench_fail(rep, "roundtrip", "no answer", r);
	bench_close(&c, o->timeout);
out:
	json_decref(argv);
	free(req);
	free(rtt);
	free(rpc);
	free(fk);
}

/* One streaming flavour: what runs, and what its stdout must be. */
struct bench_stream {
	const char *name; /* figure prefix */
	int tty;
	int random; /* the random pattern file replayed, else zeros */
};

/* The command for a stream of about `bytes` bytes, and the exact count it prints. */
static json_t *
bench_stream_argv(const struct bench_opts *o, const struct bench_stream *k, long long bytes,
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
bench_stream_run(const struct bench_opts *o, struct bench_report *rep, const struct bench_stream *k,
	const char *prefix, long long bytes, double rate)
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
	if ((r = bench_start(o, &c, 1)) != 0) {
		bench_fail(rep, prefix, "start", r);
		bench_close(&c, o->timeout);
		goto out;
	}
	c.sink = &sink;
	bench_mem(c.pid, &rss0, &hwm0);
	bench_cpu(c.pid, &cpu0, &ch0);
	bench_io(c.pid, &rd0, &wr0);
	sl0 = bench_sleeps(c.pid);
	bench_stat(&busy0, &total0);
	self = bench_self_cpu();
	t0 = bench_now();
	if ((r = bench_send(&c, req, strlen(req), o->timeout)) != 0 ||
		(r = bench_wait(&c, 2, o->timeout, rate)) != 0) {
		bench_fail(rep, prefix, "no answer", r);
		bench_close(&c, o->timeout);
		goto out;
	}
	t1 = c.ans[1].t;
	self = bench_self_cpu() - self;
	busy = bench_busy(busy0, total0);
	bench_cpu(c.pid, &cpu1, &ch1);
	bench_io(c.pid, &rd1, &wr1);
	sl1 = bench_sleeps(c.pid);
	bench_sample(&c, bench_now(), 1);
	bench_mem(c.pid, &rss, &hwm);
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
	bench_val(rep, name, (double)c.peak_kb / 1024, "MiB", '<', 16,
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
	if (bench_close(&c, o->timeout) != 0)
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

/* Fast streaming over pipes: zeros and the random pattern; pipe_raw for context. */
static void
bench_pipe(const struct bench_opts *o, struct bench_report *rep)
{
	static const struct bench_stream zero = {"pipe_zero", 0, 0}, rnd = {"pipe_random", 0, 1};
	struct bench_raw_run x;

	bench_stream_run(o, rep, &zero, zero.name, o->bytes, 0);
	bench_stream_run(o, rep, &rnd, rnd.name, o->bytes, 0);
	bench_raw(o->bytes, 0, &x);
	bench_raw_figs(rep, "pipe_raw", &x, "head -c N /dev/zero | this client, no daemon");
	if (x.got != o->bytes)
		bench_fail(rep, "pipe_raw", "short read", 0);
}

/* PTY streaming (tty:true) against a PTY read straight by this client. */
static void
bench_pty(const struct bench_opts *o, struct bench_report *rep)
{
	static const struct bench_stream zero = {"pty_zero", 1, 0};
	struct bench_raw_run x;

	/* Raw PTY speed swings with where the kernel's flip-buffer worker runs: measure it
	 * before and after the daemon's run. */
	for (int i = 0; i < 2; i++) {
		if (i == 1)
			bench_stream_run(o, rep, &zero, zero.name, o->bytes, 0);
		bench_raw(o->bytes, 1, &x);
		bench_raw_figs(rep, "pty_raw", &x,
			"openpty, head -c N /dev/zero on the slave, master read here; run before "
			"and after each tty:true run");
		if (x.got != o->bytes)
			bench_fail(rep, "pty_raw", "short read", 0);
	}
}

/* The median of a figure's runs, or -1. */
static double
bench_median_of(const struct bench_report *rep, const char *name)
{
	double lo, hi;
	int ok;

	for (size_t i = 0; i < rep->n; i++)
		if (strcmp(rep->figs[i].name, name) == 0)
			return bench_fig_value(&rep->figs[i], &lo, &hi, &ok);
	return -1;
}

/* tty:true against the raw PTY, from the medians (each run alone is too noisy). */
static void
bench_pty_ratio(struct bench_report *rep)
{
	double raw = bench_median_of(rep, "pty_raw_throughput");
	double via = bench_median_of(rep, "pty_zero_throughput");

	if (raw > 0 && via > 0)
		bench_val(rep, "pty_vs_raw", 100 * via / raw, "%", '>', 80,
			"median tty:true throughput / median raw PTY throughput");
}

/* n `sleep` processes at once: the wall time until every one is answered. */
static void
bench_many(const struct bench_opts *o, struct bench_report *rep, const char *prefix, long n)
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
	if ((r = bench_start(o, &c, n)) != 0) {
		bench_fail(rep, prefix, "start", r);
		bench_close(&c, o->timeout);
		goto out;
	}
	t0 = bench_now();
	if ((r = bench_send(&c, buf, len, o->timeout)) == 0)
		r = bench_wait(&c, n + 1, o->timeout + o->sleep, 0);
	bench_mem(c.pid, &rss, &hwm);
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
	if (bench_close(&c, o->timeout) != 0)
		bench_fail(rep, prefix, "the daemon did not exit cleanly after EOF", 0);
out:
	free(buf);
}

/* --concurrent and --many processes at once. */
static void
bench_concurrent(const struct bench_opts *o, struct bench_report *rep)
{
	char prefix[32];

	snprintf(prefix, sizeof prefix, "concurrent_%ld", o->concurrent);
	bench_many(o, rep, prefix, o->concurrent);
	snprintf(prefix, sizeof prefix, "concurrent_%ld", o->many);
	bench_many(o, rep, prefix, o->many);
}

/* A slow client: memory must stay bounded and every byte arrive. */
static void
bench_slow(const struct bench_opts *o, struct bench_report *rep)
{
	static const struct bench_stream zero = {"slow", 0, 0};

	bench_stream_run(o, rep, &zero, "slow", o->slow_bytes, o->slow_rate);
}

/* nftw callback: remove one entry. */
static int
bench_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

/* Write the random pattern file; 0 or -errno. */
static int
bench_pattern(struct bench_opts *o)
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
	o->pattern_path = xasprintf("%s/random.bin", o->dir);
	if ((fd = open(o->pattern_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return -errno;
	if (write(fd, o->rand, BENCH_PAT_RAND) != BENCH_PAT_RAND)
		r = -EIO;
	close(fd);
	return r;
}

/* Parse a positive number; 0 on success. */
static int
bench_num(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno != 0 || end == s || *end != '\0' || *v <= 0 ? -1 : 0;
}

/* Parse a byte count with an optional K, M or G suffix (powers of 1024); 0 on success. */
static int
bench_bytes(const char *s, long long *v)
{
	char *end;
	long long m = 1;

	errno = 0;
	*v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *v < 0)
		return -1;
	if (*end == 'K' || *end == 'k')
		m = 1024;
	else if (*end == 'M' || *end == 'm')
		m = 1024 * 1024;
	else if (*end == 'G' || *end == 'g')
		m = 1024 * 1024 * 1024;
	if (m != 1)
		end++;
	if (*end != '\0' || *v > LLONG_MAX / m)
		return -1;
	*v *= m;
	return 0;
}

/* Parse --only a,b,c into a mask. */
static int
bench_only(const char *s, unsigned *mask)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = {{"base64", BENCH_B64}, {"roundtrip", BENCH_RT}, {"pipe", BENCH_PIPE},
		{"pty", BENCH_PTY}, {"concurrent", BENCH_CONC}, {"slow", BENCH_SLOW}};
	size_t len, i;

	*mask = 0;
	while (*s != '\0') {
		len = strcspn(s, ",");
		for (i = 0; i < nitems(names); i++)
			if (strlen(names[i].name) == len && strncmp(names[i].name, s, len) == 0)
				break;
		if (i == nitems(names))
			return -1;
		*mask |= names[i].bit;
		s += len + (s[len] == ',');
	}
	return *mask != 0 ? 0 : -1;
}

static const char bench_usage[] =
	"usage: bench_exec [--bin PATH] [--arg ARG]... [--only LIST] [--repeat N] [--execs N]\n"
	"                  [--bytes N] [--slow-bytes N] [--slow-rate MB/s] [--concurrent N]\n"
	"                  [--many N] [--sleep S] [--pipe-size N] [--timeout S] [--count-only]\n"
	"                  [--json] [--verbose]\n"
	"  --bin        the daemon (default $APP_SERVER_BIN, else build/app-server)\n"
	"  --arg        an argument passed to it (repeat; e.g. --arg app-server for upstream codex)\n"
	"  --only       any of base64,roundtrip,pipe,pty,concurrent,slow (default: all)\n"
	"  --repeat     runs of each part; figures are medians (3)\n"
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

int
main(int argc, char **argv)
{
	static void (*const parts[BENCH_PARTS])(
		const struct bench_opts *, struct bench_report *) = {
		bench_base64, bench_roundtrip, bench_pipe, bench_pty, bench_concurrent, bench_slow};
	struct bench_opts o = {.repeat = 3,
		.execs = 1000,
		.bytes = 400LL << 20,
		.slow_bytes = 200LL << 20,
		.slow_rate = 20,
		.concurrent = 100,
		.many = 300,
		.sleep = 0.5,
		.timeout = 10,
		.only = BENCH_ALL};
	struct bench_report rep = {0};
	char home[] = "/tmp/bench_exec.XXXXXX";
	const char *env = getenv("APP_SERVER_BIN");
	long long ll;
	double v;
	int status = 2, made = 0, r;

	o.bin = env != NULL && *env != '\0' ? env : "build/app-server";
	o.argv = xcalloc((size_t)argc + 2, sizeof *o.argv);
	o.argc = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--json") == 0)
			o.json = 1;
		else if (strcmp(a, "--verbose") == 0)
			o.verbose = 1;
		else if (strcmp(a, "--count-only") == 0)
			o.count_only = 1;
		else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(bench_usage, stdout);
			status = 0;
			goto out;
		} else if (val == NULL)
			goto usage;
		else if (strcmp(a, "--bin") == 0)
			o.bin = argv[++i];
		else if (strcmp(a, "--arg") == 0)
			o.argv[o.argc++] = argv[++i];
		else if (strcmp(a, "--only") == 0) {
			if (bench_only(argv[++i], &o.only) != 0)
				goto usage;
		} else if (strcmp(a, "--bytes") == 0 || strcmp(a, "--slow-bytes") == 0 ||
			strcmp(a, "--pipe-size") == 0) {
			if (bench_bytes(argv[++i], &ll) != 0)
				goto usage;
			if (strcmp(a, "--bytes") == 0)
				o.bytes = ll;
			else if (strcmp(a, "--slow-bytes") == 0)
				o.slow_bytes = ll;
			else
				o.pipe_size = (long)ll;
		} else if (bench_num(argv[++i], &v) != 0)
			goto usage;
		else if (strcmp(a, "--repeat") == 0)
			o.repeat = (long)v;
		else if (strcmp(a, "--execs") == 0)
			o.execs = (long)v;
		else if (strcmp(a, "--slow-rate") == 0)
			o.slow_rate = v;
		else if (strcmp(a, "--concurrent") == 0)
			o.concurrent = (long)v;
		else if (strcmp(a, "--many") == 0)
			o.many = (long)v;
		else if (strcmp(a, "--sleep") == 0)
			o.sleep = v;
		else if (strcmp(a, "--timeout") == 0)
			o.timeout = v;
		else
			goto usage;
	}
	if (o.repeat < 1 || o.execs < 1 || o.bytes < 1 || o.slow_bytes < 1 || o.concurrent < 1 ||
		o.many < 1)
		goto usage;
	o.argv[0] = (char *)o.bin;
	rep.json = o.json;
	signal(SIGPIPE, SIG_IGN);
	if (mkdtemp(home) == NULL || setenv("CODEX_HOME", home, 1) != 0) {
		fprintf(stderr, "bench: cannot make a CODEX_HOME: %s\n", strerror(errno));
		goto out;
	}
	made = 1;
	o.dir = home;
	if ((r = bench_pattern(&o)) != 0) {
		fprintf(stderr, "bench: cannot write the pattern file: %s\n", strerror(-r));
		goto out;
	}
	bench_load(rep.load_start, sizeof rep.load_start);
	if (!o.json)
		printf("bench_exec: %s (CODEX_HOME=%s), %ld run%s per part, load %s\n", o.bin, home,
			o.repeat, o.repeat == 1 ? "" : "s", rep.load_start);
	for (int p = 0; p < BENCH_PARTS; p++) {
		if ((o.only & (1u << p)) == 0)
			continue;
		for (long i = 0; i < o.repeat; i++)
			parts[p](&o, &rep);
		if ((1u << p) == BENCH_PTY)
			bench_pty_ratio(&rep);
		bench_print(&rep);
	}
	bench_load(rep.load_end, sizeof rep.load_end);
	if (o.json)
		bench_report_json(&rep, &o);
	else
		printf("load at the end: %s\n", rep.load_end);
	status = rep.failed;
	goto out;
usage:
	fputs(bench_usage, stderr);
out:
	if (made)
		nftw(home, bench_rm, 16, FTW_DEPTH | FTW_PHYS);
	bench_report_free(&rep);
	free(o.pattern_path);
	free(o.rand);
	free(o.argv);
	return status;
}
