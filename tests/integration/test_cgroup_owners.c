/*
 * Whose cgroups are whose, across daemons (issue 21, items 7 and 13), against the real binary:
 *  - the survivors of a daemon's kill -9 (setsid'd descendants of an unsandboxed command,
 *    still in its cgroup) are killed by the next daemon at start-up, before any command;
 *  - a daemon in another PID namespace under the same cgroup parent, which sees our pid as
 *    gone, leaves our cgroups alone (it removed them, and our next command/exec answered
 *    "cgroup failed: No such device");
 *  - a cgroup of ours removed anyway is made again and the command runs, instead of this and
 *    every later command failing.
 * They need cgroups the daemon can create (as on CI); without, each says so and is skipped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_util.h"
#include "protocol/xmalloc.h"
#include "tests/helpers/skip_note.h"

/* The cgroups of a command, as /proc/self/cgroup shows them: v2 ("0::") and v1 pids. */
struct cg_paths {
	char *dir[2]; /* filesystem paths of the command's cgroups, NULL when none */
};

/* A mount point of the cgroup2 hierarchy (i 0) or of the v1 one with pids (i 1), and its root. */
static int
cg_mount(int i, char *mnt, char *root)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096], *dash, fstype[64], opts[1024];
	int found = 0;

	if (f == NULL)
		return 0;
	while (!found && fgets(line, sizeof line, f) != NULL) {
		if ((dash = strstr(line, " - ")) == NULL ||
			sscanf(line, "%*s %*s %*s %1023s %1023s", root, mnt) != 2 ||
			sscanf(dash + 3, "%63s %*s %1023s", fstype, opts) != 2)
			continue;
		found = i == 0 ? strcmp(fstype, "cgroup2") == 0
			       : strcmp(fstype, "cgroup") == 0 && strstr(opts, "pids") != NULL;
	}
	fclose(f);
	return found;
}

