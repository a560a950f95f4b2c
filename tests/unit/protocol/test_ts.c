/*
 * Tests for protocol/gen/ts.c, the TypeScript generator: definitions written as raw schema text
 * (PD_ALIAS with `schema`) get a type derived from that schema, as narrow as the schema is,
 * and the table-built kinds keep their shapes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/defs/defs.h"
#include "protocol/gen/ts.h"

static char *ts;

static int
setup(void **state)
{
	char *cause = NULL;

	ts = ts_render(&cause);
	if (ts == NULL)
		fail_msg("ts_render: %s", cause);
	return 0;
}

static int
teardown(void **state)
{
	free(ts);
	return 0;
}

/* The declaration of `name`, from "export type name =" to the blank line after it. */
static char *
decl(const char *name)
{
	char head[128], *at, *end;

	snprintf(head, sizeof head, "\nexport type %s =", name);
	if ((at = strstr(ts, head)) == NULL)
		fail_msg("no declaration of %s", name);
	at++;
	end = strstr(at, ";\n\n");
	assert_non_null(end);
	return strndup(at, (size_t)(end - at + 1));
}

static void
check_decl(const char *name, const char *want)
{
	char *got = decl(name);

	if (strcmp(got, want) != 0)
		fail_msg("%s:\n got: %s\nwant: %s", name, got, want);
	free(got);
}

static void
test_raw_oneof_alias(void **state)
{
	/* Strings or a {granular} object: each member, required keys without "?". */
	check_decl("AskForApproval",
		"export type AskForApproval =\n"
		"  | \"untrusted\" | \"on-request\" | \"never\"\n"
		"  | { granular: { mcp_elicitations: boolean; request_permissions?: boolean; "
		"rules: boolean; sandbox_approval: boolean; skill_approval?: boolean } };");
}

static void
test_raw_scalar_alias(void **state)
{
	check_decl("ReasoningEffort", "export type ReasoningEffort = string;");
}

static void
test_table_kinds(void **state)
{
	check_decl("SandboxMode",
		"export type SandboxMode = \"read-only\" | \"workspace-write\" | "
		"\"danger-full-access\";");
	/* No definition falls back to an untyped alias any more. */
	assert_null(strstr(ts, "= string | { [key in string]?: JsonValue };"));
}

/* A property name that is not an identifier is quoted (otherwise tsc refuses the file). */
static void
test_quoted_keys(void **state)
{
	char *got = decl("OtelTlsConfig");

	assert_non_null(strstr(got, "\n  \"ca-certificate\"?: string | null;"));
	free(got);
	got = decl("OtelExporter");
	assert_non_null(strstr(got, "{ \"otlp-http\": {"));
	free(got);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quoted_keys),
		cmocka_unit_test(test_raw_oneof_alias),
		cmocka_unit_test(test_raw_scalar_alias),
		cmocka_unit_test(test_table_kinds),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
