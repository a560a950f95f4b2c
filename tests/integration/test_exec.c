/*
 * command/exec end to end against the real daemon: buffered and streamed output, upstream's
 * validation order and messages, output caps (capReached only when bytes were dropped), stdin,
 * PTYs, terminate, timeouts, env and cwd, spawn errors, fd hygiene, many processes at once,
 * shutdown, reaping, and backpressure. The harness checks every line against the reference
 * schema; here every delta of a process is routed to its run and must precede its answer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base64.h"
#include "harness.h"
#include "xmalloc.h"

#define T_REPLY	   5000	 /* ms for an answer that needs no waiting */
#define FRAME	   65536 /* decoded bytes per outputDelta at most */
#define MIB	   1048576
#define DELTA	   "command/exec/outputDelta"
#define NO_SANDBOX "{'type':'dangerFullAccess'}"

/* A growable byte buffer, always NUL-terminated. */
struct buf {
	char *p;
	size_t len, cap;
};

/* One command/exec being followed: its deltas and its answer. */
struct run {
	const char *name; /* processId, NULL when none */
	long long id;	  /* request id */
	int zeros;	  /* count bytes (which must all be 0) instead of keeping them */
	struct buf s[2];  /* stdout, stderr */
	size_t bytes[2];
	size_t frames, max_frame;
	int cap[2];	    /* capReached seen, per stream */
	int after_cap;	    /* a delta followed the capReached one on its stream */
	long long first_ms; /* arrival of the first and the latest delta */
	long long last_ms;
	json_t *resp; /* the answer, once it came */
};

