/*
 * What tests/integration/test_thread*.c share: a daemon on a CODEX_HOME with the mock model
 * (th_start / th_stop), calls answered within TH_MS, and the thread calls they repeat.
 */
#ifndef TH_UTIL_H
#define TH_UTIL_H

#include "../unit/thread/thread_util.h"
#include "harness.h"
#include "turn_util.h"

#define TH_MS 10000

struct th {
	struct tu_home h;
	struct mm mm;
	struct asc *c;
	int mock;
};

/* config.toml in the home: upstream's fixture config pointed at our mock (when there is one). */
void th_config(struct th *t);
/* A daemon on the home (initialized), with one more environment entry (or NULL). */
struct asc *th_daemon_env(struct th *t, const char *extra);
struct asc *th_daemon(struct th *t);
/* A fixture: upstream's home (fixture) or an empty one, a mock answering "done" forever. */
void th_start(struct th *t, int fixture);
void th_stop(struct th *t);
/* A request, and its answer within TH_MS. */
json_t *th_call(struct asc *c, const char *method, json_t *params);
/* A -32600 (or code) error whose message starts with prefix. */
void th_error(const json_t *r, int code, const char *prefix);
/* thread/start in the workspace; the id (heap). The thread/started notification is taken. */
char *th_new(struct th *t, json_t *extra);
/* One text turn on a thread, to its turn/completed. */
void th_turn(struct th *t, const char *id, const char *text);
/* The ids of a list answer's data, in order, as one space-separated string (heap). */
char *th_ids(const json_t *result);
/* The texts of the last model request's user and assistant messages, "|"-joined (heap). */
char *th_last_request(struct th *t);

#endif
