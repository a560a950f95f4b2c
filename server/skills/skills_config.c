/*
 * skills/config/write's edit of $CODEX_HOME/config.toml, as upstream 0.169 makes it with
 * toml_edit (observed byte for byte): only [[skills.config]] entries change, every other byte
 * of the file is kept.
 *   - disable: the first entry with the same selector (path or name) is rewritten in place as
 *     `<selector> = "..."` and `enabled = false` (the blank and comment lines above its header
 *     stay); with none, a new entry goes after the last entry, else at the end of the [skills]
 *     table, else at the end of the file, one blank line before it (none in an empty file);
 *   - enable: every entry with that selector goes, with the blank and comment lines above it.
 * The file is replaced atomically (a temporary file in the same folder, fsync, rename).
 * A header is a line starting with '[' outside a multi-line string; this edit is meant for
 * the files upstream and users write, not every corner of TOML.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/home.h"
#include "protocol/buf.h"
#include "protocol/toml/toml.h"
#include "protocol/xmalloc.h"
#include "skills_int.h"

struct tline {
	const char *s; /* start in the text */
	size_t len;    /* with its '\n' when it has one */
	enum { TL_BLANK, TL_COMMENT, TL_HEADER, TL_OTHER } kind;
	int entry; /* TL_HEADER: [[skills.config]]; 2: [skills] or [skills.*] */
};

/* Classify the lines of text (multi-line strings are kept as TL_OTHER lines). */
static struct tline *
tlines(const char *text, size_t len, size_t *n)
{
	struct tline *v = NULL;
	const char *p = text, *end = text + len, *nl, *h;
	int in_ml = 0;
	char key[128];

	*n = 0;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		v = xrealloc(v, (*n + 1) * sizeof *v);
		v[*n].s = p;
		v[*n].len = nl != NULL ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		v[*n].entry = 0;
		for (h = p; h < p + v[*n].len && (*h == ' ' || *h == '\t'); h++)
			;
		if (in_ml)
			v[*n].kind = TL_OTHER;
		else if (h == p + v[*n].len || *h == '\n' || *h == '\r')
			v[*n].kind = TL_BLANK;
		else if (*h == '#')
			v[*n].kind = TL_COMMENT;
		else if (*h == '[') {
			size_t k = 0;

			v[*n].kind = TL_HEADER;
			for (; h < p + v[*n].len && *h != '#' && *h != '\n' && k + 1 < sizeof key;
				h++)
				if (*h != ' ' && *h != '\t' && *h != '\r')
					key[k++] = *h;
			key[k] = '\0';
			if (strcmp(key, "[[skills.config]]") == 0)
				v[*n].entry = 1;
			else if (strcmp(key, "[skills]") == 0 || strncmp(key, "[skills.", 8) == 0)
				v[*n].entry = 2;
		} else
			v[*n].kind = TL_OTHER;
		/* A line opening (or closing) a multi-line string toggles the state. */
		for (const char *q = p; q + 2 < p + v[*n].len; q++)
			if ((q[0] == '"' || q[0] == '\'') && q[1] == q[0] && q[2] == q[0]) {
				in_ml = !in_ml;
				q += 2;
			}
		p += v[*n].len;
		(*n)++;
	}
	return v;
}

/* Where the body of the table whose header is line h ends: before its trailing blank and
 * comment lines (they are the next header's). */
static size_t
body_end(const struct tline *v, size_t n, size_t h)
{
	size_t j = h + 1, last = h + 1;

	for (; j < n && v[j].kind != TL_HEADER; j++)
		if (v[j].kind == TL_OTHER)
			last = j + 1;
	return j == n && last == h + 1 ? h + 1 : last;
}

/* The first line of the blank and comment lines right above line h. */
static size_t
decor_start(const struct tline *v, size_t h)
{
	while (h > 0 && (v[h - 1].kind == TL_BLANK || v[h - 1].kind == TL_COMMENT))
		h--;
	return h;
}

/* Whether the entry at header h selects (path | name). */
static int
entry_matches(const struct tline *v, size_t n, size_t h, const char *path, const char *name)
{
	size_t e = body_end(v, n, h);
	char *text = xstrndup(v[h + 1 < n ? h + 1 : h].s,
		e > h + 1 ? (size_t)(v[e - 1].s + v[e - 1].len - v[h + 1].s) : 0);
	char *cause = NULL;
	json_t *t = toml_parse(text, strlen(text), NULL, &cause);
	const char *p = json_string_value(json_object_get(t, "path"));
	const char *nm = json_string_value(json_object_get(t, "name"));
	int r = 0;

	if (path != NULL && p != NULL && nm == NULL)
		r = strcmp(p, path) == 0;
	else if (name != NULL && nm != NULL && p == NULL) {
		char *trimmed = skill_single_line(nm);

		r = strcmp(trimmed, name) == 0;
		free(trimmed);
	}
	json_decref(t);
	free(cause);
	free(text);
	return r;
}

/* A TOML basic string. */
static void
toml_string(struct buf *b, const char *s)
{
	buf_addc(b, '"');
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			buf_printf(b, "\\%c", *s);
		else if (*s == '\n')
			buf_adds(b, "\\n");
		else if (*s == '\t')
			buf_adds(b, "\\t");
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			buf_printf(b, "\\u%04x", (unsigned char)*s);
		else
			buf_addc(b, *s);
	}
	buf_addc(b, '"');
}

