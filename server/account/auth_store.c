/*
 * auth.json read and written as upstream 0.169 does (auth_store.h). The member order of a
 * written file is upstream's (auth_mode, OPENAI_API_KEY, tokens, last_refresh, then what we
 * do not know), the key always present (null when none), two-space indent, no newline at the
 * end: a file we write is byte for byte what upstream would write for the same login.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth_store.h"
#include "config/secret_file.h"
#include "protocol/base64.h"
#include "protocol/xmalloc.h"

#define AUTH_REFRESH_DAYS 8	    /* upstream's TOKEN_REFRESH_INTERVAL */
#define AUTH_MAX_FILE	  (1 << 20) /* far above any auth.json */

void
auth_free(struct auth *a)
{
	if (a == NULL)
		return;
	json_decref(a->doc);
	free(a->email);
	free(a->plan);
	free(a->user_id);
	free(a->jwt_account_id);
	free(a);
}

/* The payload of a JWT (header.payload.signature, base64url), decoded; NULL when malformed. */
static json_t *
auth_jwt_payload(const char *jwt)
{
	const char *p = jwt != NULL ? strchr(jwt, '.') : NULL, *end;
	char *b64 = NULL, *raw = NULL, *cause = NULL;
	size_t n, i, rawlen = 0;
	json_t *claims = NULL;

	if (p == NULL || (end = strchr(++p, '.')) == NULL || end == p || end[1] == '\0')
		return NULL;
	n = (size_t)(end - p);
	b64 = xmalloc(n + 4);
	for (i = 0; i < n; i++)
		b64[i] = p[i] == '-' ? '+' : p[i] == '_' ? '/' : p[i];
	while (i % 4 != 0)
		b64[i++] = '=';
	raw = xmalloc(base64_decoded_max(i) + 1);
	if (base64_decode(b64, i, raw, &rawlen, &cause) == 0)
		claims = json_loadb(raw, rawlen, 0, NULL);
	free(cause);
	free(raw);
	free(b64);
	if (!json_is_object(claims)) {
		json_decref(claims);
		return NULL;
	}
	return claims;
}

json_t *
auth_jwt_auth_claims(const char *jwt)
{
	json_t *all = auth_jwt_payload(jwt),
	       *o = json_object_get(all, "https://api.openai.com/auth");

	o = json_is_object(o) ? json_incref(o) : NULL;
	json_decref(all);
	return o;
}

/* A string member as a heap copy, or NULL. */
static char *
auth_dup(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? xstrdup(s) : NULL;
}

/* What the id_token and the access token say: email, plan, user, account, expiry. */
static void
auth_claims(struct auth *a)
{
	json_t *id = auth_jwt_payload(a->id_token), *acc = auth_jwt_payload(a->access_token);
	json_t *oa = json_object_get(id, "https://api.openai.com/auth");
	json_t *exp = json_object_get(acc, "exp");

	a->email = auth_dup(id, "email");
	if (a->email == NULL)
		a->email = auth_dup(json_object_get(id, "https://api.openai.com/profile"), "email");
	a->plan = auth_dup(oa, "chatgpt_plan_type");
	a->user_id = auth_dup(oa, "chatgpt_user_id");
	if (a->user_id == NULL)
		a->user_id = auth_dup(oa, "user_id");
	a->jwt_account_id = auth_dup(oa, "chatgpt_account_id");
	a->access_exp = json_is_integer(exp) ? json_integer_value(exp)
		: json_is_real(exp)	     ? (long long)json_real_value(exp)
					     : -1;
	json_decref(id);
	json_decref(acc);
}

/* RFC 3339 ("2025-01-02T03:04:05.678Z", or with +hh:mm) to seconds; -1 when unreadable. */
static long long
auth_parse_time(const char *s)
{
	struct tm tm = {0};
	const char *p;
	long long t;
	int sign, hh, mm;

	if (s == NULL || (p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm)) == NULL)
		return -1;
	t = (long long)timegm(&tm);
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	if (*p == 'Z' || *p == 'z')
		return t;
	if ((*p == '+' || *p == '-') && sscanf(p + 1, "%2d:%2d", &hh, &mm) == 2) {
		sign = *p == '+' ? 1 : -1;
		return t - sign * (hh * 3600LL + mm * 60LL);
	}
	return -1;
}

