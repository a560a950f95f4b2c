/*
 * libFuzzer target for the in-place JSON scanner (protocol/jscan.c), with jansson as the
 * oracle. The input is arbitrary bytes, read three ways:
 *   - as JSON text: when jscan_value accepts it, jansson must accept the span, and jscan's walk
 *     (members with the last duplicate winning, elements, jscan_get, jscan_fields, strings via
 *     jscan_unescape / jscan_plain / jscan_str_is, integers via jscan_int, literals) must give
 *     jansson's tree exactly;
 *   - as JSON text jansson accepts: its compact dump, when it holds nothing jscan refuses on
 *     purpose (reals, 19+ digits, NUL, keys needing escapes, nesting past JSCAN_DEPTH), must
 *     be accepted by jscan and walk the same (the fast path must not refuse plain JSON);
 *   - as a string: when it is valid UTF-8, jscan_put_str must write json_dumps' bytes, and
 *     jscan must read them back to the input.
 * Any disagreement aborts (a finding).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "protocol/buf.h"
#include "protocol/jscan.h"

#define FUZZ_BUF (1u << 22) /* ceiling of the scratch buffers (input is at most 4 KB) */
#define FUZZ_INT (999999999999999999LL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_walk(struct jspan v, const json_t *j);

static json_t *
fuzz_load(const char *p, size_t n)
{
	json_error_t err;

	return json_loadb(p, n, JSON_DECODE_ANY, &err);
}

static void
fuzz_check(int ok)
{
	if (!ok)
		abort();
}

/* The span re-parsed by jansson is the value jansson holds. */
static void
fuzz_same_value(struct jspan v, const json_t *j)
{
	json_t *re = fuzz_load(v.p, (size_t)(v.end - v.p));

	fuzz_check(re != NULL && json_equal(re, j));
	json_decref(re);
}

static void
fuzz_walk_obj(struct jspan v, const json_t *j)
{
	const char *keys[JSCAN_FIELDS + 2];
	char *owned[JSCAN_FIELDS];
	struct jspan vals[JSCAN_FIELDS + 2], k, m, last;
	struct jscan_it it;
	size_t distinct = 0, nkeys = 0;

	fuzz_check(jscan_obj(&it, v) == 0);
	while (jscan_obj_next(&it, &k, &m)) {
		size_t kl = (size_t)(k.end - k.p);
		const json_t *jm = json_object_getn(j, k.p, kl);
		char *key = malloc(kl + 1);

		fuzz_check(key != NULL && jm != NULL && memchr(k.p, '\0', kl) == NULL);
		memcpy(key, k.p, kl);
		key[kl] = '\0';
		fuzz_check(jscan_key_is(k, key));
		fuzz_check(jscan_get(v, key, &last) && last.p >= m.p);
		if (last.p == m.p) {
			/* the last occurrence of the key: the value jansson keeps */
			fuzz_check(last.end == m.end);
			distinct++;
			fuzz_same_value(m, jm);
			fuzz_walk(m, jm);
			if (nkeys < JSCAN_FIELDS) {
				owned[nkeys] = key;
				keys[nkeys++] = key;
				key = NULL;
			}
		}
		free(key);
	}
	fuzz_check(distinct == json_object_size(j));
	keys[nkeys] = "\xff"; /* invalid UTF-8: never a key of an accepted text */
	keys[nkeys + 1] = NULL;
	fuzz_check(jscan_fields(v, keys, vals) == (int)nkeys);
	for (size_t i = 0; i < nkeys; i++) {
		fuzz_check(jscan_get(v, keys[i], &last));
		fuzz_check(vals[i].p == last.p && vals[i].end == last.end);
		free(owned[i]);
	}
	fuzz_check(vals[nkeys].p == NULL && !jscan_get(v, "\xff", &last));
}

static void
fuzz_walk_arr(struct jspan v, const json_t *j)
{
	struct jscan_it it;
	struct jspan e;
	size_t i = 0;

	fuzz_check(jscan_arr(&it, v) == 0);
	while (jscan_arr_next(&it, &e)) {
		const json_t *je = json_array_get(j, i++);

		fuzz_check(je != NULL);
		fuzz_same_value(e, je);
		fuzz_walk(e, je);
	}
	fuzz_check(i == json_array_size(j));
}

static void
fuzz_walk_str(struct jspan v, const json_t *j)
{
	const char *s = json_string_value(j);
	size_t n = json_string_length(j);
	int escaped = memchr(v.p, '\\', (size_t)(v.end - v.p)) != NULL;
	struct jspan body;
	struct buf b;

	buf_init(&b, FUZZ_BUF);
	fuzz_check(jscan_unescape(v, &b) == 0 && b.len == n);
	fuzz_check(n == 0 || memcmp(b.ptr, s, n) == 0);
	fuzz_check(memchr(s, '\0', n) == NULL); /* \u0000 is refused */
	buf_reset(&b);
	fuzz_check(jscan_str_is(v, s, &b));
	if (n > 0) {
		char *shorter = strndup(s, n - 1);

		fuzz_check(shorter != NULL && !jscan_str_is(v, shorter, &b));
		free(shorter);
	}
	fuzz_check((jscan_plain(v, &body) == 0) == !escaped);
	if (!escaped)
		fuzz_check((size_t)(body.end - body.p) == n && memcmp(body.p, s, n) == 0);
	buf_free(&b);
}

