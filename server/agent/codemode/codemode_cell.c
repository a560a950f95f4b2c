/*
 * Code mode's pure texts: the pragma, a cell's output items, and the values nested tools give
 * JavaScript (codemode_cell.h). The words are upstream 0.169's, recorded in
 * tests/fixtures/codemode/upstream/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codemode_cell.h"
#include "agent/tools/tool_output.h"
#include "protocol/xmalloc.h"

#define PRAGMA "// @exec:"

int
codemode_pragma_parse(const char *input, struct codemode_pragma *p, const char **code, char **cause)
{
	const char *nl, *s = input;
	json_t *o, *v;
	json_error_t err;

	p->yield_ms = CODEMODE_YIELD_MS;
	p->max_tokens = CODEMODE_MAX_TOKENS;
	*code = input;
	while (*s == ' ' || *s == '\t')
		s++;
	if (strncmp(s, PRAGMA, strlen(PRAGMA)) != 0)
		return 0;
	s += strlen(PRAGMA);
	nl = strchr(s, '\n');
	o = json_loadb(s, nl != NULL ? (size_t)(nl - s) : strlen(s), 0, &err);
	if (!json_is_object(o)) {
		*cause = xasprintf(
			"invalid exec pragma: %s", o == NULL ? err.text : "expected a JSON object");
		json_decref(o);
		return -1;
	}
	if ((v = json_object_get(o, "yield_time_ms")) != NULL) {
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			*cause = xstrdup("invalid exec pragma: yield_time_ms must be a "
					 "non-negative integer");
			json_decref(o);
			return -1;
		}
		p->yield_ms = json_integer_value(v);
	}
	if ((v = json_object_get(o, "max_output_tokens")) != NULL) {
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			*cause = xstrdup("invalid exec pragma: max_output_tokens must be a "
					 "non-negative integer");
			json_decref(o);
			return -1;
		}
		p->max_tokens = (size_t)json_integer_value(v);
	}
	json_decref(o);
	*code = nl != NULL ? nl + 1 : s + strlen(s);
	return 0;
}

/* One input_text item. */
static json_t *
cell_text(const char *text, size_t len)
{
	return json_pack("{s:s, s:s%}", "type", "input_text", "text", text, len);
}

json_t *
codemode_output(enum codemode_state st, const char *cell_id, double wall_s, const json_t *items,
	size_t max_tokens, const char *error)
{
	static const char *const heads[] = {
		"Script completed", "Script failed", NULL, "Script terminated"};
	struct tool_trunc p = {TOOL_TRUNC_TOKENS, max_tokens};
	json_t *out = json_array(), *it;
	char *head, *cut, *e;
	const char *text;
	size_t i, len;

	if (st == CODEMODE_RUNNING)
		head = xasprintf(
			"Script running with cell ID %s\nWall time %.1f seconds\nOutput:\n",
			cell_id, wall_s);
	else
		head = xasprintf("%s\nWall time %.1f seconds\nOutput:\n", heads[st], wall_s);
	json_array_append_new(out, cell_text(head, strlen(head)));
	free(head);
	json_array_foreach(items, i, it)
	{
		text = json_string_value(json_object_get(it, "text"));
		if (text == NULL) {
			json_array_append(out, (json_t *)it);
			continue;
		}
		/* Each text is cut as upstream cuts a tool's output: head and tail kept. */
		cut = tool_output_formatted(
			text, json_string_length(json_object_get(it, "text")), p, &len);
		json_array_append_new(out, cell_text(cut, len));
		free(cut);
	}
	if (error != NULL) {
		e = xasprintf("Script error:\n%s", error);
		json_array_append_new(out, cell_text(e, strlen(e)));
		free(e);
	}
	return out;
}

/* The value after "<key>: " on a line of text, or NULL. */
static const char *
cell_field(const char *text, const char *key, size_t *len)
{
	size_t k = strlen(key);
	const char *s = text, *nl;

	while (s != NULL && *s != '\0') {
		if (strncmp(s, "Output:\n", 8) == 0)
			return NULL; /* the header ends here */
		nl = strchr(s, '\n');
		if (strncmp(s, key, k) == 0 && s[k] == ':' && s[k + 1] == ' ') {
			*len = nl != NULL ? (size_t)(nl - s - k - 2) : strlen(s + k + 2);
			return s + k + 2;
		}
		s = nl != NULL ? nl + 1 : NULL;
	}
	return NULL;
}

/* exec_command's text back into its fields (keys in upstream's order). */
static json_t *
cell_exec_value(const char *text)
{
	const char *v, *out = strstr(text, "Output:\n");
	json_t *o = json_object();
	size_t len;
	char *tmp;

	if (out == NULL) {
		json_decref(o);
		return json_string(text); /* a refusal or an error: its words */
	}
	if ((v = cell_field(text, "Chunk ID", &len)) != NULL)
		json_object_set_new(o, "chunk_id", json_stringn(v, len));
	if ((v = cell_field(text, "Wall time", &len)) != NULL)
		json_object_set_new(o, "wall_time_seconds", json_real(strtod(v, NULL)));
	if ((v = strstr(text, "Process exited with code ")) != NULL && v < out)
		json_object_set_new(o, "exit_code",
			json_integer(strtol(v + strlen("Process exited with code "), NULL, 10)));
	if ((v = strstr(text, "Process running with session ID ")) != NULL && v < out) {
		v += strlen("Process running with session ID ");
		tmp = xstrndup(v, strcspn(v, "\n"));
		json_object_set_new(o, "session_id", json_integer(strtol(tmp, NULL, 10)));
		free(tmp);
	}
	if ((v = cell_field(text, "Original token count", &len)) != NULL)
		json_object_set_new(o, "original_token_count", json_integer(strtol(v, NULL, 10)));
	json_object_set_new(o, "output", json_string(out + strlen("Output:\n")));
	return o;
}

json_t *
codemode_tool_value(const char *tool, const char *text)
{
	if (strcmp(tool, "exec_command") == 0 || strcmp(tool, "write_stdin") == 0)
		return cell_exec_value(text);
	if (strcmp(tool, "apply_patch") == 0 && strstr(text, "Output:\nSuccess.") != NULL)
		return json_object(); /* upstream gives the script an empty object */
	if (codemode_tool_is_goal(tool) && text[0] == '{')
		return json_loads(text, 0, NULL) ?: json_string(text); /* the goal, as an object */
	return json_string(text);
}

int
codemode_tool_is_goal(const char *tool)
{
	return strcmp(tool, "get_goal") == 0 || strcmp(tool, "create_goal") == 0 ||
		strcmp(tool, "update_goal") == 0;
}
