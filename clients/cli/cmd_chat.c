/*
 * app-client chat [--model M] [--cwd DIR] [--resume ID]: a terminal agent session on a thread
 * of the daemon it spawns. A line is a turn; while it runs its notifications print as they come
 * (chat_render.c) and an approval asks y / n / a(lways) / c(ancel). Ctrl-C interrupts the
 * running turn; a second Ctrl-C within a second quits. Commands: /threads, /resume ID, /new,
 * /model M, /help, /quit (Ctrl-D too). Line editing is libedit's (its callback interface, so
 * the loop never blocks on the terminal); from a pipe, lines are read as they are.
 */
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <editline/readline.h>

#include "chat.h"
#include "cli.h"
#include "conn.h"
#include "protocol/xmalloc.h"

static const char cmd_chat_usage[] = "chat [--model M] [--cwd DIR] [--resume ID]";
static struct chat *chat_current; /* libedit's line callback takes no argument */

static void chat_line(struct chat *c, char *line);

/* libedit's line callback. */
static void
chat_rl_cb(char *line)
{
	chat_line(chat_current, line);
	free(line);
}

/* Stop reading input (a turn or a request runs); the terminal is left as it was. */
static void
chat_input_off(struct chat *c)
{
	if (c->tty)
		rl_callback_handler_remove();
	ev_io_stop(c->loop, &c->in);
}

/* Lines already read from a pipe, handed over while input is wanted. */
static void
chat_pipe_lines(struct chat *c)
{
	char *nl;

	while ((c->state == CHAT_IDLE || c->state == CHAT_ASK) && c->pipe_in.len > 0 &&
		(nl = memchr(c->pipe_in.ptr, '\n', c->pipe_in.len)) != NULL) {
		char *line = xstrndup(c->pipe_in.ptr, (size_t)(nl - c->pipe_in.ptr));

		buf_consume(&c->pipe_in, (size_t)(nl - c->pipe_in.ptr) + 1);
		chat_line(c, line);
		free(line);
	}
}

/* Read input again: the prompt for a line, or for an approval's answer. */
void
chat_prompt(struct chat *c)
{
	const char *prompt = c->state == CHAT_ASK ? "[y]es [n]o [a]lways [c]ancel> " : "> ";

	if (c->state == CHAT_QUITTING)
		return;
	if (c->tty)
		rl_callback_handler_install(prompt, chat_rl_cb);
	else
		chat_pipe_lines(c);
	if (c->state == CHAT_IDLE || c->state == CHAT_ASK)
		ev_io_start(c->loop, &c->in);
}

/* Leave: the daemon gets stdin EOF, exits, and `closed` ends the loop. */
static void
chat_quit(struct chat *c)
{
	if (c->state == CHAT_QUITTING)
		return;
	chat_input_off(c);
	c->state = CHAT_QUITTING;
	chat_newline(c);
	conn_close(c->conn);
}

void
chat_turn_ended(struct chat *c)
{
	free(c->turn_id);
	c->turn_id = NULL;
	if (c->state == CHAT_TURN || c->state == CHAT_ASK) {
		c->state = CHAT_IDLE;
		chat_prompt(c);
	}
}

/* An answer that fails shows its error; then the prompt. */
static int
chat_failed(struct chat *c, const char *what, json_t *error)
{
	if (error == NULL && c->state != CHAT_QUITTING)
		return 0;
	chat_newline(c);
	if (error != NULL)
		chat_printf(c, "%s: %s\n", what,
			json_string_value(json_object_get(error, "message")) ?: "failed");
	return 1;
}

/* thread/start or thread/resume answered: this is the thread from now on. */
static void
chat_thread_cb(void *arg, json_t *result, json_t *error)
{
	struct chat *c = arg;
	json_t *thread = json_object_get(result, "thread");
	size_t turns = json_array_size(json_object_get(thread, "turns"));

	if (!chat_failed(c, "thread", error) && thread != NULL) {
		free(c->thread_id);
		c->thread_id = xstrdup(json_string_value(json_object_get(thread, "id")));
		chat_printf(c, "thread %s (%s, %s)%s\n", c->thread_id,
			json_string_value(json_object_get(result, "model")) ?: "?",
			json_string_value(json_object_get(result, "cwd")) ?: "?",
			turns > 0 ? "" : "; /help for commands");
		if (turns > 0)
			chat_printf(c, "resumed with %zu turn%s\n", turns, turns == 1 ? "" : "s");
	}
	if (c->thread_id == NULL) {
		c->status = CLI_EXIT_DAEMON;
		chat_quit(c);
		return;
	}
	c->state = CHAT_IDLE;
	chat_prompt(c);
}

