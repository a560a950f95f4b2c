/*
 * The turn's wire sandbox (a SandboxPolicy, or a managed PermissionProfile) as the approval
 * rules see it: which of upstream's sandbox kinds the command would run in.
 */
#ifndef APPROVAL_SANDBOX_H
#define APPROVAL_SANDBOX_H

#include <jansson.h>

#include "approval_rules.h"

/* readOnly (or no type), workspaceWrite, externalSandbox, managed, anything else: full access. */
enum approval_sandbox approval_sandbox_of(const json_t *policy);

#endif
