/*
 * Table tests for the apply_patch parser (server/agent/patch/apply_patch_parse.c): valid patches
 * rendered as a compact dump of their hunks, malformed ones with upstream's exact message
 * (the cases of upstream's parser.rs tests, plus leniencies and bounds).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/patch/apply_patch_int.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

struct parse_case {
	const char *name;
	const char *text;
	const char *dump;  /* expected hunks, when it parses */
	const char *error; /* expected message, when it does not */
};

/* Render a span, with newlines as "\n" so a dump stays one line. */
static void
dump_span(struct buf *b, const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] == '\n')
			buf_adds(b, "\\n");
		else
			buf_addc(b, p[i]);
}

static void
dump_lines(struct buf *b, const char *tag, const struct patch_span *l, size_t n)
{
	size_t i;

	buf_adds(b, tag);
	for (i = 0; i < n; i++) {
		buf_adds(b, i ? "/" : "");
		dump_span(b, l[i].p, l[i].n);
	}
}

/*
 * "A path=contents", "D path", "U path[>move]{@@ctx|old:a/b|new:a/c|eof}..." joined by "; ".
 */
static char *
dump_patch(const struct patch *p)
{
	struct buf b;
	size_t i, k;

	buf_init(&b, 1 << 20);
	for (i = 0; i < p->nhunks; i++) {
		const struct patch_hunk *h = &p->hunks[i];

		buf_adds(&b, i ? "; " : "");
		buf_printf(&b, "%c %s", "ADU"[h->kind], h -> path);
		if (h->kind == APPLY_PATCH_ADD) {
			buf_addc(&b, '=');
			dump_span(&b, h->contents, h->contents_len);
		}
		if (h->move != NULL)
			buf_printf(&b, ">%s", h->move);
		for (k = 0; k < h->nchunks; k++) {
			const struct patch_chunk *c = &h->chunks[k];

			buf_adds(&b, "{@@");
			if (c->has_context)
				dump_span(&b, c->context.p, c->context.n);
			dump_lines(&b, "|old:", c->old, c->nold);
			dump_lines(&b, "|new:", c->new, c->nnew);
			buf_adds(&b, c->eof ? "|eof}" : "}");
		}
	}
	return buf_steal(&b, NULL);
}

#define VALID_HUNK_HEADERS                                                                         \
	" is not a valid hunk header. Valid hunk headers: '*** Add File: {path}', '*** Delete "    \
	"File: {path}', '*** Update File: {path}'"
#define EVERY_LINE                                                                                 \
	". Every line should start with ' ' (context line), '+' (added line), or '-' (removed "    \
	"line)"
#define UPD "*** Begin Patch\n*** Update File: file2.py\n import foo\n+bar\n*** End Patch"

