/*
 * Tests for sandbox/spawn/spawn.c, the terminal and process side: a PTY child (a controlling tty,
 * its size and resize, echo, stdout and stderr merged, sane termios), every child leading its
 * own session and process group, spawn_kill reaching a whole group and refusing pids
 * it must never signal, signal dispositions and mask reset in the child (ours restored), and
 * PDEATHSIG killing a child whose parent died. test_spawn.c has pipes, errors, PATH and fds.
 */
#include "spawn_util.h"

/* Read a PTY master until buf holds needle; fails after timeout_ms. */
static void
read_until(int fd, struct capture *c, const char *needle, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	long long deadline = now_ms() + timeout_ms;
	ssize_t n;

	while (strstr(c->out, needle) == NULL) {
		if (now_ms() >= deadline)
			fail_msg("no '%s' in '%s'", needle, c->out);
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		n = read(fd, c->out + c->outlen, CAP_MAX - c->outlen);
		if (n > 0) {
			c->outlen += (size_t)n;
			c->out[c->outlen] = '\0';
		}
	}
}

/* True if s holds tok as a whole word (separated by blanks or ';'). */
static int
has_token(const char *s, const char *tok)
{
	size_t len = strlen(tok);
	const char *p;

	for (p = strstr(s, tok); p != NULL; p = strstr(p + 1, tok)) {
		if ((p == s || strchr(" \t\r\n;", p[-1]) != NULL) &&
			(p[len] == '\0' || strchr(" \t\r\n;", p[len]) != NULL))
			return 1;
	}
	return 0;
}

static void
test_pty_is_tty(void **state)
{
	char *argv[] = {"sh", "-c",
		"[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo tty; exec 3</dev/tty && echo ctty", NULL};
	struct spawn_opts o = opts_make(argv, SPAWN_PTY | SPAWN_STDIN_PIPE);
	struct capture *c = calloc(1, sizeof *c);

	assert_int_equal(run(&o, c, NULL, 0), 0);
	assert_string_equal(c->out, "tty\r\nctty\r\n");
	free(c);
}

static void
test_pty_size_and_resize(void **state)
{
	char *size[] = {"stty", "size", NULL};
	char *twice[] = {"sh", "-c", "stty size; read x; stty size", NULL};
	struct spawn_opts o = opts_make(size, SPAWN_PTY);
	struct capture *c = calloc(1, sizeof *c);
	struct spawn_proc p;
	char *cause = NULL;

	assert_int_equal(run(&o, c, NULL, 0), 0);
	assert_string_equal(c->out, "24 80\r\n");
	o.rows = 31;
	o.cols = 101;
	assert_int_equal(run(&o, c, NULL, 0), 0);
	assert_string_equal(c->out, "31 101\r\n");

	o.argv = twice;
	memset(c, 0, sizeof *c);
	assert_int_equal(spawn_start(&o, &p, &cause), 0);
	read_until(p.pty_fd, c, "31 101\r\n", 10000);
	assert_int_equal(spawn_pty_resize(p.pty_fd, 45, 132), 0);
	assert_int_equal(write(p.pty_fd, "\n", 1), 1);
	read_until(p.pty_fd, c, "45 132\r\n", 10000);
	pump(&p, c, NULL, 0, 10000);
	assert_int_equal(wait_status(p.pid, 10000), 0);
	spawn_proc_close(&p);
	assert_int_equal(spawn_pty_resize(-1, 1, 1), -EINVAL);
	assert_int_equal(spawn_pty_resize(0, 0, 10), -EINVAL);
	free(c);
}

