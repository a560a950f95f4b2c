/*
 * Command actions (server/agent/command_actions*.c): upstream parse_command's own test cases,
 * with the collapse to one unknown action that 0.169 applies (its test file after that change),
 * the two cases observed on 0.169's wire, the small-formatting helper table, and the wire and
 * rollout JSON shapes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agent/shell/command_actions.h"
#include "agent/shell/command_actions_int.h"
#include "agent/shell/shell_words.h"
#include "protocol/buf.h"

/* How a case's input is given. */
enum ca_in {
	IN_SPLIT, /* shlex-split the string (upstream's shlex_split_safe) */
	IN_BASH,  /* ["bash", "-lc", string] */
	IN_ZSH,	  /* ["zsh", "-lc", string] */
	IN_WORDS, /* words separated by \x1f */
};

struct ca_case {
	enum ca_in in;
	const char *input;
	/* actions separated by \n; fields by \t: read cmd name path | list cmd path | search cmd
	 * query path | unknown cmd; "~" is null; "$JOIN" is shlex_join(shlex_split(input)) */
	const char *want;
};

#define W "\x1f"

static const struct ca_case cases[] = {
	{IN_WORDS, "git" W "status", "unknown\tgit status"},
	{IN_SPLIT, "git grep TODO src", "search\tgit grep TODO src\tTODO\tsrc"},
	{IN_SPLIT, "git grep -l TODO src", "search\tgit grep -l TODO src\tTODO\tsrc"},
	{IN_SPLIT, "git ls-files", "list\tgit ls-files\t~"},
	{IN_SPLIT, "git ls-files src", "list\tgit ls-files src\tsrc"},
	{IN_SPLIT, "git ls-files --exclude target src",
		"list\tgit ls-files --exclude target src\tsrc"},
	{IN_BASH, "git status | wc -l", "unknown\tgit status | wc -l"},
	{IN_BASH, "echo foo > bar", "unknown\techo foo > bar"},
	{IN_BASH,
		"rg --version && node -v && pnpm -v && rg --files | wc -l && rg --files | head -n 40",
		"unknown\trg --version && node -v && pnpm -v && rg --files | wc -l && rg --files | head -n 40"},
	{IN_BASH, "rg -n \"navigate-to-route\" -S",
		"search\trg -n navigate-to-route -S\tnavigate-to-route\t~"},
	{IN_BASH, "rg -n \"BUG|FIXME|TODO|XXX|HACK\" -S | head -n 200",
		"search\trg -n 'BUG|FIXME|TODO|XXX|HACK' -S\tBUG|FIXME|TODO|XXX|HACK\t~"},
	{IN_BASH, "rg --files webview/src | sed -n", "list\trg --files webview/src\twebview"},
	{IN_BASH, "rg --files | head -n 50", "list\trg --files\t~"},
	{IN_BASH,
		"rg -l QkBindingController presentation/src/main/java | xargs perl -pi -e "
		"'s/QkBindingController/QkController/g'",
		"unknown\trg -l QkBindingController presentation/src/main/java | xargs perl -pi -e "
		"'s/QkBindingController/QkController/g'"},
	{IN_SPLIT,
		"rg -l QkBindingController presentation/src/main/java | xargs perl -pi -e "
		"'s/QkBindingController/QkController/g'",
		"unknown\t$JOIN"},
	{IN_SPLIT, "rg --files | nl -ba | foo", "unknown\trg --files '|' nl -ba '|' foo"},
	{IN_SPLIT, "rg -l TODO src", "search\trg -l TODO src\tTODO\tsrc"},
	{IN_SPLIT, "rg --files-with-matches TODO src",
		"search\trg --files-with-matches TODO src\tTODO\tsrc"},
	{IN_SPLIT, "rg -L TODO src", "search\trg -L TODO src\tTODO\tsrc"},
	{IN_SPLIT, "rga -l TODO src", "search\trga -l TODO src\tTODO\tsrc"},
	{IN_BASH, "cat webview/README.md",
		"read\tcat webview/README.md\tREADME.md\twebview/README.md"},
	{IN_ZSH, "cat README.md", "read\tcat README.md\tREADME.md\tREADME.md"},
	{IN_BASH, "bat --theme TwoDark README.md",
		"read\tbat --theme TwoDark README.md\tREADME.md\tREADME.md"},
	{IN_BASH, "batcat README.md", "read\tbatcat README.md\tREADME.md\tREADME.md"},
	{IN_BASH, "less -p TODO README.md", "read\tless -p TODO README.md\tREADME.md\tREADME.md"},
	{IN_BASH, "more README.md", "read\tmore README.md\tREADME.md\tREADME.md"},
	{IN_SPLIT, "cd foo && cat foo.txt", "read\tcat foo.txt\tfoo.txt\tfoo/foo.txt"},
	{IN_SPLIT, "cd -- -weird && cat foo.txt", "read\tcat foo.txt\tfoo.txt\t-weird/foo.txt"},
	{IN_SPLIT, "cd dir1 dir2 && cat foo.txt", "read\tcat foo.txt\tfoo.txt\tdir2/foo.txt"},
	{IN_SPLIT, "bash -lc 'cd foo && bar'", "unknown\tcd foo && bar"},
	{IN_SPLIT, "bash -lc 'cd foo && cat foo.txt'", "read\tcat foo.txt\tfoo.txt\tfoo/foo.txt"},
	{IN_BASH, "ls -la | sed -n '1,120p'", "list\tls -la\t~"},
	{IN_SPLIT, "ls /", "list\tls /\t/"},
	{IN_SPLIT, "eza --color=always src", "list\teza '--color=always' src\tsrc"},
	{IN_SPLIT, "exa -I target .", "list\texa -I target .\t."},
	{IN_SPLIT, "tree -L 2 src", "list\ttree -L 2 src\tsrc"},
	{IN_SPLIT, "du -d 2 .", "list\tdu -d 2 .\t."},
	{IN_BASH, "head -n 50 Cargo.toml", "read\thead -n 50 Cargo.toml\tCargo.toml\tCargo.toml"},
	{IN_BASH, "head Cargo.toml", "read\thead Cargo.toml\tCargo.toml\tCargo.toml"},
	{IN_BASH, "cat tui/Cargo.toml | sed -n '1,200p'",
		"read\tcat tui/Cargo.toml | sed -n '1,200p'\tCargo.toml\ttui/Cargo.toml"},
	{IN_BASH, "tail -n +522 README.md", "read\ttail -n +522 README.md\tREADME.md\tREADME.md"},
	{IN_BASH, "tail -n 30 README.md", "read\ttail -n 30 README.md\tREADME.md\tREADME.md"},
	{IN_BASH, "tail README.md", "read\ttail README.md\tREADME.md\tREADME.md"},
	{IN_WORDS, "npm" W "run" W "build", "unknown\tnpm run build"},
	{IN_WORDS, "grep" W "-R" W "CODEX_SANDBOX_ENV_VAR" W "-n" W ".",
		"search\tgrep -R CODEX_SANDBOX_ENV_VAR -n .\tCODEX_SANDBOX_ENV_VAR\t."},
	{IN_WORDS, "grep" W "-R" W "CODEX_SANDBOX_ENV_VAR" W "-n" W "core/src/spawn.rs",
		"search\tgrep -R CODEX_SANDBOX_ENV_VAR -n core/src/spawn.rs\tCODEX_SANDBOX_ENV_VAR\t"
		"spawn.rs"},
	{IN_SPLIT, "grep --regexp=TODO -n src", "search\tgrep '--regexp=TODO' -n src\tTODO\tsrc"},
	{IN_SPLIT, "grep -eTODO -n src", "search\tgrep -eTODO -n src\tTODO\tsrc"},
	{IN_SPLIT, "egrep -R TODO src", "search\tegrep -R TODO src\tTODO\tsrc"},
	{IN_SPLIT, "fgrep -l TODO src", "search\tfgrep -l TODO src\tTODO\tsrc"},
	{IN_SPLIT, "grep --files-without-match TODO src",
		"search\tgrep --files-without-match TODO src\tTODO\tsrc"},
	{IN_SPLIT, "grep -R src/main.rs -n .", "search\tgrep -R src/main.rs -n .\tsrc/main.rs\t."},
	{IN_SPLIT, "grep -R COD`EX_SANDBOX -n",
		"search\tgrep -R 'COD`EX_SANDBOX' -n\tCOD`EX_SANDBOX\t~"},
	{IN_SPLIT, "cd codex-rs && rg --files", "list\trg --files\t~"},
	{IN_BASH, "cd /Users/pakrym/code/codex && rg -n \"codex_api\" codex-rs -S | head -n 50",
		"search\trg -n codex_api codex-rs -S\tcodex_api\tcodex-rs"},
	{IN_BASH, "python -c \"import os; print(os.listdir('.'))\"", "list\t$JOIN\t~"},
	{IN_BASH, "python3 -c \"import glob; print(glob.glob('*.rs'))\"", "list\t$JOIN\t~"},
	{IN_BASH, "python -c \"print('hello')\"", "unknown\tpython -c \"print('hello')\""},
	{IN_BASH, "nl -ba core/src/parse_command.rs | sed -n '1200,1720p'",
		"read\tnl -ba core/src/parse_command.rs | sed -n '1200,1720p'\tparse_command.rs\t"
		"core/src/parse_command.rs"},
	{IN_BASH, "sed -n '2000,2200p' tui/src/history_cell.rs",
		"read\tsed -n '2000,2200p' tui/src/history_cell.rs\thistory_cell.rs\t"
		"tui/src/history_cell.rs"},
	{IN_BASH, "awk '{print $1}' Cargo.toml",
		"read\tawk '{print $1}' Cargo.toml\tCargo.toml\tCargo.toml"},
	{IN_BASH,
		"printf \"\\n===== ansi-escape/Cargo.toml =====\\n\"; cat -- ansi-escape/Cargo.toml",
		"read\tcat -- ansi-escape/Cargo.toml\tCargo.toml\tansi-escape/Cargo.toml"},
	{IN_BASH, "yes | rg --files", "list\trg --files\t~"},
	{IN_SPLIT, "sed -n '260,640p' exec/src/event_processor_with_human_output.rs | nl -ba",
		"read\tsed -n '260,640p' exec/src/event_processor_with_human_output.rs\t"
		"event_processor_with_human_output.rs\texec/src/event_processor_with_human_output.rs"},
	{IN_SPLIT, "yes | rg -n 'foo bar' -S", "search\trg -n 'foo bar' -S\tfoo bar\t~"},
	{IN_SPLIT, "ls -I '*.test.js'", "list\tls -I '*.test.js'\t~"},
	{IN_SPLIT, "rg foo ; echo done", "unknown\trg foo ';' echo done"},
	{IN_SPLIT, "rg foo || echo done", "unknown\trg foo '||' echo done"},
	{IN_BASH, "pwd; ls -la; rg --files -g '!target' | wc -l; cargo --version",
		"unknown\tpwd; ls -la; rg --files -g '!target' | wc -l; cargo --version"},
	{IN_SPLIT, "true && rg --files", "list\trg --files\t~"},
	{IN_SPLIT, "rg --files && true", "list\trg --files\t~"},
	{IN_BASH, "true && rg --files", "list\trg --files\t~"},
	{IN_BASH, "rg --files || true", "list\trg --files\t~"},
	{IN_SPLIT, "cat \"pkg\\src\\main.rs\"",
		"read\tcat \"pkg\\\\src\\\\main.rs\"\tmain.rs\tpkg\\src\\main.rs"},
	{IN_SPLIT, "bash -lc 'head -n50 Cargo.toml'",
		"read\thead -n50 Cargo.toml\tCargo.toml\tCargo.toml"},
	{IN_WORDS, "bash" W "-c" W "rg --files | head -n 1", "list\trg --files\t~"},
	{IN_SPLIT, "bash -lc 'tail -n+10 README.md'",
		"read\ttail -n+10 README.md\tREADME.md\tREADME.md"},
	{IN_SPLIT, "ag TODO src", "search\tag TODO src\tTODO\tsrc"},
	{IN_SPLIT, "ack -l TODO src", "search\tack -l TODO src\tTODO\tsrc"},
	{IN_SPLIT, "pt TODO src", "search\tpt TODO src\tTODO\tsrc"},
	{IN_SPLIT, "rg --colors=never -n foo src",
		"search\trg '--colors=never' -n foo src\tfoo\tsrc"},
	{IN_SPLIT, "cat -- ./-strange-file-name",
		"read\tcat -- ./-strange-file-name\t-strange-file-name\t./-strange-file-name"},
	{IN_SPLIT, "sed -n '12,20p' Cargo.toml",
		"read\tsed -n '12,20p' Cargo.toml\tCargo.toml\tCargo.toml"},
	{IN_SPLIT, "rg --files | nl -ba", "list\trg --files\t~"},
	{IN_SPLIT, "ls --time-style=long-iso ./dist", "list\tls '--time-style=long-iso' ./dist\t."},
	{IN_SPLIT, "fd -t f src/", "list\tfd -t f src/\tsrc"},
	{IN_SPLIT, "fd main src", "search\tfd main src\tmain\tsrc"},
	{IN_SPLIT, "fd --search-path src foo", "search\tfd --search-path src foo\tfoo\tsrc"},
	{IN_SPLIT, "fd --search-path src", "list\tfd --search-path src\tsrc"},
	{IN_SPLIT, "find . -name '*.rs'", "search\tfind . -name '*.rs'\t*.rs\t."},
	{IN_SPLIT, "find -name '*.rs'", "search\tfind -name '*.rs'\t*.rs\t."},
	{IN_SPLIT, "find -type f", "list\tfind -type f\t."},
	{IN_SPLIT, "find", "list\tfind\t."},
	{IN_SPLIT, "find src -type f", "list\tfind src -type f\tsrc"},
	{IN_SPLIT, "find -name '*.rs' .", "search\tfind -name '*.rs' .\t*.rs\t."},
	{IN_SPLIT, "/bin/bash -lc 'sed -n '1,10p' Cargo.toml'",
		"read\tsed -n '1,10p' Cargo.toml\tCargo.toml\tCargo.toml"},
	{IN_SPLIT, "/bin/zsh -lc 'sed -n '1,10p' Cargo.toml'",
		"read\tsed -n '1,10p' Cargo.toml\tCargo.toml\tCargo.toml"},
	{IN_WORDS, "powershell" W "-Command" W "Get-ChildItem", "unknown\tGet-ChildItem"},
	{IN_WORDS, "pwsh" W "-NoProfile" W "-c" W "Write-Host hi", "unknown\tWrite-Host hi"},
	/* observed on upstream 0.169's wire */
	{IN_WORDS, "/bin/bash" W "-lc" W "touch approved.txt && echo hi",
		"unknown\ttouch approved.txt && echo hi"},
	{IN_WORDS, "/bin/bash" W "-lc" W "echo fixture-out", "unknown\techo fixture-out"},
	/* a lone cd summarizes to nothing; an empty argv is one unknown "" */
	{IN_BASH, "cd foo", ""},
	{IN_WORDS, "", "unknown\t"},
};

