/*
 * Stale shell snapshots (shell_snapshot.h): files left in $CODEX_HOME/shell_snapshots by a
 * daemon that died (kill -9, a crash) or by threads long gone. Upstream removes, whenever a
 * snapshot is taken, every file whose thread has no rollout or whose rollout is 3 days old.
 * "No rollout" also describes a live thread of another daemon (an ephemeral one, or one whose
 * first turn has not been written yet), whose file would go while in use; so here a file is
 * only a candidate once it is itself SNAP_STALE_AGE old, and then goes when its thread has no
 * rollout or a rollout last written SNAP_STALE_AGE ago: a subset of what upstream removes.
 *
 * The sweep runs once per daemon, on a detached thread of its own started by the first
 * snapshot: it lists two folders and stats rollouts, which the loop must never wait for.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shell_snapshot.h"
#include "io/log.h"
#include "protocol/xmalloc.h"

#define SNAP_ID_LEN	   36	   /* a thread id: a UUID's text */
#define SNAP_WALK_DEPTH	   4	   /* sessions/YYYY/MM/DD/rollout-...jsonl */
#define SNAP_WALK_MAX	   1000000 /* rollouts looked at, at most */
#define SNAP_CANDIDATE_MAX 10000   /* old snapshot files handled in one sweep */

/* A rollout's thread id and when it was last written. */
struct snap_rollout {
	char id[SNAP_ID_LEN + 1];
	time_t mtime;
};

struct snap_rollouts {
	struct snap_rollout *v;
	size_t n, cap;
};

/* The thread id a snapshot file names ("<id>.<nanos>.sh", "<id>.tmp-<nanos>"), or 0. */
static int
snap_file_id(const char *name, char id[SNAP_ID_LEN + 1])
{
	const char *dot = strchr(name, '.');

	if (dot == NULL || dot - name != SNAP_ID_LEN)
		return 0;
	memcpy(id, name, SNAP_ID_LEN);
	id[SNAP_ID_LEN] = '\0';
	return 1;
}

/* Note a rollout file "rollout-<time>-<id>.jsonl" of dir. */
static void
snap_note_rollout(struct snap_rollouts *r, int dir, const char *name)
{
	size_t len = strlen(name);
	struct stat st;

	if (strncmp(name, "rollout-", 8) != 0 || len < 8 + SNAP_ID_LEN + 6 ||
		strcmp(name + len - 6, ".jsonl") != 0 ||
		fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return;
	if (r->n == r->cap) {
		r->cap = r->cap != 0 ? r->cap * 2 : 256;
		r->v = xrealloc(r->v, r->cap * sizeof *r->v);
	}
	memcpy(r->v[r->n].id, name + len - 6 - SNAP_ID_LEN, SNAP_ID_LEN);
	r->v[r->n].id[SNAP_ID_LEN] = '\0';
	r->v[r->n].mtime = st.st_mtime;
	r->n++;
}

/* Every rollout under dir (an fd, closed here), depth levels down. */
static void
snap_walk(struct snap_rollouts *r, int dir, int depth)
{
	DIR *d = fdopendir(dir);
	struct dirent *e;
	int sub;

	if (d == NULL) {
		close(dir);
		return;
	}
	while ((e = readdir(d)) != NULL && r->n < SNAP_WALK_MAX) {
		if (e->d_name[0] == '.')
			continue;
		if (e->d_type == DT_DIR && depth > 0) {
			sub = openat(dirfd(d), e->d_name,
				O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
			if (sub >= 0)
				snap_walk(r, sub, depth - 1);
		} else if (e->d_type == DT_REG || e->d_type == DT_UNKNOWN)
			snap_note_rollout(r, dirfd(d), e->d_name);
	}
	closedir(d);
}

static int
snap_rollout_cmp(const void *a, const void *b)
{
	return strcmp(((const struct snap_rollout *)a)->id, ((const struct snap_rollout *)b)->id);
}

/* The newest write of a thread's rollouts (live or archived), or 0 when it has none. */
static time_t
snap_rollout_mtime(const struct snap_rollouts *r, const char *id)
{
	struct snap_rollout key;
	const struct snap_rollout *hit;
	time_t newest = 0;
	size_t i;

	memcpy(key.id, id, SNAP_ID_LEN + 1);
	if ((hit = bsearch(&key, r->v, r->n, sizeof *r->v, snap_rollout_cmp)) == NULL)
		return 0;
	/* Equal ids sit together: the first one, then every one after it. */
	for (i = (size_t)(hit - r->v); i > 0 && strcmp(r->v[i - 1].id, id) == 0; i--)
		;
	for (; i < r->n && strcmp(r->v[i].id, id) == 0; i++)
		if (r->v[i].mtime > newest)
			newest = r->v[i].mtime;
	return newest;
}

int
shell_snapshot_sweep(const char *codex_home, time_t now)
{
	char *dir = xasprintf("%s/" SHELL_SNAPSHOT_DIR, codex_home), id[SNAP_ID_LEN + 1];
	char **old = NULL;
	size_t nold = 0;
	struct snap_rollouts r = {0};
	struct stat st;
	struct dirent *e;
	DIR *d;
	int removed = 0, fd;
	time_t written;

	if ((d = opendir(dir)) == NULL) {
		free(dir);
		return 0;
	}
	/* The candidates: files old enough to be nobody's (see the head comment). */
	while ((e = readdir(d)) != NULL && nold < SNAP_CANDIDATE_MAX) {
		if (e->d_name[0] == '.' ||
			fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
			!S_ISREG(st.st_mode) || now - st.st_mtime < SHELL_SNAPSHOT_STALE_AGE)
			continue;
		old = xrealloc(old, (nold + 1) * sizeof *old);
		old[nold++] = xstrdup(e->d_name);
	}
	if (nold > 0) {
		const char *roots[] = {"sessions", "archived_sessions"};

		for (size_t i = 0; i < 2; i++) {
			char *p = xasprintf("%s/%s", codex_home, roots[i]);

			if ((fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
				snap_walk(&r, fd, SNAP_WALK_DEPTH);
			free(p);
		}
		if (r.n > 1)
			qsort(r.v, r.n, sizeof *r.v, snap_rollout_cmp);
	}
	for (size_t i = 0; i < nold; i++) {
		written = snap_file_id(old[i], id) ? snap_rollout_mtime(&r, id) : 0;
		if (now - written >= SHELL_SNAPSHOT_STALE_AGE) {
			if (unlinkat(dirfd(d), old[i], 0) == 0)
				removed++;
			else if (errno != ENOENT)
				log_warn("shell snapshot %s/%s: %s", dir, old[i], strerror(errno));
		}
		free(old[i]);
	}
	if (removed > 0)
		log_info("shell snapshots: removed %d stale file(s) in %s", removed, dir);
	closedir(d);
	free(old);
	free(r.v);
	free(dir);
	return removed;
}

static void *
snap_sweep_main(void *arg)
{
	char *home = arg;

	shell_snapshot_sweep(home, time(NULL));
	free(home);
	return NULL;
}

void
shell_snapshot_sweep_start(const char *codex_home)
{
	pthread_attr_t a;
	pthread_t t;
	char *home = xstrdup(codex_home);

	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, snap_sweep_main, home) != 0) {
		log_warn("shell snapshots: no thread for the sweep of stale files");
		free(home);
	}
	pthread_attr_destroy(&a);
}
