/*
 * A process on the loop: its output streams (captured, or sent as frames straight into the
 * output queue), its stdin, timeout, reaping and teardown. It knows nothing of JSON-RPC: its
 * owner (api/command_exec.c, and the agent's shell tool) says at start what a frame looks
 * like and is told through a callback when the process is finished.
 *
 * Ordering rule: a process is finished only when it has been reaped AND every output stream
 * is at EOF (or the drain deadline after the reap passed). Then, and only then, `done` runs
 * (once); every frame it produced is already in the output queue, so an answer the owner
 * writes from `done` follows them. `done` is the last thing exec/ does with the process, so
 * the owner may free it there (exec_free) or later.
 */
#ifndef EXEC_H
#define EXEC_H

#include <stddef.h>
#include <sys/types.h>

#include <ev.h>

#include "protocol/buf.h"
#include "sandbox/spawn/spawn.h"

#define EXEC_FRAME	    (64 * 1024)		/* decoded bytes per frame at most */
#define EXEC_ANSWER_MAX	    (64 * 1024 * 1024)	/* a capture, and an answer built from it */
#define EXEC_CAPTURE_BUDGET (256 * 1024 * 1024) /* every capture of one owner together */
#define EXEC_STDIN_MAX	    (8 * 1024 * 1024)	/* stdin bytes queued per process */
#define EXEC_DRAIN_PIPE	    2.0			/* seconds to drain pipes after exit */
#define EXEC_DRAIN_PTY	    0.5			/* and a PTY */

struct outq;
struct exec_proc;

/* Where a process is in its life. */
enum exec_state {
	EXEC_RUNNING,  /* not reaped yet */
	EXEC_DRAINING, /* reaped; output still open (a grandchild may hold it) */
	EXEC_DONE,     /* reaped and every stream closed: `done` ran */
};

/* What the owner decides at start. */
struct exec_opts {
	struct ev_loop *loop;
	struct outq *q;	     /* frames go here; its congestion pauses streamed reads */
	size_t cap;	     /* per stream: bytes kept or streamed at most (SIZE_MAX: no cap) */
	double timeout;	     /* seconds; < 0: none */
	int streaming;	     /* output goes out as frames instead of being captured */
	int frames;	     /* ... and the frames are wanted (else read and dropped) */
	int stdin_enabled;   /* stdin bytes may be written (a pipe, or the PTY) */
	const char *head[2]; /* each frame of stdout, stderr starts with this text (copied) */
	/* Write the end of a frame line after its base64 (capReached, timestamp, "}\n"). */
	size_t (*frame_tail)(char *out, size_t room, int cap_reached);
	/*
	 * With streaming: the owner takes each read's bytes itself (the agent's command items),
	 * instead of frames; the congestion of q still pauses reading.
	 */
	void (*output)(void *arg, int stream, const char *data, size_t n);
	size_t *budget; /* bytes held by every capture of the owner (EXEC_CAPTURE_BUDGET) */
	void (*done)(struct exec_proc *p, void *arg);
	void *arg;
};

/* Take over a spawned process (its fds and cgroup; sp is left empty). */
struct exec_proc *exec_start(const struct exec_opts *o, struct spawn_proc *sp);
/* Free a finished process (or kill and free one still running: the connection closes). */
void exec_free(struct exec_proc *p);
/* Sandboxes freed while running whose init is still tearing down (bounded); a daemon that
 * exits waits for them, so that their placeholders are gone from the host first. */
int exec_orphans_live(void);

/* Kill the whole tree now (terminate, timeout, shutdown). */
void exec_kill(struct exec_proc *p);
/* Queue stdin bytes and/or close stdin; 0, or -1 with *why (static text) when refused. */
int exec_write(struct exec_proc *p, const char *data, size_t n, int close_stdin, const char **why);
/* Resize the PTY; 0, -ENOTTY without one, or -errno. */
int exec_resize(struct exec_proc *p, unsigned short rows, unsigned short cols);
/* The output queue drained: resume streams paused by its congestion. */
void exec_resume(struct exec_proc *p);
/*
 * The owner stops (on 1) or resumes (0) reading stream 0 (stdout) or 1 (stderr), also from its
 * output callback: no more bytes of that stream reach it until it resumes (the MCP client while
 * it parses a big line beside the loop). A held stream keeps its process from finishing.
 */
void exec_hold(struct exec_proc *p, int stream, int on);

enum exec_state exec_state(const struct exec_proc *p);
pid_t exec_pid(const struct exec_proc *p);
int exec_stdin_enabled(const struct exec_proc *p);
/* The exit code upstream reports: the code, 128+signal, 124 after the timeout. */
int exec_exit_code(const struct exec_proc *p);
/* Whether the timeout killed it (a command exiting 124 by itself did not time out). */
int exec_timed_out(const struct exec_proc *p);
/* A captured stream (0 stdout, 1 stderr); whether bytes were dropped for a ceiling. */
const struct buf *exec_output(const struct exec_proc *p, int stream);
int exec_clipped(const struct exec_proc *p);

#endif
