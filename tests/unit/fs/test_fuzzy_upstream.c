/*
 * Our search against upstream's answers (tests/fixtures/fs/fuzzy_upstream.json, written by
 * scripts/fuzzy_compare.py from codex app-server 0.169 on generated trees): each tree is made
 * again here, every query is run through the index, and the answers must agree:
 *   - the same number of files and the same sequence of scores;
 *   - the same path, indices and match_type at every place whose score is above the last
 *     one upstream kept (a tie group cut by the limit of 50 holds upstream's walk-order pick,
 *     which a parallel walk does not fix; ours keeps the smallest paths).
 * Run from the repository root (as make test does).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>

#include "fs_test_util.h"
#include "fs/search/search.h"

#define FIXTURE "tests/fixtures/fs/fuzzy_upstream.json"

/* Make a tree from its fixture description under a fresh folder (heap path). */
static char *
make_tree(const json_t *tree)
{
	char *d = tu_mkdtemp();
	const char *rel;
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(tree, "dirs"), i, v)
	{
		char *p = tu_path(d, "%s", json_string_value(v));
		tu_mkdirs(p);
		free(p);
	}
	json_object_foreach(json_object_get(tree, "files"), rel, v)
	{
		char *p = tu_path(d, "%s", rel);
		tu_write(p, json_string_value(v));
		free(p);
	}
	return d;
}

/* Our hit i as upstream writes it. */
static int
same_hit(const struct search_hit *h, const json_t *u)
{
	json_t *ind = json_object_get(u, "indices"), *v;
	size_t i;

	if (strcmp(h->path, json_string_value(json_object_get(u, "path"))) != 0 ||
		strcmp(h->is_dir ? "directory" : "file",
			json_string_value(json_object_get(u, "match_type"))) != 0 ||
		json_array_size(ind) != h->nindices)
		return 0;
	json_array_foreach(ind, i, v)
	{
		if ((json_int_t)h->indices[i] != json_integer_value(v))
			return 0;
	}
	return 1;
}

/* One query on one tree; returns the number of places compared exactly. */
static size_t
check_query(struct search_index *ix, const char *tree, const char *query, const json_t *want)
{
	struct search_result res;
	size_t n = json_array_size(want), exact = 0;
	json_int_t cut = -1;

	search_index_query(ix, query, NULL, &res);
	if (res.n != n)
		fail_msg("%s %s: %zu files, upstream %zu", tree, query, res.n, n);
	if (n == SEARCH_LIMIT)
		cut = json_integer_value(json_object_get(json_array_get(want, n - 1), "score"));
	for (size_t i = 0; i < n; i++) {
		const json_t *u = json_array_get(want, i);
		json_int_t us = json_integer_value(json_object_get(u, "score"));
		if ((json_int_t)res.hits[i].score != us)
			fail_msg("%s %s #%zu: score %u (%s), upstream %lld (%s)", tree, query, i,
				res.hits[i].score, res.hits[i].path, (long long)us,
				json_string_value(json_object_get(u, "path")));
		if (us == cut)
			continue;
		if (!same_hit(&res.hits[i], u))
			fail_msg("%s %s #%zu: %s, upstream %s", tree, query, i, res.hits[i].path,
				json_string_value(json_object_get(u, "path")));
		exact++;
	}
	search_result_free(&res);
	return exact;
}

static void
test_upstream_answers(void **state)
{
	json_error_t je;
	json_t *fx = json_load_file(FIXTURE, 0, &je), *tree, *queries, *want;
	const char *name, *query;
	size_t nq = 0, exact = 0;

	if (fx == NULL)
		fail_msg("%s: %s", FIXTURE, je.text);
	json_object_foreach(json_object_get(fx, "trees"), name, tree)
	{
		char *d = make_tree(tree);
		const char *roots[] = {d};
		struct search_index *ix = NULL;
		assert_int_equal(search_index_build(&ix, roots, 1, NULL), 0);
		queries = json_object_get(json_object_get(fx, "answers"), name);
		json_object_foreach(queries, query, want)
		{
			exact += check_query(ix, name, query, want);
			nq++;
		}
		search_index_free(ix);
		tu_rmtree(d);
		free(d);
	}
	print_message("%zu queries agree with upstream (%zu places compared exactly)\n", nq, exact);
	assert_true(nq >= 50);
	json_decref(fx);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_upstream_answers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
