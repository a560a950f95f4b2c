/*
 * In-place edits of a TOML document (toml_edit.h). The document is kept as text and scanned
 * into statements after every edit: table headers ([a.b], [[a.b]]) and key/value lines, each
 * with the span of its value, where its line ends and where its decor begins (the end of the
 * statement before it: comments and blank lines above a key belong to that key, as in
 * toml_edit). An edit splices text at those offsets; nothing else is rewritten.
 *
 * Paths are compared as strings whose segments are joined by 0x1f: a key holding that
 * control character (only writable as an escape) would be confused with two segments.
 */
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
#include "toml.h"
#include "toml_edit.h"
#include "toml_edit_int.h"
#include "protocol/xmalloc.h"

/* --- paths ---------------------------------------------------------------------------------- */

/* The first n segments joined (heap). */
static char *
te_join(const char *const *path, size_t n)
{
	struct buf b;

	buf_init(&b, TOML_MAX_INPUT);
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			buf_addc(&b, SEP);
		buf_adds(&b, path[i]);
	}
	return buf_steal(&b, NULL);
}

/* True when q lies strictly under p. */
static int
te_under(const char *p, const char *q)
{
	size_t n = strlen(p);

	if (n == 0)
		return *q != '\0';
	return strncmp(p, q, n) == 0 && q[n] == SEP;
}

static int
te_find(const struct toml_doc *d, enum stmt_kind kind, const char *path)
{
	for (size_t i = 0; i < d->nst; i++)
		if (d->st[i].kind == kind && strcmp(d->st[i].path, path) == 0)
			return (int)i;
	return -1;
}

/* A table exists at path: its header, or anything under it (dotted keys, sub-tables). */
static int
te_is_table(const struct toml_doc *d, const char *path)
{
	if (*path == '\0' || te_find(d, ST_TABLE, path) >= 0)
		return 1;
	for (size_t i = 0; i < d->nst; i++)
		if (te_under(path, d->st[i].path) &&
			(d->st[i].kind != ST_AOT || strcmp(d->st[i].path, path) != 0))
			return 1;
	return 0;
}

/* Where a header's table ends: after its last key, or after the header line. */
static size_t
te_body_end(const struct toml_doc *d, int h)
{
	size_t end = h >= 0 ? d->st[h].end : 0;

	for (size_t i = (size_t)(h + 1); i < d->nst && d->st[i].kind == ST_KV; i++)
		end = d->st[i].end;
	return end;
}

/* Where a new table under path goes: after the last table at or under it (0: none). */
static size_t
te_after_tables(const struct toml_doc *d, const char *path, int *found)
{
	size_t at = 0;

	*found = 0;
	for (size_t i = 0; i < d->nst; i++)
		if (d->st[i].kind != ST_KV &&
			(strcmp(d->st[i].path, path) == 0 || te_under(path, d->st[i].path))) {
			at = te_body_end(d, (int)i);
			*found = 1;
		}
	return at;
}

/* --- splicing ------------------------------------------------------------------------------- */

/* Replace [from, to) with text; rescans. */
static int
te_splice(struct toml_doc *d, size_t from, size_t to, const char *text, size_t n)
{
	struct buf nb;

	buf_init(&nb, TOML_MAX_INPUT);
	if (buf_add(&nb, buf_str(&d->text), from) != 0 || buf_add(&nb, text, n) != 0 ||
		buf_add(&nb, buf_str(&d->text) + to, d->text.len - to) != 0) {
		buf_free(&nb);
		return -1;
	}
	if (nb.ptr == NULL)
		buf_adds(&nb, "");
	buf_free(&d->text);
	d->text = nb;
	return te_scan(d);
}

/* Insert a line (key = value) at offset at, adding the newline the line before lacks. */
static int
te_insert_line(struct toml_doc *d, size_t at, const char *line)
{
	char *text = xasprintf("%s%s\n", at > 0 && d->text.ptr[at - 1] != '\n' ? "\n" : "", line);
	int r = te_splice(d, at, at, text, strlen(text));

	free(text);
	return r;
}

