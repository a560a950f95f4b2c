/*
 * The store's core (store.h): opening, the index and its background scans, thread/list, and
 * the sync worker's jobs. Loop rule: no SQLite call runs here (the index worker makes them all,
 * store_index.c), and nothing waits for the disk beyond reading a rollout's head and tail;
 * scans and syncs are worker jobs whose completions come back through ev_async.
 *
 * Rescans: at start-up (a full build when the index is new or was unusable, else an
 * incremental one), and from thread/list when STORE_SIGNATURE_GAP seconds have passed and the
 * session folders' mtimes changed, or rescan_interval seconds have passed at all. A list never
 * waits for a rescan; it waits only for the first build of a missing index.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "names.h"
#include "store_int.h"
#include "io/log.h"
#include "protocol/xmalloc.h"
#include "thread/index/tscan.h"
#include "thread/rollout/rollout.h"
#include "thread/uuidv7.h"

static void store_list_post(struct store *s, struct store_pending_list *pl);

/* Monotonic seconds. */
double
store_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
store_rpc_code(int r)
{
	if (r == -EINVAL || r == -ENOENT || r == -EBUSY || r == -EAGAIN)
		return -32600;
	if (r == -ERANGE)
		return -32602;
	return -32603;
}

/* Upstream: "invalid thread id: <uuid error>". */
int
store_check_id(const char *id, char canon[37], char **cause)
{
	char *why = NULL;

	if (id == NULL || uuidv7_check(id, &why) != 0) {
		*cause = xasprintf("invalid thread id: %s", why ? why : "missing");
		free(why);
		return -EINVAL;
	}
	uuidv7_canon(id, canon);
	return 0;
}

/* A scan job: home copied, result filled on the worker. */
struct store_scan_job {
	struct store *s;
	char *home;
	int full;
	struct tscan_result res;
	store_done_fn done;
	void *arg;
};

static void
store_scan_run(void *arg)
{
	struct store_scan_job *j = arg;

	tscan_run(j->home, j->full, &j->res);
}

/* Back on the loop: the index is current; answer waiting lists, maybe scan again. */
static void
store_scan_done(void *arg)
{
	struct store_scan_job *j = arg;
	struct store *s = j->s;
	struct store_pending_list *pl;

	s->scanning = 0;
	s->building = 0;
	while ((pl = TAILQ_FIRST(&s->pending)) != NULL) {
		TAILQ_REMOVE(&s->pending, pl, entry);
		s->npending--;
		store_list_post(s, pl);
	}
	/* Git info another daemon set shows from now on. */
	if (!s->closing)
		store_ix_gits(s);
	if (j->done != NULL)
		j->done(j->arg, j->res.r);
	free(j->home);
	free(j);
	if (s->rescan_again && !s->closing) {
		s->rescan_again = 0;
		store_rescan(s, 0, NULL, NULL);
	}
}

/* Queue a scan unless one is queued (then run another after it). */
void
store_rescan(struct store *s, int full, store_done_fn done, void *arg)
{
	struct store_scan_job *j;

	if (s->scanning && done == NULL && !full) {
		s->rescan_again = 1;
		return;
	}
	j = xcalloc(1, sizeof *j);
	j->s = s;
	j->home = xstrdup(s->home);
	j->full = full;
	j->done = done;
	j->arg = arg;
	s->scanning = 1;
	s->last_scan = store_now();
	free(s->signature);
	s->signature = tscan_signature(s->home);
	worker_post(s->scan, store_scan_run, store_scan_done, j);
}

int
store_index_ready(struct store *s)
{
	return !s->building;
}

/*
 * The index worker opened the index (or could not): a new or rebuilt file is built in full
 * while lists wait, an existing one is rescanned while lists are answered. An index that
 * cannot be opened leaves the lists to fail (each list retries the open); nothing else needs it.
 */
void
store_ix_opened(struct store *s, int r, int fresh, const char *cause)
{
	struct store_pending_list *pl;

	if (r != 0) {
		log_warn("%s", cause ? cause : "thread index unavailable");
		fresh = 0;
	}
	s->building = fresh;
	if (!s->building) {
		while ((pl = TAILQ_FIRST(&s->pending)) != NULL) {
			TAILQ_REMOVE(&s->pending, pl, entry);
			s->npending--;
			store_list_post(s, pl);
		}
	}
	if (r == 0 && !s->closing)
		store_rescan(s, fresh, NULL, NULL);
}

