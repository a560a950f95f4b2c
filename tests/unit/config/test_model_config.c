/*
 * Tests for server/config.c: loading $CODEX_HOME/config.toml with -c overrides, the provider
 * tables (upstream's keys and defaults, the built-ins), what happens to a file that does not
 * parse or has a wrongly typed key, origins and layers for config/read, and API keys.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "protocol/xmalloc.h"

static char home[64];

/* A fresh CODEX_HOME with this config.toml (NULL: none). */
static void
write_home(const char *toml)
{
	char *path;
	FILE *f;

	snprintf(home, sizeof home, "/tmp/test_model_config.XXXXXX");
	assert_non_null(mkdtemp(home));
	setenv("CODEX_HOME", home, 1);
	if (toml == NULL)
		return;
	path = xasprintf("%s/config.toml", home);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(toml, f);
	fclose(f);
	free(path);
}

/* Remove the CODEX_HOME of write_home. */
static void
drop_home(void)
{
	char *path = xasprintf("%s/config.toml", home);

	unlink(path);
	free(path);
	path = xasprintf("%s/auth.json", home);
	unlink(path);
	free(path);
	rmdir(home);
	config_clear_overrides();
}

static struct config *
load(void)
{
	char *cause = NULL;
	struct config *c = config_load(&cause);

	if (c == NULL)
		fail_msg("config_load: %s", cause);
	return c;
}

static const char upstream_config[] = "model = \"mock-model\"\n"
				      "approval_policy = \"never\"\n"
				      "sandbox_mode = \"read-only\"\n"
				      "model_provider = \"mock_provider\"\n"
				      "[features]\n"
				      "remote_models = false\n"
				      "[model_providers.mock_provider]\n"
				      "name = \"Mock provider for test\"\n"
				      "base_url = \"http://127.0.0.1:4567/v1/\"\n"
				      "wire_api = \"responses\"\n"
				      "request_max_retries = 0\n"
				      "stream_max_retries = 0\n"
				      "env_key = \"MOCK_KEY\"\n"
				      "http_headers = { \"X-A\" = \"1\" }\n"
				      "query_params = { \"api-version\" = \"2025-01-01\" }\n";

static void
test_upstream_test_config(void **state)
{
	struct config *c;
	const struct model_provider *p;
	json_t *w;

	write_home(upstream_config);
	c = load();
	assert_null(config_error(c));
	assert_string_equal(config_model(c), "mock-model");
	assert_string_equal(config_provider_id(c), "mock_provider");
	p = config_provider(c, NULL);
	assert_non_null(p);
	assert_string_equal(p->name, "Mock provider for test");
	assert_string_equal(p->base_url, "http://127.0.0.1:4567/v1"); /* trailing '/' dropped */
	assert_int_equal(p->wire, MODEL_WIRE_RESPONSES);
	assert_int_equal(p->request_max_retries, 0);
	assert_int_equal(p->stream_max_retries, 0);
	assert_int_equal(p->stream_idle_timeout_ms, 300000);
	assert_string_equal(p->env_key, "MOCK_KEY");
	assert_string_equal(json_string_value(json_object_get(p->http_headers, "X-A")), "1");
	assert_false(p->requires_openai_auth);
	assert_true(json_is_false(config_get(c, "features.remote_models")));
	w = config_warnings(c);
	assert_int_equal(json_array_size(w), 0);
	json_decref(w);
	config_free(c);
	drop_home();
}

static void
test_defaults_and_builtins(void **state)
{
	struct config *c;
	const struct model_provider *p;

	write_home(NULL);
	unsetenv("OPENAI_BASE_URL");
	c = load();
	assert_null(config_error(c));
	assert_string_equal(config_model(c), CONFIG_DEFAULT_MODEL);
	assert_string_equal(config_provider_id(c), "openai");
	p = config_provider(c, NULL);
	assert_string_equal(p->base_url, "https://api.openai.com/v1");
	assert_true(p->requires_openai_auth);
	assert_int_equal(p->request_max_retries, 4);
	assert_int_equal(p->stream_max_retries, 5);
	p = config_provider(c, "ollama");
	assert_int_equal(p->wire, MODEL_WIRE_CHAT);
	assert_string_equal(p->base_url, "http://localhost:11434/v1");
	assert_null(config_provider(c, "nope"));
	config_free(c);

	/* OPENAI_BASE_URL is honoured; openai_base_url in the config wins over it. */
	setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v9/", 1);
	c = load();
	assert_string_equal(config_provider(c, "openai")->base_url, "http://127.0.0.1:1/v9");
	config_free(c);
	assert_int_equal(
		config_add_override("openai_base_url=http://127.0.0.1:2/v1", &(char *){0}), 0);
	c = load();
	assert_string_equal(config_provider(c, "openai")->base_url, "http://127.0.0.1:2/v1");
	config_free(c);
	unsetenv("OPENAI_BASE_URL");
	drop_home();
}

