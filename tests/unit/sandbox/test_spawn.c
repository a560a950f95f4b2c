/*
 * Tests for sandbox/spawn/spawn.c, the plain side: children on pipes (stdout and stderr apart,
 * stdin fed past a pipe buffer, /dev/null stdin by default), exit codes and signals, the errors a
 * spawn reports (ENOENT, EACCES, a bad cwd, a refusing child hook) with nothing left behind,
 * PATH taken from the child's envp, the flags of every fd we get back, no fd of ours reaching
 * the child, no fd or process leaked over 1000 spawns, and the cost of one spawn.
 * test_spawn_pty.c has the terminal, sessions and signals; spawn_util.h the shared helpers.
 */
#include <sys/stat.h>

#include <ftw.h>

#include "spawn_util.h"

/* Spawn expecting failure; returns the error and hands back the cause. */
static int
run_fail(const struct spawn_opts *o, char **cause)
{
	struct spawn_proc p;
	int r;

	*cause = NULL;
	memset(&p, 0x55, sizeof p);
	r = spawn_start(o, &p, cause);
	assert_true(r < 0);
	assert_non_null(*cause);
	assert_int_equal(p.pid, -1);
	assert_int_equal(p.in_fd, -1);
	assert_int_equal(p.out_fd, -1);
	assert_int_equal(p.err_fd, -1);
	assert_int_equal(p.pty_fd, -1);
	return r;
}

/* Number of open fds of this process. */
static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] != '.')
			n++;
	}
	closedir(d);
	return n - 1; /* the directory's own fd */
}

/* Write a file with the given mode. */
static void
write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

/* nftw callback removing everything. */
static int
rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* Fixture: a fresh temporary directory in *state. */
static int
tmpdir_setup(void **state)
{
	char *d = strdup("/tmp/spawn-test.XXXXXX");

	if (d == NULL || mkdtemp(d) == NULL)
		return -1;
	*state = d;
	return 0;
}

