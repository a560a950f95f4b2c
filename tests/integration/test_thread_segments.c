/*
 * Rollout segments (issue 25, thread/revert's second half), end to end on the real daemon:
 *   - upstream 0.169's own reverted thread (tests/fixtures/segments/, recorded by record.py:
 *     three turns, revert before the second, a fourth) reads back as upstream answered it:
 *     thread/read {includeTurns} and thread/turns/list, one thread in thread/list, and a turn
 *     after thread/resume sends the model the base's history and the segment's;
 *   - our revert writes a new segment whose history_base points at the kept bytes of the old
 *     file, which stays whole; after a restart (and a rebuilt index) the thread is one thread,
 *     read through its chain; archive, unarchive and delete move or remove every segment.
 */
#include <ftw.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "th_util.h"

#define SEG_FIXTURE "tests/fixtures/segments/"
#define SEG_TID	    "01a21b62-e9cc-7903-8288-431b35e06de2"
#define SEG_DAY	    "sessions/2026/11/27/"
#define SEG_BASE    "rollout-2026-11-27T05-03-16-" SEG_TID ".jsonl"
#define SEG_NEWEST                                                                                 \
	"rollout-2026-11-27T05-03-17-" SEG_TID "_01a21b62-ead5-7a71-b17f-212177914715.jsonl"
#define SEG_REC_HOME "/tmp/segrec._l44tw25/home" /* the recording's CODEX_HOME */

/* Copy a fixture file byte for byte (its offsets are part of the format). */
static void
seg_copy(const char *name, const char *home)
{
	char *src = xasprintf(SEG_FIXTURE "home/" SEG_DAY "%s", name);
	char *dir = xasprintf("%s/" SEG_DAY, home), *dst = xasprintf("%s%s", dir, name);
	size_t len;
	char *data = tu_read(src, &len);

	for (char *q = strchr(dir + 1, '/'); q != NULL; q = strchr(q + 1, '/')) {
		*q = '\0';
		mkdir(dir, 0700);
		*q = '/';
	}
	tu_write(dst, data, len);
	free(data);
	free(src);
	free(dir);
	free(dst);
}

/* The JSON text of v with the recording's home replaced by home (heap). */
static char *
seg_text(const json_t *v, const char *home)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY), *out;
	struct buf b;
	const char *p = s, *hit;

	buf_init(&b, 64 << 20);
	while ((hit = strstr(p, SEG_REC_HOME)) != NULL) {
		buf_printf(&b, "%.*s%s", (int)(hit - p), p, home);
		p = hit + strlen(SEG_REC_HOME);
	}
	buf_printf(&b, "%s", p);
	free(s);
	out = buf_steal(&b, NULL);
	return out;
}

static void
test_upstream_segments_read(void **state)
{
	struct th t;
	json_t *want = json_load_file(SEG_FIXTURE "answers.json", 0, NULL), *r, *res, *th;
	char *a, *b, *req;

	(void)state;
	assert_non_null(want);
	th_start(&t, 0);
	seg_copy(SEG_BASE, t.h.home);
	seg_copy(SEG_NEWEST, t.h.home);

	/* thread/read as upstream answered it, byte for byte (the home aside) */
	r = th_call(t.c, "thread/read",
		json_pack("{s:s, s:b}", "threadId", SEG_TID, "includeTurns", 1));
	th = json_object_get(asc_assert_result(r), "thread");
	a = seg_text(th, t.h.home);
	b = seg_text(json_object_get(json_object_get(want, "read"), "thread"), t.h.home);
	assert_string_equal(a, b);
	free(a);
	free(b);
	json_decref(r);

	/* thread/turns/list: the same turns (cursors are ours: docs/threads.md) */
	r = th_call(t.c, "thread/turns/list",
		json_pack("{s:s, s:s}", "threadId", SEG_TID, "sortDirection", "asc"));
	a = seg_text(json_object_get(asc_assert_result(r), "data"), t.h.home);
	b = seg_text(json_object_get(json_object_get(want, "turnsList"), "data"), t.h.home);
	assert_string_equal(a, b);
	free(a);
	free(b);
	json_decref(r);

	/* one thread in the list, from its newest segment, previewed by its first message */
	r = th_call(t.c, "thread/list", json_pack("{s:[]}", "modelProviders"));
	res = asc_assert_result(r);
	assert_int_equal(json_array_size(json_object_get(res, "data")), 1);
	th = json_array_get(json_object_get(res, "data"), 0);
	assert_string_equal(json_string_value(json_object_get(th, "id")), SEG_TID);
	assert_string_equal(json_string_value(json_object_get(th, "preview")), "one");
	assert_non_null(strstr(json_string_value(json_object_get(th, "path")), SEG_NEWEST));
	json_decref(r);

	/* resumed, the model is sent the base's kept turn and the segment's, then the new one */
	r = th_call(t.c, "thread/resume", json_pack("{s:s}", "threadId", SEG_TID));
	asc_assert_result(r);
	json_decref(r);
	th_turn(&t, SEG_TID, "five");
	req = th_last_request(&t);
	assert_string_equal(req, "one|reply 0|four|reply 3|five");
	free(req);
	json_decref(want);
	th_stop(&t);
}

static const char *seg_needle;
static int seg_sessions, seg_archived;

static int
seg_find_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_F && strstr(path, seg_needle) != NULL) {
		seg_sessions += strstr(path, "/sessions/") != NULL;
		seg_archived += strstr(path, "/archived_sessions/") != NULL;
	}
	return 0;
}

