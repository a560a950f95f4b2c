/*
 * gitignore patterns and lists (gitignore.h). Matching is a small backtracking glob with
 * git's path rules: '*' and '?' never match '/', "**" between slashes matches any number of
 * directories. Lists are bounded (GI_FILE_MAX bytes, GI_RULES_MAX rules per file).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gitignore.h"
#include "protocol/xmalloc.h"

/* A bracket expression at p (after '['); sets *end past ']' and returns the verdict for c. */
static int
gi_class(const char *p, const char **end, unsigned char c)
{
	int neg = 0, hit = 0;

	if (*p == '!' || *p == '^') {
		neg = 1;
		p++;
	}
	const char *start = p;
	while (*p != '\0' && (*p != ']' || p == start)) {
		if (p[0] == '[' && p[1] == ':') {
			const char *close = strstr(p + 2, ":]");
			if (close != NULL) {
				size_t n = (size_t)(close - (p + 2));
				static const struct {
					const char *name;
					int (*fn)(int);
				} classes[] = {{"alpha", isalpha}, {"digit", isdigit},
					{"alnum", isalnum}, {"upper", isupper}, {"lower", islower},
					{"space", isspace}, {"punct", ispunct},
					{"xdigit", isxdigit}, {"print", isprint},
					{"graph", isgraph}, {"cntrl", iscntrl}, {"blank", isblank}};
				for (size_t i = 0; i < nitems(classes); i++) {
					if (strlen(classes[i].name) == n &&
						strncmp(classes[i].name, p + 2, n) == 0 &&
						classes[i].fn(c))
						hit = 1;
				}
				p = close + 2;
				continue;
			}
		}
		unsigned char lo = (unsigned char)*p;
		if (lo == '\\' && p[1] != '\0')
			lo = (unsigned char)*++p;
		p++;
		if (p[0] == '-' && p[1] != ']' && p[1] != '\0') {
			const char *q = p + 1;
			if (*q == '\\' && q[1] != '\0')
				q++;
			unsigned char hi = (unsigned char)*q;
			p = q + 1;
			if (c >= lo && c <= hi)
				hit = 1;
		} else if (c == lo) {
			hit = 1;
		}
	}
	if (*p != ']') {
		*end = NULL; /* unterminated: '[' is literal */
		return 0;
	}
	*end = p + 1;
	return hit != neg;
}

/* Glob match; '/' is only matched literally or by "**". */
int
gi_glob(const char *p, const char *s)
{
	const char *pat0 = p;

	while (*p != '\0') {
		if (p[0] == '*' && p[1] == '*' && (p == pat0 || p[-1] == '/') &&
			(p[2] == '/' || p[2] == '\0')) {
			if (p[2] == '\0')
				return 1;
			for (const char *t = s;;) {
				if (gi_glob(p + 3, t))
					return 1;
				t = strchr(t, '/');
				if (t == NULL)
					return 0;
				t++;
			}
		}
		switch (*p) {
		case '*':
			while (*p == '*')
				p++;
			for (;;) {
				if (gi_glob(p, s))
					return 1;
				if (*s == '\0' || *s == '/')
					return 0;
				s++;
			}
		case '?':
			if (*s == '\0' || *s == '/')
				return 0;
			p++, s++;
			break;
		case '[': {
			const char *end;
			if (*s == '\0' || *s == '/')
				return 0;
			int ok = gi_class(p + 1, &end, (unsigned char)*s);
			if (end == NULL) {
				if (*s != '[')
					return 0;
				p++, s++;
				break;
			}
			if (!ok)
				return 0;
			p = end, s++;
			break;
		}
		case '\\':
			if (p[1] != '\0')
				p++;
			/* fall through */
		default:
			if (*p != *s)
				return 0;
			p++, s++;
		}
	}
	return *s == '\0';
}

