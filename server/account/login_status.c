/*
 * `login status`, as upstream 0.169 answers it from $CODEX_HOME/auth.json (clients such as
 * T3 Code run it before they start the server). Everything goes to stderr, as upstream's:
 *   no auth.json                      "Not logged in", exit 1
 *   an API key (auth_mode "apikey",   "API key configured - <key masked>" and
 *     or no auth_mode and a key)      "Authentication is checked when you send a request.", 0
 *   ChatGPT (any other known mode)    "Logged in using ChatGPT", 0
 *   unreadable or malformed           "Error checking login status: ...", exit 1
 * The environment's OPENAI_API_KEY does not count: upstream reads only the file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "login_status.h"
#include "protocol/xmalloc.h"

/* The key as upstream shows it: its first 8 and last 5 characters, or *** when short. */
static char *
login_mask(const char *key)
{
	size_t n = strlen(key);

	if (n <= 13)
		return xstrdup("***");
	return xasprintf("%.8s***%s", key, key + n - 5);
}

/* The auth modes upstream's auth.json may hold; any other fails to deserialize. */
static int
login_mode_known(const char *mode)
{
	return strcmp(mode, "apikey") == 0 || strcmp(mode, "chatgpt") == 0 ||
		strcmp(mode, "chatgptAuthTokens") == 0;
}

/* Print the status of the login in home/auth.json to err; the exit status. */
int
login_status_main(const char *home, FILE *err)
{
	char *path = xasprintf("%s/auth.json", home), *masked;
	json_t *auth = NULL, *key, *mode;
	json_error_t je;
	FILE *f;
	int r = 1;

	if ((f = fopen(path, "re")) == NULL) {
		if (errno == ENOENT)
			fprintf(err, "Not logged in\n");
		else
			fprintf(err, "Error checking login status: %s: %s\n", path,
				strerror(errno));
		goto out;
	}
	auth = json_loadf(f, JSON_DECODE_ANY, &je);
	fclose(f);
	if (auth == NULL) {
		fprintf(err,
			"Error checking login status: failed to deserialize CLI auth from file: "
			"%s at line %d column %d\n",
			je.text, je.line, je.column);
		goto out;
	}
	key = json_object_get(auth, "OPENAI_API_KEY");
	mode = json_object_get(auth, "auth_mode");
	if (!json_is_object(auth) || (key != NULL && !json_is_string(key) && !json_is_null(key)) ||
		(mode != NULL && !json_is_null(mode) &&
			(!json_is_string(mode) || !login_mode_known(json_string_value(mode))))) {
		fprintf(err,
			"Error checking login status: failed to deserialize CLI auth from "
			"file: invalid credential JSON\n");
		goto out;
	}
	if (json_is_string(mode) ? strcmp(json_string_value(mode), "apikey") == 0
				 : json_is_string(key)) {
		if (!json_is_string(key)) {
			fprintf(err,
				"Error checking login status: API key auth is missing a key.\n");
			goto out;
		}
		masked = login_mask(json_string_value(key));
		fprintf(err,
			"API key configured - %s\nAuthentication is checked when you send a "
			"request.\n",
			masked);
		free(masked);
	} else
		fprintf(err, "Logged in using ChatGPT\n");
	r = 0;
out:
	json_decref(auth);
	free(path);
	return r;
}
