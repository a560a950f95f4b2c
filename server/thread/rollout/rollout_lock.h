/*
 * The active-writer lock of a rollout (issue 21: two daemons appending to one thread
 * interleaved their records, and completed turns read back as interrupted). A daemon holds it
 * on its writer's fd for as long as that fd is open: from thread/start or resume until unload
 * (or a suspended writer's close), and the kernel drops it the moment the fd closes, crash
 * included. Unlike upstream's 30-minute lease (openai/codex#37403) nothing outlives the writer.
 *
 * Both locks are open-file-description locks (F_OFD_SETLK) far beyond the end of the file, so
 * they never meet a reader, survive the daemon's other opens and closes of the same file
 * (POSIX locks would not), and outlive no child's exec (O_CLOEXEC fds; a child between fork
 * and exec shares them, so a killed daemon's lock can last until its children's sandbox
 * set-ups end: rollout_writer_open says -EAGAIN then): the mutex byte at
 * ROLLOUT_LOCK_BASE - 1, and one byte at ROLLOUT_LOCK_BASE + pid that names the holder (an OFD
 * lock does not report its pid, so the second writer finds it by where it is).
 */
#ifndef ROLLOUT_LOCK_H
#define ROLLOUT_LOCK_H

#include <sys/types.h>

#define ROLLOUT_LOCK_BASE ((off_t)1 << 40)
#define ROLLOUT_LOCK_PIDS ((off_t)1 << 23) /* above Linux's largest pid_max (2^22) */

/* Take the lock on fd (open for writing): 0, -EBUSY with *holder (0: unknown), or -errno. */
int rollout_lock(int fd, pid_t *holder);
/*
 * Give the lock back now: the writer is closing, though a duplicate of its fd (an fdatasync on
 * a worker) may keep the open file description, and with it the lock, a little longer.
 */
void rollout_unlock(int fd);
/* The process holding path's lock: its pid, 0 when none (or it cannot be told), -errno. */
pid_t rollout_lock_holder(const char *path);
/* "process <pid> (<name>)" for messages (heap). */
char *rollout_lock_who(pid_t pid);

#endif
