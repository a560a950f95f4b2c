/*
 * The line search behind diff.h: both texts split into lines that keep their terminator
 * (after "\n", "\r\n" or a lone "\r", as similar's tokenize_lines), equal lines given one
 * id, then Myers' linear-space divide and conquer as similar 2.7 runs it: common prefix and
 * suffix first, then the middle snake, searched from both corners at once with diagonals
 * visited from k = d down to -d; equal / delete / insert runs are emitted left to right.
 * When DIFF_MAX_COST is spent, an undecided part becomes one deletion plus one insertion
 * (similar's behaviour when its deadline passes). diff_hunks.c turns the runs into text.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "diff_int.h"
#include "protocol/xmalloc.h"

/* Split text after "\n", "\r\n" or a lone "\r" (similar's tokenize_lines). */
static size_t
diff_split(const char *s, size_t len, struct diff_line *out)
{
	size_t i, start = 0, n = 0;

	for (i = 0; i < len; i++) {
		if (s[i] == '\r' && i + 1 < len && s[i + 1] == '\n')
			i++;
		else if (s[i] != '\r' && s[i] != '\n')
			continue;
		if (out != NULL)
			out[n] = (struct diff_line){s + start, i + 1 - start};
		n++;
		start = i + 1;
	}
	if (start < len) {
		if (out != NULL)
			out[n] = (struct diff_line){s + start, len - start};
		n++;
	}
	return n;
}

/* FNV-1a: only used to bucket lines before comparing them byte for byte. */
static uint64_t
diff_hash(const char *p, size_t n)
{
	uint64_t h = 14695981039346656037ull;

	while (n-- > 0)
		h = (h ^ (unsigned char)*p++) * 1099511628211ull;
	return h;
}

/* Give every distinct line one id, so the search compares integers. */
static void
diff_intern(struct diff_ctx *c)
{
	size_t total = c->na + c->nb, size = 16, i, slot;
	uint32_t *table, next = 0, *rep;
	struct diff_line *ln;

	while (size < total * 2)
		size *= 2;
	table = xcalloc(size, sizeof(*table)); /* id + 1, 0 = empty */
	rep = xcalloc(total + 1, sizeof(*rep));
	for (i = 0; i < total; i++) {
		ln = i < c->na ? &c->ol[i] : &c->nl[i - c->na];
		slot = (size_t)diff_hash(ln->p, ln->n) & (size - 1);
		for (;;) {
			uint32_t id = table[slot];
			struct diff_line *r;

			if (id == 0) {
				rep[next] = (uint32_t)i;
				table[slot] = ++next;
				id = next;
			} else {
				r = rep[id - 1] < c->na ? &c->ol[rep[id - 1]]
							: &c->nl[rep[id - 1] - c->na];
				if (r->n != ln->n || memcmp(r->p, ln->p, ln->n) != 0) {
					slot = (slot + 1) & (size - 1);
					continue;
				}
			}
			if (i < c->na)
				c->a[i] = id;
			else
				c->b[i - c->na] = id;
			break;
		}
	}
	free(table);
	free(rep);
}

/* Append one op; the ops buffer's ceiling is generous (every op covers a line). */
static int
diff_push(struct diff_ctx *c, enum diff_tag tag, size_t oi, size_t ol, size_t ni, size_t nl)
{
	struct diff_op op = {tag, oi, ol, ni, nl};

	return buf_add(&c->ops, &op, sizeof(op));
}

/* Number of equal lines at the start of old[os, oe) and new[ns, ne). */
static size_t
diff_prefix(struct diff_ctx *c, size_t os, size_t oe, size_t ns, size_t ne)
{
	size_t k = 0;

	while (os + k < oe && ns + k < ne && c->a[os + k] == c->b[ns + k])
		k++;
	c->cost += k;
	return k;
}

/* Number of equal lines at the end of old[os, oe) and new[ns, ne). */
static size_t
diff_suffix(struct diff_ctx *c, size_t os, size_t oe, size_t ns, size_t ne)
{
	size_t k = 0;

	while (oe - k > os && ne - k > ns && c->a[oe - k - 1] == c->b[ne - k - 1])
		k++;
	c->cost += k;
	return k;
}

#define VF(k) (c->vf[(k) + c->off])
#define VB(k) (c->vb[(k) + c->off])

/*
 * The middle snake of an optimal edit script of old[os, oe) -> new[ns, ne): searched from
 * both corners at once, diagonals visited from k = d down to -d. 1 with the split point, or
 * 0 when the budget is spent (or, defensively, when the split would not make progress).
 */
