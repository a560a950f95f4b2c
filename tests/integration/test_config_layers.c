/*
 * config/read's project layers and configRequirements/read on the real daemon, against
 * upstream 0.169's recorded answers. The tree is upstream's recording's:
 *
 *   repo/.git/HEAD                  the project root (a `.git` folder needs a HEAD)
 *   repo/.codex/config.toml         model_reasoning_effort = "high"
 *   repo/a/.codex/                  no config.toml: an empty layer, still listed
 *   repo/a/b/.codex/config.toml     model = "m-b"
 *   repo/a/b/c                      the cwd
 *
 * with `[projects."<dir>"] trust_level` in the user's config.toml. Layer versions are the
 * ones upstream computed for the same tables (sha256 of the canonical JSON).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "tests/helpers/skip_note.h"

#define T_REPLY 5000

/* Upstream's versions of the recorded layers' tables. */
#define V_EMPTY "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
#define V_MB	"sha256:e54484365765aeb5b3e3b5114da2f3f5e0fb627a3d15309c03c326535b95249e"
#define V_HIGH	"sha256:9f62d11aab3f8b5b21f3d072462d90fca216aa763e6e6e37800257691da7f867"

/* Write text to dir/name (both made as needed). */
static void
put(const char *dir, const char *name, const char *text)
{
	char *path = xasprintf("%s/%s", dir, name), *slash;
	FILE *f;

	for (slash = strchr(path + 1, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	if (text != NULL) {
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(text, f);
		fclose(f);
	} else
		mkdir(path, 0755);
	free(path);
}

/*
 * config.toml: `model` and up to two `[projects."<dir>/<sub>"] trust_level = <level>` entries
 * (sub NULL: none).
 */
static void
trust(struct asc *c, const char *sub1, const char *level1, const char *sub2, const char *level2)
{
	char *toml = xstrdup("model = \"m-user\"\n"), *old;
	const char *const subs[] = {sub1, sub2}, *const levels[] = {level1, level2};

	for (size_t i = 0; i < 2; i++) {
		if (subs[i] == NULL)
			continue;
		old = toml;
		toml = xasprintf("%s[projects.\"%s/%s\"]\ntrust_level = \"%s\"\n", old, asc_dir(c),
			subs[i], levels[i]);
		free(old);
	}
	put(asc_codex_home(c), "config.toml", toml);
	free(toml);
}

/* The recorded tree under the daemon's folder (git: the root's marker, or NULL); no trust. */
static struct asc *
tree(const char *git)
{
	struct asc *c = asc_spawn(NULL);
	const char *d = asc_dir(c);

	if (git != NULL)
		put(d, git, strcmp(git, "repo/.git") == 0 ? "gitdir: /nowhere\n" : "ref: x\n");
	put(d, "repo/.codex/config.toml", "model_reasoning_effort = \"high\"\n");
	put(d, "repo/a/.codex", NULL);
	put(d, "repo/a/b/.codex/config.toml", "model = \"m-b\"\n");
	put(d, "repo/a/b/c", NULL);
	trust(c, NULL, NULL, NULL, NULL);
	asc_initialize(c);
	return c;
}

/* config/read {includeLayers, cwd: <dir>/<sub>} (new reference). */
static json_t *
read_at(struct asc *c, const char *sub)
{
	json_t *p = json_pack("{s:b}", "includeLayers", 1), *m, *r;
	long long id;

	if (sub != NULL)
		json_object_set_new(p, "cwd", json_sprintf("%s/%s", asc_dir(c), sub));
	id = asc_request(c, "config/read", p);
	m = asc_wait_response(c, id, asc_timeout(T_REPLY));
	r = json_incref(asc_assert_result(m));
	json_decref(m);
	return r;
}

/* Layer i is the project layer of <dir>/<sub>/.codex with this version and disabledReason. */
static void
assert_project(const json_t *r, size_t i, struct asc *c, const char *sub, const char *version,
	const char *reason)
{
	const json_t *l = json_array_get(json_object_get(r, "layers"), i);
	char *dot = xasprintf("%s/%s/.codex", asc_dir(c), sub);

	assert_non_null(l);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(l, "name"), "type")), "project");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(l, "name"), "dotCodexFolder")),
		dot);
	assert_string_equal(json_string_value(json_object_get(l, "version")), version);
	if (reason == NULL)
		assert_null(json_object_get(l, "disabledReason"));
	else
		assert_string_equal(
			json_string_value(json_object_get(l, "disabledReason")), reason);
	free(dot);
}

