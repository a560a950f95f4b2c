/*
 * The texts of thread/shellCommand (the user's own `!cmd`), byte for byte as upstream 0.169
 * writes them. Pure string building: agent/user_shell.c measures, runs and records.
 *
 * What the model sees afterwards, one user message in the history:
 *     <user_shell_command>
 *     <command>
 *     echo hi
 *     </command>
 *     <result>
 *     Exit code: 0
 *     Duration: 0.0123 seconds          (4 decimals)
 *     Output:
 *     hi                                (the output truncated as a shell tool's, then "\n")
 *
 *     </result>
 *     </user_shell_command>
 *
 * Interrupted: exit code -1, duration 0, output "command aborted by user". Timed out (or not
 * spawned): exit code -1, duration 0, output "execution error: " and upstream's Rust Debug
 * form of its error, which names stdout, stderr and the whole output apart.
 */
#ifndef USER_SHELL_TEXT_H
#define USER_SHELL_TEXT_H

#include <stddef.h>
#include <stdint.h>

#define USER_SHELL_ABORTED "command aborted by user"

/* The history record (see the top of this file). Heap string. */
char *user_shell_record(
	const char *command, int exit_code, double duration_s, const char *output, size_t len);
/* Rust's Debug form of a Duration given in nanoseconds ("505.769427ms", "1.5s"). Heap. */
char *user_shell_rust_duration(uint64_t ns);
/*
 * A timeout as upstream words it: "execution error: Sandbox(Timeout { output:
 * ExecToolCallOutput { exit_code: 124, stdout: ..., duration: ..., timed_out: true } })".
 */
char *user_shell_timeout_text(const char *out, size_t out_len, const char *err, size_t err_len,
	const char *agg, size_t agg_len, uint64_t ns);

#endif
