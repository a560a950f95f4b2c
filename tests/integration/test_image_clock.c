/*
 * view_image and the clock tools against the real daemon, replaying upstream 0.169's
 * recordings (tests/fixtures/image_clock/upstream/, record.py): the mock model calls
 * view_image (directly as the custom model's tool, or as tools.view_image in an exec cell of
 * a code-mode model) on the recorder's files (files/), clock.sleep beside exec (steered and
 * interrupted as recorded) and tools.clock__curr_time in a cell; what the model gets back must
 * be upstream's (wall times normalised), as must the imageView and sleep items the client
 * sees. Where we differ on purpose (upstream re-encodes a GIF as PNG and shrinks an image past
 * 2048 pixels, we pass the file as it is; upstream leaves an interrupted sleep's item started,
 * we complete it: docs/agent_tools.md) the test checks our form instead.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/codemode/codemode_host.h"
#include "harness.h"
#include "protocol/base64.h"
#include "protocol/xmalloc.h"
#include "tests/helpers/skip_note.h"
#include "turn_util.h"

#define VI_DIR "tests/fixtures/image_clock/"

/* A file's bytes (heap, *n its length). */
static char *
vi_slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *b = xmalloc(1u << 20);

	assert_non_null(f);
	*n = fread(b, 1, 1u << 20, f);
	fclose(f);
	return b;
}