/* Open the store; the index is opened, and its first scan run, in the background. */
int
store_open(const struct store_config *cfg, struct store **out, char **cause)
{
	struct store *s = xcalloc(1, sizeof *s);
	int r;

	s->home = xstrdup(cfg->home);
	s->default_provider = xstrdup(cfg->default_provider ? cfg->default_provider : "openai");
	s->cli_version = xstrdup(cfg->cli_version ? cfg->cli_version : "0.169.0");
	s->originator = xstrdup(cfg->originator ? cfg->originator : "codex_vscode");
	s->loop = cfg->loop;
	s->rescan_interval = cfg->rescan_interval > 0 ? cfg->rescan_interval : 10;
	TAILQ_INIT(&s->loaded);
	TAILQ_INIT(&s->pending);
	/* jansson seeds its hash once; do it before the workers may race to (no-op if done). */
	json_object_seed(0);
	if (mkdir(s->home, 0700) != 0 && errno != EEXIST) {
		r = -errno;
		*cause = xasprintf("cannot create %s: %s", s->home, strerror(errno));
		goto fail;
	}
	s->sync = worker_new(s->loop, "store-sync");
	s->scan = worker_new(s->loop, "store-scan");
	s->read = worker_new(s->loop, "store-read");
	s->building = 1; /* until the index worker says whether the file is new */
	store_ix_start(s);
	*out = s;
	return 0;
fail:
	store_free(s);
	return r;
}

/* Close loaded threads, finish the workers' queues, free. */
void
store_free(struct store *s)
{
	struct store_thread *t;
	struct store_pending_list *pl;

	if (s == NULL)
		return;
	s->closing = 1;
	while ((t = TAILQ_FIRST(&s->loaded)) != NULL)
		store_unload(t);
	/* Reads build Threads with the git map; scans post lists to the index worker. */
	worker_free(s->read);
	worker_free(s->scan);
	store_ix_stop(s);
	worker_free(s->sync);
	/* Lists still waiting for the index's first build (it never ran: we are closing). */
	while ((pl = TAILQ_FIRST(&s->pending)) != NULL) {
		TAILQ_REMOVE(&s->pending, pl, entry);
		s->npending--;
		pl->cb(pl->arg, -ECANCELED, NULL,
			"thread/list was cancelled: the daemon is stopping");
		store_ix_list_free(pl);
	}
	for (size_t i = 0; i < STORE_TURNIDX_CACHE; i++) {
		free(s->turnidx[i].path);
		free(s->turnidx[i].v);
	}
	free(s->signature);
	free(s->home);
	free(s->default_provider);
	free(s->cli_version);
	free(s->originator);
	free(s);
}

void
store_poll(struct store *s)
{
	worker_complete(s->index);
	worker_complete(s->sync);
	worker_complete(s->scan);
	worker_complete(s->read);
}

/* Completions may queue more work (a scan's end refreshes git info): until all is done. */
void
store_drain(struct store *s)
{
	do {
		worker_drain(s->index);
		worker_drain(s->sync);
		worker_drain(s->scan);
		worker_drain(s->read);
		store_poll(s);
	} while (worker_pending(s->index) + worker_pending(s->scan) + worker_pending(s->sync) +
			worker_pending(s->read) >
		0);
}

/*
 * Look for a rollout of thread id (one the index does not know yet). A thread upstream reverted
 * has several files (rollout_chain.h): its current one is the segment with the newest rollout
 * id (UUIDv7: time-ordered as text), which *best keeps across folders.
 */
static char *
store_search_dir(const char *dir, const char *id, int depth, char best[37])
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *found = NULL, tid[37], rid[37];

	if (d == NULL)
		return NULL;
	while ((e = readdir(d)) != NULL) {
		char *p;

		if (e->d_name[0] == '.')
			continue;
		p = xasprintf("%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR && depth > 0) {
			char *sub = store_search_dir(p, id, depth - 1, best);

			if (sub != NULL) {
				free(found);
				found = sub;
			}
		} else if (strncmp(e->d_name, "rollout-", 8) == 0 &&
			strstr(e->d_name, id) != NULL && rollout_name_id(e->d_name, tid) == 0 &&
			strcmp(tid, id) == 0 && rollout_name_rollout_id(e->d_name, rid) == 0 &&
			strcmp(rid, best) > 0) {
			memcpy(best, rid, 37);
			free(found);
			found = xstrdup(p);
		}
		free(p);
	}
	closedir(d);
	return found;
}

