/*
 * JSON Schema compiler: schema text -> struct jsv_node graph.
 *
 * Rules kept here:
 * - Every schema object becomes exactly one node, found again through the
 *   `nodes` map (keyed by the json_t), so two $refs to one place share a node
 *   and a recursive schema is a cycle in the graph, not an endless compile.
 * - A $ref target is only created (state JSV_NEW) and queued; the queue is
 *   drained iteratively, so compile recursion follows the text's nesting and
 *   never a chain of refs. Afterwards every ref is collapsed to its final
 *   non-ref target (a pure ref cycle is a schema error).
 * - Before compiling, a document is scanned once for $id, so a $ref can name
 *   a schema by URI; a ref to another document goes through the loader.
 * - A compilation round that fails marks the nodes it made JSV_BROKEN; they
 *   stay in the map (nothing points at freed memory) but are never returned.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonschema_int.h"
#include "xmalloc.h"

#define JSV_CHUNK     (64 * 1024)
#define JSV_MAX_NEST  128  /* nesting of schema objects inside one another */
#define JSV_LOC_MAX   512  /* location text kept for causes */
#define JSV_MAX_NODES 1000000

/* A $ref target waiting to be compiled, and the URI it was named by. */
struct work {
	struct jsv_node *node;
	const char *where;
};

/* The state of one compilation round. */
struct cctx {
	struct jsv *jsv;
	char loc[JSV_LOC_MAX]; /* where in the schema we are, for causes */
	size_t loclen;
	struct work *work; /* $ref targets waiting to be compiled */
	size_t n_work, cap_work;
	struct jsv_node **made; /* every node created in this round */
	size_t n_made, cap_made;
	int nest;
	char *cause;
};

static int compile_node(struct cctx *, struct jsv_node *);
static struct jsv_node *compile_sub(struct cctx *, const json_t *, const char *, const char *);

/* Allocate zeroed memory from the jsv's arena; it lives until jsv_free(). */
void *
jsv_alloc(struct jsv *jsv, size_t size)
{
	struct jsv_chunk *c = jsv->arena;
	size_t align = sizeof(max_align_t), chunk;
	void *p;

	size = (size + align - 1) / align * align;
	if (c == NULL || c->size - c->used < size) {
		chunk = size > JSV_CHUNK ? size : JSV_CHUNK;
		c = xmalloc(sizeof *c + chunk);
		c->size = chunk;
		c->used = 0;
		c->next = jsv->arena;
		jsv->arena = c;
	}
	p = (char *)c->data + c->used;
	c->used += size;
	memset(p, 0, size);
	return p;
}

/* Copy a string into the arena. */
char *
jsv_strdup(struct jsv *jsv, const char *s)
{
	size_t len = strlen(s);
	char *p = jsv_alloc(jsv, len + 1);

	memcpy(p, s, len + 1);
	return p;
}

/* Hash a pointer into a slot index. */
static size_t
map_slot(const struct jsv_map *m, const void *key)
{
	uint64_t h = (uint64_t)(uintptr_t)key;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h & (m->cap - 1);
}

/* Look a key up; NULL if absent. */
static void *
map_get(const struct jsv_map *m, const void *key)
{
	size_t i;

	if (m->cap == 0)
		return NULL;
	for (i = map_slot(m, key); m->keys[i] != NULL; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return m->values[i];
	}
	return NULL;
}

/* Insert or replace a key, growing at half load. */
static void
map_put(struct jsv_map *m, const void *key, void *value)
{
	const void **okeys = m->keys;
	void **ovalues = m->values;
	size_t i, ocap = m->cap;

	if ((m->len + 1) * 2 > m->cap) {
		m->cap = ocap ? ocap * 2 : 64;
		m->keys = xcalloc(m->cap, sizeof *m->keys);
		m->values = xcalloc(m->cap, sizeof *m->values);
		m->len = 0;
		for (i = 0; i < ocap; i++) {
			if (okeys[i] != NULL)
				map_put(m, okeys[i], ovalues[i]);
		}
		free(okeys);
		free(ovalues);
	}
	for (i = map_slot(m, key); m->keys[i] != NULL; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->values[i] = value;
			return;
		}
	}
	m->keys[i] = key;
	m->values[i] = value;
	m->len++;
}

/* Release a map's tables. */
static void
map_free(struct jsv_map *m)
{
	free(m->keys);
	free(m->values);
}

/* Record a failure (the first one wins) with the current location. */
static int __attribute__((format(printf, 2, 3)))
cfail(struct cctx *c, const char *fmt, ...)
{
	va_list ap;
	char *msg = NULL;

	if (c->cause != NULL)
		return -1;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	c->cause = xasprintf("schema %s: %s", c->loclen ? c->loc : "#", msg ? msg : "error");
	free(msg);
	return -1;
}

/* Append a segment (escaped as in a JSON pointer) to the location; returns the old length. */
static size_t
loc_push(struct cctx *c, const char *seg)
{
	size_t old = c->loclen, n = c->loclen;

	if (n == 0 && n + 1 < sizeof c->loc)
		c->loc[n++] = '#';
	if (n + 1 < sizeof c->loc)
		c->loc[n++] = '/';
	for (; *seg != '\0' && n + 3 < sizeof c->loc; seg++) {
		if (*seg == '~' || *seg == '/') {
			c->loc[n++] = '~';
			c->loc[n++] = *seg == '~' ? '0' : '1';
		} else
			c->loc[n++] = *seg;
	}
	c->loc[n] = '\0';
	c->loclen = n;
	return old;
}

