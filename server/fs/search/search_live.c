/*
 * The live index (search_live.h): a search index, the inotify watches of its folders, and the
 * queue of events between the loop thread (which reads them) and the worker (which applies
 * them before a query).
 *
 * Rules kept here:
 *   - the loop thread only reads the inotify fd into the queue (bounded: past
 *     SEARCH_LIVE_QUEUE_MAX the queue is dropped and a re-walk is asked for);
 *   - the worker owns the index and the table of watches (wd -> folder; one inode reached by
 *     two paths through a symlink is one wd with two folders);
 *   - events are applied in their order; consecutive creations in one folder are walked as
 *     one batch (one descent to the folder for all of them);
 *   - applying an event twice, or an event the walk already saw, changes nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "search.h"
#include "search_live.h"
#include "fs/walk/walk.h"
#include "io/log.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define LIVE_MASK                                                                                  \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF |     \
		IN_CLOSE_WRITE | IN_ONLYDIR)
#define LIVE_BATCH_MAX 4096 /* names walked in one descent */

/* One watched folder. */
struct live_dir {
	int wd;
	size_t root;
	char *rel;		/* relative to the root, "" for the root */
	struct live_dir *alias; /* another folder on the same wd */
};

/* wd -> folders, open addressing. */
struct live_map {
	struct live_dir **slots;
	size_t n, cap, used; /* live heads, slots, slots ever used (with tombstones) */
};

static struct live_dir live_gone; /* tombstone */

struct search_live {
	char **roots;
	size_t nroots;
	struct ev_loop *loop;
	int ifd;
	ev_io io;
	pthread_mutex_t mu; /* queue and rewalk */
	struct buf queue;
	int rewalk;
	/* worker */
	struct search_index *ix;
	struct live_map map;
	size_t nwatch;
	size_t dir_bytes; /* the folders of the map */
	struct search_budget *budget;
	size_t acc_bytes, acc_watches;	/* what the budget counts for it */
	size_t byte_limit, watch_limit; /* this refresh's share */
	int squeezed;
	int degraded; /* some folder is not watched */
	double built_at;
	size_t walks, applied;
};

/* A batch of names created in one folder. */
struct live_batch {
	size_t root;
	const char *rel;
	const char *names[LIVE_BATCH_MAX];
	size_t n;
};

static void live_io_cb(struct ev_loop *loop, ev_io *w, int revents);

/* Monotonic seconds. */
static double
live_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The slot of wd: where it is or where it would go. */
static size_t
live_map_slot(const struct live_map *m, int wd, int *found)
{
	size_t i = ((size_t)wd * 2654435761u) & (m->cap - 1), tomb = SIZE_MAX;

	*found = 0;
	for (;;) {
		struct live_dir *d = m->slots[i];
		if (d == NULL)
			return tomb != SIZE_MAX ? tomb : i;
		if (d == &live_gone) {
			if (tomb == SIZE_MAX)
				tomb = i;
		} else if (d->wd == wd) {
			*found = 1;
			return i;
		}
		i = (i + 1) & (m->cap - 1);
	}
}

/* Grow (or clean) the map so that one more head fits. */
static void
live_map_room(struct live_map *m)
{
	struct live_dir **old = m->slots;
	size_t oldcap = m->cap;
	int found;

	if (m->cap != 0 && 2 * (m->used + 1) <= m->cap)
		return;
	m->cap = oldcap < 256 ? 256 : 4 * m->n > oldcap ? 2 * oldcap : oldcap;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	m->used = m->n;
	for (size_t i = 0; i < oldcap; i++) {
		if (old[i] != NULL && old[i] != &live_gone)
			m->slots[live_map_slot(m, old[i]->wd, &found)] = old[i];
	}
	free(old);
}

/* The bytes a watched folder costs (as the budget counts them). */
static size_t
live_dir_bytes(const struct live_dir *d)
{
	return sizeof(*d) + strlen(d->rel) + 1;
}

