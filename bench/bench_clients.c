/*
 * bench_clients: each real client's start-up sequence (tests/fixtures/clients/<client>.jsonl,
 * the files test_clients_startup replays) against a fresh daemon: fork/exec to the last
 * start-up answer read, in a new CODEX_HOME every run (the scene's config.toml and files), the
 * requests sent one after the other as the client does (a line marked "together" goes out
 * before the previous answer is read). --runs runs per client; median and p90. With
 * BENCH_CLIENTS_UPSTREAM naming upstream's codex binary, its runs alternate with ours (one of
 * each in turn, so a change of machine load falls on both) and the ratio of the medians is
 * held to the goal (upstream's median at least 20 times ours).
 *
 * A request of ours left unanswered, or answered with an error where upstream answered a
 * result (the fixture's "expect"), is a failure (exit 1); a missed goal prints MISS.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/benchlib.h"
#include "protocol/xmalloc.h"

#define BC_GOAL	   20.0 /* upstream's median / ours */
#define BC_TIMEOUT 30.0 /* seconds without an awaited answer: the run fails */

struct bc_opts {
	struct bench_target t;
	long runs;
	int json;
	const char *upstream, *dir, *only;
};

/* One run's values of the placeholders the fixtures use. */
struct bc_run {
	char *cwd, *home, *thread_id;
};

/* Replace every ${cwd}, ${home} and ${threadId} of a JSON text (heap). */
static char *
bc_subst(const struct bc_run *r, const char *text)
{
	const char *keys[] = {"${cwd}", "${home}", "${threadId}"};
	const char *vals[] = {r->cwd, r->home, r->thread_id != NULL ? r->thread_id : ""};
	char *s = xstrdup(text), *p, *n;

	for (size_t k = 0; k < nitems(keys); k++)
		while ((p = strstr(s, keys[k])) != NULL) {
			*p = '\0';
			n = xasprintf("%s%s%s", s, vals[k], p + strlen(keys[k]));
			free(s);
			s = n;
		}
	return s;
}

