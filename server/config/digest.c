/*
 * SHA-256 and SHA-1 from OpenSSL's libcrypto, linked statically (the Debian package's
 * libcrypto.a): only its SHA objects come in, some 40 KB, with nothing to load or set up at
 * run time. The shared library cost 2-4 ms of dlopen and symbol binding per daemon start (it
 * was loaded on a thread of its own, which on two cores still ran against the client's
 * start-up), and EVP's first use reads openssl.cnf and sets up providers, 1-2 ms more; the
 * low-level SHA256_Init family (deprecated in OpenSSL 3, still shipped) needs neither.
 * HMAC-SHA256 is RFC 2104 over those, as OpenSSL's HMAC computes it.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <string.h>

#include <openssl/sha.h>

#include "digest.h"

#define DIGEST_BLOCK 64 /* SHA-256's block size, the HMAC key's padded length */

int
digest_sha256(const void *data, size_t len, unsigned char out[32])
{
	SHA256_CTX c;

	return SHA256_Init(&c) == 1 && SHA256_Update(&c, data, len) == 1 &&
			SHA256_Final(out, &c) == 1
		? 0
		: -1;
}

int
digest_sha256_hex(const void *data, size_t len, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[32];

	if (digest_sha256(data, len, md) != 0)
		return -1;
	for (unsigned int i = 0; i < 32; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
	return 0;
}

int
digest_sha1(const void *data, size_t len, unsigned char out[20])
{
	SHA_CTX c;

	return SHA1_Init(&c) == 1 && SHA1_Update(&c, data, len) == 1 && SHA1_Final(out, &c) == 1
		? 0
		: -1;
}

int
digest_hmac_sha256(
	const void *key, size_t keylen, const void *data, size_t len, unsigned char out[32])
{
	unsigned char k[DIGEST_BLOCK] = {0}, pad[DIGEST_BLOCK], inner[32];
	SHA256_CTX c;
	int ok;

	if (keylen > DIGEST_BLOCK) {
		if (digest_sha256(key, keylen, k) != 0)
			return -1;
	} else if (keylen > 0)
		memcpy(k, key, keylen);
	for (size_t i = 0; i < DIGEST_BLOCK; i++)
		pad[i] = k[i] ^ 0x36;
	ok = SHA256_Init(&c) == 1 && SHA256_Update(&c, pad, DIGEST_BLOCK) == 1 &&
		SHA256_Update(&c, data, len) == 1 && SHA256_Final(inner, &c) == 1;
	for (size_t i = 0; ok && i < DIGEST_BLOCK; i++)
		pad[i] = k[i] ^ 0x5c;
	ok = ok && SHA256_Init(&c) == 1 && SHA256_Update(&c, pad, DIGEST_BLOCK) == 1 &&
		SHA256_Update(&c, inner, sizeof(inner)) == 1 && SHA256_Final(out, &c) == 1;
	explicit_bzero(k, sizeof(k));
	explicit_bzero(pad, sizeof(pad));
	return ok ? 0 : -1;
}
