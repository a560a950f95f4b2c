/*
 * Text work for apply_patch: Rust's Unicode trimming (upstream trims with str::trim), the
 * context search (upstream's seek_sequence) and building a file's new content from its
 * chunks (upstream's compute_replacements / apply_replacements).
 *
 * Rules kept from upstream:
 * - the search tries, in order, exact lines, lines equal but for trailing whitespace, lines
 *   equal once trimmed, then lines equal once trimmed with typographic dashes, quotes and
 *   odd spaces mapped to ASCII; an End-of-File chunk is only tried at the end of the file;
 * - chunks are matched in order, each after the previous match; a chunk with no old lines
 *   is appended at the end (before a final empty line); a chunk whose last old line is
 *   empty is retried without it; replacements are then applied last to first.
 * Line endings (from upstream's newer SourceFile): a line keeps its own "\n" or "\r\n",
 * new lines take the file's first ending (else "\n"), and the result always ends with one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "apply_patch_int.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

int
ap_is_space(uint32_t c)
{
	return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0x85 || c == 0xa0 || c == 0x1680 ||
		(c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
		c == 0x205f || c == 0x3000;
}

size_t
ap_utf8_next(const char *s, size_t n, int32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len, i;
	uint32_t c;

	if (u[0] < 0x80) {
		*cp = u[0];
		return 1;
	}
	if (u[0] >= 0xc2 && u[0] <= 0xdf)
		len = 2, c = u[0] & 0x1f;
	else if (u[0] >= 0xe0 && u[0] <= 0xef)
		len = 3, c = u[0] & 0x0f;
	else if (u[0] >= 0xf0 && u[0] <= 0xf4)
		len = 4, c = u[0] & 0x07;
	else
		goto bad;
	if (len > n)
		goto bad;
	for (i = 1; i < len; i++) {
		if ((u[i] & 0xc0) != 0x80)
			goto bad;
		c = c << 6 | (u[i] & 0x3f);
	}
	if ((len == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
		(len == 4 && (c < 0x10000 || c > 0x10ffff)))
		goto bad;
	*cp = (int32_t)c;
	return len;
bad:
	*cp = -1 - (int32_t)u[0]; /* an invalid byte stands for itself */
	return 1;
}

struct patch_span
ap_trim_start(struct patch_span s)
{
	int32_t c;
	size_t k;

	while (s.n > 0 && (k = ap_utf8_next(s.p, s.n, &c)) > 0 && c >= 0 &&
		ap_is_space((uint32_t)c))
		s.p += k, s.n -= k;
	return s;
}

struct patch_span
ap_trim_end(struct patch_span s)
{
	size_t start, k;
	int32_t c;

	while (s.n > 0) {
		/* The last character starts at most 3 continuation bytes back. */
		start = s.n - 1;
		while (start > 0 && s.n - start < 4 && ((unsigned char)s.p[start] & 0xc0) == 0x80)
			start--;
		k = ap_utf8_next(s.p + start, s.n - start, &c);
		if (start + k != s.n)
			c = -1; /* the tail is not one whole character */
		if (c < 0 || !ap_is_space((uint32_t)c))
			break;
		s.n = start;
	}
	return s;
}

struct patch_span
ap_trim(struct patch_span s)
{
	return ap_trim_end(ap_trim_start(s));
}

int
ap_span_eq(struct patch_span a, const char *s)
{
	size_t n = strlen(s);

	return a.n == n && memcmp(a.p, s, n) == 0;
}

/* Two spans hold the same bytes. */
static int
text_eq(struct patch_span a, struct patch_span b)
{
	return a.n == b.n && memcmp(a.p, b.p, a.n) == 0;
}

/* upstream's normalise(): typographic punctuation and odd spaces as their ASCII forms. */
static int32_t
text_fold(int32_t c)
{
	if ((c >= 0x2010 && c <= 0x2015) || c == 0x2212)
		return '-';
	if (c >= 0x2018 && c <= 0x201b)
		return '\'';
	if (c >= 0x201c && c <= 0x201f)
		return '"';
	if (c == 0xa0 || (c >= 0x2002 && c <= 0x200a) || c == 0x202f || c == 0x205f || c == 0x3000)
		return ' ';
	return c;
}