/* Free a chain of folders; the bytes they cost. */
static size_t
live_dir_free(struct live_dir *d)
{
	size_t n = 0;

	while (d != NULL) {
		struct live_dir *next = d->alias;
		n += live_dir_bytes(d);
		free(d->rel);
		free(d);
		d = next;
	}
	return n;
}

/* Forget every watch (the kernel's are left; unknown wds are removed as they show up). */
static void
live_map_clear(struct live_map *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		if (m->slots[i] != NULL && m->slots[i] != &live_gone)
			live_dir_free(m->slots[i]);
	}
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* The folders of a wd, or NULL. */
static struct live_dir *
live_map_get(const struct live_map *m, int wd)
{
	int found;

	if (m->cap == 0)
		return NULL;
	size_t i = live_map_slot(m, wd, &found);
	return found ? m->slots[i] : NULL;
}

/* Drop a wd and its folders; the bytes they cost. */
static size_t
live_map_del(struct live_map *m, int wd)
{
	int found;
	size_t n;

	if (m->cap == 0)
		return 0;
	size_t i = live_map_slot(m, wd, &found);
	if (!found)
		return 0;
	n = live_dir_free(m->slots[i]);
	m->slots[i] = &live_gone;
	m->n--;
	return n;
}

/* What the index and the watch table hold. */
static size_t
live_bytes(const struct search_live *l)
{
	return search_index_bytes(l->ix) + l->dir_bytes + l->map.cap * sizeof(*l->map.slots);
}

/* The index may hold what the share leaves once the watch table is counted. */
static void
live_index_limit(struct search_live *l)
{
	size_t table = l->dir_bytes + l->map.cap * sizeof(*l->map.slots);

	if (l->ix != NULL && l->budget != NULL)
		search_index_set_limit(l->ix, l->byte_limit > table ? l->byte_limit - table : 1);
}

/* Worker, before a refresh: this index's share is what the others leave of the budget. */
static void
live_budget_begin(struct search_live *l)
{
	struct search_budget *b = l->budget;

	l->squeezed = 0;
	l->watch_limit = SEARCH_LIVE_WATCH_MAX;
	if (b == NULL)
		return;
	size_t ob = atomic_load(&b->bytes) - l->acc_bytes;
	size_t ow = atomic_load(&b->watches) - l->acc_watches;
	l->byte_limit = b->max_bytes > ob ? b->max_bytes - ob : 1;
	if (b->max_watches < ow + l->watch_limit)
		l->watch_limit = b->max_watches > ow ? b->max_watches - ow : 0;
	live_index_limit(l);
}

/* Worker (or loop when no job runs), after a change: count what it holds now. */
static void
live_budget_end(struct search_live *l)
{
	struct search_budget *b = l->budget;
	size_t nb = live_bytes(l), nw = l->nwatch;

	l->squeezed |= search_index_squeezed(l->ix);
	if (b == NULL)
		return;
	atomic_fetch_add(&b->bytes, nb);
	atomic_fetch_sub(&b->bytes, l->acc_bytes);
	atomic_fetch_add(&b->watches, nw);
	atomic_fetch_sub(&b->watches, l->acc_watches);
	l->acc_bytes = nb;
	l->acc_watches = nw;
}

