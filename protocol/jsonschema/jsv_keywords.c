/*
 * Compiling the keywords of one schema object into its node: each keyword's
 * shape is checked (a bad one fails with its location), subschemas are
 * compiled through jsv_compile_sub, properties are sorted for binary search,
 * and a node's flags say which groups of checks validation must run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsv_int.h"
#include "protocol/xmalloc.h"

/* Read a non-negative integer keyword (1.0 counts); 1 if present, 0 if absent, -1 if bad. */
static int
jsv_keywords_count(struct jsv_cctx *c, const json_t *schema, const char *key, size_t *out)
{
	const json_t *v = json_object_get(schema, key);
	double d;

	if (v == NULL)
		return 0;
	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		*out = (size_t)json_integer_value(v);
		return 1;
	}
	if (json_is_real(v) && (d = json_real_value(v)) >= 0 && d == floor(d) && d < 1e18) {
		*out = (size_t)d;
		return 1;
	}
	return jsv_compile_fail(c, "`%s` must be a non-negative integer", key);
}

/* Read a number keyword; 1 if present, 0 if absent, -1 if bad. */
static int
jsv_keywords_number(struct jsv_cctx *c, const json_t *schema, const char *key, long double *out)
{
	const json_t *v = json_object_get(schema, key);

	if (v == NULL)
		return 0;
	if (json_is_integer(v))
		*out = (long double)json_integer_value(v);
	else if (json_is_real(v))
		*out = json_real_value(v);
	else
		return jsv_compile_fail(c, "`%s` must be a number", key);
	return 1;
}

/* Compile the subschema under a keyword (object or boolean), or leave *out NULL if absent. */
static int
jsv_keywords_schema(struct jsv_cctx *c, struct jsv_node *n, const char *key, struct jsv_node **out)
{
	const json_t *v = json_object_get(n->json, key);

	if (v == NULL)
		return 0;
	if (!json_is_object(v) && !json_is_boolean(v))
		return jsv_compile_fail(c, "`%s` must be a schema (object or boolean)", key);
	*out = jsv_compile_sub(c, v, n->base, key);
	return *out == NULL ? -1 : 1;
}

/* Compile element i of a schema array. */
static int
jsv_keywords_list_item(
	struct jsv_cctx *c, const json_t *e, const char *base, size_t i, struct jsv_node **out)
{
	size_t old = jsv_compile_loc_push_index(c, i);

	if (!json_is_object(e) && !json_is_boolean(e))
		return jsv_compile_fail(c, "must be a schema (object or boolean)");
	if ((*out = jsv_compile_sub(c, e, base, NULL)) == NULL)
		return -1;
	jsv_compile_loc_pop(c, old);
	return 0;
}

/* Compile an array of subschemas (allOf/anyOf/oneOf). */
static int
jsv_keywords_list(struct jsv_cctx *c, struct jsv_node *n, const char *key, struct jsv_list *out)
{
	const json_t *v = json_object_get(n->json, key), *e;
	size_t i, old;

	if (v == NULL)
		return 0;
	if (!json_is_array(v) || json_array_size(v) == 0)
		return jsv_compile_fail(c, "`%s` must be a non-empty array of schemas", key);
	out->n = json_array_size(v);
	out->v = jsv_alloc(c->jsv, out->n * sizeof *out->v);
	old = jsv_compile_loc_push(c, key);
	json_array_foreach(v, i, e)
	{
		if (jsv_keywords_list_item(c, e, n->base, i, &out->v[i]) < 0)
			return -1;
	}
	jsv_compile_loc_pop(c, old);
	return 1;
}

/* Read an array of unique strings (required, dependencies' array form). */
static int
jsv_keywords_names(
	struct jsv_cctx *c, const json_t *v, const char *key, const char ***out, size_t *n)
{
	const json_t *e;
	size_t i, j;

	if (!json_is_array(v))
		return jsv_compile_fail(c, "`%s` must be an array of strings", key);
	*n = json_array_size(v);
	*out = jsv_alloc(c->jsv, (*n ? *n : 1) * sizeof **out);
	json_array_foreach(v, i, e)
	{
		if (!json_is_string(e))
			return jsv_compile_fail(c, "`%s` must be an array of strings", key);
		(*out)[i] = json_string_value(e);
		for (j = 0; j < i; j++) {
			if (strcmp((*out)[j], (*out)[i]) == 0)
				return jsv_compile_fail(c, "`%s` lists `%s` twice", key, (*out)[i]);
		}
	}
	return 1;
}

