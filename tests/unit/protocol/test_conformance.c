/*
 * Conformance of our protocol tables (protocol/defs/defs_*.c, defs.c) with the upstream
 * reference schema (conformance_util.h says where it is found):
 *   - every method exists upstream in the same bundle with the same params type, and every
 *     params and result type has its upstream per-message file;
 *   - every definition has the same shape as upstream's same-named one: property names,
 *     required lists, enum values, nullability, types, formats and defaults (documentation
 *     and titles aside), and the comparison is shown to catch each kind of drift.
 * The instances judged by both sides are test_conformance_instances.c.
 */
#include "conformance_util.h"

/*
 * Definitions whose shape may differ from upstream's on purpose: name and reason. None today;
 * an entry here must say why the difference is deliberate.
 */
static const char *const shape_exceptions[][2] = {
	{"FuzzyFileSearchSessionStartParams", "experimental upstream: not in its generated schema"},
	{"FuzzyFileSearchSessionUpdateParams",
		"experimental upstream: not in its generated schema"},
	{"FuzzyFileSearchSessionStopParams", "experimental upstream: not in its generated schema"},
	/* upstream sends these experimental members to every client, capability or not */
	{"ThreadStartResponse", "experimental members upstream always sends (issue 23)"},
	{"ThreadResumeResponse", "experimental members upstream always sends (issue 23)"},
	{"ThreadForkResponse", "experimental members upstream always sends (issue 23)"},
	/* experimental params members real clients send (experimentalApi), gated by rpc_gate */
	{"ThreadStartParams", "experimental member `permissions` (issue 23)"},
	{"ThreadResumeParams", "experimental member `permissions` (issue 23)"},
	{"ThreadForkParams", "experimental member `permissions` (issue 23)"},
	{"TurnStartParams", "experimental members `permissions`, `collaborationMode` (issue 23)"},
	{"CollaborationModeListParams", "experimental upstream: not in its stable schema"},
	{"CollaborationModeListResponse", "experimental upstream: not in its stable schema"},
	{"CollaborationModeMask", "experimental upstream: not in its stable schema"},
	/* lists we only ever answer empty: their items' trees are not described (defs_startup.c) */
	{"HooksListEntry", "hooks always empty: we run no hooks"},
	{"AppsListResponse", "data always empty: apps need a ChatGPT login"},
	{"PluginListResponse", "marketplaces always empty: they need a ChatGPT login"},
	{NULL, NULL},
};

static void
test_methods_match_reference(void **state)
{
	static const char *const bundles[] = {[PM_REQUEST] = "ClientRequest.json",
		[PM_NOTIFICATION] = "ServerNotification.json",
		[PM_SERVER_REQUEST] = "ServerRequest.json",
		[PM_CLIENT_NOTIFICATION] = "ClientNotification.json"};
	const struct pmethod *m;
	const char *ref, *slash, *where;
	json_t *doc, *b, *found;
	struct stat st;
	size_t i;
	char *path;

	if (g.skip)
		CONF_SKIP(__FILE__ ": a test comparing with upstream's schema");
	char *rel;

	for (m = pmethods; m->method != NULL; m++) {
		if (is_experimental(m->method)) {
			/* nothing upstream to compare with; our tree must still have its files */
			rel = message_path(m->dir, m->params);

			if (json_object_get(g.files, rel) == NULL)
				fail_msg("%s: our schema tree has no %s", m->method, rel);
			free(rel);
			continue;
		}
		path = xasprintf("%s/%s", g.dir, bundles[m->kind]);
		doc = json_load_file(path, 0, NULL);
		assert_non_null(doc);
		found = NULL;
		json_array_foreach(json_object_get(doc, "oneOf"), i, b)
		{
			json_t *e = json_object_get(
				json_object_get(json_object_get(b, "properties"), "method"),
				"enum");

			if (strcmp(json_string_value(json_array_get(e, 0)), m->method) == 0)
				found = b;
		}
		if (found == NULL)
			fail_msg("%s is not in upstream's %s", m->method, bundles[m->kind]);
		ref = json_string_value(json_object_get(
			json_object_get(json_object_get(found, "properties"), "params"), "$ref"));
		if (m->params == NULL) {
			if (ref != NULL)
				fail_msg(
					"%s: upstream has params %s, we have none", m->method, ref);
		} else {
			slash = ref != NULL ? strrchr(ref, '/') : NULL;
			if (slash == NULL || strcmp(slash + 1, m->params) != 0)
				fail_msg("%s: upstream params %s, ours %s", m->method,
					ref != NULL ? ref : "(none)", m->params);
		}
		json_decref(doc);
		free(path);
		/* Each params and result type has its upstream per-message file and definition. */
		for (int k = 0; k < 2; k++) {
			const char *t = k == 0 ? m->params : m->result;

			if (t == NULL || m->kind == PM_CLIENT_NOTIFICATION)
				continue;
			rel = message_path(m->dir, t);
			path = xasprintf("%s/%s", g.dir, rel);
			if (stat(path, &st) != 0)
				fail_msg("%s: upstream has no %s", m->method, rel);
			free(path);
			if (ref_def(t, &where) == NULL)
				fail_msg("%s: upstream bundle has no definition %s", m->method, t);
			path = rel;
			if (json_object_get(g.files, path) == NULL)
				fail_msg("%s: our schema tree has no %s", m->method, path);
			free(path);
		}
	}
}

