/*
 * Thread sections in SQLite (tsections.h). Writes are one BEGIN IMMEDIATE ... COMMIT each, so
 * a request that fails half-way (another connection's lock, a full disk) changes nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "tindex.h"
#include "tsections.h"
#include "protocol/xmalloc.h"

/* The wire ThreadSection of a row (id, name, appearance text). */
static json_t *
tsections_row(sqlite3_stmt *st)
{
	const char *app = (const char *)sqlite3_column_text(st, 2);
	json_t *a = app != NULL ? json_loads(app, 0, NULL) : NULL;

	return json_pack("{s:s,s:s,s:o}", "id", (const char *)sqlite3_column_text(st, 0), "name",
		(const char *)sqlite3_column_text(st, 1), "appearance", a ? a : json_null());
}

int
tsections_load(struct tindex *x, json_t **sections, json_t **members)
{
	sqlite3_stmt *st;
	int rc;

	*sections = json_object();
	*members = json_object();
	if ((st = tindex_stmt(x, "SELECT id, name, appearance FROM sections")) == NULL)
		goto bad;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_object_set_new(
			*sections, (const char *)sqlite3_column_text(st, 0), tsections_row(st));
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		goto bad;
	st = tindex_stmt(x, "SELECT thread_id, section_id, entered_ms FROM section_members");
	if (st == NULL)
		goto bad;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_object_set_new(*members, (const char *)sqlite3_column_text(st, 0),
			json_pack("[s,I]", (const char *)sqlite3_column_text(st, 1),
				(json_int_t)sqlite3_column_int64(st, 2)));
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		goto bad;
	return 0;
bad:
	json_decref(*sections);
	json_decref(*members);
	*sections = *members = NULL;
	return -EIO;
}

json_t *
tsections_get(struct tindex *x, const char *id)
{
	sqlite3_stmt *st =
		tindex_stmt(x, "SELECT id, name, appearance FROM sections WHERE id = ?1");
	json_t *out = NULL;

	if (st == NULL)
		return NULL;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		out = tsections_row(st);
	sqlite3_reset(st);
	return out;
}

int
tsections_page(struct tindex *x, const char *cursor, int limit, json_t **data, char **next)
{
	sqlite3_stmt *st = tindex_stmt(x,
		"SELECT id, name, appearance FROM sections WHERE id > ?1"
		" ORDER BY id LIMIT ?2");
	int rc, n = 0;

	*data = NULL;
	*next = NULL;
	if (st == NULL)
		return -EIO;
	sqlite3_bind_text(st, 1, cursor ? cursor : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, limit + 1);
	*data = json_array();
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n++ == limit) {
			/* one more row exists: the page ends at the last one returned */
			json_t *last = json_array_get(*data, json_array_size(*data) - 1);

			*next = xstrdup(json_string_value(json_object_get(last, "id")));
			break;
		}
		json_array_append_new(*data, tsections_row(st));
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		json_decref(*data);
		*data = NULL;
		free(*next);
		*next = NULL;
		return -EIO;
	}
	return 0;
}

