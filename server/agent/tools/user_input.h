/*
 * request_user_input (Plan mode's question tool): pure conversions, as upstream 0.169 does them
 * (recorded against a mock model, tests/fixtures/user_input/):
 *  - the model's arguments {questions:[{id, header, question, options:[{label, description}],
 *    isSecret?}]} become the item/tool/requestUserInput params: each question gains
 *    isOther:true (the client offers a free-form answer) and isSecret (the model's, else
 *    false); unknown members are dropped; every question needs at least one option;
 *  - the client's ToolRequestUserInputResponse becomes the function_call_output's text: the
 *    compact JSON {"answers":{id:{"answers":[...]}}} with nothing else kept, or
 *    {"answers":{}} for an error answer or one not of that shape.
 */
#ifndef USER_INPUT_H
#define USER_INPUT_H

#include <jansson.h>

/* Upstream's texts for the model. */
#define USER_INPUT_UNAVAILABLE "request_user_input is unavailable in Default mode"
#define USER_INPUT_NO_OPTIONS  "request_user_input requires non-empty options for every question"
#define USER_INPUT_CANCELLED   "request_user_input was cancelled before receiving a response"
#define USER_INPUT_NO_ANSWERS  "{\"answers\":{}}"

/*
 * The request's params for a call's arguments (JSON text) without threadId and turnId:
 * {itemId: call_id, questions, isBlocking: true, autoResolutionMs: null}. 0 with *params (new
 * reference), or -1 with *cause (heap): the whole text the model gets ("failed to parse
 * function arguments: missing field `questions` at line 1 column 7", USER_INPUT_NO_OPTIONS).
 */
int user_input_params(const char *arguments, const char *call_id, json_t **params, char **cause);
/* The model's output for the client's result (NULL: an error answer). Heap. */
char *user_input_output(const json_t *result);

#endif
