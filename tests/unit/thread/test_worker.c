/*
 * Tests for server/thread/store/worker.c and the store on a real libev loop: jobs run in order off
 * the loop thread and complete on it through ev_async; a thread's durability callback fires
 * once its rollout is synced; a list asked while the index is built from scratch is answered
 * when the build is done, from the loop.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>

#include "store_util.h"
#include "thread/store/worker.h"

struct job {
	int n, ran_on_loop, done_on_loop;
	int *order;
	size_t *norder;
	pthread_t loop_thread;
};

static void
job_run(void *arg)
{
	struct job *j = arg;

	j->ran_on_loop = pthread_equal(pthread_self(), j->loop_thread);
	j->order[(*j->norder)++] = j->n; /* one worker thread: no race between jobs */
}

static int jobs_done; /* set when the last job's done() ran */

static void
job_done(void *arg)
{
	struct job *j = arg;

	j->done_on_loop = pthread_equal(pthread_self(), j->loop_thread);
	if (j->n == 99)
		jobs_done = 1;
}

/* Run the loop until *flag or a deadline. */
static void
run_until(struct ev_loop *loop, int *flag)
{
	ev_tstamp end = ev_time() + 10;

	while (!*flag && ev_time() < end)
		ev_run(loop, EVRUN_ONCE | EVRUN_NOWAIT), usleep(1000);
}

/* FIFO order off the loop, done() on the loop. */
static void
test_worker_loop(void **state)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct worker *w = worker_new(loop, "test");
	struct job jobs[100];
	int order[100];
	size_t norder = 0;

	for (int i = 0; i < 100; i++) {
		jobs[i] = (struct job){.n = i,
			.order = order,
			.norder = &norder,
			.loop_thread = pthread_self(),
			.done_on_loop = -1};
		worker_post(w, job_run, job_done, &jobs[i]);
	}
	run_until(loop, &jobs_done);
	assert_int_equal(norder, 100);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(order[i], i);
		assert_int_equal(jobs[i].ran_on_loop, 0);
		assert_int_equal(jobs[i].done_on_loop, 1);
	}
	worker_free(w);
	ev_loop_destroy(loop);
}

/* A read answer. */
struct su_read {
	int done, r;
	json_t *result;
};

/* The thread with its turns text parsed in (the text must be valid JSON). */
static void
su_read_cb(void *arg, int r, json_t *result, const char *turns, size_t len, const char *cause)
{
	struct su_read *rd = arg;

	(void)cause;
	rd->done = 1;
	rd->r = r;
	rd->result = result;
	if (r == 0 && turns != NULL) {
		json_t *t = json_loadb(turns, len, 0, NULL);

		assert_non_null(t);
		json_object_set_new(result, "turns", t);
	}
}

struct flag {
	int set, r;
};

static void
flag_cb(void *arg, int r)
{
	struct flag *f = arg;

	f->set = 1;
	f->r = r;
}

/* A loop store: durability callbacks, and a list waiting for the first build. */
static void
test_store_loop(void **state)
{
	struct tu_home h;
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct store_config cfg = {.default_provider = "prov", .loop = loop};
	struct store *s;
	struct store_thread *t;
	struct flag durable = {0}, turn = {0};
	struct store_params p = {.durable = flag_cb, .durable_arg = &durable};
	char *cause = NULL, tid[37];
	struct su_list l = {0};
	struct store_list_params lp = {0};

	tu_empty_home(&h, "loop");
	cfg.home = h.home;
	assert_int_equal(store_open(&cfg, &s, &cause), 0);
	/* The index is new: the list waits for the build, then comes from the loop. */
	store_list(s, &lp, su_list_cb, &l);
	run_until(loop, &l.done);
	assert_true(l.done);
	assert_int_equal(l.r, 0);
	json_decref(l.result);
	assert_int_equal(store_create(s, &p, &t, &cause), 0);
	assert_false(durable.set); /* the fdatasync runs on the worker */
	run_until(loop, &durable.set);
	assert_true(durable.set);
	assert_int_equal(durable.r, 0);
	assert_int_equal(store_turn_begin(t, NULL, tid, &cause), 0);
	json_t *u = json_pack("{s:s,s:s,s:[{s:s,s:s}]}", "type", "userMessage", "id", "u",
		"content", "type", "text", "text", "hello");
	assert_int_equal(store_append_item(t, u, 0, 0), 0);
	json_decref(u);
	json_t *th = store_thread_json(t, NULL);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(th, "status"), "type")),
		"active");
	json_decref(th);
	assert_int_equal(store_turn_end(t, STORE_TURN_INTERRUPTED, NULL, flag_cb, &turn), 0);
	run_until(loop, &turn.set);
	assert_true(turn.set);
	memset(&l, 0, sizeof l);
	store_list(s, &lp, su_list_cb, &l);
	/* Never on the loop: the index worker answers, after the turn's write (FIFO). */
	assert_false(l.done);
	run_until(loop, &l.done);
	assert_true(l.done);
	assert_int_equal(json_array_size(json_object_get(l.result, "data")), 1);
	json_t *first = json_array_get(json_object_get(l.result, "data"), 0);
	assert_string_equal(json_string_value(json_object_get(first, "preview")), "hello");
	json_decref(l.result);
	/* The history built on the read worker equals the one built on the loop. */
	struct su_read rd = {0};
	json_t *sync_th;
	store_read_async(s, store_thread_id(t), 1, su_read_cb, &rd);
	run_until(loop, &rd.done);
	assert_int_equal(rd.r, 0);
	assert_int_equal(store_read(s, store_thread_id(t), 1, &sync_th, &cause), 0);
	assert_true(tu_json_same(sync_th, rd.result));
	assert_int_equal(json_array_size(json_object_get(rd.result, "turns")), 1);
	assert_string_equal(
		json_string_value(json_object_get(
			json_array_get(json_object_get(rd.result, "turns"), 0), "status")),
		"interrupted");
	json_decref(sync_th);
	json_decref(rd.result);
	memset(&rd, 0, sizeof rd);
	store_read_async(s, "nope", 1, su_read_cb, &rd);
	assert_true(rd.done); /* a bad id is answered at once */
	assert_int_equal(rd.r, -EINVAL);
	assert_int_equal(store_read(s, tid, 0, &th, &cause), -ENOENT); /* a turn id is no thread */
	free(cause);
	store_free(s);
	ev_loop_destroy(loop);
	tu_home_free(&h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worker_loop),
		cmocka_unit_test(test_store_loop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
