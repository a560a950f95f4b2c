/*
 * Tests for protocol/toml/toml_edit.c: a table of documents, each with a list of edits and the
 * exact text it must become. The cases named "upstream" are upstream 0.169's own answers: the
 * same file and the same config/batchWrite edits, with the file upstream wrote recorded byte
 * for byte.
 * Every result must still parse (toml_parse) to the tree the edits describe.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/toml/toml.h"
#include "protocol/toml/toml_edit.h"
#include "protocol/xmalloc.h"

struct edit {
	const char *path;  /* segments separated by '|' */
	const char *value; /* JSON text; NULL: remove */
};

struct edit_case {
	const char *name;
	const char *before;
	struct edit edits[12];
	const char *after;
};

/* Upstream's file for the h4 session (tests/fixtures/config/README.md). */
static const char upstream_before[] = "# top comment\n"
				      "model = \"gpt-5.1\"   # trailing\n"
				      "approval_policy = \"never\"\n"
				      "tui.theme = \"dark\"\n"
				      "\n"
				      "[sandbox_workspace_write]\n"
				      "# inner comment\n"
				      "network_access = false\n"
				      "writable_roots = [\"/tmp/a\", \"/tmp/b\"]\n"
				      "\n"
				      "[mcp_servers.docs]\n"
				      "command = \"docs-server\"\n"
				      "args = [\"--port\", \"4000\"]\n"
				      "\n"
				      "[projects.\"/tmp/x\"]\n"
				      "trust_level = \"trusted\"\n";

static const char upstream_after[] = "# top comment\n"
				     "model = \"gpt-5.2\"   # trailing\n"
				     "tui.theme = \"dark\"\n"
				     "tui.animations = false\n"
				     "model_verbosity = \"low\"\n"
				     "\n"
				     "[sandbox_workspace_write]\n"
				     "# inner comment\n"
				     "network_access = true\n"
				     "writable_roots = [\"/tmp/a\", \"/tmp/b\"]\n"
				     "\n"
				     "[mcp_servers.docs]\n"
				     "command = \"docs-server\"\n"
				     "args = [\"--port\", \"4000\"]\n"
				     "\n"
				     "[mcp_servers.docs.env]\n"
				     "A = \"1\"\n"
				     "\n"
				     "[mcp_servers.new]\n"
				     "command = \"x\"\n"
				     "args = [\"a\"]\n"
				     "\n"
				     "[projects.\"/tmp/x\"]\n"
				     "trust_level = \"trusted\"\n"
				     "\n"
				     "[projects.\"/tmp/y z\"]\n"
				     "trust_level = \"trusted\"\n"
				     "\n"
				     "[features]\n"
				     "shell_snapshot = true\n";

