/*
 * Reading JSON text in place, without building values: one value is validated and skipped,
 * an object's members and an array's elements are walked as spans of the text, and strings
 * are compared, decoded or encoded. The rollout reader's fast path uses it to copy large
 * values (command output, message text) from a record into an answer without a jansson tree.
 *
 * It is strict on purpose: anything jansson might read differently (a real number, an integer
 * past 18 digits, \u0000, a key with an escape, nesting past JSCAN_DEPTH, invalid UTF-8) is
 * refused, so the caller falls back to jansson and gets exactly its behaviour. A span this
 * accepts is valid JSON that jansson parses to the same value.
 */
#ifndef JSCAN_H
#define JSCAN_H

#include <stddef.h>

#include "buf.h"

#define JSCAN_DEPTH  64 /* nesting accepted */
#define JSCAN_FIELDS 32 /* keys one jscan_fields pass looks for */

/* A value's text [p, end), without surrounding whitespace. */
struct jspan {
	const char *p, *end;
};

/* Past whitespace and one valid value; NULL when malformed or refused. *out gets its span. */
const char *jscan_value(const char *p, const char *end, struct jspan *out);

/*
 * Past whitespace and one value without checking it (*out gets its span): for text
 * jscan_value accepted, or where a wrong guess is harmless (a parser reads the text after).
 * Bounded by end; NULL when the value does not end before it.
 */
const char *jscan_skip(const char *p, const char *end, struct jspan *out);

/* Walking an object's members / an array's elements (the span must have passed jscan_value). */
struct jscan_it {
	const char *p, *end;
	int first;
};
/* 0 when v is an object (resp. array), else -1. */
int jscan_obj(struct jscan_it *it, struct jspan v);
int jscan_arr(struct jscan_it *it, struct jspan v);
/* The next member: key is the string body (between the quotes); 1, or 0 at the end. */
int jscan_obj_next(struct jscan_it *it, struct jspan *key, struct jspan *val);
/* The next element; 1, or 0 at the end. */
int jscan_arr_next(struct jscan_it *it, struct jspan *val);

/* An object's member (the last one with that key, as jansson keeps); 1 found, 0 not. */
int jscan_get(struct jspan obj, const char *key, struct jspan *val);
/*
 * Several members in one pass: vals[i] gets the value of keys[i] (the last of a repeated key),
 * or a span with p NULL when missing. keys: distinct names, NULL-terminated, at most
 * JSCAN_FIELDS of them. Returns how many were found.
 */
int jscan_fields(struct jspan obj, const char *const keys[], struct jspan vals[]);
/* Whether a key span (from jscan_obj_next) is this name. */
int jscan_key_is(struct jspan key, const char *name);
/* Whether the value's text is exactly lit ("null", "[]", ...). */
int jscan_is(struct jspan v, const char *lit);
/* Whether a string value decodes to s (tmp: room for an escaped one). */
int jscan_str_is(struct jspan v, const char *s, struct buf *tmp);
/* A string value without escapes: its body span. 0, or -1 (not a string, or escaped). */
int jscan_plain(struct jspan v, struct jspan *body);
/* An integer value. 0, or -1. */
int jscan_int(struct jspan v, long long *out);
/* A string value decoded (UTF-8, escapes resolved) and appended to b. 0, -1 or -E2BIG. */
int jscan_unescape(struct jspan v, struct buf *b);
/* s as a JSON string, quotes included, escaped as jansson's compact output does. 0 or -E2BIG. */
int jscan_put_str(struct buf *b, const char *s, size_t n);
/* An integer in decimal. 0 or -E2BIG. */
int jscan_put_int(struct buf *b, long long x);
/* The span's text appended as is. 0 or -E2BIG. */
int jscan_put(struct buf *b, struct jspan v);

#endif
