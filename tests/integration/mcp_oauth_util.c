/*
 * The MCP OAuth tests' fixture (mcp_oauth_util.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "mcp_oauth_util.h"
#include "turn_util.h"

pid_t om_live; /* killed by the teardown when a test fails */

int
om_teardown(void **state)
{
	(void)state;
	if (om_live > 0) {
		kill(om_live, SIGTERM);
		waitpid(om_live, NULL, 0);
		om_live = 0;
	}
	return 0;
}

void
om_start(struct om *m)
{
	char path[PATH_MAX];
	FILE *fp = NULL;

	assert_non_null(realpath(MOCK, path));
	snprintf(m->dir, sizeof m->dir, "/tmp/mcpoauth.XXXXXX");
	assert_non_null(mkdtemp(m->dir));
	snprintf(m->log, sizeof m->log, "%s/log", m->dir);
	snprintf(m->pf, sizeof m->pf, "%s/port", m->dir);
	m->pid = fork();
	assert_true(m->pid >= 0);
	if (m->pid == 0) {
		execlp("python3", "python3", path, m->pf, m->log, (char *)NULL);
		_exit(127);
	}
	om_live = m->pid;
	for (int i = 0; i < 200 && (fp = fopen(m->pf, "r")) == NULL; i++)
		usleep(25000);
	assert_non_null(fp);
	assert_int_equal(fscanf(fp, "%d", &m->port), 1);
	fclose(fp);
}

void
om_stop(struct om *m)
{
	kill(m->pid, SIGTERM);
	waitpid(m->pid, NULL, 0);
	om_live = 0;
	unlink(m->pf);
	unlink(m->log);
	rmdir(m->dir);
}

/* The mock's log (new reference). */
json_t *
om_log(const struct om *m)
{
	json_t *a = json_array(), *e;
	char *line = NULL;
	size_t cap = 0;
	FILE *fp = fopen(m->log, "r");

	if (fp == NULL)
		return a;
	while (getline(&line, &cap, fp) > 0)
		if ((e = json_loads(line, 0, NULL)) != NULL)
			json_array_append_new(a, e);
	fclose(fp);
	free(line);
	return a;
}

/* How many token requests of a grant type the mock saw. */
int
om_grants(const struct om *m, const char *grant)
{
	json_t *log = om_log(m), *e;
	size_t i;
	int n = 0;

	json_array_foreach(log, i, e) n +=
		strcmp(json_string_value(json_object_get(e, "ev")), "token") == 0 &&
		strcmp(json_string_value(json_object_get(json_object_get(e, "form"), "grant_type"))
				?: "",
			grant) == 0;
	json_decref(log);
	return n;
}

/*
 * A GET of an http://127.0.0.1:PORT/... url (the test's browser): the status, the Location
 * header (heap, or NULL) and the body (heap).
 */
int
om_browse(const char *url, char **location, char **body)
{
	struct sockaddr_in sa = {0};
	const char *hp = url + strlen("http://127.0.0.1:");
	char *req, buf[8192], *p, *eol;
	size_t len = 0;
	ssize_t n;
	int s, port = (int)strtol(hp, &p, 10), status = 0;

	assert_int_equal(strncmp(url, "http://127.0.0.1:", 17), 0);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(s, (struct sockaddr *)&sa, sizeof sa), 0);
	req = xasprintf("GET %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n\r\n", p, port);
	assert_int_equal(write(s, req, strlen(req)), (ssize_t)strlen(req));
	free(req);
	while (len < sizeof buf - 1 && (n = read(s, buf + len, sizeof buf - 1 - len)) > 0)
		len += (size_t)n;
	close(s);
	buf[len] = '\0';
	assert_int_equal(sscanf(buf, "HTTP/1.%*d %d", &status), 1);
	if (location != NULL) {
		*location = NULL;
		for (p = buf; (p = strstr(p, "\r\n")) != NULL && p[2] != '\r'; p += 2)
			if (strncasecmp(p + 2, "Location: ", 10) == 0) {
				eol = strstr(p + 12, "\r\n");
				*location = xstrndup(p + 12, (size_t)(eol - (p + 12)));
			}
	}
	if (body != NULL)
		*body = xstrdup((p = strstr(buf, "\r\n\r\n")) != NULL ? p + 4 : "");
	return status;
}

