/*
 * The turn's aggregated diff (diff.h), as upstream's TurnDiffTracker keeps it: for every
 * path a turn's successful patches touched, the content it had before the first of them
 * (the baseline, absent for a new file) and the content it has now (absent once deleted),
 * plus where a moved file came from, so a rename renders as one "diff --git a/old b/new".
 * Nothing is read from disk: the patches' own before/after contents are the record.
 * Rules kept from upstream: files are listed sorted by the path shown (bytewise); a file
 * whose content ended where it began is left out; blob ids are git's SHA-1 of the content.
 * Bounded: at most DIFF_TURN_MAX_FILES paths and the caller's ceiling of content bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "protocol/xmalloc.h"

#define DIFF_TURN_MAX_FILES 10000
#define ZERO_OID	    "0000000000000000000000000000000000000000"

/* A text that may be absent. */
struct turn_text {
	int set;
	char *p;
	size_t n;
};

struct turn_entry {
	char *path;
	struct turn_text base; /* before the turn's first patch touched it */
	struct turn_text cur;  /* now */
	char *origin;	       /* the path this file was moved from, or NULL */
};

struct diff_turn {
	char *root; /* display root, or NULL */
	struct turn_entry *v;
	size_t n;
	size_t bytes, max_bytes;
	int poisoned;
};

/* SHA-1 (FIPS 180-4) of the git blob header and the data: git's object id. */
struct sha1 {
	uint32_t h[5];
	unsigned char block[64];
	size_t fill;
	uint64_t total;
};

static uint32_t
sha1_rol(uint32_t x, int n)
{
	return (x << n) | (x >> (32 - n));
}

/* Mix one 64-byte block into the state. */
static void
sha1_block(struct sha1 *s, const unsigned char *p)
{
	uint32_t w[80], a, b, c, d, e, f, k, t;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
			(uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (; i < 80; i++)
		w[i] = sha1_rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4];
	for (i = 0; i < 80; i++) {
		if (i < 20)
			f = (b & c) | (~b & d), k = 0x5a827999;
		else if (i < 40)
			f = b ^ c ^ d, k = 0x6ed9eba1;
		else if (i < 60)
			f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
		else
			f = b ^ c ^ d, k = 0xca62c1d6;
		t = sha1_rol(a, 5) + f + e + k + w[i];
		e = d, d = c, c = sha1_rol(b, 30), b = a, a = t;
	}
	s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d, s->h[4] += e;
}

static void
sha1_update(struct sha1 *s, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t take;

	s->total += len;
	while (len > 0) {
		take = 64 - s->fill < len ? 64 - s->fill : len;
		memcpy(s->block + s->fill, p, take);
		s->fill += take, p += take, len -= take;
		if (s->fill == 64) {
			sha1_block(s, s->block);
			s->fill = 0;
		}
	}
}

void
diff_git_blob_oid(const void *data, size_t len, char out[41])
{
	struct sha1 s = {{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0}, {0}, 0, 0};
	unsigned char pad[72] = {0x80};
	char header[32];
	uint64_t bits;
	size_t padlen;
	int i, n;

	n = snprintf(header, sizeof(header), "blob %zu", len);
	sha1_update(&s, header, (size_t)n + 1); /* with its NUL */
	sha1_update(&s, data, len);
	bits = s.total * 8;
	padlen = (s.fill < 56 ? 56 : 120) - s.fill;
	for (i = 0; i < 8; i++)
		pad[padlen + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
	sha1_update(&s, pad, padlen + 8);
	for (i = 0; i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x",
			(unsigned)(s.h[i / 4] >> (24 - 8 * (i % 4))) & 0xff);
}

struct diff_turn *
diff_turn_new(const char *display_root, size_t max_bytes)
{
	struct diff_turn *t = xcalloc(1, sizeof(*t));

	t->root = display_root != NULL ? xstrdup(display_root) : NULL;
	t->max_bytes = max_bytes;
	return t;
}

void
diff_turn_free(struct diff_turn *t)
{
	size_t i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++) {
		free(t->v[i].path);
		free(t->v[i].base.p);
		free(t->v[i].cur.p);
		free(t->v[i].origin);
	}
	free(t->v);
	free(t->root);
	free(t);
}

