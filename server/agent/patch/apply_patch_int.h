/*
 * Internals of server/agent/apply_patch*.c: the parsed patch, text spans and the Unicode
 * helpers that reproduce Rust's str::trim (White_Space) as upstream relies on it, the
 * context search (seek_sequence), and path resolution. Not for use elsewhere.
 */
#ifndef APPLY_PATCH_INT_H
#define APPLY_PATCH_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "apply_patch.h"

/* Bytes inside a buffer someone else owns; not NUL-terminated. */
struct patch_span {
	const char *p;
	size_t n;
};

/* One @@ chunk of an Update File. */
struct patch_chunk {
	int has_context;
	struct patch_span context; /* the text after "@@ " */
	struct patch_span *old;	   /* lines to find (context and '-') */
	struct patch_span *new;	   /* lines to put instead (context and '+') */
	size_t nold, nnew;
	int eof; /* "*** End of File": old lines are at the end */
};

struct patch_hunk {
	enum apply_patch_kind kind;
	char *path; /* as written (may hold a NUL: path_len says how long) */
	size_t path_len;
	char *move; /* Update with "*** Move to:", or NULL */
	size_t move_len;
	char *contents; /* Add File */
	size_t contents_len;
	struct patch_chunk *chunks;
	size_t nchunks;
};

struct patch {
	char *buf;  /* the trimmed input, lines split in place; spans point here */
	char *text; /* the patch lines joined by "\n" */
	struct patch_hunk *hunks;
	size_t nhunks;
	char *workdir;
};

/*
 * One file a prepared patch touches, keyed by its symlink-free path (for a removal, the
 * path of the entry itself, a link included). It records the file's state when prepared
 * (to refuse a commit on a changed disk) and its state after the patch so far (the
 * overlay that makes a second hunk on the same file see the first one's result).
 */
struct plan_file {
	char *real;  /* the key */
	char *shown; /* the lexical absolute path first used for it (messages) */
	int existed; /* on disk when prepared, with that lstat */
	struct stat st;
	int exists;		     /* after the hunks so far */
	struct apply_patch_text cur; /* its content then (borrowed from the arena) */
	int written;		     /* some hunk writes it */
};

struct apply_patch_plan {
	struct plan_file *f;
	size_t n;
	char **arena; /* every content held: owned here, borrowed by files and changes */
	size_t narena;
	size_t bytes; /* held in all, up to APPLY_PATCH_MAX_TOTAL */
};

/* Write a prepared plan (apply_patch_commit.c). */
int ap_commit(struct apply_patch_plan *plan, char **cause);

/* A leftover of a crashed commit is this old at least before it is removed (ctime). */
#define APPLY_PATCH_STALE_SECS 60
/* Remove the leftovers of crashed commits from a directory (apply_patch_sweep.c); how many. */
int ap_sweep(int dfd);
/* Tests: the age a leftover must have (APPLY_PATCH_STALE_SECS unless set). */
void ap_sweep_set_stale_secs(long secs);
void ap_plan_free(struct apply_patch_plan *plan);

/* Rust's char::is_whitespace (Unicode White_Space). */
int ap_is_space(uint32_t cp);
/* Decode one UTF-8 character of s[0, n) (n > 0); an invalid byte decodes alone as -1. */
size_t ap_utf8_next(const char *s, size_t n, int32_t *cp);
/* Rust's trim_start / trim_end / trim on a span. */
struct patch_span ap_trim_start(struct patch_span s);
struct patch_span ap_trim_end(struct patch_span s);
struct patch_span ap_trim(struct patch_span s);
int ap_span_eq(struct patch_span a, const char *s);

/*
 * upstream's seek_sequence: the first index >= start where pattern occurs in lines, trying
 * exact, then trailing-whitespace-insensitive, then trimmed, then punctuation-normalised
 * comparisons; with eof, only the end of the file is tried. -1 when not found.
 */
ptrdiff_t ap_seek(const struct patch_span *lines, size_t nlines, const struct patch_span *pat,
	size_t npat, size_t start, int eof);

/* A new file content: line texts with their endings, from chunks applied to an old one. */
int ap_apply_chunks(const char *path_shown, const char *old, size_t old_len,
	const struct patch_chunk *chunks, size_t nchunks, char **out, size_t *out_len,
	char **cause);

#endif
