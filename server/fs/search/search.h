/*
 * fuzzyFileSearch below the JSON-RPC layer: an in-memory index of the walked entries
 * (search.c), scoring of a query against it, and a runner that does both on a worker thread
 * and posts results back to the libev loop (search_runner.c), for one-shot searches and for
 * sessions that keep their index between queries.
 *
 * Results follow upstream: at most SEARCH_LIMIT entries, sorted by score (highest first) then
 * path (byte order); an empty query, no roots or a missing root give no files.
 */
#ifndef SEARCH_H
#define SEARCH_H

#include <ev.h>
#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SEARCH_LIMIT	    50
#define SEARCH_ROOTS_MAX    64
#define SEARCH_SESSIONS_MAX 64
#define SEARCH_INDEX_BYTES  (256u * 1024 * 1024) /* path bytes one index may hold */

struct search_hit {
	uint32_t score;
	int is_dir;
	size_t root; /* index into the roots */
	char *path;  /* relative to the root (owned) */
	uint32_t *indices;
	size_t nindices;
};

struct search_result {
	struct search_hit *hits;
	size_t n;
	int cancelled; /* stopped early: the hits are what was found so far */
};

void search_result_free(struct search_result *r);
/* {"files":[{root, path, match_type, file_name, score, indices}...]} as upstream writes it. */
json_t *search_result_files(const struct search_result *r, const char *const *roots);

struct search_index;

#define SEARCH_INDEX_ENTRIES 4000000u /* entries one index may hold */

/* An empty index. */
struct search_index *search_index_new(void);
/* Walk the roots into a new index (cancel may be NULL). 0, or -ECANCELED with a partial index. */
int search_index_build(struct search_index **out, const char *const *roots, size_t nroots,
	const atomic_int *cancel);
void search_index_free(struct search_index *ix);
/* Live entries. */
size_t search_index_count(const struct search_index *ix);
/* Some entries were left out (a ceiling was reached). */
int search_index_truncated(const struct search_index *ix);
/* Bytes it holds: paths, entry records, the hash. */
size_t search_index_bytes(const struct search_index *ix);
/* Hold at most limit bytes from now on (0: the fixed ceilings only); adds past it fail. */
void search_index_set_limit(struct search_index *ix, size_t limit);
/* An add failed at the limit of search_index_set_limit. */
int search_index_squeezed(const struct search_index *ix);
/* Add one entry: 0 added, 1 already there (its kind updated), -E2BIG when full. */
int search_index_add(struct search_index *ix, size_t root, const char *rel, size_t len, int is_dir);
/* Remove an entry and, when it is a folder, every entry under it; returns how many went. */
size_t search_index_remove(struct search_index *ix, size_t root, const char *rel, size_t len);
/* -1 when (root, rel) is not in the index, 0 for a file, 1 for a folder. */
int search_index_lookup(struct search_index *ix, size_t root, const char *rel, size_t len);
/* Score every entry; the best SEARCH_LIMIT go to out (sorted). */
int search_index_query(const struct search_index *ix, const char *query, const atomic_int *cancel,
	struct search_result *out);

/* --- the runner (search_runner.c): all calls on the loop thread --- */
struct search_runner;

/* A finished one-shot search; res is borrowed for the call. */
typedef void (*search_done_fn)(
	void *arg, const struct search_result *res, const char *const *roots);
/* A session's result for its latest query, then its completion. */
struct search_session_cbs {
	void (*updated)(void *arg, const char *session, const char *query,
		const struct search_result *res, const char *const *roots);
	void (*completed)(void *arg, const char *session);
	void *arg;
};

struct search_runner *search_runner_new(struct ev_loop *loop);
/*
 * The budget of all the runner's indexes together (search_runner.c): bytes held (paths,
 * records, hashes, watch tables) and inotify watches; the defaults are SEARCH_BUDGET_BYTES and
 * SEARCH_BUDGET_WATCHES. Tests set smaller ones.
 */
#define SEARCH_BUDGET_BYTES   (256u * 1024 * 1024)
#define SEARCH_BUDGET_WATCHES 65536u
void search_runner_set_budget(struct search_runner *r, size_t bytes, size_t watches);
/* What the indexes hold now (loop thread; exact when no search is running). */
void search_runner_usage(const struct search_runner *r, size_t *bytes, size_t *watches);
/* One-shot searches queued or running (each will be answered). */
size_t search_runner_pending(const struct search_runner *r);
/* Cancel every one-shot search (each still answered) and stop every session. */
void search_runner_cancel(struct search_runner *r);
/* Cancel everything, wait for the worker, free. Pending one-shot searches get their done()
 * with a cancelled, empty result; sessions say nothing more. Accepts NULL. */
void search_runner_free(struct search_runner *r);

/*
 * A one-shot search. token (may be NULL) names a cancellation group: a new search with the
 * same token cancels the running one, which still completes (with what it had). 0 or -EAGAIN.
 */
int search_run(struct search_runner *r, const char *query, const char *const *roots, size_t nroots,
	const char *token, search_done_fn done, void *arg);

/* Start (or restart) a session over roots; -EINVAL with *cause when roots is empty. */
int search_session_start(struct search_runner *r, const char *id, const char *const *roots,
	size_t nroots, const struct search_session_cbs *cbs, char **cause);
/* A new query for a session: it supersedes the previous one. -ENOENT with *cause if unknown. */
int search_session_update(struct search_runner *r, const char *id, const char *query, char **cause);
/* Stop a session (unknown ids are fine). */
void search_session_stop(struct search_runner *r, const char *id);

#endif
