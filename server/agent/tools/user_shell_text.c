/*
 * thread/shellCommand's texts (user_shell_text.h): the history record and the error forms
 * upstream 0.169 gives a timed-out command.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_output.h"
#include "user_shell_text.h"
#include "protocol/buf.h"
#include "protocol/utf8.h"
#include "protocol/xmalloc.h"

#define UST_TEXT_MAX (8u << 20) /* a record, at most (its output is cut to 10,000 bytes) */

char *
user_shell_record(
	const char *command, int exit_code, double duration_s, const char *output, size_t len)
{
	struct tool_trunc p = {TOOL_TRUNC_BYTES, TOOL_OUTPUT_SHELL_BYTES};
	size_t flen;
	/* as a shell tool's output for a model without a policy of its own (10,000 bytes) */
	char *cut = tool_output_formatted(output != NULL ? output : "", len, p, &flen);
	struct buf b;

	buf_init(&b, UST_TEXT_MAX);
	buf_printf(&b,
		"<user_shell_command>\n<command>\n%s\n</command>\n<result>\nExit code: "
		"%d\nDuration: %.4f seconds\nOutput:\n",
		command, exit_code, duration_s);
	buf_add(&b, cut, flen);
	buf_adds(&b, "\n</result>\n</user_shell_command>");
	free(cut);
	return buf_steal(&b, NULL);
}

/* Digits of a fraction with its trailing zeros dropped ("769427" of 769427000 / 10^9). */
static void
ust_fraction(char *out, size_t room, uint64_t frac, int digits)
{
	int n;

	if (frac == 0) {
		out[0] = '\0';
		return;
	}
	n = snprintf(out, room, ".%0*" PRIu64, digits, frac);
	while (n > 1 && out[n - 1] == '0')
		out[--n] = '\0';
}

/* Rust's Debug of a Duration: the largest unit of s, ms, µs, ns and its exact fraction. */
char *
user_shell_rust_duration(uint64_t ns)
{
	char frac[16];

	if (ns >= 1000000000u) {
		ust_fraction(frac, sizeof frac, ns % 1000000000u, 9);
		return xasprintf("%" PRIu64 "%ss", ns / 1000000000u, frac);
	}
	if (ns >= 1000000u) {
		ust_fraction(frac, sizeof frac, ns % 1000000u, 6);
		return xasprintf("%" PRIu64 "%sms", ns / 1000000u, frac);
	}
	if (ns >= 1000u) {
		ust_fraction(frac, sizeof frac, ns % 1000u, 3);
		return xasprintf("%" PRIu64 "%s\xc2\xb5s", ns / 1000u, frac);
	}
	return xasprintf("%" PRIu64 "ns", ns);
}

/* A stream's text in Debug form (bytes made UTF-8 first, as upstream's lossy decoding). */
static char *
ust_debug(const char *s, size_t len)
{
	size_t n;
	char *text = utf8_lossy(s != NULL ? s : "", len, &n), *d;

	/* a NUL would end the C string (Rust writes \0): rare, written as a space */
	for (size_t i = 0; i < n; i++)
		if (text[i] == '\0')
			text[i] = ' ';
	d = tool_output_rust_debug(text);
	free(text);
	return d;
}

char *
user_shell_timeout_text(const char *out, size_t out_len, const char *err, size_t err_len,
	const char *agg, size_t agg_len, uint64_t ns)
{
	char *o = ust_debug(out, out_len), *e = ust_debug(err, err_len);
	char *a = ust_debug(agg, agg_len), *d = user_shell_rust_duration(ns), *s;

	s = xasprintf(
		"execution error: Sandbox(Timeout { output: ExecToolCallOutput { exit_code: "
		"124, stdout: StreamOutput { text: %s, truncated_after_lines: None }, stderr: "
		"StreamOutput { text: %s, truncated_after_lines: None }, aggregated_output: "
		"StreamOutput { text: %s, truncated_after_lines: None }, duration: %s, "
		"timed_out: true } })",
		o, e, a, d);
	free(o);
	free(e);
	free(a);
	free(d);
	return s;
}
