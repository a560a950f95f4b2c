/*
 * libcurl multi on libev (http.h). The shape of curl's evhiperfifo/multi-event examples with
 * their pitfalls avoided:
 *   - one ev_timer, replaced (never added to) by the timer function, in seconds as a double;
 *     curl is never called from the timer function itself;
 *   - the socket function always stops, sets and restarts its ev_io (a recycled fd number is
 *     re-registered), and also serves sockets of handles that are not ours;
 *   - curl_multi_info_read is drained after every socket action, and the message is copied
 *     before the handle is removed;
 *   - nothing calls back into the multi handle from inside a curl callback: a transfer
 *     cancelled there is parked on `doomed` and released once curl has returned (in_curl).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>

#include <curl/curl.h>

#include "http.h"
#include "log.h"
#include "protocol/xmalloc.h"

#define HTTP_PAUSED    0x01 /* refused bytes with CURL_WRITEFUNC_PAUSE */
#define HTTP_CANCELLED 0x02 /* the owner let go; release, never call back */
#define HTTP_DONE      0x04 /* in its done callback */

struct http_req {
	TAILQ_ENTRY(http_req) entry;
	struct http *h;
	CURL *easy;
	struct curl_slist *headers;
	char *body;
	char *url;
	char errbuf[CURL_ERROR_SIZE];
	ev_timer idle;
	double idle_s;
	struct http_cbs cb;
	void *arg;
	unsigned flags;
};

TAILQ_HEAD(http_reqs, http_req);

struct http {
	struct ev_loop *loop;
	CURLM *multi;
	ev_timer timer; /* curl's one timeout */
	int running;
	int in_curl; /* depth of calls into curl that may run our callbacks */
	struct http_reqs reqs;
	struct http_reqs doomed;
	size_t nactive, npaused;
	int (*congested)(void *);
	void *congested_arg;
};

/* One socket curl asked us to watch (curl_multi_assign). */
struct http_sock {
	ev_io io;
	struct http *h;
};

/*
 * libcurl, loaded on the first request: linking it would map curl and its ~30 libraries
 * (TLS, HTTP/2, LDAP, Kerberos, ...) into every daemon at start-up, about 3 ms and 6 MiB,
 * although most sessions never talk to a model.
 */
static struct {
	void *lib;
	CURLcode (*global_init)(long);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
	CURLMcode (*multi_assign)(CURLM *, curl_socket_t, void *);
	CURLMcode (*multi_socket_action)(CURLM *, curl_socket_t, int, int *);
	CURLMsg *(*multi_info_read)(CURLM *, int *);
	CURLMcode (*multi_add_handle)(CURLM *, CURL *);
	CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
	CURLMcode (*multi_cleanup)(CURLM *);
	const char *(*multi_strerror)(CURLMcode);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_cleanup)(CURL *);
	CURLcode (*easy_pause)(CURL *, int);
	const char *(*easy_strerror)(CURLcode);
	CURLHcode (*easy_header)(
		CURL *, const char *, size_t, unsigned int, int, struct curl_header **);
	struct curl_header *(*easy_nextheader)(CURL *, unsigned int, int, struct curl_header *);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
} cu;

/* The daemon's client (http_default). */
static struct http *http_the_default;

static void http_io_cb(struct ev_loop *, ev_io *, int);
static void http_timer_cb(struct ev_loop *, ev_timer *, int);
static void http_idle_cb(struct ev_loop *, ev_timer *, int);
static void http_check_done(struct http *h);

/* Resolve one libcurl function; -1 when missing. */
static int
http_sym(void *fnp, const char *name)
{
	void *f = dlsym(cu.lib, name);

	memcpy(fnp, &f, sizeof f);
	return f != NULL ? 0 : -1;
}

/*
 * Load libcurl and call curl_global_init, once, before any curl thread can exist (the daemon
 * has no threads of its own).
 */