static void
test_overrides(void **state)
{
	struct config *c;
	char *cause = NULL;
	const struct model_provider *p;

	write_home(upstream_config);
	assert_int_equal(config_add_override("model=gpt-5.1", &cause), 0); /* literal string */
	assert_int_equal(
		config_add_override("model_providers.mock_provider.wire_api=\"chat\"", &cause), 0);
	assert_int_equal(
		config_add_override(" sandbox_workspace_write.writable_roots = [\"/w\"] ", &cause),
		0);
	assert_int_equal(config_add_override(
				 "model_providers.mock_provider.stream_max_retries=1000", &cause),
		0);
	assert_int_equal(config_add_override("no-equals-sign", &cause), -22);
	free(cause);
	cause = NULL;
	assert_int_equal(config_add_override("=1", &cause), -22);
	free(cause);
	cause = NULL;
	assert_int_equal(config_add_override("a..b=1", &cause), -22);
	free(cause);
	c = load();
	assert_null(config_error(c));
	assert_string_equal(config_model(c), "gpt-5.1");
	p = config_provider(c, NULL);
	assert_int_equal(p->wire, MODEL_WIRE_CHAT);
	assert_int_equal(p->stream_max_retries, CONFIG_MAX_RETRIES); /* capped */
	assert_string_equal(json_string_value(json_array_get(
				    config_get(c, "sandbox_workspace_write.writable_roots"), 0)),
		"/w");
	/* The file's other keys survive the merge. */
	assert_string_equal(p->name, "Mock provider for test");
	config_free(c);
	drop_home();
}

static void
test_malformed_file(void **state)
{
	struct config *c;
	json_t *w;
	char *cause = NULL;

	write_home("model = \"x\"\n[broken\n");
	assert_int_equal(config_add_override("model=from-flag", &cause), 0);
	c = load();
	assert_non_null(config_error(c));
	assert_non_null(strstr(config_error(c), "config.toml:2:8: expected ']'"));
	/* The file is ignored as a whole; the overrides still apply. */
	assert_string_equal(config_model(c), "from-flag");
	w = config_warnings(c);
	assert_int_equal(json_array_size(w), 1);
	assert_int_equal(
		json_integer_value(json_object_get(
			json_object_get(json_object_get(json_array_get(w, 0), "range"), "start"),
			"line")),
		2);
	json_decref(w);
	assert_null(config_read_result(c, 0, &cause));
	assert_non_null(strstr(cause, "Invalid configuration"));
	free(cause);
	config_free(c);
	drop_home();
}

static void
test_wrong_types(void **state)
{
	static const struct {
		const char *toml, *words;
	} cases[] = {
		{"approval_policy = \"on-failure\"", "approval_policy"},
		{"sandbox_mode = 1", "sandbox_mode"},
		{"model = [1]", "model"},
		{"[sandbox_workspace_write]\nnetwork_access = \"yes\"",
			"sandbox_workspace_write.network_access"},
		{"[model_providers.p]\nwire_api = \"grpc\"", "model_providers.p.wire_api"},
		{"[model_providers.p]\nrequest_max_retries = -1",
			"model_providers.p.request_max_retries"},
		{"[model_providers.p]\nhttp_headers = { a = 1 }", "model_providers.p.http_headers"},
		{"model_providers = 3", "model_providers"},
	};
	struct config *c;

	for (size_t i = 0; i < nitems(cases); i++) {
		write_home(cases[i].toml);
		c = load();
		if (config_error(c) == NULL || strstr(config_error(c), cases[i].words) == NULL)
			fail_msg("%s: error %s", cases[i].toml,
				config_error(c) != NULL ? config_error(c) : "(none)");
		config_free(c);
		drop_home();
	}
}

