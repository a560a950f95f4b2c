/*
 * What the account integration tests (test_account_*.c) share: the mock ChatGPT backend and
 * issuer (tests/integration/mock_chatgpt.py) started in a folder of its own and stopped with
 * that folder removed, its browser, fake JWTs, and the daemon calls they all repeat. The
 * Makefile links this into every integration binary, so every name here carries the mc_ prefix.
 */
#ifndef MOCK_CHATGPT_UTIL_H
#define MOCK_CHATGPT_UTIL_H

#include <sys/types.h>

#include <jansson.h>

#include "harness.h"

#define MC_MS 10000 /* ms for any answer from the daemon */

struct mc_mock {
	pid_t pid;
	int port;
	char dir[64]; /* /tmp/<tag>-mock-XXXXXX: its port file, its log, what the browser got */
	char *log;    /* one JSON line per request the mock received */
};

/* Start the mock in a new /tmp/<tag>-mock-XXXXXX folder, with up to two more arguments (a1
 * NULL: none; a2 NULL: one). Returns once it listens (its port in m->port). */
void mc_start(struct mc_mock *m, const char *tag, const char *a1, const char *a2);
/* Stop the mock, reap it, remove its folder. */
void mc_stop(struct mc_mock *m);
/* The browser (the mock's --browse): follow url to its end; {status, url, ctype, body} (new
 * reference). must_exit_0: the browser itself must have succeeded. */
json_t *mc_browse(const struct mc_mock *m, const char *url, int must_exit_0);
/* Remove a folder and everything under it: 0, or -1 (errno set). */
int mc_rm_tree(const char *dir);
/* A fake unsigned JWT around payload (stolen); heap. */
char *mc_jwt(json_t *payload);
/* config.toml in home: the model and the ChatGPT backend are the mock's. */
void mc_write_config(const struct mc_mock *m, const char *home);
/* initialize with experimentalApi, which must succeed. */
void mc_initialize(struct asc *c);
/* A new thread in /tmp: its id (heap). */
char *mc_thread_new(struct asc *c);
/* turn/start "hi" on a thread (the answer dropped). */
void mc_turn_start(struct asc *c, const char *tid);

#endif