/* Append n bytes, keeping a NUL after them. */
static void
buf_add(struct buf *b, const void *data, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = b->cap == 0 ? 4096 : b->cap;
		while (b->len + n + 1 > b->cap)
			b->cap *= 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* The text so far ("" when empty). */
static const char *
buf_str(const struct buf *b)
{
	return b->p != NULL ? b->p : "";
}

/* Free what a run holds and clear it for reuse. */
static void
run_free(struct run *r)
{
	free(r->s[0].p);
	free(r->s[1].p);
	json_decref(r->resp);
	memset(r, 0, sizeof *r);
}

/* A fresh daemon after the handshake. */
static struct asc *
ready_opts(const struct asc_opts *o)
{
	struct asc *c = asc_spawn(o);

	asc_initialize(c);
	return c;
}

/* A fresh daemon with default options after the handshake. */
static struct asc *
ready(void)
{
	return ready_opts(NULL);
}

/* Merge JSON text (single quotes stand for double quotes; printf-formatted) into p. */
static json_t *
with(json_t *p, const char *fmt, ...)
{
	char *text, *q;
	json_error_t je;
	json_t *extra;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		fail_msg("vasprintf");
	va_end(ap);
	for (q = text; *q != '\0'; q++)
		if (*q == '\'')
			*q = '"';
	if ((extra = json_loads(text, 0, &je)) == NULL)
		fail_msg("bad test JSON %s: %s", text, je.text);
	json_object_update(p, extra);
	json_decref(extra);
	free(text);
	return p;
}

/* command/exec params for an argv (NULL-terminated), unsandboxed. */
static json_t *
argv_params(const char *arg0, ...)
{
	json_t *argv = json_array();
	const char *a;
	va_list ap;

	va_start(ap, arg0);
	for (a = arg0; a != NULL; a = va_arg(ap, const char *))
		json_array_append_new(argv, json_string(a));
	va_end(ap);
	return with(json_pack("{s:o}", "command", argv), "{'sandboxPolicy':" NO_SANDBOX "}");
}

/* command/exec params for `sh -c script`, unsandboxed. */
static json_t *
sh(const char *script)
{
	return argv_params("sh", "-c", script, NULL);
}

/* Send a request and return its answer (a message the caller frees). */
static json_t *
call(struct asc *c, const char *method, json_t *params, int timeout_ms)
{
	long long id = asc_request(c, method, params);

	return asc_wait_response(c, id, timeout_ms);
}

/* Assert an error with this code and exact message (NULL: any), then free it. */
static void
expect_error(json_t *m, int code, const char *message)
{
	const char *got;

	asc_assert_error(m, code, NULL);
	got = json_string_value(json_object_get(json_object_get(m, "error"), "message"));
	if (message != NULL && strcmp(got, message) != 0)
		fail_msg("expected error %d \"%s\", got \"%s\"", code, message, got);
	json_decref(m);
}

/* A follow-up (write, resize, terminate) that must answer {}. */
static void
call_ok(struct asc *c, const char *method, json_t *params)
{
	json_t *m = call(c, method, params, asc_timeout(T_REPLY)), *r = asc_assert_result(m);

	if (!json_is_object(r) || json_object_size(r) != 0)
		fail_msg("%s: expected {}, got %s", method, asc_raw(c));
	json_decref(m);
}

/* A follow-up with {processId} plus extra JSON text. */
static json_t *
follow(const char *name, const char *extra)
{
	json_t *p = json_pack("{s:s}", "processId", name);

	return extra != NULL ? with(p, "%s", extra) : p;
}

/* Run a command/exec to its answer and check exit code and outputs (NULL: not checked). */
static void
exec_expect(
	struct asc *c, json_t *params, int timeout_ms, int code, const char *out, const char *err)
{
	json_t *m = call(c, "command/exec", params, timeout_ms), *r = asc_assert_result(m);
	const char *o = json_string_value(json_object_get(r, "stdout"));
	const char *e = json_string_value(json_object_get(r, "stderr"));

	if (json_integer_value(json_object_get(r, "exitCode")) != code ||
		(out != NULL && strcmp(o, out) != 0) || (err != NULL && strcmp(e, err) != 0))
		fail_msg("expected exit %d stdout \"%s\" stderr \"%s\", got %s", code,
			out != NULL ? out : "*", err != NULL ? err : "*", asc_raw(c));
	json_decref(m);
}

/* A command/exec that must fail with this code and exact message. */
static void
exec_refused(struct asc *c, json_t *params, int code, const char *message)
{
	expect_error(call(c, "command/exec", params, asc_timeout(T_REPLY)), code, message);
}

/* Route one message to its run; anything unexpected fails the test. */
static void
runs_take(struct asc *c, struct run *runs, size_t n, json_t *m)
{
	static char *scratch;
	static size_t scratch_len;
	const char *method = json_string_value(json_object_get(m, "method")), *b64, *name;
	json_t *params = json_object_get(m, "params"), *id = json_object_get(m, "id");
	size_t i, len, dec;
	struct run *r = NULL;
	int s;

	if (method != NULL && strcmp(method, DELTA) == 0) {
		name = json_string_value(json_object_get(params, "processId"));
		for (i = 0; i < n && r == NULL; i++)
			if (runs[i].name != NULL && strcmp(runs[i].name, name) == 0)
				r = &runs[i];
		if (r == NULL)
			fail_msg("delta for an unknown process: %s", asc_raw(c));
		if (r->resp != NULL)
			fail_msg("delta after the answer of %s: %s", name, asc_raw(c));
		s = strcmp(json_string_value(json_object_get(params, "stream")), "stderr") == 0;
		b64 = json_string_value(json_object_get(params, "deltaBase64"));
		len = strlen(b64);
		if (base64_decoded_max(len) > scratch_len) {
			scratch_len = base64_decoded_max(len) + FRAME;
			scratch = xrealloc(scratch, scratch_len);
		}
		if (base64_decode(b64, len, scratch, &dec, NULL) != 0)
			fail_msg("delta is not base64: %.200s", asc_raw(c));
		if (dec > FRAME)
			fail_msg("delta of %zu decoded bytes (more than 64 KiB)", dec);
		if (r->cap[s])
			r->after_cap = 1;
		if (json_is_true(json_object_get(params, "capReached")))
			r->cap[s] = 1;
		if (r->zeros) {
			for (i = 0; i < dec; i++)
				if (scratch[i] != 0)
					fail_msg("non-zero byte at %zu of %s", r->bytes[s] + i,
						name);
		} else
			buf_add(&r->s[s], scratch, dec);
		r->bytes[s] += dec;
		r->frames++;
		r->max_frame = dec > r->max_frame ? dec : r->max_frame;
		r->last_ms = asc_now_ms();
		if (r->first_ms == 0)
			r->first_ms = r->last_ms;
		json_decref(m);
		return;
	}
	for (i = 0; i < n && method == NULL && json_is_integer(id); i++) {
		if (runs[i].id == json_integer_value(id)) {
			if (runs[i].resp != NULL)
				fail_msg("second answer: %s", asc_raw(c));
			runs[i].resp = m;
			return;
		}
	}
	fail_msg("unexpected message: %s", asc_raw(c));
}

/* Take messages until every run is answered; then nothing else may be pending. */
static void
runs_collect(struct asc *c, struct run *runs, size_t n, int timeout_ms)
{
	long long end = asc_now_ms() + timeout_ms;
	size_t i, left;
	json_t *m;

	for (;;) {
		for (i = 0, left = 0; i < n; i++)
			left += runs[i].resp == NULL;
		if (left == 0)
			break;
		if ((m = asc_next(c, (int)(end - asc_now_ms()))) == NULL)
			fail_msg("%zu of %zu command/exec still unanswered after %d ms", left, n,
				timeout_ms);
		runs_take(c, runs, n, m);
	}
	/* A delta of a process may not follow its answer. */
	if (asc_queued(c) == 0 && asc_sync(c, asc_timeout(T_REPLY)) == 0)
		return;
	m = asc_next(c, 0);
	fail_msg("message after the last answer: %s", m != NULL ? asc_raw(c) : "?");
}

/* Take messages until r is answered. */
static void
run_collect(struct asc *c, struct run *r, int timeout_ms)
{
	runs_collect(c, r, 1, timeout_ms);
}

/* Take messages until stream s of r holds `needle` `times` times. */
static void
run_wait_output(struct asc *c, struct run *r, int s, const char *needle, int times, int timeout_ms)
{
	long long end = asc_now_ms() + timeout_ms;
	const char *p;
	json_t *m = NULL;
	int k;

	for (;;) {
		for (k = 0, p = buf_str(&r->s[s]); (p = strstr(p, needle)) != NULL; p++)
			k++;
		if (k >= times)
			return;
		if (r->resp != NULL || (m = asc_next(c, (int)(end - asc_now_ms()))) == NULL)
			fail_msg("no \"%s\" x%d on %s within %d ms; got \"%s\"", needle, times,
				s ? "stderr" : "stdout", timeout_ms, buf_str(&r->s[s]));
		runs_take(c, r, 1, m);
	}
}

/* The answer of a collected run: assert its exit code and streamed-out buffers (""). */
static void
run_expect_exit(struct run *r, int code)
{
	json_t *res = asc_assert_result(r->resp);
	char *text;

	if (json_integer_value(json_object_get(res, "exitCode")) != code ||
		strcmp(json_string_value(json_object_get(res, "stdout")), "") != 0 ||
		strcmp(json_string_value(json_object_get(res, "stderr")), "") != 0) {
		text = json_dumps(r->resp, JSON_COMPACT);
		fail_msg("expected exit %d with streamed buffers \"\", got %s", code, text);
	}
}

/* A temp file of n bytes from gen (or random when gen is NULL). */
static char *
make_file(struct asc *c, const char *name, size_t n, void (*gen)(char *, size_t, size_t))
{
	char *path = xasprintf("%s/%s", asc_dir(c), name), *chunk = xmalloc(MIB);
	size_t off, k;
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	for (off = 0; off < n; off += k) {
		k = n - off < MIB ? n - off : MIB;
		if (gen != NULL)
			gen(chunk, off, k);
		else if (getrandom(chunk, k, 0) != (ssize_t)k)
			fail_msg("getrandom");
		assert_int_equal(fwrite(chunk, 1, k, f), k);
	}
	fclose(f);
	free(chunk);
	return path;
}

/* Bytes that say where they are: lines "%09zu\n" (the offset), cut at any length. */
static void
gen_offsets(char *out, size_t off, size_t n)
{
	char line[10];
	size_t i, at, v;
	int d;

	for (i = 0; i < n; i++) {
		at = off + i;
		if (i == 0 || at % 10 == 0) {
			line[9] = '\n';
			for (v = at - at % 10, d = 8; d >= 0; d--, v /= 10)
				line[d] = (char)('0' + v % 10);
		}
		out[i] = line[at % 10];
	}
}

/* A whole file in memory (NUL-terminated); its length in *len. */
static char *
read_file(const char *path, size_t *len)
{
	struct buf b = {0};
	char chunk[65536];
	size_t n;
	FILE *f = fopen(path, "re");

	assert_non_null(f);
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		buf_add(&b, chunk, n);
	fclose(f);
	*len = b.len;
	return b.p;
}

/* Fields of /proc/PID/stat: state, ppid, pgid. 0, or -1 when there is no such process. */
static int
proc_stat(pid_t pid, char *state, pid_t *ppid, pid_t *pgid)
{
	char path[64], line[1024], *p;
	int pp = 0, pg = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	p = fgets(line, sizeof line, f);
	fclose(f);
	if (p == NULL || (p = strrchr(line, ')')) == NULL)
		return -1;
	if (sscanf(p + 1, " %c %d %d", state, &pp, &pg) != 3)
		return -1;
	if (ppid != NULL)
		*ppid = pp;
	if (pgid != NULL)
		*pgid = pg;
	return 0;
}

/* Processes in /proc matching a pgid (> 0) or being zombie children of ppid (> 0). */
static int
proc_count(pid_t pgid, pid_t zombie_parent)
{
	struct dirent *e;
	pid_t pid, pp, pg;
	DIR *d = opendir("/proc");
	int n = 0;
	char st;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if ((pid = (pid_t)strtol(e->d_name, NULL, 10)) <= 0 ||
			proc_stat(pid, &st, &pp, &pg) != 0)
			continue;
		if (pgid > 0 && pg == pgid)
			n++;
		if (zombie_parent > 0 && pp == zombie_parent && st == 'Z')
			n++;
	}
	closedir(d);
	return n;
}

/* Poll until the process group has `want` members (or the deadline); returns the count. */
static int
pgid_wait(pid_t pgid, int want, int timeout_ms)
{
	long long end = asc_now_ms() + timeout_ms;
	int n;

	while ((n = proc_count(pgid, 0)) != want && asc_now_ms() < end)
		usleep(10000);
	return n;
}

/* --- the tests ----------------------------------------------------------------------------- */

