/*
 * Writes to the user's config.toml (config/value/write, config/batchWrite) with upstream's
 * rules and words: only the user file may be written; expectedVersion must be the user
 * layer's version ("sha256:" of its canonical JSON, what config/read reports); the edits are
 * applied to the layer's tree first (replace, upsert merging tables, null clearing) and the
 * result must pass the Config schema, so a batch is written whole or not at all; then the file
 * is edited in place (protocol/toml/toml_edit.c) and replaced atomically (a temporary file in the
 * same folder, renamed over it, the file's mode kept). Like upstream we do not fsync: the
 * rename keeps readers from ever seeing half a file, and the loop does not wait on the disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config_int.h"
#include "home.h"
#include "protocol/toml/toml_edit.h"
#include "protocol/xmalloc.h"

/* One edit once its key path is split: the segments and the value now in the tree. */
struct config_op {
	json_t *segs; /* array of strings */
	int changed;
};

/* Split a keyPath as upstream does: dots separate, "quoted" segments may hold dots. */
static json_t *
config_edit_key_path(const char *path, char **cause)
{
	json_t *segs = json_array();
	char *seg = xmalloc(strlen(path) + 1);
	size_t n = 0;
	int quoted = 0;
	const char *p, *t;

	for (t = path; *t == ' ' || *t == '\t' || *t == '\n'; t++)
		;
	if (*t == '\0') {
		*cause = xstrdup("keyPath must not be empty");
		goto fail;
	}
	for (p = path; *p != '\0'; p++) {
		if (*p == '"' && n == 0 && !quoted) {
			quoted = 1;
		} else if (*p == '"' && quoted) {
			quoted = 0;
		} else if (*p == '\\' && quoted) {
			if (*++p == '\0') {
				*cause = xstrdup("unterminated escape in keyPath");
				goto fail;
			}
			seg[n++] = *p;
		} else if (*p == '.' && !quoted) {
			if (n == 0) {
				*cause = xstrdup("keyPath segments must not be empty");
				goto fail;
			}
			json_array_append_new(segs, json_stringn(seg, n));
			n = 0;
		} else if (*p == '"') {
			*cause = xstrdup("invalid quoted keyPath segment");
			goto fail;
		} else
			seg[n++] = *p;
	}
	if (quoted || n == 0) {
		*cause = xstrdup(quoted ? "unterminated quoted keyPath segment"
					: "keyPath segments must not be empty");
		goto fail;
	}
	json_array_append_new(segs, json_stringn(seg, n));
	free(seg);
	return segs;
fail:
	free(seg);
	json_decref(segs);
	return NULL;
}

/* The value at segs in tree (arrays by index), borrowed or NULL. */
static json_t *
config_edit_at(json_t *tree, const json_t *segs)
{
	json_t *s;
	size_t i;
	char *end;
	unsigned long idx;

	json_array_foreach(segs, i, s)
	{
		if (json_is_object(tree)) {
			tree = json_object_get(tree, json_string_value(s));
		} else if (json_is_array(tree)) {
			idx = strtoul(json_string_value(s), &end, 10);
			if (*end != '\0')
				return NULL;
			tree = json_array_get(tree, idx);
		} else
			return NULL;
		if (tree == NULL)
			return NULL;
	}
	return tree;
}

/* True when a null hides anywhere in v (TOML has none). */
static int
config_edit_has_null(const json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	if (json_is_null(v))
		return 1;
	if (json_is_array(v))
		json_array_foreach(v, i, x) if (config_edit_has_null(x)) return 1;
	if (json_is_object(v))
		json_object_foreach((json_t *)v, k, x) if (config_edit_has_null(x)) return 1;
	return 0;
}

/* Tables merge key by key; anything else is replaced (upstream's merge_toml_values). */
static void
config_edit_merge(json_t *dst, const json_t *src)
{
	const char *k;
	json_t *v, *d;

	json_object_foreach((json_t *)src, k, v)
	{
		d = json_object_get(dst, k);
		if (json_is_object(d) && json_is_object(v))
			config_edit_merge(d, v);
		else
			json_object_set_new(dst, k, json_deep_copy(v));
	}
}

/* Apply one edit to the tree (value NULL: clear); -1 with *cause. */
static int
config_edit_apply(json_t *root, const json_t *segs, const json_t *value, int upsert, char **cause)
{
	size_t n = json_array_size(segs), i;
	const char *last = json_string_value(json_array_get(segs, n - 1));
	json_t *cur = root, *next, *old;

	for (i = 0; i + 1 < n; i++) {
		const char *k = json_string_value(json_array_get(segs, i));

		next = json_object_get(cur, k);
		if (next == NULL && value == NULL)
			return 0;
		if (next == NULL) {
			next = json_object();
			json_object_set_new(cur, k, next);
		} else if (!json_is_object(next)) {
			if (value == NULL)
				return 0;
			*cause = xstrdup("cannot set value on non-table parent");
			return -1;
		}
		cur = next;
	}
	if (value == NULL) {
		json_object_del(cur, last);
		return 0;
	}
	old = json_object_get(cur, last);
	if (upsert && json_is_object(old) && json_is_object(value))
		config_edit_merge(old, value);
	else
		json_object_set_new(cur, last, json_deep_copy(value));
	return 0;
}

