/*
 * libFuzzer target for server/thread/history/item_text.c: the input is a core item's text (as a
 * rollout's item_completed holds it). item_text_from_core must write exactly what
 * item_from_core gives for the parsed text (with the same times), or refuse exactly the
 * texts that are not items; the first input byte picks which times are given.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "thread/history/item.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	long long st = 1795642524508LL, co = -3;
	const long long *sp = size > 0 && (data[0] & 1) ? &st : NULL;
	const long long *cp = size > 0 && (data[0] & 2) ? &co : NULL;
	json_t *c = json_loadb((const char *)data, size, 0, NULL);
	json_t *item = c != NULL ? item_from_core(c) : NULL, *parsed;
	struct buf out;
	char *id = NULL, *want, *got;
	int r;

	json_decref(c);
	buf_init(&out, 1u << 26);
	r = item_text_from_core((const char *)data, size, sp, cp, &out, &id);
	if (item == NULL) {
		if (r != -1 || out.len != 0 || id != NULL)
			abort();
		buf_free(&out);
		return 0;
	}
	json_object_set_new(item, "startedAtMs", sp ? json_integer(*sp) : json_null());
	json_object_set_new(item, "completedAtMs", cp ? json_integer(*cp) : json_null());
	if (r != 0 || (id == NULL) != (item_id(item) == NULL) ||
		(id != NULL && strcmp(id, item_id(item)) != 0) ||
		(parsed = json_loadb(out.ptr, out.len, 0, NULL)) == NULL)
		abort();
	want = json_dumps(item, JSON_COMPACT);
	got = json_dumps(parsed, JSON_COMPACT);
	if (strcmp(want, got) != 0) {
		fprintf(stderr, "want %s\n got %s\n", want, got);
		abort();
	}
	free(want);
	free(got);
	free(id);
	json_decref(parsed);
	json_decref(item);
	buf_free(&out);
	return 0;
}
