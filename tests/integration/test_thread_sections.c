/*
 * Thread sections end to end: the real binary replays what upstream 0.169 answered to the
 * same steps (tests/fixtures/sections/upstream.json, recorded by record.py there):
 * threadSection/list, create, update and delete with their errors and paging,
 * thread/section/move with its refusals and the thread/section/changed it broadcasts,
 * thread/list's sectionId filter and section_position order, thread/read's section, then a
 * kill -9 and a restart on the same CODEX_HOME. Answers are condensed and ids replaced by
 * placeholders exactly as record.py does, so the comparison is the recorder's own. Then a
 * kill -9 right after a burst of answered writes: each answered change is still there.
 * The attachments' recording (attachments.json, the same recorder) is replayed the same way:
 * thread/attachment/add, list, remove and thread/attachmentOwner/list with their limits and
 * errors, thread/attachment/updated, a deleted and an archived thread, kill -9 and restart.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "protocol/buf.h"
#include "protocol/xmalloc.h"
#include "th_util.h"
#include "ws_util.h"

#define FIXTURE	    "tests/fixtures/sections/upstream.json"
#define ATTACHMENTS "tests/fixtures/sections/attachments.json"
#define WS_SECTIONS "tests/integration/ws/ws_sections.py"

/* Placeholders (<T0>, <S0>, <A0>, ...) and the ids they stand for in this run. */
struct sec_ids {
	json_t *real; /* {placeholder: id} */
	int nt, ns, na;
};

/* text with every occurrence of from replaced by to (heap). */
static char *
sec_replace(const char *text, const char *from, const char *to)
{
	struct buf b;
	const char *p;
	char *out;

	buf_init(&b, 64u << 20);
	while ((p = strstr(text, from)) != NULL) {
		buf_add(&b, text, (size_t)(p - text));
		buf_adds(&b, to);
		text = p + strlen(from);
	}
	buf_adds(&b, text);
	out = xstrdup(buf_str(&b));
	buf_free(&b);
	return out;
}

/* v with placeholders (quoted) turned into ids and "<NEXT>" into next (new reference). */
static json_t *
sec_fill(struct sec_ids *ids, const json_t *v, const char *next)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY), *t, *quoted;
	const char *ph;
	json_t *real, *out;

	json_object_foreach(ids->real, ph, real)
	{
		char *from = xasprintf("\"%s\"", ph),
		     *to = xasprintf("\"%s\"", json_string_value(real));

		t = sec_replace(text, from, to);
		free(text);
		text = t;
		free(from);
		free(to);
	}
	quoted = next != NULL ? xasprintf("\"%s\"", next) : xstrdup("null");
	t = sec_replace(text, "\"<NEXT>\"", quoted);
	free(text);
	free(quoted);
	out = json_loads(t, JSON_DECODE_ANY, NULL);
	free(t);
	return out;
}

/* v with every known id turned into its placeholder (new reference). */
static json_t *
sec_hide(struct sec_ids *ids, const json_t *v)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY), *t;
	const char *ph;
	json_t *real, *out;

	json_object_foreach(ids->real, ph, real)
	{
		t = sec_replace(text, json_string_value(real), ph);
		free(text);
		text = t;
	}
	out = json_loads(text, JSON_DECODE_ANY, NULL);
	free(text);
	return out;
}

static void
sec_bind(struct sec_ids *ids, char kind, const char *real)
{
	char ph[16];

	int *n = kind == 'T' ? &ids->nt : kind == 'S' ? &ids->ns : &ids->na;

	snprintf(ph, sizeof ph, "<%c%d>", kind, (*n)++);
	json_object_set_new(ids->real, ph, json_string(real));
}

/* A Thread by its section and whether it entered it at some time. */
static json_t *
sec_section_of(const json_t *t)
{
	return json_pack("{s:O,s:b}", "section", json_object_get(t, "section"), "entered",
		!json_is_null(json_object_get(t, "sectionEnteredAt")));
}

/* An attachment without its time, only that it has one (record.py's attachment()). */
static json_t *
sec_attachment(const json_t *a)
{
	json_t *out = json_deep_copy(a);

	json_object_set_new(
		out, "createdAt", json_boolean(json_is_integer(json_object_get(a, "createdAt"))));
	return out;
}

