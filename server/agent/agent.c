/*
 * The agent's turn lifecycle (agent.h): start, the state machine that drives a turn from an
 * idle watcher (agent_int.h), interrupt, steer, and the one end of every turn. Rules kept
 * here: done is reported once and last; before it, every started item was completed and
 * every approval resolved; the rollout gets the turn's end before done.
 */
#include <sys/stat.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent_int.h"
#include "agent/codemode/codemode_run.h"
#include "agent/diff/diff.h"
#include "agent/shell/shell_snapshot.h"
#include "agent/tools/clock.h"
#include "config/home.h"
#include "exec/exec.h"
#include "hooks/hooks.h"
#include "mcp/mcp.h"
#include "model/model.h"
#include "protocol/xmalloc.h"
#include "thread/store/store.h"
#include "thread/store/worker.h"
#include "thread/uuidv7.h"

static void agent_kick_cb(struct ev_loop *, ev_idle *, int);
static void agent_advance(struct agent_turn *t);
static void agent_end(struct agent_turn *t);

int64_t
agent_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct agent *
agent_new(const struct agent_config *c)
{
	struct agent *a = xcalloc(1, sizeof *a);

	a->c = *c;
	a->c.thread_id = xstrdup(c->thread_id);
	a->c.originator = c->originator != NULL ? xstrdup(c->originator) : NULL;
	a->c.user_agent = c->user_agent != NULL ? xstrdup(c->user_agent) : NULL;
	a->c.base_instructions =
		c->base_instructions != NULL ? xstrdup(c->base_instructions) : NULL;
	a->c.developer_instructions =
		c->developer_instructions != NULL ? xstrdup(c->developer_instructions) : NULL;
	buf_init(&a->hist, AGENT_HISTORY_MAX + 2);
	a->cache = approval_cache_new();
	if (json_is_array(c->dynamic_tools) && json_array_size(c->dynamic_tools) > 0)
		a->dynamic_tools = json_deep_copy(c->dynamic_tools);
	a->c.dynamic_tools = NULL; /* a->dynamic_tools is ours */
	a->next_session = 1;
	hooks_ref(a->c.hooks);
	if (c->thread != NULL) {
		const struct thread_meta *m = store_thread_meta(c->thread);
		struct stat st;

		a->total = m->tokens; /* usage accumulates across a resume, as upstream's */
		if (m->path != NULL && stat(m->path, &st) == 0 && st.st_size > 0) {
			a->rollout_path = xstrdup(m->path);
			a->rollout_end = st.st_size;
		}
	}
	if (a->rollout_path == NULL)
		a->history_state = AGENT_HISTORY_LOADED;
	return a;
}

void
agent_free(struct agent *a)
{
	if (a == NULL)
		return;
	agent_review_cancel(a); /* a review/start waiting for git is answered */
	if (a->turn != NULL)
		agent_turn_interrupt(a->turn); /* reported as usual */
	agent_set_mcp(a, NULL); /* the set outlives us: its settling no longer reaches us */
	/* Now, not from the loop: every process dies, every disk job finishes. */
	agent_shell_kill_all(a);
	if ((a->turn != NULL && a->turn->busy) || a->history_state == AGENT_HISTORY_LOADING) {
		worker_drain(a->c.worker);
		worker_complete(a->c.worker);
	}
	if (a->turn != NULL)
		agent_end(a->turn);
	agent_hooks_session_end(a); /* detached: the daemon waits for it (hooks_turn.h) */
	agent_history_clear(a);
	shell_snapshot_free(a->snap); /* its file goes with the thread, as upstream's */
	free(a->collab_last);
	approval_cache_free(a->cache);
	json_decref(a->dynamic_tools);
	json_decref(a->rate_limits);
	codemode_free(a->cm);
	free(a->rollout_path);
	free((char *)a->c.thread_id);
	free((char *)a->c.originator);
	free((char *)a->c.user_agent);
	free((char *)a->c.base_instructions);
	free((char *)a->c.developer_instructions);
	free(a);
}