/* Start a new thread in the chat's cwd, or resume one. */
static void
chat_open_thread(struct chat *c, const char *resume)
{
	c->state = CHAT_STARTING;
	if (resume != NULL)
		conn_request(c->conn, "thread/resume", json_pack("{s:s}", "threadId", resume),
			chat_thread_cb, c);
	else
		conn_request(c->conn, "thread/start",
			json_pack("{s:s, s:s?}", "cwd", c->cwd, "model", c->model), chat_thread_cb,
			c);
}

/* turn/start answered: the turn runs (its notifications arrive), or it was refused. */
static void
chat_turn_cb(void *arg, json_t *result, json_t *error)
{
	struct chat *c = arg;

	if (chat_failed(c, "turn", error)) {
		c->state = CHAT_IDLE;
		chat_prompt(c);
		return;
	}
	free(c->turn_id);
	c->turn_id = xstrdup(
		json_string_value(json_object_get(json_object_get(result, "turn"), "id")) ?: "");
}

/* thread/list answered: one line per thread. */
static void
chat_threads_cb(void *arg, json_t *result, json_t *error)
{
	struct chat *c = arg;
	json_t *t;
	size_t i;

	if (!chat_failed(c, "threads", error)) {
		json_array_foreach(json_object_get(result, "data"), i, t)
		{
			const char *name = json_string_value(json_object_get(t, "name"));

			chat_printf(c, "%s  %s\n", json_string_value(json_object_get(t, "id")),
				name != NULL ? name
					     : json_string_value(json_object_get(t, "preview")) ?: "");
		}
		if (i == 0)
			chat_printf(c, "(no saved threads)\n");
	}
	c->state = CHAT_IDLE;
	chat_prompt(c);
}

/* A slash command; 1 when the line was one. */
static int
chat_command(struct chat *c, const char *line)
{
	if (strcmp(line, "/quit") == 0 || strcmp(line, "/exit") == 0)
		chat_quit(c);
	else if (strcmp(line, "/help") == 0) {
		chat_printf(c,
			"/threads  saved threads\n/resume ID  continue one\n/new  a new "
			"thread\n/model M  the model of the next turns\n/quit  leave (Ctrl-D)\n"
			"Ctrl-C interrupts a turn; twice within a second quits.\n");
		chat_prompt(c);
	} else if (strcmp(line, "/threads") == 0) {
		c->state = CHAT_STARTING;
		conn_request(c->conn, "thread/list", json_pack("{s:i}", "limit", 20),
			chat_threads_cb, c);
	} else if (strncmp(line, "/resume ", 8) == 0)
		chat_open_thread(c, line + 8);
	else if (strcmp(line, "/new") == 0)
		chat_open_thread(c, NULL);
	else if (strcmp(line, "/model") == 0) {
		chat_printf(c, "model %s; /model M changes it for the next turns\n",
			c->model != NULL ? c->model : "(the configured default)");
		chat_prompt(c);
	} else if (strncmp(line, "/model ", 7) == 0) {
		free(c->model);
		c->model = xstrdup(line + 7);
		chat_printf(c, "model %s for the next turns\n", c->model);
		chat_prompt(c);
	} else if (line[0] == '/') {
		chat_printf(c, "unknown command %s (/help)\n", line);
		chat_prompt(c);
	} else
		return 0;
	return 1;
}

/* The answer to an approval: y, n, a or c. */
static void
chat_answer(struct chat *c, const char *line)
{
	static const char *const decisions[][2] = {
		{"y", "accept"}, {"n", "decline"}, {"a", "acceptForSession"}, {"c", "cancel"}};
	const char *d = NULL;

	for (size_t i = 0; i < sizeof decisions / sizeof decisions[0]; i++)
		if (line[0] == decisions[i][0][0])
			d = decisions[i][1];
	if (d == NULL) {
		chat_printf(c, "y, n, a or c\n");
		chat_prompt(c);
		return;
	}
	conn_reply(c->conn, c->ask_id, json_pack("{s:s}", "decision", d));
	json_decref(c->ask_id);
	c->ask_id = NULL;
	c->state = CHAT_TURN;
}

