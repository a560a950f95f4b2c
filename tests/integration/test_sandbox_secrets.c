/*
 * CODEX_HOME's secrets and the daemon's state files, seen from a sandbox (issue 21, item 4):
 * auth.json (API key, tokens) and the thread index app-server-threads.sqlite with its -wal,
 * -shm and -journal must not be openable by a sandboxed command, whether CODEX_HOME lies in a
 * read-only place or inside a writable root, and also when they appear while the command
 * runs. Before sandbox/home_view.c every one of them was readable (upstream is the same).
 * The rest of CODEX_HOME (config.toml, skills, sessions) stays readable and read-only.
 * dangerFullAccess is unsandboxed by definition: it reads them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox_util.h"
#include "protocol/xmalloc.h"

/* The files that must stay out of reach, relative to CODEX_HOME. */
static const char *const secrets[] = {
	"auth.json",
	"app-server-threads.sqlite",
	"app-server-threads.sqlite-wal",
	"app-server-threads.sqlite-shm",
	"app-server-threads.sqlite-journal",
	NULL,
};

/* CODEX_HOME with every secret holding SECRET, plus config.toml and a skill. */
static const char *
home_fill(struct asc *c)
{
	const char *home = asc_codex_home(c);
	char *p;

	mkdir(home, 0700);
	for (const char *const *s = secrets; *s != NULL; s++) {
		p = xasprintf("%s/%s", home, *s);
		sbt_put(p, "SECRET\n");
		free(p);
	}
	p = xasprintf("%s/config.toml", home);
	sbt_put(p, "model = \"m\"\n");
	free(p);
	p = xasprintf("%s/skills", home);
	mkdir(p, 0755);
	free(p);
	p = xasprintf("%s/skills/SKILL.md", home);
	sbt_put(p, "skill\n");
	free(p);
	return home;
}

/* A script trying every secret (cat, then a write) and reading what stays readable. */
static char *
probe(const char *home)
{
	return xasprintf(
		"cd '%s' && for f in auth.json app-server-threads.sqlite "
		"app-server-threads.sqlite-wal app-server-threads.sqlite-shm "
		"app-server-threads.sqlite-journal; do cat $f 2>/dev/null; "
		"(: > $f) 2>/dev/null && echo wrote $f; done; cat config.toml skills/SKILL.md; "
		"ls -A | tr '\\n' ' '",
		home);
}

/* readOnly and workspaceWrite (CODEX_HOME under /tmp, a writable root) see no secret. */
static void
test_secrets_hidden(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	const char *home = home_fill(c);
	char *ws = sbt_mkdir_in(c, "ws"), *script = probe(home), *p;
	const char *want = "model = \"m\"\nskill\nconfig.toml skills ";

	sbt_expect(c, ws, "{'sandboxPolicy':{'type':'readOnly'}}", script, 0, want);
	sbt_expect(c, ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}", script, 0, want);
	/* CODEX_HOME as the cwd and a writable root: demoted, and still without secrets. */
	p = xasprintf("{'sandboxPolicy':{'type':'workspaceWrite','writableRoots':['%s']}}", home);
	sbt_expect(c, home, p, script, 0, want);
	free(p);
	/* Unsandboxed by definition: the same script reads them all. */
	sbt_expect(c, ws, "{'sandboxPolicy':{'type':'dangerFullAccess'}}",
		xasprintf("cat '%s/auth.json' '%s/app-server-threads.sqlite-wal'", home, home), 0,
		"SECRET\nSECRET\n");
	for (const char *const *s = secrets; *s != NULL; s++) {
		p = xasprintf("%s/%s", home, *s);
		sbt_assert_file(p, "SECRET\n");
		free(p);
	}
	free(script);
	free(ws);
	asc_free(c);
}

/* A secret that appears on the host while the command runs does not appear in its view. */
static void
test_secret_appears_later(void **state)
{
	struct asc *c = sbt_daemon(0, NULL);
	const char *home = asc_codex_home(c);
	char *ws = sbt_mkdir_in(c, "ws"), *auth = xasprintf("%s/auth.json", home), *script;
	char *ready = xasprintf("%s/ready", ws);
	long long id;
	json_t *m, *r;

	mkdir(home, 0700);
	script = xasprintf("for i in $(seq 100); do [ -e '%s/ready' ] && break; sleep 0.05; done; "
			   "cat '%s' 2>/dev/null || echo hidden",
		ws, auth);
	id = asc_request(c, "command/exec",
		sbt_sh(ws, "{'sandboxPolicy':{'type':'workspaceWrite'}}", script));
	usleep(300000);
	sbt_put(auth, "{\"OPENAI_API_KEY\":\"sk-late\"}\n");
	sbt_put(ready, "");
	m = asc_wait_response(c, id, asc_timeout(SBT_REPLY));
	r = asc_assert_result(m);
	assert_string_equal(json_string_value(json_object_get(r, "stdout")), "hidden\n");
	json_decref(m);
	free(ready);
	free(script);
	free(auth);
	free(ws);
	asc_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_secrets_hidden),
		cmocka_unit_test(test_secret_appears_later),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
