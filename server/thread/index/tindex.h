/*
 * The thread index: our own SQLite file $CODEX_HOME/app-server-threads.sqlite (never
 * upstream's state_*.sqlite), a cache of what the rollouts say, rebuilt from them whenever it
 * is missing, corrupt or stale (tscan.h). WAL mode, synchronous=NORMAL (the rollouts, not the
 * index, are what must survive a crash), busy_timeout for a second daemon on the same home, and
 * versioned migrations (PRAGMA user_version). One struct tindex is one connection, used by one
 * thread at a time; statements are prepared once and kept.
 */
#ifndef TINDEX_H
#define TINDEX_H

#include <stdint.h>

#include <jansson.h>

#include "thread/rollout/rollout_summary.h"

#define TINDEX_FILE		"app-server-threads.sqlite"
#define TINDEX_VERSION		3
#define TINDEX_BUSY_MS		5000
#define TINDEX_LIST_DEFAULT	25  /* upstream's THREAD_LIST_DEFAULT_LIMIT */
#define TINDEX_LIST_MAX		100 /* upstream's THREAD_LIST_MAX_LIMIT */
#define TINDEX_FILTER_MAX	100 /* entries in one list filter (excludedThreadIds's limit) */
#define TINDEX_CHECKPOINT_EVERY 256 /* loop writes between two checkpoints on a worker */

struct tindex;

/*
 * Open (creating and migrating as needed). A file SQLite cannot read, or one from a newer
 * schema, is moved aside and a fresh one made: *fresh is then 1 (the caller rebuilds).
 */
int tindex_open(const char *home, struct tindex **out, int *fresh, char **cause);
void tindex_close(struct tindex *x);
/*
 * The loop's connection never checkpoints the WAL itself (a checkpoint fsyncs): the store runs
 * tindex_checkpoint on a worker instead, every TINDEX_CHECKPOINT_EVERY writes and after scans.
 */
void tindex_manual_checkpoints(struct tindex *x);
/* Copy the WAL back into the database file (PASSIVE: never waits for readers). */
void tindex_checkpoint(struct tindex *x);
/* How long a statement waits for another connection's lock (ms) before failing busy. */
void tindex_busy_timeout(struct tindex *x, int ms);
/* Whether the last failure was another connection's lock (SQLITE_BUSY / SQLITE_LOCKED). */
int tindex_busy(struct tindex *x);
int tindex_begin(struct tindex *x);
int tindex_commit(struct tindex *x);
int tindex_rollback(struct tindex *x);
/*
 * Insert or replace a thread's summary. Name and git info are kept (they are set apart).
 * only_if_older_than > 0: leave a row alone that was written at or after that time (a scan
 * must not undo what the daemon wrote while it ran).
 */
int tindex_put(
	struct tindex *x, const struct thread_meta *m, int64_t only_if_older_than, int64_t at_ms);
/* The row for id into m (zeroed first); 0 or -ENOENT. */
int tindex_get(struct tindex *x, const char *id, struct thread_meta *m);
int tindex_delete(struct tindex *x, const char *id);
int tindex_set_name(struct tindex *x, const char *id, const char *name);
int tindex_set_git(struct tindex *x, const char *id, json_t *git);
/* The stored git info (new reference) or NULL. */
json_t *tindex_git(struct tindex *x, const char *id);
/* Every stored git info as {id: git} (new reference), or NULL when the query failed. */
json_t *tindex_gits(struct tindex *x);
/* A stored value of the meta table (heap) or NULL; and setting one. */
char *tindex_meta_get(struct tindex *x, const char *key);
int tindex_meta_set(struct tindex *x, const char *key, const char *value);
/* Call fn for every row's (id, path, size, mtime, indexed_ms); fn returns nonzero to stop. */
int tindex_each(struct tindex *x,
	int (*fn)(void *arg, const char *id, const char *path, int64_t size, int64_t mtime_ns,
		int64_t indexed_ms),
	void *arg);
/* Rows in the index. */
int64_t tindex_count(struct tindex *x);

/* A thread/list query. Arrays are borrowed JSON arrays of strings (NULL: no filter). */
struct tindex_query {
	int archived;
	int sort_updated; /* 0: created_at, 1: updated_at, 2: recency_at, 3: section position */
	int ascending;
	int limit;		 /* already clamped */
	const char *cursor;	 /* NULL: from the start */
	json_t *model_providers; /* NULL: only default_provider; []: every provider */
	const char *default_provider;
	json_t *source_kinds; /* NULL or []: interactive (cli, vscode) */
	json_t *cwds;
	const char *search;
	json_t *excluded_ids;
	/*
	 * 0: any section; 1: threads in none; 2: threads in section_id (those without a user
	 * message too, as upstream lists a section's threads).
	 */
	int section_mode;
	const char *section_id;
};

/* One page: the rows and the cursors (heap strings or NULL). */
struct tindex_page {
	struct thread_meta *rows;
	size_t n;
	char *next_cursor, *backwards_cursor;
};

/* Run a list query; 0, -ERANGE (bad cursor: *cause says why) or -EIO. */
int tindex_list(
	struct tindex *x, const struct tindex_query *q, struct tindex_page *page, char **cause);
void tindex_page_free(struct tindex_page *page);

/* Internal to tindex*.c: the statement cache and row decoding. */
struct sqlite3_stmt *tindex_stmt(struct tindex *x, const char *sql);
void tindex_row(struct sqlite3_stmt *st, struct thread_meta *m);
#define TINDEX_COLS                                                                                \
	"id, path, created_ms, updated_ms, recency_ms, cwd, model_provider, model, effort, "       \
	"originator, cli_version, source, forked_from_id, name, preview, agent_nickname, "         \
	"agent_role, archived, has_user, tok_input, tok_cached, tok_output, tok_reasoning, "       \
	"tok_total, file_size, file_mtime_ns"
#define TINDEX_NCOLS 26 /* the columns TINDEX_COLS names */

#endif
