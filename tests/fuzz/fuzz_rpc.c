/*
 * libFuzzer target for the JSON-RPC path of the daemon: the input is what a client writes on
 * stdin. Per input, exactly what daemon_run wires up (server/daemon.c) is made fresh: the
 * default libev loop, the output queue (on /dev/null), the line reader (FUZZ_MAX_LINE, so
 * oversized lines happen), the rpc layer with the compiled schema and every method table, the
 * session and the http client. The input is fed to the line reader in chunks of varying size
 * (FUZZ_CHUNKS), each complete line goes to rpc_line as daemon_line does, and the loop runs
 * EVRUN_NOWAIT after each chunk and a bounded number of times at the end so async work
 * (command/exec's fake processes, thread workers, fs workers, failing model requests) can
 * proceed. Then everything is torn down in daemon_run's order.
 *
 * In inputs, "@WS@" stands for a scratch workspace (a.txt, x.log, .gitignore, src/main.c) and
 * "@HOME@" for CODEX_HOME; both are reset before each input. What is faked and confined:
 * fuzz_rpc_env.c.
 *
 * Run: make fuzz (FUZZ_TIME=seconds), or one seed: build/fuzz/fuzz_rpc FILE (FUZZ_RPC_SHOW=1
 * prints the answers on stderr).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>
#include <jansson.h>

#include "api/api.h"
#include "api/session.h"
#include "api/thread.h"
#include "api/turn.h"
#include "config/config.h"
#include "io/http.h"
#include "io/linebuf.h"
#include "io/log.h"
#include "io/outq.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"
#include "sandbox/cgroup/cgroup.h"
#include "fuzz_rpc.h"

#define FUZZ_MAX_LINE	 4096 /* the daemon's is 64 MiB; small here so lines overflow */
#define FUZZ_SETTLE_RUNS 64   /* loop iterations at the end, at most */

struct fuzz {
	struct ev_loop *loop;
	struct outq *q;
	struct linebuf *lb;
	struct rpc *rpc;
	struct session *session;
	struct http *http;
	int config_checked;
};

static const size_t fuzz_chunks[] = {4096, 13, 1, 300, 64};
static int fuzz_null = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Without Landlock, the fs/ requests that write are not dispatched (see fuzz_rpc_env.c). */
static int
fuzz_line_unsafe(const char *line, size_t len)
{
	static const char *const writes[] = {
		"fs/remove", "fs/writeFile", "fs/copy", "fs/createDirectory"};
	json_t *j;
	const char *m;
	int bad = 0;

	if (fuzz_env_confined() || (j = json_loadb(line, len, 0, NULL)) == NULL)
		return 0;
	if ((m = json_string_value(json_object_get(j, "method"))) != NULL)
		for (size_t i = 0; i < nitems(writes); i++)
			bad |= strcmp(m, writes[i]) == 0;
	json_decref(j);
	return bad;
}

/* daemon_line: dispatch; configWarning once after initialize (the daemon's idle watcher). */
static int
fuzz_line(void *arg, const char *line, size_t len, int oversized)
{
	struct fuzz *f = arg;

	if (!oversized && fuzz_line_unsafe(line, len))
		return 0;
	rpc_line(f->rpc, line, len, oversized);
	if (!f->config_checked && rpc_initialized(f->rpc)) {
		f->config_checked = 1;
		session_config_warnings(f->session);
	}
	return outq_congested(f->q);
}

/* The input with "@WS@" and "@HOME@" replaced by the scratch paths. */
static void
fuzz_expand(const char *in, size_t n, struct buf *out)
{
	const char *ws = fuzz_env_ws(), *home = fuzz_env_home();

	for (size_t i = 0; i < n; i++) {
		if (n - i >= 4 && memcmp(in + i, "@WS@", 4) == 0) {
			buf_adds(out, ws);
			i += 3;
		} else if (n - i >= 6 && memcmp(in + i, "@HOME@", 6) == 0) {
			buf_adds(out, home);
			i += 5;
		} else
			buf_addc(out, in[i]);
	}
}

/* Feed the stream in chunks; the loop turns once after each. */
static void
fuzz_feed(struct fuzz *f, const char *p, size_t n)
{
	size_t off = 0, k = 0, want, avail;
	char *space;

	while (off < n) {
		space = linebuf_space(f->lb, &avail);
		want = fuzz_chunks[k++ % nitems(fuzz_chunks)];
		if (want > avail)
			want = avail;
		if (want > n - off)
			want = n - off;
		memcpy(space, p + off, want);
		off += want;
		/* Congested (never on /dev/null, but as the daemon does): drain, then resume. */
		for (int r = linebuf_fill(f->lb, want, fuzz_line, f), i = 0; r != 0 && i < 8; i++) {
			ev_run(f->loop, EVRUN_NOWAIT);
			r = linebuf_resume(f->lb, fuzz_line, f);
		}
		ev_run(f->loop, EVRUN_NOWAIT);
	}
	linebuf_finish(f->lb, fuzz_line, f);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_env_init();
	log_init();
	/* FUZZ_RPC_SHOW=1: the daemon's answers on stderr, to check what a seed reaches. */
	if (getenv("FUZZ_RPC_SHOW") != NULL)
		fuzz_null = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	else
		fuzz_null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fuzz_null < 0)
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz f = {0};
	struct rpc_opts ro = {.max_inflight = 64};
	struct buf in;
	char *cause = NULL;

	fuzz_env_reset();
	buf_init(&in, 1 << 22);
	fuzz_expand((const char *)data, size, &in);
	f.loop = ev_default_loop(EVFLAG_AUTO);
	f.q = outq_new(f.loop, fuzz_null, 1 << 20, 256 << 10);
	f.lb = linebuf_new(FUZZ_MAX_LINE);
	if ((f.rpc = rpc_new(f.loop, f.q, &ro, api_methods, &cause)) == NULL)
		abort();
	f.session = session_new(f.loop, f.q, f.rpc);
	rpc_set_session(f.rpc, f.session);
	f.http = http_new(f.loop);
	http_set_default(f.http);

	fuzz_feed(&f, buf_str(&in), in.len);
	for (int i = 0; i < FUZZ_SETTLE_RUNS; i++) {
		if (rpc_inflight(f.rpc) == 0 && session_busy(f.session) == 0)
			break;
		ev_run(f.loop, EVRUN_NOWAIT);
		if (i == FUZZ_SETTLE_RUNS / 2)
			session_kill(f.session);
	}

	/* daemon_run's teardown, in its order. */
	thread_api_shutdown(f.session);
	turn_api_shutdown();
	session_free(f.session);
	rpc_free(f.rpc);
	outq_flush_wait(f.q, 1000);
	http_free(f.http);
	outq_free(f.q);
	linebuf_free(f.lb);
	ev_loop_destroy(f.loop);
	cgroup_cleanup();
	config_cache_free();
	fuzz_env_reap();
	buf_free(&in);
	return 0;
}
