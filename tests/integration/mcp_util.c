/*
 * What the MCP integration tests share (mcp_util.h): a fixture with our MCP server in
 * config.toml, its start-up states, upstream's recordings and comparisons against them, the
 * server's log, and where in a turn's messages an answer or an item came.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/wait.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "mcp_util.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

/* A fixture whose config.toml has [mcp_servers.test] with args (TOML array items) and extra;
 * env: more daemon environment (NULL-terminated, may be NULL). */
void
mcp_start_env(struct tt *f, const char *script, const char *args, const char *extra,
	const char *const *env)
{
	struct tt_opts o = {0};
	char path[PATH_MAX], *cfg, *s = tt_script(script);

	assert_non_null(realpath(SERVER, path));
	cfg = xasprintf("[mcp_servers.test]\ncommand = \"python3\"\nargs = [\"%s\"%s%s]\n%s\n",
		path, args != NULL ? ", " : "", args != NULL ? args : "",
		extra != NULL ? extra : "");
	o.script = s;
	o.config_extra = cfg;
	o.env = env;
	tt_start(f, &o);
	free(cfg);
	free(s);
}

void
mcp_start(struct tt *f, const char *script, const char *args, const char *extra)
{
	mcp_start_env(f, script, args, extra, NULL);
}

/* The next mcpServer/startupStatus/updated's params (new reference). */
json_t *
mcp_status(struct tt *f, int timeout_ms)
{
	json_t *m = asc_wait_notification(f->c, "mcpServer/startupStatus/updated", timeout_ms), *p;

	assert_non_null(m);
	p = json_incref(json_object_get(m, "params"));
	json_decref(m);
	return p;
}

/* Wait for `starting` then `ready`. */
void
mcp_ready(struct tt *f)
{
	json_t *p = mcp_status(f, asc_timeout(5000));

	assert_string_equal(json_string_value(json_object_get(p, "status")), "starting");
	assert_string_equal(json_string_value(json_object_get(p, "threadId")), f->thread_id);
	assert_string_equal(json_string_value(json_object_get(p, "name")), "test");
	json_decref(p);
	p = mcp_status(f, asc_timeout(10000));
	assert_string_equal(json_string_value(json_object_get(p, "status")), "ready");
	json_decref(p);
}

/* A fixture file (new reference). */
json_t *
mcp_fixture(const char *name)
{
	char *path = xasprintf(FIXTURES "%s.json", name);
	json_t *v = json_load_file(path, 0, NULL);

	assert_non_null(v);
	free(path);
	return v;
}

/* The tool named `name` of a request body (borrowed), or NULL. */
json_t *
mcp_body_tool(const json_t *body, const char *name)
{
	json_t *t;
	size_t i;

	json_array_foreach(json_object_get(body, "tools"), i,
		t) if (strcmp(json_string_value(json_object_get(t, "name")) ?: "", name) ==
		0) return t;
	return NULL;
}

void
mcp_equal(const char *what, const json_t *want, const json_t *got)
{
	char *w, *g;

	if (json_equal((json_t *)want, (json_t *)got))
		return;
	w = json_dumps(want, JSON_SORT_KEYS | JSON_ENCODE_ANY);
	g = json_dumps(got, JSON_SORT_KEYS | JSON_ENCODE_ANY);
	fprintf(stderr, "%s differs\n want: %.3000s\n  got: %.3000s\n", what, w, g);
	free(w);
	free(g);
	fail();
}

/* An item without its times; a function_call_output without id and with a fixed wall time. */
json_t *
mcp_norm_item(const json_t *it)
{
	json_t *c = json_deep_copy(it);

	json_object_del(c, "startedAtMs");
	json_object_del(c, "completedAtMs");
	json_object_del(c, "durationMs");
	return c;
}

static void
mcp_norm_text(json_t *s)
{
	const char *t = json_string_value(s), *o;

	if (t != NULL && strncmp(t, "Wall time: ", 11) == 0 && (o = strstr(t, "Output:")) != NULL) {
		char *n = xasprintf("Wall time: W seconds\n%s", o);

		json_string_set(s, n);
		free(n);
	}
}

json_t *
mcp_norm_output(const json_t *out)
{
	json_t *c = json_deep_copy(out), *o = json_object_get(c, "output"), *p;
	size_t i;

	json_object_del(c, "id");
	mcp_norm_text(o);
	json_array_foreach(o, i, p) mcp_norm_text(json_object_get(p, "text"));
	return c;
}

/* The mcpToolCall items completed in a turn, by call id order of the fixture. */
void
mcp_compare_items(const json_t *msgs, const json_t *want)
{
	json_t *w, *g, *n1, *n2;
	size_t i, j;

	json_array_foreach(json_object_get(want, "items"), i, w)
	{
		for (j = 0; (g = tt_item(msgs, "mcpToolCall", j)) != NULL; j++)
			if (json_equal(json_object_get(g, "id"), json_object_get(w, "id")))
				break;
		assert_non_null(g);
		n1 = mcp_norm_item(w);
		n2 = mcp_norm_item(g);
		mcp_equal("the mcpToolCall item", n1, n2);
		json_decref(n1);
		json_decref(n2);
	}
}

