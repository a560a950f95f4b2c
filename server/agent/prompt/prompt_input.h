/*
 * The user's input (wire UserInput[]) as the model's Responses message, local images read
 * into data URLs, and as the v2 userMessage item, as upstream 0.169 converts them.
 */
#ifndef PROMPT_INPUT_H
#define PROMPT_INPUT_H

#include <jansson.h>

/* The input as a Responses user message (new reference); NULL with *cause (an image). */
json_t *agent_user_message(const json_t *input, char **cause);
/* The input as the v2 userMessage ThreadItem with id (new reference). */
json_t *agent_user_item(const json_t *input, const char *id);

#endif
