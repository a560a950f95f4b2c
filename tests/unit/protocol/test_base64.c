/*
 * Tests for protocol/base64.c: RFC 4648 vectors, round trips against a naive
 * bit-at-a-time reference, and strict decoding with the error order and
 * wording of upstream's Rust base64 crate (STANDARD engine).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "protocol/base64.h"
#include "tests/helpers/skip_note.h"

#define CANARY 0xa5

/* The reference: six bits at a time, read one bit at a time. */
static void
ref_encode(const uint8_t *in, size_t n, char *out)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t bit, nbits = n * 8, o = 0;
	unsigned v;
	int k;

	for (bit = 0; bit < nbits; bit += 6) {
		for (v = 0, k = 0; k < 6; k++) {
			v <<= 1;
			if (bit + k < nbits && (in[(bit + k) / 8] & (0x80 >> ((bit + k) % 8))))
				v |= 1;
		}
		out[o++] = abc[v];
	}
	while (o % 4 != 0)
		out[o++] = '=';
}

/*
 * Encode in, compare with want, and check nothing past the encoding was
 * written. The input is copied to a buffer of exactly n bytes, so the
 * sanitized build catches any read past its end.
 */
static void
check_encode(const void *in, size_t n, const char *want, size_t wantlen)
{
	size_t len = base64_encoded_len(n);
	char *out = malloc(len + 16);
	void *exact = malloc(n);

	assert_int_equal(len, wantlen);
	memcpy(exact, in, n);
	memset(out, CANARY, len + 16);
	base64_encode(exact, n, out);
	free(exact);
	assert_memory_equal(out, want, wantlen);
	for (size_t i = len; i < len + 16; i++)
		assert_int_equal((uint8_t)out[i], CANARY);
	free(out);
}

/* Decode s (copied to exactly n bytes), which must succeed with want. */
static void
check_decode(const char *s, size_t n, const void *want, size_t wantlen)
{
	size_t max = base64_decoded_max(n), outlen = 12345;
	uint8_t *out = malloc(max + 16);
	char *exact = malloc(n), *cause = NULL;

	memcpy(exact, s, n);
	memset(out, CANARY, max + 16);
	assert_true(wantlen <= max);
	if (base64_decode(exact, n, out, &outlen, &cause) != 0)
		fail_msg("decode '%.*s': %s", (int)n, s, cause);
	free(exact);
	assert_null(cause);
	assert_int_equal(outlen, wantlen);
	assert_memory_equal(out, want, wantlen);
	for (size_t i = wantlen; i < max + 16; i++)
		assert_int_equal(out[i], CANARY);
	free(out);
}

/* Decode the n bytes of str (copied exactly), which must fail with exactly the message want. */
static void
check_error_n(const char *str, size_t n, const char *want)
{
	size_t outlen;
	uint8_t *out = malloc(base64_decoded_max(n) + 1);
	char *s = malloc(n + 1), *cause = NULL;

	memcpy(s, str, n);
	assert_int_equal(base64_decode(s, n, out, &outlen, &cause), -EINVAL);
	assert_non_null(cause);
	if (strcmp(cause, want) != 0)
		fail_msg("decode '%.*s': got '%s', want '%s'", (int)n, str, cause, want);
	free(cause);
	/* A NULL cause is allowed. */
	assert_int_equal(base64_decode(s, n, out, &outlen, NULL), -EINVAL);
	free(out);
	free(s);
}

/* The same for a NUL-terminated string. */
static void
check_error(const char *str, const char *want)
{
	check_error_n(str, strlen(str), want);
}