/* Walker hook: watch a folder before it is read. */
static void
live_dir_cb(void *arg, size_t root, const char *abs, const char *rel)
{
	struct search_live *l = arg;
	int wd, found;

	if (l->ifd < 0 || l->nwatch >= l->watch_limit) {
		l->degraded = 1;
		l->squeezed |= l->ifd >= 0 && l->watch_limit < SEARCH_LIVE_WATCH_MAX;
		return;
	}
	if ((wd = inotify_add_watch(l->ifd, abs, LIVE_MASK)) < 0) {
		if (errno == ENOSPC || errno == ENOMEM)
			l->degraded = 1; /* the watch limit: trusted for SEARCH_LIVE_TTL only */
		return;
	}
	live_map_room(&l->map);
	size_t i = live_map_slot(&l->map, wd, &found);
	for (struct live_dir *d = found ? l->map.slots[i] : NULL; d != NULL; d = d->alias) {
		if (d->root == root && strcmp(d->rel, rel) == 0)
			return;
	}
	struct live_dir *d = xcalloc(1, sizeof(*d));
	d->wd = wd;
	d->root = root;
	d->rel = xstrdup(rel);
	l->dir_bytes += live_dir_bytes(d);
	if (found) {
		d->alias = l->map.slots[i]->alias;
		l->map.slots[i]->alias = d;
	} else {
		if (l->map.slots[i] == NULL)
			l->map.used++;
		l->map.slots[i] = d;
		l->map.n++;
	}
	l->nwatch++;
	live_index_limit(l); /* the table grew: the index may hold that much less */
}

/* Walker callback: add an entry. */
static int
live_add_cb(void *arg, size_t root, const char *rel, size_t len, int is_dir)
{
	struct search_live *l = arg;

	return search_index_add(l->ix, root, rel, len, is_dir) < 0;
}

/* A live index over roots; its inotify fd is read on the loop. */
struct search_live *
search_live_new(struct ev_loop *loop, const char *const *roots, size_t n)
{
	struct search_live *l = xcalloc(1, sizeof(*l));

	l->roots = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		l->roots[i] = xstrdup(roots[i]);
	l->nroots = n;
	l->loop = loop;
	pthread_mutex_init(&l->mu, NULL);
	buf_init(&l->queue, SEARCH_LIVE_QUEUE_MAX);
	if ((l->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) >= 0) {
		ev_io_init(&l->io, live_io_cb, l->ifd, EV_READ);
		ev_io_start(loop, &l->io);
	} else {
		log_warn("search: inotify unavailable (%s): indexes re-walked after %.0f s",
			strerror(errno), SEARCH_LIVE_TTL);
	}
	return l;
}

/* Free (loop thread; no job holds it). */
void
search_live_free(struct search_live *l)
{
	if (l == NULL)
		return;
	if (l->ifd >= 0) {
		ev_io_stop(l->loop, &l->io);
		close(l->ifd);
	}
	search_index_free(l->ix);
	l->ix = NULL;
	live_map_clear(&l->map);
	l->nwatch = 0;
	l->dir_bytes = 0;
	live_budget_end(l);
	buf_free(&l->queue);
	pthread_mutex_destroy(&l->mu);
	for (size_t i = 0; i < l->nroots; i++)
		free(l->roots[i]);
	free(l->roots);
	free(l);
}

void
search_live_set_budget(struct search_live *l, struct search_budget *b)
{
	l->budget = b;
}

/* Drop the index and the watches (search_live.h). */
void
search_live_drop(struct search_live *l)
{
	search_index_free(l->ix);
	l->ix = NULL;
	live_map_clear(&l->map);
	l->nwatch = 0;
	l->dir_bytes = 0;
	if (l->ifd >= 0) {
		/* a new instance: closing the old one removes every watch at once */
		ev_io_stop(l->loop, &l->io);
		close(l->ifd);
		if ((l->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) >= 0) {
			ev_io_set(&l->io, l->ifd, EV_READ);
			ev_io_start(l->loop, &l->io);
		}
	}
	pthread_mutex_lock(&l->mu);
	buf_free(&l->queue);
	l->rewalk = 0;
	pthread_mutex_unlock(&l->mu);
	live_budget_end(l);
}

void
search_live_rewalk(struct search_live *l)
{
	pthread_mutex_lock(&l->mu);
	l->rewalk = 1;
	pthread_mutex_unlock(&l->mu);
}

const char *const *
search_live_roots(const struct search_live *l, size_t *n)
{
	*n = l->nroots;
	return (const char *const *)l->roots;
}

const struct search_index *
search_live_index(const struct search_live *l)
{
	return l->ix;
}

