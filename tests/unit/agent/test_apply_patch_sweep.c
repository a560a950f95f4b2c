/*
 * Leftovers of a crashed apply_patch commit (server/agent/patch/apply_patch_sweep.c): the next
 * patch that writes in a folder removes the ".apply_patch-<pid>-<n>.tmp|.bak" files a dead
 * process left there, and nothing else: not a live process's (ours, pid 1), not a fresh one
 * (younger than APPLY_PATCH_STALE_SECS), not a directory or a look-alike name, not what a
 * leftover symlink points to, not a folder the patch does not write in.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdbool.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/patch/apply_patch.h"
#include "agent/patch/apply_patch_int.h"
#include "protocol/xmalloc.h"

static char *root;
static long dead; /* a pid no process has any more */

static int
rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int
setup(void **state)
{
	char tmpl[] = "/tmp/apply_patch_sweep.XXXXXX";
	pid_t p;

	(void)state;
	root = xstrdup(mkdtemp(tmpl));
	if ((p = fork()) == 0)
		_exit(0);
	waitpid(p, NULL, 0);
	dead = (long)p;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	free(root);
	ap_sweep_set_stale_secs(APPLY_PATCH_STALE_SECS);
	return 0;
}

/* A file (or a symlink to target, or a directory) at path (taken). */
static void
make_at(char *path, int kind, const char *target)
{
	int fd;

	if (kind == 'l')
		assert_int_equal(symlink(target, path), 0);
	else if (kind == 'd')
		assert_int_equal(mkdir(path, 0755), 0);
	else {
		assert_true((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) >= 0);
		assert_int_equal(write(fd, "x", 1), 1);
		close(fd);
	}
	free(path);
}

/* Whether something is at path (taken). */
static bool
exists_at(char *path)
{
	struct stat st;
	bool r = lstat(path, &st) == 0;

	free(path);
	return r;
}

/* Names under root with a pid in them. */
#define make(fmt, pid, kind, target) make_at(xasprintf("%s/" fmt, root, (long)(pid)), kind, target)
#define exists(fmt, pid)	     exists_at(xasprintf("%s/" fmt, root, (long)(pid)))

/* Apply a patch adding a file in root (the folder the leftovers are in, or sub/). */
static void
apply_add(const char *name)
{
	char *text = xasprintf("*** Begin Patch\n*** Add File: %s\n+hi\n*** End Patch\n", name);
	struct patch *p = NULL;
	struct apply_patch_result *r = NULL;
	char *cause = NULL;

	assert_int_equal(apply_patch_parse(text, strlen(text), &p, &cause), 0);
	assert_int_equal(apply_patch_apply(p, root, NULL, &r, &cause), 0);
	apply_patch_result_free(r);
	apply_patch_free(p);
	free(text);
}

/* Every kind of entry, and which of them a patch in root removes. */
static void
test_sweep_removes_dead_leftovers_only(void **state)
{
	char *keep = xasprintf("%s/sub/keep.txt", root), *outside = xasprintf("%s/sub", root);

	(void)state;
	assert_int_equal(mkdir(outside, 0755), 0);
	make("sub/.apply_patch-%ld-9.tmp", dead, 'f', NULL);
	make_at(xasprintf("%s/sub/keep.txt", root), 'f', NULL);
	make(".apply_patch-%ld-0.tmp", dead, 'f', NULL);
	make(".apply_patch-%ld-1.bak", dead, 'f', NULL);
	make(".apply_patch-%ld-2.bak", dead, 'l', keep);
	make(".apply_patch-%ld-3.tmp", (long)getpid(), 'f', NULL);
	make(".apply_patch-%ld-4.tmp", 1, 'f', NULL);
	make(".apply_patch-%ld-5.tmp", dead, 'd', NULL);
	make(".apply_patch-%ld-x.tmp", dead, 'f', NULL);
	make(".apply_patch-%ld-6.tmpx", dead, 'f', NULL);
	make("apply_patch-%ld-7.tmp", dead, 'f', NULL);
	make(".apply_patch-%ld-8.txt", dead, 'f', NULL);
	ap_sweep_set_stale_secs(0);
	apply_add("new.txt");
	assert_true(exists_at(xasprintf("%s/new.txt", root)));
	assert_false(exists(".apply_patch-%ld-0.tmp", dead));
	assert_false(exists(".apply_patch-%ld-1.bak", dead));
	assert_false(exists(".apply_patch-%ld-2.bak", dead));
	assert_true(exists_at(xasprintf("%s", keep))); /* the symlink went, not its target */
	assert_true(exists(".apply_patch-%ld-3.tmp", (long)getpid()));
	assert_true(exists(".apply_patch-%ld-4.tmp", 1));
	assert_true(exists(".apply_patch-%ld-5.tmp", dead));
	assert_true(exists(".apply_patch-%ld-x.tmp", dead));
	assert_true(exists(".apply_patch-%ld-6.tmpx", dead));
	assert_true(exists("apply_patch-%ld-7.tmp", dead));
	assert_true(exists(".apply_patch-%ld-8.txt", dead));
	/* sub/ was not written: its leftover stays until a patch writes there */
	assert_true(exists("sub/.apply_patch-%ld-9.tmp", dead));
	apply_add("sub/other.txt");
	assert_false(exists("sub/.apply_patch-%ld-9.tmp", dead));
	free(keep);
	free(outside);
}

/* A leftover younger than APPLY_PATCH_STALE_SECS may be a commit in flight elsewhere. */
static void
test_sweep_keeps_fresh_leftovers(void **state)
{
	(void)state;
	make(".apply_patch-%ld-0.tmp", dead, 'f', NULL);
	apply_add("new.txt");
	assert_true(exists(".apply_patch-%ld-0.tmp", dead));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_sweep_removes_dead_leftovers_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep_keeps_fresh_leftovers, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
