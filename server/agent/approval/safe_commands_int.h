/*
 * Inside safe_commands: the allowlist of each known-safe program (safe_commands_table.c) and
 * the reader that checks an argv against it the way the program's own option parser would
 * read it (safe_commands_args.c).
 *
 * An allowlist is one string of spellings separated by spaces:
 *   -x         a short option without a value (clusters such as -la are read letter by letter)
 *   -x=        a short option taking a value, attached (-n5) or as the next argument (-n 5)
 *   --name     a long option without a value (--name=V is refused)
 *   --name=    a long option taking a value: --name=V or --name V
 *   --name[=]  a long option with an optional value: --name or --name=V (never the next word)
 * Long options match exactly: GNU getopt_long also takes any unambiguous abbreviation, and an
 * abbreviation is refused here, since which option it names depends on the program's whole
 * option table (--out could be --output). --help and --version are accepted everywhere.
 */
#ifndef SAFE_COMMANDS_INT_H
#define SAFE_COMMANDS_INT_H

#include <stdbool.h>
#include <stddef.h>

enum sc_form {
	SC_GETOPT, /* options anywhere (GNU permutes), `--` ends them, the rest are operands */
	SC_TEXT,   /* every argument is text the program prints, computes or ignores */
	SC_FIND,   /* find's starting points and expression (safe_commands_find_safe) */
	SC_SED,	   /* only `sed -n N[,M]p [FILE]` (safe_commands_sed_safe) */
};

/* How a program reads its arguments and which options it may be given. */
struct sc_spec {
	const char *name;
	enum sc_form form;
	const char *allow; /* the spellings (SC_GETOPT, SC_FIND) */
	int max_operands;  /* -1: any number; else a bound (uniq IN OUT writes OUT) */
	unsigned flags;
};

#define SC_DIGITS 1u /* digits are options in a cluster (grep -5, head -20: a count) */
#define SC_NEGNUM 2u /* an argument like -1 or -.5 is a number operand (seq) */

/* The spec of a bare program name, or NULL when the program is not known safe. */
const struct sc_spec *safe_commands_spec(const char *name);

/* The kinds of spelling an allowlist holds. */
enum sc_kind { SC_NONE, SC_FLAG, SC_VALUE, SC_OPTIONAL };

/* What the allowlist says of the option spelled opt[0..len) ("-x", "--name"). */
enum sc_kind safe_commands_allowed(const char *allow, const char *opt, size_t len);
/* argv[1..] read as GNU getopt_long reads it: every option allowed, operands within bound. */
bool safe_commands_getopt_safe(const struct sc_spec *sp, const char *const *argv, size_t argc);
/* find: -H -L -P -D x -ON, starting points, then only allowed primaries and their values. */
bool safe_commands_find_safe(const struct sc_spec *sp, const char *const *argv, size_t argc);
/* sed -n N[,M]p, optionally one file that cannot be read as an option. */
bool safe_commands_sed_safe(const char *const *argv, size_t argc);

#endif
