/*
 * Tests for recognising apply_patch in commands (server/agent/patch/apply_patch_shell.c): the
 * forms upstream's invocation.rs tests accept and reject, with the workdir of a leading
 * `cd`, and the errors for a bare patch and a patch that does not parse.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agent/patch/apply_patch_int.h"
#include "protocol/xmalloc.h"

#define BODY		"*** Begin Patch\n*** Add File: foo\n+hi\n*** End Patch"
#define HEREDOC(prefix) prefix "apply_patch <<'PATCH'\n" BODY "\nPATCH"

struct shell_case {
	const char *name;
	const char *argv[8];
	enum apply_patch_intercept want;
	const char *workdir; /* expected for BODY */
	const char *error;   /* expected start of the message for ERROR */
};

static const struct shell_case cases[] = {
	{"literal", {"apply_patch", BODY "\n"}, APPLY_PATCH_BODY, NULL, NULL},
	{"literal alias", {"applypatch", BODY "\n"}, APPLY_PATCH_BODY, NULL, NULL},
	{"heredoc", {"bash", "-lc", HEREDOC("")}, APPLY_PATCH_BODY, NULL, NULL},
	{"non-login shell", {"bash", "-c", HEREDOC("")}, APPLY_PATCH_BODY, NULL, NULL},
	{"full path, zsh", {"/usr/bin/zsh", "-lc", HEREDOC("")}, APPLY_PATCH_BODY, NULL, NULL},
	{"heredoc alias", {"bash", "-lc", "applypatch <<'PATCH'\n" BODY "\nPATCH"},
		APPLY_PATCH_BODY, NULL, NULL},
	{"unquoted and double-quoted delimiters",
		{"sh", "-c", "apply_patch <<EOF\n" BODY "\nEOF\n"}, APPLY_PATCH_BODY, NULL, NULL},
	{"double-quoted delimiter", {"bash", "-lc", "apply_patch << \"X\"\n" BODY "\nX\n\n"},
		APPLY_PATCH_BODY, NULL, NULL},
	{"<<- strips tabs", {"bash", "-lc", "apply_patch <<-'EOF'\n" BODY "\n\t\tEOF"},
		APPLY_PATCH_BODY, NULL, NULL},
	{"powershell", {"powershell.exe", "-Command", HEREDOC("")}, APPLY_PATCH_BODY, NULL, NULL},
	{"powershell -NoProfile", {"powershell.exe", "-NoProfile", "-Command", HEREDOC("")},
		APPLY_PATCH_BODY, NULL, NULL},
	{"pwsh", {"pwsh", "-NoProfile", "-Command", HEREDOC("")}, APPLY_PATCH_BODY, NULL, NULL},
	{"cmd with cd", {"cmd.exe", "/c", HEREDOC("cd foo && ")}, APPLY_PATCH_BODY, "foo", NULL},
	{"leading cd", {"bash", "-lc", HEREDOC("cd foo && ")}, APPLY_PATCH_BODY, "foo", NULL},
	{"cd single-quoted", {"bash", "-lc", HEREDOC("cd 'foo bar' && ")}, APPLY_PATCH_BODY,
		"foo bar", NULL},
	{"cd double-quoted", {"bash", "-lc", HEREDOC("cd \"foo bar\" && ")}, APPLY_PATCH_BODY,
		"foo bar", NULL},
	{"cd then newline", {"bash", "-lc", HEREDOC("  cd /abs/dir &&\n  ")}, APPLY_PATCH_BODY,
		"/abs/dir", NULL},
	{"cd ;", {"bash", "-lc", HEREDOC("cd foo; ")}, APPLY_PATCH_NOT, NULL, NULL},
	{"cd ||", {"bash", "-lc", HEREDOC("cd bar || ")}, APPLY_PATCH_NOT, NULL, NULL},
	{"cd |", {"bash", "-lc", HEREDOC("cd bar | ")}, APPLY_PATCH_NOT, NULL, NULL},
	{"echo &&", {"bash", "-lc", HEREDOC("echo foo && ")}, APPLY_PATCH_NOT, NULL, NULL},
	{"argument", {"bash", "-lc", "apply_patch foo <<'PATCH'\n" BODY "\nPATCH"}, APPLY_PATCH_NOT,
		NULL, NULL},
	{"two cds", {"bash", "-lc", HEREDOC("cd foo && cd bar && ")}, APPLY_PATCH_NOT, NULL, NULL},
	{"cd two args", {"bash", "-lc", HEREDOC("cd foo bar && ")}, APPLY_PATCH_NOT, NULL, NULL},
	{"cd with expansion", {"bash", "-lc", HEREDOC("cd \"$HOME\" && ")}, APPLY_PATCH_NOT, NULL,
		NULL},
	{"trailing command", {"bash", "-lc", HEREDOC("cd bar && ") " && echo done"},
		APPLY_PATCH_NOT, NULL, NULL},
	{"command after the heredoc", {"bash", "-lc", HEREDOC("") "\necho done"}, APPLY_PATCH_NOT,
		NULL, NULL},
	{"leading command", {"bash", "-lc", HEREDOC("echo foo; cd bar && ")}, APPLY_PATCH_NOT, NULL,
		NULL},
	{"unterminated heredoc", {"bash", "-lc", "apply_patch <<'EOF'\n" BODY "\n"},
		APPLY_PATCH_NOT, NULL, NULL},
	{"here-string is not a heredoc", {"bash", "-lc", "apply_patch <<< x"}, APPLY_PATCH_NOT,
		NULL, NULL},
	{"other shell flag", {"bash", "-x", HEREDOC("")}, APPLY_PATCH_NOT, NULL, NULL},
	{"not a shell", {"python3", "-c", HEREDOC("")}, APPLY_PATCH_NOT, NULL, NULL},
	{"plain command", {"ls", "-l"}, APPLY_PATCH_NOT, NULL, NULL},
	{"bare patch", {BODY}, APPLY_PATCH_ERROR, NULL,
		"patch detected without explicit call to apply_patch. Rerun as [\"apply_patch\", "
		"\"<patch>\"]"},
	{"bare patch as script", {"bash", "-lc", BODY}, APPLY_PATCH_ERROR, NULL,
		"patch detected without explicit call"},
	{"heredoc that does not parse", {"bash", "-lc", "apply_patch <<'EOF'\nnot a patch\nEOF"},
		APPLY_PATCH_ERROR, NULL,
		"invalid patch: The first line of the patch must be '*** Begin Patch'"},
	{"literal that does not parse", {"apply_patch", "*** Begin Patch\n*** Frob\n*** End Patch"},
		APPLY_PATCH_ERROR, NULL, "invalid hunk at line 2, '*** Frob' is not a valid"},
};

