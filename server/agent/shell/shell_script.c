/*
 * Plain-command scripts (shell_script.h). One pass over the script: words are built part by part
 * (bare text, '...', "..."), operators end a command, and the first construct outside the plain
 * language rejects the whole script. Nothing here runs or expands anything.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shell_script.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

/* How the previous command ended: decides whether a command must follow. */
enum ss_pending { SS_NONE, SS_TERMINATED, SS_NEEDS_COMMAND };

/* A word being read: its text and whether it is one bare part (a tree-sitter "word"). */
struct ss_word {
	struct buf text;
	size_t parts;
	bool bare_only;
	bool has_bare_brace; /* a { } pair with , or .. inside, outside quotes */
};

/* Shells by exact path, as upstream's shell_detect (attacker paths such as ./bash do not count). */
enum shell_kind
shell_script_detect(const char *p)
{
	static const struct {
		const char *path;
		enum shell_kind kind;
	} known[] = {
		{"zsh", SHELL_KIND_ZSH},
		{"/bin/zsh", SHELL_KIND_ZSH},
		{"/usr/bin/zsh", SHELL_KIND_ZSH},
		{"/usr/local/bin/zsh", SHELL_KIND_ZSH},
		{"/opt/homebrew/bin/zsh", SHELL_KIND_ZSH},
		{"sh", SHELL_KIND_SH},
		{"/bin/sh", SHELL_KIND_SH},
		{"/usr/bin/sh", SHELL_KIND_SH},
		{"bash", SHELL_KIND_BASH},
		{"/bin/bash", SHELL_KIND_BASH},
		{"/usr/bin/bash", SHELL_KIND_BASH},
		{"/usr/local/bin/bash", SHELL_KIND_BASH},
		{"/opt/homebrew/bin/bash", SHELL_KIND_BASH},
		{"pwsh", SHELL_KIND_POWERSHELL},
		{"powershell", SHELL_KIND_POWERSHELL},
		{"pwsh.exe", SHELL_KIND_POWERSHELL},
		{"powershell.exe", SHELL_KIND_POWERSHELL},
		{"/usr/local/bin/pwsh", SHELL_KIND_POWERSHELL},
		{"/usr/bin/pwsh", SHELL_KIND_POWERSHELL},
		{"/bin/pwsh", SHELL_KIND_POWERSHELL},
		{"/opt/homebrew/bin/pwsh", SHELL_KIND_POWERSHELL},
		{"cmd", SHELL_KIND_CMD},
		{"cmd.exe", SHELL_KIND_CMD},
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(p, known[i].path) == 0)
			return known[i].kind;
	return SHELL_KIND_NONE;
}

/* [bash|zsh|sh, -lc|-c, script] -> script. */
const char *
shell_script_of(const char *const *argv, size_t argc)
{
	enum shell_kind k;

	if (argc != 3 || (strcmp(argv[1], "-lc") != 0 && strcmp(argv[1], "-c") != 0))
		return NULL;
	k = shell_script_detect(argv[0]);
	if (k != SHELL_KIND_BASH && k != SHELL_KIND_ZSH && k != SHELL_KIND_SH)
		return NULL;
	return argv[2];
}

/* [powershell, -NoLogo|-NoProfile..., -Command|-c, script] -> script. */
const char *
shell_script_of_powershell(const char *const *argv, size_t argc)
{
	static const char *const flags[] = {"-nologo", "-noprofile", "-command", "-c"};

	if (argc < 3 || shell_script_detect(argv[0]) != SHELL_KIND_POWERSHELL)
		return NULL;
	for (size_t i = 1; i + 1 < argc; i++) {
		bool known = false;

		for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
			known = known || strcasecmp(argv[i], flags[f]) == 0;
		if (!known)
			return NULL;
		if (strcasecmp(argv[i], "-command") == 0 || strcasecmp(argv[i], "-c") == 0)
			return argv[i + 1];
	}
	return NULL;
}

/* Free the commands. */
void
shell_script_free(struct shell_script *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->n; i++)
		shell_words_free(&s->cmds[i]);
	free(s->cmds);
	s->cmds = NULL;
	s->n = 0;
}

/* A "..." part: no expansions; backslash pairs are kept as written. *sp points past the quote. */
static int
ss_double(const char **sp, struct buf *text)
{
	const char *s = *sp, *start = s;

	for (;;) {
		if (*s == '\0' || *s == '$' || *s == '`')
			return -EINVAL;
		if (*s == '"')
			break;
		if (*s == '\\') {
			if (s[1] == '\0')
				return -EINVAL;
			s++;
		}
		s++;
	}
	*sp = s + 1;
	return buf_add(text, start, (size_t)(s - start));
}

