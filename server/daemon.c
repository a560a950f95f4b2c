/*
 * The stdio daemon. At start-up the protocol's fds are moved to private close-on-exec
 * descriptors: fd 0 becomes /dev/null and fd 1 points at stderr, so no stray write, and no
 * child, can ever touch the protocol stream. Input is read until EAGAIN (bounded per callback)
 * and every complete line is dispatched; reading pauses while the output queue is congested
 * and resumes when it drains. Shutdown (stdin EOF, SIGTERM, SIGINT, SIGHUP, or the client
 * closing our stdout): stop reading, kill every child process group (after a short grace at
 * stdin EOF), give in-flight requests a bounded grace period to be answered, flush the
 * queue, exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ev.h>

#include "account/account.h"
#include "sandbox/cgroup/cgroup.h"
#include "sandbox/spawn/spawn.h"
#include "config/config.h"
#include "exec/exec.h"
#include "daemon.h"
#include "hooks/hooks_turn.h"
#include "api/api.h"
#include "api/session.h"
#include "api/thread.h"
#include "api/turn.h"
#include "io/http.h"
#include "io/linebuf.h"
#include "io/log.h"
#include "io/outq.h"
#include "rpc/rpc.h"
#include "protocol/xmalloc.h"

#define DAEMON_PIPE_SIZE     (1024 * 1024) /* our stdout pipe, when we may enlarge it */
#define DAEMON_READ_BUDGET   (1024 * 1024) /* bytes read per callback before yielding */
#define DAEMON_EOF_GRACE     1.0	   /* seconds running commands get after stdin EOF */
#define DAEMON_FLUSH_IDLE_MS 10000	   /* at exit, give up on a client that reads nothing */
#define DAEMON_CGROUP_QUIET  0.005	   /* seconds without a request before the cgroups' probe */

struct daemon {
	struct ev_loop *loop;
	int in_fd, out_fd;
	int in_flags, out_flags; /* to restore the shared file descriptions at exit */
	ev_io in_io;
	ev_signal sig[3];
	ev_check check;
	ev_timer deadline;
	ev_timer eof_grace; /* end of input: running commands may still finish */
	struct outq *q;
	struct linebuf *lb;
	struct rpc *rpc;
	struct session *session; /* every area's state of this connection */
	struct http *http;	 /* model requests; curl starts on first use */
	ev_idle config_idle;	 /* configWarning, once, after the initialize answer went out */
	ev_timer cgroup_probe;	 /* the cgroups' sweep and probe, once the client pauses */
	ev_tstamp last_line;	 /* loop time of the last line read */
	int config_checked;
	double grace;
	int paused;
	int closing;
	int killed; /* every child was told to die; the deadline runs */
};

static void daemon_in_cb(struct ev_loop *, ev_io *, int);
static void daemon_signal_cb(struct ev_loop *, ev_signal *, int);
static void daemon_check_cb(struct ev_loop *, ev_check *, int);
static void daemon_deadline_cb(struct ev_loop *, ev_timer *, int);
static void daemon_eof_grace_cb(struct ev_loop *, ev_timer *, int);
static void daemon_maybe_done(struct daemon *d);

/*
 * Each process costs up to three fds: the daemon's soft limit goes up to the hard one
 * (EXEC_MAX_PROCS of them fit). Commands get the soft limit the daemon was started with
 * (spawn_set_nofile): some programs walk every possible fd at start, and a command should see
 * the limits its user set, not ours.
 */
static void
daemon_raise_nofile(void)
{
	struct rlimit rl;
	rlim_t soft;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		soft = rl.rlim_cur;
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			log_warn("cannot raise the fd limit: %s", strerror(errno));
		else
			spawn_set_nofile(soft);
	}
}

