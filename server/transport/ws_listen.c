/*
 * Listening sockets. Accepted fds are non-blocking and close-on-exec from accept4 on (no
 * command ever inherits a client's socket). When the process is out of fds, accepting pauses
 * for a moment instead of spinning on EMFILE; the pending connections wait in the backlog.
 * A Unix socket is made 0600 in a 0700 directory; a socket file nobody answers on (a daemon
 * killed with -9 left it) is replaced, one a live daemon answers on is refused.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "io/log.h"
#include "protocol/xmalloc.h"
#include "ws_listen.h"

#define WS_ACCEPT_BATCH 64  /* connections accepted per callback */
#define WS_EMFILE_PAUSE 0.5 /* seconds without accepting when out of fds */
#define WS_BACKLOG	512

struct ws_listen {
	struct ev_loop *loop;
	int fd;
	ev_io io;
	ev_timer pause;
	char *url;
	char *unix_path; /* removed when the listener goes */
	struct ws_conn_limits lim;
	const struct ws_conn_ops *ops;
	void *lctx;
};

static void ws_listen_accept_cb(struct ev_loop *, ev_io *, int);
static void ws_listen_pause_cb(struct ev_loop *, ev_timer *, int);

/* "IP:PORT" or "[IPv6]:PORT" into ss; 0 or -1. */
static int
ws_listen_parse_ip(const char *hp, struct sockaddr_storage *ss, socklen_t *sl)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	char host[64];
	const char *colon, *h = hp;
	size_t hl;
	char *end;
	long port;

	memset(ss, 0, sizeof *ss);
	if (*hp == '[') {
		if ((colon = strstr(hp, "]:")) == NULL)
			return -1;
		h = hp + 1;
		hl = (size_t)(colon - h);
		colon++;
	} else {
		if ((colon = strrchr(hp, ':')) == NULL)
			return -1;
		hl = (size_t)(colon - hp);
	}
	if (hl == 0 || hl >= sizeof host || colon[1] == '\0')
		return -1;
	memcpy(host, h, hl);
	host[hl] = '\0';
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || errno != 0 || port < 0 || port > 65535)
		return -1;
	if (*hp != '[' && inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		*sl = sizeof *in4;
		return 0;
	}
	if (*hp == '[' && inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*sl = sizeof *in6;
		return 0;
	}
	return -1;
}

static int
ws_listen_is_loopback(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET)
		return (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
}

int
ws_listen_check(const char *url, int *loopback, char **cause)
{
	struct sockaddr_storage ss;
	socklen_t sl;

	*loopback = 1;
	if (strncmp(url, "unix://", 7) == 0) {
		if (url[7] != '/') {
			*cause = xasprintf(
				"unix:// needs an absolute socket path here (unix:///PATH)");
			return -1;
		}
		if (strlen(url + 7) >= sizeof((struct sockaddr_un *)0)->sun_path) {
			*cause = xasprintf("socket path too long: %s", url + 7);
			return -1;
		}
		return 0;
	}
	if (strncmp(url, "ws://", 5) != 0 || ws_listen_parse_ip(url + 5, &ss, &sl) != 0) {
		*cause = xasprintf(
			"invalid websocket --listen URL `%s`; expected `ws://IP:PORT`", url);
		return -1;
	}
	*loopback = ws_listen_is_loopback(&ss);
	return 0;
}

