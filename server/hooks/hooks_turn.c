/*
 * The hooks at a turn's points (hooks_turn.h): each step builds the event's stdin as upstream
 * 0.169 does (recorded: session_id, turn_id, transcript_path, cwd, hook_event_name, model,
 * permission_mode, then the event's own fields), runs it on hooks_run.c and turns the outcome
 * into history items and a verdict for the agent.
 */
#include <stdlib.h>
#include <string.h>

#include "hooks_tool.h"
#include "hooks_turn.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

enum hooks_step_kind {
	STEP_PROMPT,
	STEP_STOP,
	STEP_END,
	STEP_PRE_TOOL,
	STEP_POST_TOOL,
	STEP_PERMISSION
};

struct hooks_step {
	enum hooks_step_kind kind;
	struct ev_loop *loop;
	struct hook_set *set;
	char *session_id, *turn_id, *transcript_path, *cwd, *model;
	const char *permission_mode;
	struct hooks_run *run;
	struct hooks_step_report r;
	void *arg;
	/* prompt */
	json_t *input;	/* the turn's new items */
	json_t *before; /* SessionStart's contexts */
	char *prompt;
	int ups; /* UserPromptSubmit runs (else SessionStart) */
	/* stop */
	char *item_id;
	/* tools: the call as the hooks see it, and (PostToolUse) its output item */
	char *call_id;
	struct hooks_tool tool;
	json_t *output;
	struct hooks_step *next; /* detached steps (SessionEnd) */
};

static struct hooks_step *hooks_detached;

static char *
hooks_dup(const char *s)
{
	return s != NULL ? xstrdup(s) : NULL;
}

static struct hooks_step *
hooks_step_new(const struct hooks_ctx *c, enum hooks_step_kind kind,
	const struct hooks_step_report *r, void *arg)
{
	struct hooks_step *s = xcalloc(1, sizeof *s);
	const char *ap = json_string_value(c->approval_policy);

	s->kind = kind;
	s->loop = c->loop;
	s->set = hooks_ref((struct hook_set *)c->set);
	s->session_id = hooks_dup(c->session_id);
	s->turn_id = hooks_dup(c->turn_id);
	s->transcript_path = hooks_dup(c->transcript_path);
	s->cwd = hooks_dup(c->cwd != NULL ? c->cwd : "/");
	s->model = hooks_dup(c->model);
	/* upstream says bypassPermissions when nothing is ever asked (approval "never") */
	s->permission_mode =
		ap != NULL && strcmp(ap, "never") == 0 ? "bypassPermissions" : "default";
	if (r != NULL)
		s->r = *r;
	s->arg = arg;
	s->before = json_array();
	return s;
}

void
hooks_step_free(struct hooks_step *s)
{
	if (s == NULL)
		return;
	hooks_run_free(s->run);
	hooks_unref(s->set);
	free(s->session_id);
	free(s->turn_id);
	free(s->transcript_path);
	free(s->cwd);
	free(s->model);
	json_decref(s->input);
	json_decref(s->before);
	free(s->prompt);
	free(s->item_id);
	free(s->call_id);
	hooks_tool_clear(&s->tool);
	json_decref(s->output);
	free(s);
}

/* The common part of an event's stdin, in upstream's order (new reference). */
static json_t *
hooks_input(const struct hooks_step *s, enum hook_event e)
{
	json_t *in = json_object();

	json_object_set_new(in, "session_id", json_string(s->session_id));
	if (s->turn_id != NULL && e != HOOK_SESSION_START && e != HOOK_SESSION_END)
		json_object_set_new(in, "turn_id", json_string(s->turn_id));
	json_object_set_new(in, "transcript_path",
		s->transcript_path != NULL ? json_string(s->transcript_path) : json_null());
	json_object_set_new(in, "cwd", json_string(s->cwd));
	json_object_set_new(in, "hook_event_name", json_string(hooks_event_config_name(e)));
	if (e != HOOK_SESSION_END) { /* upstream's SessionEnd carries neither */
		json_object_set_new(in, "model", json_string(s->model != NULL ? s->model : ""));
		json_object_set_new(in, "permission_mode", json_string(s->permission_mode));
	}
	return in;
}

static void hooks_step_summary(void *arg, const char *method, json_t *run);
static void hooks_step_done(void *arg, json_t *contexts, int blocked, json_t *feedback);

static const struct hooks_report hooks_step_report = {hooks_step_summary, hooks_step_done};

/* Run the event (input stolen); 0 when a hook runs, -1 when none matched. */
static int
hooks_step_run(struct hooks_step *s, enum hook_event e, const char *subject, json_t *input)
{
	s->run = hooks_run_start(s->loop, s->set, e, subject, s->cwd, input,
		e != HOOK_SESSION_START && e != HOOK_SESSION_END, s->call_id, &hooks_step_report,
		s);
	json_decref(input);
	return s->run != NULL ? 0 : -1;
}

