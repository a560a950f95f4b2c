/*
 * Characters for the fuzzy matcher (fuzzy.h): classes, case folding and the UTF-8 to codepoint
 * decoding nucleo does (one codepoint per grapheme). Latin normalization has its table in
 * fuzzy_normalize.c.
 *
 * ASCII is exact. Outside ASCII, classes and folding come from glibc's C.UTF-8 tables.
 */
#include <locale.h>
#include <pthread.h>
#include <stdlib.h>
#include <wctype.h>

#include "fuzzy.h"

static locale_t fuzzy_loc;
static pthread_once_t fuzzy_loc_once = PTHREAD_ONCE_INIT;

/* The Unicode-aware locale object, made once (newlocale is not called per character). */
static void
fuzzy_loc_init(void)
{
	fuzzy_loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

/* Whitespace as Rust's char::is_whitespace (the common part of it). */
int
fuzzy_is_space(uint32_t c)
{
	return c == ' ' || (c >= 0x09 && c <= 0x0d) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
		(c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f ||
		c == 0x205f || c == 0x3000;
}

/* nucleo's character classes with '/' as the only delimiter (its path configuration). */
enum fuzzy_class
fuzzy_char_class(uint32_t c)
{
	if (c < 128) {
		if (c >= 'a' && c <= 'z')
			return FZ_LOWER;
		if (c >= 'A' && c <= 'Z')
			return FZ_UPPER;
		if (c >= '0' && c <= '9')
			return FZ_NUMBER;
		if (c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r')
			return FZ_WHITESPACE;
		return c == '/' ? FZ_DELIMITER : FZ_NONWORD;
	}
	pthread_once(&fuzzy_loc_once, fuzzy_loc_init);
	if (fuzzy_loc == (locale_t)0)
		return fuzzy_is_space(c) ? FZ_WHITESPACE : FZ_LETTER;
	if (iswlower_l((wint_t)c, fuzzy_loc))
		return FZ_LOWER;
	if (iswupper_l((wint_t)c, fuzzy_loc) && towlower_l((wint_t)c, fuzzy_loc) != (wint_t)c)
		return FZ_UPPER;
	if (iswdigit_l((wint_t)c, fuzzy_loc))
		return FZ_NUMBER;
	if (iswalpha_l((wint_t)c, fuzzy_loc))
		return FZ_LETTER;
	if (fuzzy_is_space(c))
		return FZ_WHITESPACE;
	return FZ_NONWORD;
}

/* Lower case by simple folding. */
uint32_t
fuzzy_fold(uint32_t c)
{
	if (c < 128)
		return c >= 'A' && c <= 'Z' ? c + 32 : c;
	pthread_once(&fuzzy_loc_once, fuzzy_loc_init);
	if (fuzzy_loc == (locale_t)0)
		return c;
	return (uint32_t)towlower_l((wint_t)c, fuzzy_loc);
}

/* Combining marks and joiners that continue the previous grapheme. */
static int
fuzzy_extends(uint32_t c)
{
	return (c >= 0x300 && c <= 0x36f) || (c >= 0x1ab0 && c <= 0x1aff) ||
		(c >= 0x1dc0 && c <= 0x1dff) || (c >= 0x20d0 && c <= 0x20ff) ||
		(c >= 0xfe00 && c <= 0xfe0f) || (c >= 0xfe20 && c <= 0xfe2f) || c == 0x200d ||
		(c >= 0xe0100 && c <= 0xe01ef);
}

/* UTF-8 to one codepoint per grapheme; invalid bytes become U+FFFD as Rust's lossy view. */
long
fuzzy_decode(const char *s, size_t len, uint32_t *out, size_t cap, int *ascii)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	size_t n = 0;
	int all_ascii = 1, prev_cr = 0;

	/* the common case: plain ASCII, one codepoint per byte */
	while (p < end && *p < 0x80 && *p != '\r') {
		if (n >= cap)
			return -1;
		out[n++] = *p++;
	}
	while (p < end) {
		uint32_t c = *p;
		int k = 1;
		if (c >= 0x80) {
			all_ascii = 0;
			if ((c & 0xe0) == 0xc0 && p + 1 < end && (p[1] & 0xc0) == 0x80) {
				c = ((c & 0x1f) << 6) | (p[1] & 0x3f);
				k = 2;
			} else if ((c & 0xf0) == 0xe0 && p + 2 < end && (p[1] & 0xc0) == 0x80 &&
				(p[2] & 0xc0) == 0x80) {
				c = ((c & 0x0f) << 12) | ((uint32_t)(p[1] & 0x3f) << 6) |
					(p[2] & 0x3f);
				k = 3;
			} else if ((c & 0xf8) == 0xf0 && p + 3 < end && (p[1] & 0xc0) == 0x80 &&
				(p[2] & 0xc0) == 0x80 && (p[3] & 0xc0) == 0x80) {
				c = ((c & 0x07) << 18) | ((uint32_t)(p[1] & 0x3f) << 12) |
					((uint32_t)(p[2] & 0x3f) << 6) | (p[3] & 0x3f);
				k = 4;
			} else {
				c = 0xfffd;
			}
		}
		p += k;
		if (n > 0 && fuzzy_extends(c))
			continue;
		if (c == '\n' && prev_cr) {
			out[n - 1] = '\n';
			prev_cr = 0;
			continue;
		}
		prev_cr = c == '\r';
		if (n >= cap)
			return -1;
		out[n++] = c;
	}
	*ascii = all_ascii;
	return (long)n;
}