void
agent_shell_snapshot(struct agent *a, const char *cwd, const json_t *sandbox_policy)
{
	struct shell_snapshot_opts o = {0};
	char *home;

	if (a->snap != NULL && strcmp(shell_snapshot_cwd(a->snap), cwd) == 0)
		return;
	home = home_path();
	o.loop = a->c.loop;
	o.codex_home = home;
	o.thread_id = a->c.thread_id;
	o.cwd = cwd;
	o.shell = AGENT_SNAPSHOT_SHELL;
	o.sandbox_policy = sandbox_policy;
	a->snap = shell_snapshot_start(&o, a->snap); /* the old one serves until this is ready */
	free(home);
}

void
agent_shell_snapshot_hurry(void)
{
	shell_snapshot_hurry();
}

void
agent_set_history(struct agent *a, json_t *items)
{
	size_t i;
	json_t *it;

	agent_history_clear(a);
	json_array_foreach(items, i, it) agent_history_add(a, json_incref(it));
	json_decref(items);
}

/*
 * Keep a Responses item of the history in the rollout, where a resume reads it back; a
 * reviewer's own conversation is not the thread's history (agent_review.c).
 */
void
agent_record_response(struct agent *a, json_t *item)
{
	if (a->c.thread != NULL && !agent_review_private(a))
		store_append_response_item(a->c.thread, item);
}

/* Forget the history. */
void
agent_history_clear(struct agent *a)
{
	buf_free(&a->hist);
	free(a->hist_lens);
	a->hist_lens = NULL;
	a->hist_n = a->hist_cap = 0;
}

/*
 * Append a Responses item (stolen) to the history, kept as its compact JSON text: what every
 * request sends is copied, not encoded again, and an item costs its text, not a tree. Past
 * AGENT_HISTORY_MAX the oldest items go (compaction keeps us far below).
 */
void
agent_history_add(struct agent *a, json_t *item)
{
	char *s = json_dumps(item, JSON_COMPACT);
	size_t len = s != NULL ? strlen(s) : 0, drop;

	json_decref(item);
	if (s == NULL || len + 1 > AGENT_HISTORY_MAX) {
		free(s);
		return;
	}
	while (a->hist_n > 0 && a->hist.len + len + 1 > AGENT_HISTORY_MAX) {
		drop = a->hist_lens[0] + (a->hist_n > 1 ? 1 : 0);
		buf_consume(&a->hist, drop < a->hist.len ? drop : a->hist.len);
		memmove(a->hist_lens, a->hist_lens + 1, (a->hist_n - 1) * sizeof *a->hist_lens);
		a->hist_n--;
	}
	if (a->hist_n == a->hist_cap) {
		a->hist_cap = a->hist_cap ? a->hist_cap * 2 : 64;
		a->hist_lens = xrealloc(a->hist_lens, a->hist_cap * sizeof *a->hist_lens);
	}
	if (a->hist.len > 0)
		buf_addc(&a->hist, ',');
	buf_add(&a->hist, s, len);
	a->hist_lens[a->hist_n++] = len;
	free(s);
}

/* The history's items as a JSON array (new reference): for compaction. */
json_t *
agent_history_items(const struct agent *a)
{
	struct buf text;
	json_t *items;

	buf_init(&text, AGENT_HISTORY_MAX + 4);
	buf_addc(&text, '[');
	buf_add(&text, a->hist.ptr != NULL ? a->hist.ptr : "", a->hist.len);
	buf_addc(&text, ']');
	items = json_loadb(text.ptr, text.len, 0, NULL);
	buf_free(&text);
	return items != NULL ? items : json_array();
}

struct agent_turn *
agent_running(struct agent *a)
{
	return a->turn;
}

const char *
agent_turn_id(const struct agent_turn *t)
{
	return t->id;
}

/*
 * Disk work for the agent on the shared worker. A job in flight keeps the loop alive (the
 * worker alone does not), so a turn waiting on the disk is never dropped by ev_run.
 */