static const struct parse_case cases[] = {
	{"no begin", "bad", NULL,
		"invalid patch: The first line of the patch must be '*** Begin Patch'"},
	{"no end", "*** Begin Patch\nbad", NULL,
		"invalid patch: The last line of the patch must be '*** End Patch'"},
	{"empty text", "  \n ", NULL,
		"invalid patch: The last line of the patch must be '*** End Patch'"},
	{"begin only", "*** Begin Patch", NULL,
		"invalid patch: The last line of the patch must be '*** End Patch'"},
	{"padded markers", "*** Begin Patch \n*** Add File: foo\n+hi\n *** End Patch",
		"A foo=hi\\n", NULL},
	{"no hunks", "*** Begin Patch\n*** End Patch", "", NULL},
	{"empty update", "*** Begin Patch\n*** Update File: test.py\n*** End Patch", NULL,
		"invalid hunk at line 2, Update file hunk for path 'test.py' is empty"},
	{"all kinds",
		"*** Begin Patch\n*** Add File: path/add.py\n+abc\n+def\n*** Delete File: "
		"path/delete.py\n*** Update File: path/update.py\n*** Move to: path/update2.py\n@@ "
		"def f():\n-    pass\n+    return 123\n*** End Patch",
		"A path/add.py=abc\\ndef\\n; D path/delete.py; U path/update.py>path/update2.py{@@def "
		"f():|old:    pass|new:    return 123}",
		NULL},
	{"update then add",
		"*** Begin Patch\n*** Update File: file.py\n@@\n+line\n*** Add File: "
		"other.py\n+content\n*** End Patch",
		"U file.py{@@|old:|new:line}; A other.py=content\\n", NULL},
	{"first chunk without @@", UPD, "U file2.py{@@|old:import foo|new:import foo/bar}", NULL},
	{"heredoc", "<<EOF\n" UPD "\nEOF\n", "U file2.py{@@|old:import foo|new:import foo/bar}",
		NULL},
	{"heredoc single quoted", "<<'EOF'\n" UPD "\nEOF\n",
		"U file2.py{@@|old:import foo|new:import foo/bar}", NULL},
	{"heredoc double quoted", "<<\"EOF\"\n" UPD "\nEOF\n",
		"U file2.py{@@|old:import foo|new:import foo/bar}", NULL},
	{"heredoc mismatched quotes", "<<\"EOF'\n" UPD "\nEOF\n", NULL,
		"invalid patch: The first line of the patch must be '*** Begin Patch'"},
	{"heredoc without end marker", "<<EOF\n*** Begin Patch\n*** Update File: file2.py\nEOF\n",
		NULL, "invalid patch: The last line of the patch must be '*** End Patch'"},
	{"bad hunk header", "*** Begin Patch\n*** Frobnicate File: x\n*** End Patch", NULL,
		"invalid hunk at line 2, '*** Frobnicate File: x'" VALID_HUNK_HEADERS},
	{"bad header after add", "*** Begin Patch\n*** Add File: a\n+x\n*** Bogus\n*** End Patch",
		NULL, "invalid hunk at line 4, '*** Bogus'" VALID_HUNK_HEADERS},
	{"unexpected chunk line", "*** Begin Patch\n*** Update File: f\n@@\nbad\n*** End Patch",
		NULL,
		"invalid hunk at line 4, Unexpected line found in update hunk: 'bad'" EVERY_LINE},
	{"@@ without lines", "*** Begin Patch\n*** Update File: f\n@@\n*** End Patch", NULL,
		"invalid hunk at line 4, Update hunk does not contain any lines"},
	{"@@ then end of file",
		"*** Begin Patch\n*** Update File: f\n@@\n*** End of File\n*** End "
		"Patch",
		NULL, "invalid hunk at line 4, Update hunk does not contain any lines"},
	{"second chunk needs @@",
		"*** Begin Patch\n*** Update File: f\n@@\n-a\n+b\nxyz\n*** End Patch", NULL,
		"invalid hunk at line 6, Expected update hunk to start with a @@ context marker, "
		"got: 'xyz'"},
	{"end of file marker",
		"*** Begin Patch\n*** Update File: f\n@@\n+line\n*** End of File\n*** End Patch",
		"U f{@@|old:|new:line|eof}", NULL},
	{"context, blank and chunk lines",
		"*** Begin Patch\n*** Update File: f\n@@ change_context\n\n context\n-remove\n+add\n "
		"context2\n*** End Patch",
		"U f{@@change_context|old:/context/remove/context2|new:/context/add/context2}",
		NULL},
	{"two chunks, blank lines between",
		"*** Begin Patch\n*** Update File: f\n@@\n-a\n+A\n@@ ctx\n-b\n+B\n*** End Patch",
		"U f{@@|old:a|new:A}{@@ctx|old:b|new:B}", NULL},
	{"crlf", "*** Begin Patch\r\n*** Add File: a\r\n+x\r\n*** End Patch\r\n", "A a=x\\n", NULL},
	{"whitespace around", "\n\n  *** Begin Patch\n*** Delete File: d\n*** End Patch\n\n", "D d",
		NULL},
	{"unicode whitespace trimmed",
		"\xc2\xa0*** Begin Patch\n\xe2\x80\x83*** Delete File: d\xe3\x80\x80\n*** End "
		"Patch\xe3\x80\x80",
		"D d", NULL},
	{"move path kept raw",
		"*** Begin Patch\n*** Update File: a\n*** Move to: b.txt  \n@@\n-x\n+"
		"y\n*** End Patch",
		"U a>b.txt  {@@|old:x|new:y}", NULL},
	{"padded update header",
		"*** Begin Patch\n  *** Update File: f  \n@@\n-x\n+y\n*** End Patch",
		"U f{@@|old:x|new:y}", NULL},
	{"add with no lines", "*** Begin Patch\n*** Add File: empty\n*** End Patch",
		"A empty=", NULL},
	{"empty add path is no header", "*** Begin Patch\n*** Add File: \n*** End Patch", NULL,
		"invalid hunk at line 2, '*** Add File:'" VALID_HUNK_HEADERS},
};

