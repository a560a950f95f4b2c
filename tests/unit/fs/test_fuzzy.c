/*
 * Fuzzy scoring (server/fs/fuzzy*.c): a table of (query, path) -> (score, indices) taken from
 * upstream 0.169's own answers (fuzzyFileSearch on generated trees), plus order checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <errno.h>
#include <string.h>

#include "fs/search/fuzzy.h"

struct fz_case {
	const char *query;
	const char *path;
	int is_dir;
	long score; /* -1: no match */
	const char *indices;
};

/* Observed on upstream: scores with their tiers (65536 per name tier) and indices. */
static const struct fz_case fz_cases[] = {
	{"main", "main", 0, 196717, "0,1,2,3"},
	{"main", "src/Main.c", 0, 65645, "4,5,6,7"},
	{"main", "src/main.rs", 0, 65645, "4,5,6,7"},
	{"Main", "src/main.rs", 0, 65645, "4,5,6,7"},
	{"src", "src", 1, 131156, "0,1,2"},
	{"src", "src/util", 1, 84, "0,1,2"},
	{"src", "src/util/helpers.rs", 0, 84, "0,1,2"},
	{"head", ".git/HEAD", 0, 196717, "5,6,7,8"},
	{"main", "a/Main", 0, 196717, "2,3,4,5"},
	{"main", "b/main", 1, 131181, "2,3,4,5"},
	{"main", "a/main.tar.gz", 0, 65645, "2,3,4,5"},
	{"main", "a/my_main.c", 0, 65640, "5,6,7,8"},
	{"main", "a/m_a_i_n", 0, 65633, "2,4,6,8"},
	{"main", "a/xmain", 0, 65612, "3,4,5,6"},
	{"main", "b/main/inner", 0, 109, "2,3,4,5"},
	{"main", "maindir", 1, 109, "0,1,2,3"},
	{"main.rs", "a/main.rs", 0, 196792, "2,3,4,5,6,7,8"},
	{"mai", "a/my_main.c", 0, 65616, "5,6,7"},
	{"mai", "a/m_a_i_n", 0, 65612, "2,4,6"},
	{"mai", "a/xmain", 0, 65592, "3,4,5"},
	{"ain", "a/m_a_i_n", 0, 65610, "4,6,8"},
	{"ain", "b/main/inner", 0, 61, "3,7,8"},
	{"ain", "maindir", 1, 56, "1,2,3"},
	{"a/main", "a/main.rs", 0, 159, "0,1,2,3,4,5"},
	{"a/main", "a/my_main.c", 0, 150, "0,1,5,6,7,8"},
	{"a/main", "a/m_a_i_n", 0, 147, "0,1,2,4,6,8"},
	{"a/main", "a/xmain", 0, 132, "0,1,3,4,5,6"},
	{"maindir", "maindir", 1, 131256, "0,1,2,3,4,5,6"},
	{"maindir", "maindir/f", 0, 184, "0,1,2,3,4,5,6"},
	{"abc", "abc/xaxbxc", 0, 65578, "5,7,9"},
	{"abc", "q/ab.c", 0, 65616, "2,3,5"},
	{"main rs", "q/main rs", 0, 165, "2,3,4,5,7,8"},
	{"main rs", "q/main.rs", 0, 165, "2,3,4,5,7,8"},
	{"^q", "q/emile", 0, 34, "0"},
	{"'main", "q/main.rs", 0, 109, "2,3,4,5"},
	{"main$", "q/main.rs", 0, -1, ""},
	{"!abc", "q/ab.c", 0, 0, ""},
	{"!abc", "abc/xaxbxc", 0, -1, ""},
	{"emile", "q/\xc3\x89mile", 0, 196742, "2,3,4,5,6"},
	{"Emile", "q/emile", 0, 196742, "2,3,4,5,6"},
	{"x", "abc/xaxbxc", 0, 65570, "4"},
	{"foo bar", "foo/bar", 0, 168, "0,1,2,4,5,6"},
	{"foo bar", "x/barfoo", 0, 140, "2,3,4,5,6,7"},
	{"foobar", "x/foobar", 0, 196767, "2,3,4,5,6,7"},
	{"foobar", "x/foo bar", 0, 65689, "2,3,4,6,7,8"},
	{"foobar", "foo/bar", 0, 156, "0,1,2,4,5,6"},
	{"fooba", "x/foo bar", 0, 65665, "2,3,4,6,7"},
	{"fooba", "foo/bar", 0, 131, "0,1,2,4,5"},
	{"x/fo", "x/barfoo", 0, 90, "0,1,5,6"},
	{"bar", "foo/bar", 0, 196692, "4,5,6"},
	{"bar", "x/foobar", 0, 65592, "5,6,7"},
	{"\\^main", "x/^main", 0, 128, "2,3,4,5,6"},
	{" main", "x/main", 0, 196717, "2,3,4,5"},
	{"main ", "x/ma in", 0, 65640, "2,3,5,6"},
	{"ma\\ in", "x/ma in", 0, 134, "2,3,4,5,6"},
	{"mA", "x/main", 0, 65595, "2,3"},
	{"target", "deep/target", 0, 196767, "5,6,7,8,9,10"},
	{"target", "target/x10", 0, 159, "0,1,2,3,4,5"},
};

