/*
 * What the model is told about where it works, as upstream 0.169 words it: the AGENTS.md files
 * from the repository's root down to the cwd, and the sandbox mode's word for a policy. Pure
 * work on the file system and on JSON: the agent (agent_prompt.c) puts them into messages.
 */
#ifndef PROMPT_DOCS_H
#define PROMPT_DOCS_H

#include <jansson.h>

/*
 * The repository root above cwd (the nearest directory holding .git, as upstream's AGENTS.md
 * lookup finds it; review/start's repository check too), heap, or NULL.
 */
char *prompt_repo_root(const char *cwd);
/* The AGENTS.md user message's text for cwd (heap), or NULL when there is none. */
char *prompt_docs(const char *cwd);
/* The sandbox mode's word for a wire SandboxPolicy (or PermissionProfile): "read-only",
 * "workspace-write" or "danger-full-access". */
const char *prompt_sandbox_word(const json_t *policy);

#endif
