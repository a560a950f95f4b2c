/*
 * ThreadItems in their two spellings. Rollouts store upstream's core `TurnItem` (PascalCase
 * "type", snake_case fields, a command as an argv array, file changes as a map); the wire
 * carries v2 `ThreadItem` (camelCase, a command as one shell-quoted string, changes as a sorted
 * list). item_from_core reads what upstream (and we) wrote; item_to_core writes what upstream
 * reads back. Variants this file does not know are converted key by key (snake <-> camel at the
 * top level only, values kept), so nothing is dropped.
 */
#ifndef ITEM_H
#define ITEM_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* The v2 ThreadItem for a core item (new reference), or NULL when it is not an item. */
json_t *item_from_core(json_t *core);
/* Core parsed_cmd entries -> v2 commandActions (new array; [] for anything else). */
json_t *item_actions_from_core(json_t *parsed_cmd);
/*
 * item_from_core from text to text, for reading long histories without building trees: core
 * is a core item's JSON text, and its v2 ThreadItem is appended to out with startedAtMs and
 * completedAtMs (NULL: null) after its own members. The common variants are written straight
 * from the text; any other, or text the strict scanner refuses, goes through jansson and
 * item_from_core, so the result is always what item_from_core gives. *id gets the item's id
 * (heap; NULL when the converted item has none). 0, -1 when core is not an item (nothing
 * appended), or -E2BIG.
 */
struct buf;
int item_text_from_core(const char *core, size_t len, const long long *started,
	const long long *completed, struct buf *out, char **id);
/* The core item for a v2 ThreadItem (new reference), or NULL when it is not one. */
json_t *item_to_core(json_t *v2);
/* The item's id (borrowed) or NULL. */
const char *item_id(json_t *item);
/* Join argv the way upstream shows commands (shlex): safe words bare, others single-quoted. */
char *item_shell_join(json_t *argv);
/* Split a shell-quoted command back into argv (new array); NULL on unbalanced quotes. */
json_t *item_shell_split(const char *cmd);
/* snake_case -> camelCase and back, into a heap string. */
char *item_camel(const char *snake);
char *item_camel_n(const char *snake, size_t n);
char *item_snake(const char *camel);

#endif
