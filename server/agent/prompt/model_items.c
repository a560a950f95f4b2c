/*
 * The model's answer as wire items (model_items.h): agent_model.c streams them, these say
 * their shapes and read the texts out of the model's own items.
 */
#include <string.h>

#include "model_items.h"
#include "model/model.h"
#include "thread/rollout/rollout_summary.h"

json_t *
model_items_message(const char *id, const char *text)
{
	return json_pack("{s:s, s:n, s:s, s:s, s:n, s:n, s:n, s:n}", "type", "agentMessage",
		"moderation", "id", id, "text", text, "phase", "memoryCitation", "delivery",
		"questions");
}

json_t *
model_items_reasoning(const char *id, json_t *summary, json_t *content)
{
	return json_pack("{s:s, s:s, s:O, s:O}", "type", "reasoning", "id", id, "summary",
		summary != NULL ? summary : json_array(), "content",
		content != NULL ? content : json_array());
}

void
model_items_text(const json_t *item, struct buf *b)
{
	json_t *part;
	size_t i;

	buf_reset(b);
	json_array_foreach(json_object_get(item, "content"), i, part)
	{
		const char *s = json_string_value(json_object_get(part, "text"));

		if (s != NULL)
			buf_adds(b, s);
	}
}

json_t *
model_items_texts(const json_t *item, const char *key)
{
	json_t *out = json_array(), *part;
	size_t i;

	json_array_foreach(json_object_get(item, key), i, part)
	{
		json_t *s = json_object_get(part, "text");

		if (json_is_string(s))
			json_array_append(out, s);
	}
	return out;
}

json_t *
model_items_usage(const struct token_totals *u)
{
	return json_pack("{s:I, s:I, s:I, s:i, s:I, s:I}", "totalTokens", (json_int_t)u->total,
		"inputTokens", (json_int_t)u->input, "cachedInputTokens", (json_int_t)u->cached,
		"cacheWriteInputTokens", 0, "outputTokens", (json_int_t)u->output,
		"reasoningOutputTokens", (json_int_t)u->reasoning);
}

json_t *
model_items_delta(const struct model_event *ev, const char *id, const char **method)
{
	switch (ev->kind) {
	case MODEL_EV_TEXT_DELTA:
		*method = "item/agentMessage/delta";
		return json_pack("{s:s, s:s%}", "itemId", id, "delta", ev->delta, ev->delta_len);
	case MODEL_EV_REASONING_SUMMARY_DELTA:
		*method = "item/reasoning/summaryTextDelta";
		return json_pack("{s:s, s:s%, s:I}", "itemId", id, "delta", ev->delta,
			ev->delta_len, "summaryIndex", (json_int_t)ev->index);
	case MODEL_EV_REASONING_SUMMARY_PART:
		*method = "item/reasoning/summaryPartAdded";
		return json_pack("{s:s, s:I}", "itemId", id, "summaryIndex", (json_int_t)ev->index);
	default:
		*method = "item/reasoning/textDelta";
		return json_pack("{s:s, s:s%, s:I}", "itemId", id, "delta", ev->delta,
			ev->delta_len, "contentIndex", (json_int_t)ev->index);
	}
}

json_t *
model_items_turn_error(const struct model_error *e)
{
	return json_pack("{s:s, s:o}", "message", e->message != NULL ? e->message : "model error",
		"codexErrorInfo", model_error_info(e));
}

void
model_items_add_usage(
	const struct model_usage *u, struct token_totals *last, struct token_totals *total)
{
	memset(last, 0, sizeof *last);
	if (u != NULL && u->present) {
		last->input = u->input_tokens;
		last->cached = u->cached_input_tokens;
		last->output = u->output_tokens;
		last->reasoning = u->reasoning_output_tokens;
		last->total = u->total_tokens;
	}
	total->input += last->input;
	total->cached += last->cached;
	total->output += last->output;
	total->reasoning += last->reasoning;
	total->total += last->total;
}
