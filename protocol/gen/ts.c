/*
 * TypeScript declarations from the protocol tables: one `export type` per definition, and the
 * message unions ClientRequest, ServerNotification, ServerRequest and ClientNotification, and
 * maps from method name to params/result types (ClientRequestMap, ServerNotificationMap, ...)
 * so a client can type request(method, params) by the method's name.
 * Optional fields are `name?:`, nullable ones `T | null`, as upstream's ts-rs output reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "protocol/defs/defs.h"
#include "protocol/defs/type_expr.h"
#include "protocol/xmalloc.h"
#include "schema.h"
#include "ts.h"

struct ts {
	char *buf;
	size_t len;
	FILE *f;
	char *cause;
};

/* A property name: bare when it is an identifier, else quoted ("otlp-http"). */
static void
ts_key(struct ts *ts, const char *name)
{
	int ident = name[0] != '\0' && !(name[0] >= '0' && name[0] <= '9');

	for (const char *c = name; ident && *c != '\0'; c++)
		ident = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			(*c >= '0' && *c <= '9') || *c == '_' || *c == '$';
	fprintf(ts->f, ident ? "%s" : "\"%s\"", name);
}

static void
ts_tree(struct ts *ts, const struct type_expr *t)
{
	switch (t->kind) {
	case TX_PRIM:
		if (strcmp(t->name, "string") == 0 || strcmp(t->name, "boolean") == 0)
			fputs(t->name, ts->f);
		else if (strcmp(t->name, "any") == 0)
			fputs("JsonValue", ts->f);
		else
			fputs("number", ts->f);
		break;
	case TX_REF:
		fputs(t->name, ts->f);
		break;
	case TX_ARRAY:
		fputs("Array<", ts->f);
		ts_tree(ts, t->a[0]);
		fputs(">", ts->f);
		break;
	case TX_MAP:
		fputs("{ [key in string]?: ", ts->f);
		ts_tree(ts, t->a[0]);
		fputs(" }", ts->f);
		break;
	case TX_NULL:
		ts_tree(ts, t->a[0]);
		fputs(" | null", ts->f);
		break;
	case TX_OR:
		ts_tree(ts, t->a[0]);
		fputs(" | ", ts->f);
		ts_tree(ts, t->a[1]);
		break;
	}
}

static void
ts_type(struct ts *ts, const char *expr)
{
	char *cause = NULL;
	struct type_expr *t = type_expr_parse(expr, &cause);

	if (t == NULL) {
		if (ts->cause == NULL)
			ts->cause = cause;
		else
			free(cause);
		return;
	}
	ts_tree(ts, t);
	type_expr_free(t);
}

static void ts_json(struct ts *ts, const json_t *s);

/* The members of a oneOf/anyOf, or the values of an enum, joined with " | ". */
static void
ts_json_union(struct ts *ts, const json_t *parts, int literals)
{
	size_t i;
	char *lit;

	for (i = 0; i < json_array_size(parts); i++) {
		if (i > 0)
			fputs(" | ", ts->f);
		if (!literals) {
			ts_json(ts, json_array_get(parts, i));
			continue;
		}
		lit = json_dumps(json_array_get(parts, i), JSON_ENCODE_ANY);
		fputs(lit != NULL ? lit : "never", ts->f);
		free(lit);
	}
}

/* An object schema: its properties (optional unless required), or a map. */
static void
ts_json_object(struct ts *ts, const json_t *s)
{
	const json_t *props = json_object_get(s, "properties"), *req, *extra, *v;
	const char *name, *sep = "";
	size_t i;
	int required;

	extra = json_object_get(s, "additionalProperties");
	if (json_object_size(props) == 0) {
		fputs("{ [key in string]?: ", ts->f);
		if (json_is_object(extra))
			ts_json(ts, extra);
		else
			fputs("JsonValue", ts->f);
		fputs(" }", ts->f);
		return;
	}
	req = json_object_get(s, "required");
	fputs("{ ", ts->f);
	json_object_foreach((json_t *)props, name, v)
	{
		required = 0;
		for (i = 0; i < json_array_size(req); i++) {
			const char *r = json_string_value(json_array_get(req, i));

			required |= r != NULL && strcmp(r, name) == 0;
		}
		fputs(sep, ts->f);
		ts_key(ts, name);
		fprintf(ts->f, "%s: ", required ? "" : "?");
		ts_json(ts, v);
		sep = "; ";
	}
	fputs(" }", ts->f);
}

