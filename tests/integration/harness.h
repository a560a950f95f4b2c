/*
 * The integration test harness: runs the real daemon ($APP_SERVER_BIN, default build/app-server)
 * on pipes and speaks JSON-RPC to it. Every line the daemon writes is parsed and checked as it
 * arrives, before a test sees it: notifications against the reference ServerNotification.json
 * (plus an integer emittedAtMs), server requests against ServerRequest.json, errors against
 * JSONRPCError.json, and results against the reference definition of the result type of the
 * method that was sent with that id. Responses must carry neither "jsonrpc" nor "emittedAtMs".
 * The one allowed difference from the reference: an error answering a line that had no usable
 * id (-32700, or -32600 for an unusable line) carries "id": null, as JSON-RPC 2.0 says. Any
 * violation fails the running cmocka test with the offending line.
 *
 * Writes never block: while the daemon's stdin is full the harness keeps reading its stdout
 * into a queue, so a test may pipeline any amount without deadlocking either side. Messages
 * wait in that queue, in arrival order, until a test takes them.
 *
 * Environment: APP_SERVER_REFERENCE_SCHEMA (default ../shared/reference/codex-app-server-schema,
 * relative to the repository root where tests run), APP_SERVER_NO_REFERENCE=1 to run without
 * it, APP_SERVER_SANITIZED=1 to stretch deadlines and shrink heavy loads for an ASan daemon.
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

struct asc;

struct asc_opts {
	const char *const *args; /* extra arguments, NULL-terminated; may be NULL */
	const char *const *env;	 /* "NAME=value" to set, "NAME" to unset; NULL-terminated */
	int capture_stderr;	 /* daemon stderr to a file (asc_stderr), not the test's */
	int inherit_codex_home;	 /* keep the test's CODEX_HOME instead of a fresh one */
};

/* Start a daemon; NULL opts means defaults. Fails the test if it cannot. */
struct asc *asc_spawn(const struct asc_opts *opts);
/*
 * Stop and free. A daemon still running gets stdin EOF and must exit 0 within the shutdown
 * deadline (so an ASan run reports leaks); otherwise it is killed and the test fails.
 */
void asc_free(struct asc *c);
pid_t asc_pid(const struct asc *c);
/* Free a client whose daemon the test killed with sig (it must have ended by it). */
void asc_free_killed(struct asc *c, int sig);
/* The CODEX_HOME given to the daemon: a path inside asc_dir that nobody created. */
const char *asc_codex_home(const struct asc *c);
/* This client's private temporary directory, removed by asc_free. */
const char *asc_dir(const struct asc *c);
/* Everything the daemon wrote to stderr so far (capture_stderr only); heap string. */
char *asc_stderr(const struct asc *c);

/* Write bytes as they are; 0, or -errno (e.g. -EPIPE once the daemon is gone). */
int asc_send_raw(struct asc *c, const void *buf, size_t len);
/* Write one line (a '\n' is added); a request in it is remembered for result checking. */
int asc_send_line(struct asc *c, const char *raw);
/* Send a request with the next integer id; params (stolen) may be NULL. Returns the id. */
long long asc_request(struct asc *c, const char *method, json_t *params);
/* Send a request with the given id (borrowed); params stolen, may be NULL. */
void asc_request_id(struct asc *c, const json_t *id, const char *method, json_t *params);

/* The response or error for an id; other messages stay queued. Fails the test on timeout. */
json_t *asc_wait_response(struct asc *c, long long id, int timeout_ms);
json_t *asc_wait_response_id(struct asc *c, const json_t *id, int timeout_ms);
/* The next notification of a method; other messages stay queued. Fails on timeout. */
json_t *asc_wait_notification(struct asc *c, const char *method, int timeout_ms);
/* The next message in arrival order, or NULL after timeout_ms (0: only what is readable now). */
json_t *asc_next(struct asc *c, int timeout_ms);
/* The raw line (without '\n') of the message most recently returned to the test. */
const char *asc_raw(const struct asc *c);
/* Messages received and not yet taken. */
size_t asc_queued(const struct asc *c);
/*
 * A round trip: sends a request for an unknown method and waits for its error. Returns how
 * many other messages arrived meanwhile (they stay queued); "no reply" tests expect 0.
 */
int asc_sync(struct asc *c, int timeout_ms);

/* The handshake with a default clientInfo; asserts a well-formed success. */
void asc_initialize(struct asc *c);
/* A daemon on a fresh CODEX_HOME holding config.toml's text, initialized (experimentalApi on
 * request). */
struct asc *asc_spawn_config(const char *toml, int experimental);

void asc_close_stdin(struct asc *c);
/* Close our end of the daemon's stdout: its next write fails with EPIPE. */
void asc_close_stdout(struct asc *c);
/* Wait for the daemon to exit, reading its output meanwhile; 0 and the wait status, or -1. */
int asc_wait_exit(struct asc *c, int timeout_ms, int *status);

/* Send a line and return the next message (the caller frees it); fails the test on timeout. */
json_t *asc_roundtrip(struct asc *c, const char *line, int timeout_ms);
/* Assert an error with this code, exact message (NULL: any) and raw id text (NULL: null). */
void asc_expect_error(const json_t *msg, int code, const char *message, const char *id_text);
/* Assert msg is an error with this code whose message contains `part` (NULL: any). */
void asc_assert_error(const json_t *msg, int code, const char *part);
/* Assert msg is a success response and return its result (borrowed). */
json_t *asc_assert_result(const json_t *msg);

/* VmRSS of a process in KiB, or -1. */
long asc_rss_kb(pid_t pid);
/* Open file descriptors of a process, or -1. */
int asc_fd_count(pid_t pid);

/* Between the harness files: load the reference (fails loudly if absent), check one line
 * (sent: id text -> method of requests awaiting an answer), shorten a line for a message,
 * the text an id is remembered under (heap). */
void asc_ref_load(void);
void asc_check_message(json_t *sent, const json_t *msg, const char *raw);
const char *asc_show(const char *raw);
char *asc_id_key(const json_t *id);

/* True under APP_SERVER_SANITIZED=1. */
int asc_sanitized(void);
/* A deadline scaled for the build under test (x5 when sanitized). */
int asc_timeout(int ms);
/* A load size: full, or a fifth of it when sanitized. */
size_t asc_load(size_t full);
/* Milliseconds on the monotonic clock. */
long long asc_now_ms(void);

#endif
