/*
 * The internals of toml_edit.c (toml_edit.h): a document kept as text and the statements its
 * scan found (toml_edit_scan.c), shared by the scanner and the edits.
 */
#ifndef TOML_EDIT_INT_H
#define TOML_EDIT_INT_H

#include <stddef.h>

#include "protocol/buf.h"

#define SEP '\x1f'

enum stmt_kind { ST_TABLE, ST_AOT, ST_KV };

struct stmt {
	enum stmt_kind kind;
	char *path;	     /* full path, segments joined by SEP */
	size_t nseg;	     /* segments in path */
	size_t tseg;	     /* KV: segments of its table (the rest is its dotted key) */
	int table;	     /* KV: index of the header it sits under, -1 for the root */
	size_t decor;	     /* where the text that belongs to it begins */
	size_t kstart, eq;   /* KV: its key's first byte, its '=' */
	size_t vstart, vend; /* KV: the value */
	size_t end;	     /* after its line's newline */
};

struct toml_doc {
	struct buf text;
	struct stmt *st;
	size_t nst;
};

/* toml_edit_scan.c: blanks; a line's end (after blanks, a comment, the newline); past a string
 * or a value; a key appended to path (the offset after it, or 0); the statements. */
size_t te_ws(const char *t, size_t len, size_t i);
size_t te_line_end(const char *t, size_t len, size_t i);
size_t te_skip_string(const char *t, size_t len, size_t i);
size_t te_skip_value(const char *t, size_t len, size_t i);
size_t te_key(const char *t, size_t len, size_t i, struct buf *path, size_t *nseg);
void te_clear(struct toml_doc *d);
int te_scan(struct toml_doc *d);

#endif
