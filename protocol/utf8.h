/* UTF-8 checks and lossy repair, for turning captured process output into JSON strings. */
#ifndef UTF8_H
#define UTF8_H

#include <stddef.h>

/* Length of the longest valid UTF-8 prefix of s (n when all of it is valid). */
size_t utf8_valid_prefix(const char *s, size_t n);
/*
 * A valid UTF-8 copy of s, each maximal invalid subsequence replaced by U+FFFD (as
 * String::from_utf8_lossy does); *outlen gets its length. The result is NUL-terminated.
 */
char *utf8_lossy(const char *s, size_t n, size_t *outlen);

#endif
