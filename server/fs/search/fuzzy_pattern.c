/*
 * Queries and path scores (fuzzy.h): nucleo's query syntax (Pattern::parse, case ignored,
 * "smart" normalization) and codex 0.169's file-name tiers on top of nucleo's path score.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzy.h"
#include "protocol/xmalloc.h"

#define FZ_TIER_NAME  FUZZY_TIER_NAME
#define FZ_TIER_EXACT FUZZY_TIER_EXACT

/* Build an atom from codepoints: lower-cased, normalization on unless the needle needs it off. */
static void
fz_atom_make(
	struct fuzzy_atom *a, const uint32_t *cps, size_t n, enum fuzzy_kind kind, int negative)
{
	a->kind = kind;
	a->negative = negative;
	a->needle = xmalloc((n + 1) * sizeof(uint32_t));
	a->len = n;
	a->ascii = 1;
	a->normalize = 1;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = fuzzy_fold(cps[i]);
		a->needle[i] = c;
		if (c >= 128) {
			a->ascii = 0;
			if (fuzzy_normalize(c) != c)
				a->normalize = 0;
		}
	}
}

/* One atom of nucleo's syntax: !negation, ^prefix, 'substring, suffix$, backslash escapes. */
static int
fz_atom_parse(struct fuzzy_atom *a, const uint32_t *s, size_t n)
{
	uint32_t *buf = NULL;
	int negative = 0, append_dollar = 0;
	enum fuzzy_kind kind = FUZZY_FUZZY;

	if (n >= 1 && s[0] == '!') {
		negative = 1;
		s++, n--;
	} else if (n >= 2 && s[0] == '\\' && s[1] == '!') {
		s++, n--;
	}
	if (n >= 1 && s[0] == '^') {
		kind = FUZZY_PREFIX;
		s++, n--;
	} else if (n >= 1 && s[0] == '\'') {
		kind = FUZZY_SUBSTRING;
		s++, n--;
	} else if (n >= 2 && s[0] == '\\' && (s[1] == '^' || s[1] == '\'')) {
		s++, n--;
	}
	if (n >= 2 && s[n - 2] == '\\' && s[n - 1] == '$') {
		append_dollar = 1;
		n -= 2;
	} else if (n >= 1 && s[n - 1] == '$') {
		kind = kind == FUZZY_FUZZY ? FUZZY_POSTFIX : FUZZY_EXACT;
		n--;
	}
	if (negative && kind == FUZZY_FUZZY)
		kind = FUZZY_SUBSTRING;
	/* "\ " is an escaped space */
	buf = xmalloc((n + 2) * sizeof(uint32_t));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n && s[i + 1] == ' ')
			continue;
		buf[k++] = s[i];
	}
	if (append_dollar)
		buf[k++] = '$';
	if (k == 0) {
		free(buf);
		return -EINVAL;
	}
	fz_atom_make(a, buf, k, kind, negative);
	free(buf);
	return 0;
}

/* Split on unescaped whitespace and parse each atom; the trimmed query feeds the name tiers. */
int
fuzzy_pattern_parse(struct fuzzy_pattern *p, const char *query)
{
	uint32_t *cps = xmalloc((FUZZY_QUERY_MAX + 1) * sizeof(uint32_t));
	int ascii;
	long n = fuzzy_decode(query, strlen(query), cps, FUZZY_QUERY_MAX, &ascii);
	int r = -EINVAL;

	memset(p, 0, sizeof(*p));
	if (n < 0)
		n = 0;
	size_t i = 0;
	while (i < (size_t)n && p->natoms < FUZZY_ATOMS_MAX) {
		size_t st = i;
		int saw_backslash = 0;
		while (i < (size_t)n && !(fuzzy_is_space(cps[i]) && !saw_backslash)) {
			saw_backslash = cps[i] == '\\';
			i++;
		}
		if (i > st && fz_atom_parse(&p->atoms[p->natoms], cps + st, i - st) == 0)
			p->natoms++;
		i++;
	}
	size_t b = 0, e = (size_t)n;
	while (b < e && fuzzy_is_space(cps[b]))
		b++;
	while (e > b && fuzzy_is_space(cps[e - 1]))
		e--;
	p->name_ok = e > b;
	for (size_t k = b; k < e; k++) {
		if (fuzzy_is_space(cps[k]))
			p->name_ok = 0;
	}
	if (p->name_ok)
		fz_atom_make(&p->name, cps + b, e - b, FUZZY_FUZZY, 0);
	p->plain = p->name_ok && p->natoms == 1 && p->atoms[0].kind == FUZZY_FUZZY &&
		!p->atoms[0].negative && p->atoms[0].len == p->name.len &&
		p->atoms[0].normalize == p->name.normalize &&
		memcmp(p->atoms[0].needle, p->name.needle, p->name.len * sizeof(uint32_t)) == 0;
	if (p->natoms > 0)
		r = 0;
	free(cps);
	return r;
}

/* Free the atoms of a pattern. */
void
fuzzy_pattern_free(struct fuzzy_pattern *p)
{
	for (size_t i = 0; i < p->natoms; i++)
		free(p->atoms[i].needle);
	free(p->name.needle);
	memset(p, 0, sizeof(*p));
}

/* Sort and de-duplicate positions (nucleo's indices are per atom, then merged). */
static size_t
fz_sort_unique(uint32_t *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint32_t x = v[i];
		size_t j = i;
		while (j > 0 && v[j - 1] > x) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k == 0 || v[k - 1] != v[i])
			v[k++] = v[i];
	}
	return k;
}