static void
test_echo_exit_codes(void **state)
{
	struct asc *c = ready();
	json_t *m, *want;

	exec_expect(c, argv_params("echo", "hello", "world", NULL), asc_timeout(T_REPLY), 0,
		"hello world\n", "");
	exec_expect(c, sh("exit 3"), asc_timeout(T_REPLY), 3, "", "");
	exec_expect(
		c, sh("echo out; echo err >&2; exit 7"), asc_timeout(T_REPLY), 7, "out\n", "err\n");
	exec_expect(c, sh("kill -TERM $$"), asc_timeout(T_REPLY), 143, "", "");
	exec_expect(c, argv_params("false", NULL), asc_timeout(T_REPLY), 1, "", "");
	/* Invalid UTF-8 in a buffered answer is repaired, one U+FFFD per bad sequence. */
	exec_expect(c, sh("printf 'a\\377b'"), asc_timeout(T_REPLY), 0,
		"a\xef\xbf\xbd"
		"b",
		"");
	/* Without processId: the buffered answer, exactly, and no delta at all. */
	m = call(c, "command/exec", sh("printf legacy-out; printf legacy-err >&2"),
		asc_timeout(T_REPLY));
	want = json_pack(
		"{s:i, s:s, s:s}", "exitCode", 0, "stdout", "legacy-out", "stderr", "legacy-err");
	if (!json_equal(asc_assert_result(m), want))
		fail_msg("buffered compatibility: %s", asc_raw(c));
	json_decref(want);
	json_decref(m);
	/* Even asking for deltas with a processId but no streaming sends none. */
	exec_expect(c, with(sh("echo quiet"), "{'processId':'q1'}"), asc_timeout(T_REPLY), 0,
		"quiet\n", "");
	assert_int_equal(asc_queued(c), 0);
	assert_int_equal(asc_sync(c, asc_timeout(T_REPLY)), 0);
	asc_free(c);
}

static void
test_sandbox_policies(void **state)
{
	static const char *const env[] = {"CODEX_SANDBOX_NETWORK_DISABLED", NULL};
	static const char *probe = "printf %s \"${CODEX_SANDBOX_NETWORK_DISABLED-unset}\"";
	struct asc_opts o = {.env = env};
	struct asc *c = ready_opts(&o);
	json_t *p, *m;

	/* No policy means ours (readOnly), which cannot run yet: refused, never run open. */
	p = sh("echo ran");
	json_object_del(p, "sandboxPolicy");
	m = call(c, "command/exec", p, asc_timeout(T_REPLY));
	asc_assert_error(m, -32600, "sandbox policy");
	json_decref(m);
	m = call(c, "command/exec", with(sh("echo ran"), "{'sandboxPolicy':{'type':'readOnly'}}"),
		asc_timeout(T_REPLY));
	asc_assert_error(m, -32600, "sandbox policy readOnly");
	json_decref(m);
	m = call(c, "command/exec",
		with(sh("echo ran"),
			"{'sandboxPolicy':{'type':'workspaceWrite','writableRoots':"
			"['/tmp'],'networkAccess':true}}"),
		asc_timeout(T_REPLY));
	asc_assert_error(m, -32600, "sandbox policy workspaceWrite");
	json_decref(m);
	/* externalSandbox: network restricted (the default) is announced to the child. */
	exec_expect(c, with(sh(probe), "{'sandboxPolicy':{'type':'externalSandbox'}}"),
		asc_timeout(T_REPLY), 0, "1", "");
	exec_expect(c,
		with(sh(probe),
			"{'sandboxPolicy':{'type':'externalSandbox','networkAccess':'restricted'}}"),
		asc_timeout(T_REPLY), 0, "1", "");
	exec_expect(c,
		with(sh(probe),
			"{'sandboxPolicy':{'type':'externalSandbox','networkAccess':'enabled'}}"),
		asc_timeout(T_REPLY), 0, "unset", "");
	exec_expect(c, sh(probe), asc_timeout(T_REPLY), 0, "unset", "");
	asc_free(c);
}

static void
test_validation(void **state)
{
	struct asc *c = ready();
	struct run r = {.name = "p1"};
	json_t *p, *m;

	/* Each check, and each one winning over the next in upstream's order. */
	p = sh("true");
	json_object_set_new(p, "command", json_array());
	exec_refused(c, with(p, "{'size':{'rows':5,'cols':5},'permissionProfile':':read-only'}"),
		-32600, "command must not be empty");
	exec_refused(c,
		with(sh("true"), "{'permissionProfile':':read-only','size':{'rows':5,'cols':5}}"),
		-32600, "command/exec.permissionProfile requires experimentalApi capability");
	exec_refused(c,
		with(sh("true"),
			"{'size':{'rows':5,'cols':5},'outputBytesCap':1,'disableOutputCap':true}"),
		-32602, "command/exec size requires tty: true");
	exec_refused(c,
		with(sh("true"),
			"{'outputBytesCap':1,'disableOutputCap':true,'timeoutMs':1,"
			"'disableTimeout':true}"),
		-32602, "command/exec cannot set both outputBytesCap and disableOutputCap");
	exec_refused(c, with(sh("true"), "{'timeoutMs':-1,'disableTimeout':true}"), -32602,
		"command/exec cannot set both timeoutMs and disableTimeout");
	exec_refused(c, with(sh("true"), "{'timeoutMs':-1,'sandboxPolicy':{'type':'readOnly'}}"),
		-32602, "command/exec timeoutMs must be non-negative, got -1");
	m = call(c, "command/exec",
		with(sh("true"),
			"{'sandboxPolicy':{'type':'readOnly'},'tty':true,'size':{'rows':0,"
			"'cols':5}}"),
		asc_timeout(T_REPLY));
	asc_assert_error(m, -32600, "sandbox policy readOnly");
	json_decref(m);
	exec_refused(c, with(sh("true"), "{'tty':true,'size':{'rows':0,'cols':80}}"), -32602,
		"command/exec size rows and cols must be greater than 0");
	exec_refused(c, with(sh("true"), "{'tty':true,'size':{'rows':24,'cols':0}}"), -32602,
		"command/exec size rows and cols must be greater than 0");
	exec_refused(c, with(sh("true"), "{'tty':true}"), -32600,
		"command/exec tty or streaming requires a client-supplied processId");
	exec_refused(c, with(sh("true"), "{'streamStdin':true}"), -32600,
		"command/exec tty or streaming requires a client-supplied processId");
	exec_refused(c, with(sh("true"), "{'streamStdoutStderr':true}"), -32600,
		"command/exec tty or streaming requires a client-supplied processId");
	/* A running processId is taken; once that process has exited it is free again. */
	r.id = asc_request(c, "command/exec", with(sh("sleep 1"), "{'processId':'p1'}"));
	exec_refused(c, with(sh("true"), "{'processId':'p1'}"), -32600,
		"duplicate active command/exec process id: \"p1\"");
	exec_refused(c, with(sh("true"), "{'processId':'p1','streamStdoutStderr':true}"), -32600,
		"duplicate active command/exec process id: \"p1\"");
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 0);
	exec_expect(c, with(sh("echo again"), "{'processId':'p1'}"), asc_timeout(T_REPLY), 0,
		"again\n", "");
	run_free(&r);
	asc_free(c);

	/* With experimentalApi: the profile is checked against sandboxPolicy. */
	c = asc_spawn(NULL);
	m = call(c, "initialize",
		json_pack("{s:{s:s, s:n, s:s}, s:{s:b}}", "clientInfo", "name", "asc-test", "title",
			"version", "0.1", "capabilities", "experimentalApi", 1),
		asc_timeout(T_REPLY));
	asc_assert_result(m);
	json_decref(m);
	exec_refused(c,
		with(sh("true"), "{'permissionProfile':':read-only','size':{'rows':5,'cols':5}}"),
		-32600, "`permissionProfile` cannot be combined with `sandboxPolicy`");
	asc_free(c);
}

