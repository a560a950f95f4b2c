/*
 * The tools of a turn: the calls of one response run one after another (agent_tools_next),
 * each answered to the model with its output item before the next request. Approvals are
 * asked through the sink and wait without blocking: the call stays `busy` until the answer
 * (agent_approval) or the turn's end (agent_tools_abort cancels it). Also the tools' specs,
 * update_plan, steered input, and the compaction request's end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent_int.h"
#include "agent/codemode/codemode_run.h"
#include "agent/prompt/history_items.h"
#include "agent/patch/apply_patch.h"
#include "agent/tools/clock.h"
#include "agent/tools/dynamic_tools.h"
#include "agent/tools/plan_update.h"
#include "agent/tools/tool_specs.h"
#include "agent/tools/tool_output.h"
#include "agent/tools/view_image.h"
#include "exec/exec.h"
#include "protocol/xmalloc.h"
#include "thread/store/store.h"
#include "thread/uuidv7.h"

/* The answer to one call (function_call_output or custom_tool_call_output) into the history. */
void
agent_tool_output(struct agent_turn *t, const char *call_id, int custom, const char *text)
{
	json_t *item;

	if (codemode_tool_result(t->a->cm, call_id, text))
		return; /* a cell's nested call: its script gets the answer */
	item = json_pack("{s:s, s:s, s:s}", "type",
		custom ? "custom_tool_call_output" : "function_call_output", "call_id",
		call_id != NULL ? call_id : "", "output", text);
	if (agent_hooks_output(t, item))
		return; /* PostToolUse first (agent_hooks.c) */
	agent_record_response(t->a, item);
	agent_history_add(t->a, item);
}

/* Ask the client; on_answer runs with its answer (or CANCEL when the turn ends first). */
void
agent_ask(struct agent_turn *t, const char *method, json_t *params,
	void (*on_answer)(struct agent_turn *, enum approval_reply), void *pending)
{
	t->approval = t->a->next_approval++;
	t->on_answer = on_answer;
	t->pending = pending;
	t->busy = 1;
	agent_set_waiting(t, AGENT_WAIT_APPROVAL);
	t->sink->approval(t->arg, t->approval, method, params);
	json_decref(params);
}

/* Ask the client something else; on_result gets its result, an error, or CANCEL. */
void
agent_ask_client(struct agent_turn *t, const char *method, json_t *params, enum agent_wait wait,
	void (*on_result)(struct agent_turn *, const json_t *, enum agent_answer), void *pending)
{
	t->approval = t->a->next_approval++;
	t->on_result = on_result;
	t->pending = pending;
	t->busy = 1;
	agent_set_waiting(t, wait);
	t->sink->approval(t->arg, t->approval, method, params);
	json_decref(params);
}

/* The turn ends: a pending approval is cancelled and answered as such to its waiter. */
void
agent_tools_abort(struct agent_turn *t)
{
	void (*fn)(struct agent_turn *, enum approval_reply) = t->on_answer;
	void (*rfn)(struct agent_turn *, const json_t *, enum agent_answer) = t->on_result;
	long long id = t->approval;

	agent_dynamic_abort(t);
	agent_mcp_abort(t);
	if (rfn != NULL) {
		t->on_result = NULL;
		t->approval = -1;
		t->sink->approval_cancel(t->arg, id);
		/* The turn ends: its idle status follows, with no flagless active one before it
		 * (upstream's order when a question is interrupted). */
		t->waiting = AGENT_WAIT_NONE;
		rfn(t, NULL, AGENT_ANSWER_CANCEL);
	}
	if (fn != NULL) {
		t->on_answer = NULL;
		t->approval = -1;
		t->sink->approval_cancel(t->arg, id);
		agent_set_waiting(t, 0);
		fn(t, APPROVAL_REPLY_CANCEL);
	}
	codemode_kill_all(t->a->cm);
	clock_sleep_end(t->sleep, CLOCK_ABORTED);
	/* The command a call waits on dies now; its done callback completes the item. */
	if (t->cmd != NULL && t->cmd->proc != NULL && !t->cmd->done)
		exec_kill(t->cmd->proc);
}

