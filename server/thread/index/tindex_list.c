/*
 * thread/list over the index (tindex.h) with keyset pagination. The cursor names a position,
 * not a page: "<key>:<ms>:<id>:<x|i>" = sort key (c, u, r), its value, the thread id, and
 * whether that row itself is excluded (next pages) or included (backwards cursors, which
 * reverse direction and must show their anchor again). Rows inserted or updated between pages
 * never shift later pages: each page starts strictly after (or at) a (value, id) pair.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "tindex.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "thread/uuidv7.h"

#define LIST_SQL_MAX (64 * 1024)

static const char *const list_keys[] = {"created_ms", "updated_ms", "recency_ms", "position"};
static const char list_key_chars[] = "curp";

/* A parsed cursor. */
struct list_cursor {
	int key;
	int64_t ms;
	char id[37];
	int inclusive;
};

/* Parse "<k>:<ms>:<id>:<x|i>"; 0 or -ERANGE with a reason. */
static int
list_cursor_parse(const char *s, int want_key, struct list_cursor *c, char **cause)
{
	const char *p = s, *colon;
	char *end;

	if (strlen(s) > 80 || s[0] == '\0' || strchr(list_key_chars, s[0]) == NULL || s[1] != ':')
		goto bad;
	c->key = (int)(strchr(list_key_chars, s[0]) - list_key_chars);
	if (c->key != want_key) {
		*cause = xasprintf("invalid cursor: `%s` was made for another sortKey", s);
		return -ERANGE;
	}
	p = s + 2;
	errno = 0;
	c->ms = strtoll(p, &end, 10);
	if (errno != 0 || end == p || *end != ':')
		goto bad;
	p = end + 1;
	colon = strchr(p, ':');
	if (colon == NULL || colon - p != UUID_STRLEN)
		goto bad;
	memcpy(c->id, p, UUID_STRLEN);
	c->id[UUID_STRLEN] = '\0';
	if (uuidv7_check(c->id, NULL) != 0)
		goto bad;
	if (strcmp(colon + 1, "x") != 0 && strcmp(colon + 1, "i") != 0)
		goto bad;
	c->inclusive = colon[1] == 'i';
	return 0;
bad:
	*cause = xasprintf("invalid cursor: `%s`", s);
	return -ERANGE;
}

/* Format a cursor for a row. */
static char *
list_cursor_make(int key, const struct thread_meta *m, int64_t position, int inclusive)
{
	int64_t v = key == 0 ? m->created_ms : key == 1 ? m->updated_ms : m->recency_ms;

	if (key == 3)
		v = position;
	return xasprintf(
		"%c:%" PRId64 ":%s:%c", list_key_chars[key], v, m->id, inclusive ? 'i' : 'x');
}

/* "?,?,?" for n values bound from next. */
static void
list_placeholders(struct buf *sql, size_t n)
{
	for (size_t i = 0; i < n; i++)
		buf_adds(sql, i ? ",?" : "?");
}

/* Bind each string of a JSON array at *next, *next+1, ... */
static void
list_bind_array(sqlite3_stmt *st, int *next, json_t *a)
{
	size_t i;
	json_t *v;

	json_array_foreach(a, i, v)
		sqlite3_bind_text(st, (*next)++, json_string_value(v), -1, SQLITE_TRANSIENT);
}

/* Whether a filter array holds only strings and is not too long. */
static int
list_array_ok(json_t *a)
{
	size_t i;
	json_t *v;

	if (a == NULL)
		return 1;
	if (!json_is_array(a) || json_array_size(a) > TINDEX_FILTER_MAX)
		return 0;
	json_array_foreach(a, i, v) if (!json_is_string(v)) return 0;
	return 1;
}

/* Source kinds: "subAgent" stands for every sub-agent kind. */
static void
list_kinds_sql(struct buf *sql, json_t *kinds, int *any_sub)
{
	size_t i, n = 0;
	json_t *v;

	*any_sub = 0;
	json_array_foreach(
		kinds, i, v) if (strcmp(json_string_value(v), "subAgent") == 0) *any_sub = 1;
	buf_adds(sql, " AND (source_kind IN (");
	list_placeholders(sql, json_array_size(kinds));
	n = json_array_size(kinds);
	buf_adds(sql, n ? ")" : "NULL)");
	if (*any_sub)
		buf_adds(sql, " OR source_kind LIKE 'subAgent%'");
	buf_adds(sql, ")");
}

/* The SELECT for a query (cur is used when the query has a cursor). */
static void
list_sql(
	struct buf *sql, const struct tindex_query *q, json_t *kinds, const struct list_cursor *cur)
{
	const char *k = list_keys[q->sort_updated];
	int desc = !q->ascending, any_sub;

