/* SHA-256, for content fingerprints such as config layer versions ("sha256:<hex>"). */
#ifndef SHA256_H
#define SHA256_H

#include <stddef.h>

/* The SHA-256 of len bytes at data, as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t len, char out[65]);

#endif
