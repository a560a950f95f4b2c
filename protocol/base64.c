/*
 * Base64 encoder and strict decoder (RFC 4648 section 4).
 *
 * The encoder is the hot path of streaming child output, so it must stay far
 * above the daemon's own throughput: with AVX2 (where the CPU has it) its body
 * turns 24 bytes into 32 symbols per step; the rest, and every byte on other
 * CPUs, goes through the portable loop, which looks up 12 bits at a time in a
 * table of 4096 two-character pairs, six input bytes per step.
 *
 * The decoder's body runs 32 symbols per step with AVX2 where the CPU has it;
 * anything unusual goes to the byte-at-a-time loop, which alone decides and
 * words errors. APP_SERVER_NO_AVX2=1 turns both vector bodies off (the
 * unit-scalar-base64 suite runs the tests that way).
 *
 * The decoder accepts exactly what upstream's Rust base64 crate accepts with
 * its STANDARD engine (canonical padding required, no trailing bits, no
 * whitespace) and reports the first error in the same order and wording:
 *  1. an input of length 4k+1 whose last byte is neither '=' nor a symbol:
 *     that byte is reported first ("trailing newline" convenience);
 *  2. every complete quad before the last one, left to right: any byte that
 *     is not a symbol ('=' included) is "Invalid symbol B, offset I.";
 *  3. the last 1 to 4 bytes: '=' at quad position 0 or 1, or a symbol after
 *     '=', is an invalid symbol (the first '='); one lone symbol is
 *     "Invalid input length: N"; symbols plus '=' not a multiple of 4 is
 *     "Invalid padding"; unused low bits set in the last symbol is
 *     "Invalid last symbol B, offset I.".
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "base64.h"
#include "xmalloc.h"

/* The symbol for a 6-bit value, as a constant expression. */
#define B64_CHR(v)                                                                                 \
	((v) < 26		    ? 'A' + (v)                                                    \
			: (v) < 52  ? 'a' + (v)-26                                                 \
			: (v) < 62  ? '0' + (v)-52                                                 \
			: (v) == 62 ? '+'                                                          \
				    : '/')

/* Two symbols for a 12-bit value, first symbol in the low byte (memory order). */
#define B64_PAIR(v)  ((uint16_t)(B64_CHR((v) >> 6) | (B64_CHR((v)&63) << 8)))
#define B64_P4(v)    B64_PAIR(v), B64_PAIR((v) + 1), B64_PAIR((v) + 2), B64_PAIR((v) + 3)
#define B64_P16(v)   B64_P4(v), B64_P4((v) + 4), B64_P4((v) + 8), B64_P4((v) + 12)
#define B64_P64(v)   B64_P16(v), B64_P16((v) + 16), B64_P16((v) + 32), B64_P16((v) + 48)
#define B64_P256(v)  B64_P64(v), B64_P64((v) + 64), B64_P64((v) + 128), B64_P64((v) + 192)
#define B64_P1024(v) B64_P256(v), B64_P256((v) + 256), B64_P256((v) + 512), B64_P256((v) + 768)

static const uint16_t b64_pairs[4096] = {
	B64_P1024(0),
	B64_P1024(1024),
	B64_P1024(2048),
	B64_P1024(3072),
};

static const char b64_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* 0xff marks a byte outside the alphabet ('=' included). */
#define B64_BAD 0xff
/* The decoded value of each byte, built from the same constant expression. */
#define B64_ORD(c)                                                                                 \
	((c) >= 'A' && (c) <= 'Z'		   ? (c) - 'A'                                     \
			: (c) >= 'a' && (c) <= 'z' ? (c) - 'a' + 26                                \
			: (c) >= '0' && (c) <= '9' ? (c) - '0' + 52                                \
			: (c) == '+'		   ? 62                                            \
			: (c) == '/'		   ? 63                                            \
						   : B64_BAD)
#define B64_O4(c)  B64_ORD(c), B64_ORD((c) + 1), B64_ORD((c) + 2), B64_ORD((c) + 3)
#define B64_O16(c) B64_O4(c), B64_O4((c) + 4), B64_O4((c) + 8), B64_O4((c) + 12)
#define B64_O64(c) B64_O16(c), B64_O16((c) + 16), B64_O16((c) + 32), B64_O16((c) + 48)

static const uint8_t b64_values[256] = {
	B64_O64(0),
	B64_O64(64),
	B64_O64(128),
	B64_O64(192),
};

