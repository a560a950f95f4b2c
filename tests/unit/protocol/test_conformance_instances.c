/*
 * Conformance of our schema with the upstream reference (conformance_util.h), by instances: a
 * table of valid and invalid instances (tests/fixtures/conformance_instances.json, run from
 * the repository root) is judged the same by four schemas: our definitions, our per-message
 * files, upstream's definitions and upstream's per-message files, and each verdict is the
 * one expected. Every params and result type we implement has enough instances of each.
 */
#include "conformance_util.h"

/* Judge one instance with every schema that describes `type`; fail on any wrong verdict. */
static void
judge(const char *type, const json_t *v, int valid)
{
	static const char *const judges_all[4] = {"our definitions", "upstream definitions",
		"our message file", "upstream message file"};
	static const char *const judges_ours[4] = {"our definitions", "our message file"};
	const char *const *judges = judges_all;
	const struct jsv_node *nodes[4];
	const struct pmethod *m;
	struct jsv_error err;
	const char *where;
	char *ptr, *rel, *text;
	size_t nj = 2;
	int got;

	ptr = xasprintf("#/definitions/%s", type);
	nodes[0] = jsv_lookup(g.ours, ptr);
	free(ptr);
	if (nodes[0] == NULL)
		fail_msg("%s: instances for a type we do not define", type);
	m = message_of(type);
	if (m != NULL && is_experimental(m->method)) {
		/* ours only: our definition and our message file */
		rel = message_path(m->dir, type);
		nodes[1] = file_node(1, rel);
		free(rel);
		judges = judges_ours;
		nj = 2;
		goto judge;
	}
	if (ref_def(type, &where) == NULL)
		fail_msg("%s: not upstream", type);
	ptr = xasprintf("%s%s", where, type);
	nodes[1] = jsv_lookup(g.ref, ptr);
	free(ptr);
	assert_non_null(nodes[1]);
	if (m != NULL) {
		rel = message_path(m->dir, type);
		nodes[2] = file_node(1, rel);
		nodes[3] = file_node(0, rel);
		free(rel);
		nj = 4;
	}
judge:
	for (size_t j = 0; j < nj; j++) {
		memset(&err, 0, sizeof err);
		got = jsv_validate(nodes[j], v, &err) == 0;
		if (got == valid)
			continue;
		text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		fail_msg("%s %s: %s says %s, expected %s%s%s", type, text, judges[j],
			got ? "valid" : "invalid", valid ? "valid" : "invalid", got ? "" : " -- ",
			got ? "" : err.message);
	}
}

static void
test_instances(void **state)
{
	const char *type;
	json_t *sets, *v;
	size_t count = 0, i;

	if (g.skip)
		CONF_SKIP(__FILE__ ": a test comparing with upstream's schema");
	json_object_foreach(g.insts, type, sets)
	{
		if (type[0] == '_')
			continue;
		json_array_foreach(json_object_get(sets, "valid"), i, v)
		{
			judge(type, v, 1);
			count++;
		}
		json_array_foreach(json_object_get(sets, "invalid"), i, v)
		{
			judge(type, v, 0);
			count++;
		}
	}
	print_message("%zu instances judged alike by every schema\n", count);
}

/* The number of instances of a type with a verdict. */
static size_t
inst_count(const char *type, int valid)
{
	return json_array_size(
		json_object_get(json_object_get(g.insts, type), valid ? "valid" : "invalid"));
}

static void
test_instance_coverage(void **state)
{
	const struct pmethod *m;
	const char *t;

	/* Every params and result type we implement has enough instances of each verdict. */
	for (m = pmethods; m->method != NULL; m++) {
		for (int k = 0; k < 2; k++) {
			t = k == 0 ? m->params : m->result;
			if (t == NULL)
				continue;
			if (inst_count(t, 1) < 3 || inst_count(t, 0) < 5)
				fail_msg(
					"%s (%s) has %zu valid and %zu invalid instances; want 3 and 5",
					t, m->method, inst_count(t, 1), inst_count(t, 0));
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_instances),
		cmocka_unit_test(test_instance_coverage),
	};

	return cmocka_run_group_tests(tests, conformance_setup, conformance_teardown);
}
