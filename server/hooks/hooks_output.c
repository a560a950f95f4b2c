/*
 * A command hook's outcome as upstream 0.169 reads it (recorded in
 * tests/fixtures/hooks/upstream/): exit 0 with a JSON object on stdout is the structured
 * answer (`decision: "block"` with `reason`, `hookSpecificOutput.additionalContext`,
 * `continue: false` with `stopReason`, `systemMessage`); exit 0 with plain text is context for
 * SessionStart and UserPromptSubmit; exit 2 blocks with stderr as the feedback; any other exit
 * fails the run ("hook exited with code N").
 */
#include <stdlib.h>
#include <string.h>

#include "hooks.h"
#include "protocol/xmalloc.h"

/* text without surrounding whitespace (heap). */
static char *
hooks_trim(const char *text)
{
	size_t n;

	text += strspn(text, " \t\r\n");
	n = strlen(text);
	while (n > 0 && strchr(" \t\r\n", text[n - 1]) != NULL)
		n--;
	return xstrndup(text, n);
}

static void
hooks_entry(struct hook_outcome *o, const char *kind, const char *text)
{
	json_array_append_new(o->entries, json_pack("{s:s, s:s}", "kind", kind, "text", text));
}

/* Whether the event's plain stdout is context for the model (upstream's two prompt events). */
static int
hooks_plain_is_context(enum hook_event e)
{
	return e == HOOK_SESSION_START || e == HOOK_USER_PROMPT_SUBMIT;
}

/* Whether the event can block (a decision or exit 2 stops what it guards). */
static int
hooks_can_block(enum hook_event e)
{
	return e == HOOK_USER_PROMPT_SUBMIT || e == HOOK_STOP || e == HOOK_PRE_TOOL_USE ||
		e == HOOK_POST_TOOL_USE;
}

/* The structured answer of a JSON object on stdout. */
static void
hooks_parse_json(enum hook_event e, const json_t *j, struct hook_outcome *o)
{
	const json_t *spec = json_object_get(j, "hookSpecificOutput");
	const char *ctx = json_string_value(json_object_get(spec, "additionalContext"));
	const char *decision = json_string_value(json_object_get(j, "decision"));
	const char *reason = json_string_value(json_object_get(j, "reason"));
	const char *sys = json_string_value(json_object_get(j, "systemMessage"));

	if (sys != NULL)
		hooks_entry(o, "warning", sys);
	if (json_is_false(json_object_get(j, "continue")) && e == HOOK_PRE_TOOL_USE) {
		/* upstream 0.169 refuses it there: the run fails, the tool runs */
		o->status = "failed";
		hooks_entry(o, "error", "PreToolUse hook returned unsupported continue:false");
		return;
	}
	if (json_is_false(json_object_get(j, "continue"))) {
		const char *why = json_string_value(json_object_get(j, "stopReason"));

		o->status = "stopped";
		hooks_entry(o, "stop", why != NULL ? why : "");
		o->feedback = xstrdup(why != NULL ? why : "");
		return;
	}
	if (decision != NULL && strcmp(decision, "block") == 0 && hooks_can_block(e) &&
		reason != NULL && reason[0] != '\0') {
		o->status = "blocked";
		hooks_entry(o, "feedback", reason);
		o->feedback = xstrdup(reason);
		return;
	}
	if (ctx != NULL && ctx[0] != '\0') {
		hooks_entry(o, "context", ctx);
		o->context = xstrdup(ctx);
	}
}

void
hooks_outcome_parse(enum hook_event e, int exit_code, int timed_out, long long timeout,
	const char *out, const char *err, struct hook_outcome *o)
{
	char *text = NULL, *msg;
	json_t *j;

	memset(o, 0, sizeof *o);
	o->status = "completed";
	o->entries = json_array();
	if (timed_out) {
		o->status = "failed";
		msg = xasprintf("hook timed out after %llds", timeout);
		hooks_entry(o, "error", msg);
		free(msg);
		return;
	}
	if (exit_code == 2 && hooks_can_block(e)) {
		text = hooks_trim(err != NULL ? err : "");
		if (text[0] != '\0') {
			o->status = "blocked";
			hooks_entry(o, "feedback", text);
			o->feedback = text;
			return;
		}
		free(text);
		text = NULL;
	}
	if (exit_code != 0) {
		o->status = "failed";
		msg = xasprintf("hook exited with code %d", exit_code);
		hooks_entry(o, "error", msg);
		free(msg);
		return;
	}
	text = hooks_trim(out != NULL ? out : "");
	if (text[0] == '{' && (j = json_loads(text, 0, NULL)) != NULL && json_is_object(j)) {
		hooks_parse_json(e, j, o);
		json_decref(j);
	} else if (text[0] != '\0' && hooks_plain_is_context(e)) {
		hooks_entry(o, "context", text);
		o->context = xstrdup(text);
	}
	free(text);
}

void
hooks_outcome_free(struct hook_outcome *o)
{
	json_decref(o->entries);
	free(o->context);
	free(o->feedback);
	memset(o, 0, sizeof *o);
}
