/*
 * SHA-256 and SHA-1 from OpenSSL's libcrypto, loaded at run time: linking it would map and
 * initialise 1.4 MB of it before main, for digests only config/read (SHA-256) and the WebSocket
 * handshake (SHA-1, RFC 6455's Sec-WebSocket-Accept) compute. The daemon loads it on a
 * thread of its own at start-up (digest_preload) while the client starts and says hello, so
 * that the first config/read of a client's start-up does not wait 2-4 ms for it on the loop.
 * SHA-256 goes through the SHA256_Init family where the library has it: EVP's first use reads
 * openssl.cnf and sets up providers and method tables, another 1-2 ms of that config/read.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "digest.h"

static void *digest_lib;
static int (*digest_fn)(
	const void *, size_t, unsigned char *, unsigned int *, const EVP_MD *, ENGINE *);
static const EVP_MD *(*digest_sha256_fn)(void);
static const EVP_MD *(*digest_sha1_fn)(void);
static unsigned char *(*digest_hmac_fn)(const EVP_MD *, const void *, int, const unsigned char *,
	size_t, unsigned char *, unsigned int *);

/* OpenSSL 3's low-level SHA-256 (deprecated, still exported): no provider set-up. */
static int (*sha256_init_fn)(SHA256_CTX *);
static int (*sha256_update_fn)(SHA256_CTX *, const void *, size_t);
static int (*sha256_final_fn)(unsigned char *, SHA256_CTX *);

static pthread_once_t digest_once = PTHREAD_ONCE_INIT;
static int digest_ok;

/* Load libcrypto and resolve what we use; digest_ok tells. Run once (pthread_once). */
static void
digest_load_once(void)
{
	void *f, *g, *h;

	if ((digest_lib = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL)) == NULL)
		return;
	f = dlsym(digest_lib, "EVP_Digest");
	g = dlsym(digest_lib, "EVP_sha256");
	h = dlsym(digest_lib, "EVP_sha1");
	if (f == NULL || g == NULL || h == NULL ||
		(*(void **)&digest_hmac_fn = dlsym(digest_lib, "HMAC")) == NULL)
		return;
	*(void **)&digest_fn = f;
	*(void **)&digest_sha256_fn = g;
	*(void **)&digest_sha1_fn = h;
	f = dlsym(digest_lib, "SHA256_Init");
	g = dlsym(digest_lib, "SHA256_Update");
	h = dlsym(digest_lib, "SHA256_Final");
	if (f != NULL && g != NULL && h != NULL) {
		*(void **)&sha256_init_fn = f;
		*(void **)&sha256_update_fn = g;
		*(void **)&sha256_final_fn = h;
	}
	digest_ok = 1;
}

static int
digest_load(void)
{
	pthread_once(&digest_once, digest_load_once);
	return digest_ok ? 0 : -1;
}

/* SHA-256 of data into out; 0 or -1. */
static int
digest_sha256_md(const void *data, size_t len, unsigned char out[32])
{
	unsigned int n = 0;
	SHA256_CTX c;

	if (digest_load() != 0)
		return -1;
	if (sha256_init_fn != NULL)
		return sha256_init_fn(&c) == 1 && sha256_update_fn(&c, data, len) == 1 &&
				sha256_final_fn(out, &c) == 1
			? 0
			: -1;
	return digest_fn(data, len, out, &n, digest_sha256_fn(), NULL) == 1 && n == 32 ? 0 : -1;
}

static void *
digest_preload_run(void *arg)
{
	(void)arg;
	(void)digest_load();
	return NULL;
}

void
digest_preload(void)
{
	pthread_attr_t attr;
	pthread_t t;

	if (pthread_attr_init(&attr) != 0)
		return;
	if (pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0)
		(void)pthread_create(&t, &attr, digest_preload_run, NULL); /* else: on first use */
	pthread_attr_destroy(&attr);
}

int
digest_sha256_hex(const void *data, size_t len, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[32];

	if (digest_sha256_md(data, len, md) != 0)
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
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (digest_load() != 0 || digest_fn(data, len, md, &n, digest_sha1_fn(), NULL) != 1 ||
		n != 20)
		return -1;
	memcpy(out, md, 20);
	return 0;
}

int
digest_sha256(const void *data, size_t len, unsigned char out[32])
{
	return digest_sha256_md(data, len, out);
}

int
digest_hmac_sha256(
	const void *key, size_t keylen, const void *data, size_t len, unsigned char out[32])
{
	unsigned int n = 0;

	if (keylen > 0x7fffffff || digest_load() != 0)
		return -1;
	return digest_hmac_fn(digest_sha256_fn(), key, (int)keylen, data, len, out, &n) != NULL &&
			n == 32
		? 0
		: -1;
}
