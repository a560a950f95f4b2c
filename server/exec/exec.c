/*
 * A process on the loop (exec.h): start, reaping, the timeout, the drain deadline after the
 * exit, teardown and `done`. Its streams and stdin are in exec_stream.c.
 *
 * Rules: the state moves RUNNING -> DRAINING -> DONE, never back; `done` runs once, at DONE,
 * after the process tree was released (no descendant outlives it: spawn_release). Kill
 * state lives in the spawn handle, so a reaped pid is never signalled again.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec_int.h"
#include "io/log.h"
#include "protocol/xmalloc.h"

static void exec_child_cb(struct ev_loop *, ev_child *, int);
static void exec_timeout_cb(struct ev_loop *, ev_timer *, int);
static void exec_drain_cb(struct ev_loop *, ev_timer *, int);
static void exec_orphan_child_cb(struct ev_loop *, ev_child *, int);
static void exec_orphan_deadline_cb(struct ev_loop *, ev_timer *, int);

/*
 * A sandboxed process freed while it runs (its owner went: a thread unloaded, a shell
 * snapshot dropped). Its sandbox's init was told to die and is cleaning up: it unmounts and
 * removes the placeholders it made on the host (`.git`, `.codex` in /tmp, the cwd...).
 * Releasing the tree at once would SIGKILL the init half-way and leave them behind, so the
 * spawn is kept until the init is reaped (or EXEC_ORPHAN_GRACE passed), then released.
 */
#define EXEC_ORPHAN_GRACE 5.0 /* seconds the init gets before the tree is killed */

struct exec_orphan {
	struct ev_loop *loop;
	ev_child child;
	ev_timer deadline;
	struct spawn_proc sp;
	struct exec_orphan *next, **prevp; /* exec_orphans: still held (a daemon exiting now) */
};

static struct exec_orphan *exec_orphans;

struct exec_proc *
exec_start(const struct exec_opts *o, struct spawn_proc *sp)
{
	struct exec_proc *p = xcalloc(1, sizeof *p);

	p->o = *o;
	p->o.head[0] = o->head[0] != NULL ? xstrdup(o->head[0]) : NULL;
	p->o.head[1] = o->head[1] != NULL ? xstrdup(o->head[1]) : NULL;
	p->state = EXEC_RUNNING;
	p->pid = sp->pid;
	p->sp = *sp;
	p->sp.in_fd = p->sp.out_fd = p->sp.err_fd = p->sp.pty_fd = -1;
	if (sp->pty_fd >= 0)
		p->flags |= EXEC_PTY;
	if (o->stdin_enabled)
		p->flags |= EXEC_STDIN_OPEN;
	ev_child_init(&p->child, exec_child_cb, p->pid, 0);
	ev_child_start(o->loop, &p->child);
	ev_init(&p->drain, exec_drain_cb);
	ev_init(&p->timeout, exec_timeout_cb);
	if (o->timeout > 0) {
		ev_timer_set(&p->timeout, o->timeout, 0.);
		ev_timer_start(o->loop, &p->timeout);
	} else if (o->timeout == 0) {
		/*
		 * Timed out before it started: killed now, and whatever it managed to write
		 * meanwhile (this thread may lose the CPU between the spawn and here) is dropped,
		 * as if the kill had come first.
		 */
		p->flags |= EXEC_TIMED_OUT | EXEC_MUTED;
		exec_kill(p);
	}
	exec_stream_init(p, &p->out, (p->flags & EXEC_PTY) ? sp->pty_fd : sp->out_fd, 0);
	exec_stream_init(p, &p->err, sp->err_fd, 1);
	exec_stdin_init(p, sp->in_fd);
	sp->pty_fd = sp->out_fd = sp->err_fd = sp->in_fd = -1; /* transferred */
	sp->cg = NULL;
	return p;
}

/* Kill the whole tree now (terminate, timeout, shutdown). */
void
exec_kill(struct exec_proc *p)
{
	spawn_kill(&p->sp, SIGKILL);
}

