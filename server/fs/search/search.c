/*
 * Scoring an index for a query (search.h), and the results in upstream's wire shape.
 *
 * Order: score descending, then path ascending in byte order (Rust's str ordering), and only
 * the best SEARCH_LIMIT are kept (a bounded min-heap per thread, merged at the end).
 *
 * What keeps a keystroke cheap, without changing any answer:
 *   - a prefilter: an entry whose characters (search_entry.mask) lack one the query's positive
 *     atoms need cannot match and is skipped before its path is decoded;
 *   - the name tier first: with a query without inner whitespace, only entries whose name has
 *     every character of the query can reach 1<<16 (a single atom's path score stays below
 *     it), so those are scored first, and when 50 of them reached it nothing else can enter;
 *   - the upper bound of a score (fuzzy_atom_upper): an entry that cannot beat the worst kept
 *     is not scored; a name scores its best only when it starts with the query;
 *   - two threads: past SEARCH_PAR_MIN entries, a helper thread scores every other stripe of
 *     SEARCH_STRIPE entries (neighbours in walk order look alike, so halves would be uneven).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzy.h"
#include "search_int.h"
#include "protocol/xmalloc.h"

#define SEARCH_PAR_MIN	   16384 /* entries below which one thread scores everything */
#define SEARCH_CANCEL_POLL 4095
#define SEARCH_STRIPE	   1024 /* entries in a row one thread scores (neighbours look alike) */

struct search_heap {
	uint32_t score[SEARCH_LIMIT];
	uint32_t ent[SEARCH_LIMIT];
	size_t n;
};

/* One thread's share of a query. */
struct search_part {
	const struct search_index *ix;
	const struct fuzzy_pattern *p;
	uint64_t qmask, nmask;
	long path_ub, name_ub; /* the best a path score, a name score can be */
	size_t from, to;
	size_t part, nparts; /* this thread takes the stripes i with i % nparts == part */
	const atomic_int *cancel;
	int cancelled;
	struct search_heap h;
	const char *query; /* trimmed */
	size_t query_len;
	long named;	  /* the folder named as the query that gets the exact tier, or -1 */
	long named_score; /* its score without the tier */
};

/* a ranks before b: higher score, then smaller path. */
static int
search_before(const struct search_index *ix, uint32_t sa, uint32_t ea, uint32_t sb, uint32_t eb)
{
	const struct search_entry *e = search_entries(ix);

	if (sa != sb)
		return sa > sb;
	return strcmp(ix->arena.ptr + e[ea].off, ix->arena.ptr + e[eb].off) < 0;
}

/* Swap two heap slots. */
static void
search_heap_swap(struct search_heap *h, size_t i, size_t j)
{
	uint32_t ts = h->score[i], te = h->ent[i];

	h->score[i] = h->score[j];
	h->ent[i] = h->ent[j];
	h->score[j] = ts;
	h->ent[j] = te;
}

/* Keep the best SEARCH_LIMIT: a min-heap whose top is the worst kept. */
static void
search_heap_offer(struct search_heap *h, const struct search_index *ix, uint32_t score, uint32_t e)
{
	size_t i;

	if (h->n < SEARCH_LIMIT) {
		i = h->n++;
		h->score[i] = score;
		h->ent[i] = e;
		while (i > 0 &&
			search_before(ix, h->score[(i - 1) / 2], h->ent[(i - 1) / 2], h->score[i],
				h->ent[i])) {
			search_heap_swap(h, i, (i - 1) / 2);
			i = (i - 1) / 2;
		}
		return;
	}
	if (!search_before(ix, score, e, h->score[0], h->ent[0]))
		return;
	h->score[0] = score;
	h->ent[0] = e;
	for (i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, w = i;
		if (l < h->n && search_before(ix, h->score[w], h->ent[w], h->score[l], h->ent[l]))
			w = l;
		if (r < h->n && search_before(ix, h->score[w], h->ent[w], h->score[r], h->ent[r]))
			w = r;
		if (w == i)
			break;
		search_heap_swap(h, i, w);
		i = w;
	}
}

/* The mask of the characters an atom's needle must find (non-ASCII ones say nothing). */
static uint64_t
search_atom_mask(const struct fuzzy_atom *a)
{
	uint64_t m = 0;

	for (size_t i = 0; i < a->len && !a->negative; i++) {
		if (a->needle[i] < 128)
			m |= search_char_bit((unsigned char)a->needle[i]);
	}
	return m;
}

/* Could an entry whose score is at most ub still enter the heap? */
static int
search_may_enter(const struct search_part *t, long ub, size_t i)
{
	const struct search_entry *e = search_entries(t->ix);

	if (t->h.n < SEARCH_LIMIT || ub > (long)t->h.score[0])
		return 1;
	if (ub < (long)t->h.score[0])
		return 0;
	/* a tie enters only with a smaller path */
	return strcmp(t->ix->arena.ptr + e[i].off, t->ix->arena.ptr + e[t->h.ent[0]].off) < 0;
}