static int
diff_snake(struct diff_ctx *c, size_t os, size_t oe, size_t ns, size_t ne, size_t *xs, size_t *ys)
{
	ptrdiff_t n = (ptrdiff_t)(oe - os), m = (ptrdiff_t)(ne - ns), delta = n - m;
	ptrdiff_t dmax = (n + m + 1) / 2 + 1, d, k, x, y, x0, y0;
	int odd = delta % 2 != 0;

	VF(1) = 0;
	VB(1) = 0;
	for (d = 0; d < dmax; d++) {
		if (c->cost > DIFF_MAX_COST)
			return 0;
		c->cost += (size_t)(2 * d + 1);
		for (k = d; k >= -d; k -= 2) {
			x = (k == -d || (k != d && VF(k - 1) < VF(k + 1))) ? VF(k + 1)
									   : VF(k - 1) + 1;
			y = x - k;
			x0 = x;
			y0 = y;
			if (x < n && y >= 0 && y < m)
				x += (ptrdiff_t)diff_prefix(c, os + x, oe, ns + y, ne);
			VF(k) = x;
			if (odd && labs(k - delta) <= d - 1 && VF(k) + VB(-(k - delta)) >= n) {
				x = x0;
				y = y0;
				goto found;
			}
		}
		for (k = d; k >= -d; k -= 2) {
			x = (k == -d || (k != d && VB(k - 1) < VB(k + 1))) ? VB(k + 1)
									   : VB(k - 1) + 1;
			y = x - k;
			if (x < n && y >= 0 && y < m) {
				ptrdiff_t adv = (ptrdiff_t)diff_suffix(
					c, os, os + (size_t)(n - x), ns, ns + (size_t)(m - y));
				x += adv;
				y += adv;
			}
			VB(k) = x;
			if (!odd && labs(k - delta) <= d && VB(k) + VF(-(k - delta)) >= n) {
				x = n - x;
				y = m - y;
				goto found;
			}
		}
	}
	return 0;
found:
	if (x < 0 || x > n || y < 0 || y > m || (x == 0 && y == 0) || (x == n && y == m))
		return 0;
	*xs = os + (size_t)x;
	*ys = ns + (size_t)y;
	return 1;
}

/* Divide and conquer over old[os, oe) -> new[ns, ne), ops emitted left to right. */
static int
diff_conquer(struct diff_ctx *c, size_t os, size_t oe, size_t ns, size_t ne)
{
	size_t pre, suf, sos, sns, x, y;
	int r = 0;

	pre = diff_prefix(c, os, oe, ns, ne);
	if (pre > 0 && (r = diff_push(c, OP_EQ, os, pre, ns, pre)) != 0)
		return r;
	os += pre;
	ns += pre;
	suf = diff_suffix(c, os, oe, ns, ne);
	sos = oe - suf;
	sns = ne - suf;
	oe -= suf;
	ne -= suf;
	if (os == oe && ns == ne)
		;
	else if (ns == ne)
		r = diff_push(c, OP_DEL, os, oe - os, ns, 0);
	else if (os == oe)
		r = diff_push(c, OP_INS, os, 0, ns, ne - ns);
	else if (diff_snake(c, os, oe, ns, ne, &x, &y)) {
		if ((r = diff_conquer(c, os, x, ns, y)) == 0)
			r = diff_conquer(c, x, oe, y, ne);
	} else if ((r = diff_push(c, OP_DEL, os, oe - os, ns, 0)) == 0)
		r = diff_push(c, OP_INS, os, 0, ns, ne - ns);
	if (r == 0 && suf > 0)
		r = diff_push(c, OP_EQ, sos, suf, sns, suf);
	return r;
}

int
diff_ctx_run(struct diff_ctx *c, const char *old, size_t old_len, const char *new, size_t new_len)
{
	size_t maxd;

	memset(c, 0, sizeof(*c));
	c->na = diff_split(old, old_len, NULL);
	c->nb = diff_split(new, new_len, NULL);
	c->ol = xcalloc(c->na + 1, sizeof(*c->ol));
	c->nl = xcalloc(c->nb + 1, sizeof(*c->nl));
	diff_split(old, old_len, c->ol);
	diff_split(new, new_len, c->nl);
	c->a = xcalloc(c->na + 1, sizeof(*c->a));
	c->b = xcalloc(c->nb + 1, sizeof(*c->b));
	diff_intern(c);
	maxd = (c->na + c->nb + 1) / 2 + 1;
	c->off = (ptrdiff_t)maxd;
	c->vf = xcalloc(2 * maxd + 2, sizeof(*c->vf));
	c->vb = xcalloc(2 * maxd + 2, sizeof(*c->vb));
	/* Every op the search or compaction makes covers at least one line, give or take. */
	buf_init(&c->ops, (2 * (c->na + c->nb) + 8) * sizeof(struct diff_op));
	return diff_conquer(c, 0, c->na, 0, c->nb);
}

void
diff_ctx_free(struct diff_ctx *c)
{
	free(c->ol);
	free(c->nl);
	free(c->a);
	free(c->b);
	free(c->vf);
	free(c->vb);
	buf_free(&c->ops);
}
