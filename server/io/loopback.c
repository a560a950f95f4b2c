/*
 * The OAuth callbacks' loopback server (loopback.h): non-blocking sockets on the loop, one
 * request per connection, bounded in size and time, so a browser (or anything else on the
 * machine) that connects and stalls costs a file descriptor for 10 s and nothing else.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http.h"
#include "log.h"
#include "loopback.h"
#include "protocol/xmalloc.h"

#define CONN_MAX_REQUEST (16 << 10) /* a callback URL with its query, and the headers */
#define CONN_TIMEOUT	 10.0	    /* reading a request, writing an answer */
#define BIND_RETRY	 0.2
#define MAX_CONNS	 16 /* browsers open a few (favicon, preconnects) */

enum conn_state { CONN_READING, CONN_WAITING, CONN_WRITING };

struct loopback_conn {
	struct loopback_srv *srv; /* NULL once the server is gone (the answer is still written) */
	struct ev_loop *loop;
	int fd;
	enum conn_state state;
	ev_io io;
	ev_timer timer;
	char *in;
	size_t inlen;
	char *out;
	size_t outlen, outoff;
	struct loopback_conn *next;
};

struct loopback_srv {
	struct ev_loop *loop;
	struct loopback_cbs cbs;
	void *arg;
	struct loopback_opts o;
	int port, fd;
	int attempts, fallback, cancel_sent;
	int cancel_fd; /* the `GET /cancel` to whoever holds the port, or -1 */
	ev_io accept_w, cancel_w;
	ev_timer retry;
	struct loopback_conn *conns;
	int nconns;
};

static void conn_free(struct loopback_conn *c);

/* A listening socket on 127.0.0.1:port; the fd, or -1 with errno. */
static int
srv_listen(int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1, e;

	if (fd < 0)
		return -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* as Rust's TcpListener: a port whose last connection lingers in TIME_WAIT is free */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 16) != 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static void
srv_cancel_close(struct loopback_srv *s)
{
	if (s->cancel_fd >= 0) {
		ev_io_stop(s->loop, &s->cancel_w);
		close(s->cancel_fd);
		s->cancel_fd = -1;
	}
}

/* Connected to the holder of the port: ask it to give the port up, as upstream does. */
static void
srv_cancel_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct loopback_srv *s = w->data;
	char req[96];
	int n = snprintf(req, sizeof req,
		"GET /cancel HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", s->port);
	ssize_t r;

	(void)loop;
	(void)revents;
	do
		r = write(s->cancel_fd, req, (size_t)n);
	while (r < 0 && errno == EINTR);
	srv_cancel_close(s); /* the answer does not matter: the next bind attempt tells */
}

static void
srv_send_cancel(struct loopback_srv *s)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s->port)};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 && errno != EINPROGRESS) {
		log_warn("login: failed to cancel previous login server: %s", strerror(errno));
		close(fd);
		return;
	}
	s->cancel_fd = fd;
	ev_io_init(&s->cancel_w, srv_cancel_cb, fd, EV_WRITE);
	s->cancel_w.data = s;
	ev_io_start(s->loop, &s->cancel_w);
}

static void
conn_write(struct loopback_conn *c)
{
	while (c->outoff < c->outlen) {
		ssize_t n = write(c->fd, c->out + c->outoff, c->outlen - c->outoff);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			ev_io_stop(c->loop, &c->io);
			ev_io_set(&c->io, c->fd, EV_WRITE);
			ev_io_start(c->loop, &c->io);
			return;
		}
		if (n <= 0)
			break; /* the browser left */
		c->outoff += (size_t)n;
	}
	conn_free(c);
}

/* A whole request head is in: its target goes to the flow. */
static void
conn_request(struct loopback_conn *c)
{
	char *sp1 = memchr(c->in, ' ', c->inlen), *sp2 = NULL;
	struct loopback_srv *s = c->srv;

	ev_io_stop(c->loop, &c->io);
	ev_timer_stop(c->loop, &c->timer);
	c->state = CONN_WAITING;
	if (sp1 != NULL)
		sp2 = strchr(sp1 + 1, ' ');
	if (sp2 != NULL && sp1[1] == '/' && sp2 < strstr(c->in, "\r\n")) {
		*sp2 = '\0';
		s->cbs.request(s->arg, c, sp1 + 1);
	} else
		s->cbs.request(s->arg, c, NULL);
}

static void
conn_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct loopback_conn *c = w->data;
	ssize_t n;

	(void)loop;
	(void)revents;
	if (c->state == CONN_WRITING) {
		conn_write(c);
		return;
	}
	do
		n = read(c->fd, c->in + c->inlen, CONN_MAX_REQUEST - c->inlen);
	while (n < 0 && errno == EINTR);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n <= 0) {
		conn_free(c); /* gone before a whole request */
		return;
	}
	c->inlen += (size_t)n;
	c->in[c->inlen] = '\0';
	if (strstr(c->in, "\r\n\r\n") != NULL)
		conn_request(c);
	else if (c->inlen == CONN_MAX_REQUEST)
		loopback_conn_respond(c, 400, "text/plain; charset=UTF-8", NULL, "Bad Request", 11);
}

static void
conn_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	conn_free(w->data);
}

static void
conn_free(struct loopback_conn *c)
{
	if (c->srv != NULL) {
		for (struct loopback_conn **p = &c->srv->conns; *p != NULL; p = &(*p)->next)
			if (*p == c) {
				*p = c->next;
				break;
			}
		c->srv->nconns--;
	}
	ev_io_stop(c->loop, &c->io);
	ev_timer_stop(c->loop, &c->timer);
	close(c->fd);
	/* the request held the callback's code and state */
	explicit_bzero(c->in, CONN_MAX_REQUEST + 1);
	free(c->in);
	free(c->out);
	free(c);
}