/* The entry for path, made (empty) when create is set; NULL when full or absent. */
static struct turn_entry *
turn_find(struct diff_turn *t, const char *path, int create)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->v[i].path, path) == 0)
			return &t->v[i];
	if (!create || t->n >= DIFF_TURN_MAX_FILES)
		return NULL;
	if ((t->n & (t->n - 1)) == 0) /* grow at powers of two */
		t->v = xrealloc(t->v, (t->n ? t->n * 2 : 4) * sizeof(*t->v));
	memset(&t->v[t->n], 0, sizeof(t->v[0]));
	t->v[t->n].path = xstrdup(path);
	return &t->v[t->n++];
}

/* Set (or clear, p NULL) a text, keeping the byte count under the ceiling. */
static int
turn_set(struct diff_turn *t, struct turn_text *x, const char *p, size_t n)
{
	if (x->set)
		t->bytes -= x->n;
	free(x->p);
	*x = (struct turn_text){0};
	if (p == NULL)
		return 0;
	if (n > t->max_bytes - t->bytes) {
		t->poisoned = 1;
		return -E2BIG;
	}
	x->p = xmalloc(n + 1);
	memcpy(x->p, p, n);
	x->p[n] = '\0';
	x->n = n;
	x->set = 1;
	t->bytes += n;
	return 0;
}

/* Look up (creating) both path and its entry, failing once the tracker is unusable. */
static struct turn_entry *
turn_entry(struct diff_turn *t, const char *path)
{
	struct turn_entry *e;

	if (t->poisoned)
		return NULL;
	if ((e = turn_find(t, path, 1)) == NULL)
		t->poisoned = 1;
	return e;
}

int
diff_turn_add(struct diff_turn *t, const char *path, const char *content, size_t len,
	const char *overwritten, size_t overwritten_len)
{
	struct turn_entry *e = turn_entry(t, path);
	int r;

	if (e == NULL)
		return -E2BIG;
	free(e->origin);
	e->origin = NULL;
	if (!e->cur.set && !e->base.set && overwritten != NULL &&
		(r = turn_set(t, &e->base, overwritten, overwritten_len)) != 0)
		return r;
	return turn_set(t, &e->cur, content, len);
}

int
diff_turn_delete(struct diff_turn *t, const char *path, const char *content, size_t len)
{
	struct turn_entry *e = turn_entry(t, path);
	int had = e != NULL && e->cur.set;

	if (e == NULL)
		return -E2BIG;
	turn_set(t, &e->cur, NULL, 0);
	free(e->origin);
	e->origin = NULL;
	if (!had && !e->base.set)
		return turn_set(t, &e->base, content, len);
	return 0;
}

int
diff_turn_update(struct diff_turn *t, const char *path, const char *move_path, const char *old,
	size_t old_len, const char *overwritten_move, size_t overwritten_move_len, const char *new,
	size_t new_len)
{
	struct turn_entry *src = turn_entry(t, path), *dst;
	char *origin;
	int r;

	if (src == NULL)
		return -E2BIG;
	if (!src->cur.set && !src->base.set && (r = turn_set(t, &src->base, old, old_len)) != 0)
		return r;
	if (move_path == NULL)
		return turn_set(t, &src->cur, new, new_len);
	if ((dst = turn_entry(t, move_path)) == NULL)
		return -E2BIG;
	src = turn_find(t, path, 0); /* the array may have moved */
	if (!dst->cur.set && !dst->base.set && overwritten_move != NULL &&
		(r = turn_set(t, &dst->base, overwritten_move, overwritten_move_len)) != 0)
		return r;
	origin = src->origin != NULL ? src->origin : xstrdup(path);
	src->origin = NULL;
	turn_set(t, &src->cur, NULL, 0);
	if ((r = turn_set(t, &dst->cur, new, new_len)) != 0) {
		free(origin);
		return r;
	}
	free(dst->origin);
	dst->origin = NULL;
	if (strcmp(move_path, origin) != 0)
		dst->origin = origin;
	else
		free(origin);
	return 0;
}

/* The path as shown: relative to the display root when under it, with '\\' as '/'. */
static char *
turn_display(const struct diff_turn *t, const char *path)
{
	const char *p = path;
	size_t rl;
	char *s, *q;

	if (t->root != NULL) {
		rl = strlen(t->root);
		while (rl > 1 && t->root[rl - 1] == '/')
			rl--;
		if (rl == 1 && t->root[0] == '/' && path[0] == '/')
			p = path + 1;
		else if (strncmp(path, t->root, rl) == 0 && (path[rl] == '/' || path[rl] == '\0'))
			p = path + rl + (path[rl] == '/');
	}
	s = xstrdup(p);
	for (q = s; *q != '\0'; q++)
		if (*q == '\\')
			*q = '/';
	return s;
}

