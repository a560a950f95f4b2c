/*
 * Protocol tables: the mcpServer/elicitation/request server request (an MCP tool's approval or a
 * server's elicitation/create, asked of the client) and its response, as upstream 0.169's schema
 * has them (../shared/reference/codex-app-server-schema/: McpServerElicitationRequestParams.json
 * and McpServerElicitationRequestResponse.json, their definitions taken as they are; the
 * experimental schema adds an `openai/userVerification` mode we never send).
 */
#include <stddef.h>

#include "defs.h"

#define S_MCP_ELICITATION_ARRAY_TYPE "{\"enum\": [\"array\"], \"type\": \"string\"}"

#define S_MCP_ELICITATION_BOOLEAN_SCHEMA                                                           \
	"{\"additionalProperties\": false, \"properties\": {\"default\": {\"type\": [\"boolea"     \
	"n\", \"null\"]}, \"description\": {\"type\": [\"string\", \"null\"]}, \"title\": {\""     \
	"type\": [\"string\", \"null\"]}, \"type\": {\"$ref\": \"#/definitions/McpElicitation"     \
	"BooleanType\"}}, \"required\": [\"type\"], \"type\": \"object\"}"

#define S_MCP_ELICITATION_BOOLEAN_TYPE "{\"enum\": [\"boolean\"], \"type\": \"string\"}"

#define S_MCP_ELICITATION_CONST_OPTION                                                             \
	"{\"additionalProperties\": false, \"properties\": {\"const\": {\"type\": \"string\"}"     \
	", \"title\": {\"type\": \"string\"}}, \"required\": [\"const\", \"title\"], \"type\""     \
	": \"object\"}"

#define S_MCP_ELICITATION_ENUM_SCHEMA                                                              \
	"{\"anyOf\": [{\"$ref\": \"#/definitions/McpElicitationSingleSelectEnumSchema\"}, {\""     \
	"$ref\": \"#/definitions/McpElicitationMultiSelectEnumSchema\"}, {\"$ref\": \"#/defin"     \
	"itions/McpElicitationLegacyTitledEnumSchema\"}]}"

#define S_MCP_ELICITATION_LEGACY_TITLED_ENUM_SCHEMA                                                \
	"{\"additionalProperties\": false, \"properties\": {\"default\": {\"type\": [\"string"     \
	"\", \"null\"]}, \"description\": {\"type\": [\"string\", \"null\"]}, \"enum\": {\"it"     \
	"ems\": {\"type\": \"string\"}, \"type\": \"array\"}, \"enumNames\": {\"items\": {\"t"     \
	"ype\": \"string\"}, \"type\": [\"array\", \"null\"]}, \"title\": {\"type\": [\"strin"     \
	"g\", \"null\"]}, \"type\": {\"$ref\": \"#/definitions/McpElicitationStringType\"}}, "     \
	"\"required\": [\"enum\", \"type\"], \"type\": \"object\"}"

#define S_MCP_ELICITATION_MULTI_SELECT_ENUM_SCHEMA                                                 \
	"{\"anyOf\": [{\"$ref\": \"#/definitions/McpElicitationUntitledMultiSelectEnumSchema"      \
	"\"}, {\"$ref\": \"#/definitions/McpElicitationTitledMultiSelectEnumSchema\"}]}"

#define S_MCP_ELICITATION_NUMBER_SCHEMA                                                            \
	"{\"additionalProperties\": false, \"properties\": {\"default\": {\"format\": \"doubl"     \
	"e\", \"type\": [\"number\", \"null\"]}, \"description\": {\"type\": [\"string\", \"n"     \
	"ull\"]}, \"maximum\": {\"format\": \"double\", \"type\": [\"number\", \"null\"]}, \""     \
	"minimum\": {\"format\": \"double\", \"type\": [\"number\", \"null\"]}, \"title\": {"      \
	"\"type\": [\"string\", \"null\"]}, \"type\": {\"$ref\": \"#/definitions/McpElicitati"     \
	"onNumberType\"}}, \"required\": [\"type\"], \"type\": \"object\"}"

#define S_MCP_ELICITATION_NUMBER_TYPE "{\"enum\": [\"number\", \"integer\"], \"type\": \"string\"}"

#define S_MCP_ELICITATION_OBJECT_TYPE "{\"enum\": [\"object\"], \"type\": \"string\"}"

