/*
 * The approval decision table (server/agent/approval/approval_rules.c, approval_policy.c,
 * approval_cache.c): one row per (policy, sandbox, command, escalation, session cache) with the
 * action, the sandbox of the first attempt, the text for the model or the reason, and the
 * proposed amendment; the 0.169 observation of notes §4 (untrusted, "touch approved.txt && echo
 * hi": asked, amendment ["touch","approved.txt"], availableDecisions); the retry-after-denial
 * rule; is_likely_sandbox_denied; reply and policy parsing; the session cache.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/approval/approval_rules.h"
#include "agent/shell/shell_words.h"

#define UNTRUSTED                                                                                  \
	{                                                                                          \
		APPROVAL_UNTRUSTED                                                                 \
	}
#define ON_REQUEST                                                                                 \
	{                                                                                          \
		APPROVAL_ON_REQUEST                                                                \
	}
#define NEVER                                                                                      \
	{                                                                                          \
		APPROVAL_NEVER                                                                     \
	}
#define GRANULAR(sandbox)                                                                          \
	{                                                                                          \
		APPROVAL_GRANULAR, sandbox, true, false, false, true                               \
	}
#define DANGER	  APPROVAL_SANDBOX_DANGER_FULL_ACCESS
#define READ_ONLY APPROVAL_SANDBOX_READ_ONLY
#define WORKSPACE APPROVAL_SANDBOX_WORKSPACE_WRITE
#define EXTERNAL  APPROVAL_SANDBOX_EXTERNAL

struct ar_case {
	struct approval_policy policy;
	enum approval_sandbox sandbox;
	const char
		*script; /* run as ["/bin/bash", "-lc", script]; a leading '=' means argv "a b" */
	bool escalated;
	const char *prefix_rule; /* space-separated, or NULL */
	bool in_cache;
	enum approval_tool tool;
	/* expected */
	enum approval_action action;
	bool sandboxed;
	const char *text;      /* REJECT text or ASK reason (NULL: none) */
	const char *amendment; /* space-separated words, "" for none */
};

#define ESC_REFUSED(p)                                                                             \
	"approval policy is " p "; reject command \xe2\x80\x94 you cannot ask for escalated "      \
	"permissions if the approval policy is " p

