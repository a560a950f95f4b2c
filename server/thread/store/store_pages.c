/*
 * thread/turns/list and thread/items/list without loading whole histories (store.h). Each
 * rollout gets a turn index: the byte span of every turn, found by a scan that parses only
 * turn boundaries (task_started, task_complete, turn_aborted, old user_message, rollbacks).
 * A page then reads only its turns' spans. Indexes are cached (LRU, STORE_TURNIDX_CACHE) and
 * extended, not rebuilt, when an append-only rollout has grown.
 *
 * Cursors: "t:<turnId>:<x|i>" for turns, "i:<turnId>:<index>:<x|i>" for items; x = after
 * the anchor, i = from it (backwards cursors, which show their anchor again).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store_int.h"
#include "protocol/xmalloc.h"
#include "thread/history/history.h"
#include "thread/rollout/rollout_reader.h"
#include "thread/uuidv7.h"

#define PAGES_DEFAULT	25  /* upstream's THREAD_TURNS_DEFAULT_LIMIT */
#define PAGES_MAX	100 /* upstream's THREAD_TURNS_MAX_LIMIT */
#define PAGES_SPANS_MAX (1u << 20)

/* Records that move turn boundaries. */
static int
pages_filter(const char *type, const char *ptype)
{
	return strcmp(type, "event_msg") == 0 &&
		(strcmp(ptype, "task_started") == 0 || strcmp(ptype, "task_complete") == 0 ||
			strcmp(ptype, "turn_aborted") == 0 || strcmp(ptype, "user_message") == 0 ||
			strcmp(ptype, "thread_rolled_back") == 0);
}

/* Open a span at rec. */
static void
pages_span_add(struct store_turnidx *ix, const struct rollout_rec *rec, const char *id)
{
	struct store_span *sp;

	if (ix->n == ix->cap) {
		if (ix->cap >= PAGES_SPANS_MAX)
			return;
		ix->cap = ix->cap ? ix->cap * 2 : 64;
		ix->v = xrealloc(ix->v, ix->cap * sizeof *ix->v);
	}
	if (ix->n > 0)
		ix->v[ix->n - 1].end = rec->off;
	sp = &ix->v[ix->n++];
	if (id != NULL)
		snprintf(sp->id, sizeof sp->id, "%s", id);
	else
		history_synth_id(rec->ms, rec->off, sp->id);
	sp->start = rec->off;
	sp->end = rec->off;
}

/* Scan [ix->size, size) and extend the index. */
static int
pages_extend(struct store_turnidx *ix, off_t size)
{
	struct rollout_reader *r;
	struct rollout_rec rec;
	int e;

	if ((e = rollout_reader_open(ix->path, ix->size, size, &r)) != 0)
		return e;
	rollout_reader_filter(r, pages_filter);
	while ((e = rollout_reader_next(r, &rec)) == 1) {
		const char *pt = rec.ptype;

		if (strcmp(pt, "task_started") == 0) {
			pages_span_add(ix, &rec,
				json_string_value(json_object_get(rec.payload, "turn_id")));
			ix->inside = 1;
		} else if (strcmp(pt, "user_message") == 0) {
			if (!ix->inside)
				pages_span_add(ix, &rec, NULL);
		} else if (strcmp(pt, "thread_rolled_back") == 0) {
			json_int_t k =
				json_integer_value(json_object_get(rec.payload, "num_turns"));

			while (k-- > 0 && ix->n > 0)
				ix->n--;
			ix->inside = 0;
		} else {
			ix->inside = 0;
		}
	}
	/* Only whole lines count: a torn tail is read again next time. */
	ix->size = e == 0 ? rollout_reader_offset(r) : ix->size;
	rollout_reader_close(r);
	if (ix->n > 0)
		ix->v[ix->n - 1].end = ix->size;
	return e < 0 ? e : 0;
}

void
store_turnidx_forget(struct store *s, const char *path)
{
	for (size_t i = 0; i < STORE_TURNIDX_CACHE; i++) {
		struct store_turnidx *ix = &s->turnidx[i];

		if (ix->path != NULL && strcmp(ix->path, path) == 0) {
			free(ix->path);
			free(ix->v);
			memset(ix, 0, sizeof *ix);
		}
	}
}

