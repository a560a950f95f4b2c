/*
 * Whether a shell command the model asked for runs, runs after asking, or is refused — upstream
 * 0.169's decision (exec_policy.rs render_decision_for_unmatched_command, the orchestrator, the
 * sandboxing traits), as a pure function the turn loop calls; docs/agent_tools.md has the table.
 *
 * Before: approval_rules_decide(request) -> RUN (in or outside the sandbox), ASK (then run as
 * `sandboxed` says once accepted), or REJECT (with upstream's text for the model). The command is
 * judged per plain sub-command of a `bash -lc` script: the most severe verdict wins, and the
 * first sub-command that needs asking becomes the proposed execpolicy amendment.
 *
 * After: a sandboxed run that failed and looks sandbox-denied (approval_rules_sandbox_denied:
 * exit code and output keywords, as upstream's is_likely_sandbox_denied) may be retried without
 * the sandbox: approval_rules_retry says NONE (the model sees the failure), ASK (reason
 * APPROVAL_RETRY_REASON) or RUN (the user accepted this very command unsandboxed for the
 * session). Stricter than upstream, which re-runs without asking when the sandboxed attempt
 * was approved: running less sandboxed than the policy always needs its own approval.
 *
 * acceptForSession covers the exact same command (argv, cwd, tty, escalation) for the rest of the
 * thread, never a prefix: struct approval_cache holds those keys, bounded. Accepting the
 * sandboxed run stores the unescalated key; accepting the retry stores the escalated one.
 */
#ifndef APPROVAL_RULES_H
#define APPROVAL_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "agent/shell/shell_words.h"

#define APPROVAL_CACHE_MAX     4096	   /* acceptForSession keys per thread */
#define APPROVAL_CACHE_KEY_MAX (64u << 10) /* a longer command is simply not cached */
#define APPROVAL_RETRY_REASON  "command failed; retry without sandbox?"

enum approval_policy_kind {
	APPROVAL_UNTRUSTED,
	APPROVAL_ON_REQUEST,
	APPROVAL_NEVER,
	APPROVAL_GRANULAR,
};

/* An approvalPolicy. GRANULAR: each flag says whether that kind of prompt may be shown. */
struct approval_policy {
	enum approval_policy_kind kind;
	bool sandbox_approval;
	bool rules;
	bool skill_approval;
	bool request_permissions;
	bool mcp_elicitations;
};

/* The sandbox policy kind of the turn. */
enum approval_sandbox {
	APPROVAL_SANDBOX_DANGER_FULL_ACCESS,
	APPROVAL_SANDBOX_READ_ONLY,
	APPROVAL_SANDBOX_WORKSPACE_WRITE,
	APPROVAL_SANDBOX_EXTERNAL,
};

/* Which tool asks: the refusal of an escalation is worded per tool, as upstream. */
enum approval_tool { APPROVAL_TOOL_EXEC_COMMAND, APPROVAL_TOOL_SHELL };

struct approval_cache;

/* One command the model wants to run. */
struct approval_request {
	enum approval_tool tool;
	const char *const *argv; /* as it will run, e.g. ["/bin/bash", "-lc", "ls"] */
	size_t argc;
	const char *cwd;
	bool tty;
	struct approval_policy policy;
	enum approval_sandbox sandbox;
	bool require_escalated;		/* sandbox_permissions: "require_escalated" */
	const char *justification;	/* becomes the approval request's reason; may be NULL */
	const char *const *prefix_rule; /* the model's prefix_rule suggestion; may be NULL */
	size_t prefix_rule_n;
	const struct approval_cache *cache; /* the thread's acceptForSession keys; may be NULL */
};

enum approval_action { APPROVAL_RUN, APPROVAL_ASK, APPROVAL_REJECT };

/* How a REJECT reaches the model. */
enum approval_reject_form {
	APPROVAL_REJECT_TOOL_ERROR, /* a ToolError::Rejected reason: tool_output_exec_rejected() */
	APPROVAL_REJECT_VERBATIM,   /* the whole function_call_output text */
};

