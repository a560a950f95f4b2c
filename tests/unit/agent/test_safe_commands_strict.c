/*
 * Known-safe commands are safe because of every argument (issue 21 item 1): the holes found
 * (sed -n 1p --expression=..., uniq IN OUT), every option spelling of every known-safe program
 * accepted as the program reads it (alone, in a cluster, with its value attached or apart,
 * --name=value), and everything else refused: unknown letters, abbreviated long options, a
 * value given to an option that takes none, a missing value, and, inside bash -lc, the words
 * the shell rewrites (backslashes, globs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/approval/safe_commands_int.h"
#include "safe_commands_util.h"

struct row {
	const char *argv; /* words joined with | ; "bash -lc" rows give the script alone */
	bool script;
	bool want;
};

static const struct row rows[] = {
	/* the issue: sed's "file" read as an option makes 1p a file and runs a command */
	{"sed|-n|1p|--expression=1e touch /tmp/x", false, false},
	{"sed|-n|1p|-e1e touch /tmp/x", false, false},
	{"sed|-n|1p|-e|1e touch /tmp/x", false, false},
	{"sed|-n|1p|-f/tmp/script.sed", false, false},
	{"sed|-n|1p|--file=/tmp/script.sed", false, false},
	{"sed|-n|1p|-i", false, false},
	{"sed|-n|1p|--in-place", false, false},
	{"sed|-n|1p|-s", false, false},
	{"sed|-n|1p|\\-e1e touch x", false, false},
	{"sed|-n|1p|file.txt", false, true},
	{"sed|-n|1,5p|-", false, true},
	{"sed|-n|1p", false, true},
	{"sed|-n|1p|a|b", false, false},
	{"sed|1p|-n|file", false, false},
	/* uniq IN OUT writes OUT; an option after IN is OUT under POSIXLY_CORRECT */
	{"uniq|/etc/hostname|1p", false, false},
	{"uniq|in|out", false, false},
	{"uniq|-c|in", false, true},
	{"uniq|in", false, true},
	{"uniq|in|-c", false, false},
	{"uniq|--|in", false, true},
	{"uniq|--|in|out", false, false},
	{"uniq|-f|1|in", false, true},
	{"uniq|-f", false, false},
	{"uniq|in|--output=out", false, false},
	{"uniq +5 in out", true, false},
	{"uniq /etc/hostname 1p && sed -n 1p '--expression=1e touch /tmp/x'", true, false},
	{"uniq /etc/hostname && sed -n 1p /etc/hostname", true, true},
	/* base64: one operand, no output option in any spelling */
	{"base64|-o|out", false, false},
	{"base64|-dout", false, false},
	{"base64|--output=out", false, false},
	{"base64|--out=x", false, false},
	{"base64|--dec|f", false, false},
	{"base64|-d|f", false, true},
	{"base64|f|g", false, false},
	{"base64|-w0|f", false, true},
	{"base64|--wrap|0|f", false, true},
	/* abbreviations and values where none is taken */
	{"cut|--delim=,|-f1|f", false, false},
	{"cut|--delimiter=,|-f1|f", false, true},
	{"cut|-d,|-f|1|f", false, true},
	{"cat|--number=5|f", false, false},
	{"cat|--num|f", false, false},
	{"rg|--pr=sh|x", false, false},
	{"rg|--pre|sh|x", false, false},
	{"rg|--pre-glob=*|x", false, false},
	{"rg|-zn|x", false, false},
	{"rg|-nz|x", false, false},
	{"rg|-e|--pre=sh|x", false, true},
	{"rg|--|--pre=sh|x", false, true},
	{"rg|x|--hostname-bin=sh", false, false},
	{"grep|-5n|x|f", false, true},
	{"head|-20|f", false, true},
	{"tail|-f|log", false, false},
	{"tail|--follow|log", false, false},
	{"seq|-5|5", false, true},
	{"seq|-w|-.5|1", false, true},
	{"ls|--color|x", false, true},
	{"ls|--color=never", false, true},
	{"ls|-lah|--sort=size", false, true},
	{"ls|-y", false, false},
	{"pwd|x", false, false},
	{"uname|-a|x", false, false},
	{"whoami|--help", false, true},
	{"true|--anything", false, true},
	{"echo|-e|--output=x", false, true},
	/* find: only its allowed primaries, values where they take one */
	{"find|.|-name|*.py|-type|f|-print0", false, true},
	{"find|-L|src|-maxdepth|2|(|-name|a|-o|-name|b|)", false, true},
	{"find|.|-newermt|2024-01-01", false, true},
	{"find|.|-name|-delete", false, true},
	{"find|.|-delete", false, false},
	{"find|.|-exec|cat|{}|;", false, false},
	{"find|.|-fprint|out", false, false},
	{"find|.|-del", false, false},
	{"find|.|-name", false, false},
	{"find|.|-name|x|stray", false, false},
	{"find|\\-delete", false, false},
	/* inside bash -lc: the words as bash passes them */
	{"sed -n 1p \\-\\-expression=1e\\ touch\\ x", true, false},
	{"sed -n 1p \"--expression=1e touch x\"", true, false},
	{"sed -n 1p '-'-expression=x", true, false},
	{"cat \\-A f", true, true},
	{"find . \\( -name a -o -name b \\)", true, true},
	{"cat \"a b\" 'c d'", true, true},
	/* globs: any number of names, starting as the pattern does */
	{"uniq *", true, false},
	{"base64 f*", true, false},
	{"sed -n 1p *", true, false},
	{"rg foo *.py", true, false},
	{"rg foo ?x", true, false},
	{"rg foo [-]x", true, false},
	{"cat src/*.c", true, true},
	{"ls -l src/*", true, true},
	{"echo *", true, true},
	{"find . -name '*.py'", true, true},
	{"find . -name *.py", true, false},
	{"grep -n 'a*b' f", true, true},
	{"grep -n \\*x f", true, true},
	{"cat ~/x", true, true},
};

