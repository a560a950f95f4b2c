/*
 * Between the parts of the TOML parser: toml.c (tables, arrays, the document) and
 * toml_lex.c (blanks, comments, newlines, keys, strings, numbers, dates). The cursor state
 * lives in struct toml; errors are recorded once, at the cursor, by toml_lex_fail.
 */
#ifndef TOML_INT_H
#define TOML_INT_H

#include <stddef.h>

#include <jansson.h>

#include "protocol/buf.h"
#include "toml.h"

/* A string's or a number's text: never longer than its document. */
#define TOML_MAX_VALUE TOML_MAX_INPUT

struct toml {
	const char *p, *end;
	const char *line_start;
	unsigned line;
	json_t *root, *cur;
	json_t *flags; /* "%p" of a table or array -> how it came to exist */
	int depth;
	char *cause;
	struct toml_pos pos;
};

/* Record the first error at the cursor ("L:C: message"); always returns -1. */
int toml_lex_fail(struct toml *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True at the end of the text. */
int toml_lex_eof(const struct toml *t);
/* Skip blanks (spaces and tabs) on the current line. */
void toml_lex_ws(struct toml *t);
/* Consume a newline (LF or CRLF) at the cursor: 1 if consumed, 0 if none, -1 on a lone CR. */
int toml_lex_newline(struct toml *t);
/* Skip a comment at the cursor (not its newline); -1 on a control character in it. */
int toml_lex_comment(struct toml *t);
/* Skip blanks, comments and newlines (inside arrays and inline tables). */
int toml_lex_blank(struct toml *t);
/* True when the character at the cursor may follow a bare value. */
int toml_lex_value_end(const struct toml *t);
/* A string of any of the four kinds; keys pass allow_multi = 0. */
json_t *toml_lex_string(struct toml *t, int allow_multi);
/* A dotted key: an array of its segments. */
json_t *toml_lex_key(struct toml *t);
/* An integer, a float, or a date-time (kept as text). */
json_t *toml_lex_number(struct toml *t);

#endif
