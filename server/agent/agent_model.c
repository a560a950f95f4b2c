/*
 * The model side of a turn: one streamed request at a time (model/model.h), and its events
 * turned into items as upstream reports them:
 *  - an assistant message: item/started (empty text, or its whole text when the model sent no
 *    delta), item/agentMessage/delta per delta, item/completed with the text;
 *  - reasoning: item/started, summaryPartAdded / summaryTextDelta / textDelta, item/completed
 *    with the summary and content strings;
 *  - function, custom and local shell calls: kept for the tools, run once the response
 *    completed; the response's items join the history, then each call's output.
 * A retry is reported as an `error` with willRetry and what the failed attempt streamed is
 * completed as it stands but kept out of the history. Usage is reported after each response.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "agent/prompt/model_items.h"
#include "agent/codemode/codemode_tools.h"
#include "agent/tools/dynamic_tools.h"
#include "mcp/mcp_tools.h"
#include "agent/tools/tool_specs.h"
#include "io/http.h"
#include "io/log.h"
#include "model/model.h"
#include "protocol/xmalloc.h"
#include "thread/store/store.h"
#include "thread/uuidv7.h"

static void agent_model_cb(void *arg, const struct model_event *ev);

/* Start reporting a streamed item (once). */
static void
agent_stream_start(struct agent_turn *t, struct agent_stream_item *s, int kind, const char *id)
{
	json_t *item;

	if (s->started)
		return;
	s->started = 1;
	s->kind = kind;
	snprintf(s->id, sizeof s->id, "%s", id);
	s->started_ms = agent_now_ms();
	json_decref(s->summary);
	json_decref(s->content);
	s->summary = json_array();
	s->content = json_array();
	item = kind == 0 ? model_items_message(s->id, buf_str(&s->text))
			 : model_items_reasoning(s->id, s->summary, s->content);
	agent_item_start(t, item, s->started_ms);
	json_decref(item);
}

/* Complete a streamed item with what it has (text, summary, content). */
static void
agent_stream_end(struct agent_turn *t, struct agent_stream_item *s)
{
	json_t *item;

	if (!s->started)
		return;
	s->started = 0;
	if (s->kind == 0)
		item = model_items_message(s->id, buf_str(&s->text));
	else
		item = model_items_reasoning(s->id, s->summary, s->content);
	agent_item_complete(t, item, s->started_ms);
	json_decref(item);
	buf_reset(&s->text);
	s->synth = 0;
}

/* Complete whatever is streaming (a cut response, the end of a turn). */
void
agent_stream_finish(struct agent_turn *t)
{
	agent_stream_end(t, &t->msg);
	agent_stream_end(t, &t->reasoning);
}

/* A finished model item: complete its item, keep it for the history, queue tool calls. */
static void
agent_item_done(struct agent_turn *t, json_t *item)
{
	const char *type = json_string_value(json_object_get(item, "type"));
	const char *id = json_string_value(json_object_get(item, "id"));
	char gen[37];

	if (type == NULL)
		return;
	json_array_append(t->response_items, item);
	if (id == NULL) {
		uuidv7_new(gen);
		id = gen;
	}
	if (strcmp(type, "message") == 0) {
		if (!t->msg.started || (!t->msg.synth && strcmp(t->msg.id, id) != 0)) {
			agent_stream_end(t, &t->msg);
			/* No delta came: item/started already carries the whole text. */
			model_items_text(item, &t->msg.text);
			t->msg.started = 0;
			agent_stream_start(t, &t->msg, 0, id);
		}
		model_items_text(item, &t->msg.text);
		agent_stream_end(t, &t->msg);
	} else if (strcmp(type, "reasoning") == 0) {
		agent_stream_start(t, &t->reasoning, 1, id);
		json_decref(t->reasoning.summary);
		json_decref(t->reasoning.content);
		t->reasoning.summary = model_items_texts(item, "summary");
		t->reasoning.content = model_items_texts(item, "content");
		agent_stream_end(t, &t->reasoning);
	} else if (strcmp(type, "function_call") == 0 || strcmp(type, "custom_tool_call") == 0 ||
		strcmp(type, "local_shell_call") == 0) {
		if (t->calls == NULL)
			t->calls = json_array();
		json_array_append(t->calls, item);
	}
}

