/*
 * nucleo's matcher, re-implemented from its observable rules (fuzzy.h): the same constants,
 * the same prefilter, the same optimal alignment (a two-state Smith-Waterman over the window
 * between the first possible start and the last possible end) with the same tie-breaking (the
 * rightmost best end; a match beats a skip only when strictly better), the greedy fallback for
 * windows too large for its matrix, and its exact/prefix/postfix/substring atoms. Scores must
 * be equal to nucleo's, not just close: codex sorts by them.
 *
 * All scratch memory lives in struct fuzzy_matcher (bounded by FUZZY_PATH_MAX), so scoring
 * allocates nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fuzzy.h"
#include "protocol/xmalloc.h"

#define SCORE_MATCH	  16
#define GAP_START	  3
#define GAP_EXTENSION	  1
#define BONUS_BOUNDARY	  8
#define BONUS_CAMEL123	  (BONUS_BOUNDARY - GAP_START)
#define BONUS_NON_WORD	  BONUS_BOUNDARY
#define BONUS_CONSECUTIVE (GAP_START + GAP_EXTENSION)
#define BONUS_FIRST_MULT  2
#define BONUS_WHITE	  BONUS_BOUNDARY       /* path configuration */
#define BONUS_DELIM	  (BONUS_BOUNDARY + 1) /* after '/' */
#define MATRIX_MAX	  (100 * 1024)
#define MATCHER_DATA_SIZE (2048 * 4 + 2048 + 2048 * 2 + 2048 * 8 + MATRIX_MAX)

struct fz_cell {
	uint16_t score;
	uint8_t consec;
	uint8_t matched;
};

static const struct fz_cell UNMATCHED = {0, 0, 1};

struct fuzzy_matcher {
	uint32_t hay[FUZZY_PATH_MAX];
	uint32_t win[FUZZY_PATH_MAX];
	uint8_t bonus[FUZZY_PATH_MAX];
	uint16_t rows[FUZZY_PATH_MAX];
	struct fz_cell m0[FUZZY_PATH_MAX], m1[FUZZY_PATH_MAX];
	uint8_t bits[MATRIX_MAX];
	uint32_t idx[FUZZY_PATH_MAX + FUZZY_QUERY_MAX];
	size_t nidx;
};

/* nucleo's bonus for a character of class cls following one of class prev. */
static int
fz_bonus_calc(enum fuzzy_class prev, enum fuzzy_class cls)
{
	if (cls > FZ_DELIMITER) {
		if (prev == FZ_WHITESPACE)
			return BONUS_WHITE;
		if (prev == FZ_DELIMITER)
			return BONUS_DELIM;
		if (prev == FZ_NONWORD)
			return BONUS_BOUNDARY;
	}
	if ((prev == FZ_LOWER && cls == FZ_UPPER) || (prev != FZ_NUMBER && cls == FZ_NUMBER))
		return BONUS_CAMEL123;
	if (cls == FZ_WHITESPACE)
		return BONUS_WHITE;
	if (cls == FZ_NONWORD)
		return BONUS_NON_WORD;
	return 0;
}

#define FZ_NCLASS (FZ_NUMBER + 1)

/* The bonus table and the classes of ASCII, computed once (scoring is the hot loop). */
static uint8_t fz_bonus_tab[FZ_NCLASS][FZ_NCLASS];
static uint8_t fz_ascii_class[128];
static pthread_once_t fz_tab_once = PTHREAD_ONCE_INIT;

/* Fill the tables. */
static void
fz_tab_init(void)
{
	for (int p = 0; p < FZ_NCLASS; p++)
		for (int c = 0; c < FZ_NCLASS; c++)
			fz_bonus_tab[p][c] = (uint8_t)fz_bonus_calc(p, c);
	for (uint32_t c = 0; c < 128; c++)
		fz_ascii_class[c] = (uint8_t)fuzzy_char_class(c);
}

/* The bonus (table lookup). */
static inline int
fz_bonus(enum fuzzy_class prev, enum fuzzy_class cls)
{
	return fz_bonus_tab[prev][cls];
}

/* The class of a character, ASCII from the table. */
static inline enum fuzzy_class
fz_class(uint32_t c)
{
	return c < 128 ? (enum fuzzy_class)fz_ascii_class[c] : fuzzy_char_class(c);
}

/* Scratch for one thread. */
struct fuzzy_matcher *
fuzzy_matcher_new(void)
{
	pthread_once(&fz_tab_once, fz_tab_init);
	return xcalloc(1, sizeof(struct fuzzy_matcher));
}

/* Free a matcher; accepts NULL. */
void
fuzzy_matcher_free(struct fuzzy_matcher *m)
{
	free(m);
}