/* Append an array index to the location. */
static size_t
loc_push_index(struct cctx *c, size_t i)
{
	char buf[32];

	snprintf(buf, sizeof buf, "%zu", i);
	return loc_push(c, buf);
}

/* Restore the location to an earlier length. */
static void
loc_pop(struct cctx *c, size_t old)
{
	c->loclen = old;
	c->loc[old] = '\0';
}

/* Set the location to a whole URI reference (a $ref target). */
static void
loc_set(struct cctx *c, const char *where)
{
	snprintf(c->loc, sizeof c->loc, "%s", where);
	c->loclen = strlen(c->loc);
}

/* Keep a reference on a document until jsv_free(). */
static void
jsv_own(struct jsv *jsv, json_t *doc)
{
	if (jsv->n_owned == jsv->cap_owned) {
		jsv->cap_owned = jsv->cap_owned ? jsv->cap_owned * 2 : 4;
		jsv->owned = xrealloc(jsv->owned, jsv->cap_owned * sizeof *jsv->owned);
	}
	jsv->owned[jsv->n_owned++] = doc;
}

/* Register a schema under a URI (first registration wins). */
static void
resource_add(struct jsv *jsv, const char *uri, const json_t *root)
{
	size_t i;

	for (i = 0; i < jsv->n_resources; i++) {
		if (strcmp(jsv->resources[i].uri, uri) == 0)
			return;
	}
	if (jsv->n_resources == jsv->cap_resources) {
		jsv->cap_resources = jsv->cap_resources ? jsv->cap_resources * 2 : 8;
		jsv->resources =
			xrealloc(jsv->resources, jsv->cap_resources * sizeof *jsv->resources);
	}
	jsv->resources[jsv->n_resources].uri = jsv_strdup(jsv, uri);
	jsv->resources[jsv->n_resources].root = root;
	jsv->n_resources++;
}

/* Find the schema registered under a URI. */
static const json_t *
resource_find(const struct jsv *jsv, const char *uri)
{
	size_t i;

	for (i = 0; i < jsv->n_resources; i++) {
		if (strcmp(jsv->resources[i].uri, uri) == 0)
			return jsv->resources[i].root;
	}
	return NULL;
}

/* Length of a URI's scheme including ':' (0 if the reference is relative). */
static size_t
uri_scheme_len(const char *s)
{
	size_t i;

	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return 0;
	for (i = 1; s[i] != '\0'; i++) {
		if (s[i] == ':')
			return i + 1;
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
			    (s[i] >= '0' && s[i] <= '9') || s[i] == '+' || s[i] == '-' || s[i] == '.'))
			return 0;
	}
	return 0;
}

/*
 * Resolve a URI reference against a base (RFC 3986 without dot-segment
 * removal); returns a heap string.
 */
static char *
uri_resolve(const char *base, const char *ref)
{
	size_t blen = strcspn(base, "#"), slen, alen, dlen;
	const char *p;

	if (uri_scheme_len(ref) > 0)
		return xstrdup(ref);
	if (ref[0] == '\0')
		return xstrndup(base, blen);
	if (ref[0] == '#')
		return xasprintf("%.*s%s", (int)blen, base, ref);
	slen = uri_scheme_len(base);
	if (ref[0] == '/' && ref[1] == '/')
		return xasprintf("%.*s%s", (int)slen, base, ref);
	/* The authority ends at the first '/' after "scheme://". */
	alen = slen;
	if (base[slen] == '/' && base[slen + 1] == '/')
		alen = slen + 2 + strcspn(base + slen + 2, "/?#");
	if (ref[0] == '/')
		return xasprintf("%.*s%s", (int)alen, base, ref);
	dlen = strcspn(base, "?#");
	for (p = base + dlen; p > base + alen && p[-1] != '/'; p--)
		;
	dlen = p - base;
	if (dlen == alen && alen > slen)
		return xasprintf("%.*s/%s", (int)dlen, base, ref);
	return xasprintf("%.*s%s", (int)dlen, base, ref);
}

/* Value of one hex digit, -1 if not one. */
static int
hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/*
 * Follow a URI fragment holding a JSON pointer ("", "/a/0", with %XX and
 * ~0 ~1 escapes) from root; NULL if it leads nowhere.
 */
