/*
 * The integration harness (harness.h): daemons started on pipes in a private directory with a
 * fresh CODEX_HOME, stopped by stdin EOF (they must exit 0 within the deadline), and killed
 * at exit if a failed test left them behind. Their output is read and checked by
 * harness_io.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness_int.h"
#include "protocol/xmalloc.h"

#define ASC_EXIT_MS 3000 /* shutdown deadline in asc_free */

extern char **environ;

static struct asc *asc_live; /* every client not yet freed, for cleanup at exit */

/* Milliseconds on the monotonic clock. */
long long
asc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* True under APP_SERVER_SANITIZED=1. */
int
asc_sanitized(void)
{
	const char *s = getenv("APP_SERVER_SANITIZED");

	return s != NULL && strcmp(s, "1") == 0;
}

/* A deadline scaled for the build under test. */
int
asc_timeout(int ms)
{
	return asc_sanitized() ? ms * 5 : ms;
}

/* A load size scaled for the build under test. */
size_t
asc_load(size_t full)
{
	return asc_sanitized() ? full / 5 : full;
}

/* Remove a path recursively (the client's temp dir). */
static int
asc_rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

/* Free the queue and the client's memory and files; the process must be gone. */
static void
asc_release(struct asc *c)
{
	struct asc_msg *m, *next;

	if (c->prev != NULL)
		c->prev->next = c->next;
	else if (asc_live == c)
		asc_live = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	for (m = c->head; m != NULL; m = next) {
		next = m->next;
		json_decref(m->json);
		free(m->raw);
		free(m);
	}
	if (c->in_fd >= 0)
		close(c->in_fd);
	if (c->out_fd >= 0)
		close(c->out_fd);
	if (c->dir != NULL)
		nftw(c->dir, asc_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	json_decref(c->sent);
	free(c->dir);
	free(c->home);
	free(c->errpath);
	free(c->rbuf);
	free(c->last_raw);
	free(c);
}

/* At exit: kill daemons a failed test left behind. */
static void
asc_cleanup(void)
{
	while (asc_live != NULL) {
		if (!asc_live->reaped) {
			kill(asc_live->pid, SIGKILL);
			waitpid(asc_live->pid, NULL, 0);
		}
		asc_release(asc_live);
	}
}

/* True when the environment entry e names variable `name` (given as "NAME" or "NAME=..."). */
static int
asc_env_match(const char *e, const char *name)
{
	size_t n = strcspn(name, "=");

	return strncmp(e, name, n) == 0 && e[n] == '=';
}

/*
 * The daemon's environment: ours, with the overrides applied. HOME is the client's private
 * folder unless the test gives one: a thread takes a shell snapshot at its start (a login
 * shell), and the machine's own ~/.profile must neither slow a test down nor be cut in the
 * middle by the daemon's exit (a profile's lock files, pyenv's, would stay behind).
 */
static char **
asc_envp(const struct asc_opts *o, const char *home, const char *dir)
{
	size_t n = 0, k = 0, i, j;
	char **envp;
	int drop, own_home = 0;

	for (i = 0; environ[i] != NULL; i++)
		n++;
	for (i = 0; o->env != NULL && o->env[i] != NULL; i++)
		n++;
	envp = xcalloc(n + 3, sizeof *envp);
	for (j = 0; o->env != NULL && o->env[j] != NULL; j++)
		own_home |= asc_env_match(o->env[j], "HOME");
	for (i = 0; environ[i] != NULL; i++) {
		drop = (home != NULL && asc_env_match(environ[i], "CODEX_HOME")) ||
			(!own_home && asc_env_match(environ[i], "HOME"));
		for (j = 0; o->env != NULL && o->env[j] != NULL && !drop; j++)
			drop = asc_env_match(environ[i], o->env[j]);
		if (!drop)
			envp[k++] = xstrdup(environ[i]);
	}
	if (home != NULL)
		envp[k++] = xasprintf("CODEX_HOME=%s", home);
	if (!own_home)
		envp[k++] = xasprintf("HOME=%s", dir);
	for (j = 0; o->env != NULL && o->env[j] != NULL; j++)
		if (strchr(o->env[j], '=') != NULL)
			envp[k++] = xstrdup(o->env[j]);
	return envp;
}

/* Free a NULL-terminated vector of heap strings. */
static void
asc_strv_free(char **v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* Start a daemon; NULL opts means defaults. */
struct asc *
asc_spawn(const struct asc_opts *opts)
{
	static const struct asc_opts defaults;
	static int registered;
	const struct asc_opts *o = opts != NULL ? opts : &defaults;
	const char *bin = getenv("APP_SERVER_BIN");
	int in[2] = {-1, -1}, out[2] = {-1, -1}, errfd = -1;
	char tmpl[] = "/tmp/asc-XXXXXX", **argv, **envp;
	struct asc *c;
	size_t n = 0, i;

	asc_ref_load();
	if (!registered) {
		atexit(asc_cleanup);
		signal(SIGPIPE, SIG_IGN);
		registered = 1;
	}
	if (bin == NULL || *bin == '\0')
		bin = "build/app-server";
	if (access(bin, X_OK) != 0)
		fail_msg("daemon binary %s: %s (set APP_SERVER_BIN)", bin, strerror(errno));
	c = xcalloc(1, sizeof *c);
	c->in_fd = c->out_fd = -1;
	c->next_id = 1;
	c->sent = json_object();
	if (mkdtemp(tmpl) == NULL)
		fail_msg("mkdtemp: %s", strerror(errno));
	c->dir = xstrdup(tmpl);
	c->home = xasprintf("%s/codex-home", c->dir);
	c->errpath = xasprintf("%s/stderr.log", c->dir);
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		fail_msg("pipe: %s", strerror(errno));
	/* Big pipes make pipelining cheap; not fatal where the limit is lower. */
	fcntl(in[1], F_SETPIPE_SZ, 1 << 20);
	fcntl(out[1], F_SETPIPE_SZ, 1 << 20);
	if (o->capture_stderr &&
		(errfd = open(c->errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		fail_msg("%s: %s", c->errpath, strerror(errno));
	for (i = 0; o->args != NULL && o->args[i] != NULL; i++)
		n++;
	argv = xcalloc(n + 2, sizeof *argv);
	argv[0] = xstrdup(bin);
	for (i = 0; i < n; i++)
		argv[i + 1] = xstrdup(o->args[i]);
	envp = asc_envp(o, o->inherit_codex_home ? NULL : c->home, c->dir);
	if ((c->pid = fork()) < 0)
		fail_msg("fork: %s", strerror(errno));
	if (c->pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0 ||
			(errfd >= 0 && dup2(errfd, STDERR_FILENO) < 0))
			_exit(126);
		execve(bin, argv, envp);
		_exit(127);
	}
	asc_strv_free(argv);
	asc_strv_free(envp);
	close(in[0]);
	close(out[1]);
	if (errfd >= 0)
		close(errfd);
	c->in_fd = in[1];
	c->out_fd = out[0];
	fcntl(c->in_fd, F_SETFL, O_NONBLOCK);
	fcntl(c->out_fd, F_SETFL, O_NONBLOCK);
	c->next = asc_live;
	if (asc_live != NULL)
		asc_live->prev = c;
	asc_live = c;
	return c;
}

/* Stop and free; the daemon must exit 0 on stdin EOF. */
void
asc_free(struct asc *c)
{
	int status = 0, clean = 1;

	if (c == NULL)
		return;
	if (!c->reaped) {
		asc_close_stdin(c);
		if (asc_wait_exit(c, asc_timeout(ASC_EXIT_MS), &status) != 0) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &status, 0);
			c->reaped = 1;
			clean = 0;
		}
	} else
		status = c->status;
	asc_release(c);
	if (!clean)
		fail_msg("daemon did not exit within %d ms of stdin EOF", asc_timeout(ASC_EXIT_MS));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("daemon ended with wait status 0x%x (exit %d, signal %d)", status,
			WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* Free a client whose daemon the test killed: it must have ended by that signal. */
void
asc_free_killed(struct asc *c, int sig)
{
	int status = 0;

	if (asc_wait_exit(c, asc_timeout(ASC_EXIT_MS), &status) != 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, &status, 0);
		c->reaped = 1;
	}
	asc_release(c);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != sig)
		fail_msg("daemon ended with wait status 0x%x, not by signal %d", status, sig);
}

/* The daemon's process id. */
pid_t
asc_pid(const struct asc *c)
{
	return c->pid;
}

/* The CODEX_HOME given to the daemon. */
const char *
asc_codex_home(const struct asc *c)
{
	return c->home;
}

/* The client's temporary directory. */
const char *
asc_dir(const struct asc *c)
{
	return c->dir;
}

/* Everything the daemon wrote to stderr so far (capture_stderr only). */
char *
asc_stderr(const struct asc *c)
{
	FILE *f = fopen(c->errpath, "re");
	char *buf = NULL;
	size_t len = 0, n;

	if (f == NULL)
		return xstrdup("");
	buf = xmalloc(65536);
	while ((n = fread(buf + len, 1, 65535, f)) > 0) {
		len += n;
		buf = xrealloc(buf, len + 65536);
	}
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* Close the daemon's stdin (EOF). */
void
asc_close_stdin(struct asc *c)
{
	if (c->in_fd >= 0)
		close(c->in_fd);
	c->in_fd = -1;
}

/* Close our end of the daemon's stdout. */
void
asc_close_stdout(struct asc *c)
{
	if (c->out_fd >= 0)
		close(c->out_fd);
	c->out_fd = -1;
}

/* Wait for the daemon to exit, reading its output meanwhile. */
int
asc_wait_exit(struct asc *c, int timeout_ms, int *status)
{
	long long end = asc_now_ms() + timeout_ms, left;
	pid_t p;

	while (!c->reaped) {
		p = waitpid(c->pid, &c->status, WNOHANG);
		if (p == c->pid) {
			c->reaped = 1;
			break;
		}
		if (p < 0 && errno != EINTR)
			fail_msg("waitpid: %s", strerror(errno));
		left = end - asc_now_ms();
		if (left <= 0)
			return -1;
		asc_pump(c, left < 5 ? (int)left : 5, 0);
	}
	/* Whatever it wrote before exiting is still checked. */
	while (c->out_fd >= 0 && !c->out_eof && asc_pump(c, 0, 0) > 0)
		;
	if (status != NULL)
		*status = c->status;
	return 0;
}