/* A haystack character as the matcher compares it (char_class_and_normalize). */
static uint32_t
fz_norm_cls(const struct fuzzy_atom *a, uint32_t c, enum fuzzy_class *cls)
{
	*cls = fz_class(c);
	if (c < 128)
		return *cls == FZ_UPPER ? c + 32 : c;
	int fold = *cls == FZ_UPPER;
	if (a->normalize) {
		c = fuzzy_normalize(c);
		fold = 1;
	}
	return fold ? fuzzy_fold(c) : c;
}

/* A character normalized without its class (nucleo's Char::normalize). */
static uint32_t
fz_norm(const struct fuzzy_atom *a, uint32_t c)
{
	if (c < 128)
		return c >= 'A' && c <= 'Z' ? c + 32 : c;
	if (a->normalize)
		c = fuzzy_normalize(c);
	return fuzzy_fold(c);
}

/* The class of the character before position i (the path configuration starts on '/'). */
static enum fuzzy_class
fz_prev_class(const uint32_t *hay, size_t i)
{
	return i == 0 ? FZ_DELIMITER : fz_class(hay[i - 1]);
}

/* Record a matched position. */
static void
fz_push(struct fuzzy_matcher *m, size_t i)
{
	if (m->nidx < nitems(m->idx))
		m->idx[m->nidx++] = (uint32_t)i;
}

/* Score a known alignment window greedily (nucleo's calculate_score). */
static long
fz_calc(struct fuzzy_matcher *m, const struct fuzzy_atom *a, const uint32_t *hay, size_t start,
	size_t end)
{
	const uint32_t *nd = a->needle;
	enum fuzzy_class prev = fz_prev_class(hay, start), cls;
	size_t k = 1;
	int in_gap = 0, consecutive = 1;

	fz_push(m, start);
	cls = fz_class(hay[start]);
	int first_bonus = fz_bonus(prev, cls);
	long score = SCORE_MATCH + first_bonus * BONUS_FIRST_MULT;
	prev = cls;
	uint32_t want = a->len > 1 ? nd[k++] : nd[0];
	for (size_t i = start + 1; i < end; i++) {
		uint32_t c = fz_norm_cls(a, hay[i], &cls);
		if (c == want) {
			fz_push(m, i);
			int bonus = fz_bonus(prev, cls);
			if (consecutive != 0) {
				if (bonus >= BONUS_BOUNDARY && bonus > first_bonus)
					first_bonus = bonus;
				if (first_bonus > bonus)
					bonus = first_bonus;
				if (bonus < BONUS_CONSECUTIVE)
					bonus = BONUS_CONSECUTIVE;
			} else {
				first_bonus = bonus;
			}
			score += SCORE_MATCH + bonus;
			in_gap = 0;
			consecutive++;
			if (k < a->len)
				want = nd[k++];
		} else {
			score -= in_gap ? GAP_EXTENSION : GAP_START;
			if (score < 0)
				score = 0;
			in_gap = 1;
			consecutive = 0;
		}
		prev = cls;
	}
	return score;
}

/* hay[start..end) equals the needle after normalization, then scored. */
static long
fz_exact(struct fuzzy_matcher *m, const struct fuzzy_atom *a, const uint32_t *hay, size_t start,
	size_t end)
{
	if (end - start != a->len)
		return -1;
	for (size_t i = 0; i < a->len; i++) {
		if (fz_norm(a, hay[start + i]) != fz_norm(a, a->needle[i]))
			return -1;
	}
	return fz_calc(m, a, hay, start, end);
}

/* The matrix of nucleo is bounded; past it the greedy alignment is used. */
static int
fz_fits(size_t w, size_t n, int ascii)
{
	if (w * n > MATRIX_MAX || w > 65535 || n > 2048)
		return 0;
	size_t off = w * (ascii ? 1 : 4) + w;
	off = (off + 1) & ~(size_t)1;
	off += n * 2;
	off = (off + 7) & ~(size_t)7;
	off += (w + 1 - n) * 8 + (w + 1 - n) * n;
	return off <= MATCHER_DATA_SIZE;
}

/* The greedy fallback: forward to find an end, backward to tighten the start. */
static long
fz_greedy(struct fuzzy_matcher *m, const struct fuzzy_atom *a, const uint32_t *hay, size_t hn,
	size_t start, size_t end, int ascii)
{
	if (!ascii) {
		size_t k = 1;
		int found = 0;
		for (size_t i = end; i < hn && a->len > 1; i++) {
			if (fz_norm(a, hay[i]) == a->needle[k] && ++k == a->len) {
				end = i + 1;
				found = 1;
				break;
			}
		}
		if (!found)
			return -1;
	}
	size_t k = a->len - 1;
	for (size_t i = end; i-- > start;) {
		if (fz_norm(a, hay[i]) == a->needle[k]) {
			if (k == 0) {
				start = i;
				break;
			}
			k--;
		}
	}
	return fz_calc(m, a, hay, start, end);
}