/* Streamed output of `head -c n file` with cap: the deltas and their capReached flags. */
static void
cap_streamed(struct asc *c, const char *file, const char *body, size_t n, size_t cap)
{
	char *script = xasprintf("head -c %zu '%s'", n, file);
	size_t keep = n < cap ? n : cap;
	struct run r = {.name = "cap"};
	json_t *p = with(sh(script), "{'processId':'cap','streamStdoutStderr':true}");

	if (cap != MIB)
		json_object_set_new(p, "outputBytesCap", json_integer((json_int_t)cap));
	r.id = asc_request(c, "command/exec", p);
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 0);
	if (r.s[0].len != keep || memcmp(r.s[0].p, body, keep) != 0)
		fail_msg("streamed %zu bytes with cap %zu: got %zu bytes (or other bytes)", n, cap,
			r.s[0].len);
	if (r.cap[0] != (n > cap) || r.after_cap || r.cap[1])
		fail_msg("streamed %zu bytes with cap %zu: capReached %s%s", n, cap,
			r.cap[0] ? "true" : "false (never)",
			r.after_cap ? ", and deltas after it" : "");
	run_free(&r);
	free(script);
}

/* Buffered output of `head -c n file` with cap: stdout is the first min(n, cap) bytes. */
static void
cap_buffered(struct asc *c, const char *file, const char *body, size_t n, size_t cap)
{
	char *script = xasprintf("head -c %zu '%s'", n, file);
	size_t keep = n < cap ? n : cap;
	json_t *p = sh(script), *m, *res;
	const char *out;

	if (cap != MIB)
		json_object_set_new(p, "outputBytesCap", json_integer((json_int_t)cap));
	m = call(c, "command/exec", p, asc_timeout(T_REPLY));
	res = asc_assert_result(m);
	out = json_string_value(json_object_get(res, "stdout"));
	assert_int_equal(json_integer_value(json_object_get(res, "exitCode")), 0);
	if (json_string_length(json_object_get(res, "stdout")) != keep ||
		memcmp(out, body, keep) != 0)
		fail_msg("buffered %zu bytes with cap %zu: got %zu bytes (or other bytes)", n, cap,
			json_string_length(json_object_get(res, "stdout")));
	json_decref(m);
	free(script);
}

static void
test_output_caps(void **state)
{
	static const size_t caps[] = {10, FRAME, FRAME + 1000, MIB};
	struct asc *c = ready();
	size_t i, d, len;
	char *file = make_file(c, "offsets", 2000000, gen_offsets), *body = read_file(file, &len);
	struct run r = {.name = "two"};

	for (i = 0; i < sizeof caps / sizeof caps[0]; i++) {
		for (d = 0; d < 3; d++) {
			cap_buffered(c, file, body, caps[i] - 1 + d, caps[i]);
			cap_streamed(c, file, body, caps[i] - 1 + d, caps[i]);
		}
	}
	/* The default cap is 1 MiB per stream. */
	cap_buffered(c, file, body, 2000000, MIB);
	cap_streamed(c, file, body, 2000000, MIB);
	/* The cap applies to each stream on its own. */
	exec_expect(c, with(sh("printf abcdefgh; printf uvwxyz12 >&2"), "{'outputBytesCap':5}"),
		asc_timeout(T_REPLY), 0, "abcde", "uvwxy");
	r.id = asc_request(c, "command/exec",
		with(sh("printf abcdefgh; printf uvwxyz12 >&2"),
			"{'processId':'two','streamStdoutStderr':true,'outputBytesCap':5}"));
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 0);
	assert_string_equal(buf_str(&r.s[0]), "abcde");
	assert_string_equal(buf_str(&r.s[1]), "uvwxy");
	assert_true(r.cap[0] && r.cap[1] && !r.after_cap);
	run_free(&r);
	free(body);
	free(file);
	asc_free(c);
}

static void
test_disable_output_cap(void **state)
{
	struct asc *c = ready();
	size_t n = asc_load(100 * 1000 * 1000), len;
	char *file = make_file(c, "big", n, gen_offsets), *body = read_file(file, &len);
	char *script = xasprintf("cat '%s'; head -c 3000000 '%s' >&2", file, file);
	long long t0 = asc_now_ms();
	json_t *m = call(c, "command/exec", with(sh(script), "{'disableOutputCap':true}"),
		asc_timeout(30000));
	json_t *res = asc_assert_result(m), *out = json_object_get(res, "stdout");

	assert_int_equal(json_integer_value(json_object_get(res, "exitCode")), 0);
	if (json_string_length(out) != n || memcmp(json_string_value(out), body, n) != 0)
		fail_msg("disableOutputCap: %zu bytes back of %zu (or other bytes)",
			json_string_length(out), n);
	assert_int_equal(json_string_length(json_object_get(res, "stderr")), 3000000);
	print_message("buffered %zu MB without a cap in %lld ms\n", n / 1000000, asc_now_ms() - t0);
	json_decref(m);
	free(script);
	free(body);
	free(file);
	asc_free(c);
}

static void
test_streaming_bytes_and_frames(void **state)
{
	struct asc *c = ready();
	size_t n = 1000000, len, big = asc_load(50 * 1000 * 1000);
	char *file = make_file(c, "random", n, NULL), *body, *script;
	struct run r = {.name = "bin"}, z = {.name = "fast", .zeros = 1};
	long long t0;
	int fd;

	/* Make sure the bytes hold NUL and invalid UTF-8 whatever the random draw. */
	fd = open(file, O_WRONLY);
	assert_int_equal(pwrite(fd, "\0\xff\xfe\xc3(\0\x80", 7, 0), 7);
	close(fd);
	body = read_file(file, &len);
	script = xasprintf("cat '%s'; cat '%s' >&2", file, file);
	r.id = asc_request(c, "command/exec",
		with(sh(script), "{'processId':'bin','streamStdoutStderr':true}"));
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 0);
	if (r.s[0].len != n || memcmp(r.s[0].p, body, n) != 0 || r.s[1].len != n ||
		memcmp(r.s[1].p, body, n) != 0)
		fail_msg("streamed binary: stdout %zu, stderr %zu bytes of %zu, or other bytes",
			r.s[0].len, r.s[1].len, n);
	assert_false(r.cap[0] || r.cap[1]);
	print_message("binary: %zu deltas, largest %zu bytes\n", r.frames, r.max_frame);

	/* A large fast stream comes in few big frames. */
	free(script);
	script = xasprintf("head -c %zu /dev/zero", big);
	t0 = asc_now_ms();
	z.id = asc_request(c, "command/exec",
		with(sh(script),
			"{'processId':'fast','streamStdoutStderr':true,"
			"'disableOutputCap':true}"));
	run_collect(c, &z, asc_timeout(30000));
	run_expect_exit(&z, 0);
	assert_int_equal(z.bytes[0], big);
	print_message("%zu MB streamed in %lld ms: %zu deltas, average %zu bytes\n", big / 1000000,
		asc_now_ms() - t0, z.frames, big / z.frames);
	if (big / z.frames <= 16384)
		fail_msg("average frame %zu bytes (16 KiB or less)", big / z.frames);
	run_free(&r);
	run_free(&z);
	free(script);
	free(body);
	free(file);
	asc_free(c);
}