static void
test_intercept_table(void **state)
{
	size_t i, argc;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct shell_case *c = &cases[i];
		struct patch *p = NULL;
		char *cause = NULL;
		enum apply_patch_intercept got;

		for (argc = 0; c->argv[argc] != NULL; argc++)
			;
		got = apply_patch_intercept_argv(c->argv, argc, &p, &cause);
		if (got != c->want)
			fail_msg("%s: got %d, want %d (%s)", c->name, got, c->want,
				cause ? cause : "");
		if (got == APPLY_PATCH_BODY) {
			assert_int_equal(p->nhunks, 1);
			assert_string_equal(p->hunks[0].path, "foo");
			assert_string_equal(p->hunks[0].contents, "hi\n");
			if (c->workdir == NULL)
				assert_null(apply_patch_workdir(p));
			else if (apply_patch_workdir(p) == NULL ||
				strcmp(apply_patch_workdir(p), c->workdir) != 0)
				fail_msg("%s: workdir %s", c->name, apply_patch_workdir(p));
		} else
			assert_null(p);
		if (got == APPLY_PATCH_ERROR && strncmp(cause, c->error, strlen(c->error)) != 0)
			fail_msg("%s: %s", c->name, cause);
		free(cause);
		apply_patch_free(p);
	}
}

/* exec_command's cmd, as the fixture rollout's model sent it. */
static void
test_intercept_script(void **state)
{
	struct patch *p = NULL;
	char *cause = NULL;

	(void)state;
	assert_int_equal(apply_patch_intercept_script("apply_patch <<'EOF'\n*** Begin Patch\n*** "
						      "Add File: hello.txt\n+hi from a "
						      "patch\n*** End Patch\nEOF\n",
				 &p, &cause),
		APPLY_PATCH_BODY);
	assert_string_equal(apply_patch_text(p),
		"*** Begin Patch\n*** Add File: hello.txt\n+hi from a patch\n*** End Patch");
	apply_patch_free(p);
	assert_int_equal(apply_patch_intercept_script("echo hi", &p, &cause), APPLY_PATCH_NOT);
	assert_int_equal(apply_patch_intercept_script("", &p, &cause), APPLY_PATCH_NOT);
	/* CRLF scripts (a Windows-edited command) still end the heredoc. */
	assert_int_equal(apply_patch_intercept_script(
				 "apply_patch <<'EOF'\r\n" BODY "\r\nEOF\r\n", &p, &cause),
		APPLY_PATCH_BODY);
	apply_patch_free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intercept_table),
		cmocka_unit_test(test_intercept_script),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
