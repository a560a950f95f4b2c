/*
 * Protocol tables: the item/tool/requestUserInput server request (request_user_input, Plan
 * mode's question tool), with upstream 0.169's names, shapes and docs (experimental upstream
 * in its docs, yet in its stable schema; tests/unit/protocol/test_conformance.c checks them).
 */
#include <stddef.h>

#include "defs.h"

static const struct pfield tool_request_user_input_params[] = {
	{"autoResolutionMs", "uint64?", 0, "null",
		"@deprecated Use `isBlocking` to decide whether the request should block."},
	{"isBlocking", "boolean", PF_REQ, NULL, NULL},
	{"itemId", "string", PF_REQ, NULL, NULL},
	{"questions", "ToolRequestUserInputQuestion[]", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield tool_request_user_input_question[] = {
	{"header", "string", PF_REQ, NULL, NULL},
	{"id", "string", PF_REQ, NULL, NULL},
	{"isOther", "boolean", 0, "false", NULL},
	{"isSecret", "boolean", 0, "false", NULL},
	{"options", "ToolRequestUserInputOption[]?", 0, NULL, NULL},
	{"question", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield tool_request_user_input_option[] = {
	{"description", "string", PF_REQ, NULL, NULL},
	{"label", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield tool_request_user_input_response[] = {
	{"answers", "{ToolRequestUserInputAnswer}", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield tool_request_user_input_answer[] = {
	{"answers", "string[]", PF_REQ, NULL, NULL},
	{NULL},
};

const struct pdef pdefs_user_input[] = {
	{.name = "ToolRequestUserInputParams",
		.kind = PD_STRUCT,
		.doc = "EXPERIMENTAL. Params sent with a request_user_input event.",
		.fields = tool_request_user_input_params},
	{.name = "ToolRequestUserInputQuestion",
		.kind = PD_STRUCT,
		.doc = "EXPERIMENTAL. Represents one request_user_input question and its required "
		       "options.",
		.fields = tool_request_user_input_question},
	{.name = "ToolRequestUserInputOption",
		.kind = PD_STRUCT,
		.doc = "EXPERIMENTAL. Defines a single selectable option for request_user_input.",
		.fields = tool_request_user_input_option},
	{.name = "ToolRequestUserInputResponse",
		.kind = PD_STRUCT,
		.doc = "EXPERIMENTAL. Response payload mapping question ids to answers.",
		.fields = tool_request_user_input_response},
	{.name = "ToolRequestUserInputAnswer",
		.kind = PD_STRUCT,
		.doc = "EXPERIMENTAL. Captures a user's answer to a request_user_input question.",
		.fields = tool_request_user_input_answer},
	{NULL},
};