/* An answer condensed as record.py's condense() (new reference). */
static json_t *
sec_condense(struct sec_ids *ids, const char *method, const json_t *msg)
{
	json_t *r = json_object_get(msg, "result"), *e = json_object_get(msg, "error"), *t;
	json_t *out, *idv, *names, *entered;
	size_t i;

	if (e != NULL)
		return json_pack("{s:{s:O,s:O}}", "error", "code", json_object_get(e, "code"),
			"message", json_object_get(e, "message"));
	if (strcmp(method, "thread/start") == 0) {
		sec_bind(ids, 'T',
			json_string_value(json_object_get(json_object_get(r, "thread"), "id")));
		return json_pack("{s:s}", "thread", "<bound>"); /* hidden below */
	}
	if (strcmp(method, "threadSection/create") == 0)
		sec_bind(ids, 'S',
			json_string_value(json_object_get(json_object_get(r, "section"), "id")));
	if (strcmp(method, "thread/read") == 0)
		return sec_section_of(json_object_get(r, "thread"));
	if (strcmp(method, "thread/list") == 0) {
		idv = json_array();
		names = json_array();
		entered = json_array();
		json_array_foreach(json_object_get(r, "data"), i, t)
		{
			json_t *sec = json_object_get(t, "section");

			json_array_append(idv, json_object_get(t, "id"));
			json_array_append(names,
				json_is_null(sec) ? json_null() : json_object_get(sec, "name"));
			json_array_append_new(entered,
				json_boolean(
					!json_is_null(json_object_get(t, "sectionEnteredAt"))));
		}
		return json_pack("{s:o,s:o,s:o,s:b}", "ids", idv, "sections", names, "entered",
			entered, "more", !json_is_null(json_object_get(r, "nextCursor")));
	}
	if (strcmp(method, "threadSection/list") == 0 ||
		strcmp(method, "thread/attachmentOwner/list") == 0)
		return json_pack("{s:O,s:b}", "data", json_object_get(r, "data"), "more",
			json_is_string(json_object_get(r, "nextCursor")));
	if (strcmp(method, "thread/attachment/add") == 0) {
		json_t *a = json_object_get(r, "attachment");
		const char *outcome = json_string_value(json_object_get(r, "outcome"));

		if (strcmp(outcome, "created") == 0)
			sec_bind(ids, 'A', json_string_value(json_object_get(a, "id")));
		return json_pack("{s:s,s:o}", "outcome", outcome, "attachment", sec_attachment(a));
	}
	if (strcmp(method, "thread/attachment/list") == 0) {
		idv = json_array();
		json_array_foreach(json_object_get(r, "data"), i, t)
			json_array_append_new(idv, sec_attachment(t));
		return json_pack("{s:o,s:b}", "data", idv, "more",
			json_is_string(json_object_get(r, "nextCursor")));
	}
	out = json_deep_copy(r);
	return out;
}

/*
 * The params of the thread/section/changed ("changed") and thread/attachment/updated
 * ("updated") notifications that came before a round trip (new reference).
 */
static json_t *
sec_notes(struct asc *c)
{
	json_t *out = json_pack("{s:[],s:[]}", "changed", "updated"), *m;

	asc_sync(c, asc_timeout(TH_MS));
	while ((m = asc_next(c, 0)) != NULL) {
		const char *meth = json_string_value(json_object_get(m, "method"));

		if (meth != NULL && strcmp(meth, "thread/section/changed") == 0)
			json_array_append(
				json_object_get(out, "changed"), json_object_get(m, "params"));
		if (meth != NULL && strcmp(meth, "thread/attachment/updated") == 0)
			json_array_append(
				json_object_get(out, "updated"), json_object_get(m, "params"));
		json_decref(m);
	}
	return out;
}

static void
sec_expect(const char *name, const char *what, const json_t *want, const json_t *got)
{
	if (!json_equal(want, got)) {
		char *w = json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY);
		char *g = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);

		fail_msg("step %s: %s\n  upstream: %s\n  ours:     %s", name, what, w, g);
	}
}

