/*
 * A call's arguments as the shell tools read them: an integer with a default, and a JSON array
 * of strings as argv words (upstream's `command: [..]`, `prefix_rule`).
 */
#ifndef TOOL_ARGS_H
#define TOOL_ARGS_H

#include <jansson.h>

#include "agent/shell/shell_words.h"

/* args[key] when it is an integer, else dflt. */
long long tool_args_int(const json_t *args, const char *key, long long dflt);
/* Append the strings of a (a non-empty array of strings without NUL) to w; 0, or -1. */
int tool_args_words(const json_t *a, struct shell_words *w);

#endif
