/*
 * From the raw runs of the search to unified diff text (diff.h), as similar 2.7 does it:
 * compaction (each deletion, then each insertion, slid up then down and merged with its
 * neighbours), replace folding (equal runs joined, the changes between them one op,
 * deletions printed first), grouping into hunks with `context` lines, and printing.
 * The quirks are kept on purpose, so hunks match upstream's byte for byte: a deletion never
 * slides (similar measures its slide against the deletion's empty range in the new text).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "diff_int.h"
#include "protocol/utf8.h"
#include "protocol/xmalloc.h"

/* Insert op at index at, keeping the order. */
static int
hunks_insert(struct diff_ctx *c, size_t at, struct diff_op op)
{
	int r;

	if ((r = buf_reserve(&c->ops, sizeof(op))) != 0)
		return r;
	memmove(OPS(c) + at + 1, OPS(c) + at, (NOPS(c) - at) * sizeof(op));
	OPS(c)[at] = op;
	c->ops.len += sizeof(op);
	return 0;
}

/* Remove the op at index at. */
static void
hunks_remove(struct diff_ctx *c, size_t at)
{
	memmove(OPS(c) + at, OPS(c) + at + 1, (NOPS(c) - at - 1) * sizeof(struct diff_op));
	c->ops.len -= sizeof(struct diff_op);
}

/* Both ranges empty (similar's DiffOp::is_empty). */
static int
hunks_empty(const struct diff_op *op)
{
	return op->ol == 0 && op->nl == 0;
}

/* Move an op's start by off and change its length by len (similar's DiffOp::adjust). */
static void
hunks_adjust(struct diff_op *op, ptrdiff_t off, ptrdiff_t len)
{
	op->oi = (size_t)((ptrdiff_t)op->oi + off);
	op->ni = (size_t)((ptrdiff_t)op->ni + off);
	if (op->tag != OP_INS)
		op->ol = (size_t)((ptrdiff_t)op->ol + len);
	if (op->tag != OP_DEL)
		op->nl = (size_t)((ptrdiff_t)op->nl + len);
}

/* Equal old/new lines at the end of old[os, oe) and new[ns, ne) (0 if either is empty). */
static size_t
hunks_suffix(const struct diff_ctx *c, size_t os, size_t oe, size_t ns, size_t ne)
{
	size_t k = 0;

	while (oe - k > os && ne - k > ns && c->a[oe - k - 1] == c->b[ne - k - 1])
		k++;
	return k;
}

/* Equal old/new lines at the start of old[os, oe) and new[ns, ne). */
static size_t
hunks_prefix(const struct diff_ctx *c, size_t os, size_t oe, size_t ns, size_t ne)
{
	size_t k = 0;

	while (os + k < oe && ns + k < ne && c->a[os + k] == c->b[ns + k])
		k++;
	return k;
}

/* Slide the change at *pp towards the start, merging with changes met on the way. */
static int
hunks_shift_up(struct diff_ctx *c, size_t *pp)
{
	size_t p = *pp, s;
	struct diff_op prev, cur, eq;
	int r;

	while (p >= 1) {
		prev = OPS(c)[p - 1];
		cur = OPS(c)[p];
		if (prev.tag == OP_EQ && cur.tag == OP_INS) {
			s = hunks_suffix(c, prev.oi, prev.oi + prev.ol, cur.ni, cur.ni + cur.nl);
			if (s > 0) {
				if (p + 1 < NOPS(c) && OPS(c)[p + 1].tag == OP_EQ)
					hunks_adjust(&OPS(c)[p + 1], -(ptrdiff_t)s, (ptrdiff_t)s);
				else {
					eq = (struct diff_op){OP_EQ, prev.oi + prev.ol - s, s,
						cur.ni + cur.nl - s, s};
					if ((r = hunks_insert(c, p + 1, eq)) != 0)
						return r;
				}
				hunks_adjust(&OPS(c)[p], -(ptrdiff_t)s, 0);
				hunks_adjust(&OPS(c)[p - 1], 0, -(ptrdiff_t)s);
			} else if (!hunks_empty(&OPS(c)[p - 1]))
				break;
			if (hunks_empty(&OPS(c)[p - 1])) {
				hunks_remove(c, p - 1);
				p--;
			}
		} else if (prev.tag == OP_EQ && cur.tag == OP_DEL) {
			/* similar measures a deletion's slide in the new text: always 0. */
			if (!hunks_empty(&prev))
				break;
			hunks_remove(c, p - 1);
			p--;
		} else if (prev.tag != cur.tag && prev.tag != OP_EQ) {
			OPS(c)[p - 1] = cur;
			OPS(c)[p] = prev;
			p--;
		} else if (prev.tag == cur.tag) {
			hunks_adjust(&OPS(c)[p - 1], 0,
				(ptrdiff_t)(cur.tag == OP_INS ? cur.nl : cur.ol));
			hunks_remove(c, p);
			p--;
		} else
			break;
	}
	*pp = p;
	return 0;
}