static void
test_slow_output_prompt(void **state)
{
	struct asc *c = ready();
	struct run r = {.name = "slow"};
	int limit = asc_sanitized() ? 600 : 200;
	long long t0 = asc_now_ms();

	r.id = asc_request(c, "command/exec",
		with(sh("echo first; sleep 1; echo second"),
			"{'processId':'slow','streamStdoutStderr':true}"));
	run_wait_output(c, &r, 0, "first\n", 1, asc_timeout(T_REPLY));
	print_message("first delta after %lld ms\n", r.first_ms - t0);
	if (r.first_ms - t0 > limit)
		fail_msg("\"first\" came %lld ms after the request (limit %d)", r.first_ms - t0,
			limit);
	assert_string_equal(buf_str(&r.s[0]), "first\n");
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 0);
	assert_string_equal(buf_str(&r.s[0]), "first\nsecond\n");
	if (r.last_ms - r.first_ms < 800)
		fail_msg("\"second\" only %lld ms after \"first\"", r.last_ms - r.first_ms);
	run_free(&r);
	asc_free(c);
}

static void
test_stdin_pipe(void **state)
{
	struct asc *c = ready();
	struct run r = {.name = "cat1"}, k = {.name = "held"};
	json_t *m;

	/* Pipes: what is written comes back, closeStdin ends the reader. */
	r.id = asc_request(c, "command/exec",
		with(sh("cat; echo done >&2"),
			"{'processId':'cat1','streamStdin':true,'streamStdoutStderr':true}"));
	call_ok(c, "command/exec/write", follow("cat1", "{'deltaBase64':'aGVsbG8K'}"));
	call_ok(c, "command/exec/write", follow("cat1", "{'closeStdin':true}"));
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 0);
	assert_string_equal(buf_str(&r.s[0]), "hello\n");
	assert_string_equal(buf_str(&r.s[1]), "done\n");

	/* A process that outlives its stdin: writes after closeStdin are refused. */
	k.id = asc_request(c, "command/exec",
		with(sh("cat; exec sleep 30"),
			"{'processId':'held','streamStdin':true,'streamStdoutStderr':true}"));
	call_ok(c, "command/exec/write",
		follow("held", "{'deltaBase64':'b25lCg==','closeStdin':true}"));
	expect_error(call(c, "command/exec/write", follow("held", "{'deltaBase64':'eA=='}"),
			     asc_timeout(T_REPLY)),
		-32600, "stdin is already closed");
	expect_error(call(c, "command/exec/write", follow("held", "{'closeStdin':true}"),
			     asc_timeout(T_REPLY)),
		-32600, "stdin is already closed");
	expect_error(call(c, "command/exec/write", follow("held", NULL), asc_timeout(T_REPLY)),
		-32602, "command/exec/write requires deltaBase64 or closeStdin");
	expect_error(call(c, "command/exec/write", follow("held", "{'closeStdin':false}"),
			     asc_timeout(T_REPLY)),
		-32602, "command/exec/write requires deltaBase64 or closeStdin");
	m = call(c, "command/exec/write", follow("held", "{'deltaBase64':'!!!'}"),
		asc_timeout(T_REPLY));
	asc_assert_error(m, -32602, NULL);
	if (strncmp(json_string_value(json_object_get(json_object_get(m, "error"), "message")),
		    "invalid deltaBase64:", 20) != 0)
		fail_msg("bad base64: %s", asc_raw(c));
	json_decref(m);
	run_wait_output(c, &k, 0, "one\n", 1, asc_timeout(T_REPLY));
	call_ok(c, "command/exec/terminate", follow("held", NULL));
	run_collect(c, &k, asc_timeout(T_REPLY));
	run_expect_exit(&k, 137);
	assert_string_equal(buf_str(&k.s[0]), "one\n");
	run_free(&r);
	run_free(&k);

	/* Without streamStdin there is no stdin to write to (and it reads /dev/null). */
	r = (struct run){.name = "nostdin"};
	r.id = asc_request(c, "command/exec",
		with(sh("cat; echo eof; exec sleep 30"),
			"{'processId':'nostdin','streamStdoutStderr':true}"));
	expect_error(call(c, "command/exec/write", follow("nostdin", "{'deltaBase64':'eA=='}"),
			     asc_timeout(T_REPLY)),
		-32600, "stdin streaming is not enabled for this command/exec");
	expect_error(call(c, "command/exec/write", follow("nostdin", "{'closeStdin':true}"),
			     asc_timeout(T_REPLY)),
		-32600, "stdin streaming is not enabled for this command/exec");
	run_wait_output(c, &r, 0, "eof\n", 1, asc_timeout(T_REPLY));
	call_ok(c, "command/exec/terminate", follow("nostdin", NULL));
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 137);
	expect_error(call(c, "command/exec/write", follow("zz", "{'deltaBase64':'eA=='}"),
			     asc_timeout(T_REPLY)),
		-32600, "no active command/exec for process id \"zz\"");
	run_free(&r);
	asc_free(c);
}