/* A daemon whose config has [mcp_servers.oa] (the mock), local (stdio) and tok (bearer). */
void
oa_start(struct tt *f, const struct om *m, const char *script)
{
	static const char *const env[] = {"APP_SERVER_LOG=debug", "OA_TOK=t", NULL};
	struct tt_opts o = {0};
	char *cfg = xasprintf("[mcp_servers.oa]\nurl = \"http://127.0.0.1:%d/mcp\"\n"
			      "[mcp_servers.local]\ncommand = \"python3\"\nargs = [\"-c\", \"\"]\n"
			      "enabled = false\n"
			      "[mcp_servers.tok]\nurl = \"http://127.0.0.1:%d/other\"\n"
			      "bearer_token_env_var = \"OA_TOK\"\nenabled = false\n",
		m->port, m->port);
	char *s = tt_script(script);

	o.script = s;
	o.config_extra = cfg;
	o.env = env;
	o.experimental = 1;
	tt_start(f, &o);
	free(cfg);
	free(s);
}

/* The next startupStatus of server `oa` that is not `starting` (new reference). */
json_t *
oa_settled(struct tt *f)
{
	json_t *m, *p;

	for (;;) {
		m = asc_wait_notification(
			f->c, "mcpServer/startupStatus/updated", asc_timeout(10000));
		assert_non_null(m);
		p = json_incref(json_object_get(m, "params"));
		json_decref(m);
		if (strcmp(json_string_value(json_object_get(p, "name")), "oa") == 0 &&
			strcmp(json_string_value(json_object_get(p, "status")), "starting") != 0)
			return p;
		json_decref(p);
	}
}

/* A new thread (the one turns now run in), its `oa` server settled with this status. */
void
oa_thread(struct tt *f, const char *status)
{
	json_t *r, *p;

	r = tt_call(f, "thread/start",
		json_pack("{s:s, s:s, s:s}", "cwd", f->workspace, "approvalPolicy", "never",
			"sandbox", "danger-full-access"));
	free(f->thread_id);
	f->thread_id = xstrdup(json_string_value(
		json_object_get(json_object_get(asc_assert_result(r), "thread"), "id")));
	json_decref(r);
	json_decref(asc_wait_notification(f->c, "thread/started", asc_timeout(5000)));
	p = oa_settled(f);
	assert_string_equal(json_string_value(json_object_get(p, "status")), status);
	json_decref(p);
}

/* Start a login for `oa`: the authorization URL (heap); *login_id its id (heap). */
char *
oa_login_start(struct tt *f, char **login_id)
{
	json_t *r = tt_call(f, "mcpServer/oauth/login", json_pack("{s:s}", "name", "oa")), *res;
	char *url;

	res = asc_assert_result(r);
	url = xstrdup(json_string_value(json_object_get(res, "authorizationUrl")));
	*login_id = xstrdup(json_string_value(json_object_get(res, "loginId")));
	json_decref(r);
	return url;
}

/* The browser's part: /authorize, then its redirect to our callback; the callback's status. */
int
oa_browse(const char *auth_url, char **callback)
{
	char *loc = NULL, *body = NULL;
	int st;

	assert_int_equal(om_browse(auth_url, &loc, NULL), 302);
	assert_non_null(loc);
	st = om_browse(loc, NULL, &body);
	free(body);
	*callback = loc;
	return st;
}

/* mcpServer/oauthLogin/completed's params (new reference). */
json_t *
oa_completed(struct tt *f)
{
	json_t *m = asc_wait_notification(
		       f->c, "mcpServer/oauthLogin/completed", asc_timeout(10000)),
	       *p;

	p = json_incref(json_object_get(m, "params"));
	json_decref(m);
	return p;
}

/* The whole login, successful (expires_in set on the mock first when > 0). */
void
oa_login(struct tt *f, const struct om *m, int expires_in)
{
	char *id, *url, *cb, *ctl;
	json_t *p;

	if (expires_in > 0) {
		ctl = xasprintf("http://127.0.0.1:%d/_ctl/expires?s=%d", m->port, expires_in);
		assert_int_equal(om_browse(ctl, NULL, NULL), 200);
		free(ctl);
	}
	url = oa_login_start(f, &id);
	assert_int_equal(oa_browse(url, &cb), 200);
	p = oa_completed(f);
	assert_true(json_is_true(json_object_get(p, "success")));
	assert_string_equal(json_string_value(json_object_get(p, "loginId")), id);
	json_decref(p);
	free(cb);
	free(url);
	free(id);
}

