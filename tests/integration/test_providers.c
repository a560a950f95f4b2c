/*
 * modelProvider/config/write and modelProvider/list on the real daemon, replaying upstream
 * 0.169's recording tests/fixtures/providers/upstream/write.json (record.py; upstream is not
 * needed here): per case the same config.toml (or none), modelProvider/list, the same writes
 * one by one, modelProvider/list again. Every answer (results, error codes, words and
 * data.config_write_error_code), config.toml's bytes afterwards (new ids and their numbering,
 * key order, comments and every other byte kept, an inline table made a table) and both lists
 * (sorted by id with OpenAI among them, Bedrock and Vertex AI providers) must be upstream's.
 * The harness checks every message against the schema as it arrives.
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

#define WRITE_JSON "tests/fixtures/providers/upstream/write.json"
#define T_REPLY	   5000

static json_t *recording;

/* Fail with both sides when they differ. */
static void
pv_equal(const char *name, const char *what, const json_t *want, const json_t *got)
{
	char *w, *g;

	if (json_equal(want, got))
		return;
	w = json_dumps(want, JSON_SORT_KEYS | JSON_ENCODE_ANY);
	g = json_dumps(got, JSON_SORT_KEYS | JSON_ENCODE_ANY);
	fail_msg("%s: %s: upstream %s, here %s", name, what, w, g);
}

/* A request's answer without its id: {result} or {error}. New reference. */
static json_t *
pv_call(struct asc *c, const char *method, json_t *params)
{
	json_t *r = asc_wait_response(c, asc_request(c, method, params), asc_timeout(T_REPLY)), *a;

	assert_non_null(r);
	a = json_deep_copy(r);
	json_object_del(a, "id");
	json_object_del(a, "jsonrpc");
	json_decref(r);
	return a;
}

/* config.toml's text, or NULL when there is none. */
static char *
pv_read(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = xmalloc((size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void
pv_replay(const json_t *cs)
{
	const char *name = json_string_value(json_object_get(cs, "name"));
	const json_t *before = json_object_get(cs, "config_before"), *w, *after;
	struct asc *c;
	json_t *got;
	char *path, *text;
	size_t i;

	if (json_is_string(before))
		c = asc_spawn_config(json_string_value(before), 1);
	else {
		/* as recorded: CODEX_HOME exists, config.toml does not */
		c = asc_spawn(NULL);
		mkdir(asc_codex_home(c), 0700);
		asc_initialize(c);
	}
	path = xasprintf("%s/config.toml", asc_codex_home(c));
	got = pv_call(c, "modelProvider/list", json_object());
	pv_equal(name, "the list before",
		json_pack("{s:O}", "result", json_object_get(cs, "list_before")), got);
	json_decref(got);
	json_array_foreach(json_object_get(cs, "writes"), i, w)
	{
		char what[32];

		got = pv_call(c, "modelProvider/config/write", json_pack("{s:O}", "settings", w));
		snprintf(what, sizeof what, "write %zu", i);
		pv_equal(name, what, json_array_get(json_object_get(cs, "answers"), i), got);
		json_decref(got);
	}
	got = pv_call(c, "modelProvider/list", json_object());
	pv_equal(name, "the list after",
		json_pack("{s:O}", "result", json_object_get(cs, "list_after")), got);
	json_decref(got);
	text = pv_read(path);
	after = json_object_get(cs, "config_after");
	if (json_is_null(after))
		assert_null(text);
	else if (text == NULL || strcmp(text, json_string_value(after)) != 0)
		fail_msg("%s: config.toml afterwards:\n--- upstream\n%s--- here\n%s", name,
			json_string_value(after), text != NULL ? text : "(none)\n");
	free(text);
	free(path);
	asc_free(c);
}

/* One cmocka case per recorded case, by name. */
static void
test_case(void **state)
{
	pv_replay(*state);
}

int
main(void)
{
	json_t *cases, *cs;
	struct CMUnitTest *tests;
	size_t i, n;
	int r;

	if ((recording = json_load_file(WRITE_JSON, 0, NULL)) == NULL) {
		fprintf(stderr, "test_providers: cannot read %s\n", WRITE_JSON);
		return 1;
	}
	cases = json_object_get(recording, "cases");
	n = json_array_size(cases);
	tests = xcalloc(n, sizeof *tests);
	json_array_foreach(cases, i, cs)
	{
		tests[i].name = json_string_value(json_object_get(cs, "name"));
		tests[i].test_func = test_case;
		tests[i].initial_state = cs;
	}
	r = _cmocka_run_group_tests("test_providers", tests, n, NULL, NULL);
	free(tests);
	json_decref(recording);
	return r;
}