void
agent_worker_post(struct agent *a, void (*run)(void *), void (*done)(void *), void *arg)
{
	ev_ref(a->c.loop);
	worker_post(a->c.worker, run, done, arg);
}

/* A job's done ran: the loop no longer waits for it. */
void
agent_worker_done(struct agent *a)
{
	ev_unref(a->c.loop);
}

/* Run agent_advance from the loop, soon. */
void
agent_kick(struct agent_turn *t)
{
	if (!ev_is_active(&t->kick))
		ev_idle_start(t->a->c.loop, &t->kick);
}

static void
agent_kick_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct agent_turn *t = container_of(w, struct agent_turn, kick);

	ev_idle_stop(loop, w);
	agent_advance(t);
}

/* Tell the sink whether we wait on the client (once per change). */
void
agent_set_waiting(struct agent_turn *t, int waiting)
{
	if (t->waiting == waiting)
		return;
	t->waiting = waiting;
	if (t->sink->waiting != NULL)
		t->sink->waiting(t->arg, waiting);
}

/* Report a started item (upstream's items carry their times too). */
void
agent_item_start(struct agent_turn *t, json_t *item, int64_t started_ms)
{
	json_object_set_new(item, "startedAtMs", json_integer(started_ms));
	json_object_set_new(item, "completedAtMs", json_null());
	t->sink->item_started(t->arg, item, started_ms);
}

/* Report a completed item and keep it in the rollout. */
void
agent_item_complete(struct agent_turn *t, json_t *item, int64_t started_ms)
{
	int64_t now = agent_now_ms();

	json_object_set_new(item, "startedAtMs", json_integer(started_ms));
	json_object_set_new(item, "completedAtMs", json_integer(now));
	t->sink->item_completed(t->arg, item, now);
	if (t->a->c.thread != NULL)
		store_append_item(t->a->c.thread, item, started_ms, now);
}

/* The turn failed (turn_error stolen): report it, and end once nothing runs. */
void
agent_fail(struct agent_turn *t, json_t *turn_error)
{
	if (t->failed || t->interrupted) {
		json_decref(turn_error);
		return;
	}
	t->failed = 1;
	t->error = turn_error;
	t->sink->error(t->arg, turn_error, 0);
	agent_hooks_interrupt(t);
	agent_model_cancel(t);
	agent_tools_abort(t);
	t->phase = PHASE_ENDING;
	agent_kick(t);
}

/* Free a turn's copies. */
static void
agent_turn_free(struct agent_turn *t)
{
	ev_idle_stop(t->a->c.loop, &t->kick);
	json_decref(t->o.input);
	json_decref(t->o.sandbox_policy);
	json_decref(t->o.approval_policy);
	json_decref(t->o.output_schema);
	free((char *)t->o.cwd);
	free((char *)t->o.model);
	free((char *)t->o.effort);
	free((char *)t->o.summary);
	config_provider_free(t->provider);
	json_decref(t->response_items);
	json_decref(t->steer);
	json_decref(t->calls);
	json_decref(t->error);
	json_decref(t->user_input);
	buf_free(&t->msg.text);
	buf_free(&t->reasoning.text);
	json_decref(t->msg.summary);
	json_decref(t->msg.content);
	json_decref(t->reasoning.summary);
	json_decref(t->reasoning.content);
	diff_turn_free(t->diffs);
	agent_review_free(t->review);
	agent_auth_free(t);
	agent_hooks_turn_free(t);
	free(t);
}

