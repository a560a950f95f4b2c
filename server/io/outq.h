/*
 * The one ordered writer of the protocol stream. Every message enters the queue as one whole
 * '\n'-terminated line (reserve + commit, or push), so nothing can interleave. The queue is
 * flushed from an ev_prepare watcher (once per loop iteration, many messages per write) and
 * EV_WRITE is armed only after EAGAIN. Producers watch the high/low watermarks: above high they
 * stop reading their sources, and they are called back once the queue drains below low.
 */
#ifndef OUTQ_H
#define OUTQ_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <ev.h>

struct outq;

struct outq *outq_new(struct ev_loop *loop, int fd, size_t high, size_t low);
/*
 * A queue handing its bytes to sink instead of an fd (a WebSocket connection frames each
 * line): sink returns the bytes it took, or -1 with errno; EAGAIN means it calls outq_flush
 * once it has room again, anything else breaks the queue.
 */
struct outq *outq_new_sink(struct ev_loop *loop, ssize_t (*sink)(void *, const struct iovec *, int),
	void *arg, size_t high, size_t low);
void outq_free(struct outq *q);
/* Past limit pending bytes the queue breaks (ENOBUFS: a client that stopped reading). */
void outq_set_limit(struct outq *q, size_t limit);

/* Contiguous room for n bytes at the tail; write into it, then outq_commit. */
char *outq_reserve(struct outq *q, size_t n);
/*
 * Make the last reservation n bytes long, keeping the first `keep` bytes written into it;
 * returns where it now starts (it may have moved). For a message whose size is unknown.
 */
char *outq_regrow(struct outq *q, size_t keep, size_t n);
/* Append the first n bytes of the last reservation. */
void outq_commit(struct outq *q, size_t n);

size_t outq_pending(const struct outq *q);
/* True above the high watermark (until the queue falls below the low one). */
int outq_congested(const struct outq *q);
/* Called once each time the queue drains from congested to below the low watermark. */
void outq_set_drain_cb(struct outq *q, void (*cb)(void *), void *arg);
/* True once writing failed (EPIPE or another error): output is discarded from then on. */
int outq_broken(const struct outq *q);
/* Called once when the queue becomes broken. */
void outq_set_broken_cb(struct outq *q, void (*cb)(void *), void *arg);
/* Write what can be written now without blocking; 0, or -1 when broken. */
int outq_flush(struct outq *q);
/* Block (poll) until everything is written or the client took nothing for idle_ms; 0 when
 * empty, -1 otherwise. */
int outq_flush_wait(struct outq *q, int idle_ms);

#endif
