/*
 * SHA-256 from OpenSSL's libcrypto, loaded on first use: linking it would map and initialise
 * 1.4 MB of it at every start-up, for a digest only config/read computes.
 */
#include <dlfcn.h>
#include <stdio.h>

#include <openssl/evp.h>

#include "digest.h"

static void *digest_lib;
static int (*digest_fn)(
	const void *, size_t, unsigned char *, unsigned int *, const EVP_MD *, ENGINE *);
static const EVP_MD *(*digest_sha256_fn)(void);

/* Load libcrypto and resolve what we use, once; 0 or -1. */
static int
digest_load(void)
{
	void *f, *g;

	if (digest_lib != NULL)
		return 0;
	if ((digest_lib = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL)) == NULL)
		return -1;
	f = dlsym(digest_lib, "EVP_Digest");
	g = dlsym(digest_lib, "EVP_sha256");
	if (f == NULL || g == NULL)
		return -1;
	*(void **)&digest_fn = f;
	*(void **)&digest_sha256_fn = g;
	return 0;
}

int
digest_sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (digest_load() != 0 || digest_fn(data, len, md, &n, digest_sha256_fn(), NULL) != 1 ||
		n != 32)
		return -1;
	for (unsigned int i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	return 0;
}