static const json_t *
pointer_follow(const json_t *root, const char *frag)
{
	const json_t *cur = root;
	char *buf = NULL, *tok, *end, *q;
	size_t i, n;
	int hi, lo;

	buf = xmalloc(strlen(frag) + 1);
	for (n = 0, i = 0; frag[i] != '\0'; i++) {
		if (frag[i] == '%' && (hi = hexval(frag[i + 1])) >= 0 &&
			(lo = hexval(frag[i + 2])) >= 0) {
			buf[n++] = (char)(hi * 16 + lo);
			i += 2;
		} else
			buf[n++] = frag[i];
	}
	buf[n] = '\0';
	if (buf[0] != '\0' && buf[0] != '/') {
		cur = NULL;
		goto out;
	}
	for (tok = buf; cur != NULL && *tok == '/'; tok = end) {
		tok++;
		end = tok + strcspn(tok, "/");
		/* Unescape ~1 then ~0 in place; the token shrinks. */
		for (q = tok, i = 0; tok + i < end; i++) {
			if (tok[i] == '~' && tok + i + 1 < end && (tok[i + 1] == '0' || tok[i + 1] == '1')) {
				*q++ = tok[i + 1] == '0' ? '~' : '/';
				i++;
			} else
				*q++ = tok[i];
		}
		if (json_is_object(cur))
			cur = json_object_getn(cur, tok, q - tok);
		else if (json_is_array(cur)) {
			size_t idx = 0;
			const char *d;

			if (q == tok || (tok[0] == '0' && q - tok > 1)) {
				cur = NULL;
				break;
			}
			for (d = tok; d < q; d++) {
				if (*d < '0' || *d > '9' || idx > SIZE_MAX / 16) {
					cur = NULL;
					break;
				}
				idx = idx * 10 + (size_t)(*d - '0');
			}
			if (cur != NULL)
				cur = json_array_get(cur, idx);
		} else
			cur = NULL;
	}
out:
	free(buf);
	return cur;
}

/* Call fn on every subschema position of a schema object (keyword-aware). */
static void
each_sub(const json_t *schema, void (*fn)(const json_t *, void *), void *arg)
{
	static const char *single[] = {"additionalItems", "additionalProperties", "contains",
		"propertyNames", "not", "if", "then", "else", "items"};
	static const char *arrays[] = {"allOf", "anyOf", "oneOf", "items"};
	static const char *maps[] = {"properties", "patternProperties", "definitions",
		"dependencies"};
	const json_t *v, *e;
	const char *k;
	size_t i, j;

	for (i = 0; i < nitems(single); i++) {
		v = json_object_get(schema, single[i]);
		if (json_is_object(v) || json_is_boolean(v))
			fn(v, arg);
	}
	for (i = 0; i < nitems(arrays); i++) {
		v = json_object_get(schema, arrays[i]);
		json_array_foreach(v, j, e) fn(e, arg);
	}
	for (i = 0; i < nitems(maps); i++) {
		v = json_object_get(schema, maps[i]);
		if (!json_is_object(v))
			continue;
		json_object_foreach((json_t *)v, k, e)
		{
			if (json_is_object(e) || json_is_boolean(e))
				fn(e, arg);
		}
	}
}

/* State of a $id scan. */
struct scan {
	struct jsv *jsv;
	const char *base;     /* base URI at this level */
	const char *doc_base; /* the document's own URI */
	int nest;
};

/* Scan one schema for $id, recording URIs and bases that differ from the document's. */
static void
scan_cb(const json_t *schema, void *arg)
{
	struct scan *s = arg, inner = *s;
	const json_t *id = json_object_get(schema, "$id");
	char *uri = NULL;
	size_t hash;

	if (!json_is_object(schema) || s->nest >= JSV_MAX_NEST)
		return;
	if (json_is_string(id) && json_object_get(schema, "$ref") == NULL) {
		uri = uri_resolve(s->base, json_string_value(id));
		resource_add(s->jsv, uri, schema);
		hash = strcspn(uri, "#");
		uri[hash] = '\0';
		inner.base = jsv_strdup(s->jsv, uri);
	}
	if (strcmp(inner.base, s->doc_base) != 0)
		map_put(&s->jsv->bases, schema, (void *)inner.base);
	inner.nest++;
	each_sub(schema, scan_cb, &inner);
	free(uri);
}

/* Register a document and scan it for $id. */
static void
scan_document(struct jsv *jsv, const char *uri, const json_t *doc)
{
	struct scan s = {jsv, NULL, NULL, 0};

	s.doc_base = jsv_strdup(jsv, uri);
	s.base = s.doc_base;
	resource_add(jsv, uri, doc);
	scan_cb(doc, &s);
}

/* Create a node for a schema value and register it. */
static struct jsv_node *
node_new(struct cctx *c, const json_t *json, const char *base)
{
	struct jsv_node *n = jsv_alloc(c->jsv, sizeof *n);

	n->owner = c->jsv;
	n->json = json;
	n->base = base;
	n->state = JSV_NEW;
	n->max_length = n->max_items = n->max_props = SIZE_MAX;
	map_put(&c->jsv->nodes, json, n);
	if (c->n_made == c->cap_made) {
		c->cap_made = c->cap_made ? c->cap_made * 2 : 256;
		c->made = xrealloc(c->made, c->cap_made * sizeof *c->made);
	}
	c->made[c->n_made++] = n;
	return n;
}

/*
 * Resolve a $ref (relative to base) to its node, creating and queueing it if
 * it is new; NULL (and a cause) if it cannot be resolved.
 */
