/*
 * CODEX_HOME/.credentials.json as upstream 0.169's file store writes it (its rmcp-client
 * oauth.rs, `mcp_oauth_credentials_store = "file"`; its default "auto" falls back to this
 * file when no keyring answers, as here): one compact JSON object, keys sorted, each
 * "<name>|<hash>" -> {server_name, server_url, issuer (when known), client_id, access_token,
 * expires_at (ms or null), refresh_token (or null), scopes []} (upstream 0.169's file, read
 * back after its own login against tests/integration/mock_mcp_oauth.py). Written atomically, 0600
 * (config/secret_file.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/digest.h"
#include "config/secret_file.h"
#include "oauth.h"
#include "protocol/xmalloc.h"

#define STORE_FILE	".credentials.json"
#define STORE_MAX	(4 << 20)
#define REFRESH_SKEW_MS 30000 /* upstream's REFRESH_SKEW_MILLIS */

void
oauth_tokens_free(struct oauth_tokens *t)
{
	char **s[] = {&t->server_name, &t->server_url, &t->client_id, &t->access_token,
		&t->refresh_token, &t->issuer};

	for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
		if (*s[i] != NULL)
			explicit_bzero(*s[i], strlen(*s[i]));
		free(*s[i]);
		*s[i] = NULL;
	}
	json_decref(t->scopes);
	t->scopes = NULL;
}

char *
oauth_store_key(const char *name, const char *url)
{
	/* upstream 0.169 hashes its payload in insertion order (checked against its binary: an
	 * entry it wrote for http://127.0.0.1:33763/mcp has the key "oa|4ff7966b7ac4d885") */
	json_t *o = json_pack("{s:s, s:s, s:{}}", "type", "http", "url", url, "headers");
	char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER), hex[65];
	char *key = NULL;

	json_decref(o);
	if (text != NULL && digest_sha256_hex(text, strlen(text), hex) == 0)
		key = xasprintf("%s|%.16s", name, hex);
	free(text);
	return key;
}

int
oauth_tokens_stale(const struct oauth_tokens *t, long long now_ms)
{
	return t->expires_at > 0 && now_ms + REFRESH_SKEW_MS >= t->expires_at;
}

static int
cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The whole file (an object; empty when missing), or NULL with *cause. */
static json_t *
store_read(const char *dir, char **cause)
{
	char *path = xasprintf("%s/%s", dir, STORE_FILE);
	FILE *f = fopen(path, "re");
	json_error_t je;
	json_t *doc;

	if (f == NULL) {
		if (errno == ENOENT) {
			free(path);
			return json_object();
		}
		*cause = xasprintf(
			"failed to read credentials file at %s: %s", path, strerror(errno));
		free(path);
		return NULL;
	}
	doc = json_loadf(f, 0, &je);
	fclose(f);
	if (!json_is_object(doc)) {
		json_decref(doc);
		*cause = xasprintf("failed to parse credentials file at %s", path);
		doc = NULL;
	}
	free(path);
	return doc;
}

/* Write doc with its keys sorted (upstream's BTreeMap), or remove the file when empty. */
static int
store_write(const char *dir, json_t *doc, char **cause)
{
	const char **keys = xcalloc(json_object_size(doc) + 1, sizeof *keys);
	size_t n = 0;
	const char *k;
	json_t *v, *sorted = json_object();
	char *text, *path;
	int r;

	if (json_object_size(doc) == 0) {
		free(keys);
		json_decref(sorted);
		path = xasprintf("%s/%s", dir, STORE_FILE);
		r = unlink(path) == 0 || errno == ENOENT ? 0 : -1;
		if (r != 0)
			*cause = xasprintf("%s: %s", path, strerror(errno));
		free(path);
		return r;
	}
	json_object_foreach(doc, k, v) keys[n++] = k;
	qsort(keys, n, sizeof *keys, cmp_keys);
	for (size_t i = 0; i < n; i++)
		json_object_set(sorted, keys[i], json_object_get(doc, keys[i]));
	free(keys);
	text = json_dumps(sorted, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(sorted);
	if (text == NULL) {
		*cause = xstrdup("cannot encode the credentials file");
		return -1;
	}
	r = secret_file_save(dir, STORE_FILE, text, cause);
	explicit_bzero(text, strlen(text));
	free(text);
	return r;
}

static char *
dup_str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? xstrdup(s) : NULL;
}

