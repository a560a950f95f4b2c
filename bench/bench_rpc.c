/*
 * bench_rpc: drives the app-server binary over pipes, as a client would, and prints one line
 * per figure (name, value, unit, goal, ok or MISS), or one JSON document with --json.
 *
 *   spawn     fork/exec -> initialize answered, median and p95 over --runs; then the time from
 *             closing its stdin to the process exiting
 *   rss       VmRSS and VmHWM of the process (and any children) after initialize, idle 1 s
 *   pipe-init --requests repeated `initialize` requests written as fast as the pipe takes them
 *             while reading concurrently (both ends non-blocking, one poll loop); every id
 *             1..N must be answered exactly once (-32600 "Already initialized")
 *   pipe-unknown  the same with an unknown method (-32601)
 *   slow      --slow-requests written without reading for --slow-pause seconds, then read:
 *             all answered, and the peak RSS shows whether the daemon's memory stayed bounded
 *
 * Rules kept: the client never blocks on one direction while the other is full (no deadlock);
 * stdin stays open until every request is answered (closing it early would measure shutdown,
 * not throughput); a stall of --timeout seconds without output ends a run as failed.
 * Exit status 1 when a request went unanswered or was answered twice, or the daemon died;
 * a missed performance goal is printed as MISS but does not change the status.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "rpc.h"
#include "xmalloc.h"

#define BENCH_RBUF	(256 * 1024)	   /* initial read buffer */
#define BENCH_RBUF_MAX	(64 * 1024 * 1024) /* longest response line accepted */
#define BENCH_WBUF	(64 * 1024)	   /* requests formatted per batch */
#define BENCH_WRITE_CAP (1024 * 1024)	   /* bytes written per poll round */
#define BENCH_REQ_MAX	256		   /* longest formatted request */
#define BENCH_SAMPLE	0.01		   /* seconds between RSS samples in a flow */

#define BENCH_SPAWN 0x01
#define BENCH_RSS   0x02
#define BENCH_PINIT 0x04
#define BENCH_PUNK  0x08
#define BENCH_SLOW  0x10
#define BENCH_ALL   0x1f

/* What to run and against which binary. */
struct bench_opts {
	const char *bin;
	char **argv; /* bin, the --arg values, NULL */
	size_t argc;
	long runs;
	long requests;
	long slow_requests;
	double slow_pause;
	double timeout;
	unsigned only;
	const char *home; /* the CODEX_HOME made for this run */
	int fresh_home;	  /* a new CODEX_HOME for each spawn run */
	int json;
	int lax;
	int verbose;
};

/* One request kind for the pipelined runs: the text after the id, and the expected answer. */
struct bench_kind {
	const char *name;
	const char *tail;
	int code;
};

static const struct bench_kind bench_kinds[] = {
	{"initialize",
		",\"method\":\"initialize\",\"params\":{\"clientInfo\":"
		"{\"name\":\"bench\",\"version\":\"1.0\"}}}\n",
		RPC_INVALID_REQUEST},
	{"unknown", ",\"method\":\"bench/unknown\"}\n", RPC_METHOD_NOT_FOUND},
};

/* The daemon under test: its pid, our ends of its stdin and stdout, partial output. */
struct bench_proc {
	pid_t pid;
	int pidfd;
	int in_fd;
	int out_fd;
	char *rbuf;
	size_t rlen, rcap;
};

/* One measured figure; cmp is '<' (value <= goal), '>' (value >= goal) or 0 (no goal). */
struct bench_fig {
	char *name;
	double value;
	const char *unit;
	char cmp;
	double goal;
	char *note;
};

struct bench_report {
	struct bench_fig *figs;
	size_t n;
	int failed; /* a correctness failure: unanswered, duplicate, died */
	int json;
};

