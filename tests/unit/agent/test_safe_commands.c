/*
 * Known-safe and dangerous commands (server/agent/approval/safe_commands.c): upstream's own test
 * cases of is_safe_command.rs and is_dangerous_command.rs as one table; argv words are separated by
 * |.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agent/approval/safe_commands.h"
#include "agent/shell/shell_words.h"

/* What each column checks. */
enum sc_check { SAFE_EXEC, KNOWN_SAFE, DANGEROUS };

struct sc_case {
	enum sc_check check;
	const char *argv; /* words joined with | */
	bool want;
};

static const struct sc_case cases[] = {
	{SAFE_EXEC, "ls", true},
	{SAFE_EXEC, "base64", true},
	{SAFE_EXEC, "sed|-n|1,5p|file.txt", true},
	{SAFE_EXEC, "nl|-nrz|Cargo.toml", true},
	{SAFE_EXEC, "find|.|-name|file.txt", true},
	{SAFE_EXEC, "numfmt|1000", true},
	{SAFE_EXEC, "tac|Cargo.toml", true},
	{SAFE_EXEC, "foo", false},
	{SAFE_EXEC, "git|fetch", false},
	{SAFE_EXEC, "sed|-n|xp|file.txt", false},
	{SAFE_EXEC, "sed|-n|1,5p|a|b", false},
	{SAFE_EXEC, "find|.|-name|file.txt|-exec|rm|{}|;", false},
	{SAFE_EXEC, "find|.|-name|*.py|-execdir|python3|{}|;", false},
	{SAFE_EXEC, "find|.|-name|file.txt|-ok|rm|{}|;", false},
	{SAFE_EXEC, "find|.|-name|*.py|-okdir|python3|{}|;", false},
	{SAFE_EXEC, "find|.|-delete|-name|file.txt", false},
	{SAFE_EXEC, "find|.|-fls|/etc/passwd", false},
	{SAFE_EXEC, "find|.|-fprint|/etc/passwd", false},
	{SAFE_EXEC, "find|.|-fprint0|/etc/passwd", false},
	{SAFE_EXEC, "find|.|-fprintf|/root/suid.txt|%#m %u %p\n", false},
	{SAFE_EXEC, "base64|-o|out.bin", false},
	{SAFE_EXEC, "base64|--output|out.bin", false},
	{SAFE_EXEC, "base64|--output=out.bin", false},
	{SAFE_EXEC, "base64|-ob64.txt", false},
	{SAFE_EXEC, "rg|Cargo.toml|-n", true},
	{SAFE_EXEC, "rg|--search-zip|files", false},
	{SAFE_EXEC, "rg|-z|files", false},
	{SAFE_EXEC, "rg|--pre|pwned|files", false},
	{SAFE_EXEC, "rg|--pre=pwned|files", false},
	{SAFE_EXEC, "rg|--hostname-bin|pwned|files", false},
	{SAFE_EXEC, "rg|--hostname-bin=pwned|files", false},
	{KNOWN_SAFE, "./cat|Cargo.toml", false},
	{KNOWN_SAFE, "../cat|Cargo.toml", false},
	{KNOWN_SAFE, "/tmp/workspace/cat|Cargo.toml", false},
	{KNOWN_SAFE, "bash|-lc|./cat Cargo.toml", false},
	{KNOWN_SAFE, "cat|Cargo.toml", true},
	{KNOWN_SAFE, "git|status", false},
	{KNOWN_SAFE, "git|log|-1", false},
	{KNOWN_SAFE, "git|diff", false},
	{KNOWN_SAFE, "git|branch|--show-current", false},
	{KNOWN_SAFE, "bash|-lc|git status", false},
	{KNOWN_SAFE, "bash|-lc|git log -1", false},
	{KNOWN_SAFE, "cargo|check", false},
	{KNOWN_SAFE, "zsh|-lc|ls", true},
	{KNOWN_SAFE, "bash|-lc|ls", true},
	{KNOWN_SAFE, "bash|-lc|ls -1", true},
	{KNOWN_SAFE, "bash|-lc|grep -R \"Cargo.toml\" -n", true},
	{KNOWN_SAFE, "bash|-lc|sed -n 1,5p file.txt", true},
	{KNOWN_SAFE, "bash|-lc|sed -n '1,5p' file.txt", true},
	{KNOWN_SAFE, "bash|-lc|find . -name file.txt", true},
	{KNOWN_SAFE, "bash|-lc|grep -R \"Cargo.toml\" -n || true", true},
	{KNOWN_SAFE, "bash|-lc|ls && pwd", true},
	{KNOWN_SAFE, "bash|-lc|echo 'hi' ; ls", true},
	{KNOWN_SAFE, "bash|-lc|ls | wc -l", true},
	{KNOWN_SAFE, "/bin/bash|-lc|ls | wc -l", true},
	{KNOWN_SAFE, "/tmp/bash|-lc|ls", false},
	{KNOWN_SAFE, "bash|-lc|git|status", false},
	{KNOWN_SAFE, "bash|-lc|'git status'", false},
	{KNOWN_SAFE, "bash|-lc|find . -name file.txt -delete", false},
	{KNOWN_SAFE, "bash|-lc|ls && rm -rf /", false},
	{KNOWN_SAFE, "bash|-lc|(ls)", false},
	{KNOWN_SAFE, "bash|-lc|ls || (pwd && echo hi)", false},
	{KNOWN_SAFE, "bash|-lc|ls > out.txt", false},
	{KNOWN_SAFE, "bash|-lc|touch approved.txt && echo hi", false},
	{KNOWN_SAFE, "bash|-lc|", false},
	{KNOWN_SAFE, "", false},
	{DANGEROUS, "git|reset", false},
	{DANGEROUS, "bash|-lc|git reset --hard", false},
	{DANGEROUS, "zsh|-lc|git reset --hard", false},
	{DANGEROUS, "git|push|--force|origin|main", false},
	{DANGEROUS, "git|clean|-fdx", false},
	{DANGEROUS, "sudo|git|reset|--hard", false},
	{DANGEROUS, "rm|-rf|/", true},
	{DANGEROUS, "rm|-f|/", true},
	{DANGEROUS, "rm|-r|x", false},
	{DANGEROUS, "sudo|rm|-rf|/", true},
	{DANGEROUS, "sudo", false},
	{DANGEROUS, "bash|-lc|ls && rm -rf /tmp/x", true},
	{DANGEROUS, "/bin/bash|-lc|echo hi; sudo rm -f x", true},
	{DANGEROUS, "bash|-lc|rm -rf $HOME", false},
};

