/*
 * The daemon behind `--listen ws://IP:PORT` or `--listen unix://PATH`: a listener on the loop
 * and, per WebSocket connection, what stdio has once: a JSON-RPC connection (its own handshake,
 * opt-outs, in-flight limit, server requests) and a session (its command/exec processes, fs
 * watches, ...). When a connection ends its processes are killed and the threads reporting
 * to it unload, as at stdio EOF; its last answers are discarded and it is freed once nothing
 * of it runs (bounded by the grace). Nothing is written to stdout in this mode: fd 1 points
 * at stderr and fd 0 at /dev/null. SIGTERM/SIGINT/SIGHUP: stop listening, close every
 * connection with 1001, wait (bounded) for what runs, exit 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include <ev.h>

#include "api/api.h"
#include "api/session.h"
#include "api/thread.h"
#include "api/turn.h"
#include "config/digest.h"
#include "daemon.h"
#include "io/http.h"
#include "io/log.h"
#include "io/outq.h"
#include "protocol/xmalloc.h"
#include "rpc/rpc.h"
#include "transport/ws_conn.h"
#include "transport/ws_listen.h"

#define WSD_REAP_EVERY	   0.05 /* seconds between checks of a closing connection */
#define WSD_HANDSHAKE_SECS 10.0 /* the whole upgrade request (slowloris) */
#define WSD_OUT_LIMIT	   (256u << 20)

struct wsd_client {
	LIST_ENTRY(wsd_client) entry;
	struct wsd *d;
	struct ws_conn *c;
	struct rpc *rpc;
	struct session *s;
	ev_idle config_idle;
	ev_timer reap;
	double reap_until;
	int config_checked, closing;
};

struct wsd {
	struct ev_loop *loop;
	struct ws_listen *l;
	struct http *http;
	struct rpc_opts ro;
	double grace;
	int closing;
	ev_signal sig[3];
	ev_timer deadline;
	LIST_HEAD(, wsd_client) clients;
};

static void wsd_config_cb(struct ev_loop *, ev_idle *, int);
static void wsd_reap_cb(struct ev_loop *, ev_timer *, int);
static void wsd_signal_cb(struct ev_loop *, ev_signal *, int);
static void wsd_deadline_cb(struct ev_loop *, ev_timer *, int);

/* The output queue drained below its low watermark: everything paused for it resumes. */
static void
wsd_drain_cb(void *arg)
{
	struct wsd_client *cl = arg;

	if (cl->closing)
		return;
	session_resume(cl->s);
	http_resume(cl->d->http);
	ws_conn_resume(cl->c);
}

static void *
wsd_open(void *lctx, struct ws_conn *c)
{
	struct wsd *d = lctx;
	struct wsd_client *cl = xcalloc(1, sizeof *cl);
	char *cause = NULL;

	cl->d = d;
	cl->c = c;
	/* rpc_new fails only when the validator cannot be made, which it always can. */
	if ((cl->rpc = rpc_new(d->loop, ws_conn_outq(c), &d->ro, api_methods, &cause)) == NULL) {
		log_error("ws: %s", cause);
		abort();
	}
	cl->s = session_new(d->loop, ws_conn_outq(c), cl->rpc);
	cl->s->engine_q = NULL; /* shared threads never pause for one connection */
	rpc_set_session(cl->rpc, cl->s);
	outq_set_drain_cb(ws_conn_outq(c), wsd_drain_cb, cl);
	ev_idle_init(&cl->config_idle, wsd_config_cb);
	ev_timer_init(&cl->reap, wsd_reap_cb, WSD_REAP_EVERY, WSD_REAP_EVERY);
	LIST_INSERT_HEAD(&d->clients, cl, entry);
	log_info("ws %s: connected", ws_conn_name(c));
	return cl;
}

static void
wsd_message(void *arg, const char *text, size_t len)
{
	struct wsd_client *cl = arg;

	if (cl->closing)
		return;
	rpc_line(cl->rpc, text, len, 0);
	if (!cl->config_checked && rpc_initialized(cl->rpc)) {
		cl->config_checked = 1;
		ev_idle_start(cl->d->loop, &cl->config_idle);
	}
}

static void
wsd_config_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct wsd_client *cl = container_of(w, struct wsd_client, config_idle);

	ev_idle_stop(loop, w);
	if (!cl->closing)
		session_config_warnings(cl->s);
}

/* While shutting down: leave the loop once every connection is freed. */
static void
wsd_maybe_done(struct wsd *d)
{
	if (d->closing && LIST_EMPTY(&d->clients))
		ev_break(d->loop, EVBREAK_ALL);
}

/* Free a client whose connection is over (and whose work ended, or the grace did). */
static void
wsd_client_free(struct wsd_client *cl)
{
	struct wsd *d = cl->d;

	LIST_REMOVE(cl, entry);
	ev_idle_stop(cl->d->loop, &cl->config_idle);
	ev_timer_stop(cl->d->loop, &cl->reap);
	thread_api_session_end(cl->s);
	session_free(cl->s);
	rpc_free(cl->rpc); /* answers what is left, into a queue nobody reads */
	ws_conn_free(cl->c);
	free(cl);
	wsd_maybe_done(d);
}

/* The connection ended: kill what it runs, let the last answers settle, then free it. */
static void
wsd_closed(void *arg, const char *why)
{
	struct wsd_client *cl = arg;

	log_info("ws %s: disconnected (%s)", ws_conn_name(cl->c), why);
	cl->closing = 1;
	session_kill(cl->s);
	thread_api_session_end(cl->s);
	cl->reap_until = ev_now(cl->d->loop) + cl->d->grace;
	ev_timer_start(cl->d->loop, &cl->reap);
}

