/*
 * config/read, model/list, account/read and configWarning on the real daemon. Each test gets
 * its own CODEX_HOME; the config.toml written there is the one upstream's tests write (a mock
 * provider), and -c overrides are passed on the command line. The harness checks every answer
 * against the reference schema (ConfigReadResponse, ModelListResponse, GetAccountResponse,
 * ConfigWarningNotification).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"

#define T_REPLY 5000

static const char mock_config[] = "model = \"mock-model\"\n"
				  "approval_policy = \"never\"\n"
				  "sandbox_mode = \"read-only\"\n"
				  "model_provider = \"mock_provider\"\n"
				  "\n"
				  "[features]\n"
				  "remote_models = false\n"
				  "\n"
				  "[model_providers.mock_provider]\n"
				  "name = \"Mock provider for test\"\n"
				  "base_url = \"http://127.0.0.1:9/v1\"\n"
				  "wire_api = \"responses\"\n"
				  "request_max_retries = 0\n"
				  "stream_max_retries = 0\n";

/* Create the daemon's CODEX_HOME with this config.toml (NULL: empty home). */
static void
write_config(struct asc *c, const char *toml)
{
	const char *home = asc_codex_home(c);
	char *path = xasprintf("%s/config.toml", home);
	FILE *f;

	mkdir(home, 0700);
	if (toml != NULL) {
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(toml, f);
		fclose(f);
	}
	free(path);
}

/* A request and its successful result (new reference). */
static json_t *
call(struct asc *c, const char *method, json_t *params)
{
	long long id = asc_request(c, method, params);
	json_t *m = asc_wait_response(c, id, asc_timeout(T_REPLY));
	json_t *r = json_incref(asc_assert_result(m));

	json_decref(m);
	return r;
}

/* A request that must fail with code and words. */
static void
call_error(struct asc *c, const char *method, json_t *params, int code, const char *words)
{
	long long id = asc_request(c, method, params);
	json_t *m = asc_wait_response(c, id, asc_timeout(T_REPLY));

	asc_assert_error(m, code, words);
	json_decref(m);
}

/* A string at a path of keys (NULL-terminated). */
static const char *
str_at(const json_t *v, ...)
{
	va_list ap;
	const char *k;

	va_start(ap, v);
	while ((k = va_arg(ap, const char *)) != NULL)
		v = json_object_get(v, k);
	va_end(ap);
	return json_string_value(v);
}

static void
test_config_read_file_and_overrides(void **state)
{
	static const char *const args[] = {"-c", "model=gpt-flag", "-c",
		"sandbox_workspace_write.network_access=true", "-c", "model_reasoning_effort=high",
		NULL};
	struct asc_opts o = {.args = args};
	struct asc *c = asc_spawn(&o);
	json_t *r, *origins, *layers;
	char *file;

	write_config(c, mock_config);
	asc_initialize(c);
	r = call(c, "config/read", json_pack("{s:b}", "includeLayers", 1));
	assert_string_equal(str_at(r, "config", "model", NULL), "gpt-flag");
	assert_string_equal(str_at(r, "config", "approval_policy", NULL), "never");
	assert_string_equal(str_at(r, "config", "model_reasoning_effort", NULL), "high");
	assert_true(json_is_true(json_object_get(
		json_object_get(json_object_get(r, "config"), "sandbox_workspace_write"),
		"network_access")));
	assert_string_equal(
		str_at(r, "config", "model_providers", "mock_provider", "base_url", NULL),
		"http://127.0.0.1:9/v1");
	origins = json_object_get(r, "origins");
	file = xasprintf("%s/config.toml", asc_codex_home(c));
	assert_string_equal(str_at(origins, "model", "name", "type", NULL), "sessionFlags");
	assert_string_equal(str_at(origins, "approval_policy", "name", "type", NULL), "user");
	assert_string_equal(str_at(origins, "approval_policy", "name", "file", NULL), file);
	assert_string_equal(
		str_at(origins, "model_providers.mock_provider.wire_api", "name", "type", NULL),
		"user");
	assert_string_equal(
		str_at(origins, "sandbox_workspace_write.network_access", "name", "type", NULL),
		"sessionFlags");
	layers = json_object_get(r, "layers");
	assert_int_equal(json_array_size(layers), 3); /* flags, user, system */
	assert_string_equal(
		str_at(json_array_get(layers, 0), "name", "type", NULL), "sessionFlags");
	assert_string_equal(str_at(json_array_get(layers, 1), "name", "type", NULL), "user");
	assert_string_equal(
		str_at(json_array_get(layers, 1), "config", "model", NULL), "mock-model");
	json_decref(r);

	/* Without includeLayers there are no layers; the file is read again each time. */
	write_config(c, "model = \"edited\"\n");
	r = call(c, "config/read", json_object());
	assert_null(json_object_get(r, "layers"));
	assert_string_equal(str_at(r, "config", "model", NULL), "gpt-flag");
	assert_null(json_object_get(json_object_get(r, "config"), "approval_policy"));
	json_decref(r);
	/* A good configuration raises no configWarning. */
	assert_int_equal(asc_sync(c, asc_timeout(T_REPLY)), 0);
	free(file);
	asc_free(c);
}