static void
srv_accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct loopback_srv *s = w->data;
	struct loopback_conn *c;
	int fd;

	(void)revents;
	while ((fd = accept4(s->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		if (s->nconns >= MAX_CONNS) {
			close(fd);
			continue;
		}
		c = xcalloc(1, sizeof *c);
		c->srv = s;
		c->loop = loop;
		c->fd = fd;
		c->in = xmalloc(CONN_MAX_REQUEST + 1);
		ev_io_init(&c->io, conn_io_cb, fd, EV_READ);
		c->io.data = c;
		ev_timer_init(&c->timer, conn_timer_cb, CONN_TIMEOUT, 0.);
		c->timer.data = c;
		ev_io_start(loop, &c->io);
		ev_timer_start(loop, &c->timer);
		c->next = s->conns;
		s->conns = c;
		s->nconns++;
	}
}

/* One bind attempt (upstream's loop, one turn per timer tick). */
static void
srv_retry_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct loopback_srv *s = w->data;
	char *err;
	int e;

	(void)revents;
	srv_cancel_close(s);
	if (s->o.refuse != NULL) {
		s->cbs.ready(s->arg, 0, s->o.refuse);
		return;
	}
	if ((s->fd = srv_listen(s->port)) >= 0) {
		ev_io_init(&s->accept_w, srv_accept_cb, s->fd, EV_READ);
		s->accept_w.data = s;
		ev_io_start(loop, &s->accept_w);
		if (s->port == 0) {
			struct sockaddr_in sa;
			socklen_t len = sizeof sa;

			getsockname(s->fd, (struct sockaddr *)&sa, &len);
			s->port = ntohs(sa.sin_port);
		}
		s->cbs.ready(s->arg, s->port, NULL);
		return;
	}
	e = errno;
	if (e != EADDRINUSE) {
		err = xasprintf("failed to bind 127.0.0.1:%d: %s", s->port, strerror(e));
		s->cbs.ready(s->arg, 0, err);
		free(err);
		return;
	}
	s->attempts++;
	if (s->o.send_cancel && !s->cancel_sent && !s->fallback) {
		s->cancel_sent = 1;
		srv_send_cancel(s);
	}
	if (s->attempts >= s->o.attempts) {
		if (s->o.fallback_port > 0 && !s->fallback) {
			log_warn("login: default login callback port is unavailable; falling back "
				 "to the registered fallback port");
			s->fallback = 1;
			s->port = s->o.fallback_port;
			s->attempts = 0;
			ev_timer_set(w, 0., 0.);
			ev_timer_start(loop, w);
			return;
		}
		err = xasprintf("Port 127.0.0.1:%d is already in use", s->port);
		s->cbs.ready(s->arg, 0, err);
		free(err);
		return;
	}
	ev_timer_set(w, BIND_RETRY, 0.);
	ev_timer_start(loop, w);
}

struct loopback_srv *
loopback_srv_start(struct ev_loop *loop, const struct loopback_opts *o,
	const struct loopback_cbs *cbs, void *arg)
{
	struct loopback_srv *s = xcalloc(1, sizeof *s);

	s->loop = loop;
	s->cbs = *cbs;
	s->arg = arg;
	s->o = *o;
	if (s->o.attempts < 1)
		s->o.attempts = 1;
	s->port = o->port;
	s->fd = s->cancel_fd = -1;
	/* even the first attempt runs from the loop: the caller hears back the same way always */
	ev_timer_init(&s->retry, srv_retry_cb, 0., 0.);
	s->retry.data = s;
	ev_timer_start(loop, &s->retry);
	return s;
}

void
loopback_conn_respond(struct loopback_conn *c, int status, const char *ctype, const char *location,
	const char *body, size_t len)
{
	char *head = xasprintf("HTTP/1.1 %d %s\r\n%s%s%s%s%s%sContent-Length: %zu\r\n"
			       "Connection: close\r\n\r\n",
		status, http_reason(status), ctype != NULL ? "Content-Type: " : "",
		ctype != NULL ? ctype : "", ctype != NULL ? "\r\n" : "",
		location != NULL ? "Location: " : "", location != NULL ? location : "",
		location != NULL ? "\r\n" : "", body != NULL ? len : 0);
	size_t hl = strlen(head);

	c->out = xmalloc(hl + len + 1);
	memcpy(c->out, head, hl);
	if (body != NULL)
		memcpy(c->out + hl, body, len);
	c->outlen = hl + (body != NULL ? len : 0);
	free(head);
	c->state = CONN_WRITING;
	ev_io_stop(c->loop, &c->io);
	ev_timer_stop(c->loop, &c->timer);
	ev_timer_set(&c->timer, CONN_TIMEOUT, 0.);
	ev_timer_start(c->loop, &c->timer);
	conn_write(c);
}

void
loopback_srv_free(struct loopback_srv *s)
{
	struct loopback_conn *c, *next;

	if (s == NULL)
		return;
	ev_timer_stop(s->loop, &s->retry);
	srv_cancel_close(s);
	if (s->fd >= 0) {
		ev_io_stop(s->loop, &s->accept_w);
		close(s->fd);
	}
	for (c = s->conns; c != NULL; c = next) {
		next = c->next;
		c->srv = NULL;
		if (c->state != CONN_WRITING)
			conn_free(c);
	}
	free(s);
}