static int
http_curl_load(char **cause)
{
	static const char *const libs[] = {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so"};
	int bad = 0;

	if (cu.lib != NULL)
		return 0;
	for (size_t i = 0; i < nitems(libs) && cu.lib == NULL; i++)
		cu.lib = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
	if (cu.lib == NULL) {
		*cause = xasprintf("cannot load libcurl: %s", dlerror());
		return -1;
	}
	bad |= http_sym(&cu.global_init, "curl_global_init");
	bad |= http_sym(&cu.multi_init, "curl_multi_init");
	bad |= http_sym(&cu.multi_setopt, "curl_multi_setopt");
	bad |= http_sym(&cu.multi_assign, "curl_multi_assign");
	bad |= http_sym(&cu.multi_socket_action, "curl_multi_socket_action");
	bad |= http_sym(&cu.multi_info_read, "curl_multi_info_read");
	bad |= http_sym(&cu.multi_add_handle, "curl_multi_add_handle");
	bad |= http_sym(&cu.multi_remove_handle, "curl_multi_remove_handle");
	bad |= http_sym(&cu.multi_cleanup, "curl_multi_cleanup");
	bad |= http_sym(&cu.multi_strerror, "curl_multi_strerror");
	bad |= http_sym(&cu.easy_init, "curl_easy_init");
	bad |= http_sym(&cu.easy_setopt, "curl_easy_setopt");
	bad |= http_sym(&cu.easy_getinfo, "curl_easy_getinfo");
	bad |= http_sym(&cu.easy_cleanup, "curl_easy_cleanup");
	bad |= http_sym(&cu.easy_pause, "curl_easy_pause");
	bad |= http_sym(&cu.easy_strerror, "curl_easy_strerror");
	bad |= http_sym(&cu.slist_append, "curl_slist_append");
	bad |= http_sym(&cu.slist_free_all, "curl_slist_free_all");
	http_sym(&cu.easy_header, "curl_easy_header"); /* 7.83 and later; optional */
	http_sym(&cu.easy_nextheader, "curl_easy_nextheader");
	if (bad || cu.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		*cause =
			xstrdup("libcurl is unusable (missing functions or initialisation failed)");
		dlclose(cu.lib);
		memset(&cu, 0, sizeof cu);
		return -1;
	}
	return 0;
}

/* Release a transfer's resources; curl must not be running (in_curl == 0). */
static void
http_release(struct http_req *r)
{
	struct http *h = r->h;

	ev_timer_stop(h->loop, &r->idle);
	if (r->flags & HTTP_PAUSED)
		h->npaused--;
	if (r->easy != NULL) {
		cu.multi_remove_handle(h->multi, r->easy);
		cu.easy_cleanup(r->easy);
	}
	cu.slist_free_all(r->headers);
	free(r->body);
	free(r->url);
	free(r);
}

/* Release what was cancelled while curl was running. */
static void
http_reap(struct http *h)
{
	struct http_req *r;

	if (h->in_curl > 0)
		return;
	while ((r = TAILQ_FIRST(&h->doomed)) != NULL) {
		TAILQ_REMOVE(&h->doomed, r, entry);
		http_release(r);
	}
}

/* The server's retry hint: retry-after-ms, else Retry-After in seconds; -1 when none. */
static long
http_retry_after(CURL *easy)
{
	struct curl_header *hd;
	char *end;
	double v;

	if (cu.easy_header == NULL)
		return -1;
	if (cu.easy_header(easy, "retry-after-ms", 0, CURLH_HEADER, -1, &hd) == CURLHE_OK) {
		v = strtod(hd->value, &end);
		if (end != hd->value && v >= 0)
			return (long)v;
	}
	if (cu.easy_header(easy, "retry-after", 0, CURLH_HEADER, -1, &hd) == CURLHE_OK) {
		v = strtod(hd->value, &end);
		if (end != hd->value && v >= 0)
			return (long)(v * 1000);
	}
	return -1;
}

/* The reason phrase of a status, as upstream's messages show it. */
const char *
http_reason(long status)
{
	static const struct {
		long code;
		const char *text;
	} reasons[] = {{400, "Bad Request"}, {401, "Unauthorized"}, {402, "Payment Required"},
		{403, "Forbidden"}, {404, "Not Found"}, {405, "Method Not Allowed"},
		{408, "Request Timeout"}, {409, "Conflict"}, {413, "Payload Too Large"},
		{422, "Unprocessable Entity"}, {429, "Too Many Requests"},
		{500, "Internal Server Error"}, {502, "Bad Gateway"}, {503, "Service Unavailable"},
		{504, "Gateway Timeout"}};

	for (size_t i = 0; i < nitems(reasons); i++)
		if (reasons[i].code == status)
			return reasons[i].text;
	return "";
}

int
http_req_headers(struct http_req *r, const char *prefix,
	void (*fn)(void *arg, const char *name, const char *value), void *arg)
{
	struct curl_header *hd = NULL;
	size_t n = strlen(prefix);

	if (cu.easy_nextheader == NULL)
		return -1;
	/* -1: the last request of the transfer (the final response, after redirects) */
	while ((hd = cu.easy_nextheader(r->easy, CURLH_HEADER, -1, hd)) != NULL)
		if (strncasecmp(hd->name, prefix, n) == 0)
			fn(arg, hd->name, hd->value);
	return 0;
}

/* End a transfer: one done callback (unless cancelled), then release. */
static void
http_finish(struct http_req *r, int code, const char *why, int idle)
{
	struct http *h = r->h;
	struct http_result res = {.curl_code = code, .idle_timeout = idle, .url = r->url};
	curl_off_t connect_us = 0;

	TAILQ_REMOVE(&h->reqs, r, entry);
	h->nactive--;
	cu.easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &res.status);
	cu.easy_getinfo(r->easy, CURLINFO_CONNECT_TIME_T, &connect_us);
	res.timed_out = code == CURLE_OPERATION_TIMEDOUT && !idle;
	res.connect_failed = res.status == 0 && connect_us == 0 &&
		(code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST ||
			code == CURLE_COULDNT_RESOLVE_PROXY || code == CURLE_OPERATION_TIMEDOUT ||
			code == CURLE_SSL_CONNECT_ERROR);
	res.aborted = code == CURLE_WRITE_ERROR;
	res.retry_after_ms = res.status != 0 ? http_retry_after(r->easy) : -1;
	if (code != CURLE_OK)
		res.error = why != NULL	       ? why
			: r->errbuf[0] != '\0' ? r->errbuf
					       : cu.easy_strerror((CURLcode)code);
	if (!(r->flags & HTTP_CANCELLED)) {
		r->flags |= HTTP_DONE;
		r->cb.done(r->arg, &res);
	}
	http_release(r);
}