/* A line from the user (NULL: end of input). */
static void
chat_line(struct chat *c, char *line)
{
	if (line == NULL) {
		chat_quit(c);
		return;
	}
	chat_input_off(c);
	if (c->state == CHAT_ASK) {
		chat_answer(c, line);
		return;
	}
	if (c->state != CHAT_IDLE)
		return;
	if (line[0] == '\0') {
		chat_prompt(c);
		return;
	}
	if (c->tty)
		add_history(line);
	if (chat_command(c, line))
		return;
	c->state = CHAT_TURN;
	c->at_bol = 1;
	conn_request(c->conn, "turn/start",
		json_pack("{s:s, s:[{s:s, s:s, s:[]}], s:s?}", "threadId", c->thread_id, "input",
			"type", "text", "text", line, "text_elements", "model", c->model),
		chat_turn_cb, c);
}

/* Whether the terminal on stdin hung up (its other side closed: poll says POLLHUP). */
static int
chat_tty_gone(void)
{
	struct pollfd p = {.fd = 0, .events = POLLIN};

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
}

static void
chat_stdin_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	struct chat *c = w->data;
	char chunk[4096];
	ssize_t n;

	(void)loop;
	(void)revents;
	if (c->tty) {
		/*
		 * libedit's callback reader returns without a word at end of file, so a terminal
		 * that went away (its window closed while make, not this process, leads the
		 * session: no SIGHUP reaches us) would wake this watcher forever. A hangup ends
		 * the chat like Ctrl-D.
		 */
		if (chat_tty_gone()) {
			chat_quit(c);
			return;
		}
		rl_callback_read_char();
		return;
	}
	n = read(0, chunk, sizeof chunk);
	if (n <= 0) {
		if (c->pipe_in.len > 0)
			buf_addc(&c->pipe_in, '\n');
		chat_pipe_lines(c);
		if (c->state != CHAT_QUITTING)
			chat_line(c, NULL);
		return;
	}
	if (buf_add(&c->pipe_in, chunk, (size_t)n) != 0) {
		chat_printf(c, "(input line too long)\n");
		chat_quit(c);
		return;
	}
	chat_pipe_lines(c);
}

/* Ctrl-C: interrupt the turn; twice within a second: quit. SIGTERM, SIGHUP: quit. */
static void
chat_signal_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct chat *c = w->data;
	double now = ev_now(loop);

	(void)revents;
	if (w->signum != SIGINT || now - c->last_sigint < 1.0) {
		chat_quit(c);
		return;
	}
	c->last_sigint = now;
	if ((c->state == CHAT_TURN || c->state == CHAT_ASK) && c->turn_id != NULL) {
		chat_newline(c);
		chat_printf(c, "(interrupting; Ctrl-C again to quit)\n");
		conn_request(c->conn, "turn/interrupt",
			json_pack("{s:s, s:s}", "threadId", c->thread_id, "turnId", c->turn_id),
			NULL, NULL);
	} else {
		chat_newline(c);
		chat_printf(c, "(Ctrl-C again or Ctrl-D to quit)\n");
		if (c->tty && c->state == CHAT_IDLE) {
			rl_callback_handler_remove();
			chat_prompt(c);
		}
	}
}

static void
chat_notification_cb(void *arg, const char *method, json_t *params)
{
	chat_render(arg, method, params);
}

/* A server request: approvals of this thread are asked; the rest get the safe default. */
static void
chat_request_cb(void *arg, const json_t *id, const char *method, json_t *params)
{
	struct chat *c = arg;
	const char *tid = json_string_value(json_object_get(params, "threadId"));

	if ((strcmp(method, "item/commandExecution/requestApproval") != 0 &&
		    strcmp(method, "item/fileChange/requestApproval") != 0) ||
		tid == NULL || c->thread_id == NULL || strcmp(tid, c->thread_id) != 0 ||
		c->ask_id != NULL) {
		json_t *ans = conn_default_answer(method);

		if (ans != NULL)
			conn_reply(c->conn, id, ans);
		else
			conn_reply_error(c->conn, id, -32601, "not handled by app-client chat");
		return;
	}
	chat_render_ask(c, method, params);
	c->ask_id = json_deep_copy(id);
	c->state = CHAT_ASK;
	chat_prompt(c);
}

static void
chat_closed_cb(void *arg, const char *why)
{
	struct chat *c = arg;

	if (c->state != CHAT_QUITTING) {
		c->error = xstrdup(why);
		c->status = CLI_EXIT_DAEMON;
	}
	ev_break(c->loop, EVBREAK_ALL);
}

/*
 * account/read answered: a provider that needs an OpenAI login without one would only fail
 * every turn after retries, so say so now (and where the offline demo is); else open the thread.
 */
