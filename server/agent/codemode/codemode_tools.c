/*
 * The code-mode tool list (codemode_tools.h). The texts are upstream 0.169's, as its requests
 * carry them (tests/fixtures/tools/upstream/default_model.json): the model was trained on
 * these words, so they are kept byte for byte. The exec description's head is upstream's
 * whole preamble, its paragraph on deferred tools and its "Shared MCP Types" block included:
 * upstream wrote both in every recorded request (its deferred nested tools, which we do not
 * have, are MCP-typed), and the model expects the CallToolResult type MCP declarations name.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codemode_tools.h"
#include "codemode_ts.h"
#include "protocol/buf.h"
#include "protocol/xmalloc.h"

#define CODEMODE_DESC_MAX (16u << 20) /* the exec description's ceiling */

static const char codemode_exec_head[] =
	"Run JavaScript code to orchestrate/compose tool calls\n"
	"- Evaluates the provided JavaScript code in a fresh V8 isolate as an async module.\n"
	"- All nested tools are available on the global `tools` object, for example `await tools."
	"exec_command(...)`. Tool names are exposed as normalized JavaScript identifiers, for exa"
	"mple `await tools.mcp__ologs__get_profile(...)`.\n"
	"- Nested tool methods take either a string or an object as their input argument.\n"
	"- Nested tools return either an object or a string, based on the description.\n"
	"- Runs raw JavaScript -- no Node, no file system, no network access, no console.\n"
	"- Accepts raw JavaScript source text, not JSON, quoted strings, or markdown code fences."
	"\n"
	"- You may optionally start the tool input with a first-line pragma like `// @exec: {\"yi"
	"eld_time_ms\": 10000, \"max_output_tokens\": 1000}`.\n"
	"- `yield_time_ms` asks `exec` to yield early if the script is still running. Defaults to"
	" 30000 ms.\n"
	"- `max_output_tokens` sets the token budget for direct `exec` results. Defaults to 10000"
	" tokens.\n"
	"- When the JS code is fully evaluated, the isolate's lifetime ends and unawaited promise"
	"s are silently discarded.\n"
	"\n"
	"- Global helpers:\n"
	"- `exit()`: Immediately ends the current script successfully (like an early return from "
	"the top level).\n"
	"- `text(value: string | number | boolean | undefined | null)`: Appends a text item. Non-"
	"string values are stringified with `JSON.stringify(...)` when possible.\n"
	"- `image(imageUrlOrItem: string | { image_url: string } | ImageContent)`: Appends an ima"
	"ge item. `image_url` should be a base64-encoded `data:` URL. To forward an MCP tool imag"
	"e, pass an individual `ImageContent` block from `result.content`, for example `image(res"
	"ult.content[0])`.\n"
	"- `audio(audioUrlOrItem: string | { audio_url: string } | AudioContent)`: Appends an aud"
	"io item. `audio_url` should be a base64-encoded `data:` URL. To forward an MCP tool audi"
	"o block, pass an individual `AudioContent` block from `result.content`, for example `aud"
	"io(result.content[0])`.\n"
	"- `generatedImage(result: { image_url: string; output_hint?: string })`: Appends an imag"
	"e-generation result and its optional output hint. HTTP(S) URLs are not supported.\n"
	"- `store(key: string, value: any)`: stores a serializable value under a string key for l"
	"ater `exec` calls in the same session.\n"
	"- `load(key: string)`: returns the stored value for a string key, or `undefined` if it i"
	"s missing.\n"
	"- `notify(value: string | number | boolean | undefined | null)`: immediately injects an "
	"extra `custom_tool_call_output` for the current `exec` call. Values are stringified like"
	" `text(...)`.\n"
	"- `setTimeout(callback: () => void, delayMs?: number)`: schedules a callback to run late"
	"r and returns a timeout id. Pending timeouts do not keep `exec` alive by themselves; awa"
	"it an explicit promise if you need to wait for one.\n"
	"- `clearTimeout(timeoutId?: number)`: cancels a timeout created by `setTimeout`.\n"
	"- `ALL_TOOLS`: metadata for the enabled nested tools as `{ name, description }` entries."
	"\n"
	"- `yield_control()`: yields the accumulated output to the model immediately while the sc"
	"ript keeps running.\n"
	"\n"
	"Some deferred nested tools may be omitted from this description. They are still availabl"
	"e on the global `tools` object and listed in `ALL_TOOLS`.\n"
	"To find one, filter `ALL_TOOLS` by `name` and `description`.\n"
	"\n"
	"Tool availability can change between calls.\n"
	"\n"
	"Shared MCP Types:\n"
	"```ts\n"
	"type Role = \"user\" | \"assistant\";\n"
	"type MetaObject = Record<string, unknown>;\n"
	"type Annotations = {\n"
	"  audience?: Role[];\n"
	"  priority?: number;\n"
	"  lastModified?: string;\n"
	"};\n"
	"type Icon = {\n"
	"  src: string;\n"
	"  mimeType?: string;\n"
	"  sizes?: string[];\n"
	"  theme?: \"light\" | \"dark\";\n"
	"};\n"
	"type TextResourceContents = {\n"
	"  uri: string;\n"
	"  mimeType?: string;\n"
	"  _meta?: MetaObject;\n"
	"  text: string;\n"
	"};\n"
	"type BlobResourceContents = {\n"
	"  uri: string;\n"
	"  mimeType?: string;\n"
	"  _meta?: MetaObject;\n"
	"  blob: string;\n"
	"};\n"
	"type TextContent = {\n"
	"  type: \"text\";\n"
	"  text: string;\n"
	"  annotations?: Annotations;\n"
	"  _meta?: MetaObject;\n"
	"};\n"
	"type ImageContent = {\n"
	"  type: \"image\";\n"
	"  data: string;\n"
	"  mimeType: string;\n"
	"  annotations?: Annotations;\n"
	"  _meta?: MetaObject;\n"
	"};\n"
	"type AudioContent = {\n"
	"  type: \"audio\";\n"
	"  data: string;\n"
	"  mimeType: string;\n"
	"  annotations?: Annotations;\n"
	"  _meta?: MetaObject;\n"
	"};\n"
	"type ResourceLink = {\n"
	"  icons?: Icon[];\n"
	"  name: string;\n"
	"  title?: string;\n"
	"  uri: string;\n"
	"  description?: string;\n"
	"  mimeType?: string;\n"
	"  annotations?: Annotations;\n"
	"  size?: number;\n"
	"  _meta?: MetaObject;\n"
	"  type: \"resource_link\";\n"
	"};\n"
	"type EmbeddedResource = {\n"
	"  type: \"resource\";\n"
	"  resource: TextResourceContents | BlobResourceContents;\n"
	"  annotations?: Annotations;\n"
	"  _meta?: MetaObject;\n"
	"};\n"
	"type ContentBlock =\n"
	"  | TextContent\n"
	"  | ImageContent\n"
	"  | AudioContent\n"
	"  | ResourceLink\n"
	"  | EmbeddedResource;\n"
	"type CallToolResult<TStructured = { [key: string]: unknown }> = {\n"
	"  _meta?: MetaObject;\n"
	"  content: ContentBlock[];\n"
	"  isError?: boolean;\n"
	"  structuredContent?: TStructured;\n"
	"  [key: string]: unknown;\n"
	"};\n"
	"```";

