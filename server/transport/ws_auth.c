/*
 * `--ws-auth` (ws_auth.h). The option checks and their order, the messages, the 32-byte floor
 * of a shared secret and the 30 s default skew are upstream 0.169's (recorded against its
 * binary, docs/transports.md). Comparisons of secrets run in constant time; nothing here logs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>

#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "ws_auth.h"

#define WS_AUTH_SKEW_DEFAULT 30
#define WS_AUTH_SECRET_MIN   32
#define WS_AUTH_FILE_MAX     (1 << 20)
#define WS_AUTH_JWT_MAX	     (64 * 1024)

int
ws_auth_arg(struct ws_auth_args *a, const char *name, const char *value, char **cause)
{
	char *end;

	if (strcmp(name, "--ws-auth") == 0) {
		if (strcmp(value, "capability-token") != 0 &&
			strcmp(value, "signed-bearer-token") != 0) {
			*cause = xasprintf(
				"error: invalid value '%s' for '--ws-auth <MODE>'\n  [possible "
				"values: capability-token, signed-bearer-token]",
				value);
			return -1;
		}
		a->mode = value;
	} else if (strcmp(name, "--ws-token-file") == 0)
		a->token_file = value;
	else if (strcmp(name, "--ws-token-sha256") == 0)
		a->token_sha256 = value;
	else if (strcmp(name, "--ws-shared-secret-file") == 0)
		a->secret_file = value;
	else if (strcmp(name, "--ws-issuer") == 0)
		a->issuer = value;
	else if (strcmp(name, "--ws-audience") == 0)
		a->audience = value;
	else if (strcmp(name, "--ws-max-clock-skew-seconds") == 0) {
		errno = 0;
		(void)strtoull(value, &end, 10);
		if (*value < '0' || *value > '9' || *end != '\0' || errno != 0) {
			*cause = xasprintf(
				"error: invalid value '%s' for '--ws-max-clock-skew-seconds "
				"<SECONDS>': invalid digit found in string",
				value);
			return -1;
		}
		a->skew = value;
	}
	return 0;
}

/* A secret file's text, trimmed as upstream trims it; NULL with upstream's message. */
static char *
ws_auth_read(const char *path, size_t *len, char **cause)
{
	char *abs = NULL, cwd[4096], *p, *s, *e;
	FILE *f;
	size_t n;

	if (path[0] != '/' && getcwd(cwd, sizeof cwd) != NULL)
		path = abs = xasprintf("%s/%s", cwd, path);
	if ((f = fopen(path, "re")) == NULL) {
		*cause = xasprintf("failed to read websocket auth secret %s: %s (os error %d)",
			path, strerror(errno), errno);
		free(abs);
		return NULL;
	}
	p = xmalloc(WS_AUTH_FILE_MAX + 1);
	n = fread(p, 1, WS_AUTH_FILE_MAX, f);
	fclose(f);
	p[n] = '\0';
	for (s = p; *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'; s++)
		;
	for (e = p + n; e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r');)
		e--;
	if (e == s) {
		*cause = xasprintf("websocket auth secret %s must not be empty", path);
		free(p);
		free(abs);
		return NULL;
	}
	memmove(p, s, (size_t)(e - s));
	p[e - s] = '\0';
	*len = (size_t)(e - s);
	free(abs);
	return p;
}

static int
ws_auth_hex(const char *hex, unsigned char out[32])
{
	unsigned v;

	if (strlen(hex) != 64)
		return -1;
	for (int i = 0; i < 32; i++) {
		if (sscanf(hex + 2 * i, "%2x", &v) != 1 ||
			strchr("0123456789abcdefABCDEF", hex[2 * i]) == NULL ||
			strchr("0123456789abcdefABCDEF", hex[2 * i + 1]) == NULL)
			return -1;
		out[i] = (unsigned char)v;
	}
	return 0;
}

/* Upstream's checks of the options together, in its order. */
static const char *
ws_auth_args_error(const struct ws_auth_args *a)
{
	int signed_only = a->secret_file != NULL || a->issuer != NULL || a->audience != NULL ||
		a->skew != NULL;

	if (a->mode == NULL)
		return a->token_file != NULL || a->token_sha256 != NULL || signed_only
			? "websocket auth flags require `--ws-auth capability-token` or `--ws-auth "
			  "signed-bearer-token`"
			: NULL;
	if (strcmp(a->mode, "capability-token") == 0) {
		if (signed_only)
			return "`--ws-shared-secret-file`, `--ws-issuer`, `--ws-audience`, and "
			       "`--ws-max-clock-skew-seconds` require `--ws-auth signed-bearer-token`";
		if (a->token_file != NULL && a->token_sha256 != NULL)
			return "`--ws-token-file` and `--ws-token-sha256` are mutually exclusive";
		if (a->token_file == NULL && a->token_sha256 == NULL)
			return "`--ws-token-file` or `--ws-token-sha256` is required when `--ws-auth "
			       "capability-token` is set";
		return NULL;
	}
	if (a->token_file != NULL || a->token_sha256 != NULL)
		return "`--ws-token-file` and `--ws-token-sha256` require `--ws-auth "
		       "capability-token`, not `signed-bearer-token`";
	if (a->secret_file == NULL)
		return "`--ws-shared-secret-file` is required when `--ws-auth signed-bearer-token` is "
		       "set";
	return NULL;
}

/* An optional string option as upstream normalizes it: trimmed, empty means none. */
static char *
ws_auth_trimmed(const char *v)
{
	const char *e;

	if (v == NULL)
		return NULL;
	while (*v == ' ' || *v == '\t')
		v++;
	for (e = v + strlen(v); e > v && (e[-1] == ' ' || e[-1] == '\t');)
		e--;
	return e > v ? xasprintf("%.*s", (int)(e - v), v) : NULL;
}

int
ws_auth_setup(struct ws_auth *auth, const struct ws_auth_args *a,
	const struct ws_auth_crypto *crypto, char **cause)
{
	const char *err = ws_auth_args_error(a);
	char *text;
	size_t len = 0;

	memset(auth, 0, sizeof *auth);
	auth->crypto = *crypto;
	if (err != NULL) {
		*cause = xstrdup(err);
		return -1;
	}
	if (a->mode == NULL)
		return 0;
	if (strcmp(a->mode, "capability-token") == 0) {
		auth->mode = WS_AUTH_CAPABILITY;
		if (a->token_sha256 != NULL) {
			if (ws_auth_hex(a->token_sha256, auth->token_sha256) != 0) {
				*cause = xstrdup(
					"--ws-token-sha256 must be a 64-character hex SHA-256 digest");
				return -1;
			}
			return 0;
		}
		if ((text = ws_auth_read(a->token_file, &len, cause)) == NULL)
			return -1;
		err = crypto->sha256(text, len, auth->token_sha256) != 0
			? "libcrypto is not available"
			: NULL;
		explicit_bzero(text, len);
		free(text);
		if (err != NULL)
			*cause = xstrdup(err);
		return err != NULL ? -1 : 0;
	}
	auth->mode = WS_AUTH_SIGNED;
	if ((text = ws_auth_read(a->secret_file, &len, cause)) == NULL)
		return -1;
	if (len < WS_AUTH_SECRET_MIN) {
		*cause = xasprintf("signed websocket bearer secret %s must be at least %d bytes",
			a->secret_file, WS_AUTH_SECRET_MIN);
		explicit_bzero(text, len);
		free(text);
		return -1;
	}
	auth->secret = (unsigned char *)text;
	auth->secret_len = len;
	auth->issuer = ws_auth_trimmed(a->issuer);
	auth->audience = ws_auth_trimmed(a->audience);
	auth->skew =
		a->skew != NULL ? (long long)strtoull(a->skew, NULL, 10) : WS_AUTH_SKEW_DEFAULT;
	return 0;
}

void
ws_auth_clear(struct ws_auth *auth)
{
	if (auth->secret != NULL)
		explicit_bzero(auth->secret, auth->secret_len);
	free(auth->secret);
	free(auth->issuer);
	free(auth->audience);
	memset(auth, 0, sizeof *auth);
}

/* Equal in time that depends on n only. */
static int
ws_auth_equal(const unsigned char *a, const unsigned char *b, size_t n)
{
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

/* base64url without padding (RFC 7515) into out (room for n*3/4 bytes); its length or -1. */
static long
ws_auth_b64url(const char *in, size_t n, unsigned char *out)
{
	unsigned acc = 0;
	int bits = 0, v;
	long k = 0;

	if (n % 4 == 1)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char c = in[i];

		v = c >= 'A' && c <= 'Z'       ? c - 'A'
			: c >= 'a' && c <= 'z' ? c - 'a' + 26
			: c >= '0' && c <= '9' ? c - '0' + 52
			: c == '-'	       ? 62
			: c == '_'	       ? 63
					       : -1;
		if (v < 0)
			return -1;
		acc = acc << 6 | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[k++] = (unsigned char)(acc >> bits);
		}
	}
	/* the bits left over must be zero (a canonical encoding) */
	return (acc & ((1u << bits) - 1)) == 0 ? k : -1;
}

/* One segment decoded as a JSON object (new reference), or NULL. */
static json_t *
ws_auth_segment(const char *p, size_t n)
{
	unsigned char *raw = xmalloc(n * 3 / 4 + 1);
	long k = ws_auth_b64url(p, n, raw);
	json_t *j = k >= 0 ? json_loadb((const char *)raw, (size_t)k, JSON_REJECT_DUPLICATES, NULL)
			   : NULL;

	free(raw);
	if (!json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* An integer claim: 1 with *v, 0 when absent, -1 when not an integer. */
static int
ws_auth_int_claim(const json_t *claims, const char *name, long long *v)
{
	const json_t *j = json_object_get(claims, name);

	if (j == NULL || json_is_null(j))
		return 0;
	if (!json_is_integer(j))
		return -1;
	*v = json_integer_value(j);
	return 1;
}

static int
ws_auth_audience(const json_t *aud, const char *want)
{
	size_t i;
	const json_t *x;

	if (json_is_string(aud))
		return strcmp(json_string_value(aud), want) == 0;
	json_array_foreach(aud, i,
		x) if (json_is_string(x) && strcmp(json_string_value(x), want) == 0) return 1;
	return 0;
}

/* A JWT: HS256 signed with the shared secret, then its claims as upstream checks them. */
static const char *
ws_auth_jwt(const struct ws_auth *auth, const char *tok, long long now)
{
	const char *d1 = strchr(tok, '.'), *d2 = d1 != NULL ? strchr(d1 + 1, '.') : NULL;
	unsigned char mac[32], sig[48];
	json_t *hdr = NULL, *claims = NULL, *aud, *iss;
	const char *r = "invalid websocket jwt";
	long long exp = 0, nbf = 0;
	int has_nbf;

	if (d1 == NULL || d2 == NULL || strchr(d2 + 1, '.') != NULL ||
		strlen(tok) > WS_AUTH_JWT_MAX)
		return r;
	if ((hdr = ws_auth_segment(tok, (size_t)(d1 - tok))) == NULL ||
		!json_is_string(json_object_get(hdr, "alg")) ||
		strcmp(json_string_value(json_object_get(hdr, "alg")), "HS256") != 0)
		goto out;
	if (strlen(d2 + 1) != 43 || ws_auth_b64url(d2 + 1, 43, sig) != 32 ||
		auth->crypto.hmac_sha256(
			auth->secret, auth->secret_len, tok, (size_t)(d2 - tok), mac) != 0 ||
		!ws_auth_equal(mac, sig, 32))
		goto out;
	if ((claims = ws_auth_segment(d1 + 1, (size_t)(d2 - d1 - 1))) == NULL ||
		ws_auth_int_claim(claims, "exp", &exp) != 1 ||
		(has_nbf = ws_auth_int_claim(claims, "nbf", &nbf)) < 0)
		goto out;
	iss = json_object_get(claims, "iss");
	aud = json_object_get(claims, "aud");
	if ((iss != NULL && !json_is_string(iss) && !json_is_null(iss)) ||
		(aud != NULL && !json_is_string(aud) && !json_is_array(aud) && !json_is_null(aud)))
		goto out;
	if (now > exp + auth->skew)
		r = "expired websocket jwt";
	else if (has_nbf && now < nbf - auth->skew)
		r = "websocket jwt is not valid yet";
	else if (auth->issuer != NULL &&
		(!json_is_string(iss) || strcmp(json_string_value(iss), auth->issuer) != 0))
		r = "websocket jwt issuer mismatch";
	else if (auth->audience != NULL && !ws_auth_audience(aud, auth->audience))
		r = "websocket jwt audience mismatch";
	else
		r = NULL;
out:
	json_decref(hdr);
	json_decref(claims);
	return r;
}

const char *
ws_auth_check(const struct ws_auth *auth, const char *authorization, long long now)
{
	unsigned char md[32];
	const char *tok, *sp;
	char *t;
	const char *r;
	size_t n;

	if (auth == NULL || auth->mode == WS_AUTH_NONE)
		return NULL;
	if (authorization == NULL)
		return "missing websocket bearer token";
	if ((sp = strchr(authorization, ' ')) == NULL || sp - authorization != 6 ||
		strncasecmp(authorization, "Bearer", 6) != 0)
		return "invalid authorization header";
	for (tok = sp + 1; *tok == ' ' || *tok == '\t'; tok++)
		;
	for (n = strlen(tok); n > 0 && (tok[n - 1] == ' ' || tok[n - 1] == '\t'); n--)
		;
	if (n == 0)
		return "invalid authorization header";
	if (auth->mode == WS_AUTH_CAPABILITY) {
		if (auth->crypto.sha256(tok, n, md) != 0)
			return "invalid websocket bearer token";
		return ws_auth_equal(md, auth->token_sha256, 32) ? NULL
								 : "invalid websocket bearer token";
	}
	t = xasprintf("%.*s", (int)n, tok);
	r = ws_auth_jwt(auth, t, now);
	free(t);
	return r;
}
