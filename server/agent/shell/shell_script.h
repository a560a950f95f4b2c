/*
 * Shell scripts given to `bash -lc`: which argv is a shell wrapper, and the one shape of script
 * upstream trusts enough to look inside — a sequence of plain commands (bare words, '...' and
 * "..." without expansions, and their concatenations) joined by &&, ||, ;, | and newlines.
 * Upstream decides that with tree-sitter-bash (bash.rs try_parse_word_only_commands_sequence);
 * this is our own recognizer of the same language, and anything it does not recognize is
 * rejected, which makes every caller take its conservative branch (not known safe, "unknown"
 * action). Words keep their source text as upstream does: a bare word is taken verbatim
 * (backslashes included), quotes are stripped from "..." and '...' without unescaping.
 *
 * Rejected: redirections, pipes into a subshell, ( ) { } groups and brace expansion, $ and `
 * outside single quotes, a leading NAME=value, comments, & and |&, ;; and empty commands,
 * control keywords (if for while case function [ [[ ! ...) in command position, and a command
 * name that is quoted or concatenated.
 */
#ifndef SHELL_SCRIPT_H
#define SHELL_SCRIPT_H

#include <stddef.h>

#include "shell_words.h"

#define SHELL_SCRIPT_COMMANDS_MAX 1024 /* commands in one recognized script */

enum shell_kind {
	SHELL_KIND_NONE,
	SHELL_KIND_BASH,
	SHELL_KIND_ZSH,
	SHELL_KIND_SH,
	SHELL_KIND_POWERSHELL,
	SHELL_KIND_CMD,
};

/* The plain commands of a script, in source order. */
struct shell_script {
	struct shell_words *cmds; /* owned */
	size_t n;
};

/*
 * The kind of shell a program path names. Exact names only, as upstream: "bash", "/bin/bash",
 * "/usr/bin/bash", ... — a "./bash" or "/tmp/bash" in the workspace is not a shell.
 */
enum shell_kind shell_script_detect(const char *program);

/*
 * The script of a [bash|zsh|sh, -lc|-c, script] argv (borrowed from argv), or NULL when argv is
 * not exactly that shape.
 */
const char *shell_script_of(const char *const *argv, size_t argc);

/* The script of [powershell, flags..., -Command|-c, script] (borrowed), or NULL. */
const char *shell_script_of_powershell(const char *const *argv, size_t argc);

/*
 * Recognize a plain-command script. 0 (out holds the commands; it may hold none for a blank
 * script), -EINVAL when the script is anything else, -E2BIG past the ceilings.
 */
int shell_script_parse_plain(const char *script, struct shell_script *out);

/*
 * A single literal command fed by a here-document (`cat <<'EOF' ... EOF`): its words, for the
 * approval rules (upstream's parse_shell_lc_single_command_prefix). 0 or -EINVAL.
 */
int shell_script_heredoc_command(const char *script, struct shell_words *out);

/* Free the commands; the script is empty again. Accepts NULL. */
void shell_script_free(struct shell_script *s);

#endif
