/*
 * What one command is (command_actions.h): upstream's summarize_main_tokens and its helpers —
 * which programs read a file (cat, bat, less, more, head, tail, awk, nl, sed -n), list files
 * (ls, eza, exa, tree, du, rg --files, fd, find, git ls-files, python walking the tree) or search
 * (rg, grep, egrep, fgrep, git grep, ag, ack, pt, fd and find with a pattern), with the flags
 * whose values are not operands. Paths are shown short (short_display_path: the last component
 * that is not build/dist/node_modules/src).
 */
#include <stdlib.h>
#include <string.h>

#include "command_actions_int.h"
#include "protocol/xmalloc.h"

/* The slice of a word list. */
struct ca_args
ca_args_of(const struct shell_words *w)
{
	return (struct ca_args){shell_words_argv(w), w->n};
}

/* | && || ; */
bool
ca_is_connector(const char *t)
{
	return strcmp(t, "|") == 0 || strcmp(t, "&&") == 0 || strcmp(t, "||") == 0 ||
		strcmp(t, ";") == 0;
}

/* The words before the first connector. */
struct ca_args
ca_trim_at_connector(struct ca_args a)
{
	size_t i = 0;

	while (i < a.n && !ca_is_connector(a.v[i]))
		i++;
	a.n = i;
	return a;
}

/* Free one action's strings. */
void
ca_action_clear(struct command_action *a)
{
	free(a->cmd);
	free(a->name);
	free(a->path);
	free(a->query);
	memset(a, 0, sizeof(*a));
}

bool
ca_starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Every byte a digit (true for ""), as Rust's chars().all(is_ascii_digit). */
bool
ca_digits(const char *s)
{
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

bool
ca_in(const char *s, const char *const *set)
{
	for (; set != NULL && *set != NULL; set++)
		if (strcmp(s, *set) == 0)
			return true;
	return false;
}

/* The last component that is not build/dist/node_modules/src, else the trimmed path. */
static char *
ca_short_path(const char *path)
{
	static const char *const skip[] = {"build", "dist", "node_modules", "src", NULL};
	char *norm = xstrdup(path), *result = NULL;
	size_t len = strlen(norm), e;

	for (char *p = norm; *p; p++)
		if (*p == '\\')
			*p = '/';
	while (len > 0 && norm[len - 1] == '/')
		norm[--len] = '\0';
	if (len == 0) {
		free(norm);
		return xstrdup("/");
	}
	for (e = len;;) {
		size_t s = e;

		while (s > 0 && norm[s - 1] != '/')
			s--;
		if (e > s) {
			char *comp = xstrndup(norm + s, e - s);

			if (!ca_in(comp, skip)) {
				result = comp;
				break;
			}
			free(comp);
		}
		if (s == 0)
			break;
		e = s - 1;
	}
	if (result == NULL)
		return norm;
	free(norm);
	return result;
}

/* Operands after skipping the values of flags_with_vals and --flag=value (skip_flag_values). */
struct ca_list
ca_skip_flag_values(struct ca_args a, const char *const *flags)
{
	struct ca_list l = {xcalloc(a.n + 1, sizeof(char *)), 0};
	bool skip_next = false;

	for (size_t i = 0; i < a.n; i++) {
		if (skip_next) {
			skip_next = false;
			continue;
		}
		if (strcmp(a.v[i], "--") == 0) {
			for (size_t j = i + 1; j < a.n; j++)
				l.v[l.n++] = a.v[j];
			break;
		}
		if (ca_starts(a.v[i], "--") && strchr(a.v[i], '=') != NULL)
			continue;
		if (ca_in(a.v[i], flags)) {
			skip_next = i + 1 < a.n;
			continue;
		}
		l.v[l.n++] = a.v[i];
	}
	return l;
}

/* Keep only the words that do not start with '-'. */
void
ca_non_flags(struct ca_list *l)
{
	size_t k = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->v[i][0] != '-')
			l->v[k++] = l->v[i];
	l->n = k;
}

