/*
 * The lifecycle hooks at a turn's points (hooks/hooks_turn.h does the work): the prompt hooks
 * before the user's message item, Stop after the final answer, SessionEnd when the thread goes,
 * PermissionRequest before a call would ask the client (its caller resumes with the answer).
 * A step holds the turn (agent_advance waits); its end says what joins the history and
 * whether the turn goes on, ends, or asks the model again.
 */
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "hooks/hooks_turn.h"
#include "protocol/xmalloc.h"
#include "thread/store/store.h"
#include "thread/uuidv7.h"

static void
agent_hooks_ctx(struct agent_turn *t, struct agent *a, struct hooks_ctx *c)
{
	const struct thread_meta *m = a->c.thread != NULL ? store_thread_meta(a->c.thread) : NULL;

	memset(c, 0, sizeof *c);
	c->loop = a->c.loop;
	c->set = a->c.hooks;
	c->session_id = a->c.thread_id;
	c->transcript_path = m != NULL ? m->path : NULL;
	c->cwd = t != NULL ? t->o.cwd : (m != NULL ? m->cwd : NULL);
	if (t != NULL) {
		c->turn_id = t->id;
		c->model = t->o.model;
		c->approval_policy = t->o.approval_policy;
	}
}

/* Items (borrowed) join the history and the rollout, in order. */
static void
agent_hooks_items(struct agent_turn *t, const json_t *items)
{
	json_t *it;
	size_t i;

	json_array_foreach(items, i, it)
	{
		agent_record_response(t->a, it);
		agent_history_add(t->a, json_incref(it));
	}
}

static void
agent_hooks_summary(void *arg, const char *method, json_t *run)
{
	struct agent_turn *t = arg;

	if (t->sink->hook != NULL)
		t->sink->hook(t->arg, method, run);
}

static void
agent_hooks_done(void *arg, const struct hooks_result *r)
{
	struct agent_turn *t = arg;
	json_t *item;
	int64_t now = agent_now_ms();

	t->hook = NULL; /* the step frees itself */
	agent_hooks_items(t, r->items);
	if (r->item != NULL) {
		item = json_deep_copy(r->item);
		agent_item_start(t, item, now);
		agent_item_complete(t, item, now);
		json_decref(item);
	}
	if (t->phase == PHASE_TOOLS) { /* a tool step: a blocked call is answered, not run */
		t->next += t->tool_out == NULL && r->verdict == HOOKS_END;
		json_decref(t->tool_out);
		json_decref(t->tool_res);
		t->tool_out = t->tool_res = NULL;
	} else if (r->verdict == HOOKS_END) { /* a blocked prompt leaves no item */
		json_decref(t->user_input);
		t->user_input = NULL;
		t->phase = PHASE_ENDING;
	} else if (r->verdict == HOOKS_AGAIN) {
		t->phase = PHASE_MODEL;
		t->need_model = 1;
		t->stop_active = 1;
	}
	agent_kick(t);
}

static const struct hooks_step_report agent_hooks_report = {agent_hooks_summary, agent_hooks_done};

static void
agent_hooks_permitted(void *arg, const struct hooks_result *r)
{
	struct agent_turn *t = arg;
	void (*fn)(struct agent_turn *, const struct hooks_result *, void *) = t->on_perm;

	t->hook = NULL; /* the step frees itself */
	t->on_perm = NULL;
	fn(t, r, t->perm);
	if (r->verdict == HOOKS_DENY)
		agent_hooks_no_post(t);
	agent_kick(t);
}

static const struct hooks_step_report agent_hooks_perm_report = {
	agent_hooks_summary, agent_hooks_permitted};

int
agent_hooks_permission(struct agent_turn *t, const char *call_id, const json_t *call,
	const char *patch, void (*fn)(struct agent_turn *, const struct hooks_result *, void *),
	void *perm)
{
	struct hooks_ctx c;

	if (t->hook != NULL || t->interrupted || t->failed)
		return 0;
	agent_hooks_ctx(t, t->a, &c);
	t->hook = hooks_permission_start(&c, call_id, call, patch, &agent_hooks_perm_report, t);
	t->on_perm = t->hook != NULL ? fn : NULL;
	t->perm = perm;
	return t->hook != NULL;
}