static void
test_pty_echo(void **state)
{
	char *argv[] = {"cat", NULL};
	struct spawn_opts o = opts_make(argv, SPAWN_PTY);
	struct capture *c = calloc(1, sizeof *c);
	struct spawn_proc p;
	char *cause = NULL;

	assert_int_equal(spawn_start(&o, &p, &cause), 0);
	assert_int_equal(write(p.pty_fd, "ping\n", 5), 5);
	/* The line discipline echoes the input, then cat writes it back. */
	read_until(p.pty_fd, c, "ping\r\nping\r\n", 10000);
	assert_int_equal(write(p.pty_fd, "\x04", 1), 1); /* VEOF: cat sees end of input */
	pump(&p, c, NULL, 0, 10000);
	assert_int_equal(wait_status(p.pid, 10000), 0);
	spawn_proc_close(&p);
	free(c);
}

static void
test_pty_stdout_stderr(void **state)
{
	char *argv[] = {"sh", "-c", "echo out; echo err >&2", NULL};
	struct spawn_opts o = opts_make(argv, SPAWN_PTY);
	struct capture *c = calloc(1, sizeof *c);

	assert_int_equal(run(&o, c, NULL, 0), 0);
	assert_string_equal(c->out, "out\r\nerr\r\n");
	assert_string_equal(c->err, "");
	free(c);
}

static void
test_pty_termios(void **state)
{
	static const char *on[] = {"icanon", "isig", "iexten", "echo", "echoe", "echok", "icrnl",
		"ixon", "iutf8", "opost", "onlcr", "cs8", "cread", "-ixoff", "-inlcr", "-igncr",
		"-parenb", "-echonl", "-tostop"};
	char *argv[] = {"stty", "-a", NULL};
	struct spawn_opts o = opts_make(argv, SPAWN_PTY);
	struct capture *c = calloc(1, sizeof *c);
	size_t i;

	assert_int_equal(run(&o, c, NULL, 0), 0);
	for (i = 0; i < sizeof on / sizeof on[0]; i++) {
		if (!has_token(c->out, on[i]))
			fail_msg("no '%s' in %s", on[i], c->out);
	}
	assert_non_null(strstr(c->out, "speed 38400 baud"));
	assert_non_null(strstr(c->out, "intr = ^C;"));
	assert_non_null(strstr(c->out, "erase = ^?;"));
	assert_non_null(strstr(c->out, "kill = ^U;"));
	assert_non_null(strstr(c->out, "eof = ^D;"));
	assert_non_null(strstr(c->out, "susp = ^Z;"));
	assert_non_null(strstr(c->out, "min = 1; time = 0;"));
	free(c);
}

static void
test_session_leader(void **state)
{
	char *argv[] = {"sleep", "100", NULL};
	struct spawn_opts o = opts_make(argv, 0);
	struct spawn_proc p;
	char *cause = NULL, st;
	pid_t ppid, pgrp;
	int mode, status, tty;

	for (mode = 0; mode < 2; mode++) {
		o.flags = mode == 0 ? 0 : SPAWN_PTY;
		assert_int_equal(spawn_start(&o, &p, &cause), 0);
		assert_int_equal(getsid(p.pid), p.pid);
		assert_int_equal(getpgid(p.pid), p.pid);
		assert_int_equal(proc_stat(p.pid, &st, &ppid, &pgrp, &tty), 0);
		assert_int_equal(ppid, getpid());
		/* A controlling terminal only on a PTY. */
		if (mode == 0)
			assert_int_equal(tty, 0);
		else
			assert_int_not_equal(tty, 0);
		assert_int_equal(spawn_kill(&p, SIGKILL), 0);
		status = wait_status(p.pid, 10000);
		assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
		spawn_proc_close(&p);
	}
}

