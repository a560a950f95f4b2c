/*
 * session_index.jsonl (names.h). Reading never loads the whole file: lookups scan backwards,
 * a full load streams it line by line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names.h"
#include "protocol/xmalloc.h"
#include "thread/rollout/rollout.h"
#include "thread/rollout/rollout_reader.h"
#include "thread/uuidv7.h"

char *
names_path(const char *home)
{
	return xasprintf("%s/%s", home, NAMES_FILE);
}

/* A line's (id, name) when it is an entry; name trimmed of nothing (upstream trims on read). */
static int
names_parse(const char *line, size_t len, char id[37], const char **name, json_t **root)
{
	json_t *o = json_loadb(line, len, 0, NULL);
	const char *i, *n;

	if (!json_is_object(o))
		goto bad;
	i = json_string_value(json_object_get(o, "id"));
	n = json_string_value(json_object_get(o, "thread_name"));
	if (i == NULL || n == NULL || uuidv7_check(i, NULL) != 0)
		goto bad;
	uuidv7_canon(i, id);
	*name = n;
	*root = o;
	return 0;
bad:
	json_decref(o);
	return -1;
}

/* State of a backwards lookup. */
struct names_find {
	const char *id;
	char *found;
};

static int
names_find_cb(void *arg, const char *line, size_t len, off_t off)
{
	struct names_find *f = arg;
	char id[37];
	const char *name;
	json_t *root;

	if (len > NAMES_LINE_MAX || names_parse(line, len, id, &name, &root) != 0)
		return 0;
	if (strcmp(id, f->id) == 0) {
		const char *b = name + strspn(name, " \t\r\n");
		size_t n = strlen(b);

		while (n > 0 && strchr(" \t\r\n", b[n - 1]) != NULL)
			n--;
		/* Upstream ignores blank names: keep looking further back. */
		if (n > 0)
			f->found = xstrndup(b, n);
	}
	json_decref(root);
	return f->found != NULL;
}

/* Newest entry first. */
char *
names_lookup(const char *home, const char *id)
{
	char *path = names_path(home);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct names_find f = {.id = id};
	off_t good;

	free(path);
	if (fd < 0)
		return NULL;
	if (rollout_good_end(fd, &good) == 0)
		rollout_scan_back(fd, good, 64u << 20, names_find_cb, &f);
	close(fd);
	return f.found;
}

/* Stream the whole file; later lines overwrite earlier ones. */
json_t *
names_load(const char *home)
{
	char *path = names_path(home);
	FILE *fp = fopen(path, "re");
	json_t *out = json_object();
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	free(path);
	if (fp == NULL)
		return out;
	while ((n = getline(&line, &cap, fp)) > 0) {
		char id[37];
		const char *name;
		json_t *root;

		if (n > NAMES_LINE_MAX || line[n - 1] != '\n')
			continue;
		if (names_parse(line, (size_t)n - 1, id, &name, &root) != 0)
			continue;
		if (name[strspn(name, " \t\r\n")] != '\0')
			json_object_set_new(out, id, json_string(name));
		json_decref(root);
	}
	free(line);
	fclose(fp);
	return out;
}

/* One entry, one write. */
int
names_append(const char *home, const char *id, const char *name)
{
	char *path = names_path(home), ts[ROLLOUT_TS_LEN + 1], *line;
	json_t *o;
	int fd, r = 0;
	size_t len;

	rollout_ts_format(rollout_now_ms(), ts);
	o = json_pack("{s:s,s:s,s:s}", "id", id, "thread_name", name, "updated_at", ts);
	line = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (line == NULL) {
		free(path);
		return -EINVAL;
	}
	len = strlen(line);
	line[len++] = '\n'; /* json_dumps left room: replace the NUL, length is tracked */
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = -errno;
	} else {
		off_t good;

		/* A torn line left by a crash would swallow ours: cut it first. */
		if (rollout_good_end(fd, &good) == 0)
			rollout_cut_torn(fd, good);
		if (write(fd, line, len) != (ssize_t)len)
			r = -EIO;
		close(fd);
	}
	free(line);
	free(path);
	return r;
}
