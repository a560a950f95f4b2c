/*
 * A mock a bench talks to (app-server mock-model, tests/integration/mock_chatgpt.py): started
 * quietly in a folder of its own, ready once it wrote its port to <folder>/port, stopped with
 * that folder removed. One place for what bench_turn, bench_usercmd and bench_account repeated.
 */
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
