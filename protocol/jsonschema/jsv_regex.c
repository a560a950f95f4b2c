/*
 * `pattern` support: ECMA-262 regex text rewritten as a POSIX extended regex.
 *
 * Only whether a match exists matters, so lazy quantifiers (*? +? ?? {n}?)
 * become greedy ones and (?:...) / (?<name>...) become plain groups without
 * changing any answer. \d \w \s and their negations become bracket
 * expressions (\s covers ASCII white space only); \b \B and backreferences
 * rely on the GNU extensions of glibc's regcomp. ECMA classes are re-emitted
 * in POSIX order (`]` first, `[` `^` `-` last). Refused with a cause:
 * lookaround, \p{...}, \k<name>, \0 and NUL, [] and [^], \D \W \S inside a
 * class, ranges whose ends are one of ] [ ^ -, and ranges reaching more than
 * 1024 code points past ASCII (glibc cannot take non-ASCII range ends under
 * C.UTF-8, so those are listed character by character).
 *
 * Regexes are compiled and run under a private C.UTF-8 locale (uselocale, so
 * nothing global changes) when it exists, so `.` and classes see code points.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsv_int.h"
#include "protocol/buf.h"
#include "protocol/utf8.h"
#include "protocol/xmalloc.h"

#define CLASS_MAX      256	   /* items in one bracket expression */
#define RANGE_LIST_MAX 1024	   /* non-ASCII code points a range may list */
#define REGEX_OUT_MAX  (256 << 10) /* the POSIX text of one pattern */

/*
 * The POSIX text being written. An append past REGEX_OUT_MAX is remembered rather than
 * checked at every call; the translation stops at the next step and refuses the pattern.
 */
struct jsv_regex_out {
	struct buf text;
	int toobig;
};

/* One member of a bracket expression. */
struct jsv_regex_citem {
	unsigned lo, hi; /* code point range (lo == hi: a single one) */
	const char *set; /* or a ready-made POSIX fragment such as "0-9" */
};

/* Append n bytes (or remember that they did not fit). */
static void
jsv_regex_add(struct jsv_regex_out *b, const char *s, size_t n)
{
	if (buf_add(&b->text, s, n) != 0)
		b->toobig = 1;
}

/* Append a C string. */
static void
jsv_regex_adds(struct jsv_regex_out *b, const char *s)
{
	jsv_regex_add(b, s, strlen(s));
}

/* Append a code point as UTF-8. */
static void
jsv_regex_add_cp(struct jsv_regex_out *b, unsigned cp)
{
	char u[4];

	jsv_regex_add(b, u, utf8_put_cp(cp, u));
}

/* Append a code point as a literal outside brackets (escaping ERE specials). */
static void
jsv_regex_add_literal(struct jsv_regex_out *b, unsigned cp)
{
	if (cp < 0x80 && strchr(".[]()*+?{}|^$\\", (int)cp) != NULL)
		jsv_regex_add(b, "\\", 1);
	jsv_regex_add_cp(b, cp);
}

/* Read n hex digits at s; -1 if they are not there. */
static long
jsv_regex_hex(const char *s, int n)
{
	long v = 0;
	int i, d;

	for (i = 0; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9')
			d = s[i] - '0';
		else if (s[i] >= 'a' && s[i] <= 'f')
			d = s[i] - 'a' + 10;
		else if (s[i] >= 'A' && s[i] <= 'F')
			d = s[i] - 'A' + 10;
		else
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Decode one UTF-8 code point at *s (advancing it); the text is valid UTF-8 from jansson. */
static unsigned
jsv_regex_utf8(const char **s)
{
	const unsigned char *p = (const unsigned char *)*s;
	unsigned cp;
	int n, i;

	if (p[0] < 0x80) {
		(*s)++;
		return p[0];
	}
	n = p[0] >= 0xf0 ? 3 : p[0] >= 0xe0 ? 2 : 1;
	cp = p[0] & (0x3f >> n);
	for (i = 1; i <= n && (p[i] & 0xc0) == 0x80; i++)
		cp = (cp << 6) | (p[i] & 0x3f);
	*s += i;
	return cp;
}

/*
 * Decode the character escape after a backslash at *s (pointing past the
 * backslash) that stands for one code point: \n \t \xHH \uHHHH \cX or an
 * escaped literal. Returns the code point, -1 if it is not such an escape.
 */
static long
jsv_regex_char_escape(const char **s)
{
	const char *p = *s;
	long v, lo;

	switch (*p) {
	case 'n':
		v = '\n';
		break;
	case 't':
		v = '\t';
		break;
	case 'r':
		v = '\r';
		break;
	case 'f':
		v = '\f';
		break;
	case 'v':
		v = '\v';
		break;
	case 'x':
		if ((v = jsv_regex_hex(p + 1, 2)) < 0)
			return -1;
		p += 2;
		break;
	case 'u':
		if ((v = jsv_regex_hex(p + 1, 4)) < 0)
			return -1;
		p += 4;
		/* A surrogate pair written as two escapes is one code point. */
		if (v >= 0xd800 && v < 0xdc00 && p[1] == '\\' && p[2] == 'u' &&
			(lo = jsv_regex_hex(p + 3, 4)) >= 0xdc00 && lo < 0xe000) {
			v = 0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00);
			p += 6;
		}
		break;
	case 'c':
		if (!((p[1] >= 'a' && p[1] <= 'z') || (p[1] >= 'A' && p[1] <= 'Z')))
			return -1;
		v = p[1] % 32;
		p++;
		break;
	default:
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			(*p >= '0' && *p <= '9'))
			return -1;
		v = (long)jsv_regex_utf8(&p);
		*s = p;
		return v;
	}
	*s = p + 1;
	return v;
}

