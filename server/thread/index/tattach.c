/*
 * Thread attachments in SQLite (tattach.h). An add is one BEGIN IMMEDIATE ... COMMIT holding
 * its lookup, its count and its insert, so two daemons adding the same identity at once make
 * one row, and the per-thread limit holds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "tattach.h"
#include "tindex.h"
#include "protocol/xmalloc.h"
#include "thread/uuidv7.h"

#define TATTACH_COLS "id, type, identity, payload, created_ms"

/* The wire ThreadAttachment of a row (TATTACH_COLS). */
static json_t *
tattach_row(sqlite3_stmt *st)
{
	json_t *payload =
		json_loads((const char *)sqlite3_column_text(st, 3), JSON_DECODE_ANY, NULL);

	return json_pack("{s:s,s:s,s:s,s:o,s:I}", "id", (const char *)sqlite3_column_text(st, 0),
		"attachmentType", (const char *)sqlite3_column_text(st, 1), "identityKey",
		(const char *)sqlite3_column_text(st, 2), "payload",
		payload != NULL ? payload : json_null(), "createdAt",
		(json_int_t)(sqlite3_column_int64(st, 4) / 1000));
}

/* Step a write; 0 or -EIO. */
static int
tattach_step(sqlite3_stmt *st)
{
	int rc;

	if (st == NULL)
		return -EIO;
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* The row of (thread, type, identity) as a wire attachment, or NULL (*r -EIO on failure). */
static json_t *
tattach_find(
	struct tindex *x, const char *thread_id, const char *type, const char *identity, int *r)
{
	sqlite3_stmt *st = tindex_stmt(x,
		"SELECT " TATTACH_COLS " FROM attachments"
		" WHERE thread_id = ?1 AND type = ?2 AND identity = ?3");
	json_t *out = NULL;
	int rc;

	*r = 0;
	if (st == NULL) {
		*r = -EIO;
		return NULL;
	}
	sqlite3_bind_text(st, 1, thread_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, type, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, identity, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		out = tattach_row(st);
	else if (rc != SQLITE_DONE)
		*r = -EIO;
	sqlite3_reset(st);
	return out;
}

/* Attachments the thread holds, or -1. */
static int64_t
tattach_count(struct tindex *x, const char *thread_id)
{
	sqlite3_stmt *st = tindex_stmt(x, "SELECT count(*) FROM attachments WHERE thread_id = ?1");
	int64_t n = -1;

	if (st == NULL)
		return -1;
	sqlite3_bind_text(st, 1, thread_id, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return n;
}

int
tattach_add(struct tindex *x, const char *thread_id, const char *type, const char *identity,
	const char *id, const char *payload, int64_t now_ms, json_t **att, int *created)
{
	sqlite3_stmt *st;
	int64_t n;
	int r;

	*att = NULL;
	*created = 0;
	if (tindex_begin(x) != 0)
		return -EIO;
	if ((*att = tattach_find(x, thread_id, type, identity, &r)) != NULL || r != 0)
		goto out;
	if ((n = tattach_count(x, thread_id)) < 0) {
		r = -EIO;
		goto out;
	}
	if (n >= TATTACH_PER_THREAD) {
		r = -EMLINK;
		goto out;
	}
	st = tindex_stmt(x, "INSERT INTO attachments VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	if (st != NULL) {
		sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 2, thread_id, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 3, type, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 4, identity, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(st, 5, payload, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(st, 6, now_ms);
	}
	if ((r = tattach_step(st)) == 0 &&
		(*att = tattach_find(x, thread_id, type, identity, &r)) == NULL && r == 0)
		r = -EIO;
	*created = r == 0;
out:
	if (r == 0 && tindex_commit(x) != 0)
		r = -EIO;
	if (r != 0) {
		tindex_rollback(x);
		json_decref(*att);
		*att = NULL;
		*created = 0;
	}
	return r;
}

int
tattach_remove(
	struct tindex *x, const char *thread_id, const char *type, const char *identity, char **id)
{
	sqlite3_stmt *st;
	json_t *att;
	int r;

	*id = NULL;
	if (tindex_begin(x) != 0)
		return -EIO;
	att = tattach_find(x, thread_id, type, identity, &r);
	if (att != NULL) {
		st = tindex_stmt(x, "DELETE FROM attachments WHERE id = ?1");
		if (st != NULL)
			sqlite3_bind_text(st, 1, json_string_value(json_object_get(att, "id")), -1,
				SQLITE_TRANSIENT);
		if ((r = tattach_step(st)) == 0)
			*id = xstrdup(json_string_value(json_object_get(att, "id")));
		json_decref(att);
	}
	if (r == 0 && tindex_commit(x) != 0)
		r = -EIO;
	if (r != 0) {
		tindex_rollback(x);
		free(*id);
		*id = NULL;
	}
	return r;
}

/* Run a page query whose rows end with a key column; one extra row tells a next page. */
static int
tattach_page(sqlite3_stmt *st, int limit, json_t *(*row)(sqlite3_stmt *),
	char *(*key)(sqlite3_stmt *), json_t **data, char **next)
{
	int rc, n = 0;
	char *last = NULL;

	*data = json_array();
	*next = NULL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n++ == limit) {
			*next = last;
			last = NULL;
			break;
		}
		json_array_append_new(*data, row(st));
		free(last);
		last = key(st);
	}
	free(last);
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

/* A list cursor: "<created_ms>:<id>". */
static char *
tattach_key(sqlite3_stmt *st)
{
	return xasprintf("%" PRId64 ":%s", (int64_t)sqlite3_column_int64(st, 4),
		(const char *)sqlite3_column_text(st, 0));
}

int
tattach_list(struct tindex *x, const char *thread_id, const char *cursor, int limit, json_t **data,
	char **next)
{
	sqlite3_stmt *st;
	int64_t ms = -1;
	char id[UUID_STRLEN + 1] = "", *end;

	*data = NULL;
	*next = NULL;
	if (cursor != NULL) {
		ms = strtoll(cursor, &end, 10);
		if (end == cursor || *end != ':' || strlen(end + 1) != UUID_STRLEN ||
			uuidv7_check(end + 1, NULL) != 0 || ms < 0)
			return -ERANGE;
		memcpy(id, end + 1, sizeof id);
	}
	st = tindex_stmt(x,
		"SELECT " TATTACH_COLS " FROM attachments WHERE thread_id = ?1"
		" AND (created_ms, id) > (?2, ?3) ORDER BY created_ms, id LIMIT ?4");
	if (st == NULL)
		return -EIO;
	sqlite3_bind_text(st, 1, thread_id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 2, ms);
	sqlite3_bind_text(st, 3, id, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 4, limit + 1);
	return tattach_page(st, limit, tattach_row, tattach_key, data, next);
}

static json_t *
tattach_owner_row(sqlite3_stmt *st)
{
	return json_pack("{s:s,s:b}", "threadId", (const char *)sqlite3_column_text(st, 0),
		"archived", sqlite3_column_int(st, 1));
}

static char *
tattach_owner_key(sqlite3_stmt *st)
{
	return xstrdup((const char *)sqlite3_column_text(st, 0));
}

int
tattach_owners(struct tindex *x, const char *type, const char *identity, int archived,
	const char *cursor, int limit, json_t **data, char **next)
{
	sqlite3_stmt *st;

	*data = NULL;
	*next = NULL;
	if (cursor != NULL && uuidv7_check(cursor, NULL) != 0)
		return -ERANGE;
	/* archived as the index knows it (a thread it has no row for counts as not archived) */
	st = tindex_stmt(x,
		"SELECT a.thread_id, coalesce(t.archived, 0) AS arch FROM attachments a"
		" LEFT JOIN threads t ON t.id = a.thread_id"
		" WHERE a.type = ?1 AND a.identity = ?2 AND a.thread_id > ?3"
		" AND (?4 < 0 OR coalesce(t.archived, 0) = ?4)"
		" ORDER BY a.thread_id LIMIT ?5");
	if (st == NULL)
		return -EIO;
	sqlite3_bind_text(st, 1, type, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, identity, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, cursor != NULL ? cursor : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 4, archived);
	sqlite3_bind_int(st, 5, limit + 1);
	return tattach_page(st, limit, tattach_owner_row, tattach_owner_key, data, next);
}

int
tattach_forget(struct tindex *x, const char *thread_id)
{
	sqlite3_stmt *st = tindex_stmt(x, "DELETE FROM attachments WHERE thread_id = ?1");

	if (st != NULL)
		sqlite3_bind_text(st, 1, thread_id, -1, SQLITE_TRANSIENT);
	return tattach_step(st);
}