/* Fail every transfer: after an error the multi handle is usable again only once empty. */
static void
http_fail_all(struct http *h, const char *why)
{
	struct http_req *r;

	while ((r = TAILQ_FIRST(&h->reqs)) != NULL)
		http_finish(r, CURLE_SEND_ERROR, why, 0);
	http_reap(h);
}

/* Let curl act on a socket (or its timeout), then collect what finished. */
static void
http_action(struct http *h, curl_socket_t s, int mask)
{
	CURLMcode rc;

	h->in_curl++;
	rc = cu.multi_socket_action(h->multi, s, mask, &h->running);
	h->in_curl--;
	http_reap(h);
	if (rc != CURLM_OK) {
		log_warn("curl_multi_socket_action: %s", cu.multi_strerror(rc));
		http_fail_all(h, cu.multi_strerror(rc));
		return;
	}
	http_check_done(h);
}

/* Drain curl's messages: each finished transfer gets its done callback. */
static void
http_check_done(struct http *h)
{
	struct http_req *r;
	CURLMsg *msg;
	CURLcode code;
	CURL *easy;
	int left;

	while ((msg = cu.multi_info_read(h->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		easy = msg->easy_handle; /* copied: the message dies with remove_handle */
		code = msg->data.result;
		r = NULL;
		cu.easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&r);
		if (r == NULL || (r->flags & HTTP_CANCELLED))
			continue; /* parked on doomed; released by http_reap */
		http_finish(r, code, NULL, 0);
	}
}

/* A watched socket is ready: let curl act on it. */
static void
http_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct http_sock *hs = container_of(w, struct http_sock, io);
	int mask = ((revents & EV_READ) ? CURL_CSELECT_IN : 0) |
		((revents & EV_WRITE) ? CURL_CSELECT_OUT : 0) |
		((revents & EV_ERROR) ? CURL_CSELECT_ERR : 0);

	http_action(hs->h, w->fd, mask);
}

/* curl's timeout expired. */
static void
http_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	http_action(container_of(w, struct http, timer), CURL_SOCKET_TIMEOUT, 0);
}

/* CURLMOPT_TIMERFUNCTION: only (re)arm the one timer; -1 deletes it, 0 means at once. */
static int
http_timer_fn(CURLM *m, long ms, void *arg)
{
	struct http *h = arg;

	ev_timer_stop(h->loop, &h->timer);
	if (ms >= 0) {
		ev_timer_set(&h->timer, ms / 1000.0, 0.);
		ev_timer_start(h->loop, &h->timer);
	}
	return 0;
}

