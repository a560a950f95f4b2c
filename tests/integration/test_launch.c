/*
 * The launch surface against the real binary: what a client's command line may hold before
 * any JSON-RPC. Upstream's `app-server --help` says the VS Code extension starts it with
 * `--analytics-default-enabled`; we accept it (we send no analytics) instead of refusing to
 * start, and the usage says so.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/wait.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_util.h"
#include "harness.h"
#include "protocol/xmalloc.h"

/* Read a pipe to its end into a heap string. */
static char *
read_all(int fd)
{
	struct xt_buf b = {0};
	char buf[4096];
	ssize_t k;

	while ((k = read(fd, buf, sizeof buf)) > 0)
		xt_buf_add(&b, buf, (size_t)k);
	close(fd);
	return b.p != NULL ? b.p : xstrdup("");
}

/*
 * Run the binary with args (no daemon: --help and the like) in CODEX_HOME home (NULL: the
 * test's); its stdout, its stderr in *err when err is not NULL, its exit status.
 */
static char *
run_cli(const char *const *args, const char *home, int *status, char **err)
{
	const char *bin = getenv("APP_SERVER_BIN");
	char *argv[12], *out;
	int opfd[2], epfd[2], null;
	size_t n = 0;
	pid_t pid;

	if (bin == NULL)
		bin = "build/app-server";
	argv[n++] = (char *)bin;
	for (size_t i = 0; args[i] != NULL && n < 11; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	assert_int_equal(pipe2(opfd, O_CLOEXEC), 0);
	assert_int_equal(pipe2(epfd, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(opfd[1], 1);
		dup2(epfd[1], 2);
		if (home != NULL)
			setenv("CODEX_HOME", home, 1);
		execv(bin, argv);
		_exit(127);
	}
	close(opfd[1]);
	close(epfd[1]);
	/* both are small (a catalogue, a few lines): read one, then the other */
	out = read_all(opfd[0]);
	if (err != NULL)
		*err = read_all(epfd[0]);
	else
		free(read_all(epfd[0]));
	assert_int_equal(waitpid(pid, status, 0), pid);
	return out;
}

static char *
run_binary(const char *const *args, int *status)
{
	return run_cli(args, NULL, status, NULL);
}

/* A scratch CODEX_HOME with auth.json holding text (NULL: no auth.json); heap path. */
static char *
auth_home(const char *text)
{
	char tmpl[] = "/tmp/launch-home-XXXXXX", *path;
	FILE *f;

	assert_non_null(mkdtemp(tmpl));
	if (text != NULL) {
		path = xasprintf("%s/auth.json", tmpl);
		assert_non_null(f = fopen(path, "we"));
		fputs(text, f);
		fclose(f);
		free(path);
	}
	return xstrdup(tmpl);
}

static void
auth_home_free(char *home)
{
	char *path = xasprintf("%s/auth.json", home);

	unlink(path);
	rmdir(home);
	free(path);
	free(home);
}

/* Upstream's invocation with the extension's flag serves the protocol as usual. */
static void
test_analytics_flag_accepted(void **state)
{
	static const char *const args[] = {"app-server", "--analytics-default-enabled", NULL};
	struct asc_opts o = {.args = args, .capture_stderr = 1};
	struct asc *c = asc_spawn(&o);
	char *err;

	(void)state;
	asc_initialize(c);
	xt_exec_expect(c, xt_sh("echo launched"), T_REPLY, 0, "launched\n", "");
	err = asc_stderr(c);
	assert_null(strstr(err, "unknown argument"));
	free(err);
	asc_free(c);
}

/* --help names the flag (a documented no-op) and exits 0. */
static void
test_help_lists_analytics_flag(void **state)
{
	static const char *const args[] = {"app-server", "--help", NULL};
	int status;
	char *out = run_binary(args, &status);

	(void)state;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_non_null(strstr(out, "--analytics-default-enabled"));
	free(out);
}

/* --version: upstream's form first (clients gate on the first x.y.z), then ours. */
static void
test_version_upstream_first(void **state)
{
	static const char *const a1[] = {"--version", NULL},
				 *const a2[] = {"app-server", "-V", NULL};
	const char *const *args[] = {a1, a2};
	int status;

	(void)state;
	for (size_t k = 0; k < 2; k++) {
		char *out = run_binary(args[k], &status);

		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_int_equal(strncmp(out, "codex-cli 0.169.0 (app-server ", 30), 0);
		assert_non_null(strchr(out, '\n'));
		free(out);
	}
}

/* One `login status` run: the auth.json, the exit status and stderr upstream gives. */
static void
login_case(const char *auth, int want_status, const char *want_err, int prefix)
{
	static const char *const args[] = {"login", "status", NULL};
	char *home = auth_home(auth), *err, *out;
	int status;

	out = run_cli(args, home, &status, &err);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), want_status);
	assert_string_equal(out, "");
	if (prefix)
		assert_int_equal(strncmp(err, want_err, strlen(want_err)), 0);
	else
		assert_string_equal(err, want_err);
	free(out);
	free(err);
	auth_home_free(home);
}

