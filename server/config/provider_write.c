/*
 * modelProvider/config/write's edit of the user's config.toml, as upstream 0.169 makes it
 * (recorded: tests/fixtures/providers/, record.py). A settings patch names a provider kind:
 *  - customGateway: providerId absent or null creates one: its id is the name made a slug
 *    (lower-case ASCII letters and digits, every other run of characters one '-', "custom"
 *    when nothing is left), "-2", "-3"... when the id is taken by a configured or a built-in
 *    provider; its table gets base_url, env_key, name and wire_api = "responses" in that
 *    order. An existing id has its name, base_url and env_key set in place (null removes the
 *    key, an omitted member keeps it).
 *  - bedrock (amazon-bedrock, amazon-bedrock-runtime): profile and region in
 *    [model_providers.<id>.aws]; gcp: project_id, location, credential_file in
 *    [model_providers.gcp]. null removes, "" is refused.
 * Every edit goes through config_write as one batch: the file is edited in place (comments
 * and order kept) and replaced atomically, or not touched at all.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "protocol/xmalloc.h"

/* Provider ids a custom provider may not take (upstream's built-ins). */
static const char *const provider_builtin_ids[] = {
	"openai", "ollama", "lmstudio", "amazon-bedrock", "amazon-bedrock-runtime", "gcp"};
/* Names a new custom provider may not have (the built-ins' display names, exact). */
static const char *const provider_reserved_names[] = {
	"OpenAI", "Amazon Bedrock", "Amazon Bedrock Runtime", "Google Cloud Vertex AI"};

int
provider_is_builtin(const char *id)
{
	for (size_t i = 0; i < sizeof provider_builtin_ids / sizeof provider_builtin_ids[0]; i++)
		if (strcmp(provider_builtin_ids[i], id) == 0)
			return 1;
	return 0;
}

char *
provider_slug(const char *name)
{
	size_t n = strlen(name), k = 0;
	char *s = xmalloc(n + sizeof "custom");
	int dash = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++) {
		if (*p < 0x80 && isalnum(*p)) {
			if (dash && k > 0)
				s[k++] = '-';
			s[k++] = (char)tolower(*p);
			dash = 0;
		} else
			dash = 1;
	}
	if (k == 0)
		memcpy(s, "custom", (k = sizeof "custom" - 1));
	s[k] = '\0';
	return s;
}

/* An http(s) URL with a host and no credentials, query or fragment. */
int
provider_url_ok(const char *url)
{
	const char *p = url, *host;
	size_t hl;

	if (strncasecmp(p, "http://", 7) == 0)
		p += 7;
	else if (strncasecmp(p, "https://", 8) == 0)
		p += 8;
	else
		return 0;
	host = p;
	hl = strcspn(host, "/");
	if (hl == 0 || memchr(host, '@', hl) != NULL)
		return 0;
	for (const char *q = url; *q != '\0'; q++)
		if (*q == '?' || *q == '#' || isspace((unsigned char)*q) ||
			iscntrl((unsigned char)*q))
			return 0;
	return 1;
}

/* An environment variable name: a letter or '_', then letters, digits and '_'. */
int
provider_env_ok(const char *name)
{
	if (!isalpha((unsigned char)name[0]) && name[0] != '_')
		return 0;
	for (const char *q = name; *q != '\0'; q++)
		if (!isalnum((unsigned char)*q) && *q != '_')
			return 0;
	return 1;
}

/* A key path segment as config_write splits them: quoted unless plain. */
static char *
provider_key(const char *id, const char *table, const char *key)
{
	int plain = id[strcspn(id, ".\"\\ ")] == '\0';

	return xasprintf(plain ? "model_providers.%s%s%s.%s" : "model_providers.\"%s\"%s%s.%s", id,
		table != NULL ? "." : "", table != NULL ? table : "", key);
}

/* Append {keyPath, value, replace} (value stolen; NULL: remove the key). */
static void
provider_edit(json_t *edits, char *path, json_t *value)
{
	json_array_append_new(edits,
		json_pack("{s:s, s:o, s:s}", "keyPath", path, "value",
			value != NULL ? value : json_null(), "mergeStrategy", "replace"));
	free(path);
}

/*
 * The optional string member `member` of settings as an edit of key (in table, NULL for the
 * provider's own): omitted does nothing, null removes, "" is refused (-1 with *cause).
 */
static int
provider_field(json_t *edits, const json_t *settings, const char *member, const char *id,
	const char *table, const char *key, char **cause)
{
	const json_t *v = json_object_get(settings, member);

	if (v == NULL)
		return 0;
	if (json_is_string(v) && json_string_length(v) == 0) {
		*cause = xstrdup(
			"Configuration values must not be empty; use null to clear a field.");
		return -1;
	}
	provider_edit(edits, provider_key(id, table, key),
		json_is_null(v) ? NULL : json_copy((json_t *)v));
	return 0;
}

/* A new custom provider's id: its slug, numbered past the ones taken. */
static char *
provider_new_id(const struct config *c, const char *name)
{
	const json_t *table = config_get(c, "model_providers");
	char *base = provider_slug(name), *id = xstrdup(base);

	for (int n = 2; json_object_get(table, id) != NULL || provider_is_builtin(id); n++) {
		free(id);
		id = xasprintf("%s-%d", base, n);
	}
	free(base);
	return id;
}