/* What the model got back for each call, against the fixture's outputs. */
void
mcp_compare_outputs(const json_t *body, const json_t *want)
{
	json_t *w, *it, *n1, *n2;
	size_t i, j;

	json_array_foreach(json_object_get(want, "outputs"), i, w)
	{
		n1 = mcp_norm_output(w);
		n2 = NULL;
		json_array_foreach(json_object_get(body, "input"), j,
			it) if (json_equal(json_object_get(it, "call_id"),
					json_object_get(w, "call_id")) &&
			strcmp(json_string_value(json_object_get(it, "type")) ?: "",
				"function_call_output") == 0) n2 = mcp_norm_output(it);
		assert_non_null(n2);
		mcp_equal("the function_call_output", n1, n2);
		json_decref(n1);
		json_decref(n2);
	}
}

/* A scratch folder for the server's log (heap); removed by mcp_log_done. */
char *
mcp_log_dir(void)
{
	char *dir = xasprintf("%s/mcplog.XXXXXX", getenv("TMPDIR") ?: "/tmp");

	assert_non_null(mkdtemp(dir));
	return dir;
}

/* Every message the MCP server received (heap text). */
char *
mcp_log(const char *dir)
{
	char *p = xasprintf("%s/mcp.log", dir), *t = tt_read(p);

	free(p);
	return t != NULL ? t : xstrdup("");
}

void
mcp_log_done(char *dir)
{
	char *p = xasprintf("%s/mcp.log", dir);

	unlink(p);
	rmdir(dir);
	free(p);
	free(dir);
}

/* The type of a message's params.item, or "". */
const char *
mcp_msg_item_type(const json_t *m)
{
	return json_string_value(json_object_get(
		       json_object_get(json_object_get(m, "params"), "item"), "type"))
		?: "";
}

/* Where in msgs the answer to request id is (SIZE_MAX: nowhere). */
size_t
mcp_answer_at(const json_t *msgs, long long id)
{
	json_t *m;
	size_t i;

	json_array_foreach((json_t *)msgs, i, m) if (json_object_get(m, "method") == NULL &&
		json_integer_value(json_object_get(m, "id")) == id) return i;
	return SIZE_MAX;
}

/* Where the n-th item/completed of an item of type is (SIZE_MAX: nowhere). */
size_t
mcp_completed_at(const json_t *msgs, const char *type)
{
	json_t *m, *it;
	size_t i;

	json_array_foreach((json_t *)msgs, i, m)
	{
		if (strcmp(json_string_value(json_object_get(m, "method")) ?: "",
			    "item/completed") != 0)
			continue;
		it = json_object_get(json_object_get(m, "params"), "item");
		if (strcmp(json_string_value(json_object_get(it, "type")) ?: "", type) == 0)
			return i;
	}
	return SIZE_MAX;
}

#define EVERYTHING_VERSION "2026.8.31"
#define EVERYTHING_ENTRY                                                                           \
	"/mcp-npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

/*
 * @modelcontextprotocol/server-everything (npm), installed into $BUILD/mcp-npm once (never
 * committed): its path (heap), or NULL when npm cannot have it (the caller skips, counted).
 */
char *
mcp_everything_entry(void)
{
	const char *build = getenv("BUILD") != NULL ? getenv("BUILD") : "build";
	char *entry = xasprintf("%s" EVERYTHING_ENTRY, build), *prefix, path[PATH_MAX];
	pid_t pid;
	int st;

	if (access(entry, R_OK) != 0) {
		prefix = xasprintf("%s/mcp-npm", build);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			int null = open("/dev/null", O_WRONLY);

			dup2(null, 1);
			dup2(null, 2);
			execlp("timeout", "timeout", "180", "npm", "install", "--prefix", prefix,
				"--no-save", "--no-audit", "--no-fund", "--omit=optional",
				"--prefer-offline",
				"@modelcontextprotocol/server-everything@" EVERYTHING_VERSION,
				(char *)NULL);
			_exit(127);
		}
		assert_int_equal(waitpid(pid, &st, 0), pid);
		free(prefix);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || access(entry, R_OK) != 0) {
			free(entry);
			return NULL;
		}
	}
	assert_non_null(realpath(entry, path));
	free(entry);
	return xstrdup(path);
}

char *
mcp_everything_preload(void)
{
	const char *build = getenv("BUILD") != NULL ? getenv("BUILD") : "build";
	char *path = xasprintf("%s/mcp-npm/webcrypto.cjs", build), full[PATH_MAX];
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs("if (globalThis.crypto === undefined)\n\tglobalThis.crypto = require('node:crypto').webcrypto;\n",
		f);
	assert_int_equal(fclose(f), 0);
	assert_non_null(realpath(path, full));
	free(path);
	return xstrdup(full);
}
