/*
 * Tests for where sandbox/spawn/spawn.c puts a child with SPAWN_CGROUP: in a cgroup of its own (v2:
 * created there by clone3's CLONE_INTO_CGROUP where the kernel can), and in a v1 pids cgroup
 * only when that caps it (sandbox/cgroup/cgroup.c). spawn_util.h has the shared helpers.
 */
#include "spawn_util.h"
#include "sandbox/cgroup/cgroup.h"
#include "tests/helpers/skip_note.h"

/* The path of a /proc/PID/cgroup text's line that holds tag ("0::" v2, ":pids:" v1), heap. */
static char *
cgroup_path(const char *text, const char *tag)
{
	const char *l = strstr(text, tag);

	if (l == NULL || (strcmp(tag, "0::") == 0 && l != text && l[-1] != '\n'))
		return strdup("");
	l += strlen(tag);
	return strndup(l, strcspn(l, "\n"));
}

/*
 * A command is in its own cgroup (v2: created there), and in a v1 pids cgroup only when that
 * caps it: moving a task into a cgroup waits for an RCU grace period (sandbox/cgroup/cgroup.c).
 */
static void
test_cgroup_join(void **state)
{
	const struct cgroup_support *cs = cgroup_support();
	char *argv[] = {"cat", "/proc/self/cgroup", NULL};
	struct spawn_opts o = opts_make(argv, SPAWN_CGROUP);
	struct capture *c = calloc(1, sizeof *c);
	char own[64], *path;

	(void)state;
	if (!cs->kill) {
		free(c);
		skip_test("no v2 cgroup can be made here");
		return;
	}
	snprintf(own, sizeof own, "/app-server-%d/c", (int)getpid());
	for (unsigned max = 0; max <= 5; max += 5) {
		o.max_pids = max;
		assert_int_equal(WEXITSTATUS(run(&o, c, NULL, 0)), 0);
		path = cgroup_path(c->out, "0::");
		assert_non_null(strstr(path, own));
		free(path);
		if (cs->pids == 1) {
			/* v1 pids beside v2: joined for a cap only (v2's cgroup.kill is the kill)
			 */
			path = cgroup_path(c->out, ":pids:");
			if (max == 0)
				assert_null(strstr(path, "/app-server-"));
			else
				assert_non_null(strstr(path, own));
			free(path);
		}
	}
	free(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_join),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
