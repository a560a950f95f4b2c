/*
 * The approval decision (approval_rules.h). The order of the checks is upstream's and matters:
 * the escalation gate, then the per-sub-command verdicts (known safe under untrusted, dangerous,
 * then by policy and sandbox), then the policy's refusal of prompts, then the session cache.
 * Nothing here blocks or keeps state: the cache is read, never written (the loop adds a key
 * when the user answers acceptForSession).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "approval_rules.h"
#include "safe_commands.h"
#include "agent/shell/shell_script.h"
#include "protocol/xmalloc.h"

#define PROMPT_CONFLICT_REASON "approval required by policy, but AskForApproval is set to Never"
#define REJECT_SANDBOX_APPROVAL_REASON                                                             \
	"approval required by policy, but AskForApproval::Granular.sandbox_approval is false"

/* A verdict on one sub-command, ordered by severity as upstream's Decision. */
enum ar_verdict { AR_ALLOW, AR_PROMPT, AR_FORBIDDEN };

/* The commands upstream judges: a plain script's commands, a heredoc's command, or argv. */
struct ar_commands {
	struct shell_script s; /* owned; n == 1 holding argv when not a script */
	bool complex;	       /* the heredoc fallback parser was needed */
	bool *safe;	       /* owned, per command: known safe as bash will run it */
};

/* A prefix_rule the model may not propose (upstream's BANNED_PREFIX_SUGGESTIONS). */
static bool
ar_banned_prefix(const char *const *p, size_t n)
{
	static const char *const banned[] = {"/bin/bash", "/bin/bash -c", "/bin/bash -lc",
		"/bin/sh", "/bin/sh -c", "/bin/sh -lc", "/bin/zsh", "/bin/zsh -c", "/bin/zsh -lc",
		"Rscript", "bash", "bash -c", "bash -lc", "bun", "bun -e", "bun run", "cmd",
		"cmd /c", "cmd /k", "cmd.exe", "cmd.exe /c", "cmd.exe /k", "dash", "dash -c",
		"deno", "deno eval", "env", "fish", "fish -c", "git", "julia", "julia -e", "ksh",
		"ksh -c", "lua", "lua -e", "node", "node -e", "nodejs", "nodejs -e", "npm run",
		"osascript", "perl", "perl -e", "php", "php -r", "pnpm run", "powershell",
		"powershell -Command", "powershell -EncodedCommand", "powershell -File",
		"powershell -c", "powershell.exe", "powershell.exe -Command",
		"powershell.exe -EncodedCommand", "powershell.exe -File", "powershell.exe -c",
		"pwsh", "pwsh -Command", "pwsh -EncodedCommand", "pwsh -File", "pwsh -c", "pwsh -e",
		"pwsh -ec", "pwsh -f", "py", "py -3", "pypy", "pypy3", "python", "python -",
		"python -c", "python3", "python3 -", "python3 -c", "pythonw", "pyw", "rm", "ruby",
		"ruby -e", "sh", "sh -c", "sh -lc", "sudo", "yarn run", "zsh", "zsh -c", "zsh -lc"};

	if (n == 0 || n > 2)
		return false;
	for (size_t i = 0; i < sizeof(banned) / sizeof(banned[0]); i++) {
		const char *b = banned[i], *sp = strchr(b, ' ');
		size_t first = sp ? (size_t)(sp - b) : strlen(b);

		if (strlen(p[0]) != first || strncmp(p[0], b, first) != 0)
			continue;
		if ((n == 1 && sp == NULL) || (n == 2 && sp != NULL && strcmp(p[1], sp + 1) == 0))
			return true;
	}
	return false;
}

