/*
 * The proxy relays bytes, not messages: upstream's `app-server proxy` does the same, so a
 * client that speaks WebSocket to a Unix socket speaks it through the proxy's stdio unchanged.
 * One poll loop, a bounded buffer each way, no reading from a side whose buffer is full (a slow
 * reader slows the writer, nothing grows). stdin's EOF half-closes the socket, so the daemon
 * still answers what it had; the socket's EOF ends the proxy once stdout has it all.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ws_proxy.h"

#define WS_PROXY_BUF (64 * 1024)

struct ws_pipe {
	int from, to;
	char buf[WS_PROXY_BUF];
	size_t len;
	int eof;
};

/* Move what can be moved on one direction; -1 on a write error. */
static int
ws_proxy_step(struct ws_pipe *p, short rev_from, short rev_to)
{
	ssize_t n;

	if (!p->eof && p->len < sizeof p->buf && (rev_from & (POLLIN | POLLHUP | POLLERR))) {
		n = read(p->from, p->buf + p->len, sizeof p->buf - p->len);
		if (n > 0)
			p->len += (size_t)n;
		else if (n == 0 || (errno != EINTR && errno != EAGAIN))
			p->eof = 1;
	}
	if (p->len > 0 && (rev_to & (POLLOUT | POLLERR | POLLHUP))) {
		n = write(p->to, p->buf, p->len);
		if (n < 0 && errno != EINTR && errno != EAGAIN)
			return -1;
		if (n > 0) {
			memmove(p->buf, p->buf + n, p->len - (size_t)n);
			p->len -= (size_t)n;
		}
	}
	return 0;
}

int
ws_proxy_main(const char *path)
{
	static struct ws_pipe up, down; /* 128 KiB: off the stack */
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct pollfd pf[4];
	int fd, half = 0;

	signal(SIGPIPE, SIG_IGN);
	if (strlen(path) >= sizeof sun.sun_path) {
		fprintf(stderr, "Error: socket path too long: %s\n", path);
		return 1;
	}
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
		connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		fprintf(stderr, "Error: failed to connect to socket at %s: %s\n", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	up = (struct ws_pipe){.from = STDIN_FILENO, .to = fd};
	down = (struct ws_pipe){.from = fd, .to = STDOUT_FILENO};
	for (;;) {
		if (up.eof && up.len == 0 && !half) {
			shutdown(fd, SHUT_WR); /* the daemon sees our end, and still answers */
			half = 1;
		}
		if (down.eof && down.len == 0)
			break;
		pf[0] = (struct pollfd){
			.fd = up.eof || up.len == sizeof up.buf ? -1 : up.from, .events = POLLIN};
		pf[1] = (struct pollfd){.fd = up.len > 0 ? up.to : -1, .events = POLLOUT};
		pf[2] = (struct pollfd){
			.fd = down.eof || down.len == sizeof down.buf ? -1 : down.from,
			.events = POLLIN};
		pf[3] = (struct pollfd){.fd = down.len > 0 ? down.to : -1, .events = POLLOUT};
		if (poll(pf, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (ws_proxy_step(&up, pf[0].revents, pf[1].revents) != 0 ||
			ws_proxy_step(&down, pf[2].revents, pf[3].revents) != 0)
			break;
	}
	close(fd);
	return 0;
}
