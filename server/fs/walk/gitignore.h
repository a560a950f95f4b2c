/*
 * Our gitignore matcher (gitignore(5)) with the precedence the `ignore` crate gives upstream's
 * file search: within one file the last matching line wins; across directories the deepest file
 * with a matching line wins; `.ignore` beats `.gitignore`, which beats `.git/info/exclude`,
 * which beats the global excludes file (core.excludesFile, else $XDG_CONFIG_HOME/git/ignore).
 * Git sources only count inside a git work tree (a directory with `.git` at or above).
 *
 * Supported syntax: comments, blank lines, trailing-space trimming (unless escaped), `!`
 * negation, `\#` `\!` `\ ` escapes, trailing `/` (directories only), a leading or inner `/`
 * (anchored to the file's directory), `*`, `?`, `[a-z]`, `[!x]`/`[^x]`, `[[:alpha:]]`-style
 * classes, and the double star (leading "**" + "/", trailing "/" + "**", and between slashes).
 */
#ifndef GITIGNORE_H
#define GITIGNORE_H

#include <stddef.h>

#define GI_FILE_MAX  (1024 * 1024) /* bytes of one ignore file that are read */
#define GI_RULES_MAX 20000	   /* rules of one ignore file */

enum gi_match { GI_NONE = 0, GI_IGNORE = 1, GI_WHITELIST = 2 };

struct gi_rule {
	char *glob;   /* without the '!', the trailing '/' and a leading '/' */
	int negate;   /* '!' */
	int dir_only; /* trailing '/' */
	int anchored; /* contained a '/' before the end: matched against the whole relative path */
};

struct gi_list {
	struct gi_rule *rules;
	size_t n;
};

/* Add the lines of text (len bytes) as rules. */
void gi_list_parse(struct gi_list *l, const char *text, size_t len);
/* Load a file's rules (a missing file adds nothing); 0 or a negative errno. */
int gi_list_load_at(struct gi_list *l, int dirfd, const char *name);
void gi_list_free(struct gi_list *l);
/* The verdict of the list for a path relative to the list's directory ("a/b.c"). */
enum gi_match gi_list_match(const struct gi_list *l, const char *rel, int is_dir);
/* Shell-style match with gitignore's rules for '/', '**' and classes (1 = match). */
int gi_glob(const char *pat, const char *s);
/* The global excludes file's path (heap) or NULL, from git config and the environment. */
char *gi_global_path(void);

#endif
