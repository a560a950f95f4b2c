/*
 * Shell words and plain scripts (server/agent/shell/shell_words.c, shell_script.c): shlex's split
 * and quote on a table (the quoting of upstream's own parse_command expectations, e.g. "rg
 * '--colors=never' -n foo src"), and the plain-script recognizer on upstream bash.rs's test cases
 * (accepted sequences with their words, rejected constructs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/shell/shell_script.h"
#include "agent/shell/shell_words.h"
#include "protocol/buf.h"

/* The words of a list joined with '|' (for table comparisons). */
static char *
words_bar(const struct shell_words *w)
{
	struct buf b;

	buf_init(&b, 1 << 20);
	for (size_t i = 0; i < w->n; i++) {
		if (i > 0)
			buf_addc(&b, '|');
		buf_adds(&b, w->v[i]);
	}
	return buf_steal(&b, NULL);
}

struct split_case {
	const char *in;
	int r;
	const char *words; /* joined with | */
};

static const struct split_case split_cases[] = {
	{"ls -la", 0, "ls|-la"},
	{"  a\tb\nc  ", 0, "a|b|c"},
	{"echo 'hi there' \"x y\"", 0, "echo|hi there|x y"},
	{"a&&b ; c", 0, "a&&b|;|c"},
	{"bash -lc 'cd foo && bar'", 0, "bash|-lc|cd foo && bar"},
	{"/bin/bash -lc 'sed -n '1,10p' Cargo.toml'", 0, "/bin/bash|-lc|sed -n 1,10p Cargo.toml"},
	{"cat \"pkg\\src\\main.rs\"", 0, "cat|pkg\\src\\main.rs"},
	{"\"a\\\"b\\$c\\\\d\"", 0, "a\"b$c\\d"},
	{"a\\ b c", 0, "a b|c"},
	{"x # comment\ny", 0, "x|y"},
	{"a#b", 0, "a#b"},
	{"''", 0, ""},
	{"grep -R COD`EX_SANDBOX -n", 0, "grep|-R|COD`EX_SANDBOX|-n"},
	{"line\\\ncont", 0, "linecont"},
	{"'open", -EINVAL, ""},
	{"\"open", -EINVAL, ""},
	{"tail\\", -EINVAL, ""},
	{"", 0, ""},
};

/* shlex::split on the table. */
static void
test_split(void **state)
{
	for (size_t i = 0; i < sizeof(split_cases) / sizeof(split_cases[0]); i++) {
		const struct split_case *c = &split_cases[i];
		struct shell_words w;
		char *got;
		int r;

		shell_words_init(&w);
		r = shell_words_split(c->in, &w);
		got = words_bar(&w);
		if (r != c->r || strcmp(got, c->words) != 0)
			fail_msg("split [%s]: r=%d words [%s], want r=%d [%s]", c->in, r, got, c->r,
				c->words);
		free(got);
		shell_words_free(&w);
	}
}

struct quote_case {
	const char *in;
	const char *out;
};

static const struct quote_case quote_cases[] = {
	{"ls", "ls"},
	{"", "''"},
	{"a/b.c:d@e]f_g+h-1", "a/b.c:d@e]f_g+h-1"},
	{"--colors=never", "'--colors=never'"},
	{"1,10p", "'1,10p'"},
	{"foo bar", "'foo bar'"},
	{"touch x && echo hi", "'touch x && echo hi'"},
	{"COD`EX_SANDBOX", "'COD`EX_SANDBOX'"},
	{"*.test.js", "'*.test.js'"},
	{"!target", "'!target'"},
	{"pkg\\src\\main.rs", "\"pkg\\\\src\\\\main.rs\""},
	{"it's", "\"it's\""},
	{"a'b$c", "\"a'b\"'$c'"},
	{"^\\[workspace\\]", "'^'\"\\\\[workspace\\\\]\""},
	{"x^y", "x'^y'"},
	{"h\xc3\xa9llo", "'h\xc3\xa9llo'"},
	{"s/QkBindingController/QkController/g", "s/QkBindingController/QkController/g"},
	{"BUG|FIXME", "'BUG|FIXME'"},
};