/* "a.b.c" from segments [from, to) of a joined path. */
static void
te_dotted(struct buf *b, const char *path, size_t from, size_t to)
{
	char *copy = xstrdup(path), *seg = copy, *next;
	size_t i = 0;

	for (; seg != NULL; seg = next, i++) {
		next = strchr(seg, SEP);
		if (next != NULL)
			*next++ = '\0';
		if (i < from || i >= to)
			continue;
		char *k = toml_edit_render_key(seg);

		if (i > from)
			buf_addc(b, '.');
		buf_adds(b, k);
		free(k);
	}
	free(copy);
}

/* A new table block: [path] with its values, then its sub-tables. */
static int
te_block(struct buf *b, const char *path, size_t nseg, const json_t *obj)
{
	const char *k;
	json_t *v;
	char *r, *kr, *sub;

	buf_addc(b, '[');
	te_dotted(b, path, 0, nseg);
	buf_adds(b, "]\n");
	json_object_foreach((json_t *)obj, k, v)
	{
		if (json_is_object(v))
			continue;
		if ((r = toml_edit_render(v)) == NULL)
			return -1;
		kr = toml_edit_render_key(k);
		buf_printf(b, "%s = %s\n", kr, r);
		free(kr);
		free(r);
	}
	json_object_foreach((json_t *)obj, k, v)
	{
		if (!json_is_object(v))
			continue;
		sub = xasprintf("%s%c%s", path, SEP, k);
		buf_addc(b, '\n');
		if (te_block(b, sub, nseg + 1, v) != 0) {
			free(sub);
			return -1;
		}
		free(sub);
	}
	return 0;
}

/* --- inline tables -------------------------------------------------------------------------- */

struct te_entry {
	char *path; /* relative to the inline table */
	size_t kstart, vstart, vend;
};

/* The entries of the inline table at [vs, ve); returns how many (max 256 kept). */
static size_t
te_inline_entries(const char *t, size_t ve, size_t vs, struct te_entry *e, size_t max)
{
	size_t i = vs + 1, n = 0, nseg;
	struct buf path;

	buf_init(&path, TOML_MAX_INPUT);
	while (i < ve && n < max) {
		while (i < ve && strchr(" \t\r\n,", t[i]) != NULL)
			i++;
		if (i >= ve || t[i] == '}')
			break;
		buf_reset(&path);
		nseg = 0;
		e[n].kstart = i;
		i = te_key(t, ve, i, &path, &nseg);
		if (i == 0 || i >= ve || t[i] != '=')
			break;
		e[n].vstart = te_ws(t, ve, i + 1);
		e[n].vend = te_skip_value(t, ve, e[n].vstart);
		e[n].path = xstrndup(path.ptr != NULL ? path.ptr : "", path.len);
		i = e[n].vend;
		n++;
	}
	buf_free(&path);
	return n;
}

/* The key/value holding path's ancestor (an inline table or a plain value), or -1. */
static int
te_value_ancestor(const struct toml_doc *d, const char *path)
{
	for (size_t i = 0; i < d->nst; i++)
		if (d->st[i].kind == ST_KV && te_under(d->st[i].path, path))
			return (int)i;
	return -1;
}

/*
 * Make the inline table of key/value k a table of its own, as toml_edit does before it edits
 * inside one: the `key = { .. }` line goes (with its trailing comment), and `[path]` with the
 * entries as lines (their values' text kept) goes right after the body of the table the key
 * sat in, before any other table. The header keeps the blanks the key had before its `=`
 * (`[tui ]`) when `decor`, as upstream's key keeps its decor; a table made from one just
 * made (the next level of the same edit) gets none, its keys having been written anew.
 * Comments above the key go above the header.
 */