/*
 * A rollout of id not indexed yet: a UUIDv7 id tells its creation time, so only the dated
 * folders around it are read (the file name is in local time); other ids walk the tree.
 */
static char *
store_search_days(struct store *s, const char *id, char best[37])
{
	int64_t ms = uuidv7_ms(id);
	char *dir, *found = NULL, *f;
	time_t now = time(NULL);

	if (ms <= 0) {
		dir = xasprintf("%s/%s", s->home, ROLLOUT_SESSIONS);
		found = store_search_dir(dir, id, 4, best);
		free(dir);
		return found;
	}
	/* the creation's days, and today's (where a revert puts a new segment) */
	for (int d = -1; d <= 2; d++) {
		time_t sec = d <= 1 ? (time_t)(ms / 1000) + d * 86400 : now;
		struct tm tm;

		if (d == 2 && now - (time_t)(ms / 1000) < 2 * 86400)
			break; /* today was among them */
		localtime_r(&sec, &tm);
		dir = xasprintf("%s/%s/%04d/%02d/%02d", s->home, ROLLOUT_SESSIONS,
			tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
		if ((f = store_search_dir(dir, id, 0, best)) != NULL) {
			free(found);
			found = f;
		}
		free(dir);
	}
	return found;
}

/*
 * Loaded, else its rollout on disk under either folder: the files are the truth, and the loop
 * never reads the index (another connection may hold it). The index learns the row.
 */
int
store_find(struct store *s, const char *id, struct thread_meta *m, char **cause)
{
	struct store_thread *t = store_loaded(s, id);
	char *path, *dir, best[37] = "";

	if (t != NULL) {
		thread_meta_copy(m, &t->meta);
		return 0;
	}
	path = store_search_days(s, id, best);
	if (path == NULL) {
		dir = xasprintf("%s/%s", s->home, ROLLOUT_ARCHIVED);
		path = store_search_dir(dir, id, 0, best);
		free(dir);
	}
	if (path == NULL || rollout_summarize(path, m) != 0) {
		free(path);
		*cause = xasprintf("no rollout found for thread id %s", id);
		return -ENOENT;
	}
	m->archived = strstr(path, "/" ROLLOUT_ARCHIVED "/") != NULL;
	m->name = names_lookup(s->home, id);
	store_ix_put_missing(s, m);
	free(path);
	return 0;
}

/* A checkpoint on the scan worker, with a connection of its own. */
static void
store_checkpoint_run(void *arg)
{
	char *home = arg, *cause = NULL;
	struct tindex *x;
	int fresh;

	if (tindex_open(home, &x, &fresh, &cause) == 0) {
		tindex_checkpoint(x);
		tindex_close(x);
	}
	free(cause);
}

static void
store_checkpoint_done(void *arg)
{
	free(arg);
}

void
store_count_write(struct store *s)
{
	if (++s->writes < TINDEX_CHECKPOINT_EVERY)
		return;
	s->writes = 0;
	worker_post(s->scan, store_checkpoint_run, store_checkpoint_done, xstrdup(s->home));
}

/* A loaded thread's row, written now (one statement). */
void
store_index_put(struct store_thread *t)
{
	if (t->w == NULL)
		return;
	/* The file as it is now, so a rescan sees nothing to re-read. */
	if (rollout_writer_stat(t->w, &t->meta.file_size, &t->meta.file_mtime_ns) != 0)
		t->meta.file_size = rollout_writer_size(t->w);
	store_ix_put(t->s, &t->meta);
}

/* A sync job: an fd to fdatasync and folders to fsync. */
/*
 * Sync jobs holding a duplicate of a rollout's fd, at most: past it (a disk slower than the
 * threads being written, e.g. a thousand new threads at once) a job syncs the whole
 * filesystem of CODEX_HOME instead (syncfs, on an fd the worker opens and closes), which
 * covers every file a held fd would have, so waiting syncs never use up the daemon's fds.
 * One syncfs covers every write made before it began: a job whose data was written before a
 * syncfs the worker (one thread, jobs in order) already ran skips its own, so hundreds of
 * threads ending at once (the daemon's exit) cost one syncfs, not one each.
 */
#define STORE_SYNC_FDS 32

struct store_sync_job {
	struct store *s;
	int fd;
	int held;		   /* fd counts in s->sync_fds */
	char *syncfs;		   /* CODEX_HOME, to syncfs instead of fd */
	unsigned long syncfs_seen; /* s->syncfs_runs when posted */
	char *path;
	int dirs;
	int r;
	store_done_fn done;
	void *arg;
};

/* fsync a folder (its entries). */
static int
store_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) != 0)
		r = -errno;
	close(fd);
	return r;
}

