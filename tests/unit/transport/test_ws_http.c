/*
 * Tests for server/transport/ws_http.c: RFC 6455's accept key (its §1.3 example), the answers
 * upstream 0.169's listener gives (recorded in docs/transports.md), requests cut at every
 * byte, and the ceilings (an oversized or malformed request is refused).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/digest.h"
#include "transport/ws_http.h"

#define UPGRADE                                                                                    \
	"GET /chat HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"   \
	"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

static void
test_accept_key_rfc(void **state)
{
	char out[29];

	assert_int_equal(ws_http_accept_key("dGhlIHNhbXBsZSBub25jZQ==", digest_sha1, out), 0);
	assert_string_equal(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

/* Feed req cut into pieces of `step` bytes; the answer and its status. */
static char *
answer(const char *req, size_t step, int *status, size_t *used)
{
	struct ws_http *h = ws_http_new(16384);
	size_t n = strlen(req), off = 0, k, len = 0;
	int r = WS_HTTP_MORE;
	char *a = NULL;

	*used = 0;
	while (off < n && r == WS_HTTP_MORE) {
		k = n - off < step ? n - off : step;
		r = ws_http_feed(h, req + off, k, used);
		if (r == WS_HTTP_DONE)
			*used += off;
		off += k;
	}
	if (r == WS_HTTP_DONE)
		a = ws_http_answer(h, digest_sha1, NULL, 0, &len, status);
	else
		*status = r < 0 ? -1 : 0;
	ws_http_free(h);
	return a;
}

static void
test_upgrade_every_cut(void **state)
{
	char req[512];
	size_t used;
	int status;

	/* a first frame's bytes after the request are not the request's */
	snprintf(req, sizeof req, "%s\x81\x85", UPGRADE);
	for (size_t step = 1; step <= strlen(req); step++) {
		char *a = answer(req, step, &status, &used);

		assert_int_equal(status, 101);
		assert_int_equal(used, strlen(UPGRADE));
		assert_non_null(
			strstr(a, "\r\nsec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"));
		assert_true(strncmp(a, "HTTP/1.1 101 Switching Protocols\r\n", 34) == 0);
		free(a);
	}
}

struct refusal {
	const char *req;
	int status;
	const char *body;
};

static void
test_upstream_answers(void **state)
{
	static const struct refusal cases[] = {
		{"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n", 200, "content-length: 0\r\n"},
		{"GET /healthz HTTP/1.1\r\n\r\n", 200, "content-length: 0\r\n"},
		{"GET /readyz HTTP/1.1\r\nOrigin: http://evil\r\n\r\n", 403, "403 Forbidden"},
		{"GET / HTTP/1.1\r\norigin: null\r\nUpgrade: websocket\r\nConnection: upgrade\r\n"
		 "Sec-WebSocket-Key: x\r\nSec-WebSocket-Version: 13\r\n\r\n",
			403, "403 Forbidden"},
		{"GET / HTTP/1.1\r\n\r\n", 400,
			"\r\n\r\nConnection header did not include 'upgrade'"},
		{"GET / HTTP/1.1\r\nConnection: keep-alive, Upgrade\r\n\r\n", 400,
			"`Upgrade` header did not include 'websocket'"},
		{"GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
		 "Sec-WebSocket-Version: 8\r\n\r\n",
			400, "`Sec-WebSocket-Version` header did not include '13'"},
		{"GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
		 "Sec-WebSocket-Version: 13\r\n\r\n",
			400, "`Sec-WebSocket-Key` header missing"},
		{"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 405,
			"Request method must be `GET`"},
	};
	size_t used;
	int status;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *a = answer(cases[i].req, 7, &status, &used);

		assert_non_null(a);
		assert_int_equal(status, cases[i].status);
		assert_non_null(strstr(a, cases[i].body));
		free(a);
	}
}

static void
test_refused_requests(void **state)
{
	struct ws_http *h = ws_http_new(1024);
	char big[2048];
	size_t used;
	int status;

	/* headers past the ceiling: refused before the end of the request */
	memset(big, 'a', sizeof big);
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	assert_int_equal(ws_http_feed(h, big, sizeof big, &used), -1);
	ws_http_free(h);
	assert_null(answer("\x16\x03\x01\x02\x00 not http\r\n\r\n", 3, &status, &used));
	assert_int_equal(status, -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accept_key_rfc),
		cmocka_unit_test(test_upgrade_every_cut),
		cmocka_unit_test(test_upstream_answers),
		cmocka_unit_test(test_refused_requests),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