/* The last segment of a $ref. */
static const char *
ref_name(const char *ref)
{
	const char *s = strrchr(ref, '/');

	return s != NULL ? s + 1 : ref;
}

static json_t *shape(const json_t *s);

/* qsort order of two heap strings. */
static int
cmp_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Shapes of a list of subschemas, sorted so branch order does not matter. */
static json_t *
shape_list(const json_t *list)
{
	json_t *out = json_array(), *v;
	char **texts;
	size_t i, n = json_array_size(list);

	texts = xcalloc(n + 1, sizeof *texts);
	json_array_foreach(list, i, v)
	{
		json_t *sh = shape(v);

		texts[i] = json_dumps(sh, JSON_ENCODE_ANY | JSON_SORT_KEYS | JSON_COMPACT);
		json_decref(sh);
	}
	qsort(texts, n, sizeof *texts, cmp_text);
	for (i = 0; i < n; i++) {
		json_array_append_new(out, json_loads(texts[i], JSON_DECODE_ANY, NULL));
		free(texts[i]);
	}
	free(texts);
	return out;
}

/* A sorted copy of an array of scalars (enum values, required names, types). */
static json_t *
sorted(const json_t *a)
{
	return shape_list(a);
}

/* Merge the keys of `from` (stolen) into `into`. */
static void
merge(json_t *into, json_t *from)
{
	if (json_is_object(from))
		json_object_update(into, from);
	else
		json_object_set(into, "any", json_true());
	json_decref(from);
}

/* True for a branch that is just {"type":"null"}. */
static int
is_null_schema(const json_t *s)
{
	return json_object_size(s) == 1 && json_is_string(json_object_get(s, "type")) &&
		strcmp(json_string_value(json_object_get(s, "type")), "null") == 0;
}

/*
 * A normal form of a schema, for comparison: documentation and titles dropped, allOf
 * wrappers of one reference unwrapped, "T or null" spelled as nullable:true whether written
 * as a type list or as anyOf with null, one-value enum branches gathered into one enum,
 * $refs reduced to the name they point at, numbers compared as reals.
 */
static json_t *
shape(const json_t *s)
{
	static const char *const ignored[] = {
		"description", "title", "$schema", "definitions", "examples", NULL};
	json_t *out, *v, *types, *t, *one, *b;
	const char *k;
	size_t i;
	int enums;

	if (json_is_true(s))
		return json_string("any");
	if (!json_is_object(s))
		return json_deep_copy(s);
	out = json_object();
	json_object_foreach((json_t *)s, k, v)
	{
		for (i = 0; ignored[i] != NULL && strcmp(k, ignored[i]) != 0; i++)
			;
		if (ignored[i] != NULL)
			continue;
		if (strcmp(k, "$ref") == 0) {
			json_object_set_new(
				out, "ref", json_string(ref_name(json_string_value(v))));
		} else if (strcmp(k, "type") == 0) {
			types = json_array();
			if (json_is_string(v))
				json_array_append(types, v);
			else
				json_array_extend(types, v);
			one = json_array();
			json_array_foreach(types, i, t)
			{
				if (strcmp(json_string_value(t), "null") == 0)
					json_object_set_new(out, "nullable", json_true());
				else
					json_array_append(one, t);
			}
			json_decref(types);
			types = one;
			json_object_set_new(out, "type", sorted(types));
			json_decref(types);
		} else if (strcmp(k, "anyOf") == 0 && json_array_size(v) == 2 &&
			(is_null_schema(json_array_get(v, 0)) ||
				is_null_schema(json_array_get(v, 1)))) {
			merge(out,
				shape(json_array_get(
					v, is_null_schema(json_array_get(v, 0)) ? 1 : 0)));
			json_object_set_new(out, "nullable", json_true());
		} else if (strcmp(k, "allOf") == 0 && json_array_size(v) == 1) {
			merge(out, shape(json_array_get(v, 0)));
		} else if (strcmp(k, "oneOf") == 0) {
			/*
			 * Documented enums are oneOf of string enums (one value each, or a group of
			 * undocumented values): the same set of values.
			 */
			enums = 1;
			one = json_array();
			json_array_foreach(v, i, b)
			{
				if (json_array_size(json_object_get(b, "enum")) == 0 ||
					json_object_get(b, "properties") != NULL)
					enums = 0;
				else
					json_array_extend(one, json_object_get(b, "enum"));
			}
			if (enums) {
				json_object_set_new(out, "enum", sorted(one));
				json_object_set_new(out, "type", json_pack("[s]", "string"));
			} else
				json_object_set_new(out, "oneOf", shape_list(v));
			json_decref(one);
		} else if (strcmp(k, "anyOf") == 0 || strcmp(k, "allOf") == 0) {
			json_object_set_new(out, k, shape_list(v));
		} else if (strcmp(k, "enum") == 0 || strcmp(k, "required") == 0) {
			json_object_set_new(out, k, sorted(v));
		} else if (strcmp(k, "properties") == 0) {
			json_t *props = json_object(), *pv;
			const char *pk;

			json_object_foreach(v, pk, pv)
			{
				json_object_set_new(props, pk, shape(pv));
			}
			json_object_set_new(out, k, props);
		} else if (strcmp(k, "items") == 0 || strcmp(k, "additionalProperties") == 0) {
			json_object_set_new(out, k, shape(v));
		} else if (json_is_number(v)) {
			json_object_set_new(out, k, json_real(json_number_value(v)));
		} else {
			json_object_set(out, k, v);
		}
	}
	if (json_object_size(out) == 0) {
		json_decref(out);
		return json_string("any");
	}
	return out;
}

