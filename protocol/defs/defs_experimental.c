/*
 * Upstream 0.169's experimental surface (its `#[experimental]` methods and params members):
 * what a connection may use only after initialize with capabilities.experimentalApi. The list
 * is the difference between upstream's stable schema and its `generate-json-schema
 * --experimental` one (../shared/reference/), methods in upstream's order, members by name.
 * Gating does not depend on whether we implement the method or member: upstream refuses
 * them all the same, and a client that reads the refusal learns the same thing from us.
 */
#include <string.h>

#include "defs.h"

const struct pexperimental pexperimentals[] = {
	{"server/diagnostics", NULL, 0},
	{"userVerification/status", NULL, 0},
	{"userVerification/enroll", NULL, 0},
	{"userVerification/delete", NULL, 0},
	{"userVerification/verify", NULL, 0},
	{"userVerification/cancel", NULL, 0},
	{"thread/sample", NULL, 0},
	{"thread/sample/cancel", NULL, 0},
	{"thread/increment_elicitation", NULL, 0},
	{"thread/decrement_elicitation", NULL, 0},
	{"thread/prediction/request", NULL, 0},
	{"thread/queue/add", NULL, 0},
	{"thread/queue/list", NULL, 0},
	{"thread/queue/update", NULL, 0},
	{"thread/queue/delete", NULL, 0},
	{"thread/queue/reorder", NULL, 0},
	{"thread/queue/start", NULL, 0},
	{"thread/settings/update", NULL, 0},
	{"thread/memoryMode/set", NULL, 0},
	{"thread/memory/read", NULL, 0},
	{"memory/status", NULL, 0},
	{"memory/reset", NULL, 0},
	{"rollout/compress", NULL, 0},
	{"thread/backgroundTerminals/clean", NULL, 0},
	{"thread/backgroundTerminals/list", NULL, 0},
	{"thread/backgroundTerminals/terminate", NULL, 0},
	{"project/list", NULL, 0},
	{"project/read", NULL, 0},
	{"project/create", NULL, 0},
	{"project/import", NULL, 0},
	{"project/update", NULL, 0},
	{"project/move", NULL, 0},
	{"project/delete", NULL, 0},
	{"thread/search", NULL, 0},
	{"thread/searchOccurrences", NULL, 0},
	{"thread/readState/update", NULL, 0},
	{"thread/items/read", NULL, 0},
	{"thread/guardianReview", NULL, 0},
	{"thread/prepareApprovedPlan", NULL, 0},
	{"plugin/search", NULL, 0},
	{"turn/settings/update", NULL, 0},
	{"thread/realtime/start", NULL, 0},
	{"thread/realtime/appendAudio", NULL, 0},
	{"thread/realtime/appendText", NULL, 0},
	{"thread/realtime/appendSpeech", NULL, 0},
	{"thread/realtime/stop", NULL, 0},
	{"thread/timeline/list", NULL, 0},
	{"thread/realtime/listVoices", NULL, 0},
	{"remoteControl/enable", NULL, 0},
	{"remoteControl/disable", NULL, 0},
	{"remoteControl/status/read", NULL, 0},
	{"remoteControl/pairing/start", NULL, 0},
	{"remoteControl/pairing/status", NULL, 0},
	{"remoteControl/client/list", NULL, 0},
	{"remoteControl/client/revoke", NULL, 0},
	{"collaborationMode/list", NULL, 0},
	{"mock/experimentalMethod", NULL, 0},
	{"environment/add", NULL, 0},
	{"environment/info", NULL, 0},
	{"environment/status", NULL, 0},
	{"mcpServer/event/stream/start", NULL, 0},
	{"mcpServer/event/stream/stop", NULL, 0},
	{"account/bedrock/discover", NULL, 0},
	{"account/bedrock/setup", NULL, 0},
	{"account/gcp/setup", NULL, 0},
	{"account/bedrock/checkGovCloudRequirements", NULL, 0},
	{"accountSession/list", NULL, 0},
	{"accountSession/switch", NULL, 0},
	{"process/spawn", NULL, 0},
	{"process/writeStdin", NULL, 0},
	{"process/kill", NULL, 0},
	{"process/resizePty", NULL, 0},
	{"fuzzyFileSearch/sessionStart", NULL, 0},
	{"fuzzyFileSearch/sessionUpdate", NULL, 0},
	{"fuzzyFileSearch/sessionStop", NULL, 0},
	{"thread/start", "allowProviderModelFallback", PX_TRUE_ONLY},
	{"thread/start", "daybreakEnabled", 0},
	{"thread/start", "dynamicTools", 0},
	{"thread/start", "environments", 0},
	{"thread/start", "experimentalRawEvents", PX_TRUE_ONLY},
	{"thread/start", "historyMode", 0},
	{"thread/start", "mockExperimentalField", 0},
	{"thread/start", "multiAgentMode", 0},
	{"thread/start", "permissions", 0},
	{"thread/start", "projectId", 0},
	{"thread/start", "runtimeWorkspaceRoots", 0},
	{"thread/start", "selectedCapabilityRoots", 0},
	{"thread/resume", "history", 0},
	{"thread/resume", "initialTurnsPage", 0},
	{"thread/resume", "path", 0},
	{"thread/resume", "permissions", 0},
	{"thread/resume", "runtimeWorkspaceRoots", 0},
	{"thread/fork", "attachToSource", PX_TRUE_ONLY},
	{"thread/fork", "beforeTurnId", 0},
	{"thread/fork", "deferGoalContinuation", PX_TRUE_ONLY},
	{"thread/fork", "experimentalDisablePredictionMcp", PX_TRUE_ONLY},
	{"thread/fork", "experimentalPredictionMode", PX_TRUE_ONLY},
	{"thread/fork", "path", 0},
	{"thread/fork", "permissions", 0},
	{"thread/fork", "runtimeWorkspaceRoots", 0},
	{"thread/metadata/update", "daybreakEnabled", 0},
	{"thread/metadata/update", "projectId", 0},
	{"thread/list", "ancestorThreadId", 0},
	{"thread/list", "attachedToThreadId", 0},
	{"thread/list", "includeAttachedThreads", PX_TRUE_ONLY},
	{"thread/list", "parentThreadId", 0},
	{"thread/list", "projectId", 0},
	{"turn/start", "additionalContext", 0},
	{"turn/start", "collaborationMode", 0},
	{"turn/start", "cyberAccessProgram", 0},
	{"turn/start", "environments", 0},
	{"turn/start", "multiAgentMode", 0},
	{"turn/start", "permissions", 0},
	{"turn/start", "responsesapiClientMetadata", 0},
	{"turn/start", "responsesapiClientMetadataPatch", 0},
	{"turn/start", "runtimeWorkspaceRoots", 0},
	{"turn/steer", "additionalContext", 0},
	{"turn/steer", "responsesapiClientMetadata", 0},
	{"turn/steer", "responsesapiClientMetadataPatch", 0},
	{"command/exec", "permissionProfile", 0},
	{NULL, NULL, 0},
};

/* True when a member's value makes upstream's gate trip: null never does, nor false for a
 * plain boolean (serde's default for an absent bool, so upstream cannot tell them apart). */
static int
defs_experimental_set(const struct pexperimental *x, const json_t *v)
{
	if (v == NULL || json_is_null(v))
		return 0;
	return !(x->flags & PX_TRUE_ONLY) || !json_is_false(v);
}

/* True when the whole method is experimental. */
int
defs_experimental_method(const char *method)
{
	for (const struct pexperimental *x = pexperimentals; x->method != NULL; x++)
		if (x->field == NULL && strcmp(x->method, method) == 0)
			return 1;
	return 0;
}

/*
 * What of this request needs experimentalApi: "" for the method itself, a params member's
 * name, or NULL for nothing.
 */
const char *
defs_experimental_gate(const char *method, const json_t *params)
{
	for (const struct pexperimental *x = pexperimentals; x->method != NULL; x++) {
		if (strcmp(x->method, method) != 0)
			continue;
		if (x->field == NULL)
			return "";
		if (defs_experimental_set(x, json_object_get(params, x->field)))
			return x->field;
	}
	return NULL;
}
