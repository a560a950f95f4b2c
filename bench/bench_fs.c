/*
 * bench_fs: the workspace methods through the real daemon over pipes (as a client sees them).
 *
 *   oneshot  fuzzyFileSearch over ROOT (BENCH_FS_ROOT, default /usr): the first query (it
 *            walks), then repeated queries (the cached index kept fresh by inotify); with
 *            BENCH_FS_UPSTREAM=path/to/codex the same queries against upstream, side by side
 *   session  fuzzyFileSearch/sessionStart over ROOT, then keystrokes (sessionUpdate until its
 *            sessionCompleted), and the daemon's RSS holding the session's index
 *   read     fs/readFile of a 1 MiB file, request to answer
 *   watch    fs/watch of a folder of 50,000 files, and a session over it (walk + a watch on
 *            every folder) until its first query completes
 *   latency  while a first search walks ROOT, fs/getMetadata requests: their answer times
 *
 *   bench_fs search QUERY ROOT...   print our {"files":[...]} for a query (engine only).
 *
 * A wrong answer is a failure (exit 1); a missed goal is printed as MISS.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/search/search.h"
#include "lib/benchlib.h"
#include "protocol/xmalloc.h"

#define BF_QUERIES 5

struct bf_opts {
	struct bench_target t;
	long repeat;
	int json;
	const char *root;
	const char *upstream;
};

/* A daemon and the next request id. */
struct bf_conn {
	struct bench_daemon d;
	long long next;
};

static const char *const bf_queries[BF_QUERIES] = {"stdio", "libev", "python3", "rs", "gcc/x86"};