/* The argv of a case. */
static void
case_argv(const struct ca_case *c, struct shell_words *w)
{
	const char *shell = c->in == IN_ZSH ? "zsh" : "bash";

	if (c->in == IN_SPLIT) {
		assert_int_equal(shell_words_split(c->input, w), 0);
	} else if (c->in == IN_WORDS) {
		const char *s = c->input;

		while (*s) {
			const char *e = strchr(s, '\x1f');
			size_t n = e ? (size_t)(e - s) : strlen(s);

			shell_words_push(w, s, n);
			s += n + (e != NULL);
		}
	} else {
		shell_words_exec_argv(shell, 1, c->input, w);
	}
}

/* The summaries in the table's notation. */
static char *
actions_str(const struct command_actions *a)
{
	static const char *const names[] = {"read", "list", "search", "unknown"};
	struct buf b;

	buf_init(&b, 1 << 20);
	for (size_t i = 0; i < a->n; i++) {
		const struct command_action *x = &a->v[i];

		if (i > 0)
			buf_addc(&b, '\n');
		buf_printf(&b, "%s\t%s", names[x->kind], x->cmd);
		if (x->kind == COMMAND_ACTION_READ)
			buf_printf(&b, "\t%s\t%s", x->name, x->path);
		if (x->kind == COMMAND_ACTION_SEARCH)
			buf_printf(&b, "\t%s", x->query ? x->query : "~");
		if (x->kind == COMMAND_ACTION_SEARCH || x->kind == COMMAND_ACTION_LIST_FILES)
			buf_printf(&b, "\t%s", x->path ? x->path : "~");
	}
	return buf_steal(&b, NULL);
}