/* The cached index, extended to the file's current size, or a new one in the LRU slot. */
struct store_turnidx *
store_turnidx_get(struct store *s, const char *path)
{
	struct store_turnidx *ix = NULL, *lru = &s->turnidx[0];
	struct stat st;

	if (stat(path, &st) != 0)
		return NULL;
	for (size_t i = 0; i < STORE_TURNIDX_CACHE; i++) {
		struct store_turnidx *c = &s->turnidx[i];

		if (c->path != NULL && strcmp(c->path, path) == 0)
			ix = c;
		if (c->used < lru->used)
			lru = c;
	}
	/* A file that shrank was rewritten behind our back: index it afresh. */
	if (ix != NULL && st.st_size < ix->size) {
		store_turnidx_forget(s, path);
		ix = NULL;
	}
	if (ix == NULL) {
		ix = lru;
		free(ix->path);
		free(ix->v);
		memset(ix, 0, sizeof *ix);
		ix->path = xstrdup(path);
	}
	ix->used = ++s->turnidx_clock;
	if (st.st_size > ix->size && pages_extend(ix, st.st_size) != 0) {
		store_turnidx_forget(s, path);
		return NULL;
	}
	ix->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return ix;
}

/* Collect the turns a span yields. */
static void
pages_sink(void *arg, json_t *turn)
{
	json_array_append_new(arg, turn);
}

/* Build the turn of span i (NULL when the span holds none). live: it may still be running. */
static json_t *
pages_turn(const char *path, const struct store_span *sp, int live)
{
	struct history *h = history_new();
	json_t *got = json_array(), *turn = NULL, *t, *rest;
	char *cause = NULL;
	size_t i;

	history_sink(h, pages_sink, got);
	history_ignore_rollbacks(h);
	rest = history_read(h, path, sp->start, sp->end, live, &cause);
	history_free(h);
	free(cause);
	if (rest == NULL) {
		json_decref(got);
		return NULL;
	}
	json_decref(rest);
	json_array_foreach(got, i, t)
	{
		if (strcmp(json_string_value(json_object_get(t, "id")), sp->id) == 0) {
			turn = json_incref(t);
			break;
		}
	}
	if (turn == NULL && json_array_size(got) > 0)
		turn = json_incref(json_array_get(got, 0));
	json_decref(got);
	return turn;
}

/* The rollout path and liveness of a thread; -ENOENT when it has none. */
static int
pages_source(struct store *s, const char *id, char canon[37], char **path, int *live, char **cause)
{
	struct thread_meta m;
	struct store_thread *t;
	int r;

	if ((r = store_check_id(id, canon, cause)) != 0)
		return r;
	if ((r = store_find(s, canon, &m, cause)) != 0)
		return r;
	t = store_loaded(s, canon);
	*live = t != NULL && t->turn_id[0] != '\0';
	*path = m.path;
	m.path = NULL;
	thread_meta_clear(&m);
	if (*path == NULL) {
		*cause = xasprintf("thread %s has no rollout (ephemeral)", canon);
		return -EINVAL;
	}
	return 0;
}

/* The span index of a turn id, or -1. */
static long
pages_find(const struct store_turnidx *ix, const char *id)
{
	for (size_t i = ix->n; i-- > 0;)
		if (strcmp(ix->v[i].id, id) == 0)
			return (long)i;
	return -1;
}

/* Clamp a limit to [1, PAGES_MAX] with the default for <= 0. */
static size_t
pages_limit(int64_t limit)
{
	return limit <= 0 ? PAGES_DEFAULT : (limit > PAGES_MAX ? PAGES_MAX : (size_t)limit);
}

/* "asc"/"desc" or the default; -1 when neither. */
static int
pages_desc(const char *dir, int dflt)
{
	if (dir == NULL)
		return dflt;
	if (strcmp(dir, "desc") == 0)
		return 1;
	if (strcmp(dir, "asc") == 0)
		return 0;
	return -1;
}

/* Shape a turn for itemsView. */
static void
pages_view(json_t *turn, const char *view)
{
	if (view != NULL && strcmp(view, "full") == 0)
		return;
	if (view != NULL && strcmp(view, "notLoaded") == 0) {
		json_object_set_new(turn, "items", json_array());
		json_object_set_new(turn, "itemsView", json_string("notLoaded"));
		return;
	}
	json_object_set_new(turn, "items", history_summary_items(json_object_get(turn, "items")));
	json_object_set_new(turn, "itemsView", json_string("summary"));
}

