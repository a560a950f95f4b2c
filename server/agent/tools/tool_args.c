/*
 * A call's arguments read as the shell tools need them (tool_args.h): wrong types fall back to
 * the default or fail, never crash; a word with an embedded NUL is refused (it could not reach
 * execve as the model wrote it).
 */
#include <stdlib.h>
#include <string.h>

#include "tool_args.h"
#include "tool_output.h"
#include "protocol/xmalloc.h"

long long
tool_args_int(const json_t *args, const char *key, long long dflt)
{
	json_t *v = json_object_get(args, key);

	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

int
tool_args_words(const json_t *a, struct shell_words *w)
{
	json_t *s;
	size_t i;

	if (!json_is_array(a) || json_array_size(a) == 0)
		return -1;
	json_array_foreach((json_t *)a, i, s)
	{
		if (!json_is_string(s) || strlen(json_string_value(s)) != json_string_length(s) ||
			shell_words_push(w, json_string_value(s), json_string_length(s)) != 0)
			return -1;
	}
	return 0;
}

/* The script of exec_command / shell_command runs as [shell, -lc|-c, script]. */
int
tool_args_shell(const json_t *call, const char *name, const json_t *args, long long default_timeout,
	struct tool_shell_call *sc, char **why)
{
	const char *s, *perm, *shell;
	const json_t *action, *prefix;
	int login = !json_is_false(json_object_get(args, "login"));

	memset(sc, 0, sizeof *sc);
	shell_words_init(&sc->argv);
	shell_words_init(&sc->prefix);
	sc->timeout_ms = default_timeout;
	if (strcmp(name, "local_shell_call") == 0) {
		action = json_object_get(call, "action");
		sc->kind = TOOL_SHELL_TEXT;
		if (tool_args_words(json_object_get(action, "command"), &sc->argv) != 0)
			goto missing;
		sc->workdir = json_string_value(json_object_get(action, "working_directory"));
		sc->timeout_ms = tool_args_int(action, "timeout_ms", default_timeout);
	} else if (strcmp(name, "exec_command") == 0) {
		sc->kind = TOOL_SHELL_EXEC;
		s = json_string_value(json_object_get(args, "cmd"));
		shell = json_string_value(json_object_get(args, "shell"));
		if (s == NULL ||
			shell_words_exec_argv(shell != NULL ? shell : TOOL_SHELL_DEFAULT, login, s,
				&sc->argv) != 0)
			goto missing;
		sc->yield_ms = (long long)tool_output_clamp_yield(
			tool_args_int(args, "yield_time_ms", TOOL_OUTPUT_EXEC_YIELD_DEFAULT_MS), 0);
		sc->max_tokens = (size_t)tool_args_int(args, "max_output_tokens", 0);
		sc->tty = json_is_true(json_object_get(args, "tty"));
		sc->timeout_ms =
			-1; /* a session lives until it exits, is killed, or the turn ends */
	} else if (strcmp(name, "shell_command") == 0) {
		sc->kind = TOOL_SHELL_TEXT;
		s = json_string_value(json_object_get(args, "command"));
		if (s == NULL ||
			shell_words_exec_argv(TOOL_SHELL_DEFAULT, login, s, &sc->argv) != 0)
			goto missing;
		sc->timeout_ms = tool_args_int(args, "timeout_ms", default_timeout);
	} else {
		sc->kind = TOOL_SHELL_ARGV;
		if (tool_args_words(json_object_get(args, "command"), &sc->argv) != 0)
			goto missing;
		sc->timeout_ms = tool_args_int(args, "timeout_ms", default_timeout);
	}
	if (sc->workdir == NULL)
		sc->workdir = json_string_value(json_object_get(args, "workdir"));
	perm = json_string_value(json_object_get(args, "sandbox_permissions"));
	sc->escalated = perm != NULL && strcmp(perm, "require_escalated") == 0;
	s = json_string_value(json_object_get(args, "justification"));
	sc->justification = s != NULL ? xstrdup(s) : NULL;
	prefix = json_object_get(args, "prefix_rule");
	if (json_is_array(prefix) && tool_args_words(prefix, &sc->prefix) != 0)
		shell_words_free(&sc->prefix);
	return 0;
missing:
	*why = tool_output_bad_arguments(strcmp(name, "exec_command") == 0
			? "missing field `cmd`"
			: "missing field `command`");
	tool_args_shell_free(sc);
	return -1;
}

void
tool_args_shell_free(struct tool_shell_call *sc)
{
	shell_words_free(&sc->argv);
	shell_words_free(&sc->prefix);
	free(sc->justification);
	sc->justification = NULL;
}
