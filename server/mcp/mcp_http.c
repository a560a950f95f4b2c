/*
 * One MCP server over streamable HTTP (the `url` of its config), as upstream 0.169's client
 * speaks it (recorded against tests/fixtures/mcp/mcp_server.py --http: upstream/http_*.json):
 *  - every message is a POST of its JSON to the url with `Accept: text/event-stream,
 *    application/json`, `Content-Type: application/json`, `User-Agent: codex-mcp-client/0.169.0`,
 *    the config's http_headers, env_http_headers (values from our environment) and
 *    `Authorization: Bearer <$bearer_token_env_var>`; after initialize's answer also the
 *    `Mcp-Session-Id` it gave and `MCP-Protocol-Version`;
 *  - a request's answer is JSON, or an event stream whose events carry its progress, the
 *    server's own requests and finally the answer; notifications and responses get 202;
 *  - after notifications/initialized a GET opens the stream of the server's own messages (a
 *    405 is fine: the server has none); the session is DELETEd when the server is stopped.
 * OAuth (a server without bearer_token_env_var whose login stored tokens, mcp/oauth/): the
 * stored access token is the bearer; an expired one is refreshed before the first message,
 * and a POST answered 401 triggers one refresh (one at a time per connection: messages wait
 * for it) and is sent again once with the new token; a refresh that fails fails them.
 * Rules: libcurl on the loop (io/http.h), nothing blocks; messages are dispatched from a timer
 * (never inside curl's callbacks, where no transfer may start) in the order they arrived; a
 * request whose POST fails (no connection, an HTTP error) fails with the reason; one body or
 * event is at most MCP_LINE_MAX bytes. A body or event over MCP_PARSE_BIG is parsed beside the
 * loop (mcp_parse_text: jansson takes ~0.7 s for 50 MB): its place in the inbox is kept by a
 * placeholder, and the messages after it wait there until it is back, so their order holds.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcp_int.h"
#include "config/home.h"
#include "mcp/oauth/oauth.h"
#include "io/http.h"
#include "io/log.h"
#include "protocol/sse.h"
#include "protocol/xmalloc.h"

enum { MCP_HTTP_POST, MCP_HTTP_GET, MCP_HTTP_DELETE };

/* The inbox's placeholder of a message parsed beside the loop: {MCP_HTTP_PARSING: true} until
 * it is back, then {MCP_HTTP_PARSED: the message or batch} (neither: it was not JSON). */
#define MCP_HTTP_PARSING " parsing"
#define MCP_HTTP_PARSED	 " parsed"

/* A parse beside the loop under way. */
struct mcp_http_big {
	struct mcp_http_big *next;
	struct mcp_http *h;
	struct mcp_parse *job;
	json_t *slot; /* its placeholder in the inbox */
};

struct mcp_http_xfer {
	struct mcp_http_xfer *next;
	struct mcp_http *h;
	struct http_req *r;
	int kind;
	long long id; /* the request POSTed, or -1 */
	int seen;     /* its response headers were read */
	int sse;      /* the answer is an event stream */
	int retried;  /* sent again after a refresh: a second 401 fails it */
	unsigned gen; /* the OAuth token generation it was sent with */
	char *sent;   /* the POSTed body, kept to send again after a 401 (OAuth only) */
	struct sse *parser;
	char *body; /* a JSON answer, whole */
	size_t len, cap;
};

struct mcp_http {
	struct mcp_server *sv;
	char *url;
	json_t *headers; /* ["Name: value"] sent with every message */
	char *session;	 /* Mcp-Session-Id, once initialize gave one */
	char *version;	 /* MCP-Protocol-Version, once initialized */
	struct mcp_http_xfer *xfers;
	json_t *inbox; /* messages (and transport failures) waiting for dispatch */
	ev_timer drain;
	struct mcp_http_big *bigs;
	char *auth;		       /* "Authorization: Bearer <stored OAuth token>", or NULL */
	int stale;		       /* that token expired: refresh before the first message */
	unsigned gen;		       /* bumped by each refresh */
	struct oauth_refresh *refresh; /* under way */
	json_t *held;		       /* [{body, id, retried}] POSTs waiting for the refresh */
};

