/*
 * Command actions (command_actions.h): the walk over the commands of an argv or a bash -lc
 * script, `cd` folding, upstream's simplifications (a leading echo, a cd followed by something,
 * `true`, a flags-only nl), the collapse of duplicates and of anything unknown, and the two JSON
 * renderings. What one command is lives in command_actions_summary.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "command_actions_int.h"
#include "shell_script.h"
#include "protocol/utf8.h"
#include "protocol/xmalloc.h"

/* Append a summary (moved in). */
static void
ca_push(struct command_actions *l, struct command_action *a)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = *a;
	memset(a, 0, sizeof(*a));
}

/* Drop entry i. */
static void
ca_remove(struct command_actions *l, size_t i)
{
	ca_action_clear(&l->v[i]);
	memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(*l->v));
	l->n--;
}

/* Free the summaries. */
void
command_actions_free(struct command_actions *a)
{
	if (a == NULL)
		return;
	for (size_t i = 0; i < a->n; i++)
		ca_action_clear(&a->v[i]);
	free(a->v);
	a->v = NULL;
	a->n = 0;
}

static int
ca_streq(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int
ca_equal(const struct command_action *a, const struct command_action *b)
{
	return a->kind == b->kind && ca_streq(a->cmd, b->cmd) && ca_streq(a->name, b->name) &&
		ca_streq(a->path, b->path) && ca_streq(a->query, b->query);
}

/* An unknown action whose command, split, starts with word (and, for nl, has only flags). */
static int
ca_unknown_starts(const struct command_action *a, const char *word, int flags_only)
{
	struct shell_words t;
	int r = 0;

	if (a->kind != COMMAND_ACTION_UNKNOWN)
		return 0;
	shell_words_init(&t);
	if (shell_words_split(a->cmd, &t) == 0 && t.n > 0 && strcmp(t.v[0], word) == 0) {
		r = 1;
		for (size_t i = 1; flags_only && i < t.n; i++)
			r = r && t.v[i][0] == '-';
	}
	shell_words_free(&t);
	return r;
}

/* One of upstream's simplifications, if any applies (simplify_once); 1 when it changed l. */
static int
ca_simplify_once(struct command_actions *l)
{
	if (l->n <= 1)
		return 0;
	if (ca_unknown_starts(&l->v[0], "echo", 0)) {
		ca_remove(l, 0);
		return 1;
	}
	for (size_t i = 0; i < l->n; i++) {
		if (ca_unknown_starts(&l->v[i], "cd", 0)) {
			if (i + 1 >= l->n)
				break;
			ca_remove(l, i);
			return 1;
		}
	}
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].kind == COMMAND_ACTION_UNKNOWN && strcmp(l->v[i].cmd, "true") == 0) {
			ca_remove(l, i);
			return 1;
		}
	}
	for (size_t i = 0; i < l->n; i++) {
		if (ca_unknown_starts(&l->v[i], "nl", 1)) {
			ca_remove(l, i);
			return 1;
		}
	}
	return 0;
}

/* Summarize each command, folding `cd DIR` into the paths of later reads. */
static void
ca_summarize_all(const struct shell_words *cmds, size_t n, struct command_actions *out)
{
	char *cwd = NULL;

	for (size_t i = 0; i < n; i++) {
		struct ca_args t = ca_args_of(&cmds[i]);
		struct command_action a;

		if (t.n > 0 && strcmp(t.v[0], "cd") == 0) {
			const char *dir = ca_cd_target((struct ca_args){t.v + 1, t.n - 1});

			if (dir != NULL) {
				char *next = cwd ? ca_join_paths(cwd, dir) : xstrdup(dir);

				free(cwd);
				cwd = next;
			}
			continue;
		}
		ca_summarize(t, &a);
		if (a.kind == COMMAND_ACTION_READ && cwd != NULL) {
			char *full = ca_join_paths(cwd, a.path);

			free(a.path);
			a.path = full;
		}
		ca_push(out, &a);
	}
	free(cwd);
}

/* Any | && || ; token among the words. */
static int
ca_has_connector(const struct shell_words *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (ca_is_connector(w->v[i]))
			return 1;
	return 0;
}

