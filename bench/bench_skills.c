/*
 * bench_skills: skills/list over --skills (1,000) SKILL.md files across 3 roots, a third each
 * in $CODEX_HOME/skills, $HOME/.agents/skills and a repository's .agents/skills, through the
 * real daemon over pipes. Every run is a new daemon: its first skills/list {cwds:[repo]} (the
 * scan, cold for the daemon; the files are in the page cache after the first run) and then
 * --cached more (answered from the daemon's cache), each timed from the request written to the
 * whole answer read. With BENCH_SKILLS_UPSTREAM naming upstream's codex binary, its runs
 * alternate with ours.
 *
 * An answer that is an error, or that misses one of the skills, is a failure (exit 1).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/benchlib.h"
#include "lib/lineconn.h"
#include "protocol/xmalloc.h"

struct bk_opts {
	struct bench_target t;
	long skills, runs, cached;
	int json;
	const char *upstream;
};

/* mkdir -p. */
static void
bk_mkdirs(const char *dir)
{
	char *p = xstrdup(dir);

	for (char *s = strchr(p + 1, '/'); s != NULL; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0700);
		*s = '/';
	}
	mkdir(p, 0700);
	free(p);
}

/* The tree: <base>/codex (CODEX_HOME), <base>/user (HOME), <base>/repo (a git repository). */
static void
bk_tree(const char *base, long n)
{
	const char *roots[] = {"codex/skills", "user/.agents/skills", "repo/.agents/skills"};
	char *p;
	FILE *f;

	p = xasprintf("%s/repo/.git", base);
	bk_mkdirs(p);
	free(p);
	for (long i = 0; i < n; i++) {
		char *dir = xasprintf("%s/%s/skill-%04ld", base, roots[i % 3], i);

		bk_mkdirs(dir);
		p = xasprintf("%s/SKILL.md", dir);
		if ((f = fopen(p, "w")) != NULL) {
			fprintf(f,
				"---\nname: skill-%04ld\ndescription: Does task %ld of the bench, "
				"in a few words as a real skill would say it.\n---\n\n# Skill %ld\n\n"
				"Steps to follow when the task comes up.\n",
				i, i, i);
			fclose(f);
		}
		free(p);
		free(dir);
	}
	p = xasprintf("%s/codex/config.toml", base);
	if ((f = fopen(p, "w")) != NULL) {
		fputs("model = \"mock-model\"\nmodel_provider = \"mock_provider\"\n"
		      "[model_providers.mock_provider]\nname = \"mock\"\n"
		      "base_url = \"http://127.0.0.1:1/v1\"\nwire_api = \"responses\"\n",
			f);
		fclose(f);
	}
	free(p);
}

/* One skills/list; its seconds, or -1 (a failure recorded) when wrong or missing. */
static double
bk_list(struct bench_lc *c, struct bench_report *rep, const char *who, const char *params, long n)
{
	double t0 = bench_now();
	char *line = bench_lc_call(c, "skills/list", params, 60), last[32];
	double secs = bench_now() - t0;

	snprintf(last, sizeof last, "skill-%04ld", n - 1);
	if (line == NULL || strstr(line, "\"result\"") == NULL || strstr(line, last) == NULL ||
		strstr(line, "skill-0000") == NULL) {
		char *what = xasprintf("%s: %.200s", who, line != NULL ? line : "no answer");

		bench_fail(rep, "skills/list", what, -1);
		free(what);
		secs = -1;
	}
	free(line);
	return secs;
}

/* --runs daemons of one side; their first and cached calls. */
static void
bk_side(const struct bk_opts *o, struct bench_report *rep, const struct bench_target *t,
	const char *who, int upstream, const char *base, long run)
{
	char *params = xasprintf("{\"cwds\":[\"%s/repo\"]}", base), name[96];
	struct bench_lc c;
	double s;

	if (bench_lc_start(&c, t, "bench_skills") != 0) {
		bench_fail(rep, who, "the daemon did not start", -1);
		free(params);
		return;
	}
	if ((s = bk_list(&c, rep, who, params, o->skills)) >= 0) {
		snprintf(name, sizeof name, "%s skills/list, first call", who);
		bench_val(rep, name, s * 1e3, "ms", 0, 0, NULL);
	}
	for (long i = 0; i < o->cached && s >= 0; i++)
		if ((s = bk_list(&c, rep, who, params, o->skills)) >= 0) {
			snprintf(name, sizeof name, "%s skills/list, cached call", who);
			bench_val(rep, name, s * 1e3, "ms", upstream ? 0 : '<', 1, NULL);
		}
	if (run == 0) {
		long rss = 0, hwm = 0;

		bench_mem(c.d.pid, &rss, &hwm);
		snprintf(name, sizeof name, "%s RSS after the calls", who);
		bench_val(rep, name, rss / 1024.0, "MiB", 0, 0, NULL);
	}
	bench_lc_stop(&c);
	free(params);
}

static const char bk_usage[] =
	"usage: bench_skills [--bin PATH] [--skills N] [--runs N] [--cached N] [--json]\n"
	"  BENCH_SKILLS_UPSTREAM  upstream's codex binary: its runs alternate with ours\n";

int
main(int argc, char **argv)
{
	struct bk_opts o = {.skills = 1000,
		.runs = 5,
		.cached = 20,
		.upstream = getenv("BENCH_SKILLS_UPSTREAM")};
	const struct bench_opt opts[] = {{"--json", .flag = &o.json},
		{"--skills", .count = &o.skills}, {"--runs", .count = &o.runs},
		{"--cached", .count = &o.cached}};
	struct bench_report rep = {.values = 1, .width = {44, 9, 3, 10}};
	struct bench_target up = {0};
	char home[] = "/tmp/bench_skills.XXXXXX", load[64], *upargv[3], *p;
	int status = 2;

	if (bench_begin(&o.t, argc, argv, opts, nitems(opts), bk_usage, home, &status) != 0)
		goto out;
	rep.json = o.json;
	if (o.upstream != NULL) {
		up = o.t;
		upargv[0] = (char *)o.upstream;
		upargv[1] = "app-server";
		upargv[2] = NULL;
		up.bin = o.upstream;
		up.argv = upargv;
		up.argc = 2;
	}
	bk_tree(home, o.skills);
	p = xasprintf("%s/codex", home);
	setenv("CODEX_HOME", p, 1);
	free(p);
	p = xasprintf("%s/user", home);
	setenv("HOME", p, 1);
	free(p);
	bench_load(load, sizeof load);
	if (!o.json)
		printf("bench_skills: %s%s%s, %ld skills, %ld runs of 1 + %ld calls, load %s\n",
			o.t.bin, o.upstream ? " vs " : "", o.upstream ? o.upstream : "", o.skills,
			o.runs, o.cached, load);
	for (long run = 0; run < o.runs; run++) {
		bk_side(&o, &rep, &o.t, "ours", 0, home, run);
		if (o.upstream != NULL)
			bk_side(&o, &rep, &up, "upstream", 1, home, run);
	}
	bench_load(load, sizeof load);
	if (!o.json)
		printf("load at the end %s\n", load);
	bench_print(&rep);
	if (o.json)
		bench_report_json(&rep, json_pack("{s:s}", "bin", o.t.bin));
	status = rep.failed;
out:
	bench_report_free(&rep);
	bench_end(&o.t);
	return status;
}