/* "1,2,3" for the positions. */
static void
fz_fmt(char *out, size_t cap, const uint32_t *v, size_t n)
{
	size_t off = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && off < cap; i++)
		off += (size_t)snprintf(out + off, cap - off, i ? ",%u" : "%u", v[i]);
}

/* Every observed (query, path) pair scores and highlights exactly as upstream. */
static void
test_upstream_table(void **state)
{
	struct fuzzy_matcher *m = fuzzy_matcher_new();
	uint32_t idx[FUZZY_PATH_MAX];
	char got[512];
	int bad = 0;

	for (size_t i = 0; i < sizeof(fz_cases) / sizeof(fz_cases[0]); i++) {
		const struct fz_case *c = &fz_cases[i];
		struct fuzzy_pattern p;
		size_t n = 0;
		assert_int_equal(fuzzy_pattern_parse(&p, c->query), 0);
		long s = fuzzy_score_path(m, &p, c->path, strlen(c->path), c->is_dir, idx, &n);
		fz_fmt(got, sizeof(got), idx, s >= 0 ? n : 0);
		if (s != c->score || (s >= 0 && strcmp(got, c->indices) != 0)) {
			print_message("case %zu %s | %s: got %ld [%s], want %ld [%s]\n", i,
				c->query, c->path, s, got, c->score, c->indices);
			bad++;
		}
		fuzzy_pattern_free(&p);
	}
	fuzzy_matcher_free(m);
	assert_int_equal(bad, 0);
}

/* An empty or blank query has no atom. */
static void
test_empty_query(void **state)
{
	struct fuzzy_pattern p;
	assert_int_equal(fuzzy_pattern_parse(&p, ""), -EINVAL);
	fuzzy_pattern_free(&p);
	assert_int_equal(fuzzy_pattern_parse(&p, "   "), -EINVAL);
	fuzzy_pattern_free(&p);
	assert_int_equal(fuzzy_pattern_parse(&p, "!"), -EINVAL);
	fuzzy_pattern_free(&p);
}

/* The optimal alignment beats the greedy one (nucleo's fzf-v2 behaviour). */
static void
test_optimal_alignment(void **state)
{
	struct fuzzy_matcher *m = fuzzy_matcher_new();
	struct fuzzy_pattern p;
	uint32_t idx[64];
	size_t n;
	char got[128];
	assert_int_equal(fuzzy_pattern_parse(&p, "fb"), 0);
	/* greedy would take the f of "fxx" and the b of "bar"; optimal takes "foo/bar" */
	long s = fuzzy_score_path(m, &p, "fxx/foo/bar", 11, 1, idx, &n);
	fz_fmt(got, sizeof(got), idx, n);
	assert_string_equal(got, "4,8");
	assert_true(s > 0);
	fuzzy_pattern_free(&p);
	fuzzy_matcher_free(m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_upstream_table),
		cmocka_unit_test(test_empty_query),
		cmocka_unit_test(test_optimal_alignment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