/* Parse `type` into a bitmask. */
static int
jsv_keywords_type(struct jsv_cctx *c, struct jsv_node *n, const json_t *v)
{
	static const struct {
		const char *name;
		uint8_t bits;
	} names[] = {
		{"null", JSV_T_NULL},
		{"boolean", JSV_T_BOOLEAN},
		{"integer", JSV_T_INTEGER},
		{"number", JSV_T_INTEGER | JSV_T_NUMBER},
		{"string", JSV_T_STRING},
		{"array", JSV_T_ARRAY},
		{"object", JSV_T_OBJECT},
	};
	const json_t *e = v;
	size_t i, j;

	if (json_is_string(v))
		e = v;
	else if (!json_is_array(v) || json_array_size(v) == 0)
		return jsv_compile_fail(c, "`type` must be a type name or an array of them");
	for (i = 0; json_is_string(v) ? i < 1 : i < json_array_size(v); i++) {
		if (json_is_array(v))
			e = json_array_get(v, i);
		for (j = 0; j < nitems(names); j++) {
			if (json_is_string(e) && strcmp(json_string_value(e), names[j].name) == 0)
				break;
		}
		if (j == nitems(names))
			return jsv_compile_fail(c, "`type` has an unknown type name");
		n->types |= names[j].bits;
	}
	n->flags |= JSV_F_TYPE;
	return 0;
}

/* Numeric keywords: bounds, multipleOf and integer formats. */
static int
jsv_keywords_numeric(struct jsv_cctx *c, struct jsv_node *n)
{
	static const struct {
		const char *name;
		enum jsv_format fmt;
	} formats[] = {
		{"int8", JSV_FMT_INT8},
		{"int16", JSV_FMT_INT16},
		{"int32", JSV_FMT_INT32},
		{"int64", JSV_FMT_INT64},
		{"uint8", JSV_FMT_UINT8},
		{"uint16", JSV_FMT_UINT16},
		{"uint32", JSV_FMT_UINT32},
		{"uint64", JSV_FMT_UINT64},
		{"uint", JSV_FMT_UINT64},
	};
	const json_t *fmt = json_object_get(n->json, "format");
	int r;
	size_t i;

	if ((r = jsv_keywords_number(c, n->json, "minimum", &n->minimum)) < 0)
		return -1;
	n->flags |= r ? JSV_F_MINIMUM : 0;
	if ((r = jsv_keywords_number(c, n->json, "maximum", &n->maximum)) < 0)
		return -1;
	n->flags |= r ? JSV_F_MAXIMUM : 0;
	if ((r = jsv_keywords_number(c, n->json, "exclusiveMinimum", &n->exminimum)) < 0)
		return -1;
	n->flags |= r ? JSV_F_EXMINIMUM : 0;
	if ((r = jsv_keywords_number(c, n->json, "exclusiveMaximum", &n->exmaximum)) < 0)
		return -1;
	n->flags |= r ? JSV_F_EXMAXIMUM : 0;
	if ((r = jsv_keywords_number(c, n->json, "multipleOf", &n->multiple_of)) < 0)
		return -1;
	if (r) {
		if (!(n->multiple_of > 0))
			return jsv_compile_fail(c, "`multipleOf` must be greater than 0");
		if (n->multiple_of == floorl(n->multiple_of) && n->multiple_of < 9e18L)
			n->multiple_of_int = (long long)n->multiple_of;
		n->flags |= JSV_F_MULTIPLEOF;
	}
	if (fmt != NULL && !json_is_string(fmt))
		return jsv_compile_fail(c, "`format` must be a string");
	for (i = 0; fmt != NULL && i < nitems(formats); i++) {
		if (strcmp(json_string_value(fmt), formats[i].name) == 0) {
			n->format = formats[i].fmt;
			n->flags |= JSV_F_FORMAT;
		}
	}
	return 0;
}

/* Compile a regex, turning its cause into one with our location. */
static int
jsv_keywords_regex_item(struct jsv_cctx *c, struct jsv_regex *rx, const char *source)
{
	char *why = NULL;

	if (jsv_regex_compile(c->jsv, rx, source, &why) == 0)
		return 0;
	jsv_compile_fail(c, "%s", why);
	free(why);
	return -1;
}