/* Fill the borrowed views and the claims from a->doc; -1 when it is not upstream's shape. */
static int
auth_parse(struct auth *a)
{
	json_t *d = a->doc, *key = json_object_get(d, "OPENAI_API_KEY");
	json_t *mode = json_object_get(d, "auth_mode"), *tok = json_object_get(d, "tokens");
	const char *m;

	if (!json_is_object(d) || (key != NULL && !json_is_string(key) && !json_is_null(key)) ||
		(mode != NULL && !json_is_string(mode) && !json_is_null(mode)) ||
		(tok != NULL && !json_is_object(tok) && !json_is_null(tok)))
		return -1;
	if (json_is_object(tok) &&
		(!json_is_string(json_object_get(tok, "id_token")) ||
			!json_is_string(json_object_get(tok, "access_token")) ||
			!json_is_string(json_object_get(tok, "refresh_token"))))
		return -1;
	a->api_key = json_string_value(key);
	a->mode_name = json_string_value(mode);
	a->id_token = json_string_value(json_object_get(tok, "id_token"));
	a->access_token = json_string_value(json_object_get(tok, "access_token"));
	a->refresh_token = json_string_value(json_object_get(tok, "refresh_token"));
	a->account_id = json_string_value(json_object_get(tok, "account_id"));
	a->last_refresh = auth_parse_time(json_string_value(json_object_get(d, "last_refresh")));
	auth_claims(a);
	m = a->mode_name;
	/* upstream: a key without auth_mode is an API-key login; tokens without it, ChatGPT */
	if (m == NULL)
		a->mode = a->api_key != NULL	  ? AUTH_MODE_APIKEY
			: a->access_token != NULL ? AUTH_MODE_CHATGPT
						  : AUTH_MODE_NONE;
	else if (strcmp(m, "apikey") == 0)
		a->mode = a->api_key != NULL ? AUTH_MODE_APIKEY : AUTH_MODE_NONE;
	else if (strcmp(m, "chatgpt") == 0)
		a->mode = a->access_token != NULL ? AUTH_MODE_CHATGPT : AUTH_MODE_NONE;
	else
		a->mode = AUTH_MODE_OTHER;
	return 0;
}

/*
 * The file parsed from one buffer: jansson's json_loadfd reads a byte per read(2), and
 * auth.json is read before every ChatGPT-backend request (~1,000 system calls a time, 1.2 ms
 * of a turn). The buffer held secrets: wiped.
 */
static json_t *
auth_read_fd(int fd, json_error_t *je)
{
	struct stat st;
	size_t cap, len = 0;
	ssize_t n;
	char *b;
	json_t *doc;

	cap = fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size < AUTH_MAX_FILE
		? (size_t)st.st_size + 1
		: 4096;
	b = xmalloc(cap);
	for (;;) {
		if (len == cap) {
			if (cap >= AUTH_MAX_FILE)
				break; /* no auth.json is this large: parse what we have, and fail
					*/
			b = xrealloc(b, cap *= 2);
		}
		if ((n = read(fd, b + len, cap - len)) < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	doc = json_loadb(b, len, 0, je);
	explicit_bzero(b, cap);
	free(b);
	return doc;
}

int
auth_load(const char *home, struct auth **out, char **cause)
{
	char *path = xasprintf("%s/auth.json", home);
	struct auth *a = NULL;
	json_error_t je;
	int fd, r = -1;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT)
			r = 1;
		else
			*cause = xasprintf("%s: %s", path, strerror(errno));
		goto out;
	}
	a = xcalloc(1, sizeof *a);
	a->access_exp = a->last_refresh = -1;
	a->doc = auth_read_fd(fd, &je);
	close(fd);
	if (a->doc == NULL) {
		/* je.text may quote the file: only the position goes into the message */
		*cause = xasprintf(
			"failed to parse %s at line %d column %d", path, je.line, je.column);
		goto out;
	}
	if (auth_parse(a) != 0) {
		*cause = xasprintf("%s: invalid credential JSON", path);
		goto out;
	}
	*out = a;
	a = NULL;
	r = 0;
out:
	auth_free(a);
	free(path);
	return r;
}