/* Copy a fixture file to dir/name (folders made). */
static void
vi_put(const char *dir, const char *name, const char *from)
{
	char *src = xasprintf(VI_DIR "files/%s", from), *dst = xasprintf("%s/%s", dir, name);
	char *sub = xasprintf("%s/sub", dir), *b;
	size_t n;
	FILE *f;

	mkdir(dir, 0700);
	mkdir(sub, 0700);
	b = vi_slurp(src, &n);
	f = fopen(dst, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
	free(b);
	free(src);
	free(dst);
	free(sub);
}

/* The mock's script: each step's call item (call-N, placeholders filled), then a message. */
static char *
vi_script(const json_t *steps, const char *d)
{
	json_t *items = json_array(), *st, *item;
	char id[32], *text, *ws = xasprintf("%s/ws", d);
	size_t i;

	json_array_foreach(steps, i, st)
	{
		item = json_deep_copy(json_object_get(st, "call") ?: st);
		snprintf(id, sizeof id, "call-%zu", i + 1);
		json_object_set_new(item, "call_id", json_string(id));
		json_array_append_new(items, item);
	}
	text = tt_calls_script(items);
	text = tt_replace(text, "@WS@", ws);
	text = tt_replace(text, "@D@", d);
	free(ws);
	return text;
}

/* Every number after marker in s as "N" (s freed, heap). */
static char *
vi_wall(char *s, const char *marker)
{
	size_t m = strlen(marker);

	for (char *w = strstr(s, marker); w != NULL; w = strstr(w + 1, marker)) {
		size_t n = strspn(w + m, "0123456789.N");
		char *out = xasprintf("%.*sN%s", (int)(w + m - s), s, w + m + n);

		w = out + (w - s);
		free(s);
		s = out;
	}
	return s;
}

/* A "YYYY-MM-DD HH:MM:SS UTC" time in s as those letters, as record.py keeps it (s freed). */
static char *
vi_clock(char *s)
{
	static const char pat[] = "dddd-dd-dd dd:dd:dd";

	for (char *p = strstr(s, " UTC"); p != NULL; p = strstr(p + 1, " UTC")) {
		int ok = p - s >= 19;

		for (int i = 0; ok && i < 19; i++)
			ok = pat[i] == 'd' ? (p[i - 19] >= '0' && p[i - 19] <= '9')
					   : p[i - 19] == pat[i];
		if (ok)
			memcpy(p - 19, "YYYY-MM-DD HH:MM:SS", 19);
	}
	return s;
}

/* A value as the fixtures keep it: no ids, our paths as the recorder's placeholders. */
static json_t *
vi_norm(const json_t *v, const struct tt *f, const char *d)
{
	json_t *copy = json_deep_copy(v), *back;
	char *s;

	if (json_is_object(copy))
		json_object_del(copy, "id");
	s = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	json_decref(copy);
	s = tt_replace(s, f->workspace, "@D@/ws");
	s = tt_replace(s, d, "@D@");
	s = vi_wall(s, "Wall time ");
	s = vi_wall(s, "Wall time: ");
	s = vi_wall(s, "aborted by user after ");
	s = vi_clock(s);
	back = json_loads(s, JSON_DECODE_ANY, NULL);
	free(s);
	return back;
}

struct vi_run {
	struct tt f;
	char d[64];
	json_t *fx, *msgs, *outs; /* outs: per step, the normalised output items */
};

/* The fixture's action ("steer", "interrupt") or NULL. */
static const char *
vi_action(const json_t *fx)
{
	json_t *st;
	size_t i;

	json_array_foreach(json_object_get(fx, "steps"), i, st)
	{
		if (json_is_string(json_object_get(st, "action")))
			return json_string_value(json_object_get(st, "action"));
	}
	return NULL;
}

/* Start the turn, steer or interrupt it during its sleep, collect the rest. */
static json_t *
vi_act(struct tt *f, const char *action)
{
	json_t *r, *msgs;
	char *turn;

	r = tt_call(f, "turn/start",
		json_pack("{s:s, s:o}", "threadId", f->thread_id, "input", tt_text("hi")));
	turn = xstrdup(json_string_value(
		json_object_get(json_object_get(asc_assert_result(r), "turn"), "id")));
	json_decref(r);
	usleep(800000); /* the sleep runs now (20 s); its item stays queued for tt_collect */
	if (strcmp(action, "steer") == 0)
		r = tt_call(f, "turn/steer",
			json_pack("{s:s, s:s, s:o}", "threadId", f->thread_id, "expectedTurnId",
				turn, "input", tt_text("wake up")));
	else
		r = tt_call(f, "turn/interrupt",
			json_pack("{s:s, s:s}", "threadId", f->thread_id, "turnId", turn));
	asc_assert_result(r);
	json_decref(r);
	msgs = tt_collect(f, NULL, NULL);
	if (strcmp(action, "interrupt") == 0) { /* the next turn: what the model heard (recorded) */
		r = tt_turn(f, "again", NULL, NULL, NULL);
		json_array_extend(msgs, r);
		json_decref(r);
	}
	free(turn);
	return msgs;
}

/* Play a recorded scenario; the caller compares and calls vi_end. */
static void
vi_play(struct vi_run *r, const char *name)
{
	char *path = xasprintf(VI_DIR "upstream/%s.json", name), *script, id[32];
	static const char *const cm_args[] = {"-c", "model=gpt-6.1-sol", NULL};
	struct tt_opts o = {0};
	json_t *recs, *body, *it, *one;
	size_t i, k;

	r->fx = json_load_file(path, 0, NULL);
	assert_non_null(r->fx);
	free(path);
	snprintf(r->d, sizeof r->d, "/tmp/test_vi.XXXXXX");
	assert_non_null(mkdtemp(r->d));
	/* what absolute paths name: the recorder's folder and its ws/ */
	path = xasprintf("%s/ws", r->d);
	vi_put(path, "sub/tiny.gif", "sub/tiny.gif");
	vi_put(r->d, "outside.png", "outside.png");
	free(path);
	script = vi_script(json_object_get(r->fx, "steps"), r->d);
	o.script = script;
	o.sandbox = "workspace-write";
	if (strcmp(json_string_value(json_object_get(r->fx, "mode")), "cm") == 0)
		o.args = cm_args;
	tt_start(&r->f, &o);
	vi_put(r->f.workspace, "img.png", "img.png");
	vi_put(r->f.workspace, "sub/tiny.gif", "sub/tiny.gif");
	vi_put(r->f.workspace, "notes.txt", "notes.txt");
	vi_put(r->f.workspace, "fake.png", "fake.png");
	vi_put(r->f.workspace, "wide.png", "wide.png");
	r->msgs = vi_action(r->fx) != NULL ? vi_act(&r->f, vi_action(r->fx))
					   : tt_turn(&r->f, "hi", NULL, NULL, NULL);
	recs = mm_records(&r->f.mm);
	r->outs = json_array();
	for (k = 0; k < json_array_size(json_object_get(r->fx, "steps")); k++) {
		body = k + 1 < json_array_size(recs) ? tt_request_body(recs, k + 1) : NULL;
		snprintf(id, sizeof id, "call-%zu", k + 1);
		one = json_array();
		json_array_foreach(json_object_get(body, "input"), i, it)
		{
			const char *type = json_string_value(json_object_get(it, "type")) ?: "";

			if (strlen(type) > 7 && strcmp(type + strlen(type) - 7, "_output") == 0 &&
				strcmp(json_string_value(json_object_get(it, "call_id")) ?: "",
					id) == 0)
				json_array_append_new(one, vi_norm(it, &r->f, r->d));
		}
		if (body != NULL)
			json_array_append_new(r->outs, one);
		else
			json_decref(one); /* no request after it (an interrupt), as upstream's */
	}
	json_decref(recs);
	free(script);
}

static int
vi_rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void
vi_end(struct vi_run *r)
{
	json_decref(r->fx);
	json_decref(r->msgs);
	json_decref(r->outs);
	tt_stop(&r->f);
	nftw(r->d, vi_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* The imageView and sleep items of the turn as the fixture keeps them (started, completed). */
static json_t *
vi_items(const json_t *msgs, const struct tt *f, const char *d, int from_fixture)
{
	json_t *out = json_array(), *m, *it;
	size_t i;

	json_array_foreach(msgs, i, m)
	{
		const char *meth = json_string_value(json_object_get(m, "method"));
		json_t *keep;

		if (from_fixture) {
			it = json_object_get(m, "item/started")
				?: json_object_get(m, "item/completed");
			meth = json_object_get(m, "item/started") != NULL ? "item/started"
									  : "item/completed";
		} else if (meth != NULL &&
			(strcmp(meth, "item/started") == 0 || strcmp(meth, "item/completed") == 0))
			it = json_object_get(json_object_get(m, "params"), "item");
		else
			continue;
		if (!json_is_object(it) ||
			(strcmp(json_string_value(json_object_get(it, "type")) ?: "",
				 "imageView") != 0 &&
				strcmp(json_string_value(json_object_get(it, "type")) ?: "",
					"sleep") != 0))
			continue;
		keep = from_fixture ? json_deep_copy(it) : vi_norm(it, f, d);
		json_object_del(keep, "startedAtMs");
		json_object_del(keep, "completedAtMs");
		json_array_append_new(out, json_pack("{s:o}", meth, keep));
	}
	return out;
}

/* Upstream's outputs and imageView items, compared with ours. */
static void
vi_same(const char *name)
{
	struct vi_run r;
	json_t *want, *got;

	vi_play(&r, name);
	want = json_array();
	for (size_t k = 0; k < json_array_size(json_object_get(r.fx, "model_saw")); k++) {
		json_t *one = json_array(), *it;
		size_t i;

		json_array_foreach(json_array_get(json_object_get(r.fx, "model_saw"), k), i, it)
			json_array_append_new(one, vi_norm(it, &r.f, r.d));
		json_array_append_new(want, one);
	}
	tt_assert_upstream(name, want, r.outs);
	json_decref(want);
	want = vi_items(json_object_get(r.fx, "client"), NULL, NULL, 1);
	got = vi_items(r.msgs, &r.f, r.d, 0);
	if (vi_action(r.fx) != NULL && strcmp(vi_action(r.fx), "interrupt") == 0) {
		/* ours completes the sleep item before turn/completed; upstream leaves it */
		assert_int_equal(json_array_size(got), 2);
		assert_non_null(json_object_get(json_array_get(got, 1), "item/completed"));
		json_array_remove(got, 1);
	}
	tt_assert_upstream(name, want, got);
	json_decref(want);
	json_decref(got);
	want = json_object_get(json_array_get(json_object_get(r.fx, "client"),
				       json_array_size(json_object_get(r.fx, "client")) - 1),
		"turn/completed");
	got = NULL; /* the last turn's end, as the fixture's last */
	for (size_t i = 0; i < json_array_size(r.msgs); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(r.msgs, i), "method"))
				    ?: "",
			    "turn/completed") == 0)
			got = json_object_get(
				json_object_get(json_array_get(r.msgs, i), "params"), "turn");
	assert_non_null(got);
	assert_string_equal(
		json_string_value(json_object_get(got, "status")), json_string_value(want));
	vi_end(&r);
}

