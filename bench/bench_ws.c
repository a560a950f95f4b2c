/*
 * bench_ws: many WebSocket connections running text turns at once through `--listen
 * ws://127.0.0.1:0`, against `app-server mock-model` (instant, loopback), side by side with
 * upstream's listener when BENCH_WS_UPSTREAM names its codex binary.
 *
 *   --conns (100) connections open and initialize; each starts --per (10) threads, then, once
 *   every thread of every connection is there, each connection starts a text turn on each of
 *   its threads at once (1,000 turns in flight). A turn's latency runs from its turn/start
 *   written to its turn/completed read. Figures: the setup's time, every turn completed, the
 *   turns' wall time and rate, p50/p99/max latency, the daemon's RSS idle and at its peak
 *   (sampled every 10 ms over the whole run, and VmHWM).
 *
 * A turn that does not complete (status other than completed, an error answer, a connection
 * lost, --timeout seconds without progress) is a failure: exit 1.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/benchlib.h"
#include "lib/wsclient.h"
#include "protocol/xmalloc.h"

struct bw_opts {
	struct bench_target t;
	long conns, per;
	double timeout;
	int json;
	const char *upstream;
};

/* One connection: its threads, and when each one's turn went out. */
struct bw_conn {
	struct bench_ws ws;
	int asked, inited;
	long nthreads, nturns;
	char (*tid)[64];
	double *t0;
	double *due; /* per request id (0: initialize, 1..per: thread/start, 100+k: turn/start
			as 1+per+k): when a refused one (-32001) goes again, or 0 */
	int *tries;  /* and how often each was refused: 0.1 s, 0.2 s, ... 3.2 s */
};

/* A whole run against one daemon. */
struct bw_run {
	const struct bw_opts *o;
	struct bw_conn *c;
	pid_t pid;
	struct bench_peak pk;
	long threads, completed, failed;
	double *lat;
	size_t nlat;
	const char *why; /* the first failure */
	long retries;	 /* requests answered -32001 "Server overloaded" and sent again */
	pid_t mock;
	double cpu[3][3]; /* daemon (self and children), mock, bench: at start, setup, end */
};

/* CPU seconds so far of the daemon, the mock and the bench, into r->cpu[i]. */
static void
bw_cpu(struct bw_run *r, int i)
{
	double self, kids;

	bench_cpu(r->pid, &self, &kids);
	r->cpu[i][0] = self + kids;
	bench_cpu(r->mock, &self, &kids);
	r->cpu[i][1] = self;
	r->cpu[i][2] = bench_self_cpu();
}

static const char bw_text_resp[] =
	"{\"repeat\":true,\"responses\":[{\"events\":[{\"ev\":\"created\"},{\"ev\":"
	"\"message_added\",\"id\":\"msg-1\"},{\"ev\":\"text_delta\",\"delta\":\"Hel\"},{\"ev\":"
	"\"text_delta\",\"delta\":\"lo\"},{\"ev\":\"message\",\"id\":\"msg-1\",\"text\":\"Hello\"},"
	"{\"ev\":\"completed\",\"input_tokens\":10,\"output_tokens\":5,\"total_tokens\":15}]}]}";

