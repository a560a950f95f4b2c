/*
 * The daemon of test_ws.c and test_ws_threads.c: `app-server --listen URL` started with a
 * private CODEX_HOME (its config.toml written first when given), its banner waited for, and
 * its stop on SIGTERM, which must be exit 0 with nothing on stdout (ws_util.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "protocol/xmalloc.h"
#include "ws_util.h"

double
wst_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

char *
wst_slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *s = xcalloc(1, 1 << 20);
	size_t n = 0;

	if (f != NULL) {
		n = fread(s, 1, (1 << 20) - 1, f);
		fclose(f);
	}
	s[n] = '\0';
	return s;
}

/* Run argv with stdin /dev/null, stdout and stderr into files; the child's pid. */
pid_t
wst_spawn(char *const argv[], const char *out, const char *err, char *const env[])
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(in, 0);
		dup2(o, 1);
		dup2(e, 2);
		for (int i = 0; env != NULL && env[i] != NULL; i++)
			putenv(env[i]);
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Wait for pid up to secs; its status, or -1 (then it is killed). */
int
wst_wait(pid_t pid, double secs)
{
	double end = wst_now() + secs;
	int st;

	while (wst_now() < end) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return st;
		usleep(20000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

const char *
wst_bin(void)
{
	const char *b = getenv("APP_SERVER_BIN");

	return b != NULL ? b : "build/app-server";
}

/* Start a daemon listening on url (port 0: any), with extra env; wait for its banner. */
void
wst_start(struct wsd *d, const char *url, const char *extra_arg, char *const env[])
{
	char *home, *argv[16];
	char *text, *p;
	int n = 0;
	double end;

	snprintf(d->dir, sizeof d->dir, "/tmp/test_ws.XXXXXX");
	assert_non_null(mkdtemp(d->dir));
	d->err = xasprintf("%s/stderr", d->dir);
	d->out = xasprintf("%s/stdout", d->dir);
	home = xasprintf("CODEX_HOME=%s/home", d->dir);
	putenv(home); /* leaked on purpose: putenv keeps it */
	if (d->config != NULL) {
		char *path = xasprintf("%s/home", d->dir);
		FILE *f;

		assert_int_equal(mkdir(path, 0700), 0);
		free(path);
		path = xasprintf("%s/home/config.toml", d->dir);
		assert_non_null(f = fopen(path, "we"));
		fputs(d->config, f);
		fclose(f);
		free(path);
	}
	argv[n++] = (char *)wst_bin();
	argv[n++] = "--listen";
	argv[n++] = (char *)url;
	if (extra_arg != NULL && strncmp(extra_arg, "--", 2) == 0) {
		/* "--ws-auth ... FILE": the auth options, space-separated */
		static char buf[512];
		char *t = buf;

		snprintf(buf, sizeof buf, "%s", extra_arg);
		while (t != NULL && n < 14) {
			argv[n++] = t;
			if ((t = strchr(t, ' ')) != NULL)
				*t++ = '\0';
		}
	} else if (extra_arg != NULL) {
		argv[n++] = "--max-line-bytes";
		argv[n++] = (char *)extra_arg;
	}
	argv[n] = NULL;
	d->pid = wst_spawn(argv, d->out, d->err, env);
	for (end = wst_now() + 10; wst_now() < end; usleep(20000)) {
		text = wst_slurp(d->err);
		if ((p = strstr(text, "listening on: ")) != NULL && strchr(p, '\n') != NULL) {
			p += 14;
			snprintf(d->url, sizeof d->url, "%.*s", (int)(strchr(p, '\n') - p), p);
			free(text);
			return;
		}
		free(text);
		if (waitpid(d->pid, NULL, WNOHANG) == d->pid)
			break;
	}
	text = wst_slurp(d->err);
	fail_msg("the daemon did not start listening: %s", text);
}

int
wst_rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* SIGTERM: exit 0, nothing on stdout. */
void
wst_stop(struct wsd *d)
{
	char *out;
	int st;

	kill(d->pid, SIGTERM);
	st = wst_wait(d->pid, 15);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char *err = wst_slurp(d->err);

		fail_msg("the daemon did not exit 0 on SIGTERM (status %d): %s", st, err);
	}
	out = wst_slurp(d->out);
	assert_string_equal(out, "");
	free(out);
	nftw(d->dir, wst_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(d->err);
	free(d->out);
}