#define SAME(n)                                                                                    \
	static void test_##n(void **state)                                                         \
	{                                                                                          \
		(void)state;                                                                       \
		vi_same(#n);                                                                       \
	}
SAME(vi_png)
SAME(vi_missing)
SAME(vi_dir)
SAME(vi_text)
SAME(vi_fake)
SAME(vi_badargs)
SAME(vi_outside)

/* Code mode: only where node runs the cells. */
static void
vi_cm(const char *name)
{
	char *p = codemode_node_path(getenv("PATH"));

	if (p == NULL) {
		skip_test("node is not on PATH: code mode is not offered");
		return;
	}
	free(p);
	vi_same(name);
}

static void
test_cm_vi_png(void **state)
{
	(void)state;
	vi_cm("cm_vi_png");
}

static void
test_cm_vi_missing(void **state)
{
	(void)state;
	vi_cm("cm_vi_missing");
}

static void
vi_cm_case(void **state)
{
	vi_cm(*(const char *const *)*state);
}

/* The thread's history keeps the imageView item (its rollout's item_completed, the path a
 * file:// URL there as upstream writes it) and the sleep item, as the client saw them. */
static void
test_items_read_back(void **state)
{
	static const char *const names[] = {"vi_png", "cm_sleep"};
	struct vi_run r;
	json_t *res, *turns, *items, *it = NULL, *want;
	char *path;
	size_t i;

	(void)state;
	for (size_t n = 0; n < 2; n++) {
		if (n == 1 && (path = codemode_node_path(getenv("PATH"))) == NULL)
			break; /* cm_sleep needs code mode */
		if (n == 1)
			free(path);
		vi_play(&r, names[n]);
		want = tt_item(r.msgs, n == 0 ? "imageView" : "sleep", 0);
		assert_non_null(want);
		res = tt_call(&r.f, "thread/read",
			json_pack("{s:s, s:b}", "threadId", r.f.thread_id, "includeTurns", 1));
		turns = json_object_get(json_object_get(asc_assert_result(res), "thread"), "turns");
		items = json_object_get(json_array_get(turns, 0), "items");
		json_array_foreach(items, i, it)
		{
			if (strcmp(json_string_value(json_object_get(it, "type")),
				    n == 0 ? "imageView" : "sleep") == 0)
				break;
		}
		assert_true(i < json_array_size(items));
		it = json_deep_copy(it);
		json_object_del(it, "startedAtMs");
		json_object_del(it, "completedAtMs");
		want = json_deep_copy(want);
		json_object_del(want, "startedAtMs");
		json_object_del(want, "completedAtMs");
		tt_assert_upstream(names[n], want, it);
		{ /* the rollout holds upstream's core items (recorded): ImageView with a file://
		   * URL, the sleep as an extension item */
			char *text = tt_read(json_string_value(json_object_get(
				json_object_get(asc_assert_result(res), "thread"), "path")));
			char *core = n == 0
				? xasprintf("\"type\":\"ImageView\",\"id\":\"call-1\","
					    "\"path\":\"file://%s/img.png\"",
					  r.f.workspace)
				: xstrdup("{\"type\":\"Extension\",\"kind\":\"clock.sleep\","
					  "\"id\":\"call-1\",\"durationMs\":300}");

			assert_non_null(text);
			if (strstr(text, core) == NULL)
				fail_msg("no %s in the rollout: %.300s", core,
					strstr(text, "ImageView") ?: "(none)");
			free(core);
			free(text);
		}
		json_decref(it);
		json_decref(want);
		json_decref(res);
		vi_end(&r);
	}
}

/* The file's own bytes and type as a data URL (heap). */
static char *
vi_url(const char *mime, const char *file)
{
	char *path = xasprintf(VI_DIR "files/%s", file), *b, *enc, *url;
	size_t n;

	b = vi_slurp(path, &n);
	enc = xcalloc(1, base64_encoded_len(n) + 1);
	base64_encode(b, n, enc);
	url = xasprintf("data:%s;base64,%s", mime, enc);
	free(enc);
	free(b);
	free(path);
	return url;
}

/* Ours where upstream converts: a GIF (upstream: PNG) and a 3000x100 PNG (upstream: 2048x68)
 * go to the model as the files are. */
static void
vi_as_is(const char *name, const char *mime, const char *file)
{
	struct vi_run r;
	json_t *want;
	char *url = vi_url(mime, file);

	vi_play(&r, name);
	want = json_pack("[[{s:s, s:s, s:[{s:s, s:s, s:s}]}]]", "type", "function_call_output",
		"call_id", "call-1", "output", "type", "input_image", "image_url", url, "detail",
		"high");
	tt_assert_upstream(name, want, r.outs);
	assert_non_null(tt_item(r.msgs, "imageView", 0));
	json_decref(want);
	free(url);
	vi_end(&r);
}

static void
test_vi_abs(void **state)
{
	(void)state;
	vi_as_is("vi_abs", "image/gif", "sub/tiny.gif");
}

static void
test_vi_wide(void **state)
{
	(void)state;
	vi_as_is("vi_wide", "image/png", "wide.png");
}

/* The clock's recordings: sleep beside exec (done, out of bounds, bad arguments, steered,
 * interrupted, without its namespace), nested (not on `tools`), and clock__curr_time. */
static const char *const clock_cases[] = {"cm_sleep", "cm_sleep_zero", "cm_sleep_over",
	"cm_sleep_frac", "cm_sleep_bad", "cm_sleep_steer", "cm_sleep_interrupt", "cm_sleep_plain",
	"cm_sleep_in_exec", "cm_curr_time"};

/* A custom model is not offered the clock: upstream's "unsupported call: clocksleep". */
static void
test_direct_sleep(void **state)
{
	(void)state;
	vi_same("direct_sleep");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vi_png),
		cmocka_unit_test(test_vi_missing),
		cmocka_unit_test(test_vi_dir),
		cmocka_unit_test(test_vi_text),
		cmocka_unit_test(test_vi_fake),
		cmocka_unit_test(test_vi_badargs),
		cmocka_unit_test(test_vi_outside),
		cmocka_unit_test(test_vi_abs),
		cmocka_unit_test(test_vi_wide),
		cmocka_unit_test(test_cm_vi_png),
		cmocka_unit_test(test_cm_vi_missing),
		cmocka_unit_test_prestate(vi_cm_case, (void *)&clock_cases[0]),
		cmocka_unit_test_prestate(vi_cm_case, (void *)&clock_cases[1]),
		cmocka_unit_test_prestate(vi_cm_case, (void *)&clock_cases[2]),
		cmocka_unit_test_prestate(vi_cm_case, (void *)&clock_cases[3]),
		cmocka_unit_test_prestate(vi_cm_case, (void *)&clock_cases[4]),
		cmocka_unit_test_prestate(vi_cm_case, (void *)&clock_cases[5]),
		cmocka_unit_test_prestate(vi_cm_case, (void *)&clock_cases[6]),
		cmocka_unit_test_prestate(vi_cm_case, (void *)&clock_cases[7]),
		cmocka_unit_test_prestate(vi_cm_case, (void *)&clock_cases[8]),
		cmocka_unit_test_prestate(vi_cm_case, (void *)&clock_cases[9]),
		cmocka_unit_test(test_direct_sleep),
		cmocka_unit_test(test_items_read_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
