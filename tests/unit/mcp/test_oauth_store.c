/*
 * Tests for server/mcp/oauth/oauth_store.c: upstream's entry key, a save read back, the file
 * as upstream's file store writes it (0600, compact, keys sorted, nulls for what is unknown),
 * one entry per server, removal (the file goes with its last entry), entries found by their
 * own name and url, a corrupt file refused without being overwritten, and the refresh skew.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp/oauth/oauth.h"
#include "protocol/xmalloc.h"

#define URL "http://127.0.0.1:1/mcp"

static char dir[64];

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/test_oauth_store.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int
teardown(void **state)
{
	char *path = xasprintf("%s/.credentials.json", dir);

	(void)state;
	unlink(path);
	free(path);
	rmdir(dir);
	return 0;
}

static char *
read_store(void)
{
	char *path = xasprintf("%s/.credentials.json", dir), *text = NULL;
	size_t cap = 0;
	FILE *f = fopen(path, "r");

	free(path);
	if (f == NULL)
		return NULL;
	assert_true(getdelim(&text, &cap, '\0', f) > 0);
	fclose(f);
	return text;
}

static void
write_store(const char *text)
{
	char *path = xasprintf("%s/.credentials.json", dir);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

static void
save(const char *name, const char *url, const char *access, const char *refresh,
	long long expires_at)
{
	struct oauth_tokens t = {.expires_at = expires_at};
	char *cause = NULL;

	t.server_name = xstrdup(name);
	t.server_url = xstrdup(url);
	t.client_id = xstrdup("client-1");
	t.access_token = xstrdup(access);
	t.refresh_token = refresh != NULL ? xstrdup(refresh) : NULL;
	t.scopes = json_pack("[s, s]", "a", "b");
	assert_int_equal(oauth_store_save(dir, &t, &cause), 0);
	oauth_tokens_free(&t);
}

/* "<name>|" and the first 16 hex of SHA-256 of {"type":"http","url":<url>,"headers":{}}
 * (the digests computed with Python's hashlib; the order is upstream 0.169's: its binary
 * stored http://127.0.0.1:33763/mcp's tokens under "oa|4ff7966b7ac4d885"). */
static void
test_key(void **state)
{
	char *k;

	(void)state;
	k = oauth_store_key("oa", URL);
	assert_string_equal(k, "oa|55e5211a433f07a6");
	free(k);
	k = oauth_store_key("oa", "http://127.0.0.1:33763/mcp");
	assert_string_equal(k, "oa|4ff7966b7ac4d885");
	free(k);
	k = oauth_store_key("x", "https://example.com/mcp");
	assert_string_equal(k, "x|9a70b85417749d5c");
	free(k);
}