int
store_turns_list(struct store *s, const char *id, const struct store_page_params *p,
	json_t **result, char **cause)
{
	char canon[37], *path = NULL;
	struct store_turnidx *ix;
	int live, desc = pages_desc(p->sort_direction, 1), r;
	long pos, step;
	size_t limit = pages_limit(p->limit);
	json_t *data;

	if (desc < 0) {
		*cause = xasprintf("invalid sortDirection: %s", p->sort_direction);
		return -ERANGE;
	}
	if (p->items_view != NULL && strcmp(p->items_view, "full") != 0 &&
		strcmp(p->items_view, "summary") != 0 && strcmp(p->items_view, "notLoaded") != 0) {
		*cause = xasprintf("invalid itemsView: %s", p->items_view);
		return -ERANGE;
	}
	if ((r = pages_source(s, id, canon, &path, &live, cause)) != 0)
		return r;
	if ((ix = store_turnidx_get(s, path)) == NULL) {
		*cause = xasprintf("failed to read %s", path);
		free(path);
		return -EIO;
	}
	step = desc ? -1 : 1;
	pos = desc ? (long)ix->n - 1 : 0;
	if (p->cursor != NULL) {
		size_t n = strlen(p->cursor);
		char tid[37];

		if (n != 2 + UUID_STRLEN + 2 || strncmp(p->cursor, "t:", 2) != 0 ||
			p->cursor[n - 2] != ':' ||
			(p->cursor[n - 1] != 'x' && p->cursor[n - 1] != 'i')) {
			*cause = xasprintf("invalid cursor: `%s`", p->cursor);
			free(path);
			return -ERANGE;
		}
		memcpy(tid, p->cursor + 2, UUID_STRLEN);
		tid[UUID_STRLEN] = '\0';
		if ((pos = pages_find(ix, tid)) < 0) {
			*cause = xasprintf(
				"invalid cursor: turn %s is not in thread %s", tid, canon);
			free(path);
			return -ERANGE;
		}
		if (p->cursor[n - 1] == 'x')
			pos += step;
	}
	data = json_array();
	long first = -1, last = -1;
	for (; pos >= 0 && pos < (long)ix->n && json_array_size(data) < limit; pos += step) {
		json_t *turn = pages_turn(path, &ix->v[pos], live && pos == (long)ix->n - 1);

		if (turn == NULL)
			continue;
		pages_view(turn, p->items_view);
		json_array_append_new(data, turn);
		if (first < 0)
			first = pos;
		last = pos;
	}
	int more = pos >= 0 && pos < (long)ix->n;
	char *next = more && last >= 0 ? xasprintf("t:%s:x", ix->v[last].id) : NULL;
	char *back = first >= 0 ? xasprintf("t:%s:i", ix->v[first].id) : NULL;
	*result = json_pack("{s:o,s:o,s:o}", "data", data, "nextCursor",
		next ? json_string(next) : json_null(), "backwardsCursor",
		back ? json_string(back) : json_null());
	free(next);
	free(back);
	free(path);
	return 0;
}

/* Parse "i:<turn>:<index>:<x|i>". */
static int
pages_item_cursor(const char *c, char tid[37], long *index, int *inclusive)
{
	size_t n = strlen(c);
	char *end;

	if (n < 2 + UUID_STRLEN + 4 || strncmp(c, "i:", 2) != 0 || c[2 + UUID_STRLEN] != ':')
		return -1;
	memcpy(tid, c + 2, UUID_STRLEN);
	tid[UUID_STRLEN] = '\0';
	*index = strtol(c + 3 + UUID_STRLEN, &end, 10);
	if (*index < 0 || *end != ':' || (end[1] != 'x' && end[1] != 'i') || end[2] != '\0')
		return -1;
	*inclusive = end[1] == 'i';
	return 0;
}

/* An item entry {item, turnId, startedAtMs, completedAtMs}. */
static json_t *
pages_entry(json_t *item, const char *turn_id)
{
	json_t *s = json_object_get(item, "startedAtMs"),
	       *c = json_object_get(item, "completedAtMs");

	return json_pack("{s:O,s:s,s:O,s:O}", "item", item, "turnId", turn_id, "startedAtMs",
		s ? s : json_null(), "completedAtMs", c ? c : json_null());
}