/* CURLMOPT_SOCKETFUNCTION: watch a socket for what curl wants, or stop watching it. */
static int
http_sock_fn(CURL *e, curl_socket_t s, int what, void *arg, void *sockp)
{
	struct http *h = arg;
	struct http_sock *hs = sockp;
	int ev = ((what & CURL_POLL_IN) ? EV_READ : 0) | ((what & CURL_POLL_OUT) ? EV_WRITE : 0);

	if (what == CURL_POLL_REMOVE) {
		if (hs != NULL) {
			ev_io_stop(h->loop, &hs->io);
			free(hs);
		}
		return 0;
	}
	if (hs == NULL) {
		hs = xcalloc(1, sizeof *hs);
		hs->h = h;
		ev_init(&hs->io, http_io_cb);
		cu.multi_assign(h->multi, s, hs);
	} else
		ev_io_stop(h->loop, &hs->io);
	ev_io_set(&hs->io, s, ev);
	ev_io_start(h->loop, &hs->io);
	return 0;
}

/* A transfer's idle timer expired: no byte for idle_timeout_ms. */
static void
http_idle_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct http_req *r = container_of(w, struct http_req, idle);

	ev_timer_stop(loop, w);
	http_finish(r, CURLE_OPERATION_TIMEDOUT, "idle timeout waiting for SSE", 1);
}

/* CURLOPT_WRITEFUNCTION: pause while congested, else hand the bytes to the owner. */
static size_t
http_write_fn(char *p, size_t size, size_t n, void *arg)
{
	struct http_req *r = arg;
	struct http *h = r->h;
	long status = 0;

	if (r->flags & HTTP_CANCELLED)
		return 0;
	if (h->congested != NULL && h->congested(h->congested_arg)) {
		if (!(r->flags & HTTP_PAUSED)) {
			r->flags |= HTTP_PAUSED;
			h->npaused++;
		}
		ev_timer_stop(h->loop, &r->idle);
		return CURL_WRITEFUNC_PAUSE;
	}
	if (r->idle_s > 0)
		ev_timer_again(h->loop, &r->idle);
	cu.easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &status);
	if (r->cb.data(r->arg, status, p, size * n) != 0 || (r->flags & HTTP_CANCELLED))
		return 0;
	return size * n;
}

/* A client on loop; nothing of curl is touched until the first request. */
struct http *
http_new(struct ev_loop *loop)
{
	struct http *h = xcalloc(1, sizeof *h);

	h->loop = loop;
	TAILQ_INIT(&h->reqs);
	TAILQ_INIT(&h->doomed);
	ev_init(&h->timer, http_timer_cb);
	return h;
}

/* Cancel every transfer without callbacks, then free. */
void
http_free(struct http *h)
{
	struct http_req *r;

	if (h == NULL)
		return;
	if (http_the_default == h)
		http_the_default = NULL;
	while ((r = TAILQ_FIRST(&h->reqs)) != NULL) {
		TAILQ_REMOVE(&h->reqs, r, entry);
		http_release(r);
	}
	http_reap(h);
	if (h->multi != NULL)
		cu.multi_cleanup(h->multi);
	ev_timer_stop(h->loop, &h->timer);
	free(h);
}

/* The daemon's client, or NULL. */
struct http *
http_default(void)
{
	return http_the_default;
}

/* Make h the daemon's client. */
void
http_set_default(struct http *h)
{
	http_the_default = h;
}

/* Set the predicate consulted before body bytes are delivered. */
void
http_set_congested(struct http *h, int (*fn)(void *), void *arg)
{
	h->congested = fn;
	h->congested_arg = arg;
}

/* Transfers running. */
size_t
http_active(const struct http *h)
{
	return h->nactive;
}

/* Transfers paused by congestion. */
size_t
http_paused(const struct http *h)
{
	return h->npaused;
}

/* The writer drained: let every paused transfer deliver again. */
void
http_resume(struct http *h)
{
	struct http_req **list, *r;
	size_t n = 0, i;

	if (h->npaused == 0)
		return;
	/* Collected first: a write callback run by curl_easy_pause may cancel others. */
	list = xcalloc(h->npaused, sizeof *list);
	TAILQ_FOREACH(r, &h->reqs, entry)
	{
		if ((r->flags & HTTP_PAUSED) && n < h->npaused)
			list[n++] = r;
	}
	for (i = 0; i < n; i++) {
		r = list[i];
		if (r->flags & HTTP_CANCELLED)
			continue;
		r->flags &= ~HTTP_PAUSED;
		h->npaused--;
		if (r->idle_s > 0)
			ev_timer_again(h->loop, &r->idle);
		h->in_curl++;
		cu.easy_pause(r->easy, CURLPAUSE_CONT);
		h->in_curl--;
	}
	free(list);
	http_reap(h);
}

