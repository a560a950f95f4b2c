/*
 * Readers and pipeline helpers (command_actions.h): which command reads a file (head, tail, awk,
 * sed -n), which is a small formatting stage of a pipeline that upstream drops from the summary
 * (wc, sort, head -n 40, sed without a file, xargs that does not edit in place, ...), and the
 * `cd` bookkeeping for paths.
 */
#include <stdlib.h>
#include <string.h>

#include "command_actions_int.h"
#include "protocol/xmalloc.h"

/* /^(\d+,)?\d+p$/ */
bool
ca_valid_sed_n_arg(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	const char *comma;

	if (n < 2 || s[n - 1] != 'p')
		return false;
	comma = memchr(s, ',', n - 1);
	if (comma == NULL)
		return strspn(s, "0123456789") == n - 1;
	if (comma == s || comma + 1 == s + n - 1)
		return false;
	return strspn(s, "0123456789") == (size_t)(comma - s) &&
		strspn(comma + 1, "0123456789") == (size_t)(s + n - 1 - comma - 1);
}

/* awk's data file: after -f the first operand, else the second (the first is the program). */
const char *
ca_awk_file(struct ca_args args)
{
	static const char *const vals[] = {
		"-F", "-v", "-f", "--field-separator", "--assign", "--file", NULL};
	struct ca_args a = ca_trim_at_connector(args);
	struct ca_list l;
	const char *r = NULL;
	bool script_file = false;

	if (args.n == 0)
		return NULL;
	for (size_t i = 0; i < a.n; i++)
		script_file = script_file || !strcmp(a.v[i], "-f") || !strcmp(a.v[i], "--file");
	l = ca_skip_flag_values(a, vals);
	ca_non_flags(&l);
	if (script_file)
		r = l.n > 0 ? l.v[0] : NULL;
	else if (l.n >= 2)
		r = l.v[1];
	free(l.v);
	return r;
}

/* sed -n with a N,Mp script: the file it prints from, or NULL. */
const char *
ca_sed_read_path(struct ca_args args)
{
	static const char *const vals[] = {"-e", "-f", "--expression", "--file", NULL};
	struct ca_args a = ca_trim_at_connector(args);
	bool has_n = false, range = false;
	struct ca_list l;
	const char *r = NULL;

	for (size_t i = 0; i < a.n; i++)
		has_n = has_n || strcmp(a.v[i], "-n") == 0;
	if (!has_n)
		return NULL;
	for (size_t i = 0; i < a.n; i++) {
		if (!strcmp(a.v[i], "-e") || !strcmp(a.v[i], "--expression")) {
			range = range || (i + 1 < a.n && ca_valid_sed_n_arg(a.v[i + 1]));
			i++;
		} else if (!strcmp(a.v[i], "-f") || !strcmp(a.v[i], "--file")) {
			i++;
		}
	}
	for (size_t i = 0; i < a.n && !range; i++)
		range = a.v[i][0] != '-' && ca_valid_sed_n_arg(a.v[i]);
	if (!range)
		return NULL;
	l = ca_skip_flag_values(a, vals);
	ca_non_flags(&l);
	if (l.n >= 1)
		r = ca_valid_sed_n_arg(l.v[0]) ? (l.n >= 2 ? l.v[1] : NULL) : l.v[0];
	free(l.v);
	return r;
}

/* A count for head/tail -n: digits, or (tail) +digits; nonempty unless plus_ok is false. */
static bool
ca_count(const char *s, bool plus_ok)
{
	if (plus_ok && s[0] == '+')
		s++;
	return plus_ok ? (s[0] != '\0' && ca_digits(s)) : ca_digits(s);
}

/* head/tail FILE, head -n 50 FILE, tail -n +10 FILE, tail -n+10 FILE: the file or NULL. */
const char *
ca_head_tail_file(struct ca_args tail, bool is_tail)
{
	bool valid_n = false;

	if (tail.n >= 1 && strcmp(tail.v[0], "-n") == 0)
		valid_n = tail.n >= 2 && ca_count(tail.v[1], is_tail);
	else if (tail.n >= 1 && ca_starts(tail.v[0], "-n"))
		valid_n = ca_count(tail.v[0] + 2, is_tail);
	if (valid_n) {
		size_t i = 0;

		/* the count after a separate -n is not a candidate */
		if (tail.n >= 2 && strcmp(tail.v[0], "-n") == 0 && ca_count(tail.v[1], is_tail))
			i = 2;
		for (; i < tail.n; i++)
			if (tail.v[i][0] != '-')
				return tail.v[i];
	}
	if (tail.n == 1 && tail.v[0][0] != '-')
		return tail.v[0];
	return NULL;
}