static void
chat_account_cb(void *arg, json_t *result, json_t *error)
{
	struct chat *c = arg;

	if (error == NULL && json_is_null(json_object_get(result, "account")) &&
		json_is_true(json_object_get(result, "requiresOpenaiAuth"))) {
		chat_printf(c,
			"app-client: no API key is configured: set OPENAI_API_KEY, or a model "
			"provider in $CODEX_HOME/config.toml; `make run` without either "
			"starts the offline demo model\n");
		c->status = CLI_EXIT_CONFIG;
		chat_quit(c);
		return;
	}
	chat_open_thread(c, c->resume);
}

/* initialize answered: check the account, then open the thread. */
static void
chat_init_cb(void *arg, json_t *result, json_t *error)
{
	struct chat *c = arg;

	(void)result;
	if (chat_failed(c, "initialize", error)) {
		c->status = CLI_EXIT_DAEMON;
		chat_quit(c);
		return;
	}
	conn_notify(c->conn, "initialized", NULL);
	conn_request(c->conn, "account/read", json_object(), chat_account_cb, c);
}

/* Options; 0, 1 for --help, -1 with *cause. */
static int
chat_parse(struct chat *c, int argc, char **argv, char **cause)
{
	char cwd[PATH_MAX];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
			return 1;
		if (i + 1 >= argc ||
			(strcmp(a, "--model") != 0 && strcmp(a, "--cwd") != 0 &&
				strcmp(a, "--resume") != 0)) {
			*cause = xasprintf("unknown or incomplete option %s", a);
			return -1;
		}
		char **slot = strcmp(a, "--model") == 0 ? &c->model
			: strcmp(a, "--cwd") == 0	? &c->cwd
							: &c->resume;

		free(*slot);
		*slot = (a[2] == 'c' && realpath(argv[i + 1], cwd) != NULL) ? xstrdup(cwd)
									    : xstrdup(argv[i + 1]);
		i++;
	}
	if (c->cwd == NULL)
		c->cwd = xstrdup(getcwd(cwd, sizeof cwd) != NULL ? cwd : "/");
	return 0;
}

static int
cmd_chat_main(int argc, char **argv)
{
	struct chat c = {.loop = EV_DEFAULT, .at_bol = 1};
	struct conn_hooks hooks = {.notification = chat_notification_cb,
		.request = chat_request_cb,
		.closed = chat_closed_cb,
		.arg = &c};
	char *cause = NULL;
	int r;

	buf_init(&c.pipe_in, 1 << 20);
	if ((r = chat_parse(&c, argc, argv, &cause)) != 0) {
		fprintf(r > 0 ? stdout : stderr, "%s%susage: app-client %s\n", r > 0 ? "" : cause,
			r > 0 ? "" : "\n", cmd_chat_usage);
		free(cause);
		return r > 0 ? 0 : 2;
	}
	chat_current = &c;
	c.tty = isatty(0);
	if ((c.conn = conn_spawn(c.loop, &hooks, &cause)) == NULL) {
		fprintf(stderr, "app-client: %s\n", cause);
		free(cause);
		return CLI_EXIT_DAEMON;
	}
	ev_io_init(&c.in, chat_stdin_cb, 0, EV_READ);
	c.in.data = &c;
	ev_signal_init(&c.sigint, chat_signal_cb, SIGINT);
	ev_signal_init(&c.sigterm, chat_signal_cb, SIGTERM);
	ev_signal_init(&c.sighup, chat_signal_cb, SIGHUP);
	c.sigint.data = c.sigterm.data = c.sighup.data = &c;
	ev_signal_start(c.loop, &c.sigint);
	ev_signal_start(c.loop, &c.sigterm);
	ev_signal_start(c.loop, &c.sighup);
	conn_request(c.conn, "initialize",
		json_pack("{s:{s:s, s:s}}", "clientInfo", "name", "app-client", "version",
			CLI_VERSION),
		chat_init_cb, &c);
	ev_run(c.loop, 0);
	if (c.tty)
		rl_callback_handler_remove();
	ev_io_stop(c.loop, &c.in);
	ev_signal_stop(c.loop, &c.sigint);
	ev_signal_stop(c.loop, &c.sigterm);
	ev_signal_stop(c.loop, &c.sighup);
	if (c.error != NULL)
		fprintf(stderr, "app-client: %s\n", c.error);
	conn_free(c.conn);
	json_decref(c.ask_id);
	buf_free(&c.pipe_in);
	free(c.thread_id);
	free(c.turn_id);
	free(c.model);
	free(c.cwd);
	free(c.resume);
	free(c.error);
	return c.status;
}

const struct cli_cmd cmd_chat_entry = {
	.name = "chat",
	.main = cmd_chat_main,
	.usage = cmd_chat_usage,
	.summary = "an agent session in the terminal (Ctrl-C interrupts a turn)",
};
