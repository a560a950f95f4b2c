/*
 * account/rateLimits/read's backend call, as upstream 0.169 makes it (observed side by side):
 * GET {chatgpt_base_url}/wham/usage (or {base}/api/codex/usage when the base has no
 * /backend-api) with the bearer access token, ChatGPT-Account-Id and the client's user agent,
 * on the loop. The payload becomes the v2 answer: the `codex` snapshot (its plan, credits and
 * reached type), one snapshot per additional limit keyed by its metered feature, accountId.
 *
 * A stale token is refreshed first (account_creds_get: the one refresh everybody shares).
 * A failure answers upstream's sentence, "failed to fetch codex rate limits: GET <url> failed:
 * <status> <reason>; content-type=<ct>; body=<body>"; never a token.
 */
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "io/http.h"
#include "io/log.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "usage.h"

#define USAGE_MAX_BODY	 (256 << 10)
#define USAGE_TIMEOUT_MS 30000
#define USAGE_DEFAULT	 "https://chatgpt.com/backend-api/"

struct account_usage {
	char *url;
	char *user_agent;
	account_usage_cb cb;
	void *arg;
	struct account_wait *wait; /* waiting for a refresh, or NULL */
	struct http_req *xfer;	   /* the GET in flight, or NULL */
	struct buf body;
	char *ctype; /* the answer's content-type */
};

static void usage_creds_cb(void *arg, const struct account_creds *c);

char *
account_usage_url(const char *base)
{
	size_t n;
	char *b = xstrdup(base != NULL && *base != '\0' ? base : USAGE_DEFAULT), *url;

	/* upstream's backend client: no trailing '/', ChatGPT hosts get /backend-api */
	n = strlen(b);
	while (n > 0 && b[n - 1] == '/')
		b[--n] = '\0';
	if ((strncmp(b, "https://chatgpt.com", 19) == 0 ||
		    strncmp(b, "https://chat.openai.com", 23) == 0) &&
		strstr(b, "/backend-api") == NULL) {
		url = xasprintf("%s/backend-api", b);
		free(b);
		b = url;
	}
	url = xasprintf(
		strstr(b, "/backend-api") != NULL ? "%s/wham/usage" : "%s/api/codex/usage", b);
	free(b);
	return url;
}

/* PlanType's wire value for the backend's plan_type (upstream's mapping). */
static const char *
usage_plan(const char *p)
{
	static const char *const same[] = {"free", "go", "plus", "pro", "prolite", "team",
		"self_serve_business_usage_based", "business", "enterprise_cbp_usage_based",
		"enterprise", "edu"};

	if (p == NULL)
		return "unknown";
	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++)
		if (strcmp(p, same[i]) == 0)
			return same[i];
	return strcmp(p, "education") == 0 ? "edu" : "unknown";
}

/* A backend window {used_percent, limit_window_seconds, reset_at} as RateLimitWindow. */
static json_t *
usage_window(const json_t *w)
{
	json_int_t secs = json_integer_value(json_object_get(w, "limit_window_seconds"));

	if (!json_is_object(w))
		return json_null();
	return json_pack("{s:I, s:o, s:I}", "usedPercent",
		json_integer_value(json_object_get(w, "used_percent")), "windowDurationMins",
		secs > 0 ? json_integer((secs + 59) / 60) : json_null(), "resetsAt",
		json_integer_value(json_object_get(w, "reset_at")));
}

static json_t *
usage_snapshot(const char *id, const char *name, const json_t *rl, const json_t *credits,
	const char *plan, const char *reached)
{
	json_t *c = json_null();

	if (json_is_object(credits))
		c = json_pack("{s:b, s:b, s:o}", "hasCredits",
			json_is_true(json_object_get(credits, "has_credits")), "unlimited",
			json_is_true(json_object_get(credits, "unlimited")), "balance",
			json_is_string(json_object_get(credits, "balance"))
				? json_incref(json_object_get(credits, "balance"))
				: json_null());
	return json_pack("{s:s, s:o, s:n, s:o, s:o, s:o, s:n, s:n, s:s, s:o}", "limitId", id,
		"limitName", name != NULL ? json_string(name) : json_null(), "normalModelSlug",
		"primary", usage_window(json_object_get(rl, "primary_window")), "secondary",
		usage_window(json_object_get(rl, "secondary_window")), "credits", c,
		"individualLimit", "spendControlReached", "planType", plan, "rateLimitReachedType",
		reached != NULL ? json_string(reached) : json_null());
}

json_t *
account_usage_result(const json_t *p)
{
	const char *plan = usage_plan(json_string_value(json_object_get(p, "plan_type")));
	const char *reached = json_string_value(
		json_object_get(json_object_get(p, "rate_limit_reached_type"), "type"));
	const char *acct = json_string_value(json_object_get(p, "account_id"));
	json_t *codex, *byid = json_object(), *more = json_object_get(p, "additional_rate_limits"),
		       *x;
	size_t i;

	/* "unknown" and anything newer is no reached type, as upstream maps it */
	if (reached != NULL && strcmp(reached, "unknown") == 0)
		reached = NULL;
	codex = usage_snapshot("codex", NULL, json_object_get(p, "rate_limit"),
		json_object_get(p, "credits"), plan, reached);
	json_object_set(byid, "codex", codex);
	json_array_foreach(more, i, x)
	{
		const char *id = json_string_value(json_object_get(x, "metered_feature"));

		if (id != NULL)
			json_object_set_new(byid, id,
				usage_snapshot(id,
					json_string_value(json_object_get(x, "limit_name")),
					json_object_get(x, "rate_limit"), NULL, plan, NULL));
	}
	return json_pack("{s:n, s:o, s:o, s:n, s:o, s:n}", "ordinaryUsageAllowed", "rateLimits",
		codex, "rateLimitsByLimitId", byid, "rateLimitResetCredits", "accountId",
		acct != NULL ? json_string(acct) : json_null(), "rateLimitUpsell");
}

