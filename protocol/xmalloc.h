/*
 * Allocation helpers that abort on exhaustion. Every input to the daemon is
 * bounded, so running out of memory is a bug, not a condition to recover from.
 */
#ifndef XMALLOC_H
#define XMALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* A copy of s without white space at either end (Rust's str::trim for ASCII). */
char *xstrtrim(const char *s);
/* Formatted allocation: returns a heap string the caller frees. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifndef container_of
#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))
#endif

#define nitems(a) (sizeof(a) / sizeof((a)[0]))

#endif
