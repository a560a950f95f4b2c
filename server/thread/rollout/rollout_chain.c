/*
 * Segment chains (rollout_chain.h): a segment's history_base read from its first line, the base
 * file found by its rollout id in the folders it can be in, and the parts laid out at virtual
 * offsets. Every read of a plain rollout pays one pread of its first line here (the session_meta,
 * already in the page cache): history_base comes after base_instructions, so the whole line is
 * looked at, but never parsed unless it holds the key.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "rollout.h"
#include "rollout_chain.h"
#include "rollout_writer.h"
#include "protocol/jscan.h"
#include "protocol/xmalloc.h"
#include "thread/uuidv7.h"

#define CHAIN_HEAD_CHUNK (64 * 1024)

/* The first line of fd (heap, without '\n', *len set), or NULL (none within the line ceiling). */
static char *
chain_first_line(int fd, size_t *len)
{
	size_t cap = CHAIN_HEAD_CHUNK, have = 0;
	char *buf = xmalloc(cap), *nl;

	for (;;) {
		ssize_t k = pread(fd, buf + have, cap - have, (off_t)have);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if ((nl = memchr(buf + have, '\n', (size_t)k)) != NULL) {
			*len = (size_t)(nl - buf);
			return buf;
		}
		have += (size_t)k;
		if (have == cap) {
			if (cap >= ROLLOUT_LINE_MAX)
				break;
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
	}
	free(buf);
	return NULL;
}

/* A uuid string member `"key":"<uuid>"` of the line's text, canonical into out; 0 or -1. */
static int
chain_uuid_member(const char *line, size_t len, const char *key, char out[37])
{
	char pat[48], tmp[UUID_STRLEN + 1];
	const char *hit;
	int n = snprintf(pat, sizeof pat, "\"%s\":\"", key);

	if ((hit = memmem(line, len, pat, (size_t)n)) == NULL ||
		(size_t)(line + len - (hit + n)) < UUID_STRLEN + 1 || hit[n + UUID_STRLEN] != '"')
		return -1;
	memcpy(tmp, hit + n, UUID_STRLEN);
	tmp[UUID_STRLEN] = '\0';
	if (uuidv7_check(tmp, NULL) != 0)
		return -1;
	uuidv7_canon(tmp, out);
	return 0;
}

/*
 * The key can only stand where it is a member name: inside a JSON string its quotes would be
 * escaped. session_meta is the only record that carries it, at its payload's top level.
 */
int
rollout_base_read(int fd, struct rollout_base *b)
{
	static const char key[] = "\"history_base\":";
	size_t len = 0;
	char *line = chain_first_line(fd, &len);
	const char *v, *ve;
	struct jspan span;
	json_t *o = NULL, *end_o, *end_b;
	int r = 0;

	memset(b, 0, sizeof *b);
	if (line == NULL)
		return 0;
	if ((v = memmem(line, len, key, sizeof key - 1)) == NULL)
		goto out;
	v += sizeof key - 1;
	if ((ve = jscan_skip(v, line + len, &span)) == NULL ||
		(o = json_loadb(v, (size_t)(ve - v), 0, NULL)) == NULL || !json_is_object(o))
		goto out;
	end_o = json_object_get(o, "end_ordinal_exclusive");
	end_b = json_object_get(o, "end_byte_offset");
	if (!json_is_string(json_object_get(o, "thread_id")) || !json_is_integer(end_b) ||
		json_integer_value(end_b) < 0 ||
		uuidv7_check(json_string_value(json_object_get(o, "thread_id")), NULL) != 0)
		goto out;
	uuidv7_canon(json_string_value(json_object_get(o, "thread_id")), b->rid);
	b->end_ordinal = json_is_integer(end_o) ? json_integer_value(end_o) : -1;
	b->end_byte = json_integer_value(end_b);
	if (chain_uuid_member(line, len, "forked_from_id", b->forked_from) != 0)
		b->forked_from[0] = '\0';
	r = 1;
out:
	json_decref(o);
	free(line);
	return r;
}

char *
rollout_path_home(const char *path)
{
	char *p = xstrdup(path), *s;
	int up;

	/* archived_sessions/<file> or sessions/YYYY/MM/DD/<file> */
	for (up = 0; up < 5 && (s = strrchr(p, '/')) != NULL; up++) {
		*s = '\0';
		s = strrchr(p, '/');
		s = s != NULL ? s + 1 : p;
		if ((up == 0 && strcmp(s, ROLLOUT_ARCHIVED) == 0) ||
			(up == 3 && strcmp(s, ROLLOUT_SESSIONS) == 0)) {
			if ((s = strrchr(p, '/')) == NULL)
				break;
			*s = '\0';
			return p;
		}
	}
	free(p);
	return NULL;
}

/* A rollout in dir whose rollout id is rid (heap), or NULL. */
static char *
chain_search_dir(const char *dir, const char *rid)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *found = NULL, id[37];

	if (d == NULL)
		return NULL;
	while (found == NULL && (e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && strstr(e->d_name, rid) != NULL &&
			rollout_name_rollout_id(e->d_name, id) == 0 && strcmp(id, rid) == 0)
			found = xasprintf("%s/%s", dir, e->d_name);
	closedir(d);
	return found;
}

/*
 * Where a base can be: beside the segment, in the dated folders of its rollout id's time (the
 * file's name is in local time; a day either side), or archived.
 */
char *
rollout_base_find(const char *path, const char *tid, const char *forked_from, const char *rid)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash != NULL ? xstrndup(path, (size_t)(slash - path)) : xstrdup(".");
	char *home = rollout_path_home(path), *found;
	int64_t ms = uuidv7_ms(rid);

	(void)tid; /* the rollout id names one file whichever thread it belongs to */
	(void)forked_from;
	found = chain_search_dir(dir, rid);
	free(dir);
	for (int d = -1; d <= 1 && found == NULL && home != NULL && ms > 0; d++) {
		time_t sec = (time_t)(ms / 1000) + d * 86400;
		struct tm tm;

		localtime_r(&sec, &tm);
		dir = xasprintf("%s/%s/%04d/%02d/%02d", home, ROLLOUT_SESSIONS, tm.tm_year + 1900,
			tm.tm_mon + 1, tm.tm_mday);
		found = chain_search_dir(dir, rid);
		free(dir);
	}
	if (found == NULL && home != NULL) {
		dir = xasprintf("%s/%s", home, ROLLOUT_ARCHIVED);
		found = chain_search_dir(dir, rid);
		free(dir);
	}
	free(home);
	return found;
}