static const struct ar_case cases[] = {
	/* untrusted: known-safe runs, the rest is asked; notes §4 observation first */
	{UNTRUSTED, WORKSPACE, "touch approved.txt && echo hi", false, NULL, false, 0, APPROVAL_ASK,
		true, NULL, "touch approved.txt"},
	{UNTRUSTED, WORKSPACE, "ls && pwd", false, NULL, false, 0, APPROVAL_RUN, true, NULL, "ls"},
	{UNTRUSTED, READ_ONLY, "=ls -la", false, NULL, false, 0, APPROVAL_RUN, true, NULL,
		"ls -la"},
	{UNTRUSTED, DANGER, "cat x", false, NULL, false, 0, APPROVAL_RUN, false, NULL, "cat x"},
	{UNTRUSTED, WORKSPACE, "git status", false, NULL, false, 0, APPROVAL_ASK, true, NULL,
		"git status"},
	/* issue 21: writing look-alikes of known-safe commands, judged as bash will run them */
	{UNTRUSTED, DANGER, "uniq /etc/hostname 1p && sed -n 1p '--expression=1e touch /tmp/x'",
		false, NULL, false, 0, APPROVAL_ASK, false, NULL, "uniq /etc/hostname 1p"},
	{UNTRUSTED, DANGER, "cat x && uniq *", false, NULL, false, 0, APPROVAL_ASK, false, NULL,
		"uniq *"},
	{UNTRUSTED, DANGER, "rg foo *.py", false, NULL, false, 0, APPROVAL_ASK, false, NULL,
		"rg foo *.py"},
	{UNTRUSTED, DANGER, "sed -n 1p \\-\\-expression=x", false, NULL, false, 0, APPROVAL_ASK,
		false, NULL, "sed -n 1p \\-\\-expression=x"},
	{UNTRUSTED, DANGER, "cat src/*.c && grep -n 'a*' f", false, NULL, false, 0, APPROVAL_RUN,
		false, NULL, "cat src/*.c"},
	{UNTRUSTED, WORKSPACE, "ls > out.txt", false, NULL, false, 0, APPROVAL_ASK, true, NULL,
		"/bin/bash -lc ls > out.txt"},
	{UNTRUSTED, WORKSPACE, "cat <<EOF\nx\nEOF\n", false, NULL, false, 0, APPROVAL_ASK, true,
		NULL, ""},
	{UNTRUSTED, WORKSPACE, "touch x", false, NULL, true, 0, APPROVAL_RUN, true, NULL,
		"touch x"},
	{UNTRUSTED, WORKSPACE, "touch x", true, NULL, false, 0, APPROVAL_REJECT, false,
		ESC_REFUSED("UnlessTrusted"), ""},
	{NEVER, WORKSPACE, "touch x", true, NULL, false, APPROVAL_TOOL_SHELL, APPROVAL_REJECT,
		false,
		"approval policy is Never; reject command \xe2\x80\x94 you should not ask for "
		"escalated permissions if the approval policy is Never",
		""},
	{UNTRUSTED, WORKSPACE, "rm -rf build", false, NULL, false, 0, APPROVAL_ASK, true, NULL,
		"rm -rf build"},
	{UNTRUSTED, WORKSPACE, "/usr/bin/ls", false, NULL, false, 0, APPROVAL_ASK, true, NULL,
		"/usr/bin/ls"},
	/* on-request: the sandbox decides, escalation is asked */
	{ON_REQUEST, WORKSPACE, "touch x", false, NULL, false, 0, APPROVAL_RUN, true, NULL,
		"touch x"},
	{ON_REQUEST, WORKSPACE, "touch x", true, NULL, false, 0, APPROVAL_ASK, false,
		"Do you want to touch x?", "touch x"},
	{ON_REQUEST, WORKSPACE, "touch x", true, "touch", false, 0, APPROVAL_ASK, false,
		"Do you want to touch x?", "touch"},
	{ON_REQUEST, WORKSPACE, "touch x", true, "bash -lc", false, 0, APPROVAL_ASK, false,
		"Do you want to touch x?", "touch x"},
	{ON_REQUEST, WORKSPACE, "touch x", true, "git pull", false, 0, APPROVAL_ASK, false,
		"Do you want to touch x?", "touch x"},
	{ON_REQUEST, WORKSPACE, "touch x", true, NULL, true, 0, APPROVAL_RUN, false,
		"Do you want to touch x?", "touch x"},
	{ON_REQUEST, READ_ONLY, "cat a", true, NULL, false, 0, APPROVAL_ASK, false,
		"Do you want to touch x?", "cat a"},
	{ON_REQUEST, DANGER, "touch x", true, NULL, false, 0, APPROVAL_RUN, false, NULL, "touch x"},
	{ON_REQUEST, WORKSPACE, "rm -rf build", false, NULL, false, 0, APPROVAL_ASK, true, NULL,
		"rm -rf build"},
	{ON_REQUEST, DANGER, "touch x", false, NULL, false, 0, APPROVAL_RUN, false, NULL,
		"touch x"},
	/* never: run, except a dangerous command inside a sandbox */
	{NEVER, WORKSPACE, "rm -rf build", false, NULL, false, 0, APPROVAL_REJECT, true,
		"`/bin/bash -lc 'rm -rf build'` rejected: blocked by policy", ""},
	{NEVER, DANGER, "rm -rf build", false, NULL, false, 0, APPROVAL_RUN, false, NULL,
		"rm -rf build"},
	{NEVER, WORKSPACE, "touch x", false, NULL, false, 0, APPROVAL_RUN, true, NULL, "touch x"},
	{NEVER, EXTERNAL, "rm -f x", false, NULL, false, 0, APPROVAL_RUN, false, NULL, "rm -f x"},
	/* granular: sandbox_approval decides whether a prompt may be shown */
	{GRANULAR(false), WORKSPACE, "rm -rf build", false, NULL, false, 0, APPROVAL_REJECT, true,
		"approval required by policy, but AskForApproval::Granular.sandbox_approval is "
		"false",
		"rm -rf build"},
	{GRANULAR(true), WORKSPACE, "rm -rf build", false, NULL, false, 0, APPROVAL_ASK, true, NULL,
		"rm -rf build"},
	{GRANULAR(true), WORKSPACE, "touch x", true, NULL, false, 0, APPROVAL_REJECT, false,
		ESC_REFUSED("Granular(GranularApprovalConfig { sandbox_approval: true, rules: "
			    "true, skill_approval: false, request_permissions: false, "
			    "mcp_elicitations: true })"),
		""},
	{GRANULAR(true), WORKSPACE, "touch x", false, NULL, false, 0, APPROVAL_RUN, true, NULL,
		"touch x"},
	{GRANULAR(false), DANGER, "touch x", false, NULL, false, 0, APPROVAL_RUN, false, NULL,
		"touch x"},
};