/* Length of the encoding of n bytes, without a terminating NUL. */
size_t
base64_encoded_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

/* Upper bound of the decoded size of n input characters. */
size_t
base64_decoded_max(size_t n)
{
	return (n + 3) / 4 * 3;
}

/* The portable encoder: base64_encoded_len(n) characters, no NUL. */
void
base64_encode_scalar(const void *in, size_t n, char *out)
{
	const uint8_t *s = in;
	uint64_t w;
	uint32_t a, b;
	uint16_t q[4];

	/* Six bytes per step, read as one big-endian 64-bit word (8 bytes must be readable). */
	while (n >= 8) {
		memcpy(&w, s, 8);
		w = __builtin_bswap64(w);
		q[0] = b64_pairs[(w >> 52) & 0xfff];
		q[1] = b64_pairs[(w >> 40) & 0xfff];
		q[2] = b64_pairs[(w >> 28) & 0xfff];
		q[3] = b64_pairs[(w >> 16) & 0xfff];
		memcpy(out, q, 8);
		s += 6;
		n -= 6;
		out += 8;
	}
	while (n >= 3) {
		a = (uint32_t)s[0] << 16 | (uint32_t)s[1] << 8 | s[2];
		q[0] = b64_pairs[a >> 12];
		q[1] = b64_pairs[a & 0xfff];
		memcpy(out, q, 4);
		s += 3;
		n -= 3;
		out += 4;
	}
	if (n == 0)
		return;
	a = s[0];
	b = n == 2 ? s[1] : 0;
	out[0] = b64_chars[a >> 2];
	out[1] = b64_chars[((a & 3) << 4) | (b >> 4)];
	out[2] = n == 2 ? b64_chars[(b & 15) << 2] : '=';
	out[3] = '=';
}

#if defined(__x86_64__)
/*
 * Encode 24 bytes into 32 symbols per step (the reshuffle-and-lookup method of Mula and
 * Lemire); returns how many input bytes it encoded (a multiple of 24). Each step reads 28
 * bytes (two 16-byte loads 12 apart), so it stops while at least 28 are left.
 * Per step: each 128-bit lane takes 12 bytes; every 3-byte group a b c becomes the 32-bit
 * word [b a c b] (little-endian), where the four 6-bit fields sit at known bit offsets of
 * its two 16-bit halves (ab and bc). Two masks and two 16-bit multiplies (a high one to
 * shift right, a low one to shift left) move each field to the low bits of its own byte.
 * A field becomes its symbol by adding an offset chosen by its range: values 0-51 saturate
 * to 0 after subtracting 51 and 52-63 to 1-12; 0-25 are then moved to slot 13; one byte
 * shuffle looks the offset up.
 */
__attribute__((target("avx2"))) static size_t
base64_encode_avx2(const uint8_t *s, size_t n, char *out)
{
	const __m256i spread = _mm256_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10,
		1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
	const __m256i offsets = _mm256_setr_epi8('a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
		'0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A',
		0, 0, 'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
		'0' - 52, '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0);
	const __m256i mask_02 = _mm256_set1_epi32(0x0fc0fc00),
		      mul_02 = _mm256_set1_epi32(0x04000040);
	const __m256i mask_13 = _mm256_set1_epi32(0x003f03f0),
		      mul_13 = _mm256_set1_epi32(0x01000010);
	const __m256i k51 = _mm256_set1_epi8(51), k26 = _mm256_set1_epi8(26),
		      k13 = _mm256_set1_epi8(13);
	__m256i v, f, slot, small;
	size_t i;

	for (i = 0; i + 28 <= n; i += 24) {
		v = _mm256_inserti128_si256(
			_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(s + i))),
			_mm_loadu_si128((const __m128i *)(s + i + 12)), 1);
		v = _mm256_shuffle_epi8(v, spread);
		f = _mm256_or_si256(_mm256_mulhi_epu16(_mm256_and_si256(v, mask_02), mul_02),
			_mm256_mullo_epi16(_mm256_and_si256(v, mask_13), mul_13));
		slot = _mm256_subs_epu8(f, k51);
		small = _mm256_cmpgt_epi8(
			k26, f); /* fields are below 64: a signed compare is right */
		slot = _mm256_blendv_epi8(slot, k13, small);
		_mm256_storeu_si256(
			(__m256i *)out, _mm256_add_epi8(f, _mm256_shuffle_epi8(offsets, slot)));
		out += 32;
	}
	return i;
}

