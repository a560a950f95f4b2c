/*
 * Model requests on either wire (model.h): the body, the URL with its query params, and the
 * headers. Chat Completions input is built from Responses items: messages keep their role
 * (developer becomes system; text parts are joined, images become image_url parts), function
 * calls become the preceding assistant message's tool_calls and their outputs "tool"
 * messages, custom tool calls travel as function calls with {"input": ...}; reasoning and
 * web-search items are dropped, and only function tools are offered.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_int.h"
#include "protocol/xmalloc.h"

/*
 * The text of a message's content (a string, or parts with "text"), joined by newlines; NULL
 * when the joined text passes MODEL_MAX_BODY (it could never be sent).
 */
static char *
model_request_text(const json_t *content)
{
	struct buf t;
	const char *s;
	json_t *part;
	size_t i;

	if (json_is_string(content))
		return xstrdup(json_string_value(content));
	buf_init(&t, MODEL_MAX_BODY);
	json_array_foreach(content, i, part)
	{
		if ((s = json_string_value(json_object_get(part, "text"))) == NULL)
			continue;
		if ((t.len > 0 && buf_addc(&t, '\n') != 0) || buf_adds(&t, s) != 0) {
			buf_free(&t);
			return NULL;
		}
	}
	return buf_steal(&t, NULL);
}

/*
 * A Chat message's content from Responses parts: a string, or parts when images are there;
 * NULL when the text is too large.
 */
static json_t *
model_request_chat_content(const json_t *content)
{
	json_t *parts, *part, *out;
	const char *type, *url;
	char *text;
	size_t i;
	int images = 0;

	json_array_foreach(content, i, part)
	{
		type = json_string_value(json_object_get(part, "type"));
		images |= type != NULL && strcmp(type, "input_image") == 0;
	}
	if (!images) {
		if ((text = model_request_text(content)) == NULL)
			return NULL;
		out = json_string(text);
		free(text);
		return out;
	}
	parts = json_array();
	json_array_foreach(content, i, part)
	{
		type = json_string_value(json_object_get(part, "type"));
		if (type != NULL && strcmp(type, "input_image") == 0) {
			url = json_string_value(json_object_get(part, "image_url"));
			if (url != NULL)
				json_array_append_new(parts,
					json_pack("{s:s, s:{s:s}}", "type", "image_url",
						"image_url", "url", url));
		} else if (json_is_string(json_object_get(part, "text"))) {
			json_array_append_new(parts,
				json_pack("{s:s, s:O}", "type", "text", "text",
					json_object_get(part, "text")));
		}
	}
	return parts;
}

/* Append a tool call to the last assistant message, or to a new one. */
static void
model_request_chat_tool_call(json_t *messages, const char *id, const char *name, json_t *args)
{
	json_t *last = json_array_get(messages, json_array_size(messages) - 1), *calls;
	const char *role = json_string_value(json_object_get(last, "role"));

	if (last == NULL || role == NULL || strcmp(role, "assistant") != 0) {
		last = json_pack("{s:s, s:n}", "role", "assistant", "content");
		json_array_append_new(messages, last);
	}
	if ((calls = json_object_get(last, "tool_calls")) == NULL) {
		calls = json_array();
		json_object_set_new(last, "tool_calls", calls);
	}
	json_array_append_new(calls,
		json_pack("{s:s, s:s, s:{s:s, s:o}}", "id", id, "type", "function", "function",
			"name", name, "arguments", args));
}

/* A tool result's content as a string; NULL when the text is too large. */
static json_t *
model_request_chat_output(const json_t *output)
{
	char *text;
	json_t *s;

	if (json_is_string(output))
		return json_incref((json_t *)output);
	if (json_is_array(output)) {
		if ((text = model_request_text(output)) == NULL)
			return NULL;
		s = json_string(text);
		free(text);
		return s;
	}
	text = json_dumps(output, JSON_COMPACT | JSON_ENCODE_ANY);
	s = json_string(text != NULL ? text : "");
	free(text);
	return s;
}

