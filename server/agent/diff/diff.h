/*
 * Line diffs as upstream prints them. Upstream (codex-rs) renders every diff with the
 * `similar` crate 2.7 (TextDiff::from_lines, Myers, then its Compact and Replace passes,
 * then grouped into hunks); diff.c is our own implementation of that pipeline, so the same
 * two texts give the same hunks byte for byte:
 *   - FileUpdateChange.diff of an update: diff_unified(old, new, context 1, no header);
 *   - turn/diff/updated: the turn tracker below (git headers, context 3).
 *
 * Bounded: the Myers search stops after DIFF_MAX_COST steps (upstream has no limit); the
 * part still undecided then becomes one deletion plus one insertion, as similar does when
 * its deadline passes. Every output goes into a struct buf whose ceiling the caller sets.
 */
#ifndef DIFF_H
#define DIFF_H

#include <stddef.h>

#include "protocol/buf.h"

/* Work units (diagonal steps and line comparisons) one diff may spend searching. */
#define DIFF_MAX_COST (64u * 1024 * 1024)

/*
 * Append to out the unified diff of old -> new (lines split after "\n", "\r\n" or a lone
 * "\r"), with `context` lines around changes; "--- old_header" / "+++ new_header" first
 * when both headers are given and the texts differ. Nothing is appended for equal texts.
 * Invalid UTF-8 in a line is printed lossily (U+FFFD). 0, or -E2BIG past out's ceiling.
 */
int diff_unified(const char *old, size_t old_len, const char *new, size_t new_len, unsigned context,
	const char *old_header, const char *new_header, struct buf *out);

/* Git's blob id of data: SHA-1 of "blob <len>\0" + data, as 40 lowercase hex digits. */
void diff_git_blob_oid(const void *data, size_t len, char out[41]);

/*
 * The turn's aggregated diff (upstream's TurnDiffTracker): the net change of every file a
 * turn's patches touched, from its content before the first patch to its content now,
 * rendered as git does ("diff --git a/x b/x", "new file mode 100644", "index a..b",
 * unified diff with 3 context lines). Paths are shown relative to the display root when
 * they are under it. Contents are kept in memory up to a ceiling.
 */
struct diff_turn;

/* A tracker showing paths relative to display_root (may be NULL); keeps <= max_bytes. */
struct diff_turn *diff_turn_new(const char *display_root, size_t max_bytes);
void diff_turn_free(struct diff_turn *t);
/*
 * Record one successful change (paths absolute). A NULL content pointer means "absent":
 * `overwritten` is what an add replaced, `overwritten_move` what a move replaced at its
 * destination. 0, or -E2BIG when the tracker's ceiling would be passed (the tracker is
 * then poisoned and diff_turn_unified returns -E2BIG).
 */
int diff_turn_add(struct diff_turn *t, const char *path, const char *content, size_t len,
	const char *overwritten, size_t overwritten_len);
int diff_turn_delete(struct diff_turn *t, const char *path, const char *content, size_t len);
int diff_turn_update(struct diff_turn *t, const char *path, const char *move_path, const char *old,
	size_t old_len, const char *overwritten_move, size_t overwritten_move_len, const char *new,
	size_t new_len);
/*
 * The aggregated diff into out (appended); 0 with *empty set when nothing differs (upstream
 * sends no notification then), or -E2BIG.
 */
int diff_turn_unified(const struct diff_turn *t, struct buf *out, int *empty);

#endif