static void
test_rfc4648_vectors(void **state)
{
	static const char *vec[][2] = {
		{"", ""},
		{"f", "Zg=="},
		{"fo", "Zm8="},
		{"foo", "Zm9v"},
		{"foob", "Zm9vYg=="},
		{"fooba", "Zm9vYmE="},
		{"foobar", "Zm9vYmFy"},
	};
	size_t i;

	for (i = 0; i < sizeof vec / sizeof vec[0]; i++) {
		check_encode(vec[i][0], strlen(vec[i][0]), vec[i][1], strlen(vec[i][1]));
		check_decode(vec[i][1], strlen(vec[i][1]), vec[i][0], strlen(vec[i][0]));
	}
	/* Every symbol, including the last two of the standard alphabet. */
	check_encode("\xfb\xff\xbf", 3, "+/+/", 4);
	check_decode("+/+/", 4, "\xfb\xff\xbf", 3);
	check_encode("\x00\x10\x83\x10\x51\x87\x20\x92\x8b\x30\xd3\x8f\x41\x14\x93\x51\x55\x97"
		     "\x61\x96\x9b\x71\xd7\x9f\x82\x18\xa3\x92\x59\xa7\xa2\x9a\xab\xb2\xdb\xaf"
		     "\xc3\x1c\xb3\xd3\x5d\xb7\xe3\x9e\xbb\xf3\xdf\xbf",
		48, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 64);
}

static void
test_lengths(void **state)
{
	assert_int_equal(base64_encoded_len(0), 0);
	assert_int_equal(base64_encoded_len(1), 4);
	assert_int_equal(base64_encoded_len(3), 4);
	assert_int_equal(base64_encoded_len(4), 8);
	assert_int_equal(base64_encoded_len(65536), 87384);
	assert_int_equal(base64_decoded_max(0), 0);
	assert_int_equal(base64_decoded_max(1), 3);
	assert_int_equal(base64_decoded_max(4), 3);
	assert_int_equal(base64_decoded_max(5), 6);
	assert_int_equal(base64_decoded_max(87384), 65538);
}

static void
test_roundtrip_every_length(void **state)
{
	uint8_t buf[4096 + 8];
	char want[8192];
	size_t n, i, off;
	int pattern;

	srand(42);
	for (pattern = 0; pattern < 4; pattern++) {
		for (i = 0; i < sizeof buf; i++)
			buf[i] = pattern == 0  ? (uint8_t)rand()
				: pattern == 1 ? 0xff
				: pattern == 2 ? 0
					       : (uint8_t)i;
		/* Every length 0..64 at every alignment: both the 6-byte and 3-byte loops and
		 * tails. */
		for (n = 0; n <= 64; n++) {
			for (off = 0; off < 8; off++) {
				ref_encode(buf + off, n, want);
				check_encode(buf + off, n, want, base64_encoded_len(n));
				check_decode(want, base64_encoded_len(n), buf + off, n);
			}
		}
		for (n = 65; n <= 4096; n += n / 3) {
			ref_encode(buf + 1, n, want);
			check_encode(buf + 1, n, want, base64_encoded_len(n));
			check_decode(want, base64_encoded_len(n), buf + 1, n);
		}
	}
}

/*
 * The encoder (the AVX2 body where the CPU has it) against the portable loop and the
 * bit-at-a-time reference: every length 0..200 at every alignment 0..31, on bytes that
 * reach every symbol, and on random buffers. The unit-scalar-base64 suite runs this again
 * with APP_SERVER_NO_AVX2=1, where both sides are the portable loop.
 */
static void
test_encode_matches_scalar(void **state)
{
	uint8_t buf[4096 + 32];
	char want[8192], got[8192 + 16], ref[8192];
	size_t n, off, i, len;
	int pattern, round;

	print_message("vector encoder: %s\n", base64_vector() ? "on (AVX2)" : "off");
	srand(7);
	for (pattern = 0; pattern < 5; pattern++) {
		for (i = 0; i < sizeof buf; i++)
			buf[i] = pattern == 0  ? (uint8_t)rand()
				: pattern == 1 ? 0xff
				: pattern == 2 ? 0
				: pattern == 3 ? (uint8_t)i
					       : (uint8_t)(i * 0x5b + (i >> 3));
		for (n = 0; n <= 200; n++) {
			for (off = 0; off < 32; off++) {
				len = base64_encoded_len(n);
				base64_encode_scalar(buf + off, n, want);
				ref_encode(buf + off, n, ref);
				assert_memory_equal(want, ref, len);
				check_encode(buf + off, n, want, len);
			}
		}
	}
	/* Random buffers of random lengths, up to a full 4 KiB. */
	for (round = 0; round < 2000; round++) {
		n = (size_t)rand() % 4097;
		off = (size_t)rand() % 32;
		for (i = 0; i < n; i++)
			buf[off + i] = (uint8_t)rand();
		len = base64_encoded_len(n);
		base64_encode_scalar(buf + off, n, want);
		memset(got, CANARY, len + 16);
		base64_encode(buf + off, n, got);
		assert_memory_equal(got, want, len);
		for (i = len; i < len + 16; i++)
			assert_int_equal((uint8_t)got[i], CANARY);
	}
	/* Each 6-bit value at each of the 32 positions of a vector step. */
	for (i = 0; i < 64 * 32; i++) {
		uint8_t in[48] = {0};
		size_t bit = (i % 32) * 6;
		unsigned v = (unsigned)(i / 32), k;

		for (k = 0; k < 6; k++)
			if (v & (0x20u >> k))
				in[(bit + k) / 8] |= (uint8_t)(0x80 >> ((bit + k) % 8));
		ref_encode(in, sizeof in, ref);
		check_encode(in, sizeof in, ref, 64);
	}
}