/* Split a | list into words; after "SHELL|-lc|" the rest is the script, pipes and all. */
static void
words_of(const char *s, struct shell_words *w)
{
	while (*s) {
		const char *e = strchr(s, '|');
		size_t n = e ? (size_t)(e - s) : strlen(s);

		if (w->n == 2 && (strcmp(w->v[1], "-lc") == 0 || strcmp(w->v[1], "-c") == 0) &&
			strchr(w->v[0], 'h') != NULL && strstr(s, "|status") == NULL)
			n = strlen(s), e = NULL;
		shell_words_push(w, s, n);
		s += n + (e != NULL);
	}
}

/* Every row of the table. */
static void
test_table(void **state)
{
	int failed = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sc_case *c = &cases[i];
		struct shell_words w;
		const char *const *argv;
		bool got;

		shell_words_init(&w);
		words_of(c->argv, &w);
		argv = shell_words_argv(&w);
		if (c->check == SAFE_EXEC)
			got = safe_commands_is_safe_exec(argv, w.n);
		else if (c->check == KNOWN_SAFE)
			got = safe_commands_is_known_safe(argv, w.n);
		else
			got = safe_commands_is_dangerous(argv, w.n);
		if (got != c->want) {
			print_error("row %zu [%s] (check %d): got %d\n", i, c->argv, c->check, got);
			failed++;
		}
		shell_words_free(&w);
	}
	assert_int_equal(failed, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
