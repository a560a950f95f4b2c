/*
 * Turns on a ChatGPT login against local mocks (tests/integration/mock_chatgpt.py: a ChatGPT
 * backend that wants a live bearer access token and the account id, and an issuer): a stale
 * token is refreshed before the request, a refused one once after the 401, two turns share
 * one refresh, a refused refresh ends the turn with upstream's sentence and account/updated.
 * No token shows in stderr, in a rollout or anywhere in CODEX_HOME but auth.json (0600).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec_util.h"
#include "harness.h"
#include "mock_chatgpt_util.h"
#include "tests/helpers/skip_note.h"
#include "protocol/base64.h"
#include "protocol/xmalloc.h"

#define T 10000

/* Lines of the mock's log whose path contains part. */
static int
mock_count(const struct mc_mock *m, const char *part)
{
	FILE *f = fopen(m->log, "re");
	char line[1 << 16];
	int n = 0;

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL) {
		json_t *j = json_loads(line, 0, NULL);

		if (strstr(json_string_value(json_object_get(j, "path")), part) != NULL)
			n++;
		json_decref(j);
	}
	fclose(f);
	return n;
}

#define ACCESS_SECRET  "expired-access-secret"
#define REFRESH_SECRET "rt-secret-0"

/* A daemon on a ChatGPT login whose access token expired (stale) or is revoked. */
static struct asc *
spawn_chatgpt(struct mc_mock *m, int revoked)
{
	char *id, *acc, *path, *env[3];
	json_t *auth = json_pack("{s:s, s:s, s:s}", "chatgpt_account_id", "acct-1",
		"chatgpt_plan_type", "plus", "chatgpt_user_id", "user-1");
	struct asc_opts o = {0};
	struct asc *c;
	FILE *f;

	id = mc_jwt(json_pack(
		"{s:s, s:O}", "email", "me@example.com", "https://api.openai.com/auth", auth));
	acc = mc_jwt(json_pack("{s:I, s:b, s:s, s:O}", "exp",
		(json_int_t)(revoked ? time(NULL) + 3600 : time(NULL) - 10), "revoked", revoked,
		"marker", ACCESS_SECRET, "https://api.openai.com/auth", auth));
	env[0] = xasprintf(
		"CODEX_REFRESH_TOKEN_URL_OVERRIDE=http://127.0.0.1:%d/oauth/token", m->port);
	env[1] = "APP_SERVER_LOG=debug";
	env[2] = NULL;
	o.env = (const char *const *)env;
	o.capture_stderr = 1;
	c = asc_spawn(&o);
	mkdir(asc_codex_home(c), 0700);
	mc_write_config(m, asc_codex_home(c));
	path = xasprintf("%s/auth.json", asc_codex_home(c));
	assert_non_null(f = fopen(path, "we"));
	fchmod(fileno(f), 0644);
	fprintf(f,
		"{\"auth_mode\":\"chatgpt\",\"OPENAI_API_KEY\":null,\"tokens\":{\"id_token\":\"%s\","
		"\"access_token\":\"%s\",\"refresh_token\":\"" REFRESH_SECRET "\",\"account_id\":"
		"\"acct-1\"},\"last_refresh\":\"2025-01-01T00:00:00Z\"}",
		id, acc);
	fclose(f);
	free(path);
	mc_initialize(c);
	json_decref(auth);
	free(env[0]);
	free(id);
	free(acc);
	return c;
}

/* The next turn/completed's turn (new reference). */
static json_t *
turn_done(struct asc *c)
{
	json_t *m = asc_wait_notification(c, "turn/completed", T);
	json_t *t = json_incref(json_object_get(json_object_get(m, "params"), "turn"));
	char *err = asc_stderr(c);

	if (getenv("ACCOUNT_TEST_DEBUG") != NULL)
		fprintf(stderr, "daemon stderr:\n%s\n", err);
	free(err);

	json_decref(m);
	return t;
}