static void
hooks_step_summary(void *arg, const char *method, json_t *run)
{
	struct hooks_step *s = arg;

	if (s->r.summary != NULL)
		s->r.summary(s->arg, method, run);
}

/* A developer message for the model. */
static json_t *
hooks_developer(const char *text)
{
	return json_pack("{s:s, s:s, s:[{s:s, s:s}]}", "type", "message", "role", "developer",
		"content", "type", "input_text", "text", text);
}

/* UserPromptSubmit for the prompt step; -1 when none runs. */
static int
hooks_prompt_submit(struct hooks_step *s)
{
	json_t *in = hooks_input(s, HOOK_USER_PROMPT_SUBMIT);

	json_object_set_new(in, "prompt", json_string(s->prompt));
	return hooks_step_run(s, HOOK_USER_PROMPT_SUBMIT, NULL, in);
}

/* The prompt step's end: the history's new items, or the turn ends (a block). */
static void
hooks_prompt_finish(struct hooks_step *s, const json_t *after, int blocked)
{
	struct hooks_result res = {blocked ? HOOKS_END : HOOKS_GO_ON, json_array(), NULL};
	const json_t *v;
	size_t i;

	if (!blocked) {
		json_array_foreach(s->before, i, v)
			json_array_append_new(res.items, hooks_developer(json_string_value(v)));
		json_array_extend(res.items, s->input);
		json_array_foreach(after, i, v)
			json_array_append_new(res.items, hooks_developer(json_string_value(v)));
	}
	s->r.done(s->arg, &res);
	json_decref(res.items);
	hooks_step_free(s);
}

/* The stop step's end: a block asks the model again with the hooks' reasons. */
static void
hooks_stop_finish(struct hooks_step *s, int blocked, const json_t *feedback)
{
	struct hooks_result res = {HOOKS_END, json_array(), NULL};
	struct buf text;
	const json_t *f;
	size_t i;

	if (blocked == HOOKS_BLOCKED && json_array_size(feedback) > 0) {
		buf_init(&text, SIZE_MAX);
		json_array_foreach(feedback, i, f)
		{
			if (i > 0)
				buf_adds(&text, "\n");
			buf_adds(&text, "<hook_prompt hook_run_id=\"");
			buf_adds(&text, json_string_value(json_object_get(f, "hookRunId")));
			buf_adds(&text, "\">");
			buf_adds(&text, json_string_value(json_object_get(f, "text")));
			buf_adds(&text, "</hook_prompt>");
		}
		res.verdict = HOOKS_AGAIN;
		json_array_append_new(res.items,
			json_pack("{s:s, s:s, s:s, s:[{s:s, s:s}]}", "type", "message", "id",
				s->item_id, "role", "user", "content", "type", "input_text", "text",
				buf_str(&text)));
		res.item = json_pack("{s:s, s:s, s:O}", "type", "hookPrompt", "id", s->item_id,
			"fragments", feedback);
		buf_free(&text);
	}
	s->r.done(s->arg, &res);
	json_decref(res.items);
	json_decref(res.item);
	hooks_step_free(s);
}

/*
 * A tool step's end: the contexts as developer messages, then (PostToolUse) the call's output;
 * a PreToolUse block answers the call instead of running it, as upstream words it.
 */
static void
hooks_tool_finish(struct hooks_step *s, const json_t *contexts, int blocked, const json_t *feedback)
{
	struct hooks_result res = {HOOKS_GO_ON, json_array(), NULL};
	const json_t *v;
	size_t i;

	json_array_foreach(contexts, i, v)
		json_array_append_new(res.items, hooks_developer(json_string_value(v)));
	if (s->kind == STEP_POST_TOOL && (blocked == HOOKS_STOPPED || blocked == HOOKS_BLOCKED)) {
		/* upstream's model hears the stopReason (or the block's reason) instead of the
		 * output, and goes on */
		v = json_object_get(json_array_get(feedback, 0), "text");
		json_array_append_new(res.items, json_deep_copy(s->output));
		json_object_set_new(json_array_get(res.items, json_array_size(res.items) - 1),
			"output", json_string(json_is_string(v) ? json_string_value(v) : ""));
	} else if (s->kind == STEP_POST_TOOL)
		json_array_append(res.items, s->output);
	else if (blocked == HOOKS_BLOCKED) {
		/* upstream answers with the first blocking hook's reason */
		v = json_object_get(json_array_get(feedback, 0), "text");
		res.verdict = HOOKS_END;
		json_array_append_new(res.items,
			hooks_tool_blocked(
				&s->tool, json_is_string(v) ? json_string_value(v) : ""));
	}
	s->r.done(s->arg, &res);
	json_decref(res.items);
	hooks_step_free(s);
}

