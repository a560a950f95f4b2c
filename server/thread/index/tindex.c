/*
 * The SQLite thread index (tindex.h): the file, its schema and migrations, and single-row
 * reads and writes. Listing lives in tindex_list.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "tindex.h"
#include "tsections.h"
#include "protocol/xmalloc.h"
#include "thread/rollout/record.h"
#include "thread/rollout/rollout.h"

#define TINDEX_STMTS 32

struct tindex_cached {
	char *sql;
	sqlite3_stmt *st;
	uint64_t used;
};

struct tindex {
	sqlite3 *db;
	char *path;
	struct tindex_cached stmts[TINDEX_STMTS];
	uint64_t clock;
};

static int tindex_exec_busy(sqlite3 *db, const char *sql);

/* Migration n brings user_version n-1 to n. Append; never edit a published step. */
static const char *const tindex_migrations[] = {
	/* 1 */
	"CREATE TABLE threads ("
	" id TEXT PRIMARY KEY, path TEXT NOT NULL,"
	" created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL, recency_ms INTEGER NOT NULL,"
	" cwd TEXT, model_provider TEXT, model TEXT, effort TEXT, originator TEXT,"
	" cli_version TEXT, source TEXT, source_kind TEXT NOT NULL DEFAULT 'unknown',"
	" forked_from_id TEXT, name TEXT, preview TEXT NOT NULL DEFAULT '',"
	" agent_nickname TEXT, agent_role TEXT,"
	" archived INTEGER NOT NULL DEFAULT 0, has_user INTEGER NOT NULL DEFAULT 0,"
	" tok_input INTEGER NOT NULL DEFAULT 0, tok_cached INTEGER NOT NULL DEFAULT 0,"
	" tok_output INTEGER NOT NULL DEFAULT 0, tok_reasoning INTEGER NOT NULL DEFAULT 0,"
	" tok_total INTEGER NOT NULL DEFAULT 0,"
	" file_size INTEGER NOT NULL DEFAULT 0, file_mtime_ns INTEGER NOT NULL DEFAULT 0,"
	" git_info TEXT, indexed_ms INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;"
	"CREATE INDEX threads_by_created ON threads(archived, created_ms, id);"
	"CREATE INDEX threads_by_updated ON threads(archived, updated_ms, id);"
	"CREATE INDEX threads_by_recency ON threads(archived, recency_ms, id);"
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;",
	/*
	 * 2: thread sections (tsections.h). Unlike the rows above they are no cache of the
	 * rollouts: nothing rebuilds them, so they sit in tables a rescan never touches.
	 */
	"CREATE TABLE sections (id TEXT PRIMARY KEY, name TEXT NOT NULL, appearance TEXT,"
	" created_ms INTEGER NOT NULL) WITHOUT ROWID;"
	"CREATE TABLE section_members (thread_id TEXT PRIMARY KEY, section_id TEXT NOT NULL,"
	" position INTEGER NOT NULL, entered_ms INTEGER NOT NULL) WITHOUT ROWID;"
	"CREATE INDEX section_members_by_position ON section_members(section_id, position,"
	" thread_id);"
	"INSERT INTO sections VALUES ('" TSECTIONS_PINNED_ID "', 'Pinned', NULL, 0);",
	/* 3: thread attachments (tattach.h), no cache either */
	"CREATE TABLE attachments (id TEXT PRIMARY KEY, thread_id TEXT NOT NULL,"
	" type TEXT NOT NULL, identity TEXT NOT NULL, payload TEXT NOT NULL,"
	" created_ms INTEGER NOT NULL, UNIQUE (thread_id, type, identity)) WITHOUT ROWID;"
	"CREATE INDEX attachments_by_thread ON attachments(thread_id, created_ms, id);"
	"CREATE INDEX attachments_by_identity ON attachments(type, identity, thread_id);",
};

/* A prepared statement for sql, reused while cached (reset and unbound). */
sqlite3_stmt *
tindex_stmt(struct tindex *x, const char *sql)
{
	struct tindex_cached *slot = &x->stmts[0];

	for (size_t i = 0; i < TINDEX_STMTS; i++) {
		struct tindex_cached *c = &x->stmts[i];

		if (c->sql != NULL && strcmp(c->sql, sql) == 0) {
			c->used = ++x->clock;
			sqlite3_reset(c->st);
			sqlite3_clear_bindings(c->st);
			return c->st;
		}
		if (c->used < slot->used)
			slot = c;
	}
	/* Not cached: replace the least recently used slot. */
	sqlite3_finalize(slot->st);
	free(slot->sql);
	slot->sql = NULL;
	slot->st = NULL;
	if (sqlite3_prepare_v3(x->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &slot->st, NULL) !=
		SQLITE_OK) {
		slot->used = 0;
		return NULL;
	}
	slot->sql = xstrdup(sql);
	slot->used = ++x->clock;
	return slot->st;
}

