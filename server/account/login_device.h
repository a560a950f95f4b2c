/*
 * Sign in with ChatGPT by device code, as upstream 0.169 does (observed side by side against
 * the same mock issuer): the user code asked of {issuer}/api/accounts/deviceauth/usercode, the
 * user told to open {issuer}/codex/device and type it, {issuer}/api/accounts/deviceauth/token
 * polled every `interval` seconds until the issuer hands out an authorization code with its
 * PKCE pair, the code exchanged at {issuer}/oauth/token, auth.json written.
 *
 * Everything runs on the loop; nothing blocks. The code, the verifier and the tokens are never
 * logged nor put in a message; the buffers that held them are wiped.
 */
#ifndef LOGIN_DEVICE_H
#define LOGIN_DEVICE_H

#include <ev.h>

struct http;
struct login_device;

#define LOGIN_DEVICE_TIMEOUT_ENV "APP_SERVER_DEVICE_AUTH_TIMEOUT" /* ours: seconds, tests */

struct login_device_cbs {
	/*
	 * The user code is known (verification_url, user_code), or could not be had: error is
	 * upstream's sentence, not_found set when the issuer has no device login (404). Once.
	 */
	void (*started)(void *arg, const char *verification_url, const char *user_code,
		const char *error, int not_found);
	/* The sign-in ended: error NULL when auth.json holds the login; once, only after a
	 * started without error. */
	void (*done)(void *arg, const char *error);
};

/* issuer NULL: $CODEX_APP_SERVER_LOGIN_ISSUER, else upstream's. */
struct login_device *login_device_start(struct ev_loop *loop, struct http *h, const char *issuer,
	const struct login_device_cbs *cbs, void *arg);
/* Stop now (a transfer or the poll timer); no callback after. */
void login_device_free(struct login_device *d);

#endif