/* Positional operands: flags and their values skipped, everything after -- kept. */
static struct ca_list
ca_positional(struct ca_args a, const char *const *flags)
{
	struct ca_list l = {xcalloc(a.n + 1, sizeof(char *)), 0};
	bool after_dd = false, skip_next = false;

	for (size_t i = 0; i < a.n; i++) {
		const char *s = a.v[i];

		if (skip_next) {
			skip_next = false;
		} else if (after_dd) {
			l.v[l.n++] = s;
		} else if (strcmp(s, "--") == 0) {
			after_dd = true;
		} else if (ca_starts(s, "--") && strchr(s, '=') != NULL) {
			continue;
		} else if (ca_in(s, flags)) {
			skip_next = i + 1 < a.n;
		} else if (s[0] != '-') {
			l.v[l.n++] = s;
		}
	}
	return l;
}

/* The first positional operand (borrowed) or NULL; single=true wants exactly one. */
static const char *
ca_operand(struct ca_args a, const char *const *flags, bool single)
{
	struct ca_list l = ca_positional(a, flags);
	const char *r = (l.n >= 1 && (!single || l.n == 1)) ? l.v[0] : NULL;

	free(l.v);
	return r;
}

/* Fill an action; strings are copied, path/query NULL allowed. */
static void
ca_set(struct command_action *out, enum command_action_kind kind, struct ca_args main,
	const char *path_short_of, const char *query)
{
	out->kind = kind;
	out->cmd = shell_words_join(main.v, main.n);
	out->path = path_short_of ? ca_short_path(path_short_of) : NULL;
	out->query = query ? xstrdup(query) : NULL;
}

/* A read of path: name = short path, path as written. */
static void
ca_set_read(struct command_action *out, struct ca_args main, const char *path)
{
	out->kind = COMMAND_ACTION_READ;
	out->cmd = shell_words_join(main.v, main.n);
	out->name = ca_short_path(path);
	out->path = xstrdup(path);
}

/* grep/egrep/fgrep/git grep: -e/-f/--regexp give the pattern, else the first operand does. */
static void
ca_grep_like(struct ca_args main, struct ca_args args, struct command_action *out)
{
	static const char *const skip1[] = {"-m", "--max-count", "-C", "--context", "-A",
		"--after-context", "-B", "--before-context", NULL};
	struct ca_args a = ca_trim_at_connector(args);
	struct ca_list ops = {xcalloc(a.n + 1, sizeof(char *)), 0};
	const char *pattern = NULL;
	bool after_dd = false;

	for (size_t i = 0; i < a.n; i++) {
		const char *s = a.v[i];

		if (after_dd) {
			ops.v[ops.n++] = s;
		} else if (strcmp(s, "--") == 0) {
			after_dd = true;
		} else if (ca_starts(s, "--regexp=") || ca_starts(s, "--file=")) {
			pattern = pattern ? pattern : strchr(s, '=') + 1;
		} else if (strcmp(s, "-e") == 0 || strcmp(s, "--regexp") == 0 ||
			strcmp(s, "-f") == 0 || strcmp(s, "--file") == 0) {
			if (i + 1 < a.n && pattern == NULL)
				pattern = a.v[i + 1];
			i++;
		} else if (ca_in(s, skip1)) {
			i++;
		} else if ((ca_starts(s, "-e") || ca_starts(s, "-f")) && s[2] != '\0') {
			pattern = pattern ? pattern : s + 2;
		} else if (s[0] != '-') {
			ops.v[ops.n++] = s;
		}
	}
	ca_set(out, COMMAND_ACTION_SEARCH, main,
		ops.n > (pattern ? 0u : 1u) ? ops.v[pattern ? 0 : 1] : NULL,
		pattern ? pattern : (ops.n > 0 ? ops.v[0] : NULL));
	free(ops.v);
}