/* Move the protocol fds out of 0 and 1. */
static int
daemon_stdio(struct daemon *d)
{
	struct stat st;
	int null;

	d->in_fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	d->out_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (d->in_fd < 0 || d->out_fd < 0) {
		log_error("cannot duplicate stdin/stdout: %s", strerror(errno));
		return -1;
	}
	if ((null = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0 || dup2(null, STDIN_FILENO) < 0 ||
		dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		log_error("cannot redirect stdin/stdout: %s", strerror(errno));
		return -1;
	}
	close(null);
	/* A bigger pipe to the client means fewer, larger writes when streaming. */
	if (fstat(d->out_fd, &st) == 0 && S_ISFIFO(st.st_mode))
		fcntl(d->out_fd, F_SETPIPE_SZ, DAEMON_PIPE_SIZE);
	d->in_flags = fcntl(d->in_fd, F_GETFL);
	d->out_flags = fcntl(d->out_fd, F_GETFL);
	fcntl(d->in_fd, F_SETFL, d->in_flags | O_NONBLOCK);
	fcntl(d->out_fd, F_SETFL, d->out_flags | O_NONBLOCK);
	return 0;
}

/* Kill every child now and give the last answers a bounded time to go out. */
static void
daemon_kill(struct daemon *d)
{
	if (d->killed)
		return;
	d->killed = 1;
	ev_timer_stop(d->loop, &d->eof_grace);
	session_kill(d->session);
	ev_timer_set(&d->deadline, d->grace, 0.);
	ev_timer_start(d->loop, &d->deadline);
}

/*
 * Begin shutdown: stop reading, kill children, wait (bounded) for the last answers. At the
 * end of input (a file of requests piped in), running commands first get DAEMON_EOF_GRACE
 * to finish on their own, so `printf ... | app-server` gets their real answers; a signal or
 * a client that closed our output kills at once.
 */
static void
daemon_shutdown(struct daemon *d, const char *why, int grace)
{
	if (d->closing) {
		if (!grace)
			daemon_kill(d);
		return;
	}
	d->closing = 1;
	log_info("shutting down: %s", why);
	ev_io_stop(d->loop, &d->in_io);
	ev_check_start(d->loop, &d->check);
	if (grace && session_busy(d->session) > 0) {
		ev_timer_set(&d->eof_grace, DAEMON_EOF_GRACE, 0.);
		ev_timer_start(d->loop, &d->eof_grace);
	} else
		daemon_kill(d);
	daemon_maybe_done(d);
}

/* The end-of-input grace is over: what still runs is killed. */
static void
daemon_eof_grace_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon *d = container_of(w, struct daemon, eof_grace);

	log_info("commands still running %.1f s after the end of input: killing them",
		DAEMON_EOF_GRACE);
	daemon_kill(d);
}

/* linebuf callback: dispatch, and stop scanning while the output queue is congested. */
static int
daemon_line(void *arg, const char *line, size_t len, int oversized)
{
	struct daemon *d = arg;

	rpc_line(d->rpc, line, len, oversized);
	d->last_line = ev_now(d->loop); /* a store: the probe's timer looks at it */
	if (!d->config_checked && rpc_initialized(d->rpc)) {
		d->config_checked = 1;
		ev_idle_start(d->loop, &d->config_idle);
	}
	return outq_congested(d->q) || d->closing;
}

static void
daemon_pause(struct daemon *d)
{
	d->paused = 1;
	ev_io_stop(d->loop, &d->in_io);
}

static void
daemon_in_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct daemon *d = container_of(w, struct daemon, in_io);
	size_t budget = DAEMON_READ_BUDGET, avail;
	ssize_t n;
	char *p;

	while (budget > 0 && !d->closing) {
		p = linebuf_space(d->lb, &avail);
		n = read(d->in_fd, p, avail);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				daemon_shutdown(d, strerror(errno), 0);
			return;
		}
		if (n == 0) {
			linebuf_finish(d->lb, daemon_line, d);
			daemon_shutdown(d, "end of input", 1);
			return;
		}
		budget -= (size_t)n < budget ? (size_t)n : budget;
		if (linebuf_fill(d->lb, (size_t)n, daemon_line, d) != 0) {
			if (!d->closing)
				daemon_pause(d);
			return;
		}
	}
}

/* The output queue drained: dispatch the lines held back, then read again. */
static void
daemon_drain_cb(void *arg)
{
	struct daemon *d = arg;

	session_resume(d->session);
	http_resume(d->http);
	if (!d->paused || d->closing)
		return;
	if (linebuf_resume(d->lb, daemon_line, d) != 0)
		return;
	d->paused = 0;
	ev_io_start(d->loop, &d->in_io);
}

