/*
 * A generated corpus against the rule of issue 21 item 1: "no argument outside the allowlist
 * is accepted". For each known-safe program, items are drawn from its golden allowlist (every
 * spelling, with a value where it takes one), operands, "--", and hostile arguments (the
 * payloads found, options the program has that write or run, abbreviations of its own long
 * options, values given to flags, unknown letters, a backslash); every sequence of up to three
 * items (or a fixed pseudo-random sample of them when there are too many) is judged, and the
 * verdict must be exactly the rule's: accepted if and only if no hostile item is read as an
 * option (before "--") and the operands stay within the program's bound, counted from the
 * first operand on. find and sed have their own grammar and their own oracle below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safe_commands_util.h"

#define ITEMS_MAX   600
#define SAMPLE_SIZE 40000 /* sequences of three per program when all of them are too many */

/* IT_REWRITTEN: starts with a backslash, which bash -lc removes: refused even after "--" */
enum item_class {
	IT_ALLOWED,
	IT_OPERAND,
	IT_DASHDASH,
	IT_HOSTILE,
	IT_REWRITTEN,
	IT_LEAD,
	IT_START,
};

/* One or two argv words that belong together (an option and its value). */
struct item {
	char w[2][96];
	int n;
	enum item_class cls;
};

struct corpus {
	struct item it[ITEMS_MAX];
	size_t n;
};

static void
add(struct corpus *c, enum item_class cls, const char *a, const char *b)
{
	struct item *it;

	if (c->n >= ITEMS_MAX)
		return;
	it = &c->it[c->n++];
	it->cls = cls;
	snprintf(it->w[0], sizeof(it->w[0]), "%s", a);
	it->n = 1;
	if (b != NULL) {
		snprintf(it->w[1], sizeof(it->w[1]), "%s", b);
		it->n = 2;
	}
}

/* Hostile for every program: the payloads of the issue and what the programs must not get. */
static const char *const hostile_all[] = {"--expression=1e touch /tmp/x", "-e1e touch /tmp/x",
	"-f/tmp/script", "-i", "--in-place", "-o", "--output=out", "-ob64.txt", "--pre=sh",
	"--hostname-bin=sh", "-z", "--search-zip", "--follow", "-F", "--files0-from=list",
	"--pid=1", "\\-e", "-", "-\\", "--=x", "---", "-Q", "-@", "--x"};

/* The items of a getopt program from its golden row. */
static void
corpus_getopt(const struct golden *g, struct corpus *c)
{
	const char *s = g->allow;
	struct spelling sp;
	char buf[96];

	while (spelling_next(&s, &sp)) {
		bool is_long = sp.name[1] == '-';

		if (sp.kind == SP_VALUE) {
			add(c, IT_ALLOWED, sp.name, "-v"); /* a value may look like an option */
			snprintf(buf, sizeof(buf), "%s%s--pre=sh", sp.name, is_long ? "=" : "");
			add(c, IT_ALLOWED, buf, NULL);
		} else {
			add(c, IT_ALLOWED, sp.name, NULL);
		}
		if (sp.kind == SP_OPTIONAL) {
			snprintf(buf, sizeof(buf), "%s=v", sp.name);
			add(c, IT_ALLOWED, buf, NULL);
		}
		if (is_long && sp.kind == SP_FLAG) {
			snprintf(buf, sizeof(buf), "%s=v", sp.name);
			add(c, IT_HOSTILE, buf, NULL);
		}
		if (is_long && strlen(sp.name) > 4) {
			snprintf(buf, sizeof(buf), "%.*s", (int)strlen(sp.name) - 1, sp.name);
			if (golden_kind(g, buf) < 0)
				add(c, IT_HOSTILE, buf, NULL);
		}
	}
	add(c, IT_ALLOWED, "--help", NULL);
	for (size_t i = 0; i < sizeof(hostile_all) / sizeof(hostile_all[0]); i++) {
		const char *h = hostile_all[i];
		size_t name = h[1] == '-' ? strcspn(h, "=") : 2;

		snprintf(buf, sizeof(buf), "%.*s", (int)name, h);
		if (strcmp(h, "-") == 0)
			add(c, IT_OPERAND, h, NULL); /* stdin: an operand */
		else if (h[0] == '\\')
			add(c, IT_REWRITTEN, h, NULL);
		else if (golden_kind(g, buf) < 0) /* an allowed letter's forms are tested apart */
			add(c, IT_HOSTILE, h, NULL);
	}
	add(c, IT_OPERAND, "file", NULL);
	add(c, IT_OPERAND, "1p", NULL);
	add(c, IT_OPERAND, "dir/-x", NULL);
	add(c, IT_DASHDASH, "--", NULL);
}

/* The rule, for a getopt program: what the verdict on a sequence of items must be. */
static bool
oracle_getopt(const struct golden *g, struct item *const *seq, size_t n)
{
	bool after = false;
	size_t words = 0, first = 0; /* first operand: its word index + 1 */

	for (size_t i = 0; i < n; i++) {
		const struct item *it = seq[i];

		if ((!after && it->cls == IT_HOSTILE) || it->cls == IT_REWRITTEN)
			return false;
		if (after || it->cls == IT_OPERAND)
			first = first == 0 ? words + 1 : first;
		if (!after && it->cls == IT_DASHDASH)
			after = true;
		words += (size_t)it->n;
	}
	return g->max_operands < 0 || first == 0 || words - (first - 1) <= (size_t)g->max_operands;
}

