/*
 * libFuzzer target for the SSE parser (protocol/sse.c). The first four input bytes seed the
 * cut points; the rest is the stream. It is fed twice: whole, and in pieces of 0..63 bytes cut
 * at the seeded points (so cuts land inside CRLFs and UTF-8 sequences). sse.h promises that the
 * events do not depend on the cuts: when neither feed failed, both must have delivered the
 * same events, and both must fail or succeed together; anything else aborts (a finding).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/buf.h"
#include "protocol/sse.h"

#define FUZZ_MAX_EVENT 2048 /* small, so the ceilings are reached */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_events {
	struct buf log; /* "event\0data\0" per event */
	size_t n;
};

static int
fuzz_event_cb(void *arg, const char *event, const char *data, size_t len)
{
	struct fuzz_events *e = arg;

	if (data[len] != '\0')
		abort(); /* data must be NUL-terminated */
	buf_adds(&e->log, event);
	buf_addc(&e->log, '\0');
	buf_add(&e->log, data, len);
	buf_addc(&e->log, '\0');
	e->n++;
	return 0;
}

/* Feed n bytes; 0 or the error (its message must be set). */
static int
fuzz_feed(struct sse *s, const char *p, size_t n)
{
	char *cause = NULL;
	int r = sse_feed(s, p, n, &cause);

	if (r != 0 && cause == NULL)
		abort();
	free(cause);
	return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_events a = {.n = 0}, b = {.n = 0};
	struct sse *whole, *cut;
	const char *p = (const char *)data + 4;
	uint32_t seed;
	size_t n, off, k;
	int ra, rb = 0;

	if (size < 4)
		return 0;
	memcpy(&seed, data, 4);
	n = size - 4;
	buf_init(&a.log, 1 << 24);
	buf_init(&b.log, 1 << 24);
	whole = sse_new(FUZZ_MAX_EVENT, fuzz_event_cb, &a);
	cut = sse_new(FUZZ_MAX_EVENT, fuzz_event_cb, &b);
	ra = fuzz_feed(whole, p, n);
	for (off = 0; off < n && rb == 0; off += k) {
		seed = seed * 1103515245u + 12345u;
		k = (seed >> 16) % 64;
		if (k > n - off)
			k = n - off;
		rb = fuzz_feed(cut, p + off, k);
	}
	if ((ra == 0) != (rb == 0))
		abort();
	if (ra == 0 &&
		(a.n != b.n || a.log.len != b.log.len ||
			memcmp(buf_str(&a.log), buf_str(&b.log), a.log.len) != 0))
		abort();
	if (ra == 0 && sse_events(whole) != a.n)
		abort();
	sse_free(whole);
	sse_free(cut);
	buf_free(&a.log);
	buf_free(&b.log);
	return 0;
}