static const struct edit_case cases[] = {
	{"upstream h4 session", upstream_before,
		{{"model", "\"gpt-5.2\""}, {"sandbox_workspace_write|network_access", "true"},
			{"model_verbosity", "\"low\""}, {"features|shell_snapshot", "true"},
			{"mcp_servers|docs|env", "{\"A\":\"1\"}"},
			{"mcp_servers|new", "{\"command\":\"x\",\"args\":[\"a\"]}"},
			{"approval_policy", NULL}, {"tui|animations", "false"},
			{"projects|/tmp/y z|trust_level", "\"trusted\""}},
		upstream_after},
	/* toml_edit counts the comments above a header as the header's: they go with it. */
	{"comments above a removed key or table go with it",
		"a = 1\n\n# about b\nb = 2 # why\nc = 3\n\n[t]\nx = 1\n# above u\n\n[u]\ny = 2\n",
		{{"b", NULL}, {"u", NULL}}, "a = 1\nc = 3\n\n[t]\nx = 1\n"},
	{"a replaced value keeps its spacing and comment", "k   =   'old'   # note\r\nz = 1\r\n",
		{{"k", "\"new\""}}, "k   =   \"new\"   # note\r\nz = 1\r\n"},
	{"multi-line arrays are one value", "a = [\n  1, # one\n  2,\n]\nb = 1\n",
		{{"a", "[3]"}, {"c", "true"}}, "a = [3]\nb = 1\nc = true\n"},
	{"strings as toml_edit writes them", "",
		{{"t|nl", "\"a\\nb\""}, {"t|tab", "\"x\\ty\""}, {"t|q", "\"say \\\"hi\\\"\""},
			{"t|bs", "\"C:\\\\x\""}, {"t|ap", "\"it's\""}, {"t|bsq", "\"a\\\\b'c\""},
			{"t|ctl", "\"c\\u0001d\\u007f\""}, {"t|bsnl", "\"a\\\\b\\nc\""},
			{"t|uni", "\"\\u00e9\""}},
		"[t]\nnl = \"\"\"\na\nb\"\"\"\ntab = \"x\\ty\"\nq = 'say \"hi\"'\nbs = 'C:\\x'\n"
		"ap = \"it's\"\nbsq = '''a\\b'c'''\nctl = \"c\\u0001d\\u007F\"\n"
		"bsnl = '''\na\\b\nc'''\nuni = \"\xc3\xa9\"\n"},
	{"numbers, arrays and inline tables", "x = 0\n",
		{{"n|i", "-5"}, {"n|f", "2.0"}, {"n|small", "0.1"}, {"n|big", "1e21"},
			{"n|tiny", "1.5e-7"}, {"n|b", "false"}, {"n|e", "[]"},
			{"n|nested", "[[1, 2], [\"x\"]]"}, {"n|objs", "[{\"a\":{\"b\":1}}]"}},
		"x = 0\n\n[n]\ni = -5\nf = 2.0\nsmall = 0.1\nbig = 1000000000000000000000.0\n"
		"tiny = 0.00000015\nb = false\ne = []\nnested = [[1, 2], [\"x\"]]\n"
		"objs = [{ a = { b = 1 } }]\n"},
	{"quoted and dotted keys", "[zk.\"a b\"]\nq = 1\n",
		{{"zk|a b|c.d", "1"}, {"zk2|\xc3\xa9", "2"}, {"zk|a b|q", "3"}},
		"[zk.\"a b\"]\nq = 3\n\"c.d\" = 1\n\n[zk2]\n\"\xc3\xa9\" = 2\n"},
	{"nested objects become tables, values first", "m = 1\n",
		{{"zk3", "{\"x\":{\"y\":{\"z\":1}},\"w\":2}"}, {"e", "{}"}},
		"m = 1\n\n[zk3]\nw = 2\n\n[zk3.x]\n\n[zk3.x.y]\nz = 1\n\n[e]\n"},
	{"a new key in a table with sub-tables goes before them", "[a]\nx = 1\n\n[a.b]\ny = 2\n",
		{{"a|z", "3"}, {"a|c", "{\"k\":1}"}},
		"[a]\nx = 1\nz = 3\n\n[a.b]\ny = 2\n\n[a.c]\nk = 1\n"},
	{"an implicit table gets its header before its first sub-table",
		"top = 1\n\n[p.q]\nv = 1\n", {{"p|w", "2"}},
		"top = 1\n\n[p]\nw = 2\n\n[p.q]\nv = 1\n"},
	/*
	 * An edit inside an inline table makes it a table first, as toml_edit does (upstream
	 * 0.169's bytes for the same config/batchWrite edits,
	 * tests/fixtures/config/inline_tables.py).
	 */
	{"upstream: inline tables become tables", "tui = { theme = \"dark\", animations = true }\n",
		{{"tui|theme", "\"light\""}, {"tui|notifications", "true"},
			{"tui|animations", NULL}},
		"[tui ]\ntheme = \"light\"\nnotifications = true\n"},
	{"upstream: edit inside", "tui = { theme = \"dark\", animations = true }\n",
		{{"tui|theme", "\"light\""}}, "[tui ]\ntheme = \"light\"\nanimations = true\n"},
	{"upstream: add inside", "tui = { theme = \"dark\", animations = true }\n",
		{{"tui|notifications", "true"}},
		"[tui ]\ntheme = \"dark\"\nanimations = true\nnotifications = true\n"},
	{"upstream: remove inside", "tui = { theme = \"dark\", animations = true }\n",
		{{"tui|animations", NULL}}, "[tui ]\ntheme = \"dark\"\n"},
	{"upstream: comments around",
		"# top\nmodel = \"m\" # c\ntui = { theme = \"dark\" } # tail\nz = 1\n\n[t]\nk = 1\n",
		{{"tui|theme", "\"light\""}},
		"# top\nmodel = \"m\" # c\nz = 1\n\n[tui ]\ntheme = \"light\"\n\n[t]\nk = 1\n"},
	{"upstream: nested inline in table",
		"[mcp_servers.docs]\ncommand = \"d\"\nenv = { A = \"1\" }\n",
		{{"mcp_servers|docs|env|B", "\"2\""}},
		"[mcp_servers.docs]\ncommand = \"d\"\n\n[mcp_servers.docs.env ]\nA = \"1\"\nB = \"2\"\n"},
	{"upstream: object upsert over inline", "tui = { theme = \"dark\", animations = true }\n",
		{{"tui", "{\"theme\":\"light\",\"animations\":true}"}},
		"[tui ]\ntheme = \"light\"\nanimations = true\n"},
	{"upstream: object replace over inline", "tui = { theme = \"dark\", animations = true }\n",
		{{"tui", "{\"theme\":\"light\"}"}}, "[tui ]\ntheme = \"light\"\n"},
	{"upstream: deeper inline", "a = { b = { c = 1 }, d = 2 }\n", {{"a|b|c", "5"}},
		"[a ]\nd = 2\n\n[a.b]\nc = 5\n"},
	{"upstream: inline untouched", "tui = { theme = \"dark\" }\nmodel = \"x\"\n",
		{{"model", "\"y\""}}, "tui = { theme = \"dark\" }\nmodel = \"y\"\n"},
	{"upstream: empty inline", "tui = {}\n", {{"tui|theme", "\"light\""}},
		"[tui ]\ntheme = \"light\"\n"},
	{"an object over a table replaces its keys in place", "[s]\na = 1 # keep\nb = 2\n\n[t]\n",
		{{"s", "{\"a\":5,\"c\":3}"}}, "[s]\na = 5 # keep\nc = 3\n\n[t]\n"},
	{"a scalar over a table, a table over a scalar", "v = 1\n[w]\nx = 1\n",
		{{"w", "2"}, {"v", "{\"y\":1}"}}, "w = 2\n\n[v]\ny = 1\n"},
	{"arrays of tables are removed whole",
		"[[skills.config]]\npath = \"/x\"\n\n"
		"[[skills.config]]\npath = \"/y\"\n\n[other]\nk = 1\n",
		{{"skills|config", NULL}}, "\n[other]\nk = 1\n"},
	{"removing what is absent changes nothing", "# c\na = 1\n", {{"b", NULL}, {"a|b", NULL}},
		"# c\na = 1\n"},
	{"a file without a final newline", "a = 1", {{"b", "2"}, {"t|k", "3"}},
		"a = 1\nb = 2\n\n[t]\nk = 3\n"},
	{"dates and times are one value", "d = 1979-05-27 07:32:00Z # c\ne = 1\n", {{"e", "2"}},
		"d = 1979-05-27 07:32:00Z # c\ne = 2\n"},
};

