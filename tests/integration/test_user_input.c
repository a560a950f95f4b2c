/*
 * request_user_input and item/tool/requestUserInput end to end, compared with upstream 0.169
 * (tests/fixtures/user_input/upstream/<scenario>.json, recorded by
 * tests/fixtures/user_input/record.py; upstream is not needed here). Each fixture holds its
 * scenario (the mock's script, each turn's collaborationMode, how each request is answered)
 * and what upstream did: the turns' notifications and server requests in order with the
 * thread status flags, the requests' params, the outputs the model got, and the tool it was
 * offered in every request. Also what the recordings cannot show: a late answer after an
 * interrupt is ignored, and a client gone while a question waits ends the daemon cleanly.
 * Every message is checked against the experimental schema by the harness, and tt_collect
 * asserts every server request is resolved and turn/completed comes once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/wait.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "protocol/xmalloc.h"
#include "turn_util.h"

#define FIXTURES "tests/fixtures/user_input/upstream/"

struct ui_state {
	struct tt *f;
	json_t *answers;  /* the scenario's, in order */
	size_t n;	  /* requests seen */
	json_t *requests; /* their params, threadId and turnId checked then dropped */
	json_t *last_req; /* the last request (for a late answer) */
	const char *turn_id;
};

/* How the scenario answers item/tool/requestUserInput. */
static json_t *
ui_answer(void *arg, const json_t *req)
{
	struct ui_state *s = arg;
	json_t *a = json_array_get(s->answers, s->n++), *p = json_object_get(req, "params");
	const char *text = json_string_value(a);

	assert_string_equal(
		json_string_value(json_object_get(req, "method")), "item/tool/requestUserInput");
	assert_string_equal(json_string_value(json_object_get(p, "threadId")), s->f->thread_id);
	assert_string_equal(json_string_value(json_object_get(p, "turnId")), s->turn_id);
	p = json_deep_copy(p);
	json_object_del(p, "threadId");
	json_object_del(p, "turnId");
	json_array_append_new(s->requests, p);
	json_decref(s->last_req);
	s->last_req = json_incref((json_t *)req);
	if (text != NULL && strcmp(text, "error") == 0)
		return NULL;
	if (text != NULL && strcmp(text, "interrupt") == 0) {
		asc_request(s->f->c, "turn/interrupt",
			json_pack("{s:s, s:s}", "threadId", s->f->thread_id, "turnId", s->turn_id));
		return TT_NO_ANSWER;
	}
	assert_non_null(a);
	return json_deep_copy(a);
}

/* tt_assert_upstream with the scenario's name in front. */
static void
ui_equal(const char *name, const char *what, const json_t *want, const json_t *got)
{
	char *label = xasprintf("%s: %s", name, what);

	tt_assert_upstream(label, want, got);
	free(label);
}

/* Whether text starts with prefix. */
static int
ui_starts(const char *text, const char *prefix)
{
	return strncmp(text, prefix, strlen(prefix)) == 0;
}

/*
 * An output as the model reads it: JSON answers compared as values (upstream's map order is a
 * HashMap's) and compact as serde writes them; an interrupt's duration is upstream's own; a
 * JSON syntax error in the parser's own words (serde's upstream); other texts byte for byte.
 */
static void
ui_output_equal(const char *name, const char *want, const char *got)
{
	static const char aborted[] = "aborted by user after ",
			  parse[] = "failed to parse function arguments: ";
	json_t *w = json_loads(want, 0, NULL), *g = json_loads(got, 0, NULL);

	if (ui_starts(want, aborted)) {
		if (!ui_starts(got, aborted) || got[strlen(got) - 1] != 's')
			fail_msg("%s: the model got %s, upstream's %s", name, got, want);
	} else if (ui_starts(want, parse) && strstr(want, "missing field") == NULL) {
		if (!ui_starts(got, parse))
			fail_msg("%s: the model got %s, upstream's %s", name, got, want);
	} else if (w != NULL && g != NULL) {
		char *compact = json_dumps(g, JSON_COMPACT);

		ui_equal(name, "the output the model got", w, g);
		assert_string_equal(got, compact);
		free(compact);
	} else
		assert_string_equal(got, want);
	json_decref(w);
	json_decref(g);
}

/* How many function_call_output items a body holds. */
static size_t
ui_count_outputs(const json_t *body)
{
	json_t *it;
	size_t i, n = 0;

	json_array_foreach(json_object_get(body, "input"), i, it) n +=
		strcmp(json_string_value(json_object_get(it, "type")) ?: "",
			"function_call_output") == 0;
	return n;
}