/* Start the listener (argv + --listen ws://127.0.0.1:0); its URL from the banner, or -1. */
static pid_t
bw_daemon(const struct bench_target *t, char url[128])
{
	char *log = xasprintf("%s/daemon.log", t->home), *argv[32], buf[4096], *p;
	size_t n = 0;
	pid_t pid;

	for (size_t i = 0; i < t->argc && n < 28; i++)
		argv[n++] = t->argv[i];
	argv[n++] = "--listen";
	argv[n++] = "ws://127.0.0.1:0";
	argv[n] = NULL;
	unlink(log); /* the previous daemon's banner must not be read as this one's */
	fflush(stdout);
	if ((pid = fork()) == 0) {
		int in = open("/dev/null", O_RDONLY),
		    out = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(in, 0);
		dup2(out, 1);
		dup2(out, 2);
		/* a thread's shell snapshot runs the login profile: the machine's stays out */
		setenv("HOME", t->home, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	for (int i = 0; i < 2000 && pid > 0; i++) {
		FILE *f = fopen(log, "r");

		n = f != NULL ? fread(buf, 1, sizeof buf - 1, f) : 0;
		if (f != NULL)
			fclose(f);
		buf[n] = '\0';
		if ((p = strstr(buf, "listening on: ")) != NULL && strchr(p, '\n') != NULL) {
			snprintf(url, 128, "%.*s", (int)(strchr(p, '\n') - p - 14), p + 14);
			free(log);
			return pid;
		}
		if (waitpid(pid, NULL, WNOHANG) == pid)
			break;
		bench_sleep(0.01);
	}
	fprintf(stderr, "bench_ws: %s did not start listening: %s\n", argv[0], buf);
	free(log);
	return -1;
}

static void
bw_fail(struct bw_run *r, const char *why)
{
	if (r->why == NULL)
		r->why = why;
	r->failed++;
}

static void bw_send(struct bw_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
bw_send(struct bw_conn *c, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	bench_ws_text(&c->ws, s, strlen(s));
	free(s);
}

/* Request slot i of a connection (see due), sent for the first time or again. */
static void
bw_request(struct bw_run *r, struct bw_conn *c, long i)
{
	long per = r->o->per;

	if (i == 0)
		bw_send(c,
			"{\"id\":0,\"method\":\"initialize\",\"params\":{\"clientInfo\":{"
			"\"name\":\"bench_ws\",\"version\":\"1\"}}}");
	else if (i <= per)
		bw_send(c,
			"{\"id\":%ld,\"method\":\"thread/start\",\"params\":{\"cwd\":\"%s/ws\","
			"\"approvalPolicy\":\"never\",\"sandbox\":\"read-only\"}}",
			i, r->o->t.home);
	else
		bw_send(c,
			"{\"id\":%ld,\"method\":\"turn/start\",\"params\":{\"threadId\":\"%s\","
			"\"input\":[{\"type\":\"text\",\"text\":\"hi\",\"text_elements\":[]}]}}",
			100 + i - 1 - per, c->tid[i - 1 - per]);
}

/* Every thread's turn/start, the connection's all at once. */
static void
bw_fire(struct bw_run *r)
{
	for (long i = 0; i < r->o->conns; i++) {
		struct bw_conn *c = &r->c[i];

		for (long k = 0; k < r->o->per; k++) {
			bw_request(r, c, 1 + r->o->per + k);
			c->t0[k] = bench_now();
		}
		bench_ws_flush(&c->ws);
	}
}

/* The request slot of an answer's id, or -1. */
static long
bw_slot(const struct bw_run *r, long long id)
{
	if (id >= 0 && id <= r->o->per)
		return (long)id;
	if (id >= 100 && id < 100 + r->o->per)
		return (long)(id - 100) + 1 + r->o->per;
	return -1;
}

/* One message of connection c. */
static void
bw_message(struct bw_run *r, struct bw_conn *c, const char *text, size_t len, double now)
{
	const char *m = memmem(text, len, "\"method\":\"", 10);
	json_t *j, *id, *p;

	if (getenv("BENCH_WS_TRACE") != NULL)
		fprintf(stderr, "< %.*s\n", (int)(len > 300 ? 300 : len), text);

	/* notifications other than turn/completed and error are not looked at */
	if (m != NULL && memmem(text, len, "\"turn/completed\"", 16) == NULL &&
		memmem(text, len, "\"method\":\"error\"", 16) == NULL)
		return;
	if ((j = json_loadb(text, len, 0, NULL)) == NULL) {
		bw_fail(r, "a message that is not JSON");
		return;
	}
	id = json_object_get(j, "id");
	p = json_object_get(j, "params");
	if (m != NULL && strcmp(json_string_value(json_object_get(j, "method")), "error") == 0) {
		if (!json_is_true(json_object_get(p, "willRetry")))
			bw_fail(r, "an error notification");
	} else if (m != NULL) {
		const char *tid = json_string_value(json_object_get(p, "threadId"));
		const char *st =
			json_string_value(json_object_get(json_object_get(p, "turn"), "status"));

		for (long k = 0; tid != NULL && k < c->nthreads; k++)
			if (strcmp(c->tid[k], tid) == 0) {
				if (st == NULL || strcmp(st, "completed") != 0)
					bw_fail(r, "a turn that did not complete");
				else
					r->completed++;
				r->lat[r->nlat++] = (now - c->t0[k]) * 1e3;
				c->nturns++;
			}
	} else if (json_integer_value(json_object_get(json_object_get(j, "error"), "code")) ==
			-32001 &&
		bw_slot(r, json_integer_value(id)) >= 0) {
		/* upstream's answer under load: a client tries again later, backing off */
		long q = bw_slot(r, json_integer_value(id));

		c->tries[q] = c->tries[q] < 6 ? c->tries[q] + 1 : 6;
		c->due[q] =
			now + 0.05 * (1 << c->tries[q]) * (0.5 + (double)(random() % 1000) / 1e3);
		r->retries++;
	} else if (json_object_get(j, "error") != NULL)
		bw_fail(r, "an error answer");
	else if (json_integer_value(id) == 0) {
		c->inited = 1;
		bw_send(c, "{\"method\":\"initialized\"}");
		for (long k = 0; k < r->o->per; k++)
			bw_request(r, c, 1 + k);
	} else if (json_integer_value(id) >= 1 && json_integer_value(id) <= r->o->per) {
		const char *tid = json_string_value(json_object_get(
			json_object_get(json_object_get(j, "result"), "thread"), "id"));

		snprintf(c->tid[c->nthreads++], 64, "%s", tid != NULL ? tid : "?");
		if (++r->threads == r->o->conns * r->o->per)
			bw_fire(r);
	}
	json_decref(j);
}

/* Poll every connection until all turns are done, a failure, or no progress for timeout. */
static void
bw_loop(struct bw_run *r, double *setup_end)
{
	long n = r->o->conns, want = n * r->o->per, seen = -1, fired = 0;
	struct pollfd *pf = xcalloc((size_t)n, sizeof *pf);
	double last = bench_now(), now;

	while (r->completed + r->failed < want && r->why == NULL) {
		for (long i = 0; i < n; i++) {
			pf[i].fd = r->c[i].ws.fd;
			pf[i].events = POLLIN | (bench_ws_pending(&r->c[i].ws) ? POLLOUT : 0);
		}
		poll(pf, (nfds_t)n, 10);
		now = bench_now();
		bench_peak_sample(&r->pk, r->pid, now, 0);
		for (long i = 0; i < n; i++) {
			struct bw_conn *c = &r->c[i];
			const char *text;
			size_t len;
			int k;

			if (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) {
				if (bench_ws_read(&c->ws) != 0)
					pf[i].revents |= POLLNVAL;
				while ((k = bench_ws_next(&c->ws, &text, &len)) == 1)
					bw_message(r, c, text, len, now);
				if ((k < 0 || (pf[i].revents & POLLNVAL)) &&
					getenv("BENCH_WS_TRACE") != NULL)
					fprintf(stderr,
						"bench_ws: connection %ld: open %d, read: %.200s\n",
						i, c->ws.open, buf_str(&c->ws.in));
				if (k < 0 || (pf[i].revents & POLLNVAL)) {
					bw_fail(r, "a connection closed or refused");
					break;
				}
			}
			if (c->ws.open && !c->asked) {
				c->asked = 1; /* the upgrade's answer came: initialize */
				bw_request(r, c, 0);
			}
			for (long q = 0; q <= 2 * r->o->per; q++)
				if (c->due[q] > 0 && now >= c->due[q]) {
					c->due[q] = 0;
					bw_request(r, c, q);
				}
			if (bench_ws_flush(&c->ws) != 0)
				bw_fail(r, "a write failed");
		}
		if (!fired && r->threads == want) {
			fired = 1;
			*setup_end = now;
			bw_cpu(r, 1);
		}
		if (r->completed + r->failed + r->threads != seen) {
			seen = r->completed + r->failed + r->threads;
			last = now;
		} else if (now - last > r->o->timeout)
			bw_fail(r, "no progress before the timeout");
	}
	free(pf);
}

/* One daemon, every connection, every turn; figures under who's name. */
static void
bw_run(const struct bw_opts *o, struct bench_report *rep, const struct bench_target *t,
	const char *who)
{
	struct bench_mock m;
	struct bw_run r = {.o = o};
	char url[128], name[128];
	long rss_idle = 0, hwm = 0, junk, want = o->conns * o->per;
	double start, setup_end = 0, end;
	int st;

	/* the mock is ours even when --bin is a wrapper (perf) or the daemon is upstream */
	if (bench_mock_model(&m,
		    getenv("APP_SERVER_BIN") != NULL ? getenv("APP_SERVER_BIN")
						     : "build/app-server",
		    "/tmp/bench_ws_mm.XXXXXX", bw_text_resp) != 0) {
		bench_fail(rep, who, "mock-model did not start", -1);
		return;
	}
	/* each daemon on an empty CODEX_HOME: none reads the other's 1,000 threads */
	bench_rmtree(t->home);
	mkdir(t->home, 0700);
	bench_mock_home(t->home, m.port);
	if ((r.pid = bw_daemon(t, url)) < 0) {
		bench_fail(rep, who, "the listener did not start", -1);
		bench_mock_stop(&m);
		return;
	}
	bench_sleep(0.5);
	bench_mem(r.pid, &rss_idle, &junk);
	r.c = xcalloc((size_t)o->conns, sizeof *r.c);
	r.lat = xcalloc((size_t)want, sizeof *r.lat);
	r.mock = m.pid;
	bw_cpu(&r, 0);
	start = bench_now();
	for (long i = 0; i < o->conns; i++) {
		r.c[i].tid = xcalloc((size_t)o->per, sizeof *r.c[i].tid);
		r.c[i].t0 = xcalloc((size_t)o->per, sizeof *r.c[i].t0);
		r.c[i].due = xcalloc((size_t)(2 * o->per + 1), sizeof *r.c[i].due);
		r.c[i].tries = xcalloc((size_t)(2 * o->per + 1), sizeof *r.c[i].tries);
		if (bench_ws_connect(&r.c[i].ws, url) != 0)
			bw_fail(&r, "connect failed");
	}
	if (r.why == NULL)
		bw_loop(&r, &setup_end);
	end = bench_now();
	bw_cpu(&r, 2);
	bench_peak_sample(&r.pk, r.pid, end, 1);
	bench_mem(r.pid, &junk, &hwm);
	if (r.why != NULL || r.completed != want) {
		fprintf(stderr, "bench_ws %s: %ld of %ld turns completed: %s\n", who, r.completed,
			want, r.why != NULL ? r.why : "?");
		bench_fail(rep, who, r.why != NULL ? r.why : "turns missing", -1);
	}
#define BW_NAME(s) (snprintf(name, sizeof name, "%s: %s", who, s), name)
	bench_val(
		rep, BW_NAME("turns completed"), (double)r.completed, "", '>', (double)want, NULL);
	if (setup_end > 0) {
		bench_val(rep, BW_NAME("setup: connect, initialize, thread/start x all"),
			(setup_end - start) * 1e3, "ms", 0, 0, NULL);
		bench_val(rep, BW_NAME("turns: wall time, all in flight"), (end - setup_end) * 1e3,
			"ms", 0, 0, NULL);
		bench_val(rep, BW_NAME("turns per second"), (double)r.completed / (end - setup_end),
			"/s", 0, 0, NULL);
		bench_val(rep, BW_NAME("CPU in setup: daemon"), (r.cpu[1][0] - r.cpu[0][0]) * 1e3,
			"ms", 0, 0, NULL);
		bench_val(rep, BW_NAME("CPU in turns: daemon"), (r.cpu[2][0] - r.cpu[1][0]) * 1e3,
			"ms", 0, 0, NULL);
		bench_val(rep, BW_NAME("CPU in turns: mock model"),
			(r.cpu[2][1] - r.cpu[1][1]) * 1e3, "ms", 0, 0, NULL);
		bench_val(rep, BW_NAME("CPU in turns: bench (client)"),
			(r.cpu[2][2] - r.cpu[1][2]) * 1e3, "ms", 0, 0, NULL);
	}
	if (r.nlat > 0) {
		bench_sort(r.lat, r.nlat);
		bench_val(rep, BW_NAME("turn latency p50"), bench_pct(r.lat, r.nlat, 50), "ms", 0,
			0, NULL);
		bench_val(rep, BW_NAME("turn latency p99"), bench_pct(r.lat, r.nlat, 99), "ms", 0,
			0, NULL);
		bench_val(rep, BW_NAME("turn latency max"), r.lat[r.nlat - 1], "ms", 0, 0, NULL);
	}
	bench_val(rep, BW_NAME("requests refused as overloaded, sent again"), (double)r.retries, "",
		0, 0, NULL);
	bench_val(rep, BW_NAME("RSS idle (listening)"), rss_idle / 1024.0, "MiB", 0, 0, NULL);
	bench_val(rep, BW_NAME("RSS peak (sampled, VmHWM)"),
		(r.pk.kb > hwm ? r.pk.kb : hwm) / 1024.0, "MiB", 0, 0, NULL);
#undef BW_NAME
	for (long i = 0; i < o->conns; i++) {
		bench_ws_close(&r.c[i].ws);
		free(r.c[i].tid);
		free(r.c[i].t0);
		free(r.c[i].due);
		free(r.c[i].tries);
	}
	free(r.c);
	free(r.lat);
	kill(r.pid, SIGTERM);
	for (int i = 0; i < 1000 && waitpid(r.pid, &st, WNOHANG) != r.pid; i++)
		bench_sleep(0.01);
	kill(r.pid, SIGKILL);
	waitpid(r.pid, &st, WNOHANG);
	bench_mock_stop(&m);
}

static const char bw_usage[] =
	"usage: bench_ws [--bin PATH] [--conns N] [--per N] [--timeout S] [--json]\n"
	"  BENCH_WS_UPSTREAM  upstream's codex binary: the same run against its listener\n";

int
main(int argc, char **argv)
{
	struct bw_opts o = {
		.conns = 100, .per = 10, .timeout = 120, .upstream = getenv("BENCH_WS_UPSTREAM")};
	const struct bench_opt opts[] = {{"--json", .flag = &o.json},
		{"--conns", .count = &o.conns}, {"--per", .count = &o.per},
		{"--timeout", .num = &o.timeout}};
	struct bench_report rep = {.width = {56, 10, 5, 8}};
	struct bench_target up;
	char home[] = "/tmp/bench_ws.XXXXXX", bindir[64] = "", load[64], *upargv[3];
	int status = 2, have_up;

	signal(SIGPIPE, SIG_IGN);
	if (bench_begin(&o.t, argc, argv, opts, nitems(opts), bw_usage, home, &status) != 0)
		goto out;
	rep.json = o.json;
	have_up = bench_upstream(
			  &o.t, o.upstream, "/tmp/bench_ws_bin.XXXXXX", &up, upargv, bindir) == 0;
	bench_load(load, sizeof load);
	if (!o.json)
		printf("bench_ws: %ld connections x %ld turns, %s%s%s, load %s\n", o.conns, o.per,
			o.t.bin, have_up ? " vs " : "", have_up ? o.upstream : "", load);
	bw_run(&o, &rep, &o.t, "ours");
	if (have_up)
		bw_run(&o, &rep, &up, "upstream");
	bench_load(load, sizeof load);
	if (!o.json)
		printf("load at the end: %s\n", load);
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