int
agent_hooks_advance(struct agent_turn *t)
{
	struct agent *a = t->a;
	struct hooks_ctx c;
	json_t *in = t->hook_input, *call = json_array_get(t->calls, t->next);
	char id[41] = "msg_", *prompt;

	if (t->hook != NULL)
		return 1;
	agent_hooks_ctx(t, a, &c);
	if (t->phase == PHASE_TOOLS && !t->busy && (t->tool_out != NULL || call != t->hook_call)) {
		/* PostToolUse once the call's item completed, else PreToolUse before the call */
		if (t->tool_out == NULL) {
			json_decref(t->hook_call);
			t->hook_call = json_incref(call); /* held: its address names it */
		}
		t->hook = hooks_tool_start(
			&c, t->hook_call, t->tool_out, t->tool_res, &agent_hooks_report, t);
		if (t->hook == NULL && t->tool_out != NULL)
			agent_hooks_interrupt(t); /* no hook ran: the output joins the history */
		return t->hook != NULL;
	}
	if (in != NULL) {
		t->hook_input = NULL;
		prompt = hooks_prompt_text(t->o.input);
		if (!t->interrupted && !t->failed && a->c.hooks != NULL)
			/* a thread with a past user message was read back: upstream's "resume" */
			t->hook = hooks_prompt_start(&c,
				a->hooks_started++ > 0 ? NULL
					: a->c.thread != NULL &&
						store_thread_meta(a->c.thread)->has_user_message
					? "resume"
					: "startup",
				in, prompt, &agent_hooks_report, t);
		if (t->hook == NULL)
			agent_hooks_items(t, in);
		free(prompt);
		json_decref(in);
		return t->hook != NULL;
	}
	if (t->stop_due && t->phase == PHASE_ENDING && !t->interrupted && !t->failed) {
		t->stop_due = 0;
		uuidv7_new(id + 4);
		t->hook = hooks_stop_start(
			&c, t->stop_active, t->stop_text, id, &agent_hooks_report, t);
		return t->hook != NULL;
	}
	return 0;
}

void
agent_hooks_stop_due(struct agent_turn *t, const json_t *response_items)
{
	if (hooks_count(t->a->c.hooks, HOOK_STOP) == 0 || t->review != NULL || t->compacting)
		return;
	free(t->stop_text);
	t->stop_text = hooks_last_answer(response_items);
	t->stop_due = 1;
}

/* The output of a call the tool hooks saw waits for PostToolUse (item stolen): 1 if kept. */
int
agent_hooks_output(struct agent_turn *t, json_t *item)
{
	const char *id = json_string_value(json_object_get(t->hook_call, "call_id"));

	if (t->tool_out != NULL || hooks_count(t->a->c.hooks, HOOK_POST_TOOL_USE) == 0 ||
		id == NULL ||
		strcmp(id, json_string_value(json_object_get(item, "call_id"))) != 0 ||
		!hooks_tool_seen(t->a->c.hooks, t->hook_call))
		return 0;
	t->tool_out = item;
	return 1;
}

void
agent_hooks_interrupt(struct agent_turn *t)
{
	json_t *out = t->tool_out;
	void (*fn)(struct agent_turn *, const struct hooks_result *, void *) = t->on_perm;

	hooks_step_free(t->hook); /* its processes are killed: the turn ends now */
	t->hook = NULL;
	t->on_perm = NULL;
	if (fn != NULL)
		fn(t, NULL, t->perm); /* the waiting call is refused */
	out = out != NULL ? out : t->tool_out;
	json_decref(t->tool_res);
	t->tool_out = t->tool_res = NULL;
	if (out != NULL) { /* the call's output still joins the history */
		agent_record_response(t->a, out);
		agent_history_add(t->a, out);
	}
}

/* The held output joins the history as it is: upstream runs no PostToolUse after a refusal
 * (the hook's or the user's), nor for apply_patch run as a command. */
void
agent_hooks_no_post(struct agent_turn *t)
{
	if (t->hook == NULL)
		agent_hooks_interrupt(t);
}

void
agent_hooks_turn_free(struct agent_turn *t)
{
	agent_hooks_interrupt(t);
	json_decref(t->hook_input);
	json_decref(t->hook_call);
	free(t->stop_text);
}

void
agent_hooks_session_end(struct agent *a)
{
	struct hooks_ctx c;

	if (a->hooks_started && a->c.hooks != NULL) {
		agent_hooks_ctx(NULL, a, &c);
		hooks_session_end(&c);
	}
	hooks_unref(a->c.hooks);
}