/* Upstream 0.169's lines and exit codes (observed with a scratch CODEX_HOME). */
static void
test_login_status(void **state)
{
	(void)state;
	login_case(NULL, 1, "Not logged in\n", 0);
	login_case("{\"auth_mode\":\"apikey\",\"OPENAI_API_KEY\":\"sk-proj-abcdefghijklmnop1234\"}",
		0,
		"API key configured - sk-proj-***p1234\n"
		"Authentication is checked when you send a request.\n",
		0);
	login_case("{\"OPENAI_API_KEY\":\"1234567890123\"}", 0,
		"API key configured - ***\nAuthentication is checked when you send a request.\n",
		0);
	login_case("{\"auth_mode\":\"chatgpt\",\"OPENAI_API_KEY\":null,\"tokens\":{\"id_token\":"
		   "\"a.b.c\",\"access_token\":\"a.b.c\",\"refresh_token\":\"r\"}}",
		0, "Logged in using ChatGPT\n", 0);
	login_case("{}", 0, "Logged in using ChatGPT\n", 0);
	login_case("{\"auth_mode\":\"apikey\"}", 1,
		"Error checking login status: API key auth is missing a key.\n", 0);
	login_case("garbage", 1,
		"Error checking login status: failed to deserialize CLI auth from file: ", 1);
	login_case("{\"auth_mode\":\"bogus\"}", 1,
		"Error checking login status: failed to deserialize CLI auth from file: ", 1);
}

/* `debug models`: one JSON document {"models":[...]} with upstream's member names. */
static void
test_debug_models(void **state)
{
	static const char *const args[] = {"debug", "models", NULL};
	char *home = auth_home(NULL), *out;
	json_t *doc, *models, *m;
	int status;
	size_t i;

	(void)state;
	out = run_cli(args, home, &status, NULL);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(doc = json_loads(out, 0, NULL));
	models = json_object_get(doc, "models");
	assert_true(json_array_size(models) > 0);
	json_array_foreach(models, i, m)
	{
		assert_true(json_is_string(json_object_get(m, "slug")));
		assert_true(json_is_string(json_object_get(m, "display_name")));
		assert_true(json_is_string(json_object_get(m, "default_reasoning_level")));
		assert_true(json_array_size(json_object_get(m, "supported_reasoning_levels")) > 0);
		/* upstream's bundled catalogue has hidden models too, printed with "hide" */
		assert_true(
			strcmp(json_string_value(json_object_get(m, "visibility")), "list") == 0 ||
			strcmp(json_string_value(json_object_get(m, "visibility")), "hide") == 0);
	}
	json_decref(doc);
	free(out);
	auth_home_free(home);
}

/* `app-server --help`, -h and `help` exit 0 (codex-plugin-cc requires it) and list options. */
static void
test_help_exit_zero(void **state)
{
	static const char *const a1[] = {"app-server", "--help", NULL},
				 *const a2[] = {"app-server", "-h", NULL},
				 *const a3[] = {"app-server", "help", NULL};
	const char *const *args[] = {a1, a2, a3};
	int status;

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		char *out = run_binary(args[k], &status);

		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_non_null(strstr(out, "--enable <FEATURE>"));
		assert_non_null(strstr(out, "--print-startup-config"));
		free(out);
	}
}

