/*
 * Fuzzy scoring of paths with upstream's numbers: nucleo's matcher (fzf-style Smith-Waterman
 * with the path configuration: '/' is the delimiter, case ignored, Latin letters normalized)
 * plus codex 0.169's file-name tiers, observed on its answers:
 *   - a file whose name (last component) alone matches the query scores 1<<16 plus the score of
 *     that match, and its indices point into the name;
 *   - an entry (file or folder) whose name equals the query (case-insensitively) gets 2<<16
 *     more;
 *   - otherwise the score is nucleo's score over the whole relative path.
 * The name tiers apply only to a query without inner whitespace; the query syntax of nucleo
 * ("a b" = both, ^prefix, 'substring, suffix$, !not) applies to the path.
 *
 * Not thread-safe per object: each thread uses its own struct fuzzy_matcher; a parsed pattern
 * is read-only once made and may be shared.
 */
#ifndef FUZZY_H
#define FUZZY_H

#include <stddef.h>
#include <stdint.h>

#define FUZZY_QUERY_MAX 1024 /* codepoints of a query that are looked at */
#define FUZZY_ATOMS_MAX 32
#define FUZZY_PATH_MAX	4096 /* codepoints of a path that can be scored */

enum fuzzy_kind { FUZZY_FUZZY, FUZZY_SUBSTRING, FUZZY_PREFIX, FUZZY_POSTFIX, FUZZY_EXACT };

struct fuzzy_atom {
	enum fuzzy_kind kind;
	int negative;
	int ascii; /* needle is all ASCII */
	int normalize;
	uint32_t *needle; /* lower-cased codepoints */
	size_t len;
};

struct fuzzy_pattern {
	struct fuzzy_atom atoms[FUZZY_ATOMS_MAX];
	size_t natoms;
	struct fuzzy_atom name; /* the trimmed query as one fuzzy atom, for the name tiers */
	int name_ok;		/* the query has no inner whitespace */
	int plain;		/* one fuzzy atom equal to the name atom: a file's name decides */
};

struct fuzzy_matcher; /* scratch space of one thread */

struct fuzzy_matcher *fuzzy_matcher_new(void);
void fuzzy_matcher_free(struct fuzzy_matcher *m);

/* Parse a query; 0, or -EINVAL for a query with no atom (empty / blank). */
int fuzzy_pattern_parse(struct fuzzy_pattern *p, const char *query);
void fuzzy_pattern_free(struct fuzzy_pattern *p);

/*
 * Score a relative path (UTF-8, len bytes). Returns the score (>= 0) or -1 for no match. When
 * indices is not NULL it receives the sorted, de-duplicated matched character positions and
 * *nindices their count (room for FUZZY_PATH_MAX).
 */
long fuzzy_score_path(struct fuzzy_matcher *m, const struct fuzzy_pattern *p, const char *path,
	size_t len, int is_dir, uint32_t *indices, size_t *nindices);

/*
 * For a plain pattern (fuzzy_pattern.plain) and a file: the score of the path when its name
 * (the last component, len bytes) matches, else -1 (then fuzzy_score_path decides).
 */
long fuzzy_score_name(
	struct fuzzy_matcher *m, const struct fuzzy_pattern *p, const char *name, size_t len);
/* Does a name (the last component, len bytes) equal the query (the exact-name tier's test)? */
int fuzzy_name_equal(const struct fuzzy_pattern *p, const char *name, size_t len);
/* No score of the atom can exceed this (nucleo's bonuses are bounded). */
long fuzzy_atom_upper(const struct fuzzy_atom *a);
#define FUZZY_TIER_NAME	 (1L << 16)
#define FUZZY_TIER_EXACT (2L << 16)

/* nucleo's score of one atom on a codepoint haystack, -1 for none (exposed for the tests). */
long fuzzy_atom_score(struct fuzzy_matcher *m, const struct fuzzy_atom *a, const uint32_t *hay,
	size_t n, int hay_ascii, uint32_t *indices, size_t *nindices);

/* --- characters (fuzzy_chars.c) --- */
enum fuzzy_class {
	FZ_WHITESPACE,
	FZ_NONWORD,
	FZ_DELIMITER,
	FZ_LOWER,
	FZ_UPPER,
	FZ_LETTER,
	FZ_NUMBER
};
enum fuzzy_class fuzzy_char_class(uint32_t c);
/* Simple case folding (to lower case). */
uint32_t fuzzy_fold(uint32_t c);
/* Latin letters with marks to their ASCII base (nucleo's normalization blocks; fuzzy_normalize.c).
 */
uint32_t fuzzy_normalize(uint32_t c);
/* Decode UTF-8 into codepoints, one per grapheme (combining marks dropped; "\r\n" -> "\n").
 * Returns the count (at most cap), or -1 when more than cap; *ascii tells whether all ASCII. */
long fuzzy_decode(const char *s, size_t len, uint32_t *out, size_t cap, int *ascii);
int fuzzy_is_space(uint32_t c);

#endif