static void
wsd_reap_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct wsd_client *cl = container_of(w, struct wsd_client, reap);

	if (rpc_inflight(cl->rpc) == 0 && session_busy(cl->s) == 0)
		wsd_client_free(cl);
	else if (ev_now(loop) >= cl->reap_until) {
		log_warn("ws %s: work still running %.1f s after the disconnect: dropped",
			ws_conn_name(cl->c), cl->d->grace);
		wsd_client_free(cl);
	}
}

static const struct ws_conn_ops wsd_ops = {
	.open = wsd_open,
	.message = wsd_message,
	.closed = wsd_closed,
};

/* Stop listening and close every connection; the loop ends once they are all freed. */
static void
wsd_shutdown(struct wsd *d, const char *why)
{
	struct wsd_client *cl;

	if (d->closing)
		return;
	d->closing = 1;
	log_info("shutting down: %s", why);
	ws_listen_free(d->l);
	d->l = NULL;
	LIST_FOREACH(cl, &d->clients, entry)
	{
		if (!cl->closing) {
			session_kill(cl->s);
			ws_conn_close(cl->c, 1001, "server shutting down");
		}
	}
	ev_timer_set(&d->deadline, d->grace + 1.0, 0.);
	ev_timer_start(d->loop, &d->deadline);
	wsd_maybe_done(d);
}

static void
wsd_signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	wsd_shutdown(w->data, strsignal(w->signum));
}

static void
wsd_deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	log_warn("shutdown grace period over; dropping the connections left");
	ev_break(loop, EVBREAK_ALL);
}

/* What upstream prints on stderr once listening. */
static void
wsd_banner(const char *url, int loopback)
{
	if (strncmp(url, "ws://", 5) == 0)
		fprintf(stderr,
			"codex app-server (WebSockets)\n  listening on: %s\n  readyz: http://%s/readyz\n"
			"  healthz: http://%s/healthz\n  note: %s\n",
			url, url + 5, url + 5,
			loopback
				? "binds localhost only (use SSH port-forwarding for remote access)"
				: "websocket auth is required for non-localhost listeners");
	else
		fprintf(stderr,
			"codex app-server (WebSockets over a Unix socket)\n  listening on: %s\n",
			url);
	fflush(stderr);
}

int
daemon_ws_run(struct ev_loop *loop, const struct daemon_opts *opts)
{
	static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
	struct ws_conn_limits lim = {
		.max_message = opts->max_line,
		.out_high = opts->out_high,
		.out_low = opts->out_low,
		.out_limit = WSD_OUT_LIMIT,
		.handshake_timeout = WSD_HANDSHAKE_SECS,
		.sha1 = digest_sha1,
		.auth = opts->ws_auth,
	};
	struct wsd d = {.loop = loop, .grace = opts->grace};
	struct wsd_client *cl;
	const char *v;
	char *cause = NULL;
	int null, status = 1;

	d.ro.max_inflight = opts->max_inflight;
	LIST_INIT(&d.clients);
	/* test knobs: a small queue bound, a short upgrade deadline */
	if ((v = getenv("APP_SERVER_WS_QUEUE_LIMIT")) != NULL && strtoull(v, NULL, 10) > 0)
		lim.out_limit = (size_t)strtoull(v, NULL, 10);
	if ((v = getenv("APP_SERVER_WS_HANDSHAKE_SECS")) != NULL && strtod(v, NULL) > 0)
		lim.handshake_timeout = strtod(v, NULL);
	/* No stray write reaches the terminal's stdout, no child reads our stdin. */
	if ((null = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0) {
		dup2(null, STDIN_FILENO);
		close(null);
	}
	dup2(STDERR_FILENO, STDOUT_FILENO);
	if ((d.l = ws_listen_new(loop, opts->listen, &lim, &wsd_ops, &d, &cause)) == NULL) {
		fprintf(stderr, "Error: %s\n", cause);
		goto out;
	}
	{
		int loopback = 1;
		char *why = NULL;

		(void)ws_listen_check(opts->listen, &loopback, &why);
		free(why);
		wsd_banner(ws_listen_url(d.l), loopback);
	}
	for (size_t i = 0; i < nitems(sigs); i++) {
		ev_signal_init(&d.sig[i], wsd_signal_cb, sigs[i]);
		d.sig[i].data = &d;
		ev_signal_start(loop, &d.sig[i]);
		ev_unref(loop);
	}
	ev_init(&d.deadline, wsd_deadline_cb);
	d.http = http_new(loop);
	http_set_default(d.http);
	ev_run(loop, 0);

	while ((cl = LIST_FIRST(&d.clients)) != NULL)
		wsd_client_free(cl);
	ws_conn_reap_unopened();
	thread_api_shutdown(NULL);
	turn_api_shutdown();
	/* as on stdio: the sandboxes freed above tear down before we go (their placeholders) */
	daemon_wait_orphans(loop, d.grace);
	status = 0;
out:
	for (size_t i = 0; i < nitems(sigs); i++) {
		if (ev_is_active(&d.sig[i])) {
			ev_ref(loop);
			ev_signal_stop(loop, &d.sig[i]);
		}
	}
	ev_timer_stop(loop, &d.deadline);
	ws_listen_free(d.l);
	http_free(d.http);
	free(cause);
	return status;
}