/* What tree_has looks for, and whether a file had it (nftw passes no argument). */
static const char *tree_needle;
static int tree_found;

static int
tree_has_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *base = path + ftw->base;
	size_t len;
	char *text;

	if (type != FTW_F || !S_ISREG(st->st_mode) || strcmp(base, "auth.json") == 0)
		return 0;
	if ((text = xt_read_file(path, &len)) == NULL)
		return 0;
	if (memmem(text, len, tree_needle, strlen(tree_needle)) != NULL)
		tree_found = 1;
	free(text);
	return tree_found;
}

/* Whether s is in any file under dir but auth.json; 1 when found. */
static int
tree_has(const char *dir, const char *s)
{
	tree_needle = s;
	tree_found = 0;
	nftw(dir, tree_has_cb, 16, FTW_PHYS);
	return tree_found;
}

/* No secret anywhere but auth.json, nor in stderr; auth.json 0600 once we wrote it (the test
 * wrote it 0644). */
static void
expect_no_leak(struct asc *c, int written)
{
	char *err = asc_stderr(c), *path = xasprintf("%s/auth.json", asc_codex_home(c));
	struct stat st;

	assert_null(strstr(err, "rt-"));
	assert_null(strstr(err, "eyJ"));
	assert_false(tree_has(asc_codex_home(c), "rt-"));
	assert_false(tree_has(asc_codex_home(c), "eyJhbGciOiJub25lIn0"));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, written ? 0600 : 0644);
	free(err);
	free(path);
}

/* A stale token: one refresh before the request, the turn completes, tokens stored. */
static void
test_stale_refreshed_first(void **state)
{
	struct mc_mock m;
	struct asc *c;
	char *tid, *path, *text;
	json_t *t;
	FILE *f;

	(void)state;
	mc_start(&m, "acct", NULL, NULL);
	c = spawn_chatgpt(&m, 0);
	tid = mc_thread_new(c);
	mc_turn_start(c, tid);
	t = turn_done(c);
	assert_string_equal(json_string_value(json_object_get(t, "status")), "completed");
	json_decref(t);
	assert_int_equal(mock_count(&m, "/oauth/token"), 1);
	assert_int_equal(mock_count(&m, "/backend-api/codex/responses"), 1);
	path = xasprintf("%s/auth.json", asc_codex_home(c));
	assert_non_null(f = fopen(path, "re"));
	text = xmalloc(1 << 16);
	text[fread(text, 1, (1 << 16) - 1, f)] = '\0';
	fclose(f);
	assert_non_null(strstr(text, "\"refresh_token\": \"rt-refreshed-1\""));
	assert_non_null(strstr(text, "\n  \"last_refresh\": \""));
	free(text);
	free(path);
	expect_no_leak(c, 1);
	free(tid);
	asc_free(c);
	mc_stop(&m);
}

/* A token the backend refuses: 401, one refresh, the same request again, completed. */
static void
test_401_refreshed_once(void **state)
{
	struct mc_mock m;
	struct asc *c;
	char *tid;
	json_t *t;

	(void)state;
	mc_start(&m, "acct", NULL, NULL);
	c = spawn_chatgpt(&m, 1);
	tid = mc_thread_new(c);
	mc_turn_start(c, tid);
	t = turn_done(c);
	assert_string_equal(json_string_value(json_object_get(t, "status")), "completed");
	json_decref(t);
	assert_int_equal(mock_count(&m, "/oauth/token"), 1);
	assert_int_equal(mock_count(&m, "/backend-api/codex/responses"), 2);
	expect_no_leak(c, 1);
	free(tid);
	asc_free(c);
	mc_stop(&m);
}

