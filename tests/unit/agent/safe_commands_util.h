/*
 * What the safe-command tests share: the golden allowlists (safe_commands_golden.h) read
 * spelling by spelling, and argv lists written as "word|word|word".
 */
#ifndef SAFE_COMMANDS_UTIL_H
#define SAFE_COMMANDS_UTIL_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agent/approval/safe_commands.h"
#include "agent/shell/shell_words.h"
#include "safe_commands_golden.h"

enum sp_kind { SP_FLAG, SP_VALUE, SP_OPTIONAL };

/* One spelling of an allowlist: "-x", "--name" and how it takes a value. */
struct spelling {
	char name[64];
	enum sp_kind kind;
};

/* The next spelling of *s (advanced past it); false at the end. */
static inline bool
spelling_next(const char **s, struct spelling *out)
{
	size_t n;

	while (*s != NULL && **s == ' ')
		(*s)++;
	if (*s == NULL || **s == '\0')
		return false;
	n = strcspn(*s, " ");
	out->kind = SP_FLAG;
	if (n > 3 && strncmp(*s + n - 3, "[=]", 3) == 0)
		out->kind = SP_OPTIONAL;
	else if (n > 1 && (*s)[n - 1] == '=')
		out->kind = SP_VALUE;
	snprintf(out->name, sizeof(out->name), "%.*s",
		(int)(n -
			(out->kind == SP_OPTIONAL		? 3
					: out->kind == SP_VALUE ? 1
								: 0)),
		*s);
	*s += n;
	return true;
}

/* The golden row of a program, or NULL. */
static inline const struct golden *
golden_of(const char *name)
{
	for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++)
		if (strcmp(golden[i].name, name) == 0)
			return &golden[i];
	return NULL;
}

/* The golden kind of a spelling; -1 when it is not in the row (--help and --version are). */
static inline int
golden_kind(const struct golden *g, const char *name)
{
	const char *s = g->allow;
	struct spelling sp;

	if (strcmp(name, "--help") == 0 || strcmp(name, "--version") == 0)
		return SP_FLAG;
	while (spelling_next(&s, &sp))
		if (strcmp(sp.name, name) == 0)
			return (int)sp.kind;
	return -1;
}

/* "a|b|c" into words. */
static inline void
words_split(const char *s, struct shell_words *w)
{
	shell_words_init(w);
	while (*s) {
		const char *e = strchr(s, '|');
		size_t n = e ? (size_t)(e - s) : strlen(s);

		shell_words_push(w, s, n);
		s += n + (e != NULL);
	}
}

/* safe_commands_is_safe_exec of "a|b|c". */
static inline bool
safe_of(const char *line)
{
	struct shell_words w;
	bool r;

	words_split(line, &w);
	r = safe_commands_is_safe_exec(shell_words_argv(&w), w.n);
	shell_words_free(&w);
	return r;
}

/* safe_commands_is_known_safe of [bash, -lc, script]. */
static inline bool
script_safe(const char *script)
{
	const char *argv[] = {"bash", "-lc", script};

	return safe_commands_is_known_safe(argv, 3);
}

#endif
