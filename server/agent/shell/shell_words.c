/*
 * Shell words (shell_words.h): shlex's split and quote, byte for byte. Quoting works on bytes as
 * shlex does: any byte >= 0x80 rules out the bare style but is fine inside quotes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shell_words.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define QUOTE_BARE   1u
#define QUOTE_SINGLE 2u
#define QUOTE_DOUBLE 4u

/* An empty list. */
void
shell_words_init(struct shell_words *w)
{
	w->v = NULL;
	w->n = 0;
	w->cap = 0;
}

/* Free every word and the array. */
void
shell_words_free(struct shell_words *w)
{
	if (w == NULL)
		return;
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
	shell_words_init(w);
}

/* Append a copy of one word, growing the array by doubling under its ceiling. */
int
shell_words_push(struct shell_words *w, const char *s, size_t len)
{
	if (w->n >= SHELL_WORDS_MAX || len > SHELL_WORDS_BYTES)
		return -E2BIG;
	/* one spare slot keeps the array NULL-terminated for shell_words_argv */
	if (w->n + 2 > w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 8;

		w->v = xrealloc(w->v, cap * sizeof(*w->v));
		w->cap = cap;
	}
	w->v[w->n++] = xstrndup(s, len);
	w->v[w->n] = NULL;
	return 0;
}

/* Append copies of an argv. */
int
shell_words_append(struct shell_words *w, const char *const *argv, size_t argc)
{
	for (size_t i = 0; i < argc; i++) {
		int r = shell_words_push(w, argv[i], strlen(argv[i]));

		if (r != 0)
			return r;
	}
	return 0;
}

/* The list as a const argv. */
const char *const *
shell_words_argv(const struct shell_words *w)
{
	static const char *const empty[1] = {NULL};

	return w->n ? (const char *const *)w->v : empty;
}

/* Inside "...": backslash keeps itself except before $ ` " \ and newline. */
static int
sw_split_double(const char **sp, struct buf *word)
{
	const char *s = *sp;
	int r = 0;

	for (;;) {
		char c = *s++;

		if (c == '\0')
			return -EINVAL;
		if (c == '"')
			break;
		if (c == '\\') {
			char d = *s++;

			if (d == '\0')
				return -EINVAL;
			if (d == '$' || d == '`' || d == '"' || d == '\\')
				r = buf_addc(word, d);
			else if (d != '\n')
				r = buf_add(word, s - 2, 2);
		} else {
			r = buf_addc(word, c);
		}
		if (r != 0)
			return r;
	}
	*sp = s;
	return 0;
}

/* One word starting at *sp (not blank); the word ends at blank or end of input. */
static int
sw_split_word(const char **sp, struct buf *word)
{
	const char *s = *sp;
	int r = 0;

	while (*s != '\0' && *s != ' ' && *s != '\t' && *s != '\n') {
		char c = *s++;

		if (c == '"') {
			r = sw_split_double(&s, word);
		} else if (c == '\'') {
			const char *end = strchr(s, '\'');

			if (end == NULL)
				return -EINVAL;
			r = buf_add(word, s, (size_t)(end - s));
			s = end + 1;
		} else if (c == '\\') {
			if (*s == '\0')
				return -EINVAL;
			if (*s != '\n')
				r = buf_addc(word, *s);
			s++;
		} else {
			r = buf_addc(word, c);
		}
		if (r != 0)
			return r;
	}
	*sp = s;
	return 0;
}

/* shlex::split: blanks separate words, '#' at a word start comments to end of line. */
int
shell_words_split(const char *s, struct shell_words *out)
{
	struct buf word;
	size_t first = out->n;
	int r = 0;

	buf_init(&word, SHELL_WORDS_BYTES);
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\n')
			s++;
		if (*s == '\0')
			break;
		if (*s == '#') {
			while (*s != '\0' && *s != '\n')
				s++;
			continue;
		}
		buf_reset(&word);
		if ((r = sw_split_word(&s, &word)) != 0)
			break;
		if ((r = shell_words_push(out, buf_str(&word), word.len)) != 0)
			break;
	}
	buf_free(&word);
	if (r != 0) {
		while (out->n > first)
			free(out->v[--out->n]);
		if (out->v != NULL)
			out->v[out->n] = NULL;
	}
	return r;
}