static void mcp_http_drain_cb(struct ev_loop *, ev_timer *, int);
static int mcp_http_start(
	struct mcp_http *h, int kind, const char *body, long long id, int retried, char **cause);
static void mcp_http_post_in(struct mcp_http *h, json_t *m);

/* Tokens an OAuth login stored for this server (CODEX_HOME/.credentials.json) as its bearer. */
static void
mcp_http_oauth_bearer(struct mcp_http *h)
{
	struct oauth_tokens t;
	char *home = home_path(), *cause = NULL;

	if (oauth_store_load(home, h->sv->name, h->url, &t, &cause) < 0) {
		log_warn("mcp %s: %s", h->sv->name, cause);
		free(cause);
	} else if (t.access_token != NULL && t.access_token[0] != '\0') {
		h->auth = xasprintf("Authorization: Bearer %s", t.access_token);
		h->stale = oauth_tokens_stale(&t, oauth_now_ms()) && t.refresh_token != NULL;
	}
	oauth_tokens_free(&t);
	free(home);
}

int
mcp_http_open(struct mcp_server *sv, char **cause)
{
	const char *tokvar = json_string_value(json_object_get(sv->cfg, "bearer_token_env_var"));
	const char *k, *tok;
	struct mcp_http *h;
	json_t *v;

	if (http_default() == NULL) {
		*cause = xstrdup("no HTTP client here");
		return -1;
	}
	if (tokvar != NULL && ((tok = getenv(tokvar)) == NULL || tok[0] == '\0')) {
		*cause = xasprintf(
			"Environment variable %s for MCP server '%s' is empty", tokvar, sv->name);
		return -1;
	}
	h = xcalloc(1, sizeof *h);
	h->sv = sv;
	h->url = xstrdup(json_string_value(json_object_get(sv->cfg, "url")));
	h->headers = json_array();
	h->inbox = json_array();
	h->held = json_array();
	json_array_append_new(h->headers, json_string("User-Agent: codex-mcp-client/0.169.0"));
	json_object_foreach((json_t *)json_object_get(sv->cfg, "http_headers"), k, v)
		json_array_append_new(
			h->headers, json_sprintf("%s: %s", k, json_string_value(v) ?: ""));
	json_object_foreach((json_t *)json_object_get(sv->cfg, "env_http_headers"), k, v)
	{
		const char *val = getenv(json_string_value(v) ?: "");

		if (val != NULL && val[0] != '\0') /* an unset variable sends no header */
			json_array_append_new(h->headers, json_sprintf("%s: %s", k, val));
	}
	if (tokvar != NULL)
		json_array_append_new(h->headers, json_sprintf("Authorization: Bearer %s", tok));
	else
		mcp_http_oauth_bearer(h);
	ev_timer_init(&h->drain, mcp_http_drain_cb, 0., 0.);
	sv->http = h;
	return 0;
}

/* The headers of one transfer (heap array of borrowed strings, NULL-terminated). */
static const char **
mcp_http_headers(struct mcp_http *h, int kind)
{
	const char **hv = xcalloc(json_array_size(h->headers) + 8, sizeof *hv);
	size_t n = 0, i;
	json_t *v;
	static char sess[600], ver[80];

	json_array_foreach(h->headers, i, v) hv[n++] = json_string_value(v);
	if (h->auth != NULL)
		hv[n++] = h->auth;
	if (kind == MCP_HTTP_POST) {
		hv[n++] = "Content-Type: application/json";
		hv[n++] = "Accept: text/event-stream, application/json";
	} else if (kind == MCP_HTTP_GET)
		hv[n++] = "Accept: text/event-stream, application/json";
	if (h->session != NULL) {
		snprintf(sess, sizeof sess, "Mcp-Session-Id: %s", h->session);
		hv[n++] = sess; /* copied by curl when the transfer starts */
	}
	if (h->version != NULL) {
		snprintf(ver, sizeof ver, "MCP-Protocol-Version: %s", h->version);
		hv[n++] = ver;
	}
	return hv;
}