#define S_MCP_ELICITATION_PRIMITIVE_SCHEMA                                                         \
	"{\"anyOf\": [{\"$ref\": \"#/definitions/McpElicitationEnumSchema\"}, {\"$ref\": \"#/"     \
	"definitions/McpElicitationStringSchema\"}, {\"$ref\": \"#/definitions/McpElicitation"     \
	"NumberSchema\"}, {\"$ref\": \"#/definitions/McpElicitationBooleanSchema\"}]}"

#define S_MCP_ELICITATION_SCHEMA                                                                   \
	"{\"additionalProperties\": false, \"description\": \"Typed form schema for MCP `elic"     \
	"itation/create` requests.\\n\\nThis matches the `requestedSchema` shape from the MCP"     \
	" 2025-11-25 `ElicitRequestFormParams` schema.\", \"properties\": {\"$schema\": {\"ty"     \
	"pe\": [\"string\", \"null\"]}, \"properties\": {\"additionalProperties\": {\"$ref\":"     \
	" \"#/definitions/McpElicitationPrimitiveSchema\"}, \"type\": \"object\"}, \"required"     \
	"\": {\"items\": {\"type\": \"string\"}, \"type\": [\"array\", \"null\"]}, \"type\": "     \
	"{\"$ref\": \"#/definitions/McpElicitationObjectType\"}}, \"required\": [\"properties"     \
	"\", \"type\"], \"type\": \"object\"}"

#define S_MCP_ELICITATION_SINGLE_SELECT_ENUM_SCHEMA                                                \
	"{\"anyOf\": [{\"$ref\": \"#/definitions/McpElicitationUntitledSingleSelectEnumSchema"     \
	"\"}, {\"$ref\": \"#/definitions/McpElicitationTitledSingleSelectEnumSchema\"}]}"

#define S_MCP_ELICITATION_STRING_FORMAT                                                            \
	"{\"enum\": [\"email\", \"uri\", \"date\", \"date-time\"], \"type\": \"string\"}"

#define S_MCP_ELICITATION_STRING_SCHEMA                                                            \
	"{\"additionalProperties\": false, \"properties\": {\"default\": {\"type\": [\"string"     \
	"\", \"null\"]}, \"description\": {\"type\": [\"string\", \"null\"]}, \"format\": {\""     \
	"anyOf\": [{\"$ref\": \"#/definitions/McpElicitationStringFormat\"}, {\"type\": \"nul"     \
	"l\"}]}, \"maxLength\": {\"format\": \"uint32\", \"minimum\": 0.0, \"type\": [\"integ"     \
	"er\", \"null\"]}, \"minLength\": {\"format\": \"uint32\", \"minimum\": 0.0, \"type\""     \
	": [\"integer\", \"null\"]}, \"title\": {\"type\": [\"string\", \"null\"]}, \"type\":"     \
	" {\"$ref\": \"#/definitions/McpElicitationStringType\"}}, \"required\": [\"type\"], "     \
	"\"type\": \"object\"}"

#define S_MCP_ELICITATION_STRING_TYPE "{\"enum\": [\"string\"], \"type\": \"string\"}"

#define S_MCP_ELICITATION_TITLED_ENUM_ITEMS                                                        \
	"{\"additionalProperties\": false, \"properties\": {\"anyOf\": {\"items\": {\"$ref\":"     \
	" \"#/definitions/McpElicitationConstOption\"}, \"type\": \"array\"}}, \"required\": "     \
	"[\"anyOf\"], \"type\": \"object\"}"

#define S_MCP_ELICITATION_TITLED_MULTI_SELECT_ENUM_SCHEMA                                          \
	"{\"additionalProperties\": false, \"properties\": {\"default\": {\"items\": {\"type"      \
	"\": \"string\"}, \"type\": [\"array\", \"null\"]}, \"description\": {\"type\": [\"st"     \
	"ring\", \"null\"]}, \"items\": {\"$ref\": \"#/definitions/McpElicitationTitledEnumIt"     \
	"ems\"}, \"maxItems\": {\"format\": \"uint64\", \"minimum\": 0.0, \"type\": [\"intege"     \
	"r\", \"null\"]}, \"minItems\": {\"format\": \"uint64\", \"minimum\": 0.0, \"type\": "     \
	"[\"integer\", \"null\"]}, \"title\": {\"type\": [\"string\", \"null\"]}, \"type\": {"     \
	"\"$ref\": \"#/definitions/McpElicitationArrayType\"}}, \"required\": [\"items\", \"t"     \
	"ype\"], \"type\": \"object\"}"

