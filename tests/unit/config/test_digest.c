/*
 * Tests for server/config/digest.c, our SHA-256: FIPS 180-4's examples and every padding case
 * (a tail of 55, 56, 63 and 64 bytes: the length in the same block or the next), each against
 * the digest Python's hashlib gives for the same bytes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "config/digest.h"

/* n bytes of a fixed pattern, (i * 7 + 3) mod 256. */
static unsigned char *
pattern(size_t n)
{
	unsigned char *p = malloc(n + 1);

	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 7 + 3) % 256);
	return p;
}

static void
test_known_digests(void **state)
{
	static const struct {
		size_t n;
		const char *hex;
	} cases[] = {
		{0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{3, "6ab0dba1f4f1dfbb37b4f9eeb092c09fca4900ad32bdcd147d8dde35d6c87c35"},
		{55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b"},
		{56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27"},
		{63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055"},
		{64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241"},
		{65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e"},
		{119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e"},
		{120, "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5"},
		{1000, "1e9bc38cbf860b9ec31918b065f9b52476c549a782e0e7990bed8ce3868d2371"},
	};
	char hex[65];

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		unsigned char *p = pattern(cases[i].n);

		assert_int_equal(digest_sha256_hex(p, cases[i].n, hex), 0);
		assert_string_equal(hex, cases[i].hex);
		free(p);
	}
	assert_int_equal(digest_sha256_hex("abc", 3, hex), 0);
	assert_string_equal(
		hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void
test_million_a(void **state)
{
	char *a = malloc(1000000), hex[65];

	(void)state;
	memset(a, 'a', 1000000);
	assert_int_equal(digest_sha256_hex(a, 1000000, hex), 0);
	assert_string_equal(
		hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	free(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_digests),
		cmocka_unit_test(test_million_a),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
