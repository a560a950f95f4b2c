/* UTF-8 checks and lossy repair, for turning captured process output into JSON strings. */
#ifndef UTF8_H
#define UTF8_H

#include <stddef.h>

#include "buf.h"

/* Length of the longest valid UTF-8 prefix of s (n when all of it is valid). */
size_t utf8_valid_prefix(const char *s, size_t n);
/* One code point (<= U+10FFFF) as UTF-8 into out; returns its length (1-4). */
size_t utf8_put_cp(unsigned cp, char out[4]);
/*
 * A valid UTF-8 copy of s, each maximal invalid subsequence replaced by U+FFFD (as
 * String::from_utf8_lossy does); *outlen gets its length. The result is NUL-terminated.
 */
char *utf8_lossy(const char *s, size_t n, size_t *outlen);
/* Bytes the JSON string body of s takes once repaired and escaped (no quotes). */
size_t utf8_json_len(const char *s, size_t n);
/*
 * Append that body to b, stopping before the first character that would take b past
 * limit bytes (or past its ceiling); returns how many bytes of s went in.
 */
size_t utf8_json_append(struct buf *b, const char *s, size_t n, size_t limit);

#endif
