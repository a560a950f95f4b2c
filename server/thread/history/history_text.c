/*
 * The turn builder's fast path (history.h). The reader leaves the records every turn has
 * (task_started, item_completed, task_complete, turn_aborted) as text; they are read here with
 * the in-place scanner instead of a jansson tree per record: the line is validated whole,
 * then only the members the builder uses are made values. In text mode an item_completed's
 * item goes from the record's text straight to its v2 text (item_text_from_core) and is kept
 * as such, as a JSON string holding the text, until history_turns_text writes the turns out.
 * A line the scanner refuses is parsed with jansson, as every other record is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "history_int.h"
#include "item.h"
#include "protocol/jscan.h"
#include "protocol/xmalloc.h"
#include "thread/rollout/rollout.h"
#include "thread/rollout/rollout_writer.h"

/* The payload members the builder reads, per record type left raw. */
static const char *const history_item_keys[] = {
	"turn_id", "item", "started_at_ms", "completed_at_ms", NULL};
static const char *const history_start_keys[] = {"turn_id", "root_turn_id", "started_at", NULL};
static const char *const history_end_keys[] = {
	"turn_id", "error", "started_at", "completed_at", "duration_ms", NULL};

void
history_text(struct history *h)
{
	h->text = 1;
}

/* The member list for a raw record type, or NULL when it is read whole. */
static const char *const *
history_raw_keys(const char *type, const char *ptype)
{
	if (strcmp(type, "event_msg") != 0)
		return NULL;
	if (strcmp(ptype, "item_completed") == 0)
		return history_item_keys;
	if (strcmp(ptype, "task_started") == 0)
		return history_start_keys;
	if (strcmp(ptype, "task_complete") == 0 || strcmp(ptype, "turn_aborted") == 0)
		return history_end_keys;
	return NULL;
}

/* Records read from their text (a reader's raw filter). */
static int
history_raw(const char *type, const char *ptype)
{
	return history_raw_keys(type, ptype) != NULL;
}

void
history_reader(struct rollout_reader *r)
{
	rollout_reader_filter(r, history_filter);
	rollout_reader_raw(r, history_raw);
	rollout_reader_lean(r, 1);
}

/* A member's value as jansson reads it (scalars made directly). */
static json_t *
history_value(struct jspan v)
{
	struct jspan body;
	long long x;

	if (jscan_plain(v, &body) == 0)
		return json_stringn_nocheck(body.p, (size_t)(body.end - body.p));
	if (jscan_int(v, &x) == 0)
		return json_integer(x);
	if (jscan_is(v, "null"))
		return json_null();
	return json_loadb(v.p, (size_t)(v.end - v.p), JSON_DECODE_ANY, NULL);
}

/* An object of just these members of obj (the last of a repeated key, as jansson keeps). */
static json_t *
history_pick(struct jspan obj, const char *const keys[])
{
	json_t *o = json_object();
	struct jscan_it it;
	struct jspan k, v;

	jscan_obj(&it, obj);
	while (jscan_obj_next(&it, &k, &v))
		for (size_t i = 0; keys[i] != NULL; i++)
			if (jscan_key_is(k, keys[i])) {
				json_object_set_new(o, keys[i], history_value(v));
				break;
			}
	return o;
}

/* An integer value into *x; x, or NULL when it is missing, not an integer, or 0 and !zero. */
static const long long *
history_int(struct jspan v, long long *x, int zero)
{
	if (v.p == NULL || jscan_int(v, x) != 0 || (!zero && *x == 0))
		return NULL;
	return x;
}

/* Text mode's item_completed: the item's v2 text, placed in its turn. */
static void
history_item_span(struct history *h, const struct rollout_rec *rec, struct jspan payload)
{
	enum { P_TURN, P_ITEM, P_STARTED, P_COMPLETED };
	struct jspan f[4], v;
	long long st, co;
	const long long *sp, *cp;
	const char *turn_id = NULL;
	char *id = NULL;
	int message;

	jscan_fields(payload, history_item_keys, f);
	if (f[P_ITEM].p == NULL)
		return;
	sp = history_int(f[P_STARTED], &st, 1);
	cp = history_int(f[P_COMPLETED], &co, 0);
	buf_reset(&h->item);
	if (item_text_from_core(
		    f[P_ITEM].p, (size_t)(f[P_ITEM].end - f[P_ITEM].p), sp, cp, &h->item, &id) != 0)
		return;
	buf_reset(&h->turn_id);
	if (f[P_TURN].p != NULL && f[P_TURN].p[0] == '"' &&
		jscan_unescape(f[P_TURN], &h->turn_id) == 0)
		turn_id = buf_str(&h->turn_id);
	message = jscan_get(f[P_ITEM], "type", &v) &&
		(jscan_str_is(v, "UserMessage", &h->tmp) ||
			jscan_str_is(v, "AgentMessage", &h->tmp));
	history_item_place(
		h, rec, turn_id, message, json_stringn_nocheck(h->item.ptr, h->item.len), id);
	free(id);
}

