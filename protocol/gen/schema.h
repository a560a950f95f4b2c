/*
 * The JSON Schema of the protocol, generated from the tables of protocol/defs/ (schema.c: one
 * definition or type; schema_files.c: the files of schema/, as upstream lays them out).
 */
#ifndef SCHEMA_H
#define SCHEMA_H

#include <jansson.h>

#include "protocol/defs/defs.h"

/* JSON Schema for one type expression; NULL with *cause on a malformed expression. */
json_t *schema_type(const char *expr, char **cause);
/* JSON Schema for one definition (without $schema/title/definitions). */
json_t *schema_def(const struct pdef *d, char **cause);
/* An object {Name: schema} of every definition. */
json_t *schema_definitions(char **cause);
/* An object {Name: schema} of the definitions named (as keys) in `names`. */
json_t *schema_defs_of(const json_t *names, char **cause);
/* Add to `names` (an object used as a set) every definition reachable from def `name`. */
int schema_closure(const char *name, json_t *names, char **cause);
/*
 * A raw schema whose oneOf variants share the members of its own `properties` and `required`
 * (McpServerElicitationRequestParams: threadId, serverName... beside each mode's members), with
 * those merged into each variant, for the generated clients' types (new reference; s itself
 * when there is nothing to merge, referenced again).
 */
json_t *schema_flatten_oneof(const json_t *s);
/* Every file of the schema tree: an object {relative path: document}. */
json_t *schema_files(char **cause);
#endif