static void
test_save_load(void **state)
{
	struct oauth_tokens t;
	char *cause = NULL, *path;
	struct stat st;

	(void)state;
	assert_int_equal(oauth_store_load(dir, "oa", URL, &t, &cause), 0); /* no file */
	oauth_tokens_free(&t);
	save("oa", URL, "at", "rt", 1234567890123LL);
	path = xasprintf("%s/.credentials.json", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	free(path);
	assert_int_equal(oauth_store_load(dir, "oa", URL, &t, &cause), 1);
	assert_string_equal(t.server_name, "oa");
	assert_string_equal(t.server_url, URL);
	assert_string_equal(t.client_id, "client-1");
	assert_string_equal(t.access_token, "at");
	assert_string_equal(t.refresh_token, "rt");
	assert_int_equal(t.expires_at, 1234567890123LL);
	assert_int_equal(json_array_size(t.scopes), 2);
	oauth_tokens_free(&t);
	/* another url of the same name is another server */
	assert_int_equal(oauth_store_load(dir, "oa", "http://127.0.0.1:2/mcp", &t, &cause), 0);
	oauth_tokens_free(&t);
}

/* Upstream's file: compact, keys sorted, one entry per server, nulls for unknown fields. */
static void
test_file_shape(void **state)
{
	char *text;

	(void)state;
	save("b", URL, "at-b", "rt-b", 5);
	save("a", URL, "at-a0", NULL, 0);
	save("a", URL, "at-a", NULL, 0); /* replaces */
	text = read_store();
	assert_string_equal(text,
		"{\"a|55e5211a433f07a6\":{\"server_name\":\"a\",\"server_url\":\"" URL "\","
		"\"client_id\":\"client-1\",\"access_token\":\"at-a\",\"expires_at\":null,"
		"\"refresh_token\":null,\"scopes\":[\"a\",\"b\"]},"
		"\"b|55e5211a433f07a6\":{\"server_name\":\"b\",\"server_url\":\"" URL "\","
		"\"client_id\":\"client-1\",\"access_token\":\"at-b\",\"expires_at\":5,"
		"\"refresh_token\":\"rt-b\",\"scopes\":[\"a\",\"b\"]}}");
	free(text);
}

static void
test_delete(void **state)
{
	char *cause = NULL, *text;

	(void)state;
	save("a", URL, "at-a", "rt", 0);
	save("b", URL, "at-b", "rt", 0);
	assert_int_equal(oauth_store_delete(dir, "a", URL, &cause), 1);
	assert_int_equal(oauth_store_delete(dir, "a", URL, &cause), 0);
	text = read_store();
	assert_null(strstr(text, "at-a"));
	assert_non_null(strstr(text, "at-b"));
	free(text);
	assert_int_equal(oauth_store_delete(dir, "b", URL, &cause), 1);
	assert_null(read_store()); /* the last entry takes the file */
}

/* An entry is found by the key its own name and url make, whatever the map's key says. */
static void
test_found_by_entry(void **state)
{
	struct oauth_tokens t;
	char *cause = NULL;

	(void)state;
	write_store("{\"whatever\":{\"server_name\":\"oa\",\"server_url\":\"" URL "\","
		    "\"client_id\":\"c\",\"access_token\":\"at\",\"expires_at\":null,"
		    "\"refresh_token\":null,\"scopes\":\"not an array\"}}");
	assert_int_equal(oauth_store_load(dir, "oa", URL, &t, &cause), 1);
	assert_string_equal(t.access_token, "at");
	assert_null(t.refresh_token);
	oauth_tokens_free(&t);
	save("oa", URL, "at2", NULL, 0); /* replaces that entry, not beside it */
	assert_int_equal(oauth_store_delete(dir, "oa", URL, &cause), 1);
	assert_int_equal(oauth_store_load(dir, "oa", URL, &t, &cause), 0);
	oauth_tokens_free(&t);
}

/* A file that does not parse is an error, and a save does not overwrite it. */
static void
test_corrupt(void **state)
{
	struct oauth_tokens t = {0};
	char *cause = NULL, *text;

	(void)state;
	write_store("{not json");
	assert_int_equal(oauth_store_load(dir, "oa", URL, &t, &cause), -1);
	assert_non_null(strstr(cause, "failed to parse credentials file"));
	free(cause);
	cause = NULL;
	oauth_tokens_free(&t);
	t.server_name = xstrdup("oa");
	t.server_url = xstrdup(URL);
	t.access_token = xstrdup("at");
	assert_int_equal(oauth_store_save(dir, &t, &cause), -1);
	free(cause);
	oauth_tokens_free(&t);
	text = read_store();
	assert_string_equal(text, "{not json");
	free(text);
	write_store("[]"); /* JSON, not an object */
	assert_int_equal(oauth_store_load(dir, "oa", URL, &t, &cause), -1);
	free(cause);
	oauth_tokens_free(&t);
}

/* Upstream refreshes 30 s before expiry; an unknown expiry never is stale. */
static void
test_stale(void **state)
{
	struct oauth_tokens t = {0};
	long long now = 1000000000000LL;

	(void)state;
	assert_false(oauth_tokens_stale(&t, now));
	t.expires_at = now + 29000;
	assert_true(oauth_tokens_stale(&t, now));
	t.expires_at = now - 1;
	assert_true(oauth_tokens_stale(&t, now));
	t.expires_at = now + 31000;
	assert_false(oauth_tokens_stale(&t, now));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key),
		cmocka_unit_test_setup_teardown(test_save_load, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_shape, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete, setup, teardown),
		cmocka_unit_test_setup_teardown(test_found_by_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt, setup, teardown),
		cmocka_unit_test(test_stale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
