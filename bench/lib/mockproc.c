/*
 * A mock a bench talks to (app-server mock-model, tests/integration/mock_chatgpt.py): started
 * quietly in a folder of its own, ready once it wrote its port to <folder>/port, stopped with
 * that folder removed. One place for what bench_turn, bench_usercmd, bench_mcp, bench_ws and
 * bench_account repeated: the mock model on a script, and a CODEX_HOME pointed at it.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "benchlib.h"
#include "protocol/xmalloc.h"

int
bench_mock_dir(struct bench_mock *m, const char *tmpl)
{
	m->pid = -1;
	m->port = 0;
	snprintf(m->dir, sizeof m->dir, "%s", tmpl);
	return mkdtemp(m->dir) == NULL ? -1 : 0;
}

int
bench_mock_exec(struct bench_mock *m, char *const argv[])
{
	char *pfile = xasprintf("%s/port", m->dir), buf[32] = "";
	FILE *f;

	fflush(stdout); /* the child must not print our buffered output again */
	if ((m->pid = fork()) == 0) {
		freopen("/dev/null", "w", stdout);
		freopen("/dev/null", "w", stderr);
		execvp(argv[0], argv);
		_exit(127);
	}
	for (int i = 0; i < 500 && buf[0] == '\0'; i++) {
		bench_sleep(0.01);
		if ((f = fopen(pfile, "r")) != NULL) {
			if (fgets(buf, sizeof buf, f) == NULL)
				buf[0] = '\0';
			fclose(f);
		}
	}
	m->port = (int)strtol(buf, NULL, 10);
	free(pfile);
	return m->port > 0 ? 0 : -1;
}

void
bench_mock_stop(struct bench_mock *m)
{
	int st;

	kill(m->pid, SIGTERM);
	waitpid(m->pid, &st, 0);
	bench_rmtree(m->dir);
}

int
bench_mock_model(struct bench_mock *m, const char *bin, const char *tmpl, const char *script)
{
	char *spath, *pfile;
	FILE *f;
	int r = -1;

	if (bench_mock_dir(m, tmpl) != 0)
		return -1;
	spath = xasprintf("%s/script.json", m->dir);
	pfile = xasprintf("%s/port", m->dir);
	if ((f = fopen(spath, "w")) != NULL) {
		fputs(script, f);
		if (fclose(f) == 0)
			r = bench_mock_exec(m,
				(char *const[]){(char *)bin, "mock-model", "--script", spath,
					"--port-file", pfile, NULL});
	}
	free(spath);
	free(pfile);
	return r;
}

void
bench_mock_home(const char *home, int port)
{
	char *p = xasprintf("%s/config.toml", home), *ws = xasprintf("%s/ws", home);
	FILE *f = fopen(p, "w");

	if (f != NULL) {
		fprintf(f,
			"model = \"mock-model\"\napproval_policy = \"never\"\n"
			"sandbox_mode = \"read-only\"\nmodel_provider = \"mock_provider\"\n"
			"[features]\nremote_models = false\n"
			"[model_providers.mock_provider]\nname = \"mock\"\n"
			"base_url = \"http://127.0.0.1:%d/v1\"\nwire_api = \"responses\"\n"
			"request_max_retries = 0\nstream_max_retries = 0\n",
			port);
		fclose(f);
	}
	mkdir(ws, 0700);
	free(p);
	free(ws);
}

int
bench_upstream(const struct bench_target *ours, const char *upstream, const char *tmpl,
	struct bench_target *up, char *argv[3], char bindir[64])
{
	char *link, *path;

	if (upstream == NULL)
		return -1;
	snprintf(bindir, 64, "%s", tmpl);
	if (mkdtemp(bindir) == NULL) {
		bindir[0] = '\0';
		return -1;
	}
	link = xasprintf("%s/codex-linux-sandbox", bindir);
	if (symlink(upstream, link) != 0) {
		free(link);
		return -1;
	}
	path = xasprintf("%s:%s", bindir, getenv("PATH"));
	setenv("PATH", path, 1);
	free(link);
	free(path);
	*up = *ours;
	argv[0] = (char *)upstream;
	argv[1] = "app-server";
	argv[2] = NULL;
	up->bin = upstream;
	up->argv = argv;
	up->argc = 2;
	return 0;
}