static const char codemode_exec_grammar[] = "\n"
					    "start: pragma_source | plain_source\n"
					    "pragma_source: PRAGMA_LINE NEWLINE SOURCE\n"
					    "plain_source: SOURCE\n"
					    "\n"
					    "PRAGMA_LINE: /[ \\t]*\\/\\/ @exec:[^\\r\\n]*/\n"
					    "NEWLINE: /\\r?\\n/\n"
					    "SOURCE: /[\\s\\S]+/\n";

static const char codemode_wait_spec[] =
	"{\"type\":\"function\",\"name\":\"wait\",\"description\":\"Waits on a yielded `exec` cel"
	"l and returns new output or completion.\\n- Use `wait` only after `exec` returns `Script"
	" running with cell ID ...`.\\n- `cell_id` identifies the running `exec` cell to resume.\\"
	"n- `yield_time_ms` controls how long to wait for more output before yielding again. Defa"
	"ults to 10000 ms.\\n- `max_tokens` limits how much new output this wait call returns. De"
	"faults to 10000 tokens.\\n- `terminate: true` stops the running cell; false or omitted w"
	"aits for output.\\n- `wait` returns only the new output since the last yield, or the fin"
	"al completion or termination result for that cell.\\n- If the cell is still running, `wa"
	"it` may yield again with the same `cell_id`.\\n- If the cell has already finished, `wait"
	"` returns the completed result and closes the cell.\",\"strict\":false,\"parameters\":{\""
	"type\":\"object\",\"properties\":{\"cell_id\":{\"type\":\"string\",\"description\":\"Ide"
	"ntifier of the running exec cell.\"},\"max_tokens\":{\"type\":\"number\",\"description\""
	":\"Output token budget for this wait call. Defaults to 10000 tokens.\"},\"terminate\":{\""
	"type\":\"boolean\",\"description\":\"True stops the running exec cell; false or omitted "
	"waits for output.\"},\"yield_time_ms\":{\"type\":\"number\",\"description\":\"Wait befor"
	"e yielding more output. Defaults to 10000 ms.\"}},\"required\":[\"cell_id\"],\"additiona"
	"lProperties\":false}}";

