/*
 * A loaded thread's model history, read back from its rollout (ours or upstream's) on the
 * worker the first time a turn needs it: the `response_item` records in order, a `compacted`
 * record replacing what came before (its replacement_history, or the user's messages and the
 * summary), without what every request carries anew (developer messages, the environment
 * context, AGENTS.md): agent_prompt.c adds those itself. A collaboration mode's developer
 * message stays: it is history, sent once when a turn selected the mode (agent_collab). Only the
 * part of the file written before this agent existed is read; what the agent appends since is in
 * memory already.
 */
#include <sys/stat.h>

#include <stdlib.h>
#include <string.h>

#include "agent_int.h"
#include "agent/prompt/history_items.h"
#include "protocol/xmalloc.h"
#include "thread/rollout/rollout_reader.h"
#include "thread/store/worker.h"

struct agent_history_job {
	struct agent *a;
	char *path;
	off_t end;
	json_t *items;
	json_t *dynamic_tools; /* session_meta's, or NULL */
};

static void
agent_history_run(void *arg)
{
	struct agent_history_job *j = arg;
	struct rollout_reader *r;
	struct rollout_rec rec;
	json_t *item;

	j->items = json_array();
	if (j->end <= 0 || rollout_reader_open(j->path, 0, j->end, &r) != 0)
		return;
	rollout_reader_filter(r, history_items_wanted);
	while (rollout_reader_next(r, &rec) == 1) {
		if (!json_is_object(rec.payload))
			continue;
		if (strcmp(rec.type, "session_meta") == 0) {
			/* The thread's dynamic tools live there, as upstream keeps them. */
			json_t *dt = json_object_get(rec.payload, "dynamic_tools");

			if (j->dynamic_tools == NULL && json_is_array(dt) &&
				json_array_size(dt) > 0)
				j->dynamic_tools = json_deep_copy(dt);
			continue;
		}
		if (strcmp(rec.type, "compacted") == 0) {
			history_items_compacted(j->items, rec.payload);
			continue;
		}
		if (history_items_is_context(rec.payload))
			continue;
		item = json_deep_copy(rec.payload);
		json_object_del(item, "internal_chat_message_metadata_passthrough");
		if (strcmp(rec.ptype, "reasoning") == 0)
			json_object_del(item, "id");
		json_array_append_new(j->items, item);
	}
	rollout_reader_close(r);
}

static void
agent_history_done(void *arg)
{
	struct agent_history_job *j = arg;
	struct agent *a = j->a;
	json_t *now = agent_history_items(a), *it;
	size_t i;

	agent_worker_done(a);
	/* What the turn added while the file was read comes after the file's history. */
	agent_history_clear(a);
	json_array_foreach(j->items, i, it) agent_history_add(a, json_incref(it));
	json_array_foreach(now, i, it) agent_history_add(a, json_incref(it));
	json_decref(now);
	json_decref(j->items);
	if (a->dynamic_tools == NULL)
		a->dynamic_tools = j->dynamic_tools;
	else
		json_decref(j->dynamic_tools);
	a->history_state = AGENT_HISTORY_LOADED;
	if (a->turn != NULL)
		agent_kick(a->turn);
	free(j->path);
	free(j);
}

/* Start reading the history (once); the turn waits for it before its first request. */
void
agent_history_load(struct agent *a)
{
	struct agent_history_job *j;

	if (a->history_state != AGENT_HISTORY_NONE)
		return;
	if (a->rollout_path == NULL || a->rollout_end <= 0) {
		a->history_state = AGENT_HISTORY_LOADED;
		return;
	}
	a->history_state = AGENT_HISTORY_LOADING;
	j = xcalloc(1, sizeof *j);
	j->a = a;
	j->path = xstrdup(a->rollout_path);
	j->end = a->rollout_end;
	agent_worker_post(a, agent_history_run, agent_history_done, j);
}

void
agent_inject_items(struct agent *a, const json_t *items)
{
	size_t i;
	json_t *it;

	json_array_foreach(items, i, it)
	{
		agent_record_response(a, it);
		agent_history_add(a, json_deep_copy(it));
	}
}