/* fd: a lone operand is a path when it looks like one, else the query; --search-path counts. */
static void
ca_fd(struct ca_args main, struct ca_args tail, struct command_action *out)
{
	static const char *const vals[] = {
		"-t", "--type", "-e", "--extension", "-E", "--exclude", "--search-path", NULL};
	struct ca_args a = ca_trim_at_connector(tail);
	const char *search_path = NULL, *query = NULL, *path = NULL;
	struct ca_list l;

	for (size_t i = 0; i < a.n; i++) {
		if (strcmp(a.v[i], "--search-path") == 0) {
			if (i + 1 < a.n && search_path == NULL)
				search_path = a.v[i + 1];
			i++;
		} else if (ca_starts(a.v[i], "--search-path=") && search_path == NULL) {
			search_path = a.v[i] + strlen("--search-path=");
		}
	}
	l = ca_skip_flag_values(a, vals);
	ca_non_flags(&l);
	if (l.n == 1) {
		const char *one = l.v[0];
		bool pathish = strcmp(one, ".") == 0 || strcmp(one, "..") == 0 ||
			ca_starts(one, "./") || ca_starts(one, "../") || strchr(one, '/') ||
			strchr(one, '\\');

		if (pathish)
			path = one;
		else
			query = one;
	} else if (l.n >= 2) {
		query = l.v[0];
		path = l.v[1];
	}
	if (path == NULL)
		path = search_path;
	ca_set(out, query ? COMMAND_ACTION_SEARCH : COMMAND_ACTION_LIST_FILES, main, path, query);
	free(l.v);
}

/* find: the first non-option operand is the root (default "."), -name/-path/... the query. */
static void
ca_find(struct ca_args main, struct ca_args tail, struct command_action *out)
{
	static const char *const vals[] = {"-type", "-name", "-iname", "-path", "-ipath", "-regex",
		"-iregex", "-perm", "-user", "-group", "-size", "-maxdepth", "-mindepth", "-newer",
		"-exec", "-execdir", "-ok", "-okdir", "-printf", NULL};
	static const char *const qflags[] = {"-name", "-iname", "-path", "-regex", NULL};
	struct ca_args a = ca_trim_at_connector(tail);
	struct ca_list l = ca_skip_flag_values(a, vals);
	const char *path = ".", *query = NULL;

	for (size_t i = 0; i < l.n; i++) {
		const char *s = l.v[i];

		if (s[0] != '-' && strcmp(s, "!") != 0 && strcmp(s, "(") != 0 &&
			strcmp(s, ")") != 0) {
			path = s;
			break;
		}
	}
	for (size_t i = 0; i < a.n; i++) {
		if (ca_in(a.v[i], qflags)) {
			query = i + 1 < a.n ? a.v[i + 1] : NULL;
			break;
		}
	}
	ca_set(out, query ? COMMAND_ACTION_SEARCH : COMMAND_ACTION_LIST_FILES, main, path, query);
	free(l.v);
}

/* ls/eza/exa/tree/du: a listing of their first operand. */
static bool
ca_listing(const char *head, struct ca_args main, struct ca_args tail, struct command_action *out)
{
	static const char *const ls[] = {"-I", "-w", "--block-size", "--format", "--time-style",
		"--color", "--quoting-style", NULL};
	static const char *const eza[] = {
		"-I", "--ignore-glob", "--color", "--sort", "--time-style", "--time", NULL};
	static const char *const tree[] = {
		"-L", "-P", "-I", "--charset", "--filelimit", "--sort", NULL};
	static const char *const du[] = {
		"-d", "--max-depth", "-B", "--block-size", "--exclude", "--time-style", NULL};
	const char *const *vals;

	if (!strcmp(head, "ls"))
		vals = ls;
	else if (!strcmp(head, "eza") || !strcmp(head, "exa"))
		vals = eza;
	else if (!strcmp(head, "tree"))
		vals = tree;
	else if (!strcmp(head, "du"))
		vals = du;
	else
		return false;
	ca_set(out, COMMAND_ACTION_LIST_FILES, main, ca_operand(tail, vals, false), NULL);
	return true;
}

/* rg/rga/ripgrep-all: --files lists, otherwise a search of the first operand. */
static void
ca_ripgrep(struct ca_args main, struct ca_args tail, struct command_action *out)
{
	static const char *const vals[] = {"-g", "--glob", "--iglob", "-t", "--type", "--type-add",
		"--type-not", "-m", "--max-count", "-A", "-B", "-C", "--context", "--max-depth",
		NULL};
	struct ca_args a = ca_trim_at_connector(tail);
	struct ca_list l = ca_skip_flag_values(a, vals);
	bool files = false;

	for (size_t i = 0; i < a.n; i++)
		files = files || strcmp(a.v[i], "--files") == 0;
	ca_non_flags(&l);
	if (files)
		ca_set(out, COMMAND_ACTION_LIST_FILES, main, l.n > 0 ? l.v[0] : NULL, NULL);
	else
		ca_set(out, COMMAND_ACTION_SEARCH, main, l.n > 1 ? l.v[1] : NULL,
			l.n > 0 ? l.v[0] : NULL);
	free(l.v);
}

