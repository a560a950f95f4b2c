/*
 * account/rateLimits/read's call to the ChatGPT backend's usage endpoint (usage.c), on the
 * loop, with a ChatGPT login's credentials (refreshed first when stale).
 */
#ifndef ACCOUNT_USAGE_H
#define ACCOUNT_USAGE_H

#include <jansson.h>

#include "account.h"

struct account_usage;

/* The read ended: result (stolen: GetAccountRateLimitsResponse) or error (upstream's
 * sentence, borrowed). The read is freed when this returns. */
typedef void (*account_usage_cb)(void *arg, json_t *result, const char *error);

/*
 * Start reading; base is config's chatgpt_base_url (NULL: upstream's). 0 with *out (cb called
 * once later unless cancelled), or -1 with *cause (upstream's sentence; cb never called).
 */
int account_usage_read(const char *base, const struct account_client *who, account_usage_cb cb,
	void *arg, struct account_usage **out, char **cause);
/* Stop: cb will not be called. */
void account_usage_cancel(struct account_usage *u);

/* The usage URL for a base, as upstream's backend client builds it (heap). */
char *account_usage_url(const char *base);
/* The v2 answer of a usage payload (new reference); for tests too. */
json_t *account_usage_result(const json_t *payload);

#endif