/* Set up the multi handle on first use. */
static int
http_multi(struct http *h, char **cause)
{
	if (h->multi != NULL)
		return 0;
	if (http_curl_load(cause) != 0)
		return -1;
	if ((h->multi = cu.multi_init()) == NULL) {
		*cause = xstrdup("curl_multi_init failed");
		return -1;
	}
	cu.multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, http_sock_fn);
	cu.multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
	cu.multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, http_timer_fn);
	cu.multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
	return 0;
}

/* Set up a transfer and hand it to the multi handle (which starts it). */
struct http_req *
http_start(struct http *h, const struct http_req_opts *o, const struct http_cbs *cbs, void *arg,
	char **cause)
{
	struct http_req *r;
	const char *np = getenv("NO_PROXY");
	CURLMcode mc;

	if (np == NULL)
		np = getenv("no_proxy");
	if (strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0) {
		*cause = xasprintf("unsupported URL %s (http:// or https:// only)", o->url);
		return NULL;
	}
	if (http_multi(h, cause) != 0)
		return NULL;
	r = xcalloc(1, sizeof *r);
	r->h = h;
	r->cb = *cbs;
	r->arg = arg;
	r->url = xstrdup(o->url);
	if ((r->easy = cu.easy_init()) == NULL) {
		*cause = xstrdup("curl_easy_init failed");
		free(r->url);
		free(r);
		return NULL;
	}
	for (size_t i = 0; o->headers != NULL && o->headers[i] != NULL; i++)
		r->headers = cu.slist_append(r->headers, o->headers[i]);
	r->headers = cu.slist_append(r->headers, "Expect:");
	cu.easy_setopt(r->easy, CURLOPT_URL, r->url);
	cu.easy_setopt(r->easy, CURLOPT_PRIVATE, r);
	cu.easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->headers);
	cu.easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, http_write_fn);
	cu.easy_setopt(r->easy, CURLOPT_WRITEDATA, r);
	cu.easy_setopt(r->easy, CURLOPT_ERRORBUFFER, r->errbuf);
	cu.easy_setopt(r->easy, CURLOPT_NOSIGNAL, 1L);
	cu.easy_setopt(r->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	cu.easy_setopt(r->easy, CURLOPT_TCP_KEEPALIVE, 1L);
	if (np == NULL)
		cu.easy_setopt(r->easy, CURLOPT_NOPROXY, "localhost,127.0.0.1,::1");
	if (o->connect_timeout_ms > 0)
		cu.easy_setopt(r->easy, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
	if (o->total_timeout_ms > 0)
		cu.easy_setopt(r->easy, CURLOPT_TIMEOUT_MS, o->total_timeout_ms);
	if (o->method != NULL && strcmp(o->method, "POST") == 0) {
		r->body = xmalloc(o->body_len + 1);
		memcpy(r->body, o->body != NULL ? o->body : "", o->body_len);
		cu.easy_setopt(r->easy, CURLOPT_POST, 1L);
		cu.easy_setopt(r->easy, CURLOPT_POSTFIELDS, r->body);
		cu.easy_setopt(r->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)o->body_len);
	} else if (o->method != NULL && strcmp(o->method, "DELETE") == 0)
		cu.easy_setopt(r->easy, CURLOPT_CUSTOMREQUEST, "DELETE"); /* an MCP session's end */
	ev_init(&r->idle, http_idle_cb);
	if (o->idle_timeout_ms > 0) {
		r->idle_s = o->idle_timeout_ms / 1000.0;
		r->idle.repeat = r->idle_s;
		ev_timer_again(h->loop, &r->idle);
	}
	if ((mc = cu.multi_add_handle(h->multi, r->easy)) != CURLM_OK) {
		*cause = xasprintf("curl_multi_add_handle: %s", cu.multi_strerror(mc));
		ev_timer_stop(h->loop, &r->idle);
		cu.easy_cleanup(r->easy);
		cu.slist_free_all(r->headers);
		free(r->body);
		free(r->url);
		free(r);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&h->reqs, r, entry);
	h->nactive++;
	return r;
}

/* Stop a transfer with no further callback; released now or once curl returns. */
void
http_cancel(struct http_req *r)
{
	struct http *h;

	if (r == NULL || (r->flags & (HTTP_CANCELLED | HTTP_DONE)))
		return;
	h = r->h;
	r->flags |= HTTP_CANCELLED;
	ev_timer_stop(h->loop, &r->idle);
	TAILQ_REMOVE(&h->reqs, r, entry);
	h->nactive--;
	if (h->in_curl > 0) {
		TAILQ_INSERT_TAIL(&h->doomed, r, entry);
		return;
	}
	http_release(r);
}
