/*
 * The start-up surface (startup.c, goals.c, providers.c): the small methods real clients call
 * before their first turn, answered as upstream 0.169 answers a user without a ChatGPT login.
 */
#ifndef API_STARTUP_H
#define API_STARTUP_H

#include "rpc/rpc.h"

struct config;

extern const struct rpc_method api_startup_methods[];
extern const struct rpc_method api_goals_methods[];
/* modelProvider/list, capabilities/read and config/write (providers.c). */
extern const struct rpc_method api_providers_methods[];

/* Whether one of upstream's feature flags is on: config (with -c), run-time switch, default. */
int startup_feature_enabled(const struct config *c, const char *name);
/* qsort comparison of two C strings. */
int startup_strcmp(const void *a, const void *b);

#endif