/* Two turns on a stale token while the issuer is slow: one refresh serves both. */
static void
test_single_flight(void **state)
{
	struct mc_mock m;
	struct asc *c;
	char *t1, *t2;
	json_t *t;

	(void)state;
	mc_start(&m, "acct", "--refresh-delay-ms", "500");
	c = spawn_chatgpt(&m, 0);
	t1 = mc_thread_new(c);
	t2 = mc_thread_new(c);
	mc_turn_start(c, t1);
	mc_turn_start(c, t2);
	for (int i = 0; i < 2; i++) {
		t = turn_done(c);
		assert_string_equal(json_string_value(json_object_get(t, "status")), "completed");
		json_decref(t);
	}
	assert_int_equal(mock_count(&m, "/oauth/token"), 1);
	assert_int_equal(mock_count(&m, "/backend-api/codex/responses"), 2);
	expect_no_leak(c, 1);
	free(t1);
	free(t2);
	asc_free(c);
	mc_stop(&m);
}

/* The issuer refuses the refresh token: upstream's sentence, unauthorized, account/updated. */
static void
test_refresh_refused(void **state)
{
	struct mc_mock m;
	struct asc *c;
	char *tid;
	json_t *t, *e, *u;

	(void)state;
	mc_start(&m, "acct", "--refresh-fail", "refresh_token_reused");
	c = spawn_chatgpt(&m, 0);
	tid = mc_thread_new(c);
	mc_turn_start(c, tid);
	t = turn_done(c);
	assert_string_equal(json_string_value(json_object_get(t, "status")), "failed");
	e = json_object_get(t, "error");
	assert_string_equal(json_string_value(json_object_get(e, "message")),
		"Your access token could not be refreshed because your refresh token was already "
		"used. Please log out and sign in again.");
	assert_string_equal(
		json_string_value(json_object_get(e, "codexErrorInfo")), "unauthorized");
	json_decref(t);
	u = asc_wait_notification(c, "account/updated", T);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(u, "params"), "authMode")),
		"chatgpt");
	json_decref(u);
	assert_int_equal(mock_count(&m, "/backend-api/codex/responses"), 0);
	expect_no_leak(c, 0);
	free(tid);
	asc_free(c);
	mc_stop(&m);
}

/* A window's member (int). */
static json_int_t
window_int(const json_t *snap, const char *window, const char *k)
{
	return json_integer_value(json_object_get(json_object_get(snap, window), k));
}

/*
 * Rate limits both ways upstream has them: the x-codex-* headers of a turn's response come
 * back as account/rateLimits/updated after the usage; account/rateLimits/read asks the
 * backend's /wham/usage with the login's tokens.
 */
static void
test_rate_limits(void **state)
{
	struct mc_mock m;
	struct asc *c;
	char *tid;
	json_t *n, *snap, *r, *res;

	(void)state;
	mc_start(&m, "acct", NULL, NULL);
	c = spawn_chatgpt(&m, 0);
	tid = mc_thread_new(c);
	mc_turn_start(c, tid);
	n = asc_wait_notification(c, "account/rateLimits/updated", T);
	snap = json_object_get(json_object_get(n, "params"), "rateLimits");
	assert_string_equal(json_string_value(json_object_get(snap, "limitId")), "codex");
	assert_int_equal(window_int(snap, "primary", "usedPercent"), 42);
	assert_int_equal(window_int(snap, "primary", "windowDurationMins"), 300);
	assert_true(window_int(snap, "primary", "resetsAt") > time(NULL));
	assert_int_equal(window_int(snap, "secondary", "usedPercent"), 7);
	assert_int_equal(window_int(snap, "secondary", "windowDurationMins"), 10080);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(snap, "credits"), "balance")),
		"12.5");
	assert_null(json_object_get(json_object_get(n, "params"), "threadId"));
	json_decref(n);
	json_decref(turn_done(c));

	r = asc_wait_response(c, asc_request(c, "account/rateLimits/read", NULL), T);
	res = asc_assert_result(r);
	snap = json_object_get(res, "rateLimits");
	assert_int_equal(window_int(snap, "primary", "usedPercent"), 17);
	assert_int_equal(window_int(snap, "primary", "windowDurationMins"), 300);
	assert_string_equal(json_string_value(json_object_get(snap, "planType")), "pro");
	assert_string_equal(json_string_value(json_object_get(snap, "rateLimitReachedType")),
		"rate_limit_reached");
	assert_string_equal(json_string_value(json_object_get(res, "accountId")), "acct-1");
	snap = json_object_get(json_object_get(res, "rateLimitsByLimitId"), "codex_bengalfox");
	assert_string_equal(
		json_string_value(json_object_get(snap, "limitName")), "GPT-5-Codex-Spark");
	assert_int_equal(window_int(snap, "primary", "windowDurationMins"), 15);
	json_decref(r);
	/* the mock answers /wham/usage only to the live bearer token and its account */
	assert_int_equal(mock_count(&m, "/backend-api/wham/usage"), 1);
	expect_no_leak(c, 1);
	free(tid);
	asc_free(c);
	mc_stop(&m);
}