/* mkdir -p of a file's folder. */
static void
bc_mkdirs(const char *file)
{
	char *p = xstrdup(file), *slash;

	for (slash = strchr(p + 1, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(p, 0700);
		*slash = '/';
	}
	free(p);
}

/* The scene's config.toml and files in the run's new CODEX_HOME; 0 or -1. */
static int
bc_scene(const struct bc_run *r, const json_t *scene)
{
	const char *rel;
	json_t *lines, *line;
	size_t i;
	char *path, *text, *s;
	FILE *f;

	if (mkdir(r->home, 0700) != 0 || mkdir(r->cwd, 0700) != 0)
		return -1;
	path = xasprintf("%s/config.toml", r->home);
	if ((f = fopen(path, "w")) == NULL) {
		free(path);
		return -1;
	}
	fputs(json_string_value(json_object_get(scene, "config")), f);
	fclose(f);
	free(path);
	json_object_foreach((json_t *)json_object_get(scene, "files"), rel, lines)
	{
		path = xasprintf("%s/%s", r->home, rel);
		bc_mkdirs(path);
		f = fopen(path, "w");
		free(path);
		if (f == NULL)
			return -1;
		json_array_foreach(lines, i, line)
		{
			text = json_dumps(line, JSON_COMPACT);
			s = bc_subst(r, text);
			fprintf(f, "%s\n", s);
			free(s);
			free(text);
		}
		fclose(f);
	}
	return 0;
}

/* Write a whole line to the daemon's non-blocking stdin; 0 or -1. */
static int
bc_write(struct bench_daemon *d, const char *s)
{
	size_t n = strlen(s);

	while (n > 0) {
		ssize_t k = write(d->in_fd, s, n);

		if (k < 0) {
			struct pollfd p = {d->in_fd, POLLOUT, 0};

			if (errno != EAGAIN || poll(&p, 1, 1000) <= 0)
				return -1;
			continue;
		}
		s += k;
		n -= (size_t)k;
	}
	return 0;
}

/* The answers read so far and not yet awaited, by id (JSON text). */
struct bc_answers {
	char **ids;
	json_t **msgs;
	size_t n;
};

/* Read lines until the answer to id (JSON text) is in; the answer (new reference) or NULL. */
static json_t *
bc_wait(struct bench_daemon *d, struct bc_answers *a, const char *id)
{
	double end = bench_now() + BC_TIMEOUT;
	json_t *m;
	char *nl;

	for (;;) {
		for (size_t i = 0; i < a->n; i++)
			if (strcmp(a->ids[i], id) == 0) {
				m = a->msgs[i];
				free(a->ids[i]);
				a->ids[i] = a->ids[--a->n];
				a->msgs[i] = a->msgs[a->n];
				return m;
			}
		while ((nl = memchr(d->rbuf, '\n', d->rlen)) != NULL) {
			size_t len = (size_t)(nl - d->rbuf);

			m = json_loadb(d->rbuf, len, 0, NULL);
			memmove(d->rbuf, nl + 1, d->rlen - len - 1);
			d->rlen -= len + 1;
			/* notifications and server requests are not answers */
			if (m == NULL || json_object_get(m, "method") != NULL ||
				json_object_get(m, "id") == NULL) {
				json_decref(m);
				continue;
			}
			a->ids = xrealloc(a->ids, (a->n + 1) * sizeof *a->ids);
			a->msgs = xrealloc(a->msgs, (a->n + 1) * sizeof *a->msgs);
			a->ids[a->n] = json_dumps(json_object_get(m, "id"), JSON_ENCODE_ANY);
			a->msgs[a->n++] = m;
		}
		if (a->n > 0 && strcmp(a->ids[a->n - 1], id) == 0)
			continue;
		if (d->rlen == d->rcap) {
			d->rcap *= 2;
			d->rbuf = xrealloc(d->rbuf, d->rcap);
		}
		struct pollfd p = {d->out_fd, POLLIN, 0};
		double left = end - bench_now();

		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			return NULL;
		ssize_t k = read(d->out_fd, d->rbuf + d->rlen, d->rcap - d->rlen);

		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (k <= 0)
			return NULL;
		d->rlen += (size_t)k;
	}
}

static void
bc_answers_free(struct bc_answers *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->ids[i]);
		json_decref(a->msgs[i]);
	}
	free(a->ids);
	free(a->msgs);
}

/* Hold one answer to the line's expectation: an error where upstream has a result fails. */
static const char *
bc_check(struct bc_run *r, const json_t *line, const json_t *msg)
{
	const json_t *expect = json_object_get(line, "expect");
	const json_t *thread = json_object_get(json_object_get(msg, "result"), "thread");

	if (json_is_string(json_object_get(thread, "id"))) {
		free(r->thread_id);
		r->thread_id = xstrdup(json_string_value(json_object_get(thread, "id")));
	}
	if (json_object_get(expect, "result") != NULL && json_object_get(msg, "error") != NULL)
		return "answered an error where upstream answers a result";
	if (json_object_get(expect, "error") != NULL && json_object_get(msg, "result") != NULL)
		return "answered a result where upstream answers an error";
	return NULL;
}

/*
 * One run of a sequence against t: the seconds from fork/exec to the last answer, or -1 (the
 * cause in *why, static text or the method). Checks the answers when strict.
 */
