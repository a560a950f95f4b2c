/*
 * Characters for the fuzzy matcher (fuzzy.h): classes, case folding, Latin normalization and
 * the UTF-8 to codepoint decoding nucleo does (one codepoint per grapheme).
 *
 * ASCII is exact. Outside ASCII, classes and folding come from glibc's C.UTF-8 tables and the
 * normalization table was generated from Unicode's compatibility decompositions over the blocks
 * nucleo normalizes (Latin-1 Supplement, Latin Extended-A/B, Latin Extended Additional,
 * Superscripts and Subscripts): a few letters may differ from nucleo's hand-made table.
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

/* codepoint -> ASCII base, sorted by codepoint (generated, see the file comment). */
static const struct {
	uint16_t cp;
	char base;
} fuzzy_norm[] = {
	{0xaa, 'a'},
	{0xb2, '2'},
	{0xb3, '3'},
	{0xb9, '1'},
	{0xba, 'o'},
	{0xc0, 'A'},
	{0xc1, 'A'},
	{0xc2, 'A'},
	{0xc3, 'A'},
	{0xc4, 'A'},
	{0xc5, 'A'},
	{0xc6, 'A'},
	{0xc7, 'C'},
	{0xc8, 'E'},
	{0xc9, 'E'},
	{0xca, 'E'},
	{0xcb, 'E'},
	{0xcc, 'I'},
	{0xcd, 'I'},
	{0xce, 'I'},
	{0xcf, 'I'},
	{0xd1, 'N'},
	{0xd2, 'O'},
	{0xd3, 'O'},
	{0xd4, 'O'},
	{0xd5, 'O'},
	{0xd6, 'O'},
	{0xd8, 'O'},
	{0xd9, 'U'},
	{0xda, 'U'},
	{0xdb, 'U'},
	{0xdc, 'U'},
	{0xdd, 'Y'},
	{0xe0, 'a'},
	{0xe1, 'a'},
	{0xe2, 'a'},
	{0xe3, 'a'},
	{0xe4, 'a'},
	{0xe5, 'a'},
	{0xe7, 'c'},
	{0xe8, 'e'},
	{0xe9, 'e'},
	{0xea, 'e'},
	{0xeb, 'e'},
	{0xec, 'i'},
	{0xed, 'i'},
	{0xee, 'i'},
	{0xef, 'i'},
	{0xf1, 'n'},
	{0xf2, 'o'},
	{0xf3, 'o'},
	{0xf4, 'o'},
	{0xf5, 'o'},
	{0xf6, 'o'},
	{0xf8, 'o'},
	{0xf9, 'u'},
	{0xfa, 'u'},
	{0xfb, 'u'},
	{0xfc, 'u'},
	{0xfd, 'y'},
	{0xff, 'y'},
	{0x100, 'A'},
	{0x101, 'a'},
	{0x102, 'A'},
	{0x103, 'a'},
	{0x104, 'A'},
	{0x105, 'a'},
	{0x106, 'C'},
	{0x107, 'c'},
	{0x108, 'C'},
	{0x109, 'c'},
	{0x10a, 'C'},
	{0x10b, 'c'},
	{0x10c, 'C'},
	{0x10d, 'c'},
	{0x10e, 'D'},
	{0x10f, 'd'},
	{0x110, 'D'},
	{0x111, 'd'},
	{0x112, 'E'},
	{0x113, 'e'},
	{0x114, 'E'},
	{0x115, 'e'},
	{0x116, 'E'},
	{0x117, 'e'},
	{0x118, 'E'},
	{0x119, 'e'},
	{0x11a, 'E'},
	{0x11b, 'e'},
	{0x11c, 'G'},
	{0x11d, 'g'},
	{0x11e, 'G'},
	{0x11f, 'g'},
	{0x120, 'G'},
	{0x121, 'g'},
	{0x122, 'G'},
	{0x123, 'g'},
	{0x124, 'H'},
	{0x125, 'h'},
	{0x126, 'H'},
	{0x127, 'h'},
	{0x128, 'I'},
	{0x129, 'i'},
	{0x12a, 'I'},
	{0x12b, 'i'},
	{0x12c, 'I'},
	{0x12d, 'i'},
	{0x12e, 'I'},
	{0x12f, 'i'},
	{0x130, 'I'},
	{0x131, 'i'},
	{0x134, 'J'},
	{0x135, 'j'},
	{0x136, 'K'},
	{0x137, 'k'},
	{0x139, 'L'},
	{0x13a, 'l'},
	{0x13b, 'L'},
	{0x13c, 'l'},
	{0x13d, 'L'},
	{0x13e, 'l'},
	{0x141, 'L'},
	{0x142, 'l'},
	{0x143, 'N'},
	{0x144, 'n'},
	{0x145, 'N'},
	{0x146, 'n'},
	{0x147, 'N'},
	{0x148, 'n'},
	{0x14c, 'O'},
	{0x14d, 'o'},
	{0x14e, 'O'},
	{0x14f, 'o'},
	{0x150, 'O'},
	{0x151, 'o'},
	{0x152, 'O'},
	{0x154, 'R'},
	{0x155, 'r'},
	{0x156, 'R'},
	{0x157, 'r'},
	{0x158, 'R'},
	{0x159, 'r'},
	{0x15a, 'S'},
	{0x15b, 's'},
	{0x15c, 'S'},
	{0x15d, 's'},
	{0x15e, 'S'},
	{0x15f, 's'},
	{0x160, 'S'},
	{0x161, 's'},
	{0x162, 'T'},
	{0x163, 't'},
	{0x164, 'T'},
	{0x165, 't'},
	{0x166, 'T'},
	{0x167, 't'},
	{0x168, 'U'},
	{0x169, 'u'},
	{0x16a, 'U'},
	{0x16b, 'u'},
	{0x16c, 'U'},
	{0x16d, 'u'},
	{0x16e, 'U'},
	{0x16f, 'u'},
	{0x170, 'U'},
	{0x171, 'u'},
	{0x172, 'U'},
	{0x173, 'u'},
	{0x174, 'W'},
	{0x175, 'w'},
	{0x176, 'Y'},
	{0x177, 'y'},
	{0x178, 'Y'},
	{0x179, 'Z'},
	{0x17a, 'z'},
	{0x17b, 'Z'},
	{0x17c, 'z'},
	{0x17d, 'Z'},
	{0x17e, 'z'},
	{0x17f, 's'},
	{0x180, 'b'},
	{0x197, 'I'},
	{0x19a, 'l'},
	{0x1a0, 'O'},
	{0x1a1, 'o'},
	{0x1af, 'U'},
	{0x1b0, 'u'},
	{0x1cd, 'A'},
	{0x1ce, 'a'},
	{0x1cf, 'I'},
	{0x1d0, 'i'},
	{0x1d1, 'O'},
	{0x1d2, 'o'},
	{0x1d3, 'U'},
	{0x1d4, 'u'},
	{0x1d5, 'U'},
	{0x1d6, 'u'},
	{0x1d7, 'U'},
	{0x1d8, 'u'},
	{0x1d9, 'U'},
	{0x1da, 'u'},
	{0x1db, 'U'},
	{0x1dc, 'u'},
	{0x1de, 'A'},
	{0x1df, 'a'},
	{0x1e0, 'A'},
	{0x1e1, 'a'},
	{0x1e6, 'G'},
	{0x1e7, 'g'},
	{0x1e8, 'K'},
	{0x1e9, 'k'},
	{0x1ea, 'O'},
	{0x1eb, 'o'},
	{0x1ec, 'O'},
	{0x1ed, 'o'},
	{0x1f0, 'j'},
	{0x1f4, 'G'},
	{0x1f5, 'g'},
	{0x1f8, 'N'},
	{0x1f9, 'n'},
	{0x1fa, 'A'},
	{0x1fb, 'a'},
	{0x200, 'A'},
	{0x201, 'a'},
	{0x202, 'A'},
	{0x203, 'a'},
	{0x204, 'E'},
	{0x205, 'e'},
	{0x206, 'E'},
	{0x207, 'e'},
	{0x208, 'I'},
	{0x209, 'i'},
	{0x20a, 'I'},
	{0x20b, 'i'},
	{0x20c, 'O'},
	{0x20d, 'o'},
	{0x20e, 'O'},
	{0x20f, 'o'},
	{0x210, 'R'},
	{0x211, 'r'},
	{0x212, 'R'},
	{0x213, 'r'},
	{0x214, 'U'},
	{0x215, 'u'},
	{0x216, 'U'},
	{0x217, 'u'},
	{0x218, 'S'},
	{0x219, 's'},
	{0x21a, 'T'},
	{0x21b, 't'},
	{0x21e, 'H'},
	{0x21f, 'h'},
	{0x226, 'A'},
	{0x227, 'a'},
	{0x228, 'E'},
	{0x229, 'e'},
	{0x22a, 'O'},
	{0x22b, 'o'},
	{0x22c, 'O'},
	{0x22d, 'o'},
	{0x22e, 'O'},
	{0x22f, 'o'},
	{0x230, 'O'},
	{0x231, 'o'},
	{0x232, 'Y'},
	{0x233, 'y'},
	{0x262, 'G'},
	{0x26a, 'I'},
	{0x274, 'N'},
	{0x280, 'R'},
	{0x28f, 'Y'},
	{0x29c, 'H'},
	{0x29f, 'L'},
	{0x1e00, 'A'},
	{0x1e01, 'a'},
	{0x1e02, 'B'},
	{0x1e03, 'b'},
	{0x1e04, 'B'},
	{0x1e05, 'b'},
	{0x1e06, 'B'},
	{0x1e07, 'b'},
	{0x1e08, 'C'},
	{0x1e09, 'c'},
	{0x1e0a, 'D'},
	{0x1e0b, 'd'},
	{0x1e0c, 'D'},
	{0x1e0d, 'd'},
	{0x1e0e, 'D'},
	{0x1e0f, 'd'},
	{0x1e10, 'D'},
	{0x1e11, 'd'},
	{0x1e12, 'D'},
	{0x1e13, 'd'},
	{0x1e14, 'E'},
	{0x1e15, 'e'},
	{0x1e16, 'E'},
	{0x1e17, 'e'},
	{0x1e18, 'E'},
	{0x1e19, 'e'},
	{0x1e1a, 'E'},
	{0x1e1b, 'e'},
	{0x1e1c, 'E'},
	{0x1e1d, 'e'},
	{0x1e1e, 'F'},
	{0x1e1f, 'f'},
	{0x1e20, 'G'},
	{0x1e21, 'g'},
	{0x1e22, 'H'},
	{0x1e23, 'h'},
	{0x1e24, 'H'},
	{0x1e25, 'h'},
	{0x1e26, 'H'},
	{0x1e27, 'h'},
	{0x1e28, 'H'},
	{0x1e29, 'h'},
	{0x1e2a, 'H'},
	{0x1e2b, 'h'},
	{0x1e2c, 'I'},
	{0x1e2d, 'i'},
	{0x1e2e, 'I'},
	{0x1e2f, 'i'},
	{0x1e30, 'K'},
	{0x1e31, 'k'},
	{0x1e32, 'K'},
	{0x1e33, 'k'},
	{0x1e34, 'K'},
	{0x1e35, 'k'},
	{0x1e36, 'L'},
	{0x1e37, 'l'},
	{0x1e38, 'L'},
	{0x1e39, 'l'},
	{0x1e3a, 'L'},
	{0x1e3b, 'l'},
	{0x1e3c, 'L'},
	{0x1e3d, 'l'},
	{0x1e3e, 'M'},
	{0x1e3f, 'm'},
	{0x1e40, 'M'},
	{0x1e41, 'm'},
	{0x1e42, 'M'},
	{0x1e43, 'm'},
	{0x1e44, 'N'},
	{0x1e45, 'n'},
	{0x1e46, 'N'},
	{0x1e47, 'n'},
	{0x1e48, 'N'},
	{0x1e49, 'n'},
	{0x1e4a, 'N'},
	{0x1e4b, 'n'},
	{0x1e4c, 'O'},
	{0x1e4d, 'o'},
	{0x1e4e, 'O'},
	{0x1e4f, 'o'},
	{0x1e50, 'O'},
	{0x1e51, 'o'},
	{0x1e52, 'O'},
	{0x1e53, 'o'},
	{0x1e54, 'P'},
	{0x1e55, 'p'},
	{0x1e56, 'P'},
	{0x1e57, 'p'},
	{0x1e58, 'R'},
	{0x1e59, 'r'},
	{0x1e5a, 'R'},
	{0x1e5b, 'r'},
	{0x1e5c, 'R'},
	{0x1e5d, 'r'},
	{0x1e5e, 'R'},
	{0x1e5f, 'r'},
	{0x1e60, 'S'},
	{0x1e61, 's'},
	{0x1e62, 'S'},
	{0x1e63, 's'},
	{0x1e64, 'S'},
	{0x1e65, 's'},
	{0x1e66, 'S'},
	{0x1e67, 's'},
	{0x1e68, 'S'},
	{0x1e69, 's'},
	{0x1e6a, 'T'},
	{0x1e6b, 't'},
	{0x1e6c, 'T'},
	{0x1e6d, 't'},
	{0x1e6e, 'T'},
	{0x1e6f, 't'},
	{0x1e70, 'T'},
	{0x1e71, 't'},
	{0x1e72, 'U'},
	{0x1e73, 'u'},
	{0x1e74, 'U'},
	{0x1e75, 'u'},
	{0x1e76, 'U'},
	{0x1e77, 'u'},
	{0x1e78, 'U'},
	{0x1e79, 'u'},
	{0x1e7a, 'U'},
	{0x1e7b, 'u'},
	{0x1e7c, 'V'},
	{0x1e7d, 'v'},
	{0x1e7e, 'V'},
	{0x1e7f, 'v'},
	{0x1e80, 'W'},
	{0x1e81, 'w'},
	{0x1e82, 'W'},
	{0x1e83, 'w'},
	{0x1e84, 'W'},
	{0x1e85, 'w'},
	{0x1e86, 'W'},
	{0x1e87, 'w'},
	{0x1e88, 'W'},
	{0x1e89, 'w'},
	{0x1e8a, 'X'},
	{0x1e8b, 'x'},
	{0x1e8c, 'X'},
	{0x1e8d, 'x'},
	{0x1e8e, 'Y'},
	{0x1e8f, 'y'},
	{0x1e90, 'Z'},
	{0x1e91, 'z'},
	{0x1e92, 'Z'},
	{0x1e93, 'z'},
	{0x1e94, 'Z'},
	{0x1e95, 'z'},
	{0x1e96, 'h'},
	{0x1e97, 't'},
	{0x1e98, 'w'},
	{0x1e99, 'y'},
	{0x1e9b, 's'},
	{0x1ea0, 'A'},
	{0x1ea1, 'a'},
	{0x1ea2, 'A'},
	{0x1ea3, 'a'},
	{0x1ea4, 'A'},
	{0x1ea5, 'a'},
	{0x1ea6, 'A'},
	{0x1ea7, 'a'},
	{0x1ea8, 'A'},
	{0x1ea9, 'a'},
	{0x1eaa, 'A'},
	{0x1eab, 'a'},
	{0x1eac, 'A'},
	{0x1ead, 'a'},
	{0x1eae, 'A'},
	{0x1eaf, 'a'},
	{0x1eb0, 'A'},
	{0x1eb1, 'a'},
	{0x1eb2, 'A'},
	{0x1eb3, 'a'},
	{0x1eb4, 'A'},
	{0x1eb5, 'a'},
	{0x1eb6, 'A'},
	{0x1eb7, 'a'},
	{0x1eb8, 'E'},
	{0x1eb9, 'e'},
	{0x1eba, 'E'},
	{0x1ebb, 'e'},
	{0x1ebc, 'E'},
	{0x1ebd, 'e'},
	{0x1ebe, 'E'},
	{0x1ebf, 'e'},
	{0x1ec0, 'E'},
	{0x1ec1, 'e'},
	{0x1ec2, 'E'},
	{0x1ec3, 'e'},
	{0x1ec4, 'E'},
	{0x1ec5, 'e'},
	{0x1ec6, 'E'},
	{0x1ec7, 'e'},
	{0x1ec8, 'I'},
	{0x1ec9, 'i'},
	{0x1eca, 'I'},
	{0x1ecb, 'i'},
	{0x1ecc, 'O'},
	{0x1ecd, 'o'},
	{0x1ece, 'O'},
	{0x1ecf, 'o'},
	{0x1ed0, 'O'},
	{0x1ed1, 'o'},
	{0x1ed2, 'O'},
	{0x1ed3, 'o'},
	{0x1ed4, 'O'},
	{0x1ed5, 'o'},
	{0x1ed6, 'O'},
	{0x1ed7, 'o'},
	{0x1ed8, 'O'},
	{0x1ed9, 'o'},
	{0x1eda, 'O'},
	{0x1edb, 'o'},
	{0x1edc, 'O'},
	{0x1edd, 'o'},
	{0x1ede, 'O'},
	{0x1edf, 'o'},
	{0x1ee0, 'O'},
	{0x1ee1, 'o'},
	{0x1ee2, 'O'},
	{0x1ee3, 'o'},
	{0x1ee4, 'U'},
	{0x1ee5, 'u'},
	{0x1ee6, 'U'},
	{0x1ee7, 'u'},
	{0x1ee8, 'U'},
	{0x1ee9, 'u'},
	{0x1eea, 'U'},
	{0x1eeb, 'u'},
	{0x1eec, 'U'},
	{0x1eed, 'u'},
	{0x1eee, 'U'},
	{0x1eef, 'u'},
	{0x1ef0, 'U'},
	{0x1ef1, 'u'},
	{0x1ef2, 'Y'},
	{0x1ef3, 'y'},
	{0x1ef4, 'Y'},
	{0x1ef5, 'y'},
	{0x1ef6, 'Y'},
	{0x1ef7, 'y'},
	{0x1ef8, 'Y'},
	{0x1ef9, 'y'},
	{0x2070, '0'},
	{0x2071, 'i'},
	{0x2074, '4'},
	{0x2075, '5'},
	{0x2076, '6'},
	{0x2077, '7'},
	{0x2078, '8'},
	{0x2079, '9'},
	{0x207f, 'n'},
	{0x2080, '0'},
	{0x2081, '1'},
	{0x2082, '2'},
	{0x2083, '3'},
	{0x2084, '4'},
	{0x2085, '5'},
	{0x2086, '6'},
	{0x2087, '7'},
	{0x2088, '8'},
	{0x2089, '9'},
	{0x2090, 'a'},
	{0x2091, 'e'},
	{0x2092, 'o'},
	{0x2093, 'x'},
	{0x2095, 'h'},
	{0x2096, 'k'},
	{0x2097, 'l'},
	{0x2098, 'm'},
	{0x2099, 'n'},
	{0x209a, 'p'},
	{0x209b, 's'},
	{0x209c, 't'},
};

/* The ASCII base of a Latin letter with marks, or c itself. */
uint32_t
fuzzy_normalize(uint32_t c)
{
	if (c < 0xa0 || c >= 0x20a0)
		return c;
	size_t lo = 0, hi = sizeof(fuzzy_norm) / sizeof(fuzzy_norm[0]);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (fuzzy_norm[mid].cp == c)
			return (uint32_t)fuzzy_norm[mid].base;
		if (fuzzy_norm[mid].cp < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return c;
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