static struct jsv_node *
ref_resolve(struct cctx *c, const char *base, const char *ref)
{
	struct jsv *jsv = c->jsv;
	struct jsv_node *n = NULL;
	const json_t *root, *target;
	char *uri = uri_resolve(base, ref), *frag, *tbase, *where = xstrdup(uri);
	json_t *doc;

	frag = uri + strcspn(uri, "#");
	/* A plain-name fragment is an $id of its own ("base#name"). */
	if (*frag == '#' && frag[1] != '\0' && frag[1] != '/' && frag[1] != '%') {
		root = resource_find(jsv, uri);
		frag = (char *)"";
	} else {
		if (*frag == '#')
			*frag++ = '\0';
		root = resource_find(jsv, uri);
		if (root == NULL && jsv->load != NULL && uri_scheme_len(uri) > 0 &&
			(doc = jsv->load(uri, jsv->load_arg)) != NULL) {
			jsv_own(jsv, doc);
			scan_document(jsv, uri, doc);
			root = doc;
		}
	}
	if (root == NULL) {
		cfail(c, "cannot resolve $ref `%s`", ref);
		goto out;
	}
	target = pointer_follow(root, frag);
	if (target == NULL) {
		cfail(c, "$ref `%s` points nowhere", ref);
		goto out;
	}
	if (!json_is_object(target) && !json_is_boolean(target)) {
		cfail(c, "$ref `%s` does not point at a schema", ref);
		goto out;
	}
	n = map_get(&jsv->nodes, target);
	if (n != NULL) {
		if (n->state == JSV_BROKEN) {
			cfail(c, "$ref `%s` points at an invalid schema", ref);
			n = NULL;
		}
		goto out;
	}
	/* The target's base: recorded by the $id scan, else its document's URI. */
	tbase = map_get(&jsv->bases, target);
	if (tbase == NULL) {
		tbase = jsv_strdup(jsv, uri);
		tbase[strcspn(tbase, "#")] = '\0';
	}
	n = node_new(c, target, tbase);
	if (c->n_work == c->cap_work) {
		c->cap_work = c->cap_work ? c->cap_work * 2 : 64;
		c->work = xrealloc(c->work, c->cap_work * sizeof *c->work);
	}
	c->work[c->n_work].node = n;
	c->work[c->n_work].where = jsv_strdup(jsv, where);
	c->n_work++;
out:
	free(where);
	free(uri);
	return n;
}

/* Read a non-negative integer keyword (1.0 counts); 1 if present, 0 if absent, -1 if bad. */
static int
get_count(struct cctx *c, const json_t *schema, const char *key, size_t *out)
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
	return cfail(c, "`%s` must be a non-negative integer", key);
}

/* Read a number keyword; 1 if present, 0 if absent, -1 if bad. */
static int
get_number(struct cctx *c, const json_t *schema, const char *key, long double *out)
{
	const json_t *v = json_object_get(schema, key);

	if (v == NULL)
		return 0;
	if (json_is_integer(v))
		*out = (long double)json_integer_value(v);
	else if (json_is_real(v))
		*out = json_real_value(v);
	else
		return cfail(c, "`%s` must be a number", key);
	return 1;
}

/* Compile the subschema under a keyword (object or boolean), or leave *out NULL if absent. */
static int
get_schema(struct cctx *c, struct jsv_node *n, const char *key, struct jsv_node **out)
{
	const json_t *v = json_object_get(n->json, key);

	if (v == NULL)
		return 0;
	if (!json_is_object(v) && !json_is_boolean(v))
		return cfail(c, "`%s` must be a schema (object or boolean)", key);
	*out = compile_sub(c, v, n->base, key);
	return *out == NULL ? -1 : 1;
}

/* Compile element i of a schema array. */
static int
list_item(struct cctx *c, const json_t *e, const char *base, size_t i, struct jsv_node **out)
{
	size_t old = loc_push_index(c, i);

	if (!json_is_object(e) && !json_is_boolean(e))
		return cfail(c, "must be a schema (object or boolean)");
	if ((*out = compile_sub(c, e, base, NULL)) == NULL)
		return -1;
	loc_pop(c, old);
	return 0;
}

/* Compile an array of subschemas (allOf/anyOf/oneOf). */
static int
get_list(struct cctx *c, struct jsv_node *n, const char *key, struct jsv_list *out)
{
	const json_t *v = json_object_get(n->json, key), *e;
	size_t i, old;

	if (v == NULL)
		return 0;
	if (!json_is_array(v) || json_array_size(v) == 0)
		return cfail(c, "`%s` must be a non-empty array of schemas", key);
	out->n = json_array_size(v);
	out->v = jsv_alloc(c->jsv, out->n * sizeof *out->v);
	old = loc_push(c, key);
	json_array_foreach(v, i, e)
	{
		if (list_item(c, e, n->base, i, &out->v[i]) < 0)
			return -1;
	}
	loc_pop(c, old);
	return 1;
}

/* Read an array of unique strings (required, dependencies' array form). */
static int
get_names(struct cctx *c, const json_t *v, const char *key, const char ***out, size_t *n)
{
	const json_t *e;
	size_t i, j;

	if (!json_is_array(v))
		return cfail(c, "`%s` must be an array of strings", key);
	*n = json_array_size(v);
	*out = jsv_alloc(c->jsv, (*n ? *n : 1) * sizeof **out);
	json_array_foreach(v, i, e)
	{
		if (!json_is_string(e))
			return cfail(c, "`%s` must be an array of strings", key);
		(*out)[i] = json_string_value(e);
		for (j = 0; j < i; j++) {
			if (strcmp((*out)[j], (*out)[i]) == 0)
				return cfail(c, "`%s` lists `%s` twice", key, (*out)[i]);
		}
	}
	return 1;
}

