/*
 * Which rollout records make a thread's model history, and what a `compacted` record leaves
 * of it: pure rules agent_history.c applies while it reads a rollout on the worker.
 */
#ifndef HISTORY_ITEMS_H
#define HISTORY_ITEMS_H

#include <stddef.h>

#include <jansson.h>

/* The rollout reader's filter: response_item, compacted and session_meta records. */
int history_items_wanted(const char *type, const char *ptype);
/* Whether a message is context each request carries anew (not history). */
int history_items_is_context(const json_t *item);
/* A `compacted` record's payload: items (the history so far) become its replacement. */
void history_items_compacted(json_t *items, const json_t *payload);
/*
 * A compaction keeps the user's messages (the newest, up to max bytes of text, at least one)
 * and replaces the rest with the summary, as upstream: appended to kept, oldest first.
 */
void history_items_compact_keep(const json_t *history, size_t max, json_t *kept);
/* The compaction response's summary: its message items' texts, joined (heap, at most max). */
char *history_items_summary(const json_t *response_items, size_t max);

#endif
