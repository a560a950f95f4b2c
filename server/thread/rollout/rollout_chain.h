/*
 * A thread's history across segment files, as upstream 0.169 keeps a reverted (or forked)
 * thread: a file whose session_meta carries history_base {thread_id, end_ordinal_exclusive,
 * end_byte_offset} continues the first end_byte_offset bytes of its base, the file whose rollout
 * id (rollout_name_rollout_id) is history_base.thread_id; the base may be a segment itself.
 *
 * The chain is read as one stream of virtual offsets: the current file's bytes keep their real
 * offsets [0, size), and its bases' kept bytes come before them at negative offsets, oldest
 * first. So a file's size, a writer's offset and every span inside the current file mean what
 * they meant for a plain rollout, and a plain rollout is a chain of one part.
 */
#ifndef ROLLOUT_CHAIN_H
#define ROLLOUT_CHAIN_H

#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#define ROLLOUT_CHAIN_MAX 32 /* links followed; a longer (or cyclic) chain is cut there */

/* One file of a chain: bytes [0, len) of it sit at virtual [voff, voff + len). */
struct rollout_part {
	char *path;
	int fd;	   /* O_RDONLY, owned */
	off_t len; /* bytes kept; -1 for the current file (to its end) */
	off_t voff;
	int64_t end_ordinal; /* the base's end_ordinal_exclusive (-1: the current file) */
	char rid[37];	     /* the file's rollout id */
};

struct rollout_chain {
	size_t n; /* parts, oldest first; the last is the current file */
	struct rollout_part v[ROLLOUT_CHAIN_MAX];
};

/* A segment's history_base, read from its first line. */
struct rollout_base {
	char rid[37]; /* history_base.thread_id: the base file's rollout id */
	int64_t end_ordinal, end_byte;
	char forked_from[37]; /* session_meta.forked_from_id, "" when none */
};

/*
 * The chain of path: fd (owned by the chain from here, even on failure; -1 to open path), then
 * its bases. A base that cannot be found or does not fit (end past its size, not at a line
 * boundary) ends the chain there: the history read is the part found. 0 or -errno (path only).
 */
int rollout_chain_open(const char *path, int fd, struct rollout_chain **out);
void rollout_chain_free(struct rollout_chain *c);
/* Where virtual offset voff lies: the part's index, its real offset in *real; -1 if nowhere. */
int rollout_chain_locate(const struct rollout_chain *c, off_t voff, off_t *real);
/* fd's history_base: 1 (filled), 0 (a plain rollout), -errno. */
int rollout_base_read(int fd, struct rollout_base *b);
/* The file holding rollout id rid of thread tid (or of forked_from), near path; heap or NULL. */
char *rollout_base_find(
	const char *path, const char *tid, const char *forked_from, const char *rid);
/*
 * Every file of thread tid that path (its current file) stands on, and its other segments in
 * the same folders; path last (a JSON array of paths).
 */
json_t *rollout_thread_files(const char *path, const char *tid);
/* path's first line, parsed (its session_meta record), or NULL. */
json_t *rollout_chain_head(const char *path);
/* CODEX_HOME of a rollout path (sessions/YYYY/MM/DD/ or archived_sessions/), heap or NULL. */
char *rollout_path_home(const char *path);

#endif
