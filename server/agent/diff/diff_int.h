/*
 * Internals shared by diff.c (lines, ids, the Myers search) and diff_hunks.c (compaction,
 * replace folding, hunks, printing). Not for use outside server/agent/diff*.c.
 */
#ifndef DIFF_INT_H
#define DIFF_INT_H

#include <stddef.h>
#include <stdint.h>

#include "protocol/buf.h"

enum diff_tag { OP_EQ, OP_DEL, OP_INS, OP_REP };

/* One run: old lines [oi, oi + ol), new lines [ni, ni + nl); an equal run has ol == nl. */
struct diff_op {
	enum diff_tag tag;
	size_t oi, ol, ni, nl;
};

/* A line of one text, its terminator included. */
struct diff_line {
	const char *p;
	size_t n;
};

/* Both texts as lines and line ids (equal lines, equal ids), and the ops found so far. */
struct diff_ctx {
	struct diff_line *ol, *nl;
	uint32_t *a, *b; /* ids of old and new lines */
	size_t na, nb;
	ptrdiff_t *vf, *vb, off; /* Myers' furthest-reaching x per diagonal, both directions */
	size_t cost;		 /* work spent, against DIFF_MAX_COST */
	struct buf ops;		 /* struct diff_op[] */
};

#define OPS(c)	((struct diff_op *)(c)->ops.ptr)
#define NOPS(c) ((c)->ops.len / sizeof(struct diff_op))

/* Split both texts, give lines ids and run the search: c->ops gets the raw runs. */
int diff_ctx_run(
	struct diff_ctx *c, const char *old, size_t old_len, const char *new, size_t new_len);
void diff_ctx_free(struct diff_ctx *c);

#endif