/* Words of a space-separated string. */
static void
words(const char *s, struct shell_words *w)
{
	shell_words_init(w);
	if (s != NULL && *s)
		assert_int_equal(shell_words_split(s, w), 0);
}

/* The amendment as space-separated words. */
static char *
joined(const struct shell_words *w)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < w->n; i++)
		len += strlen(w->v[i]) + 1;
	s = calloc(1, len);
	for (size_t i = 0; i < w->n; i++) {
		if (i > 0)
			strcat(s, " ");
		strcat(s, w->v[i]);
	}
	return s;
}

/* Build a case's request (argv in *argv, prefix rule in *prefix, cache in *cache). */
static void
request_of(const struct ar_case *c, struct approval_request *r, struct shell_words *argv,
	struct shell_words *prefix, struct approval_cache **cache)
{
	shell_words_init(argv);
	if (c->script[0] == '=')
		words(c->script + 1, argv);
	else
		shell_words_exec_argv("/bin/bash", 1, c->script, argv);
	words(c->prefix_rule, prefix);
	memset(r, 0, sizeof(*r));
	r->tool = c->tool;
	r->argv = shell_words_argv(argv);
	r->argc = argv->n;
	r->cwd = "/w";
	r->policy = c->policy;
	r->sandbox = c->sandbox;
	r->require_escalated = c->escalated;
	r->justification = c->escalated ? "Do you want to touch x?" : NULL;
	r->prefix_rule = shell_words_argv(prefix);
	r->prefix_rule_n = prefix->n;
	*cache = approval_cache_new();
	if (c->in_cache) {
		char *key = approval_cache_key(r->argv, r->argc, r->cwd, false, c->escalated);

		assert_int_equal(approval_cache_add(*cache, key), 0);
		free(key);
	}
	r->cache = *cache;
}

/* Every row of the decision table. */
static void
test_table(void **state)
{
	int failed = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct ar_case *c = &cases[i];
		struct shell_words argv, prefix;
		struct approval_cache *cache;
		struct approval_request r;
		struct approval_decision d;
		const char *text;
		char *amend;

		request_of(c, &r, &argv, &prefix, &cache);
		assert_int_equal(approval_rules_decide(&r, &d), 0);
		text = d.action == APPROVAL_REJECT ? d.reject_text : d.reason;
		amend = joined(&d.amendment);
		if (d.action != c->action ||
			(d.action != APPROVAL_REJECT && d.sandboxed != c->sandboxed) ||
			(text == NULL) != (c->text == NULL) ||
			(text != NULL && strcmp(text, c->text) != 0) ||
			strcmp(amend, c->amendment) != 0 ||
			d.cached !=
				(c->in_cache && d.action == APPROVAL_RUN &&
					c->action == APPROVAL_RUN && c->in_cache)) {
			print_error(
				"row %zu [%s]: action %d sandboxed %d cached %d text [%s] amendment "
				"[%s]\n",
				i, c->script, d.action, d.sandboxed, d.cached,
				text ? text : "(null)", amend);
			failed++;
		}
		free(amend);
		approval_rules_decision_free(&d);
		approval_cache_free(cache);
		shell_words_free(&argv);
		shell_words_free(&prefix);
	}
	assert_int_equal(failed, 0);
}