static int
te_promote(struct toml_doc *d, int k, int decor)
{
	const struct stmt *s = &d->st[k];
	const char *t = d->text.ptr;
	size_t from = s->decor, to = s->end, at, suf = s->eq, line = s->kstart, n, i;
	struct te_entry e[256];
	json_t *before, *after = NULL;
	char *old, *why = NULL;
	struct buf b;
	int r;

	n = te_inline_entries(t, s->vend, s->vstart, e, 256);
	while (suf > s->kstart && (t[suf - 1] == ' ' || t[suf - 1] == '\t'))
		suf--;
	while (line > from && t[line - 1] != '\n')
		line--;
	/* the parent's body end: the root's last key, or its header's */
	at = s->table >= 0 ? te_body_end(d, s->table) : 0;
	for (i = 0; s->table < 0 && i < d->nst && d->st[i].kind == ST_KV; i++)
		at = d->st[i].end;
	buf_init(&b, TOML_MAX_INPUT);
	if (at > 0 && t[at - 1] != '\n')
		buf_addc(&b, '\n');
	if (at - (to - from) > 0)
		buf_addc(&b, '\n');
	buf_add(&b, t + from, line - from);
	buf_addc(&b, '[');
	te_dotted(&b, s->path, 0, s->nseg);
	if (decor)
		buf_add(&b, t + suf, s->eq - suf);
	buf_adds(&b, "]\n");
	for (i = 0; i < n; i++) {
		te_dotted(&b, e[i].path, 0, (size_t)-1);
		buf_adds(&b, " = ");
		buf_add(&b, t + e[i].vstart, e[i].vend - e[i].vstart);
		buf_addc(&b, '\n');
		free(e[i].path);
	}
	/* the table first (it lies after the key), then the key's line */
	before = toml_parse(t, d->text.len, NULL, &why);
	old = xstrdup(t);
	r = te_splice(d, at, at, b.ptr != NULL ? b.ptr : "", b.len);
	if (r == 0)
		r = te_splice(d, from, to, "", 0);
	/* the same tree or nothing: an entry this scan misread (a comment in a TOML 1.1 inline
	 * table, past 256 entries) must fail the edit, not lose a key */
	if (r == 0 &&
		((after = toml_parse(d->text.ptr, d->text.len, NULL, &why)) == NULL ||
			!json_equal(before, after))) {
		buf_reset(&d->text);
		buf_adds(&d->text, old);
		te_scan(d);
		r = -1;
	}
	json_decref(before);
	json_decref(after);
	free(why);
	free(old);
	buf_free(&b);
	return r;
}

/*
 * Make every inline table on the way to path p a table (te_promote): 0, 1 when a value that
 * is not a table lies on the way, -1 on failure.
 */
static int
te_promote_path(struct toml_doc *d, const char *p, int *promoted)
{
	int k;

	while ((k = te_value_ancestor(d, p)) >= 0) {
		if (d->text.ptr[d->st[k].vstart] != '{')
			return 1;
		if (te_promote(d, k, !*promoted) != 0)
			return -1;
		*promoted = 1;
	}
	return 0;
}

/* --- the edits ------------------------------------------------------------------------------ */

/* Remove everything at or under path (joined). */
static int
te_remove_joined(struct toml_doc *d, const char *p)
{
	size_t from = 0, to = 0;
	int k, removed = 0, promoted = 0;

	if ((k = te_promote_path(d, p, &promoted)) != 0)
		return k > 0 ? 0 : -1;
	/* One range at a time, from the end, rescanning between them. */
	for (;;) {
		int found = 0;

		for (size_t i = 0; i < d->nst; i++) {
			const struct stmt *s = &d->st[i];
			int in = strcmp(s->path, p) == 0 || te_under(p, s->path);

			if (!in ||
				(s->kind == ST_KV && s->table >= 0 &&
					(strcmp(d->st[s->table].path, p) == 0 ||
						te_under(p, d->st[s->table].path))))
				continue;
			from = s->decor;
			to = s->kind == ST_KV ? s->end : te_body_end(d, (int)i);
			found = 1;
		}
		if (!found)
			break;
		if (te_splice(d, from, to, "", 0) != 0)
			return -1;
		removed = 1;
	}
	return removed;
}