/* cat/bat/batcat/less/more/head/tail/awk/nl/sed: the file read, or NULL when not a read. */
static bool
ca_reader(const char *head, struct ca_args tail, const char **file)
{
	static const char *const bat[] = {"--theme", "--language", "--style", "--terminal-width",
		"--tabs", "--line-range", "--map-syntax", NULL};
	static const char *const less[] = {"-p", "-P", "-x", "-y", "-z", "-j", "--pattern",
		"--prompt", "--tabs", "--shift", "--jump-target", NULL};
	static const char *const nl[] = {"-s", "-w", "-v", "-i", "-b", NULL};

	*file = NULL;
	if (!strcmp(head, "cat") || !strcmp(head, "more"))
		*file = ca_operand(tail, NULL, true);
	else if (!strcmp(head, "bat") || !strcmp(head, "batcat"))
		*file = ca_operand(tail, bat, true);
	else if (!strcmp(head, "less"))
		*file = ca_operand(tail, less, true);
	else if (!strcmp(head, "head") || !strcmp(head, "tail"))
		*file = ca_head_tail_file(tail, head[0] == 't');
	else if (!strcmp(head, "awk"))
		*file = ca_awk_file(tail);
	else if (!strcmp(head, "sed"))
		*file = ca_sed_read_path(tail);
	else if (!strcmp(head, "nl")) {
		struct ca_list l = ca_skip_flag_values(tail, nl);

		ca_non_flags(&l);
		*file = l.n > 0 ? l.v[0] : NULL;
		free(l.v);
	} else
		return false;
	return true;
}

/* What one command is (summarize_main_tokens). */
void
ca_summarize(struct ca_args main, struct command_action *out)
{
	struct ca_args tail = {main.v + (main.n > 0), main.n > 0 ? main.n - 1 : 0};
	const char *head = main.n > 0 ? main.v[0] : "", *file;

	memset(out, 0, sizeof(*out));
	if (ca_listing(head, main, tail, out))
		return;
	if (!strcmp(head, "rg") || !strcmp(head, "rga") || !strcmp(head, "ripgrep-all")) {
		ca_ripgrep(main, tail, out);
	} else if (!strcmp(head, "git") && tail.n > 0 && !strcmp(tail.v[0], "grep")) {
		ca_grep_like(main, (struct ca_args){tail.v + 1, tail.n - 1}, out);
	} else if (!strcmp(head, "git") && tail.n > 0 && !strcmp(tail.v[0], "ls-files")) {
		static const char *const vals[] = {
			"--exclude", "--exclude-from", "--pathspec-from-file", NULL};

		ca_set(out, COMMAND_ACTION_LIST_FILES, main,
			ca_operand((struct ca_args){tail.v + 1, tail.n - 1}, vals, false), NULL);
	} else if (!strcmp(head, "fd")) {
		ca_fd(main, tail, out);
	} else if (!strcmp(head, "find")) {
		ca_find(main, tail, out);
	} else if (!strcmp(head, "grep") || !strcmp(head, "egrep") || !strcmp(head, "fgrep")) {
		ca_grep_like(main, tail, out);
	} else if (!strcmp(head, "ag") || !strcmp(head, "ack") || !strcmp(head, "pt")) {
		static const char *const vals[] = {"-G", "-g", "--file-search-regex",
			"--ignore-dir", "--ignore-file", "--path-to-ignore", NULL};
		struct ca_list l = ca_skip_flag_values(ca_trim_at_connector(tail), vals);

		ca_non_flags(&l);
		ca_set(out, COMMAND_ACTION_SEARCH, main, l.n > 1 ? l.v[1] : NULL,
			l.n > 0 ? l.v[0] : NULL);
		free(l.v);
	} else if (ca_reader(head, tail, &file) && file != NULL) {
		ca_set_read(out, main, file);
	} else if (ca_is_python(head) && ca_python_walks(tail)) {
		ca_set(out, COMMAND_ACTION_LIST_FILES, main, NULL, NULL);
	} else {
		ca_set(out, COMMAND_ACTION_UNKNOWN, main, NULL, NULL);
	}
}
