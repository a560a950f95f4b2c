/*
 * `login --with-api-key` and `logout`, with upstream 0.169's words and exit statuses (all on
 * stderr, as upstream's):
 *   login --with-api-key, stdin a terminal  "--with-api-key expects the API key on stdin. ...", 1
 *   no key on stdin                         "Reading API key from stdin..." then
 *                                           "No API key provided via stdin.", 1
 *   a key                                   "Reading API key from stdin..." then "API key saved.
 *                                           Authentication is checked when you send a request.", 0
 *   logout                                  "Successfully logged out", 0; "Not logged in", 0
 * The key is read whole, trimmed of surrounding white space, and stored as upstream stores it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth_store.h"
#include "login_cli.h"
#include "protocol/xmalloc.h"

#define LOGIN_MAX_KEY (64 << 10) /* no API key is anywhere near this */

/* Read stdin whole (at most LOGIN_MAX_KEY bytes), trimmed; heap. */
static char *
login_read_key(FILE *in)
{
	char *b = xmalloc(LOGIN_MAX_KEY + 1), *s, *e;
	size_t n = fread(b, 1, LOGIN_MAX_KEY, in);

	b[n] = '\0';
	for (s = b; *s != '\0' && isspace((unsigned char)*s); s++)
		;
	for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]); e--)
		;
	*e = '\0';
	memmove(b, s, (size_t)(e - s) + 1);
	return b;
}

int
login_cli_api_key(const char *home, FILE *in, FILE *err)
{
	struct auth *a;
	char *key, *cause = NULL;
	int r = 1;

	if (isatty(fileno(in))) {
		fprintf(err,
			"--with-api-key expects the API key on stdin. Try piping it, e.g. "
			"`printenv OPENAI_API_KEY | codex login --with-api-key`.\n");
		return 1;
	}
	fprintf(err, "Reading API key from stdin...\n");
	key = login_read_key(in);
	if (*key == '\0') {
		fprintf(err, "No API key provided via stdin.\n");
		free(key);
		return 1;
	}
	a = auth_new_api_key(key);
	if (auth_save(home, a, &cause) != 0) {
		fprintf(err, "Error logging in: %s\n", cause);
		free(cause);
	} else {
		fprintf(err, "API key saved. Authentication is checked when you send a request.\n");
		r = 0;
	}
	auth_free(a);
	explicit_bzero(key, strlen(key));
	free(key);
	return r;
}

int
login_cli_logout(const char *home, FILE *err)
{
	char *cause = NULL;

	switch (auth_delete(home, &cause)) {
	case 1:
		fprintf(err, "Successfully logged out\n");
		return 0;
	case 0:
		fprintf(err, "Not logged in\n");
		return 0;
	default:
		fprintf(err, "Error logging out: %s\n", cause);
		free(cause);
		return 1;
	}
}
