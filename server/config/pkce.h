/*
 * PKCE (RFC 7636, S256) and the state of an OAuth authorization-code flow, as upstream makes
 * them for its ChatGPT sign-in and its MCP servers: 64 random bytes of verifier, 32 of state,
 * each unpadded base64url; the challenge is the verifier's SHA-256, unpadded base64url.
 */
#ifndef PKCE_H
#define PKCE_H

#include <stddef.h>

struct pkce {
	char verifier[90], challenge[48], state[48];
};

/* Fill p from getrandom(2) and SHA-256; 0, or -1 (no randomness, no libcrypto). */
int pkce_new(struct pkce *p);
/* Wipe the secrets. */
void pkce_wipe(struct pkce *p);
/* n bytes as unpadded base64url into out (at least 4*(n+2)/3+1 bytes). */
void pkce_b64url(const unsigned char *in, size_t n, char *out);

#endif
