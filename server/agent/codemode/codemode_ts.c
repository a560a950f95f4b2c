/*
 * JSON Schema to TypeScript, upstream's way (codemode_ts.h). The precedence of the keywords
 * is upstream's: $ref, const, enum, anyOf/oneOf, allOf, type, then the shape (properties,
 * items). Rendering is bounded: a schema nested deeper than CODEMODE_TS_DEPTH renders
 * `unknown` below that depth, so a hostile MCP server's schema cannot exhaust the stack.
 */
#include <stdlib.h>
#include <string.h>

#include "codemode_ts.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define CODEMODE_TS_DEPTH 64
#define CODEMODE_TS_MAX	  (4u << 20) /* a rendered type's ceiling */

struct ts_ctx {
	const json_t *root;
	const char *refs[CODEMODE_TS_DEPTH]; /* the $refs being followed, to stop a cycle */
	size_t nrefs;
	int depth;
};

static char *ts_render(struct ts_ctx *c, const json_t *schema);

/* A JSON value as compact JSON text (heap), as upstream's serde_json writes a literal. */
static char *
ts_literal(const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	return s != NULL ? s : xstrdup("unknown");
}

/* Render each element of an array schema list and join them with sep; NULL when empty. */
static char *
ts_join(struct ts_ctx *c, const json_t *list, const char *sep, int literals)
{
	struct buf b;
	const json_t *v;
	size_t i;
	char *s;

	if (!json_is_array(list) || json_array_size(list) == 0)
		return NULL;
	buf_init(&b, CODEMODE_TS_MAX);
	json_array_foreach(list, i, v)
	{
		s = literals ? ts_literal(v) : ts_render(c, v);
		if (i > 0)
			buf_adds(&b, sep);
		buf_adds(&b, s);
		free(s);
	}
	return buf_steal(&b, NULL);
}

/* The schema a local reference ("#", "#/$defs/x") points at in the root, or NULL. */
static const json_t *
ts_pointer(const json_t *root, const char *ref)
{
	const json_t *at = root;
	const char *p, *end;
	char *tok, *w;
	size_t i;

	if (ref[0] != '#')
		return NULL;
	for (p = ref + 1; *p == '/' && at != NULL; p = end) {
		end = strchr(p + 1, '/');
		if (end == NULL)
			end = p + strlen(p);
		tok = xstrdup(p + 1);
		tok[end - p - 1] = '\0';
		/* RFC 6901: ~1 is '/', ~0 is '~' */
		for (w = tok, i = 0; tok[i] != '\0'; i++) {
			if (tok[i] == '~' && (tok[i + 1] == '0' || tok[i + 1] == '1')) {
				*w++ = tok[i + 1] == '1' ? '/' : '~';
				i++;
			} else
				*w++ = tok[i];
		}
		*w = '\0';
		if (json_is_object(at))
			at = json_object_get(at, tok);
		else if (json_is_array(at)) {
			char *e;
			unsigned long n = strtoul(tok, &e, 10);

			at = *tok != '\0' && *e == '\0' ? json_array_get(at, n) : NULL;
		} else
			at = NULL;
		free(tok);
	}
	return *p == '\0' ? at : NULL;
}

static char *
ts_ref(struct ts_ctx *c, const char *ref)
{
	const json_t *target = ts_pointer(c->root, ref);
	char *s;

	if (target == NULL || c->nrefs == CODEMODE_TS_DEPTH)
		return xstrdup("unknown");
	for (size_t i = 0; i < c->nrefs; i++)
		if (strcmp(c->refs[i], ref) == 0)
			return xstrdup("unknown"); /* a cycle */
	c->refs[c->nrefs++] = ref;
	s = ts_render(c, target);
	c->nrefs--;
	return s;
}

/* number, with integer and range constraints as a comment. */
static char *
ts_number(const json_t *map, int integer)
{
	static const char *const keys[] = {
		"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"};
	struct buf b;
	const json_t *v;
	int n = 0;
	char *s;

	buf_init(&b, CODEMODE_TS_MAX);
	buf_adds(&b, "number /* ");
	if (integer) {
		buf_adds(&b, "integer");
		n++;
	}
	for (size_t i = 0; i < nitems(keys); i++) {
		if ((v = json_object_get(map, keys[i])) == NULL)
			continue;
		s = ts_literal(v);
		buf_printf(&b, "%s%s: %s", n++ > 0 ? "; " : "", keys[i], s);
		free(s);
	}
	if (n == 0) {
		buf_free(&b);
		return xstrdup("number");
	}
	buf_adds(&b, " */");
	return buf_steal(&b, NULL);
}

