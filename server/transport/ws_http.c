/*
 * One HTTP request on a WebSocket listener, parsed by http-parser. What upstream 0.169 answers
 * (recorded against its listener, docs/transports.md): a request carrying an Origin header is
 * refused with 403 before anything else (a browser page must not drive the daemon); GET
 * /readyz and /healthz answer 200 with an empty body; any other path is an upgrade, checked
 * in axum's order and words (method, Connection, Upgrade, Sec-WebSocket-Version, -Key), then
 * --ws-auth's bearer token (401 with upstream's text; probes need none, as upstream's).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <http_parser.h>

#include "protocol/base64.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "ws_http.h"

#define WS_GUID	     "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_VALUE_MAX 4096 /* one header value, or the path */

enum ws_hdr {
	HDR_NONE,
	HDR_CONNECTION,
	HDR_UPGRADE,
	HDR_KEY,
	HDR_VERSION,
	HDR_ORIGIN,
	HDR_AUTHORIZATION,
	HDR_N
};

struct ws_http {
	http_parser parser;
	size_t max, seen;
	int done;
	int origin; /* an Origin header came, whatever its value */
	enum ws_hdr cur;
	int in_value;
	struct buf field;
	struct buf path;
	struct buf hdr[HDR_N];
};

static const char *const ws_hdr_names[HDR_N] = {NULL, "connection", "upgrade", "sec-websocket-key",
	"sec-websocket-version", "origin", "authorization"};

static int
ws_http_url_cb(http_parser *p, const char *at, size_t n)
{
	struct ws_http *h = p->data;

	return buf_add(&h->path, at, n) != 0;
}

/* The header whose value follows: known by its name (case-insensitive), or none. */
static void
ws_http_name_done(struct ws_http *h)
{
	h->cur = HDR_NONE;
	for (int i = 1; i < HDR_N; i++)
		if (strcasecmp(buf_str(&h->field), ws_hdr_names[i]) == 0)
			h->cur = (enum ws_hdr)i;
	if (h->cur == HDR_ORIGIN)
		h->origin = 1;
	/* A repeated header's values join as a list, as HTTP says they may. */
	if (h->cur != HDR_NONE && h->hdr[h->cur].len > 0)
		buf_addc(&h->hdr[h->cur], ',');
	buf_reset(&h->field);
}

static int
ws_http_field_cb(http_parser *p, const char *at, size_t n)
{
	struct ws_http *h = p->data;

	if (h->in_value) {
		h->in_value = 0;
		buf_reset(&h->field);
	}
	return buf_add(&h->field, at, n) != 0;
}

static int
ws_http_value_cb(http_parser *p, const char *at, size_t n)
{
	struct ws_http *h = p->data;

	if (!h->in_value) {
		h->in_value = 1;
		ws_http_name_done(h);
	}
	if (h->cur == HDR_NONE)
		return 0;
	return buf_add(&h->hdr[h->cur], at, n) != 0;
}

static int
ws_http_headers_cb(http_parser *p)
{
	struct ws_http *h = p->data;

	h->done = 1;
	/* No body is read: 1 tells http-parser to skip it; an upgrade stops the parser anyway. */
	return 1;
}

static const http_parser_settings ws_http_settings = {
	.on_url = ws_http_url_cb,
	.on_header_field = ws_http_field_cb,
	.on_header_value = ws_http_value_cb,
	.on_headers_complete = ws_http_headers_cb,
};

struct ws_http *
ws_http_new(size_t max)
{
	struct ws_http *h = xcalloc(1, sizeof *h);

	http_parser_init(&h->parser, HTTP_REQUEST);
	h->parser.data = h;
	h->max = max;
	buf_init(&h->field, WS_VALUE_MAX);
	buf_init(&h->path, WS_VALUE_MAX);
	for (int i = 0; i < HDR_N; i++)
		buf_init(&h->hdr[i], WS_VALUE_MAX);
	return h;
}

void
ws_http_free(struct ws_http *h)
{
	if (h == NULL)
		return;
	buf_free(&h->field);
	buf_free(&h->path);
	for (int i = 0; i < HDR_N; i++)
		buf_free(&h->hdr[i]);
	free(h);
}