/* A delta for the streamed item it belongs to. */
static void
agent_delta(struct agent_turn *t, const struct model_event *ev)
{
	const char *id = ev->item_id;
	struct agent_stream_item *s = ev->kind == MODEL_EV_TEXT_DELTA ? &t->msg : &t->reasoning;
	char gen[37];
	const char *method;
	json_t *p;

	if (!s->started) {
		/* A delta before its item was announced: the item's id is not known yet. */
		if (id == NULL) {
			uuidv7_new(gen);
			id = gen;
		}
		agent_stream_start(t, s, ev->kind == MODEL_EV_TEXT_DELTA ? 0 : 1, id);
		s->synth = ev->item_id == NULL;
	}
	if (ev->kind == MODEL_EV_TEXT_DELTA)
		buf_add(&s->text, ev->delta, ev->delta_len);
	p = model_items_delta(ev, s->id, &method);
	t->sink->delta(t->arg, method, p);
	json_decref(p);
}

/* A response's usage: add it to the thread's, report and record it. */
static void
agent_usage(struct agent_turn *t, const struct model_usage *u, const char *resp_id)
{
	struct agent *a = t->a;
	struct token_totals *last = &t->last;
	json_t *tu;

	model_items_add_usage(u, last, &a->total);
	tu = json_pack("{s:o, s:o, s:I}", "total", model_items_usage(&a->total), "last",
		model_items_usage(last), "modelContextWindow", (json_int_t)t->o.context_window);
	t->sink->usage(t->arg, tu);
	json_decref(tu);
	/* upstream reports the account's rate limits with every usage, the `codex` snapshot with
	 * nulls when no response carried any */
	if (t->sink->rate_limits != NULL) {
		if (a->rate_limits == NULL)
			a->rate_limits = model_rate_limits_headers(NULL);
		t->sink->rate_limits(t->arg, a->rate_limits);
	}
	if (a->c.thread != NULL)
		store_append_tokens(a->c.thread, last, t->o.context_window, resp_id);
}

/* The response completed: its items join the history; tools next, or the turn is done. */
static void
agent_response_done(struct agent_turn *t, const struct model_event *ev)
{
	struct agent *a = t->a;
	json_t *it;
	size_t i;

	agent_stream_finish(t);
	agent_usage(t, ev->usage, ev->resp_id);
	if (t->compacting) {
		/* The summary replaces the history: the response itself is not kept. */
		agent_compact_done(t);
		return;
	}
	json_array_foreach(t->response_items, i, it)
	{
		json_t *copy = json_deep_copy(it);

		/* Reasoning goes back to the model without its id, as upstream sends it. */
		if (strcmp(json_string_value(json_object_get(copy, "type")), "reasoning") == 0)
			json_object_del(copy, "id");
		agent_record_response(a, copy);
		agent_history_add(a, copy);
	}
	if (t->calls != NULL && json_array_size(t->calls) > 0) {
		/* The calls run first; steered input goes with the request after them. */
		t->phase = PHASE_TOOLS;
		t->next = 0;
	} else if (t->steer != NULL) {
		/* Input came in while the model answered: it hears it next. */
		t->phase = PHASE_MODEL;
		t->need_model = 1;
	} else {
		t->phase = PHASE_ENDING;
		agent_hooks_stop_due(t, t->response_items); /* the Stop hooks first */
	}
	json_array_clear(t->response_items);
	agent_kick(t);
}

