/*
 * The process's account on the loop: the credentials a model request to the ChatGPT backend
 * sends, refreshed at the issuer when they are stale or refused, one refresh at a time.
 *
 * Single flight: whoever asks while a refresh runs waits for that refresh; a caller whose
 * token was refused (401) first reads auth.json again and takes a token another refresh
 * already wrote, so two turns refused together cost one refresh. New tokens are written
 * atomically (auth_store.h) before any waiter hears of them.
 *
 * Secrets never leave through a log line or a message: failures carry upstream's sentences.
 */
#ifndef ACCOUNT_H
#define ACCOUNT_H

#include <ev.h>
#include <jansson.h>

#include "config/config.h"

struct http;
struct auth;
struct account_wait;

#define ACCOUNT_CHATGPT_BASE "https://chatgpt.com/backend-api/codex"
#define ACCOUNT_REFRESH_URL  "https://auth.openai.com/oauth/token"
#define ACCOUNT_REFRESH_ENV  "CODEX_REFRESH_TOKEN_URL_OVERRIDE"
#define ACCOUNT_CLIENT_ID    "app_EMoamEEZ73f0CkXaXp7hrann"

/* What a request sends (heap strings), or why there is nothing to send. */
struct account_creds {
	char *access_token;
	char *account_id; /* or NULL */
	char *error;	  /* a failure: upstream's sentence; the others are NULL */
	int permanent;	  /* the refresh token itself was refused: sign in again */
};
void account_creds_clear(struct account_creds *c);

/* The creds, borrowed for the call; the wait is over (and freed) when it returns. */
typedef void (*account_cb)(void *arg, const struct account_creds *c);

/* Set up the process's account (daemon start-up); account_shutdown cancels what runs. */
void account_init(struct ev_loop *loop, struct http *h);
void account_shutdown(void);
/* Told when a refresh failed for good (the api sends account/updated). */
void account_set_listener(void (*fn)(void *arg), void *arg);

/*
 * Whether requests to this provider go to the ChatGPT backend on auth.json's tokens: an
 * OpenAI-auth provider with no API key anywhere and a ChatGPT login in auth.json.
 */
int account_chatgpt_applies(const struct model_provider *p);
/* The base URL for such requests: the provider's own when configured, else upstream's. */
const char *account_chatgpt_base(const struct model_provider *p);

/* Who asks: the client's name and user agent, sent to the issuer as upstream sends them. */
struct account_client {
	const char *originator; /* NULL: codex_cli_rs */
	const char *user_agent; /* NULL: none */
};

/*
 * The credentials for a request. rejected: the access token the backend just refused, or
 * NULL. Returns 0 with *out filled now; 1 when a refresh must finish first (*wait set, cb
 * called once later unless account_wait_cancel); -1 with out->error.
 */
int account_creds_get(const char *rejected, const struct account_client *who,
	struct account_creds *out, account_cb cb, void *arg, struct account_wait **wait);
/* Stop waiting: cb will not be called (the refresh itself goes on for the others). */
void account_wait_cancel(struct account_wait *w);

/*
 * Externally managed tokens (account/login/start chatgptAuthTokens), kept in memory only and
 * winning over auth.json while set. Requests send the access token as it is; after a 401 the
 * refresher is asked (once for every waiting turn) and account_external_refreshed gives its
 * answer: new tokens, or error (upstream's sentence) which ends the waiting turns.
 */
int account_external_set(const char *access_token, const char *account_id, const char *plan);
void account_external_clear(void);
int account_external_active(void);
void account_set_external_refresher(
	void (*ask)(void *arg, const char *previous_account_id), void *arg);
void account_external_refreshed(
	const char *access_token, const char *account_id, const char *plan, const char *error);

/* Refreshes sent to the issuer since start (tests, figures). */
unsigned long account_refresh_count(void);
/* auth.json now, or NULL (absent; unreadable, which is logged: no login to use). */
struct auth *account_load(void);

#endif
