/*
 * review/start against the real daemon and the mock model, checked with what upstream 0.169
 * did on the same mock scripts (recorded once with scratch drivers; upstream is not needed
 * here): for each target the answer's shape, the notification order, the reviewer's exact
 * request (rubric, prompt, tools, read-only whatever the thread's policy) and what the review
 * leaves in the thread's history; the fallback for a reply that is not JSON; interrupt
 * mid-review; kill -9 mid-review then resume (the turn neither lost nor doubled, the thread's
 * history untouched); the errors (outside a repository, empty instructions).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"
#include "tests/helpers/skip_note.h"

#define ANSWER(text)                                                                               \
	"{`events`:[{`ev`:`created`},{`ev`:`message`,`id`:`m`,`text`:`" text                       \
	"`},{`ev`:`completed`}]}"
#define STALLED                                                                                    \
	"{`events`:[{`ev`:`created`},{`ev`:`reasoning`,`id`:`rs1`,`summary`:[`thinking`]}],"       \
	"`stall_ms`:-1}"
/* The reviewer runs a command first: its call and output are Responses items of its own. */
#define CALL_ECHO                                                                                  \
	"{`events`:[{`ev`:`created`},{`ev`:`function_call`,`call_id`:`c-rev`,`name`:"              \
	"`exec_command`,`arguments`:{`cmd`:`echo reviewer-output`,`login`:false}},"                \
	"{`ev`:`completed`}]}"
/* The reviewer's structured answer (upstream's rubric's schema), as JSON text in a script. */
#define FINDINGS                                                                                   \
	"{\\`findings\\`:[{\\`title\\`:\\`[P1] Off by one\\`,\\`body\\`:\\`The loop skips the "    \
	"last line.\\\\nSecond line.\\`,\\`confidence_score\\`:0.8,\\`priority\\`:1,"              \
	"\\`code_location\\`:{\\`absolute_file_path\\`:\\`/x/a.txt\\`,\\`line_range\\`:"           \
	"{\\`start\\`:1,\\`end\\`:2}}}],\\`overall_correctness\\`:\\`patch is incorrect\\`,"       \
	"\\`overall_explanation\\`:\\`One bug.\\`,\\`overall_confidence_score\\`:0.7}"
/* What upstream rendered from FINDINGS (exitedReviewMode.review and the agentMessage). */
#define FINDINGS_TEXT                                                                              \
	"One bug.\n\nReview comment:\n\n- [P1] Off by one \xe2\x80\x94 /x/a.txt:1-2\n  The loop "  \
	"skips the last line.\n  Second line."
#define ACTION_HEAD                                                                                \
	"<user_action>\n  <context>User initiated a review task. Here's the full review output "   \
	"from reviewer model. User may select one or more comments to resolve.</context>\n  "      \
	"<action>review</action>\n  <results>\n  "
#define ACTION_TAIL "\n  </results>\n  </user_action>\n"

/*
 * Upstream's review turn on these scripts, every target alike: its notifications less the
 * ones we do not send (warning, thread/readState/changed) and less its item/started of the
 * reviewer's own agentMessage, which it never completes (we send neither).
 */
static const char *const upstream_order[] = {"answer", "item/started:enteredReviewMode",
	"item/completed:enteredReviewMode", "thread/status/changed", "turn/started",
	"item/started:userMessage", "item/completed:userMessage", "item/started:exitedReviewMode",
	"item/completed:exitedReviewMode", "item/started:agentMessage",
	"item/completed:agentMessage", "thread/status/changed", "turn/completed"};