/* One cell of the next row: a consecutive match or a skip from the gap state. */
static struct fz_cell
fz_next_cell(int p_score, int bonus, struct fz_cell mc)
{
	struct fz_cell out;

	if (mc.score == 0 && mc.consec == 0 && mc.matched == 1) {
		out.score = (uint16_t)(p_score + bonus + SCORE_MATCH);
		out.matched = 0;
		out.consec = (uint8_t)bonus;
		return out;
	}
	int consec = mc.consec > BONUS_CONSECUTIVE ? mc.consec : BONUS_CONSECUTIVE;
	if (bonus >= BONUS_BOUNDARY && bonus > consec)
		consec = bonus;
	int score_match = mc.score + (consec > bonus ? consec : bonus);
	int score_skip = p_score + bonus;
	if (score_match > score_skip) {
		out.score = (uint16_t)(score_match + SCORE_MATCH);
		out.matched = 1;
		out.consec = (uint8_t)consec;
	} else {
		out.score = (uint16_t)(score_skip + SCORE_MATCH);
		out.matched = 0;
		out.consec = (uint8_t)bonus;
	}
	return out;
}

/* The optimal alignment inside hay[start..end) (nucleo's fuzzy_match_optimal). */
static long
fz_optimal(struct fuzzy_matcher *m, const struct fuzzy_atom *a, const uint32_t *hay, size_t hn,
	size_t start, size_t greedy_end, size_t end, int ascii)
{
	size_t w = end - start, n = a->len;
	const uint32_t *nd = a->needle;

	if (!fz_fits(w, n, ascii))
		return fz_greedy(m, a, hay, hn, start, greedy_end, ascii);
	enum fuzzy_class prev = fz_prev_class(hay, start), cls;
	size_t j = 0;
	int matched = 0;
	for (size_t i = 0; i < w; i++) {
		m->win[i] = fz_norm_cls(a, hay[start + i], &cls);
		m->bonus[i] = (uint8_t)fz_bonus(prev, cls);
		prev = cls;
		if (m->win[i] == nd[j]) {
			if (j + 1 < n)
				m->rows[j++] = (uint16_t)i;
			else if (!matched) {
				m->rows[j] = (uint16_t)i;
				matched = 1;
			}
		}
	}
	if (!matched)
		return -1;
	struct fz_cell *cur = m->m0, *next = m->m1;
	for (size_t c = 0; c < w; c++) {
		if (m->win[c] == nd[0]) {
			cur[c].score = (uint16_t)(m->bonus[c] * BONUS_FIRST_MULT + SCORE_MATCH);
			cur[c].matched = 0;
			cur[c].consec = m->bonus[c];
		} else {
			cur[c] = UNMATCHED;
		}
	}
	for (j = 0; j + 1 < n; j++) {
		int pp = 0, pm = 0;
		for (size_t c = m->rows[j]; c + 1 < w; c++) {
			int sm = pm - GAP_START < 0 ? 0 : pm - GAP_START;
			int sk = pp - GAP_EXTENSION < 0 ? 0 : pp - GAP_EXTENSION;
			int p = sm > sk ? sm : sk, pmatched = sm > sk;
			struct fz_cell mc = cur[c];
			m->bits[j * w + c] = (uint8_t)(pmatched | (mc.matched << 1));
			if (c + 1 >= m->rows[j + 1])
				next[c + 1] = m->win[c + 1] == nd[j + 1]
					? fz_next_cell(p, m->bonus[c + 1], mc)
					: UNMATCHED;
			pp = p;
			pm = mc.score;
		}
		struct fz_cell *t = cur;
		cur = next;
		next = t;
	}
	size_t best = m->rows[n - 1];
	for (size_t c = m->rows[n - 1]; c < w; c++) {
		if (cur[c].score >= cur[best].score)
			best = c;
	}
	/* walk back through the stored decisions */
	size_t base = m->nidx;
	if (base + n > nitems(m->idx))
		return cur[best].score;
	m->nidx += n;
	m->idx[base + n - 1] = (uint32_t)(start + best);
	int in_m = cur[best].matched;
	long col = (long)best - 1;
	for (long row = (long)n - 2; row >= 0 && col >= 0;) {
		if (in_m)
			m->idx[base + (size_t)row] = (uint32_t)(start + (size_t)col);
		uint8_t b = m->bits[(size_t)row * w + (size_t)col];
		int nm = in_m ? (b & 2) != 0 : (b & 1) != 0;
		if (in_m)
			row--;
		col--;
		in_m = nm;
	}
	return cur[best].score;
}

