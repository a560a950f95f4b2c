/*
 * app-client chat: a terminal agent session (cmd_chat.c: options, the daemon, input, slash
 * commands and signals; chat_render.c: what a turn shows and the approval prompts). States:
 * STARTING (initialize, thread/start or resume), IDLE (the prompt reads a line), TURN (a turn
 * runs: its notifications print as they come, input waits), ASK (an approval prompt reads a
 * line), QUITTING. Lines are edited with libedit on a terminal; from a pipe they are read as is.
 */
#ifndef CHAT_H
#define CHAT_H

#include <ev.h>
#include <jansson.h>

#include "protocol/buf.h"

struct conn;

enum chat_state { CHAT_STARTING, CHAT_IDLE, CHAT_TURN, CHAT_ASK, CHAT_QUITTING };

struct chat {
	struct ev_loop *loop;
	struct conn *conn;
	enum chat_state state;
	int tty;  /* stdin is a terminal: libedit edits lines */
	ev_io in; /* stdin */
	ev_signal sigint, sigterm, sighup;
	double last_sigint; /* a second Ctrl-C within a second quits */
	struct buf pipe_in; /* stdin bytes not yet a line (not a terminal) */
	char *thread_id, *turn_id, *model, *cwd, *resume;
	json_t *ask_id; /* the approval waiting for an answer */
	char *ask_method;
	int at_bol;	/* the output is at the start of a line */
	int delta_seen; /* the agent message being shown got deltas */
	int status;	/* exit status */
	char *error;
};

/* chat_render.c: a notification of the thread; an approval request (the prompt follows). */
void chat_render(struct chat *c, const char *method, json_t *params);
void chat_render_ask(struct chat *c, const char *method, json_t *params);
/* Print text, keeping track of whether the output ends a line. */
void chat_print(struct chat *c, const char *s, size_t n);
void chat_printf(struct chat *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Make sure the next output starts a line. */
void chat_newline(struct chat *c);

/* cmd_chat.c: back to the prompt once a turn ended; the answer to an approval. */
void chat_turn_ended(struct chat *c);
void chat_prompt(struct chat *c);

#endif