int
oauth_store_load(
	const char *dir, const char *name, const char *url, struct oauth_tokens *out, char **cause)
{
	json_t *doc = store_read(dir, cause), *e;
	char *want = oauth_store_key(name, url), *key;
	const char *k;
	int found = 0;

	memset(out, 0, sizeof *out);
	if (doc == NULL || want == NULL) {
		if (doc != NULL)
			*cause = xstrdup("no SHA-256 here (libcrypto)");
		json_decref(doc);
		free(want);
		return -1;
	}
	/* upstream matches entries by the key their own name and url make, not the map's key */
	json_object_foreach(doc, k, e)
	{
		const char *en = json_string_value(json_object_get(e, "server_name"));
		const char *eu = json_string_value(json_object_get(e, "server_url"));

		if (en == NULL || eu == NULL || (key = oauth_store_key(en, eu)) == NULL)
			continue;
		found = strcmp(key, want) == 0;
		free(key);
		if (!found)
			continue;
		out->server_name = xstrdup(en);
		out->server_url = xstrdup(eu);
		out->issuer = dup_str(e, "issuer");
		out->client_id = dup_str(e, "client_id");
		out->access_token = dup_str(e, "access_token");
		out->refresh_token = dup_str(e, "refresh_token");
		out->expires_at = json_integer_value(json_object_get(e, "expires_at"));
		out->scopes = json_incref(json_object_get(e, "scopes"));
		if (!json_is_array(out->scopes)) {
			json_decref(out->scopes);
			out->scopes = json_array();
		}
		break;
	}
	json_decref(doc);
	free(want);
	return found;
}

/* Remove the entries of (name, url), whatever their map key: how many. */
static int
store_drop(json_t *doc, const char *name, const char *url)
{
	const char *k, *en, *eu;
	json_t *e;
	void *tmp;
	int n = 0;

	json_object_foreach_safe(doc, tmp, k, e)
	{
		en = json_string_value(json_object_get(e, "server_name"));
		eu = json_string_value(json_object_get(e, "server_url"));
		if (en != NULL && eu != NULL && strcmp(en, name) == 0 && strcmp(eu, url) == 0) {
			json_object_del(doc, k);
			n++;
		}
	}
	return n;
}

int
oauth_store_save(const char *dir, const struct oauth_tokens *t, char **cause)
{
	json_t *doc = store_read(dir, cause), *e;
	char *key = oauth_store_key(t->server_name, t->server_url);
	int r = -1;

	if (doc == NULL || key == NULL) {
		if (doc != NULL)
			*cause = xstrdup("no SHA-256 here (libcrypto)");
		goto out;
	}
	e = json_pack("{s:s, s:s, s:s*, s:s, s:s, s:o, s:o, s:O}", "server_name", t->server_name,
		"server_url", t->server_url, "issuer", t->issuer, "client_id", t->client_id ?: "",
		"access_token", t->access_token ?: "", "expires_at",
		t->expires_at > 0 ? json_integer(t->expires_at) : json_null(), "refresh_token",
		t->refresh_token != NULL ? json_string(t->refresh_token) : json_null(), "scopes",
		t->scopes != NULL ? t->scopes : json_array());
	store_drop(doc, t->server_name, t->server_url); /* an entry under an older key too */
	json_object_set_new(doc, key, e);
	r = store_write(dir, doc, cause);
out:
	json_decref(doc);
	free(key);
	return r;
}

int
oauth_store_delete(const char *dir, const char *name, const char *url, char **cause)
{
	json_t *doc = store_read(dir, cause);
	char *want = oauth_store_key(name, url), *key;
	const char *k;
	json_t *e;
	void *tmp;
	int removed = 0, r = -1;

	if (doc == NULL || want == NULL) {
		if (doc != NULL)
			*cause = xstrdup("no SHA-256 here (libcrypto)");
		goto out;
	}
	json_object_foreach_safe(doc, tmp, k, e)
	{
		const char *en = json_string_value(json_object_get(e, "server_name"));
		const char *eu = json_string_value(json_object_get(e, "server_url"));

		if (en == NULL || eu == NULL || (key = oauth_store_key(en, eu)) == NULL)
			continue;
		if (strcmp(key, want) == 0) {
			json_object_del(doc, k);
			removed = 1;
		}
		free(key);
	}
	r = removed ? (store_write(dir, doc, cause) == 0 ? 1 : -1) : 0;
out:
	json_decref(doc);
	free(want);
	return r;
}