/* Run git in dir (argv after "git"), which must succeed; its first output line (heap). */
static char *
git(const char *dir, ...)
{
	const char *argv[16] = {"git", "-C", dir};
	int fds[2], st, n = 3;
	char out[256] = "";
	ssize_t r, len = 0;
	va_list ap;
	pid_t pid;

	va_start(ap, dir);
	while (n < 15 && (argv[n] = va_arg(ap, const char *)) != NULL)
		n++;
	va_end(ap);
	argv[n] = NULL;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execvp("git", (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	while ((r = read(fds[0], out + len, sizeof out - 1 - (size_t)len)) > 0)
		len += r;
	close(fds[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	out[len] = '\0';
	out[strcspn(out, "\n")] = '\0';
	return xstrdup(out);
}

/* A repository in the workspace: main with one commit, feat with a second, a change. */
static void
make_repo(struct tt *f)
{
	char *p = tt_path(f, "a.txt"), *q = tt_path(f, "b.txt");
	FILE *fp;

	free(git(f->workspace, "init", "-q", "-b", "main", NULL));
	free(git(f->workspace, "config", "user.email", "t@t", NULL));
	free(git(f->workspace, "config", "user.name", "t", NULL));
	fp = fopen(p, "w");
	fputs("one\n", fp);
	fclose(fp);
	free(git(f->workspace, "add", ".", NULL));
	free(git(f->workspace, "commit", "-q", "-m", "first", NULL));
	free(git(f->workspace, "checkout", "-q", "-b", "feat", NULL));
	fp = fopen(q, "w");
	fputs("b\n", fp);
	fclose(fp);
	free(git(f->workspace, "add", ".", NULL));
	free(git(f->workspace, "commit", "-q", "-m", "second", NULL));
	fp = fopen(p, "a");
	fputs("two\n", fp);
	fclose(fp);
	free(p);
	free(q);
}

static void
start(struct tt *f, const char *script)
{
	char *s = tt_script(script);
	struct tt_opts o = {.script = s, .experimental = 1};

	tt_start(f, &o);
	free(s);
	make_repo(f);
}

/* review/start, run to turn/completed (the answer first, as tt_turn). */
static json_t *
review(struct tt *f, json_t *target)
{
	json_t *r = tt_call(f, "review/start",
		json_pack("{s:s, s:o}", "threadId", f->thread_id, "target", target));
	json_t *msgs;

	asc_assert_result(r);
	msgs = tt_collect(f, NULL, NULL);
	json_array_insert_new(msgs, 0, r);
	return msgs;
}

/* The messages as "method" or "method:itemType" ("answer" for the first). */
static void
assert_order(const json_t *msgs, const char *const *want, size_t n)
{
	json_t *m, *item;
	size_t i, k = 0;
	char got[128];

	json_array_foreach((json_t *)msgs, i, m)
	{
		const char *method = json_string_value(json_object_get(m, "method"));

		if (i == 0)
			snprintf(got, sizeof got, "answer");
		else if ((item = json_object_get(json_object_get(m, "params"), "item")) != NULL)
			snprintf(got, sizeof got, "%s:%s", method,
				json_string_value(json_object_get(item, "type")));
		else
			snprintf(got, sizeof got, "%s", method);
		assert_true(k < n);
		assert_string_equal(got, want[k]);
		k++;
	}
	assert_int_equal(k, n);
}

/* The text of a request's last input item (the reviewer's prompt). */
static const char *
last_text(const json_t *body)
{
	json_t *in = json_object_get(body, "input");
	json_t *last = json_array_get(in, json_array_size(in) - 1);

	return json_string_value(
		json_object_get(json_array_get(json_object_get(last, "content"), 0), "text"));
}

/* Whether some input item of body has exactly this text. */
static int
has_exact(const json_t *body, const char *text)
{
	json_t *it, *c;
	size_t i, j;

	json_array_foreach(json_object_get(body, "input"), i, it)
		json_array_foreach(json_object_get(it, "content"), j, c)
	{
		const char *s = json_string_value(json_object_get(c, "text"));

		if (s != NULL && strcmp(s, text) == 0)
			return 1;
	}
	return 0;
}

/* fmt with every '@' replaced by sha (heap). */
static char *
with_sha(const char *fmt, const char *sha)
{
	char *out = xmalloc(strlen(fmt) * 2 + 128), *o = out;

	for (; *fmt != '\0'; fmt++) {
		if (*fmt == '@' && sha != NULL) {
			memcpy(o, sha, strlen(sha));
			o += strlen(sha);
		} else
			*o++ = *fmt;
	}
	*o = '\0';
	return out;
}

/* One target: shapes, order, the reviewer's request, the texts, and the history after. */
static void
check_target(json_t *target, const char *hint, const char *prompt_fmt, int merge_base)
{
	struct tt f;
	json_t *msgs, *ans, *turn, *recs, *body, *tools, *next;
	char *prompt, *rubric, *base = NULL, *action;
	const char *mine;

	start(&f, "[" ANSWER(FINDINGS) "," ANSWER("noted") "]");
	if (merge_base)
		base = git(f.workspace, "merge-base", "HEAD", "main", NULL);
	msgs = review(&f, target);
	/* The answer: upstream's shape, the hint as its turn's userMessage, the same thread. */
	ans = asc_assert_result(json_array_get(msgs, 0));
	turn = json_object_get(ans, "turn");
	assert_string_equal(json_string_value(json_object_get(ans, "reviewThreadId")), f.thread_id);
	assert_true(json_is_null(json_object_get(turn, "rootTurnId")));
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(
				json_object_get(json_array_get(json_object_get(turn, "items"), 0),
					"content"),
				0),
			"text")),
		hint);
	assert_order(msgs, upstream_order, sizeof upstream_order / sizeof upstream_order[0]);
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "enteredReviewMode", 0), "review")),
		hint);
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "exitedReviewMode", 0), "review")),
		FINDINGS_TEXT);
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "agentMessage", 0), "text")),
		FINDINGS_TEXT);
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(msgs), "status")), "completed");
	/* The reviewer's request: upstream's rubric and prompt byte for byte, two tools, read-only.
	 */
	recs = mm_records(&f.mm);
	body = tt_request_body(recs, 0);
	rubric = tt_read("tests/fixtures/review/upstream_review_prompt.txt");
	assert_non_null(rubric);
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(
				json_object_get(json_array_get(json_object_get(body, "input"), 0),
					"content"),
				0),
			"text")),
		rubric);
	prompt = with_sha(prompt_fmt, base);
	assert_string_equal(last_text(body), prompt);
	tools = json_object_get(body, "tools");
	assert_int_equal(json_array_size(tools), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 0), "name")),
		"exec_command");
	assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 1), "name")),
		"write_stdin");
	assert_true(tt_body_has_text(body, "<sandbox_mode>read-only</sandbox_mode>"));
	assert_true(tt_body_has_text(body, "<approval_policy>never</approval_policy>"));
	json_decref(recs);
	json_decref(msgs);
	/* After: the thread's next request has upstream's two messages, and not the reviewer's. */
	msgs = tt_turn(&f, "next", NULL, NULL, NULL);
	recs = mm_records(&f.mm);
	next = tt_request_body(recs, 1);
	action = xasprintf(ACTION_HEAD "%s" ACTION_TAIL,
		"One bug.\n\nReview comment:\n\n- [P1] Off by one \xe2\x80\x94 /x/a.txt:1-2\n  The "
		"loop skips the last line.\n  Second line.");
	assert_true(has_exact(next, action));
	assert_true(has_exact(next, FINDINGS_TEXT));
	mine = last_text(next);
	assert_string_equal(mine, "next");
	assert_false(tt_body_has_text(next, "# Review guidelines:"));
	assert_false(has_exact(next, prompt));
	free(action);
	free(prompt);
	free(rubric);
	free(base);
	json_decref(recs);
	json_decref(msgs);
	tt_stop(&f);
}

