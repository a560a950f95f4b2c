/*
 * app-client --connect: reaching a listening daemon and its WebSocket upgrade. ws://HOST:PORT
 * is TCP (getaddrinfo), unix:///PATH a Unix socket; the upgrade request carries the bearer token
 * of the daemon's --ws-auth, and the answer is read by Debian's libhttp-parser.
 *
 * Rules: this runs once, before the loop, so it may block, but never past CONN_WS_CONNECT_SECS
 * for the connect and the whole answer together; every fd is O_CLOEXEC; the answer's head is
 * at most CONN_WS_HEAD_MAX bytes; a 101 is accepted only with Sec-WebSocket-Accept the SHA-1 of
 * our random key (RFC 6455 4.2.2), and a refusal is reported with its status and the first line
 * of its body (a 401 from --ws-auth says which token problem).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <time.h>
#include <unistd.h>

#include <http_parser.h>

#include "config/digest.h"
#include "conn_int.h"
#include "protocol/base64.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define CONN_WS_CONNECT_SECS 10
#define CONN_WS_HEAD_MAX     (16u << 10)
#define CONN_WS_GUID	     "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

/* What the answer says: its status, the headers the upgrade checks, and the body (a refusal). */
struct conn_ws_answer {
	http_parser parser;
	char field[32];
	int in_field; /* which header the value callbacks fill: 1 accept, 2 upgrade, 3 connection */
	char accept[64], upgrade[32], connection[64];
	struct buf body;
	int head_done, done;
};

/* Milliseconds left before the deadline (at least 0). */
static int
conn_ws_left(const struct timespec *deadline)
{
	struct timespec now;
	long long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (deadline->tv_sec - now.tv_sec) * 1000LL + (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms < 0 ? 0 : (int)ms;
}

/* Wait for fd to be ready for `events`; 0, or -1 with errno (ETIMEDOUT). */
static int
conn_ws_wait(int fd, short events, const struct timespec *deadline)
{
	struct pollfd p = {.fd = fd, .events = events};
	int r;

	do
		r = poll(&p, 1, conn_ws_left(deadline));
	while (r < 0 && errno == EINTR);
	if (r == 0)
		errno = ETIMEDOUT;
	return r > 0 ? 0 : -1;
}

/* A non-blocking socket connected to addr within the deadline; -1 with errno. */
static int
conn_ws_dial(int family, const struct sockaddr *addr, socklen_t len, const struct timespec *dl)
{
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), err = 0;
	socklen_t elen = sizeof err;

	if (fd < 0)
		return -1;
	if (connect(fd, addr, len) == 0)
		return fd;
	if (errno == EINPROGRESS && conn_ws_wait(fd, POLLOUT, dl) == 0 &&
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) == 0 && err == 0)
		return fd;
	if (err != 0)
		errno = err;
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

/* Connect to the target; the fd, or -1 with *cause. */
static int
conn_ws_connect(const struct conn_ws_target *t, const struct timespec *dl, char **cause)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL, *ai;
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd = -1, r, one = 1;

	if (t->path != NULL) {
		if (strlen(t->path) >= sizeof sun.sun_path) {
			*cause = xasprintf("%s: the socket path is too long", t->url);
			return -1;
		}
		memcpy(sun.sun_path, t->path, strlen(t->path) + 1);
		if ((fd = conn_ws_dial(AF_UNIX, (struct sockaddr *)&sun, sizeof sun, dl)) < 0)
			*cause = xasprintf("cannot connect to %s: %s", t->url, strerror(errno));
		return fd;
	}
	if ((r = getaddrinfo(t->host, t->port, &hints, &res)) != 0) {
		*cause = xasprintf("cannot connect to %s: %s", t->url, gai_strerror(r));
		return -1;
	}
	for (ai = res; ai != NULL && fd < 0; ai = ai->ai_next)
		fd = conn_ws_dial(ai->ai_family, ai->ai_addr, ai->ai_addrlen, dl);
	if (fd < 0)
		*cause = xasprintf("cannot connect to %s: %s", t->url, strerror(errno));
	else
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	freeaddrinfo(res);
	return fd;
}

static int
conn_ws_field_cb(http_parser *p, const char *at, size_t n)
{
	struct conn_ws_answer *a = p->data;
	size_t have = strlen(a->field);

	if (a->in_field != -1) { /* a new header begins */
		a->field[0] = '\0';
		have = 0;
		a->in_field = -1;
	}
	if (have + n < sizeof a->field) {
		memcpy(a->field + have, at, n);
		a->field[have + n] = '\0';
	}
	return 0;
}