/* Parse `type` into a bitmask. */
static int
compile_type(struct cctx *c, struct jsv_node *n, const json_t *v)
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
		return cfail(c, "`type` must be a type name or an array of them");
	for (i = 0; json_is_string(v) ? i < 1 : i < json_array_size(v); i++) {
		if (json_is_array(v))
			e = json_array_get(v, i);
		for (j = 0; j < nitems(names); j++) {
			if (json_is_string(e) && strcmp(json_string_value(e), names[j].name) == 0)
				break;
		}
		if (j == nitems(names))
			return cfail(c, "`type` has an unknown type name");
		n->types |= names[j].bits;
	}
	n->flags |= JSV_F_TYPE;
	return 0;
}

/* Numeric keywords: bounds, multipleOf and integer formats. */
static int
compile_numeric(struct cctx *c, struct jsv_node *n)
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

	if ((r = get_number(c, n->json, "minimum", &n->minimum)) < 0)
		return -1;
	n->flags |= r ? JSV_F_MINIMUM : 0;
	if ((r = get_number(c, n->json, "maximum", &n->maximum)) < 0)
		return -1;
	n->flags |= r ? JSV_F_MAXIMUM : 0;
	if ((r = get_number(c, n->json, "exclusiveMinimum", &n->exminimum)) < 0)
		return -1;
	n->flags |= r ? JSV_F_EXMINIMUM : 0;
	if ((r = get_number(c, n->json, "exclusiveMaximum", &n->exmaximum)) < 0)
		return -1;
	n->flags |= r ? JSV_F_EXMAXIMUM : 0;
	if ((r = get_number(c, n->json, "multipleOf", &n->multiple_of)) < 0)
		return -1;
	if (r) {
		if (!(n->multiple_of > 0))
			return cfail(c, "`multipleOf` must be greater than 0");
		if (n->multiple_of == floorl(n->multiple_of) && n->multiple_of < 9e18L)
			n->multiple_of_int = (long long)n->multiple_of;
		n->flags |= JSV_F_MULTIPLEOF;
	}
	if (fmt != NULL && !json_is_string(fmt))
		return cfail(c, "`format` must be a string");
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
regex_item(struct cctx *c, struct jsv_regex *rx, const char *source)
{
	char *why = NULL;

	if (jsv_regex_compile(c->jsv, rx, source, &why) == 0)
		return 0;
	cfail(c, "%s", why);
	free(why);
	return -1;
}

/* String keywords: minLength, maxLength, pattern. */
static int
compile_string(struct cctx *c, struct jsv_node *n)
{
	const json_t *pat = json_object_get(n->json, "pattern");
	int r1, r2;

	if ((r1 = get_count(c, n->json, "minLength", &n->min_length)) < 0 ||
		(r2 = get_count(c, n->json, "maxLength", &n->max_length)) < 0)
		return -1;
	if (pat != NULL) {
		if (!json_is_string(pat))
			return cfail(c, "`pattern` must be a string");
		n->pattern = jsv_alloc(c->jsv, sizeof *n->pattern);
		if (regex_item(c, n->pattern, json_string_value(pat)) < 0)
			return -1;
	}
	if (r1 || r2 || pat != NULL)
		n->flags |= JSV_F_STRING;
	return 0;
}

/* Array keywords. */
static int
compile_array(struct cctx *c, struct jsv_node *n)
{
	const json_t *items = json_object_get(n->json, "items"), *u, *e;
	int any = 0, r;
	size_t i, old;

	if (json_is_array(items)) {
		n->has_tuple = true;
		n->tuple.n = json_array_size(items);
		n->tuple.v = jsv_alloc(c->jsv, (n->tuple.n ? n->tuple.n : 1) * sizeof *n->tuple.v);
		old = loc_push(c, "items");
		json_array_foreach(items, i, e)
		{
			if (list_item(c, e, n->base, i, &n->tuple.v[i]) < 0)
				return -1;
		}
		loc_pop(c, old);
		any = 1;
	} else if ((r = get_schema(c, n, "items", &n->items)) != 0) {
		if (r < 0)
			return -1;
		any = 1;
	}
	if ((r = get_schema(c, n, "additionalItems", &n->additional_items)) < 0)
		return -1;
	any |= r;
	if ((r = get_schema(c, n, "contains", &n->contains)) < 0)
		return -1;
	any |= r;
	if ((r = get_count(c, n->json, "minItems", &n->min_items)) < 0)
		return -1;
	any |= r;
	if ((r = get_count(c, n->json, "maxItems", &n->max_items)) < 0)
		return -1;
	any |= r;
	if ((u = json_object_get(n->json, "uniqueItems")) != NULL) {
		if (!json_is_boolean(u))
			return cfail(c, "`uniqueItems` must be a boolean");
		n->unique_items = json_is_true(u);
		any |= n->unique_items;
	}
	if (any)
		n->flags |= JSV_F_ARRAY;
	return 0;
}