/* The output schema upstream gives exec_command and write_stdin (unified exec's result). */
static const char codemode_unified_exec_output[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"chunk_id\":{\"type\":\"string\",\"description\":\"Chunk identifier included when the "
	"response reports one.\"},"
	"\"exit_code\":{\"type\":\"number\",\"description\":\"Process exit code when the command "
	"finished during this call.\"},"
	"\"original_token_count\":{\"type\":\"number\",\"description\":\"Approximate token count "
	"before output truncation.\"},"
	"\"output\":{\"type\":\"string\",\"description\":\"Command output text, possibly "
	"truncated.\"},"
	"\"session_id\":{\"type\":\"number\",\"description\":\"Session identifier to pass to "
	"write_stdin when the process is still running.\"},"
	"\"wall_time_seconds\":{\"type\":\"number\",\"description\":\"Elapsed wall time spent "
	"waiting for output in seconds.\"}},"
	"\"required\":[\"output\",\"wall_time_seconds\"],\"additionalProperties\":false}";

/* view_image's output schema in exec (a data URL). */
static const char codemode_view_image_output[] =
	"{\"type\":\"object\",\"properties\":{\"image_url\":{\"type\":\"string\","
	"\"description\":\"Data URL for the loaded image.\"}},\"required\":[\"image_url\"],"
	"\"additionalProperties\":false}";

/* clock__curr_time's output schema in exec. */
static const char codemode_curr_time_output[] =
	"{\"type\":\"object\",\"properties\":{\"current_time\":{\"type\":\"string\","
	"\"description\":\"Current UTC time formatted as YYYY-MM-DD HH:MM:SS UTC.\"}},"
	"\"required\":[\"current_time\"],\"additionalProperties\":false}";

/* The catalogue models whose experimental_supported_tools hold "clock" (0.169's `codex debug
 * models --bundled`): the gpt-6 and gpt-6.1 families, not gpt-5.6 (recorded). */
static const char *const codemode_clock_models[] = {
	"gpt-6-astra", "gpt-6.1-sol", "gpt-6.1-terra", "gpt-6-sol", "gpt-6-luna"};

/* Upstream's catalogue models whose tool_mode is "code_mode_only" (`codex debug models
 * --bundled` of 0.169; gpt-5.5 has none). */
static const char *const codemode_models[] = {"gpt-6.1-sol", "gpt-6-astra", "gpt-6-sol",
	"gpt-6-luna", "gpt-5.6-sol", "gpt-6.1-terra", "gpt-5.6-terra", "gpt-5.6-luna",
	"gpt-daybreak-blue-latest", "gpt-daybreak-red-latest", "codex-auto-review"};

/* One nested tool as exec's description shows it. */
struct cm_tool {
	char *name;	     /* as exec knows it (an MCP tool: mcp__<server>__<tool>) */
	const char *ns;	     /* its namespace, or NULL */
	const char *ns_desc; /* the namespace's description */
	const char *desc;    /* borrowed from the spec */
	const json_t *input; /* parameters (borrowed), or NULL */
	char *output;	     /* its output's TypeScript */
	int freeform;
	const char *raw; /* a namespaced tool's own name (borrowed) */
};

int
codemode_model(const char *model, int feature)
{
	if (feature >= 0)
		return feature > 0;
	for (size_t i = 0; model != NULL && i < nitems(codemode_models); i++)
		if (strcmp(codemode_models[i], model) == 0)
			return 1;
	return 0;
}

int
codemode_clock_model(const char *model)
{
	for (size_t i = 0; model != NULL && i < nitems(codemode_clock_models); i++)
		if (strcmp(codemode_clock_models[i], model) == 0)
			return 1;
	return 0;
}

/* A namespaced tool upstream offers beside exec, not in it: clock.sleep (recorded). */
static int
cm_direct_only(const char *ns, const json_t *spec)
{
	return ns != NULL && strcmp(ns, "clock") == 0 &&
		strcmp(json_string_value(json_object_get(spec, "name")) ?: "", "sleep") == 0;
}

char *
codemode_tools_nested_name(const char *ns, const char *name)
{
	return ns != NULL ? xasprintf("%s__%s", ns, name) : xstrdup(name);
}

/* The output type of a nested tool: unified exec's result, an MCP tool's, or unknown. */
static char *
cm_output(const char *name)
{
	json_t *v;
	char *s;

	if (strncmp(name, "mcp__", 5) == 0)
		return xstrdup("CallToolResult");
	if (strcmp(name, "view_image") == 0)
		v = json_loads(codemode_view_image_output, 0, NULL);
	else if (strcmp(name, "clock__curr_time") == 0)
		v = json_loads(codemode_curr_time_output, 0, NULL);
	else if (strcmp(name, "exec_command") != 0 && strcmp(name, "write_stdin") != 0)
		return xstrdup("unknown");
	else
		v = json_loads(codemode_unified_exec_output, 0, NULL);
	s = codemode_ts_type(v);
	json_decref(v);
	return s;
}

static int
cm_cmp(const void *a, const void *b)
{
	const struct cm_tool *x = a, *y = b;

	/* plain tools first, then each namespace's (upstream's order of tool names) */
	if ((x->ns == NULL) != (y->ns == NULL))
		return x->ns == NULL ? -1 : 1;
	if (x->ns != NULL && strcmp(x->ns, y->ns) != 0)
		return strcmp(x->ns, y->ns);
	return strcmp(x->name, y->name);
}

/* Add one spec (function or custom) to the nested list. */
static void
cm_add(struct cm_tool *list, size_t *n, const json_t *spec, const char *ns, const char *ns_desc)
{
	const char *type = json_string_value(json_object_get(spec, "type"));
	const char *name = json_string_value(json_object_get(spec, "name"));
	struct cm_tool *t = &list[*n];

	if (type == NULL || name == NULL ||
		(strcmp(type, "function") != 0 && strcmp(type, "custom") != 0))
		return; /* hosted tools (web_search, ...) are not nested */
	memset(t, 0, sizeof *t);
	t->name = codemode_tools_nested_name(ns, name);
	t->ns = ns;
	t->ns_desc = ns_desc;
	t->desc = json_string_value(json_object_get(spec, "description")) ?: "";
	t->freeform = strcmp(type, "custom") == 0;
	t->input = json_object_get(spec, "parameters");
	t->output = cm_output(t->name);
	(*n)++;
}

/* s without the whitespace at both ends, appended to b. */
static void
cm_add_trimmed(struct buf *b, const char *s)
{
	const char *e = s + strlen(s);

	while (*s != '\0' && strchr(" \t\r\n\v\f", *s) != NULL)
		s++;
	while (e > s && strchr(" \t\r\n\v\f", e[-1]) != NULL)
		e--;
	buf_add(b, s, (size_t)(e - s));
}

/*
 * A copy of schema with every "integer" type a "number": upstream declares its own tools'
 * integers as plain numbers (recorded: create_goal's token_budget is `number`), while an MCP
 * server's schema keeps the `integer` comment (codemode_ts.c).
 */
static json_t *
cm_numbers(const json_t *schema)
{
	json_t *c = json_deep_copy(schema), *v, *stack = json_pack("[O]", c);
	const char *k;

	while (json_array_size(stack) > 0) {
		json_t *o = json_incref(json_array_get(stack, json_array_size(stack) - 1));

		json_array_remove(stack, json_array_size(stack) - 1);
		if (json_is_object(o) &&
			strcmp(json_string_value(json_object_get(o, "type")) ?: "", "integer") == 0)
			json_object_set_new(o, "type", json_string("number"));
		if (json_is_object(o))
			json_object_foreach(o, k, v) json_array_append(stack, v);
		else if (json_is_array(o))
			for (size_t i = 0; i < json_array_size(o); i++)
				json_array_append(stack, json_array_get(o, i));
		json_decref(o);
	}
	json_decref(stack);
	return c;
}

/* A tool's description, its namespace's words when `with_ns`, then its declaration (heap). */
static char *
cm_described(const struct cm_tool *t, int with_ns)
{
	char *in, *decl, *text;
	json_t *plain = NULL;

	if (t->freeform)
		in = xstrdup("string");
	else if (t->ns == NULL && t->input != NULL && strncmp(t->name, "mcp__", 5) != 0) {
		in = codemode_ts_type((plain = cm_numbers(t->input)));
		json_decref(plain);
	} else
		in = codemode_ts_type(t->input);
	decl = codemode_ts_declaration(t->name, t->freeform ? "input" : "args", in, t->output);
	if (with_ns && t->ns_desc != NULL && t->ns_desc[0] != '\0')
		text = xasprintf("%s\n\n%s\n\nexec tool declaration:\n```ts\n%s\n```", t->desc,
			t->ns_desc, decl);
	else
		text = xasprintf("%s\n\nexec tool declaration:\n```ts\n%s\n```", t->desc, decl);
	free(decl);
	free(in);
	return text;
}

static void
cm_section(struct buf *b, const struct cm_tool *t)
{
	char *id = codemode_ts_identifier(t->name), *text = cm_described(t, 0);

	if (strcmp(id, t->name) == 0)
		buf_printf(b, "### `%s`", id);
	else
		buf_printf(b, "### `%s` (`%s`)", id, t->name);
	buf_addc(b, '\n');
	cm_add_trimmed(b, text);
	free(text);
	free(id);
}

/* exec's description for the nested tools (sorted in place). */
static char *
cm_exec_description(struct cm_tool *list, size_t n)
{
	const char *cur = NULL;
	struct buf b;

	qsort(list, n, sizeof *list, cm_cmp);
	buf_init(&b, CODEMODE_DESC_MAX);
	buf_adds(&b, codemode_exec_head);
	for (size_t i = 0; i < n; i++) {
		if (list[i].ns != NULL && (cur == NULL || strcmp(cur, list[i].ns) != 0)) {
			/* a namespace's heading, when it has words to say */
			struct buf d;

			buf_init(&d, CODEMODE_DESC_MAX);
			cm_add_trimmed(&d, list[i].ns_desc != NULL ? list[i].ns_desc : "");
			if (d.len > 0)
				buf_printf(&b, "\n\n## %s\n%s", list[i].ns, buf_str(&d));
			buf_free(&d);
		}
		cur = list[i].ns;
		buf_adds(&b, "\n\n");
		cm_section(&b, &list[i]);
	}
	return buf_steal(&b, NULL);
}

/* An MCP server's namespace: its tools are deferred, not described in exec. */
static int
cm_deferred(const json_t *spec)
{
	const char *type = json_string_value(json_object_get(spec, "type")) ?: "";
	const char *name = json_string_value(json_object_get(spec, "name")) ?: "";

	return strcmp(type, "namespace") == 0 && strncmp(name, "mcp__", 5) == 0;
}

json_t *
codemode_tools_item(const json_t *tools)
{
	const json_t *spec, *sub;
	json_t *fns = json_array(), *exec, *rui = NULL, *item, *direct = json_array(), *dns;
	struct cm_tool *list;
	size_t i, j, n = 0, cap = 0;
	char *desc;

	json_array_foreach(tools, i, spec)
	{
		cap += 1 + json_array_size(json_object_get(spec, "tools"));
	}
	list = xmalloc((cap + 1) * sizeof *list);
	json_array_foreach(tools, i, spec)
	{
		const char *type = json_string_value(json_object_get(spec, "type")) ?: "";
		const char *name = json_string_value(json_object_get(spec, "name")) ?: "";

		if (cm_deferred(spec))
			continue;
		if (strcmp(type, "namespace") == 0) {
			dns = NULL;
			json_array_foreach(json_object_get(spec, "tools"), j, sub)
			{
				if (!cm_direct_only(name, sub)) {
					cm_add(list, &n, sub, name,
						json_string_value(
							json_object_get(spec, "description")));
					continue;
				}
				if (dns == NULL) { /* the namespace again, beside functions */
					dns = json_pack("{s:s, s:s, s:O, s:[]}", "type",
						"namespace", "name", name, "description",
						json_object_get(spec, "description"), "tools");
					json_array_append_new(direct, dns);
				}
				json_array_append_new(
					json_object_get(dns, "tools"), json_deep_copy(sub));
			}
		} else if (strcmp(type, "function") == 0 && strcmp(name, "request_user_input") == 0)
			rui = json_deep_copy(spec); /* a direct function beside exec and wait */
		else
			cm_add(list, &n, spec, NULL, NULL);
	}
	desc = cm_exec_description(list, n);
	exec = json_pack("{s:s, s:s, s:s, s:{s:s, s:s, s:s}}", "type", "custom", "name", "exec",
		"description", desc, "format", "type", "grammar", "syntax", "lark", "definition",
		codemode_exec_grammar);
	json_array_append_new(fns, exec);
	json_array_append_new(fns, json_loads(codemode_wait_spec, 0, NULL));
	if (rui != NULL)
		json_array_append_new(fns, rui);
	item = json_pack("{s:s, s:s, s:[{s:s, s:s, s:s, s:o}]}", "type", "additional_tools", "role",
		"developer", "tools", "type", "namespace", "name", "functions", "description", "",
		"tools", fns);
	json_array_extend(json_object_get(item, "tools"), direct);
	json_decref(direct);
	for (i = 0; i < n; i++) {
		free(list[i].name);
		free(list[i].output);
	}
	free(list);
	free(desc);
	return item;
}

json_t *
codemode_tools_nested(const json_t *tools)
{
	const json_t *spec, *sub;
	json_t *out = json_array(), *one;
	struct cm_tool *list;
	size_t i, j, n = 0, cap = 0;
	struct buf b;
	char *text;

	json_array_foreach(tools, i, spec)
	{
		cap += 1 + json_array_size(json_object_get(spec, "tools"));
	}
	list = xmalloc((cap + 1) * sizeof *list);
	json_array_foreach(tools, i, spec)
	{
		const char *type = json_string_value(json_object_get(spec, "type")) ?: "";
		const char *name = json_string_value(json_object_get(spec, "name")) ?: "";

		if (strcmp(type, "namespace") == 0) {
			json_array_foreach(json_object_get(spec, "tools"), j, sub)
			{
				size_t k = n;

				if (cm_direct_only(name, sub))
					continue; /* not on `tools` (recorded) */
				cm_add(list, &n, sub, name,
					json_string_value(json_object_get(spec, "description")));
				if (n > k)
					list[k].raw =
						json_string_value(json_object_get(sub, "name"));
			}
		} else if (strcmp(type, "function") != 0 || strcmp(name, "request_user_input") != 0)
			cm_add(list, &n, spec, NULL, NULL);
	}
	qsort(list, n, sizeof *list, cm_cmp);
	for (i = 0; i < n; i++) {
		/* ALL_TOOLS' description: the section's text, its namespace's words in it */
		text = cm_described(&list[i], 1);
		buf_init(&b, CODEMODE_DESC_MAX);
		cm_add_trimmed(&b, text);
		one = json_pack("{s:s, s:s, s:s}", "name", list[i].name, "description", buf_str(&b),
			"tool", list[i].ns != NULL ? list[i].raw : list[i].name);
		if (list[i].ns != NULL)
			json_object_set_new(one, "ns", json_string(list[i].ns));
		json_array_append_new(out, one);
		buf_free(&b);
		free(text);
		free(list[i].name);
		free(list[i].output);
	}
	free(list);
	return out;
}

/* s XML-escaped onto b, at most max characters of it (UTF-8 sequences kept whole). */
static void
cm_add_escaped(struct buf *b, const char *s, size_t len, size_t max)
{
	static const char *const ent[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
	const char *p;

	for (size_t i = 0, n = 0; i < len && n < max; n++) {
		if ((p = strchr("&<>\"'", s[i])) != NULL && s[i] != '\0') {
			buf_adds(b, ent[p - "&<>\"'"]);
			i++;
			continue;
		}
		do
			buf_addc(b, s[i++]);
		while (i < len && ((unsigned char)s[i] & 0xc0) == 0x80);
	}
}

static int
cm_strcmp(const void *a, const void *b)
{
	return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "name")) ?: "",
		json_string_value(json_object_get(*(json_t *const *)b, "name")) ?: "");
}

