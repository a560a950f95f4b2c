/*
 * The YAML subset skill files are written in: block mappings and sequences by indentation,
 * plain scalars (folded over continuation lines), single- and double-quoted scalars, literal
 * and folded block scalars (| >, with - or +), comments, flow sequences of scalars, anchors
 * and aliases of scalars, `...` ending the document. A flow sequence that does not close and
 * a flow mapping are taken as plain text, as upstream 0.169 does with its front matter.
 * Syntax errors read like libyaml's (upstream reports them through serde_yaml).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "skills_int.h"

#define YAML_TEXT_MAX (1u << 20)
#define YAML_DEPTH    32

struct yline {
	char *s; /* the line, without its end (owned by the parser's copy) */
	unsigned indent;
	unsigned no; /* 1-based */
};

struct yparser {
	struct yline *v;
	size_t n, i;
	char *cause;
	struct {
		char *name;
		struct yaml_node *node;
	} anchors[16];
	size_t nanchors;
};

static struct yaml_node *yaml_block(struct yparser *p, unsigned indent, int depth);

static struct yaml_node *
ynode(enum yaml_type type, unsigned line, unsigned col)
{
	struct yaml_node *n = xcalloc(1, sizeof *n);

	n->type = type;
	n->line = line;
	n->col = col;
	return n;
}

void
yaml_free(struct yaml_node *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->n; i++) {
		if (n->keys != NULL)
			free(n->keys[i]);
		yaml_free(n->kids[i]);
	}
	free(n->keys);
	free(n->kids);
	free(n->str);
	free(n);
}

const struct yaml_node *
yaml_get(const struct yaml_node *map, const char *key)
{
	if (map == NULL || map->type != YAML_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->keys[i], key) == 0)
			return map->kids[i];
	return NULL;
}

size_t
yaml_count(const struct yaml_node *map, const char *key)
{
	size_t c = 0;

	for (size_t i = 0; map != NULL && map->type == YAML_MAP && i < map->n; i++)
		c += strcmp(map->keys[i], key) == 0;
	return c;
}

static struct yaml_node *
ycopy(const struct yaml_node *n)
{
	struct yaml_node *c = ynode(n->type, n->line, n->col);

	c->str = n->str != NULL ? xstrdup(n->str) : NULL;
	return c;
}

static void
yerr(struct yparser *p, char *msg)
{
	if (p->cause == NULL)
		p->cause = msg;
	else
		free(msg);
}

/* A blank or comment-only line. */
static int
yblank(const struct yline *l)
{
	const char *s = l->s + l->indent;

	return *s == '\0' || *s == '#';
}

static void
yskip(struct yparser *p)
{
	while (p->i < p->n && yblank(&p->v[p->i]))
		p->i++;
}

/* Cut a plain scalar at its comment (" #") and trailing blanks, in place. */
static void
yplain_trim(char *s)
{
	char *h = s, *e;

	while ((h = strchr(h, '#')) != NULL) {
		if (h == s || h[-1] == ' ' || h[-1] == '\t') {
			*h = '\0';
			break;
		}
		h++;
	}
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
}