/* Order properties by name for bsearch. */
static int
prop_cmp(const void *a, const void *b)
{
	return strcmp(((const struct jsv_prop *)a)->name, ((const struct jsv_prop *)b)->name);
}

/* properties and patternProperties. */
static int
compile_props(struct cctx *c, struct jsv_node *n)
{
	const json_t *props = json_object_get(n->json, "properties");
	const json_t *pats = json_object_get(n->json, "patternProperties");
	const json_t *v;
	const char *k;
	size_t i = 0, old;

	if (props != NULL) {
		if (!json_is_object(props))
			return cfail(c, "`properties` must be an object of schemas");
		n->n_props = json_object_size(props);
		n->props = jsv_alloc(c->jsv, (n->n_props ? n->n_props : 1) * sizeof *n->props);
		old = loc_push(c, "properties");
		json_object_foreach((json_t *)props, k, v)
		{
			if (!json_is_object(v) && !json_is_boolean(v)) {
				loc_push(c, k);
				return cfail(c, "must be a schema (object or boolean)");
			}
			n->props[i].name = k;
			if ((n->props[i].schema = compile_sub(c, v, n->base, k)) == NULL)
				return -1;
			i++;
		}
		loc_pop(c, old);
		qsort(n->props, n->n_props, sizeof *n->props, prop_cmp);
		n->flags |= JSV_F_OBJECT;
	}
	if (pats != NULL) {
		if (!json_is_object(pats))
			return cfail(c, "`patternProperties` must be an object of schemas");
		n->n_pattern_props = json_object_size(pats);
		n->pattern_props = jsv_alloc(c->jsv,
			(n->n_pattern_props ? n->n_pattern_props : 1) * sizeof *n->pattern_props);
		old = loc_push(c, "patternProperties");
		i = 0;
		json_object_foreach((json_t *)pats, k, v)
		{
			if (!json_is_object(v) && !json_is_boolean(v)) {
				loc_push(c, k);
				return cfail(c, "must be a schema (object or boolean)");
			}
			if (regex_item(c, &n->pattern_props[i], k) < 0)
				return -1;
			if ((n->pattern_props[i].schema = compile_sub(c, v, n->base, k)) == NULL)
				return -1;
			i++;
		}
		loc_pop(c, old);
		n->flags |= JSV_F_OBJECT;
	}
	return 0;
}

/* Object keywords. */
static int
compile_object(struct cctx *c, struct jsv_node *n)
{
	const json_t *req = json_object_get(n->json, "required");
	const json_t *deps = json_object_get(n->json, "dependencies"), *v;
	const char *k;
	size_t i = 0, old;
	int any = 0, r;

	if (compile_props(c, n) < 0)
		return -1;
	if (req != NULL) {
		if (get_names(c, req, "required", &n->required, &n->n_required) < 0)
			return -1;
		any = 1;
	}
	if ((r = get_schema(c, n, "additionalProperties", &n->additional_props)) < 0)
		return -1;
	any |= r;
	if ((r = get_schema(c, n, "propertyNames", &n->property_names)) < 0)
		return -1;
	any |= r;
	if ((r = get_count(c, n->json, "minProperties", &n->min_props)) < 0)
		return -1;
	any |= r;
	if ((r = get_count(c, n->json, "maxProperties", &n->max_props)) < 0)
		return -1;
	any |= r;
	if (deps != NULL) {
		if (!json_is_object(deps))
			return cfail(c, "`dependencies` must be an object");
		n->n_deps = json_object_size(deps);
		n->deps = jsv_alloc(c->jsv, (n->n_deps ? n->n_deps : 1) * sizeof *n->deps);
		old = loc_push(c, "dependencies");
		json_object_foreach((json_t *)deps, k, v)
		{
			n->deps[i].name = k;
			if (json_is_array(v)) {
				if (get_names(c, v, k, &n->deps[i].required, &n->deps[i].n_required) < 0)
					return -1;
			} else if (json_is_object(v) || json_is_boolean(v)) {
				if ((n->deps[i].schema = compile_sub(c, v, n->base, k)) == NULL)
					return -1;
			} else {
				loc_push(c, k);
				return cfail(c, "must be an array of names or a schema");
			}
			i++;
		}
		loc_pop(c, old);
		any = 1;
	}
	if (any)
		n->flags |= JSV_F_OBJECT;
	return 0;
}

/* Applicators: allOf anyOf oneOf not if/then/else. */
static int
compile_apply(struct cctx *c, struct jsv_node *n)
{
	int any = 0, r;

	if ((r = get_list(c, n, "allOf", &n->all_of)) < 0)
		return -1;
	any |= r;
	if ((r = get_list(c, n, "anyOf", &n->any_of)) < 0)
		return -1;
	any |= r;
	if ((r = get_list(c, n, "oneOf", &n->one_of)) < 0)
		return -1;
	any |= r;
	if ((r = get_schema(c, n, "not", &n->not_schema)) < 0)
		return -1;
	any |= r;
	if ((r = get_schema(c, n, "if", &n->if_schema)) < 0)
		return -1;
	any |= r;
	if (get_schema(c, n, "then", &n->then_schema) < 0 ||
		get_schema(c, n, "else", &n->else_schema) < 0)
		return -1;
	if (any)
		n->flags |= JSV_F_APPLY;
	return 0;
}