/* Run statements that return no rows. */
static int
tindex_exec(struct tindex *x, const char *sql, char **cause)
{
	char *err = NULL;

	if (sqlite3_exec(x->db, sql, NULL, NULL, &err) != SQLITE_OK) {
		if (cause != NULL)
			*cause = xasprintf("thread index: %s", err ? err : "error");
		sqlite3_free(err);
		return -EIO;
	}
	return 0;
}

/* Bring the schema to TINDEX_VERSION; -ENOTSUP for a file from a newer version. */
static int
tindex_migrate(struct tindex *x, char **cause)
{
	sqlite3_stmt *st;
	int version = 0, now, r;

	if (sqlite3_prepare_v2(x->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version > TINDEX_VERSION)
		return -ENOTSUP;
	while (version < TINDEX_VERSION) {
		/* Every pending step in one transaction: one commit, one schema reload. */
		char *step = xstrdup("BEGIN IMMEDIATE;"), *next;

		for (int v = version; v < TINDEX_VERSION; v++) {
			next = xasprintf("%s %s", step, tindex_migrations[v]);
			free(step);
			step = next;
		}
		next = xasprintf("%s PRAGMA user_version = %d; COMMIT;", step, TINDEX_VERSION);
		free(step);
		step = next;
		r = tindex_exec_busy(x->db, step) == SQLITE_OK ? 0 : -EIO;
		free(step);
		if (r == 0)
			break;
		*cause = xasprintf("thread index: %s", sqlite3_errmsg(x->db));
		tindex_exec(x, "ROLLBACK", NULL);
		/* Another daemon may have migrated first: accept its work. */
		if (sqlite3_prepare_v2(x->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
			return r;
		now = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
		sqlite3_finalize(st);
		if (now <= version)
			return r;
		free(*cause);
		*cause = NULL;
		version = now;
	}
	return 0;
}

/*
 * Run sql, retrying while another connection holds a lock SQLite does not wait for by itself
 * (switching a new file to WAL needs it exclusively, and may fail at once with SQLITE_BUSY).
 */
static int
tindex_exec_busy(sqlite3 *db, const char *sql)
{
	int rc;

	for (int waited = 0;; waited += 10) {
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
		if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || waited >= TINDEX_BUSY_MS)
			return rc;
		usleep(10000);
	}
}

/* Open one connection with our pragmas and check the file is sane. */
static int
tindex_connect(struct tindex *x, int fresh, char **cause)
{
	int rc = sqlite3_open_v2(x->path, &x->db,
		SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	int r;

	if (rc != SQLITE_OK)
		goto bad;
	sqlite3_busy_timeout(x->db, TINDEX_BUSY_MS);
	/*
	 * A new file is made without a sync (7 fdatasync; with the migrations in one
	 * transaction the open went from 2.2 to 0.8 ms on the index's thread): until its schema
	 * is committed it holds nothing, and a file a power cut left damaged is found below at
	 * the next start and made again.
	 */
	rc = tindex_exec_busy(x->db,
		fresh ? "PRAGMA synchronous=OFF; PRAGMA journal_mode=WAL;"
		      : "PRAGMA synchronous=NORMAL; PRAGMA journal_mode=WAL;");
	if (rc == SQLITE_OK)
		rc = tindex_exec_busy(x->db, "PRAGMA foreign_keys=OFF;");
	if (rc != SQLITE_OK)
		goto bad;
	/*
	 * A cheap sanity check: the header and the schema read (a file that is not a database,
	 * or a damaged schema, fails here). `PRAGMA quick_check` would read every page: 15 ms
	 * on the loop for 10,000 threads at the first thread request; a damaged row page is
	 * found by the query that reads it instead.
	 */
	rc = tindex_exec_busy(x->db, "SELECT count(*) FROM sqlite_master");
	if (rc != SQLITE_OK)
		goto bad;
	if ((r = tindex_migrate(x, cause)) != 0)
		return r;
	if (fresh && tindex_exec_busy(x->db, "PRAGMA synchronous=NORMAL;") != SQLITE_OK) {
		*cause = xasprintf("thread index %s: %s", x->path, sqlite3_errmsg(x->db));
		return -EIO;
	}
	return 0;
bad:
	*cause = xasprintf(
		"thread index %s: %s", x->path, x->db ? sqlite3_errmsg(x->db) : sqlite3_errstr(rc));
	return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ? -EBADMSG : -EIO;
}

/* Drop every cached statement and the connection. */
static void
tindex_disconnect(struct tindex *x)
{
	for (size_t i = 0; i < TINDEX_STMTS; i++) {
		sqlite3_finalize(x->stmts[i].st);
		free(x->stmts[i].sql);
		memset(&x->stmts[i], 0, sizeof x->stmts[i]);
	}
	sqlite3_close(x->db);
	x->db = NULL;
}

/* Move a broken or foreign index out of the way (kept for inspection, one generation). */
static void
tindex_move_aside(const char *path)
{
	char *aside = xasprintf("%s.broken", path);
	char *wal = xasprintf("%s-wal", path), *shm = xasprintf("%s-shm", path);

	rename(path, aside);
	unlink(wal);
	unlink(shm);
	free(aside);
	free(wal);
	free(shm);
}

/* Open, or make fresh when the old file cannot be used. */
int
tindex_open(const char *home, struct tindex **out, int *fresh, char **cause)
{
	struct tindex *x = xcalloc(1, sizeof *x);
	int r;

	x->path = xasprintf("%s/%s", home, TINDEX_FILE);
	*fresh = access(x->path, F_OK) != 0;
	r = tindex_connect(x, *fresh, cause);
	if (r == -EBADMSG || r == -ENOTSUP) {
		tindex_disconnect(x);
		tindex_move_aside(x->path);
		free(*cause);
		*cause = NULL;
		*fresh = 1;
		r = tindex_connect(x, 1, cause);
	}
	if (r != 0) {
		tindex_close(x);
		return r;
	}
	*out = x;
	return 0;
}

void
tindex_close(struct tindex *x)
{
	if (x == NULL)
		return;
	tindex_disconnect(x);
	free(x->path);
	free(x);
}

void
tindex_manual_checkpoints(struct tindex *x)
{
	sqlite3_wal_autocheckpoint(x->db, 0);
}

void
tindex_checkpoint(struct tindex *x)
{
	sqlite3_wal_checkpoint_v2(x->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
}

void
tindex_busy_timeout(struct tindex *x, int ms)
{
	sqlite3_busy_timeout(x->db, ms);
}

int
tindex_busy(struct tindex *x)
{
	int rc = sqlite3_errcode(x->db);

	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

/* BEGIN IMMEDIATE: take the write lock now, so a busy wait happens here, not mid-way. */
int
tindex_begin(struct tindex *x)
{
	return tindex_exec(x, "BEGIN IMMEDIATE", NULL);
}

int
tindex_commit(struct tindex *x)
{
	return tindex_exec(x, "COMMIT", NULL);
}

int
tindex_rollback(struct tindex *x)
{
	return tindex_exec(x, "ROLLBACK", NULL);
}

/* Step a statement that returns no rows. */
static int
tindex_done(sqlite3_stmt *st)
{
	int rc;

	if (st == NULL)
		return -EIO;
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

/* Bind a string or NULL. */
static void
tindex_bind_str(sqlite3_stmt *st, int i, const char *s)
{
	if (s != NULL)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* Insert or update the summary columns. */
int
tindex_put(struct tindex *x, const struct thread_meta *m, int64_t only_if_older_than, int64_t at_ms)
{
	static const char sql[] =
		"INSERT INTO threads (id, path, created_ms, updated_ms, recency_ms, cwd,"
		" model_provider, model, effort, originator, cli_version, source, source_kind,"
		" forked_from_id, preview, agent_nickname, agent_role, archived, has_user,"
		" tok_input, tok_cached, tok_output, tok_reasoning, tok_total, file_size,"
		" file_mtime_ns, indexed_ms)"
		" VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,"
		"?21,?22,?23,?24,?25,?26,?27)"
		" ON CONFLICT(id) DO UPDATE SET path=excluded.path, created_ms=excluded.created_ms,"
		" updated_ms=excluded.updated_ms, recency_ms=excluded.recency_ms, cwd=excluded.cwd,"
		" model_provider=excluded.model_provider, model=excluded.model,"
		" effort=excluded.effort, originator=excluded.originator,"
		" cli_version=excluded.cli_version, source=excluded.source,"
		" source_kind=excluded.source_kind, forked_from_id=excluded.forked_from_id,"
		" preview=excluded.preview, agent_nickname=excluded.agent_nickname,"
		" agent_role=excluded.agent_role, archived=excluded.archived,"
		" has_user=excluded.has_user, tok_input=excluded.tok_input,"
		" tok_cached=excluded.tok_cached, tok_output=excluded.tok_output,"
		" tok_reasoning=excluded.tok_reasoning, tok_total=excluded.tok_total,"
		" file_size=excluded.file_size, file_mtime_ns=excluded.file_mtime_ns,"
		" indexed_ms=excluded.indexed_ms"
		" WHERE ?28 = 0 OR threads.indexed_ms < ?28";
	sqlite3_stmt *st = tindex_stmt(x, sql);
	json_t *src = m->source ? json_loads(m->source, JSON_DECODE_ANY, NULL) : NULL;

	if (st == NULL) {
		json_decref(src);
		return -EIO;
	}
	tindex_bind_str(st, 1, m->id);
	tindex_bind_str(st, 2, m->path ? m->path : "");
	sqlite3_bind_int64(st, 3, m->created_ms);
	sqlite3_bind_int64(st, 4, m->updated_ms);
	sqlite3_bind_int64(st, 5, m->recency_ms);
	tindex_bind_str(st, 6, m->cwd);
	tindex_bind_str(st, 7, m->model_provider);
	tindex_bind_str(st, 8, m->model);
	tindex_bind_str(st, 9, m->effort);
	tindex_bind_str(st, 10, m->originator);
	tindex_bind_str(st, 11, m->cli_version);
	tindex_bind_str(st, 12, m->source);
	tindex_bind_str(st, 13, record_source_kind(src));
	tindex_bind_str(st, 14, m->forked_from_id);
	tindex_bind_str(st, 15, m->preview ? m->preview : "");
	tindex_bind_str(st, 16, m->agent_nickname);
	tindex_bind_str(st, 17, m->agent_role);
	sqlite3_bind_int(st, 18, m->archived);
	sqlite3_bind_int(st, 19, m->has_user_message);
	sqlite3_bind_int64(st, 20, m->tokens.input);
	sqlite3_bind_int64(st, 21, m->tokens.cached);
	sqlite3_bind_int64(st, 22, m->tokens.output);
	sqlite3_bind_int64(st, 23, m->tokens.reasoning);
	sqlite3_bind_int64(st, 24, m->tokens.total);
	sqlite3_bind_int64(st, 25, m->file_size);
	sqlite3_bind_int64(st, 26, m->file_mtime_ns);
	sqlite3_bind_int64(st, 27, at_ms > 0 ? at_ms : rollout_now_ms());
	sqlite3_bind_int64(st, 28, only_if_older_than);
	json_decref(src);
	return tindex_done(st);
}

/* A text column as a heap string or NULL. */
static char *
tindex_col_str(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	return s != NULL ? xstrdup((const char *)s) : NULL;
}

/* Decode a TINDEX_COLS row. */
void
tindex_row(sqlite3_stmt *st, struct thread_meta *m)
{
	const unsigned char *id = sqlite3_column_text(st, 0);

	memset(m, 0, sizeof *m);
	snprintf(m->id, sizeof m->id, "%s", id ? (const char *)id : "");
	m->path = tindex_col_str(st, 1);
	m->created_ms = sqlite3_column_int64(st, 2);
	m->updated_ms = sqlite3_column_int64(st, 3);
	m->recency_ms = sqlite3_column_int64(st, 4);
	m->cwd = tindex_col_str(st, 5);
	m->model_provider = tindex_col_str(st, 6);
	m->model = tindex_col_str(st, 7);
	m->effort = tindex_col_str(st, 8);
	m->originator = tindex_col_str(st, 9);
	m->cli_version = tindex_col_str(st, 10);
	m->source = tindex_col_str(st, 11);
	m->forked_from_id = tindex_col_str(st, 12);
	m->name = tindex_col_str(st, 13);
	m->preview = tindex_col_str(st, 14);
	m->agent_nickname = tindex_col_str(st, 15);
	m->agent_role = tindex_col_str(st, 16);
	m->archived = sqlite3_column_int(st, 17);
	m->has_user_message = sqlite3_column_int(st, 18);
	m->tokens.input = sqlite3_column_int64(st, 19);
	m->tokens.cached = sqlite3_column_int64(st, 20);
	m->tokens.output = sqlite3_column_int64(st, 21);
	m->tokens.reasoning = sqlite3_column_int64(st, 22);
	m->tokens.total = sqlite3_column_int64(st, 23);
	m->file_size = sqlite3_column_int64(st, 24);
	m->file_mtime_ns = sqlite3_column_int64(st, 25);
}

/* One row by id. */
int
tindex_get(struct tindex *x, const char *id, struct thread_meta *m)
{
	sqlite3_stmt *st = tindex_stmt(x, "SELECT " TINDEX_COLS " FROM threads WHERE id = ?1");
	int rc, r = -ENOENT;

	if (st == NULL)
		return -EIO;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		tindex_row(st, m);
		r = 0;
	} else if (rc != SQLITE_DONE) {
		r = -EIO;
	}
	sqlite3_reset(st);
	return r;
}

/* Statements of the form "... WHERE id = ?1" with one more text or null value as ?2. */
static int
tindex_update(struct tindex *x, const char *sql, const char *id, const char *value)
{
	sqlite3_stmt *st = tindex_stmt(x, sql);

	if (st == NULL)
		return -EIO;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	tindex_bind_str(st, 2, value);
	return tindex_done(st);
}

int
tindex_delete(struct tindex *x, const char *id)
{
	return tindex_update(x, "DELETE FROM threads WHERE id = ?1 AND ?2 IS NULL", id, NULL);
}

int
tindex_set_name(struct tindex *x, const char *id, const char *name)
{
	return tindex_update(x, "UPDATE threads SET name = ?2 WHERE id = ?1", id, name);
}

/* Git info is stored as JSON text. */
int
tindex_set_git(struct tindex *x, const char *id, json_t *git)
{
	char *text = git != NULL ? json_dumps(git, JSON_COMPACT) : NULL;
	int r = tindex_update(x, "UPDATE threads SET git_info = ?2 WHERE id = ?1", id, text);

	free(text);
	return r;
}

json_t *
tindex_git(struct tindex *x, const char *id)
{
	sqlite3_stmt *st = tindex_stmt(x, "SELECT git_info FROM threads WHERE id = ?1");
	json_t *git = NULL;

	if (st == NULL)
		return NULL;
	sqlite3_bind_text(st, 1, id, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != NULL)
		git = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
	sqlite3_reset(st);
	return git;
}

json_t *
tindex_gits(struct tindex *x)
{
	sqlite3_stmt *st =
		tindex_stmt(x, "SELECT id, git_info FROM threads WHERE git_info IS NOT NULL");
	json_t *all = json_object(), *git;
	int rc;

	if (st == NULL) {
		json_decref(all);
		return NULL;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(st, 0);

		git = json_loads((const char *)sqlite3_column_text(st, 1), 0, NULL);
		if (id != NULL && git != NULL)
			json_object_set_new(all, id, git);
		else
			json_decref(git);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		json_decref(all);
		return NULL;
	}
	return all;
}

char *
tindex_meta_get(struct tindex *x, const char *key)
{
	sqlite3_stmt *st = tindex_stmt(x, "SELECT value FROM meta WHERE key = ?1");
	char *v = NULL;

	if (st == NULL)
		return NULL;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = tindex_col_str(st, 0);
	sqlite3_reset(st);
	return v;
}

int
tindex_meta_set(struct tindex *x, const char *key, const char *value)
{
	return tindex_update(x,
		"INSERT INTO meta (key, value) VALUES (?1, ?2)"
		" ON CONFLICT(key) DO UPDATE SET value = excluded.value",
		key, value);
}

/* Every row's file identity, for the rescan's comparison. */
int
tindex_each(struct tindex *x,
	int (*fn)(void *arg, const char *id, const char *path, int64_t size, int64_t mtime_ns,
		int64_t indexed_ms),
	void *arg)
{
	sqlite3_stmt *st = tindex_stmt(
		x, "SELECT id, path, file_size, file_mtime_ns, indexed_ms FROM threads");
	int rc;

	if (st == NULL)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (fn(arg, (const char *)sqlite3_column_text(st, 0),
			    (const char *)sqlite3_column_text(st, 1), sqlite3_column_int64(st, 2),
			    sqlite3_column_int64(st, 3), sqlite3_column_int64(st, 4)))
			break;
	}
	sqlite3_reset(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -EIO;
}

int64_t
tindex_count(struct tindex *x)
{
	sqlite3_stmt *st = tindex_stmt(x, "SELECT count(*) FROM threads");
	int64_t n = -1;

	if (st != NULL && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	if (st != NULL)
		sqlite3_reset(st);
	return n;
}