/* Does the name equal the query (the exact-name tier)? */
static int
fz_name_equal(const struct fuzzy_atom *q, const uint32_t *name, size_t n)
{
	if (n != q->len)
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = name[i];
		if (q->normalize)
			c = fuzzy_normalize(c);
		if (fuzzy_fold(c) != q->needle[i])
			return 0;
	}
	return 1;
}

/*
 * The name tiers of a file whose name matches: 1<<16 + the name's score (+ 2<<16 when equal to
 * the query), indices into the path; 0 when the name does not match.
 */
static long
fz_name_tier(struct fuzzy_matcher *m, const struct fuzzy_pattern *p, const uint32_t *hay, size_t hn,
	uint32_t *indices, size_t *nidx)
{
	uint32_t one[FUZZY_PATH_MAX];
	size_t base = hn, k = 0;
	int name_ascii = 1;

	while (base > 0 && hay[base - 1] != '/')
		base--;
	for (size_t i = base; i < hn; i++)
		name_ascii &= hay[i] < 128;
	long s = fuzzy_atom_score(
		m, &p->name, hay + base, hn - base, name_ascii, indices ? one : NULL, &k);
	if (s < 0)
		return 0;
	if (indices != NULL) {
		for (size_t i = 0; i < k; i++)
			indices[i] = one[i] + (uint32_t)base;
		*nidx = fz_sort_unique(indices, k);
	}
	return FZ_TIER_NAME + s +
		(fz_name_equal(&p->name, hay + base, hn - base) ? FZ_TIER_EXACT : 0);
}

/* A plain pattern on a file's name alone (fuzzy.h). */
long
fuzzy_score_name(
	struct fuzzy_matcher *m, const struct fuzzy_pattern *p, const char *name, size_t len)
{
	uint32_t hay[256];
	int ascii;
	long n = fuzzy_decode(name, len, hay, nitems(hay), &ascii);

	if (n < 0)
		return -2; /* too long for this shortcut */
	long s = fuzzy_atom_score(m, &p->name, hay, (size_t)n, ascii, NULL, NULL);
	if (s < 0)
		return -1;
	return FZ_TIER_NAME + s + (fz_name_equal(&p->name, hay, (size_t)n) ? FZ_TIER_EXACT : 0);
}

/* Does a name (len bytes) equal the query, as the exact-name tier compares them (fuzzy.h)? */
int
fuzzy_name_equal(const struct fuzzy_pattern *p, const char *name, size_t len)
{
	uint32_t hay[256];
	int ascii;
	long n;

	if (!p->name_ok || (n = fuzzy_decode(name, len, hay, nitems(hay), &ascii)) < 0)
		return 0;
	return fz_name_equal(&p->name, hay, (size_t)n);
}

/* The largest score an atom can get: the first character 16 + 2 x 9, the others 16 + 9. */
long
fuzzy_atom_upper(const struct fuzzy_atom *a)
{
	return a->negative || a->len == 0 ? 0 : 25 * (long)a->len + 9;
}

/* The score of a relative path (see fuzzy.h for the tiers). */
long
fuzzy_score_path(struct fuzzy_matcher *m, const struct fuzzy_pattern *p, const char *path,
	size_t len, int is_dir, uint32_t *indices, size_t *nindices)
{
	static __thread uint32_t hay[FUZZY_PATH_MAX];
	uint32_t one[FUZZY_PATH_MAX];
	size_t nidx = 0, k;
	long total = 0;
	int ascii;

	long hn = fuzzy_decode(path, len, hay, FUZZY_PATH_MAX, &ascii);
	if (hn < 0)
		return -1;
	/*
	 * A plain query on a file: when the name alone matches, the path does too (the name is
	 * a part of it) and its score is replaced by the name tier, so it need not be computed.
	 */
	if (p->plain && !is_dir &&
		(total = fz_name_tier(m, p, hay, (size_t)hn, indices, &nidx)) > 0) {
		if (indices != NULL)
			*nindices = nidx;
		return total;
	}
	for (size_t i = 0; i < p->natoms; i++) {
		long s = fuzzy_atom_score(
			m, &p->atoms[i], hay, (size_t)hn, ascii, indices ? one : NULL, &k);
		if (s < 0)
			return -1;
		total += s;
		if (indices != NULL && s >= 0 && !p->atoms[i].negative) {
			for (size_t t = 0; t < k && nidx < FUZZY_PATH_MAX; t++)
				indices[nidx++] = one[t];
		}
	}
	if (p->name_ok) {
		size_t base = (size_t)hn;
		while (base > 0 && hay[base - 1] != '/')
			base--;
		const uint32_t *name = hay + base;
		size_t nn = (size_t)hn - base;
		int name_ascii = 1;
		for (size_t i = 0; i < nn; i++)
			name_ascii &= name[i] < 128;
		long tier = 0;
		if (!is_dir) {
			long s = fuzzy_atom_score(
				m, &p->name, name, nn, name_ascii, indices ? one : NULL, &k);
			if (s >= 0) {
				total = FZ_TIER_NAME + s;
				if (indices != NULL) {
					for (nidx = 0; nidx < k; nidx++)
						indices[nidx] = one[nidx] + (uint32_t)base;
				}
			}
		}
		if (fz_name_equal(&p->name, name, nn))
			tier = FZ_TIER_EXACT;
		total += tier;
	}
	if (indices != NULL)
		*nindices = fz_sort_unique(indices, nidx);
	return total;
}