/* Lower-case an ASCII byte. */
static inline unsigned char
search_lower(char c)
{
	return (unsigned char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
}

/* Does path[at..at+n) equal the needle (case folded)? */
static int
search_raw_eq(const struct fuzzy_atom *a, const char *path, size_t at)
{
	for (size_t k = 0; k < a->len; k++) {
		if (search_lower(path[at + k]) != a->needle[k])
			return 0;
	}
	return 1;
}

/* Can an ASCII path match this positive atom? Checked on the bytes, before any decoding. */
static int
search_raw_atom(const struct fuzzy_atom *a, const char *path, size_t len)
{
	size_t k = 0;

	if (!a->ascii || a->len > len)
		return 0; /* a needle outside ASCII never matches an ASCII path */
	/* paths with white space at either end take the long way (nucleo trims it) */
	int blank = len > 0 &&
		(path[0] == ' ' || (path[0] >= 9 && path[0] <= 13) || path[len - 1] == ' ' ||
			(path[len - 1] >= 9 && path[len - 1] <= 13));
	switch (a->kind) {
	case FUZZY_PREFIX:
		return blank || search_raw_eq(a, path, 0);
	case FUZZY_POSTFIX:
		return blank || search_raw_eq(a, path, len - a->len);
	case FUZZY_EXACT:
		return blank || (len == a->len && search_raw_eq(a, path, 0));
	default:
		for (size_t i = 0; i < len && k < a->len; i++)
			k += search_lower(path[i]) == a->needle[k];
		return k == a->len;
	}
}

/* Can an ASCII path match every positive atom? */
static int
search_raw(const struct fuzzy_pattern *p, const char *path, size_t len)
{
	for (size_t a = 0; a < p->natoms; a++) {
		if (!p->atoms[a].negative && !search_raw_atom(&p->atoms[a], path, len))
			return 0;
	}
	return 1;
}

/* Score one entry, unless its upper bound says it cannot enter; -1 when it does not match. */
static long
search_score(struct search_part *t, struct fuzzy_matcher *m, size_t i, int name_pass)
{
	const struct search_entry *e = &search_entries(t->ix)[i];
	const char *path = t->ix->arena.ptr + e->off;
	int is_dir = (e->flags & SE_DIR) != 0, ascii = (e->flags & SE_ASCII) != 0;
	size_t nlen = (size_t)(e->len - e->base);
	long exact = name_pass && (!ascii || nlen == t->p->name.len) ? FUZZY_TIER_EXACT : 0, s;

	/* a folder named as the query is always scored: it may be the one to get the tier */
	if (is_dir && exact && fuzzy_name_equal(t->p, path + e->base, nlen))
		return fuzzy_score_path(m, t->p, path, e->len, is_dir, NULL, NULL);
	if (is_dir)
		exact = 0;

	if (name_pass && !is_dir && t->p->plain) {
		if (!search_may_enter(t, FUZZY_TIER_NAME + t->name_ub + exact, i))
			return -1;
		/*
		 * A name scores the best a name can (name_ub) only when it starts with the query:
		 * once the heap holds nothing below that, other names cannot enter.
		 */
		if (ascii && t->h.n == SEARCH_LIMIT &&
			t->h.score[0] >= FUZZY_TIER_NAME + t->name_ub &&
			(nlen < t->p->name.len || !search_raw_eq(&t->p->name, path + e->base, 0)))
			return -1;
		if (ascii && !search_raw_atom(&t->p->name, path + e->base, nlen))
			s = -1; /* the name cannot match: only the path's own score is left */
		else
			s = fuzzy_score_name(m, t->p, path + e->base, nlen);
		if (s >= -1) {
			if (s >= 0 || !search_may_enter(t, t->path_ub, i))
				return s;
		}
	} else {
		long ub = t->path_ub;
		if (name_pass && !is_dir && FUZZY_TIER_NAME + t->name_ub > ub)
			ub = FUZZY_TIER_NAME + t->name_ub;
		if (!search_may_enter(t, ub + exact, i))
			return -1;
	}
	if (ascii && !search_raw(t->p, path, e->len))
		return -1;
	return fuzzy_score_path(m, t->p, path, e->len, is_dir, NULL, NULL);
}

/* Depth of a path (its slashes). */
static size_t
search_depth(const char *p)
{
	size_t n = 0;

	for (; *p != '\0'; p++)
		n += *p == '/';
	return n;
}

/* Is a folder's name the query with the same case? */
static int
search_same_case(const struct search_part *t, const struct search_entry *e)
{
	const char *name = t->ix->arena.ptr + e->off + e->base;

	return (size_t)(e->len - e->base) == t->query_len &&
		memcmp(name, t->query, t->query_len) == 0;
}

/*
 * Does folder i come before the current exact-name folder: the query's own case first, then
 * shallower, then the smaller path?
 */
static int
search_named_before(const struct search_part *t, size_t i)
{
	const struct search_entry *e = search_entries(t->ix);
	const char *a = t->ix->arena.ptr + e[i].off, *b;

	if (t->named < 0)
		return 1;
	b = t->ix->arena.ptr + e[t->named].off;
	if (search_same_case(t, &e[i]) != search_same_case(t, &e[t->named]))
		return search_same_case(t, &e[i]);
	if (search_depth(a) != search_depth(b))
		return search_depth(a) < search_depth(b);
	return strcmp(a, b) < 0;
}

/* A plain query's file whose name starts with the query: the best-scoring kind, tried first. */
static int
search_prefixed(const struct search_part *t, const struct search_entry *e)
{
	return t->p->plain && (e->flags & (SE_DIR | SE_ASCII)) == SE_ASCII &&
		(size_t)(e->len - e->base) >= t->p->name.len &&
		search_raw_eq(&t->p->name, t->ix->arena.ptr + e->off + e->base, 0);
}

/*
 * Score the entries of this thread whose masks pass, in stages: 0 the files whose name starts
 * with a plain query, 1 the other entries whose name could match, 2 the rest.
 */
static int
search_pass(struct search_part *t, struct fuzzy_matcher *m, int stage)
{
	const struct search_entry *e = search_entries(t->ix);

	for (size_t i = t->from; i < t->to; i++) {
		if ((i & (SEARCH_STRIPE - 1)) == 0 && t->nparts > 1 &&
			(i / SEARCH_STRIPE) % t->nparts != t->part) {
			i += SEARCH_STRIPE - 1; /* the other thread's stripe */
			continue;
		}
		if ((i & SEARCH_CANCEL_POLL) == 0 && t->cancel && atomic_load(t->cancel)) {
			t->cancelled = 1;
			return -1;
		}
		if ((e[i].flags & SE_DEAD) || (e[i].mask & t->qmask) != t->qmask)
			continue;
		if (t->p->name_ok) {
			int name_ok = (e[i].name_mask & t->nmask) == t->nmask;
			if (name_ok != (stage < 2) ||
				(name_ok && search_prefixed(t, &e[i]) != (stage == 0)))
				continue;
		}
		long s = search_score(t, m, i, t->p->name_ok && stage < 2);
		if (s >= 0 && (e[i].flags & SE_DIR) && s >= FUZZY_TIER_EXACT) {
			/* one folder only gets the exact tier (as upstream): kept aside */
			s -= FUZZY_TIER_EXACT;
			if (search_named_before(t, i))
				t->named = (long)i, t->named_score = s;
		}
		if (s >= 0)
			search_heap_offer(&t->h, t->ix, (uint32_t)s, (uint32_t)i);
	}
	return 0;
}

/* One thread's share: the stages in order; the last only if the name tier left room. */
static void *
search_part_run(void *arg)
{
	struct search_part *t = arg;
	struct fuzzy_matcher *m = fuzzy_matcher_new();

	if (!t->p->name_ok) {
		search_pass(t, m, 2);
	} else if (search_pass(t, m, 0) == 0 && search_pass(t, m, 1) == 0) {
		/* the heap's top is its worst: below the tier, the rest may still enter */
		if (t->h.n < SEARCH_LIMIT || t->h.score[0] < FUZZY_TIER_NAME)
			search_pass(t, m, 2);
	}
	fuzzy_matcher_free(m);
	return NULL;
}

/* qsort order of hits: rank. */
static int
search_hit_cmp(const void *a, const void *b)
{
	const struct search_hit *x = a, *y = b;

	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* The merged heaps as sorted hits with their indices. */
static void
search_collect(const struct search_index *ix, const struct fuzzy_pattern *p,
	struct search_part *parts, size_t nparts, struct search_result *out)
{
	struct search_heap all = {0};
	struct fuzzy_matcher *m = fuzzy_matcher_new();
	uint32_t *idx = xmalloc(FUZZY_PATH_MAX * sizeof(uint32_t));
	size_t nidx;

	long named = -1, named_score = 0;

	/* the exact-name folder of all parts: shallowest, then smallest path */
	for (size_t k = 0; k < nparts; k++) {
		if (parts[k].named < 0)
			continue;
		struct search_part probe = parts[0];
		probe.named = named;
		if (named < 0 || search_named_before(&probe, (size_t)parts[k].named)) {
			named = parts[k].named;
			named_score = parts[k].named_score;
		}
	}
	for (size_t k = 0; k < nparts; k++) {
		for (size_t i = 0; i < parts[k].h.n; i++) {
			if ((long)parts[k].h.ent[i] != named)
				search_heap_offer(&all, ix, parts[k].h.score[i], parts[k].h.ent[i]);
		}
	}
	if (named >= 0)
		search_heap_offer(
			&all, ix, (uint32_t)(named_score + FUZZY_TIER_EXACT), (uint32_t)named);
	out->hits = xcalloc(all.n ? all.n : 1, sizeof(*out->hits));
	for (size_t k = 0; k < all.n; k++) {
		const struct search_entry *e = &search_entries(ix)[all.ent[k]];
		struct search_hit *hit = &out->hits[out->n++];
		hit->score = all.score[k];
		hit->is_dir = (e->flags & SE_DIR) != 0;
		hit->root = e->root;
		hit->path = xstrndup(ix->arena.ptr + e->off, e->len);
		nidx = 0;
		fuzzy_score_path(m, p, hit->path, e->len, hit->is_dir, idx, &nidx);
		hit->indices = xmalloc((nidx ? nidx : 1) * sizeof(uint32_t));
		memcpy(hit->indices, idx, nidx * sizeof(uint32_t));
		hit->nindices = nidx;
	}
	qsort(out->hits, out->n, sizeof(*out->hits), search_hit_cmp);
	free(idx);
	fuzzy_matcher_free(m);
}

/* Score the whole index for a query (search.h). */
int
search_index_query(const struct search_index *ix, const char *query, const atomic_int *cancel,
	struct search_result *out)
{
	struct fuzzy_pattern p;
	struct search_part parts[2];
	size_t nparts = 1;
	pthread_t helper;
	uint64_t qmask = 0;
	long path_ub = 0;
	size_t qb = 0, qe = strlen(query);

	while (qb < qe && (query[qb] == ' ' || (query[qb] >= 9 && query[qb] <= 13)))
		qb++;
	while (qe > qb && (query[qe - 1] == ' ' || (query[qe - 1] >= 9 && query[qe - 1] <= 13)))
		qe--;

	memset(out, 0, sizeof(*out));
	if (ix == NULL || fuzzy_pattern_parse(&p, query) < 0) {
		fuzzy_pattern_free(&p);
		return 0;
	}
	for (size_t i = 0; i < p.natoms; i++) {
		qmask |= search_atom_mask(&p.atoms[i]);
		path_ub += fuzzy_atom_upper(&p.atoms[i]);
	}
	memset(parts, 0, sizeof(parts));
	for (size_t k = 0; k < 2; k++) {
		parts[k].ix = ix;
		parts[k].p = &p;
		parts[k].qmask = qmask;
		parts[k].nmask = p.name_ok ? search_atom_mask(&p.name) : 0;
		parts[k].named = -1;
		parts[k].query = query + qb;
		parts[k].query_len = qe - qb;
		parts[k].path_ub = path_ub;
		parts[k].name_ub = p.name_ok ? fuzzy_atom_upper(&p.name) : 0;
		parts[k].cancel = cancel;
		parts[k].to = ix->n;
	}
	if (ix->n >= SEARCH_PAR_MIN) {
		parts[0].nparts = parts[1].nparts = 2;
		parts[1].part = 1;
		if (pthread_create(&helper, NULL, search_part_run, &parts[1]) == 0)
			nparts = 2;
		else
			parts[0].nparts = 1;
	}
	search_part_run(&parts[0]);
	if (nparts == 2)
		pthread_join(helper, NULL);
	out->cancelled = parts[0].cancelled || parts[1].cancelled;
	search_collect(ix, &p, parts, nparts, out);
	fuzzy_pattern_free(&p);
	return 0;
}

/* Free the hits of a result. */
void
search_result_free(struct search_result *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->hits[i].path);
		free(r->hits[i].indices);
	}
	free(r->hits);
	memset(r, 0, sizeof(*r));
}

/* The wire shape of upstream's FuzzyFileSearchResult list, keys in its order. */
json_t *
search_result_files(const struct search_result *r, const char *const *roots)
{
	json_t *files = json_array();

	for (size_t i = 0; r != NULL && i < r->n; i++) {
		const struct search_hit *h = &r->hits[i];
		const char *slash = strrchr(h->path, '/');
		const char *name = slash ? slash + 1 : h->path;
		json_t *ind = json_array();
		for (size_t k = 0; k < h->nindices; k++)
			json_array_append_new(ind, json_integer(h->indices[k]));
		json_array_append_new(files,
			json_pack("{s:s,s:s,s:s,s:s,s:I,s:o}", "root", roots[h->root], "path",
				h->path, "match_type", h->is_dir ? "directory" : "file",
				"file_name", name, "score", (json_int_t)h->score, "indices", ind));
	}
	return json_pack("{s:o}", "files", files);
}