/* Step a prepared write; 0 or -EIO. */
static int
tsections_step(sqlite3_stmt *st)
{
	int rc;

	if (st == NULL)
		return -EIO;
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Commit after r == 0, else roll back; r or -EIO. */
static int
tsections_end(struct tindex *x, int r)
{
	if (r == 0 && tindex_commit(x) != 0)
		r = -EIO;
	if (r != 0)
		tindex_rollback(x);
	return r;
}

int
tsections_create(
	struct tindex *x, const char *id, const char *name, const char *appearance, int64_t now_ms)
{
	sqlite3_stmt *st = tindex_stmt(x, "INSERT INTO sections VALUES (?1, ?2, ?3, ?4)");

	if (st == NULL)
		return -EIO;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
	if (appearance != NULL)
		sqlite3_bind_text(st, 3, appearance, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 4, now_ms);
	return tsections_step(st); /* one statement: its own transaction */
}

int
tsections_update(struct tindex *x, const char *id, const char *name, int set_appearance,
	const char *appearance)
{
	sqlite3_stmt *st = tindex_stmt(x,
		set_appearance ? "UPDATE sections SET name = ?2, appearance = ?3 WHERE id = ?1"
			       : "UPDATE sections SET name = ?2 WHERE id = ?1");
	int r;

	if (st == NULL)
		return -EIO;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
	if (set_appearance && appearance != NULL)
		sqlite3_bind_text(st, 3, appearance, -1, SQLITE_TRANSIENT);
	if ((r = tsections_step(st)) != 0)
		return r;
	return sqlite3_changes(sqlite3_db_handle(st)) > 0 ? 0 : -ENOENT;
}

int
tsections_delete(struct tindex *x, const char *id)
{
	sqlite3_stmt *st;
	int r, gone;

	if (tindex_begin(x) != 0)
		return -EIO;
	st = tindex_stmt(x, "DELETE FROM sections WHERE id = ?1");
	if (st != NULL)
		sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	r = tsections_step(st);
	gone = r == 0 && sqlite3_changes(sqlite3_db_handle(st)) > 0;
	if (r == 0 && !gone)
		r = -ENOENT;
	if (r == 0) {
		st = tindex_stmt(x, "DELETE FROM section_members WHERE section_id = ?1");
		if (st != NULL)
			sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
		r = tsections_step(st);
	}
	return tsections_end(x, r);
}

/* One integer of a query with up to two text parameters; 0 (*out), -ENOENT (no row), -EIO. */
static int
tsections_int(struct tindex *x, const char *sql, const char *a, const char *b, int64_t *out)
{
	sqlite3_stmt *st = tindex_stmt(x, sql);
	int rc;

	if (st == NULL)
		return -EIO;
	sqlite3_bind_text(st, 1, a, -1, SQLITE_TRANSIENT);
	if (b != NULL)
		sqlite3_bind_text(st, 2, b, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_type(st, 0) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? -ENOENT : -EIO;
}

/* Spread a section's positions TSECTIONS_STEP apart again, in their order. */
static int
tsections_renumber(struct tindex *x, const char *section)
{
	sqlite3_stmt *st = tindex_stmt(x,
		"SELECT thread_id FROM section_members"
		" WHERE section_id = ?1 ORDER BY position, thread_id");
	json_t *ids = json_array(), *v;
	size_t i;
	int rc, r = 0;

	if (st == NULL)
		r = -EIO;
	else {
		sqlite3_bind_text(st, 1, section, -1, SQLITE_TRANSIENT);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			json_array_append_new(
				ids, json_string((const char *)sqlite3_column_text(st, 0)));
		sqlite3_reset(st);
		r = rc == SQLITE_DONE ? 0 : -EIO;
	}
	json_array_foreach(ids, i, v)
	{
		if (r != 0)
			break;
		st = tindex_stmt(
			x, "UPDATE section_members SET position = ?2 WHERE thread_id = ?1");
		if (st == NULL) {
			r = -EIO;
			break;
		}
		sqlite3_bind_text(st, 1, json_string_value(v), -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 2, (int64_t)(i + 1) * TSECTIONS_STEP);
		r = tsections_step(st);
	}
	json_decref(ids);
	return r;
}

/*
 * The position thread gets before `before` in section: halfway between it and the thread in
 * front of it (0 when none); renumbered first when no integer is left between them.
 */
static int
tsections_before(struct tindex *x, const char *thread_id, const char *section, const char *before,
	int64_t *pos, char **cause)
{
	static const char pos_sql[] = "SELECT position FROM section_members"
				      " WHERE thread_id = ?1 AND section_id = ?2";
	static const char prev_sql[] =
		"SELECT max(position) FROM section_members"
		" WHERE section_id = ?2 AND thread_id <> ?1 AND position < ?3";
	int64_t at = 0, prev = 0;
	int r;

	for (int pass = 0; pass < 2; pass++) {
		sqlite3_stmt *st;
		int rc;

		r = tsections_int(x, pos_sql, before, section, &at);
		if (r == -ENOENT) {
			*cause =
				xasprintf("before thread %s is not in section %s", before, section);
			return -EINVAL;
		}
		if (r != 0)
			return r;
		if ((st = tindex_stmt(x, prev_sql)) == NULL)
			return -EIO;
		sqlite3_bind_text(st, 1, thread_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, section, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 3, at);
		rc = sqlite3_step(st);
		prev = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL
			? sqlite3_column_int64(st, 0)
			: 0;
		sqlite3_reset(st);
		if (rc != SQLITE_ROW)
			return -EIO;
		if (at - prev >= 2)
			break;
		if (pass == 1 || (r = tsections_renumber(x, section)) != 0)
			return pass == 1 ? -EIO : r;
	}
	*pos = prev + (at - prev) / 2;
	return 0;
}

/* The checks and the row of a move into a section (inside the transaction). */
static int
tsections_enter(struct tindex *x, const char *thread_id, const char *section, const char *before,
	int64_t now_ms, int64_t *entered_ms, char **cause)
{
	sqlite3_stmt *st;
	int64_t pos = 0, one;
	int r;

	r = tsections_int(x, "SELECT 1 FROM sections WHERE id = ?1", section, NULL, &one);
	if (r == -ENOENT) {
		*cause = xasprintf("section %s does not exist", section);
		return -EINVAL;
	}
	if (r != 0)
		return r;
	if (before != NULL && strcmp(before, thread_id) == 0) {
		*cause = xasprintf("thread %s cannot be moved before itself", thread_id);
		return -EINVAL;
	}
	if (before != NULL)
		r = tsections_before(x, thread_id, section, before, &pos, cause);
	else if ((r = tsections_int(x,
			  "SELECT max(position) FROM section_members"
			  " WHERE section_id = ?2 AND thread_id <> ?1",
			  thread_id, section, &pos)) == 0)
		pos += TSECTIONS_STEP;
	if (r != 0)
		return r;
	/* Moving within its section keeps the time it entered it (as upstream). */
	*entered_ms = now_ms;
	r = tsections_int(x,
		"SELECT entered_ms FROM section_members WHERE thread_id = ?1 AND section_id = ?2",
		thread_id, section, entered_ms);
	if (r != 0 && r != -ENOENT)
		return r;
	st = tindex_stmt(x, "INSERT OR REPLACE INTO section_members VALUES (?1, ?2, ?3, ?4)");
	if (st == NULL)
		return -EIO;
	sqlite3_bind_text(st, 1, thread_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, section, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, pos);
	sqlite3_bind_int64(st, 4, *entered_ms);
	return tsections_step(st);
}

int
tsections_move(struct tindex *x, const char *thread_id, const char *section, const char *before,
	int64_t now_ms, int64_t *entered_ms, char **cause)
{
	int r;

	*entered_ms = 0;
	if (tindex_begin(x) != 0)
		return -EIO;
	if (section != NULL)
		r = tsections_enter(x, thread_id, section, before, now_ms, entered_ms, cause);
	else
		r = tsections_forget(x, thread_id);
	return tsections_end(x, r);
}

int
tsections_forget(struct tindex *x, const char *thread_id)
{
	sqlite3_stmt *st = tindex_stmt(x, "DELETE FROM section_members WHERE thread_id = ?1");

	if (st != NULL)
		sqlite3_bind_text(st, 1, thread_id, -1, SQLITE_TRANSIENT);
	return tsections_step(st);
}
