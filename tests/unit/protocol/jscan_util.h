/* What tests/unit/protocol/test_jscan*.c share. */
#ifndef JSCAN_UTIL_H
#define JSCAN_UTIL_H

#define BIG (1u << 20) /* ceiling of the scratch buffers */

/* A span parsed by jansson (any value), or NULL. */
static inline json_t *
load_span(struct jspan v)
{
	json_error_t err;

	return json_loadb(v.p, (size_t)(v.end - v.p), JSON_DECODE_ANY, &err);
}

#endif