/* Read what the kernel holds into the queue; an overflow asks for a re-walk. */
void
search_live_drain(struct search_live *l)
{
	char chunk[16384] __attribute__((aligned(8)));
	ssize_t k;

	if (l->ifd < 0)
		return;
	for (int i = 0; i < 256 && (k = read(l->ifd, chunk, sizeof(chunk))) > 0; i++) {
		pthread_mutex_lock(&l->mu);
		if (!l->rewalk && buf_add(&l->queue, chunk, (size_t)k) < 0) {
			buf_free(&l->queue);
			l->rewalk = 1;
		}
		pthread_mutex_unlock(&l->mu);
	}
}

/* The inotify fd is readable. */
static void
live_io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	search_live_drain(container_of(w, struct search_live, io));
}

/* Stop watching every folder at or under rel (a folder moved away or deleted). */
static void
live_unwatch_under(struct search_live *l, size_t root, const char *rel, size_t len)
{
	for (size_t i = 0; i < l->map.cap; i++) {
		struct live_dir **pp = &l->map.slots[i];
		if (*pp == NULL || *pp == &live_gone)
			continue;
		int wd = (*pp)->wd;
		while (*pp != NULL) {
			struct live_dir *d = *pp;
			if (d->root == root && strncmp(d->rel, rel, len) == 0 &&
				(d->rel[len] == '\0' || d->rel[len] == '/')) {
				*pp = d->alias;
				l->dir_bytes -= live_dir_bytes(d);
				free(d->rel);
				free(d);
				l->nwatch--;
			} else {
				pp = &d->alias;
			}
		}
		if (l->map.slots[i] == NULL) {
			l->map.slots[i] = &live_gone;
			l->map.n--;
			inotify_rm_watch(l->ifd, wd);
		}
	}
}

/* Walk the batched names into the index. */
static void
live_flush(struct search_live *l, struct live_batch *b)
{
	struct walk_ops ops = {.fn = live_add_cb, .dir = live_dir_cb, .arg = l};
	struct walk_stats st;

	if (b->n == 0)
		return;
	walk_names((const char *const *)l->roots, b->root, b->rel, b->names, b->n, &ops, &st);
	b->n = 0;
}

/* Does a change to this name alter the ignore rules (so everything must be re-walked)? */
static int
live_rules_change(const char *rel, const char *name)
{
	size_t rl = strlen(rel);

	if (strcmp(name, ".gitignore") == 0 || strcmp(name, ".ignore") == 0 ||
		strcmp(name, ".git") == 0)
		return 1;
	return strcmp(name, "exclude") == 0 && rl >= 9 && strcmp(rel + rl - 9, ".git/info") == 0 &&
		(rl == 9 || rel[rl - 10] == '/');
}

/* Apply one event to one folder; -1 asks for a re-walk. */
static int
live_apply(struct search_live *l, struct live_batch *b, const struct live_dir *d, uint32_t mask,
	const char *name)
{
	if (*name == '\0') {
		/* the folder itself: its parent reports it, unless it is a root */
		return (mask & (IN_DELETE_SELF | IN_MOVE_SELF)) && d->rel[0] == '\0' ? -1 : 0;
	}
	if ((mask & (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_CLOSE_WRITE)) &&
		live_rules_change(d->rel, name))
		return -1;
	if (mask & (IN_CREATE | IN_MOVED_TO)) {
		if (b->n > 0 && (b->root != d->root || b->rel != d->rel || b->n == LIVE_BATCH_MAX))
			live_flush(l, b);
		b->root = d->root;
		b->rel = d->rel;
		b->names[b->n++] = name;
		return 0;
	}
	if (mask & (IN_DELETE | IN_MOVED_FROM)) {
		live_flush(l, b);
		char *rel = d->rel[0] ? xasprintf("%s/%s", d->rel, name) : xstrdup(name);
		size_t len = strlen(rel);
		if (search_index_remove(l->ix, d->root, rel, len) > 0 && (mask & IN_ISDIR))
			live_unwatch_under(l, d->root, rel, len);
		free(rel);
	}
	return 0;
}