/* The expected string with $JOIN expanded. */
static char *
expected(const struct ca_case *c)
{
	const char *at = strstr(c->want, "$JOIN");
	struct shell_words w;
	struct buf b;
	char *join;

	buf_init(&b, 1 << 20);
	if (at == NULL) {
		buf_adds(&b, c->want);
		return buf_steal(&b, NULL);
	}
	shell_words_init(&w);
	shell_words_split(c->input, &w);
	join = shell_words_join(shell_words_argv(&w), w.n);
	buf_add(&b, c->want, (size_t)(at - c->want));
	buf_adds(&b, join);
	buf_adds(&b, at + 5);
	free(join);
	shell_words_free(&w);
	return buf_steal(&b, NULL);
}

/* Every upstream case gives upstream's summaries. */
static void
test_table(void **state)
{
	int failed = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct shell_words w;
		struct command_actions a;
		char *got, *want;

		shell_words_init(&w);
		case_argv(&cases[i], &w);
		assert_int_equal(command_actions_parse(shell_words_argv(&w), w.n, &a), 0);
		got = actions_str(&a);
		want = expected(&cases[i]);
		if (strcmp(got, want) != 0) {
			print_error("case %zu [%s]\n   got: [%s]\n  want: [%s]\n", i,
				cases[i].input, got, want);
			failed++;
		}
		free(got);
		free(want);
		command_actions_free(&a);
		shell_words_free(&w);
	}
	assert_int_equal(failed, 0);
}

