/* PKCE and state for OAuth flows (pkce.h); the ChatGPT sign-in and MCP servers' logins. */
#include <sys/random.h>

#include <string.h>

#include "digest.h"
#include "pkce.h"
#include "protocol/base64.h"

void
pkce_b64url(const unsigned char *in, size_t n, char *out)
{
	char *p;

	base64_encode(in, n, out);
	out[base64_encoded_len(n)] = '\0';
	for (p = out; *p != '\0' && *p != '='; p++)
		*p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
	*p = '\0';
}

int
pkce_new(struct pkce *p)
{
	unsigned char raw[64], md[32];
	int r = -1;

	if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
		goto out;
	pkce_b64url(raw, sizeof raw, p->verifier);
	if (digest_sha256(p->verifier, strlen(p->verifier), md) != 0)
		goto out;
	pkce_b64url(md, sizeof md, p->challenge);
	if (getrandom(raw, 32, 0) != 32)
		goto out;
	pkce_b64url(raw, 32, p->state);
	r = 0;
out:
	explicit_bzero(raw, sizeof raw);
	return r;
}

void
pkce_wipe(struct pkce *p)
{
	explicit_bzero(p, sizeof *p);
}
