/*
 * Internal to the store (store*.c): the structures and the helpers the files share. Rules:
 *   - the loop thread owns `struct store` and every `struct store_thread`; workers only get
 *     copies (paths, duplicated fds) inside their job structs;
 *   - a loaded thread's meta is the truth for it while loaded; the index row is refreshed at
 *     batch points (creation, turn end, name, archive), never per delta.
 */
#ifndef STORE_INT_H
#define STORE_INT_H

#include <stdatomic.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "store.h"
#include "store_jobs.h"
#include "worker.h"
#include "thread/history/history.h"
#include "thread/index/tindex.h"
#include "thread/rollout/record.h"
#include "thread/rollout/rollout_writer.h"

#define STORE_TURNIDX_CACHE  16	       /* turn indexes kept (LRU) for paging */
#define STORE_PENDING_LISTS  1024      /* list requests queued while the index is built */
#define STORE_OPEN_WRITERS   128       /* open rollout fds at most; the idlest give theirs back */
#define STORE_TRIM_BYTES     (1 << 20) /* a history read from a file this big trims malloc */
#define STORE_TURNS_TEXT_MAX (2 * (size_t)HISTORY_MAX_BYTES) /* a whole history as text */
#define STORE_SIGNATURE_GAP  0.5 /* seconds: rescan soon after the folders changed */

/* A loaded thread. */
struct store_thread {
	TAILQ_ENTRY(store_thread) entry;
	struct store *s;
	struct thread_meta meta;
	struct rollout_writer *w; /* NULL: ephemeral */
	/* Settings (owned). */
	char *base_instructions, *developer_instructions, *approvals_reviewer, *sandbox;
	json_t *approval_policy;
	json_t *dynamic_tools; /* thread/start's dynamicTools, or NULL */
	/* rollout forms of the permission profile and collaboration mode, or NULL */
	json_t *active_profile, *collab;
	/* The running turn. */
	char turn_id[37];
	int64_t turn_started_ms;
	struct token_totals turn_tokens;
	char *last_agent_message;
	uint64_t used; /* store clock at its last append: the idlest give their fd back first */
	int reverting; /* thread/revert's copy is being synced: appends are refused meanwhile */
};

TAILQ_HEAD(store_threads, store_thread);

/* A list request: waiting for the first build, then a job of the index worker. */
struct store_pending_list {
	TAILQ_ENTRY(store_pending_list) entry;
	struct store_list_params p; /* strings and arrays owned here */
	struct tindex_query q;	    /* pointing into p (and cwds) */
	json_t *cwds;		    /* a cwd string as a one-element array */
	store_list_fn cb;
	void *arg;
};

TAILQ_HEAD(store_pending_lists, store_pending_list);

/* A cached turn index of one rollout (store_pages.c). */
struct store_span {
	char id[37];
	off_t start, end;
};

struct store_turnidx {
	char *path;
	off_t size; /* bytes indexed */
	int64_t mtime_ns;
	int inside; /* the scan stopped inside an explicit turn */
	struct store_span *v;
	size_t n, cap;
	uint64_t used;
};

struct store {
	char *home, *default_provider, *cli_version, *originator;
	struct ev_loop *loop;
	double rescan_interval;
	struct worker *index; /* the one connection of ours: every SQLite call (store_index.c) */
	struct store_ix *ix;  /* the index worker's state: touched on that thread only */
	ev_timer ix_timer;    /* retries kept writes while the index is locked */
	int ix_degraded;      /* the last index job found it locked: writes are kept */
	int ix_flushing;      /* a retry job is queued */
	int closing;
	int ix_stopped;	     /* the index worker is being freed: its jobs run inline */
	json_t *gits;	     /* {id: gitInfo}: the index's git info, for wire Threads */
	json_t *git_touched; /* {id: git_seq} set here since the last snapshot was posted */
	uint64_t git_seq;
	struct worker *sync; /* fdatasync, fsync of folders */
	unsigned sync_fds;   /* sync jobs holding a file's fd (STORE_SYNC_FDS at most) */
	_Atomic unsigned long syncfs_runs; /* syncfs calls the sync worker began */
	struct worker *scan;		   /* index builds and rescans */
	struct worker *read;		   /* whole histories for thread/read and resume */
	struct store_threads loaded;
	size_t nloaded;
	int building; /* the first build is running: lists wait */
	int scanning; /* a scan is queued or running */
	int rescan_again;
	double last_scan; /* monotonic seconds when the last scan started */
	char *signature;  /* folder mtimes at the last scan */
	struct store_pending_lists pending;
	size_t npending;
	struct store_turnidx turnidx[STORE_TURNIDX_CACHE];
	uint64_t turnidx_clock;
	uint64_t clock;	 /* appends, for store_thread.used */
	unsigned writes; /* index writes since the last checkpoint job */
	/* sections.c: the loop's copy of the sections and memberships (NULL until read) */
	json_t *sections; /* {section_id: wire ThreadSection} */
	json_t *members;  /* {thread_id: [section_id, entered_ms]} */
};