static double
bc_run_once(const struct bench_target *t, const json_t *all, const char *base, int strict,
	const char **why, char *method, size_t mlen)
{
	const json_t *scene = json_array_get(all, 0), *args = json_object_get(scene, "args");
	struct bench_target tt = *t;
	struct bench_daemon d;
	struct bc_answers ans = {0};
	struct bc_run r = {0};
	size_t n = json_array_size(all), i, j, k, na = json_array_size(args);
	double t0, spent = -1;
	int st;

	*why = NULL;
	r.home = xasprintf("%s/home", base);
	r.cwd = xasprintf("%s/work", base);
	tt.argv = xcalloc(t->argc + na + 1, sizeof *tt.argv);
	memcpy(tt.argv, t->argv, t->argc * sizeof *tt.argv);
	for (k = 0; k < na; k++)
		tt.argv[t->argc + k] = (char *)json_string_value(json_array_get(args, k));
	if (mkdir(base, 0700) != 0 || bc_scene(&r, scene) != 0) {
		*why = "cannot write the scene";
		goto out;
	}
	setenv("CODEX_HOME", r.home, 1);
	t0 = bench_now();
	if (bench_daemon_spawn(&tt, &d, 1 << 20) != 0) {
		*why = "cannot spawn the daemon";
		goto out;
	}
	for (i = 1; i < n && *why == NULL; i = j) {
		for (j = i; j < n &&
			(j == i ||
				json_is_true(json_object_get(json_array_get(all, j), "together")));
			j++) {
			char *text = json_dumps(
				json_object_get(json_array_get(all, j), "send"), JSON_COMPACT);
			char *s = bc_subst(&r, text), *nl = xasprintf("%s\n", s);

			if (bc_write(&d, nl) != 0)
				*why = "the daemon's stdin closed";
			free(nl);
			free(s);
			free(text);
		}
		for (k = i; k < j && *why == NULL; k++) {
			const json_t *line = json_array_get(all, k);
			const json_t *send = json_object_get(line, "send");
			json_t *msg;
			char *id;

			if (json_object_get(send, "id") == NULL)
				continue;
			snprintf(method, mlen, "%s",
				json_string_value(json_object_get(send, "method")));
			id = json_dumps(json_object_get(send, "id"), JSON_ENCODE_ANY);
			if ((msg = bc_wait(&d, &ans, id)) == NULL)
				*why = "no answer";
			else if ((*why = bc_check(&r, line, msg)) != NULL && !strict)
				*why = NULL;
			json_decref(msg);
			free(id);
		}
	}
	if (*why == NULL)
		spent = bench_now() - t0;
	bench_daemon_close(&d, 10, &st);
out:
	bc_answers_free(&ans);
	bench_rmtree(base);
	free(tt.argv);
	free(r.home);
	free(r.cwd);
	free(r.thread_id);
	return spent;
}

/* The fixture's lines (new reference), or NULL. */
static json_t *
bc_load(const char *path)
{
	json_t *all = json_array(), *line;
	json_error_t je;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		json_decref(all);
		return NULL;
	}
	while ((line = json_loadf(f, JSON_DISABLE_EOF_CHECK, &je)) != NULL)
		json_array_append_new(all, line);
	fclose(f);
	return all;
}

/* Every run of one client, ours and upstream's in turn, and its figures. */
static void
bc_client(const struct bc_opts *o, struct bench_report *rep, const struct bench_target *up,
	const char *client, const json_t *all)
{
	double *v[2] = {
		xcalloc((size_t)o->runs, sizeof(double)), xcalloc((size_t)o->runs, sizeof(double))};
	size_t nv[2] = {0, 0};
	const char *who[2] = {"ours", "upstream"}, *why;
	char name[160], method[96], *base;
	int sides = up != NULL ? 2 : 1;

	for (long run = 0; run < o->runs; run++)
		for (int s = 0; s < sides; s++) {
			base = xasprintf("%s/%s-%s-%ld", o->t.home, client, who[s], run);
			double secs = bc_run_once(s == 0 ? &o->t : up, all, base, s == 0, &why,
				method, sizeof method);

			free(base);
			if (secs < 0) {
				char *what = xasprintf("%s %s: %s", who[s], method, why);

				bench_fail(rep, client, what, -1);
				free(what);
				continue;
			}
			v[s][nv[s]++] = secs * 1e3;
		}
	for (int s = 0; s < sides; s++) {
		if (nv[s] == 0)
			continue;
		snprintf(name, sizeof name, "%s %s: spawn -> last answer, median", client, who[s]);
		bench_fig(rep, name, bench_median(v[s], nv[s]), "ms", 0, 0, NULL);
		snprintf(name, sizeof name, "%s %s: p90", client, who[s]);
		bench_fig(rep, name, bench_pct(v[s], nv[s], 90), "ms", 0, 0, NULL);
	}
	if (sides == 2 && nv[0] > 0 && nv[1] > 0) {
		snprintf(name, sizeof name, "%s: upstream / ours (medians)", client);
		bench_fig(rep, name, bench_median(v[1], nv[1]) / bench_median(v[0], nv[0]), "x",
			'>', BC_GOAL, NULL);
	}
	free(v[0]);
	free(v[1]);
}