/* Slide the change at *pp towards the end, merging with changes met on the way. */
static int
hunks_shift_down(struct diff_ctx *c, size_t *pp)
{
	size_t p = *pp, s;
	struct diff_op next, cur, eq;
	int r;

	while (p + 1 < NOPS(c)) {
		next = OPS(c)[p + 1];
		cur = OPS(c)[p];
		if (next.tag == OP_EQ && cur.tag == OP_INS) {
			s = hunks_prefix(c, next.oi, next.oi + next.ol, cur.ni, cur.ni + cur.nl);
			if (s > 0) {
				if (p >= 1 && OPS(c)[p - 1].tag == OP_EQ)
					hunks_adjust(&OPS(c)[p - 1], 0, (ptrdiff_t)s);
				else {
					eq = (struct diff_op){OP_EQ, next.oi, s, cur.ni, s};
					if ((r = hunks_insert(c, p, eq)) != 0)
						return r;
					p++;
				}
				hunks_adjust(&OPS(c)[p], (ptrdiff_t)s, 0);
				hunks_adjust(&OPS(c)[p + 1], (ptrdiff_t)s, -(ptrdiff_t)s);
			} else if (!hunks_empty(&OPS(c)[p + 1]))
				break;
			if (hunks_empty(&OPS(c)[p + 1]))
				hunks_remove(c, p + 1);
		} else if (next.tag == OP_EQ && cur.tag == OP_DEL) {
			if (!hunks_empty(&next))
				break;
			hunks_remove(c, p + 1);
		} else if (next.tag != cur.tag && next.tag != OP_EQ) {
			OPS(c)[p + 1] = cur;
			OPS(c)[p] = next;
			p++;
		} else if (next.tag == cur.tag) {
			hunks_adjust(
				&OPS(c)[p], 0, (ptrdiff_t)(cur.tag == OP_INS ? next.nl : next.ol));
			hunks_remove(c, p + 1);
		} else
			break;
	}
	*pp = p;
	return 0;
}

/* similar's Compact hook: every deletion, then every insertion, slid up and down. */
static int
hunks_compact(struct diff_ctx *c)
{
	enum diff_tag pass[2] = {OP_DEL, OP_INS};
	size_t i, p;
	int r;

	for (i = 0; i < 2; i++) {
		for (p = 0; p < NOPS(c); p++) {
			if (OPS(c)[p].tag != pass[i])
				continue;
			if ((r = hunks_shift_up(c, &p)) != 0 || (r = hunks_shift_down(c, &p)) != 0)
				return r;
		}
	}
	return 0;
}

/* similar's Replace hook: join equal runs; the changes between two become one op. */
static void
hunks_fold(struct diff_ctx *c)
{
	struct diff_op *v = OPS(c), eq = {0}, del = {0}, ins = {0};
	size_t i, n = NOPS(c), out = 0;
	int have_eq = 0, have_del = 0, have_ins = 0;

	for (i = 0; i <= n; i++) {
		enum diff_tag t = i < n ? v[i].tag : OP_REP; /* OP_REP: the end */

		if (t != OP_EQ && have_eq) {
			v[out++] = eq;
			have_eq = 0;
		}
		if ((t == OP_EQ || i == n) && (have_del || have_ins)) {
			if (have_del && have_ins)
				v[out++] = (struct diff_op){OP_REP, del.oi, del.ol, ins.ni, ins.nl};
			else
				v[out++] = have_del ? del : ins;
			have_del = have_ins = 0;
		}
		if (i == n)
			break;
		if (t == OP_EQ) {
			if (have_eq)
				eq.ol = eq.nl = eq.ol + v[i].ol;
			else
				eq = v[i];
			have_eq = 1;
		} else if (t == OP_DEL) {
			if (have_del)
				del.ol += v[i].ol;
			else
				del = v[i];
			have_del = 1;
		} else if (t == OP_INS) {
			if (have_ins)
				ins.nl += v[i].nl;
			else
				ins = v[i];
			have_ins = 1;
		}
	}
	c->ops.len = out * sizeof(struct diff_op);
}