/* Run `cat /proc/self/cgroup` in the daemon; the command's cgroups (asserts it has one). */
static void
cg_of_command(struct asc *c, struct cg_paths *p)
{
	json_t *m = xt_call(c, "command/exec", xt_argv_params("cat", "/proc/self/cgroup", NULL),
		asc_timeout(T_REPLY));
	const char *out = json_string_value(json_object_get(asc_assert_result(m), "stdout"));
	char mnt[1024], root[1024], *line, *copy, *save = NULL, *rel;
	size_t rl;
	int i;

	assert_non_null(out);
	copy = xstrdup(out);
	memset(p, 0, sizeof *p);
	for (line = strtok_r(copy, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		if ((rel = strstr(line, "/app-server-")) == NULL)
			continue;
		i = strncmp(line, "0::", 3) == 0 ? 0 : strstr(line, ":pids:") != NULL ? 1 : -1;
		if (i < 0 || p->dir[i] != NULL || !cg_mount(i, mnt, root))
			continue;
		rel = strchr(strchr(line, ':') + 1, ':') + 1;
		rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
		p->dir[i] = xasprintf("%s%s", mnt, rel + rl);
	}
	free(copy);
	json_decref(m);
	assert_true(p->dir[0] != NULL || p->dir[1] != NULL);
}

static void
cg_paths_free(struct cg_paths *p)
{
	free(p->dir[0]);
	free(p->dir[1]);
}

/* Whether the daemons here get cgroups: a command runs in one (else the test is skipped). */
static int
cg_available(struct asc *c)
{
	json_t *m = xt_call(c, "command/exec", xt_argv_params("cat", "/proc/self/cgroup", NULL),
		asc_timeout(T_REPLY));
	const char *out = json_string_value(json_object_get(asc_assert_result(m), "stdout"));
	int yes = out != NULL && strstr(out, "/app-server-") != NULL;

	json_decref(m);
	if (!yes)
		fprintf(stderr, "SKIPPED: the daemon cannot create cgroups here\n");
	return yes;
}

/* A process that must be gone within a few seconds ('Z' and 'X' count as gone). */
static int
cg_gone_within(pid_t pid, int ms)
{
	long long t0 = asc_now_ms();
	char state = '?';
	pid_t ppid, pgid;

	for (;;) {
		if (xt_proc_stat(pid, &state, &ppid, &pgid) != 0 || state == 'Z' || state == 'X')
			return 1;
		if (asc_now_ms() - t0 >= ms)
			return 0;
		usleep(10000);
	}
}

/* The pid a script wrote to dir/name. */
static pid_t
cg_read_pid(const char *dir, const char *name)
{
	char *path = xasprintf("%s/%s", dir, name), *text;
	long long t0 = asc_now_ms();
	pid_t pid = -1;
	size_t len;

	while (pid <= 1 && asc_now_ms() - t0 < asc_timeout(5000)) {
		if (access(path, F_OK) == 0 && (text = xt_read_file(path, &len)) != NULL) {
			pid = (pid_t)strtol(text, NULL, 10);
			free(text);
		}
		if (pid <= 1)
			usleep(10000);
	}
	if (pid <= 1)
		fail_msg("no pid in %s", path);
	free(path);
	return pid;
}

/* The parent directory ("app-server-<pid>") of a command's cgroup. */
static char *
cg_base(const char *dir)
{
	const char *slash = strrchr(dir, '/');

	return xstrndup(dir, (size_t)(slash - dir));
}

/*
 * A cgroup v2 child of the test's own cgroup, and a wrapper that starts the daemon in it; NULL
 * where none can be made (v1 only, no write access). Every daemon sweeps the dead daemons'
 * directories of its own parent at start-up: a daemon started anywhere else on the machine
 * meanwhile (another test run) would kill a survivor before the daemon under test could, so
 * the daemons of a kill -9 test get a parent of their own.
 */
/* A new child of the test's own cgroup in hierarchy i (0 v2, 1 v1 pids); its path or NULL. */
static char *
cg_private_dir(int i)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096], mnt[1024], root[1024], *own = NULL, *dir, *rel;
	size_t rl;

	while (f != NULL && own == NULL && fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (i == 0 && strncmp(line, "0::", 3) == 0)
			own = xstrdup(line + 3);
		else if (i == 1 && (rel = strstr(line, ":pids:")) != NULL)
			own = xstrdup(rel + 6);
	}
	if (f != NULL)
		fclose(f);
	if (own == NULL || !cg_mount(i, mnt, root)) {
		free(own);
		return NULL;
	}
	rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
	rel = strlen(own) >= rl ? own + rl : "";
	dir = xasprintf("%s%s/asc-test-%d", mnt, strcmp(rel, "/") == 0 ? "" : rel, (int)getpid());
	free(own);
	if (mkdir(dir, 0755) != 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

/*
 * A wrapper that starts the daemon in cgroups of the test's own (dirs[0] v2, dirs[1] the v1
 * pids hierarchy where the machine has one), NULL where none can be made. Every daemon sweeps
 * the dead daemons' directories of its own parents at start-up: a daemon started anywhere
 * else on the machine meanwhile (another test run) would kill a survivor before the daemon
 * under test could, so the daemons of a kill -9 test get parents of their own, in each
 * hierarchy they use.
 */
static char *
cg_private_wrapper(struct asc *c, char *dirs[2])
{
	const char *bin = getenv("APP_SERVER_BIN");
	char real[PATH_MAX], *path;
	FILE *f;

	dirs[0] = cg_private_dir(0);
	dirs[1] = cg_private_dir(1);
	if (dirs[0] == NULL || realpath(bin != NULL ? bin : "build/app-server", real) == NULL)
		return NULL;
	path = xasprintf("%s/in-cgroup.sh", asc_dir(c));
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n");
	for (int i = 0; i < 2; i++)
		if (dirs[i] != NULL)
			fprintf(f, "echo $$ > '%s/cgroup.procs' || exit 1\n", dirs[i]);
	fprintf(f, "exec '%s' \"$@\"\n", real);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
	return path;
}

static struct asc *cg_ready_via(const char *wrapper);
static void cg_rmdir(const char *dir);
static void cg_rmdir_tree(const char *base);

/* Kill what is left in a cgroup (v2 cgroup.kill); best effort. */
static void
cg_kill_all(const char *dir)
{
	char *path = xasprintf("%s/cgroup.kill", dir);
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		(void)!write(fd, "1", 1);
		close(fd);
	}
	free(path);
}

/* Remove a private parent made by cg_private_wrapper, with what daemons left in it. */
static void
cg_private_remove(char *dir)
{
	DIR *d;
	struct dirent *e;
	char *child;

	if (dir == NULL)
		return;
	if ((d = opendir(dir)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (e->d_type != DT_DIR || e->d_name[0] == '.')
				continue;
			child = xasprintf("%s/%s", dir, e->d_name);
			cg_kill_all(child);
			cg_rmdir_tree(child);
			free(child);
		}
		closedir(d);
	}
	cg_rmdir(dir);
	free(dir);
}

