/*
 * Reading rollouts as a stream of records, never a whole file at once.
 *   - Lines are at most ROLLOUT_LINE_MAX bytes; a longer line is skipped (counted), not read.
 *   - A line that is not a JSON object, or lacks a string "type", is skipped (counted): a torn
 *     or hostile line never stops a read. A last line without '\n' is a torn write: ignored.
 *   - Unknown record types are returned like any other; the caller decides what to ignore.
 *   - Records without "ordinal" (older upstream versions) read the same, with ordinal -1.
 * A filter on (type, payload.type), checked on the raw text before parsing, lets history and
 * head/tail scans skip the bulk of a file (model requests, tool output) at memchr speed.
 */
#ifndef ROLLOUT_READER_H
#define ROLLOUT_READER_H

#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#define ROLLOUT_BACK_MAX (4u << 20) /* how far a backwards scan looks before giving up */
#define ROLLOUT_TYPE_MAX 48	    /* longest record or payload type told apart */

/* One record; root and payload are borrowed until the next call. */
struct rollout_rec {
	off_t off;	   /* where the line starts in the file */
	size_t len;	   /* its length without the '\n' */
	const char *type;  /* record type */
	const char *ptype; /* payload.type, "" when none */
	int64_t ms;	   /* timestamp, 0 when missing or unreadable */
	int64_t ordinal;   /* -1 when missing */
	json_t *root;	   /* NULL for a raw record (rollout_reader_raw) */
	json_t *payload;   /* NULL when missing, or raw */
	const char *line;  /* the record's text (len bytes), valid until the next call */
};

/* Whether a record with these types is wanted (parsed and returned). */
typedef int (*rollout_filter_fn)(const char *type, const char *ptype);

struct rollout_reader;

/*
 * Read path's records in [from, to) (to -1: to the end). The offsets are the virtual ones of
 * path's segment chain (rollout_chain.h): a base's bytes are below 0, path's own are its file
 * offsets, and from 0 starts at the oldest base, so [0, -1) is the thread's whole history.
 * 0 or -errno.
 */
int rollout_reader_open(const char *path, off_t from, off_t to, struct rollout_reader **out);
/* Only return records the filter accepts (NULL: all). */
void rollout_reader_filter(struct rollout_reader *r, rollout_filter_fn fn);
/* The same with state: fn(arg, type, ptype) may change its mind as the read goes on. */
void rollout_reader_filter_arg(struct rollout_reader *r,
	int (*fn)(void *arg, const char *type, const char *ptype), void *arg);
/*
 * Lean mode: session_meta's bulky members (base_instructions, dynamic_tools: upstream's prompt,
 * 20 KB and more) are cut out of the text before it is parsed and read as null. Summaries and
 * histories never need them; copies (fork) must not use this mode.
 */
void rollout_reader_lean(struct rollout_reader *r, int on);
/*
 * Raw records: a wanted line whose (type, payload type) fn accepts is returned unparsed
 * (root NULL, type and ptype from its text) for a caller that reads only part of it.
 */
void rollout_reader_raw(struct rollout_reader *r, rollout_filter_fn fn);
/* The next record: 1, 0 at the end, -errno on a read error. */
int rollout_reader_next(struct rollout_reader *r, struct rollout_rec *rec);
/* The raw line of the last record returned (borrowed, not NUL-terminated: rec.len bytes). */
const char *rollout_reader_line(struct rollout_reader *r);
/* Lines skipped as oversized, unparsable or not records. */
size_t rollout_reader_skipped(struct rollout_reader *r);
/* Bytes consumed so far (the offset after the last whole line seen). */
off_t rollout_reader_offset(struct rollout_reader *r);
void rollout_reader_close(struct rollout_reader *r);

/*
 * Peek at a line's record type and payload type without parsing it (upstream writes
 * "timestamp","ordinal","type","payload" in that order). 0, or -1 when the text does not have
 * that shape (the caller then parses it).
 */
int rollout_peek(
	const char *line, size_t len, char type[ROLLOUT_TYPE_MAX], char ptype[ROLLOUT_TYPE_MAX]);
/* Fill rec from a parsed line (root borrowed); 0, or -1 when it is not a record. */
int rollout_rec_from(json_t *root, struct rollout_rec *rec);

/*
 * Call cb with each complete line of fd, last line first, ending at `end`, looking back at most
 * max bytes; cb returns nonzero to stop. 1 when cb stopped, 0 when the lines ran out, -errno.
 */
int rollout_scan_back(int fd, off_t end, size_t max,
	int (*cb)(void *arg, const char *line, size_t len, off_t off), void *arg);
/* The offset just after fd's last '\n' (0 when none): where whole lines end. */
int rollout_good_end(int fd, off_t *good);
/* Cut fd back to good when it is longer (a torn last line); 0 or -errno. */
int rollout_cut_torn(int fd, off_t good);

#endif
