/*
 * `app-server sandbox`: run one command under a policy from the shell (upstream's
 * `codex sandbox linux`), on our own stdin, stdout and stderr, and exit with its status;
 * or `--check`: say what this kernel supports and try the sandbox for real.
 */
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"
#include "sandbox_int.h"
#include "protocol/xmalloc.h"

extern char **environ;

static const char sandbox_cli_usage[] =
	"usage: app-server sandbox [--policy JSON | --profile JSON] [--cwd DIR] -- CMD [ARG]...\n"
	"       app-server sandbox --check\n"
	"\n"
	"Runs CMD under a SandboxPolicy (default {\"type\":\"readOnly\"}) or a PermissionProfile\n"
	"(an object, or :read-only, :workspace, :danger-no-sandbox) and exits with its status.\n"
	"--check prints what this kernel supports and runs `true` under readOnly and\n"
	"workspaceWrite.\n";

/* The running sandbox, for the signal handler (set before the handler is installed). */
static struct spawn_proc sandbox_cli_proc = {.pid = -1};
static volatile sig_atomic_t sandbox_cli_running;

/* Pass INT, QUIT, TERM and HUP on to the sandbox (spawn_kill is kill(2) for these). */
static void
sandbox_cli_signal_cb(int sig)
{
	if (sandbox_cli_running)
		spawn_kill(&sandbox_cli_proc, sig);
}

/* Our environment plus extra (if not NULL); a heap vector of borrowed strings. */
static char **
sandbox_cli_env(const char *extra)
{
	size_t n = 0, i;
	char **e;

	while (environ[n] != NULL)
		n++;
	e = xcalloc(n + 2, sizeof *e);
	for (i = 0; i < n; i++)
		e[i] = environ[i];
	e[n] = (char *)extra;
	return e;
}

/* Run argv under policy in cwd with our stdio; the exit status to report, or -1 and *cause. */
static int
sandbox_cli_run(const json_t *policy, const char *cwd, char **argv, int quiet, char **cause)
{
	struct spawn_opts so;
	struct spawn_proc sp;
	struct sigaction sa, old[4];
	static const int sigs[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
	const char *extra = NULL;
	char **envp = NULL;
	int status, r = -1, devnull = -1, saved[3] = {-1, -1, -1}, i;
	pid_t w;

	if (sandbox_policy_check(policy, &extra, cause) != 0)
		return -1;
	envp = sandbox_cli_env(extra);
	memset(&so, 0, sizeof so);
	so.argv = argv;
	so.envp = envp;
	so.cwd = cwd;
	so.flags = SPAWN_INHERIT;
	if (quiet) {
		/* A probe: its stdio is /dev/null, not ours. */
		fflush(stdout);
		if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1) {
			*cause = xasprintf("/dev/null: %s", strerror(errno));
			goto out;
		}
		for (i = 0; i < 3; i++) {
			saved[i] = fcntl(i, F_DUPFD_CLOEXEC, 3);
			dup2(devnull, i);
		}
	}
	if (sandbox_spawn_prepare(policy, &so, cause) != 0 || spawn_start(&so, &sp, cause) != 0)
		goto out;
	spawn_proc_close(&sp);
	sandbox_cli_proc = sp;
	sandbox_cli_running = 1;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = sandbox_cli_signal_cb;
	for (i = 0; i < 4; i++)
		sigaction(sigs[i], &sa, &old[i]);
	while ((w = waitpid(sp.pid, &status, 0)) == -1 && errno == EINTR)
		;
	for (i = 0; i < 4; i++)
		sigaction(sigs[i], &old[i], NULL);
	sandbox_cli_running = 0;
	if (w == -1) {
		*cause = xasprintf("waitpid: %s", strerror(errno));
		goto out;
	}
	r = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
out:
	for (i = 0; i < 3; i++) {
		if (saved[i] != -1) {
			dup2(saved[i], i);
			close(saved[i]);
		}
	}
	if (devnull != -1)
		close(devnull);
	sandbox_spawn_done(&so, NULL); /* our exit closes what is left */
	free(envp);
	return r;
}

/* Run fn in a raw clone with flags and return its exit code (0 or an errno), or -errno. */
static int
sandbox_cli_try(unsigned long flags, int (*fn)(void))
{
	pid_t pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0);
	int status;

	if (pid == -1)
		return -errno;
	if (pid == 0)
		_exit(fn != NULL ? fn() : 0);
	if (waitpid(pid, &status, 0) == -1)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : EINTR;
}

/* The uid map of the probe, made before the clone (the child's own uid is unmapped). */
static char cli_map[32];

/* In a probe child: map our uid in the new user namespace. */
static int
sandbox_cli_try_maps(void)
{
	ssize_t n = (ssize_t)strlen(cli_map);
	int fd;

	if ((fd = open("/proc/self/setgroups", O_WRONLY)) == -1 || write(fd, "deny", 4) != 4)
		return errno;
	close(fd);
	if ((fd = open("/proc/self/uid_map", O_WRONLY)) == -1 || write(fd, cli_map, (size_t)n) != n)
		return errno;
	close(fd);
	return 0;
}