/* Which quoting styles can hold byte c (shlex's unquoted_ok / single_quoted_ok / double). */
static unsigned
sw_styles(unsigned char c)
{
	unsigned ok = QUOTE_SINGLE | QUOTE_DOUBLE;

	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		strchr("+-./:@]_", c) != NULL)
		ok |= QUOTE_BARE;
	if (c == '\'' || c == '^' || c == '\\')
		ok &= ~QUOTE_SINGLE;
	if (c == '`' || c == '$' || c == '!' || c == '^')
		ok &= ~QUOTE_DOUBLE;
	return ok;
}

/* The longest prefix of s[0..n) one style can hold, and the best such style. */
static size_t
sw_quote_run(const unsigned char *s, size_t n, unsigned *style)
{
	unsigned ok = QUOTE_BARE | QUOTE_SINGLE | QUOTE_DOUBLE;
	size_t i = 0;

	if (s[0] == '^') {
		/* a leading ^ is only safe right after an opening single quote */
		ok = QUOTE_SINGLE;
		i = 1;
	}
	for (; i < n; i++) {
		unsigned cur =
			ok & (s[i] >= 0x80 ? (QUOTE_SINGLE | QUOTE_DOUBLE) : sw_styles(s[i]));

		if (cur == 0)
			break;
		ok = cur;
	}
	*style = (ok & QUOTE_BARE) ? QUOTE_BARE : (ok & QUOTE_SINGLE) ? QUOTE_SINGLE : QUOTE_DOUBLE;
	return i;
}

/* Append one word, quoted, to b. */
static int
sw_quote_into(struct buf *b, const char *word)
{
	const unsigned char *s = (const unsigned char *)word;
	size_t n = strlen(word);
	int r = 0;

	if (n == 0)
		return buf_adds(b, "''");
	while (n > 0 && r == 0) {
		unsigned style;
		size_t run = sw_quote_run(s, n, &style);

		if (style == QUOTE_BARE) {
			r = buf_add(b, s, run);
		} else if (style == QUOTE_SINGLE) {
			r = buf_addc(b, '\'');
			r = r ? r : buf_add(b, s, run);
			r = r ? r : buf_addc(b, '\'');
		} else {
			r = buf_addc(b, '"');
			for (size_t i = 0; i < run && r == 0; i++) {
				if (strchr("$`\"\\", s[i]) != NULL && s[i] != '\0')
					r = buf_addc(b, '\\');
				r = r ? r : buf_addc(b, (char)s[i]);
			}
			r = r ? r : buf_addc(b, '"');
		}
		s += run;
		n -= run;
	}
	return r;
}

/* One word quoted as shlex does. */
char *
shell_words_quote(const char *s)
{
	return shell_words_join(&s, 1);
}

/* Quote every word and join with spaces; a line past the ceiling is cut (never expected). */
char *
shell_words_join(const char *const *argv, size_t argc)
{
	struct buf b;

	buf_init(&b, SHELL_WORDS_BYTES * 2);
	for (size_t i = 0; i < argc; i++) {
		if ((i > 0 && buf_addc(&b, ' ') != 0) || sw_quote_into(&b, argv[i]) != 0)
			break;
	}
	return buf_steal(&b, NULL);
}

/* [shell, -lc|-c, script]. */
int
shell_words_exec_argv(const char *shell, int login, const char *script, struct shell_words *out)
{
	const char *argv[3] = {shell, login ? "-lc" : "-c", script};

	return shell_words_append(out, argv, 3);
}
