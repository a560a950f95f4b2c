/*
 * WebSocket listener auth as upstream 0.169's `--ws-auth`: a capability token (the SHA-256 of
 * the bearer token compared in constant time with the token file's, or --ws-token-sha256) or a
 * signed bearer token (a JWT, HS256 with a shared secret of at least 32 bytes; exp, nbf, iss,
 * aud checked with a clock skew). Secrets are never logged; the answers are upstream's words.
 */
#ifndef WS_AUTH_H
#define WS_AUTH_H

#include <stddef.h>

enum ws_auth_mode { WS_AUTH_NONE, WS_AUTH_CAPABILITY, WS_AUTH_SIGNED };

/* The --ws-* options as given (borrowed strings), before ws_auth_setup checks them. */
struct ws_auth_args {
	const char *mode, *token_file, *token_sha256, *secret_file, *issuer, *audience, *skew;
};

/* The crypto it needs (config/digest.c has them: transport/ may not include config/). */
struct ws_auth_crypto {
	int (*sha256)(const void *data, size_t len, unsigned char out[32]);
	int (*hmac_sha256)(const void *key, size_t keylen, const void *data, size_t len,
		unsigned char out[32]);
};

struct ws_auth {
	enum ws_auth_mode mode;
	unsigned char token_sha256[32];
	unsigned char *secret; /* owned */
	size_t secret_len;
	char *issuer, *audience; /* owned, NULL when not required */
	long long skew;		 /* seconds */
	struct ws_auth_crypto crypto;
};

/*
 * Record one --ws-* option (name with its dashes); 0, or -1 with clap's error text in *cause
 * (exit 2: an unknown mode, a skew that is not a number).
 */
int ws_auth_arg(struct ws_auth_args *a, const char *name, const char *value, char **cause);
/*
 * Check the options together and load the secret as upstream does; 0, or -1 with upstream's
 * message in *cause (exit 1). a->mode NULL and no other option: no auth.
 */
int ws_auth_setup(struct ws_auth *auth, const struct ws_auth_args *a,
	const struct ws_auth_crypto *crypto, char **cause);
void ws_auth_clear(struct ws_auth *auth);

/*
 * Whether an upgrade with this Authorization header value (NULL: none) may go on: NULL, or
 * the 401 text upstream answers ("missing websocket bearer token", ...). now: Unix seconds.
 */
const char *ws_auth_check(const struct ws_auth *auth, const char *authorization, long long now);

#endif