/* The type of layer i. */
static const char *
layer_type(const json_t *r, size_t i)
{
	return json_string_value(json_object_get(
		json_object_get(json_array_get(json_object_get(r, "layers"), i), "name"), "type"));
}

/* A string of the merged config. */
static const char *
cfg_str(const json_t *r, const char *key)
{
	return json_string_value(json_object_get(json_object_get(r, "config"), key));
}

static void
test_trusted_project_layers(void **state)
{
	struct asc *c;
	json_t *r, *origin;
	char *dot;

	(void)state;
	c = tree("repo/.git/HEAD");
	trust(c, "repo", "trusted", NULL, NULL);
	r = read_at(c, "repo/a/b/c");
	/* deepest first, then user and system; an empty .codex is an empty layer */
	assert_int_equal(json_array_size(json_object_get(r, "layers")), 5);
	assert_project(r, 0, c, "repo/a/b", V_MB, NULL);
	assert_project(r, 1, c, "repo/a", V_EMPTY, NULL);
	assert_project(r, 2, c, "repo", V_HIGH, NULL);
	assert_string_equal(layer_type(r, 3), "user");
	assert_string_equal(layer_type(r, 4), "system");
	/* merged: the deepest layer wins over the user file */
	assert_string_equal(cfg_str(r, "model"), "m-b");
	assert_string_equal(cfg_str(r, "model_reasoning_effort"), "high");
	origin = json_object_get(json_object_get(r, "origins"), "model");
	dot = xasprintf("%s/repo/a/b/.codex", asc_dir(c));
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(origin, "name"), "dotCodexFolder")),
		dot);
	assert_string_equal(json_string_value(json_object_get(origin, "version")), V_MB);
	free(dot);
	json_decref(r);
	/* without a cwd upstream reads no project layer, whatever the daemon's cwd */
	r = read_at(c, NULL);
	assert_int_equal(json_array_size(json_object_get(r, "layers")), 2);
	assert_string_equal(cfg_str(r, "model"), "m-user");
	json_decref(r);
	asc_free(c);
}

static void
test_untrusted_and_unlisted_projects(void **state)
{
	struct asc *c = tree("repo/.git/HEAD");
	json_t *r;
	char *unlisted, *untrusted;

	(void)state;
	/* not listed: upstream's text names the root and the user's config.toml */
	unlisted = xasprintf("To load project-local config, hooks, and exec policies, add %s/repo "
			     "as a trusted project in %s/config.toml.",
		asc_dir(c), asc_codex_home(c));
	r = read_at(c, "repo/a/b/c");
	assert_int_equal(json_array_size(json_object_get(r, "layers")), 5);
	assert_project(r, 0, c, "repo/a/b", V_MB, unlisted);
	assert_project(r, 1, c, "repo/a", V_EMPTY, unlisted);
	assert_project(r, 2, c, "repo", V_HIGH, unlisted);
	assert_string_equal(cfg_str(r, "model"), "m-user");
	assert_null(json_object_get(json_object_get(r, "config"), "model_reasoning_effort"));
	assert_null(json_object_get(json_object_get(r, "origins"), "model_reasoning_effort"));
	json_decref(r);

	/* untrusted: the other text, naming the entry that matched */
	trust(c, "repo", "untrusted", NULL, NULL);
	untrusted = xasprintf(
		"%s/repo is marked as untrusted in the effective configuration. To load "
		"project-local config, hooks, and exec policies, update its trust setting. If "
		"that setting is managed by your organization, contact your administrator.",
		asc_dir(c));
	r = read_at(c, "repo/a/b/c");
	assert_project(r, 0, c, "repo/a/b", V_MB, untrusted);
	assert_project(r, 2, c, "repo", V_HIGH, untrusted);
	assert_string_equal(cfg_str(r, "model"), "m-user");
	json_decref(r);

	/* trust is per folder, falling back to the root's entry (upstream's recording) */
	trust(c, "repo/a", "trusted", NULL, NULL);
	r = read_at(c, "repo/a/b/c");
	assert_project(r, 0, c, "repo/a/b", V_MB, unlisted);
	assert_project(r, 1, c, "repo/a", V_EMPTY, NULL);
	assert_project(r, 2, c, "repo", V_HIGH, unlisted);
	assert_string_equal(cfg_str(r, "model"), "m-user");
	json_decref(r);
	trust(c, "repo", "trusted", "repo/a/b", "untrusted");
	free(untrusted);
	untrusted = xasprintf(
		"%s/repo/a/b is marked as untrusted in the effective configuration. To load "
		"project-local config, hooks, and exec policies, update its trust setting. If "
		"that setting is managed by your organization, contact your administrator.",
		asc_dir(c));
	r = read_at(c, "repo/a/b/c");
	assert_project(r, 0, c, "repo/a/b", V_MB, untrusted);
	assert_project(r, 1, c, "repo/a", V_EMPTY, NULL);
	assert_project(r, 2, c, "repo", V_HIGH, NULL);
	assert_string_equal(cfg_str(r, "model"), "m-user");
	assert_string_equal(cfg_str(r, "model_reasoning_effort"), "high");
	json_decref(r);
	free(untrusted);
	free(unlisted);
	asc_free(c);
}

