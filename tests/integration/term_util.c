/* The PTY client of the app-client tests (term_util.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "tests/helpers/skip_note.h"
#include "term_util.h"

/* The app-client binary, or NULL (heap). */
char *
client_binary(void)
{
	const char *env = getenv("APP_CLIENT_BIN"), *server = getenv("APP_SERVER_BIN");
	char *path, *slash;

	if (env != NULL && access(env, X_OK) == 0)
		return xstrdup(env);
	if (server != NULL && (slash = strrchr(server, '/')) != NULL) {
		path = xasprintf("%.*s/app-client", (int)(slash - server), server);
		if (access(path, X_OK) == 0)
			return path;
		free(path);
	}
	return access("build/app-client", X_OK) == 0 ? xstrdup("build/app-client") : NULL;
}

/*
 * Start `app-client ARGS...` (ARGS[0] is the subcommand) on a new 24x80 PTY; server overrides
 * APP_SERVER_BIN; home (may be NULL: a fresh one) is CODEX_HOME.
 */
struct term *
term_start_in(const char *server, const char *home, const char *const *args)
{
	struct winsize ws = {.ws_row = 24, .ws_col = 80};
	struct term *t = xcalloc(1, sizeof *t);
	char *bin = getenv("TERM_UTIL_PROGRAM") != NULL ? xstrdup(getenv("TERM_UTIL_PROGRAM"))
							: client_binary();
	char *argv[16];
	size_t n = 0;

	if (bin == NULL) {
		free(t);
		skip_test("app-client is not built (make build/app-client)");
	}
	if (home != NULL) {
		snprintf(t->home, sizeof t->home, "%s", home);
		t->own_home = 0;
	} else {
		snprintf(t->home, sizeof t->home, "/tmp/asc-cli-XXXXXX");
		assert_non_null(mkdtemp(t->home));
		t->own_home = 1;
	}
	buf_init(&t->out, 1 << 20);
	assert_int_equal(openpty(&t->master, &t->slave, NULL, NULL, &ws), 0);
	argv[n++] = bin;
	for (; *args != NULL && n < 15; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	t->pid = fork();
	assert_true(t->pid >= 0);
	if (t->pid == 0) {
		setsid();
		ioctl(t->slave, TIOCSCTTY, 0);
		dup2(t->slave, 0), dup2(t->slave, 1), dup2(t->slave, 2);
		close(t->master);
		setenv("CODEX_HOME", t->home, 1);
		/* not the machine's profile in the threads' shell snapshots (harness.c says why) */
		setenv("HOME", t->home, 1);
		if (server != NULL)
			setenv("APP_SERVER_BIN", server, 1);
		execv(bin, argv);
		_exit(127);
	}
	free(bin);
	fcntl(t->master, F_SETFL, O_NONBLOCK);
	return t;
}

/* Read what the terminal shows now, waiting at most ms. */
void
term_read(struct term *t, int ms)
{
	struct pollfd p = {.fd = t->master, .events = POLLIN};
	char chunk[4096];
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return;
	while ((n = read(t->master, chunk, sizeof chunk)) > 0)
		assert_int_equal(buf_add(&t->out, chunk, (size_t)n), 0);
}

/* Wait until the terminal shows needle (after what earlier expects matched). */
void
term_expect(struct term *t, const char *needle)
{
	long long end = asc_now_ms() + asc_timeout(T_REPLY);
	const char *at;

	for (;;) {
		if ((at = strstr(buf_str(&t->out) + t->seen, needle)) != NULL) {
			t->seen = (size_t)(at - buf_str(&t->out)) + strlen(needle);
			return;
		}
		if (asc_now_ms() > end)
			fail_msg("no \"%s\" on the terminal; it shows:\n%s", needle,
				buf_str(&t->out));
		term_read(t, 100);
	}
}

/* Wait for the shell's first prompt ("$ " or "# "). */
void
term_prompt(struct term *t)
{
	long long end = asc_now_ms() + asc_timeout(T_REPLY);

	while (strstr(buf_str(&t->out), "$ ") == NULL && strstr(buf_str(&t->out), "# ") == NULL) {
		if (asc_now_ms() > end)
			fail_msg("no shell prompt; the terminal shows:\n%s", buf_str(&t->out));
		term_read(t, 100);
	}
	t->seen = t->out.len;
}

void
term_type(struct term *t, const char *keys)
{
	assert_int_equal(write(t->master, keys, strlen(keys)), (ssize_t)strlen(keys));
}

/* True when the terminal is in canonical mode with echo, as a shell left it. */
int
term_cooked(struct term *t)
{
	struct termios tio;

	assert_int_equal(tcgetattr(t->slave, &tio), 0);
	return (tio.c_lflag & ICANON) && (tio.c_lflag & ECHO);
}

/* Wait for app-client to exit, reading its output meanwhile; its wait status. */
int
term_wait(struct term *t)
{
	long long end = asc_now_ms() + asc_timeout(T_REPLY);
	int status;
	pid_t r;

	while ((r = waitpid(t->pid, &status, WNOHANG)) == 0) {
		if (asc_now_ms() > end) {
			kill(t->pid, SIGKILL);
			fail_msg("app-client did not exit; the terminal shows:\n%s",
				buf_str(&t->out));
		}
		term_read(t, 50);
	}
	term_read(t, 0);
	return status;
}

void
term_free(struct term *t)
{
	close(t->master);
	close(t->slave);
	buf_free(&t->out);
	/* The home holds only what the daemon made; removing it needs no shell. */
	if (t->own_home) {
		pid_t pid = fork();

		if (pid == 0) {
			execl("/bin/rm", "rm", "-rf", t->home, (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	free(t);
}