static char *
ts_array(struct ts_ctx *c, const json_t *map)
{
	const json_t *items = json_object_get(map, "items");
	char *s, *r;

	if (items != NULL) {
		s = ts_render(c, items);
		r = xasprintf("Array<%s>", s);
		free(s);
		return r;
	}
	if ((s = ts_join(c, json_object_get(map, "prefixItems"), ", ", 0)) != NULL) {
		r = xasprintf("[%s]", s);
		free(s);
		return r;
	}
	return xstrdup("unknown[]");
}

/* A property name as written: bare when it is an identifier, else a JSON string. */
static char *
ts_prop_name(const char *name)
{
	char *id = codemode_ts_identifier(name), *r;
	json_t *s;

	if (strcmp(id, name) == 0)
		return id;
	free(id);
	s = json_string(name);
	r = ts_literal(s);
	json_decref(s);
	return r;
}

static int
ts_required(const json_t *required, const char *name)
{
	const json_t *v;
	size_t i;

	json_array_foreach(required, i, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
			return 1;
	}
	return 0;
}

static int
ts_keycmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Each non-blank line of a description, trimmed, as a `//` comment line. */
static void
ts_comment(struct buf *b, const char *text)
{
	const char *p = text, *e, *s, *t;

	while (*p != '\0') {
		e = strchr(p, '\n');
		if (e == NULL)
			e = p + strlen(p);
		for (s = p; s < e && strchr(" \t\r\v\f", *s) != NULL; s++)
			;
		for (t = e; t > s && strchr(" \t\r\v\f", t[-1]) != NULL; t--)
			;
		if (t > s)
			buf_printf(b, "  // %.*s\n", (int)(t - s), s);
		p = *e == '\n' ? e + 1 : e;
	}
}

static char *
ts_object(struct ts_ctx *c, const json_t *map)
{
	const json_t *props = json_object_get(map, "properties"), *req, *addl, *v;
	const char **names = NULL, *key, *d;
	size_t n = 0, i;
	int multiline = 0;
	struct buf b;
	char *pn, *ty, *extra = NULL;

	req = json_object_get(map, "required");
	if (!json_is_object(props))
		props = NULL;
	names = xmalloc((json_object_size(props) + 1) * sizeof *names);
	json_object_foreach((json_t *)props, key, v)
	{
		names[n++] = key;
		d = json_string_value(json_object_get(v, "description"));
		if (d != NULL && *d != '\0')
			multiline = 1;
	}
	qsort(names, n, sizeof *names, ts_keycmp);
	if ((addl = json_object_get(map, "additionalProperties")) != NULL) {
		if (json_is_true(addl))
			extra = xstrdup("unknown");
		else if (!json_is_false(addl))
			extra = ts_render(c, addl);
	} else if (n == 0)
		extra = xstrdup("unknown");
	buf_init(&b, CODEMODE_TS_MAX);
	buf_adds(&b, multiline ? "{\n" : "{ ");
	for (i = 0; i < n; i++) {
		v = json_object_get(props, names[i]);
		if (multiline)
			ts_comment(&b, json_string_value(json_object_get(v, "description")) ?: "");
		pn = ts_prop_name(names[i]);
		ty = ts_render(c, v);
		buf_printf(&b, "%s%s%s: %s;%s", multiline ? "  " : "", pn,
			ts_required(req, names[i]) ? "" : "?", ty, multiline ? "\n" : " ");
		free(pn);
		free(ty);
	}
	if (extra != NULL)
		buf_printf(&b, "%s[key: string]: %s;%s", multiline ? "  " : "", extra,
			multiline ? "\n" : " ");
	buf_adds(&b, "}");
	free(names);
	if (!multiline && n == 0 && extra == NULL) {
		buf_free(&b);
		return xstrdup("{}");
	}
	free(extra);
	return buf_steal(&b, NULL);
}