/* Whether fd's byte before `end` is a '\n' (a line boundary) and end is within the file. */
static int
chain_cut_ok(int fd, off_t end)
{
	struct stat st;
	char c;

	if (end == 0)
		return 1;
	if (fstat(fd, &st) != 0 || end > st.st_size)
		return 0;
	return pread(fd, &c, 1, end - 1) == 1 && c == '\n';
}

int
rollout_chain_open(const char *path, int fd, struct rollout_chain **out)
{
	struct rollout_chain *c;
	struct rollout_part tmp[ROLLOUT_CHAIN_MAX];
	size_t n = 0;
	off_t v = 0;

	if (fd < 0 && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	tmp[n].path = xstrdup(path);
	tmp[n].fd = fd;
	tmp[n].len = -1;
	tmp[n].end_ordinal = -1;
	if (rollout_name_rollout_id(path, tmp[n].rid) != 0)
		tmp[n].rid[0] = '\0';
	n++;
	/* newest first into tmp, then reversed */
	while (n < ROLLOUT_CHAIN_MAX) {
		struct rollout_part *cur = &tmp[n - 1];
		struct rollout_base b;
		char tid[37];
		char *bp;
		int bfd, seen = 0;

		if (rollout_base_read(cur->fd, &b) != 1)
			break;
		for (size_t i = 0; i < n; i++)
			seen |= strcmp(tmp[i].rid, b.rid) == 0;
		if (seen || rollout_name_id(cur->path, tid) != 0)
			break; /* a cycle, or a name we cannot place */
		if ((bp = rollout_base_find(cur->path, tid, b.forked_from, b.rid)) == NULL)
			break;
		if ((bfd = open(bp, O_RDONLY | O_CLOEXEC)) < 0 || !chain_cut_ok(bfd, b.end_byte)) {
			if (bfd >= 0)
				close(bfd);
			free(bp);
			break;
		}
		tmp[n].path = bp;
		tmp[n].fd = bfd;
		tmp[n].len = b.end_byte;
		tmp[n].end_ordinal = b.end_ordinal;
		snprintf(tmp[n].rid, sizeof tmp[n].rid, "%s", b.rid);
		n++;
	}
	c = xcalloc(1, sizeof *c);
	c->n = n;
	for (size_t i = 0; i < n; i++)
		c->v[i] = tmp[n - 1 - i];
	for (size_t i = n - 1; i-- > 0;) {
		v -= c->v[i].len;
		c->v[i].voff = v;
	}
	c->v[n - 1].voff = 0;
	*out = c;
	return 0;
}

void
rollout_chain_free(struct rollout_chain *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].path);
		if (c->v[i].fd >= 0)
			close(c->v[i].fd);
	}
	free(c);
}

