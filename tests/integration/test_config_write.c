/*
 * config/batchWrite and config/value/write on the real daemon, against upstream 0.169's
 * recorded answers: the same config.toml and the same edits give the same bytes on disk
 * (everything outside the edited keys unchanged), the same version ("sha256:" of the layer)
 * and, re-read with config/read, the new values. Conflicts and refusals carry upstream's
 * code, words and data.config_write_error_code.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "protocol/xmalloc.h"

#define T_REPLY 5000

/* Upstream's input and output files (the same as tests/unit/protocol/test_toml_edit.c's). */
static const char before[] = "# top comment\nmodel = \"gpt-5.1\"   # trailing\n"
			     "approval_policy = \"never\"\ntui.theme = \"dark\"\n\n"
			     "[sandbox_workspace_write]\n# inner comment\nnetwork_access = false\n"
			     "writable_roots = [\"/tmp/a\", \"/tmp/b\"]\n\n[mcp_servers.docs]\n"
			     "command = \"docs-server\"\nargs = [\"--port\", \"4000\"]\n\n"
			     "[projects.\"/tmp/x\"]\ntrust_level = \"trusted\"\n";
static const char after[] =
	"# top comment\nmodel = \"gpt-5.2\"   # trailing\n"
	"tui.theme = \"dark\"\ntui.animations = false\nmodel_verbosity = \"low\"\n\n"
	"[sandbox_workspace_write]\n# inner comment\nnetwork_access = true\n"
	"writable_roots = [\"/tmp/a\", \"/tmp/b\"]\n\n[mcp_servers.docs]\n"
	"command = \"docs-server\"\nargs = [\"--port\", \"4000\"]\n\n"
	"[mcp_servers.docs.env]\nA = \"1\"\n\n[mcp_servers.new]\ncommand = \"x\"\n"
	"args = [\"a\"]\n\n[projects.\"/tmp/x\"]\ntrust_level = \"trusted\"\n\n"
	"[projects.\"/tmp/y z\"]\ntrust_level = \"trusted\"\n\n[features]\n"
	"shell_snapshot = true\n";
/* The versions upstream answered for before and after. */
#define V_AFTER "sha256:403b1c3a4b4f152e8ca231306450c2d3b74ef59d68bbe9105cd53a44cb8450a7"

static char *
write_config(struct asc *c, const char *toml)
{
	char *path = xasprintf("%s/config.toml", asc_codex_home(c));
	FILE *f;

	mkdir(asc_codex_home(c), 0700);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(toml, f);
	fclose(f);
	chmod(path, 0640);
	return path;
}

static char *
read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *text = xcalloc(1, 65536);

	assert_non_null(f);
	assert_true(fread(text, 1, 65535, f) < 65535);
	fclose(f);
	return text;
}

static json_t *
call(struct asc *c, const char *method, json_t *params)
{
	long long id = asc_request(c, method, params);
	json_t *m = asc_wait_response(c, id, asc_timeout(T_REPLY));
	json_t *r = json_incref(asc_assert_result(m));

	json_decref(m);
	return r;
}

static void
call_error(struct asc *c, const char *method, json_t *params, const char *code, const char *words)
{
	long long id = asc_request(c, method, params);
	json_t *m = asc_wait_response(c, id, asc_timeout(T_REPLY));

	asc_assert_error(m, -32600, words);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_object_get(m, "error"), "data"),
				    "config_write_error_code")),
		code);
	json_decref(m);
}

static json_t *
edit(const char *key, json_t *value, const char *strategy)
{
	return json_pack(
		"{s:s, s:o, s:s}", "keyPath", key, "value", value, "mergeStrategy", strategy);
}