static void
test_parse_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct parse_case *c = &cases[i];
		struct patch *p = NULL;
		char *cause = NULL, *dump;
		int r = apply_patch_parse(c->text, strlen(c->text), &p, &cause);

		if (c->error != NULL) {
			if (r != -EINVAL || cause == NULL || strcmp(cause, c->error) != 0)
				fail_msg("%s: r=%d cause=%s", c->name, r, cause ? cause : "(null)");
			assert_null(p);
		} else {
			if (r != 0)
				fail_msg("%s: r=%d cause=%s", c->name, r, cause);
			dump = dump_patch(p);
			if (strcmp(dump, c->dump) != 0)
				fail_msg("%s:\n got %s\nwant %s", c->name, dump, c->dump);
			free(dump);
		}
		free(cause);
		apply_patch_free(p);
	}
}

static void
test_parse_text_and_bounds(void **state)
{
	struct patch *p = NULL;
	char *cause = NULL, *big;
	const char *t = "<<'EOF'\n*** Begin Patch\n*** Delete File: d\n*** End Patch\nEOF\n";
	size_t i, n;

	(void)state;
	/* The text without its heredoc wrapper, as upstream keeps it. */
	assert_int_equal(apply_patch_parse(t, strlen(t), &p, &cause), 0);
	assert_string_equal(
		apply_patch_text(p), "*** Begin Patch\n*** Delete File: d\n*** End Patch");
	assert_int_equal(apply_patch_nfiles(p), 1);
	assert_null(apply_patch_workdir(p));
	apply_patch_free(p);
	/* Too long. */
	n = APPLY_PATCH_MAX_TEXT + 1;
	big = xmalloc(n);
	memset(big, 'x', n);
	assert_int_equal(apply_patch_parse(big, n, &p, &cause), -E2BIG);
	assert_non_null(strstr(cause, "more than"));
	free(cause);
	cause = NULL;
	free(big);
	/* Too many files. */
	{
		struct buf b;

		buf_init(&b, 1 << 24);
		buf_adds(&b, "*** Begin Patch\n");
		for (i = 0; i <= APPLY_PATCH_MAX_FILES; i++)
			buf_printf(&b, "*** Delete File: f%zu\n", i);
		buf_adds(&b, "*** End Patch");
		assert_int_equal(apply_patch_parse(b.ptr, b.len, &p, &cause), -E2BIG);
		assert_string_equal(cause, "invalid patch: more than 1000 files in one patch");
		free(cause);
		cause = NULL;
		buf_free(&b);
	}
	/* A NULL cause is allowed. */
	assert_int_equal(apply_patch_parse("bad", 3, &p, NULL), -EINVAL);
	/* NUL bytes inside a line do not end it. */
	{
		static const char nul[] = "*** Begin Patch\n*** Add File: a\n+x\0y\n*** End Patch";

		assert_int_equal(apply_patch_parse(nul, sizeof(nul) - 1, &p, &cause), 0);
	}
	assert_int_equal(p->hunks[0].contents_len, 4);
	assert_memory_equal(p->hunks[0].contents, "x\0y\n", 4);
	apply_patch_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_table),
		cmocka_unit_test(test_parse_text_and_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
