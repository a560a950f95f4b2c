/*
 * The jsv object (jsonschema.h, jsv_int.h): where a compiled schema's pieces live and how a
 * URI finds a schema: the arena (freed in one go by jsv_free), a pointer-keyed map, the list
 * of resources (documents and $id-named schemas), RFC 3986 reference resolution and JSON
 * pointers; and the public accessors jsv_root, jsv_lookup and jsv_free.
 *
 * The $id scan runs over a whole document before compiling it, following
 * only keyword positions that hold schemas (so an "$id" inside `enum` or a
 * property named "$id" is not one). It records each $id's absolute URI as
 * a resource and, in `bases`, every schema whose base URI differs from its
 * document's; a $ref target's base is found there.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsv_int.h"
#include "protocol/xmalloc.h"

#define JSV_CHUNK (64 * 1024)

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
jsv_map_slot(const struct jsv_map *m, const void *key)
{
	uint64_t h = (uint64_t)(uintptr_t)key;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h & (m->cap - 1);
}

/* Look a key up; NULL if absent. */
void *
jsv_map_get(const struct jsv_map *m, const void *key)
{
	size_t i;

	if (m->cap == 0)
		return NULL;
	for (i = jsv_map_slot(m, key); m->keys[i] != NULL; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return m->values[i];
	}
	return NULL;
}

/* Insert or replace a key, growing at half load. */
void
jsv_map_put(struct jsv_map *m, const void *key, void *value)
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
				jsv_map_put(m, okeys[i], ovalues[i]);
		}
		free(okeys);
		free(ovalues);
	}
	for (i = jsv_map_slot(m, key); m->keys[i] != NULL; i = (i + 1) & (m->cap - 1)) {
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
void
jsv_map_free(struct jsv_map *m)
{
	free(m->keys);
	free(m->values);
}

/* Keep a reference on a document until jsv_free(). */
void
jsv_own(struct jsv *jsv, json_t *doc)
{
	if (jsv->n_owned == jsv->cap_owned) {
		jsv->cap_owned = jsv->cap_owned ? jsv->cap_owned * 2 : 4;
		jsv->owned = xrealloc(jsv->owned, jsv->cap_owned * sizeof *jsv->owned);
	}
	jsv->owned[jsv->n_owned++] = doc;
}

/* Register a schema under a URI (first registration wins). */
void
jsv_resource_add(struct jsv *jsv, const char *uri, const json_t *root)
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
const json_t *
jsv_resource_find(const struct jsv *jsv, const char *uri)
{
	size_t i;

	for (i = 0; i < jsv->n_resources; i++) {
		if (strcmp(jsv->resources[i].uri, uri) == 0)
			return jsv->resources[i].root;
	}
	return NULL;
}

/* Length of a URI's scheme including ':' (0 if the reference is relative). */
size_t
jsv_uri_scheme_len(const char *s)
{
	size_t i;

	if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
		return 0;
	for (i = 1; s[i] != '\0'; i++) {
		if (s[i] == ':')
			return i + 1;
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
			    (s[i] >= '0' && s[i] <= '9') || s[i] == '+' || s[i] == '-' ||
			    s[i] == '.'))
			return 0;
	}
	return 0;
}

/*
 * Resolve a URI reference against a base (RFC 3986 without dot-segment
 * removal); returns a heap string.
 */
