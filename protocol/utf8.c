/* UTF-8 validation and lossy repair (utf8.h), following RFC 3629's well-formed table. */
#include <string.h>

#include "utf8.h"
#include "xmalloc.h"

/* Length of the valid sequence at s (1..4), or 0 if invalid; `left` bytes are available. */
static size_t
utf8_seq(const unsigned char *s, size_t left, size_t *bad)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		*bad = 1;
		return 0;
	}
	for (i = 1; i < len; i++) {
		if (i >= left || s[i] < lo || s[i] > hi) {
			*bad = i; /* the maximal invalid subpart */
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return len;
}

size_t
utf8_valid_prefix(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, len, bad;

	while (i < n) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		if ((len = utf8_seq(p + i, n - i, &bad)) == 0)
			return i;
		i += len;
	}
	return n;
}

char *
utf8_lossy(const char *s, size_t n, size_t *outlen)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = utf8_valid_prefix(s, n), o, len, bad;
	char *out = xmalloc(i + (n - i) * 3 + 1);

	memcpy(out, s, i);
	o = i;
	while (i < n) {
		if ((len = utf8_seq(p + i, n - i, &bad)) != 0) {
			memcpy(out + o, s + i, len);
			o += len;
			i += len;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i += bad;
		}
	}
	out[o] = '\0';
	*outlen = o;
	return out;
}

/* The JSON escape of an ASCII byte, or NULL when it stands for itself. */
static const char *
utf8_json_escape(unsigned char c, char tmp[8])
{
	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\b':
		return "\\b";
	case '\f':
		return "\\f";
	case '\n':
		return "\\n";
	case '\r':
		return "\\r";
	case '\t':
		return "\\t";
	default:
		break;
	}
	if (c >= 0x20)
		return NULL;
	tmp[0] = '\\';
	tmp[1] = 'u';
	tmp[2] = '0';
	tmp[3] = '0';
	tmp[4] = "0123456789abcdef"[c >> 4];
	tmp[5] = "0123456789abcdef"[c & 15];
	tmp[6] = '\0';
	return tmp;
}

/* Bytes the JSON string body of s takes (lossy UTF-8, escapes), without the quotes. */
size_t
utf8_json_len(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, out = 0, len, bad;
	char tmp[8];
	const char *e;

	while (i < n) {
		if (p[i] < 0x80) {
			e = utf8_json_escape(p[i], tmp);
			out += e != NULL ? strlen(e) : 1;
			i++;
		} else if ((len = utf8_seq(p + i, n - i, &bad)) != 0) {
			out += len;
			i += len;
		} else {
			out += 3;
			i += bad;
		}
	}
	return out;
}

/*
 * Append the JSON string body of s (no quotes): invalid UTF-8 repaired as utf8_lossy does,
 * control characters, '"' and '\\' escaped as jansson writes them. Stops before the first
 * character that would take b past `limit` bytes; returns the input bytes consumed.
 */
size_t
utf8_json_append(struct buf *b, const char *s, size_t n, size_t limit)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run, len, bad, elen;
	char tmp[8];
	const char *e;

	while (i < n) {
		/* A run of plain characters goes in one copy. */
		for (run = i; run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' &&
			p[run] != '\\';
			run++)
			;
		if (run > i) {
			len = run - i;
			if (b->len + len > limit)
				len = limit > b->len ? limit - b->len : 0;
			if (len == 0 || buf_add(b, s + i, len) != 0)
				return i;
			i += len;
			if (i < run)
				return i;
			continue;
		}
		if (p[i] < 0x80) {
			e = utf8_json_escape(p[i], tmp);
			elen = strlen(e);
			if (b->len + elen > limit || buf_add(b, e, elen) != 0)
				return i;
			i++;
		} else if ((len = utf8_seq(p + i, n - i, &bad)) != 0) {
			if (b->len + len > limit || buf_add(b, s + i, len) != 0)
				return i;
			i += len;
		} else {
			if (b->len + 3 > limit || buf_add(b, "\xef\xbf\xbd", 3) != 0)
				return i;
			i += bad;
		}
	}
	return i;
}

/* One code point (<= U+10FFFF) as UTF-8 into out; returns its length (1-4). */
size_t
utf8_put_cp(unsigned cp, char out[4])
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}
