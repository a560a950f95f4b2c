/*
 * Protocol tables: thread/shellCommand (the user's own `!cmd`), with upstream 0.169's names,
 * shapes and docs. What it reports is a commandExecution item (source userShell) of defs_item.c.
 */
#include <stddef.h>

#include "defs.h"

static const struct pfield thread_shell_command_params[] = {
	{"command", "string", PF_REQ, NULL,
		"Shell command string evaluated by the thread's configured shell. Unlike "
		"`command/exec`, this intentionally preserves shell syntax such as pipes, "
		"redirects, and quoting. This runs unsandboxed with full access rather than "
		"inheriting the thread sandbox policy."},
	{"threadId", "string", PF_REQ, NULL, NULL},
	{"timeoutMs", "int64?", 0, NULL,
		"Maximum execution time in milliseconds. Defaults to one hour when omitted or "
		"null. Must be non-negative; zero requests an immediate timeout, not unlimited "
		"execution. Does not affect the immediate RPC acknowledgement."},
	{NULL},
};

const struct pdef pdefs_shellcmd[] = {
	{.name = "ThreadShellCommandParams",
		.kind = PD_STRUCT,
		.fields = thread_shell_command_params},
	{.name = "ThreadShellCommandResponse",
		.kind = PD_ALIAS,
		.schema = "{\"type\": \"object\"}"},
	{NULL},
};