/* One recorded request: sent with our ids, its answer and notifications compared. */
static void
sec_step(struct th *t, struct sec_ids *ids, json_t *step, char **next)
{
	const char *name = json_string_value(json_object_get(step, "name"));
	const char *method = json_string_value(json_object_get(step, "method"));
	json_t *params = sec_fill(ids, json_object_get(step, "params"), *next), *msg, *got, *hidden;
	json_t *notes;
	const char *cursor;

	if (strcmp(method, "thread/start") == 0)
		json_object_set_new(params, "cwd", json_string(t->h.ws));
	msg = th_call(t->c, method, params);
	cursor = json_string_value(json_object_get(json_object_get(msg, "result"), "nextCursor"));
	free(*next);
	*next = cursor != NULL ? xstrdup(cursor) : NULL;
	got = sec_condense(ids, method, msg);
	hidden = sec_hide(ids, got);
	if (strcmp(method, "thread/start") == 0) {
		char ph[16];

		snprintf(ph, sizeof ph, "<T%d>", ids->nt - 1);
		json_object_set_new(hidden, "thread", json_string(ph));
	}
	sec_expect(name, "answer", json_object_get(step, "answer"), hidden);
	json_decref(got);
	json_decref(hidden);
	json_decref(msg);
	notes = sec_notes(t->c);
	hidden = sec_hide(ids, notes);
	sec_expect(name, "thread/section/changed", json_object_get(step, "changed"),
		json_object_get(hidden, "changed"));
	/* the sections' recording predates attachments: it has no "updated" */
	if (json_object_get(step, "updated") != NULL)
		sec_expect(name, "thread/attachment/updated", json_object_get(step, "updated"),
			json_object_get(hidden, "updated"));
	json_decref(hidden);
	json_decref(notes);
}

/* record.py's @fill: count attachments f000, f001, ... on a thread, their ids bound. */
static void
sec_fill_thread(struct th *t, struct sec_ids *ids, json_t *step)
{
	json_t *p = sec_fill(ids, json_object_get(step, "params"), NULL), *r;
	int count = (int)json_integer_value(json_object_get(p, "count"));

	for (int i = 0; i < count; i++) {
		char key[16];

		snprintf(key, sizeof key, "f%03d", i);
		r = th_call(t->c, "thread/attachment/add",
			json_pack("{s:O,s:s,s:s,s:i}", "threadId", json_object_get(p, "threadId"),
				"attachmentType", "f", "identityKey", key, "payload", i));
		sec_bind(ids, 'A',
			json_string_value(json_object_get(
				json_object_get(asc_assert_result(r), "attachment"), "id")));
		json_decref(r);
	}
	json_decref(sec_notes(t->c));
	json_decref(p);
}

/* Replay one recording on a fresh home. */
static void
sec_replay(const char *fixture)
{
	struct th t;
	struct sec_ids ids = {.real = json_object()};
	json_t *want = json_load_file(fixture, 0, NULL), *step;
	char *next = NULL;
	size_t i;

	assert_non_null(want);
	th_start(&t, 0);
	json_array_foreach(json_object_get(want, "steps"), i, step)
	{
		const char *method = json_string_value(json_object_get(step, "method"));

		if (strcmp(method, "@turn") == 0) {
			json_t *p = sec_fill(&ids, json_object_get(step, "params"), NULL);

			th_turn(&t, json_string_value(json_object_get(p, "threadId")), "hi");
			json_decref(p);
		} else if (strcmp(method, "@kill") == 0) {
			assert_int_equal(kill(asc_pid(t.c), SIGKILL), 0);
			asc_free_killed(t.c, SIGKILL);
			t.c = th_daemon(&t);
		} else if (strcmp(method, "@fill") == 0) {
			sec_fill_thread(&t, &ids, step);
		} else if (strcmp(method, "@restart") == 0) {
			asc_free(t.c);
			t.c = th_daemon(&t);
		} else {
			sec_step(&t, &ids, step, &next);
		}
	}
	free(next);
	json_decref(ids.real);
	json_decref(want);
	th_stop(&t);
}