/* Append a header's value piece to dst (bounded; a header longer than dst is cut). */
static void
conn_ws_append(char *dst, size_t size, const char *at, size_t n)
{
	size_t have = strlen(dst);

	if (have + n >= size)
		n = size - 1 - have;
	memcpy(dst + have, at, n);
	dst[have + n] = '\0';
}

static int
conn_ws_value_cb(http_parser *p, const char *at, size_t n)
{
	struct conn_ws_answer *a = p->data;

	if (a->in_field == -1)
		a->in_field = strcasecmp(a->field, "sec-websocket-accept") == 0 ? 1
			: strcasecmp(a->field, "upgrade") == 0			? 2
			: strcasecmp(a->field, "connection") == 0		? 3
										: 0;
	if (a->in_field == 1)
		conn_ws_append(a->accept, sizeof a->accept, at, n);
	else if (a->in_field == 2)
		conn_ws_append(a->upgrade, sizeof a->upgrade, at, n);
	else if (a->in_field == 3)
		conn_ws_append(a->connection, sizeof a->connection, at, n);
	return 0;
}

static int
conn_ws_headers_cb(http_parser *p)
{
	struct conn_ws_answer *a = p->data;

	a->head_done = 1;
	return p->status_code == 101 ? 2 : 0; /* 101: no body; the frames follow */
}

static int
conn_ws_body_cb(http_parser *p, const char *at, size_t n)
{
	struct conn_ws_answer *a = p->data;

	if (a->body.len + n <= 4096)
		buf_add(&a->body, at, n);
	return 0;
}

static int
conn_ws_complete_cb(http_parser *p)
{
	((struct conn_ws_answer *)p->data)->done = 1;
	return 0;
}

static const http_parser_settings conn_ws_settings = {
	.on_header_field = conn_ws_field_cb,
	.on_header_value = conn_ws_value_cb,
	.on_headers_complete = conn_ws_headers_cb,
	.on_body = conn_ws_body_cb,
	.on_message_complete = conn_ws_complete_cb,
};

/* Our random key and the accept value the daemon must answer with (both NUL-terminated). */
static int
conn_ws_keys(char key[25], char accept[29])
{
	unsigned char raw[16], sha[20];
	char text[24 + sizeof CONN_WS_GUID];

	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		return -1;
	base64_encode(raw, sizeof raw, key);
	key[24] = '\0';
	memcpy(text, key, 24);
	memcpy(text + 24, CONN_WS_GUID, sizeof CONN_WS_GUID);
	if (digest_sha1(text, strlen(text), sha) != 0)
		return -1;
	base64_encode(sha, sizeof sha, accept);
	accept[28] = '\0';
	return 0;
}