static void
test_batch_write_round_trip(void **state)
{
	struct asc *c = asc_spawn(NULL);
	char *path = write_config(c, before), *text;
	json_t *r, *cfg;
	struct stat st;

	(void)state;
	asc_initialize(c);
	r = call(c, "config/batchWrite",
		json_pack("{s:[o, o, o, o, o, o, o, o, o]}", "edits",
			edit("model", json_string("gpt-5.2"), "replace"),
			edit("sandbox_workspace_write.network_access", json_true(), "replace"),
			edit("model_verbosity", json_string("low"), "replace"),
			edit("features.shell_snapshot", json_true(), "replace"),
			edit("mcp_servers.docs.env", json_pack("{s:s}", "A", "1"), "upsert"),
			edit("mcp_servers.new",
				json_pack("{s:s, s:[s]}", "command", "x", "args", "a"), "upsert"),
			edit("approval_policy", json_null(), "replace"),
			edit("tui.animations", json_false(), "replace"),
			edit("projects.\"/tmp/y z\".trust_level", json_string("trusted"),
				"replace")));
	assert_string_equal(json_string_value(json_object_get(r, "status")), "ok");
	assert_string_equal(json_string_value(json_object_get(r, "version")), V_AFTER);
	assert_string_equal(json_string_value(json_object_get(r, "filePath")), path);
	assert_true(json_is_null(json_object_get(r, "overriddenMetadata")));
	json_decref(r);
	text = read_file(path);
	assert_string_equal(text, after);
	free(text);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);

	/* Re-read: the new values, and the version to write against next. */
	r = call(c, "config/read", json_pack("{s:b}", "includeLayers", 1));
	cfg = json_object_get(r, "config");
	assert_string_equal(json_string_value(json_object_get(cfg, "model")), "gpt-5.2");
	assert_null(json_object_get(cfg, "approval_policy"));
	assert_string_equal(
		json_string_value(json_object_get(
			json_object_get(
				json_object_get(json_object_get(cfg, "mcp_servers"), "docs"),
				"env"),
			"A")),
		"1");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(r, "layers"), 0), "version")),
		V_AFTER);
	json_decref(r);

	/* A stale version is refused and nothing is written; the right one is accepted. */
	call_error(c, "config/value/write",
		json_pack("{s:s, s:i, s:s, s:s}", "keyPath", "model_context_window", "value", 1000,
			"mergeStrategy", "replace", "expectedVersion", "sha256:stale"),
		"configVersionConflict",
		"Configuration was modified since last read. Fetch latest version and retry.");
	r = call(c, "config/value/write",
		json_pack("{s:s, s:i, s:s, s:s}", "keyPath", "model_context_window", "value", 1000,
			"mergeStrategy", "replace", "expectedVersion", V_AFTER));
	json_decref(r);
	text = read_file(path);
	assert_non_null(strstr(text, "model_verbosity = \"low\"\nmodel_context_window = 1000\n"));
	free(text);
	free(path);
	asc_free(c);
}

static void
test_write_refusals(void **state)
{
	static const char *const args[] = {"-c", "model_verbosity=high", NULL};
	struct asc_opts o = {.args = args};
	struct asc *c = asc_spawn(&o);
	char *path = write_config(c, before), *text;
	json_t *r, *meta;

	(void)state;
	asc_initialize(c);
	call_error(c, "config/value/write",
		json_pack("{s:s, s:s, s:s, s:s}", "keyPath", "model", "value", "x", "mergeStrategy",
			"replace", "filePath", "/tmp/other.toml"),
		"configLayerReadonly", "Only writes to the user config are allowed");
	call_error(c, "config/value/write",
		json_pack("{s:s, s:s, s:s}", "keyPath", "a..b", "value", "x", "mergeStrategy",
			"replace"),
		"configValidationError", "keyPath segments must not be empty");
	call_error(c, "config/value/write",
		json_pack("{s:s, s:s, s:s}", "keyPath", "model.sub", "value", "x", "mergeStrategy",
			"replace"),
		"configValidationError", "cannot set value on non-table parent");
	call_error(c, "config/batchWrite",
		json_pack("{s:[o, o]}", "edits", edit("model", json_string("ok"), "replace"),
			edit("approval_policy", json_integer(5), "replace")),
		"configValidationError", "Invalid configuration: approval_policy");
	text = read_file(path);
	assert_string_equal(text, before); /* all or nothing */
	free(text);

	/* A key the session flags hide is written, and said to be overridden. */
	r = call(c, "config/value/write",
		json_pack("{s:s, s:s, s:s}", "keyPath", "model_verbosity", "value", "low",
			"mergeStrategy", "replace"));
	assert_string_equal(json_string_value(json_object_get(r, "status")), "okOverridden");
	meta = json_object_get(r, "overriddenMetadata");
	assert_string_equal(
		json_string_value(json_object_get(meta, "message")), "Overridden by session flags");
	assert_string_equal(json_string_value(json_object_get(meta, "effectiveValue")), "high");
	json_decref(r);
	free(path);
	asc_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_write_round_trip),
		cmocka_unit_test(test_write_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