static void
test_pty(void **state)
{
	struct asc *c = ready();
	struct run r = {.name = "t1"};
	const char *out, *at;

	/* tty alone: a terminal on 0, 1 and 2; everything arrives as "stdout". */
	r.id = asc_request(c, "command/exec",
		with(sh("[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo tty-yes; echo to-stderr >&2; "
			"stty size"),
			"{'processId':'t1','tty':true}"));
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 0);
	out = buf_str(&r.s[0]);
	if (strstr(out, "tty-yes") == NULL || strstr(out, "to-stderr") == NULL ||
		strstr(out, "24 80") == NULL || r.s[1].len != 0)
		fail_msg("PTY output: stdout \"%s\", stderr \"%s\"", out, buf_str(&r.s[1]));
	run_free(&r);

	/* cat echoes what is written; closeStdin (end-of-file) ends it. */
	r = (struct run){.name = "t2"};
	r.id = asc_request(
		c, "command/exec", with(argv_params("cat", NULL), "{'processId':'t2','tty':true}"));
	call_ok(c, "command/exec/write", follow("t2", "{'deltaBase64':'aGVsbG8K'}"));
	run_wait_output(c, &r, 0, "hello\r\n", 2, asc_timeout(T_REPLY));
	call_ok(c, "command/exec/write", follow("t2", "{'closeStdin':true}"));
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 0);
	run_free(&r);

	/* A partial line before closeStdin still ends cat. */
	r = (struct run){.name = "t3"};
	r.id = asc_request(
		c, "command/exec", with(argv_params("cat", NULL), "{'processId':'t3','tty':true}"));
	call_ok(c, "command/exec/write",
		follow("t3", "{'deltaBase64':'cGFydA==','closeStdin':true}"));
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 0);
	if (strstr(buf_str(&r.s[0]), "part") == NULL)
		fail_msg("PTY partial line: \"%s\"", buf_str(&r.s[0]));
	run_free(&r);

	/* The initial size, then a resize that the next stty sees. */
	r = (struct run){.name = "t4"};
	r.id = asc_request(c, "command/exec",
		with(sh("stty size; IFS= read -r l; stty size"),
			"{'processId':'t4','tty':true,'size':{'rows':31,'cols':101}}"));
	run_wait_output(c, &r, 0, "31 101", 1, asc_timeout(T_REPLY));
	call_ok(c, "command/exec/resize", follow("t4", "{'size':{'rows':45,'cols':132}}"));
	expect_error(call(c, "command/exec/resize", follow("t4", "{'size':{'rows':0,'cols':132}}"),
			     asc_timeout(T_REPLY)),
		-32602, "command/exec size rows and cols must be greater than 0");
	call_ok(c, "command/exec/write", follow("t4", "{'deltaBase64':'Z28K'}"));
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 0);
	out = buf_str(&r.s[0]);
	if ((at = strstr(out, "31 101")) == NULL || strstr(at, "45 132") == NULL)
		fail_msg("PTY sizes: \"%s\"", out);
	run_free(&r);

	/* isatty as a program sees it, with and without tty. */
	r = (struct run){.name = "t5"};
	r.id = asc_request(c, "command/exec",
		with(argv_params("python3", "-c", "import sys;print(sys.stdout.isatty())", NULL),
			"{'processId':'t5','tty':true}"));
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 0);
	assert_string_equal(buf_str(&r.s[0]), "True\r\n");
	run_free(&r);
	exec_expect(c, argv_params("python3", "-c", "import sys;print(sys.stdout.isatty())", NULL),
		asc_timeout(T_REPLY), 0, "False\n", "");

	/* Resizing what has no PTY. */
	r = (struct run){.name = "np"};
	r.id = asc_request(c, "command/exec", with(sh("exec sleep 30"), "{'processId':'np'}"));
	expect_error(call(c, "command/exec/resize", follow("np", "{'size':{'rows':10,'cols':10}}"),
			     asc_timeout(T_REPLY)),
		-32600, "failed to resize PTY: process is not attached to a PTY");
	expect_error(call(c, "command/exec/resize", follow("np", "{'size':{'rows':10,'cols':0}}"),
			     asc_timeout(T_REPLY)),
		-32602, "command/exec size rows and cols must be greater than 0");
	expect_error(call(c, "command/exec/resize", follow("zz", "{'size':{'rows':10,'cols':10}}"),
			     asc_timeout(T_REPLY)),
		-32600, "no active command/exec for process id \"zz\"");
	call_ok(c, "command/exec/terminate", follow("np", NULL));
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 137);
	run_free(&r);
	asc_free(c);
}

static void
test_terminate(void **state)
{
	struct asc *c = ready();
	struct run r = {.name = "k1"};
	long long t0;
	pid_t pid;
	int n;

	/* The sleeps hold no output: only a kill of the whole group can end the second one. */
	r.id = asc_request(c, "command/exec",
		with(sh("echo $$; sleep 100 >/dev/null 2>&1 & sleep 100 >/dev/null 2>&1"),
			"{'processId':'k1','streamStdoutStderr':true}"));
	run_wait_output(c, &r, 0, "\n", 1, asc_timeout(T_REPLY));
	pid = (pid_t)strtol(buf_str(&r.s[0]), NULL, 10);
	assert_true(pid > 1);
	if ((n = pgid_wait(pid, 3, asc_timeout(2000))) != 3)
		fail_msg(
			"process group %d has %d members, expected sh and two sleeps", (int)pid, n);
	t0 = asc_now_ms();
	call_ok(c, "command/exec/terminate", follow("k1", NULL));
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 137);
	if (asc_now_ms() - t0 > asc_timeout(1000))
		fail_msg("terminate answered after %lld ms", asc_now_ms() - t0);
	if ((n = pgid_wait(pid, 0, asc_timeout(2000))) != 0)
		fail_msg("%d processes of group %d remain after terminate", n, (int)pid);
	/* The id is gone with the process. */
	expect_error(call(c, "command/exec/terminate", follow("k1", NULL), asc_timeout(T_REPLY)),
		-32600, "no active command/exec for process id \"k1\"");
	expect_error(call(c, "command/exec/terminate", follow("zz", NULL), asc_timeout(T_REPLY)),
		-32600, "no active command/exec for process id \"zz\"");
	run_free(&r);

	/* A buffered command with a processId can be terminated too. */
	r = (struct run){.name = "k2"};
	r.id = asc_request(
		c, "command/exec", with(argv_params("sleep", "30", NULL), "{'processId':'k2'}"));
	call_ok(c, "command/exec/terminate", follow("k2", NULL));
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 137);
	run_free(&r);
	asc_free(c);
}

static void
test_timeout(void **state)
{
	struct asc *c = ready();
	long long t0 = asc_now_ms(), dt;

	exec_expect(c, with(argv_params("sleep", "5", NULL), "{'timeoutMs':300}"),
		asc_timeout(T_REPLY), 124, "", "");
	dt = asc_now_ms() - t0;
	print_message("timeoutMs 300: answered after %lld ms\n", dt);
	if (dt < 290 || dt > asc_timeout(2000))
		fail_msg("timeoutMs 300 answered after %lld ms", dt);
	/* The timeout kills the whole group, a background grandchild included. */
	t0 = asc_now_ms();
	exec_expect(c, with(sh("sleep 5 & sleep 5"), "{'timeoutMs':300}"), asc_timeout(T_REPLY),
		124, "", "");
	if (asc_now_ms() - t0 > asc_timeout(1500))
		fail_msg("timeout with a grandchild answered after %lld ms", asc_now_ms() - t0);
	exec_expect(c, with(argv_params("sleep", "1.5", NULL), "{'disableTimeout':true}"),
		asc_timeout(T_REPLY), 0, "", "");
	exec_expect(c, with(argv_params("sleep", "0.2", NULL), "{'timeoutMs':5000}"),
		asc_timeout(T_REPLY), 0, "", "");
	asc_free(c);
}

static void
test_default_timeout(void **state)
{
	struct asc *c;
	long long t0, dt;

	if (asc_sanitized())
		skip(); /* slow: ~10 s; the plain run covers it */
	c = ready();
	t0 = asc_now_ms();
	exec_expect(c, argv_params("sleep", "12", NULL), 13000, 124, "", "");
	dt = asc_now_ms() - t0;
	print_message("default timeout: answered after %lld ms\n", dt);
	if (dt < 9800 || dt > 11500)
		fail_msg("default timeout answered after %lld ms (want ~10000)", dt);
	asc_free(c);
}