/* String keywords: minLength, maxLength, pattern. */
static int
jsv_keywords_string(struct jsv_cctx *c, struct jsv_node *n)
{
	const json_t *pat = json_object_get(n->json, "pattern");
	int r1, r2;

	if ((r1 = jsv_keywords_count(c, n->json, "minLength", &n->min_length)) < 0 ||
		(r2 = jsv_keywords_count(c, n->json, "maxLength", &n->max_length)) < 0)
		return -1;
	if (pat != NULL) {
		if (!json_is_string(pat))
			return jsv_compile_fail(c, "`pattern` must be a string");
		n->pattern = jsv_alloc(c->jsv, sizeof *n->pattern);
		if (jsv_keywords_regex_item(c, n->pattern, json_string_value(pat)) < 0)
			return -1;
	}
	if (r1 || r2 || pat != NULL)
		n->flags |= JSV_F_STRING;
	return 0;
}

/* Array keywords. */
static int
jsv_keywords_array(struct jsv_cctx *c, struct jsv_node *n)
{
	const json_t *items = json_object_get(n->json, "items"), *u, *e;
	int any = 0, r;
	size_t i, old;

	if (json_is_array(items)) {
		n->has_tuple = true;
		n->tuple.n = json_array_size(items);
		n->tuple.v = jsv_alloc(c->jsv, (n->tuple.n ? n->tuple.n : 1) * sizeof *n->tuple.v);
		old = jsv_compile_loc_push(c, "items");
		json_array_foreach(items, i, e)
		{
			if (jsv_keywords_list_item(c, e, n->base, i, &n->tuple.v[i]) < 0)
				return -1;
		}
		jsv_compile_loc_pop(c, old);
		any = 1;
	} else if ((r = jsv_keywords_schema(c, n, "items", &n->items)) != 0) {
		if (r < 0)
			return -1;
		any = 1;
	}
	if ((r = jsv_keywords_schema(c, n, "additionalItems", &n->additional_items)) < 0)
		return -1;
	any |= r;
	if ((r = jsv_keywords_schema(c, n, "contains", &n->contains)) < 0)
		return -1;
	any |= r;
	if ((r = jsv_keywords_count(c, n->json, "minItems", &n->min_items)) < 0)
		return -1;
	any |= r;
	if ((r = jsv_keywords_count(c, n->json, "maxItems", &n->max_items)) < 0)
		return -1;
	any |= r;
	if ((u = json_object_get(n->json, "uniqueItems")) != NULL) {
		if (!json_is_boolean(u))
			return jsv_compile_fail(c, "`uniqueItems` must be a boolean");
		n->unique_items = json_is_true(u);
		any |= n->unique_items;
	}
	if (any)
		n->flags |= JSV_F_ARRAY;
	return 0;
}

/* Order properties by name for bsearch. */
int
jsv_keywords_prop_cmp(const void *a, const void *b)
{
	return strcmp(((const struct jsv_prop *)a)->name, ((const struct jsv_prop *)b)->name);
}

/* properties and patternProperties. */
static int
jsv_keywords_props(struct jsv_cctx *c, struct jsv_node *n)
{
	const json_t *props = json_object_get(n->json, "properties");
	const json_t *pats = json_object_get(n->json, "patternProperties");
	const json_t *v;
	const char *k;
	size_t i = 0, old;

	if (props != NULL) {
		if (!json_is_object(props))
			return jsv_compile_fail(c, "`properties` must be an object of schemas");
		n->n_props = json_object_size(props);
		n->props = jsv_alloc(c->jsv, (n->n_props ? n->n_props : 1) * sizeof *n->props);
		old = jsv_compile_loc_push(c, "properties");
		json_object_foreach((json_t *)props, k, v)
		{
			if (!json_is_object(v) && !json_is_boolean(v)) {
				jsv_compile_loc_push(c, k);
				return jsv_compile_fail(c, "must be a schema (object or boolean)");
			}
			n->props[i].name = k;
			if ((n->props[i].schema = jsv_compile_sub(c, v, n->base, k)) == NULL)
				return -1;
			i++;
		}
		jsv_compile_loc_pop(c, old);
		qsort(n->props, n->n_props, sizeof *n->props, jsv_keywords_prop_cmp);
		n->flags |= JSV_F_OBJECT;
	}
	if (pats != NULL) {
		if (!json_is_object(pats))
			return jsv_compile_fail(
				c, "`patternProperties` must be an object of schemas");
		n->n_pattern_props = json_object_size(pats);
		n->pattern_props = jsv_alloc(c->jsv,
			(n->n_pattern_props ? n->n_pattern_props : 1) * sizeof *n->pattern_props);
		old = jsv_compile_loc_push(c, "patternProperties");
		i = 0;
		json_object_foreach((json_t *)pats, k, v)
		{
			if (!json_is_object(v) && !json_is_boolean(v)) {
				jsv_compile_loc_push(c, k);
				return jsv_compile_fail(c, "must be a schema (object or boolean)");
			}
			if (jsv_keywords_regex_item(c, &n->pattern_props[i], k) < 0)
				return -1;
			if ((n->pattern_props[i].schema = jsv_compile_sub(c, v, n->base, k)) ==
				NULL)
				return -1;
			i++;
		}
		jsv_compile_loc_pop(c, old);
		n->flags |= JSV_F_OBJECT;
	}
	return 0;
}