static void
test_uncommitted(void **state)
{
	(void)state;
	check_target(json_pack("{s:s}", "type", "uncommittedChanges"), "current changes",
		"Review the current code changes (staged, unstaged, and untracked files) and "
		"provide prioritized findings.",
		0);
}

static void
test_base_branch(void **state)
{
	(void)state;
	check_target(json_pack("{s:s, s:s}", "type", "baseBranch", "branch", "main"),
		"changes against 'main'",
		"Review the code changes against the base branch 'main'. The merge base commit for "
		"this comparison is @. Run `git diff @` to inspect the changes relative to main. "
		"Provide prioritized, actionable findings.",
		1);
}

/*
 * The repository check runs no git (the nearest .git, as the AGENTS.md lookup finds it), and
 * a base branch costs one git command under the sandbox, the merge base: here a git on PATH
 * that refuses `rev-parse` changes nothing.
 */
static void
test_git_once(void **state)
{
	char dir[] = "/tmp/review_git.XXXXXX", *path, *fake, *old = xstrdup(getenv("PATH"));
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	fake = xasprintf("%s/git", dir);
	fp = fopen(fake, "w");
	assert_non_null(fp);
	fputs("#!/bin/sh\n[ \"$1\" = rev-parse ] && exit 128\nexec /usr/bin/git \"$@\"\n", fp);
	fclose(fp);
	assert_int_equal(chmod(fake, 0755), 0);
	path = xasprintf("%s:%s", dir, old);
	setenv("PATH", path, 1);
	check_target(json_pack("{s:s}", "type", "uncommittedChanges"), "current changes",
		"Review the current code changes (staged, unstaged, and untracked files) and "
		"provide prioritized findings.",
		0);
	check_target(json_pack("{s:s, s:s}", "type", "baseBranch", "branch", "main"),
		"changes against 'main'",
		"Review the code changes against the base branch 'main'. The merge base commit for "
		"this comparison is @. Run `git diff @` to inspect the changes relative to main. "
		"Provide prioritized, actionable findings.",
		1);
	setenv("PATH", old, 1);
	unlink(fake);
	rmdir(dir);
	free(fake);
	free(path);
	free(old);
}