/* update_plan: turn/plan/updated, a plan item, and the model's acknowledgement. */
static void
agent_update_plan(struct agent_turn *t, const json_t *call, const char *call_id)
{
	const char *args = json_string_value(json_object_get(call, "arguments"));
	struct plan_update pu = {0};
	char *cause = NULL, *text, id[37];
	json_t *params, *item;
	int64_t now = agent_now_ms();

	if (plan_update_parse(args != NULL ? args : "", &pu, &cause) != 0) {
		agent_tool_output(t, call_id, 0, cause);
		free(cause);
		return;
	}
	params = plan_update_params(&pu, t->a->c.thread_id, t->id);
	json_object_del(params, "threadId");
	json_object_del(params, "turnId");
	t->sink->plan(t->arg, params);
	json_decref(params);
	text = plan_update_text(&pu);
	uuidv7_new(id);
	item = json_pack("{s:s, s:s, s:s}", "type", "plan", "id", id, "text", text);
	agent_item_start(t, item, now);
	agent_item_complete(t, item, now);
	json_decref(item);
	free(text);
	plan_update_free(&pu);
	agent_tool_output(t, call_id, 0, PLAN_UPDATE_OUTPUT);
}

/* apply_patch as a tool: {input} for the function, the raw input for the custom tool. */
static void
agent_patch_tool(struct agent_turn *t, const json_t *call, const char *call_id, int custom)
{
	const char *text = NULL, *a;
	json_t *args = NULL;
	struct patch *p = NULL;
	char *cause = NULL, *msg;

	if (custom)
		text = json_string_value(json_object_get(call, "input"));
	else if ((a = json_string_value(json_object_get(call, "arguments"))) != NULL &&
		(args = json_loads(a, 0, NULL)) != NULL)
		text = json_string_value(json_object_get(args, "input"));
	if (text == NULL) {
		msg = tool_output_bad_arguments("missing field `input`");
		agent_tool_output(t, call_id, custom, msg);
		free(msg);
	} else if (apply_patch_parse(text, strlen(text), &p, &cause) != 0) {
		msg = apply_patch_failure_text(-22, cause);
		agent_tool_output(t, call_id, custom, msg);
		free(msg);
	} else
		agent_patch_call(t, call_id, custom, p, t->o.cwd, AGENT_PATCH_TOOL);
	free(cause);
	json_decref(args);
}

/* view_image: the file is read on the worker; an imageView item, then the image (or why not). */
struct agent_vi {
	struct agent_turn *t;
	char *call_id;
	struct view_image v;
	int64_t at;
};

static void
agent_vi_run(void *arg)
{
	view_image_load(&((struct agent_vi *)arg)->v);
}

static void
agent_vi_done(void *arg)
{
	struct agent_vi *w = arg;
	json_t *item, *out;
	int cell;

	agent_worker_done(w->t->a);
	if (w->v.error != NULL && !codemode_tool_json(w->t->a->cm, w->call_id, NULL, w->v.error))
		agent_tool_output(w->t, w->call_id, 0, w->v.error);
	else if (w->v.error == NULL) {
		item = view_image_item(&w->v, w->call_id);
		agent_item_start(w->t, item, w->at);
		agent_item_complete(w->t, item, w->at);
		json_decref(item);
		cell = codemode_tool_json(
			w->t->a->cm, w->call_id, out = view_image_cell(&w->v), NULL);
		json_decref(out);
		if (!cell && (out = view_image_output(&w->v, w->call_id)) != NULL) {
			agent_record_response(w->t->a, out);
			agent_history_add(w->t->a, out); /* stolen */
		}
	}
	w->t->busy = 0;
	agent_kick(w->t);
	free(w->call_id);
	view_image_free(&w->v);
	free(w);
}

