/*
 * The rpc fuzz target's environment (fuzz_rpc.h). Nothing a fuzzed request asks for may reach
 * the machine:
 *  - CODEX_HOME is a fresh mkdtemp directory per process, with a config.toml whose model
 *    provider is 127.0.0.1:9 without retries (turns fail at once); every proxy variable points
 *    there too, so a base URL given in a request's config overrides is never resolved. A
 *    rollout with the fixed id FUZZ_THREAD is in sessions/, so seeds can name a thread.
 *  - Landlock (when the kernel has it) limits every write of the process to the scratch tree,
 *    the current directory (libFuzzer's corpus and crash files) and /dev, and TCP connect to
 *    port 9: fs/remove "/" fails with EACCES. Without Landlock, fuzz_rpc.c drops the fs/
 *    requests that write.
 *  - spawn_start is replaced (spawn_fake): no command runs. The fake forks a child that only
 *    writes its argv[0] and a newline on its output and _exits (code: strlen(argv[0]) % 3), so
 *    command/exec's reaping, draining and answers run as for a real process; argv[0] "fail"
 *    fails like a missing program, and past FUZZ_SPAWN_MAX forks per input every spawn fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/home.h"
#include "protocol/xmalloc.h"
#include "sandbox/sandbox.h"
#include "sandbox/spawn/spawn.h"
#include "fuzz_rpc.h"

#define FUZZ_SPAWN_MAX 4 /* forks per input */

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule	    445
#define SYS_landlock_restrict_self  446
#endif
#define FUZZ_LL_VERSION	    (1U << 0)
#define FUZZ_LL_PATH	    1
#define FUZZ_LL_PORT	    2
#define FUZZ_LL_WRITE_FILE  (1ULL << 1)
#define FUZZ_LL_WRITES_ABI1 0x1ff2ULL /* write, remove dir/file, make char..sym */
#define FUZZ_LL_REFER	    (1ULL << 13)
#define FUZZ_LL_TRUNCATE    (1ULL << 14)
#define FUZZ_LL_BIND_TCP    (1ULL << 0)
#define FUZZ_LL_CONNECT_TCP (1ULL << 1)

struct fuzz_ll_ruleset {
	uint64_t fs, net;
};
struct fuzz_ll_path {
	uint64_t allowed;
	int32_t fd;
} __attribute__((packed));
struct fuzz_ll_port {
	uint64_t allowed, port;
};

static char fuzz_root[64], fuzz_ws[96], fuzz_home[96];
static int fuzz_confined;
static int fuzz_spawned; /* forks of this input */

/* A thread on disk with a fixed id (FUZZ_THREAD in seeds: thread/read, resume, turn/start...). */
#define FUZZ_THREAD "019a0000-0000-7000-8000-000000000001"
static const char fuzz_rollout[] =
	"{\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"type\":\"session_meta\",\"payload\":{"
	"\"id\":\"" FUZZ_THREAD "\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/tmp\","
	"\"originator\":\"fuzz\",\"cli_version\":\"0.1.0\",\"model_provider\":\"fuzz\"}}\n"
	"{\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"type\":\"event_msg\",\"payload\":{"
	"\"type\":\"task_started\",\"turn_id\":\"t1\"}}\n"
	"{\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"type\":\"event_msg\",\"payload\":{"
	"\"type\":\"user_message\",\"message\":\"hello\",\"images\":[]}}\n"
	"{\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"type\":\"event_msg\",\"payload\":{"
	"\"type\":\"agent_message\",\"message\":\"hi\"}}\n"
	"{\"timestamp\":\"2025-01-01T00:00:03.000Z\",\"type\":\"event_msg\",\"payload\":{"
	"\"type\":\"task_complete\",\"turn_id\":\"t1\"}}\n";

static const char fuzz_config[] =
	"model = \"fuzz-model\"\napproval_policy = \"never\"\nsandbox_mode = \"read-only\"\n"
	"model_provider = \"fuzz\"\n[features]\nremote_models = false\n"
	"[model_providers.fuzz]\nname = \"fuzz\"\nbase_url = \"http://127.0.0.1:9/v1\"\n"
	"wire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n";

const char *
fuzz_env_ws(void)
{
	return fuzz_ws;
}

const char *
fuzz_env_home(void)
{
	return fuzz_home;
}

int
fuzz_env_confined(void)
{
	return fuzz_confined;
}

/* Write a whole file, or die: the environment must be what the seeds expect. */
static void
fuzz_put(const char *dir, const char *rel, const char *text)
{
	char path[256];
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, rel);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0 ||
		write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
}

static int
fuzz_rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

/* Restrict writes to the scratch tree, the current directory and /dev; TCP to port 9. */
static int
fuzz_confine(void)
{
	struct fuzz_ll_ruleset rs = {0};
	struct fuzz_ll_path pb;
	struct fuzz_ll_port np = {.allowed = FUZZ_LL_CONNECT_TCP, .port = 9};
	const char *dirs[] = {fuzz_root, ".", "/dev"};
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, FUZZ_LL_VERSION);
	int rfd, fd, r = -1;

	if (abi < 1)
		return -1;
	rs.fs = FUZZ_LL_WRITES_ABI1 | (abi >= 2 ? FUZZ_LL_REFER : 0) |
		(abi >= 3 ? FUZZ_LL_TRUNCATE : 0);
	rs.net = abi >= 4 ? FUZZ_LL_BIND_TCP | FUZZ_LL_CONNECT_TCP : 0;
	rfd = (int)syscall(
		SYS_landlock_create_ruleset, &rs, abi >= 4 ? sizeof rs : sizeof rs.fs, 0);
	if (rfd < 0)
		return -1;
	for (size_t i = 0; i < nitems(dirs); i++) {
		if ((fd = open(dirs[i], O_PATH | O_CLOEXEC)) < 0)
			goto out;
		pb.allowed = i == 2 ? rs.fs & (FUZZ_LL_WRITE_FILE | FUZZ_LL_TRUNCATE) : rs.fs;
		pb.fd = fd;
		r = (int)syscall(SYS_landlock_add_rule, rfd, FUZZ_LL_PATH, &pb, 0);
		close(fd);
		if (r != 0)
			goto out;
	}
	r = -1;
	if (rs.net != 0 && syscall(SYS_landlock_add_rule, rfd, FUZZ_LL_PORT, &np, 0) != 0)
		goto out;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		syscall(SYS_landlock_restrict_self, rfd, 0) != 0)
		goto out;
	r = 0;
