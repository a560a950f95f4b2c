/*
 * Reading a known-safe program's arguments as the program itself would (safe_commands_int.h),
 * so that "safe" means: every argument is an allowed option, the value of one, or an operand
 * that the program cannot take for an option. The rules this file keeps:
 *   - GNU programs permute: an option after an operand is still an option, so every argument
 *     starting with '-' (other than "-" alone) before a "--" must be an allowed spelling;
 *   - under POSIXLY_CORRECT they do not permute, and everything from the first operand on is
 *     an operand: a bound on operands (uniq IN OUT writes OUT) counts all of those arguments,
 *     so it holds under both readings;
 *   - an argument starting with a backslash is refused: inside `bash -lc` the shell removes
 *     it, and "\-e" reaches the program as "-e".
 */
#include <string.h>

#include "safe_commands_int.h"

/* The spelling at s (up to a blank or the end): its name's length and its kind. */
static enum sc_kind
sc_spelling(const char *s, size_t *name_len, size_t *total)
{
	size_t n = strcspn(s, " ");

	*total = n;
	if (n >= 3 && strncmp(s + n - 3, "[=]", 3) == 0) {
		*name_len = n - 3;
		return SC_OPTIONAL;
	}
	if (n >= 1 && s[n - 1] == '=') {
		*name_len = n - 1;
		return SC_VALUE;
	}
	*name_len = n;
	return SC_FLAG;
}

enum sc_kind
safe_commands_allowed(const char *allow, const char *opt, size_t len)
{
	const char *s = allow;

	if ((len == 6 && strncmp(opt, "--help", 6) == 0) ||
		(len == 9 && strncmp(opt, "--version", 9) == 0))
		return SC_FLAG;
	while (s != NULL && *s != '\0') {
		size_t name_len, total;
		enum sc_kind k = sc_spelling(s, &name_len, &total);

		if (name_len == len && strncmp(s, opt, len) == 0)
			return k;
		s += total;
		s += strspn(s, " ");
	}
	return SC_NONE;
}

/* -1, -.5, -3e2: a negative number (seq reads it as an operand and stops reading options). */
static bool
sc_negnum(const char *a)
{
	return a[0] == '-' && (a[1] == '.' || (a[1] >= '0' && a[1] <= '9'));
}

/* One short-option cluster ("-la", "-n5", "-d" then a value); *i moves past a value taken. */
static bool
sc_cluster(const struct sc_spec *sp, const char *const *argv, size_t argc, size_t *i)
{
	const char *a = argv[*i];

	for (size_t j = 1; a[j] != '\0'; j++) {
		char opt[2] = {'-', a[j]};

		if ((sp->flags & SC_DIGITS) && a[j] >= '0' && a[j] <= '9')
			continue;
		switch (safe_commands_allowed(sp->allow, opt, 2)) {
		case SC_FLAG:
			continue;
		case SC_VALUE:
			if (a[j + 1] != '\0')
				return true; /* the rest of the cluster is its value */
			if (*i + 1 >= argc)
				return false;
			(*i)++;
			return true;
		default: /* no short option has an optional value in our lists */
			return false;
		}
	}
	return true;
}

/* One long option ("--name", "--name=V", or "--name" then a value). */
static bool
sc_long(const struct sc_spec *sp, const char *const *argv, size_t argc, size_t *i)
{
	const char *a = argv[*i], *eq = strchr(a, '=');
	size_t len = eq != NULL ? (size_t)(eq - a) : strlen(a);

	switch (safe_commands_allowed(sp->allow, a, len)) {
	case SC_FLAG:
		return eq == NULL;
	case SC_OPTIONAL:
		return true;
	case SC_VALUE:
		if (eq != NULL)
			return true;
		if (*i + 1 >= argc)
			return false;
		(*i)++;
		return true;
	default:
		return false;
	}
}

bool
safe_commands_getopt_safe(const struct sc_spec *sp, const char *const *argv, size_t argc)
{
	size_t first_operand = 0; /* 0: none yet */
	bool options = true;

	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (a[0] == '\\')
			return false;
		if (!options || a[0] != '-' || a[1] == '\0' ||
			((sp->flags & SC_NEGNUM) && sc_negnum(a))) {
			if (first_operand == 0)
				first_operand = i;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			options = false;
			continue;
		}
		if (!(a[1] == '-' ? sc_long(sp, argv, argc, &i) : sc_cluster(sp, argv, argc, &i)))
			return false;
	}
	/* Bounded: everything from the first operand on may be an operand (POSIXLY_CORRECT). */
	return sp->max_operands < 0 || first_operand == 0 ||
		argc - first_operand <= (size_t)sp->max_operands;
}

/* An argument find reads as the start of its expression rather than a starting point. */
static bool
sc_find_expression(const char *a)
{
	return (a[0] == '-' && a[1] != '\0') || strcmp(a, "(") == 0 || strcmp(a, ")") == 0 ||
		strcmp(a, "!") == 0 || strcmp(a, ",") == 0;
}

/* -newerXY (X one of a B c m, Y one of a B c m t): compares with a reference; one value. */
static bool
sc_find_newer(const char *a)
{
	return strncmp(a, "-newer", 6) == 0 && strlen(a) == 8 && strchr("aBcm", a[6]) != NULL &&
		strchr("aBcmt", a[7]) != NULL;
}

bool
safe_commands_find_safe(const struct sc_spec *sp, const char *const *argv, size_t argc)
{
	size_t i = 1;

	/* options before the starting points: -H -L -P, -D debugopts, -Olevel */
	for (; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "-H") == 0 || strcmp(a, "-L") == 0 || strcmp(a, "-P") == 0)
			continue;
		if (strcmp(a, "-D") == 0 && i + 1 < argc) {
			i++;
			continue;
		}
		if (strncmp(a, "-O", 2) == 0 && a[2] != '\0' &&
			strspn(a + 2, "0123456789") == strlen(a + 2))
			continue;
		break;
	}
	for (; i < argc && !sc_find_expression(argv[i]); i++)
		if (argv[i][0] == '\\')
			return false;
	for (; i < argc; i++) {
		const char *a = argv[i];
		enum sc_kind k = sc_find_newer(a) ? SC_VALUE
						  : safe_commands_allowed(sp->allow, a, strlen(a));

		if (k == SC_VALUE && i + 1 < argc)
			i++;
		else if (k != SC_FLAG)
			return false; /* -exec, -delete, -fprint..., a stray word, a missing value
				       */
	}
	return true;
}

/* N or N,M followed by p: sed's script for "print those lines" and nothing else. */
static bool
sc_sed_lines(const char *s)
{
	size_t n = strlen(s), a;

	if (n < 2 || s[n - 1] != 'p')
		return false;
	a = strspn(s, "0123456789");
	if (a == n - 1)
		return a > 0;
	if (a == 0 || s[a] != ',')
		return false;
	return strspn(s + a + 1, "0123456789") == n - a - 2 && n - a - 2 > 0;
}

bool
safe_commands_sed_safe(const char *const *argv, size_t argc)
{
	/* The file must not read as an option: "--expression=1e cmd" would make "1p" a file
	 * and run cmd; "-i", "-s", "-f x" would change what sed does. "-" is stdin. */
	if (argc < 3 || argc > 4 || strcmp(argv[1], "-n") != 0 || !sc_sed_lines(argv[2]))
		return false;
	return argc == 3 ||
		(argv[3][0] != '\\' && (argv[3][0] != '-' || strcmp(argv[3], "-") == 0));
}
