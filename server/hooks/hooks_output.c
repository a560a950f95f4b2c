/*
 * A command hook's outcome as upstream 0.169 reads it (recorded in
 * tests/fixtures/hooks/upstream/): exit 0 with a JSON object on stdout is the structured
 * answer (`decision: "block"` with `reason`, `hookSpecificOutput.additionalContext`,
 * `continue: false` with `stopReason`, `systemMessage`); exit 0 with plain text is context for
 * SessionStart and UserPromptSubmit; exit 2 blocks with stderr as the feedback; any other exit
 * fails the run ("hook exited with code N"). PermissionRequest's JSON is read strictly, as
 * upstream's serde shape with unknown fields denied (permission.json records it).
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
		e == HOOK_POST_TOOL_USE || e == HOOK_PERMISSION_REQUEST;
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

/* Whether j's keys are all among names (NULL-terminated): upstream denies unknown fields. */
static int
hooks_keys_only(const json_t *j, const char *const *names)
{
	const char *k;
	const json_t *v;
	size_t i;

	json_object_foreach((json_t *)j, k, v)
	{
		for (i = 0; names[i] != NULL && strcmp(names[i], k) != 0; i++)
			;
		if (names[i] == NULL)
			return 0;
	}
	return 1;
}

/* A bool field with a default (absent, or a bool) and an Option<String> (absent, null, or a
 * string), as serde reads them. */
static int
hooks_opt_bool(const json_t *j, const char *key)
{
	return json_object_get(j, key) == NULL || json_is_boolean(json_object_get(j, key));
}

static int
hooks_opt_string(const json_t *j, const char *key)
{
	const json_t *v = json_object_get(j, key);

	return v == NULL || json_is_null(v) || json_is_string(v);
}

static int
hooks_event_named(const json_t *v)
{
	for (int e = 0; e < HOOK_EVENTS && json_is_string(v); e++)
		if (strcmp(json_string_value(v), hooks_event_config_name(e)) == 0)
			return 1;
	return 0;
}

/* PermissionRequest's `hookSpecificOutput.decision` when the shape holds (NULL: none). */
static int
hooks_permission_shape(const json_t *j, const json_t **decision)
{
	static const char *const top[] = {"continue", "stopReason", "suppressOutput",
		"systemMessage", "hookSpecificOutput", NULL};
	static const char *const spec_keys[] = {"hookEventName", "decision", NULL};
	static const char *const dec_keys[] = {
		"behavior", "updatedInput", "updatedPermissions", "message", "interrupt", NULL};
	const json_t *spec = json_object_get(j, "hookSpecificOutput"), *d;
	const char *b;

	*decision = NULL;
	if (!hooks_keys_only(j, top) || !hooks_opt_bool(j, "continue") ||
		!hooks_opt_string(j, "stopReason") || !hooks_opt_bool(j, "suppressOutput") ||
		!hooks_opt_string(j, "systemMessage"))
		return -1;
	if (spec == NULL || json_is_null(spec))
		return 0;
	if (!json_is_object(spec) || !hooks_keys_only(spec, spec_keys) ||
		!hooks_event_named(json_object_get(spec, "hookEventName")))
		return -1;
	d = json_object_get(spec, "decision");
	if (d == NULL || json_is_null(d))
		return 0;
	b = json_string_value(json_object_get(d, "behavior"));
	if (!json_is_object(d) || !hooks_keys_only(d, dec_keys) ||
		!hooks_opt_string(d, "message") || !hooks_opt_bool(d, "interrupt") || b == NULL ||
		(strcmp(b, "allow") != 0 && strcmp(b, "deny") != 0))
		return -1;
	*decision = d;
	return 0;
}

/* The value of an Option<Value> field: absent and null are none. */
static int
hooks_present(const json_t *j, const char *key)
{
	return json_object_get(j, key) != NULL && !json_is_null(json_object_get(j, key));
}

/*
 * PermissionRequest's JSON: a decision allows (o->allow) or denies (blocked, the message as
 * feedback, upstream's default when none); what upstream does not support there fails the run
 * and leaves the approval to the client. -1 when the shape is not upstream's.
 */
static int
hooks_parse_permission(const json_t *j, struct hook_outcome *o)
{
	const json_t *d;
	const char *why = NULL, *sys = json_string_value(json_object_get(j, "systemMessage"));
	char *msg;

	if (hooks_permission_shape(j, &d) != 0)
		return -1;
	if (sys != NULL)
		hooks_entry(o, "warning", sys);
	if (json_is_false(json_object_get(j, "continue")))
		why = "PermissionRequest hook returned unsupported continue:false";
	else if (hooks_present(j, "stopReason"))
		why = "PermissionRequest hook returned unsupported stopReason";
	else if (json_is_true(json_object_get(j, "suppressOutput")))
		why = "PermissionRequest hook returned unsupported suppressOutput";
	else if (d != NULL && hooks_present(d, "updatedInput"))
		why = "PermissionRequest hook returned unsupported updatedInput";
	else if (d != NULL && hooks_present(d, "updatedPermissions"))
		why = "PermissionRequest hook returned unsupported updatedPermissions";
	else if (d != NULL && json_is_true(json_object_get(d, "interrupt")))
		why = "PermissionRequest hook returned unsupported interrupt:true";
	if (why != NULL) {
		o->status = "failed";
		hooks_entry(o, "error", why);
	} else if (d != NULL &&
		strcmp(json_string_value(json_object_get(d, "behavior")), "allow") == 0)
		o->allow = 1;
	else if (d != NULL) {
		why = json_string_value(json_object_get(d, "message"));
		msg = hooks_trim(why != NULL ? why : "");
		if (msg[0] == '\0') {
			free(msg);
			msg = xstrdup("PermissionRequest hook denied approval");
		}
		o->status = "blocked";
		hooks_entry(o, "feedback", msg);
		o->feedback = msg;
	}
	return 0;
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
		if (e == HOOK_PERMISSION_REQUEST) {
			o->status = "failed";
			hooks_entry(o, "error",
				"PermissionRequest hook exited with code 2 but did not write a "
				"denial reason to stderr");
			return;
		}
	}
	if (exit_code != 0) {
		o->status = "failed";
		msg = xasprintf("hook exited with code %d", exit_code);
		hooks_entry(o, "error", msg);
		free(msg);
		return;
	}
	text = hooks_trim(out != NULL ? out : "");
	if (e == HOOK_PERMISSION_REQUEST && (text[0] == '{' || text[0] == '[')) {
		j = json_loads(text, 0, NULL);
		if (!json_is_object(j) || hooks_parse_permission(j, o) != 0) {
			o->status = "failed";
			hooks_entry(
				o, "error", "hook returned invalid permission-request JSON output");
		}
		json_decref(j);
	} else if (text[0] == '{' && (j = json_loads(text, 0, NULL)) != NULL && json_is_object(j)) {
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