/* One line of a hunk: tag, the line (lossy if not UTF-8), the missing-newline hint. */
static int
hunks_line(struct buf *out, char tag, const struct diff_line *ln)
{
	char *fixed = NULL;
	size_t n = ln->n;
	int r;

	if ((r = buf_addc(out, tag)) != 0)
		return r;
	if (utf8_valid_prefix(ln->p, ln->n) != ln->n) {
		fixed = utf8_lossy(ln->p, ln->n, &n);
		r = buf_add(out, fixed, n);
		free(fixed);
	} else
		r = buf_add(out, ln->p, n);
	if (r == 0 && (ln->n == 0 || (ln->p[ln->n - 1] != '\n' && ln->p[ln->n - 1] != '\r')))
		r = buf_adds(out, "\n\\ No newline at end of file\n");
	return r;
}

/* A hunk range: "start" for one line, "start,len" otherwise (an empty one starts before). */
static int
hunks_range(struct buf *out, size_t start, size_t end)
{
	size_t len = end > start ? end - start : 0;

	if (len == 1)
		return buf_printf(out, "%zu", start + 1);
	return buf_printf(out, "%zu,%zu", len == 0 ? start : start + 1, len);
}

/* Print one group of ops as a hunk. */
static int
hunks_print(const struct diff_ctx *c, const struct diff_op *g, size_t n, struct buf *out)
{
	const struct diff_op *last = &g[n - 1];
	size_t i, k;
	int r;

	if ((r = buf_adds(out, "@@ -")) != 0 ||
		(r = hunks_range(out, g->oi, last->oi + last->ol)) ||
		(r = buf_adds(out, " +")) != 0 ||
		(r = hunks_range(out, g->ni, last->ni + last->nl)) ||
		(r = buf_adds(out, " @@\n")) != 0)
		return r;
	for (i = 0; i < n && r == 0; i++) {
		char del = g[i].tag == OP_EQ ? ' ' : '-';

		if (g[i].tag != OP_INS)
			for (k = 0; k < g[i].ol && r == 0; k++)
				r = hunks_line(out, del, &c->ol[g[i].oi + k]);
		if (g[i].tag == OP_INS || g[i].tag == OP_REP)
			for (k = 0; k < g[i].nl && r == 0; k++)
				r = hunks_line(out, '+', &c->nl[g[i].ni + k]);
	}
	return r;
}

/* Print one finished group, the file header before the first. */
static int
hunks_emit(const struct diff_ctx *c, const struct diff_op *g, size_t gn, const char *h1,
	const char *h2, int *printed, struct buf *out)
{
	int r = 0;

	if (!*printed && h1 != NULL && h2 != NULL)
		r = buf_printf(out, "--- %s\n+++ %s\n", h1, h2);
	*printed = 1;
	return r != 0 ? r : hunks_print(c, g, gn, out);
}

/* similar's group_diff_ops: trim the outer equal runs to `n` lines, split at long ones. */
static int
hunks_group(struct diff_ctx *c, size_t n, const char *h1, const char *h2, struct buf *out)
{
	struct diff_op *v = OPS(c), *g;
	size_t nops = NOPS(c), i, gn = 0, off;
	int r = 0, printed = 0;

	if (nops == 0)
		return 0;
	if (v[0].tag == OP_EQ && v[0].ol > n) {
		off = v[0].ol - n;
		v[0] = (struct diff_op){OP_EQ, v[0].oi + off, n, v[0].ni + off, n};
	}
	if (v[nops - 1].tag == OP_EQ && v[nops - 1].ol > n)
		v[nops - 1].ol = v[nops - 1].nl = n;
	g = xcalloc(nops + 2, sizeof(*g));
	for (i = 0; i < nops && r == 0; i++) {
		if (v[i].tag != OP_EQ || v[i].ol <= 2 * n) {
			g[gn++] = v[i];
			continue;
		}
		/* A long equal run ends this hunk and starts the next one. */
		g[gn++] = (struct diff_op){OP_EQ, v[i].oi, n, v[i].ni, n};
		r = hunks_emit(c, g, gn, h1, h2, &printed, out);
		off = v[i].ol - n;
		g[0] = (struct diff_op){OP_EQ, v[i].oi + off, n, v[i].ni + off, n};
		gn = 1;
	}
	if (r == 0 && gn > 0 && !(gn == 1 && g[0].tag == OP_EQ))
		r = hunks_emit(c, g, gn, h1, h2, &printed, out);
	free(g);
	return r;
}

int
diff_unified(const char *old, size_t old_len, const char *new, size_t new_len, unsigned context,
	const char *old_header, const char *new_header, struct buf *out)
{
	struct diff_ctx c;
	int r;

	if ((r = diff_ctx_run(&c, old, old_len, new, new_len)) == 0 &&
		(r = hunks_compact(&c)) == 0) {
		hunks_fold(&c);
		r = hunks_group(&c, context, old_header, new_header, out);
	}
	diff_ctx_free(&c);
	return r;
}