/* Append the Chat form of one Responses input item; -E2BIG when its text is too large. */
static int
model_request_chat_item(json_t *messages, const json_t *item)
{
	const char *type = json_string_value(json_object_get(item, "type"));
	const char *role = json_string_value(json_object_get(item, "role"));
	const char *id = json_string_value(json_object_get(item, "call_id")), *name;
	json_t *args, *content;
	char *a;

	if (type == NULL && role != NULL)
		type = "message";
	if (type == NULL)
		return 0;
	name = json_string_value(json_object_get(item, "name"));
	if (name == NULL)
		name = "";
	if (strcmp(type, "message") == 0 && role != NULL) {
		if (strcmp(role, "developer") == 0)
			role = "system";
		if ((content = model_request_chat_content(json_object_get(item, "content"))) ==
			NULL)
			return -E2BIG;
		json_array_append_new(
			messages, json_pack("{s:s, s:o}", "role", role, "content", content));
	} else if (strcmp(type, "function_call") == 0 && id != NULL) {
		args = json_object_get(item, "arguments");
		model_request_chat_tool_call(messages, id, name,
			json_is_string(args) ? json_incref(args) : json_string("{}"));
	} else if (strcmp(type, "custom_tool_call") == 0 && id != NULL) {
		args = json_pack("{s:O?}", "input", json_object_get(item, "input"));
		a = json_dumps(args, JSON_COMPACT);
		model_request_chat_tool_call(messages, id, name, json_string(a != NULL ? a : "{}"));
		free(a);
		json_decref(args);
	} else if (strcmp(type, "local_shell_call") == 0 && id != NULL) {
		a = json_dumps(json_object_get(item, "action"), JSON_COMPACT);
		model_request_chat_tool_call(
			messages, id, "local_shell", json_string(a != NULL ? a : "{}"));
		free(a);
	} else if ((strcmp(type, "function_call_output") == 0 ||
			   strcmp(type, "custom_tool_call_output") == 0) &&
		id != NULL) {
		if ((content = model_request_chat_output(json_object_get(item, "output"))) == NULL)
			return -E2BIG;
		json_array_append_new(messages,
			json_pack("{s:s, s:s, s:o}", "role", "tool", "tool_call_id", id, "content",
				content));
	}
	return 0;
}

/* Chat messages from Responses input items; NULL when one is too large to send. */
static json_t *
model_request_chat_messages(const struct model_prompt *pr)
{
	json_t *messages = json_array(), *item;
	size_t i;

	if (pr->instructions != NULL)
		json_array_append_new(messages,
			json_pack("{s:s, s:s}", "role", "system", "content", pr->instructions));
	json_array_foreach(pr->input, i, item)
	{
		if (model_request_chat_item(messages, item) != 0) {
			json_decref(messages);
			return NULL;
		}
	}
	return messages;
}

/* Chat tools from Responses tool specs: function tools only. */
static json_t *
model_request_chat_tools(const json_t *tools)
{
	json_t *out = json_array(), *t, *fn;
	const char *type;
	size_t i;

	json_array_foreach(tools, i, t)
	{
		type = json_string_value(json_object_get(t, "type"));
		if (type == NULL || strcmp(type, "function") != 0 ||
			!json_is_string(json_object_get(t, "name")))
			continue;
		fn = json_pack("{s:O}", "name", json_object_get(t, "name"));
		if (json_object_get(t, "description") != NULL)
			json_object_set(fn, "description", json_object_get(t, "description"));
		if (json_object_get(t, "parameters") != NULL)
			json_object_set(fn, "parameters", json_object_get(t, "parameters"));
		json_array_append_new(
			out, json_pack("{s:s, s:o}", "type", "function", "function", fn));
	}
	return out;
}

/* The request body for the provider's wire; NULL with *cause when it could not be sent. */
json_t *
model_request_body(const struct model_provider *p, const struct model_prompt *pr, char **cause)
{
	json_t *body, *tools, *messages;

	if (p->wire == MODEL_WIRE_CHAT) {
		if ((messages = model_request_chat_messages(pr)) == NULL) {
			*cause = xasprintf("request larger than %d bytes", MODEL_MAX_BODY);
			return NULL;
		}
		body = json_pack("{s:s, s:o, s:b, s:{s:b}}", "model", pr->model, "messages",
			messages, "stream", 1, "stream_options", "include_usage", 1);
		tools = model_request_chat_tools(pr->tools);
		if (json_array_size(tools) > 0) {
			json_object_set_new(body, "tools", tools);
			json_object_set_new(body, "tool_choice", json_string("auto"));
		} else
			json_decref(tools);
	} else {
		body = json_pack("{s:s, s:o, s:o, s:s, s:b, s:b, s:b}", "model", pr->model, "input",
			pr->input != NULL ? json_incref(pr->input) : json_array(), "tools",
			pr->tools != NULL ? json_incref(pr->tools) : json_array(), "tool_choice",
			"auto", "parallel_tool_calls", pr->parallel_tool_calls, "store", 0,
			"stream", 1);
		if (pr->no_tools)
			json_object_del(body, "tools");
		if (pr->instructions != NULL)
			json_object_set_new(body, "instructions", json_string(pr->instructions));
		if (pr->reasoning != NULL) {
			json_object_set(body, "reasoning", pr->reasoning);
			json_object_set_new(
				body, "include", json_pack("[s]", "reasoning.encrypted_content"));
		} else
			json_object_set_new(body, "include", json_array());
		if (pr->prompt_cache_key != NULL)
			json_object_set_new(
				body, "prompt_cache_key", json_string(pr->prompt_cache_key));
		if (pr->text != NULL)
			json_object_set(body, "text", pr->text);
	}
	if (pr->extra != NULL)
		json_object_update(body, pr->extra);
	return body;
}