/* Split the command as upstream's commands_for_exec_policy. */
static int
ar_commands_of(const struct approval_request *r, struct ar_commands *c)
{
	const char *script = shell_script_of(r->argv, r->argc);
	struct shell_words one;
	int rc;

	c->complex = false;
	c->safe = NULL;
	if (script != NULL && shell_script_parse_plain(script, &c->s) == 0) {
		if (c->s.n > 0) {
			/* judged on the words bash will pass (quotes removed, globs), not ours */
			c->safe = xcalloc(c->s.n, sizeof(*c->safe));
			safe_commands_script_each(script, c->safe, c->s.n);
			return 0;
		}
		shell_script_free(&c->s);
	}
	shell_words_init(&one);
	if (script != NULL && shell_script_heredoc_command(script, &one) == 0) {
		c->complex = true;
	} else if ((rc = shell_words_append(&one, r->argv, r->argc)) != 0) {
		shell_words_free(&one);
		return rc;
	}
	c->s.cmds = xmalloc(sizeof(*c->s.cmds));
	c->s.cmds[0] = one;
	c->s.n = 1;
	c->safe = xcalloc(1, sizeof(*c->safe));
	c->safe[0] = !c->complex && safe_commands_is_known_safe(shell_words_argv(&one), one.n);
	return 0;
}

/* The sandbox leaves the filesystem unrestricted (danger-full-access, or an external one). */
static bool
ar_unrestricted(enum approval_sandbox s)
{
	return s == APPROVAL_SANDBOX_DANGER_FULL_ACCESS || s == APPROVAL_SANDBOX_EXTERNAL;
}

/* One sub-command's verdict (render_decision_for_unmatched_command). */
static enum ar_verdict
ar_verdict(const struct approval_request *r, const struct shell_words *cmd, bool known_safe)
{
	const char *const *v = shell_words_argv(cmd);

	if (r->policy.kind == APPROVAL_UNTRUSTED && known_safe)
		return AR_ALLOW;
	if (safe_commands_is_dangerous(v, cmd->n)) {
		if (r->policy.kind != APPROVAL_NEVER)
			return AR_PROMPT;
		/* never asks: allowed only where the user turned the sandbox off */
		return ar_unrestricted(r->sandbox) ? AR_ALLOW : AR_FORBIDDEN;
	}
	switch (r->policy.kind) {
	case APPROVAL_NEVER:
		return AR_ALLOW;
	case APPROVAL_UNTRUSTED:
		return AR_PROMPT;
	case APPROVAL_ON_REQUEST:
	case APPROVAL_GRANULAR:
		break;
	}
	if (ar_unrestricted(r->sandbox))
		return AR_ALLOW;
	return r->require_escalated ? AR_PROMPT : AR_ALLOW;
}

/* Every sub-command would be allowed once the model's prefix_rule is an allow rule. */
static bool
ar_prefix_covers(const struct approval_request *r, const struct ar_commands *c)
{
	for (size_t i = 0; i < c->s.n; i++) {
		const struct shell_words *cmd = &c->s.cmds[i];
		bool match = cmd->n >= r->prefix_rule_n;

		for (size_t k = 0; match && k < r->prefix_rule_n; k++)
			match = strcmp(cmd->v[k], r->prefix_rule[k]) == 0;
		if (!match && ar_verdict(r, cmd, c->safe[i]) != AR_ALLOW)
			return false;
	}
	return true;
}

/* The proposed amendment: the model's prefix_rule when usable, else the first `want` command. */
static void
ar_amendment(const struct approval_request *r, const struct ar_commands *c,
	const enum ar_verdict *each, enum ar_verdict want, struct shell_words *out)
{
	if (c->complex)
		return;
	if (want == AR_PROMPT && r->prefix_rule_n > 0 &&
		!ar_banned_prefix(r->prefix_rule, r->prefix_rule_n) && ar_prefix_covers(r, c)) {
		shell_words_append(out, r->prefix_rule, r->prefix_rule_n);
		return;
	}
	for (size_t i = 0; i < c->s.n; i++) {
		if (each[i] == want) {
			shell_words_append(out, shell_words_argv(&c->s.cmds[i]), c->s.cmds[i].n);
			return;
		}
	}
}

