/*
 * rollgen: synthetic rollouts with upstream's shape and size (a session_meta carrying a 20 KB
 * prompt, a dozen records per turn: task_started, the developer message, turn_context,
 * settings, items, usage, task_complete), written with the store's own record builders, for
 * benches that need a CODEX_HOME of many or long threads. Provider: "bench" unless
 * BENCH_ROLLOUT_PROVIDER names another.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rollgen.h"
#include "protocol/xmalloc.h"
#include "thread/rollout/record.h"
#include "thread/rollout/rollout.h"
#include "thread/rollout/rollout_writer.h"
#include "thread/uuidv7.h"

/* Write one upstream-shaped rollout with `turns` turns of `items` items each at ms. */
void
bench_rollout_write(
	const char *home, int64_t ms, const char *filler, int turns, int items, char *id)
{
	const char *provider = getenv("BENCH_ROLLOUT_PROVIDER") != NULL
		? getenv("BENCH_ROLLOUT_PROVIDER")
		: "bench";
	struct rollout_writer *w;
	char *path, *cause = NULL, turn[37];
	struct record_meta rm = {.cwd = "/work",
		.originator = "bench",
		.cli_version = "0.169.0",
		.model_provider = provider,
		.base_instructions = filler,
		.ms = ms};
	struct record_settings rs = {.model = "m",
		.model_provider = provider,
		.cwd = "/work",
		.sandbox = "danger-full-access"};
	struct token_totals tok = {.input = 10, .output = 5, .total = 15};
	json_t *p;

	uuidv7_new_at(id, ms);
	rm.id = id;
	path = rollout_path_new(home, id, ms);
	if (rollout_writer_create(path, &w, &cause) != 0) {
		fprintf(stderr, "bench: %s\n", cause);
		exit(1);
	}
#define PUT(type, x)                                                                               \
	do {                                                                                       \
		p = (x);                                                                           \
		rollout_writer_append(w, ms, type, p);                                             \
		json_decref(p);                                                                    \
	} while (0)
	PUT("session_meta", record_session_meta(&rm));
	for (int t = 0; t < turns; t++) {
		uuidv7_new_at(turn, ms);
		PUT("event_msg", record_task_started(turn, ms / 1000, 258400));
		PUT("response_item",
			json_pack("{s:s,s:s,s:[{s:s,s:s}]}", "type", "message", "role", "developer",
				"content", "type", "input_text", "text",
				filler + strlen(filler) - 3000));
		PUT("turn_context", record_turn_context(turn, &rs));
		PUT("event_msg", record_settings_applied(id, &rs));
		for (int i = 0; i < items; i++) {
			char iid[16];
			json_t *it;

			snprintf(iid, sizeof iid, "i%d", i);
			if (i == 0)
				it = json_pack("{s:s,s:s,s:[{s:s,s:s,s:[]}]}", "type",
					"userMessage", "id", iid, "content", "type", "text", "text",
					"please look at the build output", "text_elements");
			else if (i % 3 == 1)
				it = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:[],s:s,s:i,s:i}", "type",
					"commandExecution", "id", iid, "command",
					"/bin/bash -lc 'make'", "cwd", "/work", "source", "agent",
					"status", "completed", "commandActions", "aggregatedOutput",
					"cc -c x.c\nok\n", "exitCode", 0, "durationMs", 120);
			else
				it = json_pack("{s:s,s:s,s:s}", "type", "agentMessage", "id", iid,
					"text", "The build passed; two warnings remain in x.c.");
			PUT("event_msg", record_item_completed(id, turn, it, ms, ms));
			json_decref(it);
		}
		PUT("token_usage_record", record_token_usage(id, turn, &tok, &tok, &tok, "r"));
		PUT("event_msg", record_token_count(&tok, &tok, 258400));
		PUT("event_msg",
			record_task_complete(turn, "done", ms / 1000, ms / 1000, 900, NULL));
	}
#undef PUT
	rollout_writer_close(w);
	free(path);
}