static void
test_unknown_provider_warns(void **state)
{
	struct config *c;
	json_t *w;

	write_home("model_provider = \"missing\"\n");
	c = load();
	assert_null(config_error(c)); /* not fatal: model requests will say so */
	assert_null(config_provider(c, NULL));
	w = config_warnings(c);
	assert_int_equal(json_array_size(w), 1);
	assert_non_null(strstr(
		json_string_value(json_object_get(json_array_get(w, 0), "details")), "missing"));
	json_decref(w);
	config_free(c);
	drop_home();
}

static void
test_read_result(void **state)
{
	struct config *c;
	char *cause = NULL, *path;
	json_t *r, *o, *layers;

	write_home("model = \"gpt-user\"\n[sandbox_workspace_write]\nwritable_roots = "
		   "[\"/user\"]\nnetwork_access = true\n");
	assert_int_equal(config_add_override("model=gpt-flag", &cause), 0);
	c = load();
	r = config_read_result(c, 1, &cause);
	assert_non_null(r);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(r, "config"), "model")),
		"gpt-flag");
	o = json_object_get(r, "origins");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_object_get(o, "model"), "name"), "type")),
		"sessionFlags");
	path = xasprintf("%s/config.toml", home);
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(
				json_object_get(o, "sandbox_workspace_write.writable_roots.0"),
				"name"),
			"file")),
		path);
	assert_non_null(json_object_get(o, "sandbox_workspace_write.network_access"));
	assert_int_equal(
		strncmp(json_string_value(json_object_get(json_object_get(o, "model"), "version")),
			"sha256:", 7),
		0);
	assert_int_equal(
		strlen(json_string_value(json_object_get(json_object_get(o, "model"), "version"))),
		7 + 64);
	layers = json_object_get(r, "layers");
	/* flags, user, and the system layer upstream lists (while /etc/codex/config.toml is absent)
	 */
	assert_int_equal(
		json_array_size(layers), access("/etc/codex/config.toml", F_OK) != 0 ? 3 : 2);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_array_get(layers, 0), "name"), "type")),
		"sessionFlags");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_array_get(layers, 1), "name"), "type")),
		"user");
	json_decref(r);
	r = config_read_result(c, 0, &cause);
	assert_null(json_object_get(r, "layers"));
	json_decref(r);
	free(path);
	config_free(c);
	drop_home();
}

/* The version of a layer is the SHA-256 of its sorted compact JSON (checked against a known
 * digest of "{}"). */
static void
test_version_digest(void **state)
{
	struct config *c;
	char *cause = NULL;
	json_t *r;

	write_home(NULL);
	assert_int_equal(config_add_override("a=1", &cause), 0);
	c = load();
	r = config_read_result(c, 1, &cause);
	/* sha256("{}") and sha256("{\"a\":1}") */
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(r, "layers"), 1), "version")),
		"sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(r, "layers"), 0), "version")),
		"sha256:015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862");
	json_decref(r);
	config_free(c);
	drop_home();
}

static void
test_api_keys(void **state)
{
	struct config *c;
	char *key, *path;
	FILE *f;

	write_home(upstream_config);
	c = load();
	setenv("MOCK_KEY", "sk-env", 1);
	key = config_provider_api_key(config_provider(c, NULL));
	assert_string_equal(key, "sk-env");
	free(key);
	unsetenv("MOCK_KEY");
	assert_null(config_provider_api_key(config_provider(c, NULL)));
	/* openai: OPENAI_API_KEY, else auth.json. */
	setenv("OPENAI_API_KEY", "sk-openai", 1);
	key = config_provider_api_key(config_provider(c, "openai"));
	assert_string_equal(key, "sk-openai");
	free(key);
	unsetenv("OPENAI_API_KEY");
	assert_null(config_provider_api_key(config_provider(c, "openai")));
	path = xasprintf("%s/auth.json", home);
	f = fopen(path, "w");
	fputs("{\"OPENAI_API_KEY\":\"sk-file\"}", f);
	fclose(f);
	key = config_provider_api_key(config_provider(c, "openai"));
	assert_string_equal(key, "sk-file");
	free(key);
	free(path);
	config_free(c);
	drop_home();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_upstream_test_config),
		cmocka_unit_test(test_defaults_and_builtins),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_malformed_file),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_unknown_provider_warns),
		cmocka_unit_test(test_read_result),
		cmocka_unit_test(test_version_digest),
		cmocka_unit_test(test_api_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
