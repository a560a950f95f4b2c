/*
 * Python declarations from the protocol tables, for the stdlib-only client in clients/python:
 * one TypedDict (or TypeAlias) per definition, the method maps (method name -> params/result
 * definition names) and two mixins of typed request wrappers, sync and async, one method per
 * client request. It reads the same tables as ts.c and schema.c, so all three agree.
 *
 * Rules the output keeps: Python 3.11 stdlib only (typing's Required/TypeAlias); every
 * reference to a definition is quoted, so declaration order never matters, and annotations are
 * evaluated (no `from __future__ import annotations`, under which 3.11 cannot see Required); a
 * struct whose field names are not all identifiers uses TypedDict's functional form; an inline
 * object inside a raw schema becomes its own TypedDict named after the path to it (e.g.
 * AskForApprovalGranular). A generated name that collides with another is an error, not a silent
 * overwrite.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "protocol/defs/defs.h"
#include "protocol/defs/type_expr.h"
#include "protocol/xmalloc.h"
#include "py.h"
#include "schema.h"

struct py {
	FILE *f; /* the module text */
	char *buf;
	size_t len;
	json_t *names; /* every TypedDict/alias name emitted (a set) */
	char *cause;   /* the first error */
};

/* Text written to a memory stream, finished into one heap string. */
struct py_text {
	FILE *f;
	char *buf;
	size_t len;
};

static const char *const py_keywords[] = {"False", "None", "True", "and", "as", "assert", "async",
	"await", "break", "class", "continue", "def", "del", "elif", "else", "except", "finally",
	"for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or",
	"pass", "raise", "return", "try", "while", "with", "yield", NULL};

static void py_json(struct py *py, FILE *out, const json_t *s, const char *hint);

/* Remember the first error only. */
static void
py_fail(struct py *py, char *cause)
{
	if (py->cause == NULL)
		py->cause = cause;
	else
		free(cause);
}

