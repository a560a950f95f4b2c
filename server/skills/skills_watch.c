/*
 * skills/changed: inotify watches on the skill roots of the cwds of a connection's threads,
 * with upstream 0.169's timing (observed): the first change is reported at once, then at most
 * one report per SKILLS_CHANGED_THROTTLE seconds, the changes of a window reported at its end.
 * A change is any file or folder created, written, removed or renamed below a root (the system
 * root aside: Codex writes it); a root that does not exist yet is watched through its nearest
 * existing ancestor, filtered on the next name toward it. Folders made or removed rebuild the
 * watches (path lookups and inotify_add_watch on the loop, at most SKILLS_WATCH_MAX).
 */
#include <sys/inotify.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol/xmalloc.h"
#include "skills_int.h"
#include "skills_watch.h"

#define SKILLS_WATCH_MAX   8192
#define SKILLS_WATCH_DEPTH 7
#define WATCH_MASK                                                                                 \
	(IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO |        \
		IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

struct wentry {
	int wd;
	char *filter; /* only this child name counts (an ancestor of a missing root), or NULL */
};

struct skills_watch {
	struct ev_loop *loop;
	ev_io io;
	ev_timer throttle;
	int fd;
	int pending; /* a change within the throttle window */
	char **cwds;
	size_t ncwds;
	struct wentry *v;
	size_t n;
	void (*changed)(void *arg);
	void *arg;
};

static void watch_read_cb(struct ev_loop *loop, ev_io *w, int revents);
static void watch_throttle_cb(struct ev_loop *loop, ev_timer *w, int revents);

struct skills_watch *
skills_watch_new(struct ev_loop *loop, void (*changed)(void *arg), void *arg)
{
	struct skills_watch *w = xcalloc(1, sizeof *w);

	w->loop = loop;
	w->fd = -1;
	w->changed = changed;
	w->arg = arg;
	ev_init(&w->throttle, watch_throttle_cb);
	return w;
}

static void
watch_clear(struct skills_watch *w)
{
	for (size_t i = 0; i < w->n; i++) {
		inotify_rm_watch(w->fd, w->v[i].wd);
		free(w->v[i].filter);
	}
	w->n = 0;
}

void
skills_watch_free(struct skills_watch *w)
{
	if (w == NULL)
		return;
	if (w->fd != -1) {
		ev_io_stop(w->loop, &w->io);
		watch_clear(w);
		close(w->fd);
	}
	ev_timer_stop(w->loop, &w->throttle);
	for (size_t i = 0; i < w->ncwds; i++)
		free(w->cwds[i]);
	free(w->cwds);
	free(w->v);
	free(w);
}

static void
watch_add(struct skills_watch *w, const char *path, const char *filter)
{
	int wd;

	if (w->n >= SKILLS_WATCH_MAX)
		return;
	if ((wd = inotify_add_watch(w->fd, path, WATCH_MASK)) < 0)
		return;
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].wd == wd) {
			/* A folder watched whole wins over a filter on it. */
			if (filter == NULL) {
				free(w->v[i].filter);
				w->v[i].filter = NULL;
			}
			return;
		}
	w->v = xrealloc(w->v, (w->n + 1) * sizeof *w->v);
	w->v[w->n].wd = wd;
	w->v[w->n++].filter = filter != NULL ? xstrdup(filter) : NULL;
}