/* Append to *diffs every place where a and b differ, as "path: ours X, upstream Y". */
static void
shape_diff(const json_t *a, const json_t *b, const char *path, char **diffs)
{
	char *sa, *sb, *sub, *old;
	const char *k;
	json_t *v;

	if (json_is_object(a) && json_is_object(b)) {
		json_object_foreach((json_t *)a, k, v)
		{
			sub = xasprintf("%s/%s", path, k);
			shape_diff(v, json_object_get(b, k), sub, diffs);
			free(sub);
		}
		json_object_foreach((json_t *)b, k, v)
		{
			if (json_object_get(a, k) != NULL)
				continue;
			sub = xasprintf("%s/%s", path, k);
			shape_diff(NULL, v, sub, diffs);
			free(sub);
		}
		return;
	}
	if (a != NULL && b != NULL && json_equal((json_t *)a, (json_t *)b))
		return;
	sa = a != NULL ? json_dumps(a, JSON_ENCODE_ANY | JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	sb = b != NULL ? json_dumps(b, JSON_ENCODE_ANY | JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	old = *diffs;
	*diffs = xasprintf("%s  %s: ours %s, upstream %s\n", old != NULL ? old : "", path,
		sa != NULL ? sa : "(absent)", sb != NULL ? sb : "(absent)");
	free(old);
	free(sa);
	free(sb);
}

/* True when a definition's differences are listed as deliberate. */
static int
shape_excepted(const char *name)
{
	for (size_t i = 0; shape_exceptions[i][0] != NULL; i++)
		if (strcmp(shape_exceptions[i][0], name) == 0)
			return 1;
	return 0;
}

static void
test_definitions_match_reference(void **state)
{
	json_t *ours, *d, *theirs, *sa, *sb;
	char *cause = NULL, *diffs = NULL, *all = NULL, *old;
	const char *name, *where;
	size_t n = 0;

	if (g.skip)
		CONF_SKIP(__FILE__ ": a test comparing with upstream's schema");
	assert_non_null(ours = schema_definitions(&cause));
	json_object_foreach(ours, name, d)
	{
		n++;
		if ((theirs = ref_def(name, &where)) == NULL) {
			if (!shape_excepted(name))
				fail_msg("%s: no definition of that name upstream", name);
			continue;
		}
		sa = shape(d);
		sb = shape(theirs);
		shape_diff(sa, sb, name, &diffs);
		/* A name kept both at the top level and under v2 must match both. */
		if (strcmp(where, "#/definitions/v2/") == 0 &&
			(theirs = json_object_get(
				 json_object_get(g.ref_doc, "definitions"), name)) != NULL) {
			json_decref(sb);
			sb = shape(theirs);
			shape_diff(sa, sb, name, &diffs);
		}
		if (diffs != NULL && !shape_excepted(name)) {
			old = all;
			all = xasprintf("%s%s", old != NULL ? old : "", diffs);
			free(old);
		}
		free(diffs);
		diffs = NULL;
		json_decref(sa);
		json_decref(sb);
	}
	print_message("compared %zu definitions with upstream's\n", n);
	if (all != NULL)
		fail_msg("definitions differ from upstream:\n%s", all);
	json_decref(ours);
}

/* Apply a mutation to a deep copy of our definition `name` and count the differences. */
static int
mutated_diffs(const char *name, void (*mutate)(json_t *))
{
	json_t *defs = json_object_get(g.ref_doc, "definitions"), *theirs, *copy, *sa, *sb;
	char *cause = NULL, *diffs = NULL, *p;
	json_t *ours = schema_definitions(&cause);
	int n = 0;

	theirs = json_object_get(json_object_get(defs, "v2"), name);
	if (theirs == NULL)
		theirs = json_object_get(defs, name);
	copy = json_deep_copy(json_object_get(ours, name));
	mutate(copy);
	sa = shape(copy);
	sb = shape(theirs);
	shape_diff(sa, sb, name, &diffs);
	for (p = diffs; p != NULL && (p = strchr(p, '\n')) != NULL; p++)
		n++;
	free(diffs);
	json_decref(sa);
	json_decref(sb);
	json_decref(copy);
	json_decref(ours);
	return n;
}

/* Mutation: none (the baseline must show no difference). */
static void
mut_none(json_t *d)
{
}

/* Mutation: forget a required field. */
static void
mut_drop_required(json_t *d)
{
	json_array_remove(json_object_get(d, "required"), 0);
}

/* Mutation: misspell a field name. */
static void
mut_rename_field(json_t *d)
{
	json_t *props = json_object_get(d, "properties");

	json_object_set(props, "procesId", json_object_get(props, "processId"));
	json_object_del(props, "processId");
}

/* Mutation: a nullable primitive becomes non-nullable. */
static void
mut_not_nullable(json_t *d)
{
	/* "cwd": {"type": ["string", "null"]} -> {"type": "string"} */
	json_object_set_new(json_object_get(json_object_get(d, "properties"), "cwd"), "type",
		json_string("string"));
}

/* Mutation: a nullable reference becomes non-nullable. */
static void
mut_ref_not_nullable(json_t *d)
{
	/* "size": anyOf [$ref, null] -> $ref */
	json_object_set_new(json_object_get(d, "properties"), "size",
		json_pack("{s:s}", "$ref", "#/definitions/CommandExecTerminalSize"));
}

/* Mutation: change an enum value. */
static void
mut_enum_value(json_t *d)
{
	json_array_set_new(json_object_get(d, "enum"), 1, json_string("enable"));
}

/* Mutation: change a value of a documented (oneOf) enum. */
static void
mut_doc_enum_value(json_t *d)
{
	json_array_set_new(json_object_get(json_array_get(json_object_get(d, "oneOf"), 1), "enum"),
		0, json_string("err"));
}

/* Mutation: drop a field of one union variant. */
static void
mut_variant_field(json_t *d)
{
	json_object_del(
		json_object_get(json_array_get(json_object_get(d, "oneOf"), 3), "properties"),
		"excludeSlashTmp");
}

/* Mutation: reverse the union variants (must not count). */
static void
mut_variant_order(json_t *d)
{
	/* Branch order is not meaning: reversing it must not count as a difference. */
	json_t *one = json_object_get(d, "oneOf"), *rev = json_array();
	size_t i;

	for (i = json_array_size(one); i-- > 0;)
		json_array_append(rev, json_array_get(one, i));
	json_object_set_new(d, "oneOf", rev);
}

/* Mutation: change an integer format. */
static void
mut_format(json_t *d)
{
	json_object_set_new(json_object_get(json_object_get(d, "properties"), "rows"), "format",
		json_string("uint32"));
}

static void
test_shape_detects_differences(void **state)
{
	if (g.skip)
		CONF_SKIP(__FILE__ ": a test comparing with upstream's schema");
	/* The comparison is not vacuous: each kind of drift is reported. */
	assert_int_equal(mutated_diffs("CommandExecParams", mut_none), 0);
	assert_true(mutated_diffs("CommandExecParams", mut_drop_required) > 0);
	assert_true(mutated_diffs("CommandExecTerminateParams", mut_rename_field) > 0);
	assert_true(mutated_diffs("CommandExecParams", mut_not_nullable) > 0);
	assert_true(mutated_diffs("CommandExecParams", mut_ref_not_nullable) > 0);
	assert_true(mutated_diffs("NetworkAccess", mut_enum_value) > 0);
	assert_true(mutated_diffs("CommandExecOutputStream", mut_doc_enum_value) > 0);
	assert_true(mutated_diffs("SandboxPolicy", mut_variant_field) > 0);
	assert_int_equal(mutated_diffs("SandboxPolicy", mut_variant_order), 0);
	assert_true(mutated_diffs("CommandExecTerminalSize", mut_format) > 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_methods_match_reference),
		cmocka_unit_test(test_definitions_match_reference),
		cmocka_unit_test(test_shape_detects_differences),
	};

	return cmocka_run_group_tests(tests, conformance_setup, conformance_teardown);
}