static int b64_avx2 = -1; /* unknown yet */

/* Whether the vector bodies run: the CPU has AVX2 and APP_SERVER_NO_AVX2 is not set. */
int
base64_vector(void)
{
	if (b64_avx2 < 0)
		b64_avx2 = __builtin_cpu_supports("avx2") && getenv("APP_SERVER_NO_AVX2") == NULL;
	return b64_avx2;
}

/* The input bytes encoded by the vector loop, when the CPU has one. */
static size_t
base64_encode_fast(const uint8_t *s, size_t n, char *out)
{
	return n >= 28 && base64_vector() ? base64_encode_avx2(s, n, out) : 0;
}
#else
int
base64_vector(void)
{
	return 0;
}

static size_t
base64_encode_fast(const uint8_t *s, size_t n, char *out)
{
	return 0;
}
#endif

/* Encode n bytes into out: base64_encoded_len(n) characters, no NUL. */
void
base64_encode(const void *in, size_t n, char *out)
{
	size_t done = base64_encode_fast(in, n, out);

	base64_encode_scalar((const uint8_t *)in + done, n - done, out + done / 3 * 4);
}

/* Hand back an "Invalid symbol" message for byte c at offset off. */
static int
base64_bad_symbol(const char *in, size_t off, char **cause)
{
	if (cause != NULL)
		*cause = xasprintf(
			"Invalid symbol %u, offset %zu.", (unsigned)(uint8_t)in[off], off);
	return -EINVAL;
}

/* Decode the last 1 to 4 bytes at in[start..n) into out; see the top comment, rule 3. */
static int
base64_decode_tail(
	const char *in, size_t start, size_t n, uint8_t *out, size_t *outlen, char **cause)
{
	uint8_t v[4] = {0, 0, 0, 0}, last = 0;
	size_t i, nsym = 0, npad = 0, firstpad = 0, nbytes;
	uint32_t bits;

	for (i = start; i < n; i++) {
		if (in[i] == '=') {
			if (i - start < 2)
				return base64_bad_symbol(in, i, cause);
			if (npad++ == 0)
				firstpad = i;
			continue;
		}
		if (npad > 0)
			return base64_bad_symbol(in, firstpad, cause);
		if ((v[nsym] = b64_values[(uint8_t)in[i]]) == B64_BAD)
			return base64_bad_symbol(in, i, cause);
		last = (uint8_t)in[i];
		nsym++;
	}
	if (n > 0 && nsym < 2) {
		if (cause != NULL)
			*cause = xasprintf("Invalid input length: %zu", start + nsym);
		return -EINVAL;
	}
	if ((nsym + npad) % 4 != 0) {
		if (cause != NULL)
			*cause = xstrdup("Invalid padding");
		return -EINVAL;
	}
	nbytes = nsym * 6 / 8;
	bits = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | v[3];
	if (nbytes < 3 && (bits & (0xffffffu >> (nbytes * 8))) != 0) {
		if (cause != NULL)
			*cause = xasprintf("Invalid last symbol %u, offset %zu.", (unsigned)last,
				start + nsym - 1);
		return -EINVAL;
	}
	for (i = 0; i < nbytes; i++)
		out[i] = (uint8_t)(bits >> (16 - 8 * i));
	*outlen = nbytes;
	return 0;
}

#if defined(__x86_64__)
/*
 * Decode 32 symbols into 24 bytes per step while every byte is a symbol; returns how many
 * input bytes it decoded (a multiple of 32, at most n). The scalar loop takes over from
 * there, so errors are found and worded by one piece of code.
 * Per step: check every byte is a symbol with two nibble lookups (the high nibble names
 * a class: 2 for + and /, 3 for digits, 4 or 6 for A-O a-o, 5 or 7 for P-Z p-z, none for
 * the rest; the low nibble lists the classes it is valid in; a symbol is a byte whose two
 * lookups share a bit); add each byte's offset to its value (looked
 * up by high nibble, '/' moved to its own slot); pack pairs of 6-bit values into 12 bits
 * (maddubs), pairs of those into 24 (madd); pick the three low bytes of each 32-bit lane in
 * big-endian order, then the six used lanes side by side.
 */