/* A record the reader left unparsed: read from its text, or parsed whole when it does not fit. */
void
history_raw_record(struct history *h, const struct rollout_rec *rec)
{
	static const char *const line_keys[] = {"type", "payload", "timestamp", NULL};
	static const char *const type_key[] = {"type", NULL};
	const char *end = rec->line + rec->len, *after;
	const char *const *keys = history_raw_keys(rec->type, rec->ptype);
	struct rollout_rec full = *rec;
	struct jspan line, top[3], ptype;
	json_t *root;
	int ok;

	after = jscan_value(rec->line, end, &line);
	while (after != NULL && after < end && *after != '\0' && strchr(" \t\r\n", *after) != NULL)
		after++;
	/* The whole line valid, and the types the reader peeked are the ones it holds. */
	ok = keys != NULL && after == end && line.p[0] == '{' &&
		jscan_fields(line, line_keys, top) >= 2 && top[0].p != NULL &&
		jscan_str_is(top[0], rec->type, &h->tmp) && top[1].p != NULL &&
		top[1].p[0] == '{' && jscan_fields(top[1], type_key, &ptype) == 1 &&
		jscan_str_is(ptype, rec->ptype, &h->tmp);
	if (ok) {
		full.ms = 0;
		buf_reset(&h->tmp);
		if (top[2].p != NULL && top[2].p[0] == '"' &&
			jscan_unescape(top[2], &h->tmp) == 0 &&
			rollout_ts_parse(buf_str(&h->tmp), &full.ms) != 0)
			full.ms = 0;
		if (h->text && keys == history_item_keys) {
			history_item_span(h, &full, top[1]);
			return;
		}
		full.payload = history_pick(top[1], keys);
		history_dispatch(h, &full);
		json_decref(full.payload);
		return;
	}
	root = json_loadb(rec->line, rec->len, 0, NULL);
	if (root != NULL && rollout_rec_from(root, &full) == 0) {
		full.off = rec->off;
		full.len = rec->len;
		full.line = rec->line;
		history_dispatch(h, &full);
	}
	json_decref(root);
}

const char *
history_item_key(json_t *item, struct buf *tmp)
{
	struct jspan text, v;

	if (!json_is_string(item))
		return item_id(item);
	text.p = json_string_value(item);
	text.end = text.p + json_string_length(item);
	buf_reset(tmp);
	if (!jscan_get(text, "id", &v) || v.p[0] != '"' || jscan_unescape(v, tmp) != 0)
		return NULL;
	return buf_str(tmp);
}

json_t *
history_item_obj(json_t *items, size_t i)
{
	json_t *it = json_array_get(items, i);

	if (json_is_string(it)) {
		it = json_loadb(json_string_value(it), json_string_length(it), 0, NULL);
		json_array_set_new(items, i, it);
	}
	return it;
}

static int
history_text_cb(const char *p, size_t n, void *arg)
{
	return buf_add(arg, p, n) == 0 ? 0 : -1;
}

/* One value: an item kept as text as it is, anything else through jansson. */
static int
history_value_text(json_t *v, struct buf *out)
{
	if (json_is_string(v))
		return buf_add(out, json_string_value(v), json_string_length(v));
	return json_dump_callback(v, history_text_cb, out, JSON_COMPACT) == 0 ? 0 : -E2BIG;
}

/* One turn, its members in order; "items" holds objects and items kept as text. */
static int
history_turn_text(json_t *turn, struct buf *out)
{
	const char *k;
	json_t *v, *it;
	size_t i;
	int r = buf_addc(out, '{'), n = 0;

	json_object_foreach(turn, k, v)
	{
		if (r == 0 && n++ > 0)
			r = buf_addc(out, ',');
		if (r == 0)
			r = jscan_put_str(out, k, strlen(k));
		if (r == 0)
			r = buf_addc(out, ':');
		if (r != 0)
			return r;
		if (strcmp(k, "items") != 0) {
			if (json_dump_callback(
				    v, history_text_cb, out, JSON_COMPACT | JSON_ENCODE_ANY) != 0)
				return -E2BIG;
			continue;
		}
		r = buf_addc(out, '[');
		json_array_foreach(v, i, it)
		{
			if (r == 0 && i > 0)
				r = buf_addc(out, ',');
			if (r == 0)
				r = history_value_text(it, out);
		}
		if (r == 0)
			r = buf_addc(out, ']');
	}
	return r == 0 ? buf_addc(out, '}') : r;
}

int
history_turns_text(json_t *turns, struct buf *out)
{
	json_t *t;
	size_t i;
	int r = buf_addc(out, '[');

	json_array_foreach(turns, i, t)
	{
		if (r == 0 && i > 0)
			r = buf_addc(out, ',');
		if (r == 0)
			r = history_turn_text(t, out);
	}
	return r == 0 ? buf_addc(out, ']') : r;
}
