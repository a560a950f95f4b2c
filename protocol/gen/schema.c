/*
 * JSON Schema (draft-07) from the protocol tables. The shapes follow what upstream's generator
 * emits, so a message valid for one schema is valid for the other: optional fields are simply
 * not required, nullable ones add "null" to their type (or anyOf [T, null] for references),
 * a reference carrying a description or default is wrapped in allOf, enums with documented
 * values become oneOf of one-value enums, tagged unions are oneOf of titled objects.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/defs/defs.h"
#include "protocol/defs/type_expr.h"
#include "protocol/xmalloc.h"
#include "schema.h"

/* Schema of a primitive type. */
static json_t *
schema_prim(const char *name)
{
	if (strcmp(name, "any") == 0)
		return json_true();
	if (strcmp(name, "string") == 0 || strcmp(name, "boolean") == 0)
		return json_pack("{s:s}", "type", name);
	if (strcmp(name, "number") == 0)
		return json_pack("{s:s, s:s}", "format", "double", "type", "number");
	if (name[0] == 'u')
		return json_pack(
			"{s:s, s:i, s:s}", "format", name, "minimum", 0, "type", "integer");
	return json_pack("{s:s, s:s}", "format", name, "type", "integer");
}

/* Make s also accept null, the way upstream writes Option<T>. */
static json_t *
schema_nullable(json_t *s)
{
	json_t *type;

	if (json_is_true(s))
		return s;
	type = json_object_get(s, "type");
	if (json_is_string(type)) {
		json_object_set_new(s, "type", json_pack("[O, s]", type, "null"));
		return s;
	}
	if (json_is_array(type)) {
		json_array_append_new(type, json_string("null"));
		return s;
	}
	return json_pack("{s:[o, {s:s}]}", "anyOf", s, "type", "null");
}

static json_t *
schema_tree(const struct type_expr *t)
{
	switch (t->kind) {
	case TX_PRIM:
		return schema_prim(t->name);
	case TX_REF:
		return json_pack("{s:s+}", "$ref", "#/definitions/", t->name);
	case TX_ARRAY:
		return json_pack("{s:o, s:s}", "items", schema_tree(t->a[0]), "type", "array");
	case TX_MAP:
		return json_pack("{s:o, s:s}", "additionalProperties", schema_tree(t->a[0]), "type",
			"object");
	case TX_NULL:
		return schema_nullable(schema_tree(t->a[0]));
	case TX_OR:
		return json_pack("{s:[o, o]}", "anyOf", schema_tree(t->a[0]), schema_tree(t->a[1]));
	}
	return NULL;
}

/* JSON Schema for one type expression; NULL with *cause on a malformed expression. */
json_t *
schema_type(const char *expr, char **cause)
{
	struct type_expr *t = type_expr_parse(expr, cause);
	json_t *s;

	if (t == NULL)
		return NULL;
	s = schema_tree(t);
	type_expr_free(t);
	return s;
}

/* Attach a description and a default to s, wrapping a bare $ref whose siblings would be ignored. */
static json_t *
schema_annotate(json_t *s, const char *doc, const char *dflt, char **cause)
{
	json_t *d = NULL;

	if (doc == NULL && dflt == NULL)
		return s;
	if (dflt != NULL && (d = json_loads(dflt, JSON_DECODE_ANY, NULL)) == NULL) {
		*cause = xasprintf("bad default `%s`", dflt);
		json_decref(s);
		return NULL;
	}
	if (json_is_true(s)) {
		json_decref(s);
		s = json_object();
	} else if (json_object_get(s, "$ref") != NULL)
		s = json_pack("{s:[o]}", "allOf", s);
	if (doc != NULL)
		json_object_set_new(s, "description", json_string(doc));
	if (d != NULL)
		json_object_set_new(s, "default", d);
	return s;
}

/* Fill properties/required of an object schema from a field table. */
static int
schema_fields(json_t *obj, const struct pfield *f, char **cause)
{
	json_t *props = json_object_get(obj, "properties");
	json_t *req = json_object_get(obj, "required");
	json_t *s;

	for (; f != NULL && f->name != NULL; f++) {
		if ((s = schema_type(f->type, cause)) == NULL)
			return -1;
		if ((s = schema_annotate(s, f->doc, f->dflt, cause)) == NULL)
			return -1;
		json_object_set_new(props, f->name, s);
		if (f->flags & PF_REQ)
			json_array_append_new(req, json_string(f->name));
	}
	return 0;
}

/* An object schema, dropping an empty "required" as upstream does. */
static json_t *
schema_object(const struct pfield *fields, const char *doc, char **cause)
{
	json_t *obj = json_pack("{s:{}, s:[], s:s}", "properties", "required", "type", "object");

	if (doc != NULL)
		json_object_set_new(obj, "description", json_string(doc));
	if (schema_fields(obj, fields, cause) != 0) {
		json_decref(obj);
		return NULL;
	}
	if (json_array_size(json_object_get(obj, "required")) == 0)
		json_object_del(obj, "required");
	if (json_object_size(json_object_get(obj, "properties")) == 0)
		json_object_del(obj, "properties");
	return obj;
}

