/*
 * Internal to the turn builder (history.c, history_legacy.c): its state and the helpers both
 * files use to open, find and fill turns.
 */
#ifndef HISTORY_INT_H
#define HISTORY_INT_H

#include <jansson.h>

#include "history.h"
#include "protocol/buf.h"

struct history {
	json_t *turns; /* finished, when there is no sink */
	json_t *cur;   /* the open turn, or NULL */
	json_t *ids;   /* item id -> index in cur.items */
	int explicit_turn, saw_compaction, legacy_done;
	int text; /* items of fast-path records are kept as their v2 JSON text (a json string) */
	struct buf item, turn_id, tmp; /* history_text.c's scratch, reused record to record */
	int64_t next_item;	       /* for "item-N" ids of old records */
	uint64_t bytes;
	int too_big, ignore_rollbacks;
	history_sink_fn sink;
	void *sink_arg;
};

/* A member (new reference), or dflt (stolen) when missing. */
json_t *history_get(json_t *o, const char *key, json_t *dflt);
/* Close the open turn (kept or sunk unless it is an empty implicit one). */
void history_close(struct history *h);
/* Open a turn with this id; an unfinished one before it was cut short (interrupted). */
void history_open(struct history *h, const char *id, int explicit_turn);
/* The open turn, opening an implicit one (id from rec's time and offset) when there is none. */
json_t *history_ensure(struct history *h, const struct rollout_rec *rec);
/* The open or a kept turn with this id, or NULL. */
json_t *history_find(struct history *h, const char *turn_id);
/* Insert or replace (by id) an item in turn t; item is stolen. */
void history_upsert(struct history *h, json_t *t, json_t *item);
/* The same with the id given (borrowed; NULL: always appended). */
void history_upsert_id(struct history *h, json_t *t, json_t *item, const char *id);
/* Place an item (stolen) in the turn with turn_id or the open one; message: a canonical one. */
void history_item_place(struct history *h, const struct rollout_rec *rec, const char *turn_id,
	int message, json_t *item, const char *id);
/* Dispatch one parsed record. */
void history_dispatch(struct history *h, const struct rollout_rec *rec);

/* history_text.c: records read from their text, and items kept as text. */
void history_raw_record(struct history *h, const struct rollout_rec *rec);
/* An item's id, an object's or one kept as text (decoded into tmp); NULL when it has none. */
const char *history_item_key(json_t *item, struct buf *tmp);
/* Item i of items as an object: one kept as text is parsed in place first. */
json_t *history_item_obj(json_t *items, size_t i);
/* An "item-N" id for records that carry none. */
json_t *history_next_id(struct history *h);

/* history_legacy.c: the events of rollouts written before item_completed existed. */
void history_legacy_user_message(struct history *h, const struct rollout_rec *rec);
void history_legacy_agent_message(struct history *h, const struct rollout_rec *rec);
void history_legacy_reasoning(struct history *h, const struct rollout_rec *rec, const char *field);
void history_legacy_tool_event(struct history *h, const struct rollout_rec *rec);
void history_legacy_misc(struct history *h, const struct rollout_rec *rec);

#endif