static void
test_malformed_config_warns(void **state)
{
	struct asc_opts o = {.capture_stderr = 1};
	struct asc *c = asc_spawn(&o);
	json_t *w, *r;
	char *file;

	write_config(c, "model = \"x\"\n\n[model_providers.mock\nbase_url = 1\n");
	asc_initialize(c);
	w = asc_wait_notification(c, "configWarning", asc_timeout(T_REPLY));
	file = xasprintf("%s/config.toml", asc_codex_home(c));
	assert_string_equal(str_at(w, "params", "path", NULL), file);
	assert_non_null(strstr(str_at(w, "params", "details", NULL), ":3:22: expected ']'"));
	assert_int_equal(
		json_integer_value(json_object_get(
			json_object_get(
				json_object_get(json_object_get(w, "params"), "range"), "start"),
			"line")),
		3);
	json_decref(w);
	call_error(c, "config/read", json_object(), -32600, "Invalid configuration");
	/* Everything else works on the defaults. */
	r = call(c, "model/list", json_object());
	assert_string_equal(
		str_at(json_array_get(json_object_get(r, "data"), 0), "id", NULL), "gpt-6.1-sol");
	json_decref(r);
	free(file);
	asc_free(c);
}

static void
test_wrong_type_warns(void **state)
{
	static const char *const args[] = {"-c", "approval_policy=sometimes", NULL};
	struct asc_opts o = {.args = args, .capture_stderr = 1};
	struct asc *c = asc_spawn(&o);
	json_t *w;

	write_config(c, "sandbox_mode = \"read-only\"\n");
	asc_initialize(c);
	w = asc_wait_notification(c, "configWarning", asc_timeout(T_REPLY));
	assert_non_null(strstr(str_at(w, "params", "details", NULL), "approval_policy"));
	assert_null(json_object_get(json_object_get(w, "params"), "range"));
	json_decref(w);
	call_error(c, "config/read", json_object(), -32600, "-c override: approval_policy");
	asc_free(c);
}

static void
test_model_list(void **state)
{
	struct asc *c = asc_spawn(NULL);
	json_t *r, *data;
	const char *cursor;
	char *cur = NULL;
	size_t n = 0;

	write_config(c, NULL);
	asc_initialize(c);
	r = call(c, "model/list", json_pack("{s:i}", "limit", 100));
	data = json_object_get(r, "data");
	assert_int_equal(
		json_array_size(data), 9); /* upstream's bundled catalogue, hidden ones out */
	assert_true(json_is_true(json_object_get(json_array_get(data, 0), "isDefault")));
	assert_true(json_is_false(json_object_get(json_array_get(data, 1), "isDefault")));
	assert_true(json_is_null(json_object_get(r, "nextCursor")));
	json_decref(r);

	/* One at a time: the cursor walks the same list. */
	for (;;) {
		json_t *p = json_pack("{s:i}", "limit", 1);

		if (cur != NULL)
			json_object_set_new(p, "cursor", json_string(cur));
		r = call(c, "model/list", p);
		assert_int_equal(json_array_size(json_object_get(r, "data")), 1);
		assert_true(n++ < 9);
		cursor = json_string_value(json_object_get(r, "nextCursor"));
		free(cur);
		cur = cursor != NULL ? xstrdup(cursor) : NULL;
		json_decref(r);
		if (cur == NULL)
			break;
	}
	assert_int_equal(n, 9);
	call_error(c, "model/list", json_pack("{s:s}", "cursor", "invalid"), -32600,
		"invalid cursor: invalid");
	call_error(c, "model/list", json_pack("{s:s}", "modelProvider", "nope"), -32600,
		"Model provider `nope` not found");
	call_error(c, "model/list", json_pack("{s:i}", "limit", -1), -32602, NULL);
	asc_free(c);
}

static void
test_model_list_custom_provider(void **state)
{
	struct asc *c = asc_spawn(NULL);
	json_t *r, *m;

	write_config(c, mock_config);
	asc_initialize(c);
	/* Upstream lists its bundled catalogue for a custom provider too, default unchanged. */
	r = call(c, "model/list", json_object());
	assert_int_equal(json_array_size(json_object_get(r, "data")), 9);
	m = json_array_get(json_object_get(r, "data"), 0);
	assert_string_equal(str_at(m, "id", NULL), "gpt-6.1-sol");
	assert_true(json_is_true(json_object_get(m, "isDefault")));
	json_decref(r);
	r = call(c, "model/list", json_pack("{s:s}", "modelProvider", "openai"));
	assert_int_equal(json_array_size(json_object_get(r, "data")), 9);
	json_decref(r);
	asc_free(c);
}