/* With APP_SERVER_NO_AVX2 set the vector bodies are off, as the scalar suite relies on. */
static void
test_vector_switch(void **state)
{
	if (getenv("APP_SERVER_NO_AVX2") != NULL)
		assert_int_equal(base64_vector(), 0);
#if defined(__x86_64__)
	else if (__builtin_cpu_supports("avx2"))
		assert_int_equal(base64_vector(), 1);
#endif
	else
		skip_test("this CPU has no AVX2: only the portable encoder runs");
}

static void
test_decode_invalid_symbols(void **state)
{
	check_error("!", "Invalid symbol 33, offset 0.");
	check_error("!!!!", "Invalid symbol 33, offset 0.");
	check_error("Zm!v", "Invalid symbol 33, offset 2.");
	check_error("Zm9v!A==", "Invalid symbol 33, offset 4.");
	check_error("Zm9vYmFy Zm9v", "Invalid symbol 32, offset 8.");
	check_error("Zm9v\x80m9v", "Invalid symbol 128, offset 4.");
	check_error("\xff", "Invalid symbol 255, offset 0.");
	/* The URL-safe alphabet is not the standard one. */
	check_error("-_-_", "Invalid symbol 45, offset 0.");
	check_error("Zm9v_w==", "Invalid symbol 95, offset 4.");
	/* A trailing newline (length 4k+1) is reported before anything else. */
	check_error("Zm9vYmFy\n", "Invalid symbol 10, offset 8.");
	check_error("!!!!\n", "Invalid symbol 10, offset 4.");
	check_error("Zm9v\r\n", "Invalid symbol 13, offset 4.");
	/* Within the body the first bad byte wins, left to right. */
	check_error("Zm9vY!F?Zm9v", "Invalid symbol 33, offset 5.");
	check_error(
		"Zm9vYmFyZm9vYmFyZm9vYmFyZm9vYmFyZm9v!m9vYmFy", "Invalid symbol 33, offset 36.");
}

/*
 * A bad byte at every offset of a long body (where the vector decoder runs on x86-64), for
 * bytes just outside each symbol range, '=' and bytes with the high bit set: the same
 * "Invalid symbol" as the byte-at-a-time loop, and nothing decoded past it matters.
 */
static void
test_decode_invalid_everywhere(void **state)
{
	static const unsigned char bad[] = {
		'*', ',', '.', ':', '@', '[', '`', '{', '=', 0, ' ', '\n', 0x7f, 0x80, 0xc3, 0xff};
	uint8_t data[240];
	char text[320 + 1], want[64];
	size_t n, p, k;

	for (k = 0; k < sizeof data; k++)
		data[k] = (uint8_t)(k * 97 + 13);
	ref_encode(data, sizeof data, text);
	n = base64_encoded_len(sizeof data);
	for (p = 0; p + 4 < n; p++) {
		for (k = 0; k < sizeof bad; k++) {
			char saved = text[p];

			text[p] = (char)bad[k];
			snprintf(want, sizeof want, "Invalid symbol %u, offset %zu.", bad[k], p);
			check_error_n(text, n, want);
			text[p] = saved;
		}
	}
	check_decode(text, n, data, sizeof data);
}

/*
 * Every byte value at every position of the first vector step and of the one after it: a
 * symbol decodes as the byte-at-a-time loop decodes it, anything else is its "Invalid symbol".
 */
