/*
 * apply_patch hidden in a command (apply_patch.h), recognised as upstream does
 * (codex-rs/apply-patch invocation.rs) so a model that learnt to write
 *     bash -lc "cd sub && apply_patch <<'EOF'\n*** Begin Patch ...\nEOF\n"
 * gets its patch applied instead of a "command not found".
 *
 * Accepted, and nothing else:
 *   ["apply_patch" | "applypatch", <patch>]
 *   [<shell>, <flag>, <script>] with bash/zsh/sh and -c/-lc, pwsh/powershell and -Command
 *   (optionally after -NoProfile), cmd and /c (names compared by file stem, any case),
 *   where the whole script is one statement:
 *       [cd <dir> &&] (apply_patch | applypatch) <<[-]DELIM
 *       <body>
 *       DELIM
 *   DELIM bare, 'quoted' or "quoted"; <dir> a plain word, a 'raw string' or a "string"
 *   without expansions. Anything before or after (echo x;, && echo done, a second cd, an
 *   argument to apply_patch) makes it an ordinary command. Upstream matches these forms
 *   with a tree-sitter query; this is a small scanner for the same forms.
 * A bare patch as the whole command or script is an error ("patch detected without
 * explicit call to apply_patch"), checked first as upstream does.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "apply_patch_int.h"
#include "protocol/xmalloc.h"

#define IMPLICIT                                                                                   \
	"patch detected without explicit call to apply_patch. Rerun as [\"apply_patch\", "         \
	"\"<patch>\"]"

/* A shell's name as upstream compares it: the file stem, lowercased (NULL when none). */
static char *
shell_stem(const char *path)
{
	const char *base = strrchr(path, '/'), *dot;
	char *s, *q;

	base = base != NULL ? base + 1 : path;
	if (*base == '\0' || strcmp(base, "..") == 0)
		return NULL;
	dot = strrchr(base, '.');
	s = dot != NULL && dot != base ? xstrndup(base, (size_t)(dot - base)) : xstrdup(base);
	for (q = s; *q != '\0'; q++)
		*q = (char)tolower((unsigned char)*q);
	return s;
}

/* Whether [shell, flag] runs a script upstream looks into. */
static int
shell_runs_script(const char *shell, const char *flag)
{
	char *stem = shell_stem(shell);
	int yes = 0;

	if (stem == NULL)
		return 0;
	if (strcmp(stem, "bash") == 0 || strcmp(stem, "zsh") == 0 || strcmp(stem, "sh") == 0)
		yes = strcmp(flag, "-lc") == 0 || strcmp(flag, "-c") == 0;
	else if (strcmp(stem, "pwsh") == 0 || strcmp(stem, "powershell") == 0)
		yes = strcasecmp(flag, "-command") == 0;
	else if (strcmp(stem, "cmd") == 0)
		yes = strcasecmp(flag, "/c") == 0;
	free(stem);
	return yes;
}

/* The script of a shell invocation, or NULL. */
static const char *
shell_script(const char *const *argv, size_t argc)
{
	char *stem;
	int skip;

	if (argc == 3 && shell_runs_script(argv[0], argv[1]))
		return argv[2];
	if (argc != 4 || (stem = shell_stem(argv[0])) == NULL)
		return NULL;
	skip = (strcmp(stem, "pwsh") == 0 || strcmp(stem, "powershell") == 0) &&
		strcasecmp(argv[1], "-noprofile") == 0;
	free(stem);
	return skip && shell_runs_script(argv[0], argv[2]) ? argv[3] : NULL;
}

/* Skip spaces and tabs (within one line). */
static void
scan_blanks(const char **s)
{
	while (**s == ' ' || **s == '\t')
		(*s)++;
}

/* Skip any whitespace, newlines included. */
static void
scan_space(const char **s)
{
	while (**s == ' ' || **s == '\t' || **s == '\n' || **s == '\r')
		(*s)++;
}

/* A character that may be part of a plain shell word. */
static int
scan_wordc(char c)
{
	return c != '\0' && strchr(" \t\r\n;&|<>()$`\"'\\", c) == NULL;
}

/* A plain word, a 'raw string' or a "string" without expansions; its text in *out. */
static int
scan_arg(const char **s, char **out)
{
	const char *p = *s, *q;

	if (*p == '\'') {
		if ((q = strchr(p + 1, '\'')) == NULL)
			return 0;
		*out = xstrndup(p + 1, (size_t)(q - p - 1));
		p = q + 1;
	} else if (*p == '"') {
		for (q = p + 1; *q != '"'; q++)
			if (*q == '\0' || *q == '$' || *q == '`' || *q == '\\')
				return 0;
		if (q == p + 1)
			return 0;
		*out = xstrndup(p + 1, (size_t)(q - p - 1));
		p = q + 1;
	} else {
		for (q = p; scan_wordc(*q); q++)
			;
		if (q == p || *p == '#')
			return 0;
		*out = xstrndup(p, (size_t)(q - p));
		p = q;
	}
	if (scan_wordc(*p) || *p == '\'' || *p == '"') { /* glued to more: not one plain node */
		free(*out);
		*out = NULL;
		return 0;
	}
	*s = p;
	return 1;
}

