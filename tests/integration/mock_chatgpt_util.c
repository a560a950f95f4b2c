/*
 * The account tests' mock and daemon helpers (mock_chatgpt_util.h). The mock dies with the test
 * process (PR_SET_PDEATHSIG), even one that failed before mc_stop, and writes nowhere the test
 * reads: a failed test must not leave a reader of our pipes waiting.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mock_chatgpt_util.h"
#include "protocol/base64.h"
#include "protocol/xmalloc.h"

#define MOCK_PY "tests/integration/mock_chatgpt.py"

void
mc_start(struct mc_mock *m, const char *tag, const char *a1, const char *a2)
{
	char *pf;
	FILE *f;

	snprintf(m->dir, sizeof m->dir, "/tmp/%s-mock-XXXXXX", tag);
	assert_non_null(mkdtemp(m->dir));
	pf = xasprintf("%s/port", m->dir);
	m->log = xasprintf("%s/log.jsonl", m->dir);
	m->pid = fork();
	assert_true(m->pid >= 0);
	if (m->pid == 0) {
		int null = open("/dev/null", O_RDWR);

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(null, 1);
		dup2(null, 2);
		execlp("python3", "python3", MOCK_PY, "--port-file", pf, "--log", m->log, a1, a2,
			(char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 500 && (f = fopen(pf, "re")) == NULL; i++)
		usleep(10000);
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &m->port), 1);
	fclose(f);
	free(pf);
}

/* nftw callback: remove one entry (children first). */
static int
rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (type == FTW_DP ? rmdir(path) : unlink(path)) == 0 ? 0 : -1;
}

int
mc_rm_tree(const char *dir)
{
	return nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void
mc_stop(struct mc_mock *m)
{
	kill(m->pid, SIGTERM);
	waitpid(m->pid, NULL, 0);
	assert_int_equal(mc_rm_tree(m->dir), 0);
	free(m->log);
}

json_t *
mc_browse(const struct mc_mock *m, const char *url, int must_exit_0)
{
	char *out = xasprintf("%s/browse.json", m->dir);
	int st = 0;
	pid_t pid = fork();
	json_t *r;

	assert_true(pid >= 0);
	if (pid == 0) {
		execlp("python3", "python3", MOCK_PY, "--browse", url, "--out", out, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (must_exit_0)
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	r = json_load_file(out, 0, NULL);
	assert_non_null(r);
	unlink(out);
	free(out);
	return r;
}

char *
mc_jwt(json_t *payload)
{
	char *raw = json_dumps(payload, JSON_COMPACT),
	     *b = xmalloc(base64_encoded_len(strlen(raw)) + 1);

	base64_encode(raw, strlen(raw), b);
	b[base64_encoded_len(strlen(raw))] = '\0'; /* base64_encode does not end the string */
	for (char *p = b; *p != '\0'; p++) {	   /* base64url, unpadded */
		if (*p == '+')
			*p = '-';
		else if (*p == '/')
			*p = '_';
		else if (*p == '=')
			*p = '\0';
	}
	free(raw);
	json_decref(payload);
	raw = xasprintf("eyJhbGciOiJub25lIn0.%s.sig", b);
	free(b);
	return raw;
}

void
mc_write_config(const struct mc_mock *m, const char *home)
{
	char *path = xasprintf("%s/config.toml", home);
	FILE *f;

	assert_non_null(f = fopen(path, "we"));
	fprintf(f,
		"openai_base_url = \"http://127.0.0.1:%d/backend-api/codex\"\n"
		"chatgpt_base_url = \"http://127.0.0.1:%d/backend-api/\"\n"
		"model = \"gpt-5\"\n",
		m->port, m->port);
	fclose(f);
	free(path);
}

void
mc_initialize(struct asc *c)
{
	json_t *r = asc_wait_response(c,
		asc_request(c, "initialize",
			json_pack("{s:{s:s, s:s}, s:{s:b}}", "clientInfo", "name", "t", "version",
				"1", "capabilities", "experimentalApi", 1)),
		MC_MS);

	asc_assert_result(r);
	json_decref(r);
}

char *
mc_thread_new(struct asc *c)
{
	json_t *r = asc_wait_response(
		c, asc_request(c, "thread/start", json_pack("{s:s}", "cwd", "/tmp")), MC_MS);
	char *id = xstrdup(json_string_value(
		json_object_get(json_object_get(asc_assert_result(r), "thread"), "id")));

	json_decref(r);
	return id;
}

void
mc_turn_start(struct asc *c, const char *tid)
{
	json_decref(asc_wait_response(c,
		asc_request(c, "turn/start",
			json_pack("{s:s, s:[{s:s, s:s}]}", "threadId", tid, "input", "type", "text",
				"text", "hi")),
		MC_MS));
}
