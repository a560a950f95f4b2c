/*
 * request_user_input: the model asks the user questions through the client, as upstream 0.169
 * does it (recorded against a mock model, tests/fixtures/user_input/). Outside Plan mode (the
 * thread's collaboration mode when the turn started; a review turn is Default) the call is
 * answered "unavailable" at once. In Plan mode there is no item: the thread's status gains
 * waitingOnUserInput, the item/tool/requestUserInput server request goes out, and the
 * client's answer is followed by serverRequest/resolved and the status without the flag; the
 * model gets the answers as compact JSON ({"answers":{}} after an error answer). The calls of
 * one response ask one after another. Every request is resolved: answered, or withdrawn by an
 * interrupt or the turn's failure (resolved after turn/completed; the model hears "aborted by
 * user after Ns" next turn, as upstream's), or the client gone.
 */
#include <stdlib.h>

#include "agent_int.h"
#include "agent/tools/user_input.h"
#include "protocol/xmalloc.h"

/* The call waiting on the client (the turn's `pending`). */
struct agent_ui_call {
	char *call_id;
	int64_t started_ms;
};

/* The client answered (or will not): the model hears it, the call is done. */
static void
agent_ui_answer(struct agent_turn *t, const json_t *result, enum agent_answer st)
{
	struct agent_ui_call *c = t->pending;
	char *text;

	t->pending = NULL;
	t->busy = 0;
	if (st == AGENT_ANSWER_RESULT)
		text = user_input_output(result);
	else if (st == AGENT_ANSWER_ERROR)
		text = user_input_output(NULL);
	else if (t->interrupted || t->failed)
		text = xasprintf("aborted by user after %.1fs",
			(double)(agent_now_ms() - c->started_ms) / 1000.0);
	else /* the client went away: ours, upstream's connection would be gone too */
		text = xstrdup(USER_INPUT_CANCELLED);
	agent_tool_output(t, c->call_id, 0, text);
	free(text);
	free(c->call_id);
	free(c);
}

void
agent_user_input_call(struct agent_turn *t, const json_t *call, const char *call_id)
{
	const char *args = json_string_value(json_object_get(call, "arguments"));
	struct agent_ui_call *c;
	json_t *params = NULL;
	char *cause = NULL;

	/* The mode is checked first, as upstream: a malformed call in Default mode hears this. */
	if (!t->plan_mode) {
		agent_tool_output(t, call_id, 0, USER_INPUT_UNAVAILABLE);
		return;
	}
	if (user_input_params(args != NULL ? args : "", call_id, &params, &cause) != 0) {
		agent_tool_output(t, call_id, 0, cause);
		free(cause);
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->call_id = xstrdup(call_id != NULL ? call_id : "");
	c->started_ms = agent_now_ms();
	agent_ask_client(
		t, "item/tool/requestUserInput", params, AGENT_WAIT_INPUT, agent_ui_answer, c);
}
