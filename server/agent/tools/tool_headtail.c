/*
 * Head-tail output buffer (tool_headtail.h): the head is a bounded struct buf, the tail a ring
 * allocated once at its full size on first use, so memory never exceeds max bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "tool_headtail.h"
#include "protocol/utf8.h"
#include "protocol/xmalloc.h"

/* Keep at most max bytes. */
void
tool_headtail_init(struct tool_headtail *h, size_t max)
{
	buf_init(&h->head, max / 2);
	h->tail = NULL;
	h->tail_cap = max - max / 2;
	h->tail_len = 0;
	h->tail_pos = 0;
	h->total = 0;
}

/* Free the bytes. */
void
tool_headtail_free(struct tool_headtail *h)
{
	if (h == NULL)
		return;
	buf_free(&h->head);
	free(h->tail);
	h->tail = NULL;
	h->tail_len = h->tail_pos = h->total = 0;
}

/* The head first, then the ring (overwriting the oldest tail bytes). */
void
tool_headtail_add(struct tool_headtail *h, const void *p, size_t n)
{
	const char *s = p;
	size_t room = h->head.max - h->head.len;
	size_t take = n < room ? n : room;

	h->total += n;
	if (take > 0)
		buf_add(&h->head, s, take);
	s += take;
	n -= take;
	if (n == 0 || h->tail_cap == 0)
		return;
	if (h->tail == NULL)
		h->tail = xmalloc(h->tail_cap);
	if (n >= h->tail_cap) {
		/* only the newest tail_cap bytes can survive */
		memcpy(h->tail, s + n - h->tail_cap, h->tail_cap);
		h->tail_len = h->tail_cap;
		h->tail_pos = 0;
		return;
	}
	for (size_t done = 0; done < n;) {
		size_t chunk = h->tail_cap - h->tail_pos;

		if (chunk > n - done)
			chunk = n - done;
		memcpy(h->tail + h->tail_pos, s + done, chunk);
		h->tail_pos = (h->tail_pos + chunk) % h->tail_cap;
		done += chunk;
	}
	h->tail_len = h->tail_len + n > h->tail_cap ? h->tail_cap : h->tail_len + n;
}

/* Bytes dropped from the middle. */
size_t
tool_headtail_omitted(const struct tool_headtail *h)
{
	return h->total - h->head.len - h->tail_len;
}

/* Head then tail in order, repaired to UTF-8. */
char *
tool_headtail_text(const struct tool_headtail *h, size_t *len)
{
	size_t n = h->head.len + h->tail_len, start, outlen;
	char *raw = xmalloc(n + 1), *text;

	memcpy(raw, buf_str(&h->head), h->head.len);
	start = h->tail_len < h->tail_cap ? 0 : h->tail_pos;
	for (size_t i = 0; i < h->tail_len; i++)
		raw[h->head.len + i] = h->tail[(start + i) % h->tail_cap];
	raw[n] = '\0';
	if (utf8_valid_prefix(raw, n) == n) {
		if (len != NULL)
			*len = n;
		return raw;
	}
	text = utf8_lossy(raw, n, &outlen);
	free(raw);
	if (len != NULL)
		*len = outlen;
	return text;
}
