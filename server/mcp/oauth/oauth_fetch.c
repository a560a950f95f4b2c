/* One HTTP exchange with its whole (small) answer, for discovery and the token endpoint. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/http.h"
#include "oauth.h"
#include "oauth_int.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

struct oauth_fetch {
	struct http_req *r;
	struct buf body;
	oauth_fetch_cb cb;
	void *arg;
};

static int
fetch_data(void *arg, long status, const char *p, size_t len)
{
	struct oauth_fetch *f = arg;

	(void)status;
	return buf_add(&f->body, p, len) != 0; /* over the bound: the exchange fails */
}

static void
fetch_done(void *arg, const struct http_result *res)
{
	struct oauth_fetch *f = arg;
	const char *body = buf_str(&f->body);

	if (res->curl_code != 0 && res->status == 0)
		f->cb(f->arg, 0, NULL, 0,
			res->error != NULL ? res->error : "the connection failed");
	else
		f->cb(f->arg, res->status, body, f->body.len, NULL);
	if (f->body.ptr != NULL)
		explicit_bzero(f->body.ptr, f->body.len);
	buf_free(&f->body);
	free(f);
}

struct oauth_fetch *
oauth_fetch_start(const char *url, const char *ctype, const char *body, oauth_fetch_cb cb,
	void *arg, char **cause)
{
	struct http_cbs cbs = {fetch_data, fetch_done};
	struct http_req_opts o = {0};
	struct oauth_fetch *f;
	char *ct = ctype != NULL ? xasprintf("Content-Type: %s", ctype) : NULL;
	const char *hv[] = {"Accept: application/json", ct, NULL};

	if (http_default() == NULL) {
		free(ct);
		*cause = xstrdup("no HTTP client here");
		return NULL;
	}
	f = xcalloc(1, sizeof *f);
	buf_init(&f->body, OAUTH_MAX_BODY);
	f->cb = cb;
	f->arg = arg;
	o.method = body != NULL ? "POST" : "GET";
	o.url = url;
	o.headers = hv;
	o.body = body;
	o.body_len = body != NULL ? strlen(body) : 0;
	o.connect_timeout_ms = 10000;
	o.total_timeout_ms = 30000;
	f->r = http_start(http_default(), &o, &cbs, f, cause);
	free(ct);
	if (f->r == NULL) {
		buf_free(&f->body);
		free(f);
		return NULL;
	}
	return f;
}

void
oauth_fetch_cancel(struct oauth_fetch *f)
{
	if (f == NULL)
		return;
	http_cancel(f->r);
	if (f->body.ptr != NULL)
		explicit_bzero(f->body.ptr, f->body.len);
	buf_free(&f->body);
	free(f);
}

void
oauth_form_add(char **form, const char *key, const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t have = *form != NULL ? strlen(*form) : 0;
	char *out = xmalloc(have + strlen(key) + 3 * strlen(value) + 3), *o = out;

	if (have > 0) {
		memcpy(o, *form, have);
		o += have;
		*o++ = '&';
	}
	o = stpcpy(o, key);
	*o++ = '=';
	for (const unsigned char *p = (const unsigned char *)value; *p != '\0'; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			(*p >= '0' && *p <= '9') || strchr("-._~", *p) != NULL)
			*o++ = (char)*p;
		else {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	*o = '\0';
	if (*form != NULL)
		explicit_bzero(*form, have);
	free(*form);
	*form = out;
}

char *
oauth_token_refusal(long status, const char *body)
{
	json_t *j = body != NULL ? json_loads(body, 0, NULL) : NULL;
	const char *e = json_string_value(json_object_get(j, "error"));
	const char *d = json_string_value(json_object_get(j, "error_description"));
	char *s;

	if (e != NULL && d != NULL)
		s = xasprintf("OAuth provider returned `%s`: %s", e, d);
	else if (e != NULL)
		s = xasprintf("OAuth provider returned `%s`", e);
	else
		s = xasprintf(
			"the token endpoint answered HTTP %ld %s", status, http_reason(status));
	json_decref(j);
	return s;
}

long long
oauth_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