static void
hooks_step_done(void *arg, json_t *contexts, int blocked, json_t *feedback)
{
	struct hooks_step *s = arg;
	struct hooks_step **p;

	hooks_run_free(s->run); /* hooks_run.c touches nothing of it after done */
	s->run = NULL;
	switch (s->kind) {
	case STEP_PROMPT:
		if (!s->ups && blocked == HOOKS_STOPPED) {
			hooks_prompt_finish(s, NULL, 1); /* continue: false: the turn ends there */
			return;
		}
		if (!s->ups) {
			/* SessionStart ended: its contexts wait, UserPromptSubmit runs next */
			s->ups = 1;
			json_array_extend(s->before, contexts);
			if (hooks_prompt_submit(s) != 0)
				hooks_prompt_finish(s, NULL, 0);
			return;
		}
		hooks_prompt_finish(s, contexts, blocked);
		return;
	case STEP_STOP:
		hooks_stop_finish(s, blocked, feedback);
		return;
	case STEP_PRE_TOOL:
	case STEP_POST_TOOL:
		hooks_tool_finish(s, contexts, blocked, feedback);
		return;
	case STEP_PERMISSION: {
		/* any deny wins (its first message), else an allow, else no decision */
		struct hooks_result res = {blocked == HOOKS_BLOCKED ? HOOKS_DENY
				: blocked == HOOKS_ALLOWED	    ? HOOKS_ALLOW
								    : HOOKS_GO_ON,
			NULL, NULL,
			json_string_value(json_object_get(json_array_get(feedback, 0), "text"))};

		s->r.done(s->arg, &res);
		hooks_step_free(s);
		return;
	}
	case STEP_END:
		for (p = &hooks_detached; *p != NULL; p = &(*p)->next)
			if (*p == s) {
				*p = s->next;
				break;
			}
		hooks_step_free(s);
		return;
	}
}

struct hooks_step *
hooks_prompt_start(const struct hooks_ctx *c, const char *session_start, const json_t *input,
	const char *prompt, const struct hooks_step_report *r, void *arg)
{
	struct hooks_step *s;
	json_t *in;

	if (hooks_count(c->set, HOOK_SESSION_START) +
			hooks_count(c->set, HOOK_USER_PROMPT_SUBMIT) ==
		0)
		return NULL;
	s = hooks_step_new(c, STEP_PROMPT, r, arg);
	s->input = json_deep_copy(input);
	s->prompt = xstrdup(prompt != NULL ? prompt : "");
	if (session_start != NULL) {
		in = hooks_input(s, HOOK_SESSION_START);
		json_object_set_new(in, "source", json_string(session_start));
		if (hooks_step_run(s, HOOK_SESSION_START, session_start, in) == 0)
			return s;
	}
	s->ups = 1;
	if (hooks_prompt_submit(s) == 0)
		return s;
	hooks_step_free(s);
	return NULL;
}

struct hooks_step *
hooks_stop_start(const struct hooks_ctx *c, int active, const char *last_message,
	const char *item_id, const struct hooks_step_report *r, void *arg)
{
	struct hooks_step *s;
	json_t *in;

	if (hooks_count(c->set, HOOK_STOP) == 0)
		return NULL;
	s = hooks_step_new(c, STEP_STOP, r, arg);
	s->item_id = xstrdup(item_id);
	in = hooks_input(s, HOOK_STOP);
	json_object_set_new(in, "stop_hook_active", json_boolean(active));
	json_object_set_new(in, "last_assistant_message",
		last_message != NULL ? json_string(last_message) : json_null());
	if (hooks_step_run(s, HOOK_STOP, NULL, in) == 0)
		return s;
	hooks_step_free(s);
	return NULL;
}

void
hooks_session_end(const struct hooks_ctx *c)
{
	struct hooks_step *s;
	json_t *in;

	if (hooks_count(c->set, HOOK_SESSION_END) == 0)
		return;
	s = hooks_step_new(c, STEP_END, NULL, NULL);
	in = hooks_input(s, HOOK_SESSION_END);
	json_object_set_new(in, "reason", json_string("other"));
	if (hooks_step_run(s, HOOK_SESSION_END, "other", in) != 0) {
		hooks_step_free(s);
		return;
	}
	s->next = hooks_detached;
	hooks_detached = s;
}

int
hooks_detached_live(void)
{
	return hooks_detached != NULL;
}