/* Send the whole request within the deadline; 0 or -1 with errno. */
static int
conn_ws_send_all(int fd, const char *p, size_t n, const struct timespec *dl)
{
	ssize_t k;

	while (n > 0) {
		k = send(fd, p, n, MSG_NOSIGNAL);
		if (k > 0) {
			p += k, n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (k < 0 && errno == EAGAIN && conn_ws_wait(fd, POLLOUT, dl) != 0)
			return -1;
	}
	return 0;
}

/* Why the daemon refused: its status line's code and reason, and the body's first line. */
static char *
conn_ws_refusal(const struct conn_ws_target *t, struct conn_ws_answer *a)
{
	const char *body = buf_str(&a->body);
	size_t n = strcspn(body, "\r\n");

	return xasprintf("%s refused the upgrade: %u %s%s%.*s", t->url, a->parser.status_code,
		http_status_str((enum http_status)a->parser.status_code), n > 0 ? ": " : "", (int)n,
		body);
}

/* conn_ws_http.c: connect and upgrade; the fd (non-blocking) with early frames in *early. */
int
conn_ws_open(const struct conn_ws_target *t, struct buf *early, char **cause)
{
	struct conn_ws_answer a = {.in_field = 0};
	char key[25], accept[29], chunk[4096], *req = NULL;
	struct timespec dl;
	size_t got = 0, k;
	ssize_t n;
	int fd = -1, r = -1;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += CONN_WS_CONNECT_SECS;
	buf_init(&a.body, 4096);
	if (conn_ws_keys(key, accept) != 0) {
		*cause = xasprintf(
			"%s: no SHA-1 for the WebSocket key (libcrypto.so.3 missing?)", t->url);
		goto out;
	}
	if ((fd = conn_ws_connect(t, &dl, cause)) < 0)
		goto out;
	req = xasprintf(
		"GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n%s%s%s\r\n",
		t->resource, t->host_header, key, t->token != NULL ? "Authorization: Bearer " : "",
		t->token != NULL ? t->token : "", t->token != NULL ? "\r\n" : "");
	if (conn_ws_send_all(fd, req, strlen(req), &dl) != 0) {
		*cause = xasprintf("%s: sending the upgrade: %s", t->url, strerror(errno));
		goto out;
	}
	http_parser_init(&a.parser, HTTP_RESPONSE);
	a.parser.data = &a;
	while (!a.done && !(a.head_done && a.parser.status_code == 101)) {
		n = recv(fd, chunk, sizeof chunk, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (conn_ws_wait(fd, POLLIN, &dl) != 0)
				break;
			continue;
		}
		if (n <= 0) {
			http_parser_execute(
				&a.parser, &conn_ws_settings, NULL, 0); /* EOF ends a body */
			break;
		}
		k = http_parser_execute(&a.parser, &conn_ws_settings, chunk, (size_t)n);
		got += (size_t)n;
		if (a.head_done && a.parser.status_code == 101) {
			buf_add(early, chunk + k,
				(size_t)n - k); /* frames sent right after the 101 */
			break;
		}
		if (HTTP_PARSER_ERRNO(&a.parser) != HPE_OK ||
			(!a.head_done && got > CONN_WS_HEAD_MAX)) {
			*cause = xasprintf("%s: not an HTTP answer to the upgrade", t->url);
			goto out;
		}
	}
	if (!a.head_done) {
		*cause = xasprintf(
			"%s: no answer to the upgrade within %d s", t->url, CONN_WS_CONNECT_SECS);
		goto out;
	}
	if (a.parser.status_code != 101) {
		*cause = conn_ws_refusal(t, &a);
		goto out;
	}
	if (strcasecmp(a.upgrade, "websocket") != 0 ||
		strcasestr(a.connection, "upgrade") == NULL || strcmp(a.accept, accept) != 0) {
		*cause = xasprintf("%s: the 101 is not an upgrade to our WebSocket key", t->url);
		goto out;
	}
	r = fd;
	fd = -1; /* transferred */
out:
	if (fd >= 0)
		close(fd);
	buf_free(&a.body);
	free(req);
	return r;
}

/* conn_ws_http.c: parse ws://HOST:PORT[/PATH] or unix:///PATH; 0, or -1 with *cause. */
int
conn_ws_target_parse(struct conn_ws_target *t, const char *url, char **cause)
{
	const char *hp, *slash, *colon;

	memset(t, 0, sizeof *t);
	t->url = xstrdup(url);
	if (strncmp(url, "unix://", 7) == 0 && url[7] == '/') {
		t->path = xstrdup(url + 7);
		t->host_header = xstrdup("localhost");
		t->resource = xstrdup("/");
		return 0;
	}
	if (strncmp(url, "ws://", 5) != 0) {
		*cause = xasprintf("%s: expected ws://HOST:PORT or unix:///PATH", url);
		return -1;
	}
	hp = url + 5;
	slash = hp + strcspn(hp, "/?");
	colon = hp[0] == '[' ? memchr(hp, ']', (size_t)(slash - hp)) : hp;
	colon = colon != NULL ? memrchr(colon, ':', (size_t)(slash - colon)) : NULL;
	if (colon == NULL || colon + 1 == slash || colon == hp) {
		*cause = xasprintf("%s: expected ws://HOST:PORT or unix:///PATH", url);
		return -1;
	}
	t->host_header = xstrndup(hp, (size_t)(slash - hp));
	if (hp[0] == '[')
		t->host = xstrndup(hp + 1, (size_t)(colon - hp - 2));
	else
		t->host = xstrndup(hp, (size_t)(colon - hp));
	t->port = xstrndup(colon + 1, (size_t)(slash - colon - 1));
	t->resource =
		*slash == '\0' ? xstrdup("/") : xasprintf("%s%s", *slash == '?' ? "/" : "", slash);
	return 0;
}

/* conn_ws_http.c: free what conn_ws_target_parse allocated (the token is not ours). */
void
conn_ws_target_clear(struct conn_ws_target *t)
{
	free(t->url);
	free(t->path);
	free(t->host);
	free(t->port);
	free(t->host_header);
	free(t->resource);
	memset(t, 0, sizeof *t);
}