/* Two lines equal after trimming and folding. */
static int
text_eq_folded(struct patch_span a, struct patch_span b)
{
	int32_t ca, cb;
	size_t ka, kb;

	a = ap_trim(a);
	b = ap_trim(b);
	while (a.n > 0 && b.n > 0) {
		ka = ap_utf8_next(a.p, a.n, &ca);
		kb = ap_utf8_next(b.p, b.n, &cb);
		if (text_fold(ca) != text_fold(cb))
			return 0;
		a.p += ka, a.n -= ka, b.p += kb, b.n -= kb;
	}
	return a.n == 0 && b.n == 0;
}

/* Line equality at one strictness level (0 exact .. 3 folded). */
static int
text_line_eq(int level, struct patch_span a, struct patch_span b)
{
	switch (level) {
	case 0:
		return text_eq(a, b);
	case 1:
		return text_eq(ap_trim_end(a), ap_trim_end(b));
	case 2:
		return text_eq(ap_trim(a), ap_trim(b));
	default:
		return text_eq_folded(a, b);
	}
}

ptrdiff_t
ap_seek(const struct patch_span *lines, size_t nlines, const struct patch_span *pat, size_t npat,
	size_t start, int eof)
{
	size_t from, i, k;
	int level;

	if (npat == 0)
		return (ptrdiff_t)start;
	if (npat > nlines)
		return -1;
	from = eof ? nlines - npat : start;
	for (level = 0; level < 4; level++)
		for (i = from; i <= nlines - npat; i++) {
			for (k = 0; k < npat && text_line_eq(level, lines[i + k], pat[k]); k++)
				;
			if (k == npat)
				return (ptrdiff_t)i;
		}
	return -1;
}

/* A line of the file being built: its text and ending (0 none, 1 "\n", 2 "\r\n"). */
struct text_line {
	struct patch_span s;
	int end;
};

/* One replacement: old lines [start, start + len) become the chunk lines new[0, nnew). */
struct text_repl {
	size_t start, len, order;
	const struct patch_span *new;
	size_t nnew;
};