static void
agent_model_cb(void *arg, const struct model_event *ev)
{
	struct agent_turn *t = arg;
	json_t *err;

	switch (ev->kind) {
	case MODEL_EV_CREATED:
		break;
	case MODEL_EV_ITEM_ADDED: {
		const char *type = json_string_value(json_object_get(ev->item, "type"));
		const char *id = json_string_value(json_object_get(ev->item, "id"));

		if (type != NULL && strcmp(type, "message") == 0 && id != NULL && !t->compacting)
			agent_stream_start(t, &t->msg, 0, id);
		else if (type != NULL && strcmp(type, "reasoning") == 0 && id != NULL)
			agent_stream_start(t, &t->reasoning, 1, id);
		break;
	}
	case MODEL_EV_ITEM_DONE:
		if (t->compacting)
			json_array_append(t->response_items, ev->item);
		else
			agent_item_done(t, ev->item);
		break;
	case MODEL_EV_TEXT_DELTA:
		if (t->compacting)
			break;
		/* fall through */
	case MODEL_EV_REASONING_SUMMARY_DELTA:
	case MODEL_EV_REASONING_SUMMARY_PART:
	case MODEL_EV_REASONING_TEXT_DELTA:
		agent_delta(t, ev);
		break;
	case MODEL_EV_RETRY:
		/* What the failed attempt streamed is complete as it stands, out of the history. */
		agent_stream_finish(t);
		json_array_clear(t->response_items);
		json_decref(t->calls);
		t->calls = NULL;
		err = json_pack("{s:s, s:o}", "message", ev->error->message, "codexErrorInfo",
			model_error_info(ev->error));
		t->sink->error(t->arg, err, 1);
		json_decref(err);
		break;
	case MODEL_EV_RATE_LIMITS:
		/* kept for the account/rateLimits/updated that follows the response's usage */
		if (t->a->rate_limits == NULL)
			t->a->rate_limits = json_deep_copy(ev->item);
		else
			model_rate_limits_merge(t->a->rate_limits, ev->item);
		break;
	case MODEL_EV_COMPLETED:
		t->req = NULL; /* freed by model/ after we return */
		agent_auth_completed(t);
		agent_response_done(t, ev);
		break;
	case MODEL_EV_FAILED:
		t->req = NULL;
		agent_stream_finish(t);
		json_array_clear(t->response_items);
		if (ev->error->kind == MODEL_ERR_CONTEXT_WINDOW && !t->context_retried &&
			!t->compacting) {
			/* The history outgrew the window: compact it and ask again, once. */
			t->context_retried = 1;
			t->compacting = 1;
			t->need_model = 1;
			agent_kick(t);
			break;
		}
		if (ev->error->kind == MODEL_ERR_UNAUTHORIZED && ev->error->http_status == 401 &&
			agent_auth_unauthorized(t))
			break; /* refreshed (or reloaded) once, then asked again */
		agent_fail(t, model_items_turn_error(ev->error));
		break;
	}
}

