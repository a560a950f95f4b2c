/*
 * libFuzzer target for the TOML parser (protocol/toml/toml.c, protocol/toml/toml_lex.c). The input
 * is parsed as a whole document and, NUL-terminated, as one value (the -c override path). A failed
 * parse must come with a message and a position; a document that parses must be an object of the
 * promised value types (walked, then serialised).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "protocol/toml/toml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Walk a parsed tree: every value must be one of the types toml.h promises. */
static void
fuzz_walk(json_t *v, int depth)
{
	const char *k;
	json_t *x;
	size_t i;

	/* A header's parts, then per inline-table level a key's parts and the table itself. */
	if (depth > (TOML_MAX_DEPTH + 1) * (TOML_MAX_DEPTH + 2))
		abort();
	if (json_is_object(v)) {
		json_object_foreach(v, k, x) fuzz_walk(x, depth + 1);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x) fuzz_walk(x, depth + 1);
	} else if (!json_is_string(v) && !json_is_integer(v) && !json_is_real(v) &&
		!json_is_boolean(v))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct toml_pos pos = {0, 0};
	char *cause = NULL, *text;
	json_t *doc, *v;

	doc = toml_parse((const char *)data, size, &pos, &cause);
	if (doc == NULL) {
		if (cause == NULL || pos.line == 0 || pos.column == 0)
			abort();
	} else {
		if (!json_is_object(doc) || cause != NULL)
			abort();
		fuzz_walk(doc, 0);
		free(json_dumps(doc, JSON_SORT_KEYS | JSON_ENCODE_ANY));
		json_decref(doc);
	}
	free(cause);
	cause = NULL;
	text = malloc(size + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	v = toml_parse_value(text, &cause);
	if ((v == NULL) == (cause == NULL))
		abort();
	json_decref(v);
	free(cause);
	free(text);
	return 0;
}
