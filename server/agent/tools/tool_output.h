/*
 * What the model gets back from a shell tool, byte for byte as upstream 0.169 writes it, and the
 * caps on what a commandExecution item keeps. Pure string building; the turn loop measures the
 * times, owns the processes and calls these.
 *
 * exec_command / write_stdin (the `function_call_output` text):
 *     Chunk ID: 5e7825              (6 hex digits; absent for an intercepted apply_patch)
 *     Wall time: 0.3027 seconds     (4 decimals)
 *     Process exited with code 0    (once it has exited)
 *     Process running with session ID 3   (while it runs: the model calls write_stdin)
 *     Original token count: 3       (ceil(bytes / 4) of the whole output)
 *     Output:
 *     <output, truncated to max_output_tokens (default 10000) as below>
 *
 * Truncation (upstream's truncate_text / formatted_truncate_text, 4 bytes per token): within the
 * budget the text is unchanged; past it the middle goes, leaving budget/2 bytes of head and the
 * rest of the budget as tail (cut on UTF-8 boundaries) around "…N tokens truncated…" (N = ceil of
 * the bytes over budget / 4) or, for a byte budget, "…N chars truncated…" (N = characters
 * removed); the formatted form puts "Warning: truncated output (original token count: N)\nTotal
 * output lines: L\n\n" in front.
 *
 * shell (function tool with argv): {"output":"<formatted>","metadata":{"exit_code":0,
 * "duration_seconds":0.3}}; shell_command: "Exit code: 0\nWall time: 0.3 seconds\n[Total output
 * lines: L\n]Output:\n<truncated>"; both under the turn's truncation policy (a model without one:
 * 10000 bytes), a timeout prefixed "command timed out after N milliseconds\n".
 *
 * The aggregatedOutput of an item keeps at most TOOL_OUTPUT_AGGREGATE_MAX bytes (tool_headtail.h).
 */
#ifndef TOOL_OUTPUT_H
#define TOOL_OUTPUT_H

#include <stddef.h>

#define TOOL_OUTPUT_BYTES_PER_TOKEN    4
#define TOOL_OUTPUT_DEFAULT_MAX_TOKENS 10000	  /* exec_command / write_stdin */
#define TOOL_OUTPUT_MAX_TOKENS	       262144	  /* 1 MiB of output: the most ever kept */
#define TOOL_OUTPUT_SHELL_BYTES	       10000	  /* shell tools, model without a policy */
#define TOOL_OUTPUT_AGGREGATE_MAX      (1u << 20) /* aggregatedOutput and captured output */
#define TOOL_OUTPUT_MAX_DELTAS	       10000	  /* outputDelta notifications per call */

/* yield_time_ms bounds of exec_command / write_stdin (upstream's unified exec). */
#define TOOL_OUTPUT_EXEC_YIELD_DEFAULT_MS  10000
#define TOOL_OUTPUT_STDIN_YIELD_DEFAULT_MS 250
#define TOOL_OUTPUT_YIELD_MIN_MS	   250
#define TOOL_OUTPUT_YIELD_MAX_MS	   30000
#define TOOL_OUTPUT_EMPTY_POLL_MIN_MS	   5000
#define TOOL_OUTPUT_EMPTY_POLL_MAX_MS	   300000

enum tool_trunc_kind { TOOL_TRUNC_BYTES, TOOL_TRUNC_TOKENS };

/* A truncation policy: keep at most `limit` bytes or approximate tokens. */
struct tool_trunc {
	enum tool_trunc_kind kind;
	size_t limit;
};

/* ceil(bytes / 4). */
size_t tool_output_approx_tokens(size_t bytes);
/* The byte budget of a policy (tokens * 4). */
size_t tool_output_byte_budget(struct tool_trunc p);
/* Rust's str::lines().count(): a trailing newline does not start another line. */
size_t tool_output_count_lines(const char *s, size_t len);

/*
 * The text cut to the policy with the middle elided (truncate_text). s may hold any bytes: it
 * is repaired to UTF-8 first (invalid sequences become U+FFFD). Heap string; *outlen if wanted.
 */
char *tool_output_truncate(const char *s, size_t len, struct tool_trunc p, size_t *outlen);
/* The same with upstream's "Warning: truncated output ..." header when it cuts. */
char *tool_output_formatted(const char *s, size_t len, struct tool_trunc p, size_t *outlen);

/* One exec_command / write_stdin answer (see the top of this file). */
struct tool_exec_result {
	const char *chunk_id; /* NULL or "": no Chunk ID line */
	double wall_time_s;
	int has_exit_code;
	int exit_code;
	const char *session_id; /* NULL once exited */
	int has_token_count;
	size_t original_token_count;
	const char *output; /* the bytes produced during this call */
	size_t output_len;
	size_t max_output_tokens; /* 0: the default 10000 */
};

/* Bytes at the end of p that start a UTF-8 sequence not complete yet (0-3): held back. */
size_t tool_output_utf8_cut(const char *p, size_t len);
/* The function_call_output text of exec_command / write_stdin. Heap string. */
char *tool_output_exec(const struct tool_exec_result *r);
/* A fresh chunk id: 6 lowercase hex digits. */
void tool_output_chunk_id(char out[7]);
/* yield_time_ms clamped as upstream: exec and non-empty writes 250-30000, empty polls 5000-300000.
 */
unsigned long tool_output_clamp_yield(long long ms, int empty_poll);

/* One finished shell / shell_command run. */
struct tool_shell_result {
	int exit_code;
	double duration_s;
	int timed_out; /* prefix "command timed out after N milliseconds\n" */
	const char *output;
	size_t output_len;
	struct tool_trunc policy;
};

/* shell's structured JSON text. Heap string. */
char *tool_output_shell_json(const struct tool_shell_result *r);
/* shell_command's freeform text. Heap string. */
char *tool_output_shell_text(const struct tool_shell_result *r);

/* A string in Rust's Debug form ("..." with \" \\ \n \t \r \0 \u{..} escapes). Heap string. */
char *tool_output_rust_debug(const char *s);
/*
 * exec_command refused (declined, cancelled, forbidden by policy): upstream's
 * `exec_command failed: CreateProcess { message: "Rejected(\"rejected by user\")" }`.
 */
char *tool_output_exec_rejected(const char *reason);
/* shell / shell_command refused: "exec command rejected by user" for a user's no, else reason. */
char *tool_output_shell_rejected(const char *reason);
/* apply_patch refused by the user. */
#define TOOL_OUTPUT_PATCH_REJECTED "patch rejected by user"
/* The reason upstream gives when the user (or a cancel) says no. */
#define TOOL_OUTPUT_REJECTED_BY_USER "rejected by user"
/* The reason when an error reply stands for the decision (notes §8). */
#define TOOL_OUTPUT_APPROVAL_FAILED "approval request failed"
/* A call of a tool that is not offered: "unsupported call: NAME" / "unsupported custom ...". */
char *tool_output_unsupported(const char *name, int custom);
/* Arguments that do not parse: "failed to parse function arguments: <why>". */
char *tool_output_bad_arguments(const char *why);

#endif