/* True when s can be a class attribute name: an identifier that is not a keyword. */
static int
py_is_ident(const char *s)
{
	const char *p;

	if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (p = s; *p != '\0'; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_'))
			return 0;
	for (size_t i = 0; py_keywords[i] != NULL; i++)
		if (strcmp(py_keywords[i], s) == 0)
			return 0;
	return 1;
}

/* Claim a top-level name; a second claim is an error. */
static void
py_claim(struct py *py, const char *name)
{
	if (json_object_get(py->names, name) != NULL)
		py_fail(py, xasprintf("python: the name %s is generated twice", name));
	json_object_set_new(py->names, name, json_true());
}

/* A Python string literal of s (JSON escapes are valid Python escapes). */
static void
py_str(FILE *out, const char *s)
{
	json_t *j = json_string(s);
	char *lit = j != NULL ? json_dumps(j, JSON_ENCODE_ANY) : NULL;

	fputs(lit != NULL ? lit : "\"\"", out);
	free(lit);
	json_decref(j);
}

/* A quoted reference to a definition, so that order never matters. */
static void
py_ref(FILE *out, const char *name)
{
	fprintf(out, "\"%s\"", name);
}

/* The Python type of a parsed type expression. */
static void
py_tree(struct py *py, FILE *out, const struct type_expr *t)
{
	switch (t->kind) {
	case TX_PRIM:
		if (strcmp(t->name, "string") == 0)
			fputs("str", out);
		else if (strcmp(t->name, "boolean") == 0)
			fputs("bool", out);
		else if (strcmp(t->name, "number") == 0)
			fputs("float", out);
		else if (strcmp(t->name, "any") == 0)
			fputs("JsonValue", out);
		else
			fputs("int", out);
		break;
	case TX_REF:
		py_ref(out, t->name);
		break;
	case TX_ARRAY:
		fputs("List[", out);
		py_tree(py, out, t->a[0]);
		fputs("]", out);
		break;
	case TX_MAP:
		fputs("Dict[str, ", out);
		py_tree(py, out, t->a[0]);
		fputs("]", out);
		break;
	case TX_NULL:
		fputs("Optional[", out);
		py_tree(py, out, t->a[0]);
		fputs("]", out);
		break;
	case TX_OR:
		fputs("Union[", out);
		py_tree(py, out, t->a[0]);
		fputs(", ", out);
		py_tree(py, out, t->a[1]);
		fputs("]", out);
		break;
	}
}

/* The Python type of a type expression of the tables ("Any" and an error when malformed). */
static void
py_type(struct py *py, FILE *out, const char *expr)
{
	char *cause = NULL;
	struct type_expr *t = type_expr_parse(expr, &cause);

	if (t == NULL) {
		py_fail(py, cause);
		fputs("Any", out);
		return;
	}
	py_tree(py, out, t);
	type_expr_free(t);
}

/* A docstring (indented) or nothing; backslashes and quotes escaped. */
static void
py_docstring(FILE *out, const char *doc, const char *indent)
{
	const char *p;

	if (doc == NULL)
		return;
	fprintf(out, "%s\"\"\"", indent);
	for (p = doc; *p != '\0'; p++) {
		if (*p == '\\' || *p == '"')
			fputc('\\', out);
		fputc(*p, out);
		if (*p == '\n')
			fputs(indent, out);
	}
	fputs("\"\"\"\n", out);
}

/* A `#:` comment block above a field (Sphinx's attribute doc form). */
static void
py_comment(FILE *out, const char *doc, const char *indent)
{
	const char *p, *nl;

	if (doc == NULL)
		return;
	for (p = doc;; p = nl + 1) {
		nl = strchrnul(p, '\n');
		fprintf(out, "%s#:%s%.*s\n", indent, nl > p ? " " : "", (int)(nl - p), p);
		if (*nl == '\0')
			break;
	}
}

/* A memory stream for text that must be written after what it needs. */
static void
py_text_open(struct py_text *t)
{
	memset(t, 0, sizeof *t);
	t->f = open_memstream(&t->buf, &t->len);
	if (t->f == NULL)
		abort(); /* out of memory, as xmalloc would */
}

/* Close the stream; the text stays in t->buf (the caller frees it). */
static void
py_text_close(struct py_text *t)
{
	fclose(t->f);
	t->f = NULL;
}

/* "mcp_elicitations" -> "McpElicitations": a part of a generated class name. */
static void
py_camel(FILE *out, const char *s)
{
	int up = 1;

	for (; *s != '\0'; s++) {
		if (!isalnum((unsigned char)*s)) {
			up = 1;
			continue;
		}
		fputc(up ? toupper((unsigned char)*s) : *s, out);
		up = 0;
	}
}

/* The type of an inline object schema with properties: a TypedDict of its own, written first. */
static void
py_json_class(struct py *py, FILE *out, const json_t *s, const char *name)
{
	const json_t *props = json_object_get(s, "properties"),
		     *req = json_object_get(s, "required");
	struct py_text body, sub;
	const char *key;
	json_t *v;
	int functional = 0, required;

	json_object_foreach((json_t *)props, key, v)
	{
		functional |= !py_is_ident(key);
	}
	py_claim(py, name);
	py_text_open(&body);
	json_object_foreach((json_t *)props, key, v)
	{
		required = 0;
		for (size_t i = 0; i < json_array_size(req); i++) {
			const char *r = json_string_value(json_array_get(req, i));

			required |= r != NULL && strcmp(r, key) == 0;
		}
		py_text_open(&sub);
		fprintf(sub.f, "%s", name);
		py_camel(sub.f, key);
		py_text_close(&sub);
		if (functional) {
			fputs("    ", body.f);
			py_str(body.f, key);
			fputs(": ", body.f);
		} else
			fprintf(body.f, "    %s: ", key);
		fputs(required ? "Required[" : "", body.f);
		py_json(py, body.f, v, sub.buf);
		fputs(required ? "]" : "", body.f);
		fputs(functional ? ",\n" : "\n", body.f);
		free(sub.buf);
	}
	py_text_close(&body);
	/* Written after any class its fields needed, which py_json wrote meanwhile. */
	if (functional)
		fprintf(py->f, "%s = TypedDict(\"%s\", {\n%s}, total=False)\n\n\n", name, name,
			body.buf);
	else
		fprintf(py->f, "class %s(TypedDict, total=False):\n%s\n\n", name,
			body.len > 0 ? body.buf : "    pass\n");
	free(body.buf);
	py_ref(out, name);
}

/* The members of a oneOf/anyOf, or the values of an enum, as Union[...] / Literal[...]. */
static void
py_json_union(struct py *py, FILE *out, const json_t *parts, int literals, const char *hint)
{
	const json_t *p, *props;
	struct py_text sub;
	size_t i;
	char *lit;

	fputs(literals ? "Literal[" : "Union[", out);
	json_array_foreach(parts, i, p)
	{
		if (i > 0)
			fputs(", ", out);
		if (literals) {
			lit = json_is_boolean(p)  ? xstrdup(json_is_true(p) ? "True" : "False")
				: json_is_null(p) ? xstrdup("None")
						  : json_dumps(p, JSON_ENCODE_ANY);
			fputs(lit != NULL ? lit : "None", out);
			free(lit);
			continue;
		}
		/* An object member with one key (serde's externally tagged form) is named by it. */
		props = json_object_get(p, "properties");
		py_text_open(&sub);
		if (json_object_size(props) == 1) {
			fputs(hint, sub.f);
			py_camel(sub.f, json_object_iter_key(json_object_iter((json_t *)props)));
		} else
			fprintf(sub.f, "%sVariant%zu", hint, i + 1);
		py_text_close(&sub);
		py_json(py, out, p, sub.buf);
		free(sub.buf);
	}
	fputs("]", out);
}

/* The Python type a (raw) schema describes; JsonValue for what it does not narrow. */
static void
py_json(struct py *py, FILE *out, const json_t *s, const char *hint)
{
	const char *t = json_string_value(json_object_get(s, "type")), *ref;
	const json_t *x, *extra;

	if ((x = json_object_get(s, "oneOf")) != NULL || (x = json_object_get(s, "anyOf")) != NULL)
		py_json_union(py, out, x, 0, hint);
	else if ((x = json_object_get(s, "enum")) != NULL)
		py_json_union(py, out, x, 1, hint);
	else if ((ref = json_string_value(json_object_get(s, "$ref"))) != NULL)
		py_ref(out, strrchr(ref, '/') != NULL ? strrchr(ref, '/') + 1 : ref);
	else if (t == NULL)
		fputs("JsonValue", out);
	else if (strcmp(t, "string") == 0)
		fputs("str", out);
	else if (strcmp(t, "boolean") == 0)
		fputs("bool", out);
	else if (strcmp(t, "null") == 0)
		fputs("None", out);
	else if (strcmp(t, "integer") == 0)
		fputs("int", out);
	else if (strcmp(t, "number") == 0)
		fputs("float", out);
	else if (strcmp(t, "array") == 0) {
		fputs("List[", out);
		if ((x = json_object_get(s, "items")) != NULL)
			py_json(py, out, x, hint);
		else
			fputs("JsonValue", out);
		fputs("]", out);
	} else if (strcmp(t, "object") == 0 && json_object_size(json_object_get(s, "properties")))
		py_json_class(py, out, s, hint);
	else if (strcmp(t, "object") == 0) {
		extra = json_object_get(s, "additionalProperties");
		fputs("Dict[str, ", out);
		if (json_is_object(extra))
			py_json(py, out, extra, hint);
		else
			fputs("JsonValue", out);
		fputs("]", out);
	} else
		fputs("JsonValue", out);
}

/* A TypedDict from a field table, plus an optional tag field holding one literal value. */
static void
py_struct(struct py *py, const char *name, const char *doc, const struct pfield *fields,
	const char *tag, const char *tag_value)
{
	const struct pfield *f;
	int functional = tag != NULL && !py_is_ident(tag);

	for (f = fields; f != NULL && f->name != NULL; f++)
		functional |= !py_is_ident(f->name);
	py_claim(py, name);
	if (functional) {
		fprintf(py->f, "%s = TypedDict(\"%s\", {\n", name, name);
		if (tag != NULL)
			fprintf(py->f, "    \"%s\": Required[Literal[\"%s\"]],\n", tag, tag_value);
		for (f = fields; f != NULL && f->name != NULL; f++) {
			fputs("    ", py->f);
			py_str(py->f, f->name);
			fputs((f->flags & PF_REQ) ? ": Required[" : ": ", py->f);
			py_type(py, py->f, f->type);
			fputs((f->flags & PF_REQ) ? "],\n" : ",\n", py->f);
		}
		fputs("}, total=False)\n", py->f);
		if (doc != NULL) {
			fprintf(py->f, "%s.__doc__ = ", name);
			py_str(py->f, doc);
			fputs("\n", py->f);
		}
		fputs("\n\n", py->f);
		return;
	}
	fprintf(py->f, "class %s(TypedDict, total=False):\n", name);
	py_docstring(py->f, doc, "    ");
	if (tag != NULL)
		fprintf(py->f, "    %s: Required[Literal[\"%s\"]]\n", tag, tag_value);
	for (f = fields; f != NULL && f->name != NULL; f++) {
		py_comment(py->f, f->doc, "    ");
		fprintf(py->f, "    %s: %s", f->name, (f->flags & PF_REQ) ? "Required[" : "");
		py_type(py, py->f, f->type);
		fputs((f->flags & PF_REQ) ? "]\n" : "\n", py->f);
	}
	if (doc == NULL && tag == NULL && (fields == NULL || fields->name == NULL))
		fputs("    pass\n", py->f);
	fputs("\n\n", py->f);
}

/* A tagged union: one TypedDict per variant (named as schema.c titles it), then the Union. */
static void
py_union(struct py *py, const struct pdef *d)
{
	const struct pvariant *v;
	struct py_text names, one;

	py_text_open(&names);
	for (v = d->variants; v->tag != NULL; v++) {
		py_text_open(&one);
		py_camel(one.f, v->tag);
		fputs(d->name, one.f);
		py_text_close(&one);
		py_struct(py, one.buf, v->doc, v->fields, d->tag, v->tag);
		fprintf(names.f, "%s\"%s\"", v == d->variants ? "" : ", ", one.buf);
		free(one.buf);
	}
	py_text_close(&names);
	py_claim(py, d->name);
	py_comment(py->f, d->doc, "");
	fprintf(py->f, "%s: TypeAlias = Union[%s]\n", d->name, names.buf);
	free(names.buf);
}

/* A PD_ALIAS given as raw schema text: its type; inline objects become classes first. */
static void
py_raw_alias(struct py *py, const struct pdef *d)
{
	json_t *raw = json_loads(d->schema, 0, NULL), *s;
	struct py_text rhs;

	if (raw == NULL) {
		py_fail(py, xasprintf("%s: bad schema text", d->name));
		return;
	}
	s = schema_flatten_oneof(raw); /* members beside a oneOf go into each variant */
	json_decref(raw);
	py_text_open(&rhs);
	py_json(py, rhs.f, s, d->name);
	py_text_close(&rhs);
	if (rhs.buf[0] == '"' && strncmp(rhs.buf + 1, d->name, strlen(d->name)) == 0 &&
		strcmp(rhs.buf + 1 + strlen(d->name), "\"") == 0) {
		/* an object schema: its class took the name already, nothing to alias */
		free(rhs.buf);
		json_decref(s);
		return;
	}
	py_claim(py, d->name);
	py_comment(py->f, d->doc, "");
	fprintf(py->f, "%s: TypeAlias = %s\n", d->name, rhs.buf);
	free(rhs.buf);
	json_decref(s);
}

/* One definition of the tables, by kind. */
static void
py_def(const struct pdef *d, void *arg)
{
	struct py *py = arg;
	const struct penum *e;

	switch (d->kind) {
	case PD_STRUCT:
		py_struct(py, d->name, d->doc, d->fields, NULL, NULL);
		return;
	case PD_ENUM:
		py_claim(py, d->name);
		py_comment(py->f, d->doc, "");
		fprintf(py->f, "%s: TypeAlias = Literal[", d->name);
		for (e = d->values; e->value != NULL; e++) {
			fputs(e == d->values ? "" : ", ", py->f);
			py_str(py->f, e->value);
		}
		fputs("]\n", py->f);
		break;
	case PD_UNION:
		py_union(py, d);
		break;
	case PD_ALIAS:
		if (d->alias == NULL) {
			py_raw_alias(py, d);
			break;
		}
		py_claim(py, d->name);
		py_comment(py->f, d->doc, "");
		fprintf(py->f, "%s: TypeAlias = ", d->name);
		py_type(py, py->f, d->alias);
		fputs("\n", py->f);
		break;
	}
	fputs("\n\n", py->f);
}

/* A quoted definition name, or None. */
static void
py_name_or_none(FILE *out, const char *name)
{
	if (name != NULL)
		fprintf(out, "\"%s\"", name);
	else
		fputs("None", out);
}

/* A map from method name to its params (and result) definition names, None for absent. */
static void
py_map(struct py *py, enum pmsg_kind kind, const char *name)
{
	int request = kind == PM_REQUEST || kind == PM_SERVER_REQUEST;
	const struct pmethod *m;

	fprintf(py->f, "%s: Dict[str, %s] = {\n", name,
		request ? "Tuple[Optional[str], Optional[str]]" : "Optional[str]");
	for (m = pmethods; m->method != NULL; m++) {
		if (m->kind != kind)
			continue;
		fprintf(py->f, "    \"%s\": %s", m->method, request ? "(" : "");
		py_name_or_none(py->f, m->params);
		if (request) {
			fputs(", ", py->f);
			py_name_or_none(py->f, m->result);
			fputs(")", py->f);
		}
		fputs(",\n", py->f);
	}
	fputs("}\n\n", py->f);
}

/* "command/exec/outputDelta" -> "command_exec_output_delta": a wrapper's method name. */
static void
py_snake(FILE *out, const char *method)
{
	const char *p;

	for (p = method; *p != '\0'; p++) {
		if (*p == '/' || *p == '-')
			fputc('_', out);
		else if (isupper((unsigned char)*p))
			fprintf(out, "_%c", tolower((unsigned char)*p));
		else
			fputc(*p, out);
	}
}

/* True when a params definition has no required field, so a wrapper may default it to {}. */
static int
py_params_optional(const char *name)
{
	const struct pdef *d = defs_find(name);
	const struct pfield *f;

	if (d == NULL || d->kind != PD_STRUCT)
		return 0;
	for (f = d->fields; f != NULL && f->name != NULL; f++)
		if (f->flags & PF_REQ)
			return 0;
	return 1;
}

/* A mixin with one typed wrapper per client request, calling self.request(method, params). */
static void
py_mixin(struct py *py, const char *name, int async)
{
	const char *aw = async ? "await " : "", *as = async ? "async " : "", *result;
	const struct pmethod *m;

	fprintf(py->f,
		"class %s:\n"
		"    \"\"\"Typed wrappers of request(), one per client request of the protocol.\"\"\"\n\n"
		"    %sdef request(self, method: str, params: Any = None) -> Any:\n"
		"        raise NotImplementedError\n",
		name, as);
	for (m = pmethods; m->method != NULL; m++) {
		if (m->kind != PM_REQUEST)
			continue;
		fprintf(py->f, "\n    %sdef ", as);
		py_snake(py->f, m->method);
		result = m->result != NULL ? m->result : "Any";
		if (m->params == NULL)
			fprintf(py->f, "(self) -> %s:\n", result);
		else if (py_params_optional(m->params))
			fprintf(py->f, "(self, params: Optional[%s] = None) -> %s:\n", m->params,
				result);
		else
			fprintf(py->f, "(self, params: %s) -> %s:\n", m->params, result);
		py_docstring(py->f, m->doc, "        ");
		fprintf(py->f, "        return %sself.request(\"%s\", %s)\n", aw, m->method,
			m->params == NULL			? "None"
				: py_params_optional(m->params) ? "{} if params is None else params"
								: "params");
	}
	fputs("\n\n", py->f);
}

static const char py_head[] =
	"# Generated by `app-server generate-python` from protocol/defs/defs_*.c. Do not edit.\n"
	"\"\"\"The app-server protocol as TypedDicts, method maps and typed request wrappers.\"\"\"\n"
	"from typing import (Any, Dict, List, Literal, Optional, Required, Tuple, TypeAlias,\n"
	"                    TypedDict, Union)\n\n"
	"JsonValue: TypeAlias = Union[None, bool, int, float, str, List[\"JsonValue\"],\n"
	"                             Dict[str, \"JsonValue\"]]\n\n\n";

/* The module text of every definition, the method maps and typed request wrappers (heap). */
char *
py_render(char **cause)
{
	struct py py = {.names = json_object()};

	if ((py.f = open_memstream(&py.buf, &py.len)) == NULL) {
		*cause = xstrdup("open_memstream failed");
		json_decref(py.names);
		return NULL;
	}
	fputs(py_head, py.f);
	defs_foreach(py_def, &py);
	fputs("# Method name -> params definition (and result definition for requests).\n", py.f);
	py_map(&py, PM_REQUEST, "CLIENT_REQUESTS");
	py_map(&py, PM_CLIENT_NOTIFICATION, "CLIENT_NOTIFICATIONS");
	py_map(&py, PM_NOTIFICATION, "SERVER_NOTIFICATIONS");
	py_map(&py, PM_SERVER_REQUEST, "SERVER_REQUESTS");
	fputs("\n", py.f);
	py_mixin(&py, "RequestMethods", 0);
	py_mixin(&py, "AsyncRequestMethods", 1);
	fclose(py.f);
	json_decref(py.names);
	/* One trailing newline, as a linter wants. */
	while (py.len > 1 && py.buf[py.len - 1] == '\n' && py.buf[py.len - 2] == '\n')
		py.buf[--py.len] = '\0';
	if (py.cause != NULL) {
		*cause = py.cause;
		free(py.buf);
		return NULL;
	}
	return py.buf;
}