/* "commandExec" + "Policy" -> "CommandExecPolicy": upstream's titles of union variants. */
static char *
schema_title(const char *a, const char *b)
{
	char *s = xasprintf("%s%s", a, b);

	s[0] = (char)toupper((unsigned char)s[0]);
	return s;
}

static json_t *
schema_union(const struct pdef *d, char **cause)
{
	json_t *one = json_array(), *v, *tag;
	const struct pvariant *pv;
	char *title, *ttitle;

	for (pv = d->variants; pv->tag != NULL; pv++) {
		if ((v = schema_object(pv->fields, pv->doc, cause)) == NULL) {
			json_decref(one);
			return NULL;
		}
		title = schema_title(pv->tag, d->name);
		ttitle = xasprintf("%sType", title);
		tag = json_pack(
			"{s:[s], s:s, s:s}", "enum", pv->tag, "title", ttitle, "type", "string");
		if (json_object_get(v, "properties") == NULL)
			json_object_set_new(v, "properties", json_object());
		json_object_set_new(json_object_get(v, "properties"), d->tag, tag);
		if (json_object_get(v, "required") == NULL)
			json_object_set_new(v, "required", json_array());
		json_array_insert_new(json_object_get(v, "required"), 0, json_string(d->tag));
		json_object_set_new(v, "title", json_string(title));
		if (pv->closed)
			json_object_set_new(v, "additionalProperties", json_false());
		json_array_append_new(one, v);
		free(title);
		free(ttitle);
	}
	return json_pack("{s:o}", "oneOf", one);
}

static json_t *
schema_enum(const struct pdef *d)
{
	const struct penum *e;
	json_t *vals = json_array(), *one = json_array();
	int documented = 0;

	for (e = d->values; e->value != NULL; e++) {
		documented |= e->doc != NULL;
		json_array_append_new(vals, json_string(e->value));
		json_array_append_new(one,
			e->doc != NULL
				? json_pack("{s:s, s:[s], s:s}", "description", e->doc, "enum",
					  e->value, "type", "string")
				: json_pack("{s:[s], s:s}", "enum", e->value, "type", "string"));
	}
	if (documented) {
		json_decref(vals);
		return json_pack("{s:o}", "oneOf", one);
	}
	json_decref(one);
	return json_pack("{s:o, s:s}", "enum", vals, "type", "string");
}

/* Apply a definition's raw `schema` text to s: merged, or (PD_ALIAS) instead of it. */
static json_t *
schema_raw(const struct pdef *d, json_t *s, char **cause)
{
	json_t *raw;

	if (s == NULL || d->schema == NULL)
		return s;
	if ((raw = json_loads(d->schema, 0, NULL)) == NULL || !json_is_object(raw)) {
		*cause = xasprintf("%s: bad schema text", d->name);
		json_decref(raw);
		json_decref(s);
		return NULL;
	}
	if (d->kind == PD_ALIAS) {
		json_decref(s);
		return raw;
	}
	if (json_is_true(s)) {
		json_decref(s);
		s = json_object();
	}
	json_object_update(s, raw);
	json_decref(raw);
	return s;
}

/* JSON Schema for one definition (without $schema/title/definitions). */
json_t *
schema_def(const struct pdef *d, char **cause)
{
	json_t *s = NULL;

	switch (d->kind) {
	case PD_STRUCT:
		return schema_raw(d, schema_object(d->fields, d->doc, cause), cause);
	case PD_ENUM:
		s = schema_enum(d);
		break;
	case PD_UNION:
		s = schema_union(d, cause);
		break;
	case PD_ALIAS:
		s = d->alias != NULL ? schema_type(d->alias, cause) : json_object();
		break;
	}
	s = schema_raw(d, s, cause);
	if (s != NULL && d->doc != NULL) {
		if (json_is_true(s)) {
			json_decref(s);
			s = json_object();
		}
		json_object_set_new(s, "description", json_string(d->doc));
	}
	return s;
}

static void
schema_add_def(const struct pdef *d, void *arg)
{
	json_t **defs = arg;
	char *cause = NULL;
	json_t *s;

	if (*defs == NULL)
		return;
	if ((s = schema_def(d, &cause)) == NULL) {
		json_decref(*defs);
		*defs = json_pack("{s:s}", "error", cause);
		free(cause);
		return;
	}
	json_object_set_new(*defs, d->name, s);
}

/* An object {Name: schema} of every definition. */
json_t *
schema_definitions(char **cause)
{
	json_t *defs = json_object(), *err;

	defs_foreach(schema_add_def, &defs);
	if ((err = json_object_get(defs, "error")) != NULL && json_is_string(err)) {
		*cause = xstrdup(json_string_value(err));
		json_decref(defs);
		return NULL;
	}
	return defs;
}

