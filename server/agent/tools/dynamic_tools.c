/*
 * Dynamic tools' conversions (dynamic_tools.h): specs to model tools, the client's answer to
 * the model's output. Shapes as upstream 0.169 sends them (tests/fixtures/dynamic_tools/).
 */
#include <string.h>

#include "dynamic_tools.h"

/* A function spec as a model tool; NULL when it is not a well-formed function spec. */
static json_t *
dynamic_tools_function(const json_t *spec, enum tool_wire wire)
{
	const char *name = json_string_value(json_object_get(spec, "name"));
	const char *desc = json_string_value(json_object_get(spec, "description"));
	json_t *schema = json_object_get(spec, "inputSchema");

	if (name == NULL || desc == NULL || schema == NULL)
		return NULL;
	if (wire == TOOL_WIRE_CHAT)
		return json_pack("{s:s, s:{s:s, s:s, s:b, s:O}}", "type", "function", "function",
			"name", name, "description", desc, "strict", 0, "parameters", schema);
	return json_pack("{s:s, s:s, s:s, s:b, s:O}", "type", "function", "name", name,
		"description", desc, "strict", 0, "parameters", schema);
}

/* A spec's type: upstream's older clients sent functions without one. */
static const char *
dynamic_tools_type(const json_t *spec)
{
	const char *type = json_string_value(json_object_get(spec, "type"));

	return type != NULL ? type : "function";
}

void
dynamic_tools_append(json_t *tools, const json_t *specs, enum tool_wire wire)
{
	const json_t *spec, *sub;
	json_t *t, *ns;
	size_t i, j;

	json_array_foreach(specs, i, spec)
	{
		if (strcmp(dynamic_tools_type(spec), "namespace") != 0) {
			if ((t = dynamic_tools_function(spec, wire)) != NULL)
				json_array_append_new(tools, t);
			continue;
		}
		/* Chat Completions has no namespaces: nothing of one can be offered there. */
		if (wire == TOOL_WIRE_CHAT || !json_is_string(json_object_get(spec, "name")))
			continue;
		ns = json_pack("{s:s, s:O, s:s, s:[]}", "type", "namespace", "name",
			json_object_get(spec, "name"), "description",
			json_string_value(json_object_get(spec, "description")) ?: "", "tools");
		json_array_foreach(json_object_get(spec, "tools"), j, sub)
		{
			if ((t = dynamic_tools_function(sub, wire)) != NULL)
				json_array_append_new(json_object_get(ns, "tools"), t);
		}
		json_array_append_new(tools, ns);
	}
}

/* Whether spec is the function `name`. */
static int
dynamic_tools_is(const json_t *spec, const char *name)
{
	const char *n = json_string_value(json_object_get(spec, "name"));

	return strcmp(dynamic_tools_type(spec), "function") == 0 && n != NULL &&
		strcmp(n, name) == 0;
}

const json_t *
dynamic_tools_find(const json_t *specs, const char *ns, const char *name)
{
	const json_t *spec, *sub;
	const char *n;
	size_t i, j;

	if (name == NULL)
		return NULL;
	json_array_foreach(specs, i, spec)
	{
		if (ns == NULL) {
			if (dynamic_tools_is(spec, name))
				return spec;
			continue;
		}
		n = json_string_value(json_object_get(spec, "name"));
		if (strcmp(dynamic_tools_type(spec), "namespace") != 0 || n == NULL ||
			strcmp(n, ns) != 0)
			continue;
		json_array_foreach(json_object_get(spec, "tools"), j, sub)
		{
			if (dynamic_tools_is(sub, name))
				return sub;
		}
	}
	return NULL;
}

/* One content item well formed: inputText {text}, inputImage {imageUrl}, inputAudio. */
static int
dynamic_tools_item_ok(const json_t *it)
{
	const char *type = json_string_value(json_object_get(it, "type"));

	if (type == NULL)
		return 0;
	if (strcmp(type, "inputText") == 0)
		return json_is_string(json_object_get(it, "text"));
	if (strcmp(type, "inputImage") == 0)
		return json_is_string(json_object_get(it, "imageUrl"));
	if (strcmp(type, "inputAudio") == 0)
		return json_is_string(json_object_get(it, "audioUrl"));
	return 0;
}

int
dynamic_tools_answer(const json_t *result, json_t **items, int *success)
{
	const json_t *ci = json_object_get(result, "contentItems"), *it;
	const json_t *ok = json_object_get(result, "success");
	size_t i;

	if (!json_is_array(ci) || !json_is_boolean(ok))
		return -1;
	json_array_foreach(ci, i, it)
	{
		if (!dynamic_tools_item_ok(it))
			return -1;
	}
	*items = json_deep_copy(ci);
	*success = json_is_true(ok);
	return 0;
}

json_t *
dynamic_tools_output(const json_t *items)
{
	const json_t *it;
	const char *type;
	json_t *out;
	size_t i;

	if (json_array_size(items) == 1 &&
		strcmp(json_string_value(json_object_get(json_array_get(items, 0), "type")) ?: "",
			"inputText") == 0)
		return json_incref(json_object_get(json_array_get(items, 0), "text"));
	out = json_array();
	json_array_foreach(items, i, it)
	{
		type = json_string_value(json_object_get(it, "type"));
		if (strcmp(type, "inputText") == 0)
			json_array_append_new(out,
				json_pack("{s:s, s:O}", "type", "input_text", "text",
					json_object_get(it, "text")));
		else if (strcmp(type, "inputImage") == 0)
			json_array_append_new(out,
				json_pack("{s:s, s:O, s:s}", "type", "input_image", "image_url",
					json_object_get(it, "imageUrl"), "detail", "high"));
		else
			json_array_append_new(out,
				json_pack("{s:s, s:O}", "type", "input_audio", "audio_url",
					json_object_get(it, "audioUrl")));
	}
	return out;
}
