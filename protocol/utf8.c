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