out:
	close(rfd);
	return r;
}

/* The spawn_start stand-in (see the top of this file). */
static int
fuzz_spawn(const struct spawn_opts *o, struct spawn_proc *p, char **cause)
{
	int out[2] = {-1, -1}, err[2] = {-1, -1}, in[2] = {-1, -1}, sv[2] = {-1, -1};
	const char *a0 = o->argv != NULL && o->argv[0] != NULL ? o->argv[0] : NULL;
	const int fl = O_CLOEXEC | O_NONBLOCK;
	size_t n;
	pid_t pid;

	if (a0 == NULL || strcmp(a0, "fail") == 0 || fuzz_spawned >= FUZZ_SPAWN_MAX) {
		*cause = xstrdup("failed to spawn command: No such file or directory (os error 2)");
		return -ENOENT;
	}
	fuzz_spawned++;
	if (o->flags & SPAWN_PTY) {
		/* A socket stands for the PTY master: one fd, read and written. */
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0)
			abort();
	} else if (pipe2(out, fl) != 0 || pipe2(err, fl) != 0 ||
		((o->flags & SPAWN_STDIN_PIPE) && pipe2(in, fl) != 0))
		abort();
	n = strlen(a0);
	if ((pid = fork()) < 0)
		abort();
	if (pid == 0) {
		int w = sv[1] >= 0 ? sv[1] : out[1];

		setsid();
		if (write(w, a0, n) < 0 || write(w, "\n", 1) < 0)
			_exit(126);
		_exit((int)(n % 3));
	}
	p->pid = pid;
	if (sv[0] >= 0) {
		close(sv[1]);
		p->pty_fd = sv[0];
		return 0;
	}
	close(out[1]);
	close(err[1]);
	p->out_fd = out[0];
	p->err_fd = err[0];
	if (in[0] >= 0) {
		close(in[0]);
		p->in_fd = in[1];
	}
	return 0;
}

void
fuzz_env_init(void)
{
	static const char *const proxies[] = {
		"http_proxy", "https_proxy", "HTTPS_PROXY", "ALL_PROXY"};
	char *home;

	snprintf(fuzz_root, sizeof fuzz_root, "/tmp/app-server-fuzz.XXXXXX");
	if (mkdtemp(fuzz_root) == NULL)
		abort();
	snprintf(fuzz_ws, sizeof fuzz_ws, "%s/ws", fuzz_root);
	snprintf(fuzz_home, sizeof fuzz_home, "%s/home", fuzz_root);
	setenv("CODEX_HOME", fuzz_home, 1);
	setenv("TMPDIR", fuzz_root, 1);
	setenv("APP_SERVER_LOG", "error", 1);
	setenv("APP_SERVER_NO_CGROUPS", "1", 1);
	setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1", 1);
	setenv("OPENAI_API_KEY", "fuzz", 1);
	for (size_t i = 0; i < nitems(proxies); i++)
		setenv(proxies[i], "http://127.0.0.1:9", 1);
	unsetenv("NO_PROXY");
	unsetenv("no_proxy");
	home = home_path();
	sandbox_set_home(home);
	free(home);
	signal(SIGPIPE, SIG_IGN);
	fuzz_confined = fuzz_confine() == 0;
	if (!fuzz_confined)
		fprintf(stderr,
			"fuzz_rpc: no Landlock here: fs/ requests that write are dropped\n");
	spawn_fake = fuzz_spawn;
	fuzz_env_reset();
}

void
fuzz_env_reset(void)
{
	static const char *const days[] = {
		"sessions", "sessions/2025", "sessions/2025/01", "sessions/2025/01/01"};
	char sub[128];

	nftw(fuzz_ws, fuzz_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	nftw(fuzz_home, fuzz_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	if (mkdir(fuzz_ws, 0755) != 0 || mkdir(fuzz_home, 0700) != 0)
		abort();
	fuzz_put(fuzz_home, "config.toml", fuzz_config);
	/* Upstream's layout: sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl. */
	for (size_t i = 0; i < nitems(days); i++) {
		snprintf(sub, sizeof sub, "%s/%s", fuzz_home, days[i]);
		if (mkdir(sub, 0700) != 0)
			abort();
	}
	fuzz_put(sub, "rollout-2025-01-01T00-00-00-" FUZZ_THREAD ".jsonl", fuzz_rollout);
	fuzz_put(fuzz_ws, "a.txt", "alpha\nbeta\n");
	fuzz_put(fuzz_ws, ".gitignore", "*.log\n!keep.log\nbuild/\n");
	fuzz_put(fuzz_ws, "x.log", "log\n");
	snprintf(sub, sizeof sub, "%s/src", fuzz_ws);
	if (mkdir(sub, 0755) != 0)
		abort();
	fuzz_put(fuzz_ws, "src/main.c", "int main(void) { return 0; }\n");
	fuzz_spawned = 0;
}

void
fuzz_env_reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}