/* A daemon started with options (before and after `app-server`) serves, and --enable and
 * --disable mean -c features.<name>=true|false. */
static void
options_serve(const char *const *args)
{
	struct asc_opts o = {.args = args, .capture_stderr = 1};
	struct asc *c = asc_spawn(&o);
	long long id;
	json_t *r, *features;

	asc_initialize(c);
	xt_exec_expect(c, xt_sh("echo launched"), T_REPLY, 0, "launched\n", "");
	id = asc_request(c, "config/read", json_object());
	r = asc_wait_response(c, id, asc_timeout(5000));
	features = json_object_get(json_object_get(asc_assert_result(r), "config"), "features");
	assert_true(json_is_true(json_object_get(features, "apps")));
	assert_true(json_is_false(json_object_get(features, "memories")));
	json_decref(r);
	asc_free(c);
}

static void
test_upstream_options_accepted(void **state)
{
	static const char *const before[] = {"--enable", "apps", "--disable=memories", "app-server",
		"--stdio", "--strict-config", "--code-mode-host", "http://127.0.0.1:9", NULL};
	static const char *const after[] = {"app-server", "--listen", "stdio://", "--enable=apps",
		"--disable", "memories", "--analytics-default-enabled", NULL};

	(void)state;
	options_serve(before);
	options_serve(after);
}

/* An exit status and the start of stderr for a command line that must not serve. */
static void
refused(const char *const *args, int want_status, const char *want_err)
{
	char *home = auth_home(NULL), *err, *out;
	int status;

	out = run_cli(args, home, &status, &err);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), want_status);
	if (strncmp(err, want_err, strlen(want_err)) != 0)
		fail_msg("stderr \"%s\", expected it to start with \"%s\"", err, want_err);
	free(out);
	free(err);
	auth_home_free(home);
}

/* Upstream's refusals: an unknown feature (exit 1), options that need another, a transport. */
static void
test_refusals(void **state)
{
	static const char *const feature[] = {"app-server", "--enable", "bogus_feature", NULL};
	static const char *const both[] = {"app-server", "--stdio", "--listen", "stdio://", NULL};
	static const char *const info[] = {
		"app-server", "--startup-client-info", "{\"name\":\"x\",\"version\":\"1\"}", NULL};
	static const char *const ws[] = {"app-server", "--listen", "ws://0.0.0.0:0", NULL};
	static const char *const auth[] = {"app-server", "--ws-auth", "capability-token", NULL};
	static const char *const bad[] = {"app-server", "--listen", "bogus://", NULL};

	(void)state;
	refused(feature, 1, "Error: Unknown feature flag: bogus_feature\n");
	refused(both, 2, "error: the argument '--stdio' cannot be used with '--listen <URL>'");
	refused(info, 2, "error: the following required arguments were not provided:");
	refused(ws, 1,
		"Error: refusing to start non-loopback websocket listener 0.0.0.0:0 without auth");
	refused(auth, 1,
		"Error: `--ws-token-file` or `--ws-token-sha256` is required when `--ws-auth "
		"capability-token` is set");
	refused(bad, 2, "error: invalid value 'bogus://' for '--listen <URL>'");
}

/* --print-startup-config: upstream's line for a configuration that loads, then exit 0. */
static void
test_print_startup_config(void **state)
{
	static const char *const args[] = {"app-server", "--print-startup-config",
		"--startup-client-info", "{\"name\":\"x\",\"version\":\"1\"}", NULL};
	char *home = auth_home(NULL), *out;
	int status;

	(void)state;
	out = run_cli(args, home, &status, NULL);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_string_equal(out,
		"{\"appServerVersion\":\"0.169.0\",\"configRequirements\":"
		"{\"supportsIndependentSpeedModes\":true,\"requirements\":null}}\n");
	free(out);
	auth_home_free(home);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_analytics_flag_accepted),
		cmocka_unit_test(test_help_lists_analytics_flag),
		cmocka_unit_test(test_version_upstream_first),
		cmocka_unit_test(test_login_status),
		cmocka_unit_test(test_debug_models),
		cmocka_unit_test(test_help_exit_zero),
		cmocka_unit_test(test_upstream_options_accepted),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_print_startup_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