static void
test_kill_group(void **state)
{
	char *argv[] = {"sh", "-c", "sleep 100 & sleep 100; echo never", NULL};
	struct spawn_opts o = opts_make(argv, 0);
	struct spawn_proc p;
	long long deadline;
	char *cause = NULL;
	int status, reaped = 0;
	pid_t r;

	assert_int_equal(spawn_start(&o, &p, &cause), 0);
	deadline = now_ms() + 10000;
	while (count_procs(p.pid, 0) < 3) {
		assert_true(now_ms() < deadline);
		usleep(2000);
	}
	assert_int_equal(spawn_kill(&p, SIGKILL), 0);
	status = wait_status(p.pid, 10000);
	spawn_reaped(&p);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/*
	 * The orphaned sleeps come to us (subreaper); each must have been killed too.
	 * The shell may have reaped the foreground one before its own SIGKILL landed.
	 */
	deadline = now_ms() + 10000;
	while ((r = waitpid(-p.pid, &status, WNOHANG)) != -1) {
		if (r > 0) {
			assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
			reaped++;
		} else if (now_ms() >= deadline) {
			kill(-p.pid, SIGKILL);
			fail_msg("process group %d survived", (int)p.pid);
		} else
			usleep(2000);
	}
	assert_int_equal(errno, ECHILD);
	assert_true(reaped >= 1 && reaped <= 2);
	assert_int_equal(count_procs(p.pid, 0), 0);
	spawn_proc_close(&p);

	/* Reaped: its pid is never signalled again. Never kill(0), kill(-1) or kill(1). */
	assert_int_equal(spawn_kill(&p, SIGKILL), -ESRCH);
	assert_int_equal(spawn_kill(&p, SIGTERM), -ESRCH);
	for (pid_t bad = -1; bad <= 1; bad++) {
		p.pid = bad;
		assert_int_equal(spawn_kill(&p, SIGKILL), -EINVAL);
	}
}

static void
test_signals_reset(void **state)
{
	char *argv[] = {"grep", "-E", "^Sig(Ign|Blk):", "/proc/self/status", NULL};
	struct spawn_opts o = opts_make(argv, 0);
	struct capture *c = calloc(1, sizeof *c);
	struct sigaction ign, old_int, old_pipe, old_hup;
	sigset_t block, before, after, saved;
	int sig;

	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGPIPE, &ign, &old_pipe);
	sigaction(SIGHUP, &ign, &old_hup);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR2);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_SETMASK, &block, &saved);
	sigprocmask(SIG_BLOCK, NULL, &before);

	assert_int_equal(run(&o, c, NULL, 0), 0);
	assert_string_equal(c->out, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
	o.flags = SPAWN_PTY;
	assert_int_equal(run(&o, c, NULL, 0), 0);
	assert_string_equal(c->out, "SigBlk:\t0000000000000000\r\nSigIgn:\t0000000000000000\r\n");

	/* Our own mask is restored exactly. */
	sigprocmask(SIG_BLOCK, NULL, &after);
	for (sig = 1; sig < NSIG; sig++)
		assert_int_equal(sigismember(&before, sig), sigismember(&after, sig));
	assert_true(sigismember(&after, SIGTERM));

	sigprocmask(SIG_SETMASK, &saved, NULL);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	free(c);
}

static void
test_pdeathsig(void **state)
{
	char *argv[] = {"sleep", "100", NULL};
	struct spawn_opts o = opts_make(argv, 0);
	struct spawn_proc p;
	pid_t mid, victim = -1;
	int pfd[2], status;

	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	mid = fork();
	assert_true(mid >= 0);
	if (mid == 0) {
		/* The middle process spawns and exits without reaping. */
		if (spawn_start(&o, &p, NULL) != 0)
			_exit(1);
		if (write(pfd[1], &p.pid, sizeof p.pid) != sizeof p.pid)
			_exit(2);
		_exit(0);
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &victim, sizeof victim), sizeof victim);
	close(pfd[0]);
	status = wait_status(mid, 10000);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Reparented to us (subreaper): it must die of SIGKILL, not live out its 100 s. */
	status = wait_status(victim, 5000);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pty_is_tty),
		cmocka_unit_test(test_pty_size_and_resize),
		cmocka_unit_test(test_pty_echo),
		cmocka_unit_test(test_pty_stdout_stderr),
		cmocka_unit_test(test_pty_termios),
		cmocka_unit_test(test_session_leader),
		cmocka_unit_test(test_kill_group),
		cmocka_unit_test(test_signals_reset),
		cmocka_unit_test(test_pdeathsig),
	};

	if (reaper_setup() != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