/* The TypeScript type a (raw) schema describes; JsonValue for what it does not narrow. */
static void
ts_json(struct ts *ts, const json_t *s)
{
	const json_t *type = json_object_get(s, "type"), *x;
	const char *t = json_string_value(type), *ref;

	if ((x = json_object_get(s, "oneOf")) != NULL || (x = json_object_get(s, "anyOf")) != NULL)
		ts_json_union(ts, x, 0);
	else if ((x = json_object_get(s, "enum")) != NULL)
		ts_json_union(ts, x, 1);
	else if ((ref = json_string_value(json_object_get(s, "$ref"))) != NULL)
		fputs(strrchr(ref, '/') != NULL ? strrchr(ref, '/') + 1 : ref, ts->f);
	else if (t != NULL &&
		(strcmp(t, "string") == 0 || strcmp(t, "boolean") == 0 || strcmp(t, "null") == 0))
		fputs(t, ts->f);
	else if (t != NULL && (strcmp(t, "integer") == 0 || strcmp(t, "number") == 0))
		fputs("number", ts->f);
	else if (t != NULL && strcmp(t, "array") == 0) {
		fputs("Array<", ts->f);
		if ((x = json_object_get(s, "items")) != NULL)
			ts_json(ts, x);
		else
			fputs("JsonValue", ts->f);
		fputs(">", ts->f);
	} else if (t != NULL && strcmp(t, "object") == 0)
		ts_json_object(ts, s);
	else
		fputs("JsonValue", ts->f);
}

/* A PD_ALIAS given as raw schema text: its type, the oneOf members one per line. */
static void
ts_raw_alias(struct ts *ts, const struct pdef *d)
{
	json_t *raw = json_loads(d->schema, 0, NULL), *s, *parts;

	if (raw == NULL) {
		if (ts->cause == NULL)
			ts->cause = xasprintf("%s: bad schema text", d->name);
		return;
	}
	s = schema_flatten_oneof(raw); /* members beside a oneOf go into each variant */
	json_decref(raw);
	parts = json_object_get(s, "oneOf");
	if (parts == NULL) {
		fputs(" ", ts->f);
		ts_json(ts, s);
	}
	for (size_t i = 0; i < json_array_size(parts); i++) {
		fputs("\n  | ", ts->f);
		ts_json(ts, json_array_get(parts, i));
	}
	fputs(";\n", ts->f);
	json_decref(s);
}

/* A doc comment, each line prefixed; nothing for NULL. */
static void
ts_doc(struct ts *ts, const char *doc, const char *indent)
{
	const char *p, *nl;

	if (doc == NULL)
		return;
	fprintf(ts->f, "%s/**\n", indent);
	for (p = doc;; p = nl + 1) {
		nl = strchrnul(p, '\n');
		fprintf(ts->f, "%s *%s%.*s\n", indent, nl > p ? " " : "", (int)(nl - p), p);
		if (*nl == '\0')
			break;
	}
	fprintf(ts->f, "%s */\n", indent);
}

static void
ts_fields(struct ts *ts, const struct pfield *f, const char *indent)
{
	for (; f != NULL && f->name != NULL; f++) {
		ts_doc(ts, f->doc, indent);
		fputs(indent, ts->f);
		ts_key(ts, f->name);
		fprintf(ts->f, "%s: ", (f->flags & PF_REQ) ? "" : "?");
		ts_type(ts, f->type);
		fputs(";\n", ts->f);
	}
}