static char *
ts_keyword(struct ts_ctx *c, const json_t *map, const char *type)
{
	if (strcmp(type, "string") == 0 || strcmp(type, "boolean") == 0 ||
		strcmp(type, "null") == 0)
		return xstrdup(type);
	if (strcmp(type, "number") == 0 || strcmp(type, "integer") == 0)
		return ts_number(map, type[0] == 'i');
	if (strcmp(type, "array") == 0)
		return ts_array(c, map);
	if (strcmp(type, "object") == 0)
		return ts_object(c, map);
	return xstrdup("unknown");
}

static char *
ts_render_map(struct ts_ctx *c, const json_t *map)
{
	const json_t *v, *type;
	struct buf b;
	size_t i, n = 0;
	char *s;

	if ((v = json_object_get(map, "$ref")) != NULL && json_is_string(v))
		return ts_ref(c, json_string_value(v));
	if ((v = json_object_get(map, "const")) != NULL)
		return ts_literal(v);
	if ((s = ts_join(c, json_object_get(map, "enum"), " | ", 1)) != NULL)
		return s;
	if ((s = ts_join(c, json_object_get(map, "anyOf"), " | ", 0)) != NULL ||
		(s = ts_join(c, json_object_get(map, "oneOf"), " | ", 0)) != NULL ||
		(s = ts_join(c, json_object_get(map, "allOf"), " & ", 0)) != NULL)
		return s;
	if ((type = json_object_get(map, "type")) != NULL) {
		if (json_is_string(type))
			return ts_keyword(c, map, json_string_value(type));
		buf_init(&b, CODEMODE_TS_MAX);
		json_array_foreach(type, i, v)
		{
			if (!json_is_string(v))
				continue;
			s = ts_keyword(c, map, json_string_value(v));
			buf_printf(&b, "%s%s", n++ > 0 ? " | " : "", s);
			free(s);
		}
		if (n > 0)
			return buf_steal(&b, NULL);
		buf_free(&b);
	}
	if (json_object_get(map, "properties") != NULL ||
		json_object_get(map, "additionalProperties") != NULL ||
		json_object_get(map, "required") != NULL)
		return ts_object(c, map);
	if (json_object_get(map, "items") != NULL || json_object_get(map, "prefixItems") != NULL)
		return ts_array(c, map);
	return xstrdup("unknown");
}

static char *
ts_render(struct ts_ctx *c, const json_t *schema)
{
	char *s;

	if (json_is_true(schema))
		return xstrdup("unknown");
	if (json_is_false(schema))
		return xstrdup("never");
	if (!json_is_object(schema) || c->depth >= CODEMODE_TS_DEPTH)
		return xstrdup("unknown");
	c->depth++;
	s = ts_render_map(c, schema);
	c->depth--;
	return s;
}

char *
codemode_ts_type(const json_t *schema)
{
	struct ts_ctx c = {.root = schema};

	if (schema == NULL)
		return xstrdup("unknown");
	return ts_render(&c, schema);
}

/* ASCII letters, and digits where one may follow the first character. */
static int
ts_ident_char(unsigned char ch, int first)
{
	if (ch == '_' || ch == '$' || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z'))
		return 1;
	return !first && ch >= '0' && ch <= '9';
}

char *
codemode_ts_identifier(const char *name)
{
	const unsigned char *p = (const unsigned char *)name;
	struct buf b;
	size_t i = 0;

	buf_init(&b, CODEMODE_TS_MAX);
	for (; *p != '\0'; i++) {
		buf_addc(&b, ts_ident_char(*p, i == 0) ? (char)*p : '_');
		/* a character beyond ASCII is one `_`, however many bytes its UTF-8 has */
		if (*p++ >= 0x80)
			while ((*p & 0xc0) == 0x80)
				p++;
	}
	if (i == 0)
		buf_addc(&b, '_');
	return buf_steal(&b, NULL);
}

char *
codemode_ts_declaration(
	const char *name, const char *input_name, const char *input_type, const char *output_type)
{
	char *id = codemode_ts_identifier(name);
	char *r = xasprintf("declare const tools: { %s(%s: %s): Promise<%s>; };", id, input_name,
		input_type, output_type);

	free(id);
	return r;
}