/* Fixture: remove the temporary directory. */
static int
tmpdir_teardown(void **state)
{
	nftw(*state, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	free(*state);
	return 0;
}

static void
test_pipes_echo(void **state)
{
	char *argv[] = {"echo", "hello", NULL};
	struct spawn_opts o = opts_make(argv, 0);
	struct capture *c = calloc(1, sizeof *c);
	int st = run(&o, c, NULL, 0);

	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_string_equal(c->out, "hello\n");
	assert_string_equal(c->err, "");
	free(c);
}

static void
test_pipes_stderr_separate(void **state)
{
	char *argv[] = {"sh", "-c", "echo out; echo err >&2; echo out2", NULL};
	struct spawn_opts o = opts_make(argv, 0);
	struct capture *c = calloc(1, sizeof *c);
	int st = run(&o, c, NULL, 0);

	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_string_equal(c->out, "out\nout2\n");
	assert_string_equal(c->err, "err\n");
	free(c);
}

static void
test_exit_codes(void **state)
{
	char *a3[] = {"sh", "-c", "exit 3", NULL};
	char *afalse[] = {"false", NULL};
	char *aterm[] = {"sh", "-c", "kill -TERM $$", NULL};
	struct spawn_opts o = opts_make(a3, 0);
	struct capture *c = calloc(1, sizeof *c);
	int st;

	st = run(&o, c, NULL, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 3);
	o.argv = afalse;
	st = run(&o, c, NULL, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 1);
	o.argv = aterm;
	st = run(&o, c, NULL, 0);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	free(c);
}

static void
test_fd_flags(void **state)
{
	char *argv[] = {"sh", "-c",
		"cat /proc/self/fdinfo/0 /proc/self/fdinfo/1 /proc/self/fdinfo/2", NULL};
	struct spawn_opts o = opts_make(argv, SPAWN_STDIN_PIPE);
	struct capture *c = calloc(1, sizeof *c);
	struct spawn_proc p;
	char *cause = NULL, *s;
	unsigned long fl;
	int fds[4], i, n, mode;

	for (mode = 0; mode < 2; mode++) {
		o.flags = mode == 0 ? SPAWN_STDIN_PIPE : SPAWN_PTY;
		memset(c, 0, sizeof *c);
		assert_int_equal(spawn_start(&o, &p, &cause), 0);
		fds[0] = p.in_fd;
		fds[1] = p.out_fd;
		fds[2] = p.err_fd;
		fds[3] = p.pty_fd;
		for (i = 0; i < 4; i++) {
			if (mode == 0 ? i == 3 : i != 3) {
				assert_int_equal(fds[i], -1);
				continue;
			}
			assert_true(fds[i] > 2);
			assert_true(fcntl(fds[i], F_GETFD) & FD_CLOEXEC);
			assert_true(fcntl(fds[i], F_GETFL) & O_NONBLOCK);
		}
		pump(&p, c, NULL, 0, 10000);
		assert_int_equal(wait_status(p.pid, 10000), 0);
		spawn_proc_close(&p);
		/* The child's ends are blocking: O_NONBLOCK is 04000 in the octal flags. */
		for (n = 0, s = strstr(c->out, "flags:"); s != NULL; s = strstr(s + 1, "flags:")) {
			fl = strtoul(s + 6, NULL, 8);
			assert_int_equal(fl & O_NONBLOCK, 0);
			n++;
		}
		assert_int_equal(n, 3);
	}
	free(c);
}

static void
test_enoent(void **state)
{
	char *argv[] = {"spawn-test-no-such-command", NULL};
	char *abs[] = {"/nonexistent-spawn-dir/cmd", NULL};
	char *empty[] = {"", NULL};
	struct spawn_opts o = opts_make(argv, 0);
	char *cause;
	int fds = count_fds(), kids = count_procs(0, getpid());

	assert_int_equal(run_fail(&o, &cause), -ENOENT);
	assert_string_equal(
		cause, "failed to spawn command: No such file or directory (os error 2)");
	free(cause);
	o.argv = abs; /* reported by execve in the child */
	assert_int_equal(run_fail(&o, &cause), -ENOENT);
	assert_string_equal(
		cause, "failed to spawn command: No such file or directory (os error 2)");
	free(cause);
	o.argv = empty;
	assert_int_equal(run_fail(&o, &cause), -ENOENT);
	free(cause);
	o.flags = SPAWN_PTY;
	o.argv = abs;
	assert_int_equal(run_fail(&o, &cause), -ENOENT);
	free(cause);
	assert_int_equal(count_fds(), fds);
	assert_int_equal(count_procs(0, getpid()), kids); /* the failed child was reaped */
}

static void
test_eacces(void **state)
{
	const char *dir = *state;
	char a[256], b[256], path[512], pathenv[600], *cause;
	char *argv[] = {"spawn-test-prog", NULL};
	char *env[] = {pathenv, NULL};
	char *explicit[] = {path, NULL};
	struct spawn_opts o = opts_make(argv, 0);
	struct capture *c = calloc(1, sizeof *c);
	int st;

	snprintf(a, sizeof a, "%s/a", dir);
	snprintf(b, sizeof b, "%s/b", dir);
	assert_int_equal(mkdir(a, 0755), 0);
	assert_int_equal(mkdir(b, 0755), 0);
	snprintf(path, sizeof path, "%s/spawn-test-prog", a);
	write_file(path, "#!/bin/sh\necho a\n", 0644);
	o.envp = env;

	snprintf(pathenv, sizeof pathenv, "PATH=%s", a);
	assert_int_equal(run_fail(&o, &cause), -EACCES);
	assert_string_equal(cause, "failed to spawn command: Permission denied (os error 13)");
	free(cause);
	o.argv = explicit;
	assert_int_equal(run_fail(&o, &cause), -EACCES);
	assert_string_equal(cause, "failed to spawn command: Permission denied (os error 13)");
	free(cause);

	/* A directory of that name is not a candidate either (execve says EACCES). */
	snprintf(path, sizeof path, "%s/spawn-test-prog", b);
	assert_int_equal(mkdir(path, 0755), 0);
	o.argv = argv;
	snprintf(pathenv, sizeof pathenv, "PATH=%s", b);
	assert_int_equal(run_fail(&o, &cause), -EACCES);
	free(cause);

	/* Like execvp, a later executable wins over an earlier directory or non-executable. */
	snprintf(path, sizeof path, "%s/c", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/c/spawn-test-prog", dir);
	write_file(path, "#!/bin/sh\necho c\n", 0755);
	snprintf(pathenv, sizeof pathenv, "PATH=%s:%s:%s/c", b, a, dir);
	st = run(&o, c, NULL, 0);
	assert_int_equal(st, 0);
	assert_string_equal(c->out, "c\n");
	free(c);
}

static void
test_chdir_failure(void **state)
{
	char *argv[] = {"true", NULL};
	struct spawn_opts o = opts_make(argv, 0);
	char *cause;
	int fds = count_fds(), kids = count_procs(0, getpid());

	o.cwd = "/nonexistent-spawn-dir";
	assert_int_equal(run_fail(&o, &cause), -ENOENT);
	assert_string_equal(cause,
		"failed to spawn command: cannot change directory to "
		"'/nonexistent-spawn-dir': No such file or directory (os error 2)");
	free(cause);
	o.cwd = "/etc/passwd";
	o.flags = SPAWN_PTY;
	assert_int_equal(run_fail(&o, &cause), -ENOTDIR);
	assert_non_null(strstr(cause, "cannot change directory to '/etc/passwd'"));
	free(cause);
	o.cwd = "relative/dir"; /* cwd must be absolute */
	assert_int_equal(run_fail(&o, &cause), -EINVAL);
	free(cause);
	assert_int_equal(count_fds(), fds);
	assert_int_equal(count_procs(0, getpid()), kids);
}

/* The directory the hook expects to run in, and what it writes. */
struct hook_check {
	dev_t dev;
	ino_t ino;
	int fail;
};

/* A child hook: refuse with arg->fail, or check the cwd and write a marker to stdout. */
static int
hook_cb(void *arg)
{
	struct hook_check *h = arg;
	struct stat sb;

	if (h->fail)
		return h->fail;
	if (stat(".", &sb) == -1 || sb.st_dev != h->dev || sb.st_ino != h->ino)
		return EXDEV;
	if (write(1, "hook\n", 5) != 5)
		return EIO;
	return 0;
}

static void
test_child_hook(void **state)
{
	char *argv[] = {"pwd", NULL};
	struct spawn_opts o = opts_make(argv, 0);
	struct capture *c = calloc(1, sizeof *c);
	struct hook_check h;
	struct stat sb;
	char *cause;
	int fds = count_fds(), kids = count_procs(0, getpid());

	assert_int_equal(stat("/usr", &sb), 0);
	memset(&h, 0, sizeof h);
	h.dev = sb.st_dev;
	h.ino = sb.st_ino;
	o.cwd = "/usr";
	o.child_hook = hook_cb;
	o.child_hook_arg = &h;
	/* The hook runs after dup2 (it writes to the pipe) and after chdir. */
	assert_int_equal(run(&o, c, NULL, 0), 0);
	assert_string_equal(c->out, "hook\n/usr\n");

	h.fail = EPERM;
	assert_int_equal(run_fail(&o, &cause), -EPERM);
	assert_string_equal(cause,
		"failed to spawn command: sandbox setup failed: Operation not permitted (os error 1)");
	free(cause);
	h.fail = ENOSYS;
	o.flags = SPAWN_PTY;
	assert_int_equal(run_fail(&o, &cause), -ENOSYS);
	free(cause);
	assert_int_equal(count_fds(), fds);
	assert_int_equal(count_procs(0, getpid()), kids);
	free(c);
}

/* A child hook that takes 300 ms, as a sandbox's setup may, then fails with arg's errno. */
static int
slow_hook_cb(void *arg)
{
	struct timespec ts = {0, 300 * 1000000L};

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
	return *(int *)arg;
}

/*
 * SPAWN_NOWAIT: spawn_start returns while the child still sets up (the hook sleeps), the exec
 * is seen later; a setup that fails ends in exit 127 and is seen as such; nothing leaks.
 */
static void
test_nowait(void **state)
{
	char *argv[] = {"true", NULL};
	struct spawn_opts o = opts_make(argv, SPAWN_NOWAIT);
	struct spawn_proc p;
	char *cause = NULL;
	long long t0;
	int fail = 0, st, fds = count_fds();

	o.child_hook = slow_hook_cb;
	o.child_hook_arg = &fail;
	t0 = now_ms();
	assert_int_equal(spawn_start(&o, &p, &cause), 0);
	assert_in_range(now_ms() - t0, 0, 200);
	assert_int_equal(spawn_exec_seen(&p, 0), 0);
	assert_int_equal(spawn_exec_seen(&p, 5), 1);
	assert_int_equal(spawn_exec_seen(&p, 0), 1); /* the pipe is closed: asked again, still 1 */
	st = wait_status(p.pid, 5000);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	spawn_reaped(&p);
	spawn_release(&p);
	spawn_proc_close(&p);

	fail = EPERM;
	assert_int_equal(spawn_start(&o, &p, &cause), 0);
	assert_int_equal(spawn_exec_seen(&p, 5), -1);
	st = wait_status(p.pid, 5000);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 127);
	spawn_reaped(&p);
	spawn_release(&p);
	spawn_proc_close(&p);

	/* Released before the exec was seen: the pipe is closed with the rest. */
	fail = 0;
	assert_int_equal(spawn_start(&o, &p, &cause), 0);
	st = wait_status(p.pid, 5000);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	spawn_reaped(&p);
	spawn_release(&p);
	spawn_proc_close(&p);
	assert_int_equal(count_fds(), fds);
}

static void
test_path_from_envp(void **state)
{
	const char *dir = *state;
	char bin[256], prog[512], pathenv[600], *cause, *old;
	char *argv[] = {"spawn-test-envp-cmd", NULL};
	char *env[] = {pathenv, NULL};
	struct spawn_opts o = opts_make(argv, 0);
	struct capture *c = calloc(1, sizeof *c);

	snprintf(bin, sizeof bin, "%s/bin", dir);
	assert_int_equal(mkdir(bin, 0755), 0);
	snprintf(prog, sizeof prog, "%s/spawn-test-envp-cmd", bin);
	write_file(prog, "#!/bin/sh\necho from-envp\n", 0755);
	o.envp = env;

	snprintf(pathenv, sizeof pathenv, "PATH=%s:/usr/bin:/bin", bin);
	assert_int_equal(run(&o, c, NULL, 0), 0);
	assert_string_equal(c->out, "from-envp\n");

	/* Relative and empty entries are taken from the child's cwd. */
	snprintf(pathenv, sizeof pathenv, "PATH=/nonexistent:bin:/usr/bin");
	o.cwd = dir;
	assert_int_equal(run(&o, c, NULL, 0), 0);
	assert_string_equal(c->out, "from-envp\n");
	snprintf(pathenv, sizeof pathenv, "PATH=/usr/bin::/bin");
	o.cwd = bin;
	assert_int_equal(run(&o, c, NULL, 0), 0);
	assert_string_equal(c->out, "from-envp\n");
	o.cwd = NULL;

	/* Our own PATH is not consulted. */
	old = strdup(getenv("PATH") != NULL ? getenv("PATH") : "/usr/bin:/bin");
	setenv("PATH", bin, 1);
	snprintf(pathenv, sizeof pathenv, "PATH=/usr/bin:/bin");
	assert_int_equal(run_fail(&o, &cause), -ENOENT);
	free(cause);
	setenv("PATH", old, 1);
	free(old);
	free(c);
}

static void
test_stdin_pipe(void **state)
{
	char *argv[] = {"cat", NULL};
	struct spawn_opts o = opts_make(argv, SPAWN_STDIN_PIPE);
	struct capture *c = calloc(1, sizeof *c);
	size_t n = 300 * 1024, i;
	char *big = malloc(n);

	assert_int_equal(run(&o, c, "hello\n", 6), 0);
	assert_string_equal(c->out, "hello\n");
	/* More than a pipe buffer each way: needs non-blocking writes interleaved with reads. */
	for (i = 0; i < n; i++)
		big[i] = (char)('a' + i % 26);
	assert_int_equal(run(&o, c, big, n), 0);
	assert_int_equal(c->outlen, n);
	assert_memory_equal(c->out, big, n);
	free(big);
	free(c);
}

static void
test_devnull_stdin(void **state)
{
	char *argv[] = {"sh", "-c", "readlink /proc/self/fd/0; cat; echo done", NULL};
	struct spawn_opts o = opts_make(argv, 0);
	struct capture *c = calloc(1, sizeof *c);
	int saved, pfd[2];

	/* Our stdin becomes a pipe nobody writes: a child inheriting it would hang in cat. */
	assert_true((saved = fcntl(0, F_DUPFD_CLOEXEC, 3)) > 2);
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	assert_int_equal(dup2(pfd[0], 0), 0);
	assert_int_equal(run(&o, c, NULL, 0), 0);
	assert_string_equal(c->out, "/dev/null\ndone\n");
	assert_int_equal(dup2(saved, 0), 0);
	close(saved);
	close(pfd[0]);
	close(pfd[1]);
	free(c);
}

static void
test_parent_stdio_closed(void **state)
{
	char *argv[] = {"cat", NULL};
	struct spawn_opts o = opts_make(argv, SPAWN_STDIN_PIPE);
	struct capture *c = calloc(1, sizeof *c);
	struct spawn_proc p;
	char *cause = NULL;
	int saved0, saved1, r, st;

	/* With our 0 and 1 closed, new fds land there: they must move above stdio. */
	assert_true((saved0 = fcntl(0, F_DUPFD_CLOEXEC, 3)) > 2);
	assert_true((saved1 = fcntl(1, F_DUPFD_CLOEXEC, 3)) > 2);
	close(0);
	close(1);
	r = spawn_start(&o, &p, &cause);
	dup2(saved0, 0);
	dup2(saved1, 1);
	close(saved0);
	close(saved1);
	assert_int_equal(r, 0);
	assert_true(p.in_fd > 2 && p.out_fd > 2 && p.err_fd > 2);
	pump(&p, c, "hello\n", 6, 10000);
	st = wait_status(p.pid, 10000);
	spawn_proc_close(&p);
	assert_int_equal(st, 0);
	assert_string_equal(c->out, "hello\n");
	assert_string_equal(c->err, "");
	free(c);
}

static void
test_only_stdio_fds(void **state)
{
	char *argv[] = {"ls", "-1", "/proc/self/fd", NULL};
	struct spawn_opts o = opts_make(argv, 0);
	struct capture *c = calloc(1, sizeof *c);
	int extra[6], i;

	/* Non-cloexec fds of ours that must not reach the child. */
	for (i = 0; i < 4; i++)
		assert_true((extra[i] = open("/dev/null", O_RDONLY)) > 2);
	assert_int_equal(pipe(&extra[4]), 0);
	assert_int_equal(run(&o, c, NULL, 0), 0);
	assert_string_equal(c->out, "0\n1\n2\n3\n");
	o.flags = SPAWN_PTY;
	assert_int_equal(run(&o, c, NULL, 0), 0);
	assert_string_equal(c->out, "0\r\n1\r\n2\r\n3\r\n");
	o.flags = SPAWN_STDIN_PIPE;
	assert_int_equal(run(&o, c, NULL, 0), 0);
	assert_string_equal(c->out, "0\n1\n2\n3\n");
	for (i = 0; i < 6; i++)
		close(extra[i]);
	free(c);
}

/* A hook that always refuses. */
static int
hook_refuse(void *arg)
{
	return EPERM;
}

static void
test_no_fd_leak(void **state)
{
	char *atrue[] = {"true", NULL};
	char *amissing[] = {"spawn-test-no-such-command", NULL};
	char *abad[] = {"/nonexistent-spawn-dir/x", NULL};
	struct spawn_opts o;
	struct spawn_proc p;
	char *cause;
	int before = count_fds(), kids = count_procs(0, getpid()), i, r, status;

	for (i = 0; i < 1000; i++) {
		o = opts_make(atrue, 0);
		switch (i % 8) {
		case 1:
			o.flags = SPAWN_STDIN_PIPE;
			break;
		case 2:
			o.flags = SPAWN_PTY;
			break;
		case 3:
			o.argv = amissing;
			break;
		case 4:
			o.cwd = "/nonexistent-spawn-dir";
			break;
		case 5:
			o.child_hook = hook_refuse;
			o.flags = i % 16 < 8 ? SPAWN_PTY : SPAWN_STDIN_PIPE;
			break;
		case 6:
			o.argv = abad;
			break;
		}
		cause = NULL;
		r = spawn_start(&o, &p, &cause);
		if (i % 8 >= 3 && i % 8 <= 6) {
			assert_true(r < 0);
			free(cause);
			continue;
		}
		assert_int_equal(r, 0);
		assert_int_equal(waitpid(p.pid, &status, 0), p.pid);
		assert_int_equal(status, 0);
		spawn_proc_close(&p); /* after the exit: closing a PTY master hangs the child up */
	}
	assert_int_equal(count_fds(), before);
	assert_int_equal(count_procs(0, getpid()), kids);
}

static void
test_spawn_speed(void **state)
{
	char *argv[] = {"/bin/true", NULL};
	struct spawn_opts o = opts_make(argv, 0);
	struct spawn_proc p;
	struct timespec t0, t1;
	double us;
	int i, mode, n = 500, status;

	for (mode = 0; mode < 2; mode++) {
		o.flags = mode == 0 ? 0 : SPAWN_PTY;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < n; i++) {
			assert_int_equal(spawn_start(&o, &p, NULL), 0);
			assert_int_equal(waitpid(p.pid, &status, 0), p.pid);
			spawn_proc_close(&p);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		us = ((double)(t1.tv_sec - t0.tv_sec) * 1e6 +
			     (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) /
			n;
		print_message("spawn_start+waitpid of /bin/true (%s): %.0f us per spawn\n",
			mode == 0 ? "pipes" : "pty", us);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipes_echo),
		cmocka_unit_test(test_pipes_stderr_separate),
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_fd_flags),
		cmocka_unit_test(test_enoent),
		cmocka_unit_test_setup_teardown(test_eacces, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_chdir_failure),
		cmocka_unit_test(test_child_hook),
		cmocka_unit_test_setup_teardown(test_path_from_envp, tmpdir_setup, tmpdir_teardown),
		cmocka_unit_test(test_stdin_pipe),
		cmocka_unit_test(test_devnull_stdin),
		cmocka_unit_test(test_parent_stdio_closed),
		cmocka_unit_test(test_only_stdio_fds),
		cmocka_unit_test(test_no_fd_leak),
		cmocka_unit_test(test_spawn_speed),
		cmocka_unit_test(test_nowait),
	};

	if (reaper_setup() != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