/* Percent-encode s (RFC 3986 unreserved characters kept) onto t; 0 or -E2BIG. */
static int
model_request_urlencode(struct buf *t, const char *s)
{
	int r = 0;

	for (; *s != '\0' && r == 0; s++) {
		if (isalnum((unsigned char)*s) || strchr("-._~", *s) != NULL)
			r = buf_addc(t, *s);
		else
			r = buf_printf(t, "%%%02X", (unsigned char)*s);
	}
	return r;
}

/* The endpoint URL with the query params, percent-encoded; NULL past MODEL_MAX_URL. */
char *
model_request_url(const struct model_provider *p, char **cause)
{
	struct buf t;
	const char *k, *v;
	json_t *jv;
	int first = 1;

	buf_init(&t, MODEL_MAX_URL);
	if (buf_printf(&t, "%s%s", p->base_url,
		    p->wire == MODEL_WIRE_CHAT ? "/chat/completions" : "/responses") != 0)
		goto toobig;
	json_object_foreach(p->query_params, k, jv)
	{
		v = json_string_value(jv);
		if (buf_addc(&t, first ? '?' : '&') != 0 || model_request_urlencode(&t, k) != 0 ||
			buf_addc(&t, '=') != 0 ||
			model_request_urlencode(&t, v != NULL ? v : "") != 0)
			goto toobig;
		first = 0;
	}
	return buf_steal(&t, NULL);
toobig:
	buf_free(&t);
	*cause = xasprintf("request URL longer than %d bytes", MODEL_MAX_URL);
	return NULL;
}

/* True when a header name and value cannot break the request (no CR, LF or NUL). */
static int
model_request_header_ok(const char *s)
{
	return strpbrk(s, "\r\n") == NULL;
}

/* Free a NULL-terminated header list. */
void
model_request_headers_free(char **headers)
{
	if (headers == NULL)
		return;
	for (size_t i = 0; headers[i] != NULL; i++)
		free(headers[i]);
	free(headers);
}

/* Every request header: ours, the auth, the provider's, the prompt's. */
char **
model_request_headers(const struct model_provider *p, const struct model_prompt *pr, char **cause)
{
	size_t n = 0,
	       max = 4 + json_object_size(p->http_headers) + json_object_size(p->env_http_headers);
	char **h, *key;
	const char *k, *env;
	json_t *v;

	for (size_t i = 0; pr->headers != NULL && pr->headers[i] != NULL; i++)
		max++;
	h = xcalloc(max + 1, sizeof *h);
	h[n++] = xstrdup("Content-Type: application/json");
	h[n++] = xstrdup("Accept: text/event-stream");
	if ((key = config_provider_api_key(p)) != NULL) {
		h[n++] = xasprintf("Authorization: Bearer %s", key);
		free(key);
	}
	json_object_foreach(p->http_headers, k, v)
	{
		h[n++] = xasprintf("%s: %s", k, json_string_value(v));
	}
	json_object_foreach(p->env_http_headers, k, v)
	{
		env = getenv(json_string_value(v));
		if (env != NULL && *env != '\0')
			h[n++] = xasprintf("%s: %s", k, env);
	}
	for (size_t i = 0; pr->headers != NULL && pr->headers[i] != NULL; i++)
		h[n++] = xstrdup(pr->headers[i]);
	for (size_t i = 0; i < n; i++) {
		if (!model_request_header_ok(h[i]) || strchr(h[i], ':') == NULL) {
			*cause = xasprintf("invalid HTTP header `%.40s`", h[i]);
			model_request_headers_free(h);
			return NULL;
		}
	}
	return h;
}

/* The marker's text: unguessable, so no input text can hold it by chance. */
static char model_marker_text[64];
static json_t *model_marker;

json_t *
model_input_marker(void)
{
	unsigned char r[12];
	FILE *f;

	if (model_marker != NULL)
		return model_marker;
	memset(r, 0, sizeof r);
	if ((f = fopen("/dev/urandom", "re")) != NULL) {
		if (fread(r, 1, sizeof r, f) != sizeof r)
			memset(r, 0x5a, sizeof r);
		fclose(f);
	}
	snprintf(model_marker_text, sizeof model_marker_text,
		"\001app-server-input:%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x\001", r[0],
		r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11]);
	model_marker = json_string(model_marker_text);
	return model_marker;
}

char *
model_request_splice(
	const char *body, size_t len, const char *items, size_t items_len, size_t *out_len)
{
	char *token = json_dumps(model_input_marker(), JSON_ENCODE_ANY | JSON_COMPACT);
	size_t tl = strlen(token), from, to;
	const char *at = memmem(body, len, token, tl);
	struct buf b;

	free(token);
	if (at == NULL)
		return NULL;
	from = (size_t)(at - body);
	to = from + tl;
	if (items_len == 0) {
		/* Nothing to put there: the marker goes, with one comma beside it. */
		if (to < len && body[to] == ',')
			to++;
		else if (from > 0 && body[from - 1] == ',')
			from--;
	}
	buf_init(&b, MODEL_MAX_BODY);
	if (buf_add(&b, body, from) != 0 || buf_add(&b, items, items_len) != 0 ||
		buf_add(&b, body + to, len - to) != 0) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b, out_len);
}