/* Write all of a line to the daemon. */
static int
bf_write(struct bf_conn *c, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t k = write(c->d.in_fd, s, n);
		if (k < 0) {
			struct pollfd p = {c->d.in_fd, POLLOUT, 0};
			if (poll(&p, 1, 1000) <= 0)
				return -1;
			continue;
		}
		s += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Is line the answer to id? (scanned, not parsed: answers may be megabytes) */
static int
bf_is_answer(const char *line, size_t len, long long id)
{
	char key[40];
	int k = snprintf(key, sizeof(key), "\"id\":%lld", id);

	if (len > 0 && line[0] == '{' && strncmp(line + 1, key + 0, (size_t)k) == 0)
		return line[1 + k] == ',' || line[1 + k] == '}';
	return len < 65536 && memmem(line, len, key, (size_t)k) != NULL &&
		memmem(line, len, "\"method\"", 8) == NULL;
}

/*
 * Read lines until one is the answer to id (want_id >= 0) or contains `until`; returns that
 * line (heap) or NULL after timeout seconds.
 */
static char *
bf_wait(struct bf_conn *c, long long want_id, const char *until, double timeout)
{
	struct bench_daemon *d = &c->d;
	double end = bench_now() + timeout;

	for (;;) {
		char *nl = d->rlen ? memchr(d->rbuf, '\n', d->rlen) : NULL;
		if (nl != NULL) {
			size_t n = (size_t)(nl - d->rbuf);
			int hit = want_id >= 0 ? bf_is_answer(d->rbuf, n, want_id)
					       : memmem(d->rbuf, n, until, strlen(until)) != NULL;
			char *line = hit ? xstrndup(d->rbuf, n) : NULL;
			memmove(d->rbuf, nl + 1, d->rlen - n - 1);
			d->rlen -= n + 1;
			if (hit)
				return line;
			continue;
		}
		if (d->rlen == d->rcap) {
			d->rcap *= 2;
			d->rbuf = xrealloc(d->rbuf, d->rcap);
		}
		double left = end - bench_now();
		struct pollfd p = {d->out_fd, POLLIN, 0};
		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			return NULL;
		ssize_t k = read(d->out_fd, d->rbuf + d->rlen, d->rcap - d->rlen);
		if (k <= 0)
			return NULL;
		d->rlen += (size_t)k;
	}
}

/* Send a request (params: JSON text); returns its id. */
static long long
bf_send(struct bf_conn *c, const char *method, const char *params)
{
	long long id = c->next++;
	char *line =
		xasprintf("{\"id\":%lld,\"method\":\"%s\",\"params\":%s}\n", id, method, params);

	bf_write(c, line, strlen(line));
	free(line);
	return id;
}

/* A request and its answer line (heap), or NULL; *secs is the round trip. */
static char *
bf_call(struct bf_conn *c, const char *method, const char *params, double timeout, double *secs)
{
	double t0 = bench_now();
	long long id = bf_send(c, method, params);
	char *line = bf_wait(c, id, NULL, timeout);

	if (secs != NULL)
		*secs = bench_now() - t0;
	return line;
}

/* Start a daemon (argv given) and do the handshake. */
static int
bf_start(struct bf_conn *c, const struct bench_target *t, int experimental)
{
	char params[160];

	memset(c, 0, sizeof(*c));
	c->next = 1;
	if (bench_daemon_spawn(t, &c->d, 1 << 20) != 0)
		return -1;
	snprintf(params, sizeof(params),
		"{\"clientInfo\":{\"name\":\"bench_fs\",\"version\":\"1\"},"
		"\"capabilities\":{\"experimentalApi\":%s}}",
		experimental ? "true" : "false");
	char *line = bf_call(c, "initialize", params, 10, NULL);
	int ok = line != NULL && strstr(line, "\"result\"") != NULL;
	free(line);
	return ok ? 0 : -1;
}

/* Stop a daemon. */
static void
bf_stop(struct bf_conn *c)
{
	int st;

	bench_daemon_close(&c->d, 10, &st);
}

/* A fuzzyFileSearch's params over one root. */
static char *
bf_search_params(const char *query, const char *root)
{
	return xasprintf("{\"query\":\"%s\",\"roots\":[\"%s\"]}", query, root);
}

/* One-shot searches against one daemon: the first (walks) and the repeated ones. */
static void
bf_oneshot_on(struct bf_opts *o, struct bench_report *rep, const struct bench_target *t,
	const char *who, double goal)
{
	struct bf_conn c;
	double secs, v[BF_QUERIES * 8];
	size_t nv = 0;
	char name[96];

	if (bf_start(&c, t, 0) != 0) {
		bench_fail(rep, "oneshot", "the daemon did not start", -1);
		return;
	}
	char *p = bf_search_params("stdio", o->root),
	     *line = bf_call(&c, "fuzzyFileSearch", p, 120, &secs);
	if (line == NULL || strstr(line, "\"files\"") == NULL)
		bench_fail(rep, "oneshot", "no answer to fuzzyFileSearch", -1);
	snprintf(name, sizeof(name), "%s one-shot, first (walk)", who);
	bench_val(rep, name, secs * 1e3, "ms", 0, 0, NULL);
	free(line);
	free(p);
	for (int k = 0; k < 4; k++) {
		for (int q = 0; q < BF_QUERIES; q++) {
			p = bf_search_params(bf_queries[q], o->root);
			line = bf_call(&c, "fuzzyFileSearch", p, 120, &secs);
			if (line == NULL)
				bench_fail(rep, "oneshot", "no answer to fuzzyFileSearch", -1);
			v[nv++] = secs * 1e3;
			free(line);
			free(p);
		}
	}
	snprintf(name, sizeof(name), "%s one-shot, repeated (median)", who);
	bench_val(rep, name, bench_median(v, nv), "ms", goal > 0 ? '<' : 0, goal, NULL);
	snprintf(name, sizeof(name), "%s one-shot, repeated (p95)", who);
	bench_val(rep, name, bench_pct(v, nv, 95), "ms", 0, 0, NULL);
	bf_stop(&c);
}

/* One-shot searches: ours, then upstream's when BENCH_FS_UPSTREAM names its binary. */
static void
bf_oneshot(struct bf_opts *o, struct bench_report *rep)
{
	bf_oneshot_on(o, rep, &o->t, "ours", 40);
	if (o->upstream != NULL) {
		char *argv[] = {(char *)o->upstream, "app-server", NULL};
		struct bench_target up = o->t;
		up.bin = o->upstream;
		up.argv = argv;
		bf_oneshot_on(o, rep, &up, "upstream", 0);
	}
}

/* sessionUpdate until its sessionCompleted; seconds, or -1. */
static double
bf_keystroke(struct bf_conn *c, const char *query)
{
	char *p = xasprintf("{\"sessionId\":\"s\",\"query\":\"%s\"}", query);
	double t0 = bench_now();
	char *line = bf_call(c, "fuzzyFileSearch/sessionUpdate", p, 60, NULL);
	char *done = line != NULL ? bf_wait(c, -1, "fuzzyFileSearch/sessionCompleted", 120) : NULL;
	double secs = done != NULL ? bench_now() - t0 : -1;

	free(p);
	free(line);
	free(done);
	return secs;
}

/* A session over ROOT: its first query, keystrokes, and the RSS with its index. */
static void
bf_session(struct bf_opts *o, struct bench_report *rep)
{
	static const char *const keys[] = {"s", "st", "std", "stdi", "stdio", "l", "li", "lib",
		"libe", "libev", "r", "rs", "p", "py", "pyt", "pyth", "pytho", "python", "python3"};
	struct bf_conn c;
	double v[nitems(keys) * 4], secs;
	size_t nv = 0;
	long rss, hwm;

	if (bf_start(&c, &o->t, 1) != 0) {
		bench_fail(rep, "session", "the daemon did not start", -1);
		return;
	}
	char *p = xasprintf("{\"sessionId\":\"s\",\"roots\":[\"%s\"]}", o->root);
	char *line = bf_call(&c, "fuzzyFileSearch/sessionStart", p, 60, NULL);
	free(p);
	free(line);
	if ((secs = bf_keystroke(&c, "x")) < 0)
		bench_fail(rep, "session", "no sessionCompleted", -1);
	bench_val(rep, "session: start + first query (walk)", secs * 1e3, "ms", 0, 0, NULL);
	for (int k = 0; k < 4; k++) {
		for (size_t i = 0; i < nitems(keys); i++) {
			if ((secs = bf_keystroke(&c, keys[i])) < 0)
				bench_fail(rep, "session", "no sessionCompleted", -1);
			v[nv++] = secs * 1e3;
		}
	}
	bench_val(rep, "session keystroke (median)", bench_median(v, nv), "ms", '<', 8, NULL);
	bench_val(rep, "session keystroke (p95)", bench_pct(v, nv, 95), "ms", 0, 0, NULL);
	bench_mem(c.d.pid, &rss, &hwm);
	bench_val(rep, "daemon RSS with the session's index", (double)rss / 1024, "MiB", '<', 32,
		NULL);
	bf_stop(&c);
}

/* fs/readFile of 1 MiB, request to answer. */
static void
bf_read(struct bf_opts *o, struct bench_report *rep)
{
	char path[] = "/tmp/bench_fs_read.XXXXXX";
	int fd = mkstemp(path);
	char *mib = xmalloc(1 << 20), *p;
	double v[40];
	struct bf_conn c;

	for (size_t i = 0; i < (1 << 20); i++)
		mib[i] = (char)(i * 2654435761u >> 13);
	if (fd < 0 || write(fd, mib, 1 << 20) != 1 << 20 || bf_start(&c, &o->t, 0) != 0) {
		bench_fail(rep, "read", "cannot set up", -1);
		goto out;
	}
	p = xasprintf("{\"path\":\"%s\"}", path);
	for (size_t i = 0; i < nitems(v); i++) {
		char *line = bf_call(&c, "fs/readFile", p, 10, &v[i]);
		if (line == NULL || strstr(line, "dataBase64") == NULL)
			bench_fail(rep, "read", "no dataBase64", -1);
		v[i] *= 1e3;
		free(line);
	}
	free(p);
	bench_val(
		rep, "fs/readFile 1 MiB (median)", bench_median(v, nitems(v)), "ms", '<', 2, NULL);
	bf_stop(&c);
out:
	if (fd >= 0)
		close(fd);
	unlink(path);
	free(mib);
}

/* fs/watch of a folder of 50,000 files, and a session over that tree. */
static void
bf_watch(struct bf_opts *o, struct bench_report *rep)
{
	char dir[] = "/tmp/bench_fs_watch.XXXXXX";
	struct bf_conn c;
	double secs;

	if (mkdtemp(dir) == NULL || bf_start(&c, &o->t, 1) != 0) {
		bench_fail(rep, "watch", "cannot set up", -1);
		return;
	}
	for (int d = 0; d < 50; d++) {
		char *sub = xasprintf("%s/d%02d", dir, d);
		mkdir(sub, 0755);
		for (int f = 0; f < 1000; f++) {
			char *q = xasprintf("%s/f%04d.c", sub, f);
			int fd = open(q, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd >= 0)
				close(fd);
			free(q);
		}
		free(sub);
	}
	char *p = xasprintf("{\"watchId\":\"w\",\"path\":\"%s\"}", dir);
	char *line = bf_call(&c, "fs/watch", p, 10, &secs);
	if (line == NULL || strstr(line, "\"path\"") == NULL)
		bench_fail(rep, "watch", "no answer to fs/watch", -1);
	bench_val(rep, "fs/watch of a 50,000-file tree", secs * 1e3, "ms", '<', 200, NULL);
	free(line);
	free(p);
	p = xasprintf("{\"sessionId\":\"s\",\"roots\":[\"%s\"]}", dir);
	double t0 = bench_now();
	free(bf_call(&c, "fuzzyFileSearch/sessionStart", p, 60, NULL));
	if (bf_keystroke(&c, "f0042") < 0)
		bench_fail(rep, "watch", "no sessionCompleted", -1);
	bench_val(rep, "session over it: walk + watches + a query", (bench_now() - t0) * 1e3, "ms",
		'<', 200, NULL);
	free(p);
	bf_stop(&c);
	bench_rmtree(dir);
}

/* While a first search walks ROOT, the answer time of other requests. */
static void
bf_latency(struct bf_opts *o, struct bench_report *rep)
{
	struct bf_conn c;
	double v[200], worst = 0;
	size_t nv = 0;

	if (bf_start(&c, &o->t, 0) != 0) {
		bench_fail(rep, "latency", "the daemon did not start", -1);
		return;
	}
	char *p = bf_search_params("zzzq", o->root),
	     *meta = xasprintf("{\"path\":\"%s\"}", o->root);
	long long sid = bf_send(&c, "fuzzyFileSearch", p);
	/* only requests answered while the search runs count; the search's answer ends it */
	while (nv < nitems(v)) {
		long long id = bf_send(&c, "fs/getMetadata", meta);
		double t0 = bench_now();
		char *line = bf_wait(&c, id, NULL, 10);
		if (line == NULL) {
			bench_fail(rep, "latency", "no answer to fs/getMetadata", -1);
			break;
		}
		v[nv++] = (bench_now() - t0) * 1e3;
		worst = v[nv - 1] > worst ? v[nv - 1] : worst;
		free(line);
		if (c.d.rlen > 0 && bf_is_answer(c.d.rbuf, c.d.rlen, sid))
			break;
	}
	free(bf_wait(&c, sid, NULL, 120));
	bench_val(rep, "answer time during a search (median)", bench_median(v, nv), "ms", '<', 1,
		NULL);
	bench_val(rep, "answer time during a search (max)", worst, "ms", 0, 0, NULL);
	free(p);
	free(meta);
	bf_stop(&c);
}

/* Print the engine's answer to one search (for comparisons by hand). */
static int
bf_search_print(const char *query, const char *const *roots, size_t n)
{
	struct search_index *ix = NULL;
	struct search_result res;

	search_index_build(&ix, roots, n, NULL);
	search_index_query(ix, query, NULL, &res);
	json_t *files = search_result_files(&res, roots);
	char *s = json_dumps(files, JSON_COMPACT);
	puts(s);
	free(s);
	json_decref(files);
	search_result_free(&res);
	search_index_free(ix);
	return 0;
}

static const char bf_usage[] =
	"usage: bench_fs [--bin PATH] [--repeat N] [--json] [--verbose] [--only PARTS]\n"
	"       bench_fs search QUERY ROOT...\n"
	"  parts: oneshot, session, read, watch, latency (all by default)\n"
	"  BENCH_FS_ROOT     the tree searched (default /usr)\n"
	"  BENCH_FS_UPSTREAM upstream's codex binary: its one-shot figures side by side\n";

int
main(int argc, char **argv)
{
	enum { P_ONESHOT = 1, P_SESSION = 2, P_READ = 4, P_WATCH = 8, P_LATENCY = 16 };
	static void (*const runs[])(struct bf_opts *, struct bench_report *) = {
		bf_oneshot, bf_session, bf_read, bf_watch, bf_latency};
	static const struct bench_part parts[] = {{"oneshot", P_ONESHOT}, {"session", P_SESSION},
		{"read", P_READ}, {"watch", P_WATCH}, {"latency", P_LATENCY}, {NULL, 0}};
	struct bf_opts o = {.repeat = 1,
		.root = getenv("BENCH_FS_ROOT"),
		.upstream = getenv("BENCH_FS_UPSTREAM")};
	unsigned only = 31;
	const struct bench_opt opts[] = {{"--json", .flag = &o.json},
		{"--repeat", .count = &o.repeat}, {"--only", .mask = &only, .parts = parts}};
	struct bench_report rep = {.values = 1, .width = {44, 10, 5, 8}};
	char home[] = "/tmp/bench_fs.XXXXXX", load[64];
	int status = 2;

	if (argc >= 4 && strcmp(argv[1], "search") == 0)
		return bf_search_print(argv[2], (const char *const *)argv + 3, (size_t)argc - 3);
	if (o.root == NULL || *o.root == '\0')
		o.root = "/usr";
	if (bench_begin(&o.t, argc, argv, opts, nitems(opts), bf_usage, home, &status) != 0)
		goto out;
	rep.json = o.json;
	bench_load(load, sizeof(load));
	if (!o.json)
		printf("bench_fs: %s over %s, load %s\n", o.t.bin, o.root, load);
	for (long r = 0; r < o.repeat; r++) {
		for (size_t i = 0; i < nitems(runs); i++) {
			if (only & (1u << i))
				runs[i](&o, &rep);
		}
	}
	bench_print(&rep);
	if (o.json)
		bench_report_json(&rep, json_pack("{s:s, s:s}", "bin", o.t.bin, "root", o.root));
	status = rep.failed;
out:
	bench_report_free(&rep);
	bench_end(&o.t);
	return status;
}