/* The http congestion predicate: the output queue is above its high watermark. */
static int
daemon_congested(void *arg)
{
	struct daemon *d = arg;

	return outq_congested(d->q);
}

/*
 * The cgroups' set-up (cgroup_support: what daemons killed with -9 left running is killed, our
 * directory made, a child cloned into it as the probe) is 0.7 ms of cgroupfs work and a fork:
 * it waits until the client has sent nothing for DAEMON_CGROUP_QUIET, out of a client's
 * start-up sequence. A command started before then probes at its spawn. Each line only
 * stores its loop time (pipelined requests pay no timer update); the timer re-arms itself
 * for what is left of the pause.
 */
static void
daemon_cgroup_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct daemon *d = container_of(w, struct daemon, cgroup_probe);
	ev_tstamp quiet = ev_now(loop) - d->last_line;

	if (quiet < DAEMON_CGROUP_QUIET) { /* a line came meanwhile: wait on */
		w->repeat = DAEMON_CGROUP_QUIET - quiet;
		ev_timer_again(loop, w);
		return;
	}
	ev_ref(loop); /* it was unref'd: it keeps no loop running */
	ev_timer_stop(loop, w);
	(void)cgroup_support();
}

/* After initialize was answered: read the configuration, report its problems. */
static void
daemon_config_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct daemon *d = container_of(w, struct daemon, config_idle);

	ev_idle_stop(loop, w);
	if (!d->closing)
		session_config_warnings(d->session);
}

static void
daemon_broken_cb(void *arg)
{
	daemon_shutdown(arg, "the client closed our output", 0);
}

static void
daemon_signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct daemon *d = w->data;

	daemon_shutdown(d, strsignal(w->signum), 0);
}

/* While closing: leave the loop once nothing is pending. */
static void
daemon_maybe_done(struct daemon *d)
{
	if (rpc_inflight(d->rpc) == 0 && session_busy(d->session) == 0 && !exec_orphans_live())
		ev_break(d->loop, EVBREAK_ALL);
}

/* After each loop iteration while closing (answers come from child and fd events). */
static void
daemon_check_cb(struct ev_loop *loop, ev_check *w, int revents)
{
	daemon_maybe_done(container_of(w, struct daemon, check));
}

static void
daemon_deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	log_warn("shutdown grace period over; answering what is left with errors");
	ev_break(loop, EVBREAK_ALL);
}

static void
daemon_orphans_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
}

/*
 * Sandboxes freed with their threads above (a shell snapshot still setting up) tear down in
 * their inits, which remove their placeholders from the workspace: the loop runs on for them,
 * within the grace period, so that nothing of theirs stays on the host once we are gone.
 */
void
daemon_wait_orphans(struct ev_loop *loop, double grace)
{
	ev_timer t;
	ev_tstamp end;

	if (!exec_orphans_live() && !hooks_detached_live()) /* SessionEnd hooks too */
		return;
	ev_now_update(loop);
	end = ev_now(loop) + grace;
	ev_timer_init(&t, daemon_orphans_timer_cb, grace, 0.);
	ev_timer_start(loop, &t);
	while ((exec_orphans_live() || hooks_detached_live()) && ev_now(loop) < end)
		ev_run(loop, EVRUN_ONCE);
	ev_timer_stop(loop, &t);
}

