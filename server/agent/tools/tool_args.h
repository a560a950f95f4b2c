/*
 * A call's arguments as the shell tools read them: an integer with a default, and a JSON array
 * of strings as argv words (upstream's `command: [..]`, `prefix_rule`).
 */
#ifndef TOOL_ARGS_H
#define TOOL_ARGS_H

#include <jansson.h>

#include "agent/shell/shell_words.h"

/* args[key] when it is an integer, else dflt. */
long long tool_args_int(const json_t *args, const char *key, long long dflt);
/* Which shell tool a call is: how it runs and how its answer is worded. */
enum tool_shell_kind {
	TOOL_SHELL_EXEC, /* exec_command: unified exec text, a session while it runs */
	TOOL_SHELL_ARGV, /* shell {command: argv}: JSON */
	TOOL_SHELL_TEXT, /* shell_command, local_shell_call: freeform text */
};

#define TOOL_SHELL_DEFAULT "/bin/bash"

/* A shell tool's call read from its arguments (tool_args_shell). */
struct tool_shell_call {
	enum tool_shell_kind kind;
	struct shell_words argv;   /* as it runs: [shell, -lc|-c, script] for a script */
	struct shell_words prefix; /* the model's prefix_rule (empty: none) */
	const char *workdir;	   /* borrowed from the call's arguments, or NULL */
	char *justification;	   /* heap, or NULL */
	int escalated;		   /* sandbox_permissions: "require_escalated" */
	int tty;
	long long yield_ms;   /* exec_command's, clamped */
	long long timeout_ms; /* the shell tools' (default_timeout without one); -1: none */
	size_t max_tokens;    /* exec_command's max_output_tokens, or 0 */
};

/*
 * The call `name` (exec_command, shell_command, shell, local_shell_call: then `call`'s action)
 * with its parsed arguments `args`: 0 and *sc filled (free with tool_args_shell_free), or -1
 * and *why the model's text ("failed to parse function arguments: missing field `cmd`").
 */
int tool_args_shell(const json_t *call, const char *name, const json_t *args,
	long long default_timeout, struct tool_shell_call *sc, char **why);
void tool_args_shell_free(struct tool_shell_call *sc);

/* Append the strings of a (a non-empty array of strings without NUL) to w; 0, or -1. */
int tool_args_words(const json_t *a, struct shell_words *w);

#endif
