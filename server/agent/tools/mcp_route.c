/*
 * A model's call on its way to an MCP tool (mcp_route.h): the wire's rule, the arguments and
 * the request's _meta, apart from the turn that runs the call (agent/agent_mcp.c).
 */
#include <string.h>

#include "mcp_route.h"
#include "tool_output.h"

int
mcp_route_wire(const json_t *call, int chat)
{
	int ns = json_is_string(json_object_get(call, "namespace"));

	return chat ? !ns : ns;
}

int
mcp_route_function_call(const json_t *call)
{
	const char *type = json_string_value(json_object_get(call, "type"));

	return type != NULL && strcmp(type, "function_call") == 0;
}

json_t *
mcp_route_args(const json_t *call, char **msg)
{
	const char *text = json_string_value(json_object_get(call, "arguments"));
	json_error_t err;
	json_t *args;

	*msg = NULL;
	/* upstream reads an empty text as no arguments, anything else must be JSON */
	args = json_loads(text != NULL && text[0] != '\0' ? text : "{}", JSON_DECODE_ANY, &err);
	if (args == NULL)
		*msg = tool_output_bad_arguments(err.text);
	return args;
}

json_t *
mcp_route_meta(const char *call_id, const char *thread_id)
{
	return json_pack("{s:s, s:s, s:s}", "callId", call_id, "threadId", thread_id, "sessionId",
		thread_id);
}