static void
test_env(void **state)
{
	static const char *const env[] = {"ASC_DAEMON_VAR=from-daemon", "ASC_DAEMON_KEEP=kept",
		"ASC_DAEMON_OVER=daemon", NULL};
	static const char *probe =
		"printf '%s|%s|%s|%s|%s' \"${ASC_NEW-unset}\" \"${ASC_DAEMON_VAR-unset}\" "
		"\"${ASC_DAEMON_KEEP-unset}\" \"${ASC_DAEMON_OVER-unset}\" \"${CODEX_HOME-unset}\"";
	struct asc_opts o = {.env = env};
	struct asc *c = ready_opts(&o);
	char *want = xasprintf("unset|from-daemon|kept|daemon|%s", asc_codex_home(c));

	exec_expect(c, sh(probe), asc_timeout(T_REPLY), 0, want, "");
	free(want);
	want = xasprintf("new value|unset|kept|over=ridden|%s", asc_codex_home(c));
	exec_expect(c,
		with(sh(probe),
			"{'env':{'ASC_NEW':'new value','ASC_DAEMON_VAR':null,"
			"'ASC_DAEMON_OVER':'over=ridden'}}"),
		asc_timeout(T_REPLY), 0, want, "");
	free(want);
	/* Unsetting what does not exist, an empty value, and an empty env object. */
	exec_expect(c,
		with(sh("printf '[%s]' \"${ASC_EMPTY-unset}\""),
			"{'env':{'ASC_EMPTY':'','ASC_NOT_THERE':null}}"),
		asc_timeout(T_REPLY), 0, "[]", "");
	want = xasprintf("unset|from-daemon|kept|daemon|%s", asc_codex_home(c));
	exec_expect(c, with(sh(probe), "{'env':{}}"), asc_timeout(T_REPLY), 0, want, "");
	free(want);
	asc_free(c);
}

static void
test_cwd(void **state)
{
	struct asc *c = ready();
	char here[PATH_MAX], *want;
	json_t *m;
	const char *msg;

	want = xasprintf("%s\n", asc_dir(c));
	exec_expect(c, with(argv_params("/bin/pwd", "-P", NULL), "{'cwd':'%s'}", asc_dir(c)),
		asc_timeout(T_REPLY), 0, want, "");
	free(want);
	assert_non_null(getcwd(here, sizeof here));
	want = xasprintf("%s/tests/integration\n", here);
	exec_expect(c, with(argv_params("/bin/pwd", "-P", NULL), "{'cwd':'tests/integration'}"),
		asc_timeout(T_REPLY), 0, want, "");
	free(want);
	want = xasprintf("%s\n", here);
	exec_expect(c, argv_params("/bin/pwd", "-P", NULL), asc_timeout(T_REPLY), 0, want, "");
	free(want);
	m = call(c, "command/exec", with(sh("true"), "{'cwd':'/nonexistent/asc-dir'}"),
		asc_timeout(T_REPLY));
	asc_assert_error(m, -32603, NULL);
	msg = json_string_value(json_object_get(json_object_get(m, "error"), "message"));
	if (strncmp(msg, "failed to spawn command:", 24) != 0)
		fail_msg("missing cwd: %s", asc_raw(c));
	json_decref(m);
	asc_free(c);
}

static void
test_spawn_errors(void **state)
{
	struct asc *c = ready();
	char *path = xasprintf("%s/not-executable", asc_dir(c));
	FILE *f = fopen(path, "we");

	exec_refused(c, argv_params("/nonexistent/asc-binary", NULL), -32603,
		"failed to spawn command: No such file or directory (os error 2)");
	exec_refused(c, argv_params("asc-no-such-command-anywhere", NULL), -32603,
		"failed to spawn command: No such file or directory (os error 2)");
	assert_non_null(f);
	fputs("#!/bin/sh\necho should-not-run\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0644), 0);
	exec_refused(c, argv_params(path, NULL), -32603,
		"failed to spawn command: Permission denied (os error 13)");
	/* A streaming request that fails to spawn is answered the same way, and frees its id. */
	exec_refused(c,
		with(argv_params("/nonexistent/asc-binary", NULL),
			"{'processId':'e1','streamStdoutStderr':true,'streamStdin':true}"),
		-32603, "failed to spawn command: No such file or directory (os error 2)");
	exec_expect(c, with(argv_params("true", NULL), "{'processId':'e1'}"), asc_timeout(T_REPLY),
		0, "", "");
	assert_int_equal(asc_sync(c, asc_timeout(T_REPLY)), 0);
	free(path);
	asc_free(c);
}

/* The pipe inodes ("pipe:[N]") this test process holds: the daemon's protocol pipes. */
static char *
own_pipes(void)
{
	struct buf b = {0};
	char path[300], target[128];
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	ssize_t n;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		if ((n = readlink(path, target, sizeof target - 1)) <= 0)
			continue;
		target[n] = '\0';
		if (strncmp(target, "pipe:", 5) == 0) {
			buf_add(&b, target, (size_t)n);
			buf_add(&b, "\n", 1);
		}
	}
	closedir(d);
	return b.p != NULL ? b.p : xstrdup("");
}

static void
test_fd_hygiene(void **state)
{
	struct asc *c = ready();
	struct run r = {.name = "f1"};
	char *mine = own_pipes(), fd1[64], fd2[64];
	const char *out;
	json_t *m;

	exec_expect(c, argv_params("ls", "/proc/self/fd", NULL), asc_timeout(T_REPLY), 0,
		"0\n1\n2\n3\n", "");
	exec_expect(c, argv_params("readlink", "/proc/self/fd/0", NULL), asc_timeout(T_REPLY), 0,
		"/dev/null\n", "");
	r.id = asc_request(c, "command/exec",
		with(argv_params("ls", "/proc/self/fd", NULL),
			"{'processId':'f1','streamStdin':true,'streamStdoutStderr':true}"));
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 0);
	assert_string_equal(buf_str(&r.s[0]), "0\n1\n2\n3\n");
	run_free(&r);
	r = (struct run){.name = "f2"};
	r.id = asc_request(c, "command/exec",
		with(argv_params("ls", "-1", "/proc/self/fd", NULL),
			"{'processId':'f2','tty':true}"));
	run_collect(c, &r, asc_timeout(T_REPLY));
	run_expect_exit(&r, 0);
	assert_string_equal(buf_str(&r.s[0]), "0\r\n1\r\n2\r\n3\r\n");
	run_free(&r);

	/* fds 1 and 2 are two pipes of their own, never the daemon's protocol pipes. */
	m = call(c, "command/exec", sh("for i in 1 2; do readlink /proc/$$/fd/$i; done"),
		asc_timeout(T_REPLY));
	out = json_string_value(json_object_get(asc_assert_result(m), "stdout"));
	assert_non_null(strstr(mine, "pipe:")); /* the test does hold the protocol pipes */
	if (sscanf(out, "%63s %63s", fd1, fd2) != 2)
		fail_msg("child fds: %s", out);
	if (strncmp(fd1, "pipe:", 5) != 0 || strncmp(fd2, "pipe:", 5) != 0 ||
		strcmp(fd1, fd2) == 0 || strstr(mine, fd1) != NULL || strstr(mine, fd2) != NULL)
		fail_msg("child stdout %s, stderr %s (protocol pipes: %s)", fd1, fd2, mine);
	json_decref(m);
	free(mine);
	asc_free(c);
}