/* A fresh struct around a document we built. */
static struct auth *
auth_wrap(json_t *doc)
{
	struct auth *a = xcalloc(1, sizeof *a);

	a->doc = doc;
	a->access_exp = a->last_refresh = -1;
	if (auth_parse(a) != 0)
		a->mode = AUTH_MODE_NONE; /* cannot happen for what we build */
	return a;
}

struct auth *
auth_new_api_key(const char *key)
{
	return auth_wrap(json_pack("{s:s, s:s}", "auth_mode", "apikey", "OPENAI_API_KEY", key));
}

/* Now as upstream's chrono writes it: RFC 3339 in UTC with nanoseconds. */
static char *
auth_now_text(void)
{
	struct timespec ts;
	struct tm tm;
	char day[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
	return xasprintf("%s.%09ldZ", day, ts.tv_nsec);
}

struct auth *
auth_new_chatgpt(const char *id_token, const char *access_token, const char *refresh_token)
{
	return auth_new_chatgpt_login(id_token, access_token, refresh_token, NULL, NULL, NULL);
}

struct auth *
auth_new_chatgpt_login(const char *id_token, const char *access_token, const char *refresh_token,
	const char *api_key, const char *issuer, const char *client_id)
{
	json_t *doc = json_pack("{s:s, s:o, s:{s:s, s:s, s:s}}", "auth_mode", "chatgpt",
		"OPENAI_API_KEY", api_key != NULL ? json_string(api_key) : json_null(), "tokens",
		"id_token", id_token, "access_token", access_token, "refresh_token", refresh_token);
	json_t *id = json_null();
	char *now = auth_now_text();
	struct auth *a;

	/* where the tokens came from, as 0.169 records it (a refresh may one day need it) */
	if (issuer != NULL && client_id != NULL)
		json_object_set_new(json_object_get(doc, "tokens"), "oauth_provenance",
			json_pack("{s:s, s:s}", "issuer", issuer, "client_id", client_id));
	a = auth_wrap(doc);

	if (a->jwt_account_id != NULL)
		id = json_string(a->jwt_account_id);
	json_object_set_new(json_object_get(doc, "tokens"), "account_id", id);
	json_object_set_new(doc, "last_refresh", json_string(now));
	free(now);
	a->doc = NULL; /* the claims were read; the document lives on in the new struct */
	auth_free(a);
	return auth_wrap(doc);
}

struct auth *
auth_new_external(const char *access_token, const char *account_id, const char *plan)
{
	json_t *claims = auth_jwt_payload(access_token);
	struct auth *a;

	if (!json_is_object(claims)) {
		json_decref(claims);
		return NULL;
	}
	json_decref(claims);
	a = auth_wrap(json_pack("{s:s, s:n, s:{s:s, s:s, s:s, s:s}}", "auth_mode",
		"chatgptAuthTokens", "OPENAI_API_KEY", "tokens", "id_token", access_token,
		"access_token", access_token, "refresh_token", "", "account_id", account_id));
	a->mode = AUTH_MODE_CHATGPT;
	a->external = 1;
	if (plan != NULL) {
		free(a->plan);
		a->plan = xstrdup(plan);
	}
	return a;
}

void
auth_set_tokens(
	struct auth *a, const char *id_token, const char *access_token, const char *refresh_token)
{
	json_t *doc = a->doc, *tok = json_object_get(doc, "tokens");
	char *now = auth_now_text();

	if (!json_is_object(tok)) {
		tok = json_object();
		json_object_set_new(doc, "tokens", tok);
	}
	if (id_token != NULL)
		json_object_set_new(tok, "id_token", json_string(id_token));
	if (access_token != NULL)
		json_object_set_new(tok, "access_token", json_string(access_token));
	if (refresh_token != NULL)
		json_object_set_new(tok, "refresh_token", json_string(refresh_token));
	json_object_set_new(doc, "last_refresh", json_string(now));
	free(now);
	/* the borrowed views point into members just replaced: parse again */
	a->doc = NULL;
	free(a->email);
	free(a->plan);
	free(a->user_id);
	free(a->jwt_account_id);
	memset(a, 0, sizeof *a);
	a->doc = doc;
	a->access_exp = a->last_refresh = -1;
	auth_parse(a);
}

/* The document in upstream's member order (new reference). */
static json_t *
auth_ordered(const json_t *doc)
{
	static const char *const known[] = {
		"auth_mode", "OPENAI_API_KEY", "tokens", "last_refresh"};
	static const char *const tokens[] = {
		"id_token", "access_token", "refresh_token", "oauth_provenance", "account_id"};
	json_t *o = json_object(), *t, *v, *src = json_object_get(doc, "tokens");
	const char *k;
	size_t i;

	for (i = 0; i < sizeof known / sizeof known[0]; i++) {
		v = json_object_get(doc, known[i]);
		if (i == 1 && v == NULL)
			v = json_null(); /* upstream always writes the key */
		if (v == NULL || (i != 1 && json_is_null(v)))
			continue;
		if (i == 2 && json_is_object(src)) {
			t = json_object();
			for (size_t j = 0; j < sizeof tokens / sizeof tokens[0]; j++) {
				json_t *tv = json_object_get(src, tokens[j]);

				if (tv != NULL || j == 4)
					json_object_set(
						t, tokens[j], tv != NULL ? tv : json_null());
			}
			json_object_foreach((json_t *)src, k, v)
			{
				if (json_object_get(t, k) == NULL)
					json_object_set(t, k, v);
			}
			json_object_set_new(o, "tokens", t);
			continue;
		}
		json_object_set(o, known[i], v);
	}
	json_object_foreach((json_t *)doc, k, v)
	{
		if (json_object_get(o, k) == NULL && !json_is_null(v))
			json_object_set(o, k, v);
	}
	return o;
}

int
auth_save(const char *home, const struct auth *a, char **cause)
{
	json_t *o = auth_ordered(a->doc);
	char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	int r;

	json_decref(o);
	if (text == NULL) {
		*cause = xstrdup("cannot encode auth.json");
		return -1;
	}
	r = secret_file_save(home, "auth.json", text, cause);
	explicit_bzero(text, strlen(text));
	free(text);
	return r;
}

int
auth_delete(const char *home, char **cause)
{
	char *path = xasprintf("%s/auth.json", home);
	int r = 1;

	if (unlink(path) != 0) {
		if (errno == ENOENT)
			r = 0;
		else {
			*cause = xasprintf("%s: %s", path, strerror(errno));
			r = -1;
		}
	}
	free(path);
	return r;
}

int
auth_stale(const struct auth *a, time_t now)
{
	if (a->mode != AUTH_MODE_CHATGPT)
		return 0;
	if (a->access_exp >= 0)
		return a->access_exp <= (long long)now;
	if (a->last_refresh < 0)
		return 0;
	return a->last_refresh < (long long)now - AUTH_REFRESH_DAYS * 86400LL;
}

const char *
auth_mode_wire(const struct auth *a)
{
	if (a == NULL)
		return NULL;
	switch (a->mode) {
	case AUTH_MODE_APIKEY:
		return "apikey";
	case AUTH_MODE_CHATGPT:
		return a->external ? "chatgptAuthTokens" : "chatgpt";
	case AUTH_MODE_OTHER:
		return a->mode_name;
	case AUTH_MODE_NONE:
		break;
	}
	return NULL;
}

const char *
auth_plan_wire(const struct auth *a)
{
	static const char *const plans[] = {"free", "go", "plus", "pro", "prolite", "promax",
		"team", "self_serve_business_prolite", "self_serve_business_usage_based",
		"business", "ent26", "enterprise_cbp_automation", "enterprise_cbp_usage_based",
		"enterprise", "edu", "edu_plus", "edu_pro", "sci", "sci_plus"};

	if (a == NULL || a->mode != AUTH_MODE_CHATGPT)
		return NULL;
	if (a->plan == NULL)
		return "unknown";
	if (strcasecmp(a->plan, "hc") == 0)
		return "enterprise";
	if (strcasecmp(a->plan, "education") == 0)
		return "edu";
	for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++)
		if (strcasecmp(a->plan, plans[i]) == 0)
			return plans[i];
	return "unknown";
}