static void
test_commit(void **state)
{
	(void)state;
	check_target(json_pack("{s:s, s:s, s:s}", "type", "commit", "sha", "0123456789abcdef",
			     "title", "second"),
		"commit 0123456: second",
		"Review the code changes introduced by commit 0123456789abcdef (\"second\"). Provide "
		"prioritized, actionable findings.",
		0);
}

static void
test_custom(void **state)
{
	(void)state;
	check_target(
		json_pack("{s:s, s:s}", "type", "custom", "instructions", "  Check the README.  "),
		"Check the README.", "Check the README.", 0);
}

/* A reply that is not the JSON: upstream shows it as it is, and keeps it so. */
static void
test_not_json(void **state)
{
	struct tt f;
	json_t *msgs, *recs;
	char *action;

	(void)state;
	start(&f, "[" ANSWER("Looks fine to me, no issues.") "," ANSWER("ok") "]");
	msgs = review(&f, json_pack("{s:s}", "type", "uncommittedChanges"));
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "exitedReviewMode", 0), "review")),
		"Looks fine to me, no issues.");
	json_decref(msgs);
	json_decref(tt_turn(&f, "next", NULL, NULL, NULL));
	recs = mm_records(&f.mm);
	action = xasprintf(ACTION_HEAD "%s" ACTION_TAIL, "Looks fine to me, no issues.");
	assert_true(has_exact(tt_request_body(recs, 1), action));
	free(action);
	json_decref(recs);
	tt_stop(&f);
}

/* Read (and drop) every message up to the reviewer's reasoning item/completed: the
 * reviewer is then waiting on the stalled model. */
static void
drain_to_reasoning(struct tt *f)
{
	long long end = asc_now_ms() + asc_timeout(10000);
	json_t *m, *item;
	int done = 0;

	while (!done && asc_now_ms() < end) {
		if ((m = asc_next(f->c, 100)) == NULL)
			continue;
		item = json_object_get(json_object_get(m, "params"), "item");
		done = strcmp(json_string_value(json_object_get(m, "method")) ?: "",
			       "item/completed") == 0 &&
			strcmp(json_string_value(json_object_get(item, "type")) ?: "",
				"reasoning") == 0;
		json_decref(m);
	}
	assert_true(done);
}

/* Interrupt with review/start's turn id (upstream refuses that id; its inner one works). */
static void
test_interrupt(void **state)
{
	struct tt f;
	json_t *r, *msgs, *recs;
	char *id;

	(void)state;
	start(&f, "[" STALLED "," ANSWER("ok") "]");
	r = tt_call(&f, "review/start",
		json_pack("{s:s, s:{s:s}}", "threadId", f.thread_id, "target", "type",
			"uncommittedChanges"));
	id = xstrdup(json_string_value(
		json_object_get(json_object_get(asc_assert_result(r), "turn"), "id")));
	json_decref(r);
	drain_to_reasoning(&f);
	r = tt_call(&f, "turn/interrupt",
		json_pack("{s:s, s:s}", "threadId", f.thread_id, "turnId", id));
	asc_assert_result(r);
	json_decref(r);
	msgs = tt_collect(&f, NULL, NULL);
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(msgs), "status")), "interrupted");
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "exitedReviewMode", 0), "review")),
		"Reviewer failed to output a response.");
	assert_string_equal(
		json_string_value(json_object_get(tt_item(msgs, "agentMessage", 0), "text")),
		"Review was interrupted. Please re-run /review and wait for it to complete.");
	json_decref(msgs);
	json_decref(tt_turn(&f, "next", NULL, NULL, NULL));
	recs = mm_records(&f.mm);
	assert_true(has_exact(tt_request_body(recs, 1),
		"<user_action>\n  <context>User initiated a review task, but was interrupted. If user "
		"asks about this, tell them to re-initiate a review with `/review` and wait for it "
		"to complete.</context>\n  <action>review</action>\n  <results>\n  None.\n  "
		"</results>\n</user_action>\n\n"));
	json_decref(recs);
	free(id);
	tt_stop(&f);
}