/* Split "a|b|c" into segments (heap array of pointers into a heap copy). */
static const char **
split(const char *spec, size_t *n, char **copy)
{
	const char **segs = xcalloc(16, sizeof *segs);
	char *s = *copy = xstrdup(spec), *bar;

	*n = 0;
	for (; s != NULL && *n < 16; s = bar) {
		bar = strchr(s, '|');
		if (bar != NULL)
			*bar++ = '\0';
		segs[(*n)++] = s;
	}
	return segs;
}

static void
test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct edit_case *c = &cases[i];
		char *cause = NULL, *copy;
		struct toml_doc *d = toml_edit_open(c->before, strlen(c->before), &cause);
		const char *text;
		json_t *tree;
		size_t n, len;

		print_message("case: %s\n", c->name);
		assert_non_null(d);
		for (const struct edit *e = c->edits; e->path != NULL; e++) {
			const char **segs = split(e->path, &n, &copy);

			if (e->value != NULL) {
				json_t *v = json_loads(e->value, JSON_DECODE_ANY, NULL);

				assert_non_null(v);
				assert_int_equal(toml_edit_set(d, segs, n, v, &cause), 0);
				json_decref(v);
			} else
				assert_true(toml_edit_remove(d, segs, n) >= 0);
			free(segs);
			free(copy);
		}
		text = toml_edit_text(d, &len);
		assert_string_equal(text, c->after);
		tree = toml_parse(text, len, NULL, &cause);
		assert_non_null(tree);
		json_decref(tree);
		toml_edit_free(d);
	}
}

static void
test_errors(void **state)
{
	const char *path[] = {"model", "sub"}, *aot[] = {"s", "x"};
	char *cause = NULL;
	struct toml_doc *d;
	json_t *one = json_integer(1), *nul = json_null(), *arr = json_pack("[i, n]", 1);

	(void)state;
	assert_null(toml_edit_open("a = ", 4, &cause));
	free(cause);
	cause = NULL;
	d = toml_edit_open("model = \"m\"\n[[s]]\nk = 1\n", 24, &cause);
	assert_non_null(d);
	assert_int_equal(toml_edit_set(d, path, 2, one, &cause), -1);
	assert_string_equal(cause, "cannot set value on non-table parent");
	free(cause);
	cause = NULL;
	assert_int_equal(toml_edit_set(d, aot, 2, one, &cause), -1);
	free(cause);
	cause = NULL;
	assert_int_equal(toml_edit_set(d, path, 1, nul, &cause), -1);
	free(cause);
	cause = NULL;
	assert_int_equal(toml_edit_set(d, path, 1, arr, &cause), -1);
	free(cause);
	assert_string_equal(toml_edit_text(d, NULL), "model = \"m\"\n[[s]]\nk = 1\n");
	toml_edit_free(d);
	/* an inline table whose entries the scan cannot all split (a TOML 1.1 comment inside):
	 * making it a table would lose a key, so the edit fails and the text stays */
	{
		static const char multi[] = "t = {\n  a = 1, # one\n  b = 2,\n}\n";
		const char *tc[] = {"t", "c"};

		cause = NULL;
		d = toml_edit_open(multi, strlen(multi), &cause);
		assert_non_null(d);
		assert_int_equal(toml_edit_set(d, tc, 2, one, &cause), -1);
		assert_string_equal(cause, "cannot make this inline table a table");
		free(cause);
		cause = NULL;
		assert_string_equal(toml_edit_text(d, NULL), multi);
		toml_edit_free(d);
	}
	json_decref(one);
	json_decref(nul);
	json_decref(arr);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