static void
agent_view_image(struct agent_turn *t, const json_t *call, const char *call_id)
{
	struct agent_vi *w = xcalloc(1, sizeof *w);
	char *cause = NULL;

	if (view_image_args(json_string_value(json_object_get(call, "arguments")), t->o.cwd, &w->v,
		    &cause) != 0) {
		agent_tool_output(t, call_id, 0, cause);
		free(cause);
		free(w);
		return;
	}
	w->t = t;
	w->call_id = xstrdup(call_id != NULL ? call_id : "");
	w->at = agent_now_ms();
	t->busy = 1;
	agent_worker_post(t->a, agent_vi_run, agent_vi_done, w);
}

/* clock.sleep (a timer, tools/clock.h) with its sleep item; clock__curr_time for a cell. */
struct agent_sleep {
	struct agent_turn *t;
	char *call_id;
	json_t *item;
	int64_t at;
};

static void
agent_sleep_done(void *arg, enum clock_end how, double secs)
{
	struct agent_sleep *s = arg;
	char *text = clock_sleep_text(secs, how);

	s->t->sleep = NULL;
	s->t->busy = 0;
	agent_item_complete(s->t, s->item, s->at); /* also on interrupt: never started alone */
	agent_tool_output(s->t, s->call_id, 0, text);
	agent_kick(s->t);
	json_decref(s->item);
	free(s->call_id);
	free(s);
	free(text);
}

static void
agent_clock_call(struct agent_turn *t, const json_t *call, const char *call_id, const char *name)
{
	struct agent_sleep *s;
	char *text = NULL, now[32];
	long long ms;
	json_t *v;

	if (strcmp(name, "curr_time") == 0) {
		clock_curr_time(time(NULL), now);
		v = json_pack("{s:s}", "current_time", now);
		if (!codemode_tool_json(t->a->cm, call_id, v, NULL))
			text = tool_output_unsupported(
				"clockcurr_time", 0); /* not offered directly */
		json_decref(v);
	} else if (!(t->o.tools & TOOL_SPEC_CLOCK) || strcmp(name, "sleep") != 0)
		text = xasprintf("unsupported call: clock%s", name); /* upstream's joined name */
	else if (clock_sleep_args(
			 json_string_value(json_object_get(call, "arguments")), &ms, &text) == 0) {
		s = xcalloc(1, sizeof *s);
		s->t = t;
		s->call_id = xstrdup(call_id != NULL ? call_id : "");
		s->at = agent_now_ms();
		s->item = json_pack("{s:s, s:s, s:I}", "type", "sleep", "id", s->call_id,
			"durationMs", (json_int_t)ms);
		agent_item_start(t, s->item, s->at);
		t->busy = 1;
		t->sleep = clock_sleep_start(t->a->c.loop, ms, agent_sleep_done, s);
	}
	if (text != NULL)
		agent_tool_output(t, call_id, 0, text);
	free(text);
}

/* Run the next call of the last response. */
void
agent_tools_next(struct agent_turn *t)
{
	agent_tools_run(t, json_array_get(t->calls, t->next++));
}