/* Queue a message (stolen) for dispatch on the loop. */
static void
mcp_http_post_in(struct mcp_http *h, json_t *m)
{
	json_array_append_new(h->inbox, m);
	if (!ev_is_active(&h->drain))
		ev_timer_start(h->sv->set->o.loop, &h->drain);
}

/* A big message's parse is back: its placeholder holds it, the inbox drains on. */
static void
mcp_http_parsed(void *arg, json_t *msg)
{
	struct mcp_http_big *b = arg, **pp;
	struct mcp_http *h = b->h;

	for (pp = &h->bigs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == b) {
			*pp = b->next;
			break;
		}
	json_object_del(b->slot, MCP_HTTP_PARSING);
	if (json_is_object(msg) || json_is_array(msg))
		json_object_set(b->slot, MCP_HTTP_PARSED, msg);
	else
		log_info("mcp %s: a message that is not JSON-RPC", h->sv->name);
	log_info("mcp %s: a big message parsed", h->sv->name);
	json_decref(b->slot);
	free(b);
	if (!ev_is_active(&h->drain))
		ev_timer_start(h->sv->set->o.loop, &h->drain);
}

/* A big text (stolen) to parse beside the loop, its place in the inbox kept: 0, or -1 (the
 * text is the caller's again: parse it here). */
static int
mcp_http_big(struct mcp_http *h, char *text, size_t len)
{
	struct mcp_http_big *b = xcalloc(1, sizeof *b);

	b->h = h;
	b->slot = json_pack("{s:b}", MCP_HTTP_PARSING, 1);
	if ((b->job = mcp_parse_text(h->sv, text, len, mcp_http_parsed, b)) == NULL) {
		json_decref(b->slot);
		free(b);
		return -1;
	}
	json_array_append(h->inbox, b->slot);
	b->next = h->bigs;
	h->bigs = b;
	return 0;
}

static int
mcp_http_event(void *arg, const char *event, const char *data, size_t len)
{
	struct mcp_http_xfer *x = arg;
	json_t *m;
	char *copy;

	(void)event;
	if (len > MCP_PARSE_BIG) {
		copy = xmalloc(len + 1);
		memcpy(copy, data, len);
		copy[len] = '\0';
		if (mcp_http_big(x->h, copy, len) == 0)
			return 0;
		free(copy);
	}
	m = json_loadb(data, len, 0, NULL);
	if (json_is_object(m))
		mcp_http_post_in(x->h, m);
	else {
		json_decref(m);
		log_info("mcp %s: an event that is not JSON-RPC (%zu bytes)", x->h->sv->name, len);
	}
	return 0;
}

static void
mcp_http_header(void *arg, const char *name, const char *value)
{
	struct mcp_http_xfer *x = arg;

	if (strcasecmp(name, "content-type") == 0)
		x->sse = strncasecmp(value, "text/event-stream", 17) == 0;
	else if (strcasecmp(name, "mcp-session-id") == 0 && value[0] != '\0') {
		free(x->h->session);
		x->h->session = xstrdup(value);
	}
}

static int
mcp_http_data(void *arg, long status, const char *buf, size_t len)
{
	struct mcp_http_xfer *x = arg;
	char *cause = NULL;

	if (!x->seen) {
		x->seen = 1;
		http_req_headers(x->r, "content-type", mcp_http_header, x);
		http_req_headers(x->r, "mcp-session-id", mcp_http_header, x);
		if (x->sse && status < 300)
			x->parser = sse_new(MCP_LINE_MAX, mcp_http_event, x);
	}
	if (x->parser != NULL) {
		if (sse_feed(x->parser, buf, len, &cause) < 0) {
			log_warn("mcp %s: %s", x->h->sv->name, cause);
			free(cause);
			return 1;
		}
		return 0;
	}
	if (x->len + len > MCP_LINE_MAX)
		return 1;		 /* too big: the transfer ends, its request fails */
	if (x->len + len + 1 > x->cap) { /* doubling: a 50 MB body is not copied 3,000 times */
		x->cap = x->cap != 0 ? x->cap : 16384;
		while (x->cap < x->len + len + 1)
			x->cap *= 2;
		x->body = xrealloc(x->body, x->cap);
	}
	memcpy(x->body + x->len, buf, len);
	x->len += len;
	x->body[x->len] = '\0';
	return 0;
}

