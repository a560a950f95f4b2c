/*
 * Helpers shared by the command/exec integration tests (test_exec.c, test_exec_io.c): daemons
 * after the handshake, request params in compact JSON text, buffered answers checked in one
 * call, streamed runs followed delta by delta (exec_util.c says what each delta must meet),
 * test files, and /proc readings of process groups and zombies. The Makefile links this into
 * every integration binary, so every name here carries the xt_ prefix.
 */
#ifndef EXEC_UTIL_H
#define EXEC_UTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "harness.h"

#define T_REPLY 5000  /* ms for an answer that needs no waiting */
#define FRAME	65536 /* decoded bytes per outputDelta at most */
#define MIB	1048576

/* A growable byte buffer, always NUL-terminated. */
struct xt_buf {
	char *p;
	size_t len, cap;
};

/* One command/exec being followed: its deltas and its answer. */
struct xt_run {
	const char *name;   /* processId, NULL when none */
	long long id;	    /* request id */
	int zeros;	    /* count bytes (which must all be 0) instead of keeping them */
	struct xt_buf s[2]; /* stdout, stderr */
	size_t bytes[2];
	size_t frames, max_frame;
	int cap[2];	    /* capReached seen, per stream */
	int after_cap;	    /* a delta followed the capReached one on its stream */
	long long first_ms; /* arrival of the first and the latest delta */
	long long last_ms;
	json_t *resp; /* the answer, once it came */
};

/* Append n bytes, keeping a NUL after them. */
void xt_buf_add(struct xt_buf *b, const void *data, size_t n);
/* The text so far ("" when empty). */
const char *xt_buf_str(const struct xt_buf *b);
/* Free what a run holds and clear it for reuse. */
void xt_run_free(struct xt_run *r);
/* A fresh daemon after the handshake. */
struct asc *xt_ready_opts(const struct asc_opts *o);
/* A fresh daemon with default options after the handshake. */
struct asc *xt_ready(void);
/* Merge JSON text (single quotes stand for double quotes; printf-formatted) into p. */
json_t *xt_with(json_t *p, const char *fmt, ...);
/* command/exec params for an argv (NULL-terminated), unsandboxed. */
json_t *xt_argv_params(const char *arg0, ...);
/* command/exec params for `sh -c script`, unsandboxed. */
json_t *xt_sh(const char *script);
/* Send a request and return its answer (a message the caller frees). */
json_t *xt_call(struct asc *c, const char *method, json_t *params, int timeout_ms);
/* Assert an error with this code and exact message (NULL: any), then free it. */
void xt_expect_error(json_t *m, int code, const char *message);
/* A follow-up (write, resize, terminate) that must answer {}. */
void xt_call_ok(struct asc *c, const char *method, json_t *params);
/* A follow-up with {processId} plus extra JSON text. */
json_t *xt_follow(const char *name, const char *extra);
/* Run a command/exec to its answer and check exit code and outputs (NULL: not checked). */
void xt_exec_expect(
	struct asc *c, json_t *params, int timeout_ms, int code, const char *out, const char *err);
/* A command/exec that must fail with this code and exact message. */
void xt_exec_refused(struct asc *c, json_t *params, int code, const char *message);
/* Route one message to its run; anything unexpected fails the test. */
void xt_runs_take(struct asc *c, struct xt_run *runs, size_t n, json_t *m);
/* Take messages until every run is answered; then nothing else may be pending. */
void xt_runs_collect(struct asc *c, struct xt_run *runs, size_t n, int timeout_ms);
/* Take messages until r is answered. */
void xt_run_collect(struct asc *c, struct xt_run *r, int timeout_ms);
/* Take messages until stream s of r holds `needle` `times` times. */
void xt_run_wait_output(
	struct asc *c, struct xt_run *r, int s, const char *needle, int times, int timeout_ms);
/* The answer of a collected run: assert its exit code and streamed-out buffers (""). */
void xt_run_expect_exit(struct xt_run *r, int code);
/* A temp file of n bytes from gen (or random when gen is NULL). */
char *xt_make_file(struct asc *c, const char *name, size_t n, void (*gen)(char *, size_t, size_t));
/* Bytes that say where they are: lines "%09zu\n" (the offset), cut at any length. */
void xt_gen_offsets(char *out, size_t off, size_t n);
/* A whole file in memory (NUL-terminated); its length in *len. */
char *xt_read_file(const char *path, size_t *len);
/* Fields of /proc/PID/stat: state, ppid, pgid. 0, or -1 when there is no such process. */
int xt_proc_stat(pid_t pid, char *state, pid_t *ppid, pid_t *pgid);
/* Processes in /proc matching a pgid (> 0) or being zombie children of ppid (> 0). */
int xt_proc_count(pid_t pgid, pid_t zombie_parent);
/* Poll until the process group has `want` members (or the deadline); returns the count. */
int xt_pgid_wait(pid_t pgid, int want, int timeout_ms);

#endif
