/*
 * The search index (search_int.h): every walked entry as a small record pointing into one
 * arena of paths, with a hash of (root, path) so the watcher can add and remove single entries
 * in place. A removed entry is marked dead and skipped by queries; once half the entries are
 * dead the index is compacted.
 *
 * Bounds: SEARCH_INDEX_BYTES of path bytes, SEARCH_INDEX_ENTRIES entries; past either, adds
 * fail and the index says it is truncated.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "search_int.h"
#include "fs/walk/walk.h"
#include "protocol/xmalloc.h"

#define SLOT_EMPTY 0u
#define SLOT_GONE  UINT32_MAX

/* FNV-1a over the root number and the path. */
static uint64_t
search_hash(size_t root, const char *rel, size_t len)
{
	uint64_t h = 1469598103934665603ULL ^ (uint64_t)root;

	h *= 1099511628211ULL;
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)rel[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* An empty index. */
struct search_index *
search_index_new(void)
{
	struct search_index *ix = xcalloc(1, sizeof(*ix));

	buf_init(&ix->arena, SEARCH_INDEX_BYTES);
	buf_init(&ix->entries, (size_t)SEARCH_INDEX_ENTRIES * sizeof(struct search_entry));
	return ix;
}

/* Free an index; accepts NULL. */
void
search_index_free(struct search_index *ix)
{
	if (ix == NULL)
		return;
	buf_free(&ix->arena);
	buf_free(&ix->entries);
	free(ix->slots);
	free(ix);
}

/* Live entries. */
size_t
search_index_count(const struct search_index *ix)
{
	return ix != NULL ? ix->n - ix->ndead : 0;
}

int
search_index_truncated(const struct search_index *ix)
{
	return ix != NULL && ix->truncated;
}

/* Bytes held (search.h). */
size_t
search_index_bytes(const struct search_index *ix)
{
	return ix != NULL ? ix->arena.len + ix->entries.len + ix->nslots * sizeof(*ix->slots) : 0;
}

void
search_index_set_limit(struct search_index *ix, size_t limit)
{
	ix->limit = limit;
}

int
search_index_squeezed(const struct search_index *ix)
{
	return ix != NULL && ix->squeezed;
}

/* The slot of (root, rel): where it is, or where it would go (*found says which). */
static size_t
search_slot(const struct search_index *ix, size_t root, const char *rel, size_t len, int *found)
{
	size_t mask = ix->nslots - 1, i = search_hash(root, rel, len) & mask, free_at = SIZE_MAX;
	const struct search_entry *e = search_entries(ix);

	*found = 0;
	for (;;) {
		uint32_t v = ix->slots[i];
		if (v == SLOT_EMPTY)
			return free_at != SIZE_MAX ? free_at : i;
		if (v == SLOT_GONE) {
			if (free_at == SIZE_MAX)
				free_at = i;
		} else {
			const struct search_entry *x = &e[v - 1];
			if (x->root == root && x->len == len &&
				memcmp(ix->arena.ptr + x->off, rel, len) == 0) {
				*found = 1;
				return i;
			}
		}
		i = (i + 1) & mask;
	}
}

/* Slots of a hash with room for want entries (search_rehash). */
static size_t
search_nslots(size_t want)
{
	size_t n = 1024;

	while (n < 2 * want)
		n *= 2;
	return n;
}

/* What adding a path of len bytes adds to search_index_bytes, the hash's growth included. */
static size_t
search_grow_bytes(const struct search_index *ix, size_t len)
{
	size_t grow = len + 1 + sizeof(struct search_entry);

	if (!ix->bulk && 2 * (ix->n + 1) > ix->nslots)
		grow += (search_nslots(2 * (ix->n + 1)) - ix->nslots) * sizeof(*ix->slots);
	return grow;
}

/* Rebuild the hash for the live entries with room for twice as many. */
static void
search_rehash(struct search_index *ix, size_t want)
{
	const struct search_entry *e = search_entries(ix);
	size_t n = search_nslots(want);
	int found;

	free(ix->slots);
	ix->slots = xcalloc(n, sizeof(*ix->slots));
	ix->nslots = n;
	for (size_t i = 0; i < ix->n; i++) {
		if (e[i].flags & SE_DEAD)
			continue;
		size_t s = search_slot(ix, e[i].root, ix->arena.ptr + e[i].off, e[i].len, &found);
		ix->slots[s] = (uint32_t)i + 1;
	}
}

/* Drop the dead entries and their path bytes. */
static void
search_compact(struct search_index *ix)
{
	struct search_entry *e = search_entries(ix);
	struct buf arena;
	size_t k = 0;

	buf_init(&arena, SEARCH_INDEX_BYTES);
	buf_reserve(&arena, ix->arena.len);
	for (size_t i = 0; i < ix->n; i++) {
		if (e[i].flags & SE_DEAD)
			continue;
		size_t off = arena.len;
		buf_add(&arena, ix->arena.ptr + e[i].off, (size_t)e[i].len + 1);
		e[k] = e[i];
		e[k++].off = (uint32_t)off;
	}
	buf_free(&ix->arena);
	ix->arena = arena;
	ix->n = k;
	ix->entries.len = k * sizeof(*e);
	ix->ndead = 0;
	search_rehash(ix, k);
}

/* Fill an entry's masks and flags from its path. */
static void
search_entry_fill(struct search_entry *e, const char *rel, size_t len)
{
	uint64_t mask = 0, name = 0;
	size_t base = 0;
	int ascii = 1;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)rel[i];
		ascii &= c < 0x80;
		if (c == '/') {
			base = i + 1;
			name = 0;
		}
		mask |= search_char_bit(c);
		name |= search_char_bit(c);
	}
	e->base = (uint16_t)base;
	e->mask = ascii ? mask : ~0ULL;
	e->name_mask = ascii ? name : ~0ULL;
	e->flags |= ascii ? SE_ASCII : 0;
}

