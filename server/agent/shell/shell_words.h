/*
 * Shell words: POSIX-style splitting and joining of a command line the way upstream's Rust
 * `shlex` crate does it, because the wire shows shlex's choices verbatim (a commandExecution
 * item's `command` is the shlex-joined argv, "/bin/bash -lc 'touch x && echo hi'", and
 * commandActions carry shlex-joined sub-commands).
 *
 * Splitting (shlex::split): words are separated by space, tab and newline; '#' at the start of a
 * word comments out the rest of the line; '...' is literal; "..." keeps backslashes except before
 * $ ` " \ and newline; an unquoted backslash escapes the next byte (backslash-newline vanishes).
 * Operators such as && are not special: "a&&b" is one word. An unterminated quote or a trailing
 * backslash is an error.
 *
 * Quoting (shlex::try_quote): a word made only of [A-Za-z0-9+-./:@]_] stays bare; otherwise each
 * maximal run is put in single quotes when it has no ' \ ^, else in double quotes (escaping $ ` "
 * \), preferring bare > single > double and splitting the word into runs where one style cannot
 * cover the next byte; a leading ^ is single-quoted on its own; "" becomes ''.
 *
 * Every list and string here has a ceiling (SHELL_WORDS_MAX words, SHELL_WORDS_BYTES bytes).
 */
#ifndef SHELL_WORDS_H
#define SHELL_WORDS_H

#include <stddef.h>

#define SHELL_WORDS_MAX	  65536	     /* words in one list */
#define SHELL_WORDS_BYTES (8u << 20) /* bytes of one word or one joined line */

/* An owned list of NUL-terminated words (an argv without the trailing NULL). */
struct shell_words {
	char **v;   /* owned, each element owned */
	size_t n;   /* words held */
	size_t cap; /* slots allocated */
};

/* An empty list. */
void shell_words_init(struct shell_words *w);
/* Free every word and the array; the list is empty again. Accepts NULL. */
void shell_words_free(struct shell_words *w);
/* Append a copy of len bytes of s as one word; 0 or -E2BIG (too many words or too long). */
int shell_words_push(struct shell_words *w, const char *s, size_t len);
/* Append copies of argv[0..argc); 0 or -E2BIG. */
int shell_words_append(struct shell_words *w, const char *const *argv, size_t argc);
/* The list as a borrowed const argv (valid until the list changes). */
const char *const *shell_words_argv(const struct shell_words *w);

/*
 * Split a command line into words as shlex::split. Returns 0 (out holds the words, appended),
 * -EINVAL for an unterminated quote or a trailing backslash (out is left empty), -E2BIG.
 */
int shell_words_split(const char *s, struct shell_words *out);

/* One word quoted for a POSIX shell as shlex::try_quote (heap string, caller frees). */
char *shell_words_quote(const char *s);
/* The words quoted and joined with single spaces as shlex::try_join (heap string). */
char *shell_words_join(const char *const *argv, size_t argc);

/*
 * The argv upstream runs a script with: [shell, "-lc" | "-c", script] for bash, zsh and sh
 * (login picks -lc). Appends to out; 0 or -E2BIG.
 */
int shell_words_exec_argv(
	const char *shell, int login, const char *script, struct shell_words *out);

#endif
