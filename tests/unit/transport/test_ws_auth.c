/*
 * Tests for server/transport/ws_auth.c: upstream 0.169's option checks and 401 texts (recorded
 * against its binary), the capability token compared by digest, and JWTs (HS256) built here
 * with every claim upstream checks, at a fixed clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/digest.h"
#include "protocol/base64.h"
#include "protocol/xmalloc.h"
#include "transport/ws_auth.h"

#define NOW    1700000000LL
#define SECRET "0123456789abcdef0123456789abcdef-secret"

static const struct ws_auth_crypto crypto = {digest_sha256, digest_hmac_sha256};

/* base64url without padding. */
static char *
b64url(const void *p, size_t n)
{
	char *s = xcalloc(1, base64_encoded_len(n) + 1);

	base64_encode(p, n, s);
	for (char *c = s; *c; c++) {
		if (*c == '+')
			*c = '-';
		else if (*c == '/')
			*c = '_';
		else if (*c == '=')
			*c = '\0';
	}
	return s;
}

static char *
jwt(const char *header, const char *claims, const char *key)
{
	char *h = b64url(header, strlen(header)), *c = b64url(claims, strlen(claims));
	char *signing = xasprintf("%s.%s", h, c), *sig, *out;
	unsigned char mac[32];

	assert_int_equal(digest_hmac_sha256(key, strlen(key), signing, strlen(signing), mac), 0);
	sig = b64url(mac, 32);
	out = xasprintf("Bearer %s.%s", signing, sig);
	free(h);
	free(c);
	free(signing);
	free(sig);
	return out;
}

