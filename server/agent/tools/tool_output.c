/*
 * Tool output texts (tool_output.h): upstream's truncation and the exact layouts of the
 * function_call_output of the shell tools. All results are heap strings built in bounded
 * buffers; input text is repaired to UTF-8 first, as upstream decodes output lossily.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <jansson.h>

#include "tool_output.h"
#include "protocol/buf.h"
#include "protocol/utf8.h"
#include "protocol/xmalloc.h"

#define TO_ELLIPSIS "\xe2\x80\xa6" /* U+2026 */
/* Ceiling of any text built here: the kept output plus headers. */
#define TO_TEXT_MAX ((size_t)TOOL_OUTPUT_MAX_TOKENS * TOOL_OUTPUT_BYTES_PER_TOKEN * 4 + 4096)

/* ceil(bytes / 4). */
size_t
tool_output_approx_tokens(size_t bytes)
{
	return bytes / TOOL_OUTPUT_BYTES_PER_TOKEN + (bytes % TOOL_OUTPUT_BYTES_PER_TOKEN != 0);
}

/* The byte budget of a policy. */
size_t
tool_output_byte_budget(struct tool_trunc p)
{
	return p.kind == TOOL_TRUNC_BYTES ? p.limit : p.limit * TOOL_OUTPUT_BYTES_PER_TOKEN;
}

/* Rust's lines().count(). */
size_t
tool_output_count_lines(const char *s, size_t len)
{
	const char *p = s, *end = s + len, *nl;
	size_t n = 0;

	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		n++;
		p = nl + 1;
	}
	return n + (len > 0 && s[len - 1] != '\n');
}

/* Is byte i of a valid UTF-8 string the start of a character? */
static int
to_boundary(const char *s, size_t i)
{
	return ((unsigned char)s[i] & 0xc0) != 0x80;
}

/* Characters in s[from..to). */
static size_t
to_chars(const char *s, size_t from, size_t to)
{
	size_t n = 0;

	for (size_t i = from; i < to; i++)
		n += to_boundary(s, i);
	return n;
}

/* head + marker + tail around the middle of valid UTF-8 s (truncate_with_byte_estimate). */
static char *
to_cut(const char *s, size_t len, size_t max_bytes, int tokens, size_t *outlen)
{
	size_t left = max_bytes / 2, right = max_bytes - left, pre = 0, suf = len;
	struct buf b;

	buf_init(&b, TO_TEXT_MAX);
	if (len == 0)
		goto out;
	if (max_bytes == 0) {
		buf_printf(&b, TO_ELLIPSIS "%zu %s truncated" TO_ELLIPSIS,
			tokens ? tool_output_approx_tokens(len) : to_chars(s, 0, len),
			tokens ? "tokens" : "chars");
		goto out;
	}
	if (len <= max_bytes) {
		buf_add(&b, s, len);
		goto out;
	}
	/* the prefix: whole characters ending within left; the suffix: starting at len - right */
	for (size_t i = 0; i <= left && i <= len; i++)
		if (i == len || to_boundary(s, i))
			pre = i;
	suf = len - right;
	while (suf < len && !to_boundary(s, suf))
		suf++;
	if (suf < pre)
		suf = pre;
	buf_add(&b, s, pre);
	buf_printf(&b, TO_ELLIPSIS "%zu %s truncated" TO_ELLIPSIS,
		tokens ? tool_output_approx_tokens(len - max_bytes) : to_chars(s, pre, suf),
		tokens ? "tokens" : "chars");
	buf_add(&b, s + suf, len - suf);
out:
	return buf_steal(&b, outlen);
}

/* s as valid UTF-8: s itself when it already is (*owned NULL), else a repaired copy. */
static const char *
to_valid(const char *s, size_t len, size_t *outlen, char **owned)
{
	*owned = NULL;
	if (utf8_valid_prefix(s, len) == len) {
		*outlen = len;
		return s;
	}
	*owned = utf8_lossy(s, len, outlen);
	return *owned;
}

/* truncate_text on valid UTF-8. */
static char *
to_truncate_valid(const char *text, size_t n, struct tool_trunc p, size_t *outlen)
{
	size_t budget = tool_output_byte_budget(p);

	if (p.kind == TOOL_TRUNC_TOKENS && p.limit > 0 && n <= budget) {
		if (outlen != NULL)
			*outlen = n;
		return xstrndup(text, n);
	}
	return to_cut(text, n, budget, p.kind == TOOL_TRUNC_TOKENS, outlen);
}