/* Whether a folder above dir holds a git `.git`, which would be the root instead. */
static int
git_above(const char *dir)
{
	char path[PATH_MAX], *slash;
	struct stat st;

	snprintf(path, sizeof path, "%s", dir);
	while ((slash = strrchr(path, '/')) != NULL && slash != path) {
		*slash = '\0';
		char probe[PATH_MAX + 16];

		snprintf(probe, sizeof probe, "%s/.git", path);
		if (stat(probe, &st) == 0) {
			snprintf(probe, sizeof probe, "%s/.git/HEAD", path);
			if (!S_ISDIR(st.st_mode) || access(probe, F_OK) == 0)
				return 1;
		}
	}
	return 0;
}

static void
test_project_root_markers(void **state)
{
	struct asc *c;
	json_t *r;

	(void)state;
	/* a `.git` file (a worktree's pointer) is a root as well */
	c = tree("repo/.git");
	trust(c, "repo", "trusted", NULL, NULL);
	r = read_at(c, "repo/a/b/c");
	assert_int_equal(json_array_size(json_object_get(r, "layers")), 5);
	assert_string_equal(cfg_str(r, "model"), "m-b");
	json_decref(r);
	asc_free(c);

	/* an empty `.git` folder is not: the root is the cwd itself, which has no .codex */
	c = tree(NULL);
	put(asc_dir(c), "repo/.git", NULL);
	if (git_above(asc_dir(c))) {
		asc_free(c);
		skip_test("a folder above the temporary folder holds a .git: it would be the root");
		return;
	}
	trust(c, "repo", "trusted", NULL, NULL);
	r = read_at(c, "repo/a/b/c");
	assert_int_equal(json_array_size(json_object_get(r, "layers")), 2);
	assert_string_equal(cfg_str(r, "model"), "m-user");
	json_decref(r);
	/* from repo/a/b, the cwd's own .codex is the one layer, trusted by its own entry */
	trust(c, "repo/a/b", "trusted", NULL, NULL);
	r = read_at(c, "repo/a/b");
	assert_int_equal(json_array_size(json_object_get(r, "layers")), 3);
	assert_project(r, 0, c, "repo/a/b", V_MB, NULL);
	assert_string_equal(cfg_str(r, "model"), "m-b");
	json_decref(r);
	asc_free(c);
}