static void
test_replay_upstream(void **state)
{
	(void)state;
	sec_replay(FIXTURE);
}

/* The attachments' recording: thread/attachment/add, list, remove, attachmentOwner/list. */
static void
test_replay_upstream_attachments(void **state)
{
	(void)state;
	sec_replay(ATTACHMENTS);
}

/* A result's member (borrowed), after asserting success. */
static json_t *
sec_result(json_t *msg, const char *key)
{
	return json_object_get(asc_assert_result(msg), key);
}

/*
 * Answered means on disk: 30 sections and 3 moves, each answered, then SIGKILL at once; the
 * next daemon on the home finds every one of them.
 */
static void
test_kill9_keeps_answered_writes(void **state)
{
	struct th t;
	char *thread[3], *section[30];
	json_t *r, *data;

	(void)state;
	th_start(&t, 0);
	for (int i = 0; i < 3; i++)
		thread[i] = th_new(&t, NULL);
	for (int i = 0; i < 30; i++) {
		char name[16];

		snprintf(name, sizeof name, "s%d", i);
		r = th_call(t.c, "threadSection/create", json_pack("{s:s}", "name", name));
		section[i] =
			xstrdup(json_string_value(json_object_get(sec_result(r, "section"), "id")));
		json_decref(r);
	}
	for (int i = 0; i < 3; i++) {
		r = th_call(t.c, "thread/section/move",
			json_pack(
				"{s:s,s:s}", "threadId", thread[i], "sectionId", section[29 - i]));
		asc_assert_result(r);
		json_decref(r);
	}
	assert_int_equal(kill(asc_pid(t.c), SIGKILL), 0);
	asc_free_killed(t.c, SIGKILL);
	t.c = th_daemon(&t);
	r = th_call(t.c, "threadSection/list", json_pack("{s:i}", "limit", 100));
	data = sec_result(r, "data");
	assert_int_equal(json_array_size(data), 31); /* Pinned and ours */
	for (int i = 0; i < 30; i++)
		assert_string_equal(json_string_value(json_object_get(
					    json_array_get(data, (size_t)i + 1), "id")),
			section[i]);
	json_decref(r);
	for (int i = 0; i < 3; i++) {
		r = th_call(t.c, "thread/read", json_pack("{s:s}", "threadId", thread[i]));
		assert_string_equal(
			json_string_value(json_object_get(
				json_object_get(sec_result(r, "thread"), "section"), "id")),
			section[29 - i]);
		json_decref(r);
		free(thread[i]);
	}
	for (int i = 0; i < 30; i++)
		free(section[i]);
	th_stop(&t);
}

/* Two WebSocket connections: a move or attachment by either is told to both (ws_sections.py). */
static void
test_changed_to_every_connection(void **state)
{
	struct wsd d = {0};
	char *ws, *o, *e, home_dir[] = "/tmp/test_sections_home.XXXXXX", *home_env[2] = {NULL};
	int st;

	(void)state;
	assert_non_null(mkdtemp(home_dir));
	home_env[0] = xasprintf("HOME=%s", home_dir);
	wst_start(&d, "ws://127.0.0.1:0", NULL, home_env);
	ws = xasprintf("%s/work", d.dir);
	assert_int_equal(mkdir(ws, 0700), 0);
	o = xasprintf("%s/sections.out", d.dir);
	e = xasprintf("%s/sections.err", d.dir);
	char *argv[] = {"python3", WS_SECTIONS, "--addr", d.url, "--workspace", ws, NULL};
	st = wst_wait(wst_spawn(argv, o, e, NULL), 60);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char *t = wst_slurp(e), *log = wst_slurp(d.err);

		fail_msg("ws_sections.py: status %d: %s\ndaemon: %s", st, t, log);
	}
	wst_stop(&d);
	nftw(home_dir, wst_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(home_env[0]);
	free(ws);
	free(o);
	free(e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_upstream),
		cmocka_unit_test(test_replay_upstream_attachments),
		cmocka_unit_test(test_kill9_keeps_answered_writes),
		cmocka_unit_test(test_changed_to_every_connection),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