/* Every row. */
static void
test_rows(void **state)
{
	int failed = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		bool got = rows[i].script ? script_safe(rows[i].argv) : safe_of(rows[i].argv);

		if (got != rows[i].want) {
			print_error("row %zu [%s]: got %d\n", i, rows[i].argv, got);
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

/* The spellings of one allowlist, sorted, one per line. */
static char *
sorted_spellings(const char *allow)
{
	const char *s = allow;
	char *lines[512], *out;
	size_t n = 0, len = 1;

	while (s != NULL && n < 512 && (s += strspn(s, " "), *s != '\0')) {
		size_t k = strcspn(s, " ");

		lines[n] = strndup(s, k);
		len += k + 1;
		n++;
		s += k;
	}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
			char *t = lines[j];

			lines[j] = lines[j - 1];
			lines[j - 1] = t;
		}
	out = calloc(1, len);
	for (size_t i = 0; i < n; i++) {
		strcat(out, lines[i]);
		strcat(out, "\n");
		free(lines[i]);
	}
	return out;
}

/* The daemon's tables hold exactly the golden programs and spellings. */
static void
test_golden_matches(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++) {
		const struct golden *g = &golden[i];
		const struct sc_spec *sp = safe_commands_spec(g->name);
		char *want, *got;

		assert_non_null(sp);
		assert_int_equal(sp->max_operands, g->max_operands);
		assert_int_equal((sp->flags & SC_DIGITS) != 0, g->digits);
		assert_int_equal((sp->flags & SC_NEGNUM) != 0, g->negnum);
		assert_int_equal(sp->form, (int)g->form);
		want = sorted_spellings(g->allow);
		got = sorted_spellings(sp->allow);
		if (strcmp(want, got) != 0)
			print_error("%s: tables differ:\n%s---\n%s", g->name, want, got);
		assert_string_equal(want, got);
		free(want);
		free(got);
	}
	assert_null(safe_commands_spec("git"));
	assert_null(safe_commands_spec("sort"));
	assert_null(safe_commands_spec("tee"));
}

