/*
 * A thread's permission profile and collaboration mode across a daemon restart, compared with
 * upstream 0.169 (tests/fixtures/resume_settings/upstream/<scenario>.json, recorded by
 * tests/fixtures/resume_settings/record.py; upstream is not needed here). Each scenario starts
 * a thread (thread/start's `permissions` or `sandbox`), runs turns that select a profile or a
 * collaboration mode (Plan, Plan with its own instructions and effort, back to Default), ends
 * the daemon, resumes the thread in a new one and runs one more turn. Compared with upstream's:
 * the thread/resume answer (sandbox, activePermissionProfile, collaborationMode, effort), the
 * collaboration-mode developer messages and the reasoning of every model request (the mode
 * stays, and its message is not sent again), and the newest turn_context's
 * active_permission_profile and collaboration_mode (what a later resume restores).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

#define FIXTURES "tests/fixtures/resume_settings/upstream/"

/* record.py's config.toml: profiles, default_permissions, no sandbox_mode. */
static const char rs_config[] = "model = \"mock-model\"\n"
				"model_provider = \"mock_provider\"\n"
				"approval_policy = \"never\"\n"
				"default_permissions = \"ro2\"\n"
				"[model_providers.mock_provider]\n"
				"name = \"Mock provider\"\n"
				"base_url = \"http://127.0.0.1:%d/v1\"\n"
				"wire_api = \"responses\"\n"
				"request_max_retries = 0\n"
				"stream_max_retries = 0\n"
				"[permissions.dev]\n"
				"description = \"Dev\"\n"
				"extends = \":workspace\"\n"
				"[permissions.dev.network]\n"
				"enabled = true\n"
				"[permissions.ro2]\n"
				"extends = \":read-only\"\n";

/* Assert two JSON values equal, showing both when not. */
static void
rs_equal(const char *name, const char *what, const json_t *want, const json_t *got)
{
	char *w, *g;

	if (json_equal(want, got))
		return;
	w = json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY);
	g = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
	fail_msg("%s: %s differs from upstream's:\n  upstream: %.3000s\n  ours:     %.3000s", name,
		what, w, g);
}

/* v with every occurrence of `from` in its text replaced by `to` (new reference). */
static json_t *
rs_scrub(const json_t *v, const char *from, const char *to)
{
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY), *at, *out;
	json_t *r;

	while ((at = strstr(text, from)) != NULL) {
		*at = '\0';
		out = xasprintf("%s%s%s", text, to, at + strlen(from));
		free(text);
		text = out;
	}
	r = json_loads(text, JSON_DECODE_ANY, NULL);
	free(text);
	assert_non_null(r);
	return r;
}

/* Replace the daemon's config.toml with record.py's and start a new daemon on it. */
static void
rs_reconfigure(struct tt *f)
{
	char *path = xasprintf("%s/config.toml", f->home);
	FILE *cf = fopen(path, "w");

	assert_non_null(cf);
	fprintf(cf, rs_config, f->mm.port);
	fclose(cf);
	free(path);
	asc_free(f->c);
	tt_respawn(f);
}

/* Run each turn/start param object of turns (borrowed) to its end. */
static void
rs_turns(struct tt *f, const json_t *turns)
{
	json_t *extra;
	size_t i;

	json_array_foreach(turns, i, extra)
	{
		json_decref(tt_turn(f, "hi", json_deep_copy(extra), NULL, NULL));
	}
}

/* A request body as record.py sums it up: collaboration-mode developer texts, reasoning. */
static json_t *
rs_request(const json_t *body)
{
	json_t *dev = json_array(), *it, *c;
	const char *text;
	size_t i, j;

	json_array_foreach(json_object_get(body, "input"), i, it)
	{
		if (strcmp(json_string_value(json_object_get(it, "role")) ?: "", "developer") != 0)
			continue;
		json_array_foreach(json_object_get(it, "content"), j, c)
		{
			text = json_string_value(json_object_get(c, "text"));
			if (text != NULL && strncmp(text, "<collaboration_mode>", 20) == 0)
				json_array_append_new(dev, json_string(text));
		}
	}
	return json_pack("{s:o, s:O}", "collab", dev, "reasoning",
		json_object_get(body, "reasoning") ?: json_null());
}

/* The newest turn_context payload of a rollout (new reference). */
static json_t *
rs_last_context(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	json_t *last = NULL, *r;

	assert_non_null(fp);
	while (getline(&line, &cap, fp) > 0) {
		r = json_loads(line, 0, NULL);
		if (r != NULL &&
			strcmp(json_string_value(json_object_get(r, "type")) ?: "",
				"turn_context") == 0) {
			json_decref(last);
			last = json_incref(json_object_get(r, "payload"));
		}
		json_decref(r);
	}
	free(line);
	fclose(fp);
	assert_non_null(last);
	return last;
}