/* Item 7: what a daemon killed with -9 left in its cgroups dies when the next one starts. */
static void
test_survivors_of_kill9(void **state)
{
	struct asc *probe = xt_ready(), *a, *b;
	struct cg_paths p;
	char *script, *base, *wrapper, *priv[2] = {NULL, NULL};
	long long id;
	pid_t sleeper, sh;

	(void)state;
	if (!cg_available(probe)) {
		asc_free(probe);
		skip_test("the daemon cannot make cgroups here (no writable cgroup v2 tree)");
	}
	wrapper = cg_private_wrapper(probe, priv);
	a = wrapper != NULL ? cg_ready_via(wrapper) : xt_ready();
	cg_of_command(a, &p);
	base = cg_base(p.dir[0] != NULL ? p.dir[0] : p.dir[1]);
	if (priv[0] != NULL && p.dir[0] != NULL && strstr(p.dir[0], priv[0]) == NULL)
		fail_msg("the daemon's cgroup %s is not under %s", p.dir[0], priv[0]);
	script = xasprintf("echo $$ > '%s/sh'; setsid sleep 300 </dev/null >/dev/null 2>&1 & "
			   "echo $! > '%s/p'; sleep 300",
		asc_dir(a), asc_dir(a));
	id = asc_request(a, "command/exec",
		xt_with(xt_sh(script),
			"{'sandboxPolicy':{'type':'dangerFullAccess'},'processId':'k'}"));
	(void)id;
	sleeper = cg_read_pid(asc_dir(a), "p");
	sh = cg_read_pid(asc_dir(a), "sh");
	assert_int_equal(kill(asc_pid(a), SIGKILL), 0);
	asc_free_killed(a, SIGKILL);
	/* The direct child has a parent-death signal; the setsid'd one is only in the cgroup. */
	assert_true(cg_gone_within(sh, asc_timeout(5000)));
	assert_false(cg_gone_within(sleeper, 300));

	/* No command needed: the next daemon sweeps once its client pauses after start-up. */
	b = wrapper != NULL ? cg_ready_via(wrapper) : xt_ready();
	if (!cg_gone_within(sleeper, asc_timeout(5000))) {
		kill(sleeper, SIGKILL);
		fail_msg(
			"pid %d, left by a daemon killed with -9, survived the next daemon's start",
			(int)sleeper);
	}
	xt_exec_expect(b, xt_sh("true"), T_REPLY, 0, "", "");
	/* The dead daemon's directory goes too, once its processes are gone. */
	for (long long t0 = asc_now_ms();
		access(base, F_OK) == 0 && asc_now_ms() - t0 < asc_timeout(5000);)
		xt_exec_expect(b, xt_sh("true"), T_REPLY, 0, "", "");
	assert_int_equal(access(base, F_OK), -1);
	asc_free(b);
	asc_free(probe);
	cg_private_remove(priv[0]);
	cg_private_remove(priv[1]);
	cg_paths_free(&p);
	free(wrapper);
	free(script);
	free(base);
}

/* Whether `unshare --pid --fork true` works here (root, util-linux). */
static int
cg_can_unshare(void)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		dup2(null, 2);
		execlp("unshare", "unshare", "--pid", "--fork", "true", (char *)NULL);
		_exit(127);
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* A wrapper that runs the daemon as pid 1 of a new PID namespace; NULL when impossible. */
static char *
cg_pidns_wrapper(struct asc *c)
{
	const char *bin = getenv("APP_SERVER_BIN");
	char real[PATH_MAX], *path;
	FILE *f;

	if (geteuid() != 0 || !cg_can_unshare()) {
		fprintf(stderr, "SKIPPED: cannot make a PID namespace here (root and unshare)\n");
		return NULL;
	}
	if (realpath(bin != NULL ? bin : "build/app-server", real) == NULL)
		fail_msg("realpath: %s", strerror(errno));
	path = xasprintf("%s/in-pidns.sh", asc_dir(c));
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "#!/bin/sh\nexec unshare --pid --fork --kill-child '%s' \"$@\"\n", real);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
	return path;
}

