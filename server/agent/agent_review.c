/*
 * A review turn (review/start), as upstream 0.169 runs it: the reviewer is a fresh
 * conversation of its own (the review rubric in place of the base instructions, the prompt as
 * its only user message, read-only whatever the thread's policy, no approvals, the shell tools
 * only), so the thread's history is put aside while it runs and given back at the end, when
 * the review joins it as two messages: the user_action with the results, and the assistant's
 * rendered review. The reviewer's own items go nowhere but the rollout's item records, never
 * among the thread's Responses items: a resume after a crash mid-review finds the thread's
 * history as it was.
 *
 * What the client sees goes through a sink that wraps the api's: the reviewer's agent
 * messages and its token usage are kept back (upstream shows its structured answer instead,
 * as exitedReviewMode and one agentMessage); the rest passes through.
 */
#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "agent/review/review.h"
#include "agent/tools/tool_specs.h"
#include "protocol/xmalloc.h"
#include "thread/store/store.h"
#include "thread/uuidv7.h"

struct agent_review {
	const struct agent_sink *sink; /* the api's: what the review reports to */
	void *arg;
	char *last; /* the reviewer's last agent message, or NULL */
	int begun;  /* the thread's history is put aside (below) */
	struct buf hist;
	size_t *hist_lens, hist_n, hist_cap;
};

static int
agent_review_is_message(const json_t *item)
{
	const char *type = json_string_value(json_object_get(item, "type"));

	return type != NULL && strcmp(type, "agentMessage") == 0;
}

static void
agent_review_item_started(void *arg, json_t *item, int64_t at_ms)
{
	struct agent_review *r = arg;

	if (!agent_review_is_message(item))
		r->sink->item_started(r->arg, item, at_ms);
}

/* The reviewer's messages are kept back: the last one is its answer. */
static void
agent_review_item_completed(void *arg, json_t *item, int64_t at_ms)
{
	struct agent_review *r = arg;

	if (agent_review_is_message(item)) {
		free(r->last);
		r->last = xstrdup(json_string_value(json_object_get(item, "text")) ?: "");
		return;
	}
	r->sink->item_completed(r->arg, item, at_ms);
}

static void
agent_review_delta(void *arg, const char *method, json_t *params)
{
	struct agent_review *r = arg;

	if (strcmp(method, "item/agentMessage/delta") != 0)
		r->sink->delta(r->arg, method, params);
}

/* The reviewer's usage is its own conversation's (upstream reports none for a review). */
static void
agent_review_usage(void *arg, json_t *usage)
{
	(void)arg;
	(void)usage;
}

static void
agent_review_diff(void *arg, const char *diff)
{
	struct agent_review *r = arg;

	r->sink->diff(r->arg, diff);
}

static void
agent_review_plan(void *arg, json_t *plan)
{
	struct agent_review *r = arg;

	r->sink->plan(r->arg, plan);
}

static void
agent_review_error(void *arg, json_t *turn_error, int will_retry)
{
	struct agent_review *r = arg;

	r->sink->error(r->arg, turn_error, will_retry);
}

static void
agent_review_waiting(void *arg, int waiting)
{
	struct agent_review *r = arg;

	if (r->sink->waiting != NULL)
		r->sink->waiting(r->arg, waiting);
}

static void
agent_review_approval(void *arg, long long token, const char *method, json_t *params)
{
	struct agent_review *r = arg;

	r->sink->approval(r->arg, token, method, params);
}

static void
agent_review_approval_cancel(void *arg, long long token)
{
	struct agent_review *r = arg;

	r->sink->approval_cancel(r->arg, token);
}

/* Not reached: agent_review_end gives the turn back to the api's sink before done. */
static void
agent_review_done(void *arg, enum agent_status status, json_t *error)
{
	struct agent_review *r = arg;

	r->sink->done(r->arg, status, error);
}

static const struct agent_sink agent_review_sink = {
	.item_started = agent_review_item_started,
	.item_completed = agent_review_item_completed,
	.delta = agent_review_delta,
	.usage = agent_review_usage,
	.diff = agent_review_diff,
	.plan = agent_review_plan,
	.error = agent_review_error,
	.waiting = agent_review_waiting,
	.approval = agent_review_approval,
	.approval_cancel = agent_review_approval_cancel,
	.done = agent_review_done,
};

int
agent_review_start(struct agent *a, const struct agent_turn_opts *o, const char *prompt,
	const struct agent_sink *sink, void *arg, char **cause)
{
	struct agent_review *r = xcalloc(1, sizeof *r);
	struct agent_turn_opts ro = *o;
	struct agent_turn *t;
	json_t *input = json_pack("[{s:s, s:s}]", "type", "text", "text", prompt);
	json_t *ro_policy = json_pack("{s:s}", "type", "readOnly");
	json_t *never = json_string("never");
	int rc = -1;

	r->sink = sink;
	r->arg = arg;
	/* Read-only and never asking, whatever the thread says (upstream's review delegate). */
	ro.input = input;
	ro.sandbox_policy = ro_policy;
	ro.approval_policy = never;
	ro.output_schema = NULL;
	ro.collab_message = NULL;
	ro.tools = TOOL_SPEC_EXEC_COMMAND | TOOL_SPEC_WRITE_STDIN;
	if ((t = agent_turn_new(a, &ro, &agent_review_sink, r, cause)) == NULL) {
		free(r);
		goto out;
	}
	t->review = r;
	t->context_retried = 1; /* no compaction: it would rewrite the thread's rollout */
	t->user_input = json_deep_copy(input);
	t->phase = PHASE_MODEL;
	t->need_model = 1;
	agent_kick(t);
	rc = 0;
out:
	json_decref(input);
	json_decref(ro_policy);
	json_decref(never);
	return rc;
}