/* The edits of a customGateway patch; *id set (heap). -1 with *code and *cause. */
static int
provider_gateway(const struct config *c, const json_t *settings, json_t *edits, char **id,
	const char **code, char **cause)
{
	const json_t *pid = json_object_get(settings, "providerId"),
		     *name = json_object_get(settings, "name"),
		     *url = json_object_get(settings, "baseUrl"),
		     *env = json_object_get(settings, "envKey");
	char *trimmed = name != NULL ? xstrtrim(json_string_value(name)) : NULL;
	int r = -1;

	*code = "configValidationError";
	if (json_is_string(pid)) {
		if (provider_is_builtin(json_string_value(pid))) {
			*cause = xstrdup(
				"A custom provider or gateway cannot use a built-in provider "
				"ID.");
			goto out;
		}
		if (json_object_get(config_get(c, "model_providers"), json_string_value(pid)) ==
			NULL) {
			*code = "configPathNotFound";
			*cause = xstrdup("Unknown provider ID.");
			goto out;
		}
	}
	if ((trimmed != NULL && trimmed[0] == '\0') || (!json_is_string(pid) && trimmed == NULL)) {
		*cause = xstrdup("Enter a provider name.");
		goto out;
	}
	if (!json_is_string(pid))
		for (size_t i = 0;
			i < sizeof provider_reserved_names / sizeof provider_reserved_names[0]; i++)
			if (strcmp(trimmed, provider_reserved_names[i]) == 0) {
				*cause = xstrdup(
					"This name is reserved for a built-in provider. Enter "
					"a different custom provider name.");
				goto out;
			}
	if (!json_is_string(pid) && !json_is_string(url)) {
		*cause = xstrdup("A base URL is required to create a custom provider.");
		goto out;
	}
	if (json_is_string(url) && !provider_url_ok(json_string_value(url))) {
		*cause = xstrdup("Enter an HTTP(S) base URL without credentials, a query, or a "
				 "fragment.");
		goto out;
	}
	if (json_is_string(env) && !provider_env_ok(json_string_value(env))) {
		*cause = xstrdup("Invalid API key environment variable name.");
		goto out;
	}
	if (!json_is_string(pid)) {
		/* a new table: its keys in upstream's (alphabetical) order */
		*id = provider_new_id(c, trimmed);
		provider_edit(edits, provider_key(*id, NULL, "base_url"), json_copy((json_t *)url));
		if (json_is_string(env))
			provider_edit(edits, provider_key(*id, NULL, "env_key"),
				json_copy((json_t *)env));
		provider_edit(edits, provider_key(*id, NULL, "name"), json_string(trimmed));
		provider_edit(edits, provider_key(*id, NULL, "wire_api"), json_string("responses"));
	} else {
		*id = xstrdup(json_string_value(pid));
		if (trimmed != NULL)
			provider_edit(edits, provider_key(*id, NULL, "name"), json_string(trimmed));
		if (url != NULL)
			provider_edit(edits, provider_key(*id, NULL, "base_url"),
				json_is_null(url) ? NULL : json_copy((json_t *)url));
		if (env != NULL)
			provider_edit(edits, provider_key(*id, NULL, "env_key"),
				json_is_null(env) ? NULL : json_copy((json_t *)env));
	}
	*code = NULL;
	r = 0;
out:
	free(trimmed);
	return r;
}

int
provider_write(const json_t *settings, char **id, const char **code, char **cause)
{
	const char *type = json_string_value(json_object_get(settings, "type")) ?: "";
	json_t *edits = json_array(), *res;
	struct config *c;
	int r = -1;

	*id = NULL;
	*code = NULL;
	if ((c = config_load(cause)) == NULL)
		goto out;
	if (strcmp(type, "customGateway") == 0) {
		if (provider_gateway(c, settings, edits, id, code, cause) != 0)
			goto out;
	} else {
		const char *pid = json_string_value(json_object_get(settings, "providerId")) ?: "";
		int bedrock = strcmp(type, "bedrock") == 0;

		*id = xstrdup(pid);
		*code = "configValidationError";
		if (bedrock &&
			(provider_field(edits, settings, "profile", pid, "aws", "profile", cause) !=
					0 ||
				provider_field(edits, settings, "region", pid, "aws", "region",
					cause) != 0))
			goto out;
		if (!bedrock &&
			(provider_field(edits, settings, "projectId", pid, NULL, "project_id",
				 cause) != 0 ||
				provider_field(edits, settings, "location", pid, NULL, "location",
					cause) != 0 ||
				provider_field(edits, settings, "credentialFile", pid, NULL,
					"credential_file", cause) != 0))
			goto out;
		*code = NULL;
	}
	/* nothing to change (a bedrock or gcp patch of omitted members): no write at all */
	if (json_array_size(edits) > 0) {
		if ((res = config_write(edits, NULL, NULL, code, cause)) == NULL)
			goto out;
		json_decref(res);
	}
	r = 0;
out:
	if (r != 0) {
		free(*id);
		*id = NULL;
	}
	config_free(c);
	json_decref(edits);
	return r;
}
