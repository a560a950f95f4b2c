/*
 * Parser for the protocol tables' type expressions:
 *   expr    := postfix ('|' postfix)*
 *   postfix := atom ('[]' | '?')*
 *   atom    := ident | '{' expr '}' | '(' expr ')'
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "texpr.h"
#include "xmalloc.h"

struct tparser {
	const char *s;
	const char *p;
	char *cause;
};

static const char *const texpr_prims[] = {"string", "boolean", "number", "int32", "int64", "uint",
	"uint16", "uint32", "uint64", "any"};

static struct texpr *texpr_expr(struct tparser *tp);

/* True when name is a primitive type name. */
int
texpr_is_prim(const char *name)
{
	for (size_t i = 0; i < nitems(texpr_prims); i++)
		if (strcmp(name, texpr_prims[i]) == 0)
			return 1;
	return 0;
}

static struct texpr *
texpr_new(enum texpr_kind kind, struct texpr *a0, struct texpr *a1)
{
	struct texpr *t = xcalloc(1, sizeof *t);

	t->kind = kind;
	t->a[0] = a0;
	t->a[1] = a1;
	return t;
}

/* Free a parsed expression. */
void
texpr_free(struct texpr *t)
{
	if (t == NULL)
		return;
	texpr_free(t->a[0]);
	texpr_free(t->a[1]);
	free(t);
}

static void
tparser_skip(struct tparser *tp)
{
	while (*tp->p == ' ')
		tp->p++;
}

static struct texpr *
tparser_fail(struct tparser *tp, const char *what)
{
	if (tp->cause == NULL)
		tp->cause = xasprintf("type `%s`: %s at offset %td", tp->s, what, tp->p - tp->s);
	return NULL;
}

static struct texpr *
texpr_atom(struct tparser *tp)
{
	struct texpr *t;
	size_t n = 0;

	tparser_skip(tp);
	if (*tp->p == '{' || *tp->p == '(') {
		char close = *tp->p == '{' ? '}' : ')';
		int map = *tp->p == '{';

		tp->p++;
		if ((t = texpr_expr(tp)) == NULL)
			return NULL;
		tparser_skip(tp);
		if (*tp->p != close) {
			texpr_free(t);
			return tparser_fail(tp, "unbalanced bracket");
		}
		tp->p++;
		return map ? texpr_new(TX_MAP, t, NULL) : t;
	}
	while (isalnum((unsigned char)tp->p[n]) || tp->p[n] == '_')
		n++;
	if (n == 0 || n >= sizeof t->name)
		return tparser_fail(tp, "expected a type name");
	t = texpr_new(TX_REF, NULL, NULL);
	memcpy(t->name, tp->p, n);
	if (texpr_is_prim(t->name))
		t->kind = TX_PRIM;
	tp->p += n;
	return t;
}

static struct texpr *
texpr_postfix(struct tparser *tp)
{
	struct texpr *t = texpr_atom(tp);

	while (t != NULL) {
		tparser_skip(tp);
		if (tp->p[0] == '[' && tp->p[1] == ']') {
			tp->p += 2;
			t = texpr_new(TX_ARRAY, t, NULL);
		} else if (tp->p[0] == '?') {
			tp->p++;
			t = texpr_new(TX_NULL, t, NULL);
		} else
			break;
	}
	return t;
}

static struct texpr *
texpr_expr(struct tparser *tp)
{
	struct texpr *t = texpr_postfix(tp), *r;

	while (t != NULL) {
		tparser_skip(tp);
		if (*tp->p != '|')
			break;
		tp->p++;
		if ((r = texpr_postfix(tp)) == NULL) {
			texpr_free(t);
			return NULL;
		}
		t = texpr_new(TX_OR, t, r);
	}
	return t;
}

/* Parse expr; NULL with *cause (heap) when malformed. */
struct texpr *
texpr_parse(const char *expr, char **cause)
{
	struct tparser tp = {.s = expr, .p = expr};
	struct texpr *t = texpr_expr(&tp);

	if (t != NULL) {
		tparser_skip(&tp);
		if (*tp.p != '\0') {
			texpr_free(t);
			t = tparser_fail(&tp, "trailing characters");
		}
	}
	if (t == NULL)
		*cause = tp.cause;
	return t;
}