/* A Unix socket file already there: replaced when nobody answers on it, else refused. */
static int
ws_listen_stale(const char *path, char **cause)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, r;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		*cause = xasprintf("%s exists and is not a socket", path);
		return -1;
	}
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	r = connect(fd, (struct sockaddr *)&sun, sizeof sun);
	close(fd);
	if (r == 0) {
		*cause = xasprintf("another app-server is listening on %s", path);
		return -1;
	}
	log_info("replacing the stale socket %s (%s)", path, strerror(errno));
	if (unlink(path) != 0 && errno != ENOENT) {
		*cause = xasprintf("cannot remove the stale socket %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Bind a Unix socket at path: its directory 0700 (made if missing), the socket 0600. */
static int
ws_listen_unix(struct ws_listen *l, const char *path, char **cause)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	mode_t old;
	int r = -1;

	if (slash != NULL && slash != dir) {
		*slash = '\0';
		/* missing parents too (a CODEX_HOME not made yet), each 0700 */
		for (char *s = dir + 1; (s = strchr(s, '/')) != NULL; s++) {
			*s = '\0';
			(void)mkdir(dir, 0700);
			*s = '/';
		}
		if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
			*cause = xasprintf("cannot create %s: %s", dir, strerror(errno));
			goto out;
		}
	}
	if (ws_listen_stale(path, cause) != 0) {
		if (*cause == NULL)
			*cause = xasprintf("%s: %s", path, strerror(errno));
		goto out;
	}
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
	if ((l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
		goto err;
	old = umask(0177); /* the socket file is born 0600: no window where others may connect */
	r = bind(l->fd, (struct sockaddr *)&sun, sizeof sun);
	umask(old);
	if (r != 0)
		goto err;
	l->unix_path = xstrdup(path);
	r = 0;
	goto out;
err:
	*cause = xasprintf("cannot listen on %s: %s", path, strerror(errno));
	r = -1;
out:
	free(dir);
	return r;
}

/* Bind the TCP address of a ws:// URL; the URL with the port the kernel chose into l->url. */
static int
ws_listen_tcp(struct ws_listen *l, const char *url, char **cause)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char host[INET6_ADDRSTRLEN];
	int one = 1;

	if (ws_listen_parse_ip(url + 5, &ss, &sl) != 0)
		return -1;
	if ((l->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0 ||
		setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
		bind(l->fd, (struct sockaddr *)&ss, sl) != 0 ||
		getsockname(l->fd, (struct sockaddr *)&ss, &sl) != 0) {
		*cause = xasprintf("cannot listen on %s: %s", url + 5, strerror(errno));
		return -1;
	}
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *in4 = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &in4->sin_addr, host, sizeof host);
		l->url = xasprintf("ws://%s:%u", host, ntohs(in4->sin_port));
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
		l->url = xasprintf("ws://[%s]:%u", host, ntohs(in6->sin6_port));
	}
	return 0;
}

struct ws_listen *
ws_listen_new(struct ev_loop *loop, const char *url, const struct ws_conn_limits *lim,
	const struct ws_conn_ops *ops, void *lctx, char **cause)
{
	struct ws_listen *l = xcalloc(1, sizeof *l);
	int loopback;

	l->loop = loop;
	l->fd = -1;
	l->lim = *lim;
	l->ops = ops;
	l->lctx = lctx;
	if (ws_listen_check(url, &loopback, cause) != 0)
		goto fail;
	if (strncmp(url, "unix://", 7) == 0) {
		if (ws_listen_unix(l, url + 7, cause) != 0)
			goto fail;
		l->url = xstrdup(url);
	} else if (ws_listen_tcp(l, url, cause) != 0)
		goto fail;
	if (listen(l->fd, WS_BACKLOG) != 0) {
		*cause = xasprintf("cannot listen on %s: %s", url, strerror(errno));
		goto fail;
	}
	ev_io_init(&l->io, ws_listen_accept_cb, l->fd, EV_READ);
	ev_io_start(loop, &l->io);
	ev_timer_init(&l->pause, ws_listen_pause_cb, WS_EMFILE_PAUSE, 0.);
	return l;
fail:
	ws_listen_free(l);
	return NULL;
}

const char *
ws_listen_url(const struct ws_listen *l)
{
	return l->url;
}

void
ws_listen_free(struct ws_listen *l)
{
	if (l == NULL)
		return;
	if (l->fd >= 0) {
		ev_io_stop(l->loop, &l->io);
		ev_timer_stop(l->loop, &l->pause);
		close(l->fd);
	}
	if (l->unix_path != NULL)
		unlink(l->unix_path);
	free(l->unix_path);
	free(l->url);
	free(l);
}

static void
ws_listen_pause_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct ws_listen *l = container_of(w, struct ws_listen, pause);

	ev_io_start(loop, &l->io);
}

static void
ws_listen_accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct ws_listen *l = container_of(w, struct ws_listen, io);
	int fd;

	for (int i = 0; i < WS_ACCEPT_BATCH; i++) {
		fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			(void)ws_conn_new(loop, fd, &l->lim, l->ops, l->lctx);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
			log_warn("cannot accept a connection: %s; pausing %.1f s", strerror(errno),
				WS_EMFILE_PAUSE);
			ev_io_stop(loop, &l->io);
			ev_timer_start(loop, &l->pause);
		}
		return;
	}
}