/* shlex::try_quote on the table, and join. */
static void
test_quote_join(void **state)
{
	const char *argv[] = {"/bin/bash", "-lc", "touch approved.txt && echo hi"};
	char *s;

	for (size_t i = 0; i < sizeof(quote_cases) / sizeof(quote_cases[0]); i++) {
		char *q = shell_words_quote(quote_cases[i].in);

		if (strcmp(q, quote_cases[i].out) != 0)
			fail_msg("quote [%s] = [%s], want [%s]", quote_cases[i].in, q,
				quote_cases[i].out);
		free(q);
	}
	s = shell_words_join(argv, 3);
	assert_string_equal(s, "/bin/bash -lc 'touch approved.txt && echo hi'");
	free(s);
	s = shell_words_join(argv, 0);
	assert_string_equal(s, "");
	free(s);
}

/* Split then join then split gives the same words back. */
static void
test_roundtrip(void **state)
{
	const char *words[] = {"a b", "it's", "$HOME", "x\"y", "^z", "tab\there", "", "ok"};
	struct shell_words w;
	char *line = shell_words_join(words, 8);

	shell_words_init(&w);
	assert_int_equal(shell_words_split(line, &w), 0);
	assert_int_equal(w.n, 8);
	for (size_t i = 0; i < 8; i++)
		assert_string_equal(w.v[i], words[i]);
	shell_words_free(&w);
	free(line);
}

struct plain_case {
	const char *script;
	int r;
	const char *cmds; /* commands joined with " ; ", words with | */
};

static const struct plain_case plain_cases[] = {
	{"ls -1", 0, "ls|-1"},
	{"ls && pwd; echo 'hi there' | wc -l", 0, "ls ; pwd ; echo|hi there ; wc|-l"},
	{"echo \"hello world\"", 0, "echo|hello world"},
	{"git commit -m \"line1\nline2\"", 0, "git|commit|-m|line1\nline2"},
	{"echo \"/usr\"'/'\"local\"/bin", 0, "echo|/usr/local/bin"},
	{"echo '/usr'\"/\"'local'/bin", 0, "echo|/usr/local/bin"},
	{"echo 123 456", 0, "echo|123|456"},
	{"rg -n \"foo\" -g\"*.py\"", 0, "rg|-n|foo|-g*.py"},
	{"grep -n 'pattern' -g'*.txt'", 0, "grep|-n|pattern|-g*.txt"},
	{"ls\npwd\n", 0, "ls ; pwd"},
	{"ls &&\n pwd", 0, "ls ; pwd"},
	{"ls;", 0, "ls"},
	{"find . -name '*.rs' -exec rm {} \\;", 0, "find|.|-name|*.rs|-exec|rm|{}|\\;"},
	{"sed -n 1,5p file.txt", 0, "sed|-n|1,5p|file.txt"},
	{"echo \"hi ${USER}\"", -EINVAL, ""},
	{"echo \"$HOME\"", -EINVAL, ""},
	{"(ls)", -EINVAL, ""},
	{"ls || (pwd && echo hi)", -EINVAL, ""},
	{"ls > out.txt", -EINVAL, ""},
	{"echo hi & echo bye", -EINVAL, ""},
	{"echo $(pwd)", -EINVAL, ""},
	{"echo `pwd`", -EINVAL, ""},
	{"echo $HOME", -EINVAL, ""},
	{"FOO=bar ls", -EINVAL, ""},
	{"ls &&", -EINVAL, ""},
	{"&& ls", -EINVAL, ""},
	{"ls ;; pwd", -EINVAL, ""},
	{"ls | | wc", -EINVAL, ""},
	{"'git status'", -EINVAL, ""},
	{"\"ls\" -la", -EINVAL, ""},
	{"if true; then ls; fi", -EINVAL, ""},
	{"ls # comment", -EINVAL, ""},
	{"echo {a,b}", -EINVAL, ""},
	{"ls |& wc", -EINVAL, ""},
	{"echo 'open", -EINVAL, ""},
	{"echo ''\"\"", -EINVAL, ""},
	{"[ -f x ]", -EINVAL, ""},
	{"", 0, ""},
};