/* Add an entry (search.h): 0 added, 1 already there, -E2BIG when full. */
int
search_index_add(struct search_index *ix, size_t root, const char *rel, size_t len, int is_dir)
{
	struct search_entry e = {0};
	int found;

	size_t s = 0;

	if (len > UINT16_MAX || root > UINT8_MAX)
		return -E2BIG;
	if (ix->limit != 0 && search_index_bytes(ix) + search_grow_bytes(ix, len) > ix->limit) {
		ix->truncated = 1;
		ix->squeezed = 1;
		return -E2BIG;
	}
	if (!ix->bulk) {
		if (2 * (ix->n + 1) > ix->nslots)
			search_rehash(ix, 2 * (ix->n + 1));
		s = search_slot(ix, root, rel, len, &found);
		if (found) {
			struct search_entry *x = &search_entries(ix)[ix->slots[s] - 1];
			x->flags = (uint8_t)((x->flags & ~SE_DIR) | (is_dir ? SE_DIR : 0));
			return 1;
		}
	}
	e.off = (uint32_t)ix->arena.len;
	e.len = (uint16_t)len;
	e.root = (uint8_t)root;
	e.flags = is_dir ? SE_DIR : 0;
	search_entry_fill(&e, rel, len);
	if (buf_reserve(&ix->entries, sizeof(e)) < 0 || buf_reserve(&ix->arena, len + 1) < 0) {
		ix->truncated = 1;
		return -E2BIG;
	}
	buf_add(&ix->arena, rel, len);
	buf_addc(&ix->arena, '\0');
	buf_add(&ix->entries, &e, sizeof(e));
	ix->n++;
	if (!ix->bulk)
		ix->slots[s] = (uint32_t)ix->n;
	return 0;
}

/* Mark entry i dead. */
static void
search_kill(struct search_index *ix, size_t i)
{
	struct search_entry *e = &search_entries(ix)[i];
	int found;
	size_t s = search_slot(ix, e->root, ix->arena.ptr + e->off, e->len, &found);

	if (found)
		ix->slots[s] = SLOT_GONE;
	e->flags |= SE_DEAD;
	ix->ndead++;
}

/* Remove an entry and, for a folder, everything under it (search.h): how many went. */
size_t
search_index_remove(struct search_index *ix, size_t root, const char *rel, size_t len)
{
	struct search_entry *e = search_entries(ix);
	size_t gone = 0;
	int found, dir = 0;

	if (ix->nslots == 0)
		search_rehash(ix, ix->n);
	size_t s = search_slot(ix, root, rel, len, &found);
	if (found) {
		size_t i = ix->slots[s] - 1;
		dir = (e[i].flags & SE_DIR) != 0;
		search_kill(ix, i);
		gone++;
	}
	for (size_t i = 0; dir && i < ix->n; i++) {
		if (!(e[i].flags & SE_DEAD) && e[i].root == root && e[i].len > len &&
			ix->arena.ptr[e[i].off + len] == '/' &&
			memcmp(ix->arena.ptr + e[i].off, rel, len) == 0) {
			search_kill(ix, i);
			gone++;
		}
	}
	if (ix->ndead > 1024 && ix->ndead * 2 > ix->n)
		search_compact(ix);
	return gone;
}

/* Is (root, rel) in the index, and a folder? -1 absent, 0 file, 1 folder. */
int
search_index_lookup(struct search_index *ix, size_t root, const char *rel, size_t len)
{
	int found;

	if (ix->nslots == 0)
		search_rehash(ix, ix->n);
	size_t s = search_slot(ix, root, rel, len, &found);
	if (!found)
		return -1;
	return (search_entries(ix)[ix->slots[s] - 1].flags & SE_DIR) != 0;
}

/* Walker callback: append one entry. */
static int
search_add_cb(void *arg, size_t root, const char *rel, size_t len, int is_dir)
{
	return search_index_add(arg, root, rel, len, is_dir) < 0;
}

/* Build an index by walking the roots (walk.h). */
int
search_index_build(struct search_index **out, const char *const *roots, size_t nroots,
	const atomic_int *cancel)
{
	struct search_index *ix = search_index_new();
	struct walk_ops ops = {.fn = search_add_cb, .arg = ix, .cancel = cancel};
	struct walk_stats st;

	ix->bulk = 1; /* a walk reports each path once: no hash until the first update */
	walk_roots(roots, nroots < SEARCH_ROOTS_MAX ? nroots : SEARCH_ROOTS_MAX, &ops, &st);
	ix->truncated |= st.truncated;
	ix->bulk = 0;
	*out = ix;
	return st.cancelled ? -ECANCELED : 0;
}
