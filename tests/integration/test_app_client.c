/*
 * app-client exec on a real PTY (openpty): the client runs as the session leader of the slave,
 * as in a terminal emulator, and spawns the real daemon. Checked: `exec --tty -- sh`, then
 * `stty size` shows the terminal's size, a resize (TIOCSWINSZ, so SIGWINCH) shows the new one,
 * `exit 3` makes app-client exit 3; the terminal is raw while the command runs and restored
 * after it, after SIGTERM (exit 143, the command terminated) and after the daemon dies (exit
 * 125 with the reason); a missing daemon is a one-line error; without a terminal, megabytes
 * of stdin go through `cat` and come back byte for byte (no output cap, nothing lost).
 *
 * app-client is $APP_CLIENT_BIN, else app-client beside $APP_SERVER_BIN, else build/app-client;
 * the test is skipped (saying so) when there is none. The daemon is $APP_SERVER_BIN.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "term_util.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "tests/helpers/skip_note.h"

/* `app-client exec ARGS...` on a new PTY. */
static struct term *
term_start(const char *server, const char *const *args)
{
	const char *argv[16] = {"exec"};
	size_t n = 1;

	for (; *args != NULL && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	return term_start_in(server, NULL, argv);
}

static void
test_tty_size_resize_exit_status(void **state)
{
	const char *args[] = {"--tty", "--sandbox", "danger-full-access", "--", "sh", NULL};
	struct winsize ws = {.ws_row = 40, .ws_col = 100};
	struct term *t = term_start(NULL, args);
	int status;

	term_prompt(t);
	term_type(t, "stty size\r");
	term_expect(t, "24 80");
	assert_false(term_cooked(t)); /* raw while the command runs */
	assert_int_equal(ioctl(t->master, TIOCSWINSZ, &ws), 0);
	usleep(200 * 1000); /* SIGWINCH -> command/exec/resize before the next line */
	term_type(t, "stty size\r");
	term_expect(t, "40 100");
	term_type(t, "exit 3\r");
	status = term_wait(t);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 3);
	assert_true(term_cooked(t)); /* restored */
	term_free(t);
}

static void
test_sigterm_restores_and_exits_143(void **state)
{
	const char *args[] = {"--", "sh", NULL}; /* --tty by default: stdin is a terminal */
	struct term *t = term_start(NULL, args);
	int status;

	term_prompt(t);
	term_type(t, "echo rea''dy\r");
	term_expect(t, "ready");
	assert_false(term_cooked(t));
	kill(t->pid, SIGTERM);
	status = term_wait(t);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 143);
	assert_true(term_cooked(t));
	term_free(t);
}

/* The pid of app-client's child (the daemon), from /proc; -1 if none. */
static pid_t
daemon_of(pid_t parent)
{
	char path[64], line[64];
	FILE *f;
	long pid = -1;

	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)parent, (int)parent);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	if (fgets(line, sizeof line, f) != NULL)
		pid = strtol(line, NULL, 10);
	fclose(f);
	return pid > 0 ? (pid_t)pid : -1;
}

static void
test_daemon_death_is_reported_and_restores(void **state)
{
	const char *args[] = {"--tty", "--", "sh", NULL};
	struct term *t = term_start(NULL, args);
	pid_t d;
	int status;

	term_prompt(t);
	term_type(t, "echo rea''dy\r");
	term_expect(t, "ready");
	assert_true((d = daemon_of(t->pid)) > 0);
	kill(d, SIGKILL);
	status = term_wait(t);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 125);
	term_expect(t, "app-client: app-server was killed by signal 9");
	assert_true(term_cooked(t));
	term_free(t);
}

static void
test_missing_daemon(void **state)
{
	const char *args[] = {"--", "true", NULL};
	struct term *t = term_start("/nonexistent/app-server", args);
	int status = term_wait(t);

	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 125);
	term_expect(t, "app-client: cannot run app-server (/nonexistent/app-server): No such file");
	assert_true(term_cooked(t));
	term_free(t);
}

/* Without a terminal: 3 MB of stdin through `cat` come back byte for byte, status 0. */
static void
test_pipes_carry_every_byte(void **state)
{
	char *bin = client_binary(), home[] = "/tmp/asc-cli-XXXXXX";
	size_t n = asc_load(3 << 20), got = 0, sent = 0;
	unsigned char *data = xmalloc(n), *back = xmalloc(n + 1);
	int in[2], out[2], status;
	struct pollfd p[2];
	pid_t pid;
	ssize_t r;

	if (bin == NULL) {
		skip_test("app-client is not built (make build/app-client)");
	}
	assert_non_null(mkdtemp(home));
	for (size_t i = 0; i < n; i++)
		data[i] = (unsigned char)(i * 2654435761u >> 13);
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	if ((pid = fork()) == 0) {
		dup2(in[0], 0), dup2(out[1], 1);
		setenv("CODEX_HOME", home, 1);
		execl(bin, bin, "exec", "--sandbox", "danger-full-access", "--", "cat",
			(char *)NULL);
		_exit(127);
	}
	close(in[0]), close(out[1]);
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	while (got < n + 1) {
		p[0] = (struct pollfd){.fd = sent < n ? in[1] : -1, .events = POLLOUT};
		p[1] = (struct pollfd){.fd = out[0], .events = POLLIN};
		assert_true(poll(p, 2, asc_timeout(T_REPLY)) > 0);
		if (p[0].revents != 0 && (r = write(in[1], data + sent, n - sent)) > 0 &&
			(sent += (size_t)r) == n)
			close(in[1]);
		if (p[1].revents != 0) {
			if ((r = read(out[0], back + got, n + 1 - got)) <= 0)
				break;
			got += (size_t)r;
		}
	}
	assert_int_equal(got, n);
	assert_memory_equal(back, data, n);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(out[0]);
	if (fork() == 0) {
		execl("/bin/rm", "rm", "-rf", home, (char *)NULL);
		_exit(127);
	}
	wait(NULL);
	free(data);
	free(back);
	free(bin);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tty_size_resize_exit_status),
		cmocka_unit_test(test_sigterm_restores_and_exits_143),
		cmocka_unit_test(test_daemon_death_is_reported_and_restores),
		cmocka_unit_test(test_missing_daemon),
		cmocka_unit_test(test_pipes_carry_every_byte),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