/*
 * Emit one class item (range or single) in POSIX form. glibc refuses ranges
 * with non-ASCII ends under C.UTF-8, so that part of a range is listed one
 * code point at a time (jsv_regex_class bounds its width).
 */
static void
jsv_regex_class_emit(struct jsv_regex_out *b, const struct jsv_regex_citem *it)
{
	unsigned cp;

	if (it->set != NULL) {
		jsv_regex_adds(b, it->set);
		return;
	}
	if (it->hi == it->lo) {
		jsv_regex_add_cp(b, it->lo);
		return;
	}
	if (it->lo < 0x80) {
		jsv_regex_add_cp(b, it->lo);
		jsv_regex_add(b, "-", 1);
		jsv_regex_add_cp(b, it->hi < 0x80 ? it->hi : 0x7f);
	}
	for (cp = it->lo < 0x80 ? 0x80 : it->lo; cp <= it->hi && it->hi >= 0x80; cp++) {
		if (cp < 0xd800 || cp > 0xdfff)
			jsv_regex_add_cp(b, cp);
	}
}

/* Whether an item is exactly the single code point cp. */
static int
jsv_regex_is_single(const struct jsv_regex_citem *it, unsigned cp)
{
	return it->set == NULL && it->lo == cp && it->hi == cp;
}

/*
 * One member of a bracket expression at *p (advanced past it): an escape, a code point or a
 * range. -1 and *why on what POSIX cannot express.
 */
static int
jsv_regex_class_item(struct jsv_regex_citem *it, const char **p, const char **why)
{
	long cp, hi;

	it->set = NULL;
	if (**p == '\\') {
		(*p)++;
		if (**p == 'd' || **p == 'w' || **p == 's') {
			it->set = **p == 'd' ? "0-9" : **p == 'w' ? "A-Za-z0-9_" : " \t\n\r\f\v";
			(*p)++;
			return 0;
		}
		if (**p == 'D' || **p == 'W' || **p == 'S') {
			*why = "\\D \\W \\S inside a character class are not supported";
			return -1;
		}
		if (**p == 'b') {
			cp = '\b';
			(*p)++;
		} else if ((cp = jsv_regex_char_escape(p)) < 0) {
			*why = "unsupported escape in a character class";
			return -1;
		}
	} else
		cp = (long)jsv_regex_utf8(p);
	hi = cp;
	if ((*p)[0] == '-' && (*p)[1] != ']' && (*p)[1] != '\0') {
		(*p)++;
		if (**p == '\\') {
			(*p)++;
			if ((hi = jsv_regex_char_escape(p)) < 0) {
				*why = "unsupported range in a character class";
				return -1;
			}
		} else
			hi = (long)jsv_regex_utf8(p);
		if (hi < cp) {
			*why = "character class range out of order";
			return -1;
		}
		/* C strings hold no NUL, so a range from \x00 may start at 1. */
		if (cp == 0 && hi > 0)
			cp = 1;
		if (hi >= 0x80 && hi - (cp < 0x80 ? 0x80 : cp) >= RANGE_LIST_MAX) {
			*why = "non-ASCII ranges wider than 1024 characters are not supported";
			return -1;
		}
		if ((cp < 0x80 && strchr("][^-", (int)cp) != NULL) ||
			(hi < 0x80 && strchr("][^-", (int)hi) != NULL)) {
			*why = "ranges ending in ] [ ^ - are not supported";
			return -1;
		}
	}
	if (cp == 0) {
		*why = "NUL is not supported";
		return -1;
	}
	it->lo = (unsigned)cp;
	it->hi = (unsigned)hi;
	return 0;
}