/* The request of notes §4 carries availableDecisions ["accept", {amendment}, "cancel"]. */
static void
test_available_decisions(void **state)
{
	const char *argv[] = {"/bin/bash", "-lc", "touch approved.txt && echo hi"};
	struct approval_request r = {
		.argv = argv, .argc = 3, .cwd = "/w", .policy = UNTRUSTED, .sandbox = WORKSPACE};
	struct approval_decision d;
	json_t *j;
	char *s;

	assert_int_equal(approval_rules_decide(&r, &d), 0);
	j = approval_rules_available_decisions(&d);
	s = json_dumps(j, JSON_COMPACT);
	assert_string_equal(s,
		"[\"accept\",{\"acceptWithExecpolicyAmendment\":{"
		"\"execpolicy_amendment\":[\"touch\",\"approved.txt\"]}},\"cancel\"]");
	free(s);
	json_decref(j);
	approval_rules_decision_free(&d);
	r.policy = (struct approval_policy)NEVER;
	r.argv = (const char *[]){"/bin/bash", "-lc", "cat <<EOF\nx\nEOF\n"};
	r.policy = (struct approval_policy)UNTRUSTED;
	assert_int_equal(approval_rules_decide(&r, &d), 0);
	j = approval_rules_available_decisions(&d);
	s = json_dumps(j, JSON_COMPACT);
	assert_string_equal(s, "[\"accept\",\"cancel\"]");
	free(s);
	json_decref(j);
	approval_rules_decision_free(&d);
}

/*
 * Retry without the sandbox after a denial: only untrusted and granular{sandbox_approval}, and
 * always asked unless the unsandboxed run itself was accepted for the session (issue 21 item
 * 5: accepting the sandboxed run, even for the session, does not cover it).
 */
static void
test_retry(void **state)
{
	const char *argv[] = {"/bin/bash", "-lc", "touch /etc/x"};
	struct approval_cache *cache = approval_cache_new();
	struct approval_request r = {
		.argv = argv, .argc = 3, .cwd = "/w", .sandbox = WORKSPACE, .cache = cache};
	char *key = approval_cache_key(argv, 3, "/w", false, false);
	char *escalated = approval_rules_retry_key(&r);

	assert_string_equal(escalated,
		"{\"command\":[\"/bin/bash\",\"-lc\",\"touch /etc/x\"],"
		"\"cwd\":\"/w\",\"tty\":false,\"sandbox_permissions\":"
		"\"require_escalated\"}");
	r.policy = (struct approval_policy)UNTRUSTED;
	assert_int_equal(approval_rules_retry(&r), APPROVAL_RETRY_ASK);
	approval_cache_add(cache, key); /* the sandboxed run, accepted for the session */
	assert_int_equal(approval_rules_retry(&r), APPROVAL_RETRY_ASK);
	r.cwd = "/elsewhere";
	approval_cache_add(cache, escalated);
	assert_int_equal(approval_rules_retry(&r), APPROVAL_RETRY_ASK);
	r.cwd = "/w";
	assert_int_equal(approval_rules_retry(&r), APPROVAL_RETRY_RUN);
	r.tty = true;
	assert_int_equal(approval_rules_retry(&r), APPROVAL_RETRY_ASK);
	r.tty = false;
	r.policy = (struct approval_policy)ON_REQUEST;
	assert_int_equal(approval_rules_retry(&r), APPROVAL_RETRY_NONE);
	r.policy = (struct approval_policy)NEVER;
	assert_int_equal(approval_rules_retry(&r), APPROVAL_RETRY_NONE);
	r.cache = NULL;
	r.policy = (struct approval_policy)GRANULAR(true);
	assert_int_equal(approval_rules_retry(&r), APPROVAL_RETRY_ASK);
	r.policy = (struct approval_policy)GRANULAR(false);
	assert_int_equal(approval_rules_retry(&r), APPROVAL_RETRY_NONE);
	free(key);
	free(escalated);
	approval_cache_free(cache);
}