static void
test_decode_every_byte(void **state)
{
	static const char abc[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char text[96], want[64];
	uint8_t out[72], ref[72];
	size_t p, outlen, reflen, k;
	unsigned c;
	const char *sym;

	for (k = 0; k < sizeof text; k++)
		text[k] = abc[(k * 7 + 3) % 64];
	for (p = 0; p < 64; p++) {
		for (c = 0; c < 256; c++) {
			char saved = text[p];

			text[p] = (char)c;
			sym = c != 0 ? strchr(abc, (int)c) : NULL;
			if (sym == NULL) {
				snprintf(want, sizeof want, "Invalid symbol %u, offset %zu.", c, p);
				check_error_n(text, sizeof text, want);
			} else {
				assert_int_equal(
					base64_decode(text, sizeof text, out, &outlen, NULL), 0);
				assert_int_equal(outlen, 72);
				for (reflen = 0, k = 0; k < sizeof text; k += 4) {
					unsigned a = (unsigned)(strchr(abc, text[k]) - abc),
						 b = (unsigned)(strchr(abc, text[k + 1]) - abc),
						 d = (unsigned)(strchr(abc, text[k + 2]) - abc),
						 e = (unsigned)(strchr(abc, text[k + 3]) - abc);

					ref[reflen++] = (uint8_t)(a << 2 | b >> 4);
					ref[reflen++] = (uint8_t)(b << 4 | d >> 2);
					ref[reflen++] = (uint8_t)(d << 6 | e);
				}
				assert_memory_equal(out, ref, 72);
			}
			text[p] = saved;
		}
	}
}

static void
test_decode_padding_rules(void **state)
{
	/* Canonical padding is required. */
	check_error("Zg", "Invalid padding");
	check_error("Zg=", "Invalid padding");
	check_error("Zm8", "Invalid padding");
	check_error("Zm9vYg", "Invalid padding");
	check_error("Zm9vYmE", "Invalid padding");
	/* '=' too early in the last quad, too many, or in the middle. */
	check_error("Z===", "Invalid symbol 61, offset 1.");
	check_error("====", "Invalid symbol 61, offset 0.");
	check_error("=", "Invalid symbol 61, offset 0.");
	check_error("Zg=x", "Invalid symbol 61, offset 2.");
	check_error("Zg=a=", "Invalid symbol 61, offset 2.");
	check_error("Zm8==", "Invalid symbol 61, offset 3.");
	check_error("Zg==Zg==", "Invalid symbol 61, offset 2.");
	check_error("Zm9vZ===", "Invalid symbol 61, offset 5.");
	/* A lone symbol cannot make a byte. */
	check_error("Z", "Invalid input length: 1");
	check_error("Zm9vZ", "Invalid input length: 5");
	/* Unused low bits of the last symbol must be zero. */
	check_error("Zh==", "Invalid last symbol 104, offset 1.");
	check_error("Zm9=", "Invalid last symbol 57, offset 2.");
	check_error("Zm9vYh==", "Invalid last symbol 104, offset 5.");
	check_decode("Zg==", 4, "f", 1);
	check_decode("Zm8=", 4, "fo", 2);
	check_decode("", 0, "", 0);
}

static void
test_encode_speed(void **state)
{
	size_t n = 64 * 1024, i, iters = 4000;
	uint8_t *in = malloc(n);
	char *out = malloc(base64_encoded_len(n));
	struct timespec t0, t1;
	double s;

	for (i = 0; i < n; i++)
		in[i] = (uint8_t)(i * 131 + 7);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < iters; i++) {
		in[i % n]++;
		base64_encode(in, n, out);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	/* Reported, not asserted: timings are not tests. */
	print_message("base64_encode: %.0f MB/s of input (64 KiB chunks)\n",
		(double)n * (double)iters / s / 1e6);
	free(in);
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc4648_vectors),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_roundtrip_every_length),
		cmocka_unit_test(test_encode_matches_scalar),
		cmocka_unit_test(test_vector_switch),
		cmocka_unit_test(test_decode_invalid_symbols),
		cmocka_unit_test(test_decode_invalid_everywhere),
		cmocka_unit_test(test_decode_every_byte),
		cmocka_unit_test(test_decode_padding_rules),
		cmocka_unit_test(test_encode_speed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
