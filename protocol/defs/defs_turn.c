/*
 * Protocol tables: turns (turn/start, turn/steer, turn/interrupt, thread/compact/start), the
 * notifications a turn sends (items, deltas, token usage, diff, plan, error, serverRequest/
 * resolved) and the approval requests the server sends. The Turn, ThreadItem and UserInput
 * shapes they carry are thread definitions (defs_thread.c).
 */
#include <stddef.h>

#include "defs.h"

/*
 * CommandExecutionApprovalDecision mixes strings and objects: written as raw schema text.
 */
#define COMMAND_DECISION_SCHEMA                                                                                                         \
	"{\"oneOf\": [{\"description\": \"Run the command.\", \"enum\": [\"accept\"], "                                                 \
	"\"type\": \"string\"}, {\"description\": \"Run it, and the same command again without "                                        \
	"asking for the rest of the thread.\", \"enum\": [\"acceptForSession\"], \"type\": "                                            \
	"\"string\"}, {\"additionalProperties\": false, \"description\": \"Run it; the amendment "                                      \
	"is not kept by app-server.\", \"properties\": {\"acceptWithExecpolicyAmendment\": "                                            \
	"{\"properties\": {\"execpolicy_amendment\": {\"items\": {\"type\": \"string\"}, "                                              \
	"\"type\": \"array\"}}, \"required\": [\"execpolicy_amendment\"], \"type\": "                                                   \
	"\"object\"}}, \"required\": [\"acceptWithExecpolicyAmendment\"], \"title\": "                                                  \
	"\"AcceptWithExecpolicyAmendmentCommandExecutionApprovalDecision\", \"type\": "                                                 \
	"\"object\"}, {\"additionalProperties\": false, \"description\": \"A network rule for a "                                       \
	"host: allow runs the command, deny refuses it.\", \"properties\": "                                                            \
	"{\"applyNetworkPolicyAmendment\": {\"properties\": {\"network_policy_amendment\": "                                            \
	"{\"$ref\": \"#/definitions/NetworkPolicyAmendment\"}}, \"required\": [\"network_policy_amendment\"], \"type\": \"object\"}}, " \
	"\"required\": [\"applyNetworkPolicyAmendment\"], \"title\": "                                                                  \
	"\"ApplyNetworkPolicyAmendmentCommandExecutionApprovalDecision\", \"type\": "                                                   \
	"\"object\"}, {\"description\": \"Do not run it; the turn goes on.\", \"enum\": "                                               \
	"[\"decline\"], \"type\": \"string\"}, {\"description\": \"Do not run it, and interrupt "                                       \
	"the turn.\", \"enum\": [\"cancel\"], \"type\": \"string\"}]}"