/* Run one call (every known tool is accepted, offered or not): the model's or a cell's. */
void
agent_tools_run(struct agent_turn *t, json_t *call)
{
	const char *type = json_string_value(json_object_get(call, "type"));
	const char *name = json_string_value(json_object_get(call, "name"));
	const char *call_id = json_string_value(json_object_get(call, "call_id"));
	int custom = type != NULL && strcmp(type, "custom_tool_call") == 0;
	char *text;

	if (type != NULL && strcmp(type, "local_shell_call") == 0)
		agent_shell_call(t, call, "local_shell_call");
	else if (name != NULL && strcmp(name, "apply_patch") == 0)
		agent_patch_tool(t, call, call_id, custom);
	else if (name != NULL && !custom &&
		(strcmp(name, "exec_command") == 0 || strcmp(name, "shell") == 0 ||
			strcmp(name, "shell_command") == 0 || strcmp(name, "container.exec") == 0))
		agent_shell_call(t, call, strcmp(name, "container.exec") == 0 ? "shell" : name);
	else if (name != NULL && !custom && strcmp(name, "write_stdin") == 0)
		agent_shell_write_stdin(t, call);
	else if (name != NULL && !custom && strcmp(name, "update_plan") == 0)
		agent_update_plan(t, call, call_id);
	else if (name != NULL && !custom &&
		strcmp(json_string_value(json_object_get(call, "namespace")) ?: "", CLOCK_NS) == 0)
		agent_clock_call(t, call, call_id, name);
	else if (name != NULL && !custom && strcmp(name, "view_image") == 0)
		agent_view_image(t, call, call_id);
	else if (name != NULL && !custom && strcmp(name, "request_user_input") == 0)
		agent_user_input_call(t, call, call_id);
	else if (name != NULL && !custom && (t->o.tools & TOOL_SPECS_GOALS) && t->sink->tool &&
		(text = t->sink->tool(
			 t->arg, name, json_string_value(json_object_get(call, "arguments"))))) {
		agent_tool_output(t, call_id, 0, text);
		free(text);
	} else if (!custom && agent_mcp_call(t, call, call_id))
		; /* under way, with the response's next MCP calls */
	else if (!custom && agent_dynamic_call(t, call, call_id)) {
		/* The response's next dynamic calls go out at once, as upstream's run in parallel.
		 */
		json_t *nc;

		while (call == json_array_get(t->calls, t->next - 1) &&
			(nc = json_array_get(t->calls, t->next)) != NULL &&
			strcmp(json_string_value(json_object_get(nc, "type")) ?: "",
				"function_call") == 0 &&
			dynamic_tools_find(t->a->dynamic_tools,
				json_string_value(json_object_get(nc, "namespace")),
				json_string_value(json_object_get(nc, "name"))) != NULL) {
			t->next++;
			agent_dynamic_call(
				t, nc, json_string_value(json_object_get(nc, "call_id")));
		}
	} else if (agent_codemode_call(t, call, call_id, custom))
		; /* answered by its cell */
	else {
		text = tool_output_unsupported(name != NULL ? name : "", custom);
		agent_tool_output(t, call_id, custom, text);
		free(text);
	}
	agent_kick(t);
}

/* Input added with turn/steer: a user message item and the model's next input. */
void
agent_steer_flush(struct agent_turn *t)
{
	json_t *user, *item;
	char *cause = NULL, uid[37];
	int64_t now = agent_now_ms();

	if (t->steer == NULL)
		return;
	if ((user = agent_user_message(t->steer, &cause)) != NULL) {
		uuidv7_new(uid);
		item = agent_user_item(t->steer, uid);
		agent_item_start(t, item, now);
		agent_item_complete(t, item, now);
		json_decref(item);
		agent_record_response(t->a, user);
		agent_history_add(t->a, user);
	}
	free(cause);
	json_decref(t->steer);
	t->steer = NULL;
}

/*
 * The compaction response arrived: the history becomes the summary (the first user messages
 * kept as they were), with a contextCompaction item and a `compacted` record.
 */
void
agent_compact_done(struct agent_turn *t)
{
	struct agent *a = t->a;
	json_t *kept = json_array(), *item, *rec, *history;
	char id[37], *summary = history_items_text(t->response_items, AGENT_TEXT_MAX);
	int64_t now = agent_now_ms();

	json_array_clear(t->response_items);
	history = agent_history_items(a);
	history_items_compact_keep(history, AGENT_COMPACT_KEEP, kept);
	json_decref(history);
	json_array_append_new(kept, prompt_text_message("user", summary));
	rec = json_pack("{s:s, s:O}", "message", summary, "replacement_history", kept);
	if (a->c.thread != NULL)
		store_append_record(a->c.thread, "compacted", rec);
	json_decref(rec);
	agent_set_history(a, kept);
	free(summary);
	uuidv7_new(id);
	item = json_pack("{s:s, s:s}", "type", "contextCompaction", "id", id);
	agent_item_start(t, item, now);
	agent_item_complete(t, item, now);
	json_decref(item);
	t->compacting = 0;
	t->last.input = 0;
	if (t->compact_only)
		t->phase = PHASE_ENDING;
	else {
		t->phase = PHASE_MODEL;
		t->need_model = 1;
	}
	agent_kick(t);
}
