/*
 * Appending records to one rollout file. Durability rules (docs/threads.md):
 *   - each record is ONE write(2) of a whole '\n'-terminated line on an O_APPEND fd, so a crash
 *     can only tear the last line; a short write is cut back off at once (ftruncate);
 *   - opening an existing rollout cuts a torn last line away before anything is appended, and
 *     continues upstream's `ordinal` numbering from the last valid record (none for files that
 *     never had ordinals);
 *   - nothing already written is ever rewritten; the file is only renamed (archive);
 *   - a writer holds the rollout's active-writer lock (rollout_lock.h) while its fd is open:
 *     create and open fail with -EBUSY, naming the holder, when another process writes it.
 * fdatasync is not done here: rollout_writer_dupfd() hands a duplicate fd to the sync worker so
 * the loop never waits for the disk.
 */
#ifndef ROLLOUT_WRITER_H
#define ROLLOUT_WRITER_H

#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#define ROLLOUT_LINE_MAX (16u << 20) /* the longest record line written or read */

struct rollout_writer;

/* Create a new rollout at path (parents made, O_EXCL); 0 or -errno with *cause. */
int rollout_writer_create(const char *path, struct rollout_writer **out, char **cause);
/*
 * The same, but the file stays out of sight (an O_TMPFILE in its folder, or a dot name where
 * the filesystem has none) until rollout_writer_publish links it at path with what was
 * appended: a crash before that leaves no file, never an empty or half-copied one. Not
 * suspended while hidden. 0 or -errno with *cause (-EEXIST when path exists).
 */
int rollout_writer_create_hidden(const char *path, struct rollout_writer **out, char **cause);
/* Test seam: nonzero makes rollout_writer_create_hidden take the dot-name way (0 in the daemon). */
extern int rollout_writer_no_tmpfile;
/* Link a hidden rollout at its path (never replacing a file there); 0 or -errno with *cause. */
int rollout_writer_publish(struct rollout_writer *w, char **cause);
/* Whether the file is at its path (not a hidden one still unpublished). */
int rollout_writer_published(struct rollout_writer *w);
/* Open an existing rollout to append to it (torn tail cut, ordinal found); 0 or -errno. */
int rollout_writer_open(const char *path, struct rollout_writer **out, char **cause);
/*
 * Append one record {"timestamp","ordinal","type","payload"} stamped ms (0: now); payload is
 * borrowed. 0, -E2BIG (record over ROLLOUT_LINE_MAX, nothing written) or -errno.
 */
int rollout_writer_append(struct rollout_writer *w, int64_t ms, const char *type, json_t *payload);
/*
 * Append a whole record as read from another rollout (a fork's copied history): every top-level
 * key kept, the ordinal replaced by this file's next one. root is borrowed (and modified).
 */
int rollout_writer_append_root(struct rollout_writer *w, json_t *root);
/* A close-on-exec duplicate of the fd for a sync job (the caller closes it); -errno on failure. */
int rollout_writer_dupfd(struct rollout_writer *w);
/* The path now (it changes with rollout_writer_renamed). Borrowed. */
const char *rollout_writer_path(struct rollout_writer *w);
/* Tell the writer its file was renamed (the fd stays valid). */
void rollout_writer_renamed(struct rollout_writer *w, const char *path);
/* The file's size and mtime now (fstat), for the index's staleness check; 0 or -errno. */
int rollout_writer_stat(struct rollout_writer *w, int64_t *size, int64_t *mtime_ns);
/* Bytes in the file as far as this writer knows. */
off_t rollout_writer_size(struct rollout_writer *w);
/* The ordinal the next record gets, -1 for a file without ordinals. */
int64_t rollout_writer_next_ordinal(struct rollout_writer *w);
/*
 * Number a new file's records from next (-1: none): a segment continues its base's ordinals
 * (rollout_chain.h). Only before the first append.
 */
void rollout_writer_set_ordinal(struct rollout_writer *w, int64_t next);
/* Records appended through this writer. */
uint64_t rollout_writer_count(struct rollout_writer *w);
/*
 * Close the fd while the thread is idle (many loaded threads must not hold as many fds); the
 * next append reopens it, and re-reads the tail if the file changed meanwhile.
 */
void rollout_writer_suspend(struct rollout_writer *w);
int rollout_writer_suspended(struct rollout_writer *w);
/* Close (no sync: post one first if it matters). Accepts NULL. */
void rollout_writer_close(struct rollout_writer *w);

#endif