/* Is name (a fixture's base name) in the comma-separated list (NULL: every one)? */
static int
bc_selected(const char *only, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = only; p != NULL; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return 1;
	return only == NULL;
}

static int
bc_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char bc_usage[] =
	"usage: bench_clients [--bin PATH] [--arg ARG]... [--runs N] [--json] [--verbose]\n"
	"  BENCH_CLIENTS_UPSTREAM  upstream's codex binary: its runs alternate with ours\n"
	"  BENCH_CLIENTS_ONLY      clients to run, comma-separated (codex-acp,t3code,...)\n"
	"  BENCH_CLIENTS_DIR       the fixtures (tests/fixtures/clients)\n";

int
main(int argc, char **argv)
{
	struct bc_opts o = {.runs = 20,
		.upstream = getenv("BENCH_CLIENTS_UPSTREAM"),
		.dir = getenv("BENCH_CLIENTS_DIR"),
		.only = getenv("BENCH_CLIENTS_ONLY")};
	const struct bench_opt opts[] = {{"--json", .flag = &o.json}, {"--runs", .count = &o.runs}};
	struct bench_report rep = {.values = 1, .width = {58, 9, 2, 10}};
	struct bench_target up = {0};
	char home[] = "/tmp/bench_clients.XXXXXX", load[64], *upargv[3], **names = NULL;
	size_t nnames = 0;
	struct dirent *e;
	int status = 2;
	DIR *dir;

	if (bench_begin(&o.t, argc, argv, opts, nitems(opts), bc_usage, home, &status) != 0)
		goto out;
	rep.json = o.json;
	if (o.dir == NULL)
		o.dir = "tests/fixtures/clients";
	if (o.upstream != NULL) {
		up = o.t;
		upargv[0] = (char *)o.upstream;
		upargv[1] = "app-server";
		upargv[2] = NULL;
		up.bin = o.upstream;
		up.argv = upargv;
		up.argc = 2;
	}
	if ((dir = opendir(o.dir)) == NULL) {
		fprintf(stderr, "bench_clients: %s: %s\n", o.dir, strerror(errno));
		goto out;
	}
	while ((e = readdir(dir)) != NULL) {
		size_t len = strlen(e->d_name);

		if (len > 6 && strcmp(e->d_name + len - 6, ".jsonl") == 0) {
			names = xrealloc(names, (nnames + 1) * sizeof *names);
			names[nnames++] = xstrndup(e->d_name, len - 6);
		}
	}
	closedir(dir);
	qsort(names, nnames, sizeof *names, bc_cmp);
	bench_load(load, sizeof load);
	if (!o.json)
		printf("bench_clients: %s%s%s, %ld runs per client, load %s\n", o.t.bin,
			o.upstream ? " vs " : "", o.upstream ? o.upstream : "", o.runs, load);
	for (size_t i = 0; i < nnames; i++) {
		char *path = xasprintf("%s/%s.jsonl", o.dir, names[i]);
		json_t *all = bc_selected(o.only, names[i]) ? bc_load(path) : NULL;

		if (all != NULL)
			bc_client(&o, &rep, o.upstream != NULL ? &up : NULL, names[i], all);
		json_decref(all);
		free(path);
		free(names[i]);
	}
	free(names);
	setenv("CODEX_HOME", home, 1);
	bench_load(load, sizeof load);
	if (!o.json)
		printf("load at the end %s\n", load);
	bench_print(&rep);
	if (o.json)
		bench_report_json(
			&rep, json_pack("{s:s, s:s?}", "bin", o.t.bin, "upstream", o.upstream));
	status = rep.failed;
out:
	bench_report_free(&rep);
	bench_end(&o.t);
	return status;
}