int
toml_edit_remove(struct toml_doc *d, const char *const *path, size_t n)
{
	char *p = te_join(path, n);
	int r = n > 0 ? te_remove_joined(d, p) : 0;

	free(p);
	return r;
}

/* Insert a value at path p (absent), in the nearest table that exists. */
static int
te_insert(struct toml_doc *d, const char *const *path, size_t n, const json_t *value)
{
	char *anc = NULL, *text = NULL, *p = te_join(path, n);
	size_t m, at = 0, i;
	struct buf b;
	int r = -1, h, found;

	buf_init(&b, TOML_MAX_INPUT);
	for (m = n - 1; m > 0; m--) {
		free(anc);
		anc = te_join(path, m);
		if (te_is_table(d, anc))
			break;
	}
	if (m == 0) {
		free(anc);
		anc = xstrdup("");
	}
	if (!json_is_object(value) && n - m == 1) {
		if ((text = toml_edit_render(value)) == NULL)
			goto out;
		h = m > 0 ? te_find(d, ST_TABLE, anc) : -1;
		if (m == 0 || h >= 0) {
			/* after the last key of the table (the root: before any header) */
			at = m > 0 ? te_body_end(d, h) : 0;
			for (i = 0; m == 0 && i < d->nst && d->st[i].kind == ST_KV; i++)
				at = d->st[i].end;
			te_dotted(&b, p, m, n);
		} else {
			/* a dotted table: after its last key, with the same dotted prefix */
			int last = -1;

			for (i = 0; i < d->nst; i++)
				if (d->st[i].kind == ST_KV && te_under(anc, d->st[i].path) &&
					d->st[i].tseg < m)
					last = (int)i;
			if (last < 0) {
				/* only sub-tables: the table gets its header before the first */
				for (i = 0; i < d->nst && !te_under(anc, d->st[i].path); i++)
					;
				at = i < d->nst ? d->st[i].decor : d->text.len;
				buf_printf(&b, "%s[", at > 0 ? "\n" : "");
				te_dotted(&b, p, 0, m);
				buf_adds(&b, "]\n");
				te_dotted(&b, p, m, n);
				buf_printf(&b, " = %s\n", text);
				r = te_splice(d, at, at, b.ptr, b.len);
				goto out;
			}
			at = d->st[last].end;
			te_dotted(&b, p, d->st[last].tseg, n);
		}
		buf_printf(&b, " = %s", text);
		r = te_insert_line(d, at, b.ptr);
		goto out;
	}
	/* A new table: [path] for an object, else [parent] holding the one key. */
	if (m == 0)
		at = d->text.len;
	else if ((at = te_after_tables(d, anc, &found)), !found) {
		int last = -1;

		for (i = 0; i < d->nst; i++)
			if (d->st[i].kind == ST_KV && te_under(anc, d->st[i].path))
				last = (int)i;
		h = last >= 0 ? d->st[last].table : -1;
		at = h >= 0 ? te_after_tables(d, d->st[h].path, &found) : d->text.len;
	}
	if (at > 0 && d->text.ptr[at - 1] != '\n')
		buf_addc(&b, '\n');
	if (at > 0)
		buf_addc(&b, '\n');
	if (json_is_object(value)) {
		if (te_block(&b, p, n, value) != 0)
			goto out;
	} else {
		json_t *one = json_object();
		char *parent = te_join(path, n - 1);

		json_object_set(one, path[n - 1], (json_t *)value);
		r = te_block(&b, parent, n - 1, one);
		json_decref(one);
		free(parent);
		if (r != 0)
			goto out;
	}
	r = te_splice(d, at, at, b.ptr, b.len);
out:
	buf_free(&b);
	free(text);
	free(anc);
	free(p);
	return r;
}

int
toml_edit_set(
	struct toml_doc *d, const char *const *path, size_t n, const json_t *value, char **cause)
{
	char *p = te_join(path, n), *text = NULL;
	const char *k;
	json_t *v;
	int i, r = -1, promoted = 0;

