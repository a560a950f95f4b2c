/* The account area of the protocol (account_api.c): login, logout, rate limits. */
#ifndef ACCOUNT_API_H
#define ACCOUNT_API_H

#include <jansson.h>

struct rpc;
struct session;

/* The session hears the engine's account changes (account/updated) until detached. */
void account_api_attach(struct session *s);
void account_api_detach(struct session *s);
/* A rate-limit snapshot from the ChatGPT backend: kept for account/rateLimits/read and sent
 * as account/rateLimits/updated on r (NULL: kept only). snapshot is borrowed. */
void account_api_rate_limits(struct rpc *r, json_t *snapshot);

#endif