/* is_likely_sandbox_denied on exit codes and output keywords. */
static void
test_sandbox_denied(void **state)
{
	static const struct {
		bool sandboxed;
		int exit;
		const char *out;
		bool denied;
	} t[] = {
		{false, 1, "Permission denied", false},
		{true, 0, "permission denied", false},
		{true, 1, "touch: cannot touch 'x': Read-only file system", true},
		{true, 1, "mkdir: Operation not permitted", true},
		{true, 127, "bash: foo: command not found", false},
		{true, 126, "x: Permission denied", true},
		{true, 159, "", true},
		{true, 1, "error: build failed", false},
		{true, 2, "", false},
		{true, 1, "blocked by LANDLOCK", true},
		{true, 1, "Failed to write file x", true},
		{true, 137, "", false},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (approval_rules_sandbox_denied(
			    t[i].sandboxed, t[i].exit, t[i].out, strlen(t[i].out)) != t[i].denied)
			fail_msg("row %zu: exit %d [%s]", i, t[i].exit, t[i].out);
}

/* The answers of item/commandExecution/requestApproval. */
static void
test_parse_reply(void **state)
{
	static const struct {
		const char *json;
		enum approval_reply want;
	} t[] = {
		{"{\"decision\":\"accept\"}", APPROVAL_REPLY_ACCEPT},
		{"{\"decision\":\"acceptForSession\"}", APPROVAL_REPLY_ACCEPT_FOR_SESSION},
		{"{\"decision\":\"decline\"}", APPROVAL_REPLY_DECLINE},
		{"{\"decision\":\"cancel\"}", APPROVAL_REPLY_CANCEL},
		{"{\"decision\":{\"acceptWithExecpolicyAmendment\":{\"execpolicy_amendment\":[\"ls\"]}}}",
			APPROVAL_REPLY_ACCEPT_WITH_AMENDMENT},
		{"{\"decision\":{\"applyNetworkPolicyAmendment\":{\"network_policy_amendment\":{"
		 "\"host\":\"h\",\"action\":\"deny\"}}}}",
			APPROVAL_REPLY_NETWORK_DENY},
		{"{\"decision\":{\"applyNetworkPolicyAmendment\":{\"network_policy_amendment\":{"
		 "\"host\":\"h\",\"action\":\"allow\"}}}}",
			APPROVAL_REPLY_NETWORK_ALLOW},
		{"{\"decision\":\"approve\"}", APPROVAL_REPLY_ERROR},
		{"{}", APPROVAL_REPLY_ERROR},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		json_t *j = json_loads(t[i].json, 0, NULL);

		assert_int_equal(approval_rules_parse_reply(j), t[i].want);
		json_decref(j);
	}
	assert_int_equal(approval_rules_parse_reply(NULL), APPROVAL_REPLY_ERROR);
}

/* approvalPolicy values and their Debug spelling. */
static void
test_policy(void **state)
{
	struct approval_policy p;
	char *cause = NULL, *s;
	json_t *j;

	j = json_string("on-request");
	assert_int_equal(approval_policy_parse(j, &p, NULL), 0);
	assert_int_equal(p.kind, APPROVAL_ON_REQUEST);
	json_decref(j);
	j = json_string("on-failure");
	assert_int_equal(approval_policy_parse(j, &p, &cause), -EINVAL);
	assert_non_null(strstr(cause, "unknown variant `on-failure`"));
	free(cause);
	json_decref(j);
	j = json_loads("{\"granular\":{\"sandbox_approval\":true,\"rules\":false,"
		       "\"mcp_elicitations\":true,\"skill_approval\":true}}",
		0, NULL);
	assert_int_equal(approval_policy_parse(j, &p, NULL), 0);
	assert_true(p.kind == APPROVAL_GRANULAR && p.sandbox_approval && !p.rules &&
		p.mcp_elicitations && p.skill_approval && !p.request_permissions);
	s = approval_policy_debug(&p);
	assert_string_equal(s,
		"Granular(GranularApprovalConfig { sandbox_approval: true, rules: "
		"false, skill_approval: true, request_permissions: false, "
		"mcp_elicitations: true })");
	free(s);
	json_decref(j);
	j = json_loads("{\"granular\":{\"sandbox_approval\":true}}", 0, NULL);
	assert_int_equal(approval_policy_parse(j, &p, &cause), -EINVAL);
	assert_string_equal(cause, "missing field `rules`");
	free(cause);
	json_decref(j);
	p.kind = APPROVAL_UNTRUSTED;
	s = approval_policy_debug(&p);
	assert_string_equal(s, "UnlessTrusted");
	free(s);
}

/* The session cache holds exact commands only, and is bounded. */
static void
test_cache(void **state)
{
	const char *a[] = {"/bin/bash", "-lc", "touch x"};
	const char *b[] = {"/bin/bash", "-lc", "touch x y"};
	struct approval_cache *c = approval_cache_new();
	char *ka = approval_cache_key(a, 3, "/w", false, false);
	char *kb = approval_cache_key(b, 3, "/w", false, false);
	char *kc = approval_cache_key(a, 3, "/other", false, false);
	int r = 0;

	assert_int_equal(approval_cache_add(c, ka), 0);
	assert_true(approval_cache_has(c, ka));
	assert_false(approval_cache_has(c, kb));
	assert_false(approval_cache_has(c, kc));
	for (int i = 0; i < APPROVAL_CACHE_MAX + 5 && r == 0; i++) {
		char key[32];

		snprintf(key, sizeof(key), "k%d", i);
		r = approval_cache_add(c, key);
	}
	assert_int_equal(r, -E2BIG);
	free(ka);
	free(kb);
	free(kc);
	approval_cache_free(c);
}

/* Random scripts under every policy: a decision always comes back, consistent and freed. */
static void
test_random_inputs(void **state)
{
	static const char alphabet[] = " \ta|&;'\"\\$`()<>#\n-=rmfcat<<EOFls*.";
	unsigned seed = 777;

	for (int iter = 0; iter < 20000; iter++) {
		char script[40];
		size_t len;
		struct approval_request r = {.cwd = "/w"};
		struct approval_decision d;
		const char *argv[3] = {"bash", "-lc", script};

		seed = seed * 1103515245u + 12345u;
		len = (seed >> 16) % (sizeof(script) - 1);
		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			script[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
		}
		script[len] = '\0';
		r.argv = argv;
		r.argc = 3;
		r.policy.kind = (enum approval_policy_kind)(iter % 4);
		r.sandbox = (enum approval_sandbox)((iter / 4) % 4);
		r.require_escalated = (iter / 16) % 2;
		assert_int_equal(approval_rules_decide(&r, &d), 0);
		assert_true(d.action != APPROVAL_REJECT || d.reject_text != NULL);
		assert_true(d.action != APPROVAL_RUN || !d.cached);
		approval_rules_decision_free(&d);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_available_decisions),
		cmocka_unit_test(test_retry),
		cmocka_unit_test(test_sandbox_denied),
		cmocka_unit_test(test_parse_reply),
		cmocka_unit_test(test_policy),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_random_inputs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