/* Whether s starts with word w followed by something that ends a word. */
static int
scan_word_is(const char **s, const char *w)
{
	size_t n = strlen(w);

	if (strncmp(*s, w, n) != 0 || scan_wordc((*s)[n]) || (*s)[n] == '\'' || (*s)[n] == '"')
		return 0;
	*s += n;
	return 1;
}

/* The heredoc's delimiter, then the end of its line. */
static int
scan_delim(const char **s, char **delim)
{
	const char *p = *s;

	if (!scan_arg(&p, delim))
		return 0;
	scan_blanks(&p);
	if (*p == '\r')
		p++;
	if (*p != '\n') {
		free(*delim);
		*delim = NULL;
		return 0;
	}
	*s = p + 1;
	return 1;
}

/*
 * The body of the heredoc starting at s, up to the line that is exactly delim (after
 * leading tabs for <<-), with nothing but whitespace after it. 1 and the body.
 */
static int
scan_body(const char *s, const char *delim, int strip_tabs, char **body)
{
	const char *line = s, *nl, *t, *end;
	size_t dn = strlen(delim), n;

	while (*line != '\0') {
		nl = strchr(line, '\n');
		end = nl != NULL ? nl : line + strlen(line);
		t = line;
		while (strip_tabs && *t == '\t')
			t++;
		n = (size_t)(end - t);
		if (n > 0 && t[n - 1] == '\r')
			n--;
		if (n == dn && memcmp(t, delim, dn) == 0) {
			scan_space(&end);
			if (*end != '\0' || line == s)
				return 0; /* more after the heredoc, or an empty body */
			n = (size_t)(line - s);
			while (n > 0 && s[n - 1] == '\n')
				n--;
			*body = xstrndup(s, n);
			return 1;
		}
		if (nl == NULL)
			break;
		line = nl + 1;
	}
	return 0;
}

/* upstream's extract_apply_patch_from_bash: 1 with the body (and cd's dir), else 0. */
static int
shell_extract(const char *script, char **body, char **workdir)
{
	const char *s = script, *save;
	char *dir = NULL, *delim = NULL;
	int ok = 0, strip = 0;

	scan_space(&s);
	save = s;
	if (scan_word_is(&s, "cd")) {
		scan_blanks(&s);
		if (!scan_arg(&s, &dir))
			goto out;
		scan_blanks(&s);
		if (strncmp(s, "&&", 2) != 0)
			goto out;
		s += 2;
		scan_space(&s);
	} else
		s = save;
	if (!scan_word_is(&s, "apply_patch") && !scan_word_is(&s, "applypatch"))
		goto out;
	scan_blanks(&s);
	if (strncmp(s, "<<", 2) != 0 || s[2] == '<')
		goto out;
	s += 2;
	if (*s == '-')
		strip = 1, s++;
	scan_blanks(&s);
	if (!scan_delim(&s, &delim) || !scan_body(s, delim, strip, body))
		goto out;
	*workdir = dir;
	dir = NULL;
	ok = 1;
out:
	free(dir);
	free(delim);
	return ok;
}

/* Parse a found patch; BODY, or ERROR with the parser's message. */
static enum apply_patch_intercept
shell_parse(const char *text, char *workdir, struct patch **out, char **cause)
{
	if (apply_patch_parse(text, strlen(text), out, cause) != 0) {
		free(workdir);
		return APPLY_PATCH_ERROR;
	}
	(*out)->workdir = workdir;
	return APPLY_PATCH_BODY;
}

/* Whether text parses as a patch on its own (a patch given without apply_patch). */
static int
shell_is_bare_patch(const char *text)
{
	struct patch *p = NULL;
	int yes = apply_patch_parse(text, strlen(text), &p, NULL) == 0;

	apply_patch_free(p);
	return yes;
}

enum apply_patch_intercept
apply_patch_intercept_argv(const char *const *argv, size_t argc, struct patch **out, char **cause)
{
	const char *script = shell_script(argv, argc);
	char *body = NULL, *workdir = NULL;
	enum apply_patch_intercept r;

	*out = NULL;
	if ((argc == 1 && shell_is_bare_patch(argv[0])) ||
		(script != NULL && shell_is_bare_patch(script))) {
		*cause = xstrdup(IMPLICIT);
		return APPLY_PATCH_ERROR;
	}
	if (argc == 2 &&
		(strcmp(argv[0], "apply_patch") == 0 || strcmp(argv[0], "applypatch") == 0))
		return shell_parse(argv[1], NULL, out, cause);
	if (script == NULL || !shell_extract(script, &body, &workdir))
		return APPLY_PATCH_NOT;
	r = shell_parse(body, workdir, out, cause);
	free(body);
	return r;
}

enum apply_patch_intercept
apply_patch_intercept_script(const char *script, struct patch **out, char **cause)
{
	const char *argv[3] = {"bash", "-lc", script};

	return apply_patch_intercept_argv(argv, 3, out, cause);
}