/* Replay one recorded scenario on our daemon and compare. */
static void
ui_run(const char *name)
{
	char *path = xasprintf(FIXTURES "%s.json", name), *script;
	json_t *want = json_load_file(path, 0, NULL), *seq = json_array(), *msgs, *cm, *recs;
	json_t *body, *wo, *tool, *tools;
	struct tt_opts o = {0};
	struct ui_state s = {0};
	struct tt f;
	size_t i, j;

	if (want == NULL)
		fail_msg("no fixture %s", path);
	script = json_dumps(json_object_get(want, "script"), JSON_COMPACT);
	o.script = script;
	o.experimental = 1;
	tt_start(&f, &o);
	s.f = &f;
	s.answers = json_object_get(want, "answers");
	s.requests = json_array();
	json_array_foreach(json_object_get(want, "turns"), i, cm)
	{
		json_t *params = json_object(), *r;
		long long id;

		if (!json_is_null(cm))
			json_object_set(params, "collaborationMode", cm);
		json_object_set_new(params, "threadId", json_string(f.thread_id));
		json_object_set_new(params, "input", tt_text("hi"));
		id = asc_request(f.c, "turn/start", params);
		r = asc_wait_response(f.c, id, asc_timeout(5000));
		s.turn_id = json_string_value(
			json_object_get(json_object_get(asc_assert_result(r), "turn"), "id"));
		msgs = tt_collect(&f, ui_answer, &s);
		tt_sequence(seq, msgs);
		json_decref(msgs);
		json_decref(r);
		s.turn_id = NULL;
	}
	ui_equal(name, "the sequence", json_object_get(want, "sequence"), seq);
	ui_equal(name, "the requests' params", json_object_get(want, "requests"), s.requests);
	recs = mm_records(&f.mm);
	body = tt_request_body(recs, json_array_size(recs) - 1);
	wo = json_object_get(want, "outputs");
	assert_int_equal(json_array_size(wo), ui_count_outputs(body));
	json_array_foreach(wo, i, cm)
	{
		const char *cid = json_string_value(json_object_get(cm, "call_id"));
		const char *got = tt_call_output(body, cid);

		if (got == NULL)
			fail_msg("%s: no output for %s", name, cid);
		ui_output_equal(name, json_string_value(json_object_get(cm, "output")), got);
	}
	/* request_user_input offered in every request, in every mode, as upstream's */
	tools = json_object_get(want, "tools");
	assert_int_equal(json_array_size(tools), json_array_size(recs));
	json_array_foreach(recs, i, body)
	{
		json_t *mine = json_array();

		json_array_foreach(json_object_get(tt_request_body(recs, i), "tools"), j, tool)
		{
			if (strcmp(json_string_value(json_object_get(tool, "name")) ?: "",
				    "request_user_input") == 0)
				json_array_append(mine, tool);
		}
		ui_equal(name, "the tool offered", json_array_get(tools, i), mine);
		json_decref(mine);
	}
	if (s.last_req != NULL && strcmp(name, "interrupt") == 0) {
		/* A late answer: ignored, nothing more is reported. */
		tt_late_answer(&f, s.last_req, "{\"answers\":{}}");
	}
	json_decref(recs);
	json_decref(s.requests);
	json_decref(s.last_req);
	json_decref(seq);
	json_decref(want);
	tt_stop(&f);
	free(script);
	free(path);
}

#define UI_CASE(n)                                                                                 \
	static void test_##n(void **state)                                                         \
	{                                                                                          \
		(void)state;                                                                       \
		ui_run(#n);                                                                        \
	}

UI_CASE(answer)		/* Plan mode: the flag, the request, resolved, the answers as JSON */
UI_CASE(two)		/* two questions, several answers to one */
UI_CASE(twocalls)	/* two calls of one response: asked one after the other */
UI_CASE(empty)		/* {"answers":{}} */
UI_CASE(error)		/* a JSON-RPC error answer: {"answers":{}} */
UI_CASE(badanswer)	/* an answer not of the schema: {"answers":{}} */
UI_CASE(secret)		/* the model's isSecret kept, isOther forced, unknown members dropped */
UI_CASE(interrupt)	/* resolved after turn/completed; "aborted by user" next turn */
UI_CASE(default)	/* no collaborationMode: refused, no request */
UI_CASE(defaultmode)	/* Default mode: refused */
UI_CASE(sticky)		/* Plan mode kept by a later turn that names none */
UI_CASE(backtodefault)	/* Plan, then Default: refused again */
UI_CASE(nooptions)	/* a question without options: refused */
UI_CASE(emptyoptions)	/* options [] likewise */
UI_CASE(badargs)	/* arguments that are not JSON */
UI_CASE(defaultbadargs) /* the mode is checked before the arguments */
UI_CASE(noquestions)	/* missing field `questions` at serde's position */

/* The client goes away while a question waits: the daemon ends, cleanly and promptly. */
static void
test_client_gone_while_asking(void **state)
{
	char *path = xasprintf(FIXTURES "answer.json"), *script;
	json_t *want = json_load_file(path, 0, NULL), *params, *r, *m;
	struct tt_opts o = {0};
	struct tt f;
	int status = -1;

	(void)state;
	assert_non_null(want);
	script = json_dumps(json_object_get(want, "script"), JSON_COMPACT);
	o.script = script;
	o.experimental = 1;
	tt_start(&f, &o);
	params = json_pack("{s:s, s:o, s:O}", "threadId", f.thread_id, "input", tt_text("hi"),
		"collaborationMode", json_array_get(json_object_get(want, "turns"), 0));
	r = asc_wait_response(f.c, asc_request(f.c, "turn/start", params), asc_timeout(5000));
	asc_assert_result(r);
	json_decref(r);
	while ((m = asc_next(f.c, asc_timeout(10000))) != NULL &&
		strcmp(json_string_value(json_object_get(m, "method")) ?: "",
			"item/tool/requestUserInput") != 0)
		json_decref(m);
	assert_non_null(m);
	json_decref(m);
	asc_close_stdin(f.c);
	assert_int_equal(asc_wait_exit(f.c, asc_timeout(5000), &status), 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	json_decref(want);
	tt_stop(&f);
	free(script);
	free(path);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answer),
		cmocka_unit_test(test_two),
		cmocka_unit_test(test_twocalls),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_error),
		cmocka_unit_test(test_badanswer),
		cmocka_unit_test(test_secret),
		cmocka_unit_test(test_interrupt),
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_defaultmode),
		cmocka_unit_test(test_sticky),
		cmocka_unit_test(test_backtodefault),
		cmocka_unit_test(test_nooptions),
		cmocka_unit_test(test_emptyoptions),
		cmocka_unit_test(test_badargs),
		cmocka_unit_test(test_defaultbadargs),
		cmocka_unit_test(test_noquestions),
		cmocka_unit_test(test_client_gone_while_asking),
	};

	asc_ref_load();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