#define S_MCP_ELICITATION_TITLED_SINGLE_SELECT_ENUM_SCHEMA                                         \
	"{\"additionalProperties\": false, \"properties\": {\"default\": {\"type\": [\"string"     \
	"\", \"null\"]}, \"description\": {\"type\": [\"string\", \"null\"]}, \"oneOf\": {\"i"     \
	"tems\": {\"$ref\": \"#/definitions/McpElicitationConstOption\"}, \"type\": \"array\""     \
	"}, \"title\": {\"type\": [\"string\", \"null\"]}, \"type\": {\"$ref\": \"#/definitio"     \
	"ns/McpElicitationStringType\"}}, \"required\": [\"oneOf\", \"type\"], \"type\": \"ob"     \
	"ject\"}"

#define S_MCP_ELICITATION_UNTITLED_ENUM_ITEMS                                                      \
	"{\"additionalProperties\": false, \"properties\": {\"enum\": {\"items\": {\"type\": "     \
	"\"string\"}, \"type\": \"array\"}, \"type\": {\"$ref\": \"#/definitions/McpElicitati"     \
	"onStringType\"}}, \"required\": [\"enum\", \"type\"], \"type\": \"object\"}"

#define S_MCP_ELICITATION_UNTITLED_MULTI_SELECT_ENUM_SCHEMA                                        \
	"{\"additionalProperties\": false, \"properties\": {\"default\": {\"items\": {\"type"      \
	"\": \"string\"}, \"type\": [\"array\", \"null\"]}, \"description\": {\"type\": [\"st"     \
	"ring\", \"null\"]}, \"items\": {\"$ref\": \"#/definitions/McpElicitationUntitledEnum"     \
	"Items\"}, \"maxItems\": {\"format\": \"uint64\", \"minimum\": 0.0, \"type\": [\"inte"     \
	"ger\", \"null\"]}, \"minItems\": {\"format\": \"uint64\", \"minimum\": 0.0, \"type\""     \
	": [\"integer\", \"null\"]}, \"title\": {\"type\": [\"string\", \"null\"]}, \"type\":"     \
	" {\"$ref\": \"#/definitions/McpElicitationArrayType\"}}, \"required\": [\"items\", "      \
	"\"type\"], \"type\": \"object\"}"

#define S_MCP_ELICITATION_UNTITLED_SINGLE_SELECT_ENUM_SCHEMA                                       \
	"{\"additionalProperties\": false, \"properties\": {\"default\": {\"type\": [\"string"     \
	"\", \"null\"]}, \"description\": {\"type\": [\"string\", \"null\"]}, \"enum\": {\"it"     \
	"ems\": {\"type\": \"string\"}, \"type\": \"array\"}, \"title\": {\"type\": [\"string"     \
	"\", \"null\"]}, \"type\": {\"$ref\": \"#/definitions/McpElicitationStringType\"}}, "      \
	"\"required\": [\"enum\", \"type\"], \"type\": \"object\"}"

#define S_MCP_SERVER_ELICITATION_ACTION                                                            \
	"{\"enum\": [\"accept\", \"decline\", \"cancel\"], \"type\": \"string\"}"

#define S_MCP_SERVER_ELICITATION_REQUEST_PARAMS                                                    \
	"{\"oneOf\": [{\"properties\": {\"_meta\": true, \"message\": {\"type\": \"string\"},"     \
	" \"mode\": {\"enum\": [\"form\"], \"type\": \"string\"}, \"requestedSchema\": {\"$re"     \
	"f\": \"#/definitions/McpElicitationSchema\"}}, \"required\": [\"message\", \"mode\","     \
	" \"requestedSchema\"], \"type\": \"object\"}, {\"properties\": {\"_meta\": true, \"m"     \
	"essage\": {\"type\": \"string\"}, \"mode\": {\"enum\": [\"openai/form\"], \"type\": "     \
	"\"string\"}, \"requestedSchema\": true}, \"required\": [\"message\", \"mode\", \"req"     \
	"uestedSchema\"], \"type\": \"object\"}, {\"properties\": {\"_meta\": true, \"message"     \
	"\": {\"type\": \"string\"}, \"mode\": {\"enum\": [\"openaiForm\"], \"type\": \"strin"     \
	"g\"}, \"requestedSchema\": true}, \"required\": [\"message\", \"mode\", \"requestedS"     \
	"chema\"], \"type\": \"object\"}, {\"properties\": {\"_meta\": true, \"elicitationId"      \
	"\": {\"type\": \"string\"}, \"message\": {\"type\": \"string\"}, \"mode\": {\"enum\""     \
	": [\"url\"], \"type\": \"string\"}, \"url\": {\"type\": \"string\"}}, \"required\": "     \
	"[\"elicitationId\", \"message\", \"mode\", \"url\"], \"type\": \"object\"}], \"prope"     \
	"rties\": {\"serverName\": {\"type\": \"string\"}, \"threadId\": {\"type\": \"string"      \
	"\"}, \"turnId\": {\"description\": \"Active Codex turn when this elicitation was obs"     \
	"erved, if app-server could correlate one.\\n\\nThis is nullable because MCP models e"     \
	"licitation as a standalone server-to-client request identified by the MCP server req"     \
	"uest id. It may be triggered during a turn, but turn context is app-server correlati"     \
	"on rather than part of the protocol identity of the elicitation itself.\", \"type\":"     \
	" [\"string\", \"null\"]}}, \"required\": [\"serverName\", \"threadId\"], \"type\": "      \
	"\"object\"}"

