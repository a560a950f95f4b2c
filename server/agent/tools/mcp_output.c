/*
 * MCP results for the model and for the item (mcp_output.h): pure conversions.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp_output.h"
#include "tool_output.h"
#include "mcp/mcp.h"
#include "protocol/xmalloc.h"

/* A text part for the model, cut to the budget. */
static json_t *
mcp_output_text(const char *s, size_t len)
{
	struct tool_trunc p = {TOOL_TRUNC_TOKENS, MCP_OUTPUT_MODEL_TOKENS};
	size_t n;
	char *cut = tool_output_truncate(s, len, p, &n);
	json_t *part = json_pack("{s:s, s:s%}", "type", "input_text", "text", cut, n);

	free(cut);
	return part;
}

const char mcp_output_ask[] = "ask";

double
mcp_output_since(const struct timespec *start)
{
	struct timespec end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	return (double)(end.tv_sec - start->tv_sec) + (double)(end.tv_nsec - start->tv_nsec) / 1e9;
}

static char *
mcp_output_wall(double wall_s)
{
	return xasprintf("Wall time: %.4f seconds\nOutput:", wall_s);
}

json_t *
mcp_output_model(const json_t *result, const char *error, double wall_s)
{
	const json_t *sc = json_object_get(result, "structuredContent"), *c;
	char *head = mcp_output_wall(wall_s), *text;
	json_t *parts, *out;
	size_t i;

	if (error == NULL && sc != NULL && !json_is_null(sc)) {
		text = json_dumps(sc, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
		out = json_sprintf("%s\n%s", head, text != NULL ? text : "null");
		free(text);
		free(head);
		return out;
	}
	parts = json_pack("[{s:s, s:s}]", "type", "input_text", "text", head);
	free(head);
	if (error != NULL) {
		json_array_append_new(parts, mcp_output_text(error, strlen(error)));
		return parts;
	}
	json_array_foreach(json_object_get(result, "content"), i, c)
	{
		const char *type = json_string_value(json_object_get(c, "type")) ?: "";
		const json_t *t = json_object_get(c, "text");

		if (strcmp(type, "text") == 0 && json_is_string(t))
			json_array_append_new(parts,
				mcp_output_text(json_string_value(t), json_string_length(t)));
		else if (strcmp(type, "image") == 0 && json_is_string(json_object_get(c, "data"))) {
			text = xasprintf("data:%s;base64,%s",
				json_string_value(json_object_get(c, "mimeType")) ?: "image/png",
				json_string_value(json_object_get(c, "data")));
			json_array_append_new(parts,
				json_pack("{s:s, s:s, s:s}", "type", "input_image", "image_url",
					text, "detail", "high"));
			free(text);
		} else {
			text = json_dumps(c, JSON_COMPACT | JSON_PRESERVE_ORDER);
			if (text != NULL)
				json_array_append_new(parts, mcp_output_text(text, strlen(text)));
			free(text);
		}
	}
	return parts;
}

const char *
mcp_output_approval(const json_t *cfg, const json_t *tool, const json_t *policy)
{
	const char *name = json_string_value(json_object_get(tool, "name")) ?: "";
	const char *mode = json_string_value(json_object_get(
		json_object_get(json_object_get(cfg, "tools"), name), "approval_mode"));
	int ro =
		json_is_true(json_object_get(json_object_get(tool, "annotations"), "readOnlyHint"));

	if (mode != NULL && strcmp(mode, "approve") == 0)
		return NULL;
	if (ro && (mode == NULL || strcmp(mode, "prompt") != 0))
		return NULL;
	return strcmp(json_string_value(policy) ?: "", "never") == 0 ? MCP_OUTPUT_NEVER
								     : MCP_OUTPUT_ASK;
}

json_t *
mcp_output_item(const char *id, const char *server, const json_t *tool, const json_t *args)
{
	const json_t *ro = json_object_get(json_object_get(tool, "annotations"), "readOnlyHint");

	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:O, s:n, s:n, s:n, s:O, s:n, s:n, s:n}",
		"type", "mcpToolCall", "id", id, "server", server, "tool",
		json_string_value(json_object_get(tool, "name")) ?: "", "status", "inProgress",
		"arguments", args, "appContext", "mcpAppUi", "pluginId", "readOnlyHint",
		json_is_boolean(ro) ? ro : json_null(), "result", "error", "durationMs");
}

void
mcp_output_complete(json_t *item, const json_t *result, const char *error, long long ms)
{
	int failed = error != NULL || json_is_true(json_object_get(result, "isError"));

	if (error == NULL)
		json_object_set_new(item, "result", mcp_output_item_result(result));
	else
		json_object_set_new(item, "error", json_pack("{s:s}", "message", error));
	json_object_set_new(item, "status", json_string(failed ? "failed" : "completed"));
	json_object_set_new(item, "durationMs", json_integer(ms));
}

char *
mcp_output_error(const json_t *item, const char *error)
{
	if (error == NULL || strcmp(error, "cancelled") == 0 || strcmp(error, MCP_REJECTED) == 0 ||
		strcmp(error, MCP_USER_CANCELLED) == 0)
		return NULL; /* upstream says these as they are */
	return xasprintf("tool call error: tool call failed for `%s/%s`\n\nCaused by:\n    %s",
		json_string_value(json_object_get(item, "server")),
		json_string_value(json_object_get(item, "tool")), error);
}

json_t *
mcp_output_progress(const char *item_id, double progress, const double *total, const char *message)
{
	char *text =
		total != NULL ? xasprintf("%g/%g", progress, *total) : xasprintf("%g", progress);
	json_t *p = json_pack(
		"{s:s, s:s}", "itemId", item_id, "message", message != NULL ? message : text);

	free(text);
	return p;
}

json_t *
mcp_output_item_result(const json_t *result)
{
	json_t *content = json_array(), *c, *copy;
	const json_t *t;
	size_t i, keep = MCP_OUTPUT_ITEM_BYTES - strlen(MCP_OUTPUT_TRUNCATED);
	char *cut;

	json_array_foreach(json_object_get(result, "content"), i, c)
	{
		t = json_object_get(c, "text");
		if (!json_is_string(t) || json_string_length(t) <= MCP_OUTPUT_ITEM_BYTES) {
			json_array_append(content, c);
			continue;
		}
		/* a head on a UTF-8 boundary */
		while (keep > 0 && (json_string_value(t)[keep] & 0xc0) == 0x80)
			keep--;
		cut = xasprintf("%s%.*s", MCP_OUTPUT_TRUNCATED, (int)keep, json_string_value(t));
		copy = json_copy(c);
		json_object_set_new(copy, "text", json_string(cut));
		json_array_append_new(content, copy);
		free(cut);
	}
	return json_pack("{s:o, s:O, s:O}", "content", content, "structuredContent",
		json_object_get(result, "structuredContent") ?: json_null(), "_meta",
		json_object_get(result, "_meta") ?: json_null());
}
