/*
 * Command actions: what a command the model runs is doing, in upstream's words (parse_command):
 * a list of read / listFiles / search / unknown summaries that a commandExecution item carries
 * as `commandActions` (and the rollout as `parsed_cmd`). Pure: no I/O, no globals.
 *
 * Upstream's rules, kept here:
 *   - `bash -lc SCRIPT` (also zsh/sh, -c) is looked into only when SCRIPT is a plain-command
 *     sequence (shell_script.h); small formatting helpers of a pipeline (wc, head -n 40, sed -n
 *     without a file, ...) are dropped, `cd DIR` is folded into the paths of later reads, and a
 *     lone summary takes the whole script as its command when the script had no connectors;
 *   - a plain argv is split at && || ; | tokens and summarized the same way;
 *   - consecutive duplicates collapse, and if any part is unknown the whole command is reported
 *     as ONE unknown action whose command is the script (or the shlex-joined argv) — so
 *     "touch x && echo hi" is [{unknown, "touch x && echo hi"}], as 0.169 shows it.
 */
#ifndef COMMAND_ACTIONS_H
#define COMMAND_ACTIONS_H

#include <stddef.h>

#include <jansson.h>

enum command_action_kind {
	COMMAND_ACTION_READ,
	COMMAND_ACTION_LIST_FILES,
	COMMAND_ACTION_SEARCH,
	COMMAND_ACTION_UNKNOWN,
};

/* One summary; the strings are owned, NULL means "none" (null on the wire). */
struct command_action {
	enum command_action_kind kind;
	char *cmd;   /* the (sub-)command, shlex-joined or verbatim script */
	char *name;  /* READ: the short display name of the file */
	char *path;  /* READ: the file as written (cwd-relative); LIST/SEARCH: short path */
	char *query; /* SEARCH */
};

struct command_actions {
	struct command_action *v; /* owned */
	size_t n;
};

/*
 * Summarize an argv (e.g. ["/bin/bash", "-lc", "rg -n foo src | head"]). out is filled (it
 * may be empty, e.g. for a lone `cd`). 0, or -E2BIG for an argv past the word ceilings.
 */
int command_actions_parse(const char *const *argv, size_t argc, struct command_actions *out);
/* Free the summaries. Accepts NULL. */
void command_actions_free(struct command_actions *a);

/*
 * The wire form, CommandAction[] of the v2 schema: {type:"read",command,name,path} with path
 * joined onto cwd as upstream does (an absolute path stays), {type:"listFiles",command,path},
 * {type:"search",command,query,path}, {type:"unknown",command}. New reference.
 */
json_t *command_actions_to_wire(const struct command_actions *a, const char *cwd);
/* The rollout form (ParsedCommand[]): {type:"read"|"list_files"|"search"|"unknown",cmd,...}. */
json_t *command_actions_to_rollout(const struct command_actions *a);

#endif