/* Upstream's is_small_formatting_command table. */
static void
test_small_formatting(void **state)
{
	static const struct {
		const char *cmd;
		int small;
	} t[] = {
		{"wc", 1},
		{"tr -x", 1},
		{"cut", 1},
		{"sort", 1},
		{"uniq", 1},
		{"xargs -x", 1},
		{"tee", 1},
		{"column", 1},
		{"awk '{print $1}'", 1},
		{"awk '{print $1}' Cargo.toml", 0},
		{"awk -f script.awk Cargo.toml", 0},
		{"head", 1},
		{"head -n 40", 1},
		{"head -n 40 file.txt", 0},
		{"head file.txt", 0},
		{"tail", 1},
		{"tail -n +10", 1},
		{"tail -n +10 file.txt", 0},
		{"tail -n 30", 1},
		{"tail -n 30 file.txt", 0},
		{"tail -c 30", 1},
		{"tail -c +10", 1},
		{"tail file.txt", 0},
		{"sed", 1},
		{"sed -n 10p", 1},
		{"sed -n 10p file.txt", 0},
		{"sed -n -e 10p file.txt", 0},
		{"sed -n 10p -- file.txt", 0},
		{"sed -n 1,200p file.txt", 0},
		{"sed -n p file.txt", 1},
		{"sed -n +10p file.txt", 1},
		{"xargs perl -pi -e s/a/b/", 0},
		{"xargs sed --in-place s/a/b/", 0},
		{"xargs rg --replace x", 0},
		{"", 0},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct shell_words w;

		shell_words_init(&w);
		assert_int_equal(shell_words_split(t[i].cmd, &w), 0);
		if ((int)ca_is_small_formatting(ca_args_of(&w)) != t[i].small)
			fail_msg("small formatting [%s] != %d", t[i].cmd, t[i].small);
		shell_words_free(&w);
	}
}