#define S_MCP_SERVER_ELICITATION_REQUEST_RESPONSE                                                  \
	"{\"properties\": {\"_meta\": {\"description\": \"Optional client metadata for form-m"     \
	"ode action handling.\"}, \"action\": {\"$ref\": \"#/definitions/McpServerElicitation"     \
	"Action\"}, \"content\": {\"description\": \"Structured user input for accepted elici"     \
	"tations, mirroring RMCP `CreateElicitationResult`.\\n\\nThis is nullable because dec"     \
	"line/cancel responses have no content.\"}}, \"required\": [\"action\"], \"type\": \""     \
	"object\"}"

const struct pdef pdefs_mcp_elicit[] = {
	{.name = "McpElicitationArrayType",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_ARRAY_TYPE},
	{.name = "McpElicitationBooleanSchema",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_BOOLEAN_SCHEMA},
	{.name = "McpElicitationBooleanType",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_BOOLEAN_TYPE},
	{.name = "McpElicitationConstOption",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_CONST_OPTION},
	{.name = "McpElicitationEnumSchema",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_ENUM_SCHEMA},
	{.name = "McpElicitationLegacyTitledEnumSchema",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_LEGACY_TITLED_ENUM_SCHEMA},
	{.name = "McpElicitationMultiSelectEnumSchema",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_MULTI_SELECT_ENUM_SCHEMA},
	{.name = "McpElicitationNumberSchema",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_NUMBER_SCHEMA},
	{.name = "McpElicitationNumberType",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_NUMBER_TYPE},
	{.name = "McpElicitationObjectType",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_OBJECT_TYPE},
	{.name = "McpElicitationPrimitiveSchema",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_PRIMITIVE_SCHEMA},
	{.name = "McpElicitationSchema", .kind = PD_ALIAS, .schema = S_MCP_ELICITATION_SCHEMA},
	{.name = "McpElicitationSingleSelectEnumSchema",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_SINGLE_SELECT_ENUM_SCHEMA},
	{.name = "McpElicitationStringFormat",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_STRING_FORMAT},
	{.name = "McpElicitationStringSchema",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_STRING_SCHEMA},
	{.name = "McpElicitationStringType",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_STRING_TYPE},
	{.name = "McpElicitationTitledEnumItems",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_TITLED_ENUM_ITEMS},
	{.name = "McpElicitationTitledMultiSelectEnumSchema",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_TITLED_MULTI_SELECT_ENUM_SCHEMA},
	{.name = "McpElicitationTitledSingleSelectEnumSchema",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_TITLED_SINGLE_SELECT_ENUM_SCHEMA},
	{.name = "McpElicitationUntitledEnumItems",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_UNTITLED_ENUM_ITEMS},
	{.name = "McpElicitationUntitledMultiSelectEnumSchema",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_UNTITLED_MULTI_SELECT_ENUM_SCHEMA},
	{.name = "McpElicitationUntitledSingleSelectEnumSchema",
		.kind = PD_ALIAS,
		.schema = S_MCP_ELICITATION_UNTITLED_SINGLE_SELECT_ENUM_SCHEMA},
	{.name = "McpServerElicitationAction",
		.kind = PD_ALIAS,
		.schema = S_MCP_SERVER_ELICITATION_ACTION},
	{.name = "McpServerElicitationRequestParams",
		.kind = PD_ALIAS,
		.schema = S_MCP_SERVER_ELICITATION_REQUEST_PARAMS},
	{.name = "McpServerElicitationRequestResponse",
		.kind = PD_ALIAS,
		.schema = S_MCP_SERVER_ELICITATION_REQUEST_RESPONSE},
	{NULL},
};
