/*
 * The model's view of a set's tools (mcp_tools.h): pure conversions.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"
#include "mcp_resources.h"
#include "mcp_tools.h"
#include "protocol/xmalloc.h"

char *
mcp_tools_sanitize(const char *name)
{
	char *s = xstrdup(name);

	for (char *p = s; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9') || *p == '_'))
			*p = '_';
	return s;
}

/* The flat name mcp__<server>__<tool>, at most MCP_TOOL_NAME_MAX bytes (heap). */
static char *
mcp_tools_flat(const char *server, const char *tool)
{
	char *s = mcp_tools_sanitize(server), *t = mcp_tools_sanitize(tool);
	char *all = xasprintf("mcp__%s__%s", s, t);
	uint32_t h = 2166136261u; /* FNV-1a of the whole name: a cut name stays unique */
	size_t n = strlen(all);

	if (n > MCP_TOOL_NAME_MAX) {
		for (size_t i = 0; i < n; i++)
			h = (h ^ (unsigned char)all[i]) * 16777619u;
		snprintf(all + MCP_TOOL_NAME_MAX - 9, 10, "_%08x", h);
	}
	free(s);
	free(t);
	return all;
}

/* By the name the model sees. */
static int
mcp_tools_cmp(const void *a, const void *b)
{
	char *x = mcp_tools_sanitize(
		json_string_value(json_object_get(*(json_t *const *)a, "name")) ?: "");
	char *y = mcp_tools_sanitize(
		json_string_value(json_object_get(*(json_t *const *)b, "name")) ?: "");
	int r = strcmp(x, y);

	free(x);
	free(y);
	return r;
}

static int
mcp_tools_keycmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_t *
mcp_tools_schema(const json_t *in)
{
	static const char *const kept[] = {"type", "description", "enum", "items"};
	const json_t *props = json_object_get(in, "properties"), *v;
	const char **keys, *k;
	json_t *out;
	size_t i, n = 0;

	if (!json_is_object(in))
		return json_deep_copy(in);
	out = json_object();
	for (i = 0; i < nitems(kept); i++)
		if ((v = json_object_get(in, kept[i])) != NULL)
			json_object_set_new(out, kept[i],
				strcmp(kept[i], "items") == 0 ? mcp_tools_schema(v)
							      : json_deep_copy(v));
	if (json_is_object(props)) {
		/* in name order, as upstream's map writes them */
		keys = xcalloc(json_object_size(props) + 1, sizeof *keys);
		json_object_foreach((json_t *)props, k, v) keys[n++] = k;
		qsort(keys, n, sizeof *keys, mcp_tools_keycmp);
		json_object_set_new(out, "properties", json_object());
		for (i = 0; i < n; i++)
			json_object_set_new(json_object_get(out, "properties"), keys[i],
				mcp_tools_schema(json_object_get(props, keys[i])));
		free(keys);
	}
	if ((v = json_object_get(in, "required")) != NULL)
		json_object_set_new(out, "required", json_deep_copy(v));
	if ((v = json_object_get(in, "additionalProperties")) != NULL)
		json_object_set_new(out, "additionalProperties", mcp_tools_schema(v));
	if ((v = json_object_get(in, "anyOf")) != NULL && json_is_array(v)) {
		json_t *any = json_array();

		json_array_foreach(v, i, props) json_array_append_new(any, mcp_tools_schema(props));
		json_object_set_new(out, "anyOf", any);
	}
	return out;
}

/* The server's instructions as upstream gives them: trimmed. */
static json_t *
mcp_tools_instructions(const char *s)
{
	size_t n;

	s = s != NULL ? s : "";
	while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
		s++;
	n = strlen(s);
	while (n > 0 &&
		(s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	return json_stringn(s, n);
}

/* One function of a tool; NULL when the tool is not well formed. */
static json_t *
mcp_tools_function(const json_t *tool, const char *name, int chat)
{
	const json_t *in = json_object_get(tool, "inputSchema");
	const char *desc = json_string_value(json_object_get(tool, "description")) ?: "";
	json_t *schema;

	if (!json_is_object(in))
		return NULL;
	schema = mcp_tools_schema(in);
	if (chat)
		return json_pack("{s:s, s:{s:s, s:s, s:b, s:o}}", "type", "function", "function",
			"name", name, "description", desc, "strict", 0, "parameters", schema);
	return json_pack("{s:s, s:s, s:s, s:b, s:o}", "type", "function", "name", name,
		"description", desc, "strict", 0, "parameters", schema);
}

void
mcp_tools_append(json_t *tools, const struct mcp_set *s, int chat)
{
	mcp_resources_specs(tools, s, chat); /* among the built-ins, where upstream puts them */
	for (size_t i = 0; i < mcp_set_count(s); i++) {
		const json_t *list = mcp_set_tools(s, i);
		size_t n = json_array_size(list), j;
		const json_t **sorted;
		char *srv, *name;
		json_t *ns = NULL, *f;

		if (mcp_set_state(s, i) != MCP_READY || n == 0)
			continue;
		sorted = xcalloc(n, sizeof *sorted);
		for (j = 0; j < n; j++)
			sorted[j] = json_array_get(list, j);
		qsort(sorted, n, sizeof *sorted, mcp_tools_cmp);
		srv = mcp_tools_sanitize(mcp_set_name(s, i));
		if (!chat)
			ns = json_pack("{s:s, s:s+, s:o, s:[]}", "type", "namespace", "name",
				"mcp__", srv, "description",
				mcp_tools_instructions(mcp_set_instructions(s, i)), "tools");
		for (j = 0; j < n; j++) {
			const char *tn = json_string_value(json_object_get(sorted[j], "name"));

			name = chat ? mcp_tools_flat(mcp_set_name(s, i), tn)
				    : mcp_tools_sanitize(tn);
			if ((f = mcp_tools_function(sorted[j], name, chat)) != NULL)
				json_array_append_new(
					chat ? tools : json_object_get(ns, "tools"), f);
			free(name);
		}
		if (ns != NULL)
			json_array_append_new(tools, ns);
		free(srv);
		free(sorted);
	}
}

int
mcp_tools_find(const struct mcp_set *s, const char *ns, const char *name, const json_t **tool)
{
	const json_t *t;
	size_t j;
	char *srv, *want;
	int hit;

	if (name == NULL)
		return -1;
	for (size_t i = 0; i < mcp_set_count(s); i++) {
		srv = mcp_tools_sanitize(mcp_set_name(s, i));
		hit = ns != NULL && strncmp(ns, "mcp__", 5) == 0 && strcmp(ns + 5, srv) == 0;
		free(srv);
		if (ns != NULL && !hit)
			continue;
		json_array_foreach(mcp_set_tools(s, i), j, t)
		{
			const char *tn = json_string_value(json_object_get(t, "name")) ?: "";

			want = ns != NULL ? mcp_tools_sanitize(tn)
					  : mcp_tools_flat(mcp_set_name(s, i), tn);
			hit = strcmp(want, name) == 0;
			free(want);
			if (hit) {
				*tool = t;
				return (int)i;
			}
		}
	}
	return -1;
}