static void
mcp_http_unlink(struct mcp_http_xfer *x)
{
	struct mcp_http_xfer **pp;

	for (pp = &x->h->xfers; *pp != NULL; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			break;
		}
}

static void
mcp_http_xfer_free(struct mcp_http_xfer *x)
{
	sse_free(x->parser);
	free(x->sent);
	free(x->body);
	free(x);
}

/* A request whose POST could not be made fails from the loop (id -1: nothing waits). */
static void
mcp_http_fail(struct mcp_http *h, long long id, const char *why)
{
	if (id >= 0)
		mcp_http_post_in(
			h, json_pack("{s:I, s:s}", "transport_id", (json_int_t)id, "error", why));
	else
		log_info("mcp %s: %s", h->sv->name, why);
}

/* The refresh ended: what waited goes out with the new token, or fails with why. */
static void
mcp_http_refreshed(void *arg, const char *access, const char *error)
{
	struct mcp_http *h = arg;
	json_t *held = h->held, *e;
	char *why = NULL, *cause = NULL;
	size_t i;

	h->refresh = NULL;
	h->stale = 0;
	h->held = json_array();
	if (access != NULL) {
		h->gen++;
		explicit_bzero(h->auth, strlen(h->auth));
		free(h->auth);
		h->auth = xasprintf("Authorization: Bearer %s", access);
	} else {
		why = xasprintf("MCP server `%s`: %s", h->sv->name, error);
		log_warn("%s", why);
	}
	json_array_foreach(held, i, e)
	{
		long long id = json_integer_value(json_object_get(e, "id"));

		if (why != NULL)
			mcp_http_fail(h, id, why);
		else if (mcp_http_start(h, MCP_HTTP_POST,
				 json_string_value(json_object_get(e, "body")), id,
				 json_is_true(json_object_get(e, "retried")), &cause) != 0) {
			mcp_http_fail(h, id, cause);
			free(cause);
			cause = NULL;
		}
	}
	json_decref(held);
	free(why);
}

/* Hold a POST until the refresh under way (started here when none is) ends. */
static void
mcp_http_hold(struct mcp_http *h, const char *body, long long id, int retried)
{
	char *home, *cause = NULL, *why;

	json_array_append_new(h->held,
		json_pack(
			"{s:s, s:I, s:b}", "body", body, "id", (json_int_t)id, "retried", retried));
	if (h->refresh != NULL)
		return;
	home = home_path();
	h->refresh = oauth_refresh_start(
		h->sv->set->o.loop, home, h->sv->name, h->url, mcp_http_refreshed, h, &cause);
	free(home);
	if (h->refresh == NULL) {
		why = xasprintf("OAuth token refresh failed: %s", cause);
		mcp_http_refreshed(h, NULL, why);
		free(why);
		free(cause);
	}
}