int
rollout_chain_locate(const struct rollout_chain *c, off_t voff, off_t *real)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct rollout_part *p = &c->v[i];

		if (voff >= p->voff && (p->len < 0 || voff < p->voff + p->len)) {
			*real = voff - p->voff;
			return (int)i;
		}
	}
	return -1;
}

json_t *
rollout_chain_head(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	char *line;
	json_t *root;

	if (fd < 0)
		return NULL;
	line = chain_first_line(fd, &len);
	close(fd);
	root = line != NULL ? json_loadb(line, len, 0, NULL) : NULL;
	free(line);
	return root;
}

/* Add dir's files of thread tid, but for those listed and `current`, to files. */
static void
chain_thread_dir(json_t *files, const char *dir, const char *tid, const char *current)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char id[37];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char *p;
		size_t i;
		json_t *v;
		int listed;

		if (e->d_name[0] == '.' || strstr(e->d_name, tid) == NULL ||
			rollout_name_id(e->d_name, id) != 0 || strcmp(id, tid) != 0)
			continue;
		p = xasprintf("%s/%s", dir, e->d_name);
		listed = strcmp(p, current) == 0;
		json_array_foreach(files, i, v) listed |= strcmp(json_string_value(v), p) == 0;
		if (!listed)
			json_array_append_new(files, json_string(p));
		free(p);
	}
	closedir(d);
}

/*
 * The bases of path that belong to thread tid (a fork's bases are its parent's), then the files
 * of tid beside any of them (segments a revert of everything left out of the chain), then path.
 */
json_t *
rollout_thread_files(const char *path, const char *tid)
{
	json_t *files = json_array();
	struct rollout_chain *c = NULL;
	char id[37];

	if (rollout_chain_open(path, -1, &c) == 0) {
		for (size_t i = 0; i + 1 < c->n; i++)
			if (rollout_name_id(c->v[i].path, id) == 0 && strcmp(id, tid) == 0)
				json_array_append_new(files, json_string(c->v[i].path));
		for (size_t i = 0; i < c->n; i++) {
			const char *slash = strrchr(c->v[i].path, '/');
			char *dir;

			if (slash == NULL || rollout_name_id(c->v[i].path, id) != 0 ||
				strcmp(id, tid) != 0)
				continue;
			dir = xstrndup(c->v[i].path, (size_t)(slash - c->v[i].path));
			chain_thread_dir(files, dir, tid, path);
			free(dir);
		}
		rollout_chain_free(c);
	}
	json_array_append_new(files, json_string(path));
	return files;
}
