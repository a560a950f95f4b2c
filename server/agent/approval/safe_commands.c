/*
 * Known-safe and dangerous commands (safe_commands.h). A command is known safe when its
 * program is in the table (safe_commands_table.c) and every argument is an allowed option, the
 * value of one, or an operand the program cannot read as an option (safe_commands_args.c);
 * anything else is simply not known safe, so the approval rules ask.
 *
 * Inside `bash -lc SCRIPT` the words are judged as bash will pass them, not as written: this
 * file reads each word again with bash's quote removal (a bare "\-e" is "-e"), and a word with
 * an unquoted glob character (* ? [) may become any number of file names, so it is accepted
 * only where that cannot matter: not for a program with a bound on operands or sed, and not
 * when the word could expand to something starting with '-'.
 */
#include <stdlib.h>
#include <string.h>

#include "safe_commands.h"
#include "safe_commands_int.h"
#include "agent/shell/shell_script.h"
#include "agent/shell/shell_words.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

/* The words of a recognized script as bash passes them, and which ones bash may glob. */
struct sc_words {
	struct shell_words w;
	bool *glob; /* per word */
};

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

/* One command is read-only by the tables. */
bool
safe_commands_is_safe_exec(const char *const *argv, size_t argc)
{
	const struct sc_spec *sp;
	char *name;
	bool safe = false;

	if (argc == 0 || (name = sc_bare_name(argv[0])) == NULL)
		return false;
	if ((sp = safe_commands_spec(name)) != NULL) {
		switch (sp->form) {
		case SC_TEXT:
			safe = true;
			break;
		case SC_GETOPT:
			safe = safe_commands_getopt_safe(sp, argv, argc);
			break;
		case SC_FIND:
			safe = safe_commands_find_safe(sp, argv, argc);
			break;
		case SC_SED:
			safe = safe_commands_sed_safe(argv, argc);
			break;
		}
	}
	free(name);
	return safe;
}

/* Bytes between words in a script shell_script_parse_plain accepted: blanks and operators. */
static bool
sc_gap(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '|' || c == '&' || c == ';';
}

/*
 * Read the words of a script that shell_script_parse_plain accepted, with bash's quote
 * removal: '...' literal; "..." drops the backslash before " \ $ ` (and a backslash-newline);
 * a bare backslash escapes the next byte. 0, or -1 when a word does not end as expected.
 */
static int
sc_script_words(const char *s, struct sc_words *out)
{
	struct buf b;
	size_t cap = 0;
	int r = 0;

	buf_init(&b, SHELL_WORDS_BYTES);
	while (r == 0) {
		bool glob = false;

		while (sc_gap(*s))
			s++;
		if (*s == '\0')
			break;
		buf_reset(&b);
		while (r == 0 && *s != '\0' && !sc_gap(*s)) {
			if (*s == '\'') {
				const char *end = strchr(s + 1, '\'');

				if (end == NULL)
					r = -1;
				else
					r = buf_add(&b, s + 1, (size_t)(end - s - 1));
				s = end != NULL ? end + 1 : s;
			} else if (*s == '"') {
				for (s++; r == 0 && *s != '"'; s++) {
					if (*s == '\0') {
						r = -1;
						break;
					}
					if (*s == '\\' && s[1] == '\n') {
						s++; /* a line continuation: both bytes go */
						continue;
					}
					if (*s == '\\' && s[1] != '\0' && strchr("\"\\$`", s[1]))
						s++;
					r = buf_addc(&b, *s);
				}
				s += r == 0;
			} else {
				if (*s == '\\' && s[1] != '\0')
					s++;
				else if (strchr("*?[", *s) != NULL)
					glob = true;
				r = buf_addc(&b, *s++);
			}
		}
		if (r == 0 && (r = shell_words_push(&out->w, b.ptr ? b.ptr : "", b.len)) == 0) {
			if (out->w.cap > cap) { /* grows as the word list does */
				cap = out->w.cap;
				out->glob = xrealloc(out->glob, cap * sizeof(*out->glob));
			}
			out->glob[out->w.n - 1] = glob;
		}
	}
	buf_free(&b);
	return r == 0 ? 0 : -1;
}

/* A command of a script, its words as bash passes them, is safe; glob words only if harmless. */
static bool
sc_script_command_safe(const char *const *argv, const bool *glob, size_t argc)
{
	const struct sc_spec *sp = NULL;
	char *name = sc_bare_name(argv[0]);

	if (name != NULL)
		sp = safe_commands_spec(name);
	free(name);
	if (sp == NULL || !safe_commands_is_safe_exec(argv, argc))
		return false;
	for (size_t i = 1; i < argc; i++) {
		if (!glob[i] || sp->form == SC_TEXT)
			continue;
		/* any number of names, all starting as the word does before its first glob */
		if (sp->form == SC_SED || sp->max_operands >= 0 || strchr("-*?[", argv[i][0]))
			return false;
	}
	return true;
}

/* Each command of a plain script, read as bash passes its words, is safe (safe_commands.h). */
int
safe_commands_script_each(const char *script, bool *safe, size_t n)
{
	struct shell_script s = {NULL, 0};
	struct sc_words w = {{NULL, 0, 0}, NULL};
	size_t at = 0, total = 0;
	int r = -1;

	memset(safe, 0, n * sizeof(*safe));
	shell_words_init(&w.w);
	if (shell_script_parse_plain(script, &s) == 0 && s.n == n &&
		sc_script_words(script, &w) == 0) {
		for (size_t i = 0; i < s.n; i++)
			total += s.cmds[i].n;
		/* the parser's words and ours must line up one to one */
		if (total == w.w.n) {
			for (size_t i = 0; i < s.n; i++) {
				safe[i] = sc_script_command_safe(
					shell_words_argv(&w.w) + at, w.glob + at, s.cmds[i].n);
				at += s.cmds[i].n;
			}
			r = 0;
		}
	}
	shell_words_free(&w.w);
	free(w.glob);
	shell_script_free(&s);
	return r;
}

/* Every command of a plain script is safe. */
static bool
sc_script_safe(const char *script)
{
	struct shell_script s = {NULL, 0};
	bool *each, safe;
	size_t n;

	if (shell_script_parse_plain(script, &s) != 0 || s.n == 0) {
		shell_script_free(&s);
		return false;
	}
	n = s.n;
	shell_script_free(&s);
	each = xcalloc(n, sizeof(*each));
	safe = safe_commands_script_each(script, each, n) == 0;
	for (size_t i = 0; i < n && safe; i++)
		safe = each[i];
	free(each);
	return safe;
}

/* zsh is treated as bash (an exact "zsh" word), then one command or a plain script. */
bool
safe_commands_is_known_safe(const char *const *argv, size_t argc)
{
	const char **v = xcalloc(argc + 1, sizeof(*v));
	const char *script;
	bool safe;

	for (size_t i = 0; i < argc; i++)
		v[i] = strcmp(argv[i], "zsh") == 0 ? "bash" : argv[i];
	safe = safe_commands_is_safe_exec(v, argc);
	if (!safe && (script = shell_script_of(v, argc)) != NULL)
		safe = sc_script_safe(script);
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
