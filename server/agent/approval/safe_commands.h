/*
 * Known-safe and dangerous commands, upstream's command_safety rules (is_known_safe_command,
 * command_might_be_dangerous), for the approval rules: under `untrusted` a known-safe command
 * runs without asking, and a dangerous one is asked about (or refused under `never`) whatever
 * the policy. Pure; argv in, yes/no out.
 *
 * Known safe, by bare program name only (a path such as ./cat or /tmp/cat could be anything the
 * model planted): cat cd cut echo expr false grep head id ls nl paste pwd rev seq stat tail tr
 * true uname uniq wc which whoami numfmt tac base64 find rg, and `sed -n N[,M]p [file]`, each
 * only when every argument is an option on its allowlist (safe_commands_table.c), the value of
 * one, or an operand it cannot read as an option; stricter than upstream, whose list lets
 * `sed -n 1p --expression=1e cmd` run cmd and `uniq IN OUT` write OUT. git never (repository
 * config can run helpers). `bash|zsh|sh -lc|-c SCRIPT` is safe when SCRIPT is a plain-command
 * sequence (shell_script.h) whose every command, read as bash will pass its words, is safe.
 *
 * Dangerous: `rm -f ...` and `rm -rf ...` (also behind sudo), directly or in such a script.
 */
#ifndef SAFE_COMMANDS_H
#define SAFE_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

/* The command only reads (upstream's is_known_safe_command). */
bool safe_commands_is_known_safe(const char *const *argv, size_t argc);
/* One command (no shell wrapper) is safe by the rules above (is_safe_to_call_with_exec). */
bool safe_commands_is_safe_exec(const char *const *argv, size_t argc);
/*
 * For each of the n plain commands of a script (as shell_script_parse_plain splits it), whether
 * it is safe with its words read as bash passes them (quote removal, globs): the approval rules
 * judge a script command by command. 0, or -1 (all false) when the script is not n plain
 * commands.
 */
int safe_commands_script_each(const char *script, bool *safe, size_t n);
/* The command might destroy data (upstream's command_might_be_dangerous). */
bool safe_commands_is_dangerous(const char *const *argv, size_t argc);
/* One command (no shell wrapper) is dangerous (is_dangerous_to_call_with_exec). */
bool safe_commands_is_dangerous_exec(const char *const *argv, size_t argc);

#endif