/* Compile a node whose json is set: every keyword, or just the $ref. */
static int
compile_node(struct cctx *c, struct jsv_node *n)
{
	const json_t *s = n->json, *v, *ref, *defs;
	const char *k;
	size_t old;

	n->state = JSV_DONE;
	if (json_is_boolean(s)) {
		n->flags = json_is_false(s) ? JSV_F_FALSE : 0;
		return 0;
	}
	if (!json_is_object(s))
		return cfail(c, "a schema must be an object or a boolean");
	if (c->nest >= JSV_MAX_NEST)
		return cfail(c, "schema nested too deeply");
	c->nest++;
	/* Draft-07: a $ref replaces all of its siblings. */
	if ((ref = json_object_get(s, "$ref")) != NULL) {
		c->nest--;
		if (!json_is_string(ref))
			return cfail(c, "`$ref` must be a string");
		n->ref = ref_resolve(c, n->base, json_string_value(ref));
		return n->ref == NULL ? -1 : 0;
	}
	if ((v = json_object_get(s, "type")) != NULL && compile_type(c, n, v) < 0)
		goto fail;
	if ((v = json_object_get(s, "enum")) != NULL) {
		if (!json_is_array(v)) {
			cfail(c, "`enum` must be an array");
			goto fail;
		}
		n->enum_values = v;
		n->flags |= JSV_F_ENUM;
	}
	if ((v = json_object_get(s, "const")) != NULL) {
		n->const_value = v;
		n->flags |= JSV_F_CONST;
	}
	if (compile_numeric(c, n) < 0 || compile_string(c, n) < 0 || compile_array(c, n) < 0 ||
		compile_object(c, n) < 0 || compile_apply(c, n) < 0)
		goto fail;
	/* Definitions are compiled (and so checked) even when nothing refers to them. */
	if ((defs = json_object_get(s, "definitions")) != NULL) {
		if (!json_is_object(defs)) {
			cfail(c, "`definitions` must be an object of schemas");
			goto fail;
		}
		old = loc_push(c, "definitions");
		json_object_foreach((json_t *)defs, k, v)
		{
			if (!json_is_object(v) && !json_is_boolean(v)) {
				loc_push(c, k);
				cfail(c, "must be a schema (object or boolean)");
				goto fail;
			}
			if (compile_sub(c, v, n->base, k) == NULL)
				goto fail;
		}
		loc_pop(c, old);
	}
	c->nest--;
	return 0;
fail:
	c->nest--;
	return -1;
}

/* Compile a subschema at key (NULL: no location segment), reusing its node if it has one. */
static struct jsv_node *
compile_sub(struct cctx *c, const json_t *json, const char *base, const char *key)
{
	struct jsv_node *n = map_get(&c->jsv->nodes, json);
	const char *b;
	size_t old = c->loclen;

	if (n != NULL)
		return n->state == JSV_BROKEN ? (cfail(c, "invalid schema"), NULL) : n;
	/* An $id inside changes the base; the scan has the result. */
	b = map_get(&c->jsv->bases, json);
	n = node_new(c, json, b != NULL ? b : base);
	if (key != NULL)
		old = loc_push(c, key);
	if (compile_node(c, n) < 0)
		return NULL;
	loc_pop(c, old);
	return n;
}

/* The single value a branch pins a property to (one-element enum, or const), or NULL. */
static const json_t *
pinned_value(const struct jsv_node *branch, const char *name)
{
	const struct jsv_prop key = {name, NULL}, *p;
	const struct jsv_node *s;

	if (branch->ref != NULL)
		branch = branch->ref;
	p = bsearch(&key, branch->props, branch->n_props, sizeof key, prop_cmp);
	if (p == NULL)
		return NULL;
	s = p->schema->ref != NULL ? p->schema->ref : p->schema;
	if (s->flags & JSV_F_CONST)
		return s->const_value;
	if ((s->flags & JSV_F_ENUM) && json_array_size(s->enum_values) == 1)
		return json_array_get(s->enum_values, 0);
	return NULL;
}

/*
 * Find the property most branches pin to one value (e.g. "type" or
 * "method"); it lets validation skip branches that cannot match and pick
 * the intended branch when reporting an error.
 */
static struct jsv_disc *
disc_build(struct jsv *jsv, const struct jsv_list *l)
{
	struct jsv_disc *d;
	const struct jsv_node *b;
	const char *best = NULL;
	size_t i, j, k, count, best_count = 0;

	for (i = 0; i < l->n && best == NULL; i++) {
		b = l->v[i]->ref != NULL ? l->v[i]->ref : l->v[i];
		for (j = 0; j < b->n_props; j++) {
			if (pinned_value(b, b->props[j].name) == NULL)
				continue;
			for (count = 0, k = 0; k < l->n; k++)
				count += pinned_value(l->v[k], b->props[j].name) != NULL;
			if (count >= 2 && count > best_count) {
				best = b->props[j].name;
				best_count = count;
			}
		}
	}
	if (best == NULL)
		return NULL;
	d = jsv_alloc(jsv, sizeof *d);
	d->name = best;
	d->values = jsv_alloc(jsv, l->n * sizeof *d->values);
	for (i = 0; i < l->n; i++)
		d->values[i] = pinned_value(l->v[i], best);
	return d;
}