/* find: leading options, starting points, then allowed primaries; nothing hostile. */
static void
corpus_find(const struct golden *g, struct corpus *c)
{
	const char *s = g->allow;
	struct spelling sp;
	static const char *const hostile[] = {"-exec", "-execdir", "-ok", "-okdir", "-delete",
		"-fls", "-fprint", "-fprint0", "-fprintf", "-del", "-exe", "--exec", "-files0-from",
		"-Dx"};

	while (spelling_next(&s, &sp))
		add(c, IT_ALLOWED, sp.name, sp.kind == SP_VALUE ? "-delete" : NULL);
	add(c, IT_ALLOWED, "-newermt", "2024-01-01");
	add(c, IT_REWRITTEN, "\\-delete", NULL);
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
		add(c, IT_HOSTILE, hostile[i], NULL);
	add(c, IT_LEAD, "-L", NULL);
	add(c, IT_LEAD, "-O3", NULL);
	add(c, IT_LEAD, "-D", "-delete"); /* debug options: find refuses an unknown one */
	add(c, IT_START, ".", NULL);
	add(c, IT_START, "src", NULL);
	add(c, IT_START, "{}", NULL); /* a path as a starting point, a stray word after */
	add(c, IT_START, ";", NULL);
}

static bool
oracle_find(struct item *const *seq, size_t n)
{
	int phase = 0; /* 0 leading options, 1 starting points, 2 expression */

	for (size_t i = 0; i < n; i++) {
		enum item_class k = seq[i]->cls;

		if (k == IT_HOSTILE || k == IT_REWRITTEN || (k == IT_LEAD && phase > 0) ||
			(k == IT_START && phase > 1))
			return false;
		phase = k == IT_START ? 1 : k == IT_ALLOWED ? 2 : phase;
	}
	return true;
}

/* sed: exactly -n, the lines, and at most one operand that is not an option. */
static void
corpus_sed(struct corpus *c)
{
	static const char *const hostile[] = {"--expression=1e touch /tmp/x", "-e", "-f", "-i",
		"-s", "--quiet", "-E", "--", "\\-e", "-n1p"};

	add(c, IT_LEAD, "-n", NULL);
	add(c, IT_ALLOWED, "1p", NULL);
	add(c, IT_ALLOWED, "1,5p", NULL);
	add(c, IT_OPERAND, "file", NULL);
	add(c, IT_OPERAND, "-", NULL);
	add(c, IT_OPERAND, "1e touch x", NULL); /* a script as the script, a name as the file */
	add(c, IT_OPERAND, "1w out", NULL);
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
		add(c, IT_HOSTILE, hostile[i], NULL);
}

static bool
oracle_sed(struct item *const *seq, size_t n)
{
	return (n == 2 || n == 3) && seq[0]->cls == IT_LEAD && seq[1]->cls == IT_ALLOWED &&
		(n == 2 || seq[2]->cls == IT_OPERAND || seq[2]->cls == IT_ALLOWED);
}

/* The verdict of the program on a sequence of items. */
static bool
judge(const char *name, struct item *const *seq, size_t n)
{
	const char *argv[8] = {name};
	size_t argc = 1;

	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < seq[i]->n; k++)
			argv[argc++] = seq[i]->w[k];
	return safe_commands_is_safe_exec(argv, argc);
}

/* A small deterministic generator for the samples. */
static unsigned long
next_rand(unsigned long *x)
{
	*x = *x * 6364136223846793005ul + 1442695040888963407ul;
	return *x >> 33;
}

/* Judge every sequence of 1..3 items (or a sample of the threes); count disagreements. */
static int
run_program(const struct golden *g, size_t *judged)
{
	static struct corpus c;
	struct item *seq[3];
	unsigned long rnd = 21;
	int failed = 0;

	c.n = 0;
	if (g->form == G_GETOPT)
		corpus_getopt(g, &c);
	else if (g->form == G_FIND)
		corpus_find(g, &c);
	else if (g->form == G_SED)
		corpus_sed(&c);
	else
		return 0;
	for (size_t len = 1; len <= 3; len++) {
		size_t total = len == 1 ? c.n : len == 2 ? c.n * c.n : c.n * c.n * c.n;
		bool sample = total > SAMPLE_SIZE;

		for (size_t k = 0; k < (sample ? SAMPLE_SIZE : total); k++) {
			size_t idx = sample ? next_rand(&rnd) % total : k;
			bool want, got;

			for (size_t j = 0; j < len; j++, idx /= c.n)
				seq[j] = &c.it[idx % c.n];
			want = g->form == G_GETOPT  ? oracle_getopt(g, seq, len)
				: g->form == G_FIND ? oracle_find(seq, len)
						    : oracle_sed(seq, len);
			got = judge(g->name, seq, len);
			(*judged)++;
			if (want != got && failed++ < 5)
				print_error("%s %s%s%s%s%s: want %d got %d\n", g->name,
					seq[0]->w[0], len > 1 ? " " : "",
					len > 1 ? seq[1]->w[0] : "", len > 2 ? " " : "",
					len > 2 ? seq[2]->w[0] : "", want, got);
		}
	}
	return failed;
}

static void
test_corpus(void **state)
{
	size_t judged = 0;
	int failed = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++)
		failed += run_program(&golden[i], &judged);
	print_message("%zu argument lists judged\n", judged);
	assert_true(judged > 500000);
	assert_int_equal(failed, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