	if (n == 0 || value == NULL || json_is_null(value)) {
		*cause = xstrdup(n == 0 ? "keyPath must not be empty" : "a value cannot be null");
		goto out;
	}
	if ((i = te_promote_path(d, p, &promoted)) != 0) {
		*cause = xstrdup(i > 0 ? "cannot set value on non-table parent"
				       : "cannot make this inline table a table");
		goto out;
	}
	for (size_t m = 1; m < n; m++) {
		char *q = te_join(path, m);
		int aot = te_find(d, ST_AOT, q) >= 0;

		free(q);
		if (aot) {
			*cause = xstrdup("cannot set value on non-table parent");
			goto out;
		}
	}
	if ((i = te_find(d, ST_KV, p)) >= 0 && json_is_object(value) &&
		d->text.ptr[d->st[i].vstart] != '{') {
		/* a table where a plain value was: a table of its own, as toml_edit makes it */
		if (te_splice(d, d->st[i].decor, d->st[i].end, "", 0) != 0)
			goto out;
		i = -1;
	} else if (i >= 0 && json_is_object(value)) {
		/* an object over an inline table: the table it becomes, edited key by key */
		if (te_promote(d, i, !promoted) != 0) {
			*cause = xstrdup("cannot make this inline table a table");
			goto out;
		}
		i = -1;
	}
	if (i >= 0) {
		if ((text = toml_edit_render(value)) == NULL) {
			*cause = xstrdup("a value cannot be null");
			goto out;
		}
		r = te_splice(d, d->st[i].vstart, d->st[i].vend, text, strlen(text));
		goto out;
	}
	if (json_is_object(value) && te_find(d, ST_AOT, p) < 0 && te_is_table(d, p) &&
		json_object_size(value) > 0) {
		/* an object over a table: key by key, so the table keeps its place */
		const char **sub = xcalloc(n + 1, sizeof *sub);

		memcpy(sub, path, n * sizeof *sub);
		for (size_t j = 0; j < d->nst; j++) {
			const char *rest;
			char *child;

			if (!te_under(p, d->st[j].path))
				continue;
			rest = d->st[j].path + strlen(p) + 1;
			child = xstrndup(rest, strcspn(rest, "\x1f"));
			if (json_object_get(value, child) == NULL) {
				sub[n] = child;
				toml_edit_remove(d, sub, n + 1);
				j = (size_t)-1; /* the statements changed: look again */
			}
			free(child);
		}
		r = 0;
		json_object_foreach((json_t *)value, k, v)
		{
			sub[n] = k;
			if (r == 0)
				r = toml_edit_set(d, sub, n + 1, v, cause);
		}
		free(sub);
		goto out;
	}
	if (te_is_table(d, p) || te_find(d, ST_AOT, p) >= 0)
		te_remove_joined(d, p);
	if ((r = te_insert(d, path, n, value)) != 0 && *cause == NULL)
		*cause = xstrdup("a value cannot be null");
out:
	free(text);
	free(p);
	return r;
}

/* --- the document ----------------------------------------------------------------------------- */

struct toml_doc *
toml_edit_open(const char *text, size_t len, char **cause)
{
	struct toml_doc *d;
	json_t *tree;

	if ((tree = toml_parse(text, len, NULL, cause)) == NULL)
		return NULL;
	json_decref(tree);
	d = xcalloc(1, sizeof *d);
	buf_init(&d->text, TOML_MAX_INPUT);
	buf_add(&d->text, text, len);
	if (d->text.ptr == NULL)
		buf_adds(&d->text, "");
	if (te_scan(d) != 0) {
		*cause = xstrdup("cannot scan the document");
		toml_edit_free(d);
		return NULL;
	}
	return d;
}

void
toml_edit_free(struct toml_doc *d)
{
	if (d == NULL)
		return;
	te_clear(d);
	buf_free(&d->text);
	free(d);
}

const char *
toml_edit_text(const struct toml_doc *d, size_t *len)
{
	if (len != NULL)
		*len = d->text.len;
	return d->text.ptr;
}