/* The wire and rollout shapes: key names, nulls, read paths joined onto cwd. */
static void
test_json(void **state)
{
	const char *argv1[] = {"/bin/bash", "-lc", "cat src/a.c"};
	const char *argv2[] = {"rg", "--files"};
	const char *argv3[] = {"/bin/bash", "-lc", "cat /etc/hosts"};
	struct command_actions a;
	json_t *j;
	char *s;

	assert_int_equal(command_actions_parse(argv1, 3, &a), 0);
	j = command_actions_to_wire(&a, "/w");
	s = json_dumps(j, JSON_COMPACT);
	assert_string_equal(s,
		"[{\"type\":\"read\",\"command\":\"cat src/a.c\",\"name\":\"a.c\",\"path\":\"/w/src/a.c\"}]");
	free(s);
	json_decref(j);
	j = command_actions_to_rollout(&a);
	s = json_dumps(j, JSON_COMPACT);
	assert_string_equal(s,
		"[{\"type\":\"read\",\"cmd\":\"cat src/a.c\",\"name\":\"a.c\",\"path\":\"src/a.c\"}]");
	free(s);
	json_decref(j);
	command_actions_free(&a);

	assert_int_equal(command_actions_parse(argv2, 2, &a), 0);
	j = command_actions_to_wire(&a, "/w");
	s = json_dumps(j, JSON_COMPACT);
	assert_string_equal(
		s, "[{\"type\":\"listFiles\",\"command\":\"rg --files\",\"path\":null}]");
	free(s);
	json_decref(j);
	j = command_actions_to_rollout(&a);
	s = json_dumps(j, JSON_COMPACT);
	assert_string_equal(s, "[{\"type\":\"list_files\",\"cmd\":\"rg --files\",\"path\":null}]");
	free(s);
	json_decref(j);
	command_actions_free(&a);

	assert_int_equal(command_actions_parse(argv3, 3, &a), 0);
	j = command_actions_to_wire(&a, "/w");
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(j, 0), "path")), "/etc/hosts");
	json_decref(j);
	command_actions_free(&a);
}

/* Random scripts and argvs from shell-ish bytes: every path returns, frees, and stays sane. */
static void
test_random_inputs(void **state)
{
	static const char alphabet[] = " \tab|&;'\"\\$`(){}<>#\n-=cdlsrg*./,p0123456789\xc3\xa9";
	unsigned seed = 12345;

	for (int iter = 0; iter < 20000; iter++) {
		char script[48];
		size_t len;
		struct shell_words w;
		struct command_actions a;

		seed = seed * 1103515245u + 12345u;
		len = (seed >> 16) % (sizeof(script) - 1);
		for (size_t i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			script[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
		}
		script[len] = '\0';
		shell_words_init(&w);
		shell_words_exec_argv("bash", 1, script, &w);
		assert_int_equal(command_actions_parse(shell_words_argv(&w), w.n, &a), 0);
		for (size_t i = 0; i < a.n; i++)
			assert_non_null(a.v[i].cmd);
		command_actions_free(&a);
		shell_words_free(&w);
		shell_words_init(&w);
		if (shell_words_split(script, &w) == 0) {
			assert_int_equal(command_actions_parse(shell_words_argv(&w), w.n, &a), 0);
			command_actions_free(&a);
		}
		shell_words_free(&w);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_small_formatting),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_random_inputs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
