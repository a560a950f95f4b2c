/*
 * Thread sections (threadSection/list, create, update, delete and thread/section/move), as
 * upstream 0.169 keeps them: user-named groups of threads, persisted in the thread index's file
 * (index/tsections.h) by the index worker, one transaction per request, never on the loop. The
 * store keeps a copy of every section and membership on the loop, so a wire Thread carries its
 * `section` and `sectionEnteredAt` without a query.
 *
 * Each call answers through cb on the loop (without a loop: before it returns) with a result
 * (stolen) or r < 0 and upstream's words: -ERANGE (-32602) for a bad name or an unknown section
 * in update/delete, -EINVAL (-32600) for a move's refusals, -EIO (-32603) when the index
 * cannot be written.
 */
#ifndef STORE_SECTIONS_H
#define STORE_SECTIONS_H

#include <stdint.h>

#include <jansson.h>

#include "store.h"

#define STORE_SECTION_NAME_MAX 16384 /* bytes of a name, trimmed (upstream sets none) */

/* {data: ThreadSection[], nextCursor}: after cursor (a section id), limit clamped 1..100. */
void store_section_list(
	struct store *s, const char *cursor, int64_t limit, store_json_fn cb, void *arg);
/* {section}: a new section named name (trimmed); appearance an object or NULL (borrowed). */
void store_section_create(
	struct store *s, const char *name, const json_t *appearance, store_json_fn cb, void *arg);
/*
 * {section}: renamed; set_appearance: appearance (an object, or NULL / JSON null: none)
 * replaces the old one, else it is kept.
 */
void store_section_update(struct store *s, const char *id, const char *name, int set_appearance,
	const json_t *appearance, store_json_fn cb, void *arg);
/* {}: the section is gone, and its threads are in none. */
void store_section_delete(struct store *s, const char *id, store_json_fn cb, void *arg);
/*
 * {}: thread_id moves into section (NULL: out of its section), before `before` (NULL: at the
 * end). The caller tells the clients (thread/section/changed).
 */
void store_section_move(struct store *s, const char *thread_id, const char *section,
	const char *before, store_json_fn cb, void *arg);

#endif
