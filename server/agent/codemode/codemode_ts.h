/*
 * TypeScript as upstream's code mode writes it for a nested tool (codex-rs/code-mode,
 * json_schema_types.rs): a JSON Schema rendered as a type, and a tool's
 * `declare const tools: { name(args: T): Promise<U>; };` line. The model reads these in the
 * `exec` tool's description, so they follow upstream's rules to the byte: properties sorted
 * by name, `?` for those not required, enums and consts as JSON literals joined by ` | `,
 * arrays as Array<T>, objects with a described property spread over lines with each
 * description as `//` comments, local `$ref`s followed (a cycle renders `unknown`).
 */
#ifndef CODEMODE_TS_H
#define CODEMODE_TS_H

#include <jansson.h>

/* The TypeScript type of a JSON Schema (heap); NULL renders as `unknown`. */
char *codemode_ts_type(const json_t *schema);

/* A tool name as a JavaScript identifier (heap): each character not valid there is `_`. */
char *codemode_ts_identifier(const char *name);

/*
 * `declare const tools: { <id>(<input_name>: <input_type>): Promise<<output_type>>; };` for a
 * tool (heap); the types are borrowed strings.
 */
char *codemode_ts_declaration(
	const char *name, const char *input_name, const char *input_type, const char *output_type);

#endif
