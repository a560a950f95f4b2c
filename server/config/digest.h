/* Content fingerprints (config layer versions, "sha256:<hex>") and the WebSocket handshake's SHA-1.
 */
#ifndef DIGEST_H
#define DIGEST_H

#include <stddef.h>

/* The SHA-256 of len bytes as 64 lowercase hex digits and a NUL; 0; -1 on failure. */
int digest_sha256_hex(const void *data, size_t len, char out[65]);

/* The SHA-1 of len bytes (RFC 6455's Sec-WebSocket-Accept); 0; -1 on failure. */
int digest_sha1(const void *data, size_t len, unsigned char out[20]);

/* The raw SHA-256 of len bytes (WebSocket capability tokens); 0; -1 on failure. */
int digest_sha256(const void *data, size_t len, unsigned char out[32]);
/* HMAC-SHA256 (WebSocket signed bearer tokens, JWT HS256); 0; -1 on failure. */
int digest_hmac_sha256(
	const void *key, size_t keylen, const void *data, size_t len, unsigned char out[32]);

#endif