/* Fuzzy atom of one character: the best-placed occurrence. */
static long
fz_one(struct fuzzy_matcher *m, const struct fuzzy_atom *a, const uint32_t *hay, size_t hn,
	int ascii)
{
	uint32_t want = a->needle[0];
	long best = 0;
	size_t pos = 0;

	if (ascii) {
		for (size_t i = 0; i < hn; i++) {
			if (fz_norm(a, hay[i]) != want)
				continue;
			int bonus = fz_bonus(fz_prev_class(hay, i), fz_class(hay[i]));
			long s = bonus * BONUS_FIRST_MULT + SCORE_MATCH;
			if (s > best) {
				best = s;
				pos = i;
				if (bonus >= BONUS_WHITE)
					break;
			}
		}
		if (best == 0)
			return -1;
	} else {
		size_t start = 0;
		while (start < hn && fz_norm(a, hay[start]) != want)
			start++;
		if (start >= hn)
			return -1;
		enum fuzzy_class prev = fz_prev_class(hay, start), cls;
		for (size_t i = start; i < hn; i++) {
			if (fz_norm_cls(a, hay[i], &cls) != want)
				continue;
			int bonus = fz_bonus(prev, cls);
			prev = cls;
			long s = bonus * BONUS_FIRST_MULT + SCORE_MATCH;
			if (s > best) {
				best = s;
				pos = i;
				if (bonus >= BONUS_WHITE)
					break;
			}
		}
	}
	fz_push(m, pos);
	return best;
}

/* A fuzzy atom (nucleo's fuzzy_match): prefilter, then exact, greedy-exact or optimal. */
static long
fz_fuzzy(struct fuzzy_matcher *m, const struct fuzzy_atom *a, const uint32_t *hay, size_t hn,
	int ascii)
{
	size_t n = a->len, start, end, greedy_end;

	if (n > hn)
		return -1;
	if (n == hn)
		return fz_exact(m, a, hay, 0, hn);
	if (ascii && !a->ascii)
		return -1;
	if (n == 1)
		return fz_one(m, a, hay, hn, ascii);
	for (start = 0; start <= hn - n && fz_norm(a, hay[start]) != a->needle[0]; start++) {
	}
	if (start > hn - n)
		return -1;
	if (ascii) {
		size_t i = start + 1;
		for (size_t k = 1; k < n; k++, i++) {
			while (i < hn && fz_norm(a, hay[i]) != a->needle[k])
				i++;
			if (i >= hn)
				return -1;
		}
		greedy_end = end = i;
		for (size_t t = hn; t > greedy_end; t--) {
			if (fz_norm(a, hay[t - 1]) == a->needle[n - 1]) {
				end = t;
				break;
			}
		}
		if (n == end - start)
			return fz_calc(m, a, hay, start, greedy_end);
		return fz_optimal(m, a, hay, hn, start, greedy_end, end, 1);
	}
	for (end = hn; end > start + 1 && fz_norm(a, hay[end - 1]) != a->needle[n - 1]; end--) {
	}
	if (end <= start + 1 || end - start < n)
		return -1;
	if (n == end - start)
		return fz_exact(m, a, hay, start, end);
	return fz_optimal(m, a, hay, hn, start, start + 1, end, 0);
}

/* Leading / trailing whitespace count as nucleo's Utf32Str (0 when all of it is blank). */
static size_t
fz_lead(const uint32_t *hay, size_t hn)
{
	for (size_t i = 0; i < hn; i++) {
		if (!fuzzy_is_space(hay[i]))
			return i;
	}
	return 0;
}

/* Trailing whitespace count. */
static size_t
fz_trail(const uint32_t *hay, size_t hn)
{
	for (size_t i = 0; i < hn; i++) {
		if (!fuzzy_is_space(hay[hn - 1 - i]))
			return i;
	}
	return 0;
}

/* Does hay[i..i+n) equal the needle (normalized)? */
static int
fz_at(const struct fuzzy_atom *a, const uint32_t *hay, size_t hn, size_t i, int exact_case)
{
	if (i + a->len > hn)
		return 0;
	for (size_t k = 0; k < a->len; k++) {
		uint32_t c = exact_case ? hay[i + k] : fz_norm(a, hay[i + k]);
		if (c != a->needle[k])
			return 0;
	}
	return 1;
}