/* Start a daemon through a wrapper (APP_SERVER_BIN swapped for the call). */
static struct asc *
cg_ready_via(const char *wrapper)
{
	const char *bin = getenv("APP_SERVER_BIN");
	char *saved = bin != NULL ? xstrdup(bin) : NULL;
	struct asc *c;

	setenv("APP_SERVER_BIN", wrapper, 1);
	c = xt_ready();
	if (saved != NULL)
		setenv("APP_SERVER_BIN", saved, 1);
	else
		unsetenv("APP_SERVER_BIN");
	free(saved);
	return c;
}

/* Item 13: a daemon in another PID namespace does not take our pid's absence for our death. */
static void
test_other_pidns_keeps_ours(void **state)
{
	struct asc *a = xt_ready(), *b, *c;
	struct cg_paths p, q;
	char *wrapper, *base;

	(void)state;
	if (!cg_available(a) || (wrapper = cg_pidns_wrapper(a)) == NULL) {
		asc_free(a);
		skip_test("no cgroups here, or no root and unshare for a new PID namespace");
	}
	cg_of_command(a, &p); /* an empty cgroup of ours now waits in the pool */
	base = cg_base(p.dir[0] != NULL ? p.dir[0] : p.dir[1]);
	/* Our pid does not exist in b's namespace. */
	b = cg_ready_via(wrapper);
	xt_exec_expect(b, xt_sh("true"), T_REPLY, 0, "", "");
	assert_int_equal(access(base, F_OK), 0);
	xt_exec_expect(a, xt_sh("echo still"), T_REPLY, 0, "still\n", "");
	cg_of_command(a, &q);
	assert_non_null(strstr(q.dir[0] != NULL ? q.dir[0] : q.dir[1], base));
	/* And the other way round: a daemon out here leaves b's alone. */
	c = xt_ready();
	xt_exec_expect(c, xt_sh("true"), T_REPLY, 0, "", "");
	xt_exec_expect(b, xt_sh("echo inside"), T_REPLY, 0, "inside\n", "");
	asc_free(c);
	asc_free(b);
	asc_free(a);
	cg_paths_free(&p);
	cg_paths_free(&q);
	free(wrapper);
	free(base);
}

/* rmdir, retried while the kernel still counts a dying process in it. */
static void
cg_rmdir(const char *dir)
{
	long long t0 = asc_now_ms();

	while (rmdir(dir) != 0 && errno == EBUSY && asc_now_ms() - t0 < asc_timeout(5000))
		usleep(10000);
	if (access(dir, F_OK) == 0)
		fail_msg("cannot remove %s: %s", dir, strerror(errno));
}

/* Remove a daemon's whole directory, as a sweep that took it for a dead one's would. */
static void
cg_rmdir_tree(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;
	char *child;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		child = xasprintf("%s/%s", base, e->d_name);
		cg_rmdir(child);
		free(child);
	}
	closedir(d);
	cg_rmdir(base);
}

/* Item 13: a cgroup of ours removed anyway is made again; no command fails for it. */
static void
test_vanished_cgroup_remade(void **state)
{
	struct asc *a = xt_ready();
	struct cg_paths p, q;
	char *base;
	int i;

	(void)state;
	if (!cg_available(a)) {
		asc_free(a);
		skip_test("the daemon cannot make cgroups here (no writable cgroup v2 tree)");
	}
	/* The pooled cgroup the next command would join. */
	cg_of_command(a, &p);
	for (i = 0; i < 2; i++)
		if (p.dir[i] != NULL)
			cg_rmdir(p.dir[i]);
	xt_exec_expect(a, xt_sh("echo one"), T_REPLY, 0, "one\n", "");
	/* The daemon's whole directory. */
	cg_of_command(a, &q);
	for (i = 0; i < 2; i++) {
		if (q.dir[i] == NULL)
			continue;
		base = cg_base(q.dir[i]);
		cg_rmdir_tree(base);
		free(base);
	}
	xt_exec_expect(a, xt_sh("echo two"), T_REPLY, 0, "two\n", "");
	xt_exec_expect(a, xt_sh("echo three"), T_REPLY, 0, "three\n", "");
	cg_paths_free(&q);
	/* Still a cgroup per command. */
	cg_of_command(a, &q);
	asc_free(a);
	cg_paths_free(&p);
	cg_paths_free(&q);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_survivors_of_kill9),
		cmocka_unit_test(test_other_pidns_keeps_ours),
		cmocka_unit_test(test_vanished_cgroup_remade),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