/* One line of an ignore file to a rule (0), or nothing (-1). */
static int
gi_rule_make(struct gi_rule *r, const char *line, size_t n)
{
	memset(r, 0, sizeof(*r));
	if (n == 0 || line[0] == '#')
		return -1;
	/* trailing spaces go, unless escaped */
	while (n > 0 && line[n - 1] == ' ' && !(n >= 2 && line[n - 2] == '\\'))
		n--;
	if (line[0] == '!') {
		r->negate = 1;
		line++, n--;
	} else if (n >= 2 && line[0] == '\\' && (line[1] == '!' || line[1] == '#')) {
		line++, n--;
	}
	if (n > 0 && line[n - 1] == '/') {
		r->dir_only = 1;
		n--;
	}
	if (n == 0)
		return -1;
	r->anchored = memchr(line, '/', n) != NULL;
	if (line[0] == '/') {
		line++, n--;
	}
	if (n == 0)
		return -1;
	r->glob = xstrndup(line, n);
	return 0;
}

/* Parse text into rules (bounded). */
void
gi_list_parse(struct gi_list *l, const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end && l->n < GI_RULES_MAX) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (n > 0 && p[n - 1] == '\r')
			n--;
		struct gi_rule r;
		if (gi_rule_make(&r, p, n) == 0) {
			l->rules = xrealloc(l->rules, (l->n + 1) * sizeof(*l->rules));
			l->rules[l->n++] = r;
		}
		p = nl ? nl + 1 : end;
	}
}

/* Read name under dirfd (at most GI_FILE_MAX bytes) and parse it. */
int
gi_list_load_at(struct gi_list *l, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	char *buf = xmalloc(GI_FILE_MAX);
	size_t len = 0;
	ssize_t k;
	while (len < GI_FILE_MAX && (k = read(fd, buf + len, GI_FILE_MAX - len)) != 0) {
		if (k < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		len += (size_t)k;
	}
	close(fd);
	gi_list_parse(l, buf, len);
	free(buf);
	return 0;
}

/* Free the rules; the list is empty afterwards. */
void
gi_list_free(struct gi_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->rules[i].glob);
	free(l->rules);
	l->rules = NULL;
	l->n = 0;
}

/* The last matching rule decides. */
enum gi_match
gi_list_match(const struct gi_list *l, const char *rel, int is_dir)
{
	const char *base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	for (size_t i = l->n; i-- > 0;) {
		const struct gi_rule *r = &l->rules[i];
		if (r->dir_only && !is_dir)
			continue;
		if (r->anchored ? gi_glob(r->glob, rel) : gi_glob(r->glob, base))
			return r->negate ? GI_WHITELIST : GI_IGNORE;
	}
	return GI_NONE;
}

/* core.excludesFile from one git config file (a heap path with ~ expanded), or NULL. */
static char *
gi_config_excludes(const char *cfg, const char *home)
{
	FILE *f = fopen(cfg, "re");
	char line[4096], *out = NULL;
	int in_core = 0;

	if (f == NULL)
		return NULL;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *s = line;
		while (isspace((unsigned char)*s))
			s++;
		if (*s == '[') {
			in_core = strncasecmp(s, "[core]", 6) == 0;
			continue;
		}
		if (!in_core || strncasecmp(s, "excludesfile", 12) != 0)
			continue;
		s += 12;
		while (isspace((unsigned char)*s))
			s++;
		if (*s++ != '=')
			continue;
		while (isspace((unsigned char)*s))
			s++;
		size_t n = strcspn(s, "\r\n");
		while (n > 0 && isspace((unsigned char)s[n - 1]))
			n--;
		if (n >= 2 && s[0] == '"' && s[n - 1] == '"')
			s++, n -= 2;
		free(out);
		if (n >= 2 && s[0] == '~' && s[1] == '/' && home)
			out = xasprintf("%s%.*s", home, (int)n - 1, s + 1);
		else
			out = xstrndup(s, n);
	}
	fclose(f);
	return out;
}

/* Where git looks for the global excludes file. */
char *
gi_global_path(void)
{
	const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
	char *xdgdir = xdg && *xdg ? xstrdup(xdg) : home ? xasprintf("%s/.config", home) : NULL;
	char *p = NULL;

	if (xdgdir != NULL) {
		char *cfg = xasprintf("%s/git/config", xdgdir);
		p = gi_config_excludes(cfg, home);
		free(cfg);
	}
	if (p == NULL && home != NULL) {
		char *cfg = xasprintf("%s/.gitconfig", home);
		p = gi_config_excludes(cfg, home);
		free(cfg);
	}
	if (p == NULL && xdgdir != NULL)
		p = xasprintf("%s/git/ignore", xdgdir);
	free(xdgdir);
	return p;
}