/* One file's git-style diff from left (absent: a new file) to right (absent: deleted). */
static int
turn_render(const struct diff_turn *t, const char *lpath, const struct turn_text *l,
	const char *rpath, const struct turn_text *r, struct buf *out)
{
	char loid[41] = ZERO_OID, roid[41] = ZERO_OID, *ld, *rd, *h1 = NULL, *h2 = NULL;
	int rc;

	if (l->set == r->set && (!l->set || (l->n == r->n && memcmp(l->p, r->p, l->n) == 0)))
		return 0;
	ld = turn_display(t, lpath);
	rd = turn_display(t, rpath);
	if (l->set)
		diff_git_blob_oid(l->p, l->n, loid);
	if (r->set)
		diff_git_blob_oid(r->p, r->n, roid);
	h1 = l->set ? xasprintf("a/%s", ld) : xstrdup("/dev/null");
	h2 = r->set ? xasprintf("b/%s", rd) : xstrdup("/dev/null");
	rc = buf_printf(out, "diff --git a/%s b/%s\n%s%sindex %s..%s\n", ld, rd,
		!l->set ? "new file mode 100644\n" : "",
		!r->set ? "deleted file mode 100644\n" : "", loid, roid);
	if (rc == 0)
		rc = diff_unified(l->set ? l->p : "", l->set ? l->n : 0, r->set ? r->p : "",
			r->set ? r->n : 0, 3, h1, h2, out);
	if (rc == 0 && out->len > 0 && out->ptr[out->len - 1] != '\n')
		rc = buf_addc(out, '\n');
	free(ld);
	free(rd);
	free(h1);
	free(h2);
	return rc;
}

/* The destination a moved file's diff pairs with its origin's, or -1 (upstream's rules). */
static ptrdiff_t
turn_pair(const struct diff_turn *t, const struct turn_entry *origin)
{
	size_t i;

	if (origin->cur.set || !origin->base.set)
		return -1;
	for (i = 0; i < t->n; i++)
		if (t->v[i].origin != NULL && strcmp(t->v[i].origin, origin->path) == 0 &&
			t->v[i].cur.set && !t->v[i].base.set)
			return (ptrdiff_t)i;
	return -1;
}

/* Whether entry e is the destination of a pair. */
static int
turn_is_dest(const struct diff_turn *t, const struct turn_entry *e)
{
	const struct turn_entry *o;
	size_t i;

	if (e->origin == NULL)
		return 0;
	for (i = 0, o = NULL; i < t->n && o == NULL; i++)
		if (strcmp(t->v[i].path, e->origin) == 0)
			o = &t->v[i];
	return o != NULL && turn_pair(t, o) == e - t->v;
}

/* Order of entries: by the path shown (arg: the shown paths), ties by index (stable). */
static int
turn_cmp(const void *a, const void *b, void *arg)
{
	char **keys = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = strcmp(keys[i], keys[j]);

	return c != 0 ? c : (i > j) - (i < j);
}

int
diff_turn_unified(const struct diff_turn *t, struct buf *out, int *empty)
{
	size_t *order, i, k, n = 0, start = out->len;
	char **keys;
	unsigned char *handled;
	ptrdiff_t j;
	int r = 0;

	*empty = 1;
	if (t->poisoned)
		return -E2BIG;
	order = xcalloc(t->n + 1, sizeof(*order));
	keys = xcalloc(t->n + 1, sizeof(*keys));
	handled = xcalloc(t->n + 1, 1);
	for (i = 0; i < t->n; i++) {
		keys[i] = turn_display(t, t->v[i].path);
		if (t->v[i].base.set || t->v[i].cur.set)
			order[n++] = i;
	}
	qsort_r(order, n, sizeof(*order), turn_cmp, keys);
	for (k = 0; k < n && r == 0; k++) {
		const struct turn_entry *e = &t->v[order[k]];

		if (handled[order[k]])
			continue;
		handled[order[k]] = 1;
		if (turn_is_dest(t, e))
			continue;
		if ((j = turn_pair(t, e)) >= 0) {
			handled[j] = 1;
			r = turn_render(t, e->path, &e->base, t->v[j].path, &t->v[j].cur, out);
		} else
			r = turn_render(t, e->path, &e->base, e->path, &e->cur, out);
	}
	for (i = 0; i < t->n; i++)
		free(keys[i]);
	free(keys);
	free(order);
	free(handled);
	*empty = out->len == start;
	return r;
}