/* Brace expansion in a bare run: { ... , ... } or { .. }. */
static bool
ss_brace_expansion(const char *run, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (run[i] != '{')
			continue;
		for (size_t j = i + 1; j < n && run[j] != '{'; j++) {
			if (run[j] == '}')
				break;
			if (run[j] == ',' || (run[j] == '.' && j + 1 < n && run[j + 1] == '.'))
				return true;
		}
	}
	return false;
}

/* Bytes that end a bare run: blanks and the operator characters. */
static bool
ss_word_end(char c)
{
	return c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == '|' || c == '&' || c == ';';
}

/* One bare run: everything up to a quote, a blank or an operator; $ ` < > ( ) reject. */
static int
ss_bare(const char **sp, struct ss_word *w)
{
	const char *s = *sp, *start = s;

	while (!ss_word_end(*s) && *s != '\'' && *s != '"') {
		if (strchr("$`<>()", *s) != NULL)
			return -EINVAL;
		if (*s == '\\') {
			if (s[1] == '\0' || s[1] == '\n')
				return -EINVAL;
			s++;
		}
		s++;
	}
	if (ss_brace_expansion(start, (size_t)(s - start)))
		w->has_bare_brace = true;
	*sp = s;
	return buf_add(&w->text, start, (size_t)(s - start));
}

/* Read one word made of parts; *sp is at its first byte. */
static int
ss_word(const char **sp, struct ss_word *w)
{
	const char *s = *sp;
	int r = 0;

	buf_reset(&w->text);
	w->parts = 0;
	w->bare_only = true;
	w->has_bare_brace = false;
	while (r == 0 && !ss_word_end(*s)) {
		if (*s == '\'') {
			const char *end = strchr(s + 1, '\'');

			if (end == NULL)
				return -EINVAL;
			r = buf_add(&w->text, s + 1, (size_t)(end - s - 1));
			s = end + 1;
			w->bare_only = false;
		} else if (*s == '"') {
			s++;
			r = ss_double(&s, &w->text);
			w->bare_only = false;
		} else {
			r = ss_bare(&s, w);
		}
		w->parts++;
	}
	/* an empty concatenation ('' "" together) is not a word upstream accepts */
	if (r == 0 && w->parts > 1 && w->text.len == 0)
		r = -EINVAL;
	*sp = s;
	return r;
}

/* A command name upstream would not treat as a plain command. */
static bool
ss_bad_command_name(const struct ss_word *w)
{
	static const char *const keywords[] = {"if", "then", "else", "elif", "fi", "for", "while",
		"until", "do", "done", "case", "esac", "in", "function", "select", "time", "coproc",
		"{", "}", "!", "[", "[[", "]]"};
	const char *t = buf_str(&w->text);
	size_t i = 0;

	if (!w->bare_only || w->parts != 1)
		return true;
	for (size_t k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++)
		if (strcmp(t, keywords[k]) == 0)
			return true;
	/* NAME=value or NAME+=value: a variable assignment, not a command */
	if (isalpha((unsigned char)t[0]) || t[0] == '_') {
		while (isalnum((unsigned char)t[i]) || t[i] == '_')
			i++;
		if (t[i] == '=' || (t[i] == '+' && t[i + 1] == '='))
			return true;
	}
	return false;
}

/* Move the finished command into the script. */
static int
ss_finish(struct shell_script *out, struct shell_words *cur)
{
	if (out->n >= SHELL_SCRIPT_COMMANDS_MAX)
		return -E2BIG;
	out->cmds = xrealloc(out->cmds, (out->n + 1) * sizeof(*out->cmds));
	out->cmds[out->n++] = *cur;
	shell_words_init(cur);
	return 0;
}

/* An operator at *sp: its length, and whether a command must follow; -EINVAL for & |& ;; ;&. */
static int
ss_operator(const char *s, bool *needs_command)
{
	*needs_command = true;
	if (s[0] == '&')
		return s[1] == '&' ? 2 : -EINVAL;
	if (s[0] == '|')
		return s[1] == '|' ? 2 : s[1] == '&' ? -EINVAL : 1;
	*needs_command = false; /* ';' */
	return (s[1] == ';' || s[1] == '&') ? -EINVAL : 1;
}