/* A lone summary of a script: which command it shows (the whole script or the main command). */
static void
ca_lone_command(struct command_action *a, const char *script, const struct shell_words *tokens,
	int had_connectors)
{
	int pipe = 0, sed_n = 0;

	if (a->kind == COMMAND_ACTION_UNKNOWN)
		return;
	if (!had_connectors) {
		free(a->cmd);
		a->cmd = shell_words_join(shell_words_argv(tokens), tokens->n);
		return;
	}
	if (a->kind != COMMAND_ACTION_READ)
		return;
	for (size_t i = 0; i < tokens->n; i++) {
		pipe = pipe || strcmp(tokens->v[i], "|") == 0;
		sed_n = sed_n ||
			(i + 1 < tokens->n && !strcmp(tokens->v[i], "sed") &&
				!strcmp(tokens->v[i + 1], "-n"));
	}
	if (pipe && sed_n) {
		free(a->cmd);
		a->cmd = xstrdup(script);
	}
}

/* Keep the commands that are not small formatting helpers; returns how many are left. */
static size_t
ca_drop_formatting(struct shell_script *s)
{
	size_t k = 0;

	for (size_t i = 0; i < s->n; i++) {
		if (ca_is_small_formatting(ca_args_of(&s->cmds[i])))
			shell_words_free(&s->cmds[i]);
		else
			s->cmds[k++] = s->cmds[i];
	}
	s->n = k;
	return k;
}

/* Push one unknown action with a copy of cmd. */
static void
ca_push_unknown(struct command_actions *out, const char *cmd)
{
	struct command_action a = {.kind = COMMAND_ACTION_UNKNOWN, .cmd = xstrdup(cmd)};

	ca_push(out, &a);
}

/* A plain script's summaries (parse_shell_lc_commands once the script is recognized). */
static void
ca_script(const char *script, struct shell_script *s, struct command_actions *out)
{
	struct shell_words tokens;
	int had_multiple = s->n > 1;

	shell_words_init(&tokens);
	if (shell_words_split(script, &tokens) != 0)
		shell_words_push(&tokens, script, strlen(script));
	if (ca_drop_formatting(s) == 0) {
		ca_push_unknown(out, script);
		shell_words_free(&tokens);
		return;
	}
	ca_summarize_all(s->cmds, s->n, out);
	if (out->n > 1) {
		for (size_t i = out->n; i-- > 0;)
			if (out->v[i].kind == COMMAND_ACTION_UNKNOWN &&
				!strcmp(out->v[i].cmd, "true"))
				ca_remove(out, i);
		while (ca_simplify_once(out))
			;
	}
	if (out->n == 1)
		ca_lone_command(
			&out->v[0], script, &tokens, had_multiple || ca_has_connector(&tokens));
	shell_words_free(&tokens);
}

/* A plain argv: yes|/no| prefixes dropped, split at connectors (parse_command_impl). */
static int
ca_argv(struct ca_args a, struct command_actions *out)
{
	struct shell_words *cmds = xcalloc(a.n + 1, sizeof(*cmds));
	size_t n = 0, i = 0;
	int r = 0, split = 0;

	if (a.n >= 2 && strcmp(a.v[1], "|") == 0 &&
		(!strcmp(a.v[0], "yes") || !strcmp(a.v[0], "y") || !strcmp(a.v[0], "no") ||
			!strcmp(a.v[0], "n")))
		a.v += 2, a.n -= 2;
	for (size_t k = 0; k < a.n; k++)
		split = split || ca_is_connector(a.v[k]);
	do {
		size_t end = i;

		while (split && end < a.n && !ca_is_connector(a.v[end]))
			end++;
		if (!split)
			end = a.n;
		/* empty segments between connectors are dropped; an unsplit argv is one command */
		if (end > i || !split) {
			shell_words_init(&cmds[n]);
			r = r ? r : shell_words_append(&cmds[n], a.v + i, end - i);
			n++;
		}
		i = end + 1;
	} while (split && i < a.n);
	if (r == 0) {
		ca_summarize_all(cmds, n, out);
		while (ca_simplify_once(out))
			;
	}
	for (size_t k = 0; k < n; k++)
		shell_words_free(&cmds[k]);
	free(cmds);
	return r;
}