/* Start the next model request of the turn; 0 or -1 with *cause. */
int
agent_model_request(struct agent_turn *t, char **cause)
{
	struct model_prompt pr = {0};
	json_t *input, *tools = NULL, *reasoning = NULL, *text = NULL;
	const char *headers[8];
	char *h_orig = NULL, *h_ua = NULL, *h_sess = NULL, *h_auth[2] = {NULL, NULL};
	struct model_provider prov;
	size_t nh = 0;
	int r = -1;

	switch (agent_auth_prepare(t)) {
	case 1:
		return 0; /* a refresh runs: its end asks again (agent_auth.c) */
	case -1:
		return 0; /* the turn failed with the login's error */
	}

	if (!t->compacting && t->a->hist.len > 0 && t->last.input > 0 &&
		(double)t->last.input > AGENT_COMPACT_RATIO * t->o.context_window)
		t->compacting = 1; /* near the window: compact first */
	if (t->steer != NULL)
		agent_steer_flush(t);
	input = agent_prompt_input(t);
	if (!t->compacting) {
		enum tool_wire wire =
			t->provider->wire == MODEL_WIRE_CHAT ? TOOL_WIRE_CHAT : TOOL_WIRE_RESPONSES;

		tools = tool_specs_build(t->o.tools != 0 ? t->o.tools : TOOL_SPECS_DEFAULT, wire);
		/* The client's tools follow the built-in functions, as upstream orders them. */
		dynamic_tools_append(tools, t->a->dynamic_tools, wire);
		/* then each MCP server's (mcp/mcp_tools.h) */
		mcp_tools_append(tools, t->a->mcp, wire == TOOL_WIRE_CHAT);
		if (t->o.code_mode && wire == TOOL_WIRE_RESPONSES) {
			/* upstream's code mode: all of them nested in exec, first in the input; the
			 * MCP servers' deferred, named in the developer message */
			char *deferred = codemode_tools_deferred(tools);
			json_t *dev = json_object_get(json_array_get(input, 0), "content");

			if (deferred != NULL)
				json_array_append_new(dev,
					json_pack("{s:s, s:s}", "type", "input_text", "text",
						deferred));
			free(deferred);
			json_array_insert_new(input, 0, codemode_tools_item(tools));
			agent_codemode_tools(t, tools);
			json_decref(tools);
			tools = NULL;
			pr.no_tools = 1;
		}
	}
	if (t->o.effort != NULL || t->o.summary != NULL || !t->compacting) {
		reasoning = json_object();
		if (t->o.effort != NULL)
			json_object_set_new(reasoning, "effort", json_string(t->o.effort));
		json_object_set_new(reasoning, "summary",
			json_string(t->o.summary != NULL ? t->o.summary : "auto"));
	}
	if (t->o.output_schema != NULL && !t->compacting)
		text = json_pack("{s:{s:s, s:s, s:O, s:b}}", "format", "type", "json_schema",
			"name", "codex_output_schema", "schema", t->o.output_schema, "strict", 1);
	if (t->a->c.originator != NULL)
		headers[nh++] = h_orig = xasprintf("originator: %s", t->a->c.originator);
	if (t->a->c.user_agent != NULL)
		headers[nh++] = h_ua = xasprintf("user-agent: %s", t->a->c.user_agent);
	headers[nh++] = h_sess = xasprintf("session-id: %s", t->a->c.thread_id);
	nh += agent_auth_headers(t, headers + nh, h_auth);
	headers[nh] = NULL;
	prov = *t->provider;
	if (t->auth.chatgpt)
		prov.base_url = (char *)account_chatgpt_base(t->provider); /* copied by model/ */
	pr.model = t->o.model;
	pr.input = input;
	pr.input_text = t->a->hist.ptr != NULL ? t->a->hist.ptr : "";
	pr.input_text_len = t->a->hist.len;
	pr.tools = tools;
	pr.reasoning = reasoning;
	pr.parallel_tool_calls = 0;
	pr.prompt_cache_key = t->a->c.thread_id;
	pr.text = text;
	pr.headers = headers;
	if (t->response_items == NULL)
		t->response_items = json_array();
	t->req = model_stream(t->a->c.loop, t->a->c.http, &prov, &pr, agent_model_cb, t, cause);
	agent_auth_sent(t);
	if (t->req != NULL)
		r = 0;
	json_decref(input);
	json_decref(tools);
	json_decref(reasoning);
	json_decref(text);
	free(h_orig);
	free(h_ua);
	free(h_sess);
	for (size_t i = 0; i < 2; i++) {
		if (h_auth[i] != NULL)
			explicit_bzero(h_auth[i], strlen(h_auth[i]));
		free(h_auth[i]);
	}
	return r;
}

/* Stop the running request (interrupt, steer, failure): no more events from it. */
void
agent_model_cancel(struct agent_turn *t)
{
	agent_auth_cancel(t);
	if (t->req == NULL)
		return;
	model_cancel(t->req);
	t->req = NULL;
	agent_stream_finish(t);
	if (t->response_items != NULL)
		json_array_clear(t->response_items);
	json_decref(t->calls);
	t->calls = NULL;
}