/* The file's text ("" when it does not exist); NULL with *cause on a read error. */
static char *
config_edit_read(const char *path, size_t *len, mode_t *mode, char **cause)
{
	FILE *f = fopen(path, "re");
	struct stat st;
	char *text;

	*mode = 0600;
	*len = 0;
	if (f == NULL) {
		if (errno == ENOENT)
			return xstrdup("");
		*cause = xasprintf("failed to read user config.toml: %s", strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) != 0 || st.st_size > 4 << 20) {
		*cause = xstrdup("failed to read user config.toml: too large");
		fclose(f);
		return NULL;
	}
	*mode = st.st_mode & 07777;
	text = xmalloc((size_t)st.st_size + 1);
	*len = fread(text, 1, (size_t)st.st_size, f);
	text[*len] = '\0';
	fclose(f);
	return text;
}

/* Replace path with text atomically: a temporary file beside it, then rename. */
static int
config_edit_store(const char *path, const char *text, size_t len, mode_t mode, char **cause)
{
	char *tmp = xasprintf("%s.XXXXXX", path);
	int fd = mkostemp(tmp, O_CLOEXEC), r = -1;
	size_t off = 0;
	ssize_t w;

	if (fd < 0)
		goto out;
	while (off < len) {
		if ((w = write(fd, text + off, len - off)) < 0) {
			if (errno == EINTR)
				continue;
			goto out;
		}
		off += (size_t)w;
	}
	if (fchmod(fd, mode) != 0 || close(fd) != 0) {
		fd = -1;
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0)
		goto out;
	r = 0;
out:
	if (r != 0) {
		*cause = xasprintf("failed to persist config.toml: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(tmp);
	}
	free(tmp);
	return r;
}

/* The user file, through a symlink to its target (written there, as upstream does). */
static char *
config_edit_target(const char *path)
{
	char buf[PATH_MAX];
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && realpath(path, buf) != NULL)
		return xstrdup(buf);
	return xstrdup(path);
}

/* True when two absolute paths name the same file (the same text, or the same inode). */
static int
config_edit_same(const char *a, const char *b)
{
	struct stat sa, sb;

	if (strcmp(a, b) == 0)
		return 1;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
		sa.st_ino == sb.st_ino;
}

/* overriddenMetadata for the first edit a session flag hides, or NULL. */
static json_t *
config_edit_overridden(const struct config *c, json_t *user, struct config_op *ops, size_t n)
{
	json_t *effective = json_deep_copy(user), *u, *e, *meta = NULL;

	config_edit_merge(effective, c->flags);
	for (size_t i = 0; i < n && meta == NULL; i++) {
		u = config_edit_at(user, ops[i].segs);
		e = config_edit_at(effective, ops[i].segs);
		if ((u != NULL && e != NULL && json_equal(u, e)) || (u == NULL && e == NULL))
			continue;
		if (config_edit_at(c->flags, ops[i].segs) == NULL)
			continue;
		meta = json_pack("{s:s, s:{s:{s:s}, s:o}, s:O}", "message",
			"Overridden by session flags", "overridingLayer", "name", "type",
			"sessionFlags", "version", config_read_version(c->flags), "effectiveValue",
			e != NULL ? e : json_null());
	}
	json_decref(effective);
	return meta;
}