static int schema_closure_expr(const char *expr, json_t *names, char **cause);

static int
schema_closure_type(const struct type_expr *t, json_t *names, char **cause)
{
	if (t == NULL)
		return 0;
	if (t->kind == TX_REF)
		return schema_closure(t->name, names, cause);
	if (schema_closure_type(t->a[0], names, cause) != 0)
		return -1;
	return schema_closure_type(t->a[1], names, cause);
}

static int
schema_closure_expr(const char *expr, json_t *names, char **cause)
{
	struct type_expr *t = type_expr_parse(expr, cause);
	int r;

	if (t == NULL)
		return -1;
	r = schema_closure_type(t, names, cause);
	type_expr_free(t);
	return r;
}

static int
schema_closure_fields(const struct pfield *f, json_t *names, char **cause)
{
	for (; f != NULL && f->name != NULL; f++)
		if (schema_closure_expr(f->type, names, cause) != 0)
			return -1;
	return 0;
}

/* The definitions a raw schema refers to ("$ref": "#/definitions/X"), anywhere in it. */
static int
schema_closure_raw(const json_t *s, json_t *names, char **cause)
{
	const char *k, *ref;
	json_t *v;
	size_t i;

	if (json_is_array(s)) {
		json_array_foreach(
			(json_t *)s, i, v) if (schema_closure_raw(v, names, cause) != 0) return -1;
		return 0;
	}
	json_object_foreach((json_t *)s, k, v)
	{
		ref = json_string_value(v);
		if (strcmp(k, "$ref") == 0 && ref != NULL &&
			strncmp(ref, "#/definitions/", 14) == 0) {
			if (schema_closure(ref + 14, names, cause) != 0)
				return -1;
		} else if ((json_is_object(v) || json_is_array(v)) &&
			schema_closure_raw(v, names, cause) != 0)
			return -1;
	}
	return 0;
}

/* The definitions of a PD_ALIAS: its type expression's, or its raw schema's $refs. */
static int
schema_closure_alias(const struct pdef *d, json_t *names, char **cause)
{
	json_t *raw;
	int r;

	if (d->alias != NULL)
		return schema_closure_expr(d->alias, names, cause);
	if (d->schema == NULL || (raw = json_loads(d->schema, 0, NULL)) == NULL)
		return 0; /* a bad text is reported where the schema is built */
	r = schema_closure_raw(raw, names, cause);
	json_decref(raw);
	return r;
}

/* Add to `names` every definition reachable from def `name` (itself included). */
int
schema_closure(const char *name, json_t *names, char **cause)
{
	const struct pdef *d = defs_find(name);
	const struct pvariant *v;

	if (d == NULL) {
		*cause = xasprintf("unknown type `%s`", name);
		return -1;
	}
	if (json_object_get(names, name) != NULL)
		return 0;
	json_object_set_new(names, name, json_true());
	switch (d->kind) {
	case PD_STRUCT:
		return schema_closure_fields(d->fields, names, cause);
	case PD_UNION:
		for (v = d->variants; v->tag != NULL; v++)
			if (schema_closure_fields(v->fields, names, cause) != 0)
				return -1;
		return 0;
	case PD_ALIAS:
		return schema_closure_alias(d, names, cause);
	case PD_ENUM:
		return 0;
	}
	return 0;
}

/* An object {Name: schema} of the definitions named (as keys) in `names`. */
json_t *
schema_defs_of(const json_t *names, char **cause)
{
	json_t *defs = json_object(), *one, *t;
	const char *name;

	json_object_foreach((json_t *)names, name, t)
	{
		if ((one = schema_def(defs_find(name), cause)) == NULL) {
			json_decref(defs);
			return NULL;
		}
		json_object_set_new(defs, name, one);
	}
	return defs;
}

json_t *
schema_flatten_oneof(const json_t *s)
{
	const json_t *parts = json_object_get(s, "oneOf"),
		     *props = json_object_get(s, "properties");
	const json_t *req = json_object_get(s, "required"), *p;
	json_t *out, *np, *v;
	size_t i;

	if (!json_is_array(parts) || !json_is_object(props))
		return json_incref((json_t *)s);
	out = json_pack("{s:[]}", "oneOf");
	json_array_foreach(parts, i, p)
	{
		v = json_deep_copy(p);
		if ((np = json_object_get(v, "properties")) == NULL)
			json_object_set_new(v, "properties", np = json_object());
		json_object_update_missing(np, (json_t *)props);
		if (json_is_array(req)) {
			if (json_object_get(v, "required") == NULL)
				json_object_set_new(v, "required", json_array());
			json_array_extend(json_object_get(v, "required"), (json_t *)req);
		}
		json_array_append_new(json_object_get(out, "oneOf"), v);
	}
	return out;
}