struct approval_decision {
	enum approval_action action;
	bool sandboxed; /* RUN, or ASK once accepted: the first attempt runs in the sandbox */
	bool cached;	/* RUN without a prompt because acceptForSession covered it */
	char *reason;	/* ASK: the request's reason (the justification), or NULL */
	enum approval_reject_form reject_form;
	char *reject_text;	      /* REJECT: the reason or the verbatim text */
	struct shell_words amendment; /* proposedExecpolicyAmendment (n == 0: none) */
	char *cache_key;	      /* what acceptForSession stores for this command */
};

/* The user's answer to an approval request. */
enum approval_reply {
	APPROVAL_REPLY_ACCEPT,
	APPROVAL_REPLY_ACCEPT_FOR_SESSION,
	APPROVAL_REPLY_ACCEPT_WITH_AMENDMENT, /* run; the amendment is not persisted here */
	APPROVAL_REPLY_NETWORK_ALLOW,
	APPROVAL_REPLY_NETWORK_DENY,
	APPROVAL_REPLY_DECLINE,
	APPROVAL_REPLY_CANCEL,
	APPROVAL_REPLY_ERROR, /* a JSON-RPC error or an unreadable result */
};

enum approval_retry { APPROVAL_RETRY_NONE, APPROVAL_RETRY_ASK, APPROVAL_RETRY_RUN };

/*
 * Parse an approvalPolicy: "untrusted", "on-request", "never" or {"granular":{...}}. 0, or
 * -EINVAL with *cause ("on-failure" is refused as 0.169 refuses it).
 */
int approval_policy_parse(json_t *v, struct approval_policy *out, char **cause);
/* The policy as Rust's Debug prints it ("UnlessTrusted", "Granular(GranularApprovalConfig {..})").
 */
char *approval_policy_debug(const struct approval_policy *p);

/* Decide for one command; d is filled (free it with approval_rules_decision_free). 0/-E2BIG. */
int approval_rules_decide(const struct approval_request *r, struct approval_decision *d);
/* Free a decision's strings. Accepts NULL. */
void approval_rules_decision_free(struct approval_decision *d);
/* availableDecisions of the approval request: ["accept", {amendment}?, "cancel"]. */
json_t *approval_rules_available_decisions(const struct approval_decision *d);
/* Read a requestApproval result ({"decision": ...}); NULL (an error reply) gives ERROR. */
enum approval_reply approval_rules_parse_reply(json_t *result);

/*
 * Does a failed sandboxed run look denied by the sandbox? Not outside a sandbox or on exit 0;
 * yes when the output mentions "operation not permitted", "permission denied", "read-only file
 * system", "seccomp", "sandbox", "landlock" or "failed to write file" (any case); otherwise no for
 * exit 2, 126 and 127; yes for 128+SIGSYS (159, a seccomp kill); otherwise no.
 */
bool approval_rules_sandbox_denied(bool sandboxed, int exit_code, const char *output, size_t len);
/*
 * After such a denial: may it be re-run without the sandbox, and must the user be asked? An
 * approval of the sandboxed attempt never counts; only approval_rules_retry_key in the cache.
 */
enum approval_retry approval_rules_retry(const struct approval_request *r);
/* The acceptForSession key of the command run without the sandbox (heap). */
char *approval_rules_retry_key(const struct approval_request *r);

/* A bounded set of acceptForSession keys. */
struct approval_cache *approval_cache_new(void);
void approval_cache_free(struct approval_cache *c);
bool approval_cache_has(const struct approval_cache *c, const char *key);
/* Add a key; 0, or -E2BIG when the set is full or the key too long (then nothing is cached). */
int approval_cache_add(struct approval_cache *c, const char *key);
/* The key of a command: argv, cwd, tty and escalation, as one JSON text. Heap string. */
char *approval_cache_key(
	const char *const *argv, size_t argc, const char *cwd, bool tty, bool escalated);

#endif