/* truncate_text. */
char *
tool_output_truncate(const char *s, size_t len, struct tool_trunc p, size_t *outlen)
{
	size_t n;
	char *owned, *r;
	const char *text = to_valid(s, len, &n, &owned);

	r = to_truncate_valid(text, n, p, outlen);
	free(owned);
	return r;
}

/* formatted_truncate_text. */
char *
tool_output_formatted(const char *s, size_t len, struct tool_trunc p, size_t *outlen)
{
	size_t n, cutlen;
	char *owned, *cut;
	const char *text = to_valid(s, len, &n, &owned);
	struct buf b;

	if (n <= tool_output_byte_budget(p)) {
		cut = xstrndup(text, n);
		free(owned);
		if (outlen != NULL)
			*outlen = n;
		return cut;
	}
	cut = to_truncate_valid(text, n, p, &cutlen);
	buf_init(&b, TO_TEXT_MAX);
	buf_printf(&b,
		"Warning: truncated output (original token count: %zu)\nTotal output lines: %zu\n\n",
		tool_output_approx_tokens(n), tool_output_count_lines(text, n));
	buf_add(&b, cut, cutlen);
	free(cut);
	free(owned);
	return buf_steal(&b, outlen);
}

/* The exec_command / write_stdin answer. */
char *
tool_output_exec(const struct tool_exec_result *r)
{
	size_t max = r->max_output_tokens ? r->max_output_tokens : TOOL_OUTPUT_DEFAULT_MAX_TOKENS;
	struct tool_trunc p = {
		TOOL_TRUNC_TOKENS, max < TOOL_OUTPUT_MAX_TOKENS ? max : TOOL_OUTPUT_MAX_TOKENS};
	size_t outlen;
	char *out = tool_output_formatted(r->output ? r->output : "", r->output_len, p, &outlen);
	struct buf b;

	buf_init(&b, TO_TEXT_MAX);
	if (r->chunk_id != NULL && r->chunk_id[0] != '\0')
		buf_printf(&b, "Chunk ID: %s\n", r->chunk_id);
	buf_printf(&b, "Wall time: %.4f seconds\n", r->wall_time_s);
	if (r->has_exit_code)
		buf_printf(&b, "Process exited with code %d\n", r->exit_code);
	if (r->session_id != NULL)
		buf_printf(&b, "Process running with session ID %s\n", r->session_id);
	if (r->has_token_count)
		buf_printf(&b, "Original token count: %zu\n", r->original_token_count);
	buf_adds(&b, "Output:\n");
	buf_add(&b, out, outlen);
	free(out);
	return buf_steal(&b, NULL);
}

/* 24 random bits as 6 hex digits. */
void
tool_output_chunk_id(char out[7])
{
	unsigned int v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
		v = (unsigned int)random();
	snprintf(out, 7, "%06x", v & 0xffffffu);
}

/* Upstream's clamp of yield_time_ms. */
unsigned long
tool_output_clamp_yield(long long ms, int empty_poll)
{
	long long lo = empty_poll ? TOOL_OUTPUT_EMPTY_POLL_MIN_MS : TOOL_OUTPUT_YIELD_MIN_MS;
	long long hi = empty_poll ? TOOL_OUTPUT_EMPTY_POLL_MAX_MS : TOOL_OUTPUT_YIELD_MAX_MS;

	return (unsigned long)(ms < lo ? lo : ms > hi ? hi : ms);
}

/* The duration as upstream rounds it: an f32 to one decimal. */
static float
to_duration(double s)
{
	return roundf((float)s * 10.0f) / 10.0f;
}

/* The output with the timeout line in front when the command timed out. */
static char *
to_content(const struct tool_shell_result *r, size_t *len)
{
	struct buf b;

	buf_init(&b, TO_TEXT_MAX);
	if (r->timed_out)
		buf_printf(&b, "command timed out after %llu milliseconds\n",
			(unsigned long long)(r->duration_s * 1000.0));
	buf_add(&b, r->output ? r->output : "", r->output_len);
	return buf_steal(&b, len);
}