/* jscan's view of v against jansson's value j, recursively. */
static void
fuzz_walk(struct jspan v, const json_t *j)
{
	struct jscan_it it;
	struct jspan body;
	long long x;
	int is_int = jscan_int(v, &x) == 0;

	fuzz_check(json_is_integer(j) || !is_int);
	fuzz_check(json_is_object(j) || jscan_obj(&it, v) != 0);
	fuzz_check(json_is_array(j) || jscan_arr(&it, v) != 0);
	fuzz_check(json_is_string(j) || jscan_plain(v, &body) != 0);
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		fuzz_walk_obj(v, j);
		break;
	case JSON_ARRAY:
		fuzz_walk_arr(v, j);
		break;
	case JSON_STRING:
		fuzz_walk_str(v, j);
		break;
	case JSON_INTEGER:
		fuzz_check(is_int && x == json_integer_value(j));
		break;
	case JSON_TRUE:
		fuzz_check(jscan_is(v, "true"));
		break;
	case JSON_FALSE:
		fuzz_check(jscan_is(v, "false"));
		break;
	case JSON_NULL:
		fuzz_check(jscan_is(v, "null"));
		break;
	default:
		abort(); /* jscan accepted a real */
	}
}

/* Text jscan accepted: the span's edges, then the walk against jansson. */
static void
fuzz_accepted(const char *p, const char *end, struct jspan v, const char *e)
{
	json_t *j;
	const char *s = p;

	while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
		s++;
	fuzz_check(v.p == s && v.end == e && e > v.p && e <= end);
	fuzz_check(jscan_value(p, end, NULL) == e);
	j = fuzz_load(v.p, (size_t)(v.end - v.p));
	fuzz_check(j != NULL);
	fuzz_walk(v, j);
	json_decref(j);
}

/* Whether a string needs an escape in JSON (a key like that is refused on purpose). */
static int
fuzz_needs_escape(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == '"' || s[i] == '\\')
			return 1;
	return 0;
}

/* Whether jscan may refuse j on purpose (depth counts containers, as JSCAN_DEPTH does). */
static int
fuzz_refusable(const json_t *j, int depth)
{
	const char *key;
	size_t kl, i;
	json_t *m;

	switch (json_typeof(j)) {
	case JSON_OBJECT:
		if (depth >= JSCAN_DEPTH)
			return 1;
		json_object_keylen_foreach((json_t *)j, key, kl, m)
		{
			if (fuzz_needs_escape(key, kl) || fuzz_refusable(m, depth + 1))
				return 1;
		}
		return 0;
	case JSON_ARRAY:
		if (depth >= JSCAN_DEPTH)
			return 1;
		json_array_foreach(j, i, m)
		{
			if (fuzz_refusable(m, depth + 1))
				return 1;
		}
		return 0;
	case JSON_STRING:
		return memchr(json_string_value(j), '\0', json_string_length(j)) != NULL;
	case JSON_INTEGER:
		return json_integer_value(j) > FUZZ_INT || json_integer_value(j) < -FUZZ_INT;
	case JSON_REAL:
		return 1;
	default:
		return 0;
	}
}

/* jansson's compact dump of a tree jscan has no reason to refuse is accepted and walks alike. */
static void
fuzz_dump_accepted(const char *p, size_t n)
{
	json_t *j = fuzz_load(p, n);
	struct jspan v;
	const char *e;
	char *d;

	if (j == NULL || fuzz_refusable(j, 0)) {
		json_decref(j);
		return;
	}
	d = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
	fuzz_check(d != NULL);
	e = jscan_value(d, d + strlen(d), &v);
	fuzz_check(e != NULL && *e == '\0');
	fuzz_accepted(d, d + strlen(d), v, e);
	free(d);
	json_decref(j);
}

/* Valid UTF-8 input as a string: jscan_put_str writes what json_dumps writes, and reads back. */
static void
fuzz_put_str(const char *p, size_t n)
{
	json_t *j = json_stringn(p, n);
	struct jspan v;
	struct buf b, d;
	char *want;

	if (j == NULL)
		return; /* not valid UTF-8 */
	want = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
	fuzz_check(want != NULL);
	buf_init(&b, FUZZ_BUF);
	fuzz_check(jscan_put_str(&b, p, n) == 0);
	fuzz_check(b.len == strlen(want) && memcmp(b.ptr, want, b.len) == 0);
	if (memchr(p, '\0', n) == NULL) {
		fuzz_check(jscan_value(b.ptr, b.ptr + b.len, &v) == b.ptr + b.len);
		buf_init(&d, FUZZ_BUF);
		fuzz_check(jscan_unescape(v, &d) == 0 && d.len == n);
		fuzz_check(n == 0 || memcmp(d.ptr, p, n) == 0);
		buf_free(&d);
	}
	buf_free(&b);
	free(want);
	json_decref(j);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size, *e;
	struct jspan v = {NULL, NULL};

	e = jscan_value(p, end, &v);
	if (e != NULL)
		fuzz_accepted(p, end, v, e);
	else
		fuzz_check(v.p == NULL);
	fuzz_dump_accepted(p, size);
	fuzz_put_str(p, size);
	return 0;
}