static const struct pfield agent_message_delta_notification_fields[] = {
	{"delta", "string", PF_REQ, NULL, NULL},
	{"itemId", "string", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum command_execution_approval_kind_values[] = {
	{"command", NULL},
	{"writeStdin", NULL},
	{"humanCommand",
		"A checkpoint that needs a fresh human decision (accept, decline or cancel); not sent by app-server."},
	{NULL},
};

static const struct pfield command_execution_output_delta_notification_fields[] = {
	{"delta", "string", PF_REQ, NULL, NULL},
	{"itemId", "string", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield command_execution_request_approval_params_fields[] = {
	{"approvalId", "string?", 0, NULL, NULL},
	{"command", "string?", 0, NULL, NULL},
	{"commandActions", "CommandAction[]?", 0, NULL, NULL},
	{"cwd", "LegacyAppPathString?", 0, NULL, NULL},
	{"environmentId", "string?", 0, "null", NULL},
	{"itemId", "string", PF_REQ, NULL, NULL},
	{"kind", "CommandExecutionApprovalKind", 0, "\"command\"", NULL},
	{"networkApprovalContext", "NetworkApprovalContext?", 0, NULL, NULL},
	{"proposedExecpolicyAmendment", "string[]?", 0, NULL, NULL},
	{"proposedNetworkPolicyAmendments", "NetworkPolicyAmendment[]?", 0, NULL, NULL},
	{"reason", "string?", 0, NULL, NULL},
	{"startedAtMs", "int64", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield command_execution_request_approval_response_fields[] = {
	{"decision", "CommandExecutionApprovalDecision", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield context_compacted_notification_fields[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield error_notification_fields[] = {
	{"error", "TurnError", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{"willRetry", "boolean", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum file_change_approval_decision_values[] = {
	{"accept", "Write the patch."},
	{"acceptForSession", "Write it, and later patches of the same paths without asking."},
	{"decline", "Do not write it; the turn goes on."},
	{"cancel", "Do not write it, and interrupt the turn."},
	{NULL},
};

static const struct pfield file_change_request_approval_params_fields[] = {
	{"grantRoot", "string?", 0, NULL, NULL},
	{"itemId", "string", PF_REQ, NULL, NULL},
	{"reason", "string?", 0, NULL, NULL},
	{"startedAtMs", "int64", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield file_change_request_approval_response_fields[] = {
	{"decision", "FileChangeApprovalDecision", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield item_completed_notification_fields[] = {
	{"completedAtMs", "int64", PF_REQ, NULL, NULL},
	{"contentTokenCount", "uint64?", 0, "null", NULL},
	{"item", "ThreadItem", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield item_started_notification_fields[] = {
	{"item", "ThreadItem", PF_REQ, NULL, NULL},
	{"startedAtMs", "int64", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield network_approval_context_fields[] = {
	{"host", "string", PF_REQ, NULL, NULL},
	{"protocol", "NetworkApprovalProtocol", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum network_approval_protocol_values[] = {
	{"http"},
	{"https"},
	{"socks5Tcp"},
	{"socks5Udp"},
	{NULL},
};

static const struct pfield network_policy_amendment_fields[] = {
	{"action", "NetworkPolicyRuleAction", PF_REQ, NULL, NULL},
	{"host", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum network_policy_rule_action_values[] = {{"allow"}, {"deny"}, {NULL}};

static const struct pfield reasoning_summary_part_added_notification_fields[] = {
	{"itemId", "string", PF_REQ, NULL, NULL},
	{"summaryIndex", "int64", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield reasoning_summary_text_delta_notification_fields[] = {
	{"delta", "string", PF_REQ, NULL, NULL},
	{"itemId", "string", PF_REQ, NULL, NULL},
	{"summaryIndex", "int64", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield reasoning_text_delta_notification_fields[] = {
	{"contentIndex", "int64", PF_REQ, NULL, NULL},
	{"delta", "string", PF_REQ, NULL, NULL},
	{"itemId", "string", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield server_request_resolved_notification_fields[] = {
	{"requestId", "RequestId", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_compact_start_params_fields[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_token_usage_fields[] = {
	{"last", "TokenUsageBreakdown", PF_REQ, NULL, NULL},
	{"modelContextWindow", "int64?", 0, NULL, NULL},
	{"total", "TokenUsageBreakdown", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield thread_token_usage_updated_notification_fields[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"tokenUsage", "ThreadTokenUsage", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield token_usage_breakdown_fields[] = {
	{"cacheWriteInputTokens", "int64", 0, "0", NULL},
	{"cachedInputTokens", "int64", PF_REQ, NULL, NULL},
	{"inputTokens", "int64", PF_REQ, NULL, NULL},
	{"outputTokens", "int64", PF_REQ, NULL, NULL},
	{"reasoningOutputTokens", "int64", PF_REQ, NULL, NULL},
	{"totalTokens", "int64", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield turn_completed_notification_fields[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turn", "Turn", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield turn_diff_updated_notification_fields[] = {
	{"diff", "string", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield turn_interrupt_params_fields[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield turn_plan_step_fields[] = {
	{"status", "TurnPlanStepStatus", PF_REQ, NULL, NULL},
	{"step", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct penum turn_plan_step_status_values[] = {
	{"pending"}, {"inProgress"}, {"completed"}, {NULL}};

static const struct pfield turn_plan_updated_notification_fields[] = {
	{"explanation", "string?", 0, NULL, NULL},
	{"plan", "TurnPlanStep[]", PF_REQ, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield turn_start_params_fields[] = {
	{"approvalPolicy", "AskForApproval?", 0, NULL, NULL},
	{"approvalsReviewer", "ApprovalsReviewer?", 0, NULL, NULL},
	{"clientUserMessageId", "string?", 0, NULL, NULL},
	{"collaborationMode", "CollaborationMode?", 0, NULL,
		"EXPERIMENTAL - Set a pre-set collaboration mode. Takes precedence over model, "
		"reasoning_effort, and developer instructions if set.\n\nFor "
		"`collaboration_mode.settings.developer_instructions`, `null` means \"use the "
		"built-in instructions for the selected mode\"."},
	{"cwd", "string?", 0, NULL, NULL},
	{"disabledPluginIds", "string[]?", 0, NULL, NULL},
	{"effort", "ReasoningEffort?", 0, NULL, NULL},
	{"input", "UserInput[]", PF_REQ, NULL, "What the user says: text, images, local images."},
	{"model", "string?", 0, NULL, NULL},
	{"outputSchema", "any", 0, NULL, "A JSON Schema for the final answer of this turn only."},
	{"parentTurnId", "string?", 0, NULL, NULL},
	{"permissions", "string?", 0, NULL,
		"Select a named permissions profile id for this turn and subsequent turns. Cannot be "
		"combined with `sandboxPolicy`."},
	{"personality", "Personality?", 0, NULL, NULL},
	{"rootTurnId", "string?", 0, NULL, NULL},
	{"sandboxPolicy", "SandboxPolicy?", 0, NULL, NULL},
	{"serviceTier", "string?", 0, NULL, NULL},
	{"serviceTierForTurn", "string?", 0, NULL, NULL},
	{"summary", "ReasoningSummary?", 0, NULL, NULL},
	{"threadId", "string", PF_REQ, NULL, "A thread loaded by thread/start, resume or fork."},
	{"toolOutput", "TurnToolOutput?", 0, NULL, NULL},
	{"turnTrigger", "string?", 0, NULL, NULL},
	{NULL},
};

static const struct pfield turn_start_response_fields[] = {
	{"turn", "Turn", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield turn_started_notification_fields[] = {
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"turn", "Turn", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield turn_steer_params_fields[] = {
	{"clientUserMessageId", "string?", 0, NULL, NULL},
	{"expectedTurnId", "string", PF_REQ, NULL, "The running turn; another one is refused."},
	{"input", "UserInput[]", PF_REQ, NULL, "What the user says: text, images, local images."},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield turn_steer_response_fields[] = {
	{"turnId", "string", PF_REQ, NULL, NULL},
	{NULL},
};

static const struct pfield turn_tool_output_fields[] = {
	{"name", "string", PF_REQ, NULL, NULL},
	{"namespace", "string?", 0, NULL, NULL},
	{"output", "FunctionCallOutputBody", PF_REQ, NULL, NULL},
	{"retain", "boolean", 0, NULL, NULL},
	{NULL},
};

const struct pdef pdefs_turn[] = {
	{.name = "TurnStartParams", .kind = PD_STRUCT, .fields = turn_start_params_fields},
	{.name = "TurnStartResponse", .kind = PD_STRUCT, .fields = turn_start_response_fields},
	{.name = "TurnSteerParams", .kind = PD_STRUCT, .fields = turn_steer_params_fields},
	{.name = "TurnSteerResponse", .kind = PD_STRUCT, .fields = turn_steer_response_fields},
	{.name = "TurnInterruptParams", .kind = PD_STRUCT, .fields = turn_interrupt_params_fields},
	{.name = "TurnInterruptResponse", .kind = PD_STRUCT},
	{.name = "TurnToolOutput", .kind = PD_STRUCT, .fields = turn_tool_output_fields},
	{.name = "ThreadCompactStartParams",
		.kind = PD_STRUCT,
		.fields = thread_compact_start_params_fields},
	{.name = "ThreadCompactStartResponse", .kind = PD_STRUCT},
	{.name = "TurnStartedNotification",
		.kind = PD_STRUCT,
		.fields = turn_started_notification_fields},
	{.name = "TurnCompletedNotification",
		.kind = PD_STRUCT,
		.fields = turn_completed_notification_fields},
	{.name = "ItemStartedNotification",
		.kind = PD_STRUCT,
		.fields = item_started_notification_fields},
	{.name = "ItemCompletedNotification",
		.kind = PD_STRUCT,
		.fields = item_completed_notification_fields},
	{.name = "AgentMessageDeltaNotification",
		.kind = PD_STRUCT,
		.fields = agent_message_delta_notification_fields},
	{.name = "ReasoningSummaryTextDeltaNotification",
		.kind = PD_STRUCT,
		.fields = reasoning_summary_text_delta_notification_fields},
	{.name = "ReasoningSummaryPartAddedNotification",
		.kind = PD_STRUCT,
		.fields = reasoning_summary_part_added_notification_fields},
	{.name = "ReasoningTextDeltaNotification",
		.kind = PD_STRUCT,
		.fields = reasoning_text_delta_notification_fields},
	{.name = "CommandExecutionOutputDeltaNotification",
		.kind = PD_STRUCT,
		.fields = command_execution_output_delta_notification_fields},
	{.name = "ThreadTokenUsageUpdatedNotification",
		.kind = PD_STRUCT,
		.fields = thread_token_usage_updated_notification_fields},
	{.name = "ThreadTokenUsage", .kind = PD_STRUCT, .fields = thread_token_usage_fields},
	{.name = "TokenUsageBreakdown", .kind = PD_STRUCT, .fields = token_usage_breakdown_fields},
	{.name = "TurnDiffUpdatedNotification",
		.kind = PD_STRUCT,
		.fields = turn_diff_updated_notification_fields},
	{.name = "TurnPlanUpdatedNotification",
		.kind = PD_STRUCT,
		.fields = turn_plan_updated_notification_fields},
	{.name = "TurnPlanStep", .kind = PD_STRUCT, .fields = turn_plan_step_fields},
	{.name = "TurnPlanStepStatus", .kind = PD_ENUM, .values = turn_plan_step_status_values},
	{.name = "ErrorNotification", .kind = PD_STRUCT, .fields = error_notification_fields},
	{.name = "ContextCompactedNotification",
		.kind = PD_STRUCT,
		.fields = context_compacted_notification_fields},
	{.name = "ServerRequestResolvedNotification",
		.kind = PD_STRUCT,
		.fields = server_request_resolved_notification_fields},
	{.name = "CommandExecutionRequestApprovalParams",
		.kind = PD_STRUCT,
		.fields = command_execution_request_approval_params_fields},
	{.name = "CommandExecutionRequestApprovalResponse",
		.kind = PD_STRUCT,
		.fields = command_execution_request_approval_response_fields},
	{.name = "CommandExecutionApprovalDecision",
		.kind = PD_ALIAS,
		.schema = COMMAND_DECISION_SCHEMA},
	{.name = "CommandExecutionApprovalKind",
		.kind = PD_ENUM,
		.values = command_execution_approval_kind_values},
	{.name = "NetworkApprovalContext",
		.kind = PD_STRUCT,
		.fields = network_approval_context_fields},
	{.name = "NetworkApprovalProtocol",
		.kind = PD_ENUM,
		.values = network_approval_protocol_values},
	{.name = "NetworkPolicyAmendment",
		.kind = PD_STRUCT,
		.fields = network_policy_amendment_fields},
	{.name = "NetworkPolicyRuleAction",
		.kind = PD_ENUM,
		.values = network_policy_rule_action_values},
	{.name = "FileChangeRequestApprovalParams",
		.kind = PD_STRUCT,
		.fields = file_change_request_approval_params_fields},
	{.name = "FileChangeRequestApprovalResponse",
		.kind = PD_STRUCT,
		.fields = file_change_request_approval_response_fields},
	{.name = "FileChangeApprovalDecision",
		.kind = PD_ENUM,
		.values = file_change_approval_decision_values},
	{NULL},
};
