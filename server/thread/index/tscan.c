/*
 * The rescan (tscan.h). Memory is bounded by the number of threads (one small entry per
 * indexed file) and by one batch of summaries.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tindex.h"
#include "tscan.h"
#include "protocol/xmalloc.h"
#include "thread/rollout/rollout.h"
#include "thread/rollout/rollout_summary.h"
#include "thread/store/names.h"

#define TSCAN_DEPTH 4 /* sessions/YYYY/MM/DD */

struct tscan {
	struct tindex *x;
	json_t *known; /* id -> [path, size, mtime_ns, indexed_ms, seen] */
	int full;
	int64_t started;
	json_t *current; /* id -> [path, rollout id, archived]: each thread's newest segment */
	struct thread_meta batch[TSCAN_BATCH];
	size_t nbatch;
	struct tscan_result *res;
};

/* Remember one indexed row. */
static int
tscan_known_cb(void *arg, const char *id, const char *path, int64_t size, int64_t mtime_ns,
	int64_t indexed_ms)
{
	struct tscan *s = arg;

	json_object_set_new(s->known, id,
		json_pack("[s,I,I,I,b]", path ? path : "", (json_int_t)size, (json_int_t)mtime_ns,
			(json_int_t)indexed_ms, 0));
	return 0;
}

/* Write the batch in one transaction. */
static void
tscan_flush(struct tscan *s)
{
	if (s->nbatch == 0)
		return;
	if (tindex_begin(s->x) == 0) {
		for (size_t i = 0; i < s->nbatch; i++)
			if (tindex_put(s->x, &s->batch[i], s->started, 0) != 0)
				s->res->failed++;
		if (tindex_commit(s->x) != 0)
			s->res->r = -EIO;
	} else {
		s->res->r = -EIO;
	}
	for (size_t i = 0; i < s->nbatch; i++)
		thread_meta_clear(&s->batch[i]);
	s->nbatch = 0;
}

/* One rollout file. */
static void
tscan_file(struct tscan *s, const char *path, int archived)
{
	char id[37];
	struct stat st;
	json_t *k;
	int64_t mtime;

	if (rollout_name_id(path, id) != 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	s->res->files++;
	mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	k = json_object_get(s->known, id);
	if (k != NULL) {
		json_array_set_new(k, 4, json_true());
		if (!s->full && strcmp(json_string_value(json_array_get(k, 0)), path) == 0 &&
			json_integer_value(json_array_get(k, 1)) == st.st_size &&
			json_integer_value(json_array_get(k, 2)) == mtime)
			return;
	}
	struct thread_meta *m = &s->batch[s->nbatch];
	if (rollout_summarize(path, m) != 0 || strcmp(m->id, id) != 0) {
		thread_meta_clear(m);
		s->res->failed++;
		return;
	}
	m->archived = archived;
	s->res->summarized++;
	if (++s->nbatch == TSCAN_BATCH)
		tscan_flush(s);
}

/*
 * A thread upstream reverted has a file per segment (rollout_chain.h); the thread is listed
 * once, from its current segment: the one with the newest rollout id (UUIDv7, time-ordered as
 * text), whose chain holds the whole history.
 */
static void
tscan_segment(struct tscan *s, const char *path, int archived)
{
	char id[37], rid[37];
	json_t *cur;

	if (rollout_name_id(path, id) != 0 || rollout_name_rollout_id(path, rid) != 0)
		return;
	cur = json_object_get(s->current, id);
	if (cur != NULL && strcmp(json_string_value(json_array_get(cur, 1)), rid) >= 0)
		return;
	json_object_set_new(s->current, id, json_pack("[s,s,b]", path, rid, archived));
}

/* Walk a folder: rollout files here, dated subfolders below (up to depth). */
static void
tscan_dir(struct tscan *s, const char *dir, int depth, int archived)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char *p;

		if (e->d_name[0] == '.')
			continue;
		p = xasprintf("%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR ||
			(e->d_type == DT_UNKNOWN && depth > 0 &&
				strncmp(e->d_name, "rollout-", 8) != 0)) {
			if (depth > 0)
				tscan_dir(s, p, depth - 1, archived);
		} else if (strncmp(e->d_name, "rollout-", 8) == 0) {
			tscan_segment(s, p, archived);
		}
		free(p);
	}
	closedir(d);
}