void
om_ctl(const struct om *m, const char *what)
{
	char *u = xasprintf("http://127.0.0.1:%d/_ctl/%s", m->port, what);

	assert_int_equal(om_browse(u, NULL, NULL), 200);
	free(u);
}

/* CODEX_HOME/.credentials.json (new reference); asserts it is 0600. */
json_t *
oa_store(const struct tt *f)
{
	char *path = xasprintf("%s/.credentials.json", f->home);
	struct stat st;
	json_t *j;

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	j = json_load_file(path, 0, NULL);
	assert_non_null(j);
	free(path);
	return j;
}

/* The stored entry of `oa` (borrowed from store). */
json_t *
oa_entry(const json_t *store)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)store, k, v) if (strncmp(k, "oa|", 3) == 0) return v;
	return NULL;
}

/* How many tools/call POSTs carried this token / were refused (401: a token not valid). */
int
om_calls_with(const struct om *m, const char *token)
{
	json_t *log = om_log(m), *e;
	size_t i;
	int n = 0;
	char *want = xasprintf("Bearer %s", token);

	json_array_foreach(log, i, e) n +=
		strcmp(json_string_value(json_object_get(e, "ev")), "mcp") == 0 &&
		strcmp(json_string_value(json_object_get(e, "method")) ?: "", "tools/call") == 0 &&
		strcmp(json_string_value(json_object_get(e, "authorization")), want) == 0;
	json_decref(log);
	free(want);
	return n;
}

/* The text of the first mcpToolCall item's first content, or its error (borrowed). */
const char *
oa_item_text(const json_t *msgs, size_t n, int *failed)
{
	json_t *it = tt_item(msgs, "mcpToolCall", n);

	assert_non_null(it);
	*failed = strcmp(json_string_value(json_object_get(it, "status")), "failed") == 0;
	if (*failed)
		return json_string_value(json_object_get(json_object_get(it, "error"), "message"));
	return json_string_value(json_object_get(
		json_array_get(json_object_get(json_object_get(it, "result"), "content"), 0),
		"text"));
}

/* The authStatus mcpServerStatus/list reports for a server. */
char *
oa_auth_status(struct tt *f, const char *name)
{
	json_t *r = tt_call(f, "mcpServerStatus/list", json_object()), *e;
	char *out = NULL;
	size_t i;

	json_array_foreach(json_object_get(asc_assert_result(r), "data"), i,
		e) if (strcmp(json_string_value(json_object_get(e, "name")), name) == 0) out =
		xstrdup(json_string_value(json_object_get(e, "authStatus")));
	json_decref(r);
	assert_non_null(out);
	return out;
}

static json_t *nftw_found; /* the rollout files' texts, for nftw */

static int
nftw_collect(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char *text;

	(void)st;
	(void)ftw;
	if (type == FTW_F && strstr(path, ".jsonl") != NULL && (text = tt_read(path)) != NULL) {
		json_array_append_new(nftw_found, json_string(text));
		free(text);
	}
	return 0;
}

/* No secret the mock handed out or was sent (codes, verifiers, tokens) in our stderr or in
 * any rollout under CODEX_HOME; at least one rollout is looked at. */
void
oa_no_secrets(struct tt *f, const struct om *m)
{
	json_t *log = om_log(m), *e, *form, *t;
	char *err = asc_stderr(f->c), *sessions = xasprintf("%s/sessions", f->home);
	const char *keys[] = {"code", "code_verifier", "refresh_token", "access", "refresh"};
	size_t i, j;
	int seen = 0;

	nftw_found = json_array();
	assert_int_equal(nftw(sessions, nftw_collect, 16, FTW_PHYS), 0);
	assert_true(json_array_size(nftw_found) > 0);
	json_array_foreach(log, i, e)
	{
		form = json_object_get(e, "form") != NULL ? json_object_get(e, "form") : e;
		for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
			const char *secret = json_string_value(json_object_get(form, keys[k]));

			if (secret == NULL || strlen(secret) < 8)
				continue;
			seen++;
			if (strstr(err, secret) != NULL)
				fail_msg("a secret (%s) is in the daemon's stderr", keys[k]);
			json_array_foreach(
				nftw_found, j, t) if (strstr(json_string_value(t), secret) != NULL)
				fail_msg("a secret (%s) is in a rollout", keys[k]);
		}
	}
	assert_true(seen >= 4); /* a code, a verifier, the tokens issued */
	json_decref(nftw_found);
	json_decref(log);
	free(sessions);
	free(err);
}