static void
usage_free(struct account_usage *u)
{
	account_wait_cancel(u->wait);
	if (u->xfer != NULL)
		http_cancel(u->xfer);
	buf_free(&u->body);
	free(u->url);
	free(u->user_agent);
	free(u->ctype);
	free(u);
}

/* Tell the owner and free. */
static void
usage_end(struct account_usage *u, json_t *result, const char *error)
{
	u->cb(u->arg, result, error);
	usage_free(u);
}

static void
usage_ctype_cb(void *arg, const char *name, const char *value)
{
	struct account_usage *u = arg;

	(void)name;
	if (u->ctype == NULL)
		u->ctype = xstrdup(value);
}

static int
usage_data_cb(void *arg, long status, const char *p, size_t n)
{
	struct account_usage *u = arg;

	(void)status;
	if (u->body.len == 0 && u->ctype == NULL)
		http_req_headers(u->xfer, "content-type", usage_ctype_cb, u);
	return buf_add(&u->body, p, n) != 0;
}

static void
usage_done_cb(void *arg, const struct http_result *res)
{
	struct account_usage *u = arg;
	json_t *p = NULL;
	char *msg;

	u->xfer = NULL;
	if (res->status >= 200 && res->status <= 299 &&
		(p = json_loadb(u->body.ptr, u->body.len, 0, NULL)) != NULL && json_is_object(p)) {
		json_t *r = account_usage_result(p);

		json_decref(p);
		usage_end(u, r, NULL);
		return;
	}
	json_decref(p);
	if (res->status >= 200 && res->status <= 299)
		msg = xasprintf("failed to fetch codex rate limits: Decode error for %s; "
				"content-type=%s; body=%.*s",
			u->url, u->ctype != NULL ? u->ctype : "", (int)u->body.len, u->body.ptr);
	else if (res->status != 0)
		msg = xasprintf("failed to fetch codex rate limits: GET %s failed: %ld %s; "
				"content-type=%s; body=%.*s",
			u->url, res->status, http_reason(res->status),
			u->ctype != NULL ? u->ctype : "", (int)u->body.len, u->body.ptr);
	else
		msg = xasprintf("failed to fetch codex rate limits: %s",
			res->error != NULL ? res->error : "no answer");
	log_warn("account: GET %s: %ld", u->url, res->status);
	usage_end(u, NULL, msg);
	free(msg);
}

/* Send the GET with these credentials; -1 with *cause. */
static int
usage_send(struct account_usage *u, const struct account_creds *c, char **cause)
{
	static const struct http_cbs cbs = {usage_data_cb, usage_done_cb};
	char *h[4] = {NULL};
	const char *headers[4];
	size_t n = 0;
	struct http_req_opts o = {
		.method = "GET",
		.url = u->url,
		.connect_timeout_ms = 10000,
		.total_timeout_ms = USAGE_TIMEOUT_MS,
	};

	h[n++] = xasprintf("User-Agent: %s", u->user_agent != NULL ? u->user_agent : "codex-cli");
	h[n++] = xasprintf("Authorization: Bearer %s", c->access_token);
	if (c->account_id != NULL)
		h[n++] = xasprintf("ChatGPT-Account-Id: %s", c->account_id);
	for (size_t i = 0; i < n; i++)
		headers[i] = h[i];
	headers[n] = NULL;
	o.headers = headers;
	u->xfer = http_default() != NULL ? http_start(http_default(), &o, &cbs, u, cause) : NULL;
	if (u->xfer == NULL && *cause == NULL)
		*cause = xstrdup("no HTTP client");
	explicit_bzero(h[1], strlen(h[1]));
	for (size_t i = 0; i < n; i++)
		free(h[i]);
	return u->xfer != NULL ? 0 : -1;
}

/* The refresh this read waited for ended. */
static void
usage_creds_cb(void *arg, const struct account_creds *c)
{
	struct account_usage *u = arg;
	char *cause = NULL, *msg;

	u->wait = NULL;
	if (c->error != NULL || usage_send(u, c, &cause) != 0) {
		msg = xasprintf("failed to fetch codex rate limits: %s",
			c->error != NULL ? c->error : cause);
		free(cause);
		usage_end(u, NULL, msg);
		free(msg);
	}
}

int
account_usage_read(const char *base, const struct account_client *who, account_usage_cb cb,
	void *arg, struct account_usage **out, char **cause)
{
	struct account_usage *u = xcalloc(1, sizeof *u);
	struct account_creds c;
	int r;

	*out = NULL;
	u->url = account_usage_url(base);
	u->user_agent = who != NULL && who->user_agent != NULL ? xstrdup(who->user_agent) : NULL;
	u->cb = cb;
	u->arg = arg;
	buf_init(&u->body, USAGE_MAX_BODY);
	r = account_creds_get(NULL, who, &c, usage_creds_cb, u, &u->wait);
	if (r < 0) {
		*cause = xasprintf("failed to fetch codex rate limits: %s", c.error);
		account_creds_clear(&c);
		usage_free(u);
		return -1;
	}
	if (r == 0 && usage_send(u, &c, cause) != 0) {
		char *why = *cause;

		*cause = xasprintf("failed to fetch codex rate limits: %s", why);
		free(why);
		account_creds_clear(&c);
		usage_free(u);
		return -1;
	}
	account_creds_clear(&c);
	*out = u;
	return 0;
}

void
account_usage_cancel(struct account_usage *u)
{
	if (u != NULL)
		usage_free(u);
}