/* In a probe child: install the network-restricted filter. */
static int
sandbox_cli_try_seccomp(void)
{
	const struct sock_fprog *prog;
	char *cause = NULL;

	if (filter_program(0, &prog, &cause) != 0)
		return EINVAL;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return errno;
	return filter_load(prog);
}

/* Probe each layer in a short-lived child. */
void
sandbox_cli_probe(struct sandbox_support *s)
{
	int r;

	s->landlock_abi = landlock_abi();
	snprintf(cli_map, sizeof cli_map, "%u %u 1\n", (unsigned)geteuid(), (unsigned)geteuid());
	r = sandbox_cli_try(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID, sandbox_cli_try_maps);
	s->userns = r > 0 ? -r : r;
	r = sandbox_cli_try(CLONE_NEWUSER | CLONE_NEWNET, NULL);
	s->netns = r > 0 ? -r : r;
	r = sandbox_cli_try(0, sandbox_cli_try_seccomp);
	s->seccomp = r > 0 ? -r : r;
}

/* "yes", or "no (<reason>)". */
static void
sandbox_cli_say(const char *what, int r)
{
	if (r == 0)
		printf("%s: yes\n", what);
	else
		printf("%s: no (%s)\n", what, strerror(-r));
}

/* --check: what the kernel offers and whether the sandbox really runs. */
static int
sandbox_cli_check(void)
{
	static char *argv[] = {"true", NULL};
	struct sandbox_support s;
	char tmp[] = "/tmp/app-server-check-XXXXXX", *cause = NULL, *pol;
	json_t *ro, *ww;
	int ok = 1, r;

	sandbox_cli_probe(&s);
	if (s.landlock_abi > 0)
		printf("landlock: ABI %d (file system%s%s%s%s%s%s)\n", s.landlock_abi,
			s.landlock_abi >= 2 ? ", refer" : "",
			s.landlock_abi >= 3 ? ", truncate" : "",
			s.landlock_abi >= 4 ? ", tcp bind/connect" : "",
			s.landlock_abi >= 5 ? ", device ioctls" : "",
			s.landlock_abi >= 6 ? ", abstract unix socket and signal scopes" : "",
			s.landlock_abi >= 9 ? ", pathname unix sockets" : "");
	else {
		printf("landlock: no (%s): the sandbox cannot run\n", landlock_why());
		ok = 0;
	}
	sandbox_cli_say("user, mount and pid namespaces", s.userns);
	sandbox_cli_say("network namespaces", s.netns);
	sandbox_cli_say("seccomp filters", s.seccomp);
	ok &= s.userns == 0 && s.netns == 0 && s.seccomp == 0;
	ro = json_pack("{s:s}", "type", "readOnly");
	r = sandbox_cli_run(ro, "/", argv, 1, &cause);
	printf("sandbox readOnly: %s\n", r == 0 ? "ok" : cause != NULL ? cause : "failed");
	ok &= r == 0;
	free(cause);
	cause = NULL;
	if (mkdtemp(tmp) == NULL) {
		printf("sandbox workspaceWrite: mkdtemp: %s\n", strerror(errno));
		ok = 0;
	} else {
		pol = xasprintf("{\"type\":\"workspaceWrite\",\"writableRoots\":[\"%s\"]}", tmp);
		ww = json_loads(pol, 0, NULL);
		r = sandbox_cli_run(ww, tmp, argv, 1, &cause);
		printf("sandbox workspaceWrite: %s\n",
			r == 0			? "ok"
				: cause != NULL ? cause
						: "failed");
		ok &= r == 0;
		json_decref(ww);
		free(pol);
		free(cause);
		rmdir(tmp);
	}
	json_decref(ro);
	return ok ? 0 : 1;
}

/* `app-server sandbox ...`; argv[0] is "sandbox". */
int
sandbox_cli_main(int argc, char **argv)
{
	const char *cwd = NULL, *text = NULL;
	char here[PATH_MAX], *cause = NULL;
	json_error_t je;
	json_t *policy = NULL;
	int i, r;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--check") == 0 && argc == 2)
			return sandbox_cli_check();
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if ((strcmp(argv[i], "--policy") == 0 || strcmp(argv[i], "--profile") == 0) &&
			i + 1 < argc && text == NULL)
			text = argv[++i];
		else if (strcmp(argv[i], "--cwd") == 0 && i + 1 < argc)
			cwd = argv[++i];
		else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(sandbox_cli_usage, stdout);
			return 0;
		} else
			break;
	}
	if (i >= argc) {
		fputs(sandbox_cli_usage, stderr);
		return 2;
	}
	if (text != NULL && text[0] == ':')
		policy = json_string(text);
	else if (text != NULL && (policy = json_loads(text, JSON_DECODE_ANY, &je)) == NULL) {
		fprintf(stderr, "app-server sandbox: bad JSON policy: %s\n", je.text);
		return 2;
	}
	if (cwd == NULL)
		cwd = getcwd(here, sizeof here);
	r = sandbox_cli_run(policy, cwd, argv + i, 0, &cause);
	if (r < 0) {
		fprintf(stderr, "app-server sandbox: %s\n", cause != NULL ? cause : "failed");
		r = strstr(cause != NULL ? cause : "", "failed to spawn command") != NULL ? 127 : 1;
	}
	free(cause);
	json_decref(policy);
	return r;
}
