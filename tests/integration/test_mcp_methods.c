/*
 * The mcpServer methods end to end: the real binary and our MCP server
 * (tests/fixtures/mcp/mcp_server.py). What upstream 0.169 answered to the same requests in the
 * same order is recorded in tests/fixtures/mcp/upstream/methods.json (record_methods.py):
 * mcpServerStatus/list with and without a thread, with a limit, cursors and serverName;
 * mcpServer/tool/call's results and errors (the MCP server's own relayed with their codes);
 * mcpServer/resource/read; config/mcpServer/reload. Then the reload taking effect at the
 * thread's next turn.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

#define SERVER "tests/fixtures/mcp/mcp_server.py"
#define MSG(n)                                                                                     \
	"{`events`:[{`ev`:`created`,`id`:`resp-" n "`},{`ev`:`message`,`id`:`m" n                  \
	"`,`text`:`done`},{`ev`:`completed`,`id`:`resp-" n "`}]}"

/* The config.toml text of [mcp_servers.<name>] running our server (heap). */
static char *
mcp_server_toml(const char *name)
{
	char path[PATH_MAX];

	assert_non_null(realpath(SERVER, path));
	return xasprintf("[mcp_servers.%s]\ncommand = \"python3\"\nargs = [\"%s\"]\n", name, path);
}

static void
mcp_start(struct tt *f)
{
	struct tt_opts o = {0};
	char *cfg = mcp_server_toml("test"),
	     *s = tt_script("{`responses`:[" MSG("0") "],`repeat`:true}");
	json_t *m;

	o.script = s;
	o.config_extra = cfg;
	o.experimental = 1;
	tt_start(f, &o);
	free(cfg);
	free(s);
	/* starting, then ready */
	for (int i = 0; i < 2; i++) {
		m = asc_wait_notification(
			f->c, "mcpServer/startupStatus/updated", asc_timeout(10000));
		assert_non_null(m);
		json_decref(m);
	}
}

/* text with every THREAD_ID replaced by id (heap). */
static char *
mcp_subst(const char *text, const char *id)
{
	size_t n = 0;
	const char *p;
	char *out, *o;

	for (p = text; (p = strstr(p, "THREAD_ID")) != NULL; p += 9)
		n++;
	out = o = xmalloc(strlen(text) + n * strlen(id) + 1);
	while ((p = strstr(text, "THREAD_ID")) != NULL) {
		memcpy(o, text, (size_t)(p - text));
		o += p - text;
		memcpy(o, id, strlen(id));
		o += strlen(id);
		text = p + 9;
	}
	memcpy(o, text, strlen(text) + 1);
	return out;
}

/* Upstream's recorded answers, one by one, against ours (ids aside). */
static void
test_methods_as_upstream(void **state)
{
	struct tt f;
	json_t *want, *rec, *req, *params, *got, *w;
	const char *name;
	char *text, *sub;
	long long id;

	(void)state;
	mcp_start(&f);
	want = json_load_file("tests/fixtures/mcp/upstream/methods.json", 0, NULL);
	assert_non_null(want);
	json_object_foreach(want, name, rec)
	{
		req = json_object_get(rec, "request");
		params = json_object_get(req, "params");
		text = params != NULL ? json_dumps(params, JSON_COMPACT) : NULL;
		sub = text != NULL ? mcp_subst(text, f.thread_id) : NULL;
		id = asc_request(f.c, json_string_value(json_object_get(req, "method")),
			sub != NULL ? json_loads(sub, 0, NULL) : NULL);
		got = asc_wait_response(f.c, id, asc_timeout(20000));
		assert_non_null(got);
		json_object_del(got, "id");
		w = json_deep_copy(json_object_get(rec, "answer"));
		json_object_del(w, "id");
		free(text);
		text = json_dumps(w, 0);
		free(sub);
		sub = mcp_subst(text, f.thread_id);
		json_decref(w);
		w = json_loads(sub, 0, NULL);
		if (!json_equal(w, got)) {
			char *a = json_dumps(w, JSON_SORT_KEYS),
			     *b = json_dumps(got, JSON_SORT_KEYS);

			fprintf(stderr,
				"%s differs from upstream's\n want: %.2000s\n  got: %.2000s\n",
				name, a, b);
			free(a);
			free(b);
			fail();
		}
		json_decref(w);
		json_decref(got);
		free(text);
		free(sub);
	}
	json_decref(want);
	tt_stop(&f);
}

/* Whether the request body offers the namespace tool `name`. */
static int
mcp_offers(const json_t *body, const char *name)
{
	json_t *t;
	size_t i;

	json_array_foreach(json_object_get(body, "tools"), i, t)
	{
		if (strcmp(json_string_value(json_object_get(t, "name")) ?: "", name) == 0)
			return 1;
	}
	return 0;
}

/*
 * A server added to config.toml reaches a loaded thread only after config/mcpServer/reload,
 * at its next turn: started (mcpServer/startupStatus/updated) and offered to the model.
 */
static void
test_reload_at_next_turn(void **state)
{
	struct tt f;
	json_t *msgs, *recs, *r;
	char *path, *more;
	FILE *fp;
	size_t before, i;
	int seen = 0;

	(void)state;
	mcp_start(&f);
	path = xasprintf("%s/config.toml", f.home);
	more = mcp_server_toml("second");
	assert_non_null(fp = fopen(path, "a"));
	fprintf(fp, "\n%s", more);
	fclose(fp);
	free(more);
	free(path);
	/* without a reload the thread keeps its servers */
	msgs = tt_turn(&f, "one", NULL, NULL, NULL);
	json_decref(msgs);
	recs = mm_records(&f.mm);
	before = json_array_size(recs);
	assert_true(mcp_offers(tt_request_body(recs, before - 1), "mcp__test"));
	assert_false(mcp_offers(tt_request_body(recs, before - 1), "mcp__second"));
	json_decref(recs);

	r = tt_call(&f, "config/mcpServer/reload", NULL);
	assert_true(json_equal(json_object_get(r, "result"), json_object()) ||
		json_object_size(json_object_get(r, "result")) == 0);
	json_decref(r);
	msgs = tt_turn(&f, "two", NULL, NULL, NULL);
	for (i = 0; tt_find(msgs, "mcpServer/startupStatus/updated", i) != NULL; i++) {
		json_t *p = json_object_get(
			tt_find(msgs, "mcpServer/startupStatus/updated", i), "params");

		if (strcmp(json_string_value(json_object_get(p, "name")), "second") == 0 &&
			strcmp(json_string_value(json_object_get(p, "status")), "ready") == 0)
			seen = 1;
	}
	json_decref(msgs);
	recs = mm_records(&f.mm);
	assert_true(json_array_size(recs) > before);
	assert_true(mcp_offers(tt_request_body(recs, json_array_size(recs) - 1), "mcp__test"));
	assert_true(mcp_offers(tt_request_body(recs, json_array_size(recs) - 1), "mcp__second"));
	json_decref(recs);
	assert_true(seen);
	tt_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_methods_as_upstream),
		cmocka_unit_test(test_reload_at_next_turn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