/* {"output":...,"metadata":{"exit_code":N,"duration_seconds":X}}, keys in upstream's order. */
char *
tool_output_shell_json(const struct tool_shell_result *r)
{
	size_t clen, flen;
	char *content = to_content(r, &clen);
	char *formatted = tool_output_formatted(content, clen, r->policy, &flen);
	json_t *str = json_stringn_nocheck(formatted, flen);
	char *quoted = json_dumps(str, JSON_ENCODE_ANY | JSON_COMPACT);
	char *s = xasprintf(
		"{\"output\":%s,\"metadata\":{\"exit_code\":%d,\"duration_seconds\":%.1f}}",
		quoted ? quoted : "\"\"", r->exit_code, (double)to_duration(r->duration_s));

	free(quoted);
	json_decref(str);
	free(formatted);
	free(content);
	return s;
}

/* "Exit code: N\nWall time: X seconds\n[Total output lines: L\n]Output:\n..." */
char *
tool_output_shell_text(const struct tool_shell_result *r)
{
	size_t clen, tlen;
	char *content = to_content(r, &clen), wall[64];
	char *cut = tool_output_truncate(content, clen, r->policy, &tlen);
	size_t total = tool_output_count_lines(content, clen);
	struct buf b;
	size_t wl;

	/* Rust's f32 Display: 0.3 -> "0.3", 2.0 -> "2" */
	snprintf(wall, sizeof(wall), "%.1f", (double)to_duration(r->duration_s));
	wl = strlen(wall);
	if (wl >= 2 && strcmp(wall + wl - 2, ".0") == 0)
		wall[wl - 2] = '\0';
	buf_init(&b, TO_TEXT_MAX);
	buf_printf(&b, "Exit code: %d\nWall time: %s seconds\n", r->exit_code, wall);
	if (total != tool_output_count_lines(cut, tlen))
		buf_printf(&b, "Total output lines: %zu\n", total);
	buf_adds(&b, "Output:\n");
	buf_add(&b, cut, tlen);
	free(cut);
	free(content);
	return buf_steal(&b, NULL);
}

/* Rust's Debug form of a str. */
char *
tool_output_rust_debug(const char *s)
{
	struct buf b;

	buf_init(&b, strlen(s) * 10 + 3);
	buf_addc(&b, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			buf_printf(&b, "\\%c", c);
		else if (c == '\n')
			buf_adds(&b, "\\n");
		else if (c == '\r')
			buf_adds(&b, "\\r");
		else if (c == '\t')
			buf_adds(&b, "\\t");
		else if (c < 0x20 || c == 0x7f)
			buf_printf(&b, "\\u{%x}", c);
		else
			buf_addc(&b, (char)c);
	}
	buf_addc(&b, '"');
	return buf_steal(&b, NULL);
}

/* exec_command failed: CreateProcess { message: "Rejected(\"...\")" } */
char *
tool_output_exec_rejected(const char *reason)
{
	char *inner_reason = tool_output_rust_debug(reason);
	char *inner = xasprintf("Rejected(%s)", inner_reason);
	char *msg = tool_output_rust_debug(inner);
	char *s = xasprintf("exec_command failed: CreateProcess { message: %s }", msg);

	free(msg);
	free(inner);
	free(inner_reason);
	return s;
}

/* The shell tools normalize a user's no. */
char *
tool_output_shell_rejected(const char *reason)
{
	if (strcmp(reason, TOOL_OUTPUT_REJECTED_BY_USER) == 0)
		return xstrdup("exec command rejected by user");
	return xstrdup(reason);
}

/* A tool that is not offered. */
char *
tool_output_unsupported(const char *name, int custom)
{
	return xasprintf("unsupported %s: %s", custom ? "custom tool call" : "call", name);
}

/* Arguments that do not parse. */
char *
tool_output_bad_arguments(const char *why)
{
	return xasprintf("failed to parse function arguments: %s", why);
}

size_t
tool_output_utf8_cut(const char *p, size_t len)
{
	for (size_t back = 1; back <= 3 && back <= len; back++) {
		unsigned char b = (unsigned char)p[len - back];
		size_t need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 0;

		if ((b & 0xc0) == 0x80)
			continue; /* a continuation byte: look further back for its lead */
		return need > back ? back : 0;
	}
	return 0;
}