static void
test_many_concurrent(void **state)
{
	struct asc *c = ready();
	size_t n = asc_load(300), i;
	struct run *runs = xcalloc(n, sizeof *runs);
	char **names = xcalloc(n, sizeof *names), *want;
	long long t0 = asc_now_ms();
	json_t *p;

	for (i = 0; i < n; i++) {
		names[i] = xasprintf("c%zu", i);
		runs[i].name = names[i];
		p = argv_params("sh", "-c", "echo $0; echo err-$0 >&2; sleep 0.5", names[i], NULL);
		runs[i].id = asc_request(c, "command/exec",
			with(p, "{'processId':'%s','streamStdoutStderr':true}", names[i]));
	}
	runs_collect(c, runs, n, asc_timeout(30000));
	print_message("%zu concurrent processes answered in %lld ms\n", n, asc_now_ms() - t0);
	for (i = 0; i < n; i++) {
		run_expect_exit(&runs[i], 0);
		want = xasprintf("%s\n", names[i]);
		assert_string_equal(buf_str(&runs[i].s[0]), want);
		free(want);
		want = xasprintf("err-%s\n", names[i]);
		assert_string_equal(buf_str(&runs[i].s[1]), want);
		free(want);
		run_free(&runs[i]);
		free(names[i]);
	}
	free(runs);
	free(names);
	asc_free(c);
}

static void
test_stdin_eof_kills_children(void **state)
{
	struct asc *c = ready();
	struct run runs[3] = {{.name = "s0"}, {.name = "s1"}, {.name = "s2"}};
	pid_t pids[3];
	long long t0;
	int status, i;
	char st;
	json_t *m;

	for (i = 0; i < 3; i++)
		runs[i].id = asc_request(c, "command/exec",
			with(sh("echo $$; exec sleep 100"),
				"{'processId':'%s','streamStdoutStderr':true}", runs[i].name));
	for (i = 0; i < 3; i++) {
		while (strchr(buf_str(&runs[i].s[0]), '\n') == NULL) {
			if ((m = asc_next(c, asc_timeout(T_REPLY))) == NULL)
				fail_msg("no pid from %s", runs[i].name);
			runs_take(c, runs, 3, m);
		}
		pids[i] = (pid_t)strtol(buf_str(&runs[i].s[0]), NULL, 10);
		assert_int_equal(proc_stat(pids[i], &st, NULL, NULL), 0);
	}
	t0 = asc_now_ms();
	asc_close_stdin(c);
	if (asc_wait_exit(c, asc_timeout(3000), &status) != 0)
		fail_msg("daemon still running 3 s after stdin EOF with 3 children");
	print_message("exit after stdin EOF with 3 children: %lld ms\n", asc_now_ms() - t0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	for (i = 0; i < 3; i++)
		if (proc_stat(pids[i], &st, NULL, NULL) == 0)
			fail_msg("child %d still exists after the daemon exited (state %c)",
				(int)pids[i], st);
	/* Each in-flight exec was answered before the exit: killed, 137. */
	while ((m = asc_next(c, 0)) != NULL)
		runs_take(c, runs, 3, m);
	for (i = 0; i < 3; i++) {
		if (runs[i].resp == NULL)
			fail_msg("%s was not answered before the exit", runs[i].name);
		run_expect_exit(&runs[i], 137);
		run_free(&runs[i]);
	}
	asc_free(c);
}

static void
test_sequential_no_leaks(void **state)
{
	struct asc *c = ready();
	size_t n = asc_sanitized() ? 2000 : 10000, i;
	pid_t dpid = asc_pid(c);
	long long t0, id;
	int fds;
	json_t *m;

	exec_expect(c, argv_params("true", NULL), asc_timeout(T_REPLY), 0, "", "");
	fds = asc_fd_count(dpid);
	t0 = asc_now_ms();
	for (i = 0; i < n; i++) {
		id = asc_request(c, "command/exec", argv_params("true", NULL));
		m = asc_wait_response(c, id, asc_timeout(T_REPLY));
		if (json_integer_value(json_object_get(asc_assert_result(m), "exitCode")) != 0)
			fail_msg("exec %zu: %s", i, asc_raw(c));
		json_decref(m);
	}
	print_message("%zu sequential execs in %lld ms; daemon fds %d -> %d, VmRSS %ld KiB\n", n,
		asc_now_ms() - t0, fds, asc_fd_count(dpid), asc_rss_kb(dpid));
	assert_int_equal(proc_count(0, dpid), 0);
	assert_int_equal(asc_fd_count(dpid), fds);
	asc_free(c);
}

/* CPU time (user + system) of a process in clock ticks, or -1. */
static long
proc_cpu(pid_t pid)
{
	char path[64], line[1024], *p;
	unsigned long ut = 0, stt = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	p = fgets(line, sizeof line, f);
	fclose(f);
	if (p == NULL || (p = strrchr(line, ')')) == NULL ||
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &stt) !=
			2)
		return -1;
	return (long)(ut + stt);
}

static void
test_backpressure(void **state)
{
	struct asc *c = ready();
	size_t n = asc_sanitized() ? 200 * (size_t)MIB : 1024 * (size_t)MIB;
	char *script = xasprintf("head -c %zu /dev/zero", n);
	struct run r = {.name = "bp", .zeros = 1};
	pid_t dpid = asc_pid(c);
	long base = asc_rss_kb(dpid), rss, peak = 0, cpu, limit;
	long long t0;
	int i;

	r.id = asc_request(c, "command/exec",
		with(sh(script),
			"{'processId':'bp','streamStdoutStderr':true,"
			"'disableOutputCap':true,'disableTimeout':true}"));
	/* Read nothing for 2 s: the daemon must block, not buffer. */
	usleep(200000);
	cpu = proc_cpu(dpid);
	for (i = 0; i < 18; i++) {
		usleep(100000);
		rss = asc_rss_kb(dpid);
		peak = rss > peak ? rss : peak;
	}
	cpu = proc_cpu(dpid) - cpu;
	/* An ASan build starts bigger: its limit is relative to its own start. */
	limit = asc_sanitized() ? base + 40 * 1024 : 40 * 1024;
	print_message("blocked for 2 s: daemon VmRSS %ld KiB (start %ld), %ld CPU ticks\n", peak,
		base, cpu);
	if (peak >= limit)
		fail_msg("daemon VmRSS %ld KiB while its client does not read (limit %ld)", peak,
			limit);
	if (cpu > sysconf(_SC_CLK_TCK) / 4)
		fail_msg("daemon used %ld CPU ticks in 1.8 s while blocked", cpu);
	t0 = asc_now_ms();
	run_collect(c, &r, asc_timeout(120000));
	run_expect_exit(&r, 0);
	print_message("%zu MiB after the pause in %lld ms (%zu deltas); VmRSS %ld KiB\n", n / MIB,
		asc_now_ms() - t0, r.frames, asc_rss_kb(dpid));
	if (r.bytes[0] != n)
		fail_msg("received %zu bytes of %zu", r.bytes[0], n);
	run_free(&r);
	free(script);
	asc_free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_echo_exit_codes),
		cmocka_unit_test(test_sandbox_policies),
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_output_caps),
		cmocka_unit_test(test_disable_output_cap),
		cmocka_unit_test(test_streaming_bytes_and_frames),
		cmocka_unit_test(test_slow_output_prompt),
		cmocka_unit_test(test_stdin_pipe),
		cmocka_unit_test(test_pty),
		cmocka_unit_test(test_terminate),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_default_timeout),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_cwd),
		cmocka_unit_test(test_spawn_errors),
		cmocka_unit_test(test_fd_hygiene),
		cmocka_unit_test(test_many_concurrent),
		cmocka_unit_test(test_stdin_eof_kills_children),
		cmocka_unit_test(test_sequential_no_leaks),
		cmocka_unit_test(test_backpressure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
