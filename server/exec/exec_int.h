/*
 * What exec.c (the process: start, reap, timeout, drain, done, free) shares with
 * exec_stream.c (its output streams and frames) and exec_stdin.c (its stdin).
 */
#ifndef EXEC_INT_H
#define EXEC_INT_H

#include "exec.h"

#define EXEC_TIMED_OUT	 0x01 /* the timeout killed it */
#define EXEC_PTY	 0x02 /* out.fd is the PTY master, also stdin */
#define EXEC_STDIN_OPEN	 0x04 /* accepting writes */
#define EXEC_STDIN_CLOSE 0x08 /* close once the queue is empty */
#define EXEC_LAST_NL	 0x10 /* the last byte written to a PTY was a newline */
#define EXEC_CLIPPED	 0x20 /* a capture dropped bytes for a ceiling or the budget */
#define EXEC_MUTED	 0x40 /* timed out before it started: what it wrote is dropped */

struct exec_stream {
	struct exec_proc *proc;
	int fd;		/* -1 once closed */
	int eof;	/* no more output (a PTY master stays open until the reap) */
	ev_io io;	/* EV_READ; for a PTY also EV_WRITE while stdin has bytes queued */
	int which;	/* 0 stdout, 1 stderr */
	struct buf cap; /* buffered capture (not streaming), at most EXEC_ANSWER_MAX */
	size_t total;	/* bytes kept so far, counted against the cap */
	int dropped;	/* bytes past the cap were discarded */
	int cap_sent;	/* the capReached frame went out */
	int paused;	/* reading stopped while the output queue is congested */
	int held;	/* reading stopped by the owner (exec_hold) */
};

struct exec_proc {
	struct exec_opts o; /* heads are our copies */
	enum exec_state state;
	unsigned flags;	      /* EXEC_* above */
	pid_t pid;	      /* -1 once reaped */
	struct spawn_proc sp; /* kill state and cgroup (its fds belong to the streams) */
	int status;	      /* wait status */
	ev_child child;
	ev_timer timeout;
	ev_timer drain;
	struct exec_stream out, err;
	int in_fd; /* stdin pipe write end, -1 (for a PTY see out.fd) */
	ev_io in_io;
	struct buf in; /* stdin bytes queued, at most EXEC_STDIN_MAX */
	size_t in_off; /* how many of them were written */
};

/* exec_stream.c */
void exec_stream_init(struct exec_proc *p, struct exec_stream *s, int fd, int which);
int exec_stream_read(struct exec_proc *p, struct exec_stream *s);
void exec_stream_close(struct exec_proc *p, struct exec_stream *s);
void exec_stream_update(struct exec_proc *p, struct exec_stream *s);
/* exec_stdin.c */
void exec_stdin_flush(struct exec_proc *p);
void exec_stdin_shut(struct exec_proc *p);
int exec_stdin_queue(
	struct exec_proc *p, const char *data, size_t n, int close_stdin, const char **why);
void exec_stdin_init(struct exec_proc *p, int fd);
/* exec.c */
void exec_check(struct exec_proc *p);

#endif
