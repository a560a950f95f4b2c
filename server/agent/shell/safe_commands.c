/*
 * Known-safe and dangerous commands (safe_commands.h). The tables are upstream's; a command that
 * needs anything the tables do not cover is simply not known safe, so the approval rules ask.
 */
#include <stdlib.h>
#include <string.h>

#include "safe_commands.h"
#include "shell_script.h"
#include "shell_words.h"
#include "protocol/xmalloc.h"

static bool
sc_in(const char *s, const char *const *set)
{
	for (; *set != NULL; set++)
		if (strcmp(s, *set) == 0)
			return true;
	return false;
}

static bool
sc_starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/*
 * The program name when argv[0] is a bare name (Rust: one path component with a file name):
 * "cat" and "cat/" qualify, "./cat", "/bin/cat", ".", "/" do not. Heap string or NULL.
 */
static char *
sc_bare_name(const char *p)
{
	size_t n = strlen(p);

	while (n > 0 && p[n - 1] == '/')
		n--;
	if (n == 0 || memchr(p, '/', n) != NULL)
		return NULL;
	if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
		return NULL;
	return xstrndup(p, n);
}

/* sed -n's argument: /^(\d+,)?\d+p$/. */
static bool
sc_sed_n_arg(const char *s)
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

/* Any argument from index `from` in set, or starting with one of the --opt= forms. */
static bool
sc_has(const char *const *argv, size_t argc, size_t from, const char *const *set,
	const char *const *eq_prefixes)
{
	for (size_t i = from; i < argc; i++) {
		if (sc_in(argv[i], set))
			return true;
		for (size_t k = 0; eq_prefixes != NULL && eq_prefixes[k] != NULL; k++)
			if (sc_starts(argv[i], eq_prefixes[k]))
				return true;
	}
	return false;
}

/* The option checks of base64, find, rg and sed -n. */
static bool
sc_safe_with_options(const char *name, const char *const *argv, size_t argc)
{
	static const char *const base64[] = {"-o", "--output", NULL};
	static const char *const base64_eq[] = {"--output=", NULL};
	static const char *const find[] = {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls",
		"-fprint", "-fprint0", "-fprintf", NULL};
	static const char *const rg[] = {"--search-zip", "-z", "--pre", "--hostname-bin", NULL};
	static const char *const rg_eq[] = {"--pre=", "--hostname-bin=", NULL};

	if (strcmp(name, "base64") == 0) {
		for (size_t i = 1; i < argc; i++)
			if (sc_starts(argv[i], "-o") && strcmp(argv[i], "-o") != 0)
				return false;
		return !sc_has(argv, argc, 1, base64, base64_eq);
	}
	if (strcmp(name, "find") == 0)
		return !sc_has(argv, argc, 0, find, NULL);
	if (strcmp(name, "rg") == 0)
		return !sc_has(argv, argc, 0, rg, rg_eq);
	if (strcmp(name, "sed") == 0)
		return argc <= 4 && argc >= 3 && strcmp(argv[1], "-n") == 0 &&
			sc_sed_n_arg(argv[2]);
	return false;
}

/* One command is read-only by the tables. */
bool
safe_commands_is_safe_exec(const char *const *argv, size_t argc)
{
	static const char *const plain[] = {"cat", "cd", "cut", "echo", "expr", "false", "grep",
		"head", "id", "ls", "nl", "paste", "pwd", "rev", "seq", "stat", "tail", "tr",
		"true", "uname", "uniq", "wc", "which", "whoami", "numfmt", "tac", NULL};
	char *name;
	bool safe;

	if (argc == 0 || (name = sc_bare_name(argv[0])) == NULL)
		return false;
	safe = sc_in(name, plain) || sc_safe_with_options(name, argv, argc);
	free(name);
	return safe;
}

/* zsh is treated as bash (an exact "zsh" word), then one command or a plain script. */
bool
safe_commands_is_known_safe(const char *const *argv, size_t argc)
{
	const char **v = xcalloc(argc + 1, sizeof(*v));
	struct shell_script s = {NULL, 0};
	const char *script;
	bool safe;

	for (size_t i = 0; i < argc; i++)
		v[i] = strcmp(argv[i], "zsh") == 0 ? "bash" : argv[i];
	safe = safe_commands_is_safe_exec(v, argc);
	if (!safe && (script = shell_script_of(v, argc)) != NULL &&
		shell_script_parse_plain(script, &s) == 0 && s.n > 0) {
		safe = true;
		for (size_t i = 0; i < s.n && safe; i++)
			safe = safe_commands_is_safe_exec(
				shell_words_argv(&s.cmds[i]), s.cmds[i].n);
	}
	shell_script_free(&s);
	free(v);
	return safe;
}

/* rm -f / rm -rf, looking through sudo. */
bool
safe_commands_is_dangerous_exec(const char *const *argv, size_t argc)
{
	while (argc > 0 && strcmp(argv[0], "sudo") == 0)
		argv++, argc--;
	return argc >= 2 && strcmp(argv[0], "rm") == 0 &&
		(strcmp(argv[1], "-f") == 0 || strcmp(argv[1], "-rf") == 0);
}

/* Dangerous directly or in any command of a plain bash -lc script. */
bool
safe_commands_is_dangerous(const char *const *argv, size_t argc)
{
	struct shell_script s = {NULL, 0};
	const char *script;
	bool bad = safe_commands_is_dangerous_exec(argv, argc);

	if (!bad && (script = shell_script_of(argv, argc)) != NULL &&
		shell_script_parse_plain(script, &s) == 0) {
		for (size_t i = 0; i < s.n && !bad; i++)
			bad = safe_commands_is_dangerous_exec(
				shell_words_argv(&s.cmds[i]), s.cmds[i].n);
	}
	shell_script_free(&s);
	return bad;
}