/* The pipelined flow: what was written, what came back. */
struct bench_flow {
	struct bench_proc *p;
	const struct bench_kind *kind;
	size_t tail_len;
	long n;
	long next;     /* next id to format */
	long answered; /* distinct ids 1..n answered */
	long dups, strays, wrong_code, notes;
	struct {
		long long code; /* 0: a result */
		long n;
	} codes[8]; /* the answers by error code, for the report */
	size_t ncodes;
	double t_last;	/* when the last answer arrived */
	long peak_kb;	/* largest VmRSS/VmHWM sampled while running */
	double sampled; /* when it was last sampled */
	unsigned char *seen;
	char *wbuf;
	size_t wlen, woff;
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

/* Append a figure and, in text mode, print it at once. */
static void
bench_fig(struct bench_report *rep, const char *name, double value, const char *unit, char cmp,
	double goal, const char *note)
{
	struct bench_fig *f;
	char gbuf[64] = "";
	const char *verdict = "";

	rep->figs = xrealloc(rep->figs, (rep->n + 1) * sizeof *rep->figs);
	f = &rep->figs[rep->n++];
	f->name = xstrdup(name);
	f->value = value;
	f->unit = unit;
	f->cmp = cmp;
	f->goal = goal;
	f->note = note != NULL ? xstrdup(note) : NULL;
	if (rep->json)
		return;
	if (cmp != 0) {
		snprintf(gbuf, sizeof gbuf, "goal %s %g %s", cmp == '<' ? "<=" : ">=", goal, unit);
		verdict = (cmp == '<' ? value <= goal : value >= goal) ? "ok" : "MISS";
	}
	printf("%-34s %14.3f %-6s %-22s %-4s %s\n", name, value, unit, gbuf, verdict,
		note != NULL ? note : "");
	fflush(stdout);
}

/* Print the collected figures as one JSON document. */
static void
bench_report_json(const struct bench_report *rep, const struct bench_opts *o)
{
	json_t *doc =
		json_pack("{s:s, s:[], s:b}", "bin", o->bin, "figures", "failed", rep->failed);
	json_t *arr = json_object_get(doc, "figures"), *f;
	char *s;

	for (size_t i = 0; i < rep->n; i++) {
		const struct bench_fig *g = &rep->figs[i];

		f = json_pack(
			"{s:s, s:f, s:s}", "name", g->name, "value", g->value, "unit", g->unit);
		if (g->cmp != 0) {
			json_object_set_new(f, "goal", json_real(g->goal));
			json_object_set_new(f, "goal_op", json_string(g->cmp == '<' ? "<=" : ">="));
			json_object_set_new(f, "ok",
				json_boolean(
					g->cmp == '<' ? g->value <= g->goal : g->value >= g->goal));
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
		free(rep->figs[i].note);
	}
	free(rep->figs);
}

/* fork/exec the binary with its stdin and stdout on fresh non-blocking pipes. */
static int
bench_spawn(const struct bench_opts *o, struct bench_proc *p)
{
	int in[2] = {-1, -1}, out[2] = {-1, -1}, null = -1, r = -1;

	memset(p, 0, sizeof *p);
	p->pid = -1;
	p->pidfd = p->in_fd = p->out_fd = -1;
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		goto out;
	if (!o->verbose && (null = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
		goto out;
	if ((p->pid = fork()) < 0)
		goto out;
	if (p->pid == 0) {
		if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0 ||
			(null >= 0 && dup2(null, STDERR_FILENO) < 0))
			_exit(126);
		execvp(o->bin, o->argv);
		_exit(127);
	}
	p->in_fd = in[1];
	p->out_fd = out[0];
	in[1] = out[0] = -1; /* transferred */
	fcntl(p->in_fd, F_SETFL, fcntl(p->in_fd, F_GETFL) | O_NONBLOCK);
	fcntl(p->out_fd, F_SETFL, fcntl(p->out_fd, F_GETFL) | O_NONBLOCK);
	p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	p->rcap = BENCH_RBUF;
	p->rbuf = xmalloc(p->rcap);
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

/* Close stdin, wait up to timeout for the exit (draining stdout); seconds taken, or -1. */
static double
bench_finish(struct bench_proc *p, double timeout, int *status)
{
	struct pollfd pfd[2];
	double t0, spent = -1;
	char sink[65536];
	int gone = 0, eof = 0;
	ssize_t n;

	*status = -1;
	if (p->pid < 0)
		goto out;
	if (p->in_fd >= 0) {
		close(p->in_fd);
		p->in_fd = -1;
	}
	t0 = bench_now();
	while (!gone && bench_now() - t0 < timeout) {
		int nfd = 0, ms = (int)((timeout - (bench_now() - t0)) * 1000) + 1;

		if (p->pidfd >= 0)
			pfd[nfd++] = (struct pollfd){.fd = p->pidfd, .events = POLLIN};
		if (!eof)
			pfd[nfd++] = (struct pollfd){.fd = p->out_fd, .events = POLLIN};
		if (nfd == 0 || poll(pfd, nfd, ms) < 0)
			break;
		if (p->pidfd >= 0 && pfd[0].revents != 0)
			gone = 1;
		if (!eof && pfd[nfd - 1].revents != 0) {
			n = read(p->out_fd, sink, sizeof sink);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
				eof = 1;
				gone = p->pidfd < 0; /* without a pidfd, EOF stands for the exit */
			}
		}
	}
	if (gone)
		spent = bench_now() - t0;
	else
		kill(p->pid, SIGKILL);
	while (waitpid(p->pid, status, 0) < 0 && errno == EINTR)
		;
	p->pid = -1;
out:
	if (p->in_fd >= 0)
		close(p->in_fd);
	if (p->out_fd >= 0)
		close(p->out_fd);
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->in_fd = p->out_fd = p->pidfd = -1;
	free(p->rbuf);
	p->rbuf = NULL;
	return spent;
}

/* Parse a decimal integer at s (bounded by end); 0 on success. */
static int
bench_int(const char *s, const char *end, long long *v)
{
	long long x = 0;
	int neg = 0, digits = 0;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s < end && *s == '-') {
		neg = 1;
		s++;
	}
	for (; s < end && *s >= '0' && *s <= '9' && digits < 18; s++, digits++)
		x = x * 10 + (*s - '0');
	if (digits == 0)
		return -1;
	*v = neg ? -x : x;
	return 0;
}

/*
 * Scan one message line without a full parse: the top-level "id" (an integer), whether it has
 * a top-level "method" (a notification or server request), and "error"."code".
 */
static void
bench_scan(const char *s, size_t len, long long *id, int *has_id, int *is_msg, long long *code)
{
	const char *end = s + len, *key = NULL, *q;
	int depth = 0, in_err = 0, err_key = 0;
	size_t klen = 0;

	*has_id = *is_msg = 0;
	*code = 0;
	for (; s < end; s++) {
		switch (*s) {
		case '{':
		case '[':
			depth++;
			if (depth == 2)
				in_err = err_key && *s == '{';
			break;
		case '}':
		case ']':
			depth--;
			break;
		case '"':
			key = ++s;
			while (s < end && *s != '"')
				s += *s == '\\' ? 2 : 1;
			if (s >= end)
				return;
			klen = (size_t)(s - key);
			for (q = s + 1; q < end && (*q == ' ' || *q == '\t'); q++)
				;
			if (q >= end || *q != ':')
				break;
			if (depth == 1) {
				err_key = klen == 5 && memcmp(key, "error", 5) == 0;
				if (klen == 2 && memcmp(key, "id", 2) == 0)
					*has_id = bench_int(q + 1, end, id) == 0;
				else if (klen == 6 && memcmp(key, "method", 6) == 0)
					*is_msg = 1;
			} else if (depth == 2 && in_err && klen == 4 && memcmp(key, "code", 4) == 0)
				bench_int(q + 1, end, code);
			s = q;
			break;
		}
	}
}

/* Read once (non-blocking) and hand each complete line to fn; 0, 1 at EOF, or -errno. */
static int
bench_read(struct bench_proc *p, void (*fn)(void *, const char *, size_t), void *arg)
{
	size_t off = 0;
	ssize_t n;
	char *nl;

	if (p->rlen == p->rcap) {
		if (p->rcap >= BENCH_RBUF_MAX)
			return -EMSGSIZE;
		p->rcap *= 2;
		p->rbuf = xrealloc(p->rbuf, p->rcap);
	}
	n = read(p->out_fd, p->rbuf + p->rlen, p->rcap - p->rlen);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return 1;
	p->rlen += (size_t)n;
	while ((nl = memchr(p->rbuf + off, '\n', p->rlen - off)) != NULL) {
		fn(arg, p->rbuf + off, (size_t)(nl - (p->rbuf + off)));
		off = (size_t)(nl - p->rbuf) + 1;
	}
	if (off > 0) {
		memmove(p->rbuf, p->rbuf + off, p->rlen - off);
		p->rlen -= off;
	}
	return 0;
}

/* bench_read callback for the handshake: note the answer to id 0. */
static void
bench_handshake_line(void *arg, const char *line, size_t len)
{
	int *done = arg, has_id, is_msg;
	long long id, code;

	bench_scan(line, len, &id, &has_id, &is_msg, &code);
	if (has_id && !is_msg && id == 0)
		*done = code == 0 ? 1 : -1;
}

/* Send initialize (id 0) and wait for its answer; 0, or -errno. */
static int
bench_handshake(struct bench_proc *p, double timeout)
{
	static const char req[] = "{\"id\":0,\"method\":\"initialize\",\"params\":{\"clientInfo\":"
				  "{\"name\":\"bench\",\"title\":null,\"version\":\"1.0\"},"
				  "\"capabilities\":null}}\n";
	struct pollfd pfd = {.fd = p->out_fd, .events = POLLIN};
	double t0 = bench_now(), left;
	int done = 0, r;

	if (write(p->in_fd, req, sizeof req - 1) != (ssize_t)(sizeof req - 1))
		return errno != 0 ? -errno : -EIO;
	while (done == 0) {
		if ((left = timeout - (bench_now() - t0)) <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			return -errno;
		if ((r = bench_read(p, bench_handshake_line, &done)) != 0)
			return r > 0 ? -EPIPE : r;
	}
	return done == 1 ? 0 : -EPROTO;
}

/* Add VmRSS and VmHWM (KiB) of one process. */
static void
bench_status_one(pid_t pid, long *rss, long *hwm)
{
	char path[64], line[256];
	FILE *f;
	long v;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "VmRSS: %ld", &v) == 1)
			*rss += v;
		else if (sscanf(line, "VmHWM: %ld", &v) == 1)
			*hwm += v;
	}
	fclose(f);
}

