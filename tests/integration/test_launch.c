/*
 * The launch surface against the real binary: what a client's command line may hold before
 * any JSON-RPC. Upstream's `app-server --help` says the VS Code extension starts it with
 * `--analytics-default-enabled`; we accept it (we send no analytics) instead of refusing to
 * start, and the usage says so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/wait.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_util.h"
#include "harness.h"
#include "protocol/xmalloc.h"

/* Run the binary with args (no daemon: --help and the like); its stdout, its exit status. */
static char *
run_binary(const char *const *args, int *status)
{
	const char *bin = getenv("APP_SERVER_BIN");
	char *argv[8], buf[4096];
	struct xt_buf out = {0};
	int pfd[2], null;
	size_t n = 0;
	ssize_t k;
	pid_t pid;

	if (bin == NULL)
		bin = "build/app-server";
	argv[n++] = (char *)bin;
	for (size_t i = 0; args[i] != NULL && n < 7; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(pfd[1], 1);
		dup2(null, 2);
		execv(bin, argv);
		_exit(127);
	}
	close(pfd[1]);
	while ((k = read(pfd[0], buf, sizeof buf)) > 0)
		xt_buf_add(&out, buf, (size_t)k);
	close(pfd[0]);
	assert_int_equal(waitpid(pid, status, 0), pid);
	return out.p != NULL ? out.p : xstrdup("");
}

/* Upstream's invocation with the extension's flag serves the protocol as usual. */
static void
test_analytics_flag_accepted(void **state)
{
	static const char *const args[] = {"app-server", "--analytics-default-enabled", NULL};
	struct asc_opts o = {.args = args, .capture_stderr = 1};
	struct asc *c = asc_spawn(&o);
	char *err;

	(void)state;
	asc_initialize(c);
	xt_exec_expect(c, xt_sh("echo launched"), T_REPLY, 0, "launched\n", "");
	err = asc_stderr(c);
	assert_null(strstr(err, "unknown argument"));
	free(err);
	asc_free(c);
}

/* --help names the flag (a documented no-op) and exits 0. */
static void
test_help_lists_analytics_flag(void **state)
{
	static const char *const args[] = {"app-server", "--help", NULL};
	int status;
	char *out = run_binary(args, &status);

	(void)state;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(strstr(out, "--analytics-default-enabled"));
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_analytics_flag_accepted),
		cmocka_unit_test(test_help_lists_analytics_flag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
