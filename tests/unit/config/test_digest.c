/*
 * Tests for server/config/digest.c: SHA-256 and SHA-1 (FIPS 180-4's examples) and HMAC-SHA256
 * (RFC 4231's test cases: a short key, a key shorter than the data, a key of exactly one block,
 * a key longer than a block, which is hashed first).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "config/digest.h"

static void
hex(const unsigned char *md, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void
test_sha256(void **state)
{
	char h[65];

	assert_int_equal(digest_sha256_hex("abc", 3, h), 0);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(digest_sha256_hex("", 0, h), 0);
	assert_string_equal(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_int_equal(digest_sha256_hex(
				 "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, h),
		0);
	assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void
test_sha1(void **state)
{
	unsigned char md[20];
	char h[41];

	assert_int_equal(digest_sha1("abc", 3, md), 0);
	hex(md, 20, h);
	assert_string_equal(h, "a9993e364706816aba3e25717850c26c9cd0d89d");
	/* RFC 6455's handshake example */
	assert_int_equal(
		digest_sha1("dGhlIHNhbXBsZSBub25jZQ==258EAFA5-E914-47DA-95CA-C5AB0DC85B11", 60, md),
		0);
	hex(md, 20, h);
	assert_string_equal(h, "b37a4f2cc0624f1690f64606cf385945b2bec4ea");
}

static void
hmac_case(const void *key, size_t keylen, const char *data, const char *want)
{
	unsigned char md[32];
	char h[65];

	assert_int_equal(digest_hmac_sha256(key, keylen, data, strlen(data), md), 0);
	hex(md, 32, h);
	assert_string_equal(h, want);
}

static void
test_hmac_sha256(void **state)
{
	unsigned char k20[20], k131[131], k64[64];

	memset(k20, 0x0b, sizeof(k20));
	hmac_case(k20, sizeof(k20), "Hi There",
		"b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
	hmac_case("Jefe", 4, "what do ya want for nothing?",
		"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
	memset(k131, 0xaa, sizeof(k131));
	hmac_case(k131, sizeof(k131), "Test Using Larger Than Block-Size Key - Hash Key First",
		"60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
	/* a key of exactly one block is used as it is (the value from Python's hmac module) */
	memset(k64, 0x01, sizeof(k64));
	hmac_case(k64, sizeof(k64), "one block",
		"e6c78cffafd423ad2ea10fd033a90b9f4b1a702faf4474b45233d7dea29dfa54");
	hmac_case("", 0, "", "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_sha1),
		cmocka_unit_test(test_hmac_sha256),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