/* Everything stopped: end the turn in the rollout, then report done (once, last). */
static void
agent_end(struct agent_turn *t)
{
	enum agent_status st = t->interrupted ? AGENT_INTERRUPTED
		: t->failed		      ? AGENT_FAILED
					      : AGENT_COMPLETED;
	struct agent *a = t->a;
	json_t *err = t->error;

	t->ended = 1;
	agent_stream_finish(t);
	/* exec_command sessions die with the turn: their items complete before done. */
	agent_shell_kill_all(a);
	codemode_kill_all(a->cm); /* cells die with their turn */
	agent_set_waiting(t, 0);
	agent_review_end(t, st); /* a review's results join the history, before the turn ends */
	if (t->shell_only)
		agent_user_shell_steered(t); /* input given meanwhile: recorded, not answered */
	if (a->c.thread != NULL)
		store_turn_end(a->c.thread,
			st == AGENT_COMPLETED	     ? STORE_TURN_COMPLETED
				: st == AGENT_FAILED ? STORE_TURN_FAILED
						     : STORE_TURN_INTERRUPTED,
			err, NULL, NULL);
	a->turn = NULL;
	t->sink->done(t->arg, st, st == AGENT_FAILED ? err : NULL);
	agent_turn_free(t);
}

/* Drive the turn: start what is due, or end it once nothing runs. */
static void
agent_advance(struct agent_turn *t)
{
	char *cause = NULL;

	if (t->ended || agent_hooks_advance(t))
		return; /* a hook step holds the turn: its end kicks us */
	if (t->user_input != NULL) {
		/* The user's message, as the first item of the turn. */
		char uid[37];
		json_t *item;

		uuidv7_new(uid);
		item = agent_user_item(t->user_input, uid);
		agent_item_start(t, item, t->started_ms);
		agent_item_complete(t, item, t->started_ms);
		json_decref(item);
		json_decref(t->user_input);
		t->user_input = NULL;
	}
	if (t->user_running > 0)
		agent_user_shell_launch(t); /* thread/shellCommand's, after turn/started */
	if (t->steer_cut) {
		/* Steered while the model answered: that answer is cut, the model hears the input.
		 */
		t->steer_cut = 0;
		if (t->phase == PHASE_MODEL && t->req != NULL) {
			agent_model_cancel(t);
			t->need_model = 1;
		}
	}
	if (t->phase == PHASE_ENDING) {
		if (t->req != NULL || t->busy || t->user_running > 0)
			return; /* their completion kicks us again */
		agent_end(t);
		return;
	}
	if (t->phase == PHASE_TOOLS) {
		if (t->busy || codemode_busy(t->a->cm))
			return;
		if (t->calls != NULL && t->next < json_array_size(t->calls)) {
			agent_tools_next(t);
			return;
		}
		json_decref(t->calls);
		t->calls = NULL;
		t->next = 0;
		t->phase = PHASE_MODEL;
		t->need_model = 1;
	}
	if (t->phase == PHASE_MODEL && t->a->history_state != AGENT_HISTORY_LOADED) {
		agent_history_load(t->a); /* its completion kicks us again */
		return;
	}
	/* upstream lists the tools once every MCP server started or failed: wait for them */
	if (t->phase == PHASE_MODEL && t->need_model && t->req == NULL &&
		mcp_set_starting(t->a->mcp))
		return; /* a server's settling kicks us again (agent_mcp.c) */
	if (t->phase == PHASE_MODEL && t->need_model && t->req == NULL) {
		t->need_model = 0;
		agent_review_begin(t); /* a review: the reviewer's history from now on */
		if (agent_model_request(t, &cause) != 0) {
			agent_fail(t,
				json_pack("{s:s, s:s}", "message",
					cause != NULL ? cause : "model request failed",
					"codexErrorInfo", "other"));
			free(cause);
		}
	}
}

/* Copy a turn's options. */
static void
agent_turn_copy(struct agent_turn *t, const struct agent_turn_opts *o)
{
	t->o = *o;
	t->o.input = json_deep_copy(o->input);
	t->o.sandbox_policy = json_deep_copy(o->sandbox_policy);
	t->o.approval_policy = json_deep_copy(o->approval_policy);
	t->o.output_schema = o->output_schema != NULL ? json_deep_copy(o->output_schema) : NULL;
	t->o.cwd = xstrdup(o->cwd);
	t->o.model = xstrdup(o->model);
	t->o.effort = o->effort != NULL ? xstrdup(o->effort) : NULL;
	t->o.summary = o->summary != NULL ? xstrdup(o->summary) : NULL;
	t->o.collab_message = NULL; /* used at the start only (agent_collab) */
	t->o.collab_mode = NULL;    /* likewise (agent_turn_start) */
	t->provider = config_provider_dup(o->provider);
	t->o.provider = t->provider;
	if (t->o.context_window <= 0)
		t->o.context_window = AGENT_CONTEXT_WINDOW;
}