/* The usage endpoint failing: upstream's sentence, the status and body as it words them. */
static void
test_rate_limits_read_fails(void **state)
{
	struct mc_mock m;
	struct asc *c;
	json_t *r, *e;
	char *want;

	(void)state;
	mc_start(&m, "acct", "--usage-status", "503");
	c = spawn_chatgpt(&m, 0);
	r = asc_wait_response(c, asc_request(c, "account/rateLimits/read", NULL), T);
	e = json_object_get(r, "error");
	assert_non_null(e);
	assert_int_equal(json_integer_value(json_object_get(e, "code")), -32603);
	want = xasprintf("failed to fetch codex rate limits: GET http://127.0.0.1:%d/backend-api/"
			 "wham/usage failed: 503 Service Unavailable; content-type=application/"
			 "json; body={\"detail\": \"usage unavailable\"}",
		m.port);
	assert_string_equal(json_string_value(json_object_get(e, "message")), want);
	free(want);
	json_decref(r);
	expect_no_leak(c, 1);
	asc_free(c);
	mc_stop(&m);
}

/*
 * kill -9 at random moments of a turn whose token is refreshed: auth.json is always whole
 * (it parses, holds a refresh token) and 0600; a temporary file a kill left behind is 0600 too.
 */
static void
test_kill_during_refresh(void **state)
{
	int rounds = 25, refreshed = 0, strays = 0;
	struct mc_mock m;

	(void)state;
	srand((unsigned)time(NULL));
	mc_start(&m, "acct", NULL, NULL);
	for (int i = 0; i < rounds; i++) {
		struct asc *c = spawn_chatgpt(&m, 0);
		char *tid = mc_thread_new(c), *path = xasprintf("%s/auth.json", asc_codex_home(c));
		struct stat st;
		struct dirent *de;
		json_t *j;
		DIR *d;

		assert_int_equal(chmod(path, 0600), 0);
		mc_turn_start(c, tid);
		/*
		 * Random moments, and on both sides of the write for sure: every fifth round once
		 * the turn is over (stored), the next one at once (nothing sent yet).
		 */
		if (i % 5 == 0)
			json_decref(turn_done(c));
		else if (i % 5 != 1)
			usleep((useconds_t)(rand() % 30000));
		kill(asc_pid(c), SIGKILL);
		assert_non_null(j = json_load_file(path, 0, NULL));
		assert_true(json_is_string(
			json_object_get(json_object_get(j, "tokens"), "refresh_token")));
		if (strcmp(json_string_value(
				   json_object_get(json_object_get(j, "tokens"), "refresh_token")),
			    REFRESH_SECRET) != 0)
			refreshed++;
		json_decref(j);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0600);
		assert_non_null(d = opendir(asc_codex_home(c)));
		while ((de = readdir(d)) != NULL) {
			char *p;

			if (strncmp(de->d_name, ".auth.json.", 11) != 0)
				continue;
			p = xasprintf("%s/%s", asc_codex_home(c), de->d_name);
			assert_int_equal(stat(p, &st), 0);
			assert_int_equal(st.st_mode & 07777, 0600);
			strays++;
			free(p);
		}
		closedir(d);
		asc_free_killed(c, SIGKILL);
		free(path);
		free(tid);
	}
	print_message("kill -9 during refresh: %d rounds, %d after the new tokens were stored, "
		      "%d temporary files left (0600)\n",
		rounds, refreshed, strays);
	assert_true(refreshed > 0 && refreshed < rounds);
	mc_stop(&m);
}