/* Object keywords. */
static int
jsv_keywords_object(struct jsv_cctx *c, struct jsv_node *n)
{
	const json_t *req = json_object_get(n->json, "required");
	const json_t *deps = json_object_get(n->json, "dependencies"), *v;
	const char *k;
	size_t i = 0, old;
	int any = 0, r;

	if (jsv_keywords_props(c, n) < 0)
		return -1;
	if (req != NULL) {
		if (jsv_keywords_names(c, req, "required", &n->required, &n->n_required) < 0)
			return -1;
		any = 1;
	}
	if ((r = jsv_keywords_schema(c, n, "additionalProperties", &n->additional_props)) < 0)
		return -1;
	any |= r;
	if ((r = jsv_keywords_schema(c, n, "propertyNames", &n->property_names)) < 0)
		return -1;
	any |= r;
	if ((r = jsv_keywords_count(c, n->json, "minProperties", &n->min_props)) < 0)
		return -1;
	any |= r;
	if ((r = jsv_keywords_count(c, n->json, "maxProperties", &n->max_props)) < 0)
		return -1;
	any |= r;
	if (deps != NULL) {
		if (!json_is_object(deps))
			return jsv_compile_fail(c, "`dependencies` must be an object");
		n->n_deps = json_object_size(deps);
		n->deps = jsv_alloc(c->jsv, (n->n_deps ? n->n_deps : 1) * sizeof *n->deps);
		old = jsv_compile_loc_push(c, "dependencies");
		json_object_foreach((json_t *)deps, k, v)
		{
			n->deps[i].name = k;
			if (json_is_array(v)) {
				if (jsv_keywords_names(c, v, k, &n->deps[i].required,
					    &n->deps[i].n_required) < 0)
					return -1;
			} else if (json_is_object(v) || json_is_boolean(v)) {
				if ((n->deps[i].schema = jsv_compile_sub(c, v, n->base, k)) == NULL)
					return -1;
			} else {
				jsv_compile_loc_push(c, k);
				return jsv_compile_fail(c, "must be an array of names or a schema");
			}
			i++;
		}
		jsv_compile_loc_pop(c, old);
		any = 1;
	}
	if (any)
		n->flags |= JSV_F_OBJECT;
	return 0;
}

/* Applicators: allOf anyOf oneOf not if/then/else. */
static int
jsv_keywords_apply(struct jsv_cctx *c, struct jsv_node *n)
{
	int any = 0, r;

	if ((r = jsv_keywords_list(c, n, "allOf", &n->all_of)) < 0)
		return -1;
	any |= r;
	if ((r = jsv_keywords_list(c, n, "anyOf", &n->any_of)) < 0)
		return -1;
	any |= r;
	if ((r = jsv_keywords_list(c, n, "oneOf", &n->one_of)) < 0)
		return -1;
	any |= r;
	if ((r = jsv_keywords_schema(c, n, "not", &n->not_schema)) < 0)
		return -1;
	any |= r;
	if ((r = jsv_keywords_schema(c, n, "if", &n->if_schema)) < 0)
		return -1;
	any |= r;
	if (jsv_keywords_schema(c, n, "then", &n->then_schema) < 0 ||
		jsv_keywords_schema(c, n, "else", &n->else_schema) < 0)
		return -1;
	if (any)
		n->flags |= JSV_F_APPLY;
	return 0;
}

enum {
	JSV_KW_NUMERIC = 1,
	JSV_KW_STRING = 2,
	JSV_KW_ARRAY = 4,
	JSV_KW_OBJECT = 8,
	JSV_KW_APPLY = 16,
	JSV_KW_OTHER = 32, /* type, enum, const, definitions */
};