/* "prog|a|b|..." from a prefix and the words given. */
static bool
safe_words(const char *prog, const char *a, const char *b, const char *c)
{
	const char *argv[] = {prog, a, b, c};
	size_t n = 1 + (a != NULL) + (a != NULL && b != NULL) + (a && b && c != NULL);

	return safe_commands_is_safe_exec(argv, n);
}

/* Whether the program takes operands (a file after its options). */
static const char *
operand_of(const struct golden *g)
{
	return g->max_operands == 0 ? NULL : "file";
}

/* Every spelling in every form the program accepts, and the forms it refuses. */
static void
test_every_spelling(void **state)
{
	int failed = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++) {
		const struct golden *g = &golden[i];
		const char *s = g->allow, *op = operand_of(g);
		struct spelling sp;
		char joined[160], trunc[64];

		if (g->form != G_GETOPT)
			continue;
#define EXPECT(want, a, b, c)                                                                      \
	do {                                                                                       \
		if (safe_words(g->name, a, b, c) != (want)) {                                      \
			print_error("%s %s %s %s: want %d\n", g->name, a, b ? b : "", c ? c : "",  \
				want);                                                             \
			failed++;                                                                  \
		}                                                                                  \
	} while (0)
		while (spelling_next(&s, &sp)) {
			bool is_long = sp.name[1] == '-';

			switch (sp.kind) {
			case SP_FLAG:
				EXPECT(true, sp.name, op, NULL);
				if (is_long) {
					snprintf(joined, sizeof(joined), "%s=x", sp.name);
					EXPECT(false, joined, op, NULL);
				}
				break;
			case SP_VALUE:
				EXPECT(true, sp.name, "v", op);
				snprintf(joined, sizeof(joined), "%s%sv", sp.name,
					is_long ? "=" : "");
				EXPECT(true, joined, op, NULL);
				EXPECT(false, sp.name, NULL, NULL);
				break;
			case SP_OPTIONAL:
				EXPECT(true, sp.name, op, NULL);
				snprintf(joined, sizeof(joined), "%s=v", sp.name);
				EXPECT(true, joined, op, NULL);
				break;
			}
			/* GNU would take an abbreviation; we never do */
			for (size_t k = strlen(sp.name) - 1; is_long && k > 3; k--) {
				snprintf(trunc, sizeof(trunc), "%.*s", (int)k, sp.name);
				if (golden_kind(g, trunc) < 0)
					EXPECT(false, trunc, op, NULL);
			}
			/* after --, a spelling is an operand */
			if (g->max_operands < 0)
				EXPECT(true, "--", sp.name, NULL);
		}
#undef EXPECT
	}
	assert_int_equal(failed, 0);
}

/* A short option letter the golden row does not list is refused, alone or in a cluster. */
static void
test_unknown_letters(void **state)
{
	static const char letters[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.@#+_:";
	int failed = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++) {
		const struct golden *g = &golden[i];

		if (g->form != G_GETOPT)
			continue;
		for (const char *l = letters; *l != '\0'; l++) {
			char one[3] = {'-', *l, '\0'}, cluster[5];
			int k = golden_kind(g, one);

			if (k >= 0 || (g->digits && *l >= '0' && *l <= '9') ||
				(g->negnum && *l >= '0' && *l <= '9') || (g->negnum && *l == '.'))
				continue;
			snprintf(cluster, sizeof(cluster), "-%c%c", *l, 'x');
			if (safe_words(g->name, one, "v", NULL) ||
				safe_words(g->name, cluster, NULL, NULL)) {
				print_error("%s %s accepted\n", g->name, one);
				failed++;
			}
		}
	}
	assert_int_equal(failed, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_golden_matches),
		cmocka_unit_test(test_every_spelling),
		cmocka_unit_test(test_unknown_letters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