/* The key-value lines of an entry. */
static void
entry_body(struct buf *b, const char *path, const char *name)
{
	buf_adds(b, path != NULL ? "path = " : "name = ");
	toml_string(b, path != NULL ? path : name);
	buf_adds(b, "\nenabled = false\n");
}

/* The edited text of config.toml (heap). */
static char *
config_edit(const char *text, size_t len, const char *path, const char *name, int enabled)
{
	size_t n, at = 0, last_entry = 0, skills_end = 0, i, keep = 0;
	struct tline *v = tlines(text, len, &n);
	int done = 0, have_entry = 0, have_skills = 0;
	struct buf b;

	buf_init(&b, TOML_MAX_INPUT + 4096);
	for (i = 0; i < n; i++) {
		if (v[i].kind != TL_HEADER)
			continue;
		if (v[i].entry == 1 && entry_matches(v, n, i, path, name)) {
			size_t e = body_end(v, n, i);

			if (!enabled && !done) { /* rewrite in place, its decor kept */
				buf_add(&b, text + keep,
					(size_t)(v[i].s + v[i].len - (text + keep)));
				if (v[i].s[v[i].len - 1] != '\n')
					buf_addc(&b, '\n');
				entry_body(&b, path, name);
				done = 1;
			} else { /* drop it with its decor */
				buf_add(&b, text + keep,
					(size_t)(v[decor_start(v, i)].s - (text + keep)));
			}
			keep = e < n ? (size_t)(v[e].s - text) : len;
			continue;
		}
		if (v[i].entry == 1) {
			have_entry = 1;
			last_entry = i;
		} else if (v[i].entry == 2) {
			have_skills = 1;
			skills_end = i;
		}
	}
	buf_add(&b, text + keep, len - keep);
	if (!enabled && !done) {
		/* A new entry: after the last entry, else after [skills], else at the end. */
		char *out = buf_steal(&b, &len);

		free(v);
		v = tlines(out, len, &n);
		have_entry = have_skills = 0;
		for (i = 0; i < n; i++)
			if (v[i].kind == TL_HEADER && v[i].entry == 1)
				have_entry = 1, last_entry = i;
			else if (v[i].kind == TL_HEADER && v[i].entry == 2)
				have_skills = 1, skills_end = i;
		at = len;
		if (have_entry || have_skills) {
			size_t e = body_end(v, n, have_entry ? last_entry : skills_end);

			at = e < n ? (size_t)(v[e].s - out) : len;
		}
		buf_init(&b, TOML_MAX_INPUT + 4096);
		buf_add(&b, out, at);
		if (at > 0 && out[at - 1] != '\n')
			buf_addc(&b, '\n');
		if (at > 0)
			buf_addc(&b, '\n');
		buf_adds(&b, "[[skills.config]]\n");
		entry_body(&b, path, name);
		buf_add(&b, out + at, len - at);
		free(out);
	}
	free(v);
	return buf_steal(&b, NULL);
}

/* Replace path's content atomically (temporary file, fsync, rename); 0 or -errno. */
static int
write_atomic(const char *path, const char *text, mode_t mode)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	size_t len = strlen(text), off = 0;
	ssize_t w;
	int fd, r = 0;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd == -1) {
		r = -errno;
		free(tmp);
		return r;
	}
	while (off < len && (w = write(fd, text + off, len - off)) > 0)
		off += (size_t)w;
	if (off < len || fsync(fd) != 0)
		r = -(errno != 0 ? errno : EIO);
	if (close(fd) != 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) != 0)
		r = -errno;
	if (r != 0)
		unlink(tmp);
	free(tmp);
	return r;
}

int
skills_config_write(const char *path, const char *name, int enabled, char **cause)
{
	char *home = home_path(), *file = xasprintf("%s/config.toml", home), *text = NULL, *out;
	struct stat st;
	mode_t mode = 0600;
	size_t len = 0;
	ssize_t n;
	int fd, r = -1, e;

	if ((fd = open(file, O_RDONLY | O_CLOEXEC)) != -1) {
		if (fstat(fd, &st) == 0 && (size_t)st.st_size <= TOML_MAX_INPUT) {
			mode = st.st_mode & 07777;
			text = xmalloc((size_t)st.st_size + 1);
			while (len < (size_t)st.st_size &&
				(n = read(fd, text + len, (size_t)st.st_size - len)) > 0)
				len += (size_t)n;
			text[len] = '\0';
		}
		close(fd);
		if (text == NULL) {
			*cause = xasprintf("failed to read %s: too large", file);
			goto out;
		}
	} else if (errno != ENOENT) {
		*cause = xasprintf("failed to read %s: %s", file, strerror(errno));
		goto out;
	} else if (home_ensure(cause) != 0) {
		goto out;
	}
	out = config_edit(text != NULL ? text : "", len, path, name, enabled);
	if ((e = write_atomic(file, out, mode)) != 0)
		*cause = xasprintf("failed to write %s: %s", file, strerror(-e));
	else
		r = 0;
	free(out);
out:
	free(text);
	free(file);
	free(home);
	return r;
}