static void
test_account_read(void **state)
{
	static const char *const env_key[] = {"OPENAI_API_KEY=sk-secret-1234", NULL};
	static const char *const env_none[] = {"OPENAI_API_KEY", NULL};
	struct asc_opts o = {.env = env_key};
	struct asc *c;
	json_t *r;

	/* Custom provider without requires_openai_auth: no OpenAI account needed. */
	c = asc_spawn(&o);
	write_config(c, mock_config);
	asc_initialize(c);
	r = call(c, "account/read", json_object());
	assert_true(json_is_null(json_object_get(r, "account")));
	assert_true(json_is_false(json_object_get(r, "requiresOpenaiAuth")));
	json_decref(r);
	asc_free(c);

	/* openai with OPENAI_API_KEY: an API-key account; the key never appears. */
	c = asc_spawn(&o);
	write_config(c, NULL);
	asc_initialize(c);
	r = call(c, "account/read", json_pack("{s:b}", "refreshToken", 1));
	assert_string_equal(str_at(r, "account", "type", NULL), "apiKey");
	assert_true(json_is_true(json_object_get(r, "requiresOpenaiAuth")));
	assert_null(strstr(asc_raw(c), "sk-secret"));
	json_decref(r);
	asc_free(c);

	/* openai without any key: no account. */
	o.env = env_none;
	c = asc_spawn(&o);
	write_config(c, NULL);
	asc_initialize(c);
	r = call(c, "account/read", json_object());
	assert_true(json_is_null(json_object_get(r, "account")));
	assert_true(json_is_true(json_object_get(r, "requiresOpenaiAuth")));
	json_decref(r);
	asc_free(c);
}

static void
test_bad_override_refused(void **state)
{
	const char *bin = getenv("APP_SERVER_BIN");
	int status = 0, fd;
	pid_t pid;

	/* A malformed -c is a usage error: exit 2 before serving anything. */
	if (bin == NULL)
		bin = "build/app-server";
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fd = open("/dev/null", O_RDWR);
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(bin, bin, "-c", "no-equals", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 2);
}

static void
test_invalid_params(void **state)
{
	struct asc *c = asc_spawn(NULL);

	write_config(c, NULL);
	asc_initialize(c);
	call_error(c, "config/read", json_pack("{s:s}", "includeLayers", "yes"), -32602,
		"includeLayers");
	call_error(c, "account/read", json_pack("{s:s}", "refreshToken", "yes"), -32602, NULL);
	asc_free(c);
}

/* Exit code of `sh -c script` run by command/exec with no sandboxPolicy. */
static int
exec_default(struct asc *c, const char *script)
{
	json_t *r =
		call(c, "command/exec", json_pack("{s:[s,s,s]}", "command", "sh", "-c", script));
	int code = (int)json_integer_value(json_object_get(r, "exitCode"));

	json_decref(r);
	return code;
}

/* Without sandboxPolicy, command/exec runs under config.toml's sandbox_mode (readOnly unset). */
static void
test_exec_default_policy(void **state)
{
	struct asc *c;
	char *toml, *inside, *outside;

	c = asc_spawn(NULL);
	inside = xasprintf("touch %s/inside", asc_dir(c));
	asc_initialize(c);
	assert_int_not_equal(exec_default(c, inside), 0); /* readOnly */
	asc_free(c);
	free(inside);

	c = asc_spawn(NULL);
	write_config(c, "sandbox_mode = \"danger-full-access\"\n");
	inside = xasprintf("touch %s/inside", asc_dir(c));
	asc_initialize(c);
	assert_int_equal(exec_default(c, inside), 0);
	asc_free(c);
	free(inside);

	c = asc_spawn(NULL);
	toml = xasprintf("sandbox_mode = \"workspace-write\"\n[sandbox_workspace_write]\n"
			 "writable_roots = [\"%s/w\"]\nexclude_slash_tmp = true\n"
			 "exclude_tmpdir_env_var = true\n",
		asc_dir(c));
	write_config(c, toml);
	inside = xasprintf("%s/w", asc_dir(c));
	assert_int_equal(mkdir(inside, 0700), 0); /* a missing writable root would be skipped */
	free(inside);
	inside = xasprintf("touch %s/w/inside", asc_dir(c));
	outside = xasprintf("touch %s/outside", asc_dir(c));
	asc_initialize(c);
	assert_int_equal(exec_default(c, inside), 0);
	assert_int_not_equal(exec_default(c, outside), 0);
	asc_free(c);
	free(toml);
	free(inside);
	free(outside);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_read_file_and_overrides),
		cmocka_unit_test(test_malformed_config_warns),
		cmocka_unit_test(test_wrong_type_warns),
		cmocka_unit_test(test_model_list),
		cmocka_unit_test(test_model_list_custom_provider),
		cmocka_unit_test(test_account_read),
		cmocka_unit_test(test_bad_override_refused),
		cmocka_unit_test(test_invalid_params),
		cmocka_unit_test(test_exec_default_policy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