/* A new turn, registered with the rollout; NULL with *cause. */
struct agent_turn *
agent_turn_new(struct agent *a, const struct agent_turn_opts *o, const struct agent_sink *sink,
	void *arg, char **cause)
{
	struct store_turn_params sp = {0};
	struct agent_turn *t;
	char id[37] = "";

	if (a->turn != NULL) {
		*cause = xstrdup("a turn is already running");
		return NULL;
	}
	sp.model = o->model;
	sp.cwd = o->cwd;
	sp.effort = o->effort;
	sp.approval_policy = o->approval_policy;
	sp.context_window = o->context_window > 0 ? o->context_window : AGENT_CONTEXT_WINDOW;
	if (a->c.thread != NULL && store_turn_begin(a->c.thread, &sp, id, cause) != 0)
		return NULL;
	t = xcalloc(1, sizeof *t);
	t->a = a;
	snprintf(t->id, sizeof t->id, "%s",
		id[0] != '\0' ? id : (o->turn_id != NULL ? o->turn_id : ""));
	if (t->id[0] == '\0')
		uuidv7_new(t->id);
	agent_turn_copy(t, o);
	t->sink = sink;
	t->arg = arg;
	t->approval = -1;
	t->started_ms = agent_now_ms();
	t->diffs = diff_turn_new(t->o.cwd, AGENT_DIFF_MAX);
	buf_init(&t->msg.text, AGENT_TEXT_MAX);
	buf_init(&t->reasoning.text, AGENT_TEXT_MAX);
	ev_idle_init(&t->kick, agent_kick_cb);
	a->turn = t;
	return t;
}

/*
 * A collaboration mode selected by the turn: its developer message joins the history (and
 * the rollout) before the user's input, once per change of mode, as upstream does.
 */
static void
agent_collab(struct agent *a, const char *message)
{
	json_t *dev;

	if (message == NULL || (a->collab_last != NULL && strcmp(a->collab_last, message) == 0))
		return;
	dev = prompt_text_message("developer", message);
	if (a->c.thread != NULL)
		store_append_response_item(a->c.thread, dev);
	agent_history_add(a, dev);
	free(a->collab_last);
	a->collab_last = xstrdup(message);
}

void
agent_collab_restore(struct agent *a, const char *mode, const char *message)
{
	a->plan_mode = strcmp(mode, "plan") == 0;
	free(a->collab_last);
	a->collab_last = message != NULL ? xstrdup(message) : NULL;
}

int
agent_turn_start(struct agent *a, const struct agent_turn_opts *o, const struct agent_sink *sink,
	void *arg, char **cause)
{
	struct agent_turn *t;
	json_t *user;

	if ((user = agent_user_message(o->input, cause)) == NULL)
		return -1;
	if ((t = agent_turn_new(a, o, sink, arg, cause)) == NULL) {
		json_decref(user);
		return -1;
	}
	/* servers that died since the last turn start again now, as upstream restarts them */
	mcp_set_turn_begin(a->mcp);
	agent_collab(a, o->collab_message);
	if (o->collab_mode != NULL)
		a->plan_mode = strcmp(o->collab_mode, "plan") == 0;
	t->plan_mode = a->plan_mode;
	/* The model's first new input, after the prompt hooks (agent_hooks.c) from the loop. */
	t->hook_input = json_pack("[o]", user);
	prompt_skill_messages(o->cwd, o->input, t->hook_input);
	t->user_input = json_deep_copy(o->input);
	t->phase = PHASE_MODEL;
	t->need_model = 1;
	agent_kick(t);
	return 0;
}