/* Walk the script: words into the current command, operators and newlines between commands. */
static int
ss_walk(const char *s, struct shell_script *out, struct shell_words *cur, struct ss_word *w)
{
	enum ss_pending pending = SS_NONE;
	int r = 0;

	while (r == 0) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0')
			break;
		if (*s == '\n') {
			s++;
			if (cur->n > 0) {
				r = ss_finish(out, cur);
				pending = SS_TERMINATED;
			}
			continue;
		}
		if (*s == '&' || *s == '|' || *s == ';') {
			bool needs;
			int len = ss_operator(s, &needs);

			if (len < 0 || cur->n == 0)
				return -EINVAL;
			r = ss_finish(out, cur);
			pending = needs ? SS_NEEDS_COMMAND : SS_TERMINATED;
			s += len;
			continue;
		}
		if (*s == '#')
			return -EINVAL; /* a comment node: not in the plain language */
		if ((r = ss_word(&s, w)) != 0)
			return r;
		if (w->has_bare_brace || (cur->n == 0 && ss_bad_command_name(w)))
			return -EINVAL;
		r = shell_words_push(cur, buf_str(&w->text), w->text.len);
		pending = SS_NONE;
	}
	if (r == 0 && cur->n > 0)
		r = ss_finish(out, cur);
	else if (r == 0 && pending == SS_NEEDS_COMMAND)
		r = -EINVAL;
	return r;
}

/* Recognize a plain-command script. */
int
shell_script_parse_plain(const char *script, struct shell_script *out)
{
	struct shell_words cur;
	struct ss_word w;
	int r;

	out->cmds = NULL;
	out->n = 0;
	shell_words_init(&cur);
	buf_init(&w.text, SHELL_WORDS_BYTES);
	r = ss_walk(script, out, &cur, &w);
	buf_free(&w.text);
	shell_words_free(&cur);
	if (r != 0)
		shell_script_free(out);
	return r;
}

/* A literal word of a here-document command line: bare text without quotes or expansions. */
static size_t
ss_literal(const char *s)
{
	size_t n = 0;

	while (!ss_word_end(s[n]) && strchr("'\"\\$`<>(){}#", s[n]) == NULL)
		n++;
	return n;
}

/* The delimiter after << or <<-: bare, '...' or "..."; its text into delim. */
static int
ss_heredoc_delim(const char **sp, struct buf *delim)
{
	const char *s = *sp;
	size_t n;

	if (*s == '\'' || *s == '"') {
		const char *end = strchr(s + 1, *s);

		if (end == NULL || end == s + 1)
			return -EINVAL;
		n = (size_t)(end - s - 1);
		*sp = end + 1;
		return buf_add(delim, s + 1, n);
	}
	if ((n = ss_literal(s)) == 0)
		return -EINVAL;
	*sp = s + n;
	return buf_add(delim, s, n);
}

/* The body: lines up to one equal to the delimiter (tabs stripped for <<-), then only blanks. */
static int
ss_heredoc_body(const char *s, const char *delim, bool strip_tabs)
{
	size_t dl = strlen(delim);

	while (*s != '\0') {
		const char *line = s, *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);

		s = nl ? nl + 1 : line + len;
		while (strip_tabs && len > 0 && *line == '\t')
			line++, len--;
		if (len == dl && memcmp(line, delim, dl) == 0) {
			while (*s == ' ' || *s == '\t' || *s == '\n')
				s++;
			return *s == '\0' ? 0 : -EINVAL;
		}
	}
	return -EINVAL;
}

/* `cmd args <<EOF\n...\nEOF`: one literal command fed by a here-document. */
int
shell_script_heredoc_command(const char *script, struct shell_words *out)
{
	const char *s = script;
	struct buf delim;
	bool strip = false;
	int r = -EINVAL;

	buf_init(&delim, 4096);
	for (;;) {
		size_t n;

		while (*s == ' ' || *s == '\t')
			s++;
		if (s[0] == '<' && s[1] == '<')
			break;
		if ((n = ss_literal(s)) == 0)
			goto out;
		if ((r = shell_words_push(out, s, n)) != 0)
			goto out;
		r = -EINVAL;
		s += n;
	}
	s += 2;
	if (*s == '<')
		goto out; /* a here-string: not handled, the caller stays conservative */
	if (*s == '-')
		strip = true, s++;
	while (*s == ' ' || *s == '\t')
		s++;
	if (out->n == 0 || ss_heredoc_delim(&s, &delim) != 0)
		goto out;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s != '\n')
		goto out;
	r = ss_heredoc_body(s + 1, buf_str(&delim), strip);
out:
	buf_free(&delim);
	if (r != 0)
		shell_words_free(out);
	return r;
}