__attribute__((target("avx2"))) static size_t
base64_decode_avx2(const uint8_t *s, size_t n, uint8_t *d)
{
	const __m256i roll = _mm256_setr_epi8(0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 16, 19, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
	const __m256i pick = _mm256_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1,
		-1, 2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
	const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
	/* Classes: 1 (+ /), 2 (digits), 4 (A-O a-o), 8 (P-Z p-z); 0 for any other high nibble. */
	const __m256i by_hi = _mm256_setr_epi8(0, 0, 1, 2, 4, 8, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		1, 2, 4, 8, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0);
	/* Low nibble 0: 2|8; 1-9: 2|4|8; A: 4|8; B and F: 1|4; C-E: 4. */
	const __m256i by_lo = _mm256_setr_epi8(10, 14, 14, 14, 14, 14, 14, 14, 14, 14, 12, 5, 4, 4,
		4, 5, 10, 14, 14, 14, 14, 14, 14, 14, 14, 14, 12, 5, 4, 4, 4, 5);
	const __m256i slash = _mm256_set1_epi8('/'), nib = _mm256_set1_epi8(0x0f);
	__m256i v, bad, hi, val, w;
	size_t i;

	for (i = 0; i + 32 <= n; i += 32) {
		v = _mm256_loadu_si256((const __m256i *)(s + i));
		hi = _mm256_and_si256(_mm256_srli_epi32(v, 4), nib);
		bad = _mm256_cmpeq_epi8(
			_mm256_and_si256(_mm256_shuffle_epi8(by_hi, hi),
				_mm256_shuffle_epi8(by_lo, _mm256_and_si256(v, nib))),
			_mm256_setzero_si256());
		if (_mm256_movemask_epi8(bad) != 0)
			break;
		hi = _mm256_add_epi8(hi, _mm256_cmpeq_epi8(v, slash)); /* '/': slot 1 */
		val = _mm256_add_epi8(v, _mm256_shuffle_epi8(roll, hi));
		w = _mm256_maddubs_epi16(val, _mm256_set1_epi32(0x01400140));
		w = _mm256_madd_epi16(w, _mm256_set1_epi32(0x00011000));
		w = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(w, pick), lanes);
		_mm_storeu_si128((__m128i *)d, _mm256_castsi256_si128(w));
		_mm_storel_epi64((__m128i *)(d + 16), _mm256_extracti128_si256(w, 1));
		d += 24;
	}
	return i;
}

/* The body's bytes decoded by the vector loop, when the CPU has one. */
static size_t
base64_decode_fast(const uint8_t *s, size_t n, uint8_t *d)
{
	return base64_vector() ? base64_decode_avx2(s, n, d) : 0;
}
#else
static size_t
base64_decode_fast(const uint8_t *s, size_t n, uint8_t *d)
{
	return 0;
}
#endif

/* Decode n characters strictly into out (base64_decoded_max(n) bytes); 0 or -EINVAL. */
int
base64_decode(const char *in, size_t n, void *out, size_t *outlen, char **cause)
{
	const uint8_t *s = (const uint8_t *)in;
	uint8_t *d = out, a, b, c, e;
	size_t rem = n % 4, body, i, j, tail;
	int r;

	*outlen = 0;
	if (rem == 1 && s[n - 1] != '=' && b64_values[s[n - 1]] == B64_BAD)
		return base64_bad_symbol(in, n - 1, cause);

	/* The last quad (or partial quad) may hold padding: it goes to the tail. */
	body = n - rem;
	if (rem == 0)
		body = body >= 4 ? body - 4 : 0;
	i = base64_decode_fast(s, body, d);
	d += i / 4 * 3;
	for (; i < body; i += 4) {
		a = b64_values[s[i]];
		b = b64_values[s[i + 1]];
		c = b64_values[s[i + 2]];
		e = b64_values[s[i + 3]];
		if ((a | b | c | e) & 0x80) {
			for (j = i; b64_values[s[j]] != B64_BAD; j++)
				;
			return base64_bad_symbol(in, j, cause);
		}
		d[0] = (uint8_t)(a << 2 | b >> 4);
		d[1] = (uint8_t)(b << 4 | c >> 2);
		d[2] = (uint8_t)(c << 6 | e);
		d += 3;
	}
	if ((r = base64_decode_tail(in, body, n, d, &tail, cause)) != 0)
		return r;
	*outlen = (size_t)(d - (uint8_t *)out) + tail;
	return 0;
}
