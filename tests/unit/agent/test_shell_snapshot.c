/*
 * shell_snapshot_text.c: the capture script run by a real bash (its output made into the
 * file upstream writes: marker, sections, exports without PWD/OLDPWD; what the profile printed
 * before the marker dropped; output cut short refused), and the wrapper a -lc call runs
 * instead (sourcing, the call's own variables winning over the file's, quoting, trailing args).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/shell/shell_snapshot.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

/* Run argv with env, its stdout into out (bounded); the exit status. */
static int
run(char *const argv[], char *const env[], struct buf *out)
{
	int p[2], st;
	char chunk[4096];
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	if ((pid = fork()) == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execve(argv[0], argv, env);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], chunk, sizeof chunk)) > 0)
		assert_int_equal(buf_add(out, chunk, (size_t)n), 0);
	close(p[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void
test_capture_to_file(void **state)
{
	char *script = xasprintf("echo noise-before; f1() { echo one; }; alias gg='git status'; "
				 "export SNAP_A='it'\"'\"'s'; cd /tmp; %s",
		shell_snapshot_capture_script);
	char *argv[] = {"/bin/bash", "-c", script, NULL};
	char *env[] = {"PATH=/usr/bin:/bin", "HOME=/nonexistent", "OLDPWD=/x", NULL};
	static const char head[] = "# Snapshot file\n# Unset all aliases to avoid conflicts with "
				   "functions\nunalias -a 2>/dev/null || true\nshopt -u autocd\n";
	struct buf out, file;

	(void)state;
	buf_init(&out, 1 << 20);
	buf_init(&file, 1 << 20);
	assert_int_equal(run(argv, env, &out), 0);
	assert_int_equal(shell_snapshot_text(out.ptr, out.len, &file), 0);
	assert_true(strncmp(file.ptr, head, sizeof head - 1) == 0);
	assert_null(strstr(file.ptr, "noise-before"));
	assert_null(memchr(file.ptr, '\0', file.len));
	assert_non_null(
		strstr(file.ptr, "\n# Functions\nf1 () \n{ \n    echo one\n}\n\n# setopts "));
	assert_non_null(strstr(file.ptr, "\nset -o hashall\n"));
	assert_non_null(strstr(file.ptr,
		"\n\n# aliases 1\nalias gg='git status'\n\n# exports (native declarations)\n"));
	assert_non_null(strstr(file.ptr, "\ndeclare -x SNAP_A=\"it's\"\n"));
	assert_non_null(strstr(file.ptr, "\ndeclare -x HOME=\"/nonexistent\"\n"));
	assert_null(strstr(file.ptr, "PWD="));
	/* Cut short (a section's end missing) or no marker: no snapshot. */
	buf_reset(&file);
	assert_int_equal(shell_snapshot_text(out.ptr, out.len - 1, &file), -1);
	assert_int_equal(shell_snapshot_text("# Snapshot\0\0\0", 13, &file), -1);
	buf_free(&out);
	buf_free(&file);
	free(script);
}

static void
test_wrapper_keeps_the_calls_vars(void **state)
{
	char path[] = "/tmp/test_shell_snapshot.XXXXXX";
	const char *call[] = {"/bin/bash", "-lc",
		"printf '%s|%s|%s|%s|%s' \"$FROM_SNAP\" \"$TERM\" "
		"\"${KEEP_UNSET-unset}\" \"$0\" \"$1\"",
		"arg 0", "it's"};
	const char *keep[] = {"TERM", "KEEP_UNSET", "bad-name", NULL};
	char *wrapper, *argv[] = {"/bin/bash", "-c", NULL, NULL};
	char *env[] = {"PATH=/usr/bin:/bin", "TERM=dumb", NULL};
	struct buf out;
	FILE *f;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_non_null(f = fdopen(fd, "w"));
	fputs("# Snapshot file\ndeclare -x FROM_SNAP=\"snap\"\ndeclare -x TERM=\"xterm\"\n"
	      "declare -x KEEP_UNSET=\"from-file\"\nshopt -s login_shell\n",
		f);
	fclose(f);
	wrapper = shell_snapshot_wrapper(path, call, 5, keep);
	assert_non_null(wrapper);
	assert_non_null(strstr(wrapper, "if . '/tmp/test_shell_snapshot."));
	assert_null(strstr(wrapper, "bad-name"));
	argv[2] = wrapper;
	buf_init(&out, 1 << 16);
	assert_int_equal(run(argv, env, &out), 0);
	/* The file's variable, the call's TERM, a kept variable the call did not set unset. */
	assert_string_equal(buf_str(&out), "snap|dumb|unset|arg 0|it's");
	/* A file that is gone: the call still runs, without it. */
	unlink(path);
	buf_reset(&out);
	assert_int_equal(run(argv, env, &out), 0);
	assert_string_equal(buf_str(&out), "|dumb|unset|arg 0|it's");
	buf_free(&out);
	free(wrapper);
}

/* The check's dump becomes the environment a call starts from: `_` as bash's exec sets it. */
static void
test_env_from_dump(void **state)
{
	static const char dump[] = "A=1\0_=/usr/bin/env\0B=x=y\0EMPTY=\0";
	char **env, *script;

	(void)state;
	env = shell_snapshot_env(dump, sizeof dump - 1, "/bin/bash");
	assert_non_null(env);
	assert_string_equal(env[0], "A=1");
	assert_string_equal(env[1], "B=x=y");
	assert_string_equal(env[2], "EMPTY=");
	assert_string_equal(env[3], "_=/bin/bash");
	assert_null(env[4]);
	free(env);
	/* no dump (no /usr/bin/env), cut short, not NAME=value, SHELLOPTS (set -e shows in it) */
	assert_null(shell_snapshot_env("", 0, "/bin/bash"));
	assert_null(shell_snapshot_env("A=1\0B=", 6, "/bin/bash"));
	assert_null(shell_snapshot_env("A\0", 2, "/bin/bash"));
	assert_null(shell_snapshot_env("SHELLOPTS=errexit\0", 18, "/bin/bash"));
	script = shell_snapshot_check_script("/x/it's.sh");
	assert_string_equal(script,
		"set -e; . '/x/it'\"'\"'s.sh' >/dev/null; if [ -x /usr/bin/env ]; "
		"then exec /usr/bin/env -0; fi");
	free(script);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capture_to_file),
		cmocka_unit_test(test_wrapper_keeps_the_calls_vars),
		cmocka_unit_test(test_env_from_dump),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
