/*
 * Stale shell snapshots (server/agent/shell/shell_snapshot_sweep.c): a file goes once it is
 * SHELL_SNAPSHOT_STALE_AGE old and its thread has no rollout written since then (none at all,
 * or only an old one, live or archived); a recent file stays whatever its thread (a live
 * ephemeral thread of another daemon has no rollout), and so does an old file whose thread's
 * rollout was written lately. Unknown names follow the same age rule; folders are left alone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/shell/shell_snapshot.h"
#include "protocol/xmalloc.h"

#define ID_OLD	 "019a0000-0000-7000-8000-000000000001" /* rollout written 5 days ago */
#define ID_NEW	 "019a0000-0000-7000-8000-000000000002" /* rollout written today */
#define ID_NONE	 "019a0000-0000-7000-8000-000000000003" /* no rollout */
#define ID_ARCH	 "019a0000-0000-7000-8000-000000000004" /* archived, written today */
#define ID_FRESH "019a0000-0000-7000-8000-000000000005" /* no rollout, file made today */
#define DAY	 (24 * 3600)

static char *home;
static time_t now;

static int
rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

/* Make home/rel (its folders too) last written `age` seconds before now. */
static void
make_file(const char *rel, time_t age)
{
	char *p = xasprintf("%s/%s", home, rel), *slash;
	struct timespec t[2] = {{.tv_sec = now - age}, {.tv_sec = now - age}};
	int fd;

	for (slash = strchr(p + strlen(home) + 1, '/'); slash != NULL;
		slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(p, 0700);
		*slash = '/';
	}
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(utimensat(AT_FDCWD, p, t, 0), 0);
	free(p);
}

static int
exists(const char *rel)
{
	char *p = xasprintf("%s/%s", home, rel);
	int r = access(p, F_OK) == 0;

	free(p);
	return r;
}

static void
test_sweep(void **state)
{
	char tmpl[] = "/tmp/snap_sweep.XXXXXX";

	(void)state;
	home = xstrdup(mkdtemp(tmpl));
	now = time(NULL);
	make_file("sessions/2026/11/22/rollout-2026-11-22T10-00-00-" ID_OLD ".jsonl", 5 * DAY);
	make_file("sessions/2026/11/20/rollout-2026-11-20T10-00-00-" ID_NEW ".jsonl", 0);
	make_file("archived_sessions/rollout-2026-11-20T10-00-00-" ID_ARCH ".jsonl", 0);
	make_file("shell_snapshots/" ID_OLD ".1.sh", 4 * DAY);
	make_file("shell_snapshots/" ID_NEW ".1.sh", 4 * DAY);
	make_file("shell_snapshots/" ID_NONE ".1.sh", 4 * DAY);
	make_file("shell_snapshots/" ID_NONE ".tmp-2", 4 * DAY);
	make_file("shell_snapshots/" ID_ARCH ".1.sh", 4 * DAY);
	make_file("shell_snapshots/" ID_FRESH ".1.sh", DAY);
	make_file("shell_snapshots/unknown-name", 4 * DAY);
	make_file("shell_snapshots/unknown-fresh", 60);
	make_file("shell_snapshots/a-folder/x", 4 * DAY);

	assert_int_equal(shell_snapshot_sweep(home, now), 4);
	assert_false(exists("shell_snapshots/" ID_OLD ".1.sh"));  /* old thread */
	assert_false(exists("shell_snapshots/" ID_NONE ".1.sh")); /* no rollout, old file */
	assert_false(exists("shell_snapshots/" ID_NONE ".tmp-2"));
	assert_false(exists("shell_snapshots/unknown-name"));
	assert_true(exists("shell_snapshots/" ID_NEW ".1.sh"));	  /* thread written lately */
	assert_true(exists("shell_snapshots/" ID_ARCH ".1.sh"));  /* archived, written lately */
	assert_true(exists("shell_snapshots/" ID_FRESH ".1.sh")); /* maybe a live thread's */
	assert_true(exists("shell_snapshots/unknown-fresh"));
	assert_true(exists("shell_snapshots/a-folder/x"));
	/* Rollouts themselves are never touched. */
	assert_true(exists("sessions/2026/11/22/rollout-2026-11-22T10-00-00-" ID_OLD ".jsonl"));
	/* Nothing to do the second time; no folder at all is fine too. */
	assert_int_equal(shell_snapshot_sweep(home, now), 0);
	nftw(home, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	assert_int_equal(shell_snapshot_sweep(home, now), 0);
	free(home);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