int
ws_http_feed(struct ws_http *h, const char *p, size_t n, size_t *used)
{
	size_t k;

	if (h->done)
		return -1;
	k = http_parser_execute(&h->parser, &ws_http_settings, p, n);
	h->seen += k;
	if (h->done) {
		*used = k;
		return WS_HTTP_DONE;
	}
	if (HTTP_PARSER_ERRNO(&h->parser) != HPE_OK || k != n || h->seen > h->max)
		return -1;
	return WS_HTTP_MORE;
}

/* Whether a comma-separated header value lists token (case-insensitive). */
static int
ws_http_has_token(const struct buf *v, const char *token)
{
	size_t tl = strlen(token);
	const char *s = buf_str(v), *e;

	while (*s != '\0') {
		while (*s == ' ' || *s == '\t' || *s == ',')
			s++;
		for (e = s; *e != '\0' && *e != ','; e++)
			;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if ((size_t)(e - s) == tl && strncasecmp(s, token, tl) == 0)
			return 1;
		s = *e == ',' ? e + 1 : e;
	}
	return 0;
}

int
ws_http_accept_key(const char *key, ws_sha1_fn sha1, char out[29])
{
	struct buf b;
	unsigned char md[20];
	int r;

	buf_init(&b, WS_VALUE_MAX + sizeof WS_GUID);
	r = buf_adds(&b, key) == 0 && buf_adds(&b, WS_GUID) == 0 && sha1(b.ptr, b.len, md) == 0
		? 0
		: -1;
	buf_free(&b);
	if (r == 0) {
		base64_encode(md, sizeof md, out);
		out[28] = '\0';
	}
	return r;
}

/* A whole answer with a text/plain body (empty: no content-type, as upstream). */
static char *
ws_http_plain(int status, const char *reason, const char *body, size_t *len)
{
	char *s;

	if (*body == '\0')
		s = xasprintf("HTTP/1.1 %d %s\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
			status, reason);
	else
		s = xasprintf("HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\n"
			      "content-length: %zu\r\nconnection: close\r\n\r\n%s",
			status, reason, strlen(body), body);
	*len = strlen(s);
	return s;
}

char *
ws_http_bad_request(size_t *len)
{
	return ws_http_plain(400, "Bad Request", "", len);
}

char *
ws_http_answer(struct ws_http *h, ws_sha1_fn sha1, const struct ws_auth *auth, long long now,
	size_t *len, int *status)
{
	const char *path = buf_str(&h->path), *denied;
	char accept[29];
	char *s;

	*status = 403;
	if (h->origin)
		return ws_http_plain(403, "Forbidden", "", len);
	*status = 200;
	if (h->parser.method == HTTP_GET &&
		(strcmp(path, "/readyz") == 0 || strcmp(path, "/healthz") == 0))
		return ws_http_plain(200, "OK", "", len);
	*status = 405;
	if (h->parser.method != HTTP_GET)
		return ws_http_plain(
			405, "Method Not Allowed", "Request method must be `GET`", len);
	*status = 400;
	if (!ws_http_has_token(&h->hdr[HDR_CONNECTION], "upgrade"))
		return ws_http_plain(
			400, "Bad Request", "Connection header did not include 'upgrade'", len);
	if (!ws_http_has_token(&h->hdr[HDR_UPGRADE], "websocket"))
		return ws_http_plain(
			400, "Bad Request", "`Upgrade` header did not include 'websocket'", len);
	if (strcmp(buf_str(&h->hdr[HDR_VERSION]), "13") != 0)
		return ws_http_plain(400, "Bad Request",
			"`Sec-WebSocket-Version` header did not include '13'", len);
	if (h->hdr[HDR_KEY].len == 0)
		return ws_http_plain(400, "Bad Request", "`Sec-WebSocket-Key` header missing", len);
	/* --ws-auth: after the upgrade's own checks, as upstream's handler runs after axum's */
	*status = 401;
	denied = ws_auth_check(auth,
		h->hdr[HDR_AUTHORIZATION].len > 0 ? buf_str(&h->hdr[HDR_AUTHORIZATION]) : NULL,
		now);
	if (denied != NULL)
		return ws_http_plain(401, "Unauthorized", denied, len);
	if (ws_http_accept_key(buf_str(&h->hdr[HDR_KEY]), sha1, accept) != 0)
		return NULL;
	*status = 101;
	s = xasprintf("HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\n"
		      "upgrade: websocket\r\nsec-websocket-accept: %s\r\n\r\n",
		accept);
	*len = strlen(s);
	return s;
}