/* A folder and the folders below it (names starting with '.' skipped, as the scan does). */
static void
watch_tree(struct skills_watch *w, const char *dir, int depth)
{
	struct dirent *de;
	struct stat st;
	DIR *d;

	watch_add(w, dir, NULL);
	if (depth >= SKILLS_WATCH_DEPTH || (d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		char *path;

		if (de->d_name[0] == '.')
			continue;
		path = xasprintf("%s/%s", dir, de->d_name);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			watch_tree(w, path, depth + 1);
		free(path);
	}
	closedir(d);
}

/* A root: the tree when it exists, else its nearest existing ancestor for the next name. */
static void
watch_root(struct skills_watch *w, const char *root)
{
	struct stat st;
	char *dir, *slash;

	if (stat(root, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			watch_tree(w, root, 0);
		return;
	}
	dir = xstrdup(root);
	while ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
		*slash = '\0';
		if (stat(dir, &st) == 0) {
			if (S_ISDIR(st.st_mode)) {
				const char *next = root + strlen(dir) + 1;
				char *name = xstrndup(next, strcspn(next, "/"));

				watch_add(w, dir, name);
				free(name);
			}
			break;
		}
	}
	free(dir);
}

static void
watch_rebuild(struct skills_watch *w)
{
	struct skills_env *env = skills_env_now(skills_default());
	size_t n;
	char **roots;

	watch_clear(w);
	for (size_t c = 0; c < w->ncwds; c++) {
		roots = skills_roots(env, w->cwds[c], &n);
		for (size_t i = 0; i < n; i++) {
			watch_root(w, roots[i]);
			free(roots[i]);
		}
		free(roots);
	}
	skills_env_free(env);
}

int
skills_watch_cwd(struct skills_watch *w, const char *cwd)
{
	for (size_t i = 0; i < w->ncwds; i++)
		if (strcmp(w->cwds[i], cwd) == 0)
			return 0;
	if (w->fd == -1) {
		if ((w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1)
			return -errno;
		ev_io_init(&w->io, watch_read_cb, w->fd, EV_READ);
		ev_io_start(w->loop, &w->io);
	}
	w->cwds = xrealloc(w->cwds, (w->ncwds + 1) * sizeof *w->cwds);
	w->cwds[w->ncwds++] = xstrdup(cwd);
	watch_rebuild(w);
	return 0;
}

/* A change: the cache goes; the report goes now, or at the end of the window. */
static void
watch_changed(struct skills_watch *w)
{
	skills_invalidate(skills_default());
	if (ev_is_active(&w->throttle)) {
		w->pending = 1;
		return;
	}
	ev_timer_set(&w->throttle, SKILLS_CHANGED_THROTTLE, 0.);
	ev_timer_start(w->loop, &w->throttle);
	w->changed(w->arg);
}

static void
watch_throttle_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct skills_watch *w = container_of(t, struct skills_watch, throttle);

	if (!w->pending)
		return;
	w->pending = 0;
	ev_timer_set(&w->throttle, SKILLS_CHANGED_THROTTLE, 0.);
	ev_timer_start(loop, &w->throttle);
	w->changed(w->arg);
}

static void
watch_read_cb(struct ev_loop *loop, ev_io *io, int revents)
{
	struct skills_watch *w = container_of(io, struct skills_watch, io);
	char ev[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *e;
	int changed = 0, rebuild = 0;
	ssize_t len;

	for (int reads = 0; reads < 16 && (len = read(w->fd, ev, sizeof ev)) > 0; reads++)
		for (char *p = ev; p < ev + len; p += sizeof *e + e->len) {
			e = (const struct inotify_event *)p;
			if (e->mask & IN_Q_OVERFLOW) {
				changed = rebuild = 1;
				continue;
			}
			for (size_t i = 0; i < w->n; i++) {
				if (w->v[i].wd != e->wd)
					continue;
				if (w->v[i].filter != NULL) {
					if (e->len == 0 || strcmp(e->name, w->v[i].filter) != 0)
						break;
					rebuild = 1; /* the way to a missing root changed */
				}
				changed = 1;
				if ((e->mask & IN_ISDIR) ||
					(e->mask & (IN_DELETE_SELF | IN_MOVE_SELF)))
					rebuild = 1;
				break;
			}
		}
	if (rebuild)
		watch_rebuild(w);
	if (changed)
		watch_changed(w);
	(void)loop;
	(void)revents;
}
