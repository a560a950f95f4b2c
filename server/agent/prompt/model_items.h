/*
 * The model's answer as the client sees it, as upstream 0.169 reports it: a Responses message
 * or reasoning item (the model's) read for its texts, and the v2 agentMessage and reasoning
 * items made of them. Pure: no I/O, no turn.
 */
#ifndef MODEL_ITEMS_H
#define MODEL_ITEMS_H

#include <jansson.h>

#include "protocol/buf.h"

/* The wire AgentMessage item (new reference). */
struct token_totals;
/* A TokenUsageBreakdown of totals (new reference). */
json_t *model_items_usage(const struct token_totals *u);
json_t *model_items_message(const char *id, const char *text);
/* The wire Reasoning item (new reference; summary and content borrowed, NULL as []). */
json_t *model_items_reasoning(const char *id, json_t *summary, json_t *content);
/* The text of a Responses message item: its parts' texts joined into b (reset first). */
void model_items_text(const json_t *item, struct buf *b);
/* A reasoning item's summary or content (key) texts as an array of strings (new reference). */
json_t *model_items_texts(const json_t *item, const char *key);

struct model_event;
struct model_error;
struct model_usage;
/*
 * A text or reasoning delta of the streamed item `id` as its notification: *method
 * (item/agentMessage/delta, item/reasoning/summaryTextDelta, summaryPartAdded, textDelta)
 * and its params (new reference).
 */
json_t *model_items_delta(const struct model_event *ev, const char *id, const char **method);
/* The TurnError of a model error (new reference). */
json_t *model_items_turn_error(const struct model_error *e);
/* A response's usage as *last (zeros without one), added to *total. */
void model_items_add_usage(
	const struct model_usage *u, struct token_totals *last, struct token_totals *total);

#endif