/* Commands of a recognized script in the table's notation. */
static char *
script_str(const struct shell_script *s)
{
	struct buf b;

	buf_init(&b, 1 << 20);
	for (size_t i = 0; i < s->n; i++) {
		char *w = words_bar(&s->cmds[i]);

		if (i > 0)
			buf_adds(&b, " ; ");
		buf_adds(&b, w);
		free(w);
	}
	return buf_steal(&b, NULL);
}

/* The plain-command recognizer on upstream bash.rs's cases. */
static void
test_plain(void **state)
{
	for (size_t i = 0; i < sizeof(plain_cases) / sizeof(plain_cases[0]); i++) {
		const struct plain_case *c = &plain_cases[i];
		struct shell_script s;
		char *got;
		int r = shell_script_parse_plain(c->script, &s);

		got = script_str(&s);
		if (r != c->r || strcmp(got, c->cmds) != 0)
			fail_msg("plain [%s]: r=%d [%s], want r=%d [%s]", c->script, r, got, c->r,
				c->cmds);
		free(got);
		shell_script_free(&s);
	}
}

/* Shell wrappers by exact path; -lc/-c scripts; PowerShell -Command. */
static void
test_wrappers(void **state)
{
	const char *a1[] = {"bash", "-lc", "ls"};
	const char *a2[] = {"/bin/zsh", "-c", "ls"};
	const char *a3[] = {"/tmp/bash", "-lc", "ls"};
	const char *a4[] = {"bash", "-lc", "git", "status"};
	const char *a5[] = {"bash", "-x", "ls"};
	const char *p1[] = {"pwsh", "-NoProfile", "-c", "Write-Host hi"};
	const char *p2[] = {"powershell", "-Command", "Get-ChildItem"};
	const char *p3[] = {"powershell", "-File", "x.ps1"};

	assert_string_equal(shell_script_of(a1, 3), "ls");
	assert_string_equal(shell_script_of(a2, 3), "ls");
	assert_null(shell_script_of(a3, 3));
	assert_null(shell_script_of(a4, 4));
	assert_null(shell_script_of(a5, 3));
	assert_int_equal(shell_script_detect("./bash"), SHELL_KIND_NONE);
	assert_int_equal(shell_script_detect("/usr/bin/sh"), SHELL_KIND_SH);
	assert_string_equal(shell_script_of_powershell(p1, 4), "Write-Host hi");
	assert_string_equal(shell_script_of_powershell(p2, 3), "Get-ChildItem");
	assert_null(shell_script_of_powershell(p3, 3));
}

/* Here-document commands: the literal words before <<. */
static void
test_heredoc(void **state)
{
	static const struct {
		const char *script;
		int r;
		const char *words;
	} cases[] = {
		{"apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF\n", 0, "apply_patch"},
		{"cat <<EOF\nhello\nEOF", 0, "cat"},
		{"python3 - <<-\"PY\"\n\tprint(1)\n\tPY\n", 0, "python3|-"},
		{"cat <<EOF > out.txt\nx\nEOF\n", -EINVAL, ""},
		{"cat <<EOF\nx\n", -EINVAL, ""},
		{"cat <<EOF\nx\nEOF\nrm -rf /\n", -EINVAL, ""},
		{"cat <<< 'x'", -EINVAL, ""},
		{"$X <<EOF\nx\nEOF", -EINVAL, ""},
		{"ls", -EINVAL, ""},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct shell_words w;
		char *got;
		int r;

		shell_words_init(&w);
		r = shell_script_heredoc_command(cases[i].script, &w);
		got = words_bar(&w);
		if (r != cases[i].r || strcmp(got, cases[i].words) != 0)
			fail_msg("heredoc [%s]: r=%d [%s]", cases[i].script, r, got);
		free(got);
		shell_words_free(&w);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_quote_join),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_wrappers),
		cmocka_unit_test(test_heredoc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