char *
jsv_uri_resolve(const char *base, const char *ref)
{
	size_t blen = strcspn(base, "#"), slen, alen, dlen;
	const char *p;

	if (jsv_uri_scheme_len(ref) > 0)
		return xstrdup(ref);
	if (ref[0] == '\0')
		return xstrndup(base, blen);
	if (ref[0] == '#')
		return xasprintf("%.*s%s", (int)blen, base, ref);
	slen = jsv_uri_scheme_len(base);
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
jsv_hexval(int ch)
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
const json_t *
jsv_pointer_follow(const json_t *root, const char *frag)
{
	const json_t *cur = root;
	char *buf = NULL, *tok, *end, *q;
	size_t i, n;
	int hi, lo;

	buf = xmalloc(strlen(frag) + 1);
	for (n = 0, i = 0; frag[i] != '\0'; i++) {
		if (frag[i] == '%' && (hi = jsv_hexval(frag[i + 1])) >= 0 &&
			(lo = jsv_hexval(frag[i + 2])) >= 0) {
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
			if (tok[i] == '~' && tok + i + 1 < end &&
				(tok[i + 1] == '0' || tok[i + 1] == '1')) {
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
jsv_each_sub(const json_t *schema, void (*fn)(const json_t *, void *), void *arg)
{
	/* One pass over the schema's own keys (most have 1-3), not a lookup per keyword. */
	static const char *single[] = {"additionalItems", "additionalProperties", "contains",
		"propertyNames", "not", "if", "then", "else", "items"};
	static const char *arrays[] = {"allOf", "anyOf", "oneOf", "items"};
	static const char *maps[] = {
		"properties", "patternProperties", "definitions", "dependencies"};
	const json_t *v, *e;
	const char *k, *k2;
	size_t i, j;

	json_object_foreach((json_t *)schema, k, v)
	{
		for (i = 0; i < nitems(single); i++)
			if (strcmp(k, single[i]) == 0 && (json_is_object(v) || json_is_boolean(v)))
				fn(v, arg);
		for (i = 0; i < nitems(arrays); i++)
			if (strcmp(k, arrays[i]) == 0)
				json_array_foreach(v, j, e) fn(e, arg);
		for (i = 0; i < nitems(maps); i++) {
			if (strcmp(k, maps[i]) != 0 || !json_is_object(v))
				continue;
			json_object_foreach((json_t *)v, k2, e)
			{
				if (json_is_object(e) || json_is_boolean(e))
					fn(e, arg);
			}
		}
	}
}

/* State of a $id scan. */
struct jsv_scan {
	struct jsv *jsv;
	const char *base;     /* base URI at this level */
	const char *doc_base; /* the document's own URI */
	int nest;
};

/* Scan one schema for $id, recording URIs and bases that differ from the document's. */
static void
jsv_scan_cb(const json_t *schema, void *arg)
{
	struct jsv_scan *s = arg, inner = *s;
	const json_t *id = json_object_get(schema, "$id");
	char *uri = NULL;
	size_t hash;

	if (!json_is_object(schema) || s->nest >= JSV_MAX_NEST)
		return;
	if (json_is_string(id) && json_object_get(schema, "$ref") == NULL) {
		uri = jsv_uri_resolve(s->base, json_string_value(id));
		jsv_resource_add(s->jsv, uri, schema);
		hash = strcspn(uri, "#");
		uri[hash] = '\0';
		inner.base = jsv_strdup(s->jsv, uri);
	}
	if (strcmp(inner.base, s->doc_base) != 0)
		jsv_map_put(&s->jsv->bases, schema, (void *)inner.base);
	inner.nest++;
	jsv_each_sub(schema, jsv_scan_cb, &inner);
	free(uri);
}

/* Register a document and scan it for $id. */
void
jsv_scan_document(struct jsv *jsv, const char *uri, const json_t *doc)
{
	struct jsv_scan s = {jsv, NULL, NULL, 0};

	s.doc_base = jsv_strdup(jsv, uri);
	s.base = s.doc_base;
	jsv_resource_add(jsv, uri, doc);
	jsv_scan_cb(doc, &s);
}

/* The root schema's node. */
const struct jsv_node *
jsv_root(const struct jsv *jsv)
{
	return jsv->root;
}

/* Find (compiling on first use, see jsv_compile.c) the node at a URI reference. */
const struct jsv_node *
jsv_lookup(struct jsv *jsv, const char *pointer)
{
	return jsv_compile_lookup(jsv, pointer);
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
	jsv_map_free(&jsv->nodes);
	jsv_map_free(&jsv->bases);
	for (c = jsv->arena; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	free(jsv);
}