/* store.c */
double store_now(void);
/* The index connection is open (r 0) or not (cause): start the first scan, answer lists. */
void store_ix_opened(struct store *s, int r, int fresh, const char *cause);
/* Count an index write; every TINDEX_CHECKPOINT_EVERY, checkpoint the WAL off the loop. */
void store_count_write(struct store *s);

/*
 * store_index.c: the index worker. Writes are posted and never waited for (kept and retried
 * while another connection holds the lock); a list's callback runs on the loop.
 */
void store_ix_start(struct store *s);
void store_ix_stop(struct store *s);
void store_ix_put(struct store *s, const struct thread_meta *m); /* copied */
/* Free a list waiting in s->pending (its params' copy and itself). */
void store_ix_list_free(struct store_pending_list *l);
/* The same for a row a lookup found on disk: written only when the index has none (an
 * existing row keeps its indexed_ms, which a rescan's pruning goes by). */
void store_ix_put_missing(struct store *s, const struct thread_meta *m);
void store_ix_delete(struct store *s, const char *id);
void store_ix_name(struct store *s, const char *id, const char *name);
/* Set (git non-NULL, borrowed) or clear a thread's git info, here at once and in the index. */
void store_ix_git(struct store *s, const char *id, json_t *git);
/* The git info of id (borrowed) or NULL. */
json_t *store_ix_git_get(struct store *s, const char *id);
/* Refresh the loop's git map from the index (after a scan). */
void store_ix_gits(struct store *s);
/* sections.c: read the sections into the loop's copy (posted after the index's open). */
void store_sections_start(struct store *s);
void store_sections_free(struct store *s);
/* Set a wire Thread's section and sectionEnteredAt from the loop's copy. */
void store_sections_put(struct store *s, json_t *thread, const char *id);
/* A deleted thread leaves its section. */
void store_sections_forget(struct store *s, const char *id);
/* Run a list (stolen) on the worker; its callback runs on the loop. */
void store_ix_list(struct store *s, struct store_pending_list *l);
/* The settings a loaded thread's thread_settings_applied record carries. */
struct record_settings store_thread_rs(struct store_thread *t);
/* Write a loaded thread's row now. */
void store_index_put(struct store_thread *t);
/* Post fdatasync of fd (stolen) and fsync of the folders of path (NULL: none). */
void store_post_sync(
	struct store *s, int fd, const char *path, int dirs, store_done_fn done, void *arg);
/* The wire Thread for metadata; status and turns stolen (NULL: notLoaded, []). */
json_t *store_meta_json(
	struct store *s, const struct thread_meta *m, json_t *status, json_t *turns, int loaded);
/* The turn index of a rollout, from the cache or built now (store_pages.c); NULL on error. */
struct store_turnidx *store_turnidx_get(struct store *s, const char *path);
/* Forget cached turn indexes of a path (it moved or went away). */
void store_turnidx_forget(struct store *s, const char *path);
/* Suspend the idlest writers while more than STORE_OPEN_WRITERS hold an fd. */
void store_limit_writers(struct store *s);
/* Free a loaded thread's memory (no I/O). */
void store_thread_free(struct store_thread *t);

/*
 * Turns of a rollout up to `end` (< 0: all), as trees or with items kept as text (text); live:
 * an unfinished last turn is still running. NULL with *cause when it cannot be read whole.
 */
json_t *store_history(const char *path, off_t end, int live, int text, char **cause);
/*
 * Turns of a rollout up to `end` (< 0: all) as JSON text appended to out, items kept as text
 * from record to answer (history_text); live: an unfinished last turn is still running.
 * 0, or -EIO with *cause.
 */
int store_file_turns_text(const char *path, off_t end, int live, struct buf *out, char **cause);

#endif