json_t *
config_write(const json_t *edits, const char *file_path, const char *expected_version,
	const char **code, char **cause)
{
	struct config *c = NULL;
	struct config_op *ops = xcalloc(json_array_size(edits) + 1, sizeof *ops);
	struct toml_doc *doc = NULL;
	json_t *user = NULL, *version = NULL, *edit, *result = NULL, *after = NULL, *meta;
	char *home = home_path(), *allowed = xasprintf("%s/config.toml", home), *target = NULL;
	char *text = NULL, *why = NULL;
	size_t i, n = 0, len;
	mode_t mode;
	int changed = 0;

	*code = NULL;
	if (file_path != NULL && (file_path[0] != '/' || !config_edit_same(allowed, file_path))) {
		*code = "configLayerReadonly";
		*cause = xstrdup("Only writes to the user config are allowed");
		goto out;
	}
	if ((c = config_load(cause)) == NULL)
		goto out;
	if (c->error_in_file) {
		*cause = xasprintf("failed to load configuration: %s", c->error);
		goto out;
	}
	version = config_read_version(c->user);
	if (expected_version != NULL && strcmp(expected_version, json_string_value(version)) != 0) {
		*code = "configVersionConflict";
		*cause = xstrdup("Configuration was modified since last read. Fetch latest version "
				 "and retry.");
		goto out;
	}
	user = json_deep_copy(c->user);
	json_array_foreach(edits, i, edit)
	{
		const char *kp = json_string_value(json_object_get(edit, "keyPath"));
		json_t *value = json_object_get(edit, "value"), *before, *now;
		const char *first;

		*code = "configValidationError";
		if ((ops[n].segs = config_edit_key_path(kp, cause)) == NULL)
			goto out;
		n++;
		first = json_string_value(json_array_get(ops[n - 1].segs, 0));
		if (!json_is_null(value) && strcmp(first, "profile") == 0 &&
			json_array_size(ops[n - 1].segs) == 1) {
			*cause = xstrdup(
				"`profile` is a legacy config selector and can no longer be "
				"written; use `--profile <name>` with `<name>.config.toml` "
				"instead");
			goto out;
		}
		if (!json_is_null(value) && strcmp(first, "profiles") == 0) {
			*cause = xstrdup(
				"`profiles` contains legacy config profile tables and can no "
				"longer be written; use `--profile <name>` with "
				"`<name>.config.toml` instead");
			goto out;
		}
		if (!json_is_null(value) && config_edit_has_null(value)) {
			*cause = xstrdup(
				"invalid value: invalid type: null, expected any valid TOML "
				"value");
			goto out;
		}
		before = json_deep_copy(config_edit_at(user, ops[n - 1].segs));
		if (config_edit_apply(user, ops[n - 1].segs, json_is_null(value) ? NULL : value,
			    strcmp(json_string_value(json_object_get(edit, "mergeStrategy")),
				    "upsert") == 0,
			    cause) != 0) {
			json_decref(before);
			goto out;
		}
		now = config_edit_at(user, ops[n - 1].segs);
		ops[n - 1].changed = !((before == NULL && now == NULL) ||
			(before != NULL && now != NULL && json_equal(before, now)));
		changed |= ops[n - 1].changed;
		json_decref(before);
	}
	if (config_check_layer(user, &why) != 0) {
		*cause = xasprintf("Invalid configuration: %s", why);
		goto out;
	}
	*code = NULL;
	target = config_edit_target(c->path);
	if ((text = config_edit_read(target, &len, &mode, cause)) == NULL)
		goto out;
	if ((doc = toml_edit_open(text, len, cause)) == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		size_t k = json_array_size(ops[i].segs);
		const char **segs = xcalloc(k, sizeof *segs);
		json_t *now = config_edit_at(user, ops[i].segs);
		int r = 0;

		for (size_t j = 0; j < k; j++)
			segs[j] = json_string_value(json_array_get(ops[i].segs, j));
		if (ops[i].changed)
			r = now != NULL ? toml_edit_set(doc, segs, k, now, cause)
					: (toml_edit_remove(doc, segs, k) < 0 ? -1 : 0);
		free(segs);
		if (r != 0 && *cause == NULL)
			*cause = xstrdup("cannot edit config.toml there");
		if (r != 0)
			goto out;
	}
	text = (free(text), NULL);
	toml_edit_text(doc, &len);
	if (changed && config_edit_store(target, toml_edit_text(doc, NULL), len, mode, cause) != 0)
		goto out;
	after = toml_parse(toml_edit_text(doc, NULL), len, NULL, cause);
	if (after == NULL)
		goto out;
	json_decref(version);
	version = config_read_version(after);
	meta = config_edit_overridden(c, after, ops, n);
	result = json_pack("{s:s, s:O, s:s, s:o}", "status", meta != NULL ? "okOverridden" : "ok",
		"version", version, "filePath", file_path != NULL ? file_path : allowed,
		"overriddenMetadata", meta != NULL ? meta : json_null());
out:
	for (i = 0; i < n; i++)
		json_decref(ops[i].segs);
	free(ops);
	toml_edit_free(doc);
	json_decref(user);
	json_decref(after);
	json_decref(version);
	config_free(c);
	free(text);
	free(target);
	free(why);
	free(allowed);
	free(home);
	return result;
}

int
config_edit_file(
	const char *path, const char *const *segs, size_t n, const json_t *value, char **cause)
{
	char *target = config_edit_target(path), *text;
	struct toml_doc *doc = NULL;
	size_t len;
	mode_t mode;
	int r = -1;

	if ((text = config_edit_read(target, &len, &mode, cause)) == NULL)
		goto out;
	if ((doc = toml_edit_open(text, len, cause)) == NULL)
		goto out;
	if (toml_edit_set(doc, segs, n, value, cause) != 0)
		goto out;
	toml_edit_text(doc, &len);
	r = config_edit_store(target, toml_edit_text(doc, NULL), len, mode, cause);
out:
	toml_edit_free(doc);
	free(text);
	free(target);
	return r;
}