/* Serve JSON-RPC on stdin/stdout until EOF or a signal; returns the exit status. */
int
daemon_run(const struct daemon_opts *opts)
{
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	struct daemon d = {.in_fd = -1, .out_fd = -1, .grace = opts->grace};
	struct rpc_opts ro = {.max_inflight = opts->max_inflight};
	char *cause = NULL;
	int status = 1;

	signal(SIGPIPE, SIG_IGN);
	/* Orphaned grandchildren of our commands become ours, so libev reaps them too. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	daemon_raise_nofile();
	d.loop = ev_default_loop(EVFLAG_AUTO);
	/* Not at the first command: what daemons killed with -9 left running dies now. */
	ev_timer_init(&d.cgroup_probe, daemon_cgroup_cb, DAEMON_CGROUP_QUIET, DAEMON_CGROUP_QUIET);
	d.last_line = ev_now(d.loop);
	ev_timer_start(d.loop, &d.cgroup_probe);
	ev_unref(d.loop);
	if (opts->listen != NULL) {
		status = daemon_ws_run(d.loop, opts);
		goto out;
	}
	if (daemon_stdio(&d) != 0)
		goto out;
	d.q = outq_new(d.loop, d.out_fd, opts->out_high, opts->out_low);
	d.lb = linebuf_new(opts->max_line);
	if ((d.rpc = rpc_new(d.loop, d.q, &ro, api_methods, &cause)) == NULL) {
		log_error("cannot compile the protocol schema: %s", cause);
		goto out;
	}
	d.session = session_new(d.loop, d.q, d.rpc);
	rpc_set_session(d.rpc, d.session);
	outq_set_drain_cb(d.q, daemon_drain_cb, &d);
	outq_set_broken_cb(d.q, daemon_broken_cb, &d);
	ev_io_init(&d.in_io, daemon_in_cb, d.in_fd, EV_READ);
	ev_io_start(d.loop, &d.in_io);
	for (size_t i = 0; i < nitems(sigs); i++) {
		ev_signal_init(&d.sig[i], daemon_signal_cb, sigs[i]);
		d.sig[i].data = &d;
		ev_signal_start(d.loop, &d.sig[i]);
		ev_unref(d.loop);
	}
	ev_check_init(&d.check, daemon_check_cb);
	ev_idle_init(&d.config_idle, daemon_config_cb);
	d.http = http_new(d.loop);
	http_set_congested(d.http, daemon_congested, &d);
	http_set_default(d.http);
	account_init(d.loop, d.http);
	ev_init(&d.deadline, daemon_deadline_cb);
	ev_init(&d.eof_grace, daemon_eof_grace_cb);
	ev_run(d.loop, 0);

	/* Nothing may call back into what is freed below while the last answers drain. */
	outq_set_drain_cb(d.q, NULL, NULL);
	outq_set_broken_cb(d.q, NULL, NULL);
	/* Threads unload (a running turn reports its end) while the rpc layer still stands. */
	thread_api_shutdown(d.session);
	turn_api_shutdown();
	session_free(d.session);
	d.session = NULL;
	rpc_free(d.rpc);
	d.rpc = NULL;
	ev_check_stop(d.loop, &d.check); /* it asks the rpc layer, which is gone */
	daemon_wait_orphans(d.loop, d.grace);
	if (outq_flush_wait(d.q, DAEMON_FLUSH_IDLE_MS) != 0 && !outq_broken(d.q))
		log_warn("the client stopped reading: exiting without the last output");
	status = 0;
out:
	free(cause);
	for (size_t i = 0; i < nitems(sigs); i++) {
		if (ev_is_active(&d.sig[i])) {
			ev_ref(d.loop);
			ev_signal_stop(d.loop, &d.sig[i]);
		}
	}
	ev_check_stop(d.loop, &d.check);
	ev_timer_stop(d.loop, &d.deadline);
	ev_timer_stop(d.loop, &d.eof_grace);
	if (ev_is_active(&d.cgroup_probe)) {
		ev_ref(d.loop);
		ev_timer_stop(d.loop, &d.cgroup_probe);
	}
	ev_io_stop(d.loop, &d.in_io);
	rpc_free(d.rpc);
	ev_idle_stop(d.loop, &d.config_idle);
	account_shutdown();
	http_free(d.http);
	outq_free(d.q);
	linebuf_free(d.lb);
	if (d.in_fd >= 0) {
		fcntl(d.in_fd, F_SETFL, d.in_flags);
		close(d.in_fd);
	}
	if (d.out_fd >= 0) {
		fcntl(d.out_fd, F_SETFL, d.out_flags);
		close(d.out_fd);
	}
	ev_loop_destroy(d.loop);
	cgroup_cleanup();
	config_cache_free();
	return status;
}
