/*
 * Base64 (RFC 4648, standard alphabet, '=' padding). The encoder is on the hot
 * path of streaming child output; the decoder is strict and reports errors in
 * the wording of upstream's Rust base64 crate (STANDARD engine), e.g.
 * "Invalid symbol 33, offset 0.", "Invalid padding",
 * "Invalid last symbol 104, offset 1.", "Invalid input length: 1".
 */
#ifndef BASE64_H
#define BASE64_H

#include <stddef.h>

/* Length of the encoding of n bytes, without a terminating NUL. */
size_t base64_encoded_len(size_t n);
/* Encode n bytes into out (base64_encoded_len(n) bytes; no NUL is written). */
void base64_encode(const void *in, size_t n, char *out);
/* The same without the vector body: the reference the vector path is tested against. */
void base64_encode_scalar(const void *in, size_t n, char *out);
/* 1 when the AVX2 bodies run (the CPU has AVX2 and APP_SERVER_NO_AVX2 is unset), else 0. */
int base64_vector(void);
/* Upper bound of the decoded size of n input characters. */
size_t base64_decoded_max(size_t n);
/*
 * Decode n characters into out (base64_decoded_max(n) bytes) and set *outlen.
 * Returns 0, or -EINVAL with a heap message in *cause (if cause is not NULL).
 */
int base64_decode(const char *in, size_t n, void *out, size_t *outlen, char **cause);

#endif