static int
yis_null(const char *s)
{
	return *s == '\0' || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
		strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

/* Append one decoded double-quoted character sequence at *sp to b. */
static void
yescape(const char **sp, struct buf *b)
{
	const char *s = *sp;
	unsigned long cp;
	char hex[9] = {0};
	int len = 0;

	switch (*s) {
	case 'n':
		buf_addc(b, '\n');
		break;
	case 't':
		buf_addc(b, '\t');
		break;
	case 'r':
		buf_addc(b, '\r');
		break;
	case '0':
		buf_addc(b, '\0');
		break;
	case ' ':
		buf_addc(b, ' ');
		break;
	case '/':
		buf_addc(b, '/');
		break;
	case 'x':
		len = 2;
		break;
	case 'u':
		len = 4;
		break;
	case 'U':
		len = 8;
		break;
	default:
		buf_addc(b, *s);
		break; /* \" \\ and the rest as themselves */
	}
	if (len > 0 && strlen(s + 1) >= (size_t)len) {
		memcpy(hex, s + 1, (size_t)len);
		cp = strtoul(hex, NULL, 16);
		if (cp < 0x80) {
			buf_addc(b, (char)cp);
		} else if (cp < 0x800) {
			buf_addc(b, (char)(0xc0 | (cp >> 6)));
			buf_addc(b, (char)(0x80 | (cp & 0x3f)));
		} else if (cp < 0x10000) {
			buf_addc(b, (char)(0xe0 | (cp >> 12)));
			buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
			buf_addc(b, (char)(0x80 | (cp & 0x3f)));
		} else {
			buf_addc(b, (char)(0xf0 | (cp >> 18)));
			buf_addc(b, (char)(0x80 | ((cp >> 12) & 0x3f)));
			buf_addc(b, (char)(0x80 | ((cp >> 6) & 0x3f)));
			buf_addc(b, (char)(0x80 | (cp & 0x3f)));
		}
		s += len;
	}
	*sp = s;
}

/*
 * A quoted scalar starting at p->v[p->i].s + col (0-based), possibly over several lines
 * (line breaks fold to spaces). *rest points after the closing quote. NULL on error.
 */
static struct yaml_node *
yquoted(struct yparser *p, size_t col, const char **rest)
{
	struct yline *l = &p->v[p->i];
	char q = l->s[col];
	const char *s = l->s + col + 1;
	struct yaml_node *n = ynode(YAML_STR, l->no, (unsigned)col + 1);
	unsigned start_line = l->no, start_col = (unsigned)col + 1;
	struct buf b;

	buf_init(&b, YAML_TEXT_MAX);
	for (;;) {
		for (; *s != '\0'; s++) {
			if (*s == q) {
				if (q == '\'' && s[1] == '\'') {
					buf_addc(&b, '\'');
					s++;
					continue;
				}
				n->str = buf_steal(&b, NULL);
				*rest = s + 1;
				return n;
			}
			if (q == '"' && *s == '\\' && s[1] != '\0') {
				s++;
				yescape(&s, &b);
				continue;
			}
			buf_addc(&b, *s);
		}
		if (p->i + 1 >= p->n)
			break;
		/* Folded: trailing blanks dropped, one space for the break (blank lines: \n). */
		while (b.len > 0 && (b.ptr[b.len - 1] == ' ' || b.ptr[b.len - 1] == '\t'))
			buf_truncate(&b, b.len - 1);
		l = &p->v[++p->i];
		if (l->s[l->indent] == '\0') {
			buf_addc(&b, '\n');
			s = l->s + l->indent;
			continue;
		}
		if (b.len > 0 && b.ptr[b.len - 1] != '\n')
			buf_addc(&b, ' ');
		s = l->s + l->indent;
	}
	yerr(p,
		xasprintf("found unexpected end of stream at line %u column %zu, while scanning a "
			  "quoted scalar at line %u column %u",
			l->no, strlen(l->s) + 1, start_line, start_col));
	buf_free(&b);
	yaml_free(n);
	return NULL;
}

/* A flow sequence of plain scalars ("[a, b]") when it closes on its line; else NULL. */
static struct yaml_node *
yflow_seq(const char *s, unsigned line, unsigned col)
{
	const char *end = strrchr(s, ']'), *c, *e;
	struct yaml_node *n;
	char *item;

	if (end == NULL || strchr(s + 1, '[') != NULL || strchr(s, '{') != NULL)
		return NULL;
	for (c = end + 1; *c == ' ' || *c == '\t'; c++)
		;
	if (*c != '\0' && *c != '#')
		return NULL;
	n = ynode(YAML_SEQ, line, col);
	for (c = s + 1; c < end;) {
		while (c < end && (*c == ' ' || *c == ','))
			c++;
		if (c >= end)
			break;
		for (e = c; e < end && *e != ','; e++)
			;
		item = xstrndup(c, (size_t)(e - c));
		yplain_trim(item);
		n->kids = xrealloc(n->kids, (n->n + 1) * sizeof *n->kids);
		n->kids[n->n] = ynode(YAML_STR, line, col + (unsigned)(c - s));
		n->kids[n->n++]->str = item;
		c = e;
	}
	return n;
}

/* A block scalar (| or >) whose header is hdr; its lines are those below indented more. */
static struct yaml_node *
yblock_scalar(struct yparser *p, const char *hdr, unsigned parent)
{
	int folded = *hdr == '>', chomp = 0; /* -1 strip, 0 clip, +1 keep */
	unsigned line = p->v[p->i].no, ind = 0;
	struct yaml_node *n = ynode(YAML_STR, line, 1);
	size_t last = 0;
	struct buf b;
	int prev_text = 0;

	for (const char *h = hdr + 1; *h != '\0' && *h != ' ' && *h != '#'; h++)
		if (*h == '-')
			chomp = -1;
		else if (*h == '+')
			chomp = 1;
	buf_init(&b, YAML_TEXT_MAX);
	for (p->i++; p->i < p->n; p->i++) {
		struct yline *l = &p->v[p->i];

		if (l->s[l->indent] == '\0') {
			buf_addc(&b, '\n');
			prev_text = 0;
			continue;
		}
		if (l->indent <= parent)
			break;
		if (ind == 0)
			ind = l->indent;
		if (l->indent < ind)
			break;
		if (folded && prev_text && l->indent == ind && b.len > 0 &&
			b.ptr[b.len - 1] == '\n')
			b.ptr[b.len - 1] = ' ';
		buf_adds(&b, l->s + ind);
		buf_addc(&b, '\n');
		last = b.len;
		prev_text = l->indent == ind;
	}
	if (chomp <= 0) /* clip: one line break; strip: none */
		buf_truncate(&b, last > 0 && chomp == 0 ? last : (last > 0 ? last - 1 : 0));
	n->str = buf_steal(&b, NULL);
	return n;
}

/* The value written after "key:" or "- " on the current line, at text (column col). */
static struct yaml_node *
yvalue(struct yparser *p, const char *text, unsigned indent, int depth)
{
	struct yline *l = &p->v[p->i];
	unsigned col = (unsigned)(text - l->s) + 1;
	struct yaml_node *n;
	const char *rest, *anchor = NULL;
	size_t alen = 0;
	char *s;
	struct buf b;

	if (*text == '&') { /* an anchor on a scalar */
		anchor = text + 1;
		alen = strcspn(anchor, " \t");
		text = anchor + alen;
		while (*text == ' ' || *text == '\t')
			text++;
		col = (unsigned)(text - l->s) + 1;
	}
	if (*text == '*') {
		size_t len = strcspn(text + 1, " \t#");

		for (size_t i = 0; i < p->nanchors; i++)
			if (strlen(p->anchors[i].name) == len &&
				strncmp(p->anchors[i].name, text + 1, len) == 0) {
				p->i++;
				return ycopy(p->anchors[i].node);
			}
		yerr(p, xasprintf("unknown anchor at line %u column %u", l->no, col));
		return NULL;
	}
	if (*text == '\0' || *text == '#') {
		p->i++;
		yskip(p);
		if (p->i < p->n &&
			(p->v[p->i].indent > indent ||
				(p->v[p->i].indent == indent && p->v[p->i].s[indent] == '-' &&
					(p->v[p->i].s[indent + 1] == ' ' ||
						p->v[p->i].s[indent + 1] == '\0'))))
			return yaml_block(p, p->v[p->i].indent, depth + 1);
		return ynode(YAML_NULL, l->no, col);
	}
	if (*text == '|' || *text == '>')
		return yblock_scalar(p, text, indent);
	if (*text == '"' || *text == '\'') {
		if ((n = yquoted(p, (size_t)(text - l->s), &rest)) == NULL)
			return NULL;
		p->i++;
	} else if (*text == '[' && (n = yflow_seq(text, l->no, col)) != NULL) {
		p->i++;
	} else {
		/* A plain scalar, folded over the lines below indented more than its key. */
		buf_init(&b, YAML_TEXT_MAX);
		s = xstrdup(text);
		yplain_trim(s);
		buf_adds(&b, s);
		free(s);
		for (p->i++; p->i < p->n; p->i++) {
			struct yline *c = &p->v[p->i];

			if (yblank(c))
				continue;
			if (c->indent <= indent)
				break;
			s = xstrdup(c->s + c->indent);
			yplain_trim(s);
			buf_addc(&b, ' ');
			buf_adds(&b, s);
			free(s);
		}
		s = buf_steal(&b, NULL);
		n = ynode(yis_null(s) ? YAML_NULL : YAML_STR, l->no, col);
		if (n->type == YAML_STR)
			n->str = s;
		else
			free(s);
	}
	if (anchor != NULL && n->type != YAML_MAP && n->type != YAML_SEQ &&
		p->nanchors < nitems(p->anchors)) {
		p->anchors[p->nanchors].name = xstrndup(anchor, alen);
		p->anchors[p->nanchors++].node = ycopy(n);
	}
	return n;
}

/* The key of a mapping line (quoted or plain) and where its value starts; NULL if none. */
static char *
ykey(struct yparser *p, struct yline *l, const char **value)
{
	const char *s = l->s + l->indent, *c;
	struct yaml_node *q;
	size_t save = p->i;
	char *key;

	if (*s == '"' || *s == '\'') {
		if ((q = yquoted(p, (size_t)(s - l->s), &c)) == NULL || p->i != save) {
			yaml_free(q);
			p->i = save;
			free(p->cause);
			p->cause = NULL;
			return NULL;
		}
		while (*c == ' ')
			c++;
		if (*c != ':') {
			yaml_free(q);
			return NULL;
		}
		key = q->str;
		q->str = NULL;
		yaml_free(q);
		c++;
	} else {
		for (c = s; *c != '\0'; c++)
			if (*c == ':' && (c[1] == ' ' || c[1] == '\t' || c[1] == '\0'))
				break;
		if (*c == '\0' || c == s)
			return NULL;
		key = xstrndup(s, (size_t)(c - s));
		yplain_trim(key);
		c++;
	}
	while (*c == ' ' || *c == '\t')
		c++;
	*value = c;
	return key;
}

/* A block mapping whose keys stand at indent. */
static struct yaml_node *
ymap(struct yparser *p, unsigned indent, int depth)
{
	struct yaml_node *m = ynode(YAML_MAP, p->v[p->i].no, indent + 1), *v;
	const char *value;
	char *key;

	for (yskip(p); p->i < p->n; yskip(p)) {
		struct yline *l = &p->v[p->i];

		if (l->indent < indent)
			break;
		if (l->indent > indent) {
			yerr(p,
				xasprintf("mapping values are not allowed in this context at line "
					  "%u column %u",
					l->no, l->indent + 1));
			break;
		}
		if ((key = ykey(p, l, &value)) == NULL) {
			unsigned next = p->i + 1 < p->n ? p->v[p->i + 1].no : l->no + 1;

			yerr(p,
				xasprintf("could not find expected ':' at line %u column 1, while "
					  "scanning a simple key at line %u column %u",
					next, l->no, l->indent + 1));
			break;
		}
		if ((v = yvalue(p, value, indent, depth)) == NULL) {
			free(key);
			break;
		}
		m->keys = xrealloc(m->keys, (m->n + 1) * sizeof *m->keys);
		m->kids = xrealloc(m->kids, (m->n + 1) * sizeof *m->kids);
		m->keys[m->n] = key;
		m->kids[m->n++] = v;
	}
	return m;
}

/* A block sequence whose dashes stand at indent. */
static struct yaml_node *
yseq(struct yparser *p, unsigned indent, int depth)
{
	struct yaml_node *q = ynode(YAML_SEQ, p->v[p->i].no, indent + 1), *v;

	for (yskip(p); p->i < p->n && p->cause == NULL; yskip(p)) {
		struct yline *l = &p->v[p->i];
		char *s = l->s + indent;

		if (l->indent != indent || s[0] != '-' || (s[1] != ' ' && s[1] != '\0'))
			break;
		if (s[1] == '\0') {
			v = yvalue(p, s + 1, indent, depth);
		} else {
			/* "- key: v" is a mapping one column in: blank the dash and read it there.
			 */
			s[0] = ' ';
			while (l->s[l->indent] == ' ')
				l->indent++;
			v = yaml_block(p, l->indent, depth + 1);
		}
		if (v == NULL)
			break;
		q->kids = xrealloc(q->kids, (q->n + 1) * sizeof *q->kids);
		q->kids[q->n++] = v;
	}
	return q;
}

static struct yaml_node *
yaml_block(struct yparser *p, unsigned indent, int depth)
{
	struct yline *l;
	const char *value;
	char *key;

	yskip(p);
	if (p->i >= p->n)
		return ynode(YAML_NULL, 1, 1);
	if (depth > YAML_DEPTH) {
		yerr(p, xstrdup("recursion limit exceeded"));
		return NULL;
	}
	l = &p->v[p->i];
	if (l->s[indent] == '-' && (l->s[indent + 1] == ' ' || l->s[indent + 1] == '\0'))
		return yseq(p, indent, depth);
	if ((key = ykey(p, l, &value)) != NULL) {
		free(key);
		return ymap(p, indent, depth);
	}
	return yvalue(p, l->s + indent, indent > 0 ? indent - 1 : 0, depth);
}

struct yaml_node *
yaml_parse(const char *text, char **cause)
{
	struct yparser p = {0};
	struct yaml_node *doc;
	char *copy = xstrdup(text), *line = copy, *nl;
	unsigned no = 0;

	for (; line != NULL; line = nl) {
		if ((nl = strchr(line, '\n')) != NULL)
			*nl++ = '\0';
		if (nl == NULL && *line == '\0' && no > 0)
			break;
		if (*line != '\0' && line[strlen(line) - 1] == '\r')
			line[strlen(line) - 1] = '\0';
		if (strcmp(line, "...") == 0)
			break;
		p.v = xrealloc(p.v, (p.n + 1) * sizeof *p.v);
		p.v[p.n].s = line;
		p.v[p.n].no = ++no;
		p.v[p.n].indent = (unsigned)strspn(line, " ");
		p.n++;
	}
	yskip(&p);
	doc = yaml_block(&p, p.i < p.n ? p.v[p.i].indent : 0, 0);
	yskip(&p);
	/* A document that is a plain scalar folds the lines below it up to a key's ": " (what
	 * libyaml reads before serde refuses the type). */
	while (p.cause == NULL && doc != NULL && doc->type == YAML_STR && p.i < p.n) {
		const char *l = p.v[p.i].s + p.v[p.i].indent, *colon = strstr(l, ": ");
		char *more = xasprintf(
			"%s %.*s", doc->str, (int)(colon != NULL ? colon - l : (long)strlen(l)), l);

		free(doc->str);
		doc->str = more;
		p.i = colon != NULL ? p.n : p.i + 1;
	}
	if (p.cause == NULL && p.i < p.n)
		p.cause = xasprintf("did not find expected <document start> at line %u column %u",
			p.v[p.i].no, p.v[p.i].indent + 1);
	for (size_t i = 0; i < p.nanchors; i++) {
		free(p.anchors[i].name);
		yaml_free(p.anchors[i].node);
	}
	free(p.v);
	free(copy);
	if (p.cause != NULL) {
		yaml_free(doc);
		*cause = p.cause;
		return NULL;
	}
	return doc;
}
