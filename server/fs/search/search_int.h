/*
 * Inside the search index (search_index.c, search.c): the entry records and the path arena,
 * shared by the code that fills the index and the code that scores it. Not for other modules.
 *
 * Rule: an index is used by one thread at a time (the runner's worker); a query may lend it
 * read-only to one helper thread while the worker waits for it.
 */
#ifndef SEARCH_INT_H
#define SEARCH_INT_H

#include <stdint.h>

#include "search.h"
#include "protocol/buf.h"

#define SE_DIR	 0x1
#define SE_ASCII 0x2
#define SE_DEAD	 0x4 /* removed; skipped until the next compaction */

/* One walked entry: where its path is, and which characters it (and its name) contain. */
struct search_entry {
	uint64_t mask;	    /* search_char_bit of every byte of the path (all ones if not ASCII) */
	uint64_t name_mask; /* the same for the last component */
	uint32_t off;	    /* into the arena */
	uint16_t len;
	uint16_t base; /* where the last component starts */
	uint8_t root;
	uint8_t flags; /* SE_* */
};

struct search_index {
	struct buf arena;   /* NUL-terminated relative paths */
	struct buf entries; /* struct search_entry[] */
	size_t n;	    /* entries, dead ones included */
	size_t ndead;
	uint32_t *slots; /* open addressing: entry index + 1, 0 empty, UINT32_MAX deleted */
	size_t nslots;	 /* a power of two, at least twice n */
	int truncated;
	int squeezed; /* an add failed at limit */
	size_t limit; /* bytes it may hold (search_index_bytes), 0 for the fixed ceilings only */
	int bulk;     /* filled by a walk: unique paths, the hash is built on first need */
};

/* The entry array. */
static inline struct search_entry *
search_entries(const struct search_index *ix)
{
	return (struct search_entry *)ix->entries.ptr;
}

/* The bit standing for a byte in the masks: letters folded, digits, punctuation shared. */
static inline uint64_t
search_char_bit(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		c = (unsigned char)(c + 32);
	if (c >= 'a' && c <= 'z')
		return 1ULL << (c - 'a');
	if (c >= '0' && c <= '9')
		return 1ULL << (26 + c - '0');
	return 1ULL << (36 + c % 28);
}

#endif