/* Sum VmRSS and VmHWM (KiB) over a process and its descendants; counts the processes. */
static void
bench_status(pid_t pid, long *rss, long *hwm, int *nproc)
{
	char path[64], buf[4096], *s, *e;
	struct dirent *de;
	DIR *dir;
	FILE *f;
	long child;
	size_t n;

	bench_status_one(pid, rss, hwm);
	(*nproc)++;
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if ((dir = opendir(path)) == NULL)
		return;
	while ((de = readdir(dir)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%.20s/children", (int)pid, de->d_name);
		if ((f = fopen(path, "re")) == NULL)
			continue;
		n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = '\0';
		for (s = buf; (child = strtol(s, &e, 10)) > 0 && e != s; s = e)
			bench_status(child, rss, hwm, nproc);
	}
	closedir(dir);
}

/* CPU time (user + system, seconds) a process has used so far, or -1. */
static double
bench_cpu(pid_t pid)
{
	char path[64], buf[1024], *s;
	unsigned long long ut, st;
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after "pid (comm) ", utime and stime are fields 14 and 15 */
	if ((s = strrchr(buf, ')')) == NULL ||
		sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) !=
			2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* CPU time this client has used so far, seconds. */
static double
bench_self_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

/* Spawn, initialize, close stdin, exit: --runs times. */
static void
bench_spawn_runs(const struct bench_opts *o, struct bench_report *rep)
{
	double *init = xcalloc((size_t)o->runs, sizeof *init);
	double *exits = xcalloc((size_t)o->runs, sizeof *exits);
	struct bench_proc p;
	size_t ni = 0, ne = 0;
	long bad = 0;
	double t0, t1, x;
	char note[128], home[PATH_MAX];
	int status, r;

	for (long i = 0; i < o->runs; i++) {
		snprintf(home, sizeof home, "%s/run.XXXXXX", o->home);
		if (o->fresh_home &&
			(mkdtemp(home) == NULL || setenv("CODEX_HOME", home, 1) != 0)) {
			fprintf(stderr, "bench: cannot make %s: %s\n", home, strerror(errno));
			bad++;
			break;
		}
		t0 = bench_now();
		if ((r = bench_spawn(o, &p)) != 0) {
			fprintf(stderr, "bench: spawn %s: %s\n", o->bin, strerror(-r));
			bad++;
			break;
		}
		r = bench_handshake(&p, o->timeout);
		t1 = bench_now();
		if (r == 0)
			init[ni++] = (t1 - t0) * 1e3;
		x = bench_finish(&p, o->timeout, &status);
		if (r == 0 && x >= 0)
			exits[ne++] = x * 1e3;
		if (r != 0 || x < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			bad++;
		if (o->fresh_home)
			nftw(home, bench_rm, 16, FTW_DEPTH | FTW_PHYS);
	}
	setenv("CODEX_HOME", o->home, 1);
	qsort(init, ni, sizeof *init, bench_cmp);
	qsort(exits, ne, sizeof *exits, bench_cmp);
	snprintf(note, sizeof note, "%zu runs, %ld failed%s", ni, bad,
		o->fresh_home ? ", a new CODEX_HOME each" : ", one CODEX_HOME");
	if (ni > 0) {
		bench_fig(rep, "spawn_initialize_median", bench_pct(init, ni, 50), "ms", '<', 2,
			note);
		bench_fig(rep, "spawn_initialize_p95", bench_pct(init, ni, 95), "ms", 0, 0, NULL);
		bench_fig(rep, "spawn_initialize_min", init[0], "ms", 0, 0, NULL);
	}
	if (ne > 0) {
		bench_fig(rep, "exit_after_eof_median", bench_pct(exits, ne, 50), "ms", 0, 0,
			"stdin closed -> process gone");
		bench_fig(rep, "exit_after_eof_p95", bench_pct(exits, ne, 95), "ms", 0, 0, NULL);
	}
	if (bad > 0) {
		fprintf(stderr, "bench: %ld of %ld spawn runs failed (no answer, or bad exit)\n",
			bad, o->runs);
		rep->failed = 1;
	}
	free(init);
	free(exits);
}

/* Idle memory one second after initialize. */
static void
bench_rss(const struct bench_opts *o, struct bench_report *rep)
{
	struct timespec idle = {1, 0};
	struct bench_proc p;
	long rss = 0, hwm = 0;
	int nproc = 0, status, r;
	char note[96];

	if ((r = bench_spawn(o, &p)) != 0 || (r = bench_handshake(&p, o->timeout)) != 0) {
		fprintf(stderr, "bench: rss: %s\n", strerror(-r));
		rep->failed = 1;
		bench_finish(&p, o->timeout, &status);
		return;
	}
	nanosleep(&idle, NULL);
	bench_status_one(p.pid, &rss, &hwm);
	bench_fig(rep, "idle_vmrss", (double)rss / 1024, "MiB", '<', 4, "1 s after initialize");
	bench_fig(rep, "idle_vmhwm", (double)hwm / 1024, "MiB", '<', 4, NULL);
	rss = hwm = 0;
	bench_status(p.pid, &rss, &hwm, &nproc);
	snprintf(note, sizeof note, "VmRSS summed over %d process%s", nproc,
		nproc == 1 ? " (no children)" : "es (it and its descendants)");
	bench_fig(rep, "idle_vmrss_tree", (double)rss / 1024, "MiB", 0, 0, note);
	bench_finish(&p, o->timeout, &status);
}

/* Format request id into p; returns its length. */
static size_t
bench_format(const struct bench_flow *f, char *p, long id)
{
	char digits[24];
	size_t nd = 0, len = 6;

	memcpy(p, "{\"id\":", 6);
	do {
		digits[nd++] = (char)('0' + id % 10);
		id /= 10;
	} while (id > 0);
	while (nd > 0)
		p[len++] = digits[--nd];
	memcpy(p + len, f->kind->tail, f->tail_len);
	return len + f->tail_len;
}

/* Write requests until the pipe is full or a round's cap; 0, or -errno. */
static int
bench_flow_write(struct bench_flow *f)
{
	size_t sent = 0;
	ssize_t n;

	while (sent < BENCH_WRITE_CAP) {
		if (f->woff == f->wlen) {
			f->woff = f->wlen = 0;
			while (f->next <= f->n && f->wlen + BENCH_REQ_MAX <= BENCH_WBUF)
				f->wlen += bench_format(f, f->wbuf + f->wlen, f->next++);
			if (f->wlen == 0)
				return 0;
		}
		n = write(f->p->in_fd, f->wbuf + f->woff, f->wlen - f->woff);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		f->woff += (size_t)n;
		sent += (size_t)n;
	}
	return 0;
}

/* bench_read callback for the flow: mark the id answered, check its code. */
static void
bench_flow_line(void *arg, const char *line, size_t len)
{
	struct bench_flow *f = arg;
	int has_id, is_msg;
	long long id, code;
	size_t i;

	bench_scan(line, len, &id, &has_id, &is_msg, &code);
	if (is_msg) {
		f->notes++;
		return;
	}
	if (!has_id || id < 1 || id > f->n) {
		f->strays++;
		return;
	}
	if (f->seen[id] != 0) {
		f->dups++;
		return;
	}
	f->seen[id] = 1;
	f->answered++;
	if (code != f->kind->code)
		f->wrong_code++;
	for (i = 0; i < f->ncodes && f->codes[i].code != code; i++)
		;
	if (i == f->ncodes && i < nitems(f->codes))
		f->codes[f->ncodes++].code = code;
	if (i < f->ncodes)
		f->codes[i].n++;
}

/* Sample the daemon's RSS at most every BENCH_SAMPLE seconds; VmHWM alone can miss peaks. */
static void
bench_flow_sample(struct bench_flow *f, double now)
{
	long rss = 0, hwm = 0;
	int nproc = 0;

	if (now - f->sampled < BENCH_SAMPLE)
		return;
	f->sampled = now;
	bench_status(f->p->pid, &rss, &hwm, &nproc);
	if (rss > f->peak_kb)
		f->peak_kb = rss;
	if (hwm > f->peak_kb)
		f->peak_kb = hwm;
}

/* True while there is something left to write. */
static int
bench_flow_pending(const struct bench_flow *f)
{
	return f->next <= f->n || f->woff < f->wlen;
}

/*
 * The poll loop: write while the pipe takes it, read what comes back (unless write_only),
 * until every id is answered, a stall of timeout seconds, or the deadline (0: none).
 * Returns 0 when done, 1 at the deadline, -ETIMEDOUT on a stall, -errno on a pipe error.
 */
static int
bench_flow_run(struct bench_flow *f, double timeout, double deadline, int write_only)
{
	struct pollfd pfd[2];
	double last = bench_now(), now, left;
	int nfd, r;

	while (f->answered < f->n) {
		now = bench_now();
		bench_flow_sample(f, now);
		if (deadline > 0 && now >= deadline)
			return 1;
		left = timeout - (now - last);
		if (deadline > 0 && deadline - now < left)
			left = deadline - now;
		if (left <= 0)
			return -ETIMEDOUT;
		if (left > BENCH_SAMPLE)
			left = BENCH_SAMPLE;
		nfd = 0;
		if (bench_flow_pending(f))
			pfd[nfd++] = (struct pollfd){.fd = f->p->in_fd, .events = POLLOUT};
		if (!write_only)
			pfd[nfd++] = (struct pollfd){.fd = f->p->out_fd, .events = POLLIN};
		if (nfd == 0) {
			poll(NULL, 0, (int)(left * 1000) + 1);
			continue;
		}
		if (poll(pfd, nfd, (int)(left * 1000) + 1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < nfd; i++) {
			if (pfd[i].revents == 0)
				continue;
			if (pfd[i].fd == f->p->in_fd) {
				if ((r = bench_flow_write(f)) != 0)
					return r;
				if (write_only)
					last = bench_now();
			} else {
				long before = f->answered + f->notes + f->strays + f->dups;

				if ((r = bench_read(f->p, bench_flow_line, f)) != 0)
					return r > 0 ? -EPIPE : r;
				if (f->answered + f->notes + f->strays + f->dups != before)
					last = f->t_last = bench_now();
			}
		}
	}
	return 0;
}

/* Report the correctness of a flow; marks the report failed when an id went unanswered. */
static void
bench_flow_check(const struct bench_opts *o, struct bench_report *rep, const char *prefix,
	const struct bench_flow *f, int r)
{
	char name[64], note[384];
	size_t len;

	len = (size_t)snprintf(note, sizeof note,
		"%ld/%ld answered (%ld written), %ld duplicate, %ld stray, %ld wrong code%s; codes",
		f->answered, f->n, f->next - 1, f->dups, f->strays, f->wrong_code,
		r == -ETIMEDOUT ? ", stalled"
			: r < 0 ? ", pipe error"
				: "");
	for (size_t i = 0; i < f->ncodes && len < sizeof note; i++)
		len += (size_t)snprintf(note + len, sizeof note - len, " %lld:%ld",
			f->codes[i].code, f->codes[i].n);
	snprintf(name, sizeof name, "%s_answered", prefix);
	bench_fig(rep, name, 100.0 * (double)f->answered / (double)f->n, "%", '>', 100, note);
	if (r != 0 || f->answered != f->n || f->dups != 0 || f->strays != 0 ||
		(f->wrong_code != 0 && !o->lax)) {
		fprintf(stderr, "bench: %s: %s (%s)\n", prefix, note,
			r < 0 ? strerror(-r) : "completed");
		rep->failed = 1;
	}
}

/* Start a daemon, initialize it, and set up a flow of n requests of one kind. */
static int
bench_flow_start(const struct bench_opts *o, struct bench_proc *p, struct bench_flow *f,
	const struct bench_kind *k, long n)
{
	int r;

	memset(f, 0, sizeof *f);
	if ((r = bench_spawn(o, p)) != 0 || (r = bench_handshake(p, o->timeout)) != 0)
		return r;
	f->p = p;
	f->kind = k;
	f->tail_len = strlen(k->tail);
	f->n = n;
	f->next = 1;
	f->seen = xcalloc((size_t)n + 1, 1);
	f->wbuf = xmalloc(BENCH_WBUF);
	return 0;
}

static void
bench_flow_free(struct bench_flow *f)
{
	free(f->seen);
	free(f->wbuf);
}

/* N pipelined requests of one kind: requests/s, all answered, the daemon's peak RSS. */
static void
bench_pipeline(const struct bench_opts *o, struct bench_report *rep, const struct bench_kind *k)
{
	struct bench_proc p;
	struct bench_flow f;
	double t0, t1, x, cpu, self;
	char prefix[32], name[64], note[96];
	int status, r;

	snprintf(prefix, sizeof prefix, "pipe_%s", k->name);
	if ((r = bench_flow_start(o, &p, &f, k, o->requests)) != 0) {
		fprintf(stderr, "bench: %s: start: %s\n", prefix, strerror(-r));
		rep->failed = 1;
		goto out;
	}
	cpu = bench_cpu(p.pid);
	self = bench_self_cpu();
	t0 = f.t_last = bench_now();
	r = bench_flow_run(&f, o->timeout, 0, 0);
	t1 = f.t_last > t0 ? f.t_last : bench_now(); /* a stall's wait is not counted */
	cpu = bench_cpu(p.pid) - cpu;
	self = bench_self_cpu() - self;
	f.sampled = 0;
	bench_flow_sample(&f, bench_now());
	snprintf(name, sizeof name, "%s_rps", prefix);
	snprintf(note, sizeof note, "%ld answered in %.3f s (to the last answer)", f.answered,
		t1 - t0);
	bench_fig(rep, name, (double)f.answered / (t1 - t0), "req/s", '>', 300000, note);
	bench_flow_check(o, rep, prefix, &f, r);
	if (f.answered > 0 && cpu >= 0) {
		snprintf(name, sizeof name, "%s_cpu_per_req", prefix);
		bench_fig(rep, name, cpu * 1e6 / (double)f.answered, "us", 0, 0,
			"the daemon's user+system CPU per answered request");
		snprintf(name, sizeof name, "%s_client_cpu_per_req", prefix);
		bench_fig(rep, name, self * 1e6 / (double)f.answered, "us", 0, 0,
			"this client's CPU (format, write, read, scan, RSS samples)");
	}
	snprintf(name, sizeof name, "%s_peak_rss", prefix);
	bench_fig(rep, name, (double)f.peak_kb / 1024, "MiB", 0, 0,
		"max of VmRSS sampled every 10 ms and VmHWM");
	x = bench_finish(&p, o->timeout, &status);
	if (x < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench: %s: the daemon did not exit cleanly after EOF\n", prefix);
		rep->failed = 1;
	}
out:
	bench_finish(&p, o->timeout, &status);
	bench_flow_free(&f);
}

/* A client that stops reading: write for slow_pause seconds without reading, then drain. */
static void
bench_slow(const struct bench_opts *o, struct bench_report *rep)
{
	struct bench_proc p;
	struct bench_flow f;
	long prss = 0, phwm = 0;
	double t0, t1;
	char note[96];
	int nproc = 0, status, r;

	if ((r = bench_flow_start(o, &p, &f, &bench_kinds[0], o->slow_requests)) != 0) {
		fprintf(stderr, "bench: slow: start: %s\n", strerror(-r));
		rep->failed = 1;
		goto out;
	}
	t0 = bench_now();
	r = bench_flow_run(&f, o->slow_pause + 1, t0 + o->slow_pause, 1);
	if (r < 0 && r != -ETIMEDOUT)
		goto check;
	bench_status(p.pid, &prss, &phwm, &nproc);
	snprintf(note, sizeof note, "of %ld, before the daemon pushed back", f.n);
	bench_fig(rep, "slow_written_unread", (double)(f.next - 1), "req", 0, 0, note);
	bench_fig(rep, "slow_vmrss_paused", (double)prss / 1024, "MiB", 0, 0,
		"while nothing is read");
	t1 = bench_now();
	r = bench_flow_run(&f, o->timeout, 0, 0);
	snprintf(note, sizeof note, "reading resumed -> %ld of %ld answered", f.answered, f.n);
	bench_fig(rep, "slow_drain", bench_now() - t1, "s", 0, 0, note);
	f.sampled = 0;
	bench_flow_sample(&f, bench_now());
	bench_fig(rep, "slow_peak_rss", (double)f.peak_kb / 1024, "MiB", '<', 8,
		"max of VmRSS sampled every 10 ms and VmHWM");
check:
	bench_flow_check(o, rep, "slow", &f, r);
out:
	bench_finish(&p, o->timeout, &status);
	bench_flow_free(&f);
}

/* nftw callback: remove one entry. */
static int
bench_rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
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

/* Parse --only a,b,c into a mask. */
static int
bench_only(const char *s, unsigned *mask)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = {{"spawn", BENCH_SPAWN}, {"rss", BENCH_RSS}, {"pipe-init", BENCH_PINIT},
		{"pipe-unknown", BENCH_PUNK}, {"slow", BENCH_SLOW}};
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
	"usage: bench_rpc [--bin PATH] [--arg ARG]... [--runs N] [--requests N]\n"
	"                 [--slow-requests N] [--slow-pause S] [--timeout S]\n"
	"                 [--only spawn,rss,pipe-init,pipe-unknown,slow] [--fresh-home]\n"
	"                 [--lax] [--json] [--verbose]\n"
	"  --bin      the daemon (default $APP_SERVER_BIN, else build/app-server)\n"
	"  --arg      an argument passed to it (repeat; e.g. --arg app-server for upstream codex)\n"
	"  --runs     spawn->initialize runs (200)     --requests  pipelined requests (1000000)\n"
	"  --slow-requests (200000)  --slow-pause seconds without reading (2)\n"
	"  --timeout  seconds without progress before a run fails (10)\n"
	"  --fresh-home  a new empty CODEX_HOME for each spawn run (cold state)\n"
	"  --lax      do not fail when an error code differs from ours (other implementations)\n"
	"  --verbose  pass the daemon's stderr through\n";

int
main(int argc, char **argv)
{
	struct bench_opts o = {.runs = 200,
		.requests = 1000000,
		.slow_requests = 200000,
		.slow_pause = 2,
		.timeout = 10,
		.only = BENCH_ALL};
	struct bench_report rep = {0};
	char home[] = "/tmp/bench_rpc.XXXXXX";
	const char *env = getenv("APP_SERVER_BIN");
	double v;
	int status = 2, made = 0;

	o.bin = env != NULL && *env != '\0' ? env : "build/app-server";
	o.argv = xcalloc((size_t)argc + 2, sizeof *o.argv);
	o.argc = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--json") == 0)
			o.json = 1;
		else if (strcmp(a, "--lax") == 0)
			o.lax = 1;
		else if (strcmp(a, "--verbose") == 0)
			o.verbose = 1;
		else if (strcmp(a, "--fresh-home") == 0)
			o.fresh_home = 1;
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
		} else if (bench_num(argv[++i], &v) != 0)
			goto usage;
		else if (strcmp(a, "--runs") == 0)
			o.runs = (long)v;
		else if (strcmp(a, "--requests") == 0)
			o.requests = (long)v;
		else if (strcmp(a, "--slow-requests") == 0)
			o.slow_requests = (long)v;
		else if (strcmp(a, "--slow-pause") == 0)
			o.slow_pause = v;
		else if (strcmp(a, "--timeout") == 0)
			o.timeout = v;
		else
			goto usage;
	}
	if (o.runs < 1 || o.requests < 1 || o.slow_requests < 1)
		goto usage;
	o.argv[0] = (char *)o.bin;
	rep.json = o.json;
	signal(SIGPIPE, SIG_IGN);
	if (mkdtemp(home) == NULL || setenv("CODEX_HOME", home, 1) != 0) {
		fprintf(stderr, "bench: cannot make a CODEX_HOME: %s\n", strerror(errno));
		goto out;
	}
	made = 1;
	o.home = home;
	if (!o.json)
		printf("bench_rpc: %s (CODEX_HOME=%s)\n", o.bin, home);
	if (o.only & BENCH_SPAWN)
		bench_spawn_runs(&o, &rep);
	if (o.only & BENCH_RSS)
		bench_rss(&o, &rep);
	if (o.only & BENCH_PINIT)
		bench_pipeline(&o, &rep, &bench_kinds[0]);
	if (o.only & BENCH_PUNK)
		bench_pipeline(&o, &rep, &bench_kinds[1]);
	if (o.only & BENCH_SLOW)
		bench_slow(&o, &rep);
	if (o.json)
		bench_report_json(&rep, &o);
	status = rep.failed;
	goto out;
usage:
	fputs(bench_usage, stderr);
out:
	if (made)
		nftw(home, bench_rm, 16, FTW_DEPTH | FTW_PHYS);
	bench_report_free(&rep);
	free(o.argv);
	return status;
}