char *
codemode_tools_deferred(const json_t *tools)
{
	const json_t **ns;
	const json_t *spec;
	const char *d, *e;
	struct buf b;
	size_t i, n = 0;

	ns = xmalloc((json_array_size(tools) + 1) * sizeof *ns);
	json_array_foreach(tools, i, spec)
	{
		if (cm_deferred(spec))
			ns[n++] = spec;
	}
	if (n == 0) {
		free(ns);
		return NULL;
	}
	qsort(ns, n, sizeof *ns, cm_strcmp);
	buf_init(&b, CODEMODE_DESC_MAX);
	buf_adds(&b, "<tools>\nDeferred tool namespaces:\n");
	for (i = 0; i < n; i++) {
		d = json_string_value(json_object_get(ns[i], "description")) ?: "";
		/* the first line, trimmed */
		while (*d == ' ' || *d == '\t' || *d == '\r' || *d == '\n')
			d++;
		for (e = d; *e != '\0' && *e != '\n'; e++)
			;
		while (e > d && strchr(" \t\r", e[-1]) != NULL)
			e--;
		buf_adds(&b, "- ");
		d = json_string_value(json_object_get(ns[i], "name"));
		cm_add_escaped(&b, d, strlen(d), (size_t)-1);
		d = json_string_value(json_object_get(ns[i], "description")) ?: "";
		while (*d == ' ' || *d == '\t' || *d == '\r' || *d == '\n')
			d++;
		if (e > d) {
			buf_adds(&b, ": ");
			cm_add_escaped(&b, d, (size_t)(e - d), 250);
		}
		buf_addc(&b, '\n');
	}
	buf_adds(&b, "</tools>");
	free(ns);
	return buf_steal(&b, NULL);
}
