/* Allocation helpers: abort instead of returning NULL (see xmalloc.h). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

static void
xmalloc_fail(size_t n)
{
	fprintf(stderr, "app-server: out of memory allocating %zu bytes\n", n);
	abort();
}

/* Allocate n bytes (at least one). */
void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		xmalloc_fail(n);
	return p;
}

/* Allocate a zeroed array, checking the multiplication. */
void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		xmalloc_fail(n * size);
	return p;
}

/* Resize p to n bytes. */
void *
xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (q == NULL)
		xmalloc_fail(n);
	return q;
}

/* Duplicate a string. */
char *
xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

/* Duplicate at most n bytes of s, always NUL-terminated. */
char *
xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *
xstrtrim(const char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	return xstrndup(s, n);
}

/* Format into a fresh heap string. */
char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		xmalloc_fail(0);
	return s;
}