/* Replacements by start, ties in chunk order (upstream's stable sort). */
static int
text_repl_cmp(const void *a, const void *b)
{
	const struct text_repl *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* "Failed to find ..." for a chunk that does not match. */
static int
text_not_found(const char *path, const struct patch_chunk *c, int context, char **cause)
{
	struct buf b;
	size_t i;

	buf_init(&b, (size_t)-1);
	if (context)
		buf_printf(&b, "Failed to find context '%.*s' in %s", (int)c->context.n,
			c->context.p, path);
	else {
		buf_printf(&b, "Failed to find expected lines in %s:\n", path);
		for (i = 0; i < c->nold; i++) {
			buf_add(&b, c->old[i].p, c->old[i].n);
			if (i + 1 < c->nold)
				buf_addc(&b, '\n');
		}
	}
	*cause = buf_steal(&b, NULL);
	return -EINVAL;
}

/* Where every chunk goes (upstream's compute_replacements), sorted by start. */
static int
text_replacements(const char *path, const struct patch_span *lines, size_t n,
	const struct patch_chunk *chunks, size_t nchunks, struct text_repl *out, char **cause)
{
	size_t at = 0, i, npat, nnew;
	ptrdiff_t idx;

	for (i = 0; i < nchunks; i++) {
		const struct patch_chunk *c = &chunks[i];

		if (c->has_context) {
			if ((idx = ap_seek(lines, n, &c->context, 1, at, 0)) < 0)
				return text_not_found(path, c, 1, cause);
			at = (size_t)idx + 1;
		}
		if (c->nold == 0) {
			out[i] = (struct text_repl){
				n > 0 && lines[n - 1].n == 0 ? n - 1 : n, 0, i, c->new, c->nnew};
			continue;
		}
		npat = c->nold;
		nnew = c->nnew;
		idx = ap_seek(lines, n, c->old, npat, at, c->eof);
		if (idx < 0 && c->old[npat - 1].n == 0) {
			npat--;
			if (nnew > 0 && c->new[nnew - 1].n == 0)
				nnew--;
			idx = ap_seek(lines, n, c->old, npat, at, c->eof);
		}
		if (idx < 0)
			return text_not_found(path, c, 0, cause);
		out[i] = (struct text_repl){(size_t)idx, npat, i, c->new, nnew};
		at = (size_t)idx + npat;
	}
	qsort(out, nchunks, sizeof(*out), text_repl_cmp);
	return 0;
}

/* Split a file into line texts and endings; *pref gets the first ending (else "\n"). */
static size_t
text_split(const char *s, size_t len, struct text_line *out, int *pref)
{
	size_t i, start = 0, n = 0;

	*pref = 0;
	for (i = 0; i < len; i++) {
		if (s[i] != '\n')
			continue;
		out[n].s = (struct patch_span){s + start, i - start};
		out[n].end = 1;
		if (out[n].s.n > 0 && s[i - 1] == '\r') {
			out[n].s.n--;
			out[n].end = 2;
		}
		if (*pref == 0)
			*pref = out[n].end;
		n++;
		start = i + 1;
	}
	if (start < len)
		out[n++] = (struct text_line){{s + start, len - start}, 0};
	if (*pref == 0)
		*pref = 1;
	return n;
}

/*
 * Apply the replacements last to first, as upstream does on its line vector, in linear
 * time: the untouched prefix of the file stays where it is, and what follows it is kept
 * on a stack (top first) that each replacement trims and pushes onto.
 */
static size_t
text_splice(const struct text_line *src, size_t n, const struct text_repl *repl, size_t nrepl,
	int pref, struct text_line *stack, size_t *prefix)
{
	size_t p = n, sp = 0, k, i, s, drop;

	for (k = nrepl; k-- > 0;) {
		s = repl[k].start < p ? repl[k].start : p;
		if (s + repl[k].len <= p) {
			for (i = p; i > s + repl[k].len; i--)
				stack[sp++] = src[i - 1];
		} else {
			drop = s + repl[k].len - p;
			sp -= drop < sp ? drop : sp;
		}
		for (i = repl[k].nnew; i > 0; i--)
			stack[sp++] = (struct text_line){repl[k].new[i - 1], pref};
		p = s;
	}
	*prefix = p;
	return sp;
}

/* Append one line with its ending (a missing one becomes the file's). */
static int
text_emit(struct buf *b, const struct text_line *l, int pref)
{
	int end = l->end != 0 ? l->end : pref, r;

	if ((r = buf_add(b, l->s.p, l->s.n)) != 0)
		return r;
	return buf_adds(b, end == 2 ? "\r\n" : "\n");
}

int
ap_apply_chunks(const char *path, const char *old, size_t old_len, const struct patch_chunk *chunks,
	size_t nchunks, char **out, size_t *out_len, char **cause)
{
	struct text_line *src, *stack = NULL;
	struct patch_span *texts;
	struct text_repl *repl;
	size_t cap = 2, n, i, nnew = 0, sp, prefix;
	struct buf b;
	int pref, r;

	for (i = 0; i < old_len; i++)
		cap += old[i] == '\n';
	src = xcalloc(cap, sizeof(*src));
	texts = xcalloc(cap, sizeof(*texts));
	repl = xcalloc(nchunks + 1, sizeof(*repl));
	n = text_split(old, old_len, src, &pref);
	for (i = 0; i < n; i++)
		texts[i] = src[i].s;
	buf_init(&b, APPLY_PATCH_MAX_FILE);
	if ((r = text_replacements(path, texts, n, chunks, nchunks, repl, cause)) != 0)
		goto out;
	for (i = 0; i < nchunks; i++)
		nnew += repl[i].nnew;
	stack = xcalloc(n + nnew + 1, sizeof(*stack));
	sp = text_splice(src, n, repl, nchunks, pref, stack, &prefix);
	for (i = 0; i < prefix && r == 0; i++)
		r = text_emit(&b, &src[i], pref);
	for (i = sp; i > 0 && r == 0; i--)
		r = text_emit(&b, &stack[i - 1], pref);
	if (r != 0) {
		*cause = xasprintf("Failed to write file %s: the new content is more than %u bytes",
			path, APPLY_PATCH_MAX_FILE);
		goto out;
	}
	*out = buf_steal(&b, out_len);
out:
	buf_free(&b);
	free(src);
	free(texts);
	free(repl);
	free(stack);
	return r;
}