/* The escalation gate: only on-request lets the model ask to leave the sandbox. */
static bool
ar_escalation_refused(const struct approval_request *r, struct approval_decision *d)
{
	char *policy;

	if (!r->require_escalated || r->policy.kind == APPROVAL_ON_REQUEST)
		return false;
	policy = approval_policy_debug(&r->policy);
	d->action = APPROVAL_REJECT;
	d->reject_form = APPROVAL_REJECT_VERBATIM;
	d->reject_text = xasprintf("approval policy is %s; reject command \u2014 you %s ask for "
				   "escalated permissions if the approval policy is %s",
		policy, r->tool == APPROVAL_TOOL_SHELL ? "should not" : "cannot", policy);
	free(policy);
	return true;
}

/* Turn the overall verdict into the decision. */
static void
ar_conclude(const struct approval_request *r, enum ar_verdict overall, struct approval_decision *d)
{
	if (overall == AR_FORBIDDEN) {
		char *cmd = shell_words_join(r->argv, r->argc);

		d->action = APPROVAL_REJECT;
		d->reject_form = APPROVAL_REJECT_TOOL_ERROR;
		d->reject_text = xasprintf("`%s` rejected: blocked by policy", cmd);
		free(cmd);
	} else if (overall == AR_PROMPT && r->policy.kind == APPROVAL_GRANULAR &&
		!r->policy.sandbox_approval) {
		d->action = APPROVAL_REJECT;
		d->reject_form = APPROVAL_REJECT_TOOL_ERROR;
		d->reject_text = xstrdup(REJECT_SANDBOX_APPROVAL_REASON);
	} else if (overall == AR_PROMPT && r->policy.kind == APPROVAL_NEVER) {
		d->action = APPROVAL_REJECT;
		d->reject_form = APPROVAL_REJECT_TOOL_ERROR;
		d->reject_text = xstrdup(PROMPT_CONFLICT_REASON);
	} else if (overall == AR_PROMPT) {
		d->cached = r->cache != NULL && d->cache_key != NULL &&
			approval_cache_has(r->cache, d->cache_key);
		d->action = d->cached ? APPROVAL_RUN : APPROVAL_ASK;
		d->reason = r->justification ? xstrdup(r->justification) : NULL;
	} else {
		d->action = APPROVAL_RUN;
	}
	/* the first attempt leaves the sandbox only when the model asked for it */
	d->sandboxed = !r->require_escalated && !ar_unrestricted(r->sandbox);
}

/* Decide for one command. */
int
approval_rules_decide(const struct approval_request *r, struct approval_decision *d)
{
	struct ar_commands c;
	enum ar_verdict overall = AR_ALLOW, *each;
	int rc;

	memset(d, 0, sizeof(*d));
	shell_words_init(&d->amendment);
	d->cache_key = approval_cache_key(r->argv, r->argc, r->cwd, r->tty, r->require_escalated);
	if (ar_escalation_refused(r, d))
		return 0;
	if ((rc = ar_commands_of(r, &c)) != 0)
		return rc;
	each = xcalloc(c.s.n, sizeof(*each));
	for (size_t i = 0; i < c.s.n; i++) {
		each[i] = ar_verdict(r, &c.s.cmds[i], c.safe[i]);
		if (each[i] > overall)
			overall = each[i];
	}
	/* Prompt proposes the first command needing approval; Allow the first allowed one
	 * (offered when a sandbox denial leads to the retry prompt) */
	if (overall != AR_FORBIDDEN)
		ar_amendment(r, &c, each, overall, &d->amendment);
	ar_conclude(r, overall, d);
	free(each);
	free(c.safe);
	shell_script_free(&c.s);
	return 0;
}

/* Free a decision. */
void
approval_rules_decision_free(struct approval_decision *d)
{
	if (d == NULL)
		return;
	free(d->reason);
	free(d->reject_text);
	free(d->cache_key);
	shell_words_free(&d->amendment);
	memset(d, 0, sizeof(*d));
}