static void
store_sync_run(void *arg)
{
	struct store_sync_job *j = arg;

	if (j->fd >= 0) {
		if (fdatasync(j->fd) != 0)
			j->r = -errno;
		close(j->fd);
	}
	if (j->syncfs != NULL && atomic_load(&j->s->syncfs_runs) == j->syncfs_seen) {
		int fd = open(j->syncfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		atomic_fetch_add(&j->s->syncfs_runs, 1);
		if (fd < 0 || syncfs(fd) != 0)
			j->r = -errno;
		if (fd >= 0)
			close(fd);
	}
	if (j->path != NULL && j->syncfs == NULL) { /* (a syncfs covered the folders too) */
		char *p = xstrdup(j->path);

		/* The file's folder, then its parents (new dated folders): `dirs` levels. */
		for (int i = 0; i < j->dirs; i++) {
			char *slash = strrchr(p, '/');
			int e;

			if (slash == NULL || slash == p)
				break;
			*slash = '\0';
			if ((e = store_fsync_dir(p)) != 0 && j->r == 0)
				j->r = e;
		}
		free(p);
	}
}

static void
store_sync_done(void *arg)
{
	struct store_sync_job *j = arg;

	if (j->held)
		j->s->sync_fds--;
	if (j->done != NULL)
		j->done(j->arg, j->r);
	free(j->syncfs);
	free(j->path);
	free(j);
}

void
store_post_sync(struct store *s, int fd, const char *path, int dirs, store_done_fn done, void *arg)
{
	struct store_sync_job *j = xcalloc(1, sizeof *j);

	j->s = s;
	if (fd >= 0 && s->sync_fds >= STORE_SYNC_FDS) {
		close(fd);
		fd = -1;
		j->syncfs = xstrdup(s->home);
		j->syncfs_seen = atomic_load(&s->syncfs_runs);
	} else if (fd >= 0) {
		s->sync_fds++;
		j->held = 1;
	}
	j->fd = fd;
	j->path = path ? xstrdup(path) : NULL;
	j->dirs = dirs;
	j->done = done;
	j->arg = arg;
	worker_post(s->sync, store_sync_run, store_sync_done, j);
}

/* sort key names -> 0 created, 1 updated, 2 recency, 3 section position; -1 unknown. */
static int
store_sort_key(const char *k)
{
	if (k == NULL || strcmp(k, "created_at") == 0)
		return 0;
	if (strcmp(k, "section_position") == 0)
		return 3;
	if (strcmp(k, "updated_at") == 0)
		return 1;
	if (strcmp(k, "recency_at") == 0)
		return 2;
	return -1;
}

/* Start a rescan when the folders changed (soon) or it has been a while (at all). */
static void
store_maybe_rescan(struct store *s)
{
	double now = store_now(), since = now - s->last_scan;
	char *sig;

	if (s->scanning || since < STORE_SIGNATURE_GAP)
		return;
	if (since >= s->rescan_interval) {
		store_rescan(s, 0, NULL, NULL);
		return;
	}
	sig = tscan_signature(s->home);
	if (s->signature == NULL || strcmp(sig, s->signature) != 0)
		store_rescan(s, 0, NULL, NULL);
	free(sig);
}

/* The query of a kept list, pointing into its own copies; to the index worker. */
static void
store_list_post(struct store *s, struct store_pending_list *pl)
{
	const struct store_list_params *p = &pl->p;
	struct tindex_query *q = &pl->q;
	int key = store_sort_key(p->sort_key);

	memset(q, 0, sizeof *q);
	q->archived = p->archived;
	q->sort_updated = key;
	/* a section's own order reads first to last unless asked otherwise (as upstream) */
	q->ascending = p->sort_direction != NULL ? strcmp(p->sort_direction, "asc") == 0 : key == 3;
	q->section_mode = p->section_mode;
	q->section_id = p->section_id;
	q->limit = p->limit <= 0 ? TINDEX_LIST_DEFAULT
				 : (p->limit > TINDEX_LIST_MAX ? TINDEX_LIST_MAX : (int)p->limit);
	q->cursor = p->cursor;
	q->model_providers = p->model_providers;
	q->default_provider = s->default_provider;
	q->source_kinds = p->source_kinds;
	if (json_is_string(p->cwd))
		q->cwds = pl->cwds = json_pack("[O]", p->cwd);
	else
		q->cwds = p->cwd;
	q->search = p->search_term;
	q->excluded_ids = p->excluded_ids;
	store_ix_list(s, pl);
}

/* Whether neither rollout folder exists (a stat each, on the loop: no I/O of note). */
static int
store_no_rollouts(const struct store *s)
{
	const char *dirs[] = {ROLLOUT_SESSIONS, ROLLOUT_ARCHIVED};
	struct stat st;
	int none = 1;

	for (size_t i = 0; i < nitems(dirs) && none; i++) {
		char *path = xasprintf("%s/%s", s->home, dirs[i]);

		none = stat(path, &st) != 0 && errno == ENOENT;
		free(path);
	}
	return none;
}

/* A deep copy of list params: the request is answered later, on the loop. */
static void
store_list_keep(struct store_pending_list *pl, const struct store_list_params *p)
{
	pl->p = *p;
	pl->p.cursor = p->cursor ? xstrdup(p->cursor) : NULL;
	pl->p.sort_key = p->sort_key ? xstrdup(p->sort_key) : NULL;
	pl->p.sort_direction = p->sort_direction ? xstrdup(p->sort_direction) : NULL;
	pl->p.search_term = p->search_term ? xstrdup(p->search_term) : NULL;
	pl->p.section_id = p->section_id ? xstrdup(p->section_id) : NULL;
	pl->p.model_providers = p->model_providers ? json_deep_copy(p->model_providers) : NULL;
	pl->p.source_kinds = p->source_kinds ? json_deep_copy(p->source_kinds) : NULL;
	pl->p.cwd = p->cwd ? json_deep_copy(p->cwd) : NULL;
	pl->p.excluded_ids = p->excluded_ids ? json_deep_copy(p->excluded_ids) : NULL;
}

void
store_list(struct store *s, const struct store_list_params *p, store_list_fn cb, void *arg)
{
	size_t i;
	json_t *v;

	struct store_pending_list *pl;

	json_array_foreach(p->excluded_ids, i, v)
	{
		if (!json_is_string(v) || uuidv7_check(json_string_value(v), NULL) != 0) {
			cb(arg, -ERANGE, NULL, "invalid excludedThreadIds: not a thread id");
			return;
		}
	}
	if (store_sort_key(p->sort_key) < 0 ||
		(p->sort_direction != NULL && strcmp(p->sort_direction, "asc") != 0 &&
			strcmp(p->sort_direction, "desc") != 0)) {
		cb(arg, -ERANGE, NULL, "invalid sortKey or sortDirection");
		return;
	}
	if (s->building && s->npending >= STORE_PENDING_LISTS) {
		cb(arg, -EAGAIN, NULL, "the thread index is being rebuilt; retry shortly");
		return;
	}
	/*
	 * A new CODEX_HOME: no rollout folder, no thread loaded, the index not open yet. The
	 * first build would create the index file (a journal, the WAL, their syncs: 10-50 ms on
	 * a busy disk) only to find nothing, so the first page is the empty one now; the build
	 * goes on behind. A folder that exists, even empty, takes the usual way.
	 */
	if (s->building && p->cursor == NULL && TAILQ_EMPTY(&s->loaded) && store_no_rollouts(s)) {
		cb(arg, 0, json_pack("{s:[],s:n,s:n}", "data", "nextCursor", "backwardsCursor"),
			NULL);
		return;
	}
	pl = xcalloc(1, sizeof *pl);
	store_list_keep(pl, p);
	pl->cb = cb;
	pl->arg = arg;
	if (s->building) {
		TAILQ_INSERT_TAIL(&s->pending, pl, entry);
		s->npending++;
		if (s->loop == NULL)
			store_drain(s);
		return;
	}
	store_maybe_rescan(s);
	store_list_post(s, pl);
}