static void
ts_def(const struct pdef *d, void *arg)
{
	struct ts *ts = arg;
	const struct pvariant *v;
	const struct penum *e;

	ts_doc(ts, d->doc, "");
	fprintf(ts->f, "export type %s =", d->name);
	switch (d->kind) {
	case PD_STRUCT:
		fputs(" {\n", ts->f);
		ts_fields(ts, d->fields, "  ");
		fputs("};\n", ts->f);
		break;
	case PD_ENUM:
		for (e = d->values; e->value != NULL; e++)
			fprintf(ts->f, "%s\"%s\"", e == d->values ? " " : " | ", e->value);
		fputs(";\n", ts->f);
		break;
	case PD_UNION:
		for (v = d->variants; v->tag != NULL; v++) {
			fprintf(ts->f, "\n  | {\n      %s: \"%s\";\n", d->tag, v->tag);
			ts_fields(ts, v->fields, "      ");
			fputs("    }", ts->f);
		}
		fputs(";\n", ts->f);
		break;
	case PD_ALIAS:
		if (d->alias == NULL) {
			ts_raw_alias(ts, d);
			break;
		}
		fputs(" ", ts->f);
		ts_type(ts, d->alias);
		fputs(";\n", ts->f);
		break;
	}
	fputs("\n", ts->f);
}

static void
ts_messages(struct ts *ts, enum pmsg_kind kind, const char *name)
{
	int has_id = kind == PM_REQUEST || kind == PM_SERVER_REQUEST;
	const struct pmethod *m;
	int n = 0;

	fprintf(ts->f, "export type %s =", name);
	for (m = pmethods; m->method != NULL; m++) {
		if (m->kind != kind)
			continue;
		fprintf(ts->f, "\n  | { method: \"%s\"%s", m->method,
			has_id ? "; id: RequestId" : "");
		if (m->params != NULL)
			fprintf(ts->f, "; params: %s", m->params);
		fputs(" }", ts->f);
		n++;
	}
	fputs(n == 0 ? " never;\n\n" : ";\n\n", ts->f);
}

/*
 * The lookup tables a typed client needs: for each method name, its params (and a request's
 * result) type. `undefined` stands for a message without params.
 */
static void
ts_map(struct ts *ts, enum pmsg_kind kind, const char *name, const char *doc)
{
	int request = kind == PM_REQUEST || kind == PM_SERVER_REQUEST;
	const struct pmethod *m;

	fprintf(ts->f, "/** %s */\nexport interface %s {\n", doc, name);
	for (m = pmethods; m->method != NULL; m++) {
		if (m->kind != kind)
			continue;
		ts_doc(ts, m->doc, "  ");
		if (request)
			fprintf(ts->f, "  \"%s\": { params: %s; result: %s };\n", m->method,
				m->params != NULL ? m->params : "undefined",
				m->result != NULL ? m->result : "JsonValue");
		else
			fprintf(ts->f, "  \"%s\": %s;\n", m->method,
				m->params != NULL ? m->params : "undefined");
	}
	fputs("}\n\n", ts->f);
}

/* TypeScript declarations of every definition and message, as one heap string. */
char *
ts_render(char **cause)
{
	struct ts ts = {0};

	if ((ts.f = open_memstream(&ts.buf, &ts.len)) == NULL) {
		*cause = xstrdup("open_memstream failed");
		return NULL;
	}
	fputs("// Generated by `app-server generate-ts` from protocol/defs/defs_*.c. Do not edit.\n\n"
	      "export type JsonValue =\n  | number\n  | string\n  | boolean\n  | null\n"
	      "  | Array<JsonValue>\n  | { [key in string]?: JsonValue };\n\n",
		ts.f);
	defs_foreach(ts_def, &ts);
	ts_messages(&ts, PM_REQUEST, "ClientRequest");
	ts_messages(&ts, PM_CLIENT_NOTIFICATION, "ClientNotification");
	ts_messages(&ts, PM_NOTIFICATION, "ServerNotification");
	ts_messages(&ts, PM_SERVER_REQUEST, "ServerRequest");
	ts_map(&ts, PM_REQUEST, "ClientRequestMap",
		"Client-to-server requests by method: params and result types.");
	ts_map(&ts, PM_CLIENT_NOTIFICATION, "ClientNotificationMap",
		"Client-to-server notifications by method: params type.");
	ts_map(&ts, PM_NOTIFICATION, "ServerNotificationMap",
		"Server-to-client notifications by method: params type.");
	ts_map(&ts, PM_SERVER_REQUEST, "ServerRequestMap",
		"Server-to-client requests by method: params and result (the client's answer) types.");
	fclose(ts.f);
	if (ts.cause != NULL) {
		*cause = ts.cause;
		free(ts.buf);
		return NULL;
	}
	return ts.buf;
}