int
hooks_tool_seen(const struct hook_set *set, const json_t *call)
{
	struct hooks_tool t;

	if (hooks_count(set, HOOK_PRE_TOOL_USE) + hooks_count(set, HOOK_POST_TOOL_USE) +
				hooks_count(set, HOOK_PERMISSION_REQUEST) ==
			0 ||
		hooks_tool_read(call, &t) != 0)
		return 0;
	hooks_tool_clear(&t);
	return 1;
}

struct hooks_step *
hooks_permission_start(const struct hooks_ctx *c, const char *call_id, const json_t *call,
	const char *patch, const struct hooks_step_report *r, void *arg)
{
	struct hooks_tool t;
	struct hooks_step *s;
	json_t *in, *args, *tin;
	const char *why, *name;

	if (hooks_count(c->set, HOOK_PERMISSION_REQUEST) == 0 ||
		(patch == NULL && hooks_tool_read(call, &t) != 0))
		return NULL;
	if (patch == NULL && t.kind == HOOKS_TOOL_PATCH) { /* the patch's text comes verified */
		hooks_tool_clear(&t);
		return NULL;
	}
	s = hooks_step_new(c, STEP_PERMISSION, r, arg);
	s->call_id = xstrdup(call_id != NULL ? call_id : "");
	if (patch != NULL)
		tin = json_pack("{s:s}", "command", patch);
	else if (t.kind == HOOKS_TOOL_MCP) { /* its name and arguments, as PreToolUse's */
		s->tool = t;
		tin = json_incref(s->tool.input);
	} else {
		s->tool = t;
		tin = json_pack("{s:s}", "command", s->tool.command);
		args = json_loads(json_string_value(json_object_get(call, "arguments")), 0, NULL);
		why = json_string_value(json_object_get(args, "justification"));
		if (why != NULL) /* upstream's on-request escalation carries it */
			json_object_set_new(tin, "description", json_string(why));
		json_decref(args);
	}
	in = hooks_input(s, HOOK_PERMISSION_REQUEST);
	name = patch != NULL			 ? "apply_patch"
		: s->tool.kind == HOOKS_TOOL_MCP ? s->tool.name
						 : "Bash";
	json_object_set_new(in, "tool_name", json_string(name));
	json_object_set_new(in, "tool_input", tin);
	if (hooks_step_run(s, HOOK_PERMISSION_REQUEST, name, in) == 0)
		return s;
	hooks_step_free(s);
	return NULL;
}

struct hooks_step *
hooks_tool_start(const struct hooks_ctx *c, const json_t *call, const json_t *output,
	const json_t *result, const struct hooks_step_report *r, void *arg)
{
	enum hook_event e = output != NULL ? HOOK_POST_TOOL_USE : HOOK_PRE_TOOL_USE;
	struct hooks_tool t;
	struct hooks_step *s;
	json_t *in;

	if (hooks_count(c->set, e) == 0 || hooks_tool_read(call, &t) != 0)
		return NULL;
	s = hooks_step_new(c, output != NULL ? STEP_POST_TOOL : STEP_PRE_TOOL, r, arg);
	s->tool = t;
	s->call_id = xstrdup(t.call_id);
	s->output = json_incref((json_t *)output);
	in = hooks_input(s, e);
	json_object_set_new(in, "tool_name", json_string(t.name));
	json_object_set_new(in, "tool_input", json_incref(t.input));
	if (output != NULL)
		json_object_set_new(in, "tool_response", hooks_tool_response(&t, output, result));
	json_object_set_new(in, "tool_use_id", json_string(s->call_id));
	if (hooks_step_run(s, e, t.name, in) == 0)
		return s;
	hooks_step_free(s);
	return NULL;
}

char *
hooks_prompt_text(const json_t *input)
{
	struct buf b;
	const json_t *v;
	size_t i;
	char *s;

	buf_init(&b, SIZE_MAX);
	json_array_foreach(input, i, v)
	{
		const char *text = json_string_value(json_object_get(v, "text"));

		if (text != NULL && b.len > 0)
			buf_adds(&b, "\n");
		if (text != NULL)
			buf_adds(&b, text);
	}
	s = xstrdup(buf_str(&b));
	buf_free(&b);
	return s;
}

char *
hooks_last_answer(const json_t *items)
{
	const json_t *it, *part;
	const char *role, *last = NULL;
	size_t i, j;

	json_array_foreach(items, i, it)
	{
		role = json_string_value(json_object_get(it, "role"));
		if (role == NULL || strcmp(role, "assistant") != 0)
			continue;
		json_array_foreach(json_object_get(it, "content"), j,
			part) if (json_is_string(json_object_get(part, "text"))) last =
			json_string_value(json_object_get(part, "text"));
	}
	return last != NULL ? xstrdup(last) : NULL;
}