/* Apply the queued events in order; -1 asks for a re-walk. */
static int
live_apply_all(struct search_live *l, const struct buf *q)
{
	struct live_batch *b = xcalloc(1, sizeof(*b));
	struct inotify_event ev;
	int r = 0;

	for (size_t p = 0; r == 0 && p + sizeof(ev) <= q->len; p += sizeof(ev) + ev.len) {
		memcpy(&ev, q->ptr + p, sizeof(ev));
		const char *name = ev.len ? q->ptr + p + sizeof(ev) : "";
		l->applied++;
		if (ev.mask & IN_Q_OVERFLOW) {
			r = -1;
			break;
		}
		if (ev.mask & IN_IGNORED) {
			live_flush(l, b);
			struct live_dir *d = live_map_get(&l->map, ev.wd);
			for (; d != NULL; d = d->alias)
				l->nwatch--;
			l->dir_bytes -= live_map_del(&l->map, ev.wd);
			continue;
		}
		struct live_dir *d = live_map_get(&l->map, ev.wd);
		if (d == NULL) {
			inotify_rm_watch(l->ifd, ev.wd); /* left from before a re-walk */
			continue;
		}
		/* a batch keeps pointers to folder names: flush before folders can go */
		if (d->alias != NULL)
			live_flush(l, b);
		for (; d != NULL && r == 0; d = d->alias)
			r = live_apply(l, b, d, ev.mask, name);
		if (ev.mask & (IN_DELETE | IN_MOVED_FROM))
			live_flush(l, b);
	}
	if (r == 0)
		live_flush(l, b);
	free(b);
	return r;
}

/* Walk everything again; the queued events are older than the walk and are dropped. */
static int
live_rewalk(struct search_live *l, const atomic_int *cancel)
{
	struct walk_ops ops = {.fn = live_add_cb, .dir = live_dir_cb, .arg = l, .cancel = cancel};
	struct walk_stats st;

	search_index_free(l->ix);
	live_map_clear(&l->map);
	l->nwatch = 0;
	l->dir_bytes = 0;
	l->degraded = l->ifd < 0;
	pthread_mutex_lock(&l->mu);
	buf_reset(&l->queue);
	l->rewalk = 0;
	pthread_mutex_unlock(&l->mu);
	l->ix = search_index_new();
	live_index_limit(l);
	walk_roots((const char *const *)l->roots, l->nroots, &ops, &st);
	l->walks++;
	if (st.cancelled) {
		search_index_free(l->ix);
		l->ix = NULL;
		return -ECANCELED;
	}
	l->built_at = live_now();
	if (l->degraded)
		log_debug("search: %zu folders watched, not all: index trusted %.0f s", l->nwatch,
			SEARCH_LIVE_TTL);
	return 0;
}

/* Bring the index up to date (worker). */
int
search_live_refresh(struct search_live *l, const atomic_int *cancel)
{
	struct buf q;
	int rewalk;

	pthread_mutex_lock(&l->mu);
	q = l->queue;
	buf_init(&l->queue, SEARCH_LIVE_QUEUE_MAX);
	rewalk = l->rewalk;
	l->rewalk = 0;
	pthread_mutex_unlock(&l->mu);
	live_budget_begin(l);
	if (l->ix == NULL || rewalk ||
		(l->degraded && live_now() - l->built_at > SEARCH_LIVE_TTL) ||
		live_apply_all(l, &q) < 0) {
		buf_free(&q);
		int r = live_rewalk(l, cancel);
		live_budget_end(l);
		return r;
	}
	buf_free(&q);
	live_budget_end(l);
	return 0;
}

void
search_live_stats(const struct search_live *l, struct search_live_stats *st)
{
	st->walks = l->walks;
	st->applied = l->applied;
	st->watches = l->nwatch;
	st->watched = !l->degraded;
	st->bytes = l->acc_bytes;
	st->squeezed = l->squeezed;
	st->indexed = l->ix != NULL;
}
