/*
 * Code mode's host process: node running codemode_host.js (embedded at build time) for one
 * cell, in its own process group under a read-only sandbox without network (a vm context is
 * no security boundary), its protocol as JSON lines on the child's own pipes. The exec engine
 * reaps it and kills its tree; closing the daemon's stdin ends it like every child.
 */
#ifndef CODEMODE_HOST_H
#define CODEMODE_HOST_H

#include <stddef.h>
#include <sys/types.h>

#include <ev.h>
#include <jansson.h>

#include "protocol/buf.h"

struct outq;

#define CODEMODE_LINE_MAX (16u << 20) /* one line from the host, at most */

/* The embedded host program (codemode_js.c), NUL-terminated. */
extern const char codemode_host_js[];

/* Lines out of a byte stream, each at most max bytes (a longer one is an error). */
struct codemode_frame {
	struct buf pending;
};
void codemode_frame_init(struct codemode_frame *f, size_t max);
void codemode_frame_free(struct codemode_frame *f);
/* Feed bytes; line(arg, text, len) for each complete line. 0, or -1 once a line is too long. */
int codemode_frame_feed(struct codemode_frame *f, const char *data, size_t n,
	void (*line)(void *arg, const char *text, size_t len), void *arg);

struct codemode_host;

struct codemode_host_cbs {
	void (*message)(void *arg, json_t *msg); /* one message (borrowed) */
	void (*gone)(void *arg);		 /* reaped, its pipes closed: free it then */
};

/* node's path on the PATH given (NULL: none found), heap. Where it is missing, no code mode. */
char *codemode_node_path(const char *path_env);
/* Start the host for one cell in cwd; 0, or -1 with *cause (heap). */
int codemode_host_start(struct ev_loop *loop, struct outq *q, const char *cwd,
	const struct codemode_host_cbs *cbs, void *arg, struct codemode_host **out, char **cause);
/* Send one message (a whole line); 0 or -1 (refused: the host is gone or its queue full). */
int codemode_host_send(struct codemode_host *h, const json_t *msg);
/* Kill its process group now; gone follows. */
void codemode_host_kill(struct codemode_host *h);
/* Free (a running host is killed first; gone does not run then). */
void codemode_host_free(struct codemode_host *h);
pid_t codemode_host_pid(const struct codemode_host *h);

#endif
