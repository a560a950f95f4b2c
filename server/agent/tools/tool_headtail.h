/*
 * The output a commandExecution item keeps (aggregatedOutput) and the bytes a running command
 * has produced: at most `max` bytes, the first max/2 and the last max - max/2 of the stream, as
 * upstream's HeadTailBuffer keeps them; nothing marks the cut. Bounded by construction.
 */
#ifndef TOOL_HEADTAIL_H
#define TOOL_HEADTAIL_H

#include <stddef.h>

#include "protocol/buf.h"

/* `total` counts everything offered; the ring holds the newest tail bytes. */
struct tool_headtail {
	struct buf head;
	char *tail;	 /* ring of tail_cap bytes, owned */
	size_t tail_cap; /* max - max/2 */
	size_t tail_len; /* bytes in the ring */
	size_t tail_pos; /* next write position */
	size_t total;	 /* bytes offered */
};

/* A buffer that keeps at most max bytes. */
void tool_headtail_init(struct tool_headtail *h, size_t max);
/* Free the bytes. Accepts NULL. */
void tool_headtail_free(struct tool_headtail *h);
/* Offer n bytes: the head fills first, then the ring keeps the newest bytes. */
void tool_headtail_add(struct tool_headtail *h, const void *p, size_t n);
/* Bytes dropped from the middle. */
size_t tool_headtail_omitted(const struct tool_headtail *h);
/* Head then tail, repaired to UTF-8: the aggregatedOutput text. Heap string, *len if wanted. */
char *tool_headtail_text(const struct tool_headtail *h, size_t *len);

#endif
