/*
 * Shared between command_actions.c (the walk over commands) and command_actions_summary.c (what
 * one command is): a borrowed view of words, and the helpers both need.
 */
#ifndef COMMAND_ACTIONS_INT_H
#define COMMAND_ACTIONS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "command_actions.h"
#include "shell_words.h"

/* A borrowed slice of words. */
struct ca_args {
	const char *const *v;
	size_t n;
};

/* A list of borrowed words computed from a slice (operands, candidates); v is owned. */
struct ca_list {
	const char **v;
	size_t n;
};

/* The slice of a word list. */
struct ca_args ca_args_of(const struct shell_words *w);
/* The words up to the first | && || ; token. */
struct ca_args ca_trim_at_connector(struct ca_args a);
/* A connector token: | && || ;. */
bool ca_is_connector(const char *t);
/* Upstream's sed -n argument check: /^(\d+,)?\d+p$/. */
bool ca_valid_sed_n_arg(const char *s);
/* The words that would be a small pipeline formatting helper (wc, head -n 40, ...). */
bool ca_is_small_formatting(struct ca_args t);
/* The summary of one command (no connectors inside). */
void ca_summarize(struct ca_args main, struct command_action *out);
/* The directory a `cd` argument list goes to, or NULL (borrowed). */
const char *ca_cd_target(struct ca_args a);
/* base joined with rel as a path (rel absolute wins); heap string. */
char *ca_join_paths(const char *base, const char *rel);
/* Free one action's strings. */
void ca_action_clear(struct command_action *a);

/* s starts with prefix / is all digits (true for "") / is in a NULL-terminated set. */
bool ca_starts(const char *s, const char *prefix);
bool ca_digits(const char *s);
bool ca_in(const char *s, const char *const *set);
/* The words left after skipping the values of flags and --flag=value (skip_flag_values). */
struct ca_list ca_skip_flag_values(struct ca_args a, const char *const *flags);
/* Keep only the words that do not start with '-'. */
void ca_non_flags(struct ca_list *l);

/* The file a reader reads, or NULL (borrowed): awk, sed -n, head/tail (is_tail picks). */
const char *ca_awk_file(struct ca_args args);
const char *ca_sed_read_path(struct ca_args args);
const char *ca_head_tail_file(struct ca_args tail, bool is_tail);
/* python -c walking the tree; python/python3/python3.x. */
bool ca_python_walks(struct ca_args args);
bool ca_is_python(const char *c);

#endif