/* After a round: collapse ref chains (rejecting pure cycles), then build discriminators. */
static int
finish_round(struct cctx *c)
{
	struct jsv_node *n, *t;
	size_t i, steps;

	for (i = 0; i < c->n_made; i++) {
		n = c->made[i];
		for (t = n->ref, steps = 0; t != NULL && t->ref != NULL; t = t->ref) {
			if (++steps > c->jsv->nodes.len) {
				loc_set(c, "#");
				return cfail(c, "$ref cycle with no schema in it");
			}
		}
		if (t != NULL)
			n->ref = t;
	}
	for (i = 0; i < c->n_made; i++) {
		n = c->made[i];
		if (n->any_of.n > 0)
			n->any_disc = disc_build(c->jsv, &n->any_of);
		if (n->one_of.n > 0)
			n->one_disc = disc_build(c->jsv, &n->one_of);
	}
	return 0;
}

/*
 * End a round: if it went well so far, compile queued ref targets until none
 * is left and finish; on failure mark the round's nodes broken.
 */
static int
round_end(struct cctx *c, int ok)
{
	struct jsv_node *n;
	size_t i;
	int r = -1;

	while (ok && c->n_work > 0) {
		c->n_work--;
		n = c->work[c->n_work].node;
		if (n->state != JSV_NEW)
			continue;
		if (c->jsv->nodes.len > JSV_MAX_NODES) {
			cfail(c, "schema too large");
			goto out;
		}
		loc_set(c, c->work[c->n_work].where);
		c->nest = 0;
		if (compile_node(c, n) < 0)
			goto out;
	}
	if (ok && finish_round(c) == 0)
		r = 0;
out:
	/* Booleans are shared singletons and always fine. */
	for (i = 0; r < 0 && i < c->n_made; i++) {
		if (!json_is_boolean(c->made[i]->json))
			c->made[i]->state = JSV_BROKEN;
	}
	free(c->work);
	free(c->made);
	c->work = NULL;
	c->made = NULL;
	c->n_work = c->n_made = 0;
	c->cap_work = c->cap_made = 0;
	return r;
}

/* Compile a schema document (see jsonschema.h). */
struct jsv *
jsv_compile_with(const json_t *doc, const struct jsv_options *opts, char **cause)
{
	struct jsv *jsv = xcalloc(1, sizeof *jsv), *result = NULL;
	struct cctx c;
	const char *base = opts != NULL && opts->base_uri != NULL ? opts->base_uri : "";
	const char *rbase;

	memset(&c, 0, sizeof c);
	c.jsv = jsv;
	if (opts != NULL) {
		jsv->load = opts->load;
		jsv->load_arg = opts->load_arg;
	}
	if (!json_is_object(doc) && !json_is_boolean(doc)) {
		cfail(&c, "a schema must be an object or a boolean");
		goto out;
	}
	jsv_own(jsv, json_incref((json_t *)doc));
	scan_document(jsv, base, doc);
	rbase = map_get(&jsv->bases, doc);
	jsv->root = node_new(&c, doc, rbase != NULL ? rbase : jsv_strdup(jsv, base));
	if (round_end(&c, compile_node(&c, jsv->root) == 0) < 0)
		goto out;
	result = jsv;
	jsv = NULL; /* transferred */
out:
	if (result == NULL && cause != NULL)
		*cause = c.cause != NULL ? c.cause : xstrdup("invalid schema");
	else
		free(c.cause);
	jsv_free(jsv);
	return result;
}

/* Compile a schema document with no base URI and no loader. */
struct jsv *
jsv_compile(const json_t *doc, char **cause)
{
	return jsv_compile_with(doc, NULL, cause);
}

/* The root schema's node. */
const struct jsv_node *
jsv_root(const struct jsv *jsv)
{
	return jsv->root;
}

/* Find (compiling on first use) the node at a URI reference into the document. */
const struct jsv_node *
jsv_lookup(struct jsv *jsv, const char *pointer)
{
	struct cctx c;
	struct jsv_node *n;

	memset(&c, 0, sizeof c);
	c.jsv = jsv;
	loc_set(&c, pointer);
	n = ref_resolve(&c, jsv->resources[0].uri, pointer);
	if (round_end(&c, n != NULL) < 0)
		n = NULL;
	free(c.cause);
	if (n != NULL && n->state != JSV_DONE)
		return NULL;
	return n;
}

/* Free a compiled document. */
void
jsv_free(struct jsv *jsv)
{
	struct jsv_chunk *c, *next;
	struct jsv_regex *rx;
	size_t i;

	if (jsv == NULL)
		return;
	for (rx = jsv->regexes; rx != NULL; rx = rx->next_all)
		regfree(&rx->re);
	if (jsv->utf8 != (locale_t)0)
		freelocale(jsv->utf8);
	for (i = 0; i < jsv->n_owned; i++)
		json_decref(jsv->owned[i]);
	free(jsv->owned);
	free(jsv->resources);
	map_free(&jsv->nodes);
	map_free(&jsv->bases);
	for (c = jsv->arena; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	free(jsv);
}