/* Write the parsed items of a bracket expression in POSIX order: ']' first, '[' '^' '-' last. */
static void
jsv_regex_class_write(
	struct jsv_regex_out *b, const struct jsv_regex_citem *items, size_t n, int neg)
{
	int has_close = 0, has_open = 0, has_caret = 0, has_dash = 0, others = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (jsv_regex_is_single(&items[i], ']'))
			has_close = 1;
		else if (jsv_regex_is_single(&items[i], '['))
			has_open = 1;
		else if (jsv_regex_is_single(&items[i], '^'))
			has_caret = 1;
		else if (jsv_regex_is_single(&items[i], '-'))
			has_dash = 1;
		else
			others++;
	}
	/* A leading '^' would negate: "[^]" is only '^', "[^-]" is '^' and '-'. */
	if (!neg && has_caret && !has_close && !has_open && others == 0) {
		jsv_regex_adds(b, has_dash ? "[-^]" : "\\^");
		return;
	}
	jsv_regex_adds(b, neg ? "[^" : "[");
	if (has_close)
		jsv_regex_add(b, "]", 1);
	for (i = 0; i < n; i++) {
		if (jsv_regex_is_single(&items[i], ']') || jsv_regex_is_single(&items[i], '[') ||
			jsv_regex_is_single(&items[i], '^') || jsv_regex_is_single(&items[i], '-'))
			continue;
		jsv_regex_class_emit(b, &items[i]);
	}
	if (has_open)
		jsv_regex_add(b, "[", 1);
	if (has_caret)
		jsv_regex_add(b, "^", 1);
	if (has_dash)
		jsv_regex_add(b, "-", 1);
	jsv_regex_add(b, "]", 1);
}

/* Translate a bracket expression starting at *s (just past '['). */
static int
jsv_regex_class(struct jsv_regex_out *b, const char **s, const char **why)
{
	struct jsv_regex_citem items[CLASS_MAX];
	const char *p = *s;
	size_t n = 0;
	int neg = 0;

	if (*p == '^') {
		neg = 1;
		p++;
	}
	if (*p == ']') {
		*why = "[] and [^] are not supported";
		return -1;
	}
	while (*p != ']') {
		if (*p == '\0') {
			*why = "unterminated character class";
			return -1;
		}
		if (n == CLASS_MAX) {
			*why = "character class too long";
			return -1;
		}
		if (jsv_regex_class_item(&items[n], &p, why) != 0)
			return -1;
		n++;
	}
	*s = p + 1;
	jsv_regex_class_write(b, items, n, neg);
	return 0;
}

/* Length of a {n}, {n,} or {n,m} quantifier at s, 0 if s is not one. */
static size_t
jsv_regex_quantifier_len(const char *s)
{
	size_t i = 1;

	if (s[i] < '0' || s[i] > '9')
		return 0;
	while (s[i] >= '0' && s[i] <= '9')
		i++;
	if (s[i] == ',') {
		i++;
		while (s[i] >= '0' && s[i] <= '9')
			i++;
	}
	return s[i] == '}' ? i + 1 : 0;
}

/* Translate a backslash escape outside a class (s points past the backslash). */
static int
jsv_regex_escape(struct jsv_regex_out *b, const char **s, const char **why)
{
	const char *p = *s;
	long cp;

	switch (*p) {
	case 'd':
		jsv_regex_adds(b, "[0-9]");
		break;
	case 'D':
		jsv_regex_adds(b, "[^0-9]");
		break;
	case 'w':
		jsv_regex_adds(b, "[A-Za-z0-9_]");
		break;
	case 'W':
		jsv_regex_adds(b, "[^A-Za-z0-9_]");
		break;
	case 's':
		jsv_regex_adds(b, "[ \t\n\r\f\v]");
		break;
	case 'S':
		jsv_regex_adds(b, "[^ \t\n\r\f\v]");
		break;
	case 'b':
		jsv_regex_adds(b, "\\b");
		break;
	case 'B':
		jsv_regex_adds(b, "\\B");
		break;
	case '1':
	case '2':
	case '3':
	case '4':
	case '5':
	case '6':
	case '7':
	case '8':
	case '9':
		jsv_regex_add(b, "\\", 1);
		jsv_regex_add(b, p, 1);
		break;
	case 'p':
	case 'P':
		*why = "\\p{...} is not supported";
		return -1;
	case 'k':
		*why = "named backreferences are not supported";
		return -1;
	case '\0':
		*why = "trailing backslash";
		return -1;
	default:
		if ((cp = jsv_regex_char_escape(&p)) <= 0) {
			*why = cp == 0 ? "NUL is not supported" : "unsupported escape";
			return -1;
		}
		jsv_regex_add_literal(b, (unsigned)cp);
		*s = p;
		return 0;
	}
	*s = p + 1;
	return 0;
}