void
agent_review_entered(struct agent_turn *t, const char *hint)
{
	char id[37];
	json_t *item;
	int64_t now = agent_now_ms();

	uuidv7_new(id);
	item = json_pack("{s:s, s:s, s:s}", "type", "enteredReviewMode", "id", id, "review", hint);
	t->sink = t->review->sink; /* reported as the review's own, not the reviewer's */
	t->arg = t->review->arg;
	agent_item_start(t, item, now);
	agent_item_complete(t, item, now);
	t->sink = &agent_review_sink;
	t->arg = t->review;
	json_decref(item);
}

/* Swap the agent's history with the one kept in r. */
static void
agent_review_swap(struct agent *a, struct agent_review *r)
{
	struct buf b = a->hist;
	size_t *lens = a->hist_lens, n = a->hist_n, cap = a->hist_cap;

	a->hist = r->hist;
	a->hist_lens = r->hist_lens;
	a->hist_n = r->hist_n;
	a->hist_cap = r->hist_cap;
	r->hist = b;
	r->hist_lens = lens;
	r->hist_n = n;
	r->hist_cap = cap;
}

void
agent_review_begin(struct agent_turn *t)
{
	struct agent_review *r = t->review;
	json_t *in = t->o.input;
	char *cause = NULL;
	json_t *user;

	if (r == NULL || r->begun)
		return;
	/* The thread's history (loaded by now) waits aside; the reviewer starts empty. */
	buf_init(&r->hist, AGENT_HISTORY_MAX + 2);
	agent_review_swap(t->a, r);
	r->begun = 1;
	if ((user = agent_user_message(in, &cause)) != NULL)
		agent_history_add(t->a, user);
	free(cause);
}

int
agent_review_private(const struct agent *a)
{
	return a->turn != NULL && a->turn->review != NULL && a->turn->review->begun;
}

/* A Responses item into the thread's history and its rollout. */
static void
agent_review_keep(struct agent *a, json_t *item)
{
	if (a->c.thread != NULL)
		store_append_response_item(a->c.thread, item);
	agent_history_add(a, item);
}

void
agent_review_end(struct agent_turn *t, enum agent_status st)
{
	struct agent_review *r = t->review;
	struct agent *a = t->a;
	struct review_result res;
	char id[37], *mid;
	json_t *item;
	int64_t now;

	if (r == NULL)
		return;
	if (r->begun) {
		agent_history_clear(a); /* the reviewer's conversation ends here */
		agent_review_swap(a, r);
		r->begun = 0;
	}
	t->sink = r->sink;
	t->arg = r->arg;
	review_render(st == AGENT_COMPLETED ? r->last : NULL, &res);
	agent_review_keep(a, prompt_text_message("user", res.user_action));
	uuidv7_new(id);
	now = agent_now_ms();
	item = json_pack(
		"{s:s, s:s, s:s}", "type", "exitedReviewMode", "id", id, "review", res.review);
	agent_item_start(t, item, now);
	agent_item_complete(t, item, now);
	json_decref(item);
	uuidv7_new(id);
	mid = xasprintf("msg_%s", id);
	agent_review_keep(a,
		json_pack("{s:s, s:s, s:s, s:[{s:s, s:s}]}", "type", "message", "id", mid, "role",
			"assistant", "content", "type", "output_text", "text", res.assistant));
	item = json_pack("{s:s, s:n, s:s, s:s, s:n, s:n, s:n, s:n}", "type", "agentMessage",
		"moderation", "id", mid, "text", res.assistant, "phase", "memoryCitation",
		"delivery", "questions");
	now = agent_now_ms();
	agent_item_start(t, item, now);
	agent_item_complete(t, item, now);
	json_decref(item);
	free(mid);
	review_result_clear(&res);
}

void
agent_review_free(struct agent_review *r)
{
	if (r == NULL)
		return;
	free(r->last);
	buf_free(&r->hist);
	free(r->hist_lens);
	free(r);
}

/* git answered (or the agent goes): hand the result on, once. */
static void
agent_review_git_cb(void *arg, const char *error, const char *merge_base)
{
	struct agent *a = arg;
	agent_review_cb cb = a->review_cb;

	a->review_git = NULL;
	a->review_cb = NULL;
	cb(a->review_arg, error, merge_base);
}

int
agent_review_prepare(
	struct agent *a, const char *cwd, const json_t *target, agent_review_cb cb, void *arg)
{
	if (a->review_git != NULL || a->turn != NULL)
		return -1;
	a->review_cb = cb;
	a->review_arg = arg;
	a->review_git = review_git_start(a->c.loop, cwd, target, agent_review_git_cb, a);
	if (a->review_git == NULL)
		agent_review_git_cb(a, NULL, NULL); /* nothing to ask git (custom) */
	return 0;
}

void
agent_review_cancel(struct agent *a)
{
	if (a->review_git == NULL)
		return;
	review_git_cancel(a->review_git);
	agent_review_git_cb(a, "thread closed before the review started", NULL);
}
