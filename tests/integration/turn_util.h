/*
 * What the turn tests share: `app-server mock-model` as a separate process (a script of
 * responses, every request recorded), a daemon whose CODEX_HOME points at it, a workspace,
 * a loaded thread, and a turn driver that collects every message up to turn/completed,
 * answers server requests as the test says, and asserts the turn rules on the way: exactly
 * one turn/completed, every item started completes once, nothing for an item after it
 * completed, every server request resolved.
 */
#ifndef TURN_UTIL_H
#define TURN_UTIL_H

#include <sys/types.h>

#include <jansson.h>

struct asc;

struct mm {
	pid_t pid;
	char dir[64];
	char *record, *port_file;
	int port;
	void *out; /* its stdout (FILE *) */
};

/* Start `app-server mock-model` with a script (JSON text; NULL: no --script). */
void mm_start(struct mm *m, const char *script);
/* SIGTERM; it must exit 0. Files are removed. */
void mm_stop(struct mm *m);
/* The recorded requests, in order (new reference). */
json_t *mm_records(struct mm *m);

struct tt {
	struct mm mm;
	struct asc *c;
	char *home;	 /* CODEX_HOME (the daemon's) */
	char *workspace; /* the thread's cwd: a fresh folder */
	char *thread_id;
};

/* Settings of a fixture (NULL fields: the defaults below). */
struct tt_opts {
	const char *script; /* the mock's script (JSON text) */
	const char
		*approval_policy; /* thread/start's approvalPolicy (default: never; {..}: JSON) */
	const char *sandbox;	  /* thread/start's sandbox (default: danger-full-access) */
	const char *config_extra; /* more config.toml text */
	int retries;		  /* request_max_retries / stream_max_retries (default 0) */
	const char *wire;	  /* wire_api (default responses) */
	const char *const *env;	  /* more daemon environment ("NAME=value") */
	int experimental;	  /* initialize with capabilities.experimentalApi */
	const char *const *args;  /* the daemon's arguments (NULL-terminated), or NULL */
};

/* Mock model, daemon (initialized), workspace and a started thread. */
void tt_start(struct tt *f, const struct tt_opts *o);
/* A daemon again on the same CODEX_HOME and mock (after a restart or kill); no thread. */
void tt_respawn(struct tt *f);
void tt_stop(struct tt *f);

/*
 * How the test answers a server request: a result (new reference), NULL for an error, or
 * TT_NO_ANSWER to leave it pending (the test then interrupts or ends the turn itself).
 */
extern char tt_no_answer;
#define TT_NO_ANSWER ((json_t *)(void *)&tt_no_answer)
typedef json_t *(*tt_answer_fn)(void *arg, const json_t *request);

/* A text input array for turn/start (new reference). */
json_t *tt_text(const char *text);
/*
 * Start a turn (params: extra turn/start params, stolen, may be NULL; input given as text) and
 * run it to its turn/completed, answering server requests with answer (NULL: every request is
 * accepted). Returns every message from the turn/start answer to turn/completed included
 * (new reference); asserts the turn rules. The turn/start answer is the first element.
 */
json_t *tt_turn(struct tt *f, const char *text, json_t *params, tt_answer_fn answer, void *arg);
/* Collect messages up to turn/completed (after the caller started the turn some other way). */
json_t *tt_collect(struct tt *f, tt_answer_fn answer, void *arg);

/* A script with ` for " (C strings of JSON read better); heap. */
char *tt_script(const char *text);
/*
 * A mock script answering each request with one of items (stolen: call items, one response
 * each), then a last response with the message "done" (JSON text, heap).
 */
char *tt_calls_script(json_t *items);
/* s with every `from` replaced by `to` (s freed; heap). */
char *tt_replace(char *s, const char *from, const char *to);
/* Request n's body (borrowed from recs), as the mock recorded it. */
json_t *tt_request_body(const json_t *recs, size_t n);
/* The function_call_output (or custom_tool_call_output) text for call_id in a body, or NULL. */
const char *tt_call_output(const json_t *body, const char *call_id);
/* Whether any input item of a body has text containing needle. */
int tt_body_has_text(const json_t *body, const char *needle);
/* Send a request and return its answer (new reference). */
json_t *tt_call(struct tt *f, const char *method, json_t *params);

/* The n-th (0-based) message of a method in msgs (borrowed), or NULL. */
json_t *tt_find(const json_t *msgs, const char *method, size_t n);
/* How many messages of a method. */
size_t tt_count(const json_t *msgs, const char *method);
/* The n-th item/completed item of a type (borrowed), or NULL. */
json_t *tt_item(const json_t *msgs, const char *type, size_t n);
/* The index of the first message of a method (or -1). */
long tt_index(const json_t *msgs, const char *method);
/* turn/completed's turn (borrowed). */
json_t *tt_completed(const json_t *msgs);
/*
 * Recorded scenarios (the fixtures upstream was recorded in, record.py's view of a turn): append to
 * seq the methods of msgs with item type and status, thread status flags and the turn's status.
 */
void tt_sequence(json_t *seq, const json_t *msgs);
/* Assert two JSON values equal, showing both as ours and upstream's when not (what: a label). */
void tt_assert_upstream(const char *what, const json_t *want, const json_t *got);
/* Answer the server request req late with result (JSON text): nothing more may be reported. */
void tt_late_answer(struct tt *f, const json_t *req, const char *result);
/* A path in the workspace (heap). */
char *tt_path(const struct tt *f, const char *name);
/* The text of a file, or NULL (heap). */
char *tt_read(const char *path);

#endif