static char *
write_temp(const char *text)
{
	char *path = xstrdup("/tmp/test_ws_auth.XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void
test_option_checks(void **state)
{
	static const struct {
		struct ws_auth_args a;
		const char *err;
	} cases[] = {
		{{.mode = "capability-token"},
			"`--ws-token-file` or `--ws-token-sha256` is required "
			"when `--ws-auth capability-token` is set"},
		{{.token_file = "/x"},
			"websocket auth flags require `--ws-auth capability-token` or "
			"`--ws-auth signed-bearer-token`"},
		{{.mode = "capability-token", .token_file = "/x", .token_sha256 = "00"},
			"`--ws-token-file` and `--ws-token-sha256` are mutually exclusive"},
		{{.mode = "capability-token", .token_file = "/x", .issuer = "i"},
			"`--ws-shared-secret-file`, `--ws-issuer`, `--ws-audience`, and "
			"`--ws-max-clock-skew-seconds` require `--ws-auth signed-bearer-token`"},
		{{.mode = "signed-bearer-token", .token_sha256 = "00", .secret_file = "/x"},
			"`--ws-token-file` and `--ws-token-sha256` require `--ws-auth capability-token`, "
			"not `signed-bearer-token`"},
		{{.mode = "signed-bearer-token"},
			"`--ws-shared-secret-file` is required when "
			"`--ws-auth signed-bearer-token` is set"},
		{{.mode = "capability-token", .token_sha256 = "zz"},
			"--ws-token-sha256 must be a 64-character hex SHA-256 digest"},
		{{.mode = "capability-token", .token_file = "/nonexistent/t"},
			"failed to read websocket auth secret /nonexistent/t: No such file or directory "
			"(os error 2)"},
	};
	struct ws_auth auth;
	struct ws_auth_args a = {0};
	char *cause = NULL, *shortp = write_temp("  short secret \n"), *empty = write_temp(" \n");

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(ws_auth_setup(&auth, &cases[i].a, &crypto, &cause), -1);
		assert_string_equal(cause, cases[i].err);
		free(cause);
		cause = NULL;
	}
	a.mode = "signed-bearer-token";
	a.secret_file = shortp;
	assert_int_equal(ws_auth_setup(&auth, &a, &crypto, &cause), -1);
	assert_non_null(strstr(cause, "must be at least 32 bytes"));
	free(cause);
	a = (struct ws_auth_args){.mode = "capability-token", .token_file = empty};
	assert_int_equal(ws_auth_setup(&auth, &a, &crypto, &cause), -1);
	assert_non_null(strstr(cause, "must not be empty"));
	free(cause);
	assert_int_equal(ws_auth_arg(&a, "--ws-auth", "bogus", &cause), -1);
	assert_non_null(strstr(cause, "[possible values: capability-token, signed-bearer-token]"));
	free(cause);
	assert_int_equal(ws_auth_arg(&a, "--ws-max-clock-skew-seconds", "-1", &cause), -1);
	free(cause);
	/* no option at all: no auth */
	a = (struct ws_auth_args){0};
	assert_int_equal(ws_auth_setup(&auth, &a, &crypto, &cause), 0);
	assert_int_equal(auth.mode, WS_AUTH_NONE);
	assert_null(ws_auth_check(&auth, NULL, NOW));
	unlink(shortp);
	unlink(empty);
	free(shortp);
	free(empty);
}

static void
test_capability_token(void **state)
{
	char *file = write_temp("\n  s3cret-token \n"), *cause = NULL;
	struct ws_auth_args a = {.mode = "capability-token", .token_file = file};
	struct ws_auth auth, by_digest;
	/* sha256("s3cret-token"), as `printf %s s3cret-token | sha256sum` prints it */
	unsigned char md[32];
	char hex[65];

	assert_int_equal(ws_auth_setup(&auth, &a, &crypto, &cause), 0);
	assert_string_equal(ws_auth_check(&auth, NULL, NOW), "missing websocket bearer token");
	assert_string_equal(
		ws_auth_check(&auth, "Basic s3cret-token", NOW), "invalid authorization header");
	assert_string_equal(ws_auth_check(&auth, "Bearer", NOW), "invalid authorization header");
	assert_string_equal(ws_auth_check(&auth, "Bearer   ", NOW), "invalid authorization header");
	assert_string_equal(
		ws_auth_check(&auth, "Bearer s3cret-tokeN", NOW), "invalid websocket bearer token");
	assert_null(ws_auth_check(&auth, "Bearer s3cret-token", NOW));
	assert_null(ws_auth_check(&auth, "bearer  s3cret-token ", NOW));
	/* the same token given by its digest */
	assert_int_equal(digest_sha256("s3cret-token", 12, md), 0);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	a = (struct ws_auth_args){.mode = "capability-token", .token_sha256 = hex};
	assert_int_equal(ws_auth_setup(&by_digest, &a, &crypto, &cause), 0);
	assert_null(ws_auth_check(&by_digest, "Bearer s3cret-token", NOW));
	assert_non_null(ws_auth_check(&by_digest, "Bearer other", NOW));
	ws_auth_clear(&auth);
	ws_auth_clear(&by_digest);
	unlink(file);
	free(file);
}

static void
test_signed_bearer(void **state)
{
	static const char *hs = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
	static const struct {
		const char *header, *claims, *key, *want;
	} cases[] = {
		{NULL, "{\"exp\":1700000060,\"iss\":\"me\",\"aud\":\"you\"}", SECRET, NULL},
		{NULL, "{\"exp\":1700000060,\"iss\":\"me\",\"aud\":[\"x\",\"you\"]}", SECRET, NULL},
		/* within the 30 s skew either way */
		{NULL, "{\"exp\":1699999975,\"nbf\":1700000025,\"iss\":\"me\",\"aud\":\"you\"}",
			SECRET, NULL},
		{NULL, "{\"exp\":1699999960,\"iss\":\"me\",\"aud\":\"you\"}", SECRET,
			"expired websocket jwt"},
		{NULL, "{\"exp\":1700000060,\"nbf\":1700000100,\"iss\":\"me\",\"aud\":\"you\"}",
			SECRET, "websocket jwt is not valid yet"},
		{NULL, "{\"exp\":1700000060,\"iss\":\"other\",\"aud\":\"you\"}", SECRET,
			"websocket jwt issuer mismatch"},
		{NULL, "{\"exp\":1700000060,\"aud\":\"you\"}", SECRET,
			"websocket jwt issuer mismatch"},
		{NULL, "{\"exp\":1700000060,\"iss\":\"me\",\"aud\":[\"x\"]}", SECRET,
			"websocket jwt audience mismatch"},
		{NULL, "{\"exp\":1700000060,\"iss\":\"me\"}", SECRET,
			"websocket jwt audience mismatch"},
		/* the order of upstream's checks: expiry before the issuer */
		{NULL, "{\"exp\":1,\"iss\":\"other\"}", SECRET, "expired websocket jwt"},
		{NULL, "{\"iss\":\"me\",\"aud\":\"you\"}", SECRET, "invalid websocket jwt"},
		{NULL, "{\"exp\":\"1700000060\",\"iss\":\"me\",\"aud\":\"you\"}", SECRET,
			"invalid websocket jwt"},
		{NULL, "{\"exp\":1700000060,\"iss\":\"me\",\"aud\":\"you\"}",
			"another-secret-of-at-least-32-bytes!!", "invalid websocket jwt"},
		{"{\"alg\":\"HS512\"}", "{\"exp\":1700000060,\"iss\":\"me\",\"aud\":\"you\"}",
			SECRET, "invalid websocket jwt"},
		{"{\"alg\":\"none\"}", "{\"exp\":1700000060,\"iss\":\"me\",\"aud\":\"you\"}",
			SECRET, "invalid websocket jwt"},
	};
	char *file = write_temp(SECRET "\n"), *cause = NULL, *t;
	struct ws_auth_args a = {.mode = "signed-bearer-token",
		.secret_file = file,
		.issuer = " me ",
		.audience = "you"};
	struct ws_auth auth;
	const char *got;

	assert_int_equal(ws_auth_setup(&auth, &a, &crypto, &cause), 0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		t = jwt(cases[i].header != NULL ? cases[i].header : hs, cases[i].claims,
			cases[i].key);
		got = ws_auth_check(&auth, t, NOW);
		if (cases[i].want == NULL && got != NULL)
			fail_msg("case %zu: %s", i, got);
		if (cases[i].want != NULL)
			assert_string_equal(got != NULL ? got : "(accepted)", cases[i].want);
		free(t);
	}
	assert_string_equal(ws_auth_check(&auth, "Bearer a.b", NOW), "invalid websocket jwt");
	assert_string_equal(ws_auth_check(&auth, "Bearer a.b.c.d", NOW), "invalid websocket jwt");
	ws_auth_clear(&auth);
	unlink(file);
	free(file);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_option_checks),
		cmocka_unit_test(test_capability_token),
		cmocka_unit_test(test_signed_bearer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
