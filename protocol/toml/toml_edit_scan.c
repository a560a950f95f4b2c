/*
 * Scanning a TOML document into statements for in-place edits (toml_edit_int.h): table
 * headers and key/value lines, each with the span of its value, where its line ends and where
 * its decor begins. The text is one toml_parse accepted; anything else is refused.
 */
#include <stdlib.h>
#include <string.h>

#include "toml.h"
#include "toml_edit_int.h"
#include "protocol/xmalloc.h"

size_t
te_ws(const char *t, size_t len, size_t i)
{
	while (i < len && (t[i] == ' ' || t[i] == '\t'))
		i++;
	return i;
}

/* After blanks, a comment and the newline that end a line (or at the end of the text). */
size_t
te_line_end(const char *t, size_t len, size_t i)
{
	i = te_ws(t, len, i);
	if (i < len && t[i] == '#')
		while (i < len && t[i] != '\n')
			i++;
	if (i < len && t[i] == '\r')
		i++;
	if (i < len && t[i] == '\n')
		i++;
	return i;
}

/* Past a string of any of the four kinds starting at i. */
size_t
te_skip_string(const char *t, size_t len, size_t i)
{
	char q = t[i];
	int multi = i + 2 < len && t[i + 1] == q && t[i + 2] == q;

	i += multi ? 3 : 1;
	while (i < len) {
		if (q == '"' && t[i] == '\\') {
			i += 2;
			continue;
		}
		if (t[i] == q) {
			if (!multi)
				return i + 1;
			if (i + 2 < len && t[i + 1] == q && t[i + 2] == q) {
				i += 3;
				while (i < len && t[i] == q) /* up to two quotes end the content */
					i++;
				return i;
			}
		}
		i++;
	}
	return len;
}

/* Past the value starting at i (strings, arrays, inline tables, bare words, dates). */
size_t
te_skip_value(const char *t, size_t len, size_t i)
{
	int depth = 0;

	if (i < len && (t[i] == '"' || t[i] == '\''))
		return te_skip_string(t, len, i);
	if (i < len && (t[i] == '[' || t[i] == '{')) {
		while (i < len) {
			if (t[i] == '"' || t[i] == '\'') {
				i = te_skip_string(t, len, i);
				continue;
			}
			if (t[i] == '#')
				while (i < len && t[i] != '\n')
					i++;
			else if (t[i] == '[' || t[i] == '{')
				depth++;
			else if ((t[i] == ']' || t[i] == '}') && --depth == 0)
				return i + 1;
			i++;
		}
		return len;
	}
	while (i < len && strchr(" \t\r\n#,]}", t[i]) == NULL)
		i++;
	/* A date and a time separated by one space are one value. */
	if (i + 1 < len && t[i] == ' ' && t[i + 1] >= '0' && t[i + 1] <= '9' && i >= 10 &&
		t[i - 3] == '-')
		return te_skip_value(t, len, i + 1);
	return i;
}

/* A key (dotted, quoted parts decoded) appended to path; the offset after it, or 0. */
size_t
te_key(const char *t, size_t len, size_t i, struct buf *path, size_t *nseg)
{
	size_t s, e;
	char *copy, *err = NULL;
	json_t *v;

	for (;;) {
		i = te_ws(t, len, i);
		if (path->len > 0)
			buf_addc(path, SEP);
		if (i < len && (t[i] == '"' || t[i] == '\'')) {
			e = te_skip_string(t, len, i);
			copy = xstrndup(t + i, e - i);
			v = toml_parse_value(copy, &err);
			free(copy);
			free(err);
			err = NULL;
			if (!json_is_string(v)) {
				json_decref(v);
				return 0;
			}
			buf_adds(path, json_string_value(v));
			json_decref(v);
			i = e;
		} else {
			for (s = i; i < len &&
				(strchr("_-", t[i]) != NULL || (t[i] >= 'a' && t[i] <= 'z') ||
					(t[i] >= 'A' && t[i] <= 'Z') ||
					(t[i] >= '0' && t[i] <= '9'));
				i++)
				;
			if (i == s)
				return 0;
			buf_add(path, t + s, i - s);
		}
		(*nseg)++;
		i = te_ws(t, len, i);
		if (i >= len || t[i] != '.')
			return i;
		i++;
	}
}

void
te_clear(struct toml_doc *d)
{
	for (size_t i = 0; i < d->nst; i++)
		free(d->st[i].path);
	free(d->st);
	d->st = NULL;
	d->nst = 0;
}

/* Scan the text into statements; -1 when it is not the TOML toml_parse accepted. */
int
te_scan(struct toml_doc *d)
{
	const char *t = buf_str(&d->text);
	size_t len = d->text.len, i = 0, j, prev = 0, cap = 0, tseg = 0;
	struct buf tpath, path;
	struct stmt s;
	int table = -1, r = -1;

	te_clear(d);
	buf_init(&tpath, TOML_MAX_INPUT);
	buf_init(&path, TOML_MAX_INPUT);
	while (i < len) {
		j = te_ws(t, len, i);
		if (j >= len)
			break;
		if (t[j] == '\n' || t[j] == '\r' || t[j] == '#') {
			i = te_line_end(t, len, j);
			if (i == j)
				goto out;
			continue;
		}
		memset(&s, 0, sizeof s);
		s.decor = prev;
		buf_reset(&path);
		if (t[j] == '[') {
			s.kind = t[j + 1] == '[' ? ST_AOT : ST_TABLE;
			j = te_key(t, len, j + (s.kind == ST_AOT ? 2 : 1), &path, &s.nseg);
			if (j == 0 || j >= len || t[j] != ']')
				goto out;
			j += s.kind == ST_AOT ? 2 : 1;
			s.table = -1;
			s.end = te_line_end(t, len, j);
			table = (int)d->nst;
			buf_reset(&tpath);
			buf_add(&tpath, buf_str(&path), path.len);
			tseg = s.nseg;
		} else {
			buf_add(&path, buf_str(&tpath), tpath.len);
			s.nseg = tseg;
			s.tseg = tseg;
			s.kstart = j;
			j = te_key(t, len, j, &path, &s.nseg);
			if (j == 0 || j >= len || t[j] != '=')
				goto out;
			s.kind = ST_KV;
			s.eq = j;
			s.table = table;
			s.vstart = te_ws(t, len, j + 1);
			s.vend = te_skip_value(t, len, s.vstart);
			s.end = te_line_end(t, len, s.vend);
		}
		if (s.end <= i)
			goto out;
		s.path = xstrndup(buf_str(&path) != NULL ? buf_str(&path) : "", path.len);
		if (d->nst == cap) {
			cap = cap != 0 ? 2 * cap : 32;
			d->st = xrealloc(d->st, cap * sizeof *d->st);
		}
		d->st[d->nst++] = s;
		prev = i = s.end;
	}
	r = 0;
out:
	buf_free(&tpath);
	buf_free(&path);
	return r;
}