/* How many files of thread id are under sessions/ and archived_sessions/. */
static void
seg_count(struct th *t, const char *id, int sessions, int archived)
{
	seg_needle = id;
	seg_sessions = seg_archived = 0;
	nftw(t->h.home, seg_find_cb, 16, FTW_PHYS);
	assert_int_equal(seg_sessions, sessions);
	assert_int_equal(seg_archived, archived);
}

/* The user texts of a thread's turns by thread/read, "|"-joined (heap). */
static char *
seg_read(struct th *t, const char *id, char **path)
{
	json_t *r = th_call(
		t->c, "thread/read", json_pack("{s:s, s:b}", "threadId", id, "includeTurns", 1));
	json_t *th = json_object_get(asc_assert_result(r), "thread"), *turn, *it;
	struct buf b;
	size_t i, j;

	buf_init(&b, 1 << 16);
	json_array_foreach(json_object_get(th, "turns"), i, turn)
	{
		json_array_foreach(json_object_get(turn, "items"), j, it)
		{
			json_t *c = json_array_get(json_object_get(it, "content"), 0);

			if (json_is_string(json_object_get(c, "text")))
				buf_printf(&b, "%s%s", b.len ? "|" : "",
					json_string_value(json_object_get(c, "text")));
		}
	}
	if (path != NULL)
		*path = xstrdup(json_string_value(json_object_get(th, "path")));
	json_decref(r);
	return buf_steal(&b, NULL);
}

static void
test_revert_writes_segment(void **state)
{
	struct th t;
	json_t *r, *head, *base, *root;
	char *id, *t2, *path, *old, *oldcopy, *newest, *texts, *line, *ix;
	size_t oldlen, len;
	json_t *turns;

	(void)state;
	th_start(&t, 0);
	id = th_new(&t, NULL);
	th_turn(&t, id, "one");
	th_turn(&t, id, "two");
	r = th_call(t.c, "thread/turns/list",
		json_pack("{s:s, s:s}", "threadId", id, "sortDirection", "asc"));
	turns = json_object_get(asc_assert_result(r), "data");
	t2 = xstrdup(json_string_value(json_object_get(json_array_get(turns, 1), "id")));
	json_decref(r);
	free(seg_read(&t, id, &old));
	oldcopy = tu_read(old, &oldlen);

	r = th_call(
		t.c, "thread/revert", json_pack("{s:s, s:s}", "threadId", id, "beforeTurnId", t2));
	asc_assert_result(r);
	json_decref(r);
	json_decref(asc_wait_notification(t.c, "thread/reverted", asc_timeout(TH_MS)));
	th_turn(&t, id, "three");

	/* the old file is untouched; a new segment points at its kept bytes */
	path = tu_read(old, &len);
	assert_int_equal(len, oldlen);
	assert_memory_equal(path, oldcopy, len);
	free(path);
	texts = seg_read(&t, id, &newest);
	assert_string_equal(texts, "one|three");
	free(texts);
	assert_string_not_equal(newest, old);
	assert_non_null(strstr(newest, id));
	line = tu_read(newest, &len);
	*strchr(line, '\n') = '\0';
	root = json_loads(line, 0, NULL);
	head = json_object_get(root, "payload");
	base = json_object_get(head, "history_base");
	assert_string_equal(json_string_value(json_object_get(base, "thread_id")), id);
	assert_true(
		json_integer_value(json_object_get(base, "end_byte_offset")) < (json_int_t)oldlen);
	assert_int_equal(
		oldcopy[json_integer_value(json_object_get(base, "end_byte_offset")) - 1], '\n');
	/* the segment's records number on from the cut */
	assert_int_equal(json_integer_value(json_object_get(root, "ordinal")),
		json_integer_value(json_object_get(base, "end_ordinal_exclusive")));
	json_decref(root);
	free(line);
	seg_count(&t, id, 2, 0);

	/* restart with the index gone: rebuilt, one thread, read through its chain */
	asc_free(t.c);
	ix = xasprintf("%s/app-server-threads.sqlite", t.h.home);
	unlink(ix);
	free(ix);
	t.c = th_daemon(&t);
	r = th_call(t.c, "thread/list", json_pack("{s:[]}", "modelProviders"));
	turns = json_object_get(asc_assert_result(r), "data");
	assert_int_equal(json_array_size(turns), 1);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(turns, 0), "path")), newest);
	assert_string_equal(
		json_string_value(json_object_get(json_array_get(turns, 0), "preview")), "one");
	json_decref(r);
	texts = seg_read(&t, id, NULL);
	assert_string_equal(texts, "one|three");
	free(texts);

	/* archive moves every segment, the chain reads from there; unarchive brings them back */
	r = th_call(t.c, "thread/archive", json_pack("{s:s}", "threadId", id));
	asc_assert_result(r);
	json_decref(r);
	seg_count(&t, id, 0, 2);
	texts = seg_read(&t, id, NULL);
	assert_string_equal(texts, "one|three");
	free(texts);
	r = th_call(t.c, "thread/unarchive", json_pack("{s:s}", "threadId", id));
	asc_assert_result(r);
	json_decref(r);
	seg_count(&t, id, 2, 0);
	texts = seg_read(&t, id, NULL);
	assert_string_equal(texts, "one|three");
	free(texts);
	/* delete removes them all */
	r = th_call(t.c, "thread/delete", json_pack("{s:s}", "threadId", id));
	asc_assert_result(r);
	json_decref(r);
	seg_count(&t, id, 0, 0);

	free(oldcopy);
	free(old);
	free(newest);
	free(t2);
	free(id);
	th_stop(&t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_upstream_segments_read),
		cmocka_unit_test(test_revert_writes_segment),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
