/*
 * $CODEX_HOME/auth.json in upstream 0.169's format, so one CODEX_HOME serves both daemons in
 * either direction: {"auth_mode"?, "OPENAI_API_KEY": key|null, "tokens"?: {"id_token",
 * "access_token", "refresh_token", "account_id"}, "last_refresh"?: RFC 3339, ...}, pretty
 * printed with two spaces, mode 0600. Members we do not know are kept as they were read.
 *
 * Writes are atomic: a temporary file in the same folder (0600 from its creation), written,
 * synced, then renamed over auth.json, so a reader (or a kill -9 half-way) sees the old file
 * or the new one, never a part. Tokens are secrets: nothing here logs them or puts them in a
 * message.
 */
#ifndef AUTH_STORE_H
#define AUTH_STORE_H

#include <time.h>

#include <jansson.h>

enum auth_mode {
	AUTH_MODE_NONE,	   /* no usable credential in the file */
	AUTH_MODE_APIKEY,  /* OPENAI_API_KEY */
	AUTH_MODE_CHATGPT, /* tokens managed (and refreshed) by Codex */
	AUTH_MODE_OTHER,   /* a mode upstream knows and we do not run (chatgptAuthTokens, ...) */
};

/* A parsed auth.json. The strings are borrowed from doc; the claims are ours. */
struct auth {
	json_t *doc; /* the whole file, unknown members included */
	enum auth_mode mode;
	const char *mode_name; /* auth_mode as written, or NULL */
	const char *api_key;   /* OPENAI_API_KEY, or NULL */
	const char *id_token;  /* tokens.*, or NULL */
	const char *access_token;
	const char *refresh_token;
	const char *account_id;
	char *email;		/* id_token's claims, or NULL */
	char *plan;		/* chatgpt_plan_type as sent, or NULL */
	char *user_id;		/* chatgpt_user_id (or user_id), or NULL */
	char *jwt_account_id;	/* chatgpt_account_id of the id_token, or NULL */
	long long access_exp;	/* the access token's exp claim, or -1 */
	long long last_refresh; /* seconds since the epoch, or -1 */
	int external;		/* chatgptAuthTokens: the client's tokens, in memory only */
};

/*
 * Read home/auth.json: 0 and *out, 1 when there is none, -1 with *cause (which never holds a
 * secret) when it cannot be read or is not upstream's format.
 */
int auth_load(const char *home, struct auth **out, char **cause);
void auth_free(struct auth *a);

/* An API-key login, as `codex login --with-api-key` stores it. */
struct auth *auth_new_api_key(const char *key);
/* A ChatGPT login from the issuer's tokens (the browser flow's code exchange). */
struct auth *auth_new_chatgpt(
	const char *id_token, const char *access_token, const char *refresh_token);
/*
 * The browser flow's login as upstream 0.169 writes it: api_key (the id_token's exchange, or
 * NULL), and the issuer and client id the tokens came from (tokens.oauth_provenance; NULL:
 * none).
 */
struct auth *auth_new_chatgpt_login(const char *id_token, const char *access_token,
	const char *refresh_token, const char *api_key, const char *issuer, const char *client_id);
/*
 * Tokens a client manages itself (account/login/start chatgptAuthTokens), never written: the
 * access token stands for the id_token too (its claims give the email and plan, as upstream
 * reads them); plan, when not NULL, wins over the claims. NULL when the token is no JWT.
 */
struct auth *auth_new_external(const char *access_token, const char *account_id, const char *plan);
/* A JWT's "https://api.openai.com/auth" claims (a new reference), or NULL. */
json_t *auth_jwt_auth_claims(const char *jwt);
/*
 * Put refreshed tokens in (NULL: keep that one) and stamp last_refresh now, as upstream's
 * refresh does.
 */
void auth_set_tokens(
	struct auth *a, const char *id_token, const char *access_token, const char *refresh_token);

/* Write atomically (see above); 0, or -1 with *cause. */
int auth_save(const char *home, const struct auth *a, char **cause);
/* Remove home/auth.json: 1 removed, 0 there was none, -1 with *cause. */
int auth_delete(const char *home, char **cause);

/*
 * Whether the access token should be refreshed before a request, as upstream decides: its exp
 * claim has passed, or (a token without exp) the last refresh is older than 8 days.
 */
int auth_stale(const struct auth *a, time_t now);
/* The AuthMode wire value of a login ("apikey", "chatgpt", ...), or NULL for none. */
const char *auth_mode_wire(const struct auth *a);
/* The PlanType wire value of a ChatGPT login ("plus", ..., "unknown"), or NULL otherwise. */
const char *auth_plan_wire(const struct auth *a);

#endif
