/*
 * The wire sandbox as the approval rules see it (server/agent/approval/approval_sandbox.c):
 * each SandboxPolicy type in both spellings upstream accepts, and a managed PermissionProfile
 * judged by its file system (restricted never counts as full access).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "agent/approval/approval_sandbox.h"

static enum approval_sandbox
kind(const char *text)
{
	json_t *j = json_loads(text, 0, NULL);
	enum approval_sandbox k;

	assert_non_null(j);
	k = approval_sandbox_of(j);
	json_decref(j);
	return k;
}

static void
test_policies(void **state)
{
	(void)state;
	assert_int_equal(approval_sandbox_of(NULL), APPROVAL_SANDBOX_READ_ONLY);
	assert_int_equal(kind("{}"), APPROVAL_SANDBOX_READ_ONLY);
	assert_int_equal(kind("{\"type\":\"readOnly\"}"), APPROVAL_SANDBOX_READ_ONLY);
	assert_int_equal(kind("{\"type\":\"workspaceWrite\"}"), APPROVAL_SANDBOX_WORKSPACE_WRITE);
	assert_int_equal(kind("{\"type\":\"externalSandbox\"}"), APPROVAL_SANDBOX_EXTERNAL);
	assert_int_equal(kind("{\"type\":\"external\"}"), APPROVAL_SANDBOX_EXTERNAL);
	assert_int_equal(
		kind("{\"type\":\"dangerFullAccess\"}"), APPROVAL_SANDBOX_DANGER_FULL_ACCESS);
}

static void
test_managed(void **state)
{
	(void)state;
	assert_int_equal(kind("{\"type\":\"managed\"}"), APPROVAL_SANDBOX_DANGER_FULL_ACCESS);
	assert_int_equal(kind("{\"type\":\"managed\",\"fileSystem\":{\"type\":\"unrestricted\"}}"),
		APPROVAL_SANDBOX_DANGER_FULL_ACCESS);
	assert_int_equal(kind("{\"type\":\"managed\",\"fileSystem\":{\"type\":\"restricted\","
			      "\"entries\":[{\"access\":\"read\"},{\"access\":\"write\"}]}}"),
		APPROVAL_SANDBOX_WORKSPACE_WRITE);
	assert_int_equal(kind("{\"type\":\"managed\",\"fileSystem\":{\"type\":\"restricted\","
			      "\"entries\":[{\"access\":\"read\"}]}}"),
		APPROVAL_SANDBOX_READ_ONLY);
	assert_int_equal(kind("{\"type\":\"managed\",\"fileSystem\":{\"type\":\"restricted\"}}"),
		APPROVAL_SANDBOX_READ_ONLY);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policies),
		cmocka_unit_test(test_managed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