/* Summarize an argv: dedupe, then collapse to one unknown when any part is unknown. */
int
command_actions_parse(const char *const *argv, size_t argc, struct command_actions *out)
{
	const char *script = shell_script_of(argv, argc);
	struct shell_script s;
	int r = 0;

	out->v = NULL;
	out->n = 0;
	if (script != NULL && shell_script_parse_plain(script, &s) == 0 && s.n > 0) {
		ca_script(script, &s, out);
		shell_script_free(&s);
	} else if (script != NULL) {
		ca_push_unknown(out, script);
	} else if ((script = shell_script_of_powershell(argv, argc)) != NULL) {
		ca_push_unknown(out, script);
	} else {
		r = ca_argv((struct ca_args){argv, argc}, out);
	}
	for (size_t i = 1; i < out->n;)
		if (ca_equal(&out->v[i], &out->v[i - 1]))
			ca_remove(out, i);
		else
			i++;
	for (size_t i = 0; i < out->n; i++) {
		if (out->v[i].kind != COMMAND_ACTION_UNKNOWN)
			continue;
		command_actions_free(out);
		if (script != NULL) {
			ca_push_unknown(out, script);
		} else {
			struct command_action a = {.kind = COMMAND_ACTION_UNKNOWN,
				.cmd = shell_words_join(argv, argc)};

			ca_push(out, &a);
		}
		break;
	}
	return r;
}

/* A JSON string of s, repaired if it is not valid UTF-8 (argv bytes come from the model). */
static json_t *
ca_str(const char *s)
{
	size_t n = strlen(s), len;
	char *fixed;
	json_t *j;

	if (utf8_valid_prefix(s, n) == n)
		return json_stringn_nocheck(s, n);
	fixed = utf8_lossy(s, n, &len);
	j = json_stringn_nocheck(fixed, len);
	free(fixed);
	return j;
}

/* A string or null. */
static json_t *
ca_str_or_null(const char *s)
{
	return s ? ca_str(s) : json_null();
}

/* CommandAction[] (v2 wire): read paths are joined onto cwd. */
json_t *
command_actions_to_wire(const struct command_actions *a, const char *cwd)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < a->n; i++) {
		const struct command_action *x = &a->v[i];
		json_t *o = json_object();
		char *full;

		switch (x->kind) {
		case COMMAND_ACTION_READ:
			json_object_set_new(o, "type", json_string("read"));
			json_object_set_new(o, "command", ca_str(x->cmd));
			json_object_set_new(o, "name", ca_str(x->name));
			full = ca_join_paths(cwd ? cwd : "", x->path);
			json_object_set_new(o, "path", ca_str(full));
			free(full);
			break;
		case COMMAND_ACTION_LIST_FILES:
			json_object_set_new(o, "type", json_string("listFiles"));
			json_object_set_new(o, "command", ca_str(x->cmd));
			json_object_set_new(o, "path", ca_str_or_null(x->path));
			break;
		case COMMAND_ACTION_SEARCH:
			json_object_set_new(o, "type", json_string("search"));
			json_object_set_new(o, "command", ca_str(x->cmd));
			json_object_set_new(o, "query", ca_str_or_null(x->query));
			json_object_set_new(o, "path", ca_str_or_null(x->path));
			break;
		case COMMAND_ACTION_UNKNOWN:
			json_object_set_new(o, "type", json_string("unknown"));
			json_object_set_new(o, "command", ca_str(x->cmd));
			break;
		}
		json_array_append_new(arr, o);
	}
	return arr;
}

/* ParsedCommand[] (rollout): snake_case types, `cmd`. */
json_t *
command_actions_to_rollout(const struct command_actions *a)
{
	static const char *const types[] = {"read", "list_files", "search", "unknown"};
	json_t *arr = json_array();

	for (size_t i = 0; i < a->n; i++) {
		const struct command_action *x = &a->v[i];
		json_t *o = json_object();

		json_object_set_new(o, "type", json_string(types[x->kind]));
		json_object_set_new(o, "cmd", ca_str(x->cmd));
		if (x->kind == COMMAND_ACTION_READ) {
			json_object_set_new(o, "name", ca_str(x->name));
			json_object_set_new(o, "path", ca_str(x->path));
		} else if (x->kind == COMMAND_ACTION_SEARCH) {
			json_object_set_new(o, "query", ca_str_or_null(x->query));
			json_object_set_new(o, "path", ca_str_or_null(x->path));
		} else if (x->kind == COMMAND_ACTION_LIST_FILES) {
			json_object_set_new(o, "path", ca_str_or_null(x->path));
		}
		json_array_append_new(arr, o);
	}
	return arr;
}