/* kill -9 while the reviewer answers: after a restart the review turn is there once
 * (interrupted), and the thread's history holds nothing of the reviewer's conversation. */
static void
test_kill_9_mid_review(void **state)
{
	struct tt f;
	json_t *r, *turns, *msgs, *recs, *body;

	(void)state;
	start(&f, "[" ANSWER("first") "," CALL_ECHO "," STALLED "," ANSWER("after the crash") "]");
	json_decref(tt_turn(&f, "before", NULL, NULL, NULL));
	r = tt_call(&f, "review/start",
		json_pack("{s:s, s:{s:s}}", "threadId", f.thread_id, "target", "type",
			"uncommittedChanges"));
	asc_assert_result(r);
	json_decref(r);
	drain_to_reasoning(&f);
	kill(asc_pid(f.c), SIGKILL);
	asc_free_killed(f.c, SIGKILL);
	tt_respawn(&f);
	r = tt_call(&f, "thread/resume", json_pack("{s:s}", "threadId", f.thread_id));
	turns = json_object_get(json_object_get(asc_assert_result(r), "thread"), "turns");
	assert_int_equal(json_array_size(turns), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(turns, 1), "status")),
		"interrupted");
	json_decref(r);
	msgs = tt_turn(&f, "again", NULL, NULL, NULL);
	assert_string_equal(
		json_string_value(json_object_get(tt_completed(msgs), "status")), "completed");
	json_decref(msgs);
	recs = mm_records(&f.mm);
	body = tt_request_body(recs, json_array_size(recs) - 1);
	assert_true(has_exact(body, "before"));
	assert_true(has_exact(body, "again"));
	assert_false(tt_body_has_text(body, "Review the current code changes"));
	assert_null(tt_call_output(body, "c-rev"));
	assert_false(tt_body_has_text(body, "# Review guidelines:"));
	json_decref(recs);
	r = tt_call(&f, "thread/read",
		json_pack("{s:s, s:b}", "threadId", f.thread_id, "includeTurns", 1));
	assert_int_equal(json_array_size(json_object_get(
				 json_object_get(asc_assert_result(r), "thread"), "turns")),
		3);
	json_decref(r);
	tt_stop(&f);
}

/* The errors: a git target outside a repository (upstream lets the model find out), and
 * upstream's own for empty instructions and an unknown delivery. */
static void
test_errors(void **state)
{
	struct tt f;
	json_t *r;
	char *other;

	(void)state;
	start(&f, "[" ANSWER("x") "]");
	r = tt_call(&f, "review/start",
		json_pack("{s:s, s:{s:s, s:s}}", "threadId", f.thread_id, "target", "type",
			"custom", "instructions", "   "));
	asc_assert_error(r, -32600, "instructions must not be empty");
	json_decref(r);
	r = tt_call(&f, "review/start",
		json_pack("{s:s, s:{s:s}, s:s}", "threadId", f.thread_id, "target", "type",
			"uncommittedChanges", "delivery", "detached"));
	asc_assert_error(r, -32602, "delivery");
	json_decref(r);
	/* A thread whose cwd is in no repository. */
	r = tt_call(&f, "thread/start", json_pack("{s:s}", "cwd", "/"));
	other = xstrdup(json_string_value(
		json_object_get(json_object_get(asc_assert_result(r), "thread"), "id")));
	json_decref(r);
	if (access("/.git", F_OK) == 0) {
		free(other);
		tt_stop(&f);
		skip_test("/ is inside a git repository on this machine");
	}
	r = tt_call(&f, "review/start",
		json_pack("{s:s, s:{s:s}}", "threadId", other, "target", "type",
			"uncommittedChanges"));
	asc_assert_error(r, -32600, "not a git repository: /");
	json_decref(r);
	free(other);
	tt_stop(&f);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uncommitted),
		cmocka_unit_test(test_base_branch),
		cmocka_unit_test(test_git_once),
		cmocka_unit_test(test_commit),
		cmocka_unit_test(test_custom),
		cmocka_unit_test(test_not_json),
		cmocka_unit_test(test_interrupt),
		cmocka_unit_test(test_kill_9_mid_review),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