/* Rows whose file was not seen and is really gone. */
static void
tscan_prune(struct tscan *s)
{
	const char *id;
	json_t *k;
	int began = 0;

	json_object_foreach(s->known, id, k)
	{
		struct stat st;

		if (json_is_true(json_array_get(k, 4)) ||
			json_integer_value(json_array_get(k, 3)) >= s->started ||
			stat(json_string_value(json_array_get(k, 0)), &st) == 0)
			continue;
		if (!began)
			began = tindex_begin(s->x) == 0;
		if (tindex_delete(s->x, id) == 0)
			s->res->removed++;
	}
	if (began)
		tindex_commit(s->x);
}

/* Names from session_index.jsonl, when it changed since the last scan. */
static void
tscan_names(struct tscan *s, const char *home)
{
	char *path = names_path(home), *sig = NULL, *old;
	struct stat st;
	json_t *names, *v;
	const char *id;

	if (stat(path, &st) == 0)
		sig = xasprintf("%lld:%lld.%09ld", (long long)st.st_size,
			(long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	free(path);
	old = tindex_meta_get(s->x, "names_sig");
	if (!s->full && s->res->summarized == 0 &&
		((sig == NULL && old == NULL) || (sig && old && strcmp(sig, old) == 0))) {
		free(sig);
		free(old);
		return;
	}
	names = names_load(home);
	if (tindex_begin(s->x) == 0) {
		json_object_foreach(names, id, v) tindex_set_name(s->x, id, json_string_value(v));
		tindex_meta_set(s->x, "names_sig", sig ? sig : "");
		tindex_commit(s->x);
	}
	json_decref(names);
	free(sig);
	free(old);
}

/* Monotonic seconds. */
static double
tscan_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void
tscan_run(const char *home, int full, struct tscan_result *res)
{
	struct tscan s = {.full = full, .res = res};
	char *cause = NULL, *dir;
	const char *id;
	json_t *cur;
	int fresh;
	double t0 = tscan_now();

	memset(res, 0, sizeof *res);
	res->r = tindex_open(home, &s.x, &fresh, &cause);
	free(cause);
	if (res->r != 0)
		return;
	s.started = rollout_now_ms();
	s.known = json_object();
	s.current = json_object();
	tindex_each(s.x, tscan_known_cb, &s);
	dir = xasprintf("%s/%s", home, ROLLOUT_SESSIONS);
	tscan_dir(&s, dir, TSCAN_DEPTH, 0);
	free(dir);
	dir = xasprintf("%s/%s", home, ROLLOUT_ARCHIVED);
	tscan_dir(&s, dir, 0, 1);
	free(dir);
	json_object_foreach(s.current, id, cur)
	{
		tscan_file(&s, json_string_value(json_array_get(cur, 0)),
			json_is_true(json_array_get(cur, 2)));
	}
	json_decref(s.current);
	tscan_flush(&s);
	tscan_prune(&s);
	tscan_names(&s, home);
	tindex_checkpoint(s.x); /* the loop's connection leaves checkpoints to us */
	json_decref(s.known);
	tindex_close(s.x);
	res->seconds = tscan_now() - t0;
}

/* mtimes of the folders a new rollout would change (sessions tree and archive). */
char *
tscan_signature(const char *home)
{
	char *today, *p[3];
	struct stat st;
	char *out = xstrdup("");
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	today = xasprintf("%s/%s/%04d/%02d/%02d", home, ROLLOUT_SESSIONS, tm.tm_year + 1900,
		tm.tm_mon + 1, tm.tm_mday);
	p[0] = xasprintf("%s/%s", home, ROLLOUT_SESSIONS);
	p[1] = xasprintf("%s/%s", home, ROLLOUT_ARCHIVED);
	p[2] = today;
	for (int i = 0; i < 3; i++) {
		char *n;

		if (stat(p[i], &st) == 0)
			n = xasprintf("%s%lld.%09ld;", out, (long long)st.st_mtim.tv_sec,
				st.st_mtim.tv_nsec);
		else
			n = xasprintf("%s-;", out);
		free(out);
		out = n;
		free(p[i]);
	}
	return out;
}