	if (q->section_mode == 2) /* a section's threads: also those without a user message */
		buf_adds(sql,
			"SELECT " TINDEX_COLS ", position FROM threads JOIN section_members"
			" ON thread_id = id WHERE section_id = ? AND archived = ?");
	else
		buf_printf(sql,
			"SELECT " TINDEX_COLS ", 0 FROM threads WHERE archived = ?"
			" AND has_user = 1");
	if (q->section_mode == 1)
		buf_adds(sql, " AND id NOT IN (SELECT thread_id FROM section_members)");
	if (q->model_providers == NULL) {
		buf_adds(sql, " AND coalesce(model_provider, ?) = ?");
	} else if (json_array_size(q->model_providers) > 0) {
		buf_adds(sql, " AND coalesce(model_provider, ?) IN (");
		list_placeholders(sql, json_array_size(q->model_providers));
		buf_adds(sql, ")");
	}
	list_kinds_sql(sql, kinds, &any_sub);
	if (q->cwds != NULL) {
		buf_adds(sql, " AND cwd IN (");
		list_placeholders(sql, json_array_size(q->cwds));
		buf_adds(sql, json_array_size(q->cwds) ? ")" : "NULL)");
	}
	if (q->search != NULL && *q->search != '\0')
		buf_adds(sql, " AND (instr(preview, ?) > 0 OR instr(coalesce(name, ''), ?) > 0)");
	if (q->excluded_ids != NULL && json_array_size(q->excluded_ids) > 0) {
		buf_adds(sql, " AND id NOT IN (");
		list_placeholders(sql, json_array_size(q->excluded_ids));
		buf_adds(sql, ")");
	}
	if (q->cursor != NULL) /* a row-value range: SQLite seeks the index, never scans it */
		buf_printf(sql, " AND (%s, id) %s (?, ?)", k,
			desc ? (cur->inclusive ? "<=" : "<") : (cur->inclusive ? ">=" : ">"));
	buf_printf(sql, " ORDER BY %s %s, id %s LIMIT ?", k, desc ? "DESC" : "ASC",
		desc ? "DESC" : "ASC");
}

/* Bind the values of list_sql's placeholders, in the same order. */
static void
list_bind(sqlite3_stmt *st, const struct tindex_query *q, json_t *kinds,
	const struct list_cursor *cur, size_t cap)
{
	const char *dflt = q->default_provider ? q->default_provider : "";
	int next = 1;

	if (q->section_mode == 2)
		sqlite3_bind_text(st, next++, q->section_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, next++, q->archived);
	if (q->model_providers == NULL) {
		sqlite3_bind_text(st, next++, dflt, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, next++, dflt, -1, SQLITE_TRANSIENT);
	} else if (json_array_size(q->model_providers) > 0) {
		sqlite3_bind_text(st, next++, dflt, -1, SQLITE_TRANSIENT);
		list_bind_array(st, &next, q->model_providers);
	}
	list_bind_array(st, &next, kinds);
	if (q->cwds != NULL)
		list_bind_array(st, &next, q->cwds);
	if (q->search != NULL && *q->search != '\0') {
		sqlite3_bind_text(st, next++, q->search, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, next++, q->search, -1, SQLITE_TRANSIENT);
	}
	if (q->excluded_ids != NULL && json_array_size(q->excluded_ids) > 0)
		list_bind_array(st, &next, q->excluded_ids);
	if (q->cursor != NULL) {
		sqlite3_bind_int64(st, next++, cur->ms);
		sqlite3_bind_text(st, next++, cur->id, -1, SQLITE_TRANSIENT);
	}
	sqlite3_bind_int64(st, next++, (sqlite3_int64)cap);
}

/* Check, build, bind and run; rows (one past the limit tells a next page exists) to page. */
int
tindex_list(struct tindex *x, const struct tindex_query *q, struct tindex_page *page, char **cause)
{
	struct buf sql;
	struct list_cursor cur = {0};
	int key = q->sort_updated, r = 0, rc;
	json_t *kinds = q->source_kinds, *dflt_kinds = NULL;
	sqlite3_stmt *st;
	size_t cap = (size_t)q->limit + 1;
	int64_t *positions = NULL; /* each row's place in its section (the position key) */

	memset(page, 0, sizeof *page);
	if (key == 3 && q->section_mode != 2) {
		*cause = xstrdup("section-position sorting requires a section filter");
		return -EINVAL;
	}
	if (q->cursor != NULL && (r = list_cursor_parse(q->cursor, key, &cur, cause)) != 0)
		return r;
	if (!list_array_ok(q->model_providers) || !list_array_ok(q->source_kinds) ||
		!list_array_ok(q->cwds) || !list_array_ok(q->excluded_ids)) {
		*cause = xasprintf(
			"invalid list filter: at most %d strings each", TINDEX_FILTER_MAX);
		return -ERANGE;
	}
	if (kinds == NULL || json_array_size(kinds) == 0)
		kinds = dflt_kinds = json_pack("[s,s]", "cli", "vscode");
	buf_init(&sql, LIST_SQL_MAX);
	list_sql(&sql, q, kinds, &cur);
	if ((st = tindex_stmt(x, buf_str(&sql))) == NULL) {
		r = -EIO;
		goto out;
	}
	list_bind(st, q, kinds, &cur, cap);
	page->rows = xcalloc(cap, sizeof *page->rows);
	positions = xcalloc(cap, sizeof *positions);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && page->n < cap) {
		tindex_row(st, &page->rows[page->n]);
		positions[page->n++] = sqlite3_column_int64(st, TINDEX_NCOLS);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		*cause = xasprintf("thread index: %s", sqlite3_errstr(rc));
		r = -EIO;
		goto out;
	}
	if (page->n == cap) {
		page->n--;
		thread_meta_clear(&page->rows[page->n]);
		page->next_cursor =
			list_cursor_make(key, &page->rows[page->n - 1], positions[page->n - 1], 0);
	}
	if (page->n > 0)
		page->backwards_cursor = list_cursor_make(key, &page->rows[0], positions[0], 1);
out:
	if (r != 0)
		tindex_page_free(page);
	json_decref(dflt_kinds);
	free(positions);
	buf_free(&sql);
	return r;
}

void
tindex_page_free(struct tindex_page *page)
{
	for (size_t i = 0; i < page->n; i++)
		thread_meta_clear(&page->rows[i]);
	free(page->rows);
	free(page->next_cursor);
	free(page->backwards_cursor);
	memset(page, 0, sizeof *page);
}
