/*
 * A bench's WebSocket client (wsclient.h). RFC 6455 as a client speaks it: every frame it
 * sends is masked (a bench needs no unpredictable key: a counter will do), the server's are
 * not; the accept key is not checked (the server under test is not who is measured here, and
 * test_ws checks it). Buffers are bounded: a message over 64 MiB breaks the connection.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wsclient.h"

#define BWS_MAX (64u << 20)

int
bench_ws_connect(struct bench_ws *c, const char *url)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	char host[64];
	int port, one = 1;

	memset(c, 0, sizeof *c);
	c->fd = -1;
	buf_init(&c->in, BWS_MAX + 16);
	buf_init(&c->out, BWS_MAX + 16);
	buf_init(&c->msg, BWS_MAX);
	if (sscanf(url, "ws://%63[0-9.]:%d", host, &port) != 2 ||
		inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -1;
	sa.sin_port = htons((uint16_t)port);
	if ((c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0 && errno != EINPROGRESS)
		return -1;
	return buf_printf(&c->out,
		       "GET / HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
		       "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
		       "Sec-WebSocket-Version: 13\r\n\r\n",
		       host, port) == 0
		? 0
		: -1;
}

void
bench_ws_text(struct bench_ws *c, const char *text, size_t len)
{
	static uint32_t counter = 0x9e3779b9u;
	unsigned char h[14], key[4];
	size_t n = 0, at;

	counter = counter * 1664525u + 1013904223u;
	memcpy(key, &counter, 4);
	h[n++] = 0x81; /* FIN, text */
	if (len < 126)
		h[n++] = 0x80 | (unsigned char)len;
	else if (len < 65536) {
		h[n++] = 0x80 | 126;
		h[n++] = (unsigned char)(len >> 8);
		h[n++] = (unsigned char)len;
	} else {
		h[n++] = 0x80 | 127;
		for (int i = 7; i >= 0; i--)
			h[n++] = (unsigned char)((uint64_t)len >> (8 * i));
	}
	memcpy(h + n, key, 4);
	n += 4;
	if (buf_add(&c->out, h, n) != 0 || buf_reserve(&c->out, len) != 0)
		return; /* past the bound: the caller sees no answer and times out */
	at = c->out.len;
	for (size_t i = 0; i < len; i++)
		c->out.ptr[at + i] = (char)(text[i] ^ key[i & 3]);
	c->out.len += len;
	c->out.ptr[c->out.len] = '\0';
}

int
bench_ws_flush(struct bench_ws *c)
{
	while (c->out.len > 0) {
		ssize_t w = send(c->fd, c->out.ptr, c->out.len, MSG_NOSIGNAL);

		if (w < 0)
			return errno == EAGAIN || errno == EINTR || errno == ENOTCONN ? 0 : -1;
		buf_consume(&c->out, (size_t)w);
	}
	return 0;
}

int
bench_ws_read(struct bench_ws *c)
{
	for (;;) {
		ssize_t r;

		if (buf_reserve(&c->in, 65536) != 0)
			return -1;
		r = recv(c->fd, c->in.ptr + c->in.len, 65536, 0);
		if (r > 0) {
			c->in.len += (size_t)r;
			c->in.ptr[c->in.len] = '\0';
			continue;
		}
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		return -1;
	}
}

/* The upgrade's answer: 1 once read (a 101), 0 for more bytes, -1 refused. */
static int
bench_ws_upgrade(struct bench_ws *c)
{
	const char *end = strstr(buf_str(&c->in), "\r\n\r\n");

	if (end == NULL)
		return c->in.len > 16384 ? -1 : 0;
	if (strncmp(c->in.ptr, "HTTP/1.1 101", 12) != 0)
		return -1;
	buf_consume(&c->in, (size_t)(end + 4 - c->in.ptr));
	c->open = 1;
	return 1;
}

int
bench_ws_next(struct bench_ws *c, const char **text, size_t *len)
{
	int r = 0;

	if (!c->open && (r = bench_ws_upgrade(c)) <= 0)
		return r;
	/* frames are parsed in place from c->at; the bytes before it go once per call */
	for (r = 0; r == 0;) {
		const unsigned char *p = (const unsigned char *)c->in.ptr + c->at;
		size_t have = c->in.len - c->at, hl = 2;
		uint64_t n;
		int op, fin;

		if (have < 2)
			break;
		fin = p[0] & 0x80;
		op = p[0] & 0x0f;
		if (p[1] & 0x80)
			return -1; /* a server never masks */
		n = p[1] & 0x7f;
		if (n == 126) {
			if (have < 4)
				break;
			n = (uint64_t)p[2] << 8 | p[3];
			hl = 4;
		} else if (n == 127) {
			if (have < 10)
				break;
			n = 0;
			for (int i = 0; i < 8; i++)
				n = n << 8 | p[2 + i];
			hl = 10;
		}
		if (n > BWS_MAX)
			return -1;
		if (have < hl + n)
			break;
		if (op == 8)
			return -1;
		if (op == 9) { /* ping: the pong carries its payload */
			unsigned char h[6] = {0x8a, (unsigned char)(0x80 | (n & 0x7f)), 0, 0, 0, 0};

			if (n <= 125 && buf_add(&c->out, h, 6) == 0)
				buf_add(&c->out, p + hl, (size_t)n); /* a zero key masks nothing */
		} else if (op == 1 || op == 0) {
			if (op == 1)
				buf_reset(&c->msg);
			if (buf_add(&c->msg, p + hl, (size_t)n) != 0)
				return -1;
			if (fin) {
				*text = buf_str(&c->msg);
				*len = c->msg.len;
				r = 1;
			}
		}
		c->at += hl + (size_t)n;
	}
	if (r == 0) {
		buf_consume(&c->in, c->at);
		c->at = 0;
	}
	return r;
}

int
bench_ws_pending(const struct bench_ws *c)
{
	return c->out.len > 0;
}

void
bench_ws_close(struct bench_ws *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	buf_free(&c->in);
	buf_free(&c->out);
	buf_free(&c->msg);
}