/* Upstream 0.169's binary beside the repository ($UPSTREAM_CODEX), or NULL. */
static const char *
upstream_bin(void)
{
	const char *p = getenv("UPSTREAM_CODEX");

	if (p == NULL || *p == '\0')
		p = "../upstream/node_modules/@openai/codex-linux-x64/vendor/"
		    "x86_64-unknown-linux-musl/bin/codex";
	return access(p, X_OK) == 0 ? p : NULL;
}

/* Run a shell command; its exit status, and its output (both streams) in *out (heap). */
static int
run(const char *cmd, char **out)
{
	char buf[4096];
	size_t n = 0;
	ssize_t r;
	int fds[2], st = 0;
	pid_t pid;

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (n < sizeof buf - 1 &&
		((r = read(fds[0], buf + n, sizeof buf - 1 - n)) > 0 || (r < 0 && errno == EINTR)))
		n += r > 0 ? (size_t)r : 0;
	buf[n] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	*out = xstrdup(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/*
 * One auth.json for both daemons: a ChatGPT login we refreshed (written by us) is upstream's
 * `codex login status` "Logged in using ChatGPT"; an API key upstream stored is ours; each
 * file is 0600. Skipped (noted) without upstream's binary.
 */
static void
test_upstream_interop(void **state)
{
	const char *up = upstream_bin();
	struct mc_mock m;
	struct asc *c;
	char *tid, *cmd, *out, dir[] = "/tmp/acct-interop-XXXXXX";
	struct stat st;

	(void)state;
	if (up == NULL)
		skip_test("upstream codex 0.169 is not installed (../upstream or $UPSTREAM_CODEX)");
	mc_start(&m, "acct", NULL, NULL);
	c = spawn_chatgpt(&m, 0);
	tid = mc_thread_new(c);
	mc_turn_start(c, tid);
	json_decref(turn_done(c));
	assert_int_equal(mock_count(&m, "/oauth/token"), 1); /* the file is ours now */
	cmd = xasprintf("CODEX_HOME='%s' '%s' login status", asc_codex_home(c), up);
	assert_int_equal(run(cmd, &out), 0);
	assert_non_null(strstr(out, "Logged in using ChatGPT"));
	free(out);
	free(cmd);
	free(tid);
	asc_free(c);
	mc_stop(&m);

	assert_non_null(mkdtemp(dir));
	cmd = xasprintf(
		"echo sk-upstream-0123456789 | CODEX_HOME=%s '%s' login --with-api-key", dir, up);
	assert_int_equal(run(cmd, &out), 0);
	free(out);
	free(cmd);
	cmd = xasprintf("%s/auth.json", dir);
	assert_int_equal(stat(cmd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	free(cmd);
	cmd = xasprintf("CODEX_HOME=%s '%s' login status", dir,
		getenv("APP_SERVER_BIN") != NULL ? getenv("APP_SERVER_BIN") : "build/app-server");
	assert_int_equal(run(cmd, &out), 0);
	assert_non_null(strstr(out, "API key configured - sk-upstr***56789"));
	free(out);
	free(cmd);
	assert_int_equal(mc_rm_tree(dir), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stale_refreshed_first),
		cmocka_unit_test(test_401_refreshed_once),
		cmocka_unit_test(test_single_flight),
		cmocka_unit_test(test_refresh_refused),
		cmocka_unit_test(test_rate_limits),
		cmocka_unit_test(test_rate_limits_read_fails),
		cmocka_unit_test(test_kill_during_refresh),
		cmocka_unit_test(test_upstream_interop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