int
agent_compact_start(struct agent *a, const struct agent_turn_opts *o, const struct agent_sink *sink,
	void *arg, char **cause)
{
	struct agent_turn *t;

	if ((t = agent_turn_new(a, o, sink, arg, cause)) == NULL)
		return -1;
	t->phase = PHASE_MODEL;
	t->need_model = 1;
	t->compacting = 1;
	t->compact_only = 1;
	agent_kick(t);
	return 0;
}

void
agent_turn_interrupt(struct agent_turn *t)
{
	if (t->ended || t->interrupted)
		return;
	t->interrupted = 1;
	agent_hooks_interrupt(t);
	agent_model_cancel(t);
	agent_tools_abort(t);
	agent_user_shell_abort(t); /* killed now: their items complete before done */
	t->phase = PHASE_ENDING;
	agent_kick(t);
}

int
agent_turn_steer(struct agent_turn *t, json_t *input)
{
	json_t *v;
	size_t i;

	if (t->ended || t->interrupted || t->failed || t->compact_only)
		return -1;
	if (t->steer == NULL)
		t->steer = json_array();
	json_array_foreach(input, i, v) json_array_append(t->steer, v);
	clock_sleep_end(t->sleep, CLOCK_INPUT); /* "ends early when new input arrives" */
	/* The response being streamed is cut short (from the loop, not from here). */
	t->steer_cut = 1;
	agent_kick(t);
	return 0;
}

void
agent_approval(struct agent *a, long long token, json_t *result)
{
	struct agent_turn *t = a->turn;
	void (*fn)(struct agent_turn *, enum approval_reply);
	void (*rfn)(struct agent_turn *, const json_t *, enum agent_answer);

	if (t != NULL &&
		agent_dynamic_answer(t, token, result,
			result != NULL ? AGENT_ANSWER_RESULT : AGENT_ANSWER_ERROR))
		return;
	if (t != NULL && t->approval == token && (rfn = t->on_result) != NULL) {
		t->approval = -1;
		t->on_result = NULL;
		agent_set_waiting(t, AGENT_WAIT_NONE);
		rfn(t, result, result != NULL ? AGENT_ANSWER_RESULT : AGENT_ANSWER_ERROR);
		agent_kick(t);
		return;
	}
	if (t == NULL || t->approval != token || t->on_answer == NULL)
		return; /* late, unknown or cancelled: ignored */
	fn = t->on_answer;
	t->approval = -1;
	t->on_answer = NULL;
	agent_set_waiting(t, 0);
	fn(t, approval_rules_parse_reply(result));
	agent_kick(t);
}

void
agent_approval_gone(struct agent *a, long long token)
{
	struct agent_turn *t = a->turn;
	void (*rfn)(struct agent_turn *, const json_t *, enum agent_answer);
	json_t *cancel;

	if (t != NULL && agent_dynamic_answer(t, token, NULL, AGENT_ANSWER_CANCEL))
		return;
	if (t != NULL && t->approval == token && (rfn = t->on_result) != NULL) {
		t->approval = -1;
		t->on_result = NULL;
		agent_set_waiting(t, AGENT_WAIT_NONE);
		rfn(t, NULL, AGENT_ANSWER_CANCEL);
		agent_kick(t);
		return;
	}
	cancel = json_pack("{s:s}", "decision", "cancel");
	agent_approval(a, token, cancel);
	json_decref(cancel);
}

void
agent_resume(struct agent *a)
{
	for (int i = 0; i < AGENT_SESSIONS; i++)
		if (a->sessions[i] != NULL && a->sessions[i]->proc != NULL)
			exec_resume(a->sessions[i]->proc);
	if (a->turn != NULL && a->turn->cmd != NULL && a->turn->cmd->proc != NULL)
		exec_resume(a->turn->cmd->proc);
	agent_user_shell_resume(a);
	mcp_set_resume(a->mcp);
}
