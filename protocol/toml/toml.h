/*
 * A TOML parser for the subset configuration files use (TOML 1.0 without the date-time types:
 * those are kept as their literal text). The result is a jansson tree: tables become objects,
 * arrays arrays, strings strings, integers integers, floats reals, booleans booleans. Errors
 * carry a 1-based line and column (in characters), e.g. "3:9: expected '=' after a key".
 */
#ifndef TOML_H
#define TOML_H

#include <stddef.h>

#include <jansson.h>

#define TOML_MAX_INPUT (4 << 20) /* the largest document accepted, bytes */
#define TOML_MAX_DEPTH 64	 /* nesting of arrays and inline tables; parts of a dotted key */

/* Where a parse error was found (1-based). */
struct toml_pos {
	unsigned line;
	unsigned column;
};

/*
 * Parse a whole document into an object. NULL on error, with *cause (heap) "L:C: message"
 * and, when pos is not NULL, the position.
 */
json_t *toml_parse(const char *text, size_t len, struct toml_pos *pos, char **cause);
/* Parse one value (the right-hand side of `key = value`), e.g. for -c overrides. */
json_t *toml_parse_value(const char *text, char **cause);

#endif