/*
 * Translate ECMA-262 regex text into POSIX ERE; -1 and *why on what POSIX cannot express, -1
 * with b->toobig set past REGEX_OUT_MAX.
 */
static int
jsv_regex_translate(const char *src, struct jsv_regex_out *b, const char **why)
{
	const char *p = src;
	size_t q;

	while (*p != '\0') {
		if (b->toobig)
			return -1;
		switch (*p) {
		case '\\':
			p++;
			if (jsv_regex_escape(b, &p, why) < 0)
				return -1;
			continue;
		case '[':
			p++;
			if (jsv_regex_class(b, &p, why) < 0)
				return -1;
			continue;
		case '(':
			if (p[1] == '?') {
				if (p[2] == ':')
					p += 3;
				else if (p[2] == '<' && p[3] != '=' && p[3] != '!' &&
					strchr(p, '>') != NULL)
					p = strchr(p, '>') + 1;
				else {
					*why = "lookaround assertions are not supported";
					return -1;
				}
			} else
				p++;
			jsv_regex_add(b, "(", 1);
			continue;
		case '*':
		case '+':
		case '?':
			jsv_regex_add(b, p, 1);
			p++;
			if (*p == '?')
				p++; /* lazy: same answer to "is there a match" */
			continue;
		case '{':
			if ((q = jsv_regex_quantifier_len(p)) > 0) {
				jsv_regex_add(b, p, q);
				p += q;
				if (*p == '?')
					p++;
			} else {
				jsv_regex_adds(b, "\\{");
				p++;
			}
			continue;
		case '}':
			jsv_regex_adds(b, "\\}");
			p++;
			continue;
		case '.':
			jsv_regex_adds(b, "[^\n\r]");
			p++;
			continue;
		default:
			jsv_regex_add(b, p, 1);
			p++;
		}
	}
	return b->toobig ? -1 : 0;
}

/* The private UTF-8 locale, created on first use; (locale_t)0 if the system has none. */
static locale_t
jsv_regex_locale(struct jsv *jsv)
{
	if (!jsv->utf8_tried) {
		jsv->utf8_tried = true;
		jsv->utf8 = newlocale(LC_CTYPE_MASK | LC_COLLATE_MASK, "C.UTF-8", (locale_t)0);
	}
	return jsv->utf8;
}

/* Compile an ECMA-262 pattern into rx (registered for regfree); -1 and *cause if unusable. */
int
jsv_regex_compile(struct jsv *jsv, struct jsv_regex *rx, const char *source, char **cause)
{
	struct jsv_regex_out b = {.toobig = 0};
	const char *why = NULL;
	locale_t loc = jsv_regex_locale(jsv), old = (locale_t)0;
	char err[128];
	int r = -1, rc;

	buf_init(&b.text, REGEX_OUT_MAX);
	if (jsv_regex_translate(source, &b, &why) < 0) {
		if (b.toobig)
			*cause = xasprintf("pattern `%s`: longer than %d bytes once translated",
				source, REGEX_OUT_MAX);
		else
			*cause = xasprintf("pattern `%s`: %s", source, why);
		goto out;
	}
	if (loc != (locale_t)0)
		old = uselocale(loc);
	rc = regcomp(&rx->re, buf_str(&b.text), REG_EXTENDED | REG_NOSUB);
	if (loc != (locale_t)0)
		uselocale(old);
	if (rc != 0) {
		regerror(rc, &rx->re, err, sizeof err);
		*cause = xasprintf("pattern `%s`: %s", source, err);
		goto out;
	}
	rx->source = source;
	rx->next_all = jsv->regexes;
	jsv->regexes = rx;
	r = 0;
out:
	buf_free(&b.text);
	return r;
}

/* Whether the string contains a match of rx. */
int
jsv_regex_match(const struct jsv *jsv, const struct jsv_regex *rx, const char *s)
{
	locale_t old = (locale_t)0;
	int rc;

	if (jsv->utf8 != (locale_t)0)
		old = uselocale(jsv->utf8);
	rc = regexec(&rx->re, s, 0, NULL, 0);
	if (jsv->utf8 != (locale_t)0)
		uselocale(old);
	return rc == 0;
}