/* CODEX_HOME is the user layer, never a project layer (cwd ~, CODEX_HOME ~/.codex). */
static void
test_codex_home_is_not_a_project_layer(void **state)
{
	char tmpl[] = "/tmp/test_layers.XXXXXX", *home, *toml;
	struct asc_opts o = {.inherit_codex_home = 1};
	const char *saved = getenv("CODEX_HOME");
	char *saved_copy = saved != NULL ? xstrdup(saved) : NULL;
	struct asc *c;
	json_t *r, *m;
	long long id;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	if (git_above(tmpl)) {
		rmdir(tmpl);
		free(saved_copy);
		skip_test("a folder above the temporary folder holds a .git: it would be the root");
		return;
	}
	home = xasprintf("%s/.codex", tmpl);
	toml = xasprintf(
		"model = \"m-user\"\n[projects.\"%s\"]\ntrust_level = \"trusted\"\n", tmpl);
	put(home, "config.toml", toml);
	setenv("CODEX_HOME", home, 1);
	c = asc_spawn(&o);
	asc_initialize(c);
	id = asc_request(
		c, "config/read", json_pack("{s:b, s:s}", "includeLayers", 1, "cwd", tmpl));
	m = asc_wait_response(c, id, asc_timeout(T_REPLY));
	r = asc_assert_result(m);
	assert_int_equal(json_array_size(json_object_get(r, "layers")), 2);
	assert_string_equal(layer_type(r, 0), "user");
	json_decref(m);
	asc_free(c);
	if (saved_copy != NULL)
		setenv("CODEX_HOME", saved_copy, 1);
	else
		unsetenv("CODEX_HOME");
	free(saved_copy);
	free(toml);
	toml = xasprintf("%s/config.toml", home);
	unlink(toml);
	rmdir(home);
	rmdir(tmpl);
	free(toml);
	free(home);
}

/* A thread started in a trusted project runs with its layers (upstream's recorded answer). */
static void
test_thread_start_uses_project_layers(void **state)
{
	struct asc *c = tree("repo/.git/HEAD");
	json_t *m, *r;
	long long id;

	(void)state;
	trust(c, "repo", "trusted", NULL, NULL);
	put(asc_dir(c), "repo/a/b/.codex/config.toml",
		"model = \"m-b\"\nsandbox_mode = \"workspace-write\"\n");
	id = asc_request(c, "thread/start", json_pack("{s:s+}", "cwd", asc_dir(c), "/repo/a/b/c"));
	m = asc_wait_response(c, id, asc_timeout(T_REPLY));
	r = asc_assert_result(m);
	assert_string_equal(json_string_value(json_object_get(r, "model")), "m-b");
	assert_string_equal(json_string_value(json_object_get(r, "reasoningEffort")), "high");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(r, "sandbox"), "type")),
		"workspaceWrite");
	assert_true(json_is_null(json_object_get(r, "activePermissionProfile")));
	json_decref(m);
	/* an untrusted project's layers are not applied */
	trust(c, "repo", "untrusted", NULL, NULL);
	id = asc_request(c, "thread/start", json_pack("{s:s+}", "cwd", asc_dir(c), "/repo/a/b/c"));
	m = asc_wait_response(c, id, asc_timeout(T_REPLY));
	r = asc_assert_result(m);
	assert_string_equal(json_string_value(json_object_get(r, "model")), "m-user");
	assert_true(json_is_null(json_object_get(r, "reasoningEffort")));
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(r, "sandbox"), "type")),
		"readOnly");
	json_decref(m);
	asc_free(c);
}

/* configRequirements/read: upstream's answer without a requirements file, member order too. */
static void
test_config_requirements_read(void **state)
{
	struct asc *c = asc_spawn(NULL);
	long long id;
	json_t *m;

	(void)state;
	asc_initialize(c);
	id = asc_request(c, "configRequirements/read", NULL);
	m = asc_wait_response(c, id, asc_timeout(T_REPLY));
	asc_assert_result(m);
	assert_non_null(strstr(asc_raw(c),
		"\"result\":{\"supportsIndependentSpeedModes\":true,\"requirements\":null}"));
	json_decref(m);
	asc_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trusted_project_layers),
		cmocka_unit_test(test_untrusted_and_unlisted_projects),
		cmocka_unit_test(test_project_root_markers),
		cmocka_unit_test(test_codex_home_is_not_a_project_layer),
		cmocka_unit_test(test_thread_start_uses_project_layers),
		cmocka_unit_test(test_config_requirements_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
