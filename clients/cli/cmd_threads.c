/*
 * app-client threads [list | read ID | archive ID]: the daemon's saved threads as plain text.
 * list: one line per thread (id, last update, name or first message); read: the thread's
 * turns, a line per item; archive: the thread moves to archived_sessions/. One request, then
 * the daemon is closed; an error answer is printed and exits 1, a dead daemon 125.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "conn.h"
#include "protocol/xmalloc.h"

static const char cmd_threads_usage[] = "threads [list | read ID | archive ID]";

struct cmd_threads {
	struct ev_loop *loop;
	struct conn *conn;
	const char *what, *id;
	int status;
	char *error;
	int done;
};

/* A string member or "". */
static const char *
threads_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

/* One thread as a list line. */
static void
threads_line(const json_t *t)
{
	time_t at = (time_t)json_integer_value(json_object_get(t, "updatedAt"));
	char when[32] = "";
	const char *name = json_string_value(json_object_get(t, "name"));
	struct tm tm;

	if (at > 0 && localtime_r(&at, &tm) != NULL)
		strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
	printf("%s  %s  %s\n", threads_str(t, "id"), when,
		name != NULL ? name : threads_str(t, "preview"));
}

/* A thread's turns, a line per item. */
static void
threads_read(const json_t *thread)
{
	const json_t *turn, *item;
	size_t i, j;

	printf("%s  %s\n", threads_str(thread, "id"), threads_str(thread, "preview"));
	json_array_foreach(json_object_get(thread, "turns"), i, turn)
	{
		printf("turn %s (%s)\n", threads_str(turn, "id"), threads_str(turn, "status"));
		json_array_foreach(json_object_get(turn, "items"), j, item)
		{
			const char *type = threads_str(item, "type");

			if (strcmp(type, "userMessage") == 0)
				printf("  user: %s\n",
					threads_str(
						json_array_get(json_object_get(item, "content"), 0),
						"text"));
			else if (strcmp(type, "agentMessage") == 0)
				printf("  agent: %s\n", threads_str(item, "text"));
			else if (strcmp(type, "commandExecution") == 0)
				printf("  $ %s (%s)\n", threads_str(item, "command"),
					threads_str(item, "status"));
			else
				printf("  %s\n", type);
		}
	}
}

/* The answer: print it, then close the daemon. */
static void
threads_answer_cb(void *arg, json_t *result, json_t *error)
{
	struct cmd_threads *x = arg;
	const json_t *t;
	size_t i;

	if (error != NULL) {
		x->error = xstrdup(threads_str(error, "message"));
		x->status = 1;
	} else if (result != NULL && strcmp(x->what, "list") == 0) {
		json_array_foreach(json_object_get(result, "data"), i, t) threads_line(t);
		if (json_array_size(json_object_get(result, "data")) == 0)
			printf("no saved threads (CODEX_HOME=%s)\n",
				getenv("CODEX_HOME") != NULL ? getenv("CODEX_HOME") : "~/.codex");
	} else if (result != NULL && strcmp(x->what, "read") == 0)
		threads_read(json_object_get(result, "thread"));
	else if (result != NULL)
		printf("archived %s\n", x->id);
	x->done = 1;
	conn_close(x->conn);
}

static void
threads_init_cb(void *arg, json_t *result, json_t *error)
{
	struct cmd_threads *x = arg;

	(void)result;
	if (error != NULL) {
		threads_answer_cb(arg, NULL, error);
		return;
	}
	if (strcmp(x->what, "list") == 0)
		conn_request(x->conn, "thread/list", json_pack("{s:i}", "limit", 100),
			threads_answer_cb, x);
	else if (strcmp(x->what, "read") == 0)
		conn_request(x->conn, "thread/read",
			json_pack("{s:s, s:b}", "threadId", x->id, "includeTurns", 1),
			threads_answer_cb, x);
	else
		conn_request(x->conn, "thread/archive", json_pack("{s:s}", "threadId", x->id),
			threads_answer_cb, x);
}

static void
threads_closed_cb(void *arg, const char *why)
{
	struct cmd_threads *x = arg;

	if (!x->done) {
		x->error = xstrdup(why);
		x->status = CLI_EXIT_DAEMON;
	}
	ev_break(x->loop, EVBREAK_ALL);
}

static int
cmd_threads_main(int argc, char **argv)
{
	struct cmd_threads x = {.loop = EV_DEFAULT, .what = argc > 1 ? argv[1] : "list"};
	struct conn_hooks hooks = {.closed = threads_closed_cb, .arg = &x};
	char *cause = NULL;

	if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: app-client %s\n", cmd_threads_usage);
		return 0;
	}
	if ((strcmp(x.what, "list") != 0 || argc > 2) &&
		((strcmp(x.what, "read") != 0 && strcmp(x.what, "archive") != 0) || argc != 3)) {
		fprintf(stderr, "usage: app-client %s\n", cmd_threads_usage);
		return 2;
	}
	x.id = argc > 2 ? argv[2] : NULL;
	if ((x.conn = conn_spawn(x.loop, &hooks, &cause)) == NULL) {
		fprintf(stderr, "app-client: %s\n", cause);
		free(cause);
		return CLI_EXIT_DAEMON;
	}
	conn_request(x.conn, "initialize",
		json_pack("{s:{s:s, s:s}}", "clientInfo", "name", "app-client", "version",
			CLI_VERSION),
		threads_init_cb, &x);
	ev_run(x.loop, 0);
	if (x.error != NULL)
		fprintf(stderr, "app-client: %s\n", x.error);
	conn_free(x.conn);
	free(x.error);
	return x.status;
}

const struct cli_cmd cmd_threads_entry = {
	.name = "threads",
	.main = cmd_threads_main,
	.usage = cmd_threads_usage,
	.summary = "list, read or archive saved threads",
};