static void
mcp_http_done(void *arg, const struct http_result *res)
{
	struct mcp_http_xfer *x = arg;
	struct mcp_http *h = x->h;
	json_t *m;
	char *why = NULL;

	mcp_http_unlink(x);
	if (res->status == 401 && x->sent != NULL && !x->retried) {
		/* the OAuth token was refused: refreshed once (or already), then sent again */
		if (x->gen != h->gen && h->refresh == NULL) {
			if (mcp_http_start(h, MCP_HTTP_POST, x->sent, x->id, 1, &why) != 0) {
				mcp_http_fail(h, x->id, why);
				free(why);
			}
		} else
			mcp_http_hold(h, x->sent, x->id, 1);
		mcp_http_xfer_free(x);
		return;
	}
	if (x->kind == MCP_HTTP_POST && x->body != NULL && res->status < 300 &&
		res->curl_code == 0 && x->len > MCP_PARSE_BIG &&
		mcp_http_big(h, x->body, x->len) == 0) {
		x->body = NULL; /* the parse's now */
	} else if (x->kind == MCP_HTTP_POST && x->body != NULL && res->status < 300 &&
		res->curl_code == 0) {
		m = json_loadb(x->body, x->len, 0, NULL);
		if (json_is_array(m)) { /* a batch */
			size_t i;
			json_t *e;

			json_array_foreach(m, i, e) mcp_http_post_in(h, json_incref(e));
			json_decref(m);
		} else if (json_is_object(m))
			mcp_http_post_in(h, m);
		else
			json_decref(m);
	}
	if (res->curl_code != 0 && res->status < 300)
		why = xasprintf("MCP server `%s`: %s", h->sv->name,
			res->error != NULL ? res->error : "the connection failed");
	else if (res->status >= 400)
		why = xasprintf("MCP server `%s` answered HTTP %ld %s%s%.200s", h->sv->name,
			res->status, http_reason(res->status), x->body != NULL ? ": " : "",
			x->body != NULL ? x->body : "");
	if (why != NULL && x->kind == MCP_HTTP_GET)
		log_info("%s (its stream of server messages)", why);
	else if (why != NULL && x->id >= 0) /* the request fails, from the loop */
		mcp_http_post_in(h,
			json_pack("{s:I, s:s}", "transport_id", (json_int_t)x->id, "error", why));
	else if (why != NULL)
		log_info("%s", why);
	free(why);
	mcp_http_xfer_free(x);
}

/* Start a transfer (body may be NULL). 0, or -1 with *cause. */
static int
mcp_http_start(
	struct mcp_http *h, int kind, const char *body, long long id, int retried, char **cause)
{
	static const char *const methods[] = {"POST", "GET", "DELETE"};
	struct http_cbs cbs = {mcp_http_data, mcp_http_done};
	struct http_req_opts o = {0};
	struct mcp_http_xfer *x = xcalloc(1, sizeof *x);
	const char **hv = mcp_http_headers(h, kind);

	x->h = h;
	x->kind = kind;
	x->id = id;
	x->retried = retried;
	x->gen = h->gen;
	if (h->auth != NULL && kind == MCP_HTTP_POST && body != NULL)
		x->sent = xstrdup(body);
	o.method = methods[kind];
	o.url = h->url;
	o.headers = hv;
	o.body = body;
	o.body_len = body != NULL ? strlen(body) : 0;
	o.connect_timeout_ms = 10000;
	x->r = http_start(http_default(), &o, &cbs, x, cause);
	free(hv);
	if (x->r == NULL) {
		free(x->sent);
		free(x);
		return -1;
	}
	x->next = h->xfers;
	h->xfers = x;
	return 0;
}

int
mcp_http_send(struct mcp_server *sv, json_t *msg, char **cause)
{
	const json_t *id = json_object_get(msg, "id");
	long long rid = json_is_integer(id) && json_object_get(msg, "method") != NULL
		? json_integer_value(id)
		: -1;
	char *text = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER);
	int r;

	if (sv->http != NULL && sv->http->version == NULL &&
		strcmp(json_string_value(json_object_get(msg, "method")) ?: "",
			"notifications/initialized") == 0) {
		/* from now on every message says the version initialize agreed on */
		const char *v = json_string_value(json_object_get(sv->init, "protocolVersion"));

		sv->http->version = xstrdup(v != NULL ? v : MCP_PROTOCOL_VERSION);
	}
	json_decref(msg);
	if (sv->http == NULL) {
		free(text);
		*cause = xasprintf("MCP server `%s` is not running", sv->name);
		return -1;
	}
	if (sv->http->refresh != NULL || sv->http->stale) {
		mcp_http_hold(sv->http, text, rid, 0); /* the token is being refreshed */
		free(text);
		return 0;
	}
	r = mcp_http_start(sv->http, MCP_HTTP_POST, text, rid, 0, cause);
	free(text);
	return r;
}

