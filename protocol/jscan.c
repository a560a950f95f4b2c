/*
 * The in-place JSON scanner (jscan.h). Validation follows jansson's reader: strict UTF-8 (no
 * overlong forms, surrogates or code points past U+10FFFF), escapes with paired surrogates, no
 * control characters in strings. What jansson would read differently is refused instead.
 */
#include <errno.h>
#include <string.h>

#include "jscan.h"
#include "utf8.h"

static const char *jscan_at(const char *p, const char *end, int depth);

/* What ends a number or a literal. */
static int
jscan_delim(char c)
{
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\r' ||
		c == '\n' || c == ':';
}

static const char *
jscan_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

static int
jscan_hex(const char *p, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* Length of the valid UTF-8 sequence at p (lead byte >= 0x80), or 0. */
static size_t
jscan_utf8(const unsigned char *p, const unsigned char *end)
{
	unsigned c = p[0], cp;
	size_t n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		(cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Past a string starting at its opening quote; *plain is cleared when it has escapes. */
static const char *
jscan_string(const char *p, const char *end, int *plain)
{
	const unsigned char *u = (const unsigned char *)p + 1, *e = (const unsigned char *)end;

	if (plain != NULL)
		*plain = 1;
	while (u < e) {
		unsigned c = *u;

		if (c == '"')
			return (const char *)u + 1;
		if (c < 0x20)
			return NULL;
		if (c < 0x80 && c != '\\') {
			u++;
			continue;
		}
		if (c >= 0x80) {
			size_t n = jscan_utf8(u, e);

			if (n == 0)
				return NULL;
			u += n;
			continue;
		}
		if (plain != NULL)
			*plain = 0;
		if (e - u < 2)
			return NULL;
		if (strchr("\"\\/bfnrt", u[1]) != NULL && u[1] != '\0') {
			u += 2;
			continue;
		}
		unsigned cp, lo;

		if (u[1] != 'u' || e - u < 6 || jscan_hex((const char *)u + 2, &cp) != 0 || cp == 0)
			return NULL;
		u += 6;
		if (cp >= 0xdc00 && cp <= 0xdfff)
			return NULL;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			if (e - u < 6 || u[0] != '\\' || u[1] != 'u' ||
				jscan_hex((const char *)u + 2, &lo) != 0 || lo < 0xdc00 ||
				lo > 0xdfff)
				return NULL;
			u += 6;
		}
	}
	return NULL;
}

/* Past an integer of at most 18 digits; reals are refused. */
static const char *
jscan_number(const char *p, const char *end)
{
	const char *d;

	if (p < end && *p == '-')
		p++;
	d = p;
	if (p < end && *p == '0')
		p++;
	else
		while (p < end && *p >= '0' && *p <= '9')
			p++;
	if (p == d || p - d > 18)
		return NULL;
	if (p < end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E'))
		return NULL;
	return p;
}

/* Past the members of an object or the elements of an array (p after the bracket). */
static const char *
jscan_container(const char *p, const char *end, int depth, char close)
{
	p = jscan_ws(p, end);
	if (p < end && *p == close)
		return p + 1;
	for (;;) {
		if (close == '}') {
			int plain;

			if (p >= end || *p != '"' || (p = jscan_string(p, end, &plain)) == NULL ||
				!plain)
				return NULL;
			p = jscan_ws(p, end);
			if (p >= end || *p != ':')
				return NULL;
			p++;
		}
		if ((p = jscan_at(p, end, depth)) == NULL)
			return NULL;
		p = jscan_ws(p, end);
		if (p >= end)
			return NULL;
		if (*p == close)
			return p + 1;
		if (*p != ',')
			return NULL;
		p = jscan_ws(p + 1, end);
	}
}

/* Past whitespace and one value. */
static const char *
jscan_at(const char *p, const char *end, int depth)
{
	p = jscan_ws(p, end);
	if (p >= end)
		return NULL;
	switch (*p) {
	case '"':
		return jscan_string(p, end, NULL);
	case '{':
	case '[':
		if (depth >= JSCAN_DEPTH)
			return NULL;
		return jscan_container(p + 1, end, depth + 1, *p == '{' ? '}' : ']');
	case 't':
		return end - p >= 4 && memcmp(p, "true", 4) == 0 ? p + 4 : NULL;
	case 'f':
		return end - p >= 5 && memcmp(p, "false", 5) == 0 ? p + 5 : NULL;
	case 'n':
		return end - p >= 4 && memcmp(p, "null", 4) == 0 ? p + 4 : NULL;
	default:
		return jscan_number(p, end);
	}
}

const char *
jscan_value(const char *p, const char *end, struct jspan *out)
{
	const char *s = jscan_ws(p, end), *e = jscan_at(s, end, 0);

	if (e == NULL)
		return NULL;
	/* A literal or number runs into whatever follows it: that must be a delimiter. */
	if (e < end && !jscan_delim(*e))
		return NULL;
	if (out != NULL) {
		out->p = s;
		out->end = e;
	}
	return e;
}

/* Past a string known to be valid (at its opening quote). */
static const char *
jscan_skip_string(const char *p, const char *end)
{
	for (p++; p < end;) {
		const char *q = memchr(p, '"', (size_t)(end - p)), *bs;

		if (q == NULL)
			return NULL;
		/* an odd run of backslashes before it escapes the quote */
		for (bs = q; bs > p && bs[-1] == '\\'; bs--)
			;
		if ((q - bs) % 2 == 0)
			return q + 1;
		p = q + 1;
	}
	return NULL;
}

const char *
jscan_skip(const char *p, const char *end, struct jspan *out)
{
	const char *s = jscan_ws(p, end);
	int depth = 0;

	p = s;
	do {
		if (p >= end)
			return NULL;
		if (*p == '"') {
			if ((p = jscan_skip_string(p, end)) == NULL)
				return NULL;
			continue;
		}
		if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			depth--;
		} else if (depth == 0) {
			while (p < end && !jscan_delim(*p))
				p++;
			break;
		}
		p++;
	} while (depth > 0);
	out->p = s;
	out->end = p;
	return p;
}

static int
jscan_open(struct jscan_it *it, struct jspan v, char open)
{
	if (v.end - v.p < 2 || v.p[0] != open)
		return -1;
	it->p = v.p + 1;
	it->end = v.end - 1;
	it->first = 1;
	return 0;
}

int
jscan_obj(struct jscan_it *it, struct jspan v)
{
	return jscan_open(it, v, '{');
}

int
jscan_arr(struct jscan_it *it, struct jspan v)
{
	return jscan_open(it, v, '[');
}

/* Past the separator before the next entry; 0 at the end. */
static int
jscan_step(struct jscan_it *it)
{
	it->p = jscan_ws(it->p, it->end);
	if (!it->first) {
		if (it->p >= it->end || *it->p != ',')
			return 0;
		it->p = jscan_ws(it->p + 1, it->end);
	}
	it->first = 0;
	return it->p < it->end;
}

int
jscan_obj_next(struct jscan_it *it, struct jspan *key, struct jspan *val)
{
	const char *k;

	if (!jscan_step(it) || *it->p != '"' || (k = jscan_skip_string(it->p, it->end)) == NULL)
		return 0;
	key->p = it->p + 1;
	key->end = k - 1;
	k = jscan_ws(k, it->end);
	if (k >= it->end || *k != ':' || (it->p = jscan_skip(k + 1, it->end, val)) == NULL) {
		it->p = it->end;
		return 0;
	}
	return 1;
}

int
jscan_arr_next(struct jscan_it *it, struct jspan *val)
{
	if (!jscan_step(it) || (it->p = jscan_skip(it->p, it->end, val)) == NULL) {
		it->p = it->end;
		return 0;
	}
	return 1;
}

int
jscan_fields(struct jspan obj, const char *const keys[], struct jspan vals[])
{
	struct jscan_it it;
	struct jspan k, v;
	size_t n, len[JSCAN_FIELDS];
	int found = 0;

	for (n = 0; keys[n] != NULL && n < JSCAN_FIELDS; n++) {
		vals[n].p = vals[n].end = NULL;
		len[n] = strlen(keys[n]);
	}
	if (jscan_obj(&it, obj) != 0)
		return 0;
	while (jscan_obj_next(&it, &k, &v)) {
		size_t kl = (size_t)(k.end - k.p);

		for (size_t i = 0; i < n; i++)
			if (len[i] == kl && memcmp(keys[i], k.p, kl) == 0) {
				found += vals[i].p == NULL;
				vals[i] = v;
				break;
			}
	}
	return found;
}

int
jscan_key_is(struct jspan key, const char *name)
{
	size_t n = strlen(name);

	return (size_t)(key.end - key.p) == n && memcmp(key.p, name, n) == 0;
}

int
jscan_get(struct jspan obj, const char *key, struct jspan *val)
{
	struct jscan_it it;
	struct jspan k, v;
	int found = 0;

	if (jscan_obj(&it, obj) != 0)
		return 0;
	while (jscan_obj_next(&it, &k, &v))
		if (jscan_key_is(k, key)) {
			*val = v;
			found = 1;
		}
	return found;
}

int
jscan_str_is(struct jspan v, const char *s, struct buf *tmp)
{
	struct jspan body;
	size_t n = strlen(s);

	if (jscan_plain(v, &body) == 0)
		return (size_t)(body.end - body.p) == n && memcmp(body.p, s, n) == 0;
	buf_reset(tmp);
	return v.p[0] == '"' && jscan_unescape(v, tmp) == 0 && tmp->len == n &&
		memcmp(buf_str(tmp), s, n) == 0;
}

int
jscan_put_int(struct buf *b, long long x)
{
	char d[24], *p = d + sizeof d;
	unsigned long long u = x < 0 ? 0ull - (unsigned long long)x : (unsigned long long)x;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (x < 0)
		*--p = '-';
	return buf_add(b, p, (size_t)(d + sizeof d - p));
}

int
jscan_is(struct jspan v, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(v.end - v.p) == n && memcmp(v.p, lit, n) == 0;
}

int
jscan_plain(struct jspan v, struct jspan *body)
{
	if (v.end - v.p < 2 || v.p[0] != '"' || memchr(v.p + 1, '\\', (size_t)(v.end - v.p - 2)))
		return -1;
	body->p = v.p + 1;
	body->end = v.end - 1;
	return 0;
}

int
jscan_int(struct jspan v, long long *out)
{
	const char *p = v.p;
	int neg = 0;
	long long x = 0;

	if (p < v.end && *p == '-') {
		neg = 1;
		p++;
	}
	if (p >= v.end || v.end - p > 18)
		return -1;
	for (; p < v.end; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		x = x * 10 + (*p - '0');
	}
	*out = neg ? -x : x;
	return 0;
}

int
jscan_unescape(struct jspan v, struct buf *b)
{
	const char *p, *end = v.end - 1, *run;
	int r;

	if (v.end - v.p < 2 || v.p[0] != '"')
		return -1;
	for (p = run = v.p + 1; p < end;) {
		unsigned cp, lo;
		char u[4];

		if (*p != '\\') {
			p++;
			continue;
		}
		if ((r = buf_add(b, run, (size_t)(p - run))) != 0)
			return r;
		switch (p[1]) {
		case 'b':
			cp = '\b';
			break;
		case 'f':
			cp = '\f';
			break;
		case 'n':
			cp = '\n';
			break;
		case 'r':
			cp = '\r';
			break;
		case 't':
			cp = '\t';
			break;
		case 'u':
			if (jscan_hex(p + 2, &cp) != 0)
				return -1;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (jscan_hex(p + 8, &lo) != 0)
					return -1;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			}
			p += 4;
			break;
		default:
			cp = (unsigned char)p[1];
		}
		p += 2;
		run = p;
		if ((r = buf_add(b, u, utf8_put_cp(cp, u))) != 0)
			return r;
	}
	return buf_add(b, run, (size_t)(p - run));
}

int
jscan_put_str(struct buf *b, const char *s, size_t n)
{
	const char *run = s, *end = s + n;
	int r;

	if ((r = buf_addc(b, '"')) != 0)
		return r;
	for (const char *p = s; p < end; p++) {
		unsigned char c = (unsigned char)*p;
		char esc[8];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		if ((r = buf_add(b, run, (size_t)(p - run))) != 0)
			return r;
		run = p + 1;
		switch (c) {
		case '"':
		case '\\':
			esc[0] = '\\', esc[1] = (char)c, esc[2] = '\0';
			break;
		case '\b':
			memcpy(esc, "\\b", 3);
			break;
		case '\f':
			memcpy(esc, "\\f", 3);
			break;
		case '\n':
			memcpy(esc, "\\n", 3);
			break;
		case '\r':
			memcpy(esc, "\\r", 3);
			break;
		case '\t':
			memcpy(esc, "\\t", 3);
			break;
		default:
			memcpy(esc, "\\u00", 4);
			esc[4] = "0123456789ABCDEF"[c >> 4];
			esc[5] = "0123456789ABCDEF"[c & 15];
			esc[6] = '\0';
		}
		if ((r = buf_adds(b, esc)) != 0)
			return r;
	}
	if ((r = buf_add(b, run, (size_t)(end - run))) != 0)
		return r;
	return buf_addc(b, '"');
}

int
jscan_put(struct buf *b, struct jspan v)
{
	return buf_add(b, v.p, (size_t)(v.end - v.p));
}
