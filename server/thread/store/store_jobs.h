/*
 * What the store lends the rooms beside it (attach/): its index worker, for SQL on the index's
 * own connection without touching the loop, and its lookups of a thread by id.
 */
#ifndef STORE_JOBS_H
#define STORE_JOBS_H

#include "store.h"
#include "thread/rollout/rollout_summary.h"

struct tindex;

/*
 * Run fn on the index worker with its connection (NULL when the index cannot be opened), after
 * every job posted before; done(arg, what fn returned) on the loop afterwards.
 */
typedef int (*store_ix_call_fn)(struct tindex *x, void *arg);
void store_ix_call(struct store *s, store_ix_call_fn fn, store_done_fn done, void *arg);
/* Validate and canonicalise an id; -EINVAL with "invalid thread id: ..." */
int store_check_id(const char *id, char canon[37], char **cause);
/* The metadata of a thread by id: loaded, indexed, or found on disk (heap copy in m). */
int store_find(struct store *s, const char *id, struct thread_meta *m, char **cause);

#endif
