/*
 * Rollout records -> the v2 Turn list upstream's thread/read {includeTurns:true} returns.
 * Feed records in file order; turns come out either all at once (history_finish) or one by one
 * through a sink as each closes (paging: only the turns asked for are ever held).
 *
 * Both record generations are understood: 0.169's canonical `item_completed` events (full
 * items with their start/finish times, turns opened by task_started and closed by
 * task_complete / turn_aborted) and the older events (user_message, agent_message,
 * agent_reasoning, exec_command_end, patch_apply_end, ...) from rollouts written before them.
 * Unknown records are ignored. Turns without an id of their own (old rollouts) get a
 * deterministic one from the record's time and file offset, so cursors stay valid across reads.
 */
#ifndef HISTORY_H
#define HISTORY_H

#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "thread/rollout/rollout_reader.h"

#define HISTORY_MAX_BYTES (256u << 20) /* record bytes one whole-history build accepts */

struct history;

/* Receives each finished turn (a new reference the sink owns). */
typedef void (*history_sink_fn)(void *arg, json_t *turn);

struct history *history_new(void);
/* Hand turns to sink as they close instead of keeping them. */
void history_sink(struct history *h, history_sink_fn fn, void *arg);
/*
 * Keep items as their v2 JSON text instead of objects (a long history without a tree per
 * item); the turns history_finish returns then go out through history_turns_text only.
 */
void history_text(struct history *h);
/* Ignore thread_rolled_back records (a window of a file whose turn list is already known). */
void history_ignore_rollbacks(struct history *h);
/* One record, in file order. */
void history_feed(struct history *h, const struct rollout_rec *rec);
/*
 * Close the last turn: an unfinished one stays "inProgress" when live (its thread is running
 * here), else it becomes "interrupted" (its process is gone). Returns the kept turns (new
 * reference; an empty array in sink mode), or NULL when the input passed HISTORY_MAX_BYTES.
 */
json_t *history_finish(struct history *h, int live);
void history_free(struct history *h);
/*
 * Feed h (set up by the caller: text mode, sink, rollbacks) every history record of the
 * rollout at path in [from, to) (to < 0: to the end), then history_finish(h, live). NULL with
 * *cause when the file cannot be read or is too large to return whole.
 */
json_t *history_read(
	struct history *h, const char *path, off_t from, off_t to, int live, char **cause);
/* Turns (history_finish's, text mode or not) as a JSON array appended to out; 0 or -E2BIG. */
struct buf;
int history_turns_text(json_t *turns, struct buf *out);
/* The records history_feed uses (a reader filter). */
int history_filter(const char *type, const char *ptype);
/* Set a reader up for history: the filter, items read from their text, lean session_meta. */
void history_reader(struct rollout_reader *r);
/* Whether a record opens a turn (task_started, or a user_message outside an explicit turn). */
int history_is_boundary(const char *type, const char *ptype);
/* The deterministic id for a turn that has none: from the record's time and offset. */
void history_synth_id(int64_t ms, int64_t off, char out[37]);
/* The summary items of a turn: its first user message and its final agent message. */
json_t *history_summary_items(json_t *items);

#endif