static void
exec_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct exec_proc *p = container_of(w, struct exec_proc, timeout);

	if (p->state != EXEC_RUNNING)
		return;
	log_debug("exec: pid %d timed out", (int)p->pid);
	p->flags |= EXEC_TIMED_OUT;
	exec_kill(p);
}

static void
exec_child_cb(struct ev_loop *loop, ev_child *w, int revents)
{
	struct exec_proc *p = container_of(w, struct exec_proc, child);

	ev_child_stop(loop, w);
	ev_timer_stop(loop, &p->timeout);
	p->status = w->rstatus;
	p->pid = -1;
	p->state = EXEC_DRAINING;
	spawn_reaped(&p->sp);
	if (p->out.eof)
		exec_stream_close(p, &p->out);
	if (p->out.fd >= 0 || p->err.fd >= 0) {
		ev_timer_set(
			&p->drain, (p->flags & EXEC_PTY) ? EXEC_DRAIN_PTY : EXEC_DRAIN_PIPE, 0.);
		ev_timer_start(loop, &p->drain);
	}
	exec_check(p);
}

/* After exit, something (a grandchild) still holds the output open: stop waiting for it. */
static void
exec_drain_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct exec_proc *p = container_of(w, struct exec_proc, drain);

	if (p->out.paused || p->err.paused || p->out.held || p->err.held) {
		/* The client (or the owner) is slow, not the child: never drop output for that. */
		ev_timer_set(w, 0.1, 0.);
		ev_timer_start(loop, w);
		return;
	}
	/*
	 * Something outlived the leader and holds the output: kill its cgroup (without cgroups
	 * the reaped leader's group is not signalled, its id may be reused: we stop reading and
	 * the orphans die when no command is left), then take what is buffered.
	 */
	exec_kill(p);
	if (p->out.fd >= 0 && !p->out.eof)
		exec_stream_read(p, &p->out);
	if (p->err.fd >= 0 && !p->err.eof)
		exec_stream_read(p, &p->err);
	exec_stream_close(p, &p->out);
	exec_stream_close(p, &p->err);
	exec_check(p);
}

/* Finished once reaped and every stream is at EOF: release the tree, then tell the owner. */
void
exec_check(struct exec_proc *p)
{
	if (p->state != EXEC_DRAINING || p->out.fd >= 0 || p->err.fd >= 0)
		return;
	p->state = EXEC_DONE;
	ev_timer_stop(p->o.loop, &p->drain);
	if (p->in_fd >= 0) {
		ev_io_stop(p->o.loop, &p->in_io);
		close(p->in_fd);
		p->in_fd = -1;
	}
	/* No descendant outlives its command: what is left of the tree dies now. */
	spawn_release(&p->sp);
	p->o.done(p, p->o.arg);
}

/* Queue stdin bytes and/or close stdin; 0, or -1 with *why (exec_stdin.c). */
int
exec_write(struct exec_proc *p, const char *data, size_t n, int close_stdin, const char **why)
{
	return exec_stdin_queue(p, data, n, close_stdin, why);
}

/* Resume reading streams paused by a congested output queue. */
void
exec_resume(struct exec_proc *p)
{
	struct exec_stream *s[2] = {&p->out, &p->err};

	for (int i = 0; i < 2; i++) {
		if (s[i]->paused) {
			s[i]->paused = 0;
			exec_stream_update(p, s[i]);
		}
	}
}

/* The owner stops (on) or resumes reading a stream, beside the queue's congestion. */
void
exec_hold(struct exec_proc *p, int stream, int on)
{
	struct exec_stream *s = stream == 0 ? &p->out : &p->err;

	s->held = on != 0;
	exec_stream_update(p, s);
}

int
exec_resize(struct exec_proc *p, unsigned short rows, unsigned short cols)
{
	if (!(p->flags & EXEC_PTY) || p->out.fd < 0)
		return -ENOTTY;
	return spawn_pty_resize(p->out.fd, rows, cols);
}

enum exec_state
exec_state(const struct exec_proc *p)
{
	return p->state;
}

pid_t
exec_pid(const struct exec_proc *p)
{
	return p->pid;
}

int
exec_stdin_enabled(const struct exec_proc *p)
{
	return p->o.stdin_enabled;
}

