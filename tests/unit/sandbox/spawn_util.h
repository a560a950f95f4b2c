/*
 * Helpers shared by the sandbox/spawn/spawn.c tests (test_spawn.c, test_spawn_pty.c): start a
 * child, pump its pipes or PTY to EOF, reap it with waitpid (no libev) and read processes from
 * /proc. Unit tests link only libcore.a, so this is a header of static functions, included once per
 * test binary; `inline` keeps a binary that does not use one of them free of warnings.
 *
 * Each binary makes itself a child subreaper (reaper_setup), so orphaned grandchildren
 * (background jobs, PDEATHSIG victims) come back to it and are checked and reaped precisely
 * instead of lingering under a PID 1 that may not reap.
 */
#ifndef SPAWN_UTIL_H
#define SPAWN_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/prctl.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/spawn/spawn.h"

#define CAP_MAX (512 * 1024)

static char *const test_env[] = {"PATH=/usr/bin:/bin", "LC_ALL=C", NULL};

/* Everything a child wrote, per stream (PTY output goes to out). */
struct capture {
	char out[CAP_MAX + 1];
	size_t outlen;
	char err[CAP_MAX + 1];
	size_t errlen;
};

/* Milliseconds on the monotonic clock. */
static inline long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Options with our environment and the given flags. */
static inline struct spawn_opts
opts_make(char *const *argv, unsigned flags)
{
	struct spawn_opts o;

	memset(&o, 0, sizeof o);
	o.argv = argv;
	o.envp = test_env;
	o.flags = flags;
	return o;
}

/*
 * Read once from *fd into buf; at EOF (or EIO on a PTY master) set *fd to -1,
 * closing it only for a pipe: closing a PTY master hangs up the session, and
 * a child that closed its terminal may not have exited yet (cat closes its
 * stdin before its atexit handlers run), so the master closes after the reap.
 */
static inline void
pump_read(int *fd, char *buf, size_t *len, int is_pty)
{
	ssize_t n;

	n = read(*fd, buf + *len, CAP_MAX - *len);
	if (n > 0) {
		*len += (size_t)n;
		buf[*len] = '\0';
		return;
	}
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	assert_true(n == 0 || (is_pty && errno == EIO));
	if (!is_pty)
		close(*fd);
	*fd = -1;
}

/*
 * Feed in (if any) to p->in_fd, closing it afterwards, and read every output
 * fd of p to EOF, within timeout_ms. The PTY master stays open.
 */
static inline void
pump(struct spawn_proc *p, struct capture *c, const char *in, size_t inlen, int timeout_ms)
{
	struct pollfd pfd[4];
	long long deadline = now_ms() + timeout_ms;
	size_t off = 0;
	ssize_t n;
	int nfd, pty = p->pty_fd;

	if (p->in_fd != -1 && inlen == 0) {
		close(p->in_fd);
		p->in_fd = -1;
	}
	while (p->out_fd != -1 || p->err_fd != -1 || pty != -1 || p->in_fd != -1) {
		assert_true(now_ms() < deadline);
		nfd = 0;
		pfd[nfd++] = (struct pollfd){.fd = p->out_fd, .events = POLLIN};
		pfd[nfd++] = (struct pollfd){.fd = p->err_fd, .events = POLLIN};
		pfd[nfd++] = (struct pollfd){.fd = pty, .events = POLLIN};
		pfd[nfd++] = (struct pollfd){.fd = p->in_fd, .events = POLLOUT};
		if (poll(pfd, nfd, 100) <= 0)
			continue;
		if (pfd[0].revents)
			pump_read(&p->out_fd, c->out, &c->outlen, 0);
		if (pfd[1].revents)
			pump_read(&p->err_fd, c->err, &c->errlen, 0);
		if (pfd[2].revents)
			pump_read(&pty, c->out, &c->outlen, 1);
		if (pfd[3].revents) {
			n = write(p->in_fd, in + off, inlen - off);
			if (n > 0)
				off += (size_t)n;
			else
				assert_true(n == -1 && errno == EAGAIN);
			if (off == inlen) {
				close(p->in_fd);
				p->in_fd = -1;
			}
		}
	}
}

/* Wait for pid for at most timeout_ms; SIGKILL it and fail on timeout. */
static inline int
wait_status(pid_t pid, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	int status;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		assert_int_equal(r, 0);
		if (now_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fail_msg("pid %d did not exit in %d ms", (int)pid, timeout_ms);
		}
		usleep(2000);
	}
}

/* Spawn, collect all output (feeding in), reap; returns the wait status. */
static inline int
run(const struct spawn_opts *o, struct capture *c, const char *in, size_t inlen)
{
	struct spawn_proc p;
	char *cause = NULL;
	int r, st;

	memset(c, 0, sizeof *c);
	r = spawn_start(o, &p, &cause);
	if (r != 0)
		fail_msg("spawn_start: %d %s", r, cause);
	pump(&p, c, in, inlen, 10000);
	st = wait_status(p.pid, 10000);
	spawn_proc_close(&p);
	spawn_release(&p); /* its cgroup, when it has one */
	return st;
}

/* Read the state, ppid and pgrp of a process from /proc; 0, or -1 if it is gone. */
static inline int
proc_stat(pid_t pid, char *state, pid_t *ppid, pid_t *pgrp, int *tty)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd, pp, pg, sid, t;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL ||
		sscanf(p, ") %c %d %d %d %d", state, &pp, &pg, &sid, &t) != 5)
		return -1;
	*ppid = pp;
	*pgrp = pg;
	*tty = t;
	return 0;
}

/* Count processes in process group pgrp (zombies included), or whose parent is ppid. */
static inline int
count_procs(pid_t pgrp, pid_t ppid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char st;
	pid_t pp, pg;
	int n = 0, tty;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		if (proc_stat((pid_t)strtol(e->d_name, NULL, 10), &st, &pp, &pg, &tty) != 0)
			continue;
		if ((pgrp > 0 && pg == pgrp) || (ppid > 0 && pp == ppid))
			n++;
	}
	closedir(d);
	return n;
}

/*
 * Before the tests run: orphaned grandchildren come back to us, to be checked and reaped, and
 * SIGPIPE is ignored as the daemon ignores it (a child may close its stdin early). 0, or -1.
 */
static inline int
reaper_setup(void)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

#endif