/* The substring atom: the first best-placed occurrence, scored over its length. */
static long
fz_substring(struct fuzzy_matcher *m, const struct fuzzy_atom *a, const uint32_t *hay, size_t hn,
	int ascii)
{
	size_t n = a->len, pos = 0, i;
	long best = 0;

	if (n > hn)
		return -1;
	if (n == hn)
		return fz_exact(m, a, hay, 0, hn);
	if (ascii && !a->ascii)
		return -1;
	if (n == 1)
		return fz_one(m, a, hay, hn, ascii);
	if (ascii) {
		size_t letter = n;
		for (size_t k = 0; k < n; k++) {
			if (a->needle[k] >= 'a' && a->needle[k] <= 'z') {
				letter = k;
				break;
			}
		}
		for (int pass = letter < n ? 0 : 1; pass < 2 && best == 0; pass++) {
			/* pass 0: case-insensitive (nucleo's prefilters, including its quirk of
			 * searching the whole lower-case needle when the first letter comes late);
			 * pass 1: plain case-sensitive occurrences */
			size_t last = pass == 0 && letter >= 2 ? hn - 2 * n + letter : hn - n;
			if (pass == 0 && letter >= 2 && hn + letter < 2 * n)
				continue;
			for (i = 0; i <= last && i + n <= hn; i++) {
				int hit = pass == 1 || letter >= 2 ? fz_at(a, hay, hn, i, 1)
								   : fz_at(a, hay, hn, i, 0);
				if (pass == 0 && letter == 1 && hay[i] != a->needle[0])
					hit = 0;
				if (!hit)
					continue;
				int bonus = fz_bonus(fz_prev_class(hay, i), fz_class(hay[i]));
				long s = bonus * BONUS_FIRST_MULT + SCORE_MATCH;
				if (s > best) {
					best = s;
					pos = i;
					if (bonus >= BONUS_WHITE)
						break;
				}
			}
		}
		if (best == 0)
			return -1;
		return fz_calc(m, a, hay, pos, pos + n);
	}
	size_t start;
	for (start = 0; start <= hn - n && fz_norm(a, hay[start]) != a->needle[0]; start++) {
	}
	if (start > hn - n)
		return -1;
	enum fuzzy_class prev = fz_prev_class(hay, start), cls;
	for (i = start; i < hn - n; i++) {
		if (fz_norm_cls(a, hay[i], &cls) != a->needle[0])
			continue;
		int bonus = fz_bonus(prev, cls);
		prev = cls;
		long s = bonus * BONUS_FIRST_MULT + SCORE_MATCH;
		if (s > best && fz_at(a, hay, hn, i, 0)) {
			best = s;
			pos = i;
			if (bonus >= BONUS_WHITE)
				break;
		}
	}
	if (best == 0)
		return -1;
	return fz_calc(m, a, hay, pos, pos + n);
}

/* Score one atom (negative atoms score 0 when they do not match). */
long
fuzzy_atom_score(struct fuzzy_matcher *m, const struct fuzzy_atom *a, const uint32_t *hay,
	size_t hn, int ascii, uint32_t *indices, size_t *nindices)
{
	size_t n = a->len, lead, trail;
	long s = -1;

	m->nidx = 0;
	switch (a->kind) {
	case FUZZY_FUZZY:
		s = fz_fuzzy(m, a, hay, hn, ascii);
		break;
	case FUZZY_SUBSTRING:
		s = fz_substring(m, a, hay, hn, ascii);
		break;
	case FUZZY_PREFIX:
		lead = fuzzy_is_space(a->needle[0]) ? 0 : fz_lead(hay, hn);
		s = hn - lead < n ? -1 : fz_exact(m, a, hay, lead, lead + n);
		break;
	case FUZZY_POSTFIX:
		trail = fuzzy_is_space(a->needle[n - 1]) ? 0 : fz_trail(hay, hn);
		s = hn - trail < n ? -1 : fz_exact(m, a, hay, hn - n - trail, hn - trail);
		break;
	case FUZZY_EXACT:
		lead = fuzzy_is_space(a->needle[0]) ? 0 : fz_lead(hay, hn);
		trail = fuzzy_is_space(a->needle[n - 1]) ? 0 : fz_trail(hay, hn);
		s = trail == hn ? -1 : fz_exact(m, a, hay, lead, hn - trail);
		break;
	}
	if (a->negative) {
		m->nidx = 0;
		s = s < 0 ? 0 : -1;
	}
	if (indices != NULL && s >= 0) {
		memcpy(indices, m->idx, m->nidx * sizeof(*indices));
		*nindices = m->nidx;
	}
	return s;
}