/* Replay one recorded scenario on our daemon and compare. */
static void
rs_run(const char *name)
{
	char *path = xasprintf(FIXTURES "%s.json", name), *rollout;
	json_t *want = json_load_file(path, 0, NULL), *sc, *params, *m, *res, *got, *recs, *reqs;
	json_t *wreqs, *wctx, *ctx;
	struct tt_opts o = {0};
	struct tt f;
	size_t i;

	if (want == NULL)
		fail_msg("no fixture %s", path);
	sc = json_object_get(want, "scenario");
	o.script = "{\"responses\":[{\"events\":[{\"ev\":\"created\",\"id\":\"resp\"},{\"ev\":"
		   "\"message\",\"id\":\"m\",\"text\":\"done\"},{\"ev\":\"completed\",\"id\":"
		   "\"resp\"}]}],\"repeat\":true}";
	o.experimental = 1;
	tt_start(&f, &o);
	rs_reconfigure(&f);

	params = json_deep_copy(json_object_get(sc, "thread"));
	json_object_set_new(params, "cwd", json_string(f.workspace));
	m = tt_call(&f, "thread/start", params);
	res = asc_assert_result(m);
	free(f.thread_id);
	f.thread_id =
		xstrdup(json_string_value(json_object_get(json_object_get(res, "thread"), "id")));
	json_decref(m);
	rs_turns(&f, json_object_get(sc, "before"));

	/* a new daemon: the thread comes back from its rollout */
	asc_free(f.c);
	tt_respawn(&f);
	params = json_deep_copy(json_object_get(sc, "resume"));
	json_object_set_new(params, "threadId", json_string(f.thread_id));
	m = tt_call(&f, "thread/resume", params);
	res = json_deep_copy(asc_assert_result(m));
	json_decref(m);
	rollout =
		xstrdup(json_string_value(json_object_get(json_object_get(res, "thread"), "path")));
	json_object_del(res, "thread");
	got = rs_scrub(res, f.workspace, "$WORKSPACE");
	rs_equal(name, "the thread/resume answer", json_object_get(want, "resume"), got);
	json_decref(got);
	json_decref(res);
	rs_turns(&f, json_object_get(sc, "after"));

	/* every model request: the mode's messages (once each) and the reasoning */
	recs = mm_records(&f.mm);
	wreqs = json_object_get(want, "requests");
	reqs = json_array();
	json_array_foreach(recs, i, m)
	{
		if (strcmp(json_string_value(json_object_get(m, "method")) ?: "", "POST") == 0)
			json_array_append_new(reqs, rs_request(json_object_get(m, "body")));
	}
	assert_int_equal(json_array_size(reqs), json_array_size(wreqs));
	for (i = 0; i < json_array_size(wreqs); i++) {
		json_t *w = json_array_get(wreqs, i), *wr = json_array(), *d;
		size_t j;

		json_array_foreach(json_object_get(w, "developer"), j, d)
		{
			if (strncmp(json_string_value(d), "<collaboration_mode>", 20) == 0)
				json_array_append(wr, d);
		}
		got = json_pack(
			"{s:o, s:O}", "collab", wr, "reasoning", json_object_get(w, "reasoning"));
		rs_equal(name, "a model request", got, json_array_get(reqs, i));
		json_decref(got);
	}
	json_decref(reqs);
	json_decref(recs);

	/* what a later resume reads: the newest turn_context's profile and mode */
	wctx = json_object_get(json_array_get(json_object_get(want, "records"),
				       json_array_size(json_object_get(want, "records")) - 1),
		"payload");
	ctx = rs_last_context(rollout);
	got = rs_scrub(ctx, f.workspace, "$WORKSPACE");
	rs_equal(name, "the last turn_context's active_permission_profile",
		json_object_get(wctx, "active_permission_profile"),
		json_object_get(got, "active_permission_profile"));
	rs_equal(name, "the last turn_context's collaboration_mode",
		json_object_get(wctx, "collaboration_mode"),
		json_object_get(got, "collaboration_mode"));
	json_decref(got);
	json_decref(ctx);
	free(rollout);
	tt_stop(&f);
	json_decref(want);
	free(path);
}

/* thread/start {permissions: "dev"}, a Plan turn: both back after the restart. */
static void
test_thread_profile(void **state)
{
	(void)state;
	rs_run("threadprofile");
}

/* turn/start {permissions: ":workspace", Plan with its own instructions and effort}. */
static void
test_turn_profile(void **state)
{
	(void)state;
	rs_run("turnprofile");
}

/* Plan, then Default with another profile: the newest settings come back. */
static void
test_back_to_default(void **state)
{
	(void)state;
	rs_run("backtodefault");
}

/* No mode ever selected: the Default mode with no instructions, default_permissions. */
static void
test_plain(void **state)
{
	(void)state;
	rs_run("plain");
}

/* A thread of a legacy sandbox mode resumes under default_permissions, as upstream's. */
static void
test_sandbox_mode(void **state)
{
	(void)state;
	rs_run("sandboxmode");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_thread_profile),
		cmocka_unit_test(test_turn_profile),
		cmocka_unit_test(test_back_to_default),
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_sandbox_mode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