/* python -c SCRIPT where the script walks the file tree. */
bool
ca_python_walks(struct ca_args args)
{
	static const char *const needles[] = {"os.walk", "os.listdir", "os.scandir", "glob.glob",
		"glob.iglob", "pathlib.Path", ".rglob("};
	struct ca_args a = ca_trim_at_connector(args);

	for (size_t i = 0; i + 1 < a.n; i++) {
		if (strcmp(a.v[i], "-c") != 0)
			continue;
		for (size_t k = 0; k < sizeof(needles) / sizeof(needles[0]); k++)
			if (strstr(a.v[i + 1], needles[k]) != NULL)
				return true;
		return false;
	}
	return false;
}

bool
ca_is_python(const char *c)
{
	return !strcmp(c, "python") || !strcmp(c, "python2") || !strcmp(c, "python3") ||
		ca_starts(c, "python2.") || ca_starts(c, "python3.");
}

/* -i... or -pi...: an in-place edit flag. */
static bool
ca_in_place(struct ca_args a)
{
	for (size_t i = 0; i < a.n; i++)
		if (ca_starts(a.v[i], "-i") || ca_starts(a.v[i], "-pi"))
			return true;
	return false;
}

/* xargs running perl/ruby/sed in place or rg --replace: a mutation, not formatting. */
static bool
ca_xargs_mutating(struct ca_args t)
{
	static const char *const takes_value[] = {"-E", "-e", "-I", "-L", "-n", "-P", "-s", NULL};
	struct ca_args sub = {NULL, 0};
	const char *head;

	for (size_t i = 1; i < t.n;) {
		if (strcmp(t.v[i], "--") == 0) {
			sub = (struct ca_args){t.v + i + 1, t.n - i - 1};
			break;
		}
		if (t.v[i][0] != '-') {
			sub = (struct ca_args){t.v + i, t.n - i};
			break;
		}
		i += (ca_in(t.v[i], takes_value) && strlen(t.v[i]) == 2) ? 2 : 1;
	}
	if (sub.n == 0)
		return false;
	head = sub.v[0];
	sub.v++, sub.n--;
	if (!strcmp(head, "perl") || !strcmp(head, "ruby"))
		return ca_in_place(sub);
	if (!strcmp(head, "sed")) {
		for (size_t i = 0; i < sub.n; i++)
			if (!strcmp(sub.v[i], "--in-place"))
				return true;
		return ca_in_place(sub);
	}
	if (!strcmp(head, "rg"))
		for (size_t i = 0; i < sub.n; i++)
			if (!strcmp(sub.v[i], "--replace"))
				return true;
	return false;
}

/* head/tail with only a count (no file): formatting. */
static bool
ca_small_head_tail(struct ca_args t, bool is_tail)
{
	if (t.n == 1)
		return true;
	if (t.n == 2)
		return t.v[1][0] == '-';
	if (t.n == 3) {
		if (!is_tail)
			return (!strcmp(t.v[1], "-n") || !strcmp(t.v[1], "-c")) &&
				ca_digits(t.v[2]);
		if (!strcmp(t.v[1], "-n") || !strcmp(t.v[1], "-c"))
			return ca_digits(t.v[2]) || (t.v[2][0] == '+' && ca_digits(t.v[2] + 1));
	}
	return false;
}

/* A small formatting helper of a pipeline (upstream's is_small_formatting_command). */
bool
ca_is_small_formatting(struct ca_args t)
{
	static const char *const always[] = {
		"wc", "tr", "cut", "sort", "uniq", "tee", "column", "yes", "printf", NULL};
	const char *c;

	if (t.n == 0)
		return false;
	c = t.v[0];
	if (ca_in(c, always))
		return true;
	if (!strcmp(c, "xargs"))
		return !ca_xargs_mutating(t);
	if (!strcmp(c, "awk"))
		return ca_awk_file((struct ca_args){t.v + 1, t.n - 1}) == NULL;
	if (!strcmp(c, "head") || !strcmp(c, "tail"))
		return ca_small_head_tail(t, c[0] == 't');
	if (!strcmp(c, "sed"))
		return ca_sed_read_path((struct ca_args){t.v + 1, t.n - 1}) == NULL;
	return false;
}

/* cd's target: the operand after --, else the last non-option operand. */
const char *
ca_cd_target(struct ca_args a)
{
	const char *target = NULL;

	for (size_t i = 0; i < a.n; i++) {
		if (strcmp(a.v[i], "--") == 0)
			return i + 1 < a.n ? a.v[i + 1] : NULL;
		if (a.v[i][0] != '-')
			target = a.v[i];
	}
	return target;
}

/* base/rel as PathBuf::push does; an absolute rel (or Windows drive/UNC path) replaces base. */
char *
ca_join_paths(const char *base, const char *rel)
{
	size_t bl = strlen(base);
	bool abs = rel[0] == '/' || (rel[0] == '\\' && rel[1] == '\\') ||
		(((rel[0] | 0x20) >= 'a' && (rel[0] | 0x20) <= 'z') && rel[1] == ':' &&
			rel[2] == '\\');

	if (abs || bl == 0)
		return xstrdup(rel);
	if (base[bl - 1] == '/')
		return xasprintf("%s%s", base, rel);
	return xasprintf("%s/%s", base, rel);
}
