/*
 * Code mode's cells (one thread's): `exec` starts a cell (a host process running the model's
 * JavaScript), `wait` polls, terminates or re-attaches one that yielded. A cell runs its nested
 * tool calls one at a time, through its owner (the agent), while an exec or wait call is
 * attached to it; its answers go back through the owner too. No agent internals here: the
 * owner's callbacks are the only way out (agent_codemode.c is the glue).
 */
#ifndef CODEMODE_RUN_H
#define CODEMODE_RUN_H

#include <ev.h>
#include <jansson.h>

struct outq;
struct codemode;

#define CODEMODE_STORE_KEYS  1024	/* store() keys per thread, at most */
#define CODEMODE_STORE_BYTES (1u << 20) /* one stored value's JSON, at most */
#define CODEMODE_ITEMS_MAX   4096	/* output items a cell holds between answers */
#define CODEMODE_WAIT_MS     10000	/* wait's yield_time_ms by default */

struct codemode_ops {
	/* Run a nested call (a function_call or custom_tool_call item, alive until its answer)
	 * as the model's call of that tool; its text answer comes back through
	 * codemode_tool_result(call_id). */
	void (*call)(void *arg, json_t *call);
	/* Answer the exec (custom) or wait call: output (an array, or a string), then one
	 * custom_tool_call_output per notify() text in notes (an array of strings). */
	void (*answer)(void *arg, const char *call_id, int custom, const json_t *output,
		const json_t *notes);
};

struct codemode *codemode_new(
	struct ev_loop *loop, struct outq *q, const struct codemode_ops *ops, void *arg);
/* Free every cell (their hosts killed) and the store. Accepts NULL. */
void codemode_free(struct codemode *cm);
/* The tools the host offers on `tools` (an array of {name, description}; borrowed, copied). */
void codemode_set_tools(struct codemode *cm, const json_t *tools);
/* An exec call: start a cell in cwd. Answered later (or at once on an error) via ops. */
void codemode_exec(struct codemode *cm, const char *call_id, const char *input, const char *cwd);
/* A wait call (its JSON arguments). */
void codemode_wait(struct codemode *cm, const char *call_id, const char *arguments);
/* A nested call's answer: 1 when call_id was one of ours ("cm-..."; then taken), else 0. */
int codemode_tool_result(struct codemode *cm, const char *call_id, const char *text);
/*
 * The same for a call whose answer is JSON (an MCP tool's CallToolResult, a dynamic tool's
 * output): the script's promise resolves to value (borrowed), or rejects with error's text.
 */
int codemode_tool_json(
	struct codemode *cm, const char *call_id, const json_t *value, const char *error);
/* The tools set by codemode_set_tools (borrowed), or NULL. */
const json_t *codemode_tools(const struct codemode *cm);
/* Whether an exec or wait call waits for its answer (the turn's tools wait for it). */
int codemode_busy(const struct codemode *cm);
/* The turn ends or is interrupted: every cell is killed, no call is answered. */
void codemode_kill_all(struct codemode *cm);
/* Cells alive (tests, logs). */
unsigned codemode_cells(const struct codemode *cm);

#endif