void
mcp_http_initialized(struct mcp_server *sv)
{
	struct mcp_http *h = sv->http;
	char *cause = NULL;

	if (h == NULL)
		return;
	if (mcp_http_start(h, MCP_HTTP_GET, NULL, -1, 0, &cause) != 0) {
		log_info("mcp %s: %s", sv->name, cause);
		free(cause);
	}
}

/* Dispatch what arrived, in order; the server may be closed by what it dispatches. */
static void
mcp_http_drain_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct mcp_http *h = container_of(w, struct mcp_http, drain);
	struct mcp_server *sv = h->sv;
	json_t *m, *p, *e;
	size_t i;

	(void)loop;
	(void)revents;
	while (sv->http == h && json_array_size(h->inbox) > 0) {
		m = json_array_get(h->inbox, 0);
		if (json_object_get(m, MCP_HTTP_PARSING) != NULL)
			break; /* its parse is not back: what came after it waits */
		json_incref(m);
		json_array_remove(h->inbox, 0);
		if (json_object_get(m, "transport_id") != NULL)
			mcp_conn_answer(sv, json_integer_value(json_object_get(m, "transport_id")),
				NULL, 0, json_string_value(json_object_get(m, "error")));
		else if ((p = json_object_get(m, MCP_HTTP_PARSED)) != NULL && json_is_array(p)) {
			json_array_foreach(p, i, e) if (sv->http == h && json_is_object(e))
				mcp_conn_dispatch(sv, e); /* a batch */
		} else if (p != NULL)
			mcp_conn_dispatch(sv, p);
		else if (json_object_size(m) > 0)
			mcp_conn_dispatch(sv, m);
		json_decref(m);
	}
}

/* The DELETE of a session outlives its server: nothing to do when it ends. */
static int
mcp_http_ignore_data(void *arg, long status, const char *buf, size_t len)
{
	(void)arg;
	(void)status;
	(void)buf;
	(void)len;
	return 0;
}

static void
mcp_http_ignore_done(void *arg, const struct http_result *res)
{
	(void)arg;
	(void)res;
}

void
mcp_http_close(struct mcp_server *sv)
{
	struct mcp_http *h = sv->http;
	struct mcp_http_xfer *x;
	struct mcp_http_big *b;
	struct http_cbs cbs = {mcp_http_ignore_data, mcp_http_ignore_done};
	struct http_req_opts o = {0};
	const char **hv;
	char *cause = NULL;

	if (h == NULL)
		return;
	sv->http = NULL;
	while ((x = h->xfers) != NULL) {
		h->xfers = x->next;
		http_cancel(x->r);
		mcp_http_xfer_free(x);
	}
	if (h->session != NULL) { /* upstream ends its session */
		hv = mcp_http_headers(h, MCP_HTTP_DELETE);
		o.method = "DELETE";
		o.url = h->url;
		o.headers = hv;
		o.connect_timeout_ms = 2000;
		o.total_timeout_ms = 5000;
		if (http_start(http_default(), &o, &cbs, NULL, &cause) == NULL) {
			log_debug("mcp %s: %s", sv->name, cause);
			free(cause);
		}
		free(hv);
	}
	while ((b = h->bigs) != NULL) { /* their parses end on their own, unheard */
		h->bigs = b->next;
		mcp_parse_drop(b->job);
		json_decref(b->slot);
		free(b);
	}
	ev_timer_stop(sv->set->o.loop, &h->drain);
	oauth_refresh_cancel(h->refresh);
	json_decref(h->held);
	if (h->auth != NULL)
		explicit_bzero(h->auth, strlen(h->auth));
	free(h->auth);
	json_decref(h->inbox);
	json_decref(h->headers);
	free(h->session);
	free(h->version);
	free(h->url);
	free(h);
}
