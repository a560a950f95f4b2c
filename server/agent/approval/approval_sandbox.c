/*
 * The wire sandbox as the approval rules see it (approval_sandbox.h). A managed profile with a
 * restricted file system is a sandbox to respect (workspace-write when it can write somewhere,
 * else read-only), never full access: only an unrestricted one is.
 */
#include <string.h>

#include "approval_sandbox.h"

static enum approval_sandbox
approval_sandbox_managed(const json_t *policy)
{
	const json_t *fs = json_object_get(policy, "fileSystem"), *e;
	size_t i;

	if (!json_is_string(json_object_get(fs, "type")) ||
		strcmp(json_string_value(json_object_get(fs, "type")), "unrestricted") == 0)
		return APPROVAL_SANDBOX_DANGER_FULL_ACCESS;
	json_array_foreach(json_object_get(fs, "entries"), i, e)
	{
		const char *acc = json_string_value(json_object_get(e, "access"));

		if (acc != NULL && strcmp(acc, "write") == 0)
			return APPROVAL_SANDBOX_WORKSPACE_WRITE;
	}
	return APPROVAL_SANDBOX_READ_ONLY;
}

enum approval_sandbox
approval_sandbox_of(const json_t *policy)
{
	const char *type = json_string_value(json_object_get(policy, "type"));

	if (type == NULL || strcmp(type, "readOnly") == 0)
		return APPROVAL_SANDBOX_READ_ONLY;
	if (strcmp(type, "workspaceWrite") == 0)
		return APPROVAL_SANDBOX_WORKSPACE_WRITE;
	if (strcmp(type, "externalSandbox") == 0 || strcmp(type, "external") == 0)
		return APPROVAL_SANDBOX_EXTERNAL;
	if (strcmp(type, "managed") == 0)
		return approval_sandbox_managed(policy);
	return APPROVAL_SANDBOX_DANGER_FULL_ACCESS;
}