/*
 * The groups of keywords a schema object has, from one pass over its keys (most have 1-3):
 * a group's function, which looks each of its keywords up, runs only when one is there.
 */
static unsigned
jsv_keywords_groups(const json_t *s)
{
	static const struct {
		const char *name;
		unsigned group;
	} kw[] = {
		{"type", JSV_KW_OTHER},
		{"enum", JSV_KW_OTHER},
		{"const", JSV_KW_OTHER},
		{"definitions", JSV_KW_OTHER},
		{"minimum", JSV_KW_NUMERIC},
		{"maximum", JSV_KW_NUMERIC},
		{"exclusiveMinimum", JSV_KW_NUMERIC},
		{"exclusiveMaximum", JSV_KW_NUMERIC},
		{"multipleOf", JSV_KW_NUMERIC},
		{"format", JSV_KW_NUMERIC},
		{"minLength", JSV_KW_STRING},
		{"maxLength", JSV_KW_STRING},
		{"pattern", JSV_KW_STRING},
		{"items", JSV_KW_ARRAY},
		{"additionalItems", JSV_KW_ARRAY},
		{"minItems", JSV_KW_ARRAY},
		{"maxItems", JSV_KW_ARRAY},
		{"uniqueItems", JSV_KW_ARRAY},
		{"contains", JSV_KW_ARRAY},
		{"properties", JSV_KW_OBJECT},
		{"patternProperties", JSV_KW_OBJECT},
		{"additionalProperties", JSV_KW_OBJECT},
		{"propertyNames", JSV_KW_OBJECT},
		{"required", JSV_KW_OBJECT},
		{"minProperties", JSV_KW_OBJECT},
		{"maxProperties", JSV_KW_OBJECT},
		{"dependencies", JSV_KW_OBJECT},
		{"allOf", JSV_KW_APPLY},
		{"anyOf", JSV_KW_APPLY},
		{"oneOf", JSV_KW_APPLY},
		{"not", JSV_KW_APPLY},
		{"if", JSV_KW_APPLY},
		{"then", JSV_KW_APPLY},
		{"else", JSV_KW_APPLY},
	};
	unsigned groups = 0;
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)s, k, v)
	{
		for (size_t i = 0; i < nitems(kw); i++)
			if (strcmp(k, kw[i].name) == 0) {
				groups |= kw[i].group;
				break;
			}
	}
	return groups;
}

/* Compile every keyword of a schema object that has no $ref. */
int
jsv_keywords_compile(struct jsv_cctx *c, struct jsv_node *n)
{
	const json_t *s = n->json, *v, *defs;
	const char *k;
	size_t old;
	unsigned groups = jsv_keywords_groups(s);

	if (groups == 0)
		return 0;
	if ((v = json_object_get(s, "type")) != NULL && jsv_keywords_type(c, n, v) < 0)
		return -1;
	if ((v = json_object_get(s, "enum")) != NULL) {
		if (!json_is_array(v)) {
			jsv_compile_fail(c, "`enum` must be an array");
			return -1;
		}
		n->enum_values = v;
		n->flags |= JSV_F_ENUM;
	}
	if ((v = json_object_get(s, "const")) != NULL) {
		n->const_value = v;
		n->flags |= JSV_F_CONST;
	}
	if (((groups & JSV_KW_NUMERIC) && jsv_keywords_numeric(c, n) < 0) ||
		((groups & JSV_KW_STRING) && jsv_keywords_string(c, n) < 0) ||
		((groups & JSV_KW_ARRAY) && jsv_keywords_array(c, n) < 0) ||
		((groups & JSV_KW_OBJECT) && jsv_keywords_object(c, n) < 0) ||
		((groups & JSV_KW_APPLY) && jsv_keywords_apply(c, n) < 0))
		return -1;
	/* Definitions are compiled (and so checked) even when nothing refers to them. */
	if ((defs = json_object_get(s, "definitions")) != NULL) {
		if (!json_is_object(defs)) {
			jsv_compile_fail(c, "`definitions` must be an object of schemas");
			return -1;
		}
		old = jsv_compile_loc_push(c, "definitions");
		json_object_foreach((json_t *)defs, k, v)
		{
			if (!json_is_object(v) && !json_is_boolean(v)) {
				jsv_compile_loc_push(c, k);
				jsv_compile_fail(c, "must be a schema (object or boolean)");
				return -1;
			}
			if (jsv_compile_sub(c, v, n->base, k) == NULL)
				return -1;
		}
		jsv_compile_loc_pop(c, old);
	}
	return 0;
}
