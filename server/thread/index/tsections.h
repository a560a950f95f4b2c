/*
 * Thread sections in the thread index's file (tindex.h): user-named groups of threads, as
 * upstream 0.169 keeps them in its state database. The `sections` table holds each section
 * (a UUIDv7 id, its name, its appearance as JSON text); `section_members` holds each thread's
 * one section, its position there (integers with gaps, so an insertion before another thread
 * is one row written) and when it entered it. Every function runs on the connection's thread
 * (the store's index worker) and changes the file in one transaction: a crash leaves each
 * request's change whole or absent.
 */
#ifndef TSECTIONS_H
#define TSECTIONS_H

#include <stdint.h>

#include <jansson.h>

struct tindex;

/* Upstream's built-in section: always there, never renamed or deleted. */
#define TSECTIONS_PINNED_ID    "01984de2-8f74-7c91-a3b2-5c5e937cf318"
#define TSECTIONS_LIST_DEFAULT 25      /* threadSection/list's page without a limit */
#define TSECTIONS_LIST_MAX     100     /* and its largest */
#define TSECTIONS_STEP	       1000000 /* between two positions given by appends */

/*
 * Every section as {id: wire ThreadSection} and every membership as {thread_id: [section_id,
 * entered_ms]} (new references), or -EIO. For the loop's copy (store sections.c).
 */
int tsections_load(struct tindex *x, json_t **sections, json_t **members);
/* One section as a wire ThreadSection (new reference), or NULL. */
json_t *tsections_get(struct tindex *x, const char *id);
/*
 * One page of sections in id order (their creation order), after cursor (a section id; NULL:
 * from the first): *data a JSON array, *next the last id when more follow (heap) or NULL.
 */
int tsections_page(struct tindex *x, const char *cursor, int limit, json_t **data, char **next);
/* A new section; appearance is JSON text or NULL. 0 or -EIO. */
int tsections_create(
	struct tindex *x, const char *id, const char *name, const char *appearance, int64_t now_ms);
/* Rename; set_appearance: appearance (NULL: none) replaces the old one. 0, -ENOENT or -EIO. */
int tsections_update(struct tindex *x, const char *id, const char *name, int set_appearance,
	const char *appearance);
/* Delete a section; its threads leave it (they are in none afterwards). 0, -ENOENT, -EIO. */
int tsections_delete(struct tindex *x, const char *id);
/*
 * Move a thread into section (NULL: out of any), before `before` (NULL: at the end). A thread
 * already in that section keeps its entered time. 0 with *entered_ms, or -ENOENT / -EINVAL
 * with upstream's words in *cause, or -EIO.
 */
int tsections_move(struct tindex *x, const char *thread_id, const char *section, const char *before,
	int64_t now_ms, int64_t *entered_ms, char **cause);
/* A deleted thread leaves its section. */
int tsections_forget(struct tindex *x, const char *thread_id);

#endif
