/*
 * The thread index against the real daemon (docs/threads.md): a locked index never holds the
 * loop (a byte-range read lock on its -shm, as a sandboxed reader can take, or another
 * process's BEGIN EXCLUSIVE), the index degrades while locked and recovers after; and a
 * connection's thread/list sees its own writes at once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "th_util.h"

#define TI_QUICK_MS 1000 /* "answers at once": well under the index's 5 s busy timeout */

/* A call answered within TI_QUICK_MS. */
static json_t *
ti_quick(struct asc *c, const char *method, json_t *params)
{
	long long t0 = asc_now_ms(), ms;
	json_t *r = th_call(c, method, params);

	ms = asc_now_ms() - t0;
	if (ms >= TI_QUICK_MS)
		fail_msg("%s answered after %lld ms", method, ms);
	return r;
}

/* Whether a list answer holds id. */
static int
ti_listed(struct th *t, const char *id)
{
	json_t *r = ti_quick(t->c, "thread/list", json_pack("{s:i}", "limit", 100));
	char *ids = th_ids(asc_assert_result(r));
	int found = strstr(ids, id) != NULL;

	free(ids);
	json_decref(r);
	return found;
}

/* What the locked daemon must still do at once: unrelated requests, start, turns, names. */
static void
ti_while_locked(struct th *t, const char *old_id, char **new_id)
{
	json_t *r;
	char *id;

	r = ti_quick(t->c, "fs/getMetadata", json_pack("{s:s}", "path", t->h.ws));
	asc_assert_result(r);
	json_decref(r);
	r = ti_quick(t->c, "thread/start", json_pack("{s:s}", "cwd", t->h.ws));
	id = xstrdup(json_string_value(
		json_object_get(json_object_get(asc_assert_result(r), "thread"), "id")));
	json_decref(r);
	json_decref(asc_wait_notification(t->c, "thread/started", asc_timeout(TH_MS)));
	r = ti_quick(t->c, "fs/getMetadata", json_pack("{s:s}", "path", t->h.ws));
	asc_assert_result(r);
	json_decref(r);
	/* A turn ends with an index write; the next unrelated request must not wait for it. */
	th_turn(t, id, "while the index is locked");
	r = ti_quick(t->c, "fs/getMetadata", json_pack("{s:s}", "path", t->h.ws));
	asc_assert_result(r);
	json_decref(r);
	r = ti_quick(t->c, "thread/name/set",
		json_pack("{s:s, s:s}", "threadId", old_id, "name", "renamed while locked"));
	asc_assert_result(r);
	json_decref(r);
	/* Reads answer too (from what the index held before the lock). */
	assert_true(ti_listed(t, old_id));
	r = ti_quick(t->c, "thread/read", json_pack("{s:s}", "threadId", id));
	asc_assert_result(r);
	json_decref(r);
	*new_id = id;
}

/* Once the lock is gone, the index catches up with what happened meanwhile. */
static void
ti_recovers(struct th *t, const char *old_id, const char *new_id)
{
	long long deadline = asc_now_ms() + TH_MS;
	json_t *r, *thread;

	while (!ti_listed(t, new_id)) {
		if (asc_now_ms() > deadline)
			fail_msg("thread %s never listed after the lock was released", new_id);
		usleep(100000);
	}
	r = ti_quick(t->c, "thread/list", json_pack("{s:s}", "searchTerm", "renamed while"));
	thread = json_array_get(json_object_get(asc_assert_result(r), "data"), 0);
	assert_non_null(thread);
	assert_string_equal(json_string_value(json_object_get(thread, "id")), old_id);
	json_decref(r);
}

/* A thread with one turn, so the index exists with a row and its -shm is mapped. */
static char *
ti_setup(struct th *t)
{
	char *id;

	th_start(t, 0);
	id = th_new(t, NULL);
	th_turn(t, id, "before the lock");
	assert_true(ti_listed(t, id));
	return id;
}

/* A read lock on the -shm's WAL write-lock byte (120), as a sandboxed reader may hold. */
static void
test_shm_read_lock(void **state)
{
	struct th t;
	struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 120, .l_len = 1};
	char *old_id = ti_setup(&t), *new_id, *shm;
	int fd;

	(void)state;
	shm = xasprintf("%s/app-server-threads.sqlite-shm", t.h.home);
	fd = open(shm, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_SETLK, &fl), 0);
	ti_while_locked(&t, old_id, &new_id);
	close(fd); /* releases the lock */
	ti_recovers(&t, old_id, new_id);
	free(shm);
	free(old_id);
	free(new_id);
	th_stop(&t);
}

/* Another process in BEGIN EXCLUSIVE on the index until told to stop. */
static pid_t
ti_exclusive(const char *home, int *release)
{
	int ready[2], go[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *path = xasprintf("%s/app-server-threads.sqlite", home);
		sqlite3 *db = NULL;

		close(ready[0]);
		close(go[1]); /* EOF on go[0] once the test closes its end */
		if (sqlite3_open(path, &db) != SQLITE_OK ||
			sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL) != SQLITE_OK)
			_exit(1);
		if (write(ready[1], "x", 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(db);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	*release = go[1];
	return pid;
}

static void
test_begin_exclusive(void **state)
{
	struct th t;
	char *old_id = ti_setup(&t), *new_id;
	int release, status;
	pid_t pid;

	(void)state;
	pid = ti_exclusive(t.h.home, &release);
	ti_while_locked(&t, old_id, &new_id);
	close(release);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ti_recovers(&t, old_id, new_id);
	free(old_id);
	free(new_id);
	th_stop(&t);
}

/* A thread whose turn just completed is listed by the next request, every time. */
static void
test_list_sees_own_writes(void **state)
{
	struct th t;

	(void)state;
	th_start(&t, 1);
	for (int i = 0; i < 5; i++) {
		char *id = th_new(&t, NULL);

		th_turn(&t, id, "listed at once");
		if (!ti_listed(&t, id))
			fail_msg("try %d: thread %s not listed right after its turn", i, id);
		free(id);
	}
	th_stop(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_sees_own_writes),
		cmocka_unit_test(test_shm_read_lock),
		cmocka_unit_test(test_begin_exclusive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