/* ["accept", {"acceptWithExecpolicyAmendment":{...}}?, "cancel"] (default_available_decisions). */
json_t *
approval_rules_available_decisions(const struct approval_decision *d)
{
	json_t *arr = json_array();

	json_array_append_new(arr, json_string("accept"));
	if (d->amendment.n > 0) {
		json_t *cmd = json_array(), *inner = json_object(), *o = json_object();

		for (size_t i = 0; i < d->amendment.n; i++)
			json_array_append_new(cmd, json_string(d->amendment.v[i]));
		json_object_set_new(inner, "execpolicy_amendment", cmd);
		json_object_set_new(o, "acceptWithExecpolicyAmendment", inner);
		json_array_append_new(arr, o);
	}
	json_array_append_new(arr, json_string("cancel"));
	return arr;
}

/* {"decision": "accept" | "acceptForSession" | {...} | "decline" | "cancel"}. */
enum approval_reply
approval_rules_parse_reply(json_t *result)
{
	json_t *d = json_object_get(result, "decision"), *net;
	const char *s = json_string_value(d), *action;

	if (s != NULL) {
		if (strcmp(s, "accept") == 0)
			return APPROVAL_REPLY_ACCEPT;
		if (strcmp(s, "acceptForSession") == 0)
			return APPROVAL_REPLY_ACCEPT_FOR_SESSION;
		if (strcmp(s, "decline") == 0)
			return APPROVAL_REPLY_DECLINE;
		if (strcmp(s, "cancel") == 0)
			return APPROVAL_REPLY_CANCEL;
		return APPROVAL_REPLY_ERROR;
	}
	if (json_is_object(json_object_get(d, "acceptWithExecpolicyAmendment")))
		return APPROVAL_REPLY_ACCEPT_WITH_AMENDMENT;
	net = json_object_get(
		json_object_get(d, "applyNetworkPolicyAmendment"), "network_policy_amendment");
	action = json_string_value(json_object_get(net, "action"));
	if (action != NULL && strcmp(action, "allow") == 0)
		return APPROVAL_REPLY_NETWORK_ALLOW;
	if (action != NULL && strcmp(action, "deny") == 0)
		return APPROVAL_REPLY_NETWORK_DENY;
	return APPROVAL_REPLY_ERROR;
}

/* is_likely_sandbox_denied. */
bool
approval_rules_sandbox_denied(bool sandboxed, int exit_code, const char *output, size_t len)
{
	static const char *const keywords[] = {"operation not permitted", "permission denied",
		"read-only file system", "seccomp", "sandbox", "landlock", "failed to write file"};

	if (!sandboxed || exit_code == 0)
		return false;
	for (size_t k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++) {
		size_t kl = strlen(keywords[k]);

		for (size_t i = 0; output != NULL && i + kl <= len; i++)
			if (strncasecmp(output + i, keywords[k], kl) == 0)
				return true;
	}
	if (exit_code == 2 || exit_code == 126 || exit_code == 127)
		return false;
	return exit_code == 128 + 31; /* SIGSYS: seccomp killed it */
}

char *
approval_rules_retry_key(const struct approval_request *r)
{
	return approval_cache_key(r->argv, r->argc, r->cwd, r->tty, true);
}

/*
 * May a sandbox-denied command be re-run without the sandbox, and is the user asked first?
 * Upstream re-runs at once when the first attempt was approved; an approval of a sandboxed run
 * is not one of an unsandboxed run, so only the session key of the unsandboxed run skips it.
 */
enum approval_retry
approval_rules_retry(const struct approval_request *r)
{
	bool wants = r->policy.kind == APPROVAL_UNTRUSTED ||
		(r->policy.kind == APPROVAL_GRANULAR && r->policy.sandbox_approval);
	char *key;
	bool cached;

	if (!wants)
		return APPROVAL_RETRY_NONE;
	key = approval_rules_retry_key(r);
	cached = r->cache != NULL && key != NULL && approval_cache_has(r->cache, key);
	free(key);
	return cached ? APPROVAL_RETRY_RUN : APPROVAL_RETRY_ASK;
}