int
exec_timed_out(const struct exec_proc *p)
{
	return (p->flags & EXEC_TIMED_OUT) != 0;
}

int
exec_exit_code(const struct exec_proc *p)
{
	if (p->flags & EXEC_TIMED_OUT)
		return 124;
	if (WIFEXITED(p->status))
		return WEXITSTATUS(p->status);
	if (WIFSIGNALED(p->status))
		return 128 + WTERMSIG(p->status);
	return -1;
}

const struct buf *
exec_output(const struct exec_proc *p, int stream)
{
	return stream == 0 ? &p->out.cap : &p->err.cap;
}

int
exec_clipped(const struct exec_proc *p)
{
	return (p->flags & EXEC_CLIPPED) != 0;
}

/* Free a process; one still running (the connection closes) is killed first. */
/* The orphan's init is reaped: its cleanup is over, what is left goes now. */
static void
exec_orphan_child_cb(struct ev_loop *loop, ev_child *w, int revents)
{
	struct exec_orphan *o = container_of(w, struct exec_orphan, child);

	(void)revents;
	ev_child_stop(loop, w);
	ev_timer_stop(loop, &o->deadline);
	spawn_reaped(&o->sp);
	spawn_release(&o->sp);
	if (o->next != NULL)
		o->next->prevp = o->prevp;
	*o->prevp = o->next;
	free(o);
}

/* The init took too long: kill the tree (the reap still frees the orphan). */
static void
exec_orphan_deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct exec_orphan *o = container_of(w, struct exec_orphan, deadline);

	(void)loop;
	(void)revents;
	log_warn("exec: sandbox of pid %d still cleaning up after %.0f s: killed", (int)o->sp.pid,
		EXEC_ORPHAN_GRACE);
	spawn_release(&o->sp);
}

/* A process freed while it runs: killed, and its tree released (see exec_orphan). */
static void
exec_abandon(struct exec_proc *p)
{
	struct exec_orphan *o;

	exec_kill(p);
	if (p->pid <= 0 || !(p->sp.state & SPAWN_P_SUPERVISED) || (p->sp.state & SPAWN_P_REAPED)) {
		spawn_release(&p->sp);
		return;
	}
	o = xcalloc(1, sizeof *o);
	o->loop = p->o.loop;
	o->next = exec_orphans;
	if (o->next != NULL)
		o->next->prevp = &o->next;
	o->prevp = &exec_orphans;
	exec_orphans = o;
	o->sp = p->sp; /* its cgroup and linger fd are the orphan's now */
	p->sp.cg = NULL;
	p->sp.linger_fd = -1;
	ev_child_stop(p->o.loop, &p->child);
	ev_child_init(&o->child, exec_orphan_child_cb, p->pid, 0);
	ev_child_start(o->loop, &o->child);
	ev_timer_init(&o->deadline, exec_orphan_deadline_cb, EXEC_ORPHAN_GRACE, 0.);
	ev_timer_start(o->loop, &o->deadline);
}

int
exec_orphans_live(void)
{
	return exec_orphans != NULL;
}

void
exec_free(struct exec_proc *p)
{
	if (p == NULL)
		return;
	if (p->state != EXEC_DONE)
		exec_abandon(p);
	ev_child_stop(p->o.loop, &p->child);
	ev_timer_stop(p->o.loop, &p->timeout);
	ev_timer_stop(p->o.loop, &p->drain);
	ev_io_stop(p->o.loop, &p->out.io);
	ev_io_stop(p->o.loop, &p->err.io);
	ev_io_stop(p->o.loop, &p->in_io);
	if (p->out.fd >= 0)
		close(p->out.fd);
	if (p->err.fd >= 0)
		close(p->err.fd);
	if (p->in_fd >= 0)
		close(p->in_fd);
	*p->o.budget -= p->out.cap.len + p->err.cap.len;
	buf_free(&p->out.cap);
	buf_free(&p->err.cap);
	buf_free(&p->in);
	free((char *)p->o.head[0]);
	free((char *)p->o.head[1]);
	free(p);
}