/* A walk over items, turn by turn, from a start position. */
struct pages_walk {
	const char *path;
	struct store_turnidx *ix;
	int live, desc, started, inclusive, more;
	long tpos, ipos, only;
	const char *anchor; /* an item id to start after, in the first turn */
	size_t limit;
	json_t *data;
	char *next, *back;
};

/* Walk from (tpos, ipos) collecting up to limit entries; sets the cursors. */
static void
pages_items_walk(struct pages_walk *w)
{
	long step = w->desc ? -1 : 1;

	for (; w->tpos >= 0 && w->tpos < (long)w->ix->n; w->tpos += step) {
		const struct store_span *sp = &w->ix->v[w->tpos];
		json_t *turn, *items;
		long n, i;

		if (w->only >= 0 && w->tpos != w->only)
			break;
		turn = pages_turn(w->path, sp, w->live && w->tpos == (long)w->ix->n - 1);
		if (turn == NULL)
			continue;
		items = json_object_get(turn, "items");
		n = (long)json_array_size(items);
		i = w->desc ? n - 1 : 0;
		if (!w->started) {
			if (w->anchor != NULL) {
				for (w->ipos = 0; w->ipos < n; w->ipos++)
					if (strcmp(json_string_value(json_object_get(
							   json_array_get(items, w->ipos), "id")),
						    w->anchor) == 0)
						break;
			}
			i = w->inclusive ? w->ipos : w->ipos + step;
			w->started = 1;
		}
		for (; i >= 0 && i < n; i += step) {
			if (json_array_size(w->data) == w->limit) {
				w->more = 1;
				break;
			}
			json_array_append_new(
				w->data, pages_entry(json_array_get(items, i), sp->id));
			if (json_array_size(w->data) == 1)
				w->back = xasprintf("i:%s:%ld:i", sp->id, i);
			free(w->next);
			w->next = xasprintf("i:%s:%ld:x", sp->id, i);
		}
		json_decref(turn);
		if (w->more)
			return;
	}
	free(w->next);
	w->next = NULL;
}

int
store_items_list(struct store *s, const char *id, const struct store_page_params *p,
	json_t **result, char **cause)
{
	struct pages_walk w = {.limit = pages_limit(p->limit), .ipos = -1, .only = -1};
	char canon[37], *path = NULL, tid[37];
	int r;

	if ((w.desc = pages_desc(p->sort_direction, 0)) < 0) {
		*cause = xasprintf("invalid sortDirection: %s", p->sort_direction);
		return -ERANGE;
	}
	if (p->anchor_item_id != NULL && p->turn_id == NULL) {
		*cause = xstrdup("an item anchor needs a turnId");
		return -ERANGE;
	}
	if ((r = pages_source(s, id, canon, &path, &w.live, cause)) != 0)
		return r;
	if ((w.ix = store_turnidx_get(s, path)) == NULL) {
		*cause = xasprintf("failed to read %s", path);
		free(path);
		return -EIO;
	}
	if (p->turn_id != NULL && (w.only = pages_find(w.ix, p->turn_id)) < 0) {
		*cause = xasprintf("turn not found: %s", p->turn_id);
		free(path);
		return -ERANGE;
	}
	w.tpos = w.only >= 0 ? w.only : (w.desc ? (long)w.ix->n - 1 : 0);
	if (p->cursor != NULL &&
		(pages_item_cursor(p->cursor, tid, &w.ipos, &w.inclusive) != 0 ||
			(w.tpos = pages_find(w.ix, tid)) < 0 ||
			(w.only >= 0 && w.tpos != w.only))) {
		*cause = xasprintf("invalid cursor: `%s`", p->cursor);
		free(path);
		return -ERANGE;
	}
	w.anchor = p->cursor == NULL ? p->anchor_item_id : NULL;
	w.started = p->cursor == NULL && w.anchor == NULL;
	w.path = path;
	w.data = json_array();
	pages_items_walk(&w);
	*result = json_pack("{s:o,s:o,s:o}", "data", w.data, "nextCursor",
		w.next ? json_string(w.next) : json_null(), "backwardsCursor",
		w.back ? json_string(w.back) : json_null());
	free(w.next);
	free(w.back);
	free(path);
	return 0;
}
